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

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/cpu_kernels.h"
#include "core/alloc.h"
#include "core/checked.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "backends/cpu/cpu_encoder.h"
#include "backends/cpu/cpu_modules.h"
#include "backends/cpu/text_model.h"
#include "media/media_item.h"
#include "models/decoder.h"
#include "models/model.h"
#include "vlm/audio.h"
#include "vlm/media.h"
#include "io/json.h"
#include "graph/graph.h"
#include "models/family.h"

static double now_seconds(void) {
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return (double)time.tv_sec + (double)time.tv_nsec * 1e-9;
}

/* Every measurement is timed twice: on the wall clock and in this
 * process's CPU time per pool thread. On a machine shared with other jobs
 * the wall clock counts the time the threads waited for a core; CPU time
 * does not (it still counts workers spinning between kernel calls, and
 * cannot see a neighbour's use of caches and memory), so its fractions
 * say what the kernels do when they run. The bounds are timed the same
 * two ways, and every ratio uses one clock on both sides. CPU time is
 * the pool threads' (vlm_thread_pool_cpu_seconds) divided by their count. */
typedef struct bench_time {
  double wall, cpu;
} bench_time;

static int bench_threads = 1;
static vlm_thread_pool *bench_pool;
/* A decoder that does not run on the pool (xla: IREE's own workers) is
 * timed in the whole process's CPU time instead, over the same count. */
static bool bench_process_clock;

static double process_cpu_seconds(void) {
  struct timespec time;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time);
  return (double)time.tv_sec + (double)time.tv_nsec * 1e-9;
}

static bench_time bench_now(void) {
  double cpu = bench_process_clock ? process_cpu_seconds() : vlm_thread_pool_cpu_seconds(bench_pool);
  return (bench_time){now_seconds(), cpu / bench_threads};
}

static bench_time bench_since(bench_time start) {
  bench_time now = bench_now();
  return (bench_time){now.wall - start.wall, now.cpu - start.cpu};
}

static void keep_best(bench_time *best, bench_time t) {
  if (t.wall < best->wall) best->wall = t.wall;
  if (t.cpu < best->cpu) best->cpu = t.cpu;
}

/* The load average, for the report (a shared machine's other jobs). */
static double load_average(void) {
  FILE *file = fopen("/proc/loadavg", "r");
  double load = -1;
  if (file) {
    if (fscanf(file, "%lf", &load) != 1) load = -1;
    fclose(file);
  }
  return load;
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

/* The machine's bounds on the active path, on both clocks. */
typedef struct machine_bounds {
  bench_time read_gb_per_s, fma_gflops;
} machine_bounds;

/* Read bandwidth: best of 5 passes over a buffer far larger than caches.
 * FMA peak: best of 20 short runs (a short window is more often
 * undisturbed, and the kernels are timed as the best of short runs too). */
static machine_bounds measure_bounds(vlm_thread_pool *pool) {
  machine_bounds bounds = {{0, 0}, {0, 0}};
  cpu_kernel_path path = cpu_kernel_path_active();
  const size_t bytes = (size_t)512 << 20;
  /* Pages of the size the packed weights have (vlm_allocate_streamed), so
   * the bound is the read rate decode can reach. */
  void *data = vlm_allocate_streamed(bytes);
  if (data) {
    memset(data, 1, bytes);
    for (int pass = 0; pass < 5; pass++) {
      bench_time start = bench_now();
      double gb_per_s = cpu_measure_read_gb_per_s(pool, path, data, (int64_t)bytes, 1);
      bench_time elapsed = bench_since(start);
      double cpu = gb_per_s > 0 ? gb_per_s * elapsed.wall / elapsed.cpu : 0;
      if (gb_per_s > bounds.read_gb_per_s.wall) bounds.read_gb_per_s.wall = gb_per_s;
      if (cpu > bounds.read_gb_per_s.cpu) bounds.read_gb_per_s.cpu = cpu;
    }
    vlm_release(NULL, data);
  }
  for (int pass = 0; pass < 20; pass++) {
    bench_time start = bench_now();
    double gflops = cpu_measure_fma_peak_gflops(pool, path);
    bench_time elapsed = bench_since(start);
    double cpu = gflops > 0 ? gflops * elapsed.wall / elapsed.cpu : 0;
    if (gflops > bounds.fma_gflops.wall) bounds.fma_gflops.wall = gflops;
    if (cpu > bounds.fma_gflops.cpu) bounds.fma_gflops.cpu = cpu;
  }
  return bounds;
}

/* ---------------------------------------------------------------------- */
/* Model measurements                                                      */
/* ---------------------------------------------------------------------- */

typedef struct model_costs {
  uint64_t weight_bytes;        /* every weight byte of the decoder */
  double linear_parameters;     /* decoder projections, excluding the LM head and the experts */
  double head_parameters;       /* vocab x hidden */
  /* Sparse MoE layers' experts (rank-3 "mlp.experts." tensors): a decode
   * row reads top_k of expert_count of each, so a step of B rows reads at
   * most min(B * top_k, expert_count) / expert_count of their bytes. */
  uint64_t expert_bytes;
  double expert_parameters;
  int64_t expert_count, top_k;
} model_costs;

/* The fraction of the experts a decode step of `rows` rows reads, at most. */
static double expert_fraction(const model_costs *costs, int64_t rows) {
  if (costs->expert_count <= 0) return 1.0;
  double chosen = (double)(rows * costs->top_k);
  return chosen < (double)costs->expert_count ? chosen / (double)costs->expert_count : 1.0;
}

/* Weight bytes a decode step of `rows` rows reads: everything but the
 * experts, and the experts its rows can choose. */
static double step_bytes(const model_costs *costs, int64_t rows) {
  return (double)(costs->weight_bytes - costs->expert_bytes) + (double)costs->expert_bytes * expert_fraction(costs, rows);
}

/* The text decoder's own tensors (a multimodal checkpoint's vision tower
 * is not read by decode). A tied LM head is the embedding table, counted
 * once; an untied model's embedding table is read a row per token, so only
 * its LM head counts. */
static model_costs measure_costs(const vlm_model *opened, const vlm_text_decoder *decoder) {
  model_costs costs = {0};
  bool quantized = vlm_model_is_quantized(opened);
  const vlm_checkpoint *weights = opened->weights;
  const vlm_text_config *text = &opened->config.text;
  for (size_t i = 0; i < vlm_checkpoint_tensor_count(weights); i++) {
    const vlm_tensor_info *info = vlm_checkpoint_tensor_at(weights, i);
    const vlm_expected_tensor *declared = vlm_manifest_find(&opened->manifest, info->name);
    vlm_component component = declared ? declared->component : vlm_component_from_name(info->name);
    if (component != VLM_COMPONENT_TEXT_DECODER && component != VLM_COMPONENT_EMBEDDINGS) continue;
    if (strstr(info->name, "embed_tokens.weight") && !opened->config.tie_word_embeddings &&
        vlm_checkpoint_find(weights, "lm_head.weight"))
      continue;
    /* Quantized: the linear weights are read as packed (below); the rest
     * (norms, biases) as stored; the embedding table gives one row a token. */
    if (!quantized || (info->rank != 2 && component == VLM_COMPONENT_TEXT_DECODER)) costs.weight_bytes += info->byte_size;
    if (component == VLM_COMPONENT_TEXT_DECODER && info->rank == 2)
      costs.linear_parameters += (double)info->shape[0] * (double)info->shape[1];
    if (component == VLM_COMPONENT_TEXT_DECODER && info->rank == 3 && strstr(info->name, ".mlp.experts.")) {
      costs.expert_bytes += info->byte_size;
      costs.expert_parameters += (double)info->shape[0] * (double)info->shape[1] * (double)info->shape[2];
    }
  }
  /* Only the cpu backend runs quantized weights (xla refuses them at open). */
  if (quantized && strcmp(decoder->operations->backend, "cpu") == 0)
    costs.weight_bytes += vlm_text_model_packed_bytes((const vlm_text_model *)decoder->self);
  costs.head_parameters = (double)text->vocab_size * (double)text->hidden_size;
  if (opened->family && opened->family->describe_decoder) {
    vlm_decoder_description description;
    memset(&description, 0, sizeof(description));
    vlm_family_describe_decoder(opened->family, &opened->config, &description);
    costs.expert_count = description.experts.count;
    costs.top_k = description.experts.top_k;
  }
  /* Each token multiplies by top_k of the experts. */
  if (costs.expert_count > 0)
    costs.linear_parameters += costs.expert_parameters * (double)costs.top_k / (double)costs.expert_count;
  return costs;
}

static vlm_status time_prefill(vlm_text_decoder *decoder, int64_t vocab, int64_t length, int repetitions,
                               bench_time *out_seconds) {
  const vlm_text_decoder_operations *ops = decoder->operations;
  int32_t *tokens = malloc((size_t)length * sizeof(int32_t));
  float *logits = malloc((size_t)vocab * sizeof(float));
  vlm_status status = tokens && logits ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; tokens && i < length; i++) tokens[i] = (int32_t)((i * 7919 + 13) % vocab);
  *out_seconds = (bench_time){1e30, 1e30};
  for (int r = 0; !status && r < repetitions; r++) {
    status = ops->clear_slot(decoder->self, 0);
    bench_time start = bench_now();
    if (!status) status = ops->token_prefill(decoder->self, 0, tokens, length, logits);
    keep_best(out_seconds, bench_since(start));
  }
  vlm_status cleared = ops->clear_slot(decoder->self, 0);
  if (!status) status = cleared;
  else vlm_status_free(cleared);
  free(tokens);
  free(logits);
  return status;
}

/* Decode steps of `batch` slots, each slot first prefilled with `context`
 * tokens (what the timed steps attend to besides themselves). Returns the
 * best per-step time over the repetitions. */
static vlm_status time_decode(vlm_text_decoder *decoder, int64_t vocab, int32_t batch, int64_t context,
                              int64_t steps, int repetitions, bench_time *out_step_seconds) {
  const vlm_text_decoder_operations *ops = decoder->operations;
  float *logits = malloc((size_t)batch * (size_t)vocab * sizeof(float));
  int32_t tokens[64], slots[64];
  int32_t *prompt = malloc((size_t)context * sizeof(*prompt));
  int64_t positions[64];
  vlm_status status = logits && prompt ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; prompt && i < context; i++) prompt[i] = (int32_t)((i * 31 + 7) % vocab);
  *out_step_seconds = (bench_time){1e30, 1e30};
  for (int r = 0; !status && r < repetitions; r++) {
    for (int32_t b = 0; !status && b < batch; b++) {
      status = ops->clear_slot(decoder->self, b);
      if (!status) status = ops->token_prefill(decoder->self, b, prompt, context, logits);
      slots[b] = b;
      tokens[b] = (int32_t)((b * 101 + 3) % vocab);
    }
    bench_time start = bench_now();
    for (int64_t step = 0; !status && step < steps; step++) {
      for (int32_t b = 0; b < batch; b++) positions[b] = ops->slot_length(decoder->self, b);
      status = ops->decode(decoder->self, batch, tokens, positions, slots, logits);
    }
    bench_time elapsed = bench_since(start);
    keep_best(out_step_seconds, (bench_time){elapsed.wall / (double)steps, elapsed.cpu / (double)steps});
  }
  for (int32_t b = 0; b < batch; b++) {
    vlm_status cleared = ops->clear_slot(decoder->self, b);
    if (!status) status = cleared;
    else vlm_status_free(cleared);
  }
  free(logits);
  free(prompt);
  return status;
}

static int64_t current_rss_bytes(void) {
  FILE *file = fopen("/proc/self/status", "r");
  char line[256];
  long long kilobytes = -1;
  while (file && fgets(line, sizeof(line), file))
    if (sscanf(line, "VmRSS: %lld kB", &kilobytes) == 1) break;
  if (file) fclose(file);
  return kilobytes < 0 ? -1 : (int64_t)kilobytes * 1024;
}

static int64_t peak_rss_bytes(void) {
  struct rusage usage;
  return getrusage(RUSAGE_SELF, &usage) == 0 ? (int64_t)usage.ru_maxrss * 1024 : -1;
}

/* Decode + processor (best of `repetitions`), then the encoder's first
 * call (which may compile or load) and its best of `repetitions`. */
/* The FLOPs of the family's encoder graph for the item (linear layers and
 * attention, vlm_graph_flops), or 0 when it cannot be built. */
static double encoder_flops(const vlm_model *model, const vlm_media_item *item) {
  const vlm_family *family = model->family;
  const vlm_family_image *image = family && item->kind == VLM_MEDIA_IMAGE ? family->image : NULL;
  const vlm_family_audio *audio = family && item->kind == VLM_MEDIA_AUDIO ? family->audio : NULL;
  if (!image && !audio) return 0;
  int64_t rows = 0;
  vlm_status status = image ? image->encoder_rows(&model->config, item, &rows)
                            : audio->encoder_rows(&model->config, item, &rows);
  vlm_graph graph;
  vlm_graph_init(&graph);
  vlm_encoder_nodes nodes;
  if (!status)
    status = image ? image->build_encoder(&model->config, rows, &graph, &nodes)
                   : audio->build_encoder(&model->config, rows, &graph, &nodes);
  double flops = status ? 0 : vlm_graph_flops(&graph);
  vlm_status_free(status);
  vlm_graph_release(&graph);
  return flops;
}

/* Encodes `item` repetitions + 1 times on *encoder (the cpu backend's,
 * opened here, when NULL): the first call's wall time apart (xla compiles
 * or loads there) and the best of the rest. */
static vlm_status time_encode(vlm_model *model, vlm_thread_pool *pool, const vlm_media_item *item, int repetitions,
                              vlm_media_encoder **encoder, double *out_first, bench_time *out_best) {
  *out_first = 0;
  *out_best = (bench_time){1e30, 1e30};
  if (!*encoder) {
    vlm_cpu_encoder_options cpu = {.pool = pool};
    VLM_RETURN_IF_ERROR(vlm_media_encoder_open_cpu(model, item->kind, &cpu, encoder));
  }
  vlm_media_encoder *chosen = *encoder;
  float *features = malloc((size_t)(item->token_count * chosen->operations->output_width(chosen->self)) *
                           sizeof(float));
  vlm_status status = features ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int r = 0; !status && r <= repetitions; r++) {
    bench_time start = bench_now();
    status = chosen->operations->encode(chosen->self, item, features);
    bench_time elapsed = bench_since(start);
    if (r == 0) *out_first = elapsed.wall;
    else keep_best(out_best, elapsed);
  }
  free(features);
  return status;
}

#define MAX_REPORTS 32

/* The modules a backend compiled or loaded for the decoder and the media
 * encoders, each with its compile and load time ("modules" in the report). */
typedef struct module_reports {
  vlm_module_report items[MAX_REPORTS];
  int count;
} module_reports;

static void collect_reports(module_reports *reports, int (*list)(void *, vlm_module_report *, int), void *self) {
  if (!list) return;
  int count = list(self, reports->items + reports->count, MAX_REPORTS - reports->count);
  reports->count += count < MAX_REPORTS - reports->count ? count : MAX_REPORTS - reports->count;
}

/* The audio file's decode + feature extractor (best of N), then its encode
 * (the first call apart: xla compiles or loads there). */
static vlm_status time_audio(const vlm_benchmark_options *options, vlm_model *model, vlm_thread_pool *pool,
                             int repetitions, vlm_media_encoder *encoder, const machine_bounds *bounds,
                             vlm_string_builder *json, module_reports *reports) {
  double preprocess = 1e30, first = 0;
  bench_time encode = {1e30, 1e30};
  vlm_media_item item = {0};
  int rate = 0;
  vlm_status status = vlm_model_audio_sample_rate(model, &rate);
  for (int r = 0; !status && r < repetitions; r++) {
    vlm_media_item_release(&item);
    double start = now_seconds();
    vlm_audio_decode_options decode = {.sample_rate = rate};
    vlm_audio audio;
    status = vlm_audio_decode_file(options->audio_path, &decode, &audio);
    if (!status) {
      status = vlm_model_audio_item(model, &audio, NULL, &item);
      vlm_audio_release(&audio);
    }
    double elapsed = now_seconds() - start;
    if (elapsed < preprocess) preprocess = elapsed;
  }
  if (!status) status = time_encode(model, pool, &item, repetitions, &encoder, &first, &encode);
  if (!status) {
    double flops = encoder_flops(model, &item);
    double fraction = flops > 0 && bounds->fma_gflops.wall > 0 ? flops / encode.wall / 1e9 / bounds->fma_gflops.wall : 0;
    progress(options, "audio %.2f s -> %lld tokens: decode + features %.1f ms, encode %.1f ms on %s (first %.1f ms, "
             "%.0f%% of the fma peak)",
             item.source_seconds, (long long)item.token_count, preprocess * 1e3, encode.wall * 1e3,
             encoder->operations->backend, first * 1e3, 100 * fraction);
    vlm_sb_append_literal(json, ",\"audio\":{\"path\":");
    vlm_sb_append_json_string(json, options->audio_path, strlen(options->audio_path));
    vlm_sb_appendf(json, ",\"seconds\":%.3f,\"processor\":\"%s\",\"tokens\":%lld,\"preprocess_seconds\":%.5f,"
                   "\"encode_backend\":\"%s\",\"first_encode_seconds\":%.5f,\"encode_seconds\":%.5f,"
                   "\"encode_cpu_seconds\":%.5f,\"encode_gflop\":%.3f,\"fraction_of_fma_peak\":%.3f}",
                   item.source_seconds, item.processor ? item.processor : "?", (long long)item.token_count, preprocess,
                   encoder->operations->backend, first, encode.wall, encode.cpu, flops / 1e9, fraction);
  }
  vlm_media_item_release(&item);
  if (encoder) collect_reports(reports, encoder->operations->module_reports, encoder->self);
  vlm_media_encoder_release(encoder);
  return status;
}

static void append_module_reports(vlm_string_builder *json, const module_reports *reports) {
  vlm_sb_append_literal(json, ",\"modules\":[");
  for (int i = 0; i < reports->count; i++) {
    const vlm_module_report *report = &reports->items[i];
    vlm_sb_appendf(json, "%s{\"name\":", i ? "," : "");
    vlm_sb_append_json_string(json, report->name, strlen(report->name));
    vlm_sb_appendf(json, ",\"cached\":%s,\"compile_seconds\":%.3f,\"load_seconds\":%.3f,\"weight_bytes\":%llu}",
                   report->cached ? "true" : "false", report->compile_seconds, report->load_seconds,
                   (unsigned long long)report->weight_bytes);
  }
  vlm_sb_append_literal(json, "]");
}

static vlm_status time_image(const vlm_benchmark_options *options, vlm_model *model, vlm_thread_pool *pool,
                             int repetitions, vlm_media_encoder *encoder, const machine_bounds *bounds,
                             vlm_string_builder *json, module_reports *reports) {
  double preprocess = 1e30, first = 0;
  bench_time encode = {1e30, 1e30};
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
  if (!status) status = time_encode(model, pool, &item, repetitions, &encoder, &first, &encode);
  if (!status) {
    /* FLOPs of the cpu encoder graph; the fraction is of this machine's
     * cpu peak, whichever backend ran it. */
    double flops = encoder_flops(model, &item);
    double fraction = flops > 0 && bounds->fma_gflops.wall > 0 ? flops / encode.wall / 1e9 / bounds->fma_gflops.wall : 0;
    double fraction_cpu = flops > 0 && bounds->fma_gflops.cpu > 0 ? flops / encode.cpu / 1e9 / bounds->fma_gflops.cpu : 0;
    progress(options, "image %lldx%lld -> %lld tokens: preprocess %.1f ms, encode %.1f ms on %s (%.0f%% of the fma peak, "
             "%.0f%% in cpu time)",
             (long long)item.source_width, (long long)item.source_height, (long long)item.token_count,
             preprocess * 1e3, encode.wall * 1e3, encoder->operations->backend, 100 * fraction, 100 * fraction_cpu);
    vlm_sb_append_literal(json, ",\"image\":{\"path\":");
    vlm_sb_append_json_string(json, options->image_path, strlen(options->image_path));
    vlm_sb_appendf(json, ",\"width\":%lld,\"height\":%lld,\"processor\":\"%s\",\"grid\":[%lld,%lld,%lld],"
                   "\"tokens\":%lld,\"preprocess_seconds\":%.5f,\"encode_backend\":\"%s\","
                   "\"first_encode_seconds\":%.5f,\"encode_seconds\":%.5f,\"encode_cpu_seconds\":%.5f,"
                   "\"encode_gflop\":%.3f,\"fraction_of_fma_peak\":%.3f,\"fraction_of_fma_peak_cpu_time\":%.3f}",
                   (long long)item.source_width, (long long)item.source_height, item.processor,
                   (long long)item.grid[0], (long long)item.grid[1], (long long)item.grid[2],
                   (long long)item.token_count, preprocess, encoder->operations->backend, first, encode.wall,
                   encode.cpu, flops / 1e9, fraction, fraction_cpu);
  }
  vlm_media_item_release(&item);
  if (encoder) collect_reports(reports, encoder->operations->module_reports, encoder->self);
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
  int64_t context = options->decode_context > 0 ? options->decode_context : 16;
  int repetitions = options->repetitions > 0 ? options->repetitions : 3;
  int32_t slots = 1;
  int64_t longest = 0;
  if (context > (int64_t)1 << 24 || !vlm_int64_add(context, steps, &longest))
    return VLM_ERROR(INVALID_ARGUMENT, "bench: %lld decode steps after %lld tokens is too many", (long long)steps,
                     (long long)context);
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
  vlm_text_decoder *model = NULL;
  double load_start = now_seconds();
  vlm_model *opened = NULL;
  vlm_model_options open_options = {.quantize = options->quantize};
  vlm_status status = vlm_model_open(options->model_dir, &open_options, &opened);
  if (!status && options->open_text_decoder)
    status = options->open_text_decoder(options->open_context, opened, slots, longest, longest, &model);
  else if (!status)
    status = vlm_text_decoder_open_cpu(opened, &model_options, &model);
  double load_seconds = now_seconds() - load_start;
  if (status) {
    vlm_media_encoder_release(options->image_encoder);
    vlm_media_encoder_release(options->audio_encoder);
    vlm_model_release(opened);
    vlm_thread_pool_release(pool);
    return status;
  }
  int64_t rss_after_load = current_rss_bytes();
  bench_threads = vlm_thread_pool_size(pool);
  bench_pool = pool;
  double load_before = load_average();
  progress(options, "measuring read bandwidth and FMA peak on %d threads (%s path)", bench_threads,
           cpu_kernel_path_name(cpu_kernel_path_active()));
  machine_bounds bounds = measure_bounds(pool);
  model_costs costs = measure_costs(opened, model);
  module_reports reports = {.count = 0};
  bench_process_clock = strcmp(model->operations->backend, "cpu") != 0;
  collect_reports(&reports, model->operations->module_reports, model->self);
  const vlm_text_config *text = &opened->config.text;
  int64_t vocab = text->vocab_size;
  vlm_string_builder json = {0};
  vlm_sb_append_literal(&json, "{\"model\":");
  vlm_sb_append_json_string(&json, options->model_dir, strlen(options->model_dir));
  char isa[160], brand[64];
  cpu_features_describe(isa, sizeof(isa));
  cpu_features_brand(brand, sizeof(brand));
  /* kernel_path and isa are the cpu backend's (the bounds run on them). */
  vlm_sb_appendf(&json, ",\"backend\":\"%s\",\"kernel_path\":\"%s\",\"isa\":\"%s\",\"cpu\":",
                 model->operations->backend, cpu_kernel_path_name(cpu_kernel_path_active()), isa);
  vlm_sb_append_json_string(&json, brand, strlen(brand));
  vlm_sb_appendf(&json, ",\"quantize\":\"%s\"", options->quantize ? options->quantize
                                                : opened->hub_quantization.method == VLM_QUANT_METHOD_GPTQ ? "gptq"
                                                : opened->hub_quantization.method == VLM_QUANT_METHOD_AWQ  ? "awq"
                                                                                                           : "none");
  vlm_sb_appendf(&json, ",\"threads\":%d,\"load_seconds\":%.4f,\"rss_after_load_bytes\":%lld,"
                 "\"weight_bytes\":%llu,\"read_bandwidth_gb_per_s\":%.2f,\"read_bandwidth_gb_per_s_cpu_time\":%.2f,"
                 "\"fma_peak_gflops\":%.1f,\"fma_peak_gflops_cpu_time\":%.1f",
                 bench_threads, load_seconds, (long long)rss_after_load, (unsigned long long)costs.weight_bytes,
                 bounds.read_gb_per_s.wall, bounds.read_gb_per_s.cpu, bounds.fma_gflops.wall, bounds.fma_gflops.cpu);
  if (costs.expert_count > 0)
    vlm_sb_appendf(&json, ",\"experts\":{\"count\":%lld,\"top_k\":%lld,\"expert_bytes\":%llu,"
                   "\"active_bytes_per_token\":%.0f}",
                   (long long)costs.expert_count, (long long)costs.top_k, (unsigned long long)costs.expert_bytes,
                   step_bytes(&costs, 1));
  vlm_sb_append_literal(&json, ",\"prefill\":[");
  for (int i = 0; !status && i < length_count; i++) {
    bench_time seconds;
    status = time_prefill(model, vocab, lengths[i], repetitions, &seconds);
    if (status) break;
    double t = (double)lengths[i];
    /* Matmul FLOPs (LM head for the last row only) plus attention scores
     * and weighted sums over the causal triangle. */
    double flops = 2 * costs.linear_parameters * t + 2 * costs.head_parameters +
                   (double)text->num_hidden_layers * 2 * 2 * (double)text->num_attention_heads *
                       (double)text->head_dim * t * (t + 1) / 2;
    double gflops = flops / seconds.wall / 1e9, gflops_cpu = flops / seconds.cpu / 1e9;
    double fraction = bounds.fma_gflops.wall > 0 ? gflops / bounds.fma_gflops.wall : 0.0;
    double fraction_cpu = bounds.fma_gflops.cpu > 0 ? gflops_cpu / bounds.fma_gflops.cpu : 0.0;
    progress(options, "prefill %lld tokens: %.1f tokens/s, %.1f GFLOP/s (%.0f%% of the fma peak, %.0f%% in cpu time)",
             (long long)lengths[i], t / seconds.wall, gflops, 100 * fraction, 100 * fraction_cpu);
    vlm_sb_appendf(&json, "%s{\"tokens\":%lld,\"seconds\":%.5f,\"cpu_seconds\":%.5f,\"tokens_per_second\":%.2f,"
                   "\"gflops\":%.2f,\"fraction_of_fma_peak\":%.3f,\"fraction_of_fma_peak_cpu_time\":%.3f}",
                   i ? "," : "", (long long)lengths[i], seconds.wall, seconds.cpu, t / seconds.wall, gflops, fraction,
                   fraction_cpu);
  }
  vlm_sb_append_literal(&json, "],\"decode\":[");
  for (int i = 0; !status && i < batch_count; i++) {
    bench_time step;
    status = time_decode(model, vocab, batches[i], context, steps, repetitions, &step);
    if (status) break;
    double tokens_per_second = batches[i] / step.wall;
    /* The bounds: every weight byte read once per step from memory, and
     * (batched) the multiply-adds at the FMA peak; the roofline is the
     * larger of the two. */
    double flops = 2 * (costs.linear_parameters + costs.head_parameters) * batches[i];
    double bytes = step_bytes(&costs, batches[i]);
    double read_bound = bytes / (bounds.read_gb_per_s.wall * 1e9);
    double read_bound_cpu = bytes / (bounds.read_gb_per_s.cpu * 1e9);
    double fma_bound = flops / (bounds.fma_gflops.wall * 1e9), fma_bound_cpu = flops / (bounds.fma_gflops.cpu * 1e9);
    double roofline = read_bound > fma_bound ? read_bound : fma_bound;
    double roofline_cpu = read_bound_cpu > fma_bound_cpu ? read_bound_cpu : fma_bound_cpu;
    progress(options, "decode batch %d: %.1f tokens/s (%.2f ms/step reading %.1f MB, %.0f%% of the bandwidth bound, "
             "%.0f%% of the roofline, %.0f%% in cpu time)",
             batches[i], tokens_per_second, step.wall * 1e3, bytes / 1e6, 100 * read_bound / step.wall,
             100 * roofline / step.wall,
             100 * roofline_cpu / step.cpu);
    vlm_sb_appendf(&json, "%s{\"batch\":%d,\"context\":%lld,\"steps\":%lld,\"bytes_per_step\":%.0f,"
                   "\"ms_per_step\":%.3f,\"cpu_ms_per_step\":%.3f,"
                   "\"tokens_per_second\":%.2f,\"fraction_of_bandwidth_bound\":%.3f,\"fraction_of_roofline\":%.3f,"
                   "\"fraction_of_roofline_cpu_time\":%.3f}",
                   i ? "," : "", batches[i], (long long)context, (long long)steps, bytes, step.wall * 1e3, step.cpu * 1e3,
                   tokens_per_second,
                   read_bound / step.wall, roofline / step.wall, roofline_cpu / step.cpu);
  }
  vlm_sb_append_literal(&json, "]");
  if (!status && options->image_path)
    status = time_image(options, opened, pool, repetitions, options->image_encoder, &bounds, &json, &reports);
  else vlm_media_encoder_release(options->image_encoder);
  if (!status && options->audio_path)
    status = time_audio(options, opened, pool, repetitions, options->audio_encoder, &bounds, &json, &reports);
  else vlm_media_encoder_release(options->audio_encoder);
  append_module_reports(&json, &reports);
  vlm_sb_appendf(&json, ",\"load_average\":[%.2f,%.2f]", load_before, load_average());
  vlm_sb_appendf(&json, ",\"peak_rss_bytes\":%lld}\n", (long long)peak_rss_bytes());
  vlm_text_decoder_release(model);
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
