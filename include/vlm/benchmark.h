/* vlm bench: prefill and decode throughput of a checkpoint's text decoder
 * on the cpu backend (or a decoder the caller opens: xla), against the machine's own limits (read bandwidth
 * for decode, FMA peak for prefill), measured in the same run; and, with an
 * image, its decode + processor time and its encode (tower + projector)
 * time on the cpu backend or the encoder given. */
#ifndef VLM_BENCHMARK_H
#define VLM_BENCHMARK_H

#include <stdint.h>

#include "vlm.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vlm_model;
struct vlm_text_decoder;
struct vlm_media_encoder;

typedef struct vlm_benchmark_options {
  const char *model_dir;
  const char *quantize;         /* vlm_model_options.quantize: "q8", "q4" or NULL */
  int thread_count;             /* <= 0: one per core */
  const int64_t *prefill_lengths; /* default {128, 512} */
  int prefill_length_count;
  const int32_t *decode_batches;  /* default {1, 8} */
  int decode_batch_count;
  int64_t decode_steps;         /* timed steps per batch size; default 32 */
  int64_t decode_context;       /* tokens each slot holds before the timed steps; default 16 */
  int repetitions;              /* best of N; default 3 */
  /* An image file to time: decode + image processor, then the encoder. */
  const char *image_path;
  /* The encoder to time it on (taken over); NULL: the cpu backend's. */
  struct vlm_media_encoder *image_encoder;
  /* An audio file to time: decode + feature extractor, then the audio
   * encoder (speech encoder + projector) on audio_encoder (taken over;
   * NULL: the cpu backend's). */
  const char *audio_path;
  struct vlm_media_encoder *audio_encoder;
  /* Opens the text decoder to time, for the geometry the benchmark needs
   * (slots = the largest decode batch, capacity and prefill chunk = the
   * longest sequence), instead of the cpu backend's; the time it takes is
   * reported as the load, and a backend's compiled modules with their
   * compile and load times. NULL: the cpu backend. */
  vlm_status (*open_text_decoder)(void *context, struct vlm_model *model, int32_t slots, int64_t capacity,
                                  int64_t prefill_chunk, struct vlm_text_decoder **out_decoder);
  void *open_context;
  /* Progress lines ("prefill 512 tokens: ...") go here when non-NULL. */
  void (*progress)(void *context, const char *line);
  void *progress_context;
} vlm_benchmark_options;

/* Runs the benchmark and returns a JSON report (caller frees with free()). */
vlm_status vlm_benchmark_run(const vlm_benchmark_options *options, char **out_json);

#ifdef __cplusplus
}
#endif

#endif
