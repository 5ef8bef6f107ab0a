/* Internal: resolving a text decoder's RoPE parameters from either spelling
 * Transformers accepts — the v5 `rope_parameters` dict or the v4 top-level
 * `rope_theta` + `rope_scaling` — into the same vlm_rope_config. */
#ifndef VLM_IO_CONFIG_ROPE_H
#define VLM_IO_CONFIG_ROPE_H

#include "io/config.h"
#include "io/config_reader.h"

/* How one class's convert_rope_params_to_dict reads RoPE, as data: a text
 * decoder's record (io/config_record.h) carries it. The zero value is
 * RotaryEmbeddingConfigMixin's (Llama, Qwen2/3, Mistral, Molmo2, ...). */
typedef struct vlm_rope_alias {
  const char *legacy; /* a legacy rope_type name the class renames ... */
  const char *type;   /* ... to this one */
  /* Renamed after standardize_rope_params (Phi-4: so original_max_position_
   * embeddings is standardized for the legacy name), else before it. */
  bool after_standardize;
} vlm_rope_alias;

typedef enum vlm_mrope_layout {
  VLM_MROPE_FROM_CONFIG = 0, /* the mrope_interleaved flag decides */
  VLM_MROPE_CONTIGUOUS,      /* Qwen2VLRotaryEmbedding: contiguous, the flag ignored */
  VLM_MROPE_INTERLEAVED,     /* Qwen3VLTextRotaryEmbedding: interleaved, the flag ignored */
} vlm_mrope_layout;

#define VLM_ROPE_MAX_ALIASES 4

typedef struct vlm_rope_rules {
  /* Gemma3TextConfig's converter: rope_parameters nested by layer type, a
   * legacy rope_scaling updating the full-attention dict, rope_theta the
   * global theta and rope_local_base_freq the local one. */
  bool per_layer_type;
  /* Qwen2VLTextConfig's converter does not pick up a top-level
   * partial_rotary_factor. */
  bool ignores_partial_rotary_factor;
  vlm_rope_alias aliases[VLM_ROPE_MAX_ALIASES]; /* ends at the first without a name */
  vlm_mrope_layout mrope_layout;
  /* mrope_section when the config has none (Qwen3-VL: [24, 20, 20]); no
   * sections when the count is 0. */
  int64_t default_mrope_section[VLM_CONFIG_MAX_MROPE_SECTIONS];
  size_t default_mrope_section_count;
} vlm_rope_rules;

/* Fills text->rope (and sliding_rope for nested parameters). Needs
 * head_dim and max_position_embeddings already read. */
vlm_status vlm_rope_config_read(const vlm_config_section *section,
                                const vlm_config_class *config_class, const vlm_rope_rules *rules,
                                vlm_text_config *text);

#endif
