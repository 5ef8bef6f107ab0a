/* Internal: resolving a text decoder's RoPE parameters from either spelling
 * Transformers accepts — the v5 `rope_parameters` dict or the v4 top-level
 * `rope_theta` + `rope_scaling` — into the same vlm_rope_config. */
#ifndef VLM_IO_CONFIG_ROPE_H
#define VLM_IO_CONFIG_ROPE_H

#include "io/config.h"
#include "io/config_reader.h"

/* Each style is one class's convert_rope_params_to_dict. */
typedef enum vlm_rope_style {
  VLM_ROPE_STYLE_STANDARD, /* RotaryEmbeddingConfigMixin (Llama, Qwen2/3, ...) */
  VLM_ROPE_STYLE_QWEN2_VL, /* Qwen2-VL/2.5-VL text: "mrope" means default; contiguous sections */
  VLM_ROPE_STYLE_QWEN3_VL, /* Qwen3-VL text: interleaved sections, [24, 20, 20] by default */
  VLM_ROPE_STYLE_GEMMA,    /* Gemma 3/3n: nested full/sliding, rope_local_base_freq */
  VLM_ROPE_STYLE_PHI4,     /* Phi-4-multimodal: "su"/"yarn" mean longrope */
} vlm_rope_style;

/* Fills text->rope (and sliding_rope for nested parameters). Needs
 * head_dim and max_position_embeddings already read. */
vlm_status vlm_rope_config_read(const vlm_config_section *section,
                                const vlm_config_class *config_class, vlm_rope_style style,
                                vlm_text_config *text);

#endif
