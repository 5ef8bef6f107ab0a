/* The xla backend for the serving engine: the text decoder compiled by
 * IREE from StableHLO vlm emits (docs/XLA_BACKEND.md), executed through
 * IREE's runtime. Lives in the vlm_xla library (it embeds CPython, see
 * docs/XLA_ROUTE.md); pass the decoder to vlm_engine_open through
 * vlm_engine_options.text_decoder. */
#ifndef VLM_XLA_H
#define VLM_XLA_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "vlm.h"
#include "vlm/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vlm_xla_decoder_options {
  int32_t slot_count;      /* default 1 */
  int64_t capacity;        /* positions per slot; 0: min(max_position_embeddings, 4096) */
  int64_t prefill_chunk;   /* rows per prefill call; 0: min(512, capacity) */
  const char *target;      /* "llvm-cpu" (default) or "cuda" */
  const char *cache_dir;   /* artifact cache; NULL: $VLM_XLA_CACHE or ~/.cache/vlm/xla */
  /* When the cache has no artifact for this model and geometry: compile it
   * now (iree-compile, progress on `progress`), or fail saying to run
   * `vlm compile`. */
  bool compile_if_missing;
  FILE *progress;          /* NULL: silent */
  /* Threads a call runs on, llvm-cpu: N > 1 runs IREE's local-task driver
   * with N workers (the process's first xla module fixes N); 0 or 1 the
   * local-sync driver on the caller's thread; < 0 one per core. */
  int thread_count;
} vlm_xla_decoder_options;

/* Opens the model's text decoder on the xla backend. Refuses, before any
 * execution, a model the emitter cannot lower (naming the op) and an
 * artifact whose compatibility key differs. */
vlm_status vlm_xla_open_text_decoder(vlm_model *model, const vlm_xla_decoder_options *options,
                                     vlm_text_decoder **out_decoder);

/* Opens the model's vision tower + projector on the xla backend (one image
 * per call, a compiled function per encoder-row bucket, each compiled on
 * first use like the decoder, same options). Fails with UNIMPLEMENTED for a
 * family without a vision path or a tower the emitter cannot lower (naming
 * the op); the caller decides whether to fall back to the cpu backend, and
 * says so. Pass it to vlm_engine_open through
 * vlm_engine_options.image_encoder. */
vlm_status vlm_xla_open_image_encoder(vlm_model *model, const vlm_xla_decoder_options *options,
                                      vlm_media_encoder **out_encoder);
/* The family's audio encoder (speech encoder and projector) on the xla
 * backend, for vlm_engine_options.audio_encoder: a clip runs in its length
 * bucket (the family's encoder_bucket), each bucket compiled on first use
 * (cached like the decoder's artifacts). */
vlm_status vlm_xla_open_audio_encoder(vlm_model *model, const vlm_xla_decoder_options *options,
                                      vlm_media_encoder **out_encoder);

#ifdef __cplusplus
}
#endif

#endif
