/* Internal: one record per Transformers class vlm reads a config of.
 *
 * A config class (LlamaConfig, Qwen2VLConfig, SiglipVisionConfig, ...) is
 * one vlm_config_record: its model_type, its defaults table, and what its
 * __post_init__ and modeling code do with the values that is not the same
 * for every class (how heads are sized, where biases are, which layers
 * slide, its RoPE converter, its tokenizer registration, ...). Image
 * processor, processor and feature extractor classes are records of their
 * defaults. The config readers (config.c, config_text.c, config_rope.c,
 * config_encoders.c, processor_config.c, feature_extractor_config.c) hold
 * only behaviours, chosen by these records; no family name is tested there.
 *
 * The records of one Transformers module (models/<name>/: its config,
 * image processor, processor and feature extractor classes) live together
 * in src/io/configs/<name>.c as one vlm_config_family; the registry
 * (config_records.c) lists the families. A new family adds its file and
 * one line there.
 *
 * Defaults tables. Each is a JSON object describing one Transformers
 * 5.23.0 class:
 *   "class"          the Python class the values were read from;
 *   "model_type"     its model_type (config classes);
 *   "fields"         the defaults of its dataclass fields that matter for
 *                    inference (initializer_range, dropouts, use_cache, the
 *                    output_* flags and id2label are left out). A field whose
 *                    Transformers default is None stays null here even when
 *                    the class derives a value for it in __post_init__
 *                    (head_dim, num_key_value_heads, layer_types,
 *                    rope_parameters): deriving is code, chosen by the record;
 *   "default_theta"  the class attribute RoPE falls back to without a
 *                    rope_theta (only on classes with a rope_parameters field);
 *   "attribute_map"  the class's key aliases (the alias sets the real field);
 *   "legacy_keys"    keys its __post_init__ renames (legacy remote-code names);
 *   "sub_configs"    its sub_configs_defaults: the class (model_type) each
 *                    nested section resolves to, whether the file's own
 *                    model_type may choose it (AutoConfig), and the
 *                    init_kwargs used only when the section is absent;
 *   "images_kwargs"  (processor classes) what the processor passes its image
 *                    processor unless the call says otherwise.
 * Image processor classes keep their defaults as class attributes; a key the
 * class leaves unset falls back to BaseImageProcessor (rescale_factor 1/255,
 * default_to_square true) or to None. A file value of null there means
 * "class default", unlike in config.json: _set_attributes ignores None.
 * The values were produced from the classes themselves, never typed in, and
 * tools/oracle/check_config_defaults.py cross-checks every table (with the
 * records' tokenizer registrations) against Transformers in CI. */
#ifndef VLM_IO_CONFIG_RECORD_H
#define VLM_IO_CONFIG_RECORD_H

#include "io/config.h"
#include "io/config_reader.h"
#include "io/config_rope.h"

/* ---------------------------------------------------------------------- */
/* Text decoders: what the class's modeling code does with its config      */
/* ---------------------------------------------------------------------- */

typedef enum vlm_head_dim_rule {
  /* config.head_dim when set, else hidden_size // num_attention_heads
   * (LlamaConfig.__post_init__; getattr(config, "head_dim", ...) in Qwen2). */
  VLM_HEAD_DIM_FIELD_OR_DERIVED = 0,
  /* Qwen2VLTextAttention: hidden_size // num_heads, config.head_dim ignored. */
  VLM_HEAD_DIM_ALWAYS_DERIVED,
  /* head_dim = qk_rope_head_dim whatever the file says (MLA configs whose
   * __post_init__ sizes the rotary embedding by the rope dims; the
   * attention's head sizes are the family's). */
  VLM_HEAD_DIM_ROPE_DIMS,
} vlm_head_dim_rule;

/* Where the attention projections' biases come from. */
typedef enum vlm_bias_rule {
  VLM_BIAS_FIELD_ALL = 0, /* attention_bias on q, k, v and o (Llama, Qwen3, Gemma) */
  VLM_BIAS_FIELD_QKV,     /* attention_bias on q, k, v; o never (Molmo2) */
  VLM_BIAS_QKV_ALWAYS,    /* Qwen2Attention: bias=True on q, k, v, False on o */
  VLM_BIAS_NONE,          /* Mistral, Phi-4: bias=False everywhere */
} vlm_bias_rule;

/* Which layers use a sliding window. */
typedef enum vlm_layer_rule {
  VLM_LAYERS_ALL_FULL = 0,
  /* Mistral/Phi-4: sliding_window applies to every layer, layer_types ignored */
  VLM_LAYERS_ALL_SLIDING_WHEN_WINDOW,
  /* Qwen2Config.__post_init__: use_sliding_window gates sliding_window, and
   * the layers from max_window_layers on slide */
  VLM_LAYERS_MAX_WINDOW_LAYERS,
  /* Gemma3TextConfig.__post_init__: layer i is full when (i + 1) is a
   * multiple of the period, sliding otherwise; bidirectional attention
   * halves the window */
  VLM_LAYERS_PERIODIC_FULL,
} vlm_layer_rule;

/* The multiplier of q.k in the attention softmax. */
typedef enum vlm_scale_rule {
  VLM_SCALE_HEAD_DIM = 0,          /* head_dim ** -0.5 */
  VLM_SCALE_QUERY_PRE_ATTN_SCALAR, /* Gemma3Attention: query_pre_attn_scalar ** -0.5 */
  VLM_SCALE_ONE,                   /* Gemma3nAttention: 1.0 (q and k are RMS-normed) */
} vlm_scale_rule;

/* The zero value is LlamaConfig's. */
typedef struct vlm_text_rules {
  vlm_head_dim_rule head_dim;
  vlm_bias_rule bias;
  vlm_layer_rule layers;
  /* VLM_LAYERS_PERIODIC_FULL: the period; 0 reads the bare
   * sliding_window_pattern kwarg, 6 when absent (Gemma 3; Gemma 3n fixes 5). */
  int64_t full_layer_period;
  vlm_scale_rule scale;
  bool per_layer_intermediate_size; /* Gemma3nTextConfig: int or one per layer */
  /* eos_token_id when the config has none (Phi4MultimodalConfig.__post_init__) */
  vlm_token_id_list default_eos_token_ids;
  vlm_rope_rules rope; /* its convert_rope_params_to_dict */
} vlm_text_rules;

/* ---------------------------------------------------------------------- */
/* Records                                                                 */
/* ---------------------------------------------------------------------- */

/* The merged sections of one config.json as a record's hooks see them;
 * a part the model lacks is NULL. */
typedef struct vlm_config_parts {
  const vlm_config_section *root, *text, *vision, *audio, *adapter;
  bool used_legacy_vision_key; /* the section came from legacy_vision_key */
} vlm_config_parts;

typedef vlm_status (*vlm_vision_reader)(const vlm_config_section *section, vlm_vision_config *out);
typedef vlm_status (*vlm_audio_reader)(const vlm_config_section *section, vlm_audio_config *out);
/* Fills out->vision_feature_layers (and _is_list) for a composite model. */
typedef vlm_status (*vlm_feature_layers_reader)(const vlm_config_parts *parts, vlm_model_config *out);

typedef struct vlm_config_record {
  const char *model_type;
  const char *defaults; /* the class's defaults table */
  /* What the class is; a class may be several (Phi-4-multimodal is a
   * composite whose text fields are its own). */
  const vlm_text_rules *text;    /* a text decoder */
  vlm_vision_reader read_vision; /* a vision encoder */
  vlm_audio_reader read_audio;   /* an audio encoder */
  bool composite;                /* a model of sub-configs (its table has sub_configs) */

  /* Composite models: what their __post_init__ does beyond the tables. */
  /* Qwen2VLConfig / Qwen2_5_VLConfig: the text fields may sit at the top
   * level when text_config is absent (as the released config.json files have
   * them). */
  bool flat_text_fallback;
  /* LlavaConfig / Qwen2VLConfig: a text config that ties turns tying on for
   * the whole model. */
  bool tie_from_text;
  /* Molmo2Config: the remote-code name that stands in for an absent
   * vision_config ("vit_config"); NULL for none. */
  const char *legacy_vision_key;
  /* NULL: the top level's vision_feature_layer (an int or a list). */
  vlm_feature_layers_reader read_feature_layers;

  /* AutoTokenizer (transformers 5.23 models/auto/tokenization_auto.py): the
   * class the model_type registers in TOKENIZER_MAPPING_NAMES, as the pinned
   * environment resolves it (no mistral_common); NULL when it registers none,
   * so the hub's class holds. */
  const char *tokenizer_class;
  /* model_type is in MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS */
  bool hub_tokenizer_class_incorrect;
} vlm_config_record;

/* An image processor, processor or feature extractor class: its defaults. */
typedef struct vlm_class_defaults {
  const char *class_name;
  const char *defaults;
} vlm_class_defaults;

/* The records of one Transformers module (src/io/configs/<name>.c). */
typedef struct vlm_config_family {
  const vlm_config_record *configs;
  size_t config_count;
  const vlm_class_defaults *image_processors;
  size_t image_processor_count;
  const vlm_class_defaults *processors;
  size_t processor_count;
  const vlm_class_defaults *feature_extractors;
  size_t feature_extractor_count;
} vlm_config_family;

#define VLM_COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

/* ---------------------------------------------------------------------- */
/* The registry (config_records.c)                                         */
/* ---------------------------------------------------------------------- */

/* The record of a model_type, or NULL. */
const vlm_config_record *vlm_config_record_find(const char *model_type);
/* Every record, in registry order: index < vlm_config_record_count(). */
size_t vlm_config_record_count(void);
const vlm_config_record *vlm_config_record_at(size_t index);

typedef enum vlm_class_kind {
  VLM_CLASS_IMAGE_PROCESSOR,
  VLM_CLASS_PROCESSOR,
  VLM_CLASS_FEATURE_EXTRACTOR,
} vlm_class_kind;

/* The defaults of a class of that kind, or NULL; and every one of them. */
const char *vlm_class_defaults_find(vlm_class_kind kind, const char *class_name);
size_t vlm_class_defaults_count(vlm_class_kind kind);
const vlm_class_defaults *vlm_class_defaults_at(vlm_class_kind kind, size_t index);

/* Which records a name list is about. */
typedef bool (*vlm_config_record_filter)(const vlm_config_record *record);
bool vlm_config_record_is_text(const vlm_config_record *record);
bool vlm_config_record_is_vision(const vlm_config_record *record);
bool vlm_config_record_is_audio(const vlm_config_record *record);
/* config.json's top level may name it: a composite or a text decoder. */
bool vlm_config_record_is_model(const vlm_config_record *record);

/* "a, b, c": the model types of the records `filter` keeps ("none" when
 * none), written into `buffer` (truncated to fit), for error messages. */
const char *vlm_config_record_names(vlm_config_record_filter filter, char *buffer, size_t size);
/* The same for the classes of a kind. */
const char *vlm_class_defaults_names(vlm_class_kind kind, char *buffer, size_t size);

/* ---------------------------------------------------------------------- */
/* The typed parts, read by their class's record                           */
/* ---------------------------------------------------------------------- */

/* A text decoder (config_text.c); `tie_fallback` is used when the section
 * has no tie_word_embeddings of its own. */
vlm_status vlm_text_config_read(const vlm_config_section *section, const vlm_config_class *config_class,
                                bool tie_fallback, vlm_text_config *out);
/* Vision and audio encoders (config_encoders.c). */
vlm_status vlm_vision_config_read(const vlm_config_section *section, const vlm_config_class *config_class,
                                  vlm_vision_config *out);
vlm_status vlm_audio_config_read(const vlm_config_section *section, const vlm_config_class *config_class,
                                 vlm_audio_config *out);

/* ---------------------------------------------------------------------- */
/* Shared readers for records' hooks (config_encoders.c)                   */
/* ---------------------------------------------------------------------- */

/* A width (hidden/intermediate size), a layer count, a head count that must
 * divide `hidden_size`, an activation name and a norm epsilon at `key`. */
vlm_status vlm_config_read_width(const vlm_config_section *section, const char *key, int64_t *out);
vlm_status vlm_config_read_layers(const vlm_config_section *section, const char *key, int64_t *out);
vlm_status vlm_config_read_heads(const vlm_config_section *section, const char *key, int64_t hidden_size,
                                 int64_t *out);
vlm_status vlm_config_read_activation(const vlm_config_section *section, const char *key, const char **out);
vlm_status vlm_config_read_eps(const vlm_config_section *section, const char *key, double *out);
/* The ViT shape every ViT-style config spells the same way (hidden_size,
 * intermediate_size, num_hidden_layers, num_attention_heads, num_channels,
 * patch_size, hidden_act, layer_norm_eps). */
vlm_status vlm_vision_read_vit_shape(const vlm_config_section *section, vlm_vision_config *out);
/* image_size as a square that patch_size divides. */
vlm_status vlm_vision_read_square_image(const vlm_config_section *section, vlm_vision_config *out);

#endif
