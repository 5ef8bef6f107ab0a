/* The serving engine's public side: open/release, request preparation and
 * admission on the caller's thread, cancellation, drain and metrics.
 * Images are loaded in engine_images.c, the scheduler thread lives in
 * scheduler.c. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/checked.h"
#include "core/log.h"
#include "core/status.h"
#include "engine/engine_internal.h"
#include "models/family.h"

#define DEFAULT_MAX_TOKENS 256
#define DEFAULT_QUEUE_LIMIT 64
#define DEFAULT_IMAGE_BUDGET ((uint64_t)2 << 30)

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
  const vlm_token_id_list *ids = &engine->generation.eos_token_ids;
  if (!ids->count) ids = &engine->config.text.eos_token_ids;
  for (size_t i = 0; i < ids->count && engine->stop_token_count < ENGINE_MAX_STOP_TOKENS; i++)
    engine->stop_tokens[engine->stop_token_count++] = (int32_t)ids->ids[i];
}

static vlm_status open_text_side(vlm_engine *engine, const char *model_dir,
                                 const vlm_engine_options *options) {
  VLM_RETURN_IF_ERROR(vlm_model_config_load(model_dir, options->allocator, &engine->config));
  engine->config_loaded = true;
  if (!engine->decoder) {
    vlm_text_model_options model_options = {.slot_count = engine->slot_count,
                                            .capacity = options->capacity,
                                            .prefill_chunk = options->prefill_chunk,
                                            .pool = engine->pool,
                                            .allocator = options->allocator};
    VLM_RETURN_IF_ERROR(vlm_text_decoder_open_cpu(model_dir, &model_options, &engine->decoder));
  }
  int32_t decoder_slots = engine->decoder->operations->slot_count(engine->decoder->self);
  if (decoder_slots != engine->slot_count)
    return VLM_ERROR(INVALID_ARGUMENT, "the %s text decoder has %d slot(s) but the engine was asked for %d",
                     engine->decoder->operations->backend, decoder_slots, engine->slot_count);
  VLM_RETURN_IF_ERROR(vlm_generation_config_load(model_dir, options->allocator, &engine->generation));
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

static vlm_status start_scheduler(vlm_engine *engine) {
  engine->slots = calloc((size_t)engine->slot_count, sizeof(*engine->slots));
  engine->logits = malloc((size_t)engine->slot_count * (size_t)engine->vocab_size * sizeof(float));
  if (!engine->slots || !engine->logits) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int32_t i = 0; i < engine->slot_count; i++) engine->slots[i].index = i;
  if (pthread_create(&engine->thread, NULL, engine_scheduler_main, engine) != 0)
    return VLM_ERROR(RESOURCE_EXHAUSTED, "cannot start the scheduler thread");
  engine->thread_started = true;
  return VLM_OK;
}

vlm_status vlm_engine_open(const char *model_dir, const vlm_engine_options *options,
                           vlm_engine **out_engine) {
  *out_engine = NULL;
  vlm_engine_options defaults = {0};
  if (!options) options = &defaults;
  if (options->slot_count < 0 || options->queue_limit < 0) {
    vlm_text_decoder_release(options->text_decoder);
    vlm_image_encoder_release(options->image_encoder);
    return VLM_ERROR(INVALID_ARGUMENT, "slot count and queue limit must not be negative");
  }
  vlm_engine *engine = calloc(1, sizeof(*engine));
  if (!engine) {
    vlm_text_decoder_release(options->text_decoder);
    vlm_image_encoder_release(options->image_encoder);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  engine->decoder = options->text_decoder; /* taken over from here on */
  engine->image_encoder = options->image_encoder;
  engine->model_dir = strdup(model_dir);
  engine->allocator = options->allocator;
  engine->slot_count = options->slot_count ? options->slot_count : 1;
  engine->queue_limit = options->queue_limit ? options->queue_limit : DEFAULT_QUEUE_LIMIT;
  engine->image_memory_budget = options->image_memory_budget ? options->image_memory_budget : DEFAULT_IMAGE_BUDGET;
  engine->image_wait_seconds = options->image_wait_seconds > 0 ? options->image_wait_seconds : 10.0;
  engine->max_prompt_bytes = options->max_prompt_bytes;
  pthread_mutex_init(&engine->image_mutex, NULL);
  pthread_cond_init(&engine->image_released, NULL);
  pthread_mutex_init(&engine->vision_mutex, NULL);
  pthread_mutex_init(&engine->mutex, NULL);
  pthread_cond_init(&engine->wake, NULL);
  pthread_cond_init(&engine->changed, NULL);
  vlm_status status = vlm_thread_pool_create(options->thread_count, options->allocator, &engine->pool);
  if (!status) status = open_text_side(engine, model_dir, options);
  if (!status) {
    const vlm_family *family = vlm_family_find(engine->config.model_type);
    engine->accepts_images = family && family->describe_vision;
    engine->vocab_size = engine->decoder->operations->vocab_size(engine->decoder->self);
    engine->prefill_chunk = options->prefill_chunk > 0 ? options->prefill_chunk : 512;
    engine->decoding_prefill_chunk = options->decoding_prefill_chunk > 0 ? options->decoding_prefill_chunk : 128;
    if (engine->decoding_prefill_chunk > engine->prefill_chunk) engine->decoding_prefill_chunk = engine->prefill_chunk;
    collect_stop_tokens(engine);
    init_metrics(engine);
    if (engine->accepts_images && !engine->image_encoder && strcmp(engine->decoder->operations->backend, "cpu") != 0)
      vlm_log(VLM_LOG_WARN, "%s: the vision encoder and projector run on the cpu backend (host fallback), "
              "not on %s", model_dir, engine->decoder->operations->backend);
    status = start_scheduler(engine);
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
  free(engine->slots);
  free(engine->logits);
  vlm_chat_template_release(engine->chat_template);
  vlm_tokenizer_release(engine->tokenizer);
  vlm_generation_config_release(&engine->generation);
  vlm_text_decoder_release(engine->decoder);
  vlm_image_encoder_release(engine->image_encoder);
  if (engine->config_loaded) vlm_model_config_release(&engine->config);
  vlm_vision_model_release(engine->vision);
  if (engine->processor_loaded) vlm_processor_config_release(&engine->processor);
  vlm_thread_pool_release(engine->pool);
  pthread_mutex_destroy(&engine->image_mutex);
  pthread_cond_destroy(&engine->image_released);
  pthread_mutex_destroy(&engine->vision_mutex);
  pthread_mutex_destroy(&engine->mutex);
  pthread_cond_destroy(&engine->wake);
  pthread_cond_destroy(&engine->changed);
  free(engine->model_dir);
  free(engine);
}

void vlm_engine_get_info(const vlm_engine *engine, vlm_engine_info *out_info) {
  memset(out_info, 0, sizeof(*out_info));
  out_info->model_dir = engine->model_dir;
  out_info->model_type = engine->config.model_type;
  out_info->backend = engine->decoder->operations->backend;
  out_info->accepts_images = engine->accepts_images;
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
}

vlm_sampling_params vlm_engine_default_sampling(const vlm_engine *engine) {
  vlm_sampling_params params = vlm_sampling_params_greedy();
  const vlm_generation_config *generation = &engine->generation;
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
  return engine->generation.max_new_tokens ? engine->generation.max_new_tokens : DEFAULT_MAX_TOKENS;
}

/* ---------------------------------------------------------------------- */
/* Requests                                                                */
/* ---------------------------------------------------------------------- */

void engine_request_free(vlm_engine_request *request) {
  for (int i = 0; i < request->image_count; i++) vlm_loaded_image_release(&request->images[i]);
  free(request->images);
  for (size_t i = 0; i < request->stop_count; i++) free(request->stop[i]);
  free(request->stop);
  free(request->ids);
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

void vlm_engine_request_release(vlm_engine_request *request) {
  if (!request) return;
  vlm_engine_cancel(request);
  pthread_mutex_lock(&request->callback_mutex); /* waits for a callback in progress */
  request->caller_released = true;
  bool free_now = request->engine_done;
  pthread_mutex_unlock(&request->callback_mutex);
  if (free_now) engine_request_free(request);
}

static vlm_status check_options(const vlm_engine *engine, const vlm_engine_request_options *options,
                                bool images_given) {
  if (!options->messages_json == !options->raw_prompt)
    return VLM_ERROR(INVALID_ARGUMENT, "a request needs exactly one of chat messages or a raw prompt");
  if (options->image_count < 0 || (options->image_count > 0 && !images_given))
    return VLM_ERROR(INVALID_ARGUMENT, "the request names %d image(s) but gives none", options->image_count);
  if (options->image_count > 0 && !engine->accepts_images) return engine_refuse_images(engine, options->image_count);
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
  return vlm_sampling_params_validate(&options->sampling);
}

/* Prompt positions the request's images take once their placeholders are
 * expanded: the caller's counts (from the images' headers, before
 * decoding) or the vision model's for decoded images. */
static vlm_status image_positions(vlm_engine *engine, const vlm_engine_request_options *options,
                                  const int64_t *image_tokens, int64_t *out_positions) {
  *out_positions = 0;
  if (options->image_count <= 0) return VLM_OK;
  VLM_RETURN_IF_ERROR(engine_ensure_vision(engine, options->image_count));
  for (int i = 0; i < options->image_count; i++) {
    int64_t tokens = image_tokens ? image_tokens[i] : vlm_vision_model_tokens_per_image(engine->vision);
    if (tokens <= 0) return VLM_ERROR(INVALID_ARGUMENT, "image %d takes %lld tokens", i, (long long)tokens);
    if (!vlm_int64_add(*out_positions, tokens, out_positions))
      return VLM_ERROR(OUT_OF_RANGE, "the images' token counts overflow");
  }
  return VLM_OK;
}

/* The byte limit on the rendered (or raw) prompt, from what the capacity
 * leaves it. Refuses at once when max_tokens and the images alone do not
 * fit. With a tokenizer bound B (vlm_tokenizer_max_bytes_per_token) a
 * prompt of more than room x B bytes has more than room tokens: it cannot
 * fit, whatever the text. */
typedef struct prompt_budget {
  size_t max_bytes;
  bool from_capacity;       /* sound: the capacity's own limit, not a policy */
  int64_t text_tokens;      /* room for the text, placeholders included */
  size_t bytes_per_token;
} prompt_budget;

static vlm_status plan_prompt_budget(const vlm_engine *engine, const vlm_engine_request *request,
                                     int image_count, int64_t images, prompt_budget *out) {
  memset(out, 0, sizeof(*out));
  int64_t capacity = engine_decoder_capacity(engine), taken = 0;
  if (!vlm_int64_add(request->max_tokens, images, &taken) || taken > capacity)
    return VLM_ERROR(OUT_OF_RANGE,
                     "context length exceeded: max_tokens is %lld and the %d image(s) take %lld positions, over "
                     "the capacity of %lld before the prompt's text",
                     (long long)request->max_tokens, image_count, (long long)images, (long long)capacity);
  /* Each image's placeholder is one token of the text. */
  out->text_tokens = capacity - taken + image_count;
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

/* Chat template (or the raw prompt) -> ids, then placeholder expansion.
 * The prompt's bytes are bounded before it is tokenized, and rendering
 * stops as soon as the rendered prompt passes the bound. */
static vlm_status tokenize_prompt(vlm_engine *engine, const vlm_engine_request_options *options,
                                  const int64_t *image_tokens, vlm_engine_request *request) {
  int64_t images = 0;
  VLM_RETURN_IF_ERROR(image_positions(engine, options, image_tokens, &images));
  prompt_budget budget;
  VLM_RETURN_IF_ERROR(plan_prompt_budget(engine, request, options->image_count, images, &budget));
  char *rendered = NULL;
  size_t rendered_length = 0;
  bool templated = options->messages_json != NULL;
  if (templated) {
    if (!engine->chat_template)
      return VLM_ERROR(FAILED_PRECONDITION,
                       "%s has no chat template (tokenizer_config.json, chat_template.json or "
                       "chat_template.jinja); send a raw prompt (/v1/completions) instead",
                       engine->model_dir);
    bool too_long = false;
    vlm_chat_template_options template_options = {.add_generation_prompt = true,
                                                  .max_prompt_bytes = budget.max_bytes,
                                                  .prompt_limit_reached = &too_long};
    vlm_status status = vlm_chat_template_render(engine->chat_template, options->messages_json,
                                                 strlen(options->messages_json), &template_options,
                                                 &rendered, &rendered_length);
    if (status && too_long) {
      vlm_status_free(status);
      return prompt_too_long(engine, &budget);
    }
    VLM_RETURN_IF_ERROR(status);
  } else if (strnlen(options->raw_prompt, budget.max_bytes + 1) > budget.max_bytes) {
    return prompt_too_long(engine, &budget);
  }
  /* A rendered template already holds its special tokens (as
   * apply_chat_template(tokenize=True) does); a raw prompt gets BOS etc. */
  const char *text = templated ? rendered : options->raw_prompt;
  vlm_token_ids ids = {0};
  vlm_status status = vlm_tokenizer_encode(engine->tokenizer, text, templated ? rendered_length : strlen(text),
                                           !templated, &ids);
  free(rendered);
  if (status) return status;
  request->ids = ids.ids;
  request->id_count = (int64_t)ids.count;
  if (options->image_count == 0) return VLM_OK;
  int32_t *expanded = NULL;
  int64_t expanded_count = 0;
  VLM_RETURN_IF_ERROR(vlm_vision_model_expand_placeholders(engine->vision, request->ids, request->id_count,
                                                           options->image_count, &expanded, &expanded_count));
  free(request->ids);
  request->ids = expanded;
  request->image_token_count = expanded_count - request->id_count + options->image_count;
  request->id_count = expanded_count;
  if (image_tokens) { /* admission before decoding: the images' own counts */
    request->id_count += images - request->image_token_count;
    request->image_token_count = images;
  }
  return VLM_OK;
}

/* prompt + max_tokens must fit the slot. max_tokens is the caller's number
 * (up to INT64_MAX from a request body), so the sum is checked: a wrapped
 * sum would admit the request, and the slot's completion buffer is sized
 * from max_tokens. */
static vlm_status check_capacity(const vlm_engine *engine, const vlm_engine_request *request) {
  int64_t capacity = engine_decoder_capacity(engine);
  int64_t needed = 0;
  if (vlm_int64_add(request->id_count, request->max_tokens, &needed) && needed <= capacity) return VLM_OK;
  int64_t room = capacity - request->id_count;
  return VLM_ERROR(OUT_OF_RANGE,
                   "context length exceeded: the prompt has %lld tokens and max_tokens is %lld, over "
                   "the capacity of %lld (%lld tokens left for the completion)",
                   (long long)request->id_count, (long long)request->max_tokens, (long long)capacity,
                   (long long)(room > 0 ? room : 0));
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

/* Takes the caller's images whatever happens next. */
static vlm_engine_request *request_create(vlm_engine *engine, const vlm_engine_request_options *options) {
  vlm_engine_request *request = calloc(1, sizeof(*request));
  int count = options->image_count > 0 && options->images ? options->image_count : 0;
  vlm_loaded_image *images = count ? calloc((size_t)count, sizeof(*images)) : NULL;
  if (count && images) memcpy(images, options->images, (size_t)count * sizeof(*images));
  if (count) memset(options->images, 0, (size_t)count * sizeof(*images));
  if (!request || (count && !images)) {
    for (int i = 0; images && i < count; i++) vlm_loaded_image_release(&images[i]);
    free(images);
    free(request);
    return NULL;
  }
  request->engine = engine;
  request->images = images;
  request->image_count = count;
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
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  request->callback = callback;
  request->context = context;
  request->max_tokens = options->max_tokens ? options->max_tokens : vlm_engine_default_max_tokens(engine);
  request->sampling = options->sampling;
  request->logprobs = options->logprobs;
  request->submit_time = start;
  vlm_status status = callback ? VLM_OK : VLM_ERROR(INVALID_ARGUMENT, "a request needs an event callback");
  if (!status) status = check_options(engine, options, options->images != NULL);
  if (!status) status = copy_stop_strings(request, options);
  if (!status) status = tokenize_prompt(engine, options, NULL, request);
  if (!status) status = check_capacity(engine, request);
  for (int i = 0; i < request->image_count; i++) request->preprocess_seconds += request->images[i].preprocess_seconds;
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

vlm_status vlm_engine_check_admission(vlm_engine *engine, const vlm_engine_request_options *options,
                                      const int64_t *image_tokens) {
  pthread_mutex_lock(&engine->mutex);
  vlm_status status = check_queue(engine);
  pthread_mutex_unlock(&engine->mutex);
  if (!status && options->image_count > 0 && !image_tokens)
    status = VLM_ERROR(INVALID_ARGUMENT, "admission for %d image(s) needs their token counts", options->image_count);
  if (!status) status = check_options(engine, options, true);
  vlm_engine_request request = {.engine = engine};
  request.max_tokens = options->max_tokens ? options->max_tokens : vlm_engine_default_max_tokens(engine);
  if (!status) status = tokenize_prompt(engine, options, image_tokens, &request);
  if (!status) status = check_capacity(engine, &request);
  free(request.ids);
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
