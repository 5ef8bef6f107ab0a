/* The cpu backend's text decoder behind the module contracts of SPEC 3.1
 * (src/models/modules.h):
 *
 *   token_prefill(tokens[T], positions, slot)            -> logits, KV written
 *   embeddings_prefill(tokens[T], features[T,H] + mask, positions[T]|[3,T],
 *                      additive bias [T, past+T], side inputs, slot)
 *                                                        -> logits, KV written
 *   decode(tokens[B], positions[B] (+ M-RoPE delta), slots[B]) -> logits[B]
 *
 * Every contract validates every input it receives and refuses what the
 * model cannot use (3-axis positions for a 1-axis RoPE model, side inputs a
 * family does not take, a slot out of range, a prompt over capacity) before
 * any compute. Later families extend the values accepted, not the
 * signatures.
 *
 * Capacity: each slot holds `capacity` positions (a parameter, not a
 * constant); prefill runs in chunks of at most `prefill_chunk` rows. A
 * request's logits are bitwise identical whatever the chunk size, the
 * thread count, or the other rows of a decode batch (SPEC 3.5). */
#ifndef VLM_BACKENDS_CPU_TEXT_MODEL_H
#define VLM_BACKENDS_CPU_TEXT_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/cpu/kv_cache.h"
#include "backends/cpu_graph.h"
#include "core/thread_pool.h"
#include "io/checkpoint.h"
#include "io/config.h"
#include "models/model.h"
#include "models/modules.h"
#include "vlm.h"

#define VLM_TEXT_CONTRACT_VERSION 1

typedef struct vlm_text_model_options {
  int32_t slot_count;      /* default 1 */
  int64_t capacity;        /* positions per slot; default min(max_position_embeddings, 4096) */
  int64_t prefill_chunk;   /* rows per prefill step; default 512 */
  vlm_thread_pool *pool;   /* borrowed; NULL runs single-threaded */
  const vlm_allocator *allocator;
} vlm_text_model_options;

typedef struct vlm_text_model vlm_text_model;

/* The family's text decoder of `model` (LLaVA's text side for a LLaVA
 * checkpoint, and so on), with its KV cache; the model is retained. */
vlm_status vlm_text_model_open(vlm_model *model, const vlm_text_model_options *options,
                               vlm_text_model **out_model);
void vlm_text_model_release(vlm_text_model *model);

const vlm_model_config *vlm_text_model_config(const vlm_text_model *model);
int64_t vlm_text_model_vocab_size(const vlm_text_model *model);
int64_t vlm_text_model_capacity(const vlm_text_model *model);
int64_t vlm_text_model_slot_length(const vlm_text_model *model, int32_t slot);
vlm_kv_cache *vlm_text_model_cache(vlm_text_model *model);
const vlm_checkpoint *vlm_text_model_weights(const vlm_text_model *model);
/* Bytes of the linear weights packed so far (all of them once the model is
 * open): the quantized bytes under --quantize. */
uint64_t vlm_text_model_packed_bytes(const vlm_text_model *model);
/* The token embedding table ([vocab, hidden], borrowed from the checkpoint),
 * wherever the family keeps it. */
vlm_status vlm_text_model_embedding_table(const vlm_text_model *model, vlm_tensor *out_table);
/* Clears the slot's KV and length (completion, cancellation, reuse). */
/* The slot's next request: its LoRA adapter (-1: none; else below
 * vlm_text_model_adapter_count) and its prompt length (the rows the
 * following prefills will add, for length-dependent RoPE). Cleared with
 * the slot. */
/* The slot's KV variant (modules.h kv_variant): adapter + 1, then the
 * length class of the full and the sliding layers' RoPE for the prompt. */
void vlm_text_model_kv_variant(const vlm_text_model *model, int32_t slot, int64_t out[3]);
vlm_status vlm_text_model_begin_request(vlm_text_model *model, int32_t slot, int32_t adapter,
                                        int64_t prompt_length);
int vlm_text_model_adapter_count(const vlm_text_model *model);
vlm_status vlm_text_model_clear_slot(vlm_text_model *model, int32_t slot);

/* Where prefill logits go: the last row's always; every row's as well when
 * all_rows is non-NULL ([T, vocab]), e.g. for golden comparisons. */
typedef struct vlm_prefill_logits {
  float *last_row;  /* [vocab] */
  float *all_rows;  /* [T, vocab] or NULL */
} vlm_prefill_logits;

/* Positions: NULL means consecutive from the slot's current length (and,
 * for an M-RoPE model, that same position on all three axes). Otherwise
 * `position_axes` (1 or 3) rows of T positions, axis-major. */
typedef struct vlm_positions {
  const int64_t *values;
  int axes;
} vlm_positions;

vlm_status vlm_text_model_token_prefill(vlm_text_model *model, int32_t slot,
                                        const int32_t *tokens, int64_t token_count,
                                        const vlm_positions *positions,
                                        const vlm_prefill_logits *logits);

/* Prefill with features (vlm_prefill_input, src/models/modules.h): the
 * token embeddings (scaled as the family scales them) with the feature
 * rows replacing theirs, at the given positions, with the given bias. */
vlm_status vlm_text_model_embeddings_prefill(vlm_text_model *model, int32_t slot,
                                             const vlm_prefill_input *input,
                                             const vlm_prefill_logits *logits);
/* Every computed node of the next steps' graphs goes to `observer` (NULL
 * to stop); for golden comparisons of intermediates. */
void vlm_text_model_set_observer(vlm_text_model *model, vlm_node_observer observer, void *context);
/* What the model accepts (vocabulary, hidden size, capacity, RoPE axes). */
void vlm_text_model_shape(const vlm_text_model *model, vlm_text_decoder_shape *out);

/* One token per row; row b continues slot slots[b] at RoPE position
 * positions[b] (+ mrope_deltas[b] on every axis for an M-RoPE model; NULL
 * means no delta). Slots must be distinct. logits: [batch, vocab]. */
vlm_status vlm_text_model_decode(vlm_text_model *model, int64_t batch, const int32_t *tokens,
                                 const int64_t *positions, const int64_t *mrope_deltas,
                                 const int32_t *slots, float *logits);

#endif
