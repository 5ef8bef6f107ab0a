/* Media URL fetching with the server's policy; see media_source.h.
 *
 * Threat model: the URL comes from an unauthenticated-or-not client, and
 * the server often runs next to things that must not be reachable from
 * outside (cloud metadata at 169.254.169.254, admin ports on localhost,
 * the private network). So file:// is confined to one directory, and a
 * remote fetch may only ever connect to a public address: the check runs
 * in libcurl's open-socket callback on the address about to be connected
 * to, after DNS, for every hop of a redirect, so neither a hostile DNS
 * answer nor a redirect can steer the fetch inward. */
#include "server/media_source.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_MAX_BYTES ((size_t)20 << 20)
#define DEFAULT_TIMEOUT_SECONDS 10.0
#define MAX_REDIRECTS 5

static size_t effective_max_bytes(const media_policy *policy) {
  return policy->max_bytes ? policy->max_bytes : DEFAULT_MAX_BYTES;
}

static bool fail_request(openai_error *error, const char *param, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static bool fail_request(openai_error *error, const char *param, const char *format, ...) {
  char message[512];
  va_list arguments;
  va_start(arguments, format);
  vsnprintf(message, sizeof(message), format, arguments);
  va_end(arguments);
  openai_error_set(error, 400, "invalid_request_error", param, NULL, "%s", message);
  return false;
}

static bool fail_out_of_memory(openai_error *error) {
  openai_error_set(error, 500, "server_error", NULL, NULL, "out of memory");
  return false;
}

static bool fail_too_large(openai_error *error, const char *param, size_t max_bytes) {
  return fail_request(error, param, "The media at '%s' is larger than the limit of %zu bytes.",
                      param, max_bytes);
}

static bool is_cancelled(const void *cancel) {
  return cancel && atomic_load((const atomic_bool *)cancel);
}

static bool fail_cancelled(openai_error *error, const char *param) {
  /* The client is gone; this error is never seen by it, but the handler
   * can tell a cancellation from a bad URL by the code. */
  openai_error_set(error, 499, "invalid_request_error", param, "cancelled",
                   "The request was cancelled while fetching '%s'.", param);
  return false;
}

static bool has_prefix_ignoring_case(const char *text, const char *prefix) {
  return strncasecmp(text, prefix, strlen(prefix)) == 0;
}

/* ---------------------------------------------------------------------- */
/* Base64 (RFC 4648 section 4).                                           */
/* ---------------------------------------------------------------------- */

static int base64_digit(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

/* Checks the shape (length, padding) and gives the decoded size without
 * touching the digits, so a size limit can be applied before any work. */
static bool base64_measure(const char *text, size_t length, size_t *out_digits,
                           size_t *out_decoded) {
  size_t digits = length;
  if (length % 4 == 0 && length > 0) {
    /* Padded form: at most two '=' and only at the very end. */
    if (text[length - 1] == '=') digits--;
    if (text[length - 2] == '=') digits--;
  }
  if (digits % 4 == 1) return false; /* 6 bits cannot finish a byte */
  *out_digits = digits;
  *out_decoded = digits / 4 * 3 + (digits % 4 ? digits % 4 - 1 : 0);
  return true;
}

bool base64_decode(const char *text, size_t length, size_t max_bytes, uint8_t **out,
                   size_t *out_length) {
  *out = NULL;
  *out_length = 0;
  size_t digits = 0, decoded = 0;
  if (!base64_measure(text, length, &digits, &decoded) || decoded > max_bytes) return false;
  uint8_t *bytes = malloc(decoded ? decoded : 1);
  if (!bytes) return false;
  uint32_t accumulator = 0;
  size_t written = 0;
  for (size_t i = 0; i < digits; i++) {
    int digit = base64_digit((unsigned char)text[i]);
    if (digit < 0) { /* also catches '=' before the end and whitespace */
      free(bytes);
      return false;
    }
    accumulator = (accumulator << 6) | (uint32_t)digit;
    if (i % 4 == 3) {
      bytes[written++] = (uint8_t)(accumulator >> 16);
      bytes[written++] = (uint8_t)(accumulator >> 8);
      bytes[written++] = (uint8_t)accumulator;
      accumulator = 0;
    }
  }
  /* A final group of 2 or 3 digits carries 4 or 2 bits of padding, which
   * a canonical encoder leaves zero: refusing anything else keeps one
   * byte string per encoding. */
  size_t tail = digits % 4;
  if (tail == 2) {
    if (accumulator & 0xF) goto refuse;
    bytes[written++] = (uint8_t)(accumulator >> 4);
  } else if (tail == 3) {
    if (accumulator & 0x3) goto refuse;
    bytes[written++] = (uint8_t)(accumulator >> 10);
    bytes[written++] = (uint8_t)(accumulator >> 2);
  }
  *out = bytes;
  *out_length = written;
  return true;
refuse:
  free(bytes);
  return false;
}

/* ---------------------------------------------------------------------- */
/* data: URLs (RFC 2397), base64 only.                                    */
/* ---------------------------------------------------------------------- */

/* The image types the decoders read (image/jpg is a common misspelling of
 * image/jpeg). The bytes are sniffed anyway; the declared type must still
 * be an image one, so text or a PDF sent as an image part is refused by
 * name rather than reported as undecodable. Audio parts take the audio
 * types of the four containers the audio decoder reads, with their common
 * aliases. */
static bool is_decodable_type(const char *type, size_t length, bool audio) {
  static const char *const image_types[] = {"image/png", "image/jpeg", "image/jpg", "image/webp",
                                            "image/gif", NULL};
  static const char *const audio_types[] = {"audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave",
                                            "audio/flac", "audio/x-flac", "audio/ogg", "audio/vorbis",
                                            "audio/mpeg", "audio/mp3", NULL};
  const char *const *types = audio ? audio_types : image_types;
  for (size_t i = 0; types[i]; i++)
    if (strlen(types[i]) == length && strncasecmp(type, types[i], length) == 0) return true;
  return false;
}

/* `header` is what lies between "data:" and ";base64": the MIME type,
 * then optional ;parameter=value pairs. */
static bool check_data_url_type(const char *header, size_t length, const char *param, bool audio,
                                openai_error *error) {
  size_t type_length = 0;
  while (type_length < length && header[type_length] != ';') type_length++;
  if (type_length == 0 && audio)
    return fail_request(error, param,
                        "The data URL in '%s' declares no MIME type; audio parts take "
                        "data:audio/wav, audio/flac, audio/ogg or audio/mpeg;base64,...",
                        param);
  if (type_length == 0)
    return fail_request(error, param,
                        "The data URL in '%s' declares no MIME type; image parts take "
                        "data:image/png, image/jpeg, image/webp or image/gif;base64,...",
                        param);
  if (is_decodable_type(header, type_length, audio)) return true;
  if (audio) {
    bool is_audio = type_length > 6 && strncasecmp(header, "audio/", 6) == 0;
    return fail_request(error, param,
                        "The data URL in '%s' has MIME type '%.*s', %s; audio parts take audio/wav, "
                        "audio/flac, audio/ogg or audio/mpeg.",
                        param, (int)(type_length < 64 ? type_length : 64), header,
                        is_audio ? "an audio type this server does not decode" : "which is not audio");
  }
  bool is_image = type_length > 6 && strncasecmp(header, "image/", 6) == 0;
  return fail_request(error, param,
                      "The data URL in '%s' has MIME type '%.*s', %s; image parts take image/png, "
                      "image/jpeg, image/webp or image/gif.",
                      param, (int)(type_length < 64 ? type_length : 64), header,
                      is_image ? "an image type this server does not decode" : "which is not an image");
}

static bool fetch_data_url(const media_policy *policy, const char *url, const char *param, bool audio,
                           uint8_t **out_bytes, size_t *out_length, openai_error *error) {
  const char *comma = strchr(url, ',');
  if (!comma)
    return fail_request(error, param, "The data URL in '%s' has no ',' before its payload.", param);
  /* data:<mime type>[;parameter=value]*;base64,<payload> */
  size_t header_length = (size_t)(comma - url);
  static const char base64_marker[] = ";base64";
  size_t marker_length = sizeof(base64_marker) - 1;
  if (header_length < 5 + marker_length ||
      strncasecmp(comma - marker_length, base64_marker, marker_length) != 0)
    return fail_request(error, param,
                        "The data URL in '%s' must be base64-encoded "
                        "(data:<mime type>;base64,<payload>).",
                        param);
  if (!check_data_url_type(url + 5, header_length - 5 - marker_length, param, audio, error)) return false;
  const char *payload = comma + 1;
  size_t payload_length = strlen(payload);
  size_t max_bytes = effective_max_bytes(policy);
  size_t digits = 0, decoded = 0;
  if (!base64_measure(payload, payload_length, &digits, &decoded))
    return fail_request(error, param, "The data URL in '%s' is not valid base64.", param);
  if (decoded > max_bytes) return fail_too_large(error, param, max_bytes);
  if (decoded == 0) return fail_request(error, param, "The data URL in '%s' is empty.", param);
  if (!base64_decode(payload, payload_length, max_bytes, out_bytes, out_length))
    return fail_request(error, param, "The data URL in '%s' is not valid base64.", param);
  return true;
}

/* ---------------------------------------------------------------------- */
/* file:// URLs under the allowed directory.                              */
/* ---------------------------------------------------------------------- */

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* The path of file://[localhost]/path with %XX escapes decoded; false for
 * another host, a relative path, a query, a fragment, a bad or NUL escape. */
static bool file_url_path(const char *url, char *path, size_t capacity) {
  const char *rest = url + strlen("file://");
  if (has_prefix_ignoring_case(rest, "localhost/")) rest += strlen("localhost");
  if (rest[0] != '/') return false;
  size_t length = 0;
  for (const char *cursor = rest; *cursor; cursor++) {
    char c = *cursor;
    if (c == '?' || c == '#') return false;
    if (c == '%') {
      int high = hex_value(cursor[1]), low = high < 0 ? -1 : hex_value(cursor[2]);
      if (low < 0 || (high == 0 && low == 0)) return false;
      c = (char)(high * 16 + low);
      cursor += 2;
    }
    if (length + 1 >= capacity) return false;
    path[length++] = c;
  }
  path[length] = '\0';
  return true;
}

/* True when `path` is `directory` or lies below it. The boundary check
 * keeps /srv/media-private from passing as inside /srv/media. */
static bool path_is_under(const char *path, const char *directory) {
  size_t length = strlen(directory);
  while (length > 1 && directory[length - 1] == '/') length--;
  if (strncmp(path, directory, length) != 0) return false;
  return path[length] == '/' || path[length] == '\0' || (length == 1 && directory[0] == '/');
}

/* Re-checks the opened file's own path (Linux /proc), so a symlink swapped
 * in between realpath() and open() cannot lead outside the directory. */
static bool opened_file_is_under(int descriptor, const char *directory) {
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", descriptor);
  ssize_t length = readlink(link, target, sizeof(target) - 1);
  if (length < 0) return true; /* no /proc: the realpath() check stands alone */
  target[length] = '\0';
  return path_is_under(target, directory);
}

static bool read_open_file(int descriptor, const char *param, size_t max_bytes,
                           uint8_t **out_bytes, size_t *out_length, openai_error *error) {
  struct stat info;
  if (fstat(descriptor, &info) != 0 || !S_ISREG(info.st_mode))
    return fail_request(error, param, "The file named in '%s' is not a regular file.", param);
  if ((uint64_t)info.st_size > max_bytes) return fail_too_large(error, param, max_bytes);
  if (info.st_size == 0)
    return fail_request(error, param, "The file named in '%s' is empty.", param);
  /* Read one byte more than expected to notice a file that grew. */
  size_t capacity = (size_t)info.st_size + 1;
  uint8_t *bytes = malloc(capacity);
  if (!bytes) return fail_out_of_memory(error);
  size_t length = 0;
  while (length < capacity) {
    ssize_t count = read(descriptor, bytes + length, capacity - length);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) {
      free(bytes);
      return fail_request(error, param, "The file named in '%s' could not be read.", param);
    }
    if (count == 0) break;
    length += (size_t)count;
  }
  if (length > max_bytes) {
    free(bytes);
    return fail_too_large(error, param, max_bytes);
  }
  *out_bytes = bytes;
  *out_length = length;
  return true;
}

static bool fetch_file_url(const media_policy *policy, const char *url, const char *param,
                           uint8_t **out_bytes, size_t *out_length, openai_error *error) {
  if (!policy->allowed_media_dir || !policy->allowed_media_dir[0])
    return fail_request(error, param,
                        "file:// URLs are refused ('%s'); the server reads local files only "
                        "under the directory given with --allowed-media-dir.",
                        param);
  char requested[PATH_MAX], resolved[PATH_MAX], allowed[PATH_MAX];
  if (!file_url_path(url, requested, sizeof(requested)))
    return fail_request(error, param,
                        "The file URL in '%s' must be file:///absolute/path (no host, query "
                        "or fragment).",
                        param);
  if (!realpath(policy->allowed_media_dir, allowed))
    return fail_request(error, param, "The allowed media directory does not exist.");
  /* Not-found and outside-the-directory read the same, so a client cannot
   * probe which files exist elsewhere on the machine. */
  if (!realpath(requested, resolved) || !path_is_under(resolved, allowed))
    return fail_request(error, param,
                        "The file named in '%s' does not exist or is outside the directory "
                        "allowed with --allowed-media-dir.",
                        param);
  int descriptor = open(resolved, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (descriptor < 0)
    return fail_request(error, param, "The file named in '%s' could not be opened.", param);
  bool read_ok = false;
  if (!opened_file_is_under(descriptor, allowed))
    fail_request(error, param,
                 "The file named in '%s' does not exist or is outside the directory allowed "
                 "with --allowed-media-dir.",
                 param);
  else
    read_ok = read_open_file(descriptor, param, effective_max_bytes(policy), out_bytes,
                             out_length, error);
  close(descriptor);
  return read_ok;
}

/* ---------------------------------------------------------------------- */
/* Which addresses a remote fetch may connect to.                         */
/* ---------------------------------------------------------------------- */

typedef struct address_block {
  uint32_t prefix;
  int bits;
} address_block;

/* IPv4 blocks that are not the public internet (IANA special-purpose
 * registry): a fetch could reach the host itself or its private network. */
static const address_block non_public_ipv4[] = {
    {0x00000000u, 8},   /* 0.0.0.0/8 "this network", includes unspecified */
    {0x0A000000u, 8},   /* 10.0.0.0/8 private */
    {0x64400000u, 10},  /* 100.64.0.0/10 carrier-grade NAT */
    {0x7F000000u, 8},   /* 127.0.0.0/8 loopback */
    {0xA9FE0000u, 16},  /* 169.254.0.0/16 link-local (cloud metadata) */
    {0xAC100000u, 12},  /* 172.16.0.0/12 private */
    {0xC0000000u, 24},  /* 192.0.0.0/24 IETF protocol assignments */
    {0xC0000200u, 24},  /* 192.0.2.0/24 documentation */
    {0xC0A80000u, 16},  /* 192.168.0.0/16 private */
    {0xC6120000u, 15},  /* 198.18.0.0/15 benchmarking */
    {0xC6336400u, 24},  /* 198.51.100.0/24 documentation */
    {0xCB007100u, 24},  /* 203.0.113.0/24 documentation */
    {0xE0000000u, 4},   /* 224.0.0.0/4 multicast */
    {0xF0000000u, 4},   /* 240.0.0.0/4 reserved, includes broadcast */
};

static bool ipv4_is_public(uint32_t address) {
  for (size_t i = 0; i < sizeof(non_public_ipv4) / sizeof(non_public_ipv4[0]); i++) {
    uint32_t mask = 0xFFFFFFFFu << (32 - non_public_ipv4[i].bits);
    if ((address & mask) == non_public_ipv4[i].prefix) return false;
  }
  return true;
}

static uint32_t read_ipv4(const uint8_t *bytes) {
  return (uint32_t)bytes[0] << 24 | (uint32_t)bytes[1] << 16 | (uint32_t)bytes[2] << 8 | bytes[3];
}

static bool ipv6_is_public(const uint8_t *bytes) {
  static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  static const uint8_t nat64[12] = {0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0};
  static const uint8_t zeros[12] = {0};
  /* Forms that carry an IPv4 address are judged by that address. */
  if (memcmp(bytes, v4_mapped, 12) == 0 || memcmp(bytes, nat64, 12) == 0)
    return ipv4_is_public(read_ipv4(bytes + 12));
  if (bytes[0] == 0x20 && bytes[1] == 0x02) return ipv4_is_public(read_ipv4(bytes + 2)); /* 6to4 */
  if (memcmp(bytes, zeros, 12) == 0) return false;     /* ::, ::1, IPv4-compatible */
  if ((bytes[0] & 0xFE) == 0xFC) return false;         /* fc00::/7 unique local */
  if (bytes[0] == 0xFE && (bytes[1] & 0xC0) == 0x80) return false; /* fe80::/10 link-local */
  if (bytes[0] == 0xFE && (bytes[1] & 0xC0) == 0xC0) return false; /* fec0::/10 site-local */
  if (bytes[0] == 0xFF) return false;                  /* ff00::/8 multicast */
  if (bytes[0] == 0x00 && bytes[1] == 0x64 && bytes[2] == 0xFF && bytes[3] == 0x9B)
    return false;                                      /* 64:ff9b:1::/48 local NAT64 */
  if (bytes[0] == 0x01 && bytes[1] == 0x00 && !bytes[2] && !bytes[3] && !bytes[4] && !bytes[5] &&
      !bytes[6] && !bytes[7])
    return false;                                      /* 100::/64 discard */
  if (bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] == 0x00 && bytes[3] == 0x00)
    return false;                                      /* 2001::/32 Teredo */
  if (bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] == 0x0D && bytes[3] == 0xB8)
    return false;                                      /* 2001:db8::/32 documentation */
  return true;
}

bool media_source_address_is_public(const struct sockaddr *address, size_t length) {
  if (address->sa_family == AF_INET && length >= sizeof(struct sockaddr_in)) {
    const struct sockaddr_in *ipv4 = (const struct sockaddr_in *)address;
    return ipv4_is_public(ntohl(ipv4->sin_addr.s_addr));
  }
  if (address->sa_family == AF_INET6 && length >= sizeof(struct sockaddr_in6)) {
    const struct sockaddr_in6 *ipv6 = (const struct sockaddr_in6 *)address;
    return ipv6_is_public(ipv6->sin6_addr.s6_addr);
  }
  return false; /* Unix sockets and anything else */
}

/* ---------------------------------------------------------------------- */
/* http(s):// with libcurl.                                               */
/* ---------------------------------------------------------------------- */

typedef struct remote_transfer {
  uint8_t *bytes;
  size_t length, capacity, max_bytes;
  bool too_large;
  bool allow_private_addresses;
  bool refused_address;
  char refused_address_text[INET6_ADDRSTRLEN];
  const void *cancel;
} remote_transfer;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result = CURLE_FAILED_INIT;

static void initialize_curl(void) {
  curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void describe_address(const struct sockaddr *address, char *text, size_t capacity) {
  const void *raw = NULL;
  if (address->sa_family == AF_INET) raw = &((const struct sockaddr_in *)address)->sin_addr;
  if (address->sa_family == AF_INET6) raw = &((const struct sockaddr_in6 *)address)->sin6_addr;
  if (!raw || !inet_ntop(address->sa_family, raw, text, (socklen_t)capacity))
    snprintf(text, capacity, "an address of family %d", address->sa_family);
}

static curl_socket_t open_checked_socket(void *context, curlsocktype purpose,
                                         struct curl_sockaddr *address) {
  (void)purpose;
  remote_transfer *transfer = context;
  if (!transfer->allow_private_addresses &&
      !media_source_address_is_public(&address->addr, address->addrlen)) {
    transfer->refused_address = true;
    describe_address(&address->addr, transfer->refused_address_text,
                     sizeof(transfer->refused_address_text));
    return CURL_SOCKET_BAD;
  }
  return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

static size_t receive_bytes(char *data, size_t size, size_t count, void *context) {
  remote_transfer *transfer = context;
  size_t length = size * count;
  /* MAXFILESIZE only trusts Content-Length; a chunked or lying server is
   * stopped here. Returning a short count makes curl abort. */
  if (length > transfer->max_bytes - transfer->length) {
    transfer->too_large = true;
    return 0;
  }
  if (transfer->length + length > transfer->capacity) {
    size_t capacity = transfer->capacity ? transfer->capacity : 64 * 1024;
    while (capacity < transfer->length + length) capacity *= 2;
    if (capacity > transfer->max_bytes) capacity = transfer->max_bytes;
    uint8_t *grown = realloc(transfer->bytes, capacity);
    if (!grown) return 0;
    transfer->bytes = grown;
    transfer->capacity = capacity;
  }
  memcpy(transfer->bytes + transfer->length, data, length);
  transfer->length += length;
  return length;
}

static int report_progress(void *context, curl_off_t download_total, curl_off_t downloaded,
                           curl_off_t upload_total, curl_off_t uploaded) {
  (void)download_total, (void)downloaded, (void)upload_total, (void)uploaded;
  const remote_transfer *transfer = context;
  return is_cancelled(transfer->cancel) ? 1 : 0; /* non-zero aborts the transfer */
}

static double monotonic_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static void configure_transfer(CURL *curl, const char *url, remote_transfer *transfer,
                               long timeout_ms, char *error_text) {
  curl_easy_setopt(curl, CURLOPT_URL, url);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  /* Redirects are followed by hand (fetch_remote_url) so each hop is a new
   * transfer with the same scheme and address checks. */
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  /* An environment proxy would make the proxy the connected address and
   * hide the real destination from the address check. */
  curl_easy_setopt(curl, CURLOPT_PROXY, "");
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L); /* we run on many threads */
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)transfer->max_bytes);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "vlm");
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_text);
  curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, open_checked_socket);
  curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, transfer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, receive_bytes);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, transfer);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, report_progress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, transfer);
}

/* Why a transfer failed, in the client's terms. */
static bool fail_transfer(const remote_transfer *transfer, CURLcode result, const char *error_text,
                          const char *param, double timeout_seconds, openai_error *error) {
  /* With several addresses for one name, a refused one may precede a
   * public one that failed differently: blame the rule only when no
   * connection could be made at all. */
  if (transfer->refused_address && result == CURLE_COULDNT_CONNECT)
    return fail_request(error, param,
                        "Refused to fetch '%s': %s is not a public address (loopback, private, "
                        "link-local, CGNAT, multicast and other non-public addresses are never "
                        "fetched).",
                        param, transfer->refused_address_text);
  if (transfer->too_large || result == CURLE_FILESIZE_EXCEEDED)
    return fail_too_large(error, param, transfer->max_bytes);
  if (result == CURLE_ABORTED_BY_CALLBACK) return fail_cancelled(error, param);
  if (result == CURLE_OPERATION_TIMEDOUT)
    return fail_request(error, param, "Fetching '%s' timed out after %g s.", param,
                        timeout_seconds);
  if (result == CURLE_UNSUPPORTED_PROTOCOL)
    return fail_request(error, param, "Only http:// and https:// URLs can be fetched ('%s').",
                        param);
  return fail_request(error, param, "Could not fetch '%s': %s.", param,
                      error_text[0] ? error_text : curl_easy_strerror(result));
}

typedef struct hop_result {
  long http_status;
  char *redirect_url; /* malloc'ed, for a 3xx with Location */
} hop_result;

/* One request without following redirects. */
static bool fetch_one_hop(const char *url, remote_transfer *transfer, double remaining_seconds,
                          double timeout_seconds, const char *param, hop_result *hop,
                          openai_error *error) {
  CURL *curl = curl_easy_init();
  if (!curl) return fail_out_of_memory(error);
  char error_text[CURL_ERROR_SIZE] = {0};
  long timeout_ms = (long)(remaining_seconds * 1000.0);
  configure_transfer(curl, url, transfer, timeout_ms > 0 ? timeout_ms : 1, error_text);
  CURLcode result = curl_easy_perform(curl);
  bool ok = result == CURLE_OK;
  if (!ok) {
    fail_transfer(transfer, result, error_text, param, timeout_seconds, error);
  } else {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &hop->http_status);
    char *location = NULL;
    if (hop->http_status >= 300 && hop->http_status < 400 &&
        curl_easy_getinfo(curl, CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location) {
      hop->redirect_url = strdup(location);
      if (!hop->redirect_url) ok = fail_out_of_memory(error);
    }
  }
  curl_easy_cleanup(curl);
  return ok;
}

static bool fetch_remote_url(const media_policy *policy, const char *url, const char *param,
                             const void *cancel, uint8_t **out_bytes, size_t *out_length,
                             openai_error *error) {
  pthread_once(&curl_once, initialize_curl);
  if (curl_init_result != CURLE_OK) {
    openai_error_set(error, 500, "server_error", param, NULL, "libcurl failed to initialize");
    return false;
  }
  double timeout_seconds =
      policy->remote_timeout_seconds > 0 ? policy->remote_timeout_seconds : DEFAULT_TIMEOUT_SECONDS;
  double deadline = monotonic_seconds() + timeout_seconds;
  remote_transfer transfer = {.max_bytes = effective_max_bytes(policy),
                              .allow_private_addresses = policy->allow_private_addresses,
                              .cancel = cancel};
  char *owned_url = NULL; /* the current redirect target */
  const char *current = url;
  bool fetched = false, failed = false;
  for (int hop_index = 0; hop_index <= MAX_REDIRECTS && !fetched && !failed; hop_index++) {
    double remaining = deadline - monotonic_seconds();
    if (remaining <= 0) {
      failed = !fail_request(error, param, "Fetching '%s' timed out after %g s.", param,
                             timeout_seconds);
      break;
    }
    /* Each hop starts clean: a redirect's body is not the media. */
    transfer.length = 0;
    transfer.too_large = transfer.refused_address = false;
    hop_result hop = {0};
    if (!fetch_one_hop(current, &transfer, remaining, timeout_seconds, param, &hop, error)) {
      failed = true;
    } else if (hop.redirect_url) {
      free(owned_url);
      current = owned_url = hop.redirect_url;
    } else if (hop.http_status < 200 || hop.http_status > 299) {
      failed = !fail_request(error, param, "Could not fetch '%s': the server answered HTTP %ld.",
                             param, hop.http_status);
    } else if (transfer.length == 0) {
      failed = !fail_request(error, param, "The media at '%s' is empty.", param);
    } else {
      fetched = true;
    }
  }
  if (!fetched && !failed)
    fail_request(error, param, "Could not fetch '%s': more than %d redirects.", param,
                 MAX_REDIRECTS);
  free(owned_url);
  if (!fetched) {
    free(transfer.bytes);
    return false;
  }
  *out_bytes = transfer.bytes;
  *out_length = transfer.length;
  return true;
}

/* ---------------------------------------------------------------------- */
/* Dispatch on the scheme.                                                */
/* ---------------------------------------------------------------------- */

static bool fetch_url(const media_policy *policy, const char *url, const char *param, bool audio,
                      const void *cancel, uint8_t **out_bytes, size_t *out_length, openai_error *error) {
  *out_bytes = NULL;
  *out_length = 0;
  memset(error, 0, sizeof(*error));
  if (is_cancelled(cancel)) return fail_cancelled(error, param);
  if (has_prefix_ignoring_case(url, "data:"))
    return fetch_data_url(policy, url, param, audio, out_bytes, out_length, error);
  if (has_prefix_ignoring_case(url, "file://"))
    return fetch_file_url(policy, url, param, out_bytes, out_length, error);
  if (has_prefix_ignoring_case(url, "http://") || has_prefix_ignoring_case(url, "https://")) {
    if (!policy->allow_remote_media)
      return fail_request(error, param,
                          "http(s):// URLs are refused ('%s'); start the server with "
                          "--allow-remote-media to fetch them, or send the %s as a data: URL.",
                          param, audio ? "audio" : "image");
    return fetch_remote_url(policy, url, param, cancel, out_bytes, out_length, error);
  }
  return fail_request(error, param,
                      "Unsupported URL in '%s': expected a data:, file:// or http(s):// URL.",
                      param);
}

bool media_source_fetch(const media_policy *policy, const char *url, const char *param,
                        const void *cancel, uint8_t **out_bytes, size_t *out_length,
                        openai_error *error) {
  return fetch_url(policy, url, param, false, cancel, out_bytes, out_length, error);
}

bool media_source_fetch_audio(const media_policy *policy, const char *url, const char *param,
                              const void *cancel, uint8_t **out_bytes, size_t *out_length,
                              openai_error *error) {
  return fetch_url(policy, url, param, true, cancel, out_bytes, out_length, error);
}

bool media_source_decode_base64(const media_policy *policy, const char *text, const char *param,
                                uint8_t **out_bytes, size_t *out_length, openai_error *error) {
  *out_bytes = NULL;
  *out_length = 0;
  memset(error, 0, sizeof(*error));
  size_t length = strlen(text), max_bytes = effective_max_bytes(policy), digits = 0, decoded = 0;
  if (!base64_measure(text, length, &digits, &decoded))
    return fail_request(error, param, "'%s' is not valid base64.", param);
  if (decoded > max_bytes) return fail_too_large(error, param, max_bytes);
  if (decoded == 0) return fail_request(error, param, "'%s' is empty.", param);
  if (!base64_decode(text, length, max_bytes, out_bytes, out_length))
    return fail_request(error, param, "'%s' is not valid base64.", param);
  return true;
}
