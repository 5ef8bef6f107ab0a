/* Connection deadlines and request watches; see connection_guard.h. */
#include "server/connection_guard.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "core/log.h"
#include "core/status.h"

typedef enum connection_phase {
  PHASE_HEADERS,    /* waiting for a request's line and headers */
  PHASE_BODY,       /* headers in, body arriving */
  PHASE_HANDLING,   /* the request is with the server (no receive deadline) */
} connection_phase;

/* Who a connection belongs to, for the per-client limit: an IPv4 address
 * (IPv4-mapped IPv6 too) or an IPv6 /64. */
typedef struct client_key {
  int family;
  uint8_t bytes[8];
} client_key;

struct guarded_connection {
  connection_guard *guard;
  struct MHD_Connection *connection;
  int fd;
  client_key key;
  char client[INET6_ADDRSTRLEN];
  connection_phase phase;
  double deadline;              /* for PHASE_HEADERS and PHASE_BODY */
  double accepted;
  double idle_since;            /* accept, or the end of the last response */
  size_t body_bytes;            /* request body reserved by its request */
  uint64_t requests;            /* requests completed on this connection */
  bool shut_down;               /* the guard closed it */
  bool nul_in_url;
  request_watch *watch;
  guarded_connection *previous, *next;
};

struct connection_guard {
  connection_guard_options options;
  pthread_mutex_t mutex;
  pthread_cond_t wake;
  pthread_t thread;
  bool stopping;
  guarded_connection *head;
  connection_guard_counts counts;
  int64_t closing;              /* shut down by the guard, not yet closed by libmicrohttpd */
};

/* Waiting for its next request after a response (not shut down). */
static bool is_idle_keep_alive(const guarded_connection *entry) {
  return entry->phase == PHASE_HEADERS && entry->requests > 0 && !entry->shut_down;
}

double connection_guard_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* True when the peer closed its side or the socket failed. A readable
 * socket is either the next pipelined request or an orderly close, which
 * peeks as 0 bytes. Never consumes anything. */
bool socket_peer_gone(int fd) {
  struct pollfd poll_fd = {.fd = fd, .events = POLLIN | POLLRDHUP};
  if (poll(&poll_fd, 1, 0) <= 0) return false;
  if (poll_fd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
  if (!(poll_fd.revents & POLLIN)) return false;
  char byte;
  ssize_t peeked = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static void close_past_deadline(connection_guard *guard, guarded_connection *entry, double now) {
  if (entry->shut_down || entry->phase == PHASE_HANDLING || now < entry->deadline) return;
  const char *what;
  if (entry->phase == PHASE_BODY) {
    guard->counts.body_deadline++;
    what = "request body not complete in time (--body-timeout)";
  } else if (entry->requests == 0) {
    guard->counts.header_deadline++;
    what = "request headers not complete in time after accept (--header-timeout)";
  } else {
    guard->counts.keep_alive_deadline++;
    what = "no complete next request on a keep-alive connection in time (--timeout)";
  }
  if (is_idle_keep_alive(entry)) guard->counts.idle--;
  entry->shut_down = true;
  guard->closing++;
  /* The connection's thread sees the end of the stream and closes it; the
   * descriptor stays valid until the CLOSED notification, which waits for
   * this lock. */
  shutdown(entry->fd, SHUT_RDWR);
  VLM_LOG_INFOF("serve: closed the connection from %s: %s", entry->client, what);
}

static void check_watch(guarded_connection *entry, double now) {
  request_watch *watch = entry->watch;
  if (!watch || atomic_load(watch->cancel)) return;
  if (watch->deadline > 0 && now >= watch->deadline) {
    atomic_store(&watch->timed_out, true);
    atomic_store(watch->cancel, true);
  } else if (socket_peer_gone(entry->fd)) {
    atomic_store(&watch->client_gone, true);
    atomic_store(watch->cancel, true);
  }
}

static void *guard_thread(void *context) {
  connection_guard *guard = context;
  pthread_mutex_lock(&guard->mutex);
  while (!guard->stopping) {
    double now = connection_guard_now();
    for (guarded_connection *entry = guard->head; entry; entry = entry->next) {
      close_past_deadline(guard, entry, now);
      if (entry->phase == PHASE_HANDLING) check_watch(entry, now);
    }
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += GUARD_TICK_MILLISECONDS * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&guard->wake, &guard->mutex, &until);
  }
  pthread_mutex_unlock(&guard->mutex);
  return NULL;
}

vlm_status connection_guard_start(const connection_guard_options *options,
                                  connection_guard **out_guard) {
  *out_guard = NULL;
  connection_guard *guard = calloc(1, sizeof(*guard));
  if (!guard) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  guard->options = *options;
  pthread_mutex_init(&guard->mutex, NULL);
  pthread_condattr_t attributes;
  pthread_condattr_init(&attributes);
  pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
  pthread_cond_init(&guard->wake, &attributes);
  pthread_condattr_destroy(&attributes);
  if (pthread_create(&guard->thread, NULL, guard_thread, guard) != 0) {
    pthread_cond_destroy(&guard->wake);
    pthread_mutex_destroy(&guard->mutex);
    free(guard);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "cannot start the connection guard thread");
  }
  *out_guard = guard;
  return VLM_OK;
}

void connection_guard_stop(connection_guard *guard) {
  if (!guard) return;
  pthread_mutex_lock(&guard->mutex);
  guard->stopping = true;
  pthread_cond_signal(&guard->wake);
  pthread_mutex_unlock(&guard->mutex);
  pthread_join(guard->thread, NULL);
  /* libmicrohttpd notified every close before it stopped; anything left
   * would be a connection it never closed. */
  while (guard->head) {
    guarded_connection *entry = guard->head;
    guard->head = entry->next;
    free(entry);
  }
  pthread_cond_destroy(&guard->wake);
  pthread_mutex_destroy(&guard->mutex);
  free(guard);
}

void connection_guard_get_counts(connection_guard *guard, connection_guard_counts *out) {
  pthread_mutex_lock(&guard->mutex);
  *out = guard->counts;
  pthread_mutex_unlock(&guard->mutex);
}

static client_key key_of(const struct sockaddr *address) {
  client_key key = {0};
  if (address->sa_family == AF_INET) {
    key.family = AF_INET;
    memcpy(key.bytes, &((const struct sockaddr_in *)(const void *)address)->sin_addr, 4);
  } else if (address->sa_family == AF_INET6) {
    const struct in6_addr *ipv6 = &((const struct sockaddr_in6 *)(const void *)address)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(ipv6)) {
      key.family = AF_INET;
      memcpy(key.bytes, ipv6->s6_addr + 12, 4);
    } else {
      key.family = AF_INET6;
      memcpy(key.bytes, ipv6->s6_addr, 8);
    }
  }
  return key;
}

static bool same_client(const client_key *a, const client_key *b) {
  return a->family == b->family && memcmp(a->bytes, b->bytes, sizeof(a->bytes)) == 0;
}

/* The connection waiting longest for its next (or first) request; with
 * `keep_alive_only`, among idle keep-alive connections. Under the lock. */
static guarded_connection *least_recently_used(connection_guard *guard, bool keep_alive_only) {
  guarded_connection *oldest = NULL;
  for (guarded_connection *entry = guard->head; entry; entry = entry->next) {
    bool candidate = keep_alive_only ? is_idle_keep_alive(entry)
                                     : entry->phase == PHASE_HEADERS && !entry->shut_down;
    if (candidate && (!oldest || entry->idle_since < oldest->idle_since)) oldest = entry;
  }
  return oldest;
}

static void close_idle(connection_guard *guard, guarded_connection *entry, const char *why) {
  if (is_idle_keep_alive(entry)) guard->counts.idle--;
  entry->shut_down = true;
  guard->closing++;
  shutdown(entry->fd, SHUT_RDWR); /* as in close_past_deadline */
  VLM_LOG_INFOF("serve: closed the connection from %s: %s", entry->client, why);
}

enum MHD_Result connection_guard_accept(void *context, const struct sockaddr *address, socklen_t length) {
  (void)length;
  connection_guard *guard = context;
  client_key key = key_of(address);
  pthread_mutex_lock(&guard->mutex);
  unsigned held = 0;
  for (const guarded_connection *entry = guard->head; entry; entry = entry->next)
    held += same_client(&entry->key, &key);
  const connection_guard_options *options = &guard->options;
  bool over_client = options->per_client && held >= options->per_client;
  /* Connections the guard shut down still count until libmicrohttpd closes
   * them, but are as good as gone: not counted, so a burst of new ones
   * does not close more idle ones than it needs. */
  int64_t open = guard->counts.open - guard->closing;
  bool in_reserve = open + (int64_t)options->reserve >= (int64_t)options->connection_limit;
  /* Only the reserve is left: make room by closing the connection that has
   * waited longest for a request, rather than turn this client away
   * (however many addresses the idle ones came from). */
  guarded_connection *oldest = in_reserve && !over_client ? least_recently_used(guard, false) : NULL;
  if (oldest) {
    close_idle(guard, oldest, "the connection slots are nearly all taken, and it was the one "
               "waiting longest for a request");
    guard->counts.idle_closed_accept++;
    in_reserve = false;
  }
  /* In the reserve only light clients get in: a health checker, or a new
   * user, rather than the addresses that filled the rest. */
  unsigned light = options->per_client >= 8 ? options->per_client / 4 : 1;
  bool refused = over_client || (in_reserve && held >= light);
  if (over_client) guard->counts.refused_per_client++;
  else if (refused) guard->counts.refused_reserve++;
  pthread_mutex_unlock(&guard->mutex);
  return refused ? MHD_NO : MHD_YES;
}

static void describe_client(struct MHD_Connection *connection, char *text, size_t capacity) {
  snprintf(text, capacity, "?");
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (!info || !info->client_addr) return;
  const struct sockaddr *address = info->client_addr;
  const void *raw = NULL;
  if (address->sa_family == AF_INET) raw = &((const struct sockaddr_in *)(const void *)address)->sin_addr;
  if (address->sa_family == AF_INET6) raw = &((const struct sockaddr_in6 *)(const void *)address)->sin6_addr;
  if (raw) inet_ntop(address->sa_family, raw, text, (socklen_t)capacity);
}

static void add_connection(connection_guard *guard, struct MHD_Connection *connection,
                           void **socket_context) {
  guarded_connection *entry = calloc(1, sizeof(*entry));
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (!entry || !info) {
    /* Without an entry the connection has no deadlines: refuse it rather
     * than serve it unguarded. */
    free(entry);
    if (info) shutdown(info->connect_fd, SHUT_RDWR);
    *socket_context = NULL;
    return;
  }
  entry->guard = guard;
  entry->connection = connection;
  entry->fd = info->connect_fd;
  const union MHD_ConnectionInfo *address = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (address && address->client_addr) entry->key = key_of(address->client_addr);
  describe_client(connection, entry->client, sizeof(entry->client));
  entry->phase = PHASE_HEADERS;
  entry->accepted = connection_guard_now();
  entry->idle_since = entry->accepted;
  entry->deadline = entry->accepted + guard->options.header_seconds;
  pthread_mutex_lock(&guard->mutex);
  entry->next = guard->head;
  if (guard->head) guard->head->previous = entry;
  guard->head = entry;
  guard->counts.open++;
  pthread_mutex_unlock(&guard->mutex);
  *socket_context = entry;
}

static void remove_connection(connection_guard *guard, guarded_connection *entry) {
  pthread_mutex_lock(&guard->mutex);
  if (entry->previous) entry->previous->next = entry->next;
  else guard->head = entry->next;
  if (entry->next) entry->next->previous = entry->previous;
  guard->counts.open--;
  if (is_idle_keep_alive(entry)) guard->counts.idle--;
  if (entry->shut_down) guard->closing--;
  guard->counts.body_bytes -= entry->body_bytes;
  pthread_mutex_unlock(&guard->mutex);
  free(entry);
}

void connection_guard_notify(void *context, struct MHD_Connection *connection, void **socket_context,
                             enum MHD_ConnectionNotificationCode code) {
  connection_guard *guard = context;
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    add_connection(guard, connection, socket_context);
  } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
    remove_connection(guard, *socket_context);
    *socket_context = NULL;
  }
}

guarded_connection *connection_guard_find(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info ? info->socket_context : NULL;
}

const char *guarded_connection_client(const guarded_connection *entry) {
  return entry ? entry->client : "?";
}

static void set_phase(guarded_connection *entry, connection_phase phase, double deadline) {
  if (!entry) return;
  connection_guard *guard = entry->guard;
  pthread_mutex_lock(&guard->mutex);
  if (is_idle_keep_alive(entry)) guard->counts.idle--;
  entry->phase = phase;
  entry->deadline = deadline;
  pthread_mutex_unlock(&guard->mutex);
}

void guarded_connection_headers_received(guarded_connection *entry) {
  if (!entry) return;
  /* The first request's body is due body_seconds after accept (its
   * headers took part of that); a later one's after its headers. */
  double origin = entry->requests == 0 ? entry->accepted : connection_guard_now();
  set_phase(entry, PHASE_BODY, origin + entry->guard->options.body_seconds);
}

void guarded_connection_body_received(guarded_connection *entry) {
  set_phase(entry, PHASE_HANDLING, 0);
}

void guarded_connection_request_done(guarded_connection *entry) {
  if (!entry) return;
  connection_guard *guard = entry->guard;
  pthread_mutex_lock(&guard->mutex);
  bool was_idle = is_idle_keep_alive(entry);
  entry->requests++;
  entry->phase = PHASE_HEADERS;
  entry->idle_since = connection_guard_now();
  entry->deadline = entry->idle_since + guard->options.keep_alive_seconds;
  entry->watch = NULL;
  if (!was_idle && is_idle_keep_alive(entry)) guard->counts.idle++;
  /* One more idle connection than the cap: the least recently used goes
   * (not this one, which was used last). */
  unsigned cap = guard->options.idle_limit;
  if (cap && guard->counts.idle > (int64_t)cap) {
    guarded_connection *oldest = least_recently_used(guard, true);
    if (oldest && oldest != entry) {
      close_idle(guard, oldest, "more idle keep-alive connections than --max-idle-connections, "
                 "and it was idle longest");
      guard->counts.idle_closed_cap++;
    }
  }
  pthread_mutex_unlock(&guard->mutex);
}

void guarded_connection_watch(guarded_connection *entry, request_watch *watch) {
  if (!entry) return;
  connection_guard *guard = entry->guard;
  pthread_mutex_lock(&guard->mutex);
  entry->watch = watch;
  pthread_mutex_unlock(&guard->mutex);
}

body_reservation guarded_connection_reserve_body(guarded_connection *entry, size_t bytes) {
  if (!entry || !bytes) return BODY_OK;
  connection_guard *guard = entry->guard;
  const connection_guard_options *options = &guard->options;
  body_reservation outcome = BODY_OK;
  pthread_mutex_lock(&guard->mutex);
  if (options->body_budget &&
      (bytes > options->body_budget || guard->counts.body_bytes > options->body_budget - bytes)) {
    outcome = BODY_OVER_TOTAL;
  } else if (options->body_per_client) {
    size_t held = 0;
    for (const guarded_connection *other = guard->head; other; other = other->next)
      if (same_client(&other->key, &entry->key)) held += other->body_bytes;
    if (bytes > options->body_per_client || held > options->body_per_client - bytes) outcome = BODY_OVER_CLIENT;
  }
  if (outcome == BODY_OK) {
    entry->body_bytes += bytes;
    guard->counts.body_bytes += bytes;
  } else if (outcome == BODY_OVER_TOTAL) {
    guard->counts.body_refused_total++;
  } else {
    guard->counts.body_refused_client++;
  }
  pthread_mutex_unlock(&guard->mutex);
  return outcome;
}

void guarded_connection_release_body(guarded_connection *entry) {
  if (!entry) return;
  connection_guard *guard = entry->guard;
  pthread_mutex_lock(&guard->mutex);
  guard->counts.body_bytes -= entry->body_bytes;
  entry->body_bytes = 0;
  pthread_mutex_unlock(&guard->mutex);
}

void guarded_connection_note_nul_in_url(guarded_connection *entry) {
  if (entry) entry->nul_in_url = true; /* the connection's own thread, like the reader below */
}

bool guarded_connection_take_nul_in_url(guarded_connection *entry) {
  if (!entry) return false;
  bool noted = entry->nul_in_url;
  entry->nul_in_url = false;
  return noted;
}
