/* What the server's files share: the server object, the per-request
 * record, the HTTP helpers of http_server.c, the handlers of
 * chat_handler.c and the builders of responses.c and metrics.c. Not part
 * of any public interface. */
#ifndef VLM_SERVER_SERVER_INTERNAL_H
#define VLM_SERVER_SERVER_INTERNAL_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "io/json.h"
#include "server/connection_guard.h"
#include "server/http_policy.h"
#include "server/media_source.h"
#include "server/openai_request.h"
#include "server/reasoning.h"
#include "server/server.h"

/* Routes, for per-route request counters in /metrics. */
typedef enum server_route {
  ROUTE_CHAT_COMPLETIONS,
  ROUTE_COMPLETIONS,
  ROUTE_MODELS,
  ROUTE_HEALTH,
  ROUTE_HEALTH_LIVE,
  ROUTE_HEALTH_READY,
  ROUTE_METRICS,
  ROUTE_TOKENIZE,               /* POST /tokenize, /detokenize (vLLM's) */
  ROUTE_DETOKENIZE,
  ROUTE_UI,                     /* GET / and the page's files under /ui/ */
  ROUTE_OTHER,
  ROUTE_COUNT,
} server_route;

/* HTTP statuses the server answers with, for counters; the last entry
 * counts any other. */
#define SERVER_STATUS_KINDS 15
extern const int server_counted_statuses[SERVER_STATUS_KINDS];
const char *server_route_name(server_route route);

struct vlm_server {
  /* NULL until vlm_server_attach_engine; engine, info, model_id and
   * content_format are written once before `ready` is set (release) and
   * read only by those who saw it set (acquire). */
  vlm_engine *engine;
  atomic_bool ready;
  vlm_engine_info info;
  vlm_server_options options;   /* defaults filled in */
  char *model_id;
  /* How chat content reaches the model's template (vLLM's content format). */
  openai_content_format content_format;
  const struct tool_format *tool_format; /* NULL: none known (written with content_format) */
  reasoning_kind reasoning;     /* chat answers' reasoning parser (written with content_format) */
  media_policy media;
  struct MHD_Daemon *daemon;
  connection_guard *guard;
  http_name_list allowed_hosts, allowed_origins;
  http_host_policy host_policy;
  int port;
  int64_t started_at;           /* unix seconds, "created" in /v1/models */
  atomic_bool shutting_down;
  atomic_int active_requests;   /* completions being answered, until their response is freed */
  _Atomic uint64_t responses[ROUTE_COUNT][SERVER_STATUS_KINDS];
  _Atomic uint64_t client_disconnects; /* requests cancelled because the client went away */
  _Atomic uint64_t requests_timed_out; /* past --request-timeout */
};

/* One HTTP request, from its headers to libmicrohttpd's completion
 * notification (the connection's request-scoped pointer). What the access
 * log line reports is gathered here. */
typedef struct http_request {
  server_route route;
  const char *method;           /* libmicrohttpd's, valid for the request */
  const char *url;              /* the same */
  char id[HTTP_REQUEST_ID_MAX + 1];
  guarded_connection *guarded;  /* the connection's deadlines; may be NULL */
  double started;               /* monotonic seconds, when the headers were in */
  double deadline;              /* --request-timeout; 0: none */
  int status;                   /* of the response queued; 0: none (yet) */
  bool stream;
  bool timed_out;
  int64_t prompt_tokens, completion_tokens;
  /* The body, collected (at most max_body_bytes) or drained. */
  char *body;
  size_t length, capacity;
  bool too_large;
  long long declared;           /* Content-Length; -1: chunked */
  /* The body budget had no room for it (a chunked body, found while it
   * arrived): dropped, answered 503 once it ended. */
  body_reservation over_budget;
  /* A refusal decided from the headers, answered once the (small) body is
   * drained so the connection can be kept alive. */
  bool refused;
  openai_error refusal;
  const char *const *refusal_headers;
} http_request;

/* http_server.c: queue a response and count it. `body` is taken (freed
 * here, also on failure); NULL means out of memory and becomes a 500. */
enum MHD_Result server_respond(vlm_server *server, struct MHD_Connection *connection,
                               http_request *request, int http_status, const char *content_type,
                               char *body);
enum MHD_Result server_respond_error(vlm_server *server, struct MHD_Connection *connection,
                                     http_request *request, const openai_error *error);
/* Queues a response built elsewhere (the streaming one) with the headers
 * every response carries, and counts it. */
enum MHD_Result server_queue_response(vlm_server *server, struct MHD_Connection *connection,
                                      http_request *request, int http_status,
                                      struct MHD_Response *response);
/* True when the client closed its side of the connection (or the socket
 * failed): polled while a request waits for the engine. */
bool server_client_gone(struct MHD_Connection *connection);

/* chat_handler.c: POST /v1/chat/completions and /v1/completions with the
 * whole body received (request->body, request->length). */
enum MHD_Result chat_handle(vlm_server *server, struct MHD_Connection *connection,
                            http_request *request, openai_endpoint endpoint);

/* tokenize_handler.c: POST /tokenize and /detokenize (vLLM's shapes). */
enum MHD_Result tokenize_handle(vlm_server *server, struct MHD_Connection *connection, http_request *request,
                                bool detokenize);

/* health_handler.c: GET /health, /health/live and /health/ready. */
enum MHD_Result health_respond(vlm_server *server, struct MHD_Connection *connection,
                               http_request *request);
/* The server has its engine (vlm_server_attach_engine ran). */
bool server_is_ready(vlm_server *server);

/* ui_handler.c: the chat page. ui_serves(url): whether the URL is one of
 * its files ("/" or "/ui/..."); ui_respond answers a GET for it. */
bool ui_serves(const char *url);
enum MHD_Result ui_respond(vlm_server *server, struct MHD_Connection *connection,
                           http_request *request);

/* metrics.c: the Prometheus text exposition; NULL if out of memory. */
char *metrics_render(vlm_server *server);
/* responses.c: GET /v1/models; NULL if out of memory. */
char *response_models(const vlm_server *server);

/* http_daemon.c: starting and stopping libmicrohttpd; http_server.c: its
 * callbacks. */
enum MHD_Result server_handle_access(void *context, struct MHD_Connection *connection,
                                     const char *url, const char *method, const char *version,
                                     const char *upload_data, size_t *upload_data_size,
                                     void **request_state);
void server_handle_completed(void *context, struct MHD_Connection *connection, void **request_state,
                             enum MHD_RequestTerminationCode termination);
size_t server_unescape_url(void *context, struct MHD_Connection *connection, char *text);

#endif
