/* Who may talk to `vlm serve`, decided from the request line and headers
 * before any body is read: the Host and Origin allow-lists (DNS
 * rebinding, cross-site requests), the POST content type, request IDs.
 * Pure functions of strings, so they are tested without a socket. */
#ifndef VLM_SERVER_HTTP_POLICY_H
#define VLM_SERVER_HTTP_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "vlm.h"

/* A comma-separated list of host names (--allowed-hosts) or origins
 * (--allowed-origins), parsed once. Entries are compared without case;
 * "*" matches anything; a host entry starting with '.' matches that domain
 * and its subdomains (".example.com": example.com, a.example.com). */
typedef struct http_name_list {
  char **names;
  size_t count;
  bool any;
} http_name_list;

vlm_status http_name_list_parse(const char *text, const char *flag, http_name_list *out);
void http_name_list_release(http_name_list *list);

typedef struct http_host_policy {
  /* Set (even empty: nothing matches) when --allowed-hosts was given. */
  const http_name_list *allowed_hosts;
  /* Set when --allowed-origins was given. */
  const http_name_list *allowed_origins;
  /* The server listens on a loopback address only: without
   * --allowed-hosts, only loopback names are taken as Host (a DNS name
   * rebound to 127.0.0.1 by an attacker's page is refused). */
  bool bound_to_loopback;
} http_host_policy;

/* `host` is the Host header (NULL when absent: HTTP/1.0; allowed). */
bool http_host_allowed(const http_host_policy *policy, const char *host);
/* `origin` is the Origin header (NULL when absent: not a browser's
 * cross-site request; allowed). Without --allowed-origins an origin is
 * allowed when its host would be allowed as Host; "null" never is. */
bool http_origin_allowed(const http_host_policy *policy, const char *origin);

/* localhost, *.localhost, 127.0.0.0/8, ::1 and IPv4-mapped loopback. */
bool http_name_is_loopback(const char *name, size_t length);

/* The media type of a Content-Type header is application/json
 * (parameters such as charset allowed). */
bool http_content_type_is_json(const char *content_type);

/* The charset parameter of a JSON Content-Type: absent, or UTF-8 ("utf-8"
 * or "utf8", any case, quoted or not). JSON is UTF-8 (RFC 8259 8.1); a
 * body declared in another charset would be read as something else than
 * its sender meant. False also for a malformed parameter list. */
bool http_content_type_charset_ok(const char *content_type);

/* A Content-Encoding the server decodes: none, or "identity". A body sent
 * gzip'd (or anything else) must be refused, not parsed as if plain. */
bool http_content_encoding_ok(const char *content_encoding);

/* A header name is an RFC 9110 token (tchar: letters, digits and
 * !#$%&'*+-.^_`|~), not empty. */
bool http_header_name_ok(const char *name, size_t length);

/* A header value holds no control bytes (0x00-0x1f but HTAB, and 0x7f). */
bool http_header_value_ok(const char *value, size_t length);

/* libmicrohttpd 0.9.75 cuts a header value at a NUL byte without telling
 * (the value is a C string), and ends each line by overwriting its CR and
 * LF with NULs in place. So in its buffer a whole value is followed by at
 * most `max_gap` NULs up to `next` (the next header's name, or the end of
 * the header block) and nothing else; a value cut by a NUL is followed by
 * the rest of the line ("KEY\0junk") or by one NUL more than its line end
 * ("KEY\0\r\n"). True when [value + length, next) is only NULs, at most
 * max_gap of them. (A NUL right before a bare-LF line end looks like a CR
 * and cannot be told apart.) */
bool http_header_value_is_whole(const char *value, size_t length, const char *next, size_t max_gap);

/* Request IDs: a client's X-Request-ID is kept when it is 1 to
 * HTTP_REQUEST_ID_MAX characters of [A-Za-z0-9._:/+=-] (safe to echo in
 * headers and log lines); otherwise one is generated: 32 hex digits of
 * kernel randomness. `out` holds HTTP_REQUEST_ID_MAX + 1 bytes. */
#define HTTP_REQUEST_ID_MAX 128
bool http_request_id_is_acceptable(const char *id);
void http_request_id_choose(const char *given, char *out);

#endif
