/* What the server's files share: the server object, the HTTP helpers of
 * http_server.c, the handlers of chat_handler.c and the builders of
 * responses.c and metrics.c. Not part of any public interface. */
#ifndef VLM_SERVER_SERVER_INTERNAL_H
#define VLM_SERVER_SERVER_INTERNAL_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "io/json.h"
#include "server/media_source.h"
#include "server/openai_request.h"
#include "server/server.h"

/* Routes, for per-route request counters in /metrics. */
typedef enum server_route {
  ROUTE_CHAT_COMPLETIONS,
  ROUTE_COMPLETIONS,
  ROUTE_MODELS,
  ROUTE_HEALTH,
  ROUTE_METRICS,
  ROUTE_OTHER,
  ROUTE_COUNT,
} server_route;

/* HTTP statuses the server answers with, for counters; the last entry
 * counts any other. */
#define SERVER_STATUS_KINDS 10
extern const int server_counted_statuses[SERVER_STATUS_KINDS];
const char *server_route_name(server_route route);

struct vlm_server {
  vlm_engine *engine;
  vlm_engine_info info;
  vlm_server_options options;   /* defaults filled in */
  char *model_id;
  media_policy media;
  struct MHD_Daemon *daemon;
  int port;
  int64_t started_at;           /* unix seconds, "created" in /v1/models */
  atomic_bool shutting_down;
  atomic_int active_requests;   /* completions being answered, until their response is freed */
  _Atomic uint64_t responses[ROUTE_COUNT][SERVER_STATUS_KINDS];
  _Atomic uint64_t client_disconnects; /* requests cancelled because the client went away */
};

/* http_server.c: queue a response and count it. `body` is taken (freed
 * here, also on failure); NULL means out of memory and becomes a 500. */
enum MHD_Result server_respond(vlm_server *server, struct MHD_Connection *connection,
                               server_route route, int http_status, const char *content_type,
                               char *body);
enum MHD_Result server_respond_error(vlm_server *server, struct MHD_Connection *connection,
                                     server_route route, const openai_error *error);
/* Counts a response queued elsewhere (the streaming one). */
void server_count_response(vlm_server *server, server_route route, int http_status);
/* True when the client closed its side of the connection (or the socket
 * failed): polled while a request waits for the engine. */
bool server_client_gone(struct MHD_Connection *connection);

/* chat_handler.c: POST /v1/chat/completions and /v1/completions with the
 * whole body received. */
enum MHD_Result chat_handle(vlm_server *server, struct MHD_Connection *connection,
                            openai_endpoint endpoint, const char *body, size_t length);

/* metrics.c: the Prometheus text exposition; NULL if out of memory. */
char *metrics_render(vlm_server *server);
/* responses.c: GET /v1/models; NULL if out of memory. */
char *response_models(const vlm_server *server);

#endif
