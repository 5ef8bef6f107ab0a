/* Typed views of a Hugging Face checkpoint's configuration files:
 * config.json (with nested text_config / vision_config / audio_config),
 * generation_config.json, and preprocessor_config.json / processor_config.json.
 *
 * Why typed structs with Transformers' defaults: a config.json names only the
 * values that differ from its Transformers class's defaults, so reading the
 * file alone gives the wrong model. Every section is therefore the class's
 * defaults (kept as data in the class's record, io/config_record.h, pinned to
 * transformers 5.23.0)
 * overlaid key by key with the file, and then the derived values Transformers
 * computes in code (head_dim, layer_types, RoPE parameters, ...) are filled in.
 *
 * The config is untrusted input: every size is checked against sane bounds,
 * wrong JSON types are refused with the key path, and strings live in the
 * config's own storage (no fixed buffers to overflow).
 *
 * Ownership: a parsed config owns its storage; the const pointers inside
 * (strings, per-layer arrays, JSON sections) stay valid until ..._release. */
#ifndef VLM_IO_CONFIG_H
#define VLM_IO_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"
#include "io/json.h"
#include "vlm.h"

/* Bounds on untrusted sizes. A real checkpoint is far inside every one. */
#define VLM_CONFIG_MAX_LAYERS 1024
#define VLM_CONFIG_MAX_VOCAB_SIZE INT64_C(2147483647) /* 2^31 - 1 */
#define VLM_CONFIG_MAX_DIMENSION (INT64_C(1) << 20)    /* hidden/intermediate sizes */
#define VLM_CONFIG_MAX_HEADS 4096
#define VLM_CONFIG_MAX_POSITIONS (INT64_C(1) << 30)
#define VLM_CONFIG_MAX_IMAGE_SIZE 65536
#define VLM_CONFIG_MAX_STRING_LENGTH 256
#define VLM_CONFIG_MAX_FILE_BYTES (64u << 20)

#define VLM_CONFIG_MAX_TOKEN_IDS 16 /* eos_token_id lists */
#define VLM_CONFIG_MAX_INDEXES 64   /* layer index lists (fullatt, deepstack, ...) */
#define VLM_CONFIG_MAX_MROPE_SECTIONS 4

/* A token id list; eos_token_id may be an int or a list in every file. */
typedef struct vlm_token_id_list {
  int64_t ids[VLM_CONFIG_MAX_TOKEN_IDS];
  size_t count;
} vlm_token_id_list;

typedef struct vlm_index_list {
  int64_t values[VLM_CONFIG_MAX_INDEXES];
  size_t count;
} vlm_index_list;

typedef enum vlm_layer_attention {
  VLM_LAYER_ATTENTION_FULL = 0,
  VLM_LAYER_ATTENTION_SLIDING = 1,
} vlm_layer_attention;

typedef enum vlm_rope_type {
  VLM_ROPE_DEFAULT = 0,
  VLM_ROPE_LINEAR,
  VLM_ROPE_DYNAMIC,
  VLM_ROPE_YARN,
  VLM_ROPE_LONGROPE,
  VLM_ROPE_LLAMA3,
} vlm_rope_type;

const char *vlm_rope_type_name(vlm_rope_type type);

/* Rotary embedding parameters, resolved as Transformers resolves them (from
 * the v5 `rope_parameters` dict or the v4 `rope_theta` + `rope_scaling`). */
typedef struct vlm_rope_config {
  vlm_rope_type type;
  double theta;
  double factor;                /* 1 for types without one */
  double partial_rotary_factor; /* 1 unless the config says otherwise */
  int64_t rotary_dimension;     /* int(head_dim * partial_rotary_factor) */
  /* llama3 */
  double low_freq_factor, high_freq_factor;
  /* llama3, yarn, longrope: the pretraining context length; 0 otherwise */
  int64_t original_max_position_embeddings;
  /* yarn and longrope: the factor applied to cos/sin, computed from `factor`
   * when the config leaves it out, as Transformers does; 1 otherwise */
  double attention_factor;
  double beta_fast, beta_slow; /* yarn; 32 and 1 when absent */
  bool truncate;               /* yarn; true when absent */
  /* longrope: per-frequency rescale factors, rotary_dimension / 2 each */
  const double *short_factor, *long_factor;
  size_t longrope_factor_count;
  /* multimodal RoPE (Qwen2/2.5/3-VL): t/h/w frequency split */
  int64_t mrope_section[VLM_CONFIG_MAX_MROPE_SECTIONS];
  size_t mrope_section_count; /* 0 when the model has no M-RoPE */
  bool mrope_interleaved;     /* Qwen3-VL */
  /* Axial RoPE of vision towers (Qwen2-VL's 2D rope): the frequencies are
   * computed for rotary_dimension / axial_axes and repeated, block a of
   * them rotating by position axis a. 0 (or 1) for ordinary RoPE. */
  int axial_axes;
} vlm_rope_config;

/* A text decoder. */
typedef struct vlm_text_config {
  const char *model_type; /* the Transformers class's model_type */
  int64_t vocab_size;
  int64_t hidden_size;
  int64_t intermediate_size;  /* layer 0's when sizes differ per layer */
  const int64_t *layer_intermediate_sizes; /* num_hidden_layers entries */
  int64_t num_hidden_layers;
  int64_t num_attention_heads;
  int64_t num_key_value_heads;
  int64_t head_dim;
  const char *hidden_act; /* hidden_act or hidden_activation */
  double rms_norm_eps;
  int64_t max_position_embeddings;
  bool attention_bias;        /* q/k/v projections */
  bool attention_output_bias; /* o projection */
  bool mlp_bias;
  bool tie_word_embeddings;   /* the section's own value; see vlm_model_config */
  vlm_dtype dtype;            /* VLM_DTYPE_INVALID when the section has none */
  vlm_rope_config rope;       /* full-attention (global) layers */
  bool has_sliding_rope;      /* Gemma 3/3n: local layers have their own RoPE */
  vlm_rope_config sliding_rope;
  int64_t sliding_window;     /* 0 = none */
  const vlm_layer_attention *layer_types; /* num_hidden_layers entries */
  double attention_scale;     /* multiplier of q.k: head_dim^-0.5 unless the family says */
  double query_pre_attn_scalar;   /* Gemma 3; 0 for families without it */
  double final_logit_softcapping; /* 0 = none */
  double attn_logit_softcapping;  /* 0 = none */
  int64_t bos_token_id, pad_token_id; /* -1 = none */
  vlm_token_id_list eos_token_ids;
  /* The merged section (defaults + file), for family-specific extras. */
  const vlm_json_value *section;
} vlm_text_config;

/* A vision encoder. Fields a family does not have are 0. */
typedef struct vlm_vision_config {
  const char *model_type;
  int64_t hidden_size;         /* embed_dim for qwen2_vl_vision */
  int64_t intermediate_size;   /* embed_dim * mlp_ratio for qwen2_vl_vision */
  int64_t num_hidden_layers;   /* depth for the Qwen encoders */
  int64_t num_attention_heads; /* num_heads for the Qwen encoders */
  int64_t num_key_value_heads; /* = num_attention_heads unless the family has its own */
  int64_t head_dim;
  int64_t image_height, image_width; /* image_size; 0 for dynamic-resolution encoders */
  int64_t patch_size;
  int64_t num_channels;        /* in_channels for the Qwen encoders */
  const char *hidden_act;
  double layer_norm_eps;
  bool attention_bias;
  int64_t spatial_merge_size, temporal_patch_size; /* Qwen */
  int64_t window_size;         /* Qwen2.5-VL */
  vlm_index_list fullatt_block_indexes; /* Qwen2.5-VL */
  int64_t out_hidden_size;     /* Qwen merger output (hidden_size for qwen2_vl_vision) */
  int64_t tokens_per_second;   /* Qwen2.5-VL */
  int64_t num_position_embeddings; /* Qwen3-VL, Molmo2 */
  vlm_index_list deepstack_visual_indexes; /* Qwen3-VL */
  bool vision_use_head;        /* SigLIP */
  const vlm_json_value *section;
} vlm_vision_config;

/* An audio encoder. */
typedef struct vlm_audio_config {
  const char *model_type;
  int64_t hidden_size;
  int64_t intermediate_size;
  int64_t num_hidden_layers;   /* conf_num_hidden_layers / num_blocks */
  int64_t num_attention_heads; /* conf_num_attention_heads / num_attention_heads */
  int64_t input_feature_size;  /* input_feat_size / input_size (mel bins) */
  double norm_eps;             /* 0 where the family's config has none */
  const vlm_json_value *section;
} vlm_audio_config;

typedef struct vlm_config_storage vlm_config_storage;

/* config.json. */
typedef struct vlm_model_config {
  const char *architecture; /* architectures[0], or NULL */
  const char *model_type;
  vlm_dtype dtype;          /* dtype or legacy torch_dtype; INVALID when absent */
  vlm_text_config text;
  bool has_vision;
  vlm_vision_config vision;
  bool has_audio;
  vlm_audio_config audio;
  /* Multimodal token ids; -1 when the family has none. */
  int64_t image_token_id, video_token_id, audio_token_id;
  int64_t vision_start_token_id, vision_end_token_id;
  int64_t boi_token_id, eoi_token_id, boa_token_id, eoa_token_id;
  /* Placeholder tokens per image / audio clip (image_seq_length,
   * mm_tokens_per_image, vision_soft_tokens_per_image, ...); 0 = dynamic. */
  int64_t image_seq_length;
  int64_t audio_seq_length;
  vlm_index_list vision_feature_layers; /* LLaVA's vision_feature_layer, ... */
  bool vision_feature_layer_is_list;
  const char *vision_feature_select_strategy; /* LLaVA; NULL otherwise */
  const char *projector_hidden_act;           /* LLaVA; NULL otherwise */
  bool multimodal_projector_bias;
  /* The value that decides whether lm_head shares the embedding (for
   * composite models the top-level one, as Transformers ties on it). */
  bool tie_word_embeddings;
  /* Merged sections; NULL where the family has no such part. */
  const vlm_json_value *root_section;
  const vlm_json_value *text_section, *vision_section, *audio_section;
  const vlm_json_value *adapter_section; /* Molmo2 */
  vlm_config_storage *storage;
} vlm_model_config;

/* Reads model_dir/config.json. */
vlm_status vlm_model_config_load(const char *model_dir, const vlm_allocator *allocator,
                                 vlm_model_config *out);
/* Parses config.json text; `source_name` prefixes error messages. */
vlm_status vlm_model_config_parse(const char *text, size_t length, const char *source_name,
                                  const vlm_allocator *allocator, vlm_model_config *out);
void vlm_model_config_release(vlm_model_config *config);

/* generation_config.json, with the values generate() falls back to
 * (GenerationConfig._get_default_generation_params) for the unset ones. */
typedef struct vlm_generation_config {
  bool file_present;
  int64_t bos_token_id, pad_token_id; /* -1 = none (use the model config's) */
  vlm_token_id_list eos_token_ids;    /* empty = none (use the model config's) */
  bool do_sample;
  double temperature;
  int64_t top_k;                      /* 0 = disabled */
  double top_p;
  double min_p;                       /* 0 = disabled */
  double repetition_penalty;
  int64_t max_new_tokens;             /* 0 = unset */
  int64_t max_length;
  const vlm_json_value *section;
  vlm_config_storage *storage;
} vlm_generation_config;

/* Reads model_dir/generation_config.json; an absent file gives the defaults
 * with file_present = false. */
vlm_status vlm_generation_config_load(const char *model_dir, const vlm_allocator *allocator,
                                      vlm_generation_config *out);
/* `text` NULL means the file is absent. */
vlm_status vlm_generation_config_parse(const char *text, size_t length, const char *source_name,
                                       const vlm_allocator *allocator,
                                       vlm_generation_config *out);
void vlm_generation_config_release(vlm_generation_config *config);

typedef enum vlm_image_size_kind {
  VLM_IMAGE_SIZE_NONE = 0,
  VLM_IMAGE_SIZE_HEIGHT_WIDTH,          /* {height, width} */
  VLM_IMAGE_SIZE_SHORTEST_EDGE,         /* {shortest_edge} */
  VLM_IMAGE_SIZE_SHORTEST_LONGEST_EDGE, /* {shortest_edge, longest_edge} */
  VLM_IMAGE_SIZE_LONGEST_EDGE,          /* {longest_edge} */
  VLM_IMAGE_SIZE_MAX_HEIGHT_WIDTH,      /* {max_height, max_width} */
  VLM_IMAGE_SIZE_MIN_MAX_PIXELS,        /* {min_pixels, max_pixels} */
} vlm_image_size_kind;

/* One of Transformers' valid size dicts (VALID_SIZE_DICT_KEYS); unused
 * members are 0. */
typedef struct vlm_image_size {
  vlm_image_size_kind kind;
  int64_t height, width;
  int64_t shortest_edge, longest_edge;
  int64_t max_height, max_width;
  int64_t min_pixels, max_pixels;
} vlm_image_size;

/* preprocessor_config.json (or processor_config.json's nested
 * "image_processor") plus processor_config.json's processor-level values. */
typedef struct vlm_processor_config {
  const char *image_processor_type; /* class name without Fast/Pil suffix */
  const char *processor_class;      /* NULL when no file names one */
  bool do_resize;
  vlm_image_size size;
  int64_t resample;                 /* PIL resampling enum value */
  bool do_center_crop;
  vlm_image_size crop_size;         /* kind NONE when the class has none */
  bool do_rescale;
  double rescale_factor;
  bool do_normalize;
  double image_mean[3], image_std[3];
  bool do_convert_rgb;
  /* Qwen2-VL family: patching, and smart_resize bounds (= size's
   * shortest_edge / longest_edge, which is where Transformers keeps them). */
  int64_t patch_size, merge_size, temporal_patch_size;
  int64_t min_pixels, max_pixels;
  /* Gemma 3: pan-and-scan crops (Gemma3Processor's call defaults turn it
   * off; processor kwargs turn it on). */
  bool do_pan_and_scan;
  int64_t pan_and_scan_min_crop_size, pan_and_scan_max_num_crops;
  double pan_and_scan_min_ratio_to_activate;
  /* Phi-4-multimodal: the most HD crops per image (patch_size above is
   * the tower's, which the crop masks count in). */
  int64_t dynamic_hd;
  /* Processor-level (processor_config.json); 0/NULL when absent. */
  int64_t image_seq_length;
  int64_t num_additional_image_tokens;
  const char *vision_feature_select_strategy;
  int64_t processor_patch_size;
  const vlm_json_value *image_processor_section;
  const vlm_json_value *processor_section; /* NULL without processor_config.json */
  vlm_config_storage *storage;
} vlm_processor_config;

/* Reads model_dir/preprocessor_config.json and model_dir/processor_config.json;
 * NOT_FOUND when neither describes an image processor. */
vlm_status vlm_processor_config_load(const char *model_dir, const vlm_allocator *allocator,
                                     vlm_processor_config *out);
/* Either text may be NULL (file absent). As in Transformers, a nested
 * "image_processor" in processor_config.json replaces preprocessor_config.json. */
vlm_status vlm_processor_config_parse(const char *preprocessor_text, size_t preprocessor_length,
                                      const char *processor_text, size_t processor_length,
                                      const vlm_allocator *allocator, vlm_processor_config *out);
/* The same with the caller's processor kwargs, a JSON object of image
 * processor settings (what processor(images, text, **kwargs) passes on, e.g.
 * {"do_pan_and_scan": true}), over the files and the processor class's
 * images_kwargs; a key the image processor class lacks is refused.
 * kwargs_text may be NULL. */
vlm_status vlm_processor_config_load_with(const char *model_dir, const char *kwargs_text,
                                          const vlm_allocator *allocator, vlm_processor_config *out);
vlm_status vlm_processor_config_parse_with(const char *preprocessor_text, size_t preprocessor_length,
                                           const char *processor_text, size_t processor_length,
                                           const char *kwargs_text, const vlm_allocator *allocator,
                                           vlm_processor_config *out);
void vlm_processor_config_release(vlm_processor_config *config);

/* The Transformers defaults tables, one per class, kept in the classes'
 * records (io/config_record.h, src/io/configs): each a JSON object
 * {"class", "model_type", "fields", optional "default_theta",
 * "attribute_map", "legacy_keys", "sub_configs"} describing one class, so a
 * test can cross-check it against the class itself. NULL if unknown. */
const char *vlm_config_defaults_json(const char *model_type);
/* Image processor classes ("CLIPImageProcessor", ...) and processor classes
 * ("LlavaProcessor", ...), same shape. */
const char *vlm_image_processor_defaults_json(const char *class_name);
const char *vlm_processor_defaults_json(const char *class_name);
/* GenerationConfig._get_default_generation_params, the subset we read. */
const char *vlm_generation_defaults_json(void);

#endif
