/* The shared text-decoder graph: embeddings, N pre-norm decoder layers
 * (attention with GQA, optional QKV bias, QK-norm, sliding windows, RoPE;
 * gated MLP), final norm and LM head, for every family's text side.
 *
 * Nodes are named after the Hugging Face module whose output they hold
 * ("model.layers.3.self_attn.q_proj", "model.norm", "lm_head"), so a golden
 * captured with forward hooks on the Transformers model compares by name.
 * Operations with no module of their own get descriptive names under their
 * layer ("model.layers.3.self_attn.q_rope", "...attention", "...residual"). */
#ifndef VLM_MODELS_DECODER_H
#define VLM_MODELS_DECODER_H

#include "graph/graph.h"
#include "io/checkpoint.h"
#include "io/config.h"
#include "models/blocks.h"

/* A LoRA adapter on the decoder's projections, applied unmerged as PEFT's
 * LoRA Linear computes it: base(x) + lora_B(lora_A(x)) * scale, on every
 * projection whose "<prefix><module>.lora_A.weight" the checkpoint holds
 * (<module> the projection's canonical name), and only on the rows of the
 * step's slots that use the adapter (input "lora_mask.<index>", i32 [rows]).
 * The adapters of a directory are the model's (models/adapters.c). */
typedef struct vlm_decoder_adapter {
  char name[48];          /* the subfolder, "vision-lora" */
  char prefix[64];        /* "adapters.vision-lora." */
  double scale;           /* lora_alpha / r (lora_alpha / sqrt(r) with use_rslora) */
  int64_t module_count;   /* lora_A tensors the adapter holds; each must be applied */
} vlm_decoder_adapter;

/* Sparse mixture-of-experts MLPs (Qwen3-MoE's and Qwen3-VL-MoE's
 * SparseMoeBlock): on a sparse layer the MLP is the router `mlp.gate`
 * (a linear [count, hidden] without bias, its output the node
 * "<layer>mlp.gate": the router logits) and the experts
 * `mlp.experts.gate_up_proj` / `mlp.experts.down_proj`, run by the graph's
 * moe op (graph.h). The experts' layout is chosen per tensor by its shape
 * in the checkpoint: [count, 2I, hidden] / [count, hidden, I] (what
 * Transformers 5.23 holds and saves) or [count, hidden, 2I] /
 * [count, I, hidden] (the hub's; Transformers 5.23 transposes them on
 * load), and a shape that fits both (hidden == 2I, hidden == I) is
 * refused. Other layers keep the dense gated MLP. */
typedef struct vlm_decoder_experts {
  int64_t count;             /* experts per sparse layer; 0: every layer is dense */
  int64_t top_k;             /* num_experts_per_tok */
  int64_t intermediate_size; /* each expert's (moe_intermediate_size) */
  bool normalize_top_k;      /* the k routing weights divided by their sum */
  /* Layer l is sparse when l is not in dense_layers and (l + 1) %
   * sparse_step == 0 (decoder_sparse_step, mlp_only_layers). */
  int64_t sparse_step;
  vlm_index_list dense_layers;
} vlm_decoder_experts;

/* How a step's encoder features enter the embeddings (the feature_mask
 * marks the rows either way): REPLACE the rows (masked_scatter: LLaVA,
 * Qwen-VL, Gemma 3, Phi-4's placeholders), or ADD to the rows (Molmo's
 * x[image_token_positions] += features, the positions the processor
 * supplies). */
typedef enum vlm_feature_merge {
  VLM_FEATURE_MERGE_REPLACE = 0,
  VLM_FEATURE_MERGE_ADD,
} vlm_feature_merge;

struct vlm_decoder_description;
struct vlm_decoder_step;
/* A family's own decoder graph for one step (vlm_family.build_decoder),
 * written on the blocks of blocks.h. */
typedef vlm_status (*vlm_decoder_build_fn)(const struct vlm_decoder_description *description,
                                           const struct vlm_decoder_step *step, vlm_graph *graph);

typedef struct vlm_decoder_description {
  const vlm_text_config *text;
  bool tie_word_embeddings;
  const char *prefix;              /* "model." or "model.language_model." */
  vlm_decoder_layout layout;
  double norm_weight_offset;       /* 1 for Gemma's x * (1 + w), else 0 */
  double embedding_scale;          /* sqrt(hidden) for Gemma, else 1 */
  /* Layer features (the side input "layer_features" of embeddings_prefill,
   * f32 [count, rows, hidden]): after decoder layer layer_features.values[j]
   * the hidden states add feature j, which is zero on rows without media
   * (Qwen3-VL's DeepStack: the extra mergers' outputs at visual positions).
   * Count 0: the decoder takes none. An encoder for such a decoder gives
   * rows of vlm_decoder_feature_width values: the feature that replaces
   * the placeholder's embedding, then one per layer feature. */
  vlm_index_list layer_features;
  /* Phi-3 / Phi-4's prepare_inputs_for_generation (Transformers 5.23)
   * drops the KV cache once a generation reaches the LongRoPE switch while
   * its cache is no longer than it, and, keeping the one-token input, runs
   * every later step on its own token alone: a decode row at position >=
   * this length of a slot whose prompt was no longer than it attends only
   * to itself. 0: never. */
  int64_t rope_cache_reset_length;
  vlm_decoder_experts experts;
  vlm_feature_merge merge;
  /* The family's decoder builder (vlm_family.build_decoder, set by
   * vlm_family_describe_decoder); NULL: the described loop. */
  vlm_decoder_build_fn build;
  /* The checkpoint the decoder binds, for layouts chosen by shape (the
   * experts'); NULL: the canonical ones. Filled from the opened model. */
  const vlm_checkpoint *weights;
  /* LoRA adapters (filled from the opened model, not by the family). */
  const vlm_checkpoint *adapter_weights;
  int adapter_count;
  vlm_decoder_adapter adapters[VLM_DECODER_MAX_ADAPTERS];
} vlm_decoder_description;

/* Whether `layer` has a sparse MoE MLP. */
bool vlm_decoder_layer_is_sparse(const vlm_decoder_description *description, int64_t layer);

/* Which layout each expert tensor of `layer` has in `weights` (NULL: the
 * canonical [E, 2I, H] / [E, H, I]): transposed = the hub's [E, H, 2I] /
 * [E, I, H]. INVALID_ARGUMENT naming the tensor when its shape is neither
 * or both. */
vlm_status vlm_decoder_expert_layout(const vlm_decoder_description *description, const vlm_checkpoint *weights,
                                     int64_t layer, bool *out_gate_up_transposed, bool *out_down_transposed);

/* Values per encoder output row: hidden * (1 + layer feature count). */
int64_t vlm_decoder_feature_width(const vlm_decoder_description *description);

/* What one step feeds the decoder: token ids, and for embeddings_prefill
 * encoder features that replace the embeddings of the rows their mask
 * marks; and which rows need logits. Row slots and positions go in
 * graph->rows (see graph.h) and are read at execution. */
typedef struct vlm_decoder_step {
  int64_t row_count;
  bool with_features;              /* inputs "features" [rows, hidden] f32, "feature_mask" [rows] i32,
                                      and "layer_features" when the description has any */
  const int32_t *logit_rows;       /* rows whose logits are wanted; none: the
                                      output is the last layer's [rows, hidden] */
  int64_t logit_row_count;
  /* [adapter_count]: whether any row of the step uses adapter k (only those
   * are built, with input "lora_mask.<k>"); NULL: none is used. */
  const bool *adapters_used;
} vlm_decoder_step;

/* Builds the decoder graph into `graph` (initialised by the caller): the
 * family's builder when the description has one, else the described loop
 * (vlm_build_described_decoder). The
 * graph's output is the logits node [logit_rows, vocab] (or the last
 * hidden state when no logit rows are wanted). Inputs are named
 * "tokens" (i32 [rows]) and, with features, "features" (f32 [rows,
 * hidden]) and "feature_mask" (i32 [rows]); the merged embeddings are the
 * node "<prefix>embed_tokens_merged" (the goldens' input_embeddings).
 * With features and layer features, the input "layer_features" (f32
 * [count, rows, hidden]) is added after each listed layer, as the node
 * "<prefix>layers.N.layer_features_added". */
vlm_status vlm_build_decoder_graph(const vlm_decoder_description *description,
                                   const vlm_decoder_step *step, vlm_graph *graph);
/* The described loop: embeddings, num_hidden_layers LlamaDecoderLayers
 * (blocks.h) with the description's layer features, the CausalLM head. */
vlm_status vlm_build_described_decoder(const vlm_decoder_description *description,
                                       const vlm_decoder_step *step, vlm_graph *graph);

#endif
