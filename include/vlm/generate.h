/* Generation from an opened model (vlm/model.h): the model's chat
 * template, its tokenizer, the family's encoders where it has them, the
 * text decoder (the cpu backend unless one is given), and sampling, in one
 * call. `vlm run` is a thin client of this header. Images arrive loaded
 * (decoded and run through the model's image processor:
 * vlm_generator_load_image), and so do audio clips
 * (vlm_generator_load_audio); a request with images or audio for a model
 * without that path is refused, never silently answered from the text
 * alone. */
#ifndef VLM_GENERATE_H
#define VLM_GENERATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vlm.h"
#include "vlm/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vlm_sampling_params {
  float temperature;        /* 0: greedy */
  int32_t top_k;            /* 0: off */
  float top_p;              /* 1: off */
  float min_p;              /* 0: off */
  float repetition_penalty; /* 1: off */
  float presence_penalty;   /* 0: off */
  float frequency_penalty;  /* 0: off */
  uint64_t seed;
  int32_t top_logprobs;     /* alternatives to report per step, 0..20 */
} vlm_sampling_params;

/* One entry of OpenAI's logit_bias: `bias` (-100..100) is added to the
 * token's logit before sampling (-100 bans it, 100 all but forces it). */
typedef struct vlm_logit_bias {
  int32_t token;
  float bias;
} vlm_logit_bias;

typedef struct vlm_generator vlm_generator;
/* A text decoder on some backend (see vlm/engine.h, vlm/xla.h). */
typedef struct vlm_text_decoder vlm_text_decoder;
typedef struct vlm_media_encoder vlm_media_encoder;

typedef struct vlm_generator_options {
  int thread_count;        /* <= 0: one per core */
  int64_t capacity;        /* context positions; 0: min(max_position_embeddings, 4096) */
  int64_t prefill_chunk;   /* 0: 512 */
  const vlm_allocator *allocator;
  /* NULL: the cpu backend. Otherwise a one-slot decoder for the same model
   * (e.g. vlm_xla_open_text_decoder), taken over by the generator. */
  vlm_text_decoder *text_decoder;
  /* NULL: images on the cpu backend; else taken over (vlm/xla.h). */
  vlm_media_encoder *image_encoder;
  /* NULL: audio on the cpu backend; else taken over (vlm/xla.h). */
  vlm_media_encoder *audio_encoder;
  /* vlm_generator_load_audio's duration limit; 0: vlm/audio.h's default
   * (its other limits are the defaults). */
  double max_audio_seconds;
} vlm_generator_options;

/* Opens the tokenizer and chat template of `model` (retained). */
vlm_status vlm_generator_open(vlm_model *model, const vlm_generator_options *options,
                              vlm_generator **out_generator);
void vlm_generator_release(vlm_generator *generator);

/* The sampling the model's generation_config.json asks for (greedy when it
 * does not sample), seed 0. */
vlm_sampling_params vlm_generator_default_sampling(const vlm_generator *generator);

/* One image's pixel values: f32 [channels, height, width], normalized as
 * a fixed-size image processor leaves them (Transformers' pixel_values[i]). */
typedef struct vlm_pixel_values {
  const float *values;
  int64_t channels, height, width;
} vlm_pixel_values;

/* An image decoded and run through the model's image processor (the
 * default one AutoProcessor picks in the pinned Transformers): an owned
 * media item (its tensors, grid and placeholder count). */
struct vlm_media_item;
typedef struct vlm_loaded_image {
  struct vlm_media_item *item;   /* owned; NULL once handed over */
  int64_t token_count;           /* placeholder tokens it expands to */
  double preprocess_seconds;     /* decode + processor */
} vlm_loaded_image;

/* Fails with a clear error for a file that is not a supported image, too
 * large, truncated, or for a model without a vision path. */
vlm_status vlm_generator_load_image(vlm_generator *generator, const char *path,
                                    vlm_loaded_image *out_image);
void vlm_loaded_image_release(vlm_loaded_image *image);
/* The prompt positions the image file will take, from its header alone
 * (nothing decoded), for vlm_generator_check. Errors as loading it would
 * give for its size. */
vlm_status vlm_generator_image_tokens(vlm_generator *generator, const char *path, int64_t *out_tokens);

/* An audio clip decoded (include/vlm/audio.h) and run through the model's
 * feature extractor: the same owned media item (of kind audio). */
typedef vlm_loaded_image vlm_loaded_audio;
/* Fails with a clear error for a file that is not supported audio, too
 * large or long, truncated, or for a model without an audio path. */
vlm_status vlm_generator_load_audio(vlm_generator *generator, const char *path, vlm_loaded_audio *out_audio);
void vlm_loaded_audio_release(vlm_loaded_audio *audio);

typedef struct vlm_generation_request {
  const char *prompt;          /* the user's message */
  const char *system_prompt;   /* optional system message */
  bool raw_prompt;             /* true: `prompt` is the whole model input, no template */
  int64_t max_tokens;          /* 0: generation_config's max_new_tokens, else 256 */
  vlm_sampling_params sampling;
  const char *const *stop;     /* stop strings (not included in the output) */
  size_t stop_count;
  /* Images, in the order of their placeholders. With the chat template each
   * image becomes an image part of the user message before the text (the
   * template renders it, "<image>\n" for LLaVA); a raw prompt must hold one
   * image placeholder per image itself. Each placeholder is expanded to the
   * family's token count; a placeholder count that differs from
   * image_count is an error. vlm_generate takes the images over (the
   * entries are zeroed), whatever it returns. */
  vlm_loaded_image *images;
  int image_count;
  /* Audio clips, in the order of their placeholders; with the chat
   * template each becomes an audio part of the user message, after the
   * images and before the text. Taken over like the images. */
  vlm_loaded_audio *audio;
  int audio_count;
  /* Constrained decoding: a GBNF grammar the completion must match
   * (vlm_engine_request_options.grammar); NULL: none. */
  const char *grammar;
  /* Called with each new piece of text (valid UTF-8) as it is generated. */
  void (*on_text)(void *context, const char *text, size_t length);
  void *on_text_context;
} vlm_generation_request;

typedef struct vlm_generation_result {
  char *text;                  /* completion text */
  int32_t *tokens;             /* completion token ids */
  int64_t completion_tokens;
  int64_t prompt_tokens;
  const char *finish_reason;   /* "stop" or "length" */
  double preprocess_seconds;   /* template + tokenization + placeholder expansion */
  double encode_seconds;       /* vision encoder + projector + merge (0 without images) */
  double prefill_seconds;
  double decode_seconds;
} vlm_generation_result;

vlm_status vlm_generate(vlm_generator *generator, const vlm_generation_request *request,
                        vlm_generation_result *out_result);
/* Refuses what vlm_generate would refuse before any work, without the
 * images' pixels: request->images is not read, image_tokens[i] is image
 * i's count from vlm_generator_image_tokens. Call it before loading the
 * images, so a request that cannot fit is refused before they are decoded
 * (vlm_engine_check_admission). */
vlm_status vlm_generator_check(vlm_generator *generator, const vlm_generation_request *request,
                               const int64_t *image_tokens);
void vlm_generation_result_release(vlm_generation_result *result);

#ifdef __cplusplus
}
#endif

#endif
