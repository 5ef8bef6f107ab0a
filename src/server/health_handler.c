/* GET /health, /health/live and /health/ready: what an orchestrator asks.
 *
 * The split follows Kubernetes' probes (and KServe's /v2/health/live and
 * /ready, llama-server's 503 "loading"): liveness says the process answers
 * HTTP and should not be restarted; readiness says a completion sent now
 * would be taken, so a load balancer may route here. `vlm serve` binds
 * before it opens the model (vlm_server_start_loading), so while the
 * weights map and, on the xla backend, the modules compile, the server is
 * live but not ready instead of refusing connections.
 *
 *   /health/live   200 {"status":"ok"} whenever the process answers.
 *   /health/ready  200 {"status":"ready",...}; 503 {"status":"not_ready",
 *                  "reason":"loading"|"shutting_down"|"queue_full",...}.
 *   /health        what it always was: 200 {"status":"ok"} while serving,
 *                  503 {"status":"shutting_down"} while draining, and now
 *                  503 {"status":"loading"} before the model is in (where it
 *                  used to refuse the connection).
 *
 * None needs the API key. */
#include <stdlib.h>
#include <string.h>

#include "server/server_internal.h"

bool server_is_ready(vlm_server *server) { return atomic_load_explicit(&server->ready, memory_order_acquire); }

static const char *not_ready_reason(vlm_server *server, const vlm_engine_metrics *metrics) {
  if (atomic_load(&server->shutting_down)) return "shutting_down";
  if (!server_is_ready(server)) return "loading";
  if (metrics->queue_depth >= server->info.queue_limit) return "queue_full";
  return NULL;
}

static char *readiness(vlm_server *server, int *out_status) {
  vlm_engine_metrics metrics;
  memset(&metrics, 0, sizeof(metrics));
  bool ready = server_is_ready(server);
  if (ready) vlm_engine_get_metrics(server->engine, &metrics);
  const char *reason = not_ready_reason(server, &metrics);
  *out_status = reason ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK;
  vlm_string_builder out = {0};
  if (reason) vlm_sb_appendf(&out, "{\"status\":\"not_ready\",\"reason\":\"%s\"", reason);
  else vlm_sb_append_literal(&out, "{\"status\":\"ready\"");
  if (ready)
    vlm_sb_appendf(&out, ",\"queue_depth\":%lld,\"queue_limit\":%d,\"active_slots\":%d,\"slots\":%d",
                   (long long)metrics.queue_depth, (int)server->info.queue_limit, (int)metrics.active_slots,
                   (int)metrics.slot_count);
  vlm_sb_append_literal(&out, "}");
  return vlm_sb_finish(&out);
}

static const char *health_status(vlm_server *server) {
  if (atomic_load(&server->shutting_down)) return "shutting_down";
  if (!server_is_ready(server)) return "loading";
  return NULL;
}

enum MHD_Result health_respond(vlm_server *server, struct MHD_Connection *connection,
                               http_request *request) {
  if (request->route == ROUTE_HEALTH_LIVE)
    return server_respond(server, connection, request, MHD_HTTP_OK, "application/json",
                          strdup("{\"status\":\"ok\"}"));
  if (request->route == ROUTE_HEALTH_READY) {
    int status = MHD_HTTP_OK;
    char *body = readiness(server, &status);
    return server_respond(server, connection, request, status, "application/json", body);
  }
  const char *problem = health_status(server);
  vlm_string_builder out = {0};
  vlm_sb_appendf(&out, "{\"status\":\"%s\"}", problem ? problem : "ok");
  return server_respond(server, connection, request, problem ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK,
                        "application/json", vlm_sb_finish(&out));
}
