/* The serving engine (include/vlm/engine.h): continuous batching gives
 * every request exactly what it gets alone (greedy, text and image mixed),
 * admission refuses over-capacity prompts and a full queue before any
 * work, cancellation frees the slot for a clean reuse, drain refuses new
 * work, and events arrive in order (tokens, then one FINISH). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "media/media_item.h"
#include "models/model.h"
#include "test.h"
#include "validate/golden.h"
#include "vlm/engine.h"

#define TEXT_MODEL VLM_SOURCE_DIR "/tests/models/qwen2"
#define IMAGE_MODEL VLM_SOURCE_DIR "/tests/models/llava"
#define ONE_IMAGE VLM_SOURCE_DIR "/tests/goldens/llava/one_image"
#define MAX_TOKENS 64

/* What one request received, filled on the scheduler thread. */
typedef struct collected {
  pthread_mutex_t mutex;
  pthread_cond_t signal;
  bool finished;
  int token_events;
  int logprob_events;      /* with a logprob and 3 alternatives, most likely first */
  bool token_after_finish;
  int32_t tokens[MAX_TOKENS];
  int64_t token_count;
  char streamed[4096];
  size_t streamed_length;
  char full_text[4096];
  vlm_status_code code;
  char finish_reason[16];
  vlm_engine_usage usage;
  /* Optional: the first token event blocks until `gate_open` (to hold the
   * scheduler while the test fills the queue). */
  bool use_gate, gate_open, blocked;
  /* PROGRESS events, when asked for: each in order, and whether one came
   * after a token or the finish. */
  vlm_engine_progress progress[128];
  int progress_count;
  bool progress_out_of_order;
} collected;

static void collected_init(collected *c) {
  memset(c, 0, sizeof(*c));
  pthread_mutex_init(&c->mutex, NULL);
  pthread_cond_init(&c->signal, NULL);
}

static void collected_destroy(collected *c) {
  pthread_mutex_destroy(&c->mutex);
  pthread_cond_destroy(&c->signal);
}

static void on_event(void *context, const vlm_engine_event *event) {
  collected *c = context;
  pthread_mutex_lock(&c->mutex);
  if (event->kind == VLM_ENGINE_EVENT_PROGRESS) {
    if (c->token_events || c->finished) c->progress_out_of_order = true;
    if (c->progress_count < 128) c->progress[c->progress_count] = event->progress;
    c->progress_count++;
  } else if (event->kind == VLM_ENGINE_EVENT_TOKEN) {
    if (c->finished) c->token_after_finish = true;
    c->token_events++;
    if (event->token >= 0 && c->token_count < MAX_TOKENS) c->tokens[c->token_count++] = event->token;
    if (event->has_logprob && event->top_logprob_count == 3 && event->logprob.logprob <= 0 &&
        event->top_logprobs[0].logprob >= event->top_logprobs[2].logprob &&
        event->top_logprobs[0].logprob >= event->logprob.logprob)
      c->logprob_events++;
    if (c->streamed_length + event->text_length < sizeof(c->streamed)) {
      memcpy(c->streamed + c->streamed_length, event->text, event->text_length);
      c->streamed_length += event->text_length;
    }
    if (c->use_gate) {
      c->blocked = true;
      pthread_cond_broadcast(&c->signal);
      while (!c->gate_open) pthread_cond_wait(&c->signal, &c->mutex);
    }
  } else {
    c->finished = true;
    c->code = vlm_status_code_of(event->status);
    snprintf(c->finish_reason, sizeof(c->finish_reason), "%s", event->finish_reason ? event->finish_reason : "");
    snprintf(c->full_text, sizeof(c->full_text), "%.*s", (int)event->full_text_length, event->full_text);
    c->usage = event->usage;
    pthread_cond_broadcast(&c->signal);
  }
  pthread_mutex_unlock(&c->mutex);
}

static void wait_finished(collected *c) {
  pthread_mutex_lock(&c->mutex);
  while (!c->finished) pthread_cond_wait(&c->signal, &c->mutex);
  pthread_mutex_unlock(&c->mutex);
}

static vlm_engine *open_engine(const char *model, int32_t slots, int32_t queue_limit, int64_t capacity) {
  /* Prompts arrive in chunks of 7 rows, 3 while another slot is decoding. */
  vlm_engine_options options = {.thread_count = 2, .slot_count = slots, .queue_limit = queue_limit,
                                .capacity = capacity, .prefill_chunk = 7, .decoding_prefill_chunk = 3};
  vlm_engine *engine = NULL;
  vlm_model *opened = NULL;
  CHECK_OK(vlm_model_open(model, NULL, &opened));
  if (opened) CHECK_OK(vlm_engine_open(opened, &options, &engine));
  vlm_model_release(opened);
  return engine;
}

static char *user_message(const char *text, int images) {
  static char buffer[8][512];
  static int next;
  char *out = buffer[next++ % 8];
  if (!images) {
    snprintf(out, 512, "[{\"role\":\"user\",\"content\":\"%s\"}]", text);
  } else {
    snprintf(out, 512, "[{\"role\":\"user\",\"content\":[{\"type\":\"image\"},{\"type\":\"text\",\"text\":\"%s\"}]}]",
             text);
  }
  return out;
}

static vlm_engine_request_options text_request(vlm_engine *engine, const char *messages, int64_t max_tokens) {
  vlm_engine_request_options options = {.messages_json = messages, .max_tokens = max_tokens,
                                        .sampling = vlm_engine_default_sampling(engine)};
  options.sampling.temperature = 0;
  return options;
}

static void run_alone(vlm_engine *engine, vlm_engine_request_options options, collected *out) {
  collected_init(out);
  vlm_engine_request *request = NULL;
  CHECK_OK(vlm_engine_submit(engine, &options, on_event, out, &request));
  if (request) wait_finished(out);
  vlm_engine_request_release(request);
}

static bool same_tokens(const collected *a, const collected *b) {
  return a->token_count == b->token_count && !memcmp(a->tokens, b->tokens, (size_t)a->token_count * 4) &&
         !strcmp(a->full_text, b->full_text) && !strcmp(a->finish_reason, b->finish_reason);
}

static const char *const prompts[8] = {"Hello", "Tell me a story about a cat and a dog", "1 2 3",
                                       "What is the capital of France?", "x", "Write a poem",
                                       "Why is the sky blue? Explain it in detail, please.", "ok"};

static void batched_text_equals_alone(void) {
  vlm_engine *single = open_engine(TEXT_MODEL, 1, 0, 256);
  vlm_engine *batched = open_engine(TEXT_MODEL, 4, 0, 256);
  collected alone[8], together[8];
  vlm_engine_request *requests[8] = {0};
  for (int i = 0; i < 8; i++) run_alone(single, text_request(single, user_message(prompts[i], 0), 5 + 3 * i), &alone[i]);
  for (int i = 0; i < 8; i++) {
    collected_init(&together[i]);
    vlm_engine_request_options options = text_request(batched, user_message(prompts[i], 0), 5 + 3 * i);
    CHECK_OK(vlm_engine_submit(batched, &options, on_event, &together[i], &requests[i]));
  }
  for (int i = 0; i < 8; i++) {
    if (requests[i]) wait_finished(&together[i]);
    vlm_engine_request_release(requests[i]);
    CHECK(same_tokens(&alone[i], &together[i]));
    CHECK_INT_EQ(together[i].code, VLM_STATUS_OK);
    CHECK(!together[i].token_after_finish);
    CHECK(together[i].token_count > 0);
    /* The stream adds up to the text decoded at once. */
    CHECK_INT_EQ(together[i].streamed_length, strlen(together[i].full_text));
    CHECK_INT_EQ(together[i].usage.completion_tokens, together[i].token_count);
    collected_destroy(&alone[i]);
    collected_destroy(&together[i]);
  }
  vlm_engine_info info;
  vlm_engine_get_info(batched, &info);
  CHECK_INT_EQ(info.prefill_chunk, 7);
  CHECK_INT_EQ(info.decoding_prefill_chunk, 3);
  vlm_engine_metrics metrics;
  vlm_engine_get_metrics(batched, &metrics);
  CHECK_INT_EQ(metrics.active_slots, 0);
  CHECK_INT_EQ(metrics.queue_depth, 0);
  CHECK_INT_EQ(metrics.requests_finished_stop + metrics.requests_finished_length, 8);
  CHECK_INT_EQ(metrics.time_to_first_token.count, 8);
  CHECK_INT_EQ(metrics.kv_positions_used, 0);
  vlm_engine_release(batched);
  vlm_engine_release(single);
}

/* The golden's pixel values as a loaded image (its own media item), with
 * the LLaVA family's placeholder count: one per patch. */
static void golden_image(const vlm_golden_case *golden, vlm_loaded_image *out) {
  vlm_tensor pixels;
  memset(out, 0, sizeof(*out));
  CHECK_OK(vlm_golden_case_tensor(golden, "processor.pixel_values", &pixels));
  vlm_media_item *item = calloc(1, sizeof(*item));
  void *data = NULL;
  CHECK_OK(vlm_tensor_list_add(&item->tensors, "pixel_values", VLM_DTYPE_F32, 3, pixels.shape + 1, &data));
  if (data) memcpy(data, pixels.data, (size_t)(pixels.shape[1] * pixels.shape[2] * pixels.shape[3]) * sizeof(float));
  item->kind = VLM_MEDIA_IMAGE;
  item->grid[0] = 1, item->grid[1] = pixels.shape[2], item->grid[2] = pixels.shape[3];
  item->token_count = (pixels.shape[2] / 14) * (pixels.shape[3] / 14);
  *out = (vlm_loaded_image){item, item->token_count, 0};
}

static void image_and_text_batch_without_leaks(void) {
  vlm_golden_case golden;
  CHECK_OK(vlm_golden_case_open(ONE_IMAGE, NULL, &golden));
  vlm_engine *single = open_engine(IMAGE_MODEL, 1, 0, 1024);
  vlm_engine *batched = open_engine(IMAGE_MODEL, 3, 0, 1024);
  collected alone[4], together[4];
  vlm_engine_request *requests[4] = {0};
  for (int round = 0; round < 2; round++) {
    vlm_engine *engine = round == 0 ? single : batched;
    for (int i = 0; i < 4; i++) {
      bool with_image = i % 2 == 0;
      vlm_loaded_image image = {0};
      if (with_image) golden_image(&golden, &image);
      vlm_engine_request_options options = text_request(engine, user_message(prompts[i], with_image), 6 + i);
      options.images = with_image ? &image : NULL;
      options.image_count = with_image;
      collected *c = round == 0 ? &alone[i] : &together[i];
      if (round == 0) {
        run_alone(engine, options, c);
      } else {
        collected_init(c);
        CHECK_OK(vlm_engine_submit(engine, &options, on_event, c, &requests[i]));
      }
    }
  }
  for (int i = 0; i < 4; i++) {
    if (requests[i]) wait_finished(&together[i]);
    vlm_engine_request_release(requests[i]);
    CHECK(same_tokens(&alone[i], &together[i]));
    CHECK_INT_EQ(together[i].usage.prompt_image_tokens, i % 2 == 0 ? 576 : 0);
    collected_destroy(&alone[i]);
    collected_destroy(&together[i]);
  }
  /* A text-only model refuses an image before any work. */
  vlm_engine *text = open_engine(TEXT_MODEL, 1, 0, 256);
  vlm_loaded_image image;
  golden_image(&golden, &image);
  vlm_engine_request_options options = text_request(text, user_message("hi", 1), 4);
  options.images = &image;
  options.image_count = 1;
  vlm_engine_request *request = NULL;
  CHECK_ERROR(vlm_engine_submit(text, &options, on_event, NULL, &request), VLM_STATUS_UNIMPLEMENTED,
              "takes no image input");
  CHECK(request == NULL);
  vlm_engine_release(text);
  vlm_engine_release(batched);
  vlm_engine_release(single);
  vlm_golden_case_close(&golden);
}

static void admission_refuses_before_work(void) {
  vlm_engine *engine = open_engine(TEXT_MODEL, 1, 1, 64);
  vlm_engine_request *request = NULL;
  vlm_engine_request_options options = text_request(engine, user_message("Hello", 0), 60);
  CHECK_ERROR(vlm_engine_submit(engine, &options, on_event, NULL, &request), VLM_STATUS_OUT_OF_RANGE,
              "context length exceeded");
  vlm_engine_request_options both = options;
  both.raw_prompt = "x";
  CHECK_ERROR(vlm_engine_submit(engine, &both, on_event, NULL, &request), VLM_STATUS_INVALID_ARGUMENT,
              "exactly one");
  /* Hold the scheduler inside the first request's first token, fill the
   * one-place queue, and the next submit is refused. */
  collected first, second;
  collected_init(&first);
  collected_init(&second);
  first.use_gate = true;
  options = text_request(engine, user_message("Hello", 0), 8);
  vlm_engine_request *first_request = NULL, *second_request = NULL;
  CHECK_OK(vlm_engine_submit(engine, &options, on_event, &first, &first_request));
  pthread_mutex_lock(&first.mutex);
  while (!first.blocked) pthread_cond_wait(&first.signal, &first.mutex);
  pthread_mutex_unlock(&first.mutex);
  CHECK_OK(vlm_engine_submit(engine, &options, on_event, &second, &second_request));
  CHECK_ERROR(vlm_engine_submit(engine, &options, on_event, NULL, &request), VLM_STATUS_RESOURCE_EXHAUSTED,
              "too many requests");
  vlm_engine_metrics metrics;
  vlm_engine_get_metrics(engine, &metrics);
  CHECK_INT_EQ(metrics.queue_depth, 1);
  CHECK_INT_EQ(metrics.requests_rejected, 3);
  pthread_mutex_lock(&first.mutex);
  first.use_gate = false;
  first.gate_open = true;
  pthread_cond_broadcast(&first.signal);
  pthread_mutex_unlock(&first.mutex);
  wait_finished(&first);
  wait_finished(&second);
  CHECK(same_tokens(&first, &second));
  vlm_engine_request_release(first_request);
  vlm_engine_request_release(second_request);
  collected_destroy(&first);
  collected_destroy(&second);
  vlm_engine_release(engine);
}

/* max_tokens comes straight from a request body: INT64_MAX (and anything
 * whose sum with the prompt wraps) is refused by admission like any other
 * over-capacity request, and the engine keeps serving. Before the sum was
 * checked it wrapped negative, the request was admitted and the scheduler
 * wrote tokens past a completion buffer of (max_tokens + 1) * 4 = 0 bytes. */
static void absurd_max_tokens_is_refused(void) {
  vlm_engine *engine = open_engine(TEXT_MODEL, 1, 0, 64);
  const int64_t absurd[] = {INT64_MAX, INT64_MAX - 3, INT64_MAX / 4 + 1, 65};
  vlm_engine_request *request = NULL;
  for (size_t i = 0; i < sizeof(absurd) / sizeof(absurd[0]); i++) {
    collected wrongly_admitted;
    collected_init(&wrongly_admitted);
    vlm_engine_request_options options = text_request(engine, user_message("Hello", 0), absurd[i]);
    CHECK_ERROR(vlm_engine_submit(engine, &options, on_event, &wrongly_admitted, &request),
                VLM_STATUS_OUT_OF_RANGE, "context length exceeded");
    if (request) wait_finished(&wrongly_admitted); /* what a server would do: run it */
    vlm_engine_request_release(request);
    request = NULL;
    vlm_engine_request_options raw = {.raw_prompt = "Hello", .max_tokens = absurd[i],
                                      .sampling = options.sampling};
    CHECK_ERROR(vlm_engine_submit(engine, &raw, on_event, &wrongly_admitted, &request),
                VLM_STATUS_OUT_OF_RANGE, "over the capacity of 64");
    vlm_engine_request_release(request);
    request = NULL;
    collected_destroy(&wrongly_admitted);
  }
  vlm_engine_metrics metrics;
  vlm_engine_get_metrics(engine, &metrics);
  CHECK_INT_EQ(metrics.requests_rejected, 8);
  collected after;
  run_alone(engine, text_request(engine, user_message("Hello", 0), 4), &after);
  CHECK_INT_EQ(after.code, VLM_STATUS_OK);
  CHECK(after.token_count >= 1 && after.token_count <= 4);
  collected_destroy(&after);
  vlm_engine_release(engine);
}

static void cancellation_frees_the_slot(void) {
  vlm_engine *engine = open_engine(TEXT_MODEL, 1, 0, 256);
  collected reference, cancelled, reused;
  run_alone(engine, text_request(engine, user_message("Write a poem", 0), 12), &reference);
  collected_init(&cancelled);
  cancelled.use_gate = true;
  vlm_engine_request_options options = text_request(engine, user_message("Tell me a story", 0), 40);
  vlm_engine_request *request = NULL;
  CHECK_OK(vlm_engine_submit(engine, &options, on_event, &cancelled, &request));
  pthread_mutex_lock(&cancelled.mutex);
  while (!cancelled.blocked) pthread_cond_wait(&cancelled.signal, &cancelled.mutex);
  cancelled.use_gate = false;
  cancelled.gate_open = true;
  pthread_cond_broadcast(&cancelled.signal);
  pthread_mutex_unlock(&cancelled.mutex);
  vlm_engine_cancel(request);
  wait_finished(&cancelled);
  CHECK_INT_EQ(cancelled.code, VLM_STATUS_CANCELLED);
  CHECK(cancelled.token_count < 40);
  vlm_engine_request_release(request);
  vlm_engine_metrics metrics;
  vlm_engine_get_metrics(engine, &metrics);
  CHECK_INT_EQ(metrics.requests_cancelled, 1);
  CHECK_INT_EQ(metrics.active_slots, 0);
  CHECK_INT_EQ(metrics.kv_positions_used, 0);
  /* The slot is reused cleanly: the same request gives the same tokens. */
  run_alone(engine, text_request(engine, user_message("Write a poem", 0), 12), &reused);
  CHECK(same_tokens(&reference, &reused));
  /* Releasing without waiting cancels, and no callback runs afterwards. */
  collected dropped;
  collected_init(&dropped);
  CHECK_OK(vlm_engine_submit(engine, &options, on_event, &dropped, &request));
  vlm_engine_request_release(request);
  collected_destroy(&dropped); /* would be a use-after-free under ASan if a callback still ran */
  vlm_engine_drain(engine, 5);
  CHECK_ERROR(vlm_engine_submit(engine, &options, on_event, NULL, &request), VLM_STATUS_UNAVAILABLE,
              "shutting down");
  collected_destroy(&reference);
  collected_destroy(&cancelled);
  collected_destroy(&reused);
  vlm_engine_release(engine);
}

static void stop_strings_and_logprobs(void) {
  vlm_engine *engine = open_engine(TEXT_MODEL, 2, 0, 256);
  collected reference, stopped;
  run_alone(engine, text_request(engine, user_message("Tell me a story", 0), 16), &reference);
  CHECK(strlen(reference.full_text) > 4);
  /* Stop at the text's 3rd..4th characters: the output is what came before. */
  char stop[3] = {reference.full_text[2], reference.full_text[3], 0};
  const char *stops[1] = {stop};
  vlm_engine_request_options options = text_request(engine, user_message("Tell me a story", 0), 16);
  options.stop = stops;
  options.stop_count = 1;
  options.logprobs = true;
  options.sampling.top_logprobs = 3;
  run_alone(engine, options, &stopped);
  CHECK_STR_EQ(stopped.finish_reason, "stop");
  CHECK_INT_EQ(stopped.logprob_events, stopped.token_count);
  CHECK_INT_EQ(reference.logprob_events, 0);
  const char *cut = strstr(reference.full_text, stop);
  CHECK(cut != NULL);
  if (cut) CHECK_INT_EQ(strlen(stopped.full_text), cut - reference.full_text);
  CHECK_INT_EQ(stopped.streamed_length, strlen(stopped.full_text));
  collected_destroy(&reference);
  collected_destroy(&stopped);
  vlm_engine_release(engine);
}

/* PROGRESS events: only when asked for, all before the first token, one
 * when the slot starts (after the prefix cache's share), one per media
 * item and one per prefill chunk, the last with the whole prompt. */
static void check_progress(const collected *c, int64_t chunk, int items) {
  CHECK(!c->progress_out_of_order);
  CHECK(c->progress_count >= 2 && c->progress_count <= 128);
  if (c->progress_count < 2 || c->progress_count > 128) return;
  const vlm_engine_progress *first = &c->progress[0], *last = &c->progress[c->progress_count - 1];
  int64_t total = c->usage.prompt_tokens, cached = c->usage.prompt_cached_tokens;
  CHECK_INT_EQ(first->processed_tokens, cached);
  CHECK_INT_EQ(first->media_items_encoded, 0);
  CHECK_INT_EQ(last->processed_tokens, total);
  CHECK_INT_EQ(last->media_items_encoded, items);
  int64_t chunks = (total - cached + chunk - 1) / chunk;
  CHECK_INT_EQ(c->progress_count, 1 + items + chunks);
  for (int i = 1; i < c->progress_count; i++) {
    const vlm_engine_progress *before = &c->progress[i - 1], *now = &c->progress[i];
    CHECK_INT_EQ(now->prompt_tokens, total);
    CHECK_INT_EQ(now->cached_tokens, cached);
    CHECK_INT_EQ(now->media_items, items);
    int64_t step = now->processed_tokens - before->processed_tokens;
    bool encoded = now->media_items_encoded == before->media_items_encoded + 1;
    CHECK(encoded ? step == 0 : step > 0 && step <= chunk);
    CHECK(now->seconds >= before->seconds);
  }
  char line[256];
  vlm_engine_progress_describe(&c->progress[1], line, sizeof(line));
  CHECK(strstr(line, "prompt tokens (") != NULL);
}

static void progress_events_say_how_far_the_prompt_is(void) {
  vlm_engine_options options = {.thread_count = 2, .slot_count = 1, .capacity = 256, .prefill_chunk = 7,
                                .prefix_cache_bytes = 1 << 20};
  vlm_model *opened = NULL;
  vlm_engine *engine = NULL;
  CHECK_OK(vlm_model_open(TEXT_MODEL, NULL, &opened));
  if (opened) CHECK_OK(vlm_engine_open(opened, &options, &engine));
  vlm_model_release(opened);
  if (!engine) return;
  const char *messages = user_message("Tell me a story about a cat and a dog, and then another one", 0);
  collected quiet, first, again;
  run_alone(engine, text_request(engine, messages, 4), &quiet);
  CHECK_INT_EQ(quiet.progress_count, 0); /* not asked for */
  vlm_engine_request_options asked = text_request(engine, user_message("Tell me a story about a dog", 0), 4);
  asked.progress = true;
  run_alone(engine, asked, &first); /* shares the system prompt with the first */
  CHECK(first.usage.prompt_tokens > first.usage.prompt_cached_tokens + 7); /* two chunks or more */
  check_progress(&first, 7, 0);
  asked.messages_json = messages; /* all of it is cached now */
  run_alone(engine, asked, &again);
  CHECK(again.usage.prompt_cached_tokens > first.usage.prompt_cached_tokens);
  check_progress(&again, 7, 0);
  CHECK(same_tokens(&quiet, &again));
  collected_destroy(&quiet);
  collected_destroy(&first);
  collected_destroy(&again);
  vlm_engine_release(engine);

  /* An image: one more event, when it is encoded. */
  vlm_golden_case golden;
  CHECK_OK(vlm_golden_case_open(ONE_IMAGE, NULL, &golden));
  vlm_engine *images = open_engine(IMAGE_MODEL, 1, 0, 1024);
  if (images) {
    vlm_loaded_image image = {0};
    golden_image(&golden, &image);
    vlm_engine_request_options request = text_request(images, user_message("What is this?", 1), 2);
    request.images = &image;
    request.image_count = 1;
    request.progress = true;
    collected with_image;
    run_alone(images, request, &with_image);
    CHECK_INT_EQ(with_image.usage.prompt_image_tokens, 576);
    check_progress(&with_image, 7, 1);
    collected_destroy(&with_image);
    vlm_engine_release(images);
  }
  vlm_golden_case_close(&golden);
}

/* n choices of one request (vlm_engine_request_options.n): each its own
 * collected, routed by event->choice. */
typedef struct choices {
  collected choice[4];
  int stray;               /* events for a choice out of range */
} choices;

static void on_choice_event(void *context, const vlm_engine_event *event) {
  choices *c = context;
  if (event->choice < 0 || event->choice >= 4) {
    c->stray++;
    return;
  }
  on_event(&c->choice[event->choice], event);
}

static void run_choices(vlm_engine *engine, vlm_engine_request_options options, choices *out, bool cancel_at_once) {
  memset(out, 0, sizeof(*out));
  for (int i = 0; i < 4; i++) collected_init(&out->choice[i]);
  vlm_engine_request *request = NULL;
  CHECK_OK(vlm_engine_submit(engine, &options, on_choice_event, out, &request));
  if (cancel_at_once) vlm_engine_cancel(request);
  for (int i = 0; request && i < options.n; i++) wait_finished(&out->choice[i]);
  vlm_engine_request_release(request);
}

static void choices_destroy(choices *c) {
  for (int i = 0; i < 4; i++) collected_destroy(&c->choice[i]);
}

static uint64_t prefill_tokens(vlm_engine *engine) {
  vlm_engine_metrics metrics;
  vlm_engine_get_metrics(engine, &metrics);
  return metrics.prefill_tokens_total;
}

static void choices_share_one_prefill(void) {
  vlm_engine *engine = open_engine(TEXT_MODEL, 3, 0, 256);
  if (!engine) return;
  const char *messages = user_message("Tell me a story about a cat and a dog", 0);
  collected alone;
  run_alone(engine, text_request(engine, messages, 12), &alone);
  /* Greedy: every choice is the n = 1 completion, and the prompt was
   * prefilled once for the three. */
  uint64_t before = prefill_tokens(engine);
  vlm_engine_request_options options = text_request(engine, messages, 12);
  options.n = 3;
  choices greedy;
  run_choices(engine, options, &greedy, false);
  CHECK_INT_EQ(prefill_tokens(engine) - before, alone.usage.prompt_tokens);
  for (int i = 0; i < 3; i++) {
    CHECK_INT_EQ(greedy.choice[i].code, VLM_STATUS_OK);
    CHECK(same_tokens(&alone, &greedy.choice[i]));
    CHECK_INT_EQ(greedy.choice[i].usage.prompt_tokens, alone.usage.prompt_tokens);
    CHECK(!greedy.choice[i].token_after_finish);
  }
  CHECK_INT_EQ(greedy.stray, 0);
  choices_destroy(&greedy);

  /* Sampled with a seed: choice 0 is the n = 1 request's sample, choice i
   * samples with seed + i, and the whole set is reproducible. */
  vlm_engine_request_options sampled = text_request(engine, messages, 16);
  sampled.sampling.temperature = 1.5f;
  sampled.sampling.seed = 41;
  collected single;
  run_alone(engine, sampled, &single);
  sampled.n = 3;
  choices first, again;
  run_choices(engine, sampled, &first, false);
  run_choices(engine, sampled, &again, false);
  CHECK(same_tokens(&single, &first.choice[0]));
  bool differ = false;
  for (int i = 0; i < 3; i++) {
    CHECK(same_tokens(&first.choice[i], &again.choice[i]));
    differ = differ || !same_tokens(&first.choice[0], &first.choice[i]);
  }
  CHECK(differ);
  vlm_engine_request_options next = sampled;
  next.n = 1;
  next.sampling.seed = 42; /* choice 1's seed, alone */
  collected second;
  run_alone(engine, next, &second);
  CHECK(same_tokens(&second, &first.choice[1]));
  choices_destroy(&first);
  choices_destroy(&again);
  collected_destroy(&second);
  collected_destroy(&single);

  /* Cancelled at once: every choice gets its FINISH and every slot is free. */
  vlm_engine_request_options longer = text_request(engine, messages, 64);
  longer.n = 3;
  longer.sampling.temperature = 1;
  choices cancelled;
  run_choices(engine, longer, &cancelled, true);
  for (int i = 0; i < 3; i++) CHECK(cancelled.choice[i].finished);
  choices_destroy(&cancelled);
  vlm_engine_metrics metrics;
  vlm_engine_get_metrics(engine, &metrics);
  CHECK_INT_EQ(metrics.active_slots, 0);
  CHECK_INT_EQ(metrics.kv_positions_used, 0);

  /* Refused up front: more choices than slots, or than the cap. */
  vlm_engine_request *request = NULL;
  collected unused;
  collected_init(&unused);
  options.n = 4;
  CHECK_ERROR(vlm_engine_submit(engine, &options, on_event, &unused, &request), VLM_STATUS_INVALID_ARGUMENT,
              "each choice needs a slot");
  options.n = VLM_ENGINE_MAX_CHOICES + 1;
  CHECK_ERROR(vlm_engine_submit(engine, &options, on_event, &unused, &request), VLM_STATUS_INVALID_ARGUMENT,
              "at most 16 choices");
  options.n = -1;
  CHECK_ERROR(vlm_engine_check_admission(engine, &options, NULL), VLM_STATUS_INVALID_ARGUMENT, "n must be");
  collected_destroy(&unused);
  collected_destroy(&alone);
  vlm_engine_release(engine);
}

TEST_MAIN(TEST(batched_text_equals_alone), TEST(image_and_text_batch_without_leaks),
          TEST(admission_refuses_before_work), TEST(absurd_max_tokens_is_refused),
          TEST(cancellation_frees_the_slot),
          TEST(stop_strings_and_logprobs), TEST(progress_events_say_how_far_the_prompt_is),
          TEST(choices_share_one_prefill))
