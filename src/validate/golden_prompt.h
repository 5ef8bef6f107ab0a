/* The golden prompt as the decoder stages feed a text decoder, on any
 * backend: the golden's own input_ids (tokenization has stages of its
 * own), the M-RoPE position_ids Transformers computed, the additive bias
 * of the family's attention blocks (Gemma 3's images), the case's LoRA
 * adapter, and for media cases the golden's merged input_embeddings as
 * every row's features (with Qwen3-VL's DeepStack layer features), so the
 * decoder is proven independently of the encoders. */
#ifndef VLM_VALIDATE_GOLDEN_PROMPT_H
#define VLM_VALIDATE_GOLDEN_PROMPT_H

#include <stdint.h>

#include "models/modules.h"
#include "validate/compare.h"

typedef struct vlm_golden_prompt {
  int32_t *tokens;
  int64_t token_count;      /* T */
  /* [3, T] axis-major as Transformers' [3, 1, T], and the decode delta they
   * imply (max + 1 - T); NULL: consecutive positions. */
  int64_t *positions;
  int64_t position_delta;
  float *bias;              /* [T, T] of the family's attention blocks, or NULL: causal */
  int32_t adapter;          /* an index of the model's adapters, or -1: the base model */
  /* [T, hidden]: the golden's input_embeddings, every row a feature row
   * (the SPEC's embeddings_prefill(embeds)); NULL: the token path. */
  float *embeddings;
  int32_t *feature_mask;    /* [T], all 1, with embeddings */
  float *layer_features;    /* [L, T, hidden] with embeddings when the decoder has L layer features */
  int64_t layer_count, hidden;
} vlm_golden_prompt;

/* Reads everything above from the case (the model must be open). */
vlm_status vlm_golden_prompt_load(const vlm_compare_context *context, vlm_golden_prompt *out);
/* The first `rows` rows of `prompt` as a prompt of their own (copies; the
 * bias cut to [rows, rows], the adapter and delta kept). */
vlm_status vlm_golden_prompt_prefix(const vlm_golden_prompt *prompt, int64_t rows, vlm_golden_prompt *out);
/* The embeddings_prefill input of the whole prompt (borrowing it); `side`
 * holds the layer features when there are any. */
void vlm_golden_prompt_input(const vlm_golden_prompt *prompt, vlm_prefill_input *out_input, vlm_side_input *side);
void vlm_golden_prompt_release(vlm_golden_prompt *prompt);

/* The case's "vlm_prefill_chunk" (0: the whole prompt at once). */
int64_t vlm_golden_prefill_chunk(const vlm_compare_context *context);

#endif
