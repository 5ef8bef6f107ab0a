/* The measurements behind `vlm bench`. Timings use the monotonic clock and
 * report the best of N repetitions, so a busy neighbour on the machine
 * inflates the numbers less. */
#include "vlm/benchmark.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "backends/cpu/cpu_kernels.h"
#include "core/alloc.h"
#include "core/checked.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "backends/cpu/cpu_encoder.h"
#include "backends/cpu/text_model.h"
#include "media/media_item.h"
#include "models/model.h"
#include "vlm/media.h"
#include "io/json.h"

static double now_seconds(void) {
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return (double)time.tv_sec + (double)time.tv_nsec * 1e-9;
}

static void progress(const vlm_benchmark_options *options, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
static void progress(const vlm_benchmark_options *options, const char *format, ...) {
  if (!options->progress) return;
  char line[256];
  va_list args;
  va_start(args, format);
  vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  options->progress(options->progress_context, line);
}

/* ---------------------------------------------------------------------- */
/* Machine limits                                                          */
/* ---------------------------------------------------------------------- */

typedef struct read_job {
  const uint64_t *data;
  uint64_t sums[64 * 8]; /* one cache line per worker */
} read_job;

static void read_range(void *context, int64_t begin, int64_t end, int worker) {
  read_job *job = context;
  uint64_t a = 0, b = 0, c = 0, d = 0;
  for (int64_t i = begin; i < end; i += 4) {
    a += job->data[i];
    b += job->data[i + 1];
    c += job->data[i + 2];
    d += job->data[i + 3];
  }
  job->sums[worker * 8] = a + b + c + d;
}

/* Read bandwidth: best of 5 passes over a buffer far larger than caches. */
static double measure_read_bandwidth(vlm_thread_pool *pool) {
  const size_t bytes = (size_t)512 << 20;
  uint64_t *data = vlm_allocate(NULL, bytes, VLM_DEFAULT_ALIGNMENT);
  if (!data) return 0;
  memset(data, 1, bytes);
  read_job job = {.data = data};
  double best = 1e30;
  for (int pass = 0; pass < 5; pass++) {
    double start = now_seconds();
    vlm_thread_pool_parallel_for(pool, (int64_t)(bytes / 8), 1 << 16, read_range, &job);
    double elapsed = now_seconds() - start;
    if (elapsed < best) best = elapsed;
  }
  vlm_release(NULL, data);
  return (double)bytes / best / 1e9;
}

/* FMA peak: the kernel layer's measurement, best of three. */
static double measure_fma_peak(vlm_thread_pool *pool) {
  double best = 0;
  for (int pass = 0; pass < 3; pass++) {
    double gflops = cpu_measure_fma_peak_gflops(pool);
    if (gflops > best) best = gflops;
  }
  return best;
}

/* ---------------------------------------------------------------------- */
/* Model measurements                                                      */
/* ---------------------------------------------------------------------- */

typedef struct model_costs {
  uint64_t weight_bytes;        /* every weight byte a decode step reads */
  double linear_parameters;     /* decoder projections, excluding the LM head */
  double head_parameters;       /* vocab x hidden */
} model_costs;

static model_costs measure_costs(const vlm_text_model *model) {
  model_costs costs = {0};
  const vlm_checkpoint *weights = vlm_text_model_weights(model);
  const vlm_text_config *text = &vlm_text_model_config(model)->text;
  for (size_t i = 0; i < vlm_checkpoint_tensor_count(weights); i++) {
    const vlm_tensor_info *info = vlm_checkpoint_tensor_at(weights, i);
    costs.weight_bytes += info->byte_size;
    if (info->rank == 2 && strstr(info->name, "layers."))
      costs.linear_parameters += (double)info->shape[0] * (double)info->shape[1];
  }
  costs.head_parameters = (double)text->vocab_size * (double)text->hidden_size;
  return costs;
}

static vlm_status time_prefill(vlm_text_model *model, int64_t length, int repetitions,
                               double *out_seconds) {
  int64_t vocab = vlm_text_model_vocab_size(model);
  int32_t *tokens = malloc((size_t)length * sizeof(int32_t));
  float *logits = malloc((size_t)vocab * sizeof(float));
  vlm_status status = tokens && logits ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; tokens && i < length; i++) tokens[i] = (int32_t)((i * 7919 + 13) % vocab);
  *out_seconds = 1e30;
  for (int r = 0; !status && r < repetitions; r++) {
    vlm_text_model_clear_slot(model, 0);
    vlm_prefill_logits out = {.last_row = logits};
    double start = now_seconds();
    status = vlm_text_model_token_prefill(model, 0, tokens, length, NULL, &out);
    double elapsed = now_seconds() - start;
    if (elapsed < *out_seconds) *out_seconds = elapsed;
  }
  vlm_text_model_clear_slot(model, 0);
  free(tokens);
  free(logits);
  return status;
}

/* Decode steps of `batch` slots, each slot first prefilled with 16 tokens.
 * Returns the best per-step time over the repetitions. */
static vlm_status time_decode(vlm_text_model *model, int32_t batch, int64_t steps, int repetitions,
                              double *out_step_seconds) {
  int64_t vocab = vlm_text_model_vocab_size(model);
  float *logits = malloc((size_t)batch * (size_t)vocab * sizeof(float));
  int32_t tokens[64], slots[64], prompt[16];
  int64_t positions[64];
  vlm_status status = logits ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int i = 0; i < 16; i++) prompt[i] = (int32_t)((i * 31 + 7) % vocab);
  *out_step_seconds = 1e30;
  for (int r = 0; !status && r < repetitions; r++) {
    for (int32_t b = 0; !status && b < batch; b++) {
      vlm_text_model_clear_slot(model, b);
      vlm_prefill_logits out = {.last_row = logits};
      status = vlm_text_model_token_prefill(model, b, prompt, 16, NULL, &out);
      slots[b] = b;
      tokens[b] = (int32_t)((b * 101 + 3) % vocab);
    }
    double start = now_seconds();
    for (int64_t step = 0; !status && step < steps; step++) {
      for (int32_t b = 0; b < batch; b++) positions[b] = vlm_text_model_slot_length(model, b);
      status = vlm_text_model_decode(model, batch, tokens, positions, NULL, slots, logits);
    }
    double per_step = (now_seconds() - start) / (double)steps;
    if (per_step < *out_step_seconds) *out_step_seconds = per_step;
  }
  for (int32_t b = 0; b < batch; b++) vlm_text_model_clear_slot(model, b);
  free(logits);
  return status;
}

static int64_t peak_rss_bytes(void) {
  struct rusage usage;
  return getrusage(RUSAGE_SELF, &usage) == 0 ? (int64_t)usage.ru_maxrss * 1024 : -1;
}

/* Decode + processor (best of `repetitions`), then the encoder's first
 * call (which may compile or load) and its best of `repetitions`. */
static vlm_status time_image(const vlm_benchmark_options *options, vlm_model *model, vlm_thread_pool *pool,
                             int repetitions, vlm_media_encoder *encoder, vlm_string_builder *json) {
  double preprocess = 1e30, first = 0, encode = 1e30;
  vlm_media_item item = {0};
  vlm_status status = VLM_OK;
  for (int r = 0; !status && r < repetitions; r++) {
    vlm_media_item_release(&item);
    double start = now_seconds();
    vlm_image image;
    status = vlm_image_decode_file(options->image_path, NULL, &image);
    if (!status) {
      status = vlm_model_image_item(model, &image, NULL, &item);
      vlm_image_release(&image);
    }
    double elapsed = now_seconds() - start;
    if (elapsed < preprocess) preprocess = elapsed;
  }
  if (!status && !encoder) {
    vlm_cpu_encoder_options cpu = {.pool = pool};
    status = vlm_media_encoder_open_cpu(model, VLM_MEDIA_IMAGE, &cpu, &encoder);
  }
  float *features = status ? NULL
                           : malloc((size_t)(item.token_count * model->config.text.hidden_size) * sizeof(float));
  if (!status && !features) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int r = 0; !status && r <= repetitions; r++) {
    double start = now_seconds();
    status = encoder->operations->encode(encoder->self, &item, features);
    double elapsed = now_seconds() - start;
    if (r == 0) first = elapsed;
    else if (elapsed < encode) encode = elapsed;
  }
  if (!status) {
    progress(options, "image %lldx%lld -> %lld tokens: preprocess %.1f ms, encode %.1f ms on %s",
             (long long)item.source_width, (long long)item.source_height, (long long)item.token_count,
             preprocess * 1e3, encode * 1e3, encoder->operations->backend);
    vlm_sb_append_literal(json, ",\"image\":{\"path\":");
    vlm_sb_append_json_string(json, options->image_path, strlen(options->image_path));
    vlm_sb_appendf(json, ",\"width\":%lld,\"height\":%lld,\"processor\":\"%s\",\"grid\":[%lld,%lld,%lld],"
                   "\"tokens\":%lld,\"preprocess_seconds\":%.5f,\"encode_backend\":\"%s\","
                   "\"first_encode_seconds\":%.5f,\"encode_seconds\":%.5f}",
                   (long long)item.source_width, (long long)item.source_height, item.processor,
                   (long long)item.grid[0], (long long)item.grid[1], (long long)item.grid[2],
                   (long long)item.token_count, preprocess, encoder->operations->backend, first, encode);
  }
  free(features);
  vlm_media_item_release(&item);
  vlm_media_encoder_release(encoder);
  return status;
}

vlm_status vlm_benchmark_run(const vlm_benchmark_options *options, char **out_json) {
  *out_json = NULL;
  static const int64_t default_lengths[] = {128, 512};
  static const int32_t default_batches[] = {1, 8};
  const int64_t *lengths = options->prefill_length_count ? options->prefill_lengths : default_lengths;
  int length_count = options->prefill_length_count ? options->prefill_length_count : 2;
  const int32_t *batches = options->decode_batch_count ? options->decode_batches : default_batches;
  int batch_count = options->decode_batch_count ? options->decode_batch_count : 2;
  int64_t steps = options->decode_steps > 0 ? options->decode_steps : 32;
  int repetitions = options->repetitions > 0 ? options->repetitions : 3;
  int32_t slots = 1;
  int64_t longest = 0;
  if (!vlm_int64_add(16, steps, &longest))
    return VLM_ERROR(INVALID_ARGUMENT, "bench: %lld decode steps is too many", (long long)steps);
  for (int i = 0; i < batch_count; i++) {
    if (batches[i] < 1 || batches[i] > 64)
      return VLM_ERROR(INVALID_ARGUMENT, "bench: decode batch %d is outside 1..64", batches[i]);
    if (batches[i] > slots) slots = batches[i];
  }
  for (int i = 0; i < length_count; i++) {
    if (lengths[i] < 1) return VLM_ERROR(INVALID_ARGUMENT, "bench: prefill length must be positive");
    if (lengths[i] > longest) longest = lengths[i];
  }
  vlm_thread_pool *pool = NULL;
  VLM_RETURN_IF_ERROR(vlm_thread_pool_create(options->thread_count, NULL, &pool));
  vlm_text_model_options model_options = {.slot_count = slots, .capacity = longest,
                                          .prefill_chunk = longest, .pool = pool};
  vlm_text_model *model = NULL;
  double load_start = now_seconds();
  vlm_model *opened = NULL;
  vlm_status status = vlm_model_open(options->model_dir, NULL, &opened);
  if (!status) status = vlm_text_model_open(opened, &model_options, &model);
  double load_seconds = now_seconds() - load_start;
  if (status) {
    vlm_media_encoder_release(options->image_encoder);
    vlm_model_release(opened);
    vlm_thread_pool_release(pool);
    return status;
  }
  progress(options, "measuring read bandwidth and FMA peak on %d threads", vlm_thread_pool_size(pool));
  double bandwidth = measure_read_bandwidth(pool), fma_peak = measure_fma_peak(pool);
  model_costs costs = measure_costs(model);
  const vlm_text_config *text = &vlm_text_model_config(model)->text;
  vlm_string_builder json = {0};
  vlm_sb_append_literal(&json, "{\"model\":");
  vlm_sb_append_json_string(&json, options->model_dir, strlen(options->model_dir));
  vlm_sb_appendf(&json, ",\"backend\":\"cpu\",\"threads\":%d,\"load_seconds\":%.4f,"
                 "\"weight_bytes\":%llu,\"read_bandwidth_gb_per_s\":%.2f,\"fma_peak_gflops\":%.1f",
                 vlm_thread_pool_size(pool), load_seconds, (unsigned long long)costs.weight_bytes,
                 bandwidth, fma_peak);
  vlm_sb_append_literal(&json, ",\"prefill\":[");
  for (int i = 0; !status && i < length_count; i++) {
    double seconds = 0;
    status = time_prefill(model, lengths[i], repetitions, &seconds);
    if (status) break;
    double t = (double)lengths[i];
    /* Matmul FLOPs (LM head for the last row only) plus attention scores
     * and weighted sums over the causal triangle. */
    double flops = 2 * costs.linear_parameters * t + 2 * costs.head_parameters +
                   (double)text->num_hidden_layers * 2 * 2 * (double)text->num_attention_heads *
                       (double)text->head_dim * t * (t + 1) / 2;
    double gflops = flops / seconds / 1e9;
    progress(options, "prefill %lld tokens: %.1f tokens/s, %.1f GFLOP/s", (long long)lengths[i],
             t / seconds, gflops);
    vlm_sb_appendf(&json, "%s{\"tokens\":%lld,\"seconds\":%.5f,\"tokens_per_second\":%.2f,"
                   "\"gflops\":%.2f,\"fraction_of_fma_peak\":%.3f}",
                   i ? "," : "", (long long)lengths[i], seconds, t / seconds, gflops,
                   fma_peak > 0 ? gflops / fma_peak : 0.0);
  }
  vlm_sb_append_literal(&json, "],\"decode\":[");
  for (int i = 0; !status && i < batch_count; i++) {
    double step_seconds = 0;
    status = time_decode(model, batches[i], steps, repetitions, &step_seconds);
    if (status) break;
    double tokens_per_second = batches[i] / step_seconds;
    /* The bound: every weight byte read once per step from memory. */
    double bound_step_seconds = (double)costs.weight_bytes / (bandwidth * 1e9);
    progress(options, "decode batch %d: %.1f tokens/s (%.2f ms/step, %.0f%% of the bandwidth bound)",
             batches[i], tokens_per_second, step_seconds * 1e3, 100 * bound_step_seconds / step_seconds);
    vlm_sb_appendf(&json, "%s{\"batch\":%d,\"steps\":%lld,\"ms_per_step\":%.3f,"
                   "\"tokens_per_second\":%.2f,\"fraction_of_bandwidth_bound\":%.3f}",
                   i ? "," : "", batches[i], (long long)steps, step_seconds * 1e3, tokens_per_second,
                   bound_step_seconds / step_seconds);
  }
  vlm_sb_append_literal(&json, "]");
  if (!status && options->image_path) status = time_image(options, opened, pool, repetitions, options->image_encoder, &json);
  else vlm_media_encoder_release(options->image_encoder);
  vlm_sb_appendf(&json, ",\"peak_rss_bytes\":%lld}\n", (long long)peak_rss_bytes());
  vlm_text_model_release(model);
  vlm_model_release(opened);
  vlm_thread_pool_release(pool);
  char *text_out = vlm_sb_finish(&json);
  if (status) {
    free(text_out);
    return status;
  }
  if (!text_out) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  *out_json = text_out;
  return VLM_OK;
}
