/* The xla backend's StableHLO emitter for text decoders.
 *
 * From the same decoder graph the cpu backend executes
 * (src/models/decoder.c), it emits one MLIR module (StableHLO plus IREE's
 * util globals) holding the three module contracts of SPEC 3.1 as public
 * functions that share one KV cache; IREE keeps globals private to a
 * module, so the three must live in one module (docs/XLA_ROUTE.md).
 *
 * Static shapes: the slot count S, the per-slot capacity N and the prefill
 * chunk C are emit parameters. Arguments (all i32 unless said):
 *
 *   token_prefill(tokens [C], valid_rows [], slot [], start [])
 *       -> logits [1, vocab] f32 of the last valid row
 *   embeddings_prefill(tokens [C], features [C, hidden] f32, feature_mask [C],
 *                      positions [A, C], bias [C, N] f32, valid_rows [],
 *                      slot [], start [])
 *       -> logits [1, vocab] f32 of the last valid row
 *   decode(tokens [S], cache_index [S], positions [S], active [S])
 *       -> logits [S, vocab] f32
 *   decode_<W>(same)   the same with attention over cache rows [0, W):
 *                      every active position must be <= W
 *   token_prefill_<R>, embeddings_prefill_<R>: the same with R rows for C
 *   read_kv(slot []) -> [layers, 2 (keys, values), N, kv_heads, head_dim] f32
 *   clear_slot(slot [])                      zeroes the slot's K/V
 *   compatibility() -> [4]: contract version, emitter version, key hash
 *                           (low, high 32 bits)
 *
 * A prefill chunk holds the rows [0, valid_rows) of one slot at cache
 * indices start + r (padding after them: their logits are unspecified and
 * they write no K/V). token_prefill's RoPE positions are the cache indices;
 * embeddings_prefill merges the features into the rows feature_mask marks
 * (inside the graph, after the family's embedding scale) and takes its own
 * positions, A = 1 or 3 (M-RoPE) axes, and an additive bias over the
 * slot's N keys that replaces the causal mask (put -inf on keys a row may
 * not see, including every key at or past start + valid_rows). decode's
 * row b is slot b at cache index cache_index[b] and RoPE position
 * positions[b] (they differ by the slot's M-RoPE delta); a row whose
 * active[b] is 0 writes no K/V and its logits are unspecified.
 *
 * Module layout:
 *   - weights: `util.global private @"<name>" =
 *     #stream.parameter.named<"model"::"<name>">`, one per checkpoint tensor
 *     the graph names, by canonical name, in the checkpoint's dtype (f32,
 *     bf16, f16; converted to f32 inside the functions);
 *   - KV: one `util.global private mutable @kv_cache`, f32 [layers, 2
 *     (keys, values), S, N + C, kv_heads, head_dim], zero at load, loaded
 *     once per function and stored once before returning. Attention reads
 *     the cached rows as loaded plus the call's own rows (kept as values);
 *     all of the call's rows are written after the last layer with
 *     dynamic_update_slice (one for a prefill chunk, one per slot for
 *     decode), so every read precedes every write and IREE updates the
 *     global in place instead of copying it per layer. One global, not one per layer: with
 *     several identically initialised mutable globals, IREE 3.13 made the
 *     stored K and V of different layers alias (they read back equal). The
 *     C rows past N take a padded chunk's overhang so no write is ever
 *     clamped (StableHLO clamps out-of-range starts, which would shift the
 *     whole chunk); attention reads rows [0, N) only.
 *   - module attributes: vlm.contract_version, vlm.emitter_version,
 *     vlm.compatibility_key (every field), vlm.compatibility_key_hash. */
#ifndef VLM_BACKENDS_XLA_STABLEHLO_EMITTER_H
#define VLM_BACKENDS_XLA_STABLEHLO_EMITTER_H

#include <stdint.h>

#include "backends/xla/xla_key.h"
#include "graph/graph.h"
#include "io/checkpoint.h"
#include "io/config.h"
#include "models/decoder.h"
#include "models/family.h"
#include "models/model.h"
#include "vlm.h"

#define VLM_STABLEHLO_MAX_WINDOWS 16

typedef struct vlm_stablehlo_options {
  int32_t slot_count;     /* S: decode rows, one per slot */
  int64_t capacity;       /* N: positions per slot */
  int64_t prefill_chunk;  /* C: rows per prefill call */
  int64_t decode_window;  /* smallest decode attention window (default 256) */
  int64_t prefill_bucket; /* smallest prefill row bucket (default 64) */
} vlm_stablehlo_options;

/* Prefill row buckets: `token_prefill`/`embeddings_prefill` take C rows;
 * `token_prefill_<R>`/`embeddings_prefill_<R>` take R, for R =
 * prefill_bucket, 2 prefill_bucket, ... < C, so a short prompt (or a
 * prompt's last piece) is not padded to a whole chunk. The runtime calls
 * the smallest R that holds the rows. Fills `buckets` ascending (the last
 * is C) and returns their count. */
int vlm_stablehlo_prefill_buckets(const vlm_stablehlo_options *options, int64_t buckets[VLM_STABLEHLO_MAX_WINDOWS]);
/* The artifact function for `base` ("token_prefill", "embeddings_prefill")
 * with `rows` rows ("token_prefill", "token_prefill_64"). */
void vlm_stablehlo_prefill_function(const vlm_stablehlo_options *options, const char *base, int64_t rows, char *out,
                                    size_t size);

/* Decode windows: `decode` attends over all N cached rows; `decode_<W>`
 * over rows [0, W) only, for W = decode_window, 2 decode_window, ... < N,
 * so a step costs what the slots have used, not what was compiled (the
 * runtime calls the smallest W that holds every active slot's position).
 * Fills `windows` ascending (the last is N) and returns their count. */
int vlm_stablehlo_decode_windows(const vlm_stablehlo_options *options, int64_t windows[VLM_STABLEHLO_MAX_WINDOWS]);
/* The artifact function that decodes with `window` ("decode", "decode_256"). */
void vlm_stablehlo_decode_function(const vlm_stablehlo_options *options, int64_t window, char *out, size_t size);

/* The opened model's text decoder for the xla backend: the family's
 * decoder description over the model's config and weights. */
typedef struct vlm_xla_text_decoder {
  vlm_model *model;                /* retained */
  const vlm_model_config *config;  /* &model->config */
  vlm_decoder_description decoder;
  const vlm_checkpoint *weights;
  /* The text functions take per-request state (the decoder has LoRA
   * adapters, longrope or the LongRoPE cache reset): token_prefill and
   * embeddings_prefill two more scalars, `adapter` (-1: none) and
   * `prompt_length` (the whole prompt's rows: longrope's length for every
   * prefill row); decode two more [slots] rows, `adapters` and
   * `row_windows` (1: the row attends only to itself). */
  bool request_state;
} vlm_xla_text_decoder;

/* Whether the xla backend takes this model's text decoder at all, before
 * any graph is built: the family has a decoder, the weights are not
 * quantized (--quantize, GPTQ, AWQ), the RoPE is not dynamic. The one gate
 * `vlm run/serve/compile --backend xla` (through vlm_xla_text_decoder_open)
 * and `vlm inspect` (module_support.c) both ask, so they cannot disagree. */
vlm_status vlm_xla_text_decoder_check(const vlm_model *model);
vlm_status vlm_xla_text_decoder_open(vlm_model *model, vlm_xla_text_decoder *out_model);
void vlm_xla_text_decoder_release(vlm_xla_text_decoder *model);
/* Fills options left 0 with the defaults: 1 slot, capacity
 * min(max_position_embeddings, 4096), prefill chunk min(512, capacity). */
void vlm_stablehlo_default_options(const vlm_xla_text_decoder *model, vlm_stablehlo_options *options);

/* Emits the module (NUL-terminated, free()) and its emit-time compatibility
 * key. Any graph op the emitter cannot lower is refused with UNIMPLEMENTED
 * naming the node and the op. */
vlm_status vlm_stablehlo_emit_text_decoder(const vlm_xla_text_decoder *model,
                                           const vlm_stablehlo_options *options, char **out_module,
                                           vlm_xla_key *out_key);

/* OK when every node of `graph` can be lowered. */
vlm_status vlm_stablehlo_check_graph(const vlm_graph *graph);

#endif
