/* The HTTP layer of `vlm serve`: routing, the checks made on a request's
 * line and headers (Host, Origin, method, API key, content type, sizes),
 * body collection, response headers (X-Request-ID), client-disconnect
 * detection and the access log. The completion endpoints live in
 * chat_handler.c; starting and stopping libmicrohttpd in http_daemon.c.
 *
 * libmicrohttpd calls server_handle_access first with the headers, then
 * with the body in pieces, then once more with nothing: a response is only
 * ever queued on that last call. Queued on the first one, libmicrohttpd
 * 0.9.75 stops reading the connection and closes it after the answer, so a
 * refused request (or a GET) used to cost its client the keep-alive
 * connection and any request pipelined behind it. A refusal is therefore
 * decided on the first call and answered after the body, which is drained
 * without being stored; only when that body is large or of unknown size
 * (or has a Transfer-Encoding it cannot be read in) is the answer given at
 * once, closing the connection. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/log.h"
#include "server/server_internal.h"

/* Refused requests with a declared body up to this size are drained (and
 * the connection kept); larger ones are answered at once and closed. */
#define DRAIN_LIMIT_BYTES ((size_t)64 << 10)

const int server_counted_statuses[SERVER_STATUS_KINDS] = {200, 304, 400, 401, 403, 404, 405, 413,
                                                          415, 429, 500, 501, 503, 504, 0};

static const char *const route_paths[ROUTE_COUNT] = {
    [ROUTE_CHAT_COMPLETIONS] = "/v1/chat/completions",
    [ROUTE_COMPLETIONS] = "/v1/completions",
    [ROUTE_MODELS] = "/v1/models",
    [ROUTE_HEALTH] = "/health",
    [ROUTE_HEALTH_LIVE] = "/health/live",
    [ROUTE_HEALTH_READY] = "/health/ready",
    [ROUTE_METRICS] = "/metrics",
    [ROUTE_TOKENIZE] = "/tokenize",
    [ROUTE_DETOKENIZE] = "/detokenize",
    [ROUTE_UI] = "/",
    [ROUTE_OTHER] = "other",
};

const char *server_route_name(server_route route) { return route_paths[route]; }

static bool is_health_route(server_route route) {
  return route == ROUTE_HEALTH || route == ROUTE_HEALTH_LIVE || route == ROUTE_HEALTH_READY;
}

/* ------------------------------------------------------------------------ */
/* Responses                                                                 */
/* ------------------------------------------------------------------------ */

static void count_response(vlm_server *server, server_route route, int http_status) {
  int kind = SERVER_STATUS_KINDS - 1;
  for (int i = 0; i < SERVER_STATUS_KINDS - 1; i++)
    if (server_counted_statuses[i] == http_status) kind = i;
  atomic_fetch_add(&server->responses[route][kind], 1);
}

enum MHD_Result server_queue_response(vlm_server *server, struct MHD_Connection *connection,
                                      http_request *request, int http_status,
                                      struct MHD_Response *response) {
  MHD_add_response_header(response, "X-Request-ID", request->id);
  /* API answers are JSON or event streams, never to be sniffed into HTML
   * nor kept by a cache (they carry completions, maybe private ones). The
   * chat page's files set their own caching (ui_handler.c). */
  if (request->route != ROUTE_UI) {
    MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  }
  /* While shutting down, keep-alive connections are closed after each answer. */
  if (atomic_load(&server->shutting_down))
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
  enum MHD_Result result = MHD_queue_response(connection, (unsigned)http_status, response);
  if (result == MHD_YES) request->status = http_status;
  count_response(server, request->route, http_status);
  return result;
}

/* Queues `body` (taken) with extra headers: NULL-terminated name, value pairs. */
static enum MHD_Result respond_with_headers(vlm_server *server, struct MHD_Connection *connection,
                                            http_request *request, int http_status,
                                            const char *content_type, char *body,
                                            const char *const *headers) {
  static const char out_of_memory[] =
      "{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\",\"param\":null,\"code\":null}}";
  struct MHD_Response *response;
  if (body) {
    response = MHD_create_response_from_buffer_with_free_callback(strlen(body), body, free);
  } else {
    http_status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    content_type = "application/json";
    response = MHD_create_response_from_buffer(sizeof(out_of_memory) - 1, (void *)out_of_memory,
                                               MHD_RESPMEM_PERSISTENT);
  }
  if (!response) {
    free(body);
    return MHD_NO;
  }
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
  for (size_t i = 0; headers && headers[i]; i += 2) MHD_add_response_header(response, headers[i], headers[i + 1]);
  enum MHD_Result result = server_queue_response(server, connection, request, http_status, response);
  MHD_destroy_response(response);
  return result;
}

enum MHD_Result server_respond(vlm_server *server, struct MHD_Connection *connection,
                               http_request *request, int http_status, const char *content_type,
                               char *body) {
  return respond_with_headers(server, connection, request, http_status, content_type, body, NULL);
}

static enum MHD_Result respond_error_with_headers(vlm_server *server, struct MHD_Connection *connection,
                                                  http_request *request, const openai_error *error,
                                                  const char *const *headers) {
  int status = error->http_status ? error->http_status : MHD_HTTP_INTERNAL_SERVER_ERROR;
  static const char *const authenticate[] = {MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer", NULL};
  if (status == MHD_HTTP_UNAUTHORIZED && !headers) headers = authenticate;
  char *json = openai_error_to_json(error);
  /* Every refusal with its reason and the request id, so an operator can
   * tell why a client got it: 4xx (and 503: loading, draining, busy) at
   * info, other 5xx at warn. The message is the one the client got; it
   * may quote a few bytes the client sent (a field name, a model id), so
   * it is cut short here and the log escapes control characters. */
  vlm_log(status >= 500 && status != 503 ? VLM_LOG_WARN : VLM_LOG_INFO,
          "serve: request %s: %d %s%s%.120s: %.240s", request->id, status, error->code ? error->code : error->type,
          error->param ? " param=" : "", error->param ? error->param : "",
          error->message ? error->message : "");
  return respond_with_headers(server, connection, request, status, "application/json", json, headers);
}

enum MHD_Result server_respond_error(vlm_server *server, struct MHD_Connection *connection,
                                     http_request *request, const openai_error *error) {
  return respond_error_with_headers(server, connection, request, error, NULL);
}

/* ------------------------------------------------------------------------ */
/* Client disconnects                                                        */
/* ------------------------------------------------------------------------ */

bool server_client_gone(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  return info && socket_peer_gone(info->connect_fd);
}

/* ------------------------------------------------------------------------ */
/* Refusals decided from the request line and headers                        */
/* ------------------------------------------------------------------------ */

static server_route find_route(const vlm_server *server, const char *url) {
  for (int route = 0; route < ROUTE_UI; route++)
    if (strcmp(url, route_paths[route]) == 0) return (server_route)route;
  if (!server->options.no_ui && ui_serves(url)) return ROUTE_UI;
  return ROUTE_OTHER;
}

static bool route_takes_post(server_route route) {
  return route == ROUTE_CHAT_COMPLETIONS || route == ROUTE_COMPLETIONS || route == ROUTE_TOKENIZE ||
         route == ROUTE_DETOKENIZE;
}

/* Compares in time that depends only on the lengths, so the key cannot be
 * guessed byte by byte from response times. */
static bool keys_match(const char *given, const char *expected) {
  size_t given_length = strlen(given), expected_length = strlen(expected);
  unsigned difference = given_length != expected_length;
  for (size_t i = 0; i < expected_length; i++)
    difference |= (unsigned char)expected[i] ^ (unsigned char)(i < given_length ? given[i] : 0);
  return difference == 0;
}

static const char *header_value(struct MHD_Connection *connection, const char *name) {
  return MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
}

static void refuse(http_request *request, int http_status, const char *type, const char *code,
                   const char *const *headers, const char *format, ...) __attribute__((format(printf, 6, 7)));

static void refuse(http_request *request, int http_status, const char *type, const char *code,
                   const char *const *headers, const char *format, ...) {
  char message[512];
  va_list arguments;
  va_start(arguments, format);
  vsnprintf(message, sizeof(message), format, arguments);
  va_end(arguments);
  request->refused = true;
  request->refusal_headers = headers;
  openai_error_set(&request->refusal, http_status, type, NULL, code, "%s", message);
}

static bool check_api_key(vlm_server *server, struct MHD_Connection *connection, http_request *request) {
  const char *key = server->options.api_key;
  /* The page itself is public: it asks its user for the key. */
  if (!key || !key[0] || is_health_route(request->route) || request->route == ROUTE_UI) return true;
  if (request->route == ROUTE_METRICS && server->options.public_metrics) return true;
  const char *header = header_value(connection, MHD_HTTP_HEADER_AUTHORIZATION);
  static const char bearer[] = "Bearer ";
  if (header && strncasecmp(header, bearer, sizeof(bearer) - 1) == 0 &&
      keys_match(header + sizeof(bearer) - 1, key))
    return true;
  refuse(request, MHD_HTTP_UNAUTHORIZED, "invalid_request_error", "invalid_api_key", NULL, "%s",
         header ? "Incorrect API key provided."
                : "You didn't provide an API key. Send it in an Authorization header: "
                  "'Authorization: Bearer YOUR_KEY'.");
  return false;
}

static bool check_method(struct MHD_Connection *connection, const char *url, const char *method,
                         http_request *request) {
  (void)connection;
  bool is_get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
  bool is_post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
  bool takes_post = route_takes_post(request->route);
  if (takes_post ? is_post : is_get) return true;
  static const char *const allow_post[] = {MHD_HTTP_HEADER_ALLOW, "POST", NULL};
  static const char *const allow_get[] = {MHD_HTTP_HEADER_ALLOW, "GET, HEAD", NULL};
  refuse(request, MHD_HTTP_METHOD_NOT_ALLOWED, "invalid_request_error", "method_not_allowed",
         takes_post ? allow_post : allow_get, "Method %.32s is not allowed for %s; use %s.", method, url,
         takes_post ? "POST" : "GET");
  return false;
}

/* Everything refused from the line and headers, in the order a client
 * would want to hear about it. */
static void check_headers(vlm_server *server, struct MHD_Connection *connection, const char *url,
                          const char *method, const char *version, http_request *request) {
  if (guarded_connection_take_nul_in_url(request->guarded)) {
    refuse(request, MHD_HTTP_BAD_REQUEST, "invalid_request_error", "invalid_url", NULL,
           "The request URL contains an encoded NUL byte (%%00).");
    return;
  }
  const char *host = header_value(connection, MHD_HTTP_HEADER_HOST);
  /* RFC 9112 3.2 (libmicrohttpd checks it only in its strict mode, whose
   * refusals are a closed connection or a garbled HTML body in 0.9.75). */
  if (!host && strcmp(version, MHD_HTTP_VERSION_1_1) == 0) {
    refuse(request, MHD_HTTP_BAD_REQUEST, "invalid_request_error", "missing_host", NULL,
           "An HTTP/1.1 request must have a Host header.");
    return;
  }
  if (!http_host_allowed(&server->host_policy, host)) {
    refuse(request, MHD_HTTP_FORBIDDEN, "invalid_request_error", "host_not_allowed", NULL,
           "The Host header '%.100s' is not allowed here (vlm serve --allowed-hosts).", host);
    return;
  }
  const char *origin = header_value(connection, "Origin");
  if (!http_origin_allowed(&server->host_policy, origin)) {
    refuse(request, MHD_HTTP_FORBIDDEN, "invalid_request_error", "origin_not_allowed", NULL,
           "Requests from the origin '%.100s' are not allowed (vlm serve --allowed-origins).", origin);
    return;
  }
  if (request->route == ROUTE_OTHER) {
    refuse(request, MHD_HTTP_NOT_FOUND, "invalid_request_error", "unknown_url", NULL,
           "Unknown request URL: %.32s %.160s.", method, url);
    return;
  }
  if (!check_method(connection, url, method, request) || !check_api_key(server, connection, request)) return;
  if (!server_is_ready(server) && (route_takes_post(request->route) || request->route == ROUTE_MODELS)) {
    static const char *const retry_after[] = {MHD_HTTP_HEADER_RETRY_AFTER, "5", NULL};
    refuse(request, MHD_HTTP_SERVICE_UNAVAILABLE, "server_error", "model_loading", retry_after,
           "The model is still loading; /health/ready answers 200 once it is ready.");
    return;
  }
  if (!route_takes_post(request->route)) return;
  if (atomic_load(&server->shutting_down)) {
    refuse(request, MHD_HTTP_SERVICE_UNAVAILABLE, "server_error", "server_shutting_down", NULL,
           "The server is shutting down.");
    return;
  }
  const char *content_type = header_value(connection, MHD_HTTP_HEADER_CONTENT_TYPE);
  if (!http_content_type_is_json(content_type)) {
    refuse(request, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "invalid_request_error", "unsupported_media_type",
           NULL, "The request body must be JSON, sent with 'Content-Type: application/json' (got %s%.80s%s).",
           content_type ? "'" : "", content_type ? content_type : "none", content_type ? "'" : "");
    return;
  }
  if (!http_content_type_charset_ok(content_type)) {
    refuse(request, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "invalid_request_error", "unsupported_charset", NULL,
           "The request body must be UTF-8 JSON (RFC 8259); 'Content-Type: %.80s' names another charset "
           "or is malformed.", content_type);
    return;
  }
  const char *coding = header_value(connection, MHD_HTTP_HEADER_CONTENT_ENCODING);
  if (!http_content_encoding_ok(coding))
    refuse(request, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "invalid_request_error", "unsupported_content_encoding",
           NULL, "Content-Encoding '%.40s' is not supported; send the body uncompressed.", coding);
}

/* ------------------------------------------------------------------------ */
/* Header syntax: what libmicrohttpd 0.9.75 lets through                     */
/* ------------------------------------------------------------------------ */

/* Headers that must appear at most once: two Hosts, Content-Lengths or
 * Transfer-Encodings are read differently by different parsers (a proxy
 * in front may route or frame by the other one: request smuggling). */
static const char *const single_headers[] = {MHD_HTTP_HEADER_HOST, MHD_HTTP_HEADER_CONTENT_LENGTH,
                                             MHD_HTTP_HEADER_TRANSFER_ENCODING, MHD_HTTP_HEADER_CONTENT_TYPE,
                                             MHD_HTTP_HEADER_CONTENT_ENCODING, MHD_HTTP_HEADER_AUTHORIZATION};
#define SINGLE_HEADER_COUNT (sizeof(single_headers) / sizeof(single_headers[0]))

typedef struct header_scan {
  const char *block_end;        /* the end of the header block in libmicrohttpd's buffer, or NULL */
  const char *block_start;
  const char *previous_key, *previous_value; /* the previous header, for its NUL check */
  size_t previous_key_size, previous_length;
  unsigned counts[SINGLE_HEADER_COUNT];
  const char *problem;          /* what is wrong, static text */
  char name[48];                /* the header it is about, printable */
} header_scan;

static void note_header_problem(header_scan *scan, const char *problem, const char *name, size_t length) {
  if (scan->problem) return;
  scan->problem = problem;
  size_t used = 0;
  for (size_t i = 0; i < length && used + 1 < sizeof(scan->name); i++) {
    unsigned char c = (unsigned char)name[i];
    scan->name[used++] = c > 0x20 && c < 0x7f && c != '\'' ? (char)c : '?';
  }
  scan->name[used] = '\0';
}

static bool inside_block(const header_scan *scan, const char *pointer) {
  return scan->block_end && pointer >= scan->block_start && pointer <= scan->block_end;
}

/* A NUL inside the previous value shows as bytes between its end and this
 * header's name (see http_header_value_is_whole); a line end is 2 NULs. */
static void check_previous_value(header_scan *scan, const char *next, size_t max_gap) {
  if (!scan->previous_value || !inside_block(scan, scan->previous_value) || !inside_block(scan, next)) return;
  if (!http_header_value_is_whole(scan->previous_value, scan->previous_length, next, max_gap))
    note_header_problem(scan, "has a value cut short by a NUL byte, or continued on a second line",
                        scan->previous_key, scan->previous_key_size);
}

static enum MHD_Result scan_header(void *context, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                   const char *value, size_t value_size) {
  (void)kind;
  header_scan *scan = context;
  check_previous_value(scan, key, 2);
  if (!http_header_name_ok(key, key_size))
    note_header_problem(scan, "has a name that is not an HTTP token (RFC 9110 5.1)", key, key_size);
  size_t length = value ? strlen(value) : 0;
  if (value && (length != value_size || !http_header_value_ok(value, length)))
    note_header_problem(scan, "has a control character in its value", key, key_size);
  for (size_t i = 0; i < SINGLE_HEADER_COUNT; i++)
    if (strlen(single_headers[i]) == key_size && strncasecmp(key, single_headers[i], key_size) == 0 &&
        ++scan->counts[i] == 2)
      note_header_problem(scan, "appears more than once", key, key_size);
  scan->previous_key = key;
  scan->previous_key_size = key_size;
  scan->previous_value = value;
  scan->previous_length = length;
  return MHD_YES;
}

/* Every header: its name a token, its value free of control bytes and of
 * a NUL libmicrohttpd would have cut it at, the framing and routing
 * headers at most once, and not both Content-Length and
 * Transfer-Encoding (RFC 9112 6.1: such a message may be an attempt at
 * request smuggling, and the connection must be closed after it). Only
 * what libmicrohttpd itself lets through is checked here. */
static bool check_header_syntax(struct MHD_Connection *connection, const char *method, http_request *request) {
  header_scan scan = {0};
  const union MHD_ConnectionInfo *size = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
  if (size && method) {
    scan.block_start = method; /* the request line starts the block, in place */
    scan.block_end = method + size->header_size;
  }
  MHD_get_connection_values_n(connection, MHD_HEADER_KIND, scan_header, &scan);
  /* The last value: its line end, then the empty line (2 + 2 NULs). */
  check_previous_value(&scan, scan.block_end, 4);
  static const char *const close_after[] = {MHD_HTTP_HEADER_CONNECTION, "close", NULL};
  if (scan.problem) {
    refuse(request, MHD_HTTP_BAD_REQUEST, "invalid_request_error", "invalid_header", close_after,
           "A request header%s%s%s %s.", scan.name[0] ? " '" : "", scan.name, scan.name[0] ? "'" : "",
           scan.problem);
    return false;
  }
  if (header_value(connection, MHD_HTTP_HEADER_CONTENT_LENGTH) &&
      header_value(connection, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
    refuse(request, MHD_HTTP_BAD_REQUEST, "invalid_request_error", "invalid_header", close_after,
           "A request may not have both Content-Length and Transfer-Encoding (RFC 9112 6.1); "
           "the connection is closed.");
    return false;
  }
  return true;
}

/* The declared body: -1 when of unknown size (chunked), else its length
 * (UINT64_MAX-ish values saturate). */
static long long declared_body_length(struct MHD_Connection *connection) {
  if (header_value(connection, MHD_HTTP_HEADER_TRANSFER_ENCODING)) return -1;
  const char *length = header_value(connection, MHD_HTTP_HEADER_CONTENT_LENGTH);
  if (!length) return 0;
  char *end = NULL;
  errno = 0;
  unsigned long long value = strtoull(length, &end, 10);
  return errno == ERANGE || value > (unsigned long long)LLONG_MAX ? LLONG_MAX : (long long)value;
}

/* 503: the bodies being received already hold the budget (or this
 * client's share of it). Transient: they finish within --body-timeout. */
static void refuse_over_budget(vlm_server *server, http_request *request) {
  static const char *const retry_close[] = {MHD_HTTP_HEADER_RETRY_AFTER, "1", MHD_HTTP_HEADER_CONNECTION, "close",
                                            NULL};
  bool total = request->over_budget == BODY_OVER_TOTAL;
  size_t limit = total ? server->options.max_body_memory : server->options.max_body_memory_per_client;
  refuse(request, MHD_HTTP_SERVICE_UNAVAILABLE, "server_error", "server_busy", retry_close,
         "The server is receiving as much request body as it holds at once (%zu MiB %s, --%s); retry later.",
         limit >> 20, total ? "from all clients" : "from one client address",
         total ? "max-body-memory-mb" : "max-body-memory-per-client-mb");
}

static enum MHD_Result respond_refusal(vlm_server *server, struct MHD_Connection *connection,
                                       http_request *request) {
  return respond_error_with_headers(server, connection, request, &request->refusal,
                                    request->refusal_headers);
}

/* ------------------------------------------------------------------------ */
/* GET routes                                                                */
/* ------------------------------------------------------------------------ */

static enum MHD_Result respond_get(vlm_server *server, struct MHD_Connection *connection,
                                   http_request *request) {
  switch (request->route) {
    case ROUTE_MODELS:
      return server_respond(server, connection, request, MHD_HTTP_OK, "application/json",
                            response_models(server));
    case ROUTE_METRICS:
      return server_respond(server, connection, request, MHD_HTTP_OK,
                            "text/plain; version=0.0.4; charset=utf-8", metrics_render(server));
    case ROUTE_UI:
      return ui_respond(server, connection, request);
    default:
      return health_respond(server, connection, request);
  }
}

/* ------------------------------------------------------------------------ */
/* A request's life                                                          */
/* ------------------------------------------------------------------------ */

/* The first call: headers are in, no body yet. */
static enum MHD_Result start_request(vlm_server *server, struct MHD_Connection *connection,
                                     const char *url, const char *method, const char *version,
                                     void **request_state) {
  http_request *request = calloc(1, sizeof(*request));
  if (!request) return MHD_NO;
  *request_state = request;
  request->route = find_route(server, url);
  request->method = method;
  request->url = url;
  request->started = connection_guard_now();
  double limit = server->options.request_timeout_seconds;
  request->deadline = limit > 0 ? request->started + limit : 0;
  request->guarded = connection_guard_find(connection);
  guarded_connection_headers_received(request->guarded);
  http_request_id_choose(header_value(connection, "X-Request-ID"), request->id);
  /* Framing the server cannot trust: answered at once, and the connection
   * closes (nothing after it is read as another request). */
  if (!check_header_syntax(connection, method, request)) return respond_refusal(server, connection, request);
  /* libmicrohttpd reads a body only as Content-Length or chunked; any other
   * coding would be read until the client closes. */
  const char *coding = header_value(connection, MHD_HTTP_HEADER_TRANSFER_ENCODING);
  if (coding && strcasecmp(coding, "chunked") != 0) {
    static const char *const close_after[] = {MHD_HTTP_HEADER_CONNECTION, "close", NULL};
    refuse(request, MHD_HTTP_NOT_IMPLEMENTED, "invalid_request_error", "unsupported_transfer_encoding",
           close_after, "Transfer-Encoding '%.60s' is not supported; send the body with Content-Length "
           "or 'Transfer-Encoding: chunked'.", coding);
    return respond_refusal(server, connection, request);
  }
  check_headers(server, connection, url, method, version, request);
  long long declared = declared_body_length(connection);
  bool takes_body = route_takes_post(request->route) && !request->refused;
  if (takes_body && declared > (long long)server->options.max_body_bytes) {
    refuse(request, MHD_HTTP_CONTENT_TOO_LARGE, "invalid_request_error", "request_too_large", NULL,
           "The request body is larger than the server's limit of %zu bytes.", server->options.max_body_bytes);
    return respond_refusal(server, connection, request); /* not read: the connection closes */
  }
  request->declared = declared;
  /* The body's memory, from the budget all connections share, before any
   * of it is read: a declared one at once (503, closing: nothing read). */
  if (takes_body && declared > 0) {
    request->over_budget = guarded_connection_reserve_body(request->guarded, (size_t)declared);
    if (request->over_budget) {
      refuse_over_budget(server, request);
      return respond_refusal(server, connection, request);
    }
  }
  /* A refusal waits for a small body (drained, the connection stays), not
   * for a large or endless one. */
  if (request->refused && (declared < 0 || declared > (long long)DRAIN_LIMIT_BYTES))
    return respond_refusal(server, connection, request);
  return MHD_YES;
}

/* Keeps at most max_body_bytes; past that only remembers the body was too
 * large (a chunked body can only be answered once it ended). A declared
 * body was reserved whole and is allocated once; a chunked one reserves
 * each growth, and past the budget is dropped and answered 503. */
static void append_body(vlm_server *server, http_request *request, const char *data, size_t size) {
  /* Refused requests and GETs keep nothing of a body (it is drained). */
  if (request->too_large || request->refused || request->over_budget || !route_takes_post(request->route))
    return;
  if (size > server->options.max_body_bytes - request->length) {
    request->too_large = true;
    free(request->body);
    request->body = NULL;
    request->length = request->capacity = 0;
    return;
  }
  if (request->length + size + 1 > request->capacity) {
    size_t capacity = request->capacity ? request->capacity : 4096;
    while (capacity < request->length + size + 1) capacity *= 2;
    if (request->declared > 0 && (size_t)request->declared + 1 >= request->length + size + 1)
      capacity = (size_t)request->declared + 1; /* reserved already */
    else if (request->declared < 0) {
      /* The growth, charged before it is allocated; the first 4 KiB too. */
      request->over_budget = guarded_connection_reserve_body(request->guarded, capacity - request->capacity);
      if (request->over_budget) {
        free(request->body);
        request->body = NULL;
        request->length = request->capacity = 0;
        guarded_connection_release_body(request->guarded);
        return;
      }
    }
    char *grown = realloc(request->body, capacity);
    if (!grown) {
      request->too_large = true; /* refused as too large rather than half-read */
      return;
    }
    request->body = grown;
    request->capacity = capacity;
  }
  memcpy(request->body + request->length, data, size);
  request->length += size;
  request->body[request->length] = '\0';
}

enum MHD_Result server_handle_access(void *context, struct MHD_Connection *connection,
                                     const char *url, const char *method, const char *version,
                                     const char *upload_data, size_t *upload_data_size,
                                     void **request_state) {
  vlm_server *server = context;
  http_request *request = *request_state;
  if (!request) return start_request(server, connection, url, method, version, request_state);
  if (*upload_data_size) {
    append_body(server, request, upload_data, *upload_data_size);
    *upload_data_size = 0;
    return MHD_YES;
  }
  guarded_connection_body_received(request->guarded);
  if (request->refused) return respond_refusal(server, connection, request);
  if (request->over_budget) {
    refuse_over_budget(server, request);
    return respond_refusal(server, connection, request);
  }
  if (request->too_large) {
    refuse(request, MHD_HTTP_CONTENT_TOO_LARGE, "invalid_request_error", "request_too_large", NULL,
           "The request body is larger than the server's limit of %zu bytes.", server->options.max_body_bytes);
    return respond_refusal(server, connection, request);
  }
  if (!route_takes_post(request->route)) return respond_get(server, connection, request);
  if (request->route == ROUTE_TOKENIZE || request->route == ROUTE_DETOKENIZE)
    return tokenize_handle(server, connection, request, request->route == ROUTE_DETOKENIZE);
  openai_endpoint endpoint =
      request->route == ROUTE_CHAT_COMPLETIONS ? OPENAI_CHAT_COMPLETIONS : OPENAI_COMPLETIONS;
  return chat_handle(server, connection, request, endpoint);
}

static const char *termination_name(enum MHD_RequestTerminationCode termination) {
  switch (termination) {
    case MHD_REQUEST_TERMINATED_COMPLETED_OK: return "completed";
    case MHD_REQUEST_TERMINATED_WITH_ERROR: return "error";
    case MHD_REQUEST_TERMINATED_TIMEOUT_REACHED: return "idle_timeout";
    case MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN: return "shutdown";
    case MHD_REQUEST_TERMINATED_READ_ERROR: return "read_error";
    case MHD_REQUEST_TERMINATED_CLIENT_ABORT: return "client_gone";
  }
  return "other";
}

/* The method as it may go into a log line: letters, digits, '-' and '_'
 * (libmicrohttpd takes any bytes up to the first space as the method). */
static void loggable_method(const char *method, char *out, size_t capacity) {
  size_t length = 0;
  for (; method && method[length] && length + 1 < capacity; length++) {
    char c = method[length];
    bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    out[length] = plain ? c : '?';
  }
  out[length] = '\0';
}

/* One structured line per request, at info level (vlm --log-level info). */
static void log_access(const http_request *request, enum MHD_RequestTerminationCode termination) {
  double latency_ms = (connection_guard_now() - request->started) * 1000.0;
  char method[17];
  loggable_method(request->method, method, sizeof(method));
  vlm_log(VLM_LOG_INFO,
          "serve: access request_id=%s client=%s method=%s route=%s status=%d latency_ms=%.1f "
          "prompt_tokens=%lld completion_tokens=%lld stream=%s end=%s%s",
          request->id, guarded_connection_client(request->guarded), method,
          server_route_name(request->route), request->status, latency_ms,
          (long long)request->prompt_tokens, (long long)request->completion_tokens,
          request->stream ? "true" : "false", termination_name(termination),
          request->timed_out ? " timed_out=true" : "");
}

/* Logs the request and frees it. Cancelling an abandoned completion is the
 * job of its response's free callback (chat_handler.c), which runs for
 * every termination, and of the handler's own disconnect polling. */
void server_handle_completed(void *context, struct MHD_Connection *connection, void **request_state,
                             enum MHD_RequestTerminationCode termination) {
  (void)context;
  (void)connection;
  http_request *request = *request_state;
  if (!request) return;
  log_access(request, termination);
  guarded_connection_request_done(request->guarded);
  openai_error_release(&request->refusal);
  free(request->body);
  guarded_connection_release_body(request->guarded);
  free(request);
  *request_state = NULL;
}

/* libmicrohttpd's own unescaping, except that an encoded NUL is noted:
 * it would end the path there ("/health%00x" routed as "/health"), so the
 * request is refused instead. Also called for query arguments. */
size_t server_unescape_url(void *context, struct MHD_Connection *connection, char *text) {
  (void)context;
  for (const char *c = text; (c = strchr(c, '%')) != NULL; c++)
    if (c[1] == '0' && c[2] == '0') guarded_connection_note_nul_in_url(connection_guard_find(connection));
  return MHD_http_unescape(text);
}
