/* The HTTP layer of `vlm serve`: the libmicrohttpd daemon, routing,
 * authentication, body limits, client-disconnect detection, signals and
 * graceful shutdown. The completion endpoints live in chat_handler.c.
 *
 * libmicrohttpd runs one thread per connection (MHD_USE_THREAD_PER_CONNECTION
 * with an internal polling thread for accepting): a handler may block on
 * its request's events, or a streaming response's reader may, without
 * holding up any other connection. HTTP/1.1 keep-alive, chunked responses
 * and idle timeouts are libmicrohttpd's. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "server/server_internal.h"

#define DEFAULT_MAX_BODY_BYTES ((size_t)64 << 20) /* room for a few base64 images */
#define DEFAULT_TIMEOUT_SECONDS 60
#define DEFAULT_GRACE_SECONDS 30.0
#define DEFAULT_CONNECTION_LIMIT 256
#define DEFAULT_MAX_MEDIA_ITEMS 16
/* After the engine drained, how long responses may take to reach their
 * clients before the connections are closed. */
#define FLUSH_SECONDS 5.0

const int server_counted_statuses[SERVER_STATUS_KINDS] = {200, 400, 401, 404, 405,
                                                          413, 429, 500, 503, 0};

static const char *const route_paths[ROUTE_COUNT] = {
    [ROUTE_CHAT_COMPLETIONS] = "/v1/chat/completions",
    [ROUTE_COMPLETIONS] = "/v1/completions",
    [ROUTE_MODELS] = "/v1/models",
    [ROUTE_HEALTH] = "/health",
    [ROUTE_METRICS] = "/metrics",
    [ROUTE_OTHER] = "other",
};

const char *server_route_name(server_route route) { return route_paths[route]; }

/* ------------------------------------------------------------------------ */
/* Responses                                                                 */
/* ------------------------------------------------------------------------ */

void server_count_response(vlm_server *server, server_route route, int http_status) {
  int kind = SERVER_STATUS_KINDS - 1;
  for (int i = 0; i < SERVER_STATUS_KINDS - 1; i++)
    if (server_counted_statuses[i] == http_status) kind = i;
  atomic_fetch_add(&server->responses[route][kind], 1);
}

/* Queues `body` (taken) with extra headers: NULL-terminated name, value pairs. */
static enum MHD_Result respond_with_headers(vlm_server *server, struct MHD_Connection *connection,
                                            server_route route, int http_status,
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
  /* While shutting down, keep-alive connections are closed after each answer. */
  if (atomic_load(&server->shutting_down))
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
  enum MHD_Result result = MHD_queue_response(connection, (unsigned)http_status, response);
  MHD_destroy_response(response);
  server_count_response(server, route, http_status);
  return result;
}

enum MHD_Result server_respond(vlm_server *server, struct MHD_Connection *connection,
                               server_route route, int http_status, const char *content_type,
                               char *body) {
  return respond_with_headers(server, connection, route, http_status, content_type, body, NULL);
}

enum MHD_Result server_respond_error(vlm_server *server, struct MHD_Connection *connection,
                                     server_route route, const openai_error *error) {
  int status = error->http_status ? error->http_status : MHD_HTTP_INTERNAL_SERVER_ERROR;
  static const char *const authenticate[] = {MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer", NULL};
  return respond_with_headers(server, connection, route, status, "application/json",
                              openai_error_to_json(error),
                              status == MHD_HTTP_UNAUTHORIZED ? authenticate : NULL);
}

/* Builds the error and answers with it; for the refusals made here. */
static enum MHD_Result respond_new_error(vlm_server *server, struct MHD_Connection *connection,
                                         server_route route, int http_status, const char *type,
                                         const char *code, const char *message) {
  openai_error error = {0};
  openai_error_set(&error, http_status, type, NULL, code, "%s", message);
  enum MHD_Result result = server_respond_error(server, connection, route, &error);
  openai_error_release(&error);
  return result;
}

/* ------------------------------------------------------------------------ */
/* Client disconnects                                                        */
/* ------------------------------------------------------------------------ */

bool server_client_gone(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (!info) return false;
  struct pollfd poll_fd = {.fd = info->connect_fd, .events = POLLIN | POLLRDHUP};
  if (poll(&poll_fd, 1, 0) <= 0) return false;
  if (poll_fd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
  if (!(poll_fd.revents & POLLIN)) return false;
  /* Readable: either the next pipelined request (the client is still
   * there) or an orderly close, which reads as 0 bytes. */
  char byte;
  ssize_t peeked = recv(info->connect_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* ------------------------------------------------------------------------ */
/* Routing                                                                   */
/* ------------------------------------------------------------------------ */

/* One HTTP request whose body is being received (the connection's
 * request-scoped pointer between libmicrohttpd's calls). */
typedef struct body_request {
  server_route route;
  char *body;
  size_t length, capacity;
  bool too_large;
} body_request;

static server_route find_route(const char *url) {
  for (int route = 0; route < ROUTE_OTHER; route++)
    if (strcmp(url, route_paths[route]) == 0) return (server_route)route;
  return ROUTE_OTHER;
}

static bool route_takes_post(server_route route) {
  return route == ROUTE_CHAT_COMPLETIONS || route == ROUTE_COMPLETIONS;
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

static enum MHD_Result check_api_key(vlm_server *server, struct MHD_Connection *connection,
                                     server_route route, bool *out_allowed) {
  *out_allowed = true;
  const char *key = server->options.api_key;
  if (!key || !key[0] || route == ROUTE_HEALTH) return MHD_YES;
  const char *header = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                                   MHD_HTTP_HEADER_AUTHORIZATION);
  static const char bearer[] = "Bearer ";
  if (header && strncasecmp(header, bearer, sizeof(bearer) - 1) == 0 &&
      keys_match(header + sizeof(bearer) - 1, key))
    return MHD_YES;
  *out_allowed = false;
  return respond_new_error(server, connection, route, MHD_HTTP_UNAUTHORIZED, "invalid_request_error",
                           "invalid_api_key",
                           header ? "Incorrect API key provided."
                                  : "You didn't provide an API key. Send it in an Authorization "
                                    "header: 'Authorization: Bearer YOUR_KEY'.");
}

static enum MHD_Result respond_get(vlm_server *server, struct MHD_Connection *connection,
                                   server_route route) {
  if (route == ROUTE_MODELS)
    return server_respond(server, connection, route, MHD_HTTP_OK, "application/json",
                          response_models(server));
  if (route == ROUTE_METRICS)
    return server_respond(server, connection, route, MHD_HTTP_OK,
                          "text/plain; version=0.0.4; charset=utf-8", metrics_render(server));
  bool stopping = atomic_load(&server->shutting_down);
  return server_respond(server, connection, route,
                        stopping ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK, "application/json",
                        strdup(stopping ? "{\"status\":\"shutting_down\"}" : "{\"status\":\"ok\"}"));
}

/* The declared body size is over the limit: refuse before reading it. */
static bool body_declared_too_large(vlm_server *server, struct MHD_Connection *connection) {
  const char *length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                                   MHD_HTTP_HEADER_CONTENT_LENGTH);
  if (!length) return false;
  char *end = NULL;
  errno = 0;
  unsigned long long value = strtoull(length, &end, 10);
  return errno == ERANGE || (end != length && value > server->options.max_body_bytes);
}

static enum MHD_Result respond_too_large(vlm_server *server, struct MHD_Connection *connection,
                                         server_route route) {
  char message[128];
  snprintf(message, sizeof(message), "The request body is larger than the server's limit of %zu bytes.",
           server->options.max_body_bytes);
  return respond_new_error(server, connection, route, MHD_HTTP_CONTENT_TOO_LARGE,
                           "invalid_request_error", "request_too_large", message);
}

/* The first call for a request: headers are in, no body yet. Answers
 * everything that needs no body; for a completion, starts collecting it. */
static enum MHD_Result start_request(vlm_server *server, struct MHD_Connection *connection,
                                     const char *url, const char *method, void **request_state) {
  server_route route = find_route(url);
  if (route == ROUTE_OTHER) {
    char message[256];
    snprintf(message, sizeof(message), "Unknown request URL: %s %.160s.", method, url);
    return respond_new_error(server, connection, route, MHD_HTTP_NOT_FOUND, "invalid_request_error",
                             "unknown_url", message);
  }
  bool is_get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
  bool is_post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
  if (route_takes_post(route) ? !is_post : !is_get) {
    static const char *const allow_post[] = {MHD_HTTP_HEADER_ALLOW, "POST", NULL};
    static const char *const allow_get[] = {MHD_HTTP_HEADER_ALLOW, "GET, HEAD", NULL};
    char message[256];
    snprintf(message, sizeof(message), "Method %.32s is not allowed for %s; use %s.", method, url,
             route_takes_post(route) ? "POST" : "GET");
    openai_error error = {0};
    openai_error_set(&error, MHD_HTTP_METHOD_NOT_ALLOWED, "invalid_request_error", NULL,
                     "method_not_allowed", "%s", message);
    char *json = openai_error_to_json(&error);
    openai_error_release(&error);
    return respond_with_headers(server, connection, route, MHD_HTTP_METHOD_NOT_ALLOWED,
                                "application/json", json, route_takes_post(route) ? allow_post : allow_get);
  }
  bool allowed;
  enum MHD_Result result = check_api_key(server, connection, route, &allowed);
  if (!allowed) return result;
  if (!route_takes_post(route)) return respond_get(server, connection, route);
  if (atomic_load(&server->shutting_down))
    return respond_new_error(server, connection, route, MHD_HTTP_SERVICE_UNAVAILABLE, "server_error",
                             "server_shutting_down", "The server is shutting down.");
  if (body_declared_too_large(server, connection)) return respond_too_large(server, connection, route);
  body_request *request = calloc(1, sizeof(*request));
  if (!request) return MHD_NO;
  request->route = route;
  *request_state = request;
  return MHD_YES;
}

/* Keeps at most max_body_bytes; past that only remembers the body was too large. */
static void append_body(vlm_server *server, body_request *request, const char *data, size_t size) {
  if (request->too_large) return;
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

static enum MHD_Result handle_access(void *context, struct MHD_Connection *connection,
                                     const char *url, const char *method, const char *version,
                                     const char *upload_data, size_t *upload_data_size,
                                     void **request_state) {
  (void)version;
  vlm_server *server = context;
  body_request *request = *request_state;
  if (!request) return start_request(server, connection, url, method, request_state);
  if (*upload_data_size) {
    append_body(server, request, upload_data, *upload_data_size);
    *upload_data_size = 0;
    return MHD_YES;
  }
  if (request->too_large) return respond_too_large(server, connection, request->route);
  openai_endpoint endpoint =
      request->route == ROUTE_CHAT_COMPLETIONS ? OPENAI_CHAT_COMPLETIONS : OPENAI_COMPLETIONS;
  return chat_handle(server, connection, endpoint, request->body ? request->body : "", request->length);
}

/* Frees the body. Cancelling an abandoned completion is the job of its
 * response's free callback (chat_handler.c), which runs for every
 * termination, and of the handler's own disconnect polling. */
static void handle_completed(void *context, struct MHD_Connection *connection, void **request_state,
                             enum MHD_RequestTerminationCode termination) {
  (void)context;
  (void)connection;
  body_request *request = *request_state;
  if (termination != MHD_REQUEST_TERMINATED_COMPLETED_OK)
    VLM_LOG_DEBUGF("serve: request ended early (libmicrohttpd termination code %d)", (int)termination);
  if (!request) return;
  free(request->body);
  free(request);
  *request_state = NULL;
}

static void log_from_microhttpd(void *context, const char *format, va_list arguments) {
  (void)context;
  char message[512];
  vsnprintf(message, sizeof(message), format, arguments);
  size_t length = strlen(message);
  while (length && message[length - 1] == '\n') message[--length] = '\0';
  vlm_log(VLM_LOG_WARN, "serve: libmicrohttpd: %s", message);
}

/* ------------------------------------------------------------------------ */
/* Start and stop                                                            */
/* ------------------------------------------------------------------------ */

static void fill_defaults(vlm_server_options *options) {
  if (!options->host || !options->host[0]) options->host = "127.0.0.1";
  if (!options->max_body_bytes) options->max_body_bytes = DEFAULT_MAX_BODY_BYTES;
  if (!options->timeout_seconds) options->timeout_seconds = DEFAULT_TIMEOUT_SECONDS;
  if (options->shutdown_grace_seconds <= 0) options->shutdown_grace_seconds = DEFAULT_GRACE_SECONDS;
  if (!options->connection_limit) options->connection_limit = DEFAULT_CONNECTION_LIMIT;
  if (!options->max_media_items) options->max_media_items = DEFAULT_MAX_MEDIA_ITEMS;
}

/* The model's id: --model-name, else the checkpoint directory's last part. */
static char *model_id_of(const vlm_server_options *options, const char *model_dir) {
  if (options->model_name && options->model_name[0]) return strdup(options->model_name);
  size_t end = model_dir ? strlen(model_dir) : 0;
  while (end > 1 && model_dir[end - 1] == '/') end--;
  size_t start = end;
  while (start > 0 && model_dir[start - 1] != '/') start--;
  return end > start ? strndup(model_dir + start, end - start) : strdup("model");
}

static vlm_status resolve_address(const vlm_server_options *options, struct addrinfo **out_address) {
  char port[16];
  snprintf(port, sizeof(port), "%d", options->port);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                           .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
  int failure = getaddrinfo(options->host, port, &hints, out_address);
  if (failure)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "cannot use host '%s': %s", options->host,
                           gai_strerror(failure));
  return VLM_OK;
}

static vlm_status start_daemon(vlm_server *server) {
  struct addrinfo *address = NULL;
  vlm_status status = resolve_address(&server->options, &address);
  if (status) return status;
  /* poll(), not select(): descriptors past FD_SETSIZE stay usable. */
  unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
                   MHD_USE_ITC /* for MHD_quiesce_daemon */ | MHD_USE_ERROR_LOG;
  if (address->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
  server->daemon = MHD_start_daemon(
      flags, (uint16_t)server->options.port, NULL, NULL, handle_access, server,
      MHD_OPTION_EXTERNAL_LOGGER, log_from_microhttpd, server, /* first, to catch every message */
      MHD_OPTION_SOCK_ADDR, address->ai_addr,
      MHD_OPTION_NOTIFY_COMPLETED, handle_completed, server,
      MHD_OPTION_CONNECTION_TIMEOUT, server->options.timeout_seconds,
      MHD_OPTION_CONNECTION_LIMIT, server->options.connection_limit,
      MHD_OPTION_END);
  freeaddrinfo(address);
  if (!server->daemon)
    return vlm_status_make(VLM_STATUS_IO, "cannot listen on %s port %d (in use, or not an address "
                           "of this machine?)", server->options.host, server->options.port);
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(server->daemon, MHD_DAEMON_INFO_BIND_PORT);
  server->port = info ? (int)info->port : server->options.port;
  return VLM_OK;
}

vlm_status vlm_server_start(vlm_engine *engine, const vlm_server_options *options,
                            vlm_server **out_server) {
  *out_server = NULL;
  vlm_server *server = calloc(1, sizeof(*server));
  if (!server) return vlm_status_make(VLM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  server->engine = engine;
  server->options = *options;
  fill_defaults(&server->options);
  vlm_engine_get_info(engine, &server->info);
  server->model_id = model_id_of(&server->options, server->info.model_dir);
  server->media = (media_policy){.allowed_media_dir = server->options.allowed_media_dir,
                                 .allow_remote_media = server->options.allow_remote_media};
  server->started_at = (int64_t)time(NULL);
  atomic_init(&server->shutting_down, false);
  atomic_init(&server->active_requests, 0);
  vlm_status status = server->model_id ? start_daemon(server)
                      : vlm_status_make(VLM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  if (status) {
    free(server->model_id);
    free(server);
    return status;
  }
  *out_server = server;
  return VLM_OK;
}

int vlm_server_port(const vlm_server *server) { return server->port; }

static double monotonic_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

void vlm_server_stop(vlm_server *server, double grace_seconds) {
  if (!server) return;
  atomic_store(&server->shutting_down, true);
  /* Stop accepting; connections already open get 503 for new requests. */
  MHD_socket listener = MHD_quiesce_daemon(server->daemon);
  if (listener != MHD_INVALID_SOCKET) close(listener);
  /* In-flight requests finish (or are cancelled after the grace period)... */
  vlm_engine_drain(server->engine, grace_seconds);
  /* ...and their last bytes reach the clients before connections close. */
  double deadline = monotonic_seconds() + FLUSH_SECONDS;
  while (atomic_load(&server->active_requests) > 0 && monotonic_seconds() < deadline)
    usleep(10 * 1000);
  MHD_stop_daemon(server->daemon);
  free(server->model_id);
  free(server);
}

/* ------------------------------------------------------------------------ */
/* Signals                                                                   */
/* ------------------------------------------------------------------------ */

/* SIGINT and SIGTERM write a byte to this pipe (the only async-signal-safe
 * way to wake the main thread, whichever thread the signal lands on). */
static int signal_pipe[2] = {-1, -1};

static void on_stop_signal(int signal_number) {
  int saved_errno = errno;
  unsigned char byte = (unsigned char)signal_number;
  if (write(signal_pipe[1], &byte, 1) < 0) { /* the pipe is full: a stop is already pending */ }
  errno = saved_errno;
}

static vlm_status install_signal_handlers(struct sigaction *saved_interrupt,
                                          struct sigaction *saved_terminate) {
  if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    return vlm_status_make(VLM_STATUS_IO, "cannot create a pipe: %s", strerror(errno));
  struct sigaction action = {0};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, saved_interrupt);
  sigaction(SIGTERM, &action, saved_terminate);
  /* A client that goes away mid-write must not kill the server. */
  signal(SIGPIPE, SIG_IGN);
  return VLM_OK;
}

static void restore_signal_handlers(const struct sigaction *saved_interrupt,
                                    const struct sigaction *saved_terminate) {
  sigaction(SIGINT, saved_interrupt, NULL);
  sigaction(SIGTERM, saved_terminate, NULL);
  close(signal_pipe[0]);
  close(signal_pipe[1]);
  signal_pipe[0] = signal_pipe[1] = -1;
}

static int wait_for_stop_signal(void) {
  for (;;) {
    struct pollfd poll_fd = {.fd = signal_pipe[0], .events = POLLIN};
    if (poll(&poll_fd, 1, -1) < 0 && errno != EINTR) return SIGTERM;
    unsigned char byte;
    if (read(signal_pipe[0], &byte, 1) == 1) return byte;
  }
}

vlm_status vlm_server_run(vlm_engine *engine, const vlm_server_options *options) {
  struct sigaction saved_interrupt, saved_terminate;
  vlm_status status = install_signal_handlers(&saved_interrupt, &saved_terminate);
  if (status) return status;
  vlm_server *server = NULL;
  status = vlm_server_start(engine, options, &server);
  if (status) {
    restore_signal_handlers(&saved_interrupt, &saved_terminate);
    return status;
  }
  const char *host = server->options.host;
  bool bracket = strchr(host, ':') != NULL; /* an IPv6 literal */
  fprintf(stderr, "listening on http://%s%s%s:%d\n", bracket ? "[" : "", host, bracket ? "]" : "",
          server->port);
  fflush(stderr);
  int signal_number = wait_for_stop_signal();
  double grace = server->options.shutdown_grace_seconds;
  fprintf(stderr, "vlm: %s: stopping; in-flight requests may finish within %.0f s\n",
          signal_number == SIGINT ? "SIGINT" : "SIGTERM", grace);
  vlm_server_stop(server, grace);
  restore_signal_handlers(&saved_interrupt, &saved_terminate);
  fprintf(stderr, "vlm: stopped\n");
  return VLM_OK;
}
