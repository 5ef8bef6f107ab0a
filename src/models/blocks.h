/* The building blocks families are made of, twice: as tensor declarations
 * (each declares exactly the tensors Transformers' module of the same name
 * holds, under `prefix`) and as graph builders (the decoder blocks below,
 * each adds the nodes of one Transformers module's forward, named after
 * it). A family's decoder (vlm_family.build_decoder) is a layer loop
 * written on these, as llama.cpp's src/models/<arch>.cpp write theirs on
 * build_norm / build_attn / build_ffn; the described loop of decoder.h
 * (vlm_build_decoder_graph) is itself written on them. */
#ifndef VLM_MODELS_BLOCKS_H
#define VLM_MODELS_BLOCKS_H

#include "graph/graph.h"
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

/* ---- Decoder blocks (graph builders) ---------------------------------- */

struct vlm_decoder_description;
struct vlm_decoder_step;

/* LoRA adapters a decoder applies at most (models/decoder.h). */
#define VLM_DECODER_MAX_ADAPTERS 4

/* What every decoder block reads: the description (config, prefix,
 * layout, adapters), the step, the graph, and the LoRA masks of the
 * adapters this step uses. Made by vlm_decoder_blocks_begin. */
typedef struct vlm_decoder_blocks {
  const struct vlm_decoder_description *description;
  const struct vlm_decoder_step *step;
  const vlm_text_config *text;
  vlm_graph *graph;
  vlm_activation activation;                      /* hidden_act */
  int32_t lora_masks[VLM_DECODER_MAX_ADAPTERS];   /* input nodes; -1: adapter unused this step */
  int64_t lora_applied[VLM_DECODER_MAX_ADAPTERS]; /* projections each adapter was applied to */
} vlm_decoder_blocks;

/* Validates the description and step (activation, adapters, rows), sets
 * the graph's two RoPE tables (0: full layers', 1: sliding layers') and
 * fills `out`; call vlm_decoder_blocks_lora_inputs after the embeddings. */
vlm_status vlm_decoder_blocks_begin(const struct vlm_decoder_description *description,
                                    const struct vlm_decoder_step *step, vlm_graph *graph,
                                    vlm_decoder_blocks *out);
/* The "lora_mask.<k>" inputs of the adapters the step uses. */
void vlm_decoder_blocks_lora_inputs(vlm_decoder_blocks *blocks);
/* INVALID_ARGUMENT when an adapter of the step held a LoRA module no
 * projection of the decoder applied (it would be accepted and ignored). */
vlm_status vlm_decoder_blocks_check_adapters(const vlm_decoder_blocks *blocks);

/* A weight node "<prefix><suffix>" of the shape the config implies. */
int32_t vlm_block_weight(vlm_decoder_blocks *blocks, const char *prefix, const char *suffix, int rank,
                         const int64_t *shape);
/* PEFT's LoRA Linear update of `base` = x W^T by adapter k on the rows whose
 * slots use it (base + lora_B(lora_A(x)) * scale there, base elsewhere);
 * `base` itself when the adapter holds no module of that name. */
int32_t vlm_block_lora(vlm_decoder_blocks *blocks, int32_t x, int32_t base, const char *module_name, int k,
                       int64_t out, int64_t in);
/* nn.Linear "<layer_prefix><module>" (+ bias) with every used adapter's
 * LoRA on it. */
int32_t vlm_block_linear(vlm_decoder_blocks *blocks, int32_t x, const char *layer_prefix, const char *module,
                         int64_t out, int64_t in, bool bias);
/* LlamaRMSNorm "<layer_prefix><module>" over the last `size` values, with
 * the description's weight offset (Gemma's 1 + w). */
int32_t vlm_block_rms_norm(vlm_decoder_blocks *blocks, int32_t x, const char *layer_prefix, const char *module,
                           int64_t size);
/* The RoPE table a layer uses (LlamaRotaryEmbedding; Gemma 3's local one
 * on sliding layers): an index for vlm_block_rope. */
int32_t vlm_block_layer_rope(const vlm_decoder_blocks *blocks, int32_t layer);
/* apply_rotary_pos_emb on one of q or k [rows, heads, head_dim]. */
int32_t vlm_block_rope(vlm_decoder_blocks *blocks, int32_t x, int32_t rope_index, const char *name);
/* LlamaAttention (Qwen2/3, Gemma 3, Phi-3 variants by the layout): q/k/v
 * projections (fused qkv_proj), QK-norm, RoPE, cached attention of layer
 * `layer` (sliding window, soft cap), o_proj. */
int32_t vlm_block_llama_attention(vlm_decoder_blocks *blocks, int32_t hidden, const char *layer_prefix,
                                  int32_t layer);
/* LlamaMLP: down(act(gate(x)) * up(x)) (fused gate_up_proj by the layout). */
int32_t vlm_block_llama_mlp(vlm_decoder_blocks *blocks, int32_t hidden, const char *layer_prefix, int32_t layer);
/* Qwen3MoeSparseMoeBlock: the router's logits, then the moe op. */
int32_t vlm_block_sparse_moe(vlm_decoder_blocks *blocks, int32_t hidden, const char *layer_prefix, int32_t layer);
/* LlamaDecoderLayer (Gemma's sandwich norms by the layout; the sparse MLP
 * on sparse layers): its output node "<prefix>layers.N". */
int32_t vlm_block_llama_decoder_layer(vlm_decoder_blocks *blocks, int32_t residual, int32_t layer);
/* The embedding step: embed_tokens (scaled by the description's scale) and
 * the merge of the step's encoder features (vlm_block_merge_features). */
int32_t vlm_block_embed_tokens(vlm_decoder_blocks *blocks);
/* The merge of encoder features into `embedded` [rows, hidden] as the
 * description's merge mode says (decoder.h vlm_feature_merge): inputs
 * "features" [rows, hidden] and "feature_mask" [rows]; the node
 * "<prefix>embed_tokens_merged". */
int32_t vlm_block_merge_features(vlm_decoder_blocks *blocks, int32_t embedded);
/* Qwen3-VL's DeepStack: hidden + layer_features[j] after the listed layers. */
int32_t vlm_block_add_layer_features(vlm_decoder_blocks *blocks, int32_t features, int32_t hidden, int32_t layer);
/* The end of a CausalLM forward: the step's logit rows, the final norm
 * "<prefix>norm", lm_head (tied to embed_tokens or not), the final soft
 * cap; sets graph->output (the last hidden state when no logits are
 * wanted) and returns the graph's error. */
vlm_status vlm_block_causal_lm_head(vlm_decoder_blocks *blocks, int32_t hidden);

#endif
