/* Shared tensor declarations for the building blocks families are made of.
 * Each function declares exactly the tensors Transformers' module of the
 * same name holds, under `prefix`. */
#ifndef VLM_MODELS_BLOCKS_H
#define VLM_MODELS_BLOCKS_H

#include "models/family.h"

/* A shape literal for vlm_manifest_add: VLM_SHAPE(out, in). */
#define VLM_SHAPE(...) ((const int64_t[]){__VA_ARGS__})

/* Composite models (LLaVA, Gemma 3, ...) saved by Transformers 4 keep the
 * decoder under "language_model.model.", the tower under
 * "vision_tower.vision_model." and the projector under
 * "multi_modal_projector." at the top level. Transformers 5 nests them under
 * "model." and loads the CLIP/SigLIP tower without its "vision_model." level
 * (conversion_mapping: PrefixChange), so the canonical tower names are
 * "model.vision_tower.embeddings...". These renames map the old layouts onto
 * the canonical one; first match wins, so longer prefixes come first. */
#define VLM_COMPOSITE_V4_RENAME_COUNT 6
extern const vlm_name_rename vlm_composite_v4_renames[VLM_COMPOSITE_V4_RENAME_COUNT];

typedef struct vlm_decoder_layout {
  bool qk_norm;        /* q_norm / k_norm over head_dim (Qwen3, Gemma 3) */
  bool sandwich_norms; /* pre/post feed-forward norms (Gemma 2/3) */
  bool fused_qkv;      /* one self_attn.qkv_proj, rows q | k | v (Phi-3, Phi-4) */
  bool fused_gate_up;  /* one mlp.gate_up_proj, rows gate | up (Phi-3, Phi-4) */
  /* Layers whose MLP is a sparse MoE block (sparse_layers[l], l <
   * num_hidden_layers; NULL: none): the router mlp.gate.weight [experts,
   * hidden] and mlp.experts.gate_up_proj [experts, 2I, hidden] /
   * down_proj [experts, hidden, I] (I = expert_intermediate_size), each
   * also accepted in the hub's [in, out] layout (models/decoder.h). */
  const bool *sparse_layers;
  int64_t experts, expert_intermediate_size;
} vlm_decoder_layout;

/* A Llama-style decoder under `prefix` ("model." or "model.language_model."):
 * embed_tokens, layers.N.{input_layernorm, self_attn.*, post_attention_layernorm,
 * mlp.*}, norm; and lm_head.weight (optional when tie_word_embeddings). */
void vlm_declare_text_decoder(vlm_tensor_manifest *manifest, const vlm_text_config *text,
                              bool tie_word_embeddings, const char *prefix,
                              const vlm_decoder_layout *layout);

typedef enum vlm_vit_kind {
  VLM_VIT_CLIP,   /* class token, unbiased patch conv, pre-layernorm */
  VLM_VIT_SIGLIP, /* biased patch conv, no class token, optional pooling head */
} vlm_vit_kind;

/* A CLIP or SigLIP vision transformer under `prefix`
 * ("model.vision_tower.", the Transformers 5 canonical prefix). */
void vlm_declare_vision_transformer(vlm_tensor_manifest *manifest,
                                    const vlm_vision_config *vision, vlm_vit_kind kind,
                                    const char *prefix);

#endif
