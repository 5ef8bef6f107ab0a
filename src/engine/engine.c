/* The serving engine's public side: open/release, audio loading, request
 * preparation and admission on the caller's thread, cancellation, drain
 * and metrics. Images are loaded in engine_images.c, the scheduler thread
 * lives in scheduler.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cpu/cpu_modules.h"
#include "core/checked.h"
#include "core/log.h"
#include "core/status.h"
#include "engine/engine_internal.h"
#include "text/grammar.h"
#include "io/file.h"
#include "media/audio_resample.h"
#include "models/family.h"
#include "vlm/audio.h"
#include "vlm/media.h"

#define DEFAULT_MAX_TOKENS 256
#define DEFAULT_QUEUE_LIMIT 64
#define DEFAULT_MEDIA_BUDGET ((uint64_t)2 << 30)

static const double time_to_first_token_bounds[VLM_ENGINE_HISTOGRAM_BUCKETS] = {
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
static const double inter_token_latency_bounds[VLM_ENGINE_HISTOGRAM_BUCKETS] = {
    0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 1};

double engine_now_seconds(void) {
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return (double)time.tv_sec + (double)time.tv_nsec * 1e-9;
}

void engine_histogram_observe(vlm_engine_histogram *histogram, double value) {
  for (int i = 0; i < VLM_ENGINE_HISTOGRAM_BUCKETS; i++)
    if (value <= histogram->bounds[i]) histogram->bucket_counts[i]++;
  histogram->count++;
  histogram->sum += value;
}

/* generate() stops on generation_config's eos ids, which default to the
 * model config's. */
static void collect_stop_tokens(vlm_engine *engine) {
  const vlm_token_id_list *ids = &engine->model->generation.eos_token_ids;
  if (!ids->count) ids = &engine->config->text.eos_token_ids;
  for (size_t i = 0; i < ids->count && engine->stop_token_count < ENGINE_MAX_STOP_TOKENS; i++)
    engine->stop_tokens[engine->stop_token_count++] = (int32_t)ids->ids[i];
}

static vlm_status open_text_side(vlm_engine *engine, const vlm_engine_options *options) {
  const char *model_dir = engine->model->directory;
  if (!engine->decoder) {
    vlm_text_model_options model_options = {.slot_count = engine->slot_count,
                                            .capacity = options->capacity,
                                            .prefill_chunk = options->prefill_chunk,
                                            .pool = engine->pool,
                                            .allocator = options->allocator};
    VLM_RETURN_IF_ERROR(vlm_text_decoder_open_cpu(engine->model, &model_options, &engine->decoder));
  }
  int32_t decoder_slots = engine->decoder->operations->slot_count(engine->decoder->self);
  if (decoder_slots != engine->slot_count)
    return VLM_ERROR(INVALID_ARGUMENT, "the %s text decoder has %d slot(s) but the engine was asked for %d",
                     engine->decoder->operations->backend, decoder_slots, engine->slot_count);
  engine->decoder->operations->shape(engine->decoder->self, &engine->decoder_shape);
  vlm_tokenizer_options tokenizer_options = {.allocator = options->allocator};
  VLM_RETURN_IF_ERROR(vlm_tokenizer_create(model_dir, &tokenizer_options, &engine->tokenizer));
  vlm_status status = vlm_chat_template_load(model_dir, &engine->chat_template);
  if (vlm_status_code_of(status) == VLM_STATUS_NOT_FOUND) { /* raw prompts only */
    vlm_status_free(status);
    engine->chat_template = NULL;
    status = VLM_OK;
  }
  return status;
}

static void init_metrics(vlm_engine *engine) {
  vlm_engine_metrics *metrics = &engine->metrics;
  memcpy(metrics->time_to_first_token.bounds, time_to_first_token_bounds, sizeof(time_to_first_token_bounds));
  memcpy(metrics->inter_token_latency.bounds, inter_token_latency_bounds, sizeof(inter_token_latency_bounds));
  metrics->slot_count = engine->slot_count;
  metrics->kv_bytes = engine->decoder->operations->kv_bytes(engine->decoder->self);
  metrics->kv_positions_capacity = (int64_t)engine->slot_count * engine_decoder_capacity(engine);
}

/* What the engine holds, at info level: slots, positions, KV bytes, and
 * how the context compares with the model's own length (the default caps
 * it at 4096, which a model trained on 32768 positions would not expect). */
static void log_opened(const vlm_engine *engine, const vlm_engine_options *options) {
  int64_t capacity = engine_decoder_capacity(engine);
  int64_t model_length = engine->config->text.max_position_embeddings;
  VLM_LOG_INFOF("engine: %d slot(s) x %lld positions, KV cache %.1f MiB on %s; prefill chunks of %lld rows "
                "(%lld while others stream), queue %d",
                (int)engine->slot_count, (long long)capacity, (double)engine->metrics.kv_bytes / 1048576.0,
                engine->decoder->operations->backend, (long long)engine->prefill_chunk,
                (long long)engine->decoding_prefill_chunk, (int)engine->queue_limit);
  if (model_length > 0 && capacity < model_length)
    VLM_LOG_INFOF("engine: the context is %lld positions per slot, below the model's %lld "
                  "(max_position_embeddings)%s; vlm serve --ctx (vlm run --context) sets it", (long long)capacity, (long long)model_length,
                  options->capacity > 0 ? "" : ": the default is at most 4096");
  else if (model_length > 0 && capacity > model_length)
    VLM_LOG_INFOF("engine: the context is %lld positions per slot, past the model's %lld "
                  "(max_position_embeddings): positions the model was not trained on", (long long)capacity,
                  (long long)model_length);
}

static vlm_status start_scheduler(vlm_engine *engine) {
  size_t chunk = (size_t)engine->prefill_chunk;
  engine->slots = calloc((size_t)engine->slot_count, sizeof(*engine->slots));
  engine->logits = malloc((size_t)engine->slot_count * (size_t)engine->vocab_size * sizeof(float));
  engine->chunk_features = malloc(chunk * (size_t)engine->decoder_shape.hidden_size * sizeof(float));
  engine->chunk_mask = malloc(chunk * sizeof(int32_t));
  size_t layer_features = (size_t)engine->decoder_shape.layer_feature_count;
  if (layer_features) {
    engine->chunk_layer_features = malloc(layer_features * chunk * (size_t)engine->decoder_shape.hidden_size * sizeof(float));
    if (!engine->chunk_layer_features) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  engine->chunk_tokens = malloc(chunk * sizeof(int32_t));
  engine->chunk_positions = malloc(3 * chunk * sizeof(int64_t));
  engine->chunk_capacity = engine->prefill_chunk;
  if (!engine->slots || !engine->logits || !engine->chunk_features || !engine->chunk_mask || !engine->chunk_tokens ||
      !engine->chunk_positions)
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int32_t i = 0; i < engine->slot_count; i++) engine->slots[i].index = i;
  if (pthread_create(&engine->thread, NULL, engine_scheduler_main, engine) != 0)
    return VLM_ERROR(RESOURCE_EXHAUSTED, "cannot start the scheduler thread");
  engine->thread_started = true;
  return VLM_OK;
}

vlm_status vlm_engine_open(vlm_model *model, const vlm_engine_options *options, vlm_engine **out_engine) {
  *out_engine = NULL;
  vlm_engine_options defaults = {0};
  if (!options) options = &defaults;
  if (!model || options->slot_count < 0 || options->queue_limit < 0) {
    vlm_text_decoder_release(options->text_decoder);
    vlm_media_encoder_release(options->image_encoder);
    vlm_media_encoder_release(options->audio_encoder);
    return VLM_ERROR(INVALID_ARGUMENT, model ? "slot count and queue limit must not be negative" : "no model");
  }
  vlm_engine *engine = calloc(1, sizeof(*engine));
  if (!engine) {
    vlm_text_decoder_release(options->text_decoder);
    vlm_media_encoder_release(options->image_encoder);
    vlm_media_encoder_release(options->audio_encoder);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  engine->decoder = options->text_decoder; /* taken over from here on */
  engine->image_encoder = options->image_encoder;
  engine->audio_encoder = options->audio_encoder;
  engine->model = vlm_model_retain(model);
  engine->config = &model->config;
  engine->allocator = options->allocator;
  engine->slot_count = options->slot_count ? options->slot_count : 1;
  engine->queue_limit = options->queue_limit ? options->queue_limit : DEFAULT_QUEUE_LIMIT;
  engine->media_memory_budget = options->media_memory_budget ? options->media_memory_budget : DEFAULT_MEDIA_BUDGET;
  engine->media_wait_seconds = options->media_wait_seconds > 0 ? options->media_wait_seconds : 10.0;
  engine->max_prompt_bytes = options->max_prompt_bytes;
  pthread_mutex_init(&engine->media_mutex, NULL);
  pthread_cond_init(&engine->media_released, NULL);
  pthread_mutex_init(&engine->vision_mutex, NULL);
  pthread_mutex_init(&engine->grammar_mutex, NULL);
  pthread_mutex_init(&engine->mutex, NULL);
  pthread_cond_init(&engine->wake, NULL);
  pthread_cond_init(&engine->changed, NULL);
  vlm_status status = vlm_thread_pool_create(options->thread_count, options->allocator, &engine->pool);
  if (!status) status = open_text_side(engine, options);
  if (!status) {
    engine->accepts_images = model->family && model->family->image && model->has_processor;
    int audio_rate = 0;
    vlm_status audio = vlm_model_audio_sample_rate(model, &audio_rate);
    engine->accepts_audio = audio == VLM_OK;
    vlm_status_free(audio);
    engine->vocab_size = engine->decoder_shape.vocab_size;
    engine->prefill_chunk = options->prefill_chunk > 0 ? options->prefill_chunk : 512;
    engine->decoding_prefill_chunk = options->decoding_prefill_chunk > 0 ? options->decoding_prefill_chunk : 128;
    if (engine->decoding_prefill_chunk > engine->prefill_chunk) engine->decoding_prefill_chunk = engine->prefill_chunk;
    collect_stop_tokens(engine);
    init_metrics(engine);
    status = engine_caches_open(engine, options);
    if (engine->accepts_images && !engine->image_encoder && strcmp(engine->decoder->operations->backend, "cpu") != 0)
      vlm_log(VLM_LOG_WARN, "%s: the vision encoder and projector run on the cpu backend (host fallback), "
              "not on %s", model->directory, engine->decoder->operations->backend);
    if (engine->accepts_audio && !engine->audio_encoder && strcmp(engine->decoder->operations->backend, "cpu") != 0)
      vlm_log(VLM_LOG_WARN, "%s: the audio encoder and projector run on the cpu backend (host fallback), "
              "not on %s", model->directory, engine->decoder->operations->backend);
    if (!status) status = start_scheduler(engine);
    if (!status) log_opened(engine, options);
  }
  if (status) {
    vlm_engine_release(engine);
    return status;
  }
  *out_engine = engine;
  return VLM_OK;
}

void vlm_engine_release(vlm_engine *engine) {
  if (!engine) return;
  if (engine->thread_started) {
    pthread_mutex_lock(&engine->mutex);
    engine->stopping = true; /* the scheduler cancels everything, then exits */
    pthread_cond_broadcast(&engine->wake);
    pthread_mutex_unlock(&engine->mutex);
    pthread_join(engine->thread, NULL);
  }
  engine_caches_release(engine);
  free(engine->slots);
  free(engine->logits);
  free(engine->chunk_features);
  free(engine->chunk_layer_features);
  free(engine->chunk_mask);
  free(engine->chunk_tokens);
  free(engine->chunk_positions);
  free(engine->chunk_bias);
  vlm_chat_template_release(engine->chat_template);
  vlm_tokenizer_release(engine->tokenizer);
  vlm_text_decoder_release(engine->decoder);
  vlm_media_encoder_release(engine->image_encoder);
  vlm_media_encoder_release(engine->audio_encoder);
  vlm_thread_pool_release(engine->pool);
  vlm_model_release(engine->model);
  pthread_mutex_destroy(&engine->media_mutex);
  pthread_cond_destroy(&engine->media_released);
  pthread_mutex_destroy(&engine->vision_mutex);
  engine_grammar_release(engine);
  pthread_mutex_destroy(&engine->grammar_mutex);
  pthread_mutex_destroy(&engine->mutex);
  pthread_cond_destroy(&engine->wake);
  pthread_cond_destroy(&engine->changed);
  free(engine);
}

void vlm_engine_progress_describe(const vlm_engine_progress *progress, char *buffer, size_t capacity) {
  if (!capacity) return;
  long long total = (long long)progress->prompt_tokens, done = (long long)progress->processed_tokens;
  long long cached = (long long)progress->cached_tokens;
  size_t length = 0;
#define DESCRIBE(...)                                                                \
  do {                                                                               \
    if (length < capacity) {                                                         \
      int written = snprintf(buffer + length, capacity - length, __VA_ARGS__);       \
      if (written > 0) length += (size_t)written;                                    \
    }                                                                                \
  } while (0)
  DESCRIBE("%lld/%lld prompt tokens (%.0f%%)", done, total, total > 0 ? 100.0 * (double)done / (double)total : 100.0);
  if (cached) DESCRIBE(", %lld from the prefix cache", cached);
  if (progress->media_items)
    DESCRIBE(", %d/%d media items encoded", (int)progress->media_items_encoded, (int)progress->media_items);
  DESCRIBE(", %.1f s", progress->seconds);
  double rate = progress->seconds > 0 ? (double)(done - cached) / progress->seconds : 0;
  if (rate > 0) DESCRIBE(", %.0f tokens/s", rate);
  if (rate > 0 && done < total) DESCRIBE(", about %.0f s left", (double)(total - done) / rate);
#undef DESCRIBE
}

void vlm_engine_get_info(const vlm_engine *engine, vlm_engine_info *out_info) {
  memset(out_info, 0, sizeof(*out_info));
  out_info->model_dir = engine->model->directory;
  out_info->model_type = engine->config->model_type;
  out_info->backend = engine->decoder->operations->backend;
  out_info->accepts_images = engine->accepts_images;
  out_info->accepts_audio = engine->accepts_audio;
  out_info->vision_backend = !engine->accepts_images ? NULL
                             : engine->image_encoder ? engine->image_encoder->operations->backend
                                                     : "cpu";
  out_info->has_chat_template = engine->chat_template != NULL;
  out_info->slot_count = engine->slot_count;
  out_info->capacity = engine_decoder_capacity(engine);
  out_info->prefill_chunk = engine->prefill_chunk;
  out_info->decoding_prefill_chunk = engine->decoding_prefill_chunk;
  out_info->queue_limit = engine->queue_limit;
  out_info->vocab_size = engine->vocab_size;
  out_info->prefix_cache_bytes = engine->metrics.prefix_cache_budget_bytes;
  out_info->prefix_cache_block = engine->prefix_cache ? prefix_cache_block_positions(engine->prefix_cache) : 0;
  out_info->encoder_cache_bytes = engine->metrics.encoder_cache_budget_bytes;
  out_info->media_memory_budget = engine->media_memory_budget;
}

vlm_sampling_params vlm_engine_default_sampling(const vlm_engine *engine) {
  vlm_sampling_params params = vlm_sampling_params_greedy();
  const vlm_generation_config *generation = &engine->model->generation;
  if (generation->do_sample) {
    params.temperature = (float)generation->temperature;
    params.top_k = (int32_t)generation->top_k;
    params.top_p = (float)generation->top_p;
    params.min_p = (float)generation->min_p;
  }
  params.repetition_penalty = (float)generation->repetition_penalty;
  return params;
}

int64_t vlm_engine_default_max_tokens(const vlm_engine *engine) {
  return engine->model->generation.max_new_tokens ? engine->model->generation.max_new_tokens : DEFAULT_MAX_TOKENS;
}

/* ---------------------------------------------------------------------- */
/* Audio (callers' threads)                                               */
/* ---------------------------------------------------------------------- */

/* Why the model takes no audio (the family has no audio path, or no
 * feature extractor vlm can run), naming the clip count. */
static vlm_status refuse_audio(const vlm_engine *engine, int clip_count) {
  int rate = 0;
  vlm_status why = vlm_model_audio_sample_rate(engine->model, &rate);
  if (!why) return VLM_ERROR(INTERNAL, "audio refused although the model takes it");
  return vlm_status_annotate(why, "the request has %d audio clip(s)", clip_count);
}

/* The audio encoder, built with the first clip under the encoders' lock. */
static vlm_status ensure_audio(vlm_engine *engine, int clip_count) {
  if (!engine->accepts_audio) return refuse_audio(engine, clip_count);
  pthread_mutex_lock(&engine->vision_mutex);
  vlm_status status = VLM_OK;
  if (!engine->audio_encoder) {
    vlm_cpu_encoder_options options = {.pool = engine->pool};
    status = vlm_media_encoder_open_cpu(engine->model, VLM_MEDIA_AUDIO, &options, &engine->audio_encoder);
  }
  pthread_mutex_unlock(&engine->vision_mutex);
  return status;
}

/* The clip's features from its decoded samples; `start` is when loading began. */
static vlm_status finish_loaded_audio(vlm_engine *engine, vlm_audio *audio, double start,
                                      vlm_loaded_audio *out_audio) {
  vlm_media_item *item = calloc(1, sizeof(*item));
  vlm_status status = item ? vlm_model_audio_item(engine->model, audio, engine->allocator, item)
                           : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (status) {
    free(item);
    return status;
  }
  item->preprocess_seconds = engine_now_seconds() - start;
  *out_audio = (vlm_loaded_audio){item, item->token_count, item->preprocess_seconds};
  return VLM_OK;
}

/* The decode options for the model's rate and the caller's limits; with
 * max_tokens > 0 (the capacity a clip may take, known after admission)
 * the duration limit shrinks to the longest clip that takes no more, so a
 * clip whose header understates its length (or states none) stops
 * decoding there. *out_bounded: that bound is below the caller's. */
static vlm_status audio_options(vlm_engine *engine, const vlm_audio_limits *limits, int64_t max_tokens,
                                const void *cancel, vlm_audio_decode_options *out, bool *out_bounded) {
  *out = (vlm_audio_decode_options){.cancel = cancel, .allocator = engine->allocator};
  *out_bounded = false;
  if (limits) out->limits = *limits;
  VLM_RETURN_IF_ERROR(vlm_model_audio_sample_rate(engine->model, &out->sample_rate));
  if (max_tokens <= 0) return VLM_OK;
  int64_t samples = 0;
  VLM_RETURN_IF_ERROR(vlm_model_audio_max_samples(engine->model, max_tokens, &samples));
  /* One sample over: frames up to floor(seconds x file rate) resample to
   * at most `samples`; the exact count is checked again at submit. */
  double seconds = ((double)samples + 1.0) / out->sample_rate;
  double current = out->limits.max_seconds > 0 ? out->limits.max_seconds : VLM_AUDIO_DEFAULT_MAX_SECONDS;
  if (seconds < current) {
    out->limits.max_seconds = seconds;
    *out_bounded = true;
  }
  return VLM_OK;
}

static vlm_status over_capacity(vlm_status status, const char *name, int64_t max_tokens) {
  if (vlm_status_code_of(status) != VLM_STATUS_OUT_OF_RANGE) return status;
  vlm_status refusal = VLM_ERROR(OUT_OF_RANGE,
                                 "%s: context length exceeded: the clip is longer than the %lld audio tokens the "
                                 "capacity leaves it (%s)", name, (long long)max_tokens, vlm_status_message(status));
  vlm_status_free(status);
  return refusal;
}

/* The reservation for a clip: the decode of the length its header states
 * and as many bytes again for the features and the extractor's buffers
 * (Phi-4's 80 mels per 160-sample hop are half of it). A header that
 * understates the length decodes past it only up to the capacity left
 * (audio_options). */
static uint64_t audio_reserve_bytes(const vlm_audio_header *header) {
  uint64_t needed = 0;
  if (__builtin_add_overflow(header->stated_decode_bytes, (uint64_t)header->stated_samples * sizeof(float), &needed))
    needed = UINT64_MAX;
  return needed;
}

/* The header first (limits, and what the decode will hold), that much
 * from the media memory budget, then the decode and the features; once
 * made, the reservation shrinks to the features, which stay charged until
 * the request releases the item. */
static vlm_status load_audio(vlm_engine *engine, const uint8_t *data, size_t size, const char *name,
                             const vlm_audio_limits *limits, int64_t max_tokens, const void *cancel,
                             vlm_media_reservation *from, double start, vlm_loaded_audio *out_audio) {
  if (!engine->accepts_audio) {
    int rate = 0;
    return vlm_status_annotate(vlm_model_audio_sample_rate(engine->model, &rate), "%s", name);
  }
  vlm_audio_decode_options options;
  bool bounded = false;
  VLM_RETURN_IF_ERROR(audio_options(engine, limits, max_tokens, cancel, &options, &bounded));
  vlm_audio_header header;
  vlm_status status = vlm_audio_read_header(data, size, name, &options, &header);
  if (status) return bounded ? over_capacity(status, name, max_tokens) : status;
  uint64_t reserved = 0;
  VLM_RETURN_IF_ERROR(engine_take_media_memory(engine, from, audio_reserve_bytes(&header), cancel, name, &reserved));
  vlm_audio audio;
  status = vlm_audio_decode_memory(data, size, name, &options, &audio);
  if (status && bounded) status = over_capacity(status, name, max_tokens);
  if (!status) {
    status = vlm_status_annotate(finish_loaded_audio(engine, &audio, start, out_audio), "%s", name);
    vlm_audio_release(&audio);
  }
  if (!status) engine_charge_media_item(engine, out_audio->item, reserved);
  else engine_release_media_memory(engine, reserved);
  return status;
}

vlm_status vlm_engine_read_audio_header(vlm_engine *engine, const uint8_t *data, size_t size, const char *name,
                                        const vlm_audio_limits *limits, vlm_engine_audio_header *out_header) {
  memset(out_header, 0, sizeof(*out_header));
  if (!name) name = "audio";
  vlm_audio_decode_options options;
  bool bounded = false;
  VLM_RETURN_IF_ERROR(vlm_status_annotate(audio_options(engine, limits, 0, NULL, &options, &bounded), "%s", name));
  vlm_audio_header header;
  VLM_RETURN_IF_ERROR(vlm_audio_read_header(data, size, name, &options, &header));
  out_header->sample_rate = header.sample_rate;
  out_header->channels = header.channels;
  out_header->decode_bytes = header.decode_bytes;
  out_header->reserve_bytes = audio_reserve_bytes(&header);
  out_header->seconds = header.frames >= 0 ? (double)header.frames / header.sample_rate : -1;
  out_header->tokens = 1; /* a length the header does not state: decoding is bounded instead */
  if (header.frames >= 0) {
    int64_t samples = header.sample_rate == options.sample_rate
                          ? header.frames
                          : vlm_audio_resampled_length(header.frames, header.sample_rate, options.sample_rate);
    int64_t tokens = 0;
    VLM_RETURN_IF_ERROR(vlm_status_annotate(vlm_model_audio_tokens(engine->model, samples, &tokens), "%s", name));
    out_header->tokens = tokens > 0 ? tokens : 1;
    out_header->tokens_stated = true;
  }
  return VLM_OK;
}

vlm_status vlm_engine_load_audio_file(vlm_engine *engine, const char *path, const vlm_audio_limits *limits,
                                      const void *cancel, vlm_loaded_audio *out_audio) {
  memset(out_audio, 0, sizeof(*out_audio));
  double start = engine_now_seconds();
  if (!engine->accepts_audio) {
    int rate = 0;
    return vlm_status_annotate(vlm_model_audio_sample_rate(engine->model, &rate), "%s", path);
  }
  size_t limit = limits && limits->max_encoded_bytes ? limits->max_encoded_bytes : VLM_AUDIO_DEFAULT_MAX_ENCODED_BYTES;
  const char *slash = strrchr(path, '/');
  char *data = NULL;
  size_t size = 0;
  /* vlm_file_read_all refuses an oversized file from its size, unread. */
  VLM_RETURN_IF_ERROR(vlm_file_read_all(path, limit, &data, &size));
  vlm_status status = load_audio(engine, (const uint8_t *)data, size, slash ? slash + 1 : path, limits, 0, cancel,
                                 NULL, start, out_audio);
  free(data);
  return status;
}

vlm_status vlm_engine_load_audio_memory(vlm_engine *engine, const uint8_t *data, size_t size, const char *name,
                                        const vlm_audio_limits *limits, const void *cancel,
                                        vlm_loaded_audio *out_audio) {
  memset(out_audio, 0, sizeof(*out_audio));
  return load_audio(engine, data, size, name ? name : "audio", limits, 0, cancel, NULL, engine_now_seconds(),
                    out_audio);
}

vlm_status vlm_engine_load_audio_memory_within(vlm_engine *engine, const uint8_t *data, size_t size,
                                               const char *name, const vlm_audio_limits *limits, int64_t max_tokens,
                                               const void *cancel, vlm_media_reservation *from,
                                               vlm_loaded_audio *out_audio) {
  memset(out_audio, 0, sizeof(*out_audio));
  if (max_tokens <= 0) max_tokens = 1;
  return load_audio(engine, data, size, name ? name : "audio", limits, max_tokens, cancel, from, engine_now_seconds(),
                    out_audio);
}

void vlm_loaded_audio_release(vlm_loaded_audio *audio) { vlm_loaded_image_release(audio); }

/* ---------------------------------------------------------------------- */
/* Requests                                                                */
/* ---------------------------------------------------------------------- */

void engine_request_free(vlm_engine_request *request) {
  for (int i = 0; i < request->item_count; i++) vlm_media_item_release(&request->items[i]);
  free(request->items);
  for (size_t i = 0; i < request->stop_count; i++) free(request->stop[i]);
  free(request->stop);
  vlm_grammar_release(request->grammar);
  free(request->stop_token_ids);
  free(request->logit_bias);
  engine_prompt_release(&request->prompt);
  pthread_mutex_destroy(&request->callback_mutex);
  free(request);
}

void engine_request_deliver(vlm_engine_request *request, const vlm_engine_event *event) {
  pthread_mutex_lock(&request->callback_mutex);
  if (!request->caller_released) request->callback(request->context, event);
  pthread_mutex_unlock(&request->callback_mutex);
}

void engine_request_engine_done(vlm_engine_request *request) {
  pthread_mutex_lock(&request->callback_mutex);
  request->engine_done = true;
  bool free_now = request->caller_released;
  pthread_mutex_unlock(&request->callback_mutex);
  if (free_now) engine_request_free(request);
}

void vlm_engine_cancel(vlm_engine_request *request) {
  if (!request) return;
  atomic_store(&request->cancel_requested, true);
  vlm_engine *engine = request->engine;
  pthread_mutex_lock(&engine->mutex);
  pthread_cond_broadcast(&engine->wake);
  pthread_mutex_unlock(&engine->mutex);
}

vlm_status vlm_engine_request_prompt_tail(const vlm_engine_request *request, int count, char **out_text) {
  *out_text = NULL;
  const engine_prompt *prompt = &request->prompt;
  int64_t first = count > 0 && prompt->count > count ? prompt->count - count : 0;
  size_t length = 0;
  return vlm_tokenizer_decode(request->engine->tokenizer, prompt->ids + first, (size_t)(prompt->count - first), false,
                              out_text, &length);
}

void vlm_engine_request_release(vlm_engine_request *request) {
  if (!request) return;
  vlm_engine_cancel(request);
  pthread_mutex_lock(&request->callback_mutex); /* waits for a callback in progress */
  request->caller_released = true;
  bool free_now = request->engine_done;
  pthread_mutex_unlock(&request->callback_mutex);
  if (free_now) engine_request_free(request);
}

/* vLLM's output controls: bounded, ids inside the vocabulary. */
static vlm_status check_controls(const vlm_engine *engine, const vlm_engine_request_options *options) {
  if (options->min_tokens < 0) return VLM_ERROR(INVALID_ARGUMENT, "min_tokens must not be negative");
  if (options->continue_final_message && !options->no_generation_prompt)
    return VLM_ERROR(INVALID_ARGUMENT, "continue_final_message and add_generation_prompt cannot both be true");
  if ((options->continue_final_message || options->no_generation_prompt || options->chat_template_kwargs_json) &&
      !options->messages_json)
    return VLM_ERROR(INVALID_ARGUMENT, "chat template controls apply to chat messages only");
  if (options->stop_token_id_count > ENGINE_MAX_STOP_TOKEN_IDS || (options->stop_token_id_count && !options->stop_token_ids))
    return VLM_ERROR(INVALID_ARGUMENT, "the request has %zu stop token ids; at most %d are accepted",
                     options->stop_token_id_count, ENGINE_MAX_STOP_TOKEN_IDS);
  for (size_t i = 0; i < options->stop_token_id_count; i++)
    if (options->stop_token_ids[i] < 0 || options->stop_token_ids[i] >= engine->vocab_size)
      return VLM_ERROR(INVALID_ARGUMENT, "stop token id %d is outside the vocabulary (size %lld)",
                       options->stop_token_ids[i], (long long)engine->vocab_size);
  if (options->logit_bias_count > ENGINE_MAX_LOGIT_BIAS || (options->logit_bias_count && !options->logit_bias))
    return VLM_ERROR(INVALID_ARGUMENT, "the request has %zu logit_bias entries; at most %d are accepted",
                     options->logit_bias_count, ENGINE_MAX_LOGIT_BIAS);
  for (size_t i = 0; i < options->logit_bias_count; i++) {
    const vlm_logit_bias *entry = &options->logit_bias[i];
    if (entry->token < 0 || entry->token >= engine->vocab_size)
      return VLM_ERROR(INVALID_ARGUMENT, "logit_bias token id %d is outside the vocabulary (size %lld)",
                       entry->token, (long long)engine->vocab_size);
    if (!(fabsf(entry->bias) <= 100.0f))
      return VLM_ERROR(INVALID_ARGUMENT, "logit_bias for token %d must be between -100 and 100, got %g",
                       entry->token, entry->bias);
  }
  return vlm_sampling_params_validate(&options->sampling);
}

static vlm_status copy_controls(vlm_engine_request *request, const vlm_engine_request_options *options) {
  request->min_tokens = options->min_tokens;
  request->ignore_eos = options->ignore_eos;
  request->keep_special_tokens = options->keep_special_tokens;
  if (options->stop_token_id_count) {
    request->stop_token_ids = malloc(options->stop_token_id_count * sizeof(int32_t));
    if (!request->stop_token_ids) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    memcpy(request->stop_token_ids, options->stop_token_ids, options->stop_token_id_count * sizeof(int32_t));
    request->stop_token_id_count = options->stop_token_id_count;
  }
  if (options->logit_bias_count) {
    request->logit_bias = malloc(options->logit_bias_count * sizeof(vlm_logit_bias));
    if (!request->logit_bias) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    memcpy(request->logit_bias, options->logit_bias, options->logit_bias_count * sizeof(vlm_logit_bias));
    request->logit_bias_count = options->logit_bias_count;
  }
  return VLM_OK;
}

/* n: its choices share one prefill by a KV copy between slots, so they
 * need the backend's read_kv/write_kv and n slots at once. */
static vlm_status check_choices(const vlm_engine *engine, int32_t n) {
  if (n < 0) return VLM_ERROR(INVALID_ARGUMENT, "n must be at least 1");
  if (n <= 1) return VLM_OK;
  if (n > VLM_ENGINE_MAX_CHOICES)
    return VLM_ERROR(INVALID_ARGUMENT, "n is %d; at most %d choices are accepted per request", n,
                     VLM_ENGINE_MAX_CHOICES);
  if (n > engine->slot_count)
    return VLM_ERROR(INVALID_ARGUMENT, "n is %d but the server runs %d slot(s) (--parallel); each choice needs a slot",
                     n, engine->slot_count);
  const vlm_text_decoder_operations *decoder = engine->decoder->operations;
  if (!decoder->kv_position_bytes || !decoder->read_kv || !decoder->write_kv)
    return VLM_ERROR(UNIMPLEMENTED, "n > 1 is not supported on the %s text decoder: it cannot copy a prompt's KV "
                     "between slots, which n > 1 needs to prefill the prompt once", decoder->backend);
  return VLM_OK;
}

/* media_given: the request's images and clips are loaded (submit), or
 * only counted (admission before decoding). */
static vlm_status check_options(const vlm_engine *engine, const vlm_engine_request_options *options,
                                bool media_given) {
  if ((options->messages_json != NULL) + (options->raw_prompt != NULL) + (options->prompt_ids != NULL) != 1)
    return VLM_ERROR(INVALID_ARGUMENT, "a request needs exactly one of chat messages, a raw prompt or prompt ids");
  for (int64_t i = 0; options->prompt_ids && i < options->prompt_id_count; i++)
    if (options->prompt_ids[i] < 0 || options->prompt_ids[i] >= engine->vocab_size)
      return VLM_ERROR(INVALID_ARGUMENT, "prompt token id %d (at %lld) is outside the vocabulary (size %lld)",
                       options->prompt_ids[i], (long long)i, (long long)engine->vocab_size);
  if (options->prompt_ids && (options->image_count > 0 || options->audio_count > 0))
    return VLM_ERROR(INVALID_ARGUMENT, "a prompt of token ids takes no images or audio");
  if (options->image_count < 0 || (options->image_count > 0 && !options->images && !media_given))
    return VLM_ERROR(INVALID_ARGUMENT, "the request names %d image(s) but gives none", options->image_count);
  if (options->image_count > 0 && !engine->accepts_images) return engine_refuse_images(engine, options->image_count);
  if (options->audio_count < 0 || (options->audio_count > 0 && !options->audio && !media_given))
    return VLM_ERROR(INVALID_ARGUMENT, "the request names %d audio clip(s) but gives none", options->audio_count);
  if (options->audio_count > 0 && !engine->accepts_audio) return refuse_audio(engine, options->audio_count);
  if (options->max_tokens < 0) return VLM_ERROR(INVALID_ARGUMENT, "max_tokens must not be negative");
  if (options->stop_count && !options->stop)
    return VLM_ERROR(INVALID_ARGUMENT, "the request names stop strings but gives none");
  /* The stop matcher runs on the scheduler thread for every token, in time
   * that grows with the square of a stop string's length: both are bounded
   * so one request cannot stall every stream. */
  if (options->stop_count > ENGINE_MAX_STOP_STRINGS)
    return VLM_ERROR(INVALID_ARGUMENT, "the request has %zu stop strings; at most %d are accepted",
                     options->stop_count, ENGINE_MAX_STOP_STRINGS);
  for (size_t i = 0; i < options->stop_count; i++) {
    if (!options->stop[i] || !options->stop[i][0])
      return VLM_ERROR(INVALID_ARGUMENT, "stop string %zu is empty", i);
    size_t length = strnlen(options->stop[i], ENGINE_MAX_STOP_BYTES + 1);
    if (length > ENGINE_MAX_STOP_BYTES)
      return VLM_ERROR(INVALID_ARGUMENT, "stop string %zu is over %d bytes", i, ENGINE_MAX_STOP_BYTES);
  }
  VLM_RETURN_IF_ERROR(check_choices(engine, options->n));
  return check_controls(engine, options);
}

/* What the request's media take of the prompt: their placeholders in the
 * text and the positions they expand to. Loaded items give their own
 * counts; before decoding, the images' counts come from their headers
 * (image_tokens) and each clip counts as its placeholder alone (a lower
 * bound: the exact count is checked again at submit). */
typedef struct media_positions {
  int placeholders;
  int64_t positions;
} media_positions;

static vlm_status count_media(const vlm_engine_request_options *options, const vlm_engine_request *request,
                              const int64_t *image_tokens, media_positions *out) {
  memset(out, 0, sizeof(*out));
  int items = request ? request->item_count : options->image_count + options->audio_count;
  for (int i = 0; i < items; i++) {
    int64_t tokens = request ? request->items[i].token_count
                     : i < options->image_count ? image_tokens[i]
                     : options->audio_tokens ? options->audio_tokens[i - options->image_count] : 1;
    if (tokens <= 0) return VLM_ERROR(INVALID_ARGUMENT, "media item %d takes %lld tokens", i, (long long)tokens);
    if (!vlm_int64_add(out->positions, tokens, &out->positions))
      return VLM_ERROR(OUT_OF_RANGE, "the media items' token counts overflow");
  }
  out->placeholders = items;
  return VLM_OK;
}

/* The byte limit on the rendered (or raw) prompt, from what the capacity
 * leaves it. Refuses at once when max_tokens and the media alone do not
 * fit. With a tokenizer bound B (vlm_tokenizer_max_bytes_per_token) a
 * prompt of more than room x B bytes has more than room tokens: it cannot
 * fit, whatever the text. */
typedef struct prompt_budget {
  size_t max_bytes;
  bool from_capacity;       /* sound: the capacity's own limit, not a policy */
  int64_t text_tokens;      /* room for the text, placeholders included */
  size_t bytes_per_token;
} prompt_budget;

static vlm_status plan_prompt_budget(const vlm_engine *engine, int64_t max_tokens, const media_positions *media,
                                     prompt_budget *out) {
  memset(out, 0, sizeof(*out));
  int64_t capacity = engine_decoder_capacity(engine), taken = 0;
  if (!vlm_int64_add(max_tokens, media->positions, &taken) || taken > capacity)
    return VLM_ERROR(OUT_OF_RANGE,
                     "context length exceeded: max_tokens is %lld and the %d media item(s) take %lld positions, "
                     "over the capacity of %lld before the prompt's text",
                     (long long)max_tokens, media->placeholders, (long long)media->positions, (long long)capacity);
  /* Each item's placeholder is one token of the text. */
  out->text_tokens = capacity - taken + media->placeholders;
  out->bytes_per_token = vlm_tokenizer_max_bytes_per_token(engine->tokenizer);
  size_t limit = 0;
  if (out->bytes_per_token) {
    if (!vlm_size_multiply((size_t)out->text_tokens, out->bytes_per_token, &limit)) limit = SIZE_MAX;
    out->from_capacity = true;
  } else if (!vlm_size_multiply((size_t)capacity, 64, &limit)) {
    limit = SIZE_MAX;
  }
  if (engine->max_prompt_bytes && engine->max_prompt_bytes < limit) {
    limit = engine->max_prompt_bytes;
    out->from_capacity = false;
  }
  out->max_bytes = limit;
  return VLM_OK;
}

static vlm_status prompt_too_long(const vlm_engine *engine, const prompt_budget *budget) {
  if (budget->from_capacity)
    return VLM_ERROR(OUT_OF_RANGE,
                     "context length exceeded: the prompt is over %zu bytes, more than the %lld tokens the "
                     "capacity of %lld leaves it can hold (this tokenizer takes at most %zu bytes per token)",
                     budget->max_bytes, (long long)budget->text_tokens,
                     (long long)engine_decoder_capacity(engine), budget->bytes_per_token);
  return VLM_ERROR(OUT_OF_RANGE, "the prompt is over the limit of %zu bytes", budget->max_bytes);
}

/* Chat template (or the raw prompt), placeholders expanded, tokenized,
 * positions: engine/prompt.c. The prompt's bytes are bounded first, and
 * rendering stops as soon as the rendered prompt passes the bound, so a
 * prompt that cannot fit is never tokenized. Without `request` (admission
 * before decoding) nothing is expanded: *out_prompt holds the text's ids,
 * each placeholder one of them. */
static vlm_status build_prompt(vlm_engine *engine, const vlm_engine_request_options *options, int64_t max_tokens,
                               const vlm_engine_request *request, const media_positions *media,
                               engine_prompt *out_prompt) {
  prompt_budget budget;
  VLM_RETURN_IF_ERROR(plan_prompt_budget(engine, max_tokens, media, &budget));
  if (options->raw_prompt && strnlen(options->raw_prompt, budget.max_bytes + 1) > budget.max_bytes)
    return prompt_too_long(engine, &budget);
  bool too_long = false, too_many = false;
  /* Tokenizing stops once the ids cannot fit: the text's room (each
   * placeholder one id) before decoding, every position but max_tokens'
   * once the placeholders are expanded. */
  int64_t id_limit = request ? engine_decoder_capacity(engine) - max_tokens : budget.text_tokens;
  engine_prompt_source source = {.messages_json = options->messages_json, .raw_prompt = options->raw_prompt,
                                 .items = request ? request->items : NULL,
                                 .item_count = request ? request->item_count : 0,
                                 .max_prompt_bytes = budget.max_bytes, .prompt_limit_reached = &too_long,
                                 .max_ids = id_limit > 0 ? (size_t)id_limit : 1, .token_limit_reached = &too_many,
                                 .chat_template_kwargs_json = options->chat_template_kwargs_json,
                                 .no_generation_prompt = options->no_generation_prompt,
                                 .continue_final_message = options->continue_final_message,
                                 .prompt_ids = options->prompt_ids, .prompt_id_count = options->prompt_id_count,
                                 .ids_only = request == NULL};
  vlm_status status =
      engine_prompt_build(engine->model, engine->tokenizer, engine->chat_template, &source, out_prompt);
  if (status && too_long) {
    vlm_status_free(status);
    return prompt_too_long(engine, &budget);
  }
  if (status && too_many) {
    vlm_status_free(status);
    return VLM_ERROR(OUT_OF_RANGE,
                     "context length exceeded: the prompt has more than the %lld tokens the capacity of %lld "
                     "leaves it (max_tokens is %lld, the %d media item(s) take %lld positions); tokenizing "
                     "stopped there", (long long)id_limit, (long long)engine_decoder_capacity(engine),
                     (long long)max_tokens, media->placeholders, (long long)media->positions);
  }
  return status;
}

static vlm_status tokenize_prompt(vlm_engine *engine, const vlm_engine_request_options *options,
                                  vlm_engine_request *request) {
  media_positions media;
  VLM_RETURN_IF_ERROR(count_media(options, request, NULL, &media));
  if (options->image_count > 0) VLM_RETURN_IF_ERROR(engine_ensure_vision(engine, options->image_count));
  if (options->audio_count > 0) VLM_RETURN_IF_ERROR(ensure_audio(engine, options->audio_count));
  VLM_RETURN_IF_ERROR(build_prompt(engine, options, request->max_tokens, request, &media, &request->prompt));
  /* The scheduler encodes items in prompt order (images and clips may
   * interleave there); each kind's keep their own order. */
  vlm_media_item *ordered = request->item_count ? malloc((size_t)request->item_count * sizeof(*ordered)) : NULL;
  if (request->item_count && !ordered) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int i = 0; i < request->item_count; i++) ordered[i] = request->items[request->prompt.item_order[i]];
  if (ordered) memcpy(request->items, ordered, (size_t)request->item_count * sizeof(*ordered));
  free(ordered);
  return VLM_OK;
}

/* prompt + max_tokens must fit the slot. max_tokens is the caller's number
 * (up to INT64_MAX from a request body), so the sum is checked: a wrapped
 * sum would admit the request, and the slot's completion buffer is sized
 * from max_tokens. */
static vlm_status check_capacity(const vlm_engine *engine, int64_t prompt, int64_t max_tokens) {
  int64_t capacity = engine_decoder_capacity(engine);
  int64_t needed = 0;
  if (vlm_int64_add(prompt, max_tokens, &needed) && needed <= capacity) return VLM_OK;
  int64_t room = capacity - prompt;
  return VLM_ERROR(OUT_OF_RANGE,
                   "context length exceeded: the prompt has %lld tokens and max_tokens is %lld, over "
                   "the capacity of %lld (%lld tokens left for the completion)",
                   (long long)prompt, (long long)max_tokens, (long long)capacity,
                   (long long)(room > 0 ? room : 0));
}

/* Rows that attend to each other both ways must be prefilled in one step:
 * a backend that runs at most prefill_rows_limit rows at once (a compiled
 * prefill chunk) cannot take a longer block. */
static vlm_status check_attention_blocks(const vlm_engine *engine, const vlm_engine_request *request) {
  const engine_prompt *prompt = &request->prompt;
  int64_t limit = engine->decoder_shape.prefill_rows_limit;
  if (!prompt->attention_reach || limit <= 0) return VLM_OK;
  for (int64_t first = 0, end; first < prompt->count; first = end) {
    end = vlm_prefill_chunk_end(prompt->attention_reach, prompt->count, first, limit);
    if (end - first > limit)
      return VLM_ERROR(INVALID_ARGUMENT,
                       "the prompt has %lld rows (an image's tokens, from row %lld) that attend to each other and "
                       "must be prefilled in one step, over the %s decoder's prefill chunk of %lld rows; use a "
                       "prefill chunk of at least %lld",
                       (long long)(end - first), (long long)first, engine->decoder->operations->backend,
                       (long long)limit, (long long)(end - first));
  }
  return VLM_OK;
}

static vlm_status copy_stop_strings(vlm_engine_request *request, const vlm_engine_request_options *options) {
  if (!options->stop_count) return VLM_OK;
  request->stop = calloc(options->stop_count, sizeof(char *));
  if (!request->stop) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  request->stop_count = options->stop_count;
  for (size_t i = 0; i < options->stop_count; i++)
    if (!(request->stop[i] = strdup(options->stop[i]))) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  return VLM_OK;
}

/* Takes the caller's images and clips whatever happens next (their items
 * move into the request, images first; the caller's entries are zeroed). */
static vlm_engine_request *request_create(vlm_engine *engine, const vlm_engine_request_options *options) {
  vlm_engine_request *request = calloc(1, sizeof(*request));
  int images = options->image_count > 0 && options->images ? options->image_count : 0;
  int clips = options->audio_count > 0 && options->audio ? options->audio_count : 0;
  int count = images + clips;
  vlm_media_item *items = count ? calloc((size_t)count, sizeof(*items)) : NULL;
  bool complete = request && (!count || items);
  for (int i = 0; i < count; i++) {
    vlm_loaded_image *loaded = i < images ? &options->images[i] : &options->audio[i - images];
    if (items && loaded->item) items[i] = *loaded->item;
    else complete = false;
    free(loaded->item);
    memset(loaded, 0, sizeof(*loaded));
  }
  if (complete && count) {
    /* Before the digests: an encoder may read them. */
    vlm_family_set_request_media(engine->model->family, &engine->model->config, items, count);
    /* The caches' key, hashed here (on the caller's thread) for every
     * item however it was made. */
    for (int i = 0; i < count; i++) vlm_media_item_digest(&items[i], items[i].content_digest);
  }
  if (!complete) {
    for (int i = 0; items && i < count; i++) vlm_media_item_release(&items[i]);
    free(items);
    free(request);
    return NULL;
  }
  request->engine = engine;
  request->items = items;
  request->item_count = count;
  atomic_init(&request->cancel_requested, false);
  pthread_mutex_init(&request->callback_mutex, NULL);
  return request;
}

/* Under engine->mutex. */
static vlm_status check_queue(const vlm_engine *engine) {
  if (engine->draining || engine->stopping) return VLM_ERROR(UNAVAILABLE, "the server is shutting down");
  if (engine->queue_length >= engine->queue_limit)
    return VLM_ERROR(RESOURCE_EXHAUSTED, "too many requests: %lld are already waiting for one of %d slots",
                     (long long)engine->queue_length, engine->slot_count);
  return VLM_OK;
}

static vlm_status enqueue(vlm_engine *engine, vlm_engine_request *request) {
  pthread_mutex_lock(&engine->mutex);
  vlm_status status = check_queue(engine);
  if (!status) {
    if (engine->queue_tail) engine->queue_tail->next_in_queue = request;
    else engine->queue_head = request;
    engine->queue_tail = request;
    engine->queue_length++;
    engine->metrics.queue_depth = engine->queue_length;
    pthread_cond_broadcast(&engine->wake);
  }
  pthread_mutex_unlock(&engine->mutex);
  return status;
}

static void count_rejection(vlm_engine *engine) {
  pthread_mutex_lock(&engine->mutex);
  engine->metrics.requests_rejected++;
  pthread_mutex_unlock(&engine->mutex);
}

vlm_status vlm_engine_submit(vlm_engine *engine, const vlm_engine_request_options *options,
                             vlm_engine_event_callback callback, void *context,
                             vlm_engine_request **out_request) {
  *out_request = NULL;
  double start = engine_now_seconds();
  vlm_engine_request *request = request_create(engine, options);
  if (!request) {
    count_rejection(engine);
    return (options->image_count > 0 && options->images) || (options->audio_count > 0 && options->audio)
               ? VLM_ERROR(INVALID_ARGUMENT, "a media item of the request was not loaded (or out of memory)")
               : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  request->callback = callback;
  request->context = context;
  request->max_tokens = options->max_tokens ? options->max_tokens : vlm_engine_default_max_tokens(engine);
  request->sampling = options->sampling;
  request->logprobs = options->logprobs;
  request->progress = options->progress;
  request->choice_count = options->n > 1 ? options->n : 1;
  request->choices_left = request->choice_count;
  request->submit_time = start;
  vlm_status status = callback ? VLM_OK : VLM_ERROR(INVALID_ARGUMENT, "a request needs an event callback");
  if (!status) status = check_options(engine, options, false);
  if (!status) status = copy_stop_strings(request, options);
  if (!status && options->grammar) status = engine_grammar_prepare(engine, options->grammar, request);
  if (!status) status = copy_controls(request, options);
  if (!status) status = tokenize_prompt(engine, options, request);
  if (!status) status = check_capacity(engine, request->prompt.count, request->max_tokens);
  if (!status) status = check_attention_blocks(engine, request);
  for (int i = 0; i < request->item_count; i++) request->preprocess_seconds += request->items[i].preprocess_seconds;
  request->preprocess_seconds += engine_now_seconds() - start;
  request->caller_released = false;
  if (!status) status = enqueue(engine, request);
  if (status) {
    count_rejection(engine);
    engine_request_free(request);
    return status;
  }
  *out_request = request;
  return VLM_OK;
}

/* Counts each image placeholder among the text's ids (each one token, as
 * the tokenizer keeps an added token whole): the same check expansion
 * makes on the text, without the items. */
static vlm_status count_image_placeholders(const vlm_engine *engine, const engine_prompt *prompt, int images) {
  if (images <= 0) return VLM_OK;
  int64_t id = engine->model->family->image->placeholder_token(engine->config), found = 0;
  for (int64_t i = 0; i < prompt->count; i++) found += prompt->ids[i] == id;
  if (found == images) return VLM_OK;
  return VLM_ERROR(INVALID_ARGUMENT, "the prompt has %lld image placeholder(s) (token %lld) but the request has %d "
                   "image(s)", (long long)found, (long long)id, images);
}

vlm_status vlm_engine_check_admission(vlm_engine *engine, const vlm_engine_request_options *options,
                                      const int64_t *image_tokens) {
  int64_t room = 0;
  return vlm_engine_check_admission_room(engine, options, image_tokens, &room);
}

vlm_status vlm_engine_check_admission_room(vlm_engine *engine, const vlm_engine_request_options *options,
                                           const int64_t *image_tokens, int64_t *out_room) {
  *out_room = 0;
  pthread_mutex_lock(&engine->mutex);
  vlm_status status = check_queue(engine);
  pthread_mutex_unlock(&engine->mutex);
  if (!status && options->image_count > 0 && !image_tokens)
    status = VLM_ERROR(INVALID_ARGUMENT, "admission for %d image(s) needs their token counts", options->image_count);
  if (!status) status = check_options(engine, options, true);
  int64_t max_tokens = options->max_tokens ? options->max_tokens : vlm_engine_default_max_tokens(engine);
  media_positions media = {0};
  engine_prompt prompt = {0};
  if (!status) status = count_media(options, NULL, image_tokens, &media);
  if (!status) status = build_prompt(engine, options, max_tokens, NULL, &media, &prompt);
  if (!status) status = count_image_placeholders(engine, &prompt, options->image_count);
  int64_t total = 0;
  if (!status && !vlm_int64_add(prompt.count - media.placeholders, media.positions, &total))
    status = VLM_ERROR(OUT_OF_RANGE, "the prompt's token count overflows");
  if (!status) status = check_capacity(engine, total, max_tokens);
  if (!status) *out_room = engine_decoder_capacity(engine) - total - max_tokens;
  engine_prompt_release(&prompt);
  if (status) count_rejection(engine);
  return status;
}

void vlm_engine_drain(vlm_engine *engine, double timeout_seconds) {
  double deadline = engine_now_seconds() + (timeout_seconds > 0 ? timeout_seconds : 0);
  pthread_mutex_lock(&engine->mutex);
  engine->draining = true;
  while ((engine->queue_length > 0 || engine->active_slots > 0) && engine_now_seconds() < deadline) {
    struct timespec wait_until;
    clock_gettime(CLOCK_REALTIME, &wait_until);
    wait_until.tv_nsec += 50 * 1000 * 1000;
    if (wait_until.tv_nsec >= 1000000000L) {
      wait_until.tv_sec++;
      wait_until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&engine->changed, &engine->mutex, &wait_until);
  }
  /* Whatever is left is cancelled: queued requests in the scheduler's next
   * admission pass, running ones before their next step. */
  for (vlm_engine_request *request = engine->queue_head; request; request = request->next_in_queue)
    atomic_store(&request->cancel_requested, true);
  for (int32_t i = 0; i < engine->slot_count; i++)
    if (engine->slots[i].request) atomic_store(&engine->slots[i].request->cancel_requested, true);
  pthread_cond_broadcast(&engine->wake);
  while (engine->queue_length > 0 || engine->active_slots > 0)
    pthread_cond_wait(&engine->changed, &engine->mutex);
  pthread_mutex_unlock(&engine->mutex);
}

void vlm_engine_get_metrics(vlm_engine *engine, vlm_engine_metrics *out_metrics) {
  pthread_mutex_lock(&engine->mutex);
  *out_metrics = engine->metrics;
  pthread_mutex_unlock(&engine->mutex);
}

/* ---------------------------------------------------------------------- */
/* Tokenizing without generating (POST /tokenize, vlm tokenize --ids)      */
/* ---------------------------------------------------------------------- */

/* The ids out of a prompt built text-only (ids_only). */
static vlm_status take_ids(engine_prompt *prompt, int32_t **out_ids, int64_t *out_count) {
  *out_ids = prompt->ids;
  *out_count = prompt->count;
  prompt->ids = NULL;
  engine_prompt_release(prompt);
  return VLM_OK;
}

vlm_status vlm_engine_tokenize(vlm_engine *engine, const vlm_engine_request_options *options, int32_t **out_ids,
                               int64_t *out_count) {
  *out_ids = NULL;
  *out_count = 0;
  if (options->image_count > 0 || options->audio_count > 0)
    return VLM_ERROR(UNIMPLEMENTED, "tokenizing a prompt with images or audio is not supported");
  VLM_RETURN_IF_ERROR(check_options(engine, options, true));
  media_positions media = {0};
  engine_prompt prompt;
  VLM_RETURN_IF_ERROR(build_prompt(engine, options, 0, NULL, &media, &prompt));
  return take_ids(&prompt, out_ids, out_count);
}

vlm_status vlm_engine_detokenize(vlm_engine *engine, const int32_t *ids, size_t count, char **out_text,
                                 size_t *out_length) {
  *out_text = NULL;
  for (size_t i = 0; i < count; i++)
    if (ids[i] < 0 || ids[i] >= engine->vocab_size)
      return VLM_ERROR(INVALID_ARGUMENT, "token id %d (at %zu) is outside the vocabulary (size %lld)", ids[i], i,
                       (long long)engine->vocab_size);
  return vlm_tokenizer_decode(engine->tokenizer, ids, count, false, out_text, out_length);
}

vlm_status vlm_chat_prompt_ids(vlm_model *model, const vlm_engine_request_options *options, int32_t **out_ids,
                               int64_t *out_count) {
  *out_ids = NULL;
  *out_count = 0;
  vlm_tokenizer *tokenizer = NULL;
  vlm_chat_template *chat_template = NULL;
  vlm_status status = vlm_tokenizer_create(model->directory, NULL, &tokenizer);
  if (!status && options->messages_json) status = vlm_chat_template_load(model->directory, &chat_template);
  for (int64_t i = 0; !status && options->prompt_ids && i < options->prompt_id_count; i++)
    if (options->prompt_ids[i] < 0 || options->prompt_ids[i] >= (int64_t)vlm_tokenizer_vocab_size(tokenizer))
      status = VLM_ERROR(INVALID_ARGUMENT, "prompt token id %d is outside the vocabulary", options->prompt_ids[i]);
  engine_prompt prompt;
  engine_prompt_source source = {.messages_json = options->messages_json, .raw_prompt = options->raw_prompt,
                                 .ids_only = true,
                                 .chat_template_kwargs_json = options->chat_template_kwargs_json,
                                 .no_generation_prompt = options->no_generation_prompt,
                                 .continue_final_message = options->continue_final_message,
                                 .prompt_ids = options->prompt_ids, .prompt_id_count = options->prompt_id_count};
  if (!status) status = engine_prompt_build(model, tokenizer, chat_template, &source, &prompt);
  if (!status) status = take_ids(&prompt, out_ids, out_count);
  vlm_chat_template_release(chat_template);
  vlm_tokenizer_release(tokenizer);
  return status;
}
