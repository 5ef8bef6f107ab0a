/* Executing a compiled text-decoder artifact (stablehlo_emitter.h) through
 * IREE's runtime: embedded CPython drives the pinned iree-base-runtime
 * wheel through vlm_xla_bridge.py (docs/XLA_ROUTE.md explains why). This
 * is the only part of vlm that needs Python; it lives in the separate
 * vlm_xla library so libvlm stays free of it.
 *
 * Opening refuses, before anything executes, an artifact whose stored
 * compatibility key differs from the one this model, these options, this
 * runtime release and this target need, and then checks the key hash the
 * artifact itself carries (its `compatibility` function). The parameter
 * names, dtypes and shapes are part of the key (validated against the
 * checkpoint by our own checkpoint layer when the key is computed): IREE
 * checks only byte ranges.
 *
 * The KV cache lives in the artifact's globals, on the device, across
 * calls; read_kv copies one slot out for tests. One thread at a time: the
 * calls hold Python's GIL. */
#ifndef VLM_BACKENDS_XLA_XLA_RUNTIME_H
#define VLM_BACKENDS_XLA_XLA_RUNTIME_H

#include <stdint.h>

#include "backends/xla/iree_compiler.h"
#include "backends/xla/stablehlo_emitter.h"
#include "vlm.h"

typedef struct vlm_xla_runtime_options {
  const char *venv;        /* default: vlm_xla_paths_get (iree_compiler.h) */
  const char *driver;      /* IREE HAL driver; NULL: local-task when thread_count > 1, else local-sync */
  int thread_count;        /* local-task workers (<= 1: local-sync) */
  /* Graph modules: their weights laid out already, shared by the caller's
   * modules (an encoder's buckets; it must outlive them). NULL: the
   * runtime lays out its own. */
  const struct vlm_xla_layout *layout;
  vlm_xla_target target;   /* what the artifact must have been compiled for */
} vlm_xla_runtime_options;

typedef struct vlm_xla_runtime vlm_xla_runtime;

/* vlm_xla_decoder_options.thread_count resolved: < 0 one per core. */
int xla_thread_count(int requested);
/* The monotonic clock in seconds (module reports). */
double xla_seconds_now(void);

/* True when the venv with iree.runtime exists (tests skip without it). */
bool vlm_xla_runtime_available(const char *venv);

/* The runtime's release ("3.13.0rc...@revision"), which must equal the
 * compiler's that built the artifact. Starts Python if needed. */
vlm_status vlm_xla_runtime_version(const vlm_xla_runtime_options *options, char *out, size_t size);

/* Loads `artifact_dir` (NULL: the cache directory the key names under
 * `cache_dir`) for `model` compiled with `options`. */
vlm_status vlm_xla_runtime_open(const vlm_xla_text_decoder *model, const vlm_stablehlo_options *options,
                                const char *cache_dir, const char *artifact_dir,
                                const vlm_xla_runtime_options *runtime_options, vlm_xla_runtime **out_runtime);
void vlm_xla_runtime_release(vlm_xla_runtime *runtime);
/* Bytes of the weights laid out for the module (xla_layout.h). */
uint64_t vlm_xla_runtime_layout_bytes(const vlm_xla_runtime *runtime);

/* `count` rows of one slot from cache index `start` (chunked internally);
 * last_logits: [vocab] of the last row (the module computes no others). */
vlm_status vlm_xla_token_prefill(vlm_xla_runtime *runtime, int32_t slot, int64_t start, const int32_t *tokens,
                                 int64_t count, float *last_logits);
/* The rows of one embeddings_prefill: tokens [count]; features [count,
 * hidden] where feature_mask [count] is set (NULL: none); positions [axes,
 * count] (axes = the model's: 1, or 3 for M-RoPE); bias [count,
 * bias_key_count] additive over the slot's first keys (later ones hidden)
 * or NULL for causal. */
typedef struct vlm_xla_prefill_rows {
  const int32_t *tokens;
  const float *features;
  const int32_t *feature_mask;
  const float *layer_features;   /* [L, count, hidden] when the decoder has layer features; NULL: zeros */
  const int32_t *positions;
  const float *bias;
  int64_t bias_key_count;
} vlm_xla_prefill_rows;
vlm_status vlm_xla_embeddings_prefill(vlm_xla_runtime *runtime, int32_t slot, int64_t start,
                                      const vlm_xla_prefill_rows *input, int64_t count, float *last_logits);
/* One row per slot: tokens/cache_indices/positions/active [slots] (the
 * KV goes to the cache index, RoPE takes the position); logits [slots,
 * vocab] (rows of inactive slots unspecified). Calls the artifact's
 * smallest decode window that holds every active cache index. */
vlm_status vlm_xla_decode(vlm_xla_runtime *runtime, const int32_t *tokens, const int32_t *cache_indices,
                          const int32_t *positions, const int32_t *active, float *logits);
/* [layers, 2 (keys, values), capacity, kv_heads, head_dim] of one slot. */
vlm_status vlm_xla_read_kv(vlm_xla_runtime *runtime, int32_t slot, float *out);
vlm_status vlm_xla_clear_slot(vlm_xla_runtime *runtime, int32_t slot);
/* Request state for the following prefill calls (a module with request
 * state, stablehlo_emitter.h): the slot's adapter (-1: none) and the whole
 * prompt's length; and for the following decode calls, per slot row, the
 * adapter and the row window (0, or 1: the row sees only itself). A module
 * without request state accepts only -1 and 0. */
vlm_status vlm_xla_set_prefill_state(vlm_xla_runtime *runtime, int32_t adapter, int64_t prompt_length);
vlm_status vlm_xla_set_decode_state(vlm_xla_runtime *runtime, const int32_t *adapters, const int32_t *windows);

#endif
