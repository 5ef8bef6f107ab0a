/* One submitted request's events, handed from the engine's scheduler thread
 * to the connection thread that answers it.
 *
 * The engine calls request_events_callback on its scheduler thread; that
 * must never block for long, so it only copies the event into this queue
 * (under a mutex) and signals a condition variable. The connection thread
 * waits on it, in short slices, checking between slices whether the client
 * is still there; when it is not, the request is released (cancelled) at
 * once, freeing its slot. */
#ifndef VLM_SERVER_REQUEST_EVENTS_H
#define VLM_SERVER_REQUEST_EVENTS_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vlm/engine.h"

typedef struct event_logprob {
  int32_t token;
  float logprob;
  char *text;                   /* the token's bytes (may be partial UTF-8) */
  size_t text_length;
} event_logprob;

typedef struct event_token {
  char *text;                   /* new completion text (valid UTF-8, maybe empty) */
  size_t text_length;
  int32_t token;
  bool has_logprob;
  event_logprob logprob;
  event_logprob *top_logprobs;
  int32_t top_logprob_count;
} event_token;

typedef struct request_events {
  pthread_mutex_t mutex;
  pthread_cond_t changed;
  /* Every token so far (kept for non-streaming logprobs). */
  event_token *tokens;
  size_t token_count, token_capacity;
  bool finished;
  bool out_of_memory;           /* an event could not be copied: the answer fails */
  /* The FINISH event, copied. */
  vlm_status_code finish_code;
  char *finish_message;
  char finish_reason[16];
  char *full_text;
  size_t full_text_length;
  vlm_engine_usage usage;
  vlm_engine_timings timings;
  /* PROGRESS events (when the request asked for them): the latest, and how
   * many came. With wake_on_progress set, request_events_wait also returns
   * when progress_count passed progress_seen (the reader's count, which it
   * updates under the mutex). Each is logged at info with log_id. */
  vlm_engine_progress progress;
  uint64_t progress_count, progress_seen;
  bool wake_on_progress;
  char log_id[136];             /* the HTTP request's id (HTTP_REQUEST_ID_MAX + 1 fits) */

  vlm_engine_request *request;  /* NULL once released */
  /* Another choice's handle (n > 1: every choice of one engine request
   * sees its events here, the first choice's queue owns it): releasing
   * only cancels it, and the owner must outlive this queue's use of it. */
  bool request_borrowed;
  atomic_bool cancel;           /* polled by media fetching and image decoding */
  /* --request-timeout: past it, request_events_wait cancels the engine
   * request (vlm_engine_cancel) and waits for its FINISH. */
  double deadline;              /* monotonic seconds (connection_guard_now); 0: none */
  bool timed_out;               /* the deadline cancelled it */
} request_events;

void request_events_init(request_events *events);
/* Releases the engine request (cancelling it if still running) and frees
 * everything. */
void request_events_destroy(request_events *events);
/* The vlm_engine_event_callback; `context` is the request_events. */
void request_events_callback(void *context, const vlm_engine_event *event);

typedef enum wait_result {
  WAIT_READY,                   /* more tokens than `seen`, or finished */
  WAIT_CLIENT_GONE,             /* the client disconnected: request released */
} wait_result;

/* Waits until there are more than `seen` tokens or the request finished
 * (or, with wake_on_progress, a progress event the reader has not seen).
 * Checks the client and the deadline every 100 ms while waiting. */
wait_result request_events_wait(request_events *events, size_t seen,
                                struct MHD_Connection *connection);
/* Cancels and forgets the engine request (idempotent). */
void request_events_release_request(request_events *events);

#endif
