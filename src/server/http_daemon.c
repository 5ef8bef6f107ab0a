/* Starting and stopping `vlm serve`: options and their defaults, the
 * libmicrohttpd daemon and its limits, the connection guard, signals and
 * graceful shutdown. The request callbacks live in http_server.c.
 *
 * libmicrohttpd runs one thread per connection (MHD_USE_THREAD_PER_CONNECTION
 * with an internal polling thread for accepting): a handler may block on
 * its request's events, or a streaming response's reader may, without
 * holding up any other connection. HTTP/1.1 keep-alive, chunked bodies,
 * the global connection limit and the idle timeout are libmicrohttpd's;
 * admission per client and the deadlines measured from accept are the
 * guard's (connection_guard.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/status.h"
#include "server/server_internal.h"
#include "server/tool_calls.h"
#include "vlm/chat_template.h"

#define DEFAULT_MAX_BODY_BYTES ((size_t)64 << 20) /* room for a few base64 images */
#define DEFAULT_TIMEOUT_SECONDS 60
#define DEFAULT_HEADER_TIMEOUT_SECONDS 10.0
#define DEFAULT_BODY_TIMEOUT_SECONDS 60.0
#define DEFAULT_REQUEST_TIMEOUT_SECONDS 600.0
#define DEFAULT_GRACE_SECONDS 30.0
#define DEFAULT_CONNECTION_LIMIT 256
#define DEFAULT_CONNECTIONS_PER_CLIENT 64
#define DEFAULT_MAX_MEDIA_ITEMS 16
/* Bodies in memory: 16 unfinished 60 MB uploads used to hold 932 MB (the
 * old bound was max_body_bytes per connection: 4 GiB per address, 16 GiB
 * in all). Four full-size bodies at once, two per address. */
#define DEFAULT_MAX_BODY_MEMORY ((size_t)256 << 20)
#define DEFAULT_MAX_BODY_MEMORY_PER_CLIENT ((size_t)128 << 20)
/* 1/8 of --max-connections is kept for clients holding no connection. */
#define CONNECTION_RESERVE_FRACTION 8
/* After the engine drained, how long responses may take to reach their
 * clients before the connections are closed. */
#define FLUSH_SECONDS 5.0
/* libmicrohttpd logs one line per refused connection; under a flood that
 * is a line per attempt. At most this many per window reach the log. */
#define LIBRARY_LOG_BURST 20
#define LIBRARY_LOG_WINDOW_SECONDS 10.0

/* ------------------------------------------------------------------------ */
/* libmicrohttpd's messages                                                  */
/* ------------------------------------------------------------------------ */

static pthread_mutex_t library_log_mutex = PTHREAD_MUTEX_INITIALIZER;
static double library_log_window_start;
static unsigned library_log_count;
static unsigned long library_log_suppressed;

static void log_from_microhttpd(void *context, const char *format, va_list arguments) {
  (void)context;
  double now = connection_guard_now();
  pthread_mutex_lock(&library_log_mutex);
  unsigned long suppressed = 0;
  if (now - library_log_window_start >= LIBRARY_LOG_WINDOW_SECONDS) {
    suppressed = library_log_suppressed;
    library_log_window_start = now;
    library_log_count = 0;
    library_log_suppressed = 0;
  }
  bool shown = library_log_count < LIBRARY_LOG_BURST;
  if (shown) library_log_count++;
  else library_log_suppressed++;
  pthread_mutex_unlock(&library_log_mutex);
  if (suppressed)
    vlm_log(VLM_LOG_WARN, "serve: libmicrohttpd: %lu more messages in the last %.0f s were not logged",
            suppressed, LIBRARY_LOG_WINDOW_SECONDS);
  if (!shown) return;
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
  if (options->header_timeout_seconds <= 0) options->header_timeout_seconds = DEFAULT_HEADER_TIMEOUT_SECONDS;
  if (options->body_timeout_seconds <= 0) options->body_timeout_seconds = DEFAULT_BODY_TIMEOUT_SECONDS;
  if (options->request_timeout_seconds == 0) options->request_timeout_seconds = DEFAULT_REQUEST_TIMEOUT_SECONDS;
  if (options->shutdown_grace_seconds <= 0) options->shutdown_grace_seconds = DEFAULT_GRACE_SECONDS;
  if (!options->connection_limit) options->connection_limit = DEFAULT_CONNECTION_LIMIT;
  if (!options->max_connections_per_client) options->max_connections_per_client = DEFAULT_CONNECTIONS_PER_CLIENT;
  if (!options->max_media_items) options->max_media_items = DEFAULT_MAX_MEDIA_ITEMS;
  if (!options->max_idle_connections) options->max_idle_connections = (int)(options->connection_limit / 2);
  if (!options->max_body_memory) options->max_body_memory = DEFAULT_MAX_BODY_MEMORY;
  if (!options->max_body_memory_per_client) options->max_body_memory_per_client = DEFAULT_MAX_BODY_MEMORY_PER_CLIENT;
  /* One body of the largest size always fits an otherwise idle server. */
  if (options->max_body_memory < options->max_body_bytes) options->max_body_memory = options->max_body_bytes;
  if (options->max_body_memory_per_client < options->max_body_bytes)
    options->max_body_memory_per_client = options->max_body_bytes;
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

/* The shape of message content the model's template reads. The engine
 * renders the template; the server only needs to know what to hand it, so
 * it reads the same template from the model directory. */
static vlm_status detect_content_format(vlm_server *server) {
  server->content_format = OPENAI_CONTENT_AS_GIVEN;
  server->tool_format = NULL;
  const char *tool_parser = server->options.tool_call_parser;
  if (tool_parser && strcmp(tool_parser, "none") != 0) {
    server->tool_format = tool_format_by_name(tool_parser);
    if (!server->tool_format)
      return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "unknown tool-call parser '%s' (known: %s, none)", tool_parser,
                             TOOL_FORMAT_NAMES);
  }
  server->reasoning = REASONING_OFF;
  const char *parser = server->options.reasoning_parser;
  if (parser && strcmp(parser, "auto") && !reasoning_kind_parse(parser, &server->reasoning))
    return VLM_ERROR(INVALID_ARGUMENT, "unknown reasoning parser '%s' (auto, qwen3, deepseek_r1 or none)", parser);
  if (!server->info.has_chat_template) return VLM_OK;
  vlm_chat_template *chat_template = NULL;
  vlm_status status = vlm_chat_template_load(server->info.model_dir, &chat_template);
  if (status) return vlm_status_annotate(status, "reading the chat template's content format");
  /* The tool-call format the template teaches (the markers it renders). */
  if (!tool_parser) server->tool_format = tool_format_detect(vlm_chat_template_text(chat_template));
  VLM_LOG_INFOF("serve: tool calls: %s%s", tool_format_name(server->tool_format),
                tool_parser ? " (--tool-call-parser)" : " (from the chat template)");
  bool parts = vlm_chat_template_content_format(chat_template) == VLM_CHAT_CONTENT_OPENAI;
  if (parser && !strcmp(parser, "auto")) server->reasoning = reasoning_kind_detect(vlm_chat_template_text(chat_template));
  if (server->reasoning != REASONING_OFF)
    VLM_LOG_INFOF("serve: chat answers split reasoning_content from content (reasoning parser '%s'%s)",
                  reasoning_kind_name(server->reasoning), strcmp(parser, "auto") ? "" : ", from the template");
  server->content_format = parts ? OPENAI_CONTENT_PARTS : OPENAI_CONTENT_STRING;
  VLM_LOG_INFOF("serve: the chat template takes message content as %s",
                parts ? "a list of parts (vLLM's 'openai' format)" : "a string (vLLM's 'string' format)");
  vlm_chat_template_release(chat_template);
  return VLM_OK;
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

static bool is_loopback_address(const struct sockaddr *address) {
  if (address->sa_family == AF_INET)
    return (ntohl(((const struct sockaddr_in *)(const void *)address)->sin_addr.s_addr) >> 24) == 127;
  if (address->sa_family == AF_INET6) {
    const struct in6_addr *ipv6 = &((const struct sockaddr_in6 *)(const void *)address)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(ipv6) || (IN6_IS_ADDR_V4MAPPED(ipv6) && ipv6->s6_addr[12] == 127);
  }
  return false;
}

static vlm_status set_up_host_policy(vlm_server *server, const struct sockaddr *bound) {
  const vlm_server_options *options = &server->options;
  server->host_policy.bound_to_loopback = is_loopback_address(bound);
  if (options->allowed_hosts) {
    VLM_RETURN_IF_ERROR(http_name_list_parse(options->allowed_hosts, "--allowed-hosts", &server->allowed_hosts));
    server->host_policy.allowed_hosts = &server->allowed_hosts;
  }
  if (options->allowed_origins) {
    VLM_RETURN_IF_ERROR(
        http_name_list_parse(options->allowed_origins, "--allowed-origins", &server->allowed_origins));
    server->host_policy.allowed_origins = &server->allowed_origins;
  }
  return VLM_OK;
}

static vlm_status start_daemon(vlm_server *server) {
  struct addrinfo *address = NULL;
  vlm_status status = resolve_address(&server->options, &address);
  if (status) return status;
  status = set_up_host_policy(server, address->ai_addr);
  int per_client = server->options.max_connections_per_client;
  unsigned limit = server->options.connection_limit;
  connection_guard_options guard_options = {
      .header_seconds = server->options.header_timeout_seconds,
      .body_seconds = server->options.body_timeout_seconds,
      .keep_alive_seconds = server->options.timeout_seconds,
      .connection_limit = limit,
      .per_client = per_client > 0 ? (unsigned)per_client : 0,
      .reserve = limit / CONNECTION_RESERVE_FRACTION ? limit / CONNECTION_RESERVE_FRACTION : 1,
      .idle_limit = server->options.max_idle_connections > 0 ? (unsigned)server->options.max_idle_connections : 0,
      .body_budget = server->options.max_body_memory == SIZE_MAX ? 0 : server->options.max_body_memory,
      .body_per_client = server->options.max_body_memory_per_client == SIZE_MAX
                             ? 0 : server->options.max_body_memory_per_client};
  if (!status) status = connection_guard_start(&guard_options, &server->guard);
  if (status) {
    freeaddrinfo(address);
    return status;
  }
  /* poll(), not select(): descriptors past FD_SETSIZE stay usable. */
  unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
                   MHD_USE_ITC /* for MHD_quiesce_daemon */ | MHD_USE_ERROR_LOG;
  if (address->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
  server->daemon = MHD_start_daemon(
      flags, (uint16_t)server->options.port, connection_guard_accept, server->guard, server_handle_access, server,
      MHD_OPTION_EXTERNAL_LOGGER, log_from_microhttpd, server, /* first, to catch every message */
      MHD_OPTION_SOCK_ADDR, address->ai_addr,
      MHD_OPTION_NOTIFY_COMPLETED, server_handle_completed, server,
      MHD_OPTION_NOTIFY_CONNECTION, connection_guard_notify, server->guard,
      MHD_OPTION_UNESCAPE_CALLBACK, server_unescape_url, server,
      MHD_OPTION_CONNECTION_TIMEOUT, server->options.timeout_seconds,
      MHD_OPTION_CONNECTION_LIMIT, limit,
      MHD_OPTION_END);
  freeaddrinfo(address);
  if (!server->daemon)
    return vlm_status_make(VLM_STATUS_IO, "cannot listen on %s port %d (in use, or not an address "
                           "of this machine?)", server->options.host, server->options.port);
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(server->daemon, MHD_DAEMON_INFO_BIND_PORT);
  server->port = info ? (int)info->port : server->options.port;
  return VLM_OK;
}

static void server_free(vlm_server *server) {
  connection_guard_stop(server->guard);
  http_name_list_release(&server->allowed_hosts);
  http_name_list_release(&server->allowed_origins);
  free(server->model_id);
  free(server);
}

vlm_status vlm_server_start_loading(const vlm_server_options *options, vlm_server **out_server) {
  *out_server = NULL;
  vlm_server *server = calloc(1, sizeof(*server));
  if (!server) return vlm_status_make(VLM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  server->options = *options;
  fill_defaults(&server->options);
  server->media = (media_policy){.allowed_media_dir = server->options.allowed_media_dir,
                                 .allow_remote_media = server->options.allow_remote_media,
                                 .allow_private_addresses = server->options.allow_private_media_addresses};
  server->started_at = (int64_t)time(NULL);
  atomic_init(&server->shutting_down, false);
  atomic_init(&server->ready, false);
  atomic_init(&server->active_requests, 0);
  vlm_status status = start_daemon(server);
  if (status) {
    server_free(server);
    return status;
  }
  /* At info level: a failure while the engine opens stays one line on stderr. */
  char url[320];
  vlm_server_url(server, url, sizeof(url));
  VLM_LOG_INFOF("serve: %s answers; loading (/health/ready says when it is ready)", url);
  *out_server = server;
  return VLM_OK;
}

vlm_status vlm_server_attach_engine(vlm_server *server, vlm_engine *engine) {
  if (server_is_ready(server))
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "the server has its engine already");
  vlm_engine_get_info(engine, &server->info);
  free(server->model_id);
  server->model_id = model_id_of(&server->options, server->info.model_dir);
  vlm_status status = server->model_id ? detect_content_format(server)
                      : vlm_status_make(VLM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  if (status) return status;
  server->engine = engine;
  /* Publishes everything above to the connection threads. */
  atomic_store_explicit(&server->ready, true, memory_order_release);
  return VLM_OK;
}

vlm_status vlm_server_start(vlm_engine *engine, const vlm_server_options *options,
                            vlm_server **out_server) {
  vlm_server *server = NULL;
  vlm_status status = vlm_server_start_loading(options, &server);
  if (!status) status = vlm_server_attach_engine(server, engine);
  if (status) {
    vlm_server_stop(server, 0);
    return status;
  }
  *out_server = server;
  return VLM_OK;
}

int vlm_server_port(const vlm_server *server) { return server->port; }

void vlm_server_stop(vlm_server *server, double grace_seconds) {
  if (!server) return;
  atomic_store(&server->shutting_down, true);
  /* Stop accepting; connections already open get 503 for new requests. */
  MHD_socket listener = MHD_quiesce_daemon(server->daemon);
  if (listener != MHD_INVALID_SOCKET) close(listener);
  /* In-flight requests finish (or are cancelled after the grace period)... */
  if (server_is_ready(server)) vlm_engine_drain(server->engine, grace_seconds);
  /* ...and their last bytes reach the clients before connections close. */
  double deadline = connection_guard_now() + FLUSH_SECONDS;
  while (atomic_load(&server->active_requests) > 0 && connection_guard_now() < deadline)
    usleep(10 * 1000);
  MHD_stop_daemon(server->daemon);
  server_free(server);
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

void vlm_server_url(const vlm_server *server, char *out, size_t capacity) {
  const char *host = server->options.host;
  bool bracket = strchr(host, ':') != NULL; /* an IPv6 literal */
  snprintf(out, capacity, "http://%s%s%s:%d", bracket ? "[" : "", host, bracket ? "]" : "", server->port);
}

/* Serves `server` (started) until a signal, then stops it. */
static void serve_until_signal(vlm_server *server) {
  char url[320];
  vlm_server_url(server, url, sizeof(url));
  char line[400];
  snprintf(line, sizeof(line), "listening on %s", url);
  vlm_log_print(VLM_LOG_INFO, line);
  int signal_number = wait_for_stop_signal();
  double grace = server->options.shutdown_grace_seconds;
  snprintf(line, sizeof(line), "vlm: %s: stopping; in-flight requests may finish within %.0f s",
           signal_number == SIGINT ? "SIGINT" : "SIGTERM", grace);
  vlm_log_print(VLM_LOG_INFO, line);
  vlm_server_stop(server, grace);
  vlm_log_print(VLM_LOG_INFO, "vlm: stopped");
}

vlm_status vlm_server_run_started(vlm_server *server) {
  struct sigaction saved_interrupt, saved_terminate;
  vlm_status status = install_signal_handlers(&saved_interrupt, &saved_terminate);
  if (status) {
    vlm_server_stop(server, 0);
    return status;
  }
  serve_until_signal(server);
  restore_signal_handlers(&saved_interrupt, &saved_terminate);
  return VLM_OK;
}

vlm_status vlm_server_run(vlm_engine *engine, const vlm_server_options *options) {
  struct sigaction saved_interrupt, saved_terminate;
  vlm_status status = install_signal_handlers(&saved_interrupt, &saved_terminate);
  if (status) return status;
  vlm_server *server = NULL;
  status = vlm_server_start(engine, options, &server);
  if (!status) serve_until_signal(server);
  restore_signal_handlers(&saved_interrupt, &saved_terminate);
  return status;
}
