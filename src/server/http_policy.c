/* Host, Origin, Content-Type and request-ID rules; see http_policy.h. */
#include "server/http_policy.h"

#include <arpa/inet.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "core/status.h"

/* ---------------------------------------------------------------------- */
/* Name lists                                                             */
/* ---------------------------------------------------------------------- */

static bool is_space(char c) { return c == ' ' || c == '\t'; }

void http_name_list_release(http_name_list *list) {
  for (size_t i = 0; i < list->count; i++) free(list->names[i]);
  free(list->names);
  memset(list, 0, sizeof(*list));
}

vlm_status http_name_list_parse(const char *text, const char *flag, http_name_list *out) {
  memset(out, 0, sizeof(*out));
  size_t capacity = 1;
  for (const char *c = text; *c; c++) capacity += *c == ',';
  out->names = calloc(capacity, sizeof(char *));
  if (!out->names) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (const char *start = text;;) {
    const char *end = strchr(start, ',');
    if (!end) end = start + strlen(start);
    const char *first = start, *last = end;
    while (first < last && is_space(*first)) first++;
    while (last > first && is_space(last[-1])) last--;
    if (first == last) {
      http_name_list_release(out);
      return VLM_ERROR(INVALID_ARGUMENT, "%s: empty entry in '%s'", flag, text);
    }
    if (last - first == 1 && *first == '*') out->any = true;
    out->names[out->count] = strndup(first, (size_t)(last - first));
    if (!out->names[out->count]) {
      http_name_list_release(out);
      return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    }
    out->count++;
    if (!*end) break;
    start = end + 1;
  }
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Host names                                                             */
/* ---------------------------------------------------------------------- */

/* The host part of a Host header or of an origin's authority:
 * "[::1]:8080" -> "::1", "Example.com:80" -> "Example.com", "a.b." -> "a.b".
 * False for an unclosed bracket or an empty host. */
static bool host_part(const char *authority, const char **out_start, size_t *out_length) {
  const char *start = authority, *end;
  if (*start == '[') {
    start++;
    end = strchr(start, ']');
    if (!end) return false;
  } else {
    end = strchr(start, ':');
    if (!end) end = start + strlen(start);
  }
  if (end > start && end[-1] == '.' && authority[0] != '[') end--;
  *out_start = start;
  *out_length = (size_t)(end - start);
  return end > start;
}

static bool equals_ignoring_case(const char *a, size_t a_length, const char *b) {
  return strlen(b) == a_length && strncasecmp(a, b, a_length) == 0;
}

static bool ends_with_ignoring_case(const char *text, size_t length, const char *suffix) {
  size_t suffix_length = strlen(suffix);
  return length >= suffix_length && strncasecmp(text + length - suffix_length, suffix, suffix_length) == 0;
}

bool http_name_is_loopback(const char *name, size_t length) {
  if (equals_ignoring_case(name, length, "localhost") || ends_with_ignoring_case(name, length, ".localhost"))
    return true;
  char literal[INET6_ADDRSTRLEN + 1];
  if (length >= sizeof(literal)) return false;
  memcpy(literal, name, length);
  literal[length] = '\0';
  struct in_addr ipv4;
  if (inet_pton(AF_INET, literal, &ipv4) == 1) return (ntohl(ipv4.s_addr) >> 24) == 127;
  struct in6_addr ipv6;
  if (inet_pton(AF_INET6, literal, &ipv6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&ipv6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&ipv6) && ipv6.s6_addr[12] == 127;
}

/* An entry of --allowed-hosts against a host: exact, "*", or ".domain"
 * for the domain and its subdomains; IPv6 entries with or without []. */
static bool host_entry_matches(const char *entry, const char *host, size_t length) {
  if (strcmp(entry, "*") == 0) return true;
  if (entry[0] == '.')
    return equals_ignoring_case(host, length, entry + 1) || ends_with_ignoring_case(host, length, entry);
  size_t entry_length = strlen(entry);
  if (entry_length > 2 && entry[0] == '[' && entry[entry_length - 1] == ']')
    return entry_length - 2 == length && strncasecmp(entry + 1, host, length) == 0;
  return equals_ignoring_case(host, length, entry);
}

static bool host_name_allowed(const http_host_policy *policy, const char *host, size_t length) {
  if (policy->allowed_hosts) {
    for (size_t i = 0; i < policy->allowed_hosts->count; i++)
      if (host_entry_matches(policy->allowed_hosts->names[i], host, length)) return true;
    return false;
  }
  return !policy->bound_to_loopback || http_name_is_loopback(host, length);
}

bool http_host_allowed(const http_host_policy *policy, const char *host) {
  if (!host) return true;
  const char *name;
  size_t length;
  if (!host_part(host, &name, &length)) return false;
  return host_name_allowed(policy, name, length);
}

bool http_origin_allowed(const http_host_policy *policy, const char *origin) {
  if (!origin) return true;
  if (policy->allowed_origins) {
    if (policy->allowed_origins->any) return true;
    for (size_t i = 0; i < policy->allowed_origins->count; i++)
      if (strcasecmp(policy->allowed_origins->names[i], origin) == 0) return true;
    return false;
  }
  /* scheme://authority with nothing after it ("null" has no "://"). */
  const char *authority = strstr(origin, "://");
  if (!authority || authority == origin) return false;
  authority += 3;
  if (strchr(authority, '/') || strchr(authority, '@')) return false;
  const char *name;
  size_t length;
  if (!host_part(authority, &name, &length)) return false;
  return host_name_allowed(policy, name, length);
}

/* ---------------------------------------------------------------------- */
/* Content type and request IDs                                           */
/* ---------------------------------------------------------------------- */

bool http_content_type_is_json(const char *content_type) {
  if (!content_type) return false;
  while (is_space(*content_type)) content_type++;
  size_t length = strcspn(content_type, ";");
  while (length && is_space(content_type[length - 1])) length--;
  return equals_ignoring_case(content_type, length, "application/json");
}

static bool is_id_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         strchr("._:/+=-", c) != NULL;
}

bool http_request_id_is_acceptable(const char *id) {
  if (!id || !id[0]) return false;
  size_t length = 0;
  for (; id[length]; length++)
    if (length == HTTP_REQUEST_ID_MAX || !is_id_character(id[length])) return false;
  return true;
}

void http_request_id_choose(const char *given, char *out) {
  if (http_request_id_is_acceptable(given)) {
    snprintf(out, HTTP_REQUEST_ID_MAX + 1, "%s", given);
    return;
  }
  uint8_t bytes[16];
  if (getrandom(bytes, sizeof(bytes), GRND_NONBLOCK) != (ssize_t)sizeof(bytes)) {
    /* No entropy yet (early boot): unique, if guessable, still serves to
     * match a response to its log line. */
    static atomic_uint_fast64_t counter;
    uint64_t values[2] = {(uint64_t)time(NULL), atomic_fetch_add(&counter, 1)};
    memcpy(bytes, values, sizeof(bytes));
  }
  for (size_t i = 0; i < sizeof(bytes); i++) snprintf(out + 2 * i, 3, "%02x", bytes[i]);
}

/* ---------------------------------------------------------------------- */
/* Header syntax, charsets and codings                                    */
/* ---------------------------------------------------------------------- */

bool http_header_name_ok(const char *name, size_t length) {
  if (!name || !length) return false;
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)name[i];
    bool token = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
    if (!token) return false;
  }
  return true;
}

bool http_header_value_ok(const char *value, size_t length) {
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)value[i];
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  }
  return true;
}

bool http_header_value_is_whole(const char *value, size_t length, const char *next, size_t max_gap) {
  const char *end = value + length;
  if (next < end || (size_t)(next - end) > max_gap) return false;
  for (const char *c = end; c < next; c++)
    if (*c) return false;
  return true;
}

bool http_content_encoding_ok(const char *content_encoding) {
  if (!content_encoding) return true;
  while (is_space(*content_encoding)) content_encoding++;
  size_t length = strlen(content_encoding);
  while (length && is_space(content_encoding[length - 1])) length--;
  return equals_ignoring_case(content_encoding, length, "identity");
}

bool http_content_type_charset_ok(const char *content_type) {
  if (!content_type) return true;
  const char *c = strchr(content_type, ';');
  while (c) {
    c++; /* past ';' */
    while (is_space(*c)) c++;
    const char *name = c;
    size_t name_length = strcspn(c, "=;");
    c += name_length;
    while (name_length && is_space(name[name_length - 1])) name_length--;
    if (*c != '=') {
      if (name_length) return false; /* a parameter without a value */
      c = *c == ';' ? c : NULL;
      continue;
    }
    c++; /* past '=' */
    while (is_space(*c)) c++;
    const char *value = c;
    size_t value_length;
    if (*c == '"') {
      const char *close = strchr(c + 1, '"');
      if (!close) return false;
      value = c + 1;
      value_length = (size_t)(close - value);
      c = close + 1;
      while (is_space(*c)) c++;
      if (*c && *c != ';') return false;
    } else {
      value_length = strcspn(c, ";");
      c += value_length;
      while (value_length && is_space(value[value_length - 1])) value_length--;
    }
    if (equals_ignoring_case(name, name_length, "charset") &&
        !equals_ignoring_case(value, value_length, "utf-8") && !equals_ignoring_case(value, value_length, "utf8"))
      return false;
    c = *c == ';' ? c : NULL;
  }
  return true;
}
