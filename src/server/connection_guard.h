/* Deadlines for every connection of `vlm serve`, measured from fixed
 * points rather than reset by each byte, and a watch over requests being
 * prepared. libmicrohttpd (Debian 12's 0.9.75) only has an idle timeout,
 * which a client trickling one byte every few seconds never trips; this
 * guard enforces what it cannot:
 *
 *   headers     a new connection's request line and headers must be in
 *               within header_seconds of accept; a keep-alive connection's
 *               next request within keep_alive_seconds of the previous
 *               response's end;
 *   body        a request's body must be in within body_seconds of the
 *               first request's accept, or of a later request's headers;
 *   handling    while a request is being prepared (media fetched, images
 *               decoded), its client is polled and its wall-clock deadline
 *               checked; either sets the request's cancel flag, which the
 *               remote fetch (libcurl's progress callback) and the image
 *               decoders poll.
 *
 * Admission (libmicrohttpd's accept policy callback): one client (an IPv4
 * address, or an IPv6 /64, which one host usually holds whole) may hold at
 * most per_client connections; and the last `reserve` of the
 * connection_limit slots go only to light clients (holding fewer than a
 * quarter of per_client; none when per_client is under 8), so a flood from
 * several addresses still leaves room for a health check or a new client
 * (libmicrohttpd itself resets every connection over its limit).
 *
 * Idle keep-alive connections are capped (idle_limit): when one more goes
 * idle, the least recently used idle one is closed; and a new connection
 * arriving when only the reserve is left closes the least recently used
 * connection still waiting for its request (idle keep-alive or a new one
 * that has not sent its headers), so no number of source addresses can
 * hold every slot with idle connections (issue 27).
 *
 * Request bodies are charged to a budget shared by all connections and to
 * a share per client (guarded_connection_reserve_body), so unfinished
 * uploads cannot hold more memory than body_budget.
 *
 * A connection past a deadline is shut down (shutdown(2) on its socket):
 * its libmicrohttpd thread sees the end of the stream and closes it. The
 * guard learns of connections through libmicrohttpd's connection
 * notifications (MHD_OPTION_NOTIFY_CONNECTION), which run before the
 * socket is closed, so it never touches a descriptor that was reused.
 * One thread checks every connection each GUARD_TICK_MILLISECONDS. */
#ifndef VLM_SERVER_CONNECTION_GUARD_H
#define VLM_SERVER_CONNECTION_GUARD_H

#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "vlm.h"

#define GUARD_TICK_MILLISECONDS 100

typedef struct connection_guard_options {
  double header_seconds;
  double body_seconds;
  double keep_alive_seconds;
  unsigned connection_limit;    /* libmicrohttpd's (--max-connections) */
  unsigned per_client;          /* 0: no limit */
  unsigned reserve;             /* slots kept for light clients */
  /* Idle keep-alive connections (a response sent, no next request yet)
   * kept at most; past it the least recently used is closed. 0: no cap. */
  unsigned idle_limit;
  /* Request bodies being received or held, all connections together and
   * per client; 0: no limit. */
  size_t body_budget;
  size_t body_per_client;
} connection_guard_options;

/* What the guard closed, for /metrics. */
typedef struct connection_guard_counts {
  uint64_t header_deadline;     /* headers not in within header_seconds */
  uint64_t keep_alive_deadline; /* the next request not in within keep_alive_seconds */
  uint64_t body_deadline;
  uint64_t refused_per_client;  /* the client already held per_client connections */
  uint64_t refused_reserve;     /* only the reserve was left, and the client was not light */
  int64_t open;                 /* connections open now */
  int64_t idle;                 /* of them, idle keep-alive connections */
  uint64_t idle_closed_cap;     /* idle ones closed because more than idle_limit were idle */
  uint64_t idle_closed_accept;  /* idle ones closed to make room for a new connection */
  uint64_t body_bytes;          /* request body bytes reserved now */
  uint64_t body_refused_total;  /* bodies refused: over body_budget */
  uint64_t body_refused_client; /* bodies refused: over the client's body_per_client */
} connection_guard_counts;

/* A request while it is prepared and answered. The connection thread owns
 * it; the guard reads it only while it is attached (under its lock). */
typedef struct request_watch {
  atomic_bool *cancel;          /* set when the client leaves or the deadline passes */
  double deadline;              /* monotonic seconds; 0: none */
  atomic_bool timed_out;
  atomic_bool client_gone;
} request_watch;

typedef struct connection_guard connection_guard;
typedef struct guarded_connection guarded_connection;

vlm_status connection_guard_start(const connection_guard_options *options,
                                  connection_guard **out_guard);
/* Stops the thread and frees the guard; libmicrohttpd must be stopped
 * first (every connection closed and notified). */
void connection_guard_stop(connection_guard *guard);
void connection_guard_get_counts(connection_guard *guard, connection_guard_counts *out);

/* The MHD_AcceptPolicyCallback; `context` is the guard. Runs on
 * libmicrohttpd's accepting thread, like the notifications below. */
enum MHD_Result connection_guard_accept(void *context, const struct sockaddr *address, socklen_t length);

/* The MHD_NotifyConnectionCallback; `context` is the guard. */
void connection_guard_notify(void *context, struct MHD_Connection *connection, void **socket_context,
                             enum MHD_ConnectionNotificationCode code);

/* The connection's entry (NULL for one the guard never saw). */
guarded_connection *connection_guard_find(struct MHD_Connection *connection);
/* The client's address as text ("127.0.0.1", "::1"), for logs. */
const char *guarded_connection_client(const guarded_connection *entry);

/* Phase changes, from the connection's own thread. */
void guarded_connection_headers_received(guarded_connection *entry);
void guarded_connection_body_received(guarded_connection *entry);
void guarded_connection_request_done(guarded_connection *entry);

/* Attaches (or, with NULL, detaches) the request the connection is working
 * on. Detach before the watch is freed. */
void guarded_connection_watch(guarded_connection *entry, request_watch *watch);

/* Reserves `bytes` more of request body for the connection's request,
 * from the global budget and its client's share. BODY_OK, or which limit
 * it would pass (nothing reserved then). Released together by
 * guarded_connection_release_body (and when the connection closes). A
 * NULL entry (a connection the guard never saw) reserves nothing. */
typedef enum body_reservation { BODY_OK, BODY_OVER_TOTAL, BODY_OVER_CLIENT } body_reservation;
body_reservation guarded_connection_reserve_body(guarded_connection *entry, size_t bytes);
void guarded_connection_release_body(guarded_connection *entry);

/* The URL of the request being received held an encoded NUL (%00); set by
 * the unescape callback, read (and cleared) when its headers are in. */
void guarded_connection_note_nul_in_url(guarded_connection *entry);
bool guarded_connection_take_nul_in_url(guarded_connection *entry);

double connection_guard_now(void);
/* True when the peer of socket `fd` closed its side or the socket failed
 * (a pipelined next request does not count). Consumes nothing. */
bool socket_peer_gone(int fd);

#endif
