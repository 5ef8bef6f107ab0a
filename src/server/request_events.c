/* The per-request event queue between the engine's scheduler thread and a
 * connection thread (see request_events.h). */
#include "server/request_events.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "server/server_internal.h"

/* How often a waiting connection thread checks that its client is still
 * there: a disconnect frees the slot within this time. */
#define CLIENT_CHECK_MILLISECONDS 100

void request_events_init(request_events *events) {
  memset(events, 0, sizeof(*events));
  pthread_mutex_init(&events->mutex, NULL);
  /* Timed waits use CLOCK_MONOTONIC so a wall-clock step cannot stall them. */
  pthread_condattr_t attributes;
  pthread_condattr_init(&attributes);
  pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
  pthread_cond_init(&events->changed, &attributes);
  pthread_condattr_destroy(&attributes);
  atomic_init(&events->cancel, false);
}

static void free_logprob(event_logprob *logprob) {
  free(logprob->text);
  logprob->text = NULL;
}

static void free_token(event_token *token) {
  free(token->text);
  free_logprob(&token->logprob);
  for (int32_t i = 0; i < token->top_logprob_count; i++) free_logprob(&token->top_logprobs[i]);
  free(token->top_logprobs);
}

void request_events_release_request(request_events *events) {
  atomic_store(&events->cancel, true);
  /* After vlm_engine_request_release returns no callback runs for the
   * request, so the queue may be freed right after. The handle is only
   * touched by the connection thread that owns this queue. */
  if (events->request && events->request_borrowed) vlm_engine_cancel(events->request);
  else if (events->request) vlm_engine_request_release(events->request);
  events->request = NULL;
}

void request_events_destroy(request_events *events) {
  request_events_release_request(events);
  for (size_t i = 0; i < events->token_count; i++) free_token(&events->tokens[i]);
  free(events->tokens);
  free(events->finish_message);
  free(events->full_text);
  pthread_cond_destroy(&events->changed);
  pthread_mutex_destroy(&events->mutex);
}

/* A copy of `length` bytes plus a NUL; NULL only when out of memory. */
static char *copy_bytes(const char *bytes, size_t length) {
  char *copy = malloc(length + 1);
  if (!copy) return NULL;
  if (length) memcpy(copy, bytes, length);
  copy[length] = '\0';
  return copy;
}

static bool copy_logprob(const vlm_engine_token_logprob *source, event_logprob *target) {
  target->token = source->token;
  target->logprob = source->logprob;
  target->text_length = source->text_length;
  target->text = copy_bytes(source->text ? source->text : "", source->text ? source->text_length : 0);
  if (!source->text) target->text_length = 0;
  return target->text != NULL;
}

static bool copy_token(const vlm_engine_event *event, event_token *token) {
  memset(token, 0, sizeof(*token));
  token->token = event->token;
  token->text_length = event->text ? event->text_length : 0;
  token->text = copy_bytes(event->text ? event->text : "", token->text_length);
  if (!token->text) return false;
  if (!event->has_logprob) return true;
  token->has_logprob = true;
  if (!copy_logprob(&event->logprob, &token->logprob)) return false;
  if (event->top_logprob_count <= 0) return true;
  token->top_logprobs = calloc((size_t)event->top_logprob_count, sizeof(event_logprob));
  if (!token->top_logprobs) return false;
  for (int32_t i = 0; i < event->top_logprob_count; i++) {
    token->top_logprob_count = i + 1;
    if (!copy_logprob(&event->top_logprobs[i], &token->top_logprobs[i])) return false;
  }
  return true;
}

static void append_token(request_events *events, const vlm_engine_event *event) {
  if (events->token_count == events->token_capacity) {
    size_t capacity = events->token_capacity ? events->token_capacity * 2 : 64;
    event_token *grown = realloc(events->tokens, capacity * sizeof(*grown));
    if (!grown) {
      events->out_of_memory = true;
      return;
    }
    events->tokens = grown;
    events->token_capacity = capacity;
  }
  event_token *token = &events->tokens[events->token_count];
  bool copied = copy_token(event, token);
  events->token_count++; /* counted even when partly copied, so it is freed */
  if (!copied) events->out_of_memory = true;
}

static void record_finish(request_events *events, const vlm_engine_event *event) {
  events->finished = true;
  events->finish_code = vlm_status_code_of(event->status);
  if (event->status) events->finish_message = strdup(vlm_status_message(event->status));
  snprintf(events->finish_reason, sizeof(events->finish_reason), "%s",
           event->finish_reason ? event->finish_reason : "stop");
  if (event->full_text) {
    events->full_text = copy_bytes(event->full_text, event->full_text_length);
    if (!events->full_text) events->out_of_memory = true;
    events->full_text_length = event->full_text_length;
  }
  events->usage = event->usage;
  events->timings = event->timings;
}

/* The prompt's progress, kept for the stream. */
static void record_progress(request_events *events, const vlm_engine_event *event) {
  events->progress = event->progress;
  events->progress_count++;
}

/* One short line per prefill chunk, on the scheduler thread (outside the
 * queue's lock, so a slow stderr holds up no reader). log_id is written
 * before the request is submitted and never after. */
static void log_progress(const request_events *events, const vlm_engine_event *event) {
  if (vlm_log_get_level() > VLM_LOG_INFO) return;
  char line[256];
  vlm_engine_progress_describe(&event->progress, line, sizeof(line));
  VLM_LOG_INFOF("serve: request %s: prefill %s", events->log_id[0] ? events->log_id : "-", line);
}

static bool has_news(const request_events *events, size_t seen) {
  return events->finished || events->token_count > seen ||
         (events->wake_on_progress && events->progress_count > events->progress_seen);
}

void request_events_callback(void *context, const vlm_engine_event *event) {
  request_events *events = context;
  pthread_mutex_lock(&events->mutex);
  if (event->kind == VLM_ENGINE_EVENT_TOKEN) append_token(events, event);
  else if (event->kind == VLM_ENGINE_EVENT_PROGRESS) record_progress(events, event);
  else record_finish(events, event);
  pthread_cond_signal(&events->changed);
  pthread_mutex_unlock(&events->mutex);
  if (event->kind == VLM_ENGINE_EVENT_PROGRESS) log_progress(events, event);
}

static struct timespec deadline_after_milliseconds(int milliseconds) {
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_nsec += (long)milliseconds * 1000000L;
  while (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_nsec -= 1000000000L;
    deadline.tv_sec++;
  }
  return deadline;
}

wait_result request_events_wait(request_events *events, size_t seen,
                                struct MHD_Connection *connection) {
  for (;;) {
    pthread_mutex_lock(&events->mutex);
    struct timespec deadline = deadline_after_milliseconds(CLIENT_CHECK_MILLISECONDS);
    int waited = 0;
    while (!has_news(events, seen) && waited != ETIMEDOUT)
      waited = pthread_cond_timedwait(&events->changed, &events->mutex, &deadline);
    bool ready = has_news(events, seen);
    pthread_mutex_unlock(&events->mutex);
    /* Checked on every call, not only after a wait: a reader that never
     * catches up with the model (a slow client, a loaded machine) never
     * waits, and its request would run past --request-timeout. */
    if (events->deadline > 0 && !events->timed_out && events->request &&
        connection_guard_now() >= events->deadline) {
      events->timed_out = true;
      vlm_engine_cancel(events->request); /* its FINISH (CANCELLED) follows within a step */
    }
    if (ready) return WAIT_READY;
    if (server_client_gone(connection)) {
      request_events_release_request(events);
      return WAIT_CLIENT_GONE;
    }
  }
}
