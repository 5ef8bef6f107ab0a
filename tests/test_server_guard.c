/* The server's watch over a request while its media is fetched: a client
 * that disconnects, or a request past --request-timeout, aborts the remote
 * fetch at once instead of letting it run to its own 10 s limit. The
 * server runs in process on the tiny LLaVA; the "remote" image comes from
 * a local HTTP server that accepts the fetch and never answers. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server/server.h"
#include "test.h"
#include "vlm/engine.h"
#include "vlm/model.h"

#define IMAGE_MODEL VLM_SOURCE_DIR "/tests/models/llava"

static double now_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* Accepts one connection, reads the request, answers nothing, and notes
 * when the fetcher gives up (its end of the stream). */
typedef struct stalling_server {
  int listener;
  int port;
  pthread_t thread;
  atomic_bool accepted;
  _Atomic double abandoned_at;
} stalling_server;

static void *stall(void *context) {
  stalling_server *server = context;
  struct pollfd ready = {.fd = server->listener, .events = POLLIN};
  if (poll(&ready, 1, 15000) <= 0) return NULL;
  int connection = accept(server->listener, NULL, NULL);
  if (connection < 0) return NULL;
  atomic_store(&server->accepted, true);
  char buffer[4096];
  double give_up = now_seconds() + 15;
  while (now_seconds() < give_up) {
    struct pollfd readable = {.fd = connection, .events = POLLIN};
    if (poll(&readable, 1, 100) <= 0) continue;
    ssize_t count = recv(connection, buffer, sizeof(buffer), 0);
    if (count <= 0) {
      atomic_store(&server->abandoned_at, now_seconds());
      break;
    }
  }
  close(connection);
  return NULL;
}

static bool listen_on_loopback(int *out_socket, int *out_port) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t length = sizeof(address);
  if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof(address)) != 0 ||
      listen(listener, 4) != 0 || getsockname(listener, (struct sockaddr *)&address, &length) != 0) {
    if (listener >= 0) close(listener);
    return false;
  }
  *out_socket = listener;
  *out_port = ntohs(address.sin_port);
  return true;
}

static bool start_stalling(stalling_server *server) {
  memset(server, 0, sizeof(*server));
  atomic_init(&server->accepted, false);
  atomic_init(&server->abandoned_at, 0.0);
  if (!listen_on_loopback(&server->listener, &server->port)) return false;
  return pthread_create(&server->thread, NULL, stall, server) == 0;
}

static void stop_stalling(stalling_server *server) {
  pthread_join(server->thread, NULL);
  close(server->listener);
}

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

/* Sends a chat request whose only image is on the stalling server. */
static int send_remote_image_request(int server_port, int image_port) {
  char body[512], request[1024];
  snprintf(body, sizeof(body),
           "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":"
           "{\"url\":\"http://127.0.0.1:%d/a.png\"}},{\"type\":\"text\",\"text\":\"What?\"}]}],"
           "\"max_tokens\":2}",
           image_port);
  snprintf(request, sizeof(request),
           "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
           "Content-Length: %zu\r\n\r\n%s",
           strlen(body), body);
  int client = connect_to(server_port);
  if (client >= 0 && send(client, request, strlen(request), MSG_NOSIGNAL) != (ssize_t)strlen(request)) {
    close(client);
    return -1;
  }
  return client;
}

static bool wait_for(atomic_bool *flag, double seconds) {
  double deadline = now_seconds() + seconds;
  while (!atomic_load(flag) && now_seconds() < deadline) usleep(10 * 1000);
  return atomic_load(flag);
}

static double wait_abandoned(stalling_server *server, double seconds) {
  double deadline = now_seconds() + seconds;
  while (atomic_load(&server->abandoned_at) == 0.0 && now_seconds() < deadline) usleep(10 * 1000);
  return atomic_load(&server->abandoned_at);
}

typedef struct running_server {
  vlm_engine *engine;
  vlm_server *server;
} running_server;

static bool start(running_server *running, double request_timeout) {
  memset(running, 0, sizeof(*running));
  vlm_engine_options engine_options = {.slot_count = 1, .thread_count = 1};
  vlm_model *model = NULL;
  CHECK_OK(vlm_model_open(IMAGE_MODEL, NULL, &model));
  if (!model) return false;
  CHECK_OK(vlm_engine_open(model, &engine_options, &running->engine));
  vlm_model_release(model); /* the engine holds its own reference */
  if (!running->engine) return false;
  vlm_server_options options = {.port = 0, .allow_remote_media = true,
                                .allow_private_media_addresses = true,
                                .request_timeout_seconds = request_timeout};
  CHECK_OK(vlm_server_start(running->engine, &options, &running->server));
  return running->server != NULL;
}

static void stop(running_server *running) {
  if (running->server) vlm_server_stop(running->server, 1);
  if (running->engine) vlm_engine_release(running->engine);
}

/* Issue 13: the fetch ran on to its own 10 s limit after the client left. */
static void a_client_that_leaves_cancels_its_remote_fetch(void) {
  running_server running;
  stalling_server image;
  if (!start(&running, 0) || !start_stalling(&image)) {
    CHECK(!"setup failed");
    stop(&running);
    return;
  }
  int client = send_remote_image_request(vlm_server_port(running.server), image.port);
  CHECK(client >= 0);
  CHECK(wait_for(&image.accepted, 10));
  double left = now_seconds();
  close(client);
  double abandoned = wait_abandoned(&image, 14);
  CHECK(abandoned > 0);
  if (abandoned > 0) CHECK(abandoned - left < 2.0);
  stop_stalling(&image);
  stop(&running);
}

/* Reads a response's status line and body until the server closes or a
 * whole JSON body arrived. */
static bool read_answer(int client, double seconds, char *out, size_t capacity) {
  size_t length = 0;
  double deadline = now_seconds() + seconds;
  while (length + 1 < capacity && now_seconds() < deadline) {
    struct pollfd readable = {.fd = client, .events = POLLIN};
    if (poll(&readable, 1, 100) <= 0) continue;
    ssize_t count = recv(client, out + length, capacity - length - 1, 0);
    if (count <= 0) break;
    length += (size_t)count;
    out[length] = '\0';
    const char *body = strstr(out, "\r\n\r\n");
    if (body && strrchr(body, '}') && strstr(body, "}}")) return true;
  }
  out[length] = '\0';
  return length > 0;
}

/* --request-timeout covers the media stage too: the fetch is cancelled and
 * the client hears why. */
static void the_request_deadline_cancels_a_remote_fetch(void) {
  running_server running;
  stalling_server image;
  if (!start(&running, 1.0) || !start_stalling(&image)) {
    CHECK(!"setup failed");
    stop(&running);
    return;
  }
  double sent = now_seconds();
  int client = send_remote_image_request(vlm_server_port(running.server), image.port);
  CHECK(client >= 0);
  char answer[4096];
  CHECK(read_answer(client, 8, answer, sizeof(answer)));
  double answered = now_seconds();
  CHECK(strncmp(answer, "HTTP/1.1 504", 12) == 0);
  CHECK(strstr(answer, "\"code\":\"request_timeout\"") != NULL);
  CHECK(strstr(answer, "X-Request-ID: ") != NULL);
  CHECK(answered - sent < 3.0);
  CHECK(wait_abandoned(&image, 5) > 0);
  close(client);
  stop_stalling(&image);
  stop(&running);
}

static void ignore_sigpipe(void) {
  signal(SIGPIPE, SIG_IGN);
}

static void setup(void) { ignore_sigpipe(); }

TEST_MAIN(TEST(setup), TEST(a_client_that_leaves_cancels_its_remote_fetch),
          TEST(the_request_deadline_cancels_a_remote_fetch))
