/* `vlm serve`: an OpenAI-compatible HTTP/1.1 server in front of one engine
 * (include/vlm/engine.h). SPEC 1.2.
 *
 * Routes: POST /v1/chat/completions, POST /v1/completions, GET /v1/models,
 * GET /health, GET /health/live, GET /health/ready, GET /metrics, and the
 * chat page at GET / (with its files under /ui/; off with no_ui). Every
 * error the server itself gives is an OpenAI error object
 * {"error":{"message","type","param","code"}} with its HTTP status (what
 * libmicrohttpd refuses while parsing a request line and headers it
 * answers itself; docs/SECURITY.md lists both). Every response the server
 * gives carries X-Request-ID. docs/SECURITY.md describes the limits below.
 *
 * Threads: libmicrohttpd runs one thread per connection. A request is
 * parsed, its media fetched and decoded, and it is submitted to the engine
 * on that thread; the engine's events come back through a per-request
 * queue the connection thread waits on, so a slow client only ever holds
 * up its own connection, never the scheduler. */
#ifndef VLM_SERVER_SERVER_H
#define VLM_SERVER_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "vlm.h"
#include "vlm/engine.h"

typedef struct vlm_server_options {
  const char *host;               /* address to bind; NULL: 127.0.0.1 */
  int port;                       /* 0: any free port (vlm_server_port tells which) */
  const char *api_key;            /* NULL or "": no authentication */
  const char *allowed_media_dir;  /* NULL: file:// media refused */
  bool allow_remote_media;        /* http(s):// media */
  size_t max_body_bytes;          /* request body limit (413 over it); 0: 64 MiB */
  /* A keep-alive connection's next request must be in (headers) within
   * this long after the previous response, and libmicrohttpd closes a
   * connection idle this long while it sends; 0: 60. */
  unsigned timeout_seconds;
  double header_timeout_seconds;  /* request line + headers within this of accept; 0: 10 */
  double body_timeout_seconds;    /* the body within this of accept (later requests: of
                                     their headers); 0: 60 */
  double request_timeout_seconds; /* a completion's wall-clock limit from its headers to
                                     its last byte; 0: 600; negative: none */
  double shutdown_grace_seconds;  /* in-flight requests may finish; 0: 30 */
  unsigned connection_limit;      /* concurrent connections; 0: 256 */
  int max_connections_per_client; /* per source address; 0: 64; negative: no limit */
  /* Idle keep-alive connections kept at most (the least recently used is
   * closed past it); 0: half of connection_limit; negative: no cap. */
  int max_idle_connections;
  /* Request bodies being received or held, all clients together and per
   * client address; each at least max_body_bytes. 0: 256 MiB and 128 MiB;
   * SIZE_MAX: no limit. Past it: 503 server_busy. */
  size_t max_body_memory;
  size_t max_body_memory_per_client;
  /* Comma-separated allow-lists (NULL: the defaults in docs/SECURITY.md:
   * bound to loopback, only loopback Host names; otherwise any). */
  const char *allowed_hosts;
  const char *allowed_origins;
  const char *model_name;         /* the id in /v1/models; NULL: the model directory's name */
  /* The tool-call format parsed from outputs and forced by tool_choice
   * (server/tool_calls.h: hermes, llama3_json, mistral, phi4_mini_json, or
   * "none"); NULL: detected from the chat template. */
  const char *tool_call_parser;
  unsigned max_media_items;       /* image/audio parts per request (SPEC 2.1); 0: 16 */
  double max_audio_seconds;       /* an audio part's duration limit; 0: 600 (vlm/audio.h) */
  /* Lets remote media come from loopback and private addresses. Only for
   * tests that serve media on loopback; no command-line flag sets it. */
  bool allow_private_media_addresses;
  /* No chat page: GET / and /ui/... are 404 like any unknown URL. */
  bool no_ui;
  /* GET /metrics without the API key (for scrapers that cannot send one:
   * a Gateway API Inference Extension endpoint picker). */
  bool public_metrics;
  /* Unknown request fields are ignored and logged (vLLM) instead of 400 (OpenAI). */
  bool accept_unknown_fields;
  /* How chat answers split reasoning from content (server/reasoning.h):
   * "qwen3", "deepseek_r1", "auto" ("qwen3" when the chat template writes
   * <think> and </think>, else none), or NULL / "none": no split, as vLLM
   * without --reasoning-parser. */
  const char *reasoning_parser;
} vlm_server_options;

typedef struct vlm_server vlm_server;

/* Binds and starts serving `engine` (borrowed; it must outlive the server).
 * Options' strings are borrowed too. The same as vlm_server_start_loading
 * then vlm_server_attach_engine. */
vlm_status vlm_server_start(vlm_engine *engine, const vlm_server_options *options,
                            vlm_server **out_server);
/* Binds and answers before there is an engine, so an orchestrator can tell
 * a server that is loading (or, on xla, compiling) from one that is dead:
 * /health/live answers 200, /health and /health/ready 503 with status
 * "loading", /metrics its counters, the chat page its files; everything
 * else that needs the model 503 "model_loading". */
vlm_status vlm_server_start_loading(const vlm_server_options *options, vlm_server **out_server);
/* Hands the loading server its engine (borrowed; it must outlive the
 * server): from here on it is ready. Fails (the server still loading)
 * when the model's chat template cannot be read. */
vlm_status vlm_server_attach_engine(vlm_server *server, vlm_engine *engine);
/* The port actually bound (the free one picked for port 0). */
int vlm_server_port(const vlm_server *server);
/* Graceful stop: stops accepting connections, answers new requests on open
 * connections with 503, lets in-flight requests finish for up to
 * `grace_seconds` (vlm_engine_drain), cancels the rest, closes every
 * connection and frees the server. */
void vlm_server_stop(vlm_server *server, double grace_seconds);

/* The whole life of `vlm serve` after the engine is open: starts, prints
 * "listening on http://HOST:PORT" on stderr, serves until SIGINT or SIGTERM,
 * then stops gracefully. Returns VLM_OK after a signal-driven stop. */
vlm_status vlm_server_run(vlm_engine *engine, const vlm_server_options *options);
/* The same for a server started (and attached) already: prints the line,
 * serves until SIGINT or SIGTERM, stops gracefully and frees it. */
vlm_status vlm_server_run_started(vlm_server *server);
/* The address a started server answers on, as "http://HOST:PORT" (IPv6
 * literals in brackets), for messages. */
void vlm_server_url(const vlm_server *server, char *out, size_t capacity);

#endif
