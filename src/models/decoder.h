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
#include "io/config.h"
#include "models/blocks.h"

typedef struct vlm_decoder_description {
  const vlm_text_config *text;
  bool tie_word_embeddings;
  const char *prefix;              /* "model." or "model.language_model." */
  vlm_decoder_layout layout;
  double norm_weight_offset;       /* 1 for Gemma's x * (1 + w), else 0 */
  double embedding_scale;          /* sqrt(hidden) for Gemma, else 1 */
} vlm_decoder_description;

/* What one step feeds the decoder: token ids, and for embeddings_prefill
 * encoder features that replace the embeddings of the rows their mask
 * marks; and which rows need logits. Row slots and positions go in
 * graph->rows (see graph.h) and are read at execution. */
typedef struct vlm_decoder_step {
  int64_t row_count;
  bool with_features;              /* inputs "features" [rows, hidden] f32, "feature_mask" [rows] i32 */
  const int32_t *logit_rows;       /* rows whose logits are wanted; none: the
                                      output is the last layer's [rows, hidden] */
  int64_t logit_row_count;
} vlm_decoder_step;

/* Builds the decoder graph into `graph` (initialised by the caller). The
 * graph's output is the logits node [logit_rows, vocab] (or the last
 * hidden state when no logit rows are wanted). Inputs are named
 * "tokens" (i32 [rows]) and, with features, "features" (f32 [rows,
 * hidden]) and "feature_mask" (i32 [rows]); the merged embeddings are the
 * node "<prefix>embed_tokens_merged" (the goldens' input_embeddings). */
vlm_status vlm_build_decoder_graph(const vlm_decoder_description *description,
                                   const vlm_decoder_step *step, vlm_graph *graph);

#endif
