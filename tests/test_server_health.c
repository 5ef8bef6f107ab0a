/* The server before and after it has its model (issue 20): bound while
 * the model loads, it is live but not ready, refuses what needs the model
 * with 503 model_loading, still serves /metrics and the chat page; once
 * the engine is attached it is ready. Also the page's files themselves
 * (content types, CSP, ETag revalidation), --no-ui, and that the page
 * needs no API key while the API does. The server runs in process on the
 * tiny LLaVA; requests are raw HTTP/1.1 on loopback. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/server.h"
#include "test.h"
#include "vlm/engine.h"
#include "vlm/model.h"

#define IMAGE_MODEL VLM_SOURCE_DIR "/tests/models/llava"

typedef struct answer {
  int status;
  char text[65536]; /* status line, headers and body */
  const char *body;
} answer;

static int connect_to(int port) {
  int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (client >= 0 && connect(client, (struct sockaddr *)&address, sizeof(address)) != 0) {
    close(client);
    return -1;
  }
  return client;
}

/* One request on its own connection (closed by the server after the
 * answer); `extra` holds whole header lines. */
static bool ask(int port, const char *method, const char *path, const char *extra, const char *body,
                answer *out) {
  memset(out, 0, sizeof(*out));
  char request[4096], length_header[96] = "";
  if (body) snprintf(length_header, sizeof(length_header), "Content-Type: application/json\r\nContent-Length: %zu\r\n", strlen(body));
  snprintf(request, sizeof(request), "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n%s%s\r\n%s",
           method, path, extra ? extra : "", length_header, body ? body : "");
  int client = connect_to(port);
  if (client < 0) return false;
  bool sent = send(client, request, strlen(request), MSG_NOSIGNAL) == (ssize_t)strlen(request);
  size_t length = 0;
  while (sent && length + 1 < sizeof(out->text)) {
    struct pollfd readable = {.fd = client, .events = POLLIN};
    if (poll(&readable, 1, 10000) <= 0) break;
    ssize_t count = recv(client, out->text + length, sizeof(out->text) - length - 1, 0);
    if (count <= 0) break;
    length += (size_t)count;
  }
  close(client);
  out->text[length] = '\0';
  if (sscanf(out->text, "HTTP/1.1 %d", &out->status) != 1) return false;
  const char *end = strstr(out->text, "\r\n\r\n");
  out->body = end ? end + 4 : "";
  return true;
}

static bool has(const answer *response, const char *fragment) { return strstr(response->text, fragment) != NULL; }

static vlm_engine *open_engine(void) {
  vlm_model *model = NULL;
  CHECK_OK(vlm_model_open(IMAGE_MODEL, NULL, &model));
  if (!model) return NULL;
  vlm_engine_options options = {.slot_count = 1, .thread_count = 1};
  vlm_engine *engine = NULL;
  CHECK_OK(vlm_engine_open(model, &options, &engine));
  vlm_model_release(model);
  return engine;
}

static const char chat_body[] = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":2}";

/* Before: the connection was refused until the model was open, so a
 * liveness probe could not tell loading from dead. */
static void a_loading_server_is_live_but_not_ready(void) {
  vlm_server_options options = {.port = 0};
  vlm_server *server = NULL;
  CHECK_OK(vlm_server_start_loading(&options, &server));
  if (!server) return;
  int port = vlm_server_port(server);
  answer response;

  CHECK(ask(port, "GET", "/health/live", NULL, NULL, &response));
  CHECK_INT_EQ(response.status, 200);
  CHECK(has(&response, "{\"status\":\"ok\"}"));

  CHECK(ask(port, "GET", "/health/ready", NULL, NULL, &response));
  CHECK_INT_EQ(response.status, 503);
  CHECK(has(&response, "{\"status\":\"not_ready\",\"reason\":\"loading\"}"));

  CHECK(ask(port, "GET", "/health", NULL, NULL, &response));
  CHECK_INT_EQ(response.status, 503);
  CHECK(has(&response, "{\"status\":\"loading\"}"));

  CHECK(ask(port, "GET", "/v1/models", NULL, NULL, &response));
  CHECK_INT_EQ(response.status, 503);
  CHECK(has(&response, "\"code\":\"model_loading\""));
  CHECK(has(&response, "Retry-After: 5"));

  CHECK(ask(port, "POST", "/v1/chat/completions", NULL, chat_body, &response));
  CHECK_INT_EQ(response.status, 503);
  CHECK(has(&response, "\"type\":\"server_error\""));
  CHECK(has(&response, "\"code\":\"model_loading\""));

  CHECK(ask(port, "GET", "/metrics", NULL, NULL, &response));
  CHECK_INT_EQ(response.status, 200);
  CHECK(has(&response, "\nvlm_model_loaded 0\n"));
  CHECK(has(&response, "\nvlm_num_requests_waiting 0\n"));

  CHECK(ask(port, "GET", "/", NULL, NULL, &response));
  CHECK_INT_EQ(response.status, 200);

  /* Attached: ready, and the same routes answer as they always did. */
  vlm_engine *engine = open_engine();
  if (engine) {
    CHECK_OK(vlm_server_attach_engine(server, engine));
    CHECK_ERROR(vlm_server_attach_engine(server, engine), VLM_STATUS_INVALID_ARGUMENT, "has its engine already");
    CHECK(ask(port, "GET", "/health/ready", NULL, NULL, &response));
    CHECK_INT_EQ(response.status, 200);
    CHECK(has(&response, "{\"status\":\"ready\",\"queue_depth\":0,\"queue_limit\":64,\"active_slots\":0,\"slots\":1}"));
    CHECK(ask(port, "GET", "/health", NULL, NULL, &response));
    CHECK_INT_EQ(response.status, 200);
    CHECK(has(&response, "{\"status\":\"ok\"}"));
    CHECK(ask(port, "GET", "/v1/models", NULL, NULL, &response));
    CHECK_INT_EQ(response.status, 200);
    CHECK(has(&response, "\"id\":\"llava\""));
    CHECK(ask(port, "POST", "/v1/chat/completions", NULL, chat_body, &response));
    CHECK_INT_EQ(response.status, 200);
    CHECK(has(&response, "\"completion_tokens\":2"));
    CHECK(ask(port, "GET", "/metrics", NULL, NULL, &response));
    CHECK(has(&response, "\nvlm_model_loaded 1\n"));
    CHECK(has(&response, "# TYPE vlm_num_requests_waiting gauge\n"));
    CHECK(has(&response, "# TYPE vlm_num_requests_running gauge\n"));
    CHECK(has(&response, "# TYPE vlm_kv_cache_usage_ratio gauge\n"));
  }
  vlm_server_stop(server, 1);
  vlm_engine_release(engine);
}

/* A server stopped before it ever had a model (a load that failed). */
static void a_loading_server_stops_cleanly(void) {
  vlm_server_options options = {.port = 0};
  vlm_server *server = NULL;
  CHECK_OK(vlm_server_start_loading(&options, &server));
  if (server) vlm_server_stop(server, 1);
}

static void the_page_is_served_with_its_headers(void) {
  vlm_engine *engine = open_engine();
  if (!engine) return;
  vlm_server_options options = {.port = 0, .api_key = "secret"};
  vlm_server *server = NULL;
  CHECK_OK(vlm_server_start(engine, &options, &server));
  if (!server) {
    vlm_engine_release(engine);
    return;
  }
  int port = vlm_server_port(server);
  answer response;
  CHECK(ask(port, "GET", "/", NULL, NULL, &response)); /* no key needed for the page */
  CHECK_INT_EQ(response.status, 200);
  CHECK(has(&response, "Content-Type: text/html; charset=utf-8"));
  CHECK(has(&response, "Content-Security-Policy: default-src 'none'; script-src 'self'"));
  CHECK(has(&response, "X-Content-Type-Options: nosniff"));
  CHECK(has(&response, "<script src=\"/ui/app.js\" defer></script>"));
  CHECK(strncmp(response.body, "<!doctype html>", 15) == 0);
  const char *etag = strstr(response.text, "ETag: \"");
  CHECK(etag != NULL);
  if (etag) {
    char header[128];
    int length = (int)strcspn(etag, "\r");
    snprintf(header, sizeof(header), "If-None-Match: %.*s\r\n", length - 6, etag + 6);
    CHECK(ask(port, "GET", "/", header, NULL, &response));
    CHECK_INT_EQ(response.status, 304);
    CHECK_STR_EQ(response.body, "");
    CHECK(ask(port, "GET", "/", "If-None-Match: \"0000000000000000\"\r\n", NULL, &response));
    CHECK_INT_EQ(response.status, 200);
  }
  CHECK(ask(port, "GET", "/ui/app.js", NULL, NULL, &response));
  CHECK_INT_EQ(response.status, 200);
  CHECK(has(&response, "Content-Type: text/javascript; charset=utf-8"));
  CHECK(has(&response, "/v1/chat/completions"));
  CHECK(ask(port, "GET", "/ui/style.css", NULL, NULL, &response));
  CHECK_INT_EQ(response.status, 200);
  CHECK(has(&response, "Content-Type: text/css; charset=utf-8"));
  CHECK(ask(port, "HEAD", "/", NULL, NULL, &response));
  CHECK_INT_EQ(response.status, 200);
  CHECK_STR_EQ(response.body, "");
  CHECK(ask(port, "GET", "/ui/missing.js", NULL, NULL, &response));
  CHECK_INT_EQ(response.status, 404);
  CHECK(ask(port, "GET", "/ui/", NULL, NULL, &response));
  CHECK_INT_EQ(response.status, 404);
  CHECK(ask(port, "POST", "/", NULL, "{}", &response));
  CHECK_INT_EQ(response.status, 405);
  /* The API behind it still needs the key. */
  CHECK(ask(port, "GET", "/v1/models", NULL, NULL, &response));
  CHECK_INT_EQ(response.status, 401);
  CHECK(ask(port, "GET", "/v1/models", "Authorization: Bearer secret\r\n", NULL, &response));
  CHECK_INT_EQ(response.status, 200);
  CHECK(ask(port, "GET", "/metrics", "Authorization: Bearer secret\r\n", NULL, &response));
  CHECK(has(&response, "vlm_http_responses_total{route=\"/\",status=\"200\"}"));
  CHECK(has(&response, "vlm_http_responses_total{route=\"/\",status=\"304\"} 1\n"));
  CHECK(ask(port, "GET", "/metrics", NULL, NULL, &response));
  CHECK_INT_EQ(response.status, 401);
  vlm_server_stop(server, 1);
  vlm_engine_release(engine);
}

/* --public-metrics: a scraper without the key reads /metrics; nothing else
 * opens up. */
static void public_metrics_need_no_key(void) {
  vlm_engine *engine = open_engine();
  if (!engine) return;
  vlm_server_options options = {.port = 0, .api_key = "secret", .public_metrics = true};
  vlm_server *server = NULL;
  CHECK_OK(vlm_server_start(engine, &options, &server));
  if (server) {
    int port = vlm_server_port(server);
    answer response;
    CHECK(ask(port, "GET", "/metrics", NULL, NULL, &response));
    CHECK_INT_EQ(response.status, 200);
    CHECK(has(&response, "\nvlm_num_requests_waiting 0\n"));
    CHECK(ask(port, "GET", "/v1/models", NULL, NULL, &response));
    CHECK_INT_EQ(response.status, 401);
    CHECK(ask(port, "POST", "/v1/chat/completions", NULL, chat_body, &response));
    CHECK_INT_EQ(response.status, 401);
    vlm_server_stop(server, 1);
  }
  vlm_engine_release(engine);
}

static void no_ui_turns_the_page_off(void) {
  vlm_engine *engine = open_engine();
  if (!engine) return;
  vlm_server_options options = {.port = 0, .no_ui = true};
  vlm_server *server = NULL;
  CHECK_OK(vlm_server_start(engine, &options, &server));
  if (server) {
    int port = vlm_server_port(server);
    answer response;
    const char *paths[] = {"/", "/ui/app.js", "/ui/style.css"};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
      CHECK(ask(port, "GET", paths[i], NULL, NULL, &response));
      CHECK_INT_EQ(response.status, 404);
      CHECK(has(&response, "\"code\":\"unknown_url\""));
    }
    CHECK(ask(port, "GET", "/health", NULL, NULL, &response));
    CHECK_INT_EQ(response.status, 200);
    vlm_server_stop(server, 1);
  }
  vlm_engine_release(engine);
}

static void setup(void) { signal(SIGPIPE, SIG_IGN); }

TEST_MAIN(TEST(setup), TEST(a_loading_server_is_live_but_not_ready), TEST(a_loading_server_stops_cleanly),
          TEST(the_page_is_served_with_its_headers), TEST(public_metrics_need_no_key),
          TEST(no_ui_turns_the_page_off))
