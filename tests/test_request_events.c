/* request_events_wait enforces --request-timeout also for a reader that
 * never has to wait. A streaming response's reader calls it between
 * chunks; when the model produces tokens faster than the reader takes them
 * (a slow client, a loaded machine: the browser test running beside the
 * server tests), every call found tokens ready and returned before the
 * deadline was looked at, so the stream ran to max_tokens long past its
 * limit (tests/server/test_http.py's timeout test failed under load). */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "server/connection_guard.h"
#include "server/request_events.h"
#include "test.h"
#include "vlm/engine.h"
#include "vlm/model.h"

#define TEXT_MODEL VLM_SOURCE_DIR "/tests/models/llava"

static size_t token_count(request_events *events) {
  pthread_mutex_lock(&events->mutex);
  size_t count = events->token_count;
  pthread_mutex_unlock(&events->mutex);
  return count;
}

static void a_reader_that_never_waits_still_meets_its_deadline(void) {
  vlm_model *model = NULL;
  CHECK_OK(vlm_model_open(TEXT_MODEL, NULL, &model));
  if (!model) return;
  vlm_engine_options options = {.slot_count = 1, .thread_count = 1};
  vlm_engine *engine = NULL;
  CHECK_OK(vlm_engine_open(model, &options, &engine));
  vlm_model_release(model);
  if (!engine) return;
  vlm_engine_info info;
  vlm_engine_get_info(engine, &info);

  request_events events;
  request_events_init(&events);
  vlm_engine_request_options request = {
      .messages_json = "[{\"role\":\"user\",\"content\":\"hello\"}]",
      .max_tokens = info.capacity - 64, /* thousands of tokens: far longer than the deadline */
      .sampling = vlm_engine_default_sampling(engine)};
  CHECK_OK(vlm_engine_submit(engine, &request, request_events_callback, &events, &events.request));
  if (events.request) {
    /* Behind from the start: the first tokens are in before reading. */
    while (token_count(&events) < 8 && !events.finished) {
      struct timespec pause = {0, 1000000};
      nanosleep(&pause, NULL);
    }
    events.deadline = connection_guard_now(); /* already due */
    /* Always asks for tokens it has seen: every call finds them ready,
     * never waits (and so never looks at the connection, NULL here). */
    double give_up = connection_guard_now() + 30;
    bool finished = false;
    while (!finished && connection_guard_now() < give_up) {
      CHECK_INT_EQ(request_events_wait(&events, 0, NULL), WAIT_READY);
      pthread_mutex_lock(&events.mutex);
      finished = events.finished;
      pthread_mutex_unlock(&events.mutex);
    }
    CHECK(finished);
    CHECK(events.timed_out);
    CHECK_INT_EQ(events.finish_code, VLM_STATUS_CANCELLED);
    CHECK(events.usage.completion_tokens < request.max_tokens);
  }
  request_events_destroy(&events);
  vlm_engine_release(engine);
}

TEST_MAIN(TEST(a_reader_that_never_waits_still_meets_its_deadline))
