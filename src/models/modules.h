/* The module contracts of SPEC 3.1 as the engine drives them: tables of
 * functions each backend implements (src/backends/cpu/cpu_modules.c,
 * src/backends/xla), so one scheduler drives every backend and no backend
 * knows the engine.
 *
 *   token_prefill(tokens[T], slot)                       -> last logits, KV
 *   embeddings_prefill(tokens[T], features[T, H] where feature_mask[T],
 *                      positions [axes, T], additive bias [T, past+T],
 *                      side inputs, slot)                -> last logits, KV
 *   decode(tokens[B], positions[B], slots[B])             -> logits[B]
 *   encode(media item)                                   -> features[tokens, H]
 *
 * embeddings_prefill takes the token ids and the encoder features, not
 * ready embeddings: the merge (features replacing their placeholder rows,
 * after the family's embedding scale on the text rows) is a step of the
 * decoder graph, so it runs on the backend and keeps the family's scale.
 * Passing every row as a feature row is the SPEC's embeds[T, H] form.
 *
 * A backend keeps each slot's length itself: prefill appends at it, decode
 * continues it (the KV goes to the slot's length; `positions` are RoPE
 * positions, which differ from it by the slot's M-RoPE delta), clear_slot
 * resets it. The engine validates what it passes once, before any backend
 * (vlm_prefill_input_check); backends may check again. */
#ifndef VLM_MODELS_MODULES_H
#define VLM_MODELS_MODULES_H

#include <stdint.h>

#include "media/media_item.h"
#include "vlm.h"

typedef struct vlm_text_decoder vlm_text_decoder;   /* also in vlm/engine.h */
typedef struct vlm_media_encoder vlm_media_encoder; /* also in vlm/engine.h */

/* A side input of embeddings_prefill. The one accepted today is
 * "layer_features" (VLM_SIDE_INPUT_LAYER_FEATURES): f32 [L, T, hidden],
 * added to the hidden states after the decoder layers the family lists
 * (models/decoder.h; Qwen3-VL's DeepStack), zero on rows without media. A
 * decoder with L > 0 requires it whenever features are given and refuses
 * it otherwise; any other name is refused (per-layer PLE inputs later). */
#define VLM_SIDE_INPUT_LAYER_FEATURES "layer_features"

typedef struct vlm_side_input {
  const char *name;
  const float *values;
  int rank;
  int64_t shape[4];
} vlm_side_input;

typedef struct vlm_prefill_input {
  int64_t row_count;             /* T */
  const int32_t *tokens;         /* [T], in the vocabulary (a feature row's id is not read) */
  const float *features;         /* [T, hidden] or NULL: no feature rows */
  const int32_t *feature_mask;   /* [T]: non-zero where the row is features[r] */
  const int64_t *positions;      /* [axes, T] axis-major, or NULL: consecutive from the slot's length */
  int position_axes;             /* 1, or 3 for an M-RoPE model */
  /* [T, past + T] additive (0 or -inf), replacing the causal mask; key k
   * is cache index k (the slot's rows, then these); NULL: causal. */
  const float *bias;
  int64_t bias_key_count;        /* past + T when bias is given */
  const vlm_side_input *side_inputs;
  int side_input_count;
} vlm_prefill_input;

/* What a decoder accepts, for validating inputs before any backend. */
typedef struct vlm_text_decoder_shape {
  int64_t vocab_size, hidden_size, capacity;
  int position_axes;             /* 1, or 3 for M-RoPE */
  /* The most rows one prefill step can attend across (the rows a bias
   * lets see each other must fit one); 0: no limit. */
  int64_t prefill_rows_limit;
  int layer_feature_count;       /* L of the "layer_features" side input; 0: none */
} vlm_text_decoder_shape;

/* Every field of `input` against `shape` and the slot's current length:
 * ids in the vocabulary, features present where the mask says, positions
 * non-negative with the model's axis count, the bias [T, past + T],
 * capacity, and the side inputs ("layer_features" [L, T, hidden] exactly
 * when the decoder has L > 0 layer features and features are given). */
vlm_status vlm_prefill_input_check(const vlm_text_decoder_shape *shape, int64_t slot_length,
                                   const vlm_prefill_input *input);
/* The side input of that name, or NULL. */
const vlm_side_input *vlm_prefill_input_side(const vlm_prefill_input *input, const char *name);

/* Values of a slot's KV variant (vlm_text_decoder_operations.kv_variant). */
#define VLM_KV_VARIANT_VALUES 3

/* Where a prefill step that starts at row `first` of `count` may end,
 * given reach[r] (the last row, in the same numbering, that row r sees;
 * >= r): the largest end in (first, first + limit] such that no row of
 * [first, end) sees a row at or after end; when there is none (a block
 * that starts at `first` and runs past the limit), the smallest end beyond
 * that holds it. limit <= 0: no limit (every row to count, then closed). */
int64_t vlm_prefill_chunk_end(const int64_t *reach, int64_t count, int64_t first, int64_t limit);
/* reach[r] of rows [0, count) of a prefill whose bias is [count,
 * key_count] over cache indices with `past` cached rows: the last
 * non-masked key of each row, as a row index (key - past). */
void vlm_prefill_bias_reach(const float *bias, int64_t count, int64_t key_count, int64_t past, int64_t *reach);
/* The bias [rows, first + rows] of prompt rows [first, first + rows) of a
 * prompt whose rows carry attention blocks (>= 0: a block, -1: none; see
 * vlm_family_attention_blocks_fn): 0 where the key is the row's or
 * earlier, or in the row's block, -inf elsewhere. The prompt's rows are the
 * slot's cache indices (the slot holds rows [0, first)). */
void vlm_attention_blocks_bias(const int32_t *blocks, int64_t count, int64_t first, int64_t rows, float *out);
/* reach[r] of a prompt's rows from its attention blocks (the last row of
 * the row's block, or r). */
void vlm_attention_blocks_reach(const int32_t *blocks, int64_t count, int64_t *reach);

/* What opening one compiled module cost a backend that compiles (xla):
 * its name ("text_decoder", "media_encoder[rows=1024]"), whether its
 * artifact came from the cache, the compile and the load (parameters,
 * weights laid out) in seconds, and the bytes of weights it holds of its
 * own (laid out for it; mapped checkpoint pages are the model's). */
#define VLM_MODULE_NAME_LENGTH 64
typedef struct vlm_module_report {
  char name[VLM_MODULE_NAME_LENGTH];
  bool cached;
  double compile_seconds, load_seconds;
  uint64_t weight_bytes;
} vlm_module_report;

typedef struct vlm_text_decoder_operations {
  const char *backend; /* "cpu", "xla" */
  void (*shape)(void *self, vlm_text_decoder_shape *out);
  int32_t (*slot_count)(void *self);
  uint64_t (*kv_bytes)(void *self);
  int64_t (*slot_length)(void *self, int32_t slot);
  vlm_status (*clear_slot)(void *self, int32_t slot);
  /* Per-slot settings of the request about to be prefilled into a cleared
   * slot (reset by clear_slot): its LoRA adapter (-1: the base model; else
   * an index of the model's adapters, models/model.h) and its prompt length
   * (the rows its prefill chunks will add: length-dependent RoPE sees the
   * whole prompt). */
  vlm_status (*begin_request)(void *self, int32_t slot, int32_t adapter, int64_t prompt_length);
  /* After begin_request: what, besides each position's token, media row and
   * RoPE position, the slot's KV depends on (its adapter; the factor set a
   * length-dependent RoPE chose for the prompt), as values that are equal
   * for two requests exactly when their KV at equal positions is. The
   * prefix cache shares KV only between requests with equal values. NULL:
   * nothing (all zero). */
  void (*kv_variant)(void *self, int32_t slot, int64_t out[VLM_KV_VARIANT_VALUES]);
  /* Appends `count` rows to the slot at positions continuing its length;
   * last_logits: [vocab] of the last row. */
  vlm_status (*token_prefill)(void *self, int32_t slot, const int32_t *tokens, int64_t count, float *last_logits);
  vlm_status (*embeddings_prefill)(void *self, int32_t slot, const vlm_prefill_input *input, float *last_logits);
  /* Row b continues slot slots[b] (its KV at the slot's length) at RoPE
   * position positions[b]; logits [batch, vocab] in batch order. Slots are
   * distinct. */
  vlm_status (*decode)(void *self, int64_t batch, const int32_t *tokens, const int64_t *positions,
                       const int32_t *slots, float *logits);
  /* Optional, for the engine's prefix cache (NULL: the backend cannot hand
   * its KV out, and the engine turns the cache off, saying why). Only a
   * backend whose KV of a position is bit-identical however the rows
   * before it were chunked or decoded (SPEC 3.5) may give them.
   * kv_position_bytes: what one position's keys and values take over all
   * layers; read_kv copies positions [first, first + count) of the slot to
   * `out` (kv_position_bytes * count bytes, a layout of the backend's
   * choosing); write_kv copies them back in at the slot's length (first
   * must equal it), which then grows by count. */
  uint64_t (*kv_position_bytes)(void *self);
  vlm_status (*read_kv)(void *self, int32_t slot, int64_t first, int64_t count, void *out);
  vlm_status (*write_kv)(void *self, int32_t slot, int64_t first, int64_t count, const void *in);
  /* Optional: the modules opened so far, at most `max` into `out`; returns
   * how many there are. NULL: the backend compiles nothing. */
  int (*module_reports)(void *self, vlm_module_report *out, int max);
  /* Optional, for validation (vlm compare), with no bit-stability promise
   * (unlike read_kv): positions [first, first + count) of the slot's
   * keys (after RoPE) and values as f32, per layer that stores its own,
   * keys [count, key_width] then values [count, value_width], as the
   * family's KV layout says (models/kv_layout.h; the standard layout:
   * [layers, 2, count, kv_heads, head_dim]). NULL: the backend cannot show
   * its KV. */
  vlm_status (*inspect_kv)(void *self, int32_t slot, int64_t first, int64_t count, float *out);
  void (*release)(void *self);
} vlm_text_decoder_operations;

struct vlm_text_decoder {
  const vlm_text_decoder_operations *operations;
  void *self;
};

/* An encoder for one kind of media item (a family's vision tower and
 * projector, later its audio encoder) on some backend. */
typedef struct vlm_media_encoder_operations {
  const char *backend; /* "cpu", "xla" */
  vlm_media_kind kind;
  int64_t (*output_width)(void *self);
  /* out_features: [item->token_count, output_width]. */
  vlm_status (*encode)(void *self, const vlm_media_item *item, float *out_features);
  /* Optional, as the text decoder's (each row bucket is a module, opened
   * by the first item that needs it). */
  int (*module_reports)(void *self, vlm_module_report *out, int max);
  void (*release)(void *self);
} vlm_media_encoder_operations;

struct vlm_media_encoder {
  const vlm_media_encoder_operations *operations;
  void *self;
};

/* Release the backend's module and the handle (NULL: nothing). */
void vlm_text_decoder_release(vlm_text_decoder *decoder);
void vlm_media_encoder_release(vlm_media_encoder *encoder);

#endif
