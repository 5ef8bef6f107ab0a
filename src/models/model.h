/* The opened model (include/vlm/model.h) from the inside: what every part
 * that runs a model reads, opened once. */
#ifndef VLM_MODELS_MODEL_H
#define VLM_MODELS_MODEL_H

#include <stdatomic.h>
#include <stdbool.h>

#include "io/checkpoint.h"
#include "io/config.h"
#include "io/feature_extractor_config.h"
#include "io/quantization_config.h"
#include "models/decoder.h"
#include "models/family.h"
#include "vlm/model.h"

typedef enum vlm_weight_quantization {
  VLM_WEIGHT_QUANTIZATION_NONE = 0,
  VLM_WEIGHT_QUANTIZATION_Q8,
  VLM_WEIGHT_QUANTIZATION_Q4,
} vlm_weight_quantization;

/* True when the text decoder's linear weights are (or will be) quantized:
 * by --quantize or in the checkpoint (GPTQ, AWQ). Backends that cannot run
 * quantized weights refuse such a model. */
bool vlm_model_is_quantized(const vlm_model *model);

struct vlm_model {
  atomic_int references;
  char *directory;
  const vlm_allocator *allocator;
  vlm_model_config config;
  vlm_generation_config generation;
  bool has_processor;                 /* preprocessor_config.json / processor_config.json */
  vlm_processor_config processor;
  bool has_feature_extractor;         /* an audio feature extractor config (feature_extractor_config.h) */
  vlm_feature_extractor_config feature_extractor;
  const vlm_family *family;           /* NULL: no family implements model_type */
  vlm_tensor_manifest manifest;       /* empty without a family */
  vlm_checkpoint *weights;
  /* vlm_model_options.quantize: what the text decoder's linear weights are
   * quantized to at load (vlm_weight_quantization). */
  vlm_weight_quantization quantize;
  /* config.json's quantization_config: weights quantized already (GPTQ,
   * AWQ), loaded as they are stored. */
  vlm_quantization_config hub_quantization;
  /* The family's LoRA adapters, in its order (models/adapters.c); an
   * adapter whose subfolder is absent has module_count 0. */
  int adapter_count;
  vlm_decoder_adapter adapters[VLM_DECODER_MAX_ADAPTERS];
};

/* The adapter files of the family's adapters present in `model_dir`, for
 * the checkpoint options (at most VLM_DECODER_MAX_ADAPTERS), and each
 * adapter's settings from its adapter_config.json. */
vlm_status vlm_model_find_adapters(vlm_model *model, const char *model_dir, vlm_checkpoint_extra_file *out_files,
                                   char (*out_paths)[256], size_t *out_count);
/* A PEFT adapter_config.json (untrusted: fuzz/fuzz_adapter_config.c): the
 * LoRA scale, lora_alpha / r (/ sqrt(r) with use_rslora); what vlm does not
 * compute (DoRA, trained biases, fan_in_fan_out, other peft types) refused
 * by name. `path` names the file in messages. */
vlm_status vlm_adapter_config_parse(const char *text, size_t length, const char *path, double *out_scale);
/* Counts each present adapter's modules in the opened checkpoint, refusing
 * a tensor that is not a LoRA A/B weight with its partner of one rank. */
vlm_status vlm_model_count_adapter_modules(vlm_model *model);
/* Copies the model's adapters into a decoder description. */
void vlm_model_describe_adapters(const vlm_model *model, vlm_decoder_description *description);

struct vlm_media_item;
struct vlm_image;
/* A decoded image run through the model's image processor (the registry's
 * class for its processor config, its default torchvision backend) into a
 * media item, with the family's placeholder count. UNIMPLEMENTED for a
 * model without an image path or processor config. */
vlm_status vlm_model_image_item(const vlm_model *model, const struct vlm_image *image,
                                const vlm_allocator *allocator, struct vlm_media_item *out_item);
/* The same through the class's Pil backend (VLM_IMAGE_BACKEND_PIL) or
 * its default one (vlm compare's processor_pil.* stages). */
vlm_status vlm_model_image_item_with(const vlm_model *model, const struct vlm_image *image, int backend,
                                     const vlm_allocator *allocator, struct vlm_media_item *out_item);

/* The placeholder tokens an image of width x height (as decoded, before
 * EXIF rotation: the counts here do not change with it) expands to, from
 * its size alone (the processor class's grid, then the family's count), so
 * a request can be admitted before its images are decoded. NOT_FOUND when
 * the class cannot tell without the pixels; UNIMPLEMENTED as
 * vlm_model_image_item. */
vlm_status vlm_model_image_tokens(const vlm_model *model, int64_t width, int64_t height, int64_t *out_tokens);

struct vlm_audio;
/* The output rate audio must be decoded to for the model's feature
 * extractor, or UNIMPLEMENTED when the model takes no audio: a family
 * without an audio path, no feature extractor config, or a class the
 * registry lacks (the message names which). */
vlm_status vlm_model_audio_sample_rate(const vlm_model *model, int *out_rate);
/* A decoded clip (at that rate) run through the model's feature extractor
 * into a media item of kind audio, with the family's placeholder count. */
vlm_status vlm_model_audio_item(const vlm_model *model, const struct vlm_audio *audio,
                                const vlm_allocator *allocator, struct vlm_media_item *out_item);
/* The placeholder count a clip of `samples` samples at the model's rate
 * will take (the extractor's tokens_for_samples: the count every family
 * with audio takes from its processor), without decoding: admission from
 * a file's header. 0: too short to process. UNIMPLEMENTED as above. */
vlm_status vlm_model_audio_tokens(const vlm_model *model, int64_t samples, int64_t *out_tokens);
/* The most samples at the model's rate a clip may have and still take at
 * most `max_tokens` placeholders: the bound decoding stops at when the
 * capacity left for a clip is known. */
vlm_status vlm_model_audio_max_samples(const vlm_model *model, int64_t max_tokens, int64_t *out_samples);

/* The family, or UNIMPLEMENTED naming the model_type and the supported
 * ones ("the text decoder of model_type 'x' is not supported"). */
vlm_status vlm_model_require_family(const vlm_model *model, const char *what);
/* vlm_model_config_load, except that a config.json whose model_type no
 * family runs is refused naming the model_types that do (io's reader lists
 * the config classes it parses, some of which no family runs yet). */
vlm_status vlm_model_config_load_runnable(const char *model_dir, const vlm_allocator *allocator,
                                          vlm_model_config *out);

/* Values per row a media encoder of the model gives: the text hidden size,
 * times 1 + the decoder's layer features (models/decoder.h). */
int64_t vlm_model_feature_width(const vlm_model *model);

#endif
