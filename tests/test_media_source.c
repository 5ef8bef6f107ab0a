#include "server/media_source.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

/* ---------------------------------------------------------------------- */
/* base64                                                                 */
/* ---------------------------------------------------------------------- */

static void check_decodes_at(int line, const char *text, const char *expected) {
  uint8_t *bytes = NULL;
  size_t length = 0;
  if (!base64_decode(text, strlen(text), 1 << 20, &bytes, &length)) {
    fprintf(stderr, "  line %d: %s: \"%s\" refused\n", line, test_current, text);
    test_failures++;
    return;
  }
  if (length != strlen(expected) || memcmp(bytes, expected, length) != 0) {
    fprintf(stderr, "  line %d: %s: \"%s\" decoded wrong\n", line, test_current, text);
    test_failures++;
  }
  free(bytes);
}

static void check_base64_refused_at(int line, const char *text, size_t max_bytes) {
  uint8_t *bytes = (uint8_t *)"sentinel";
  size_t length = 99;
  if (base64_decode(text, strlen(text), max_bytes, &bytes, &length)) {
    fprintf(stderr, "  line %d: %s: \"%s\" accepted\n", line, test_current, text);
    test_failures++;
    free(bytes);
    return;
  }
  if (bytes != NULL || length != 0) {
    fprintf(stderr, "  line %d: %s: outputs not cleared\n", line, test_current);
    test_failures++;
  }
}

#define CHECK_DECODES(text, expected) check_decodes_at(__LINE__, (text), (expected))
#define CHECK_BASE64_REFUSED(text, max) check_base64_refused_at(__LINE__, (text), (max))

static void base64_accepts_canonical_encodings(void) {
  CHECK_DECODES("", "");
  CHECK_DECODES("Zg==", "f");
  CHECK_DECODES("Zg", "f");
  CHECK_DECODES("Zm8=", "fo");
  CHECK_DECODES("Zm8", "fo");
  CHECK_DECODES("Zm9v", "foo");
  CHECK_DECODES("Zm9vYg==", "foob");
  CHECK_DECODES("Zm9vYmE=", "fooba");
  CHECK_DECODES("Zm9vYmFy", "foobar");
  CHECK_DECODES("+/+/", "\xfb\xff\xbf");
  uint8_t *bytes = NULL;
  size_t length = 0;
  CHECK(base64_decode("AAEC/w==", 8, 4, &bytes, &length));
  CHECK_INT_EQ(length, 4);
  if (length == 4) CHECK(bytes[0] == 0 && bytes[1] == 1 && bytes[2] == 2 && bytes[3] == 0xff);
  free(bytes);
}

static void base64_refuses_everything_else(void) {
  CHECK_BASE64_REFUSED("Z", 100);         /* 6 bits cannot make a byte */
  CHECK_BASE64_REFUSED("Zm9vY", 100);
  CHECK_BASE64_REFUSED("Zg=", 100);       /* padding without a full group */
  CHECK_BASE64_REFUSED("Z===", 100);
  CHECK_BASE64_REFUSED("====", 100);
  CHECK_BASE64_REFUSED("Zg==Zg==", 100);  /* padding in the middle */
  CHECK_BASE64_REFUSED("Zh==", 100);      /* non-zero padding bits */
  CHECK_BASE64_REFUSED("Zm9=", 100);
  CHECK_BASE64_REFUSED("Zm9v Zg==", 100); /* whitespace */
  CHECK_BASE64_REFUSED("Zm9v\nZg==", 100);
  CHECK_BASE64_REFUSED("Zm9v\r\n", 100);
  CHECK_BASE64_REFUSED("-_8=", 100);      /* URL-safe alphabet */
  CHECK_BASE64_REFUSED("Zm9v!A==", 100);
  CHECK_BASE64_REFUSED("Zm9v", 2);        /* over the size limit */
  CHECK_BASE64_REFUSED("Zg==", 0);
  uint8_t *bytes = NULL;
  size_t length = 0;
  CHECK(base64_decode("Zm9v", 4, 3, &bytes, &length) && length == 3); /* exactly at it */
  free(bytes);
  /* An embedded NUL is not a digit. */
  CHECK(!base64_decode("Zm\0v", 4, 100, &bytes, &length));
}

/* ---------------------------------------------------------------------- */
/* Fetch helpers                                                          */
/* ---------------------------------------------------------------------- */

static bool fetch(const media_policy *policy, const char *url, uint8_t **bytes, size_t *length,
                  openai_error *error) {
  return media_source_fetch(policy, url, "messages[0].content[1].image_url.url", NULL, bytes,
                            length, error);
}

static void check_fetched_at(int line, const media_policy *policy, const char *url,
                             const char *expected) {
  uint8_t *bytes = NULL;
  size_t length = 0;
  openai_error error;
  if (!fetch(policy, url, &bytes, &length, &error)) {
    fprintf(stderr, "  line %d: %s: %s refused: %s\n", line, test_current, url, error.message);
    test_failures++;
    openai_error_release(&error);
    return;
  }
  if (length != strlen(expected) || memcmp(bytes, expected, length) != 0) {
    fprintf(stderr, "  line %d: %s: %s fetched the wrong bytes (%zu)\n", line, test_current, url,
            length);
    test_failures++;
  }
  free(bytes);
}

/* Asserts a 400 naming the param, with `fragment` in the message. */
static void check_fetch_refused_at(int line, const media_policy *policy, const char *url,
                                   const char *fragment) {
  uint8_t *bytes = NULL;
  size_t length = 0;
  openai_error error;
  if (fetch(policy, url, &bytes, &length, &error)) {
    fprintf(stderr, "  line %d: %s: %s accepted\n", line, test_current, url);
    test_failures++;
    free(bytes);
    return;
  }
  if (error.http_status != 400 || !error.param ||
      strcmp(error.param, "messages[0].content[1].image_url.url") != 0 || !error.message ||
      !strstr(error.message, fragment) || bytes != NULL) {
    fprintf(stderr, "  line %d: %s: %s gave %d param=%s \"%s\", expected \"%s\"\n", line,
            test_current, url, error.http_status, error.param ? error.param : "(null)",
            error.message ? error.message : "(null)", fragment);
    test_failures++;
  }
  openai_error_release(&error);
}

#define CHECK_FETCHED(policy, url, expected) check_fetched_at(__LINE__, (policy), (url), (expected))
#define CHECK_FETCH_REFUSED(policy, url, fragment) \
  check_fetch_refused_at(__LINE__, (policy), (url), (fragment))

/* ---------------------------------------------------------------------- */
/* data: and other schemes                                                */
/* ---------------------------------------------------------------------- */

static void data_urls(void) {
  media_policy policy = {0};
  CHECK_FETCHED(&policy, "data:image/png;base64,iVBORw0KGgo=", "\x89PNG\r\n\x1a\n");
  CHECK_FETCHED(&policy, "DATA:image/png;BASE64,Zm9v", "foo");
  CHECK_FETCHED(&policy, "data:image/jpeg;name=a.jpg;base64,Zm9v", "foo");
  CHECK_FETCH_REFUSED(&policy, "data:image/png,rawbytes", "must be base64-encoded");
  CHECK_FETCH_REFUSED(&policy, "data:image/png;charset=base64,Zm9v", "must be base64-encoded");
  CHECK_FETCH_REFUSED(&policy, "data:image/png;base64", "no ','");
  CHECK_FETCH_REFUSED(&policy, "data:image/png;base64,Zm9v YmFy", "not valid base64");
  CHECK_FETCH_REFUSED(&policy, "data:image/png;base64,Z", "not valid base64");
  CHECK_FETCH_REFUSED(&policy, "data:image/png;base64,", "is empty");
  media_policy small = {.max_bytes = 2};
  CHECK_FETCH_REFUSED(&small, "data:image/png;base64,Zm9v", "larger than the limit of 2 bytes");
  /* The size is judged from the encoded length: a huge payload of invalid
   * characters is refused as too large, not scanned. */
  CHECK_FETCH_REFUSED(&small, "data:image/png;base64,!!!!!!!!", "larger than the limit");
  CHECK_FETCHED(&small, "data:image/png;base64,Zm8=", "fo");
}

/* Issue 13: the declared type was ignored, so any bytes went to the
 * decoders as an image part. */
static void data_urls_must_declare_an_image_type(void) {
  media_policy policy = {0};
  CHECK_FETCHED(&policy, "data:IMAGE/WEBP;base64,Zm9v", "foo");
  CHECK_FETCHED(&policy, "data:image/gif;base64,Zm9v", "foo");
  CHECK_FETCHED(&policy, "data:image/jpg;base64,Zm9v", "foo");
  CHECK_FETCH_REFUSED(&policy, "data:text/plain;base64,Zm9v", "MIME type 'text/plain', which is not an image");
  CHECK_FETCH_REFUSED(&policy, "data:application/pdf;base64,Zm9v", "which is not an image");
  CHECK_FETCH_REFUSED(&policy, "data:image/svg+xml;base64,Zm9v", "an image type this server does not decode");
  CHECK_FETCH_REFUSED(&policy, "data:image/;base64,Zm9v", "which is not an image");
  CHECK_FETCH_REFUSED(&policy, "data:image/pngx;base64,Zm9v", "does not decode");
  CHECK_FETCH_REFUSED(&policy, "data:;base64,Zm9v", "declares no MIME type");
  CHECK_FETCH_REFUSED(&policy, "data:;name=a.png;base64,Zm9v", "declares no MIME type");
}

/* Audio parts' data URLs take the audio types instead of the image ones,
 * and input_audio's bare base64 the same size limit. */
static void check_audio_at(int line, const media_policy *policy, const char *url, const char *expected_or_fragment,
                           bool accepted) {
  uint8_t *bytes = NULL;
  size_t length = 0;
  openai_error error = {0};
  bool fetched = strncmp(url, "data:", 5) == 0
                     ? media_source_fetch_audio(policy, url, "p.audio_url.url", NULL, &bytes, &length, &error)
                     : media_source_decode_base64(policy, url, "p.input_audio.data", &bytes, &length, &error);
  if (fetched != accepted || (fetched && (length != strlen(expected_or_fragment) ||
                                          memcmp(bytes, expected_or_fragment, length) != 0)) ||
      (!fetched && (error.http_status != 400 || !strstr(error.message, expected_or_fragment) || !error.param))) {
    fprintf(stderr, "  line %d: %s: %s: %s (%s)\n", line, test_current, url, fetched ? "accepted" : "refused",
            error.message ? error.message : "");
    test_failures++;
  }
  free(bytes);
  openai_error_release(&error);
}
#define CHECK_AUDIO(policy, url, expected) check_audio_at(__LINE__, (policy), (url), (expected), true)
#define CHECK_AUDIO_REFUSED(policy, url, fragment) check_audio_at(__LINE__, (policy), (url), (fragment), false)

static void audio_data_urls_and_base64(void) {
  media_policy policy = {0};
  CHECK_AUDIO(&policy, "data:audio/wav;base64,Zm9v", "foo");
  CHECK_AUDIO(&policy, "data:audio/x-wav;base64,Zm9v", "foo");
  CHECK_AUDIO(&policy, "data:AUDIO/FLAC;base64,Zm9v", "foo");
  CHECK_AUDIO(&policy, "data:audio/ogg;codecs=vorbis;base64,Zm9v", "foo");
  CHECK_AUDIO(&policy, "data:audio/mpeg;base64,Zm9v", "foo");
  CHECK_AUDIO_REFUSED(&policy, "data:image/png;base64,Zm9v", "MIME type 'image/png', which is not audio");
  CHECK_AUDIO_REFUSED(&policy, "data:audio/aac;base64,Zm9v", "an audio type this server does not decode");
  CHECK_AUDIO_REFUSED(&policy, "data:;base64,Zm9v", "audio parts take data:audio/wav");
  CHECK_AUDIO_REFUSED(&policy, "data:audio/wav;base64,", "is empty");
  CHECK_FETCH_REFUSED(&policy, "data:audio/wav;base64,Zm9v", "which is not an image"); /* an image part */
  CHECK_AUDIO(&policy, "UklGRg==", "RIFF");
  CHECK_AUDIO(&policy, "UklGRg", "RIFF"); /* padding is optional */
  CHECK_AUDIO_REFUSED(&policy, "UklGR", "not valid base64");
  CHECK_AUDIO_REFUSED(&policy, "Ukl GRg==", "not valid base64");
  media_policy small = {.max_bytes = 2};
  CHECK_AUDIO_REFUSED(&small, "UklGRg==", "larger than the limit of 2 bytes");
  CHECK_AUDIO_REFUSED(&small, "data:audio/wav;base64,UklGRg==", "larger than the limit of 2 bytes");
}

static void other_schemes_are_refused(void) {
  media_policy everything = {.allow_remote_media = true, .allowed_media_dir = "/"};
  CHECK_FETCH_REFUSED(&everything, "ftp://example.com/a.png", "Unsupported URL");
  CHECK_FETCH_REFUSED(&everything, "gopher://example.com/", "Unsupported URL");
  CHECK_FETCH_REFUSED(&everything, "/etc/passwd", "Unsupported URL");
  CHECK_FETCH_REFUSED(&everything, "a.png", "Unsupported URL");
  media_policy none = {0};
  CHECK_FETCH_REFUSED(&none, "http://example.com/a.png", "--allow-remote-media");
  CHECK_FETCH_REFUSED(&none, "HTTPS://example.com/a.png", "--allow-remote-media");
}

static void cancelled_before_start(void) {
  atomic_bool cancel = true;
  media_policy policy = {0};
  uint8_t *bytes = NULL;
  size_t length = 0;
  openai_error error;
  CHECK(!media_source_fetch(&policy, "data:a;base64,Zm9v", "p", (const void *)&cancel, &bytes,
                            &length, &error));
  CHECK_INT_EQ(error.http_status, 499);
  CHECK(error.code && strcmp(error.code, "cancelled") == 0);
  openai_error_release(&error);
}

/* ---------------------------------------------------------------------- */
/* file://                                                                */
/* ---------------------------------------------------------------------- */

static char *join(const char *directory, const char *name) {
  size_t length = strlen(directory) + strlen(name) + 2;
  char *path = malloc(length);
  snprintf(path, length, "%s/%s", directory, name);
  return path;
}

static char *file_url(const char *path) {
  size_t length = strlen(path) + 8;
  char *url = malloc(length);
  snprintf(url, length, "file://%s", path);
  return url;
}

static void file_urls_stay_inside_the_allowed_directory(void) {
  const char *temp = test_temp_dir();
  char *allowed = join(temp, "media");
  char *sibling = join(temp, "media-private"); /* shares the prefix "media" */
  CHECK(mkdir(allowed, 0700) == 0);
  CHECK(mkdir(sibling, 0700) == 0);
  char *inside = test_write_file(allowed, "cat.png", "meow", 4);
  char *with_space = test_write_file(allowed, "a cat.png", "purr", 4);
  char *outside = test_write_file(temp, "secret.txt", "secret", 6);
  char *in_sibling = test_write_file(sibling, "x.png", "xx", 2);
  char *empty = test_write_file(allowed, "empty.png", "", 0);
  char *escape = join(allowed, "escape.png");
  CHECK(symlink(outside, escape) == 0);
  char *internal_link = join(allowed, "alias.png");
  CHECK(symlink(inside, internal_link) == 0);

  media_policy policy = {.allowed_media_dir = allowed};
  char *url = file_url(inside);
  CHECK_FETCHED(&policy, url, "meow");
  free(url);
  url = file_url(internal_link); /* a link that stays inside is fine */
  CHECK_FETCHED(&policy, url, "meow");
  free(url);
  /* Percent-escapes and the "localhost" host are understood. */
  size_t length = strlen(allowed) + 64;
  char *escaped = malloc(length);
  snprintf(escaped, length, "file://localhost%s/a%%20cat.png", allowed);
  CHECK_FETCHED(&policy, escaped, "purr");
  snprintf(escaped, length, "file://%s/../secret.txt", allowed);
  CHECK_FETCH_REFUSED(&policy, escaped, "outside the directory allowed with --allowed-media-dir");
  snprintf(escaped, length, "file://%s/%%2e%%2e/secret.txt", allowed);
  CHECK_FETCH_REFUSED(&policy, escaped, "outside the directory");
  snprintf(escaped, length, "file://%s/cat.png%%00.txt", allowed);
  CHECK_FETCH_REFUSED(&policy, escaped, "must be file:///absolute/path");
  snprintf(escaped, length, "file://%s/cat.png?x=1", allowed);
  CHECK_FETCH_REFUSED(&policy, escaped, "must be file:///absolute/path");
  snprintf(escaped, length, "file://%s/missing.png", allowed);
  CHECK_FETCH_REFUSED(&policy, escaped, "does not exist or is outside");
  snprintf(escaped, length, "file://%s", allowed); /* the directory itself */
  CHECK_FETCH_REFUSED(&policy, escaped, "not a regular file");
  free(escaped);

  url = file_url(outside);
  CHECK_FETCH_REFUSED(&policy, url, "outside the directory");
  free(url);
  url = file_url(escape);
  CHECK_FETCH_REFUSED(&policy, url, "outside the directory");
  free(url);
  url = file_url(in_sibling);
  CHECK_FETCH_REFUSED(&policy, url, "outside the directory");
  free(url);
  url = file_url(empty);
  CHECK_FETCH_REFUSED(&policy, url, "is empty");
  free(url);
  CHECK_FETCH_REFUSED(&policy, "file://example.com/etc/passwd", "must be file:///absolute/path");
  CHECK_FETCH_REFUSED(&policy, "file://cat.png", "must be file:///absolute/path");

  media_policy small = {.allowed_media_dir = allowed, .max_bytes = 3};
  url = file_url(inside);
  CHECK_FETCH_REFUSED(&small, url, "larger than the limit of 3 bytes");
  /* With a trailing slash on the directory the answer is the same. */
  size_t slash_length = strlen(allowed) + 2;
  char *with_slash = malloc(slash_length);
  snprintf(with_slash, slash_length, "%s/", allowed);
  media_policy slashed = {.allowed_media_dir = with_slash};
  CHECK_FETCHED(&slashed, url, "meow");
  media_policy no_directory = {0};
  CHECK_FETCH_REFUSED(&no_directory, url, "--allowed-media-dir");
  media_policy missing_directory = {.allowed_media_dir = "/nonexistent/vlm-media"};
  CHECK_FETCH_REFUSED(&missing_directory, url, "does not exist");
  free(url);
  free(with_slash);

  free(allowed), free(sibling), free(inside), free(with_space), free(outside);
  free(in_sibling), free(empty), free(escape), free(internal_link);
}

/* ---------------------------------------------------------------------- */
/* Address rules                                                          */
/* ---------------------------------------------------------------------- */

static bool address_is_public(const char *text) {
  if (strchr(text, ':')) {
    struct sockaddr_in6 address = {.sin6_family = AF_INET6};
    if (inet_pton(AF_INET6, text, &address.sin6_addr) != 1) abort();
    return media_source_address_is_public((const struct sockaddr *)&address, sizeof(address));
  }
  struct sockaddr_in address = {.sin_family = AF_INET};
  if (inet_pton(AF_INET, text, &address.sin_addr) != 1) abort();
  return media_source_address_is_public((const struct sockaddr *)&address, sizeof(address));
}

static void address_rules(void) {
  static const char *const refused[] = {
      "127.0.0.1", "127.255.0.9", "0.0.0.0", "10.1.2.3", "172.16.0.1", "172.31.255.255",
      "192.168.1.1", "169.254.169.254", "100.64.0.1", "100.127.255.255", "224.0.0.1",
      "239.255.255.250", "255.255.255.255", "240.0.0.1", "192.0.0.8", "198.18.0.1",
      "::1", "::", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254",
      "::127.0.0.1", "fc00::1", "fd12:3456::1", "fe80::1", "febf::1", "fec0::1", "ff02::1",
      "64:ff9b::7f00:1", "64:ff9b::a00:1", "2002:7f00:1::1", "2002:c0a8:101::1", "2001::1",
      "2001:db8::1", "100::1",
  };
  static const char *const allowed[] = {
      "8.8.8.8", "1.1.1.1", "93.184.216.34", "172.32.0.1", "172.15.255.255", "100.128.0.1",
      "100.63.255.255", "11.0.0.1", "223.255.255.255", "::ffff:8.8.8.8", "64:ff9b::808:808",
      "2002:808:808::1", "2606:4700:4700::1111", "2001:4860:4860::8888",
  };
  for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
    if (address_is_public(refused[i])) {
      fprintf(stderr, "  %s: %s counted as public\n", test_current, refused[i]);
      test_failures++;
    }
  for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
    if (!address_is_public(allowed[i])) {
      fprintf(stderr, "  %s: %s counted as non-public\n", test_current, allowed[i]);
      test_failures++;
    }
  struct sockaddr_in short_address = {.sin_family = AF_INET};
  CHECK(!media_source_address_is_public((const struct sockaddr *)&short_address, 4));
}

/* ---------------------------------------------------------------------- */
/* A tiny HTTP server on 127.0.0.1, one canned response per connection.   */
/* ---------------------------------------------------------------------- */

typedef struct test_server {
  int listener;
  int port;
  const char *responses[4]; /* NULL entry: read the request, then stall */
  int response_count;
  atomic_int accepted;
  pthread_t thread;
} test_server;

static void read_request(int connection) {
  char buffer[4096];
  size_t total = 0;
  struct pollfd poll_entry = {.fd = connection, .events = POLLIN};
  while (total < sizeof(buffer) - 1 && poll(&poll_entry, 1, 2000) > 0) {
    ssize_t count = read(connection, buffer + total, sizeof(buffer) - 1 - total);
    if (count <= 0) return;
    total += (size_t)count;
    buffer[total] = '\0';
    if (strstr(buffer, "\r\n\r\n")) return;
  }
}

static void *serve(void *context) {
  test_server *server = context;
  for (int i = 0; i < server->response_count; i++) {
    struct pollfd poll_entry = {.fd = server->listener, .events = POLLIN};
    if (poll(&poll_entry, 1, 1500) <= 0) break; /* nobody came */
    int connection = accept(server->listener, NULL, NULL);
    if (connection < 0) break;
    atomic_fetch_add(&server->accepted, 1);
    read_request(connection);
    if (server->responses[i]) {
      ssize_t written = write(connection, server->responses[i], strlen(server->responses[i]));
      (void)written;
    } else {
      struct pollfd stall = {.fd = connection, .events = POLLIN};
      poll(&stall, 1, 3000); /* until the client gives up */
    }
    close(connection);
  }
  return NULL;
}

static bool start_server(test_server *server) {
  server->listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t length = sizeof(address);
  if (server->listener < 0 || bind(server->listener, (struct sockaddr *)&address, length) != 0 ||
      listen(server->listener, 8) != 0 ||
      getsockname(server->listener, (struct sockaddr *)&address, &length) != 0)
    return false;
  server->port = ntohs(address.sin_port);
  atomic_init(&server->accepted, 0);
  return pthread_create(&server->thread, NULL, serve, server) == 0;
}

static void stop_server(test_server *server) {
  pthread_join(server->thread, NULL);
  close(server->listener);
}

static char *local_url(const test_server *server, const char *path) {
  char *url = malloc(128);
  snprintf(url, 128, "http://127.0.0.1:%d%s", server->port, path);
  return url;
}

#define HELLO_RESPONSE "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello"

/* The loopback rule, not a connection failure, refuses the fetch: a server
 * is listening and answering, and it is never even connected to. */
static void remote_fetch_refuses_loopback_even_with_a_listener(void) {
  test_server server = {.responses = {HELLO_RESPONSE}, .response_count = 1};
  CHECK(start_server(&server));
  char *url = local_url(&server, "/cat.png");
  media_policy policy = {.allow_remote_media = true, .remote_timeout_seconds = 5};
  CHECK_FETCH_REFUSED(&policy, url, "127.0.0.1 is not a public address");
  CHECK_FETCH_REFUSED(&policy, "http://localhost:9/", "is not a public address");
  CHECK_FETCH_REFUSED(&policy, "http://[::1]:9/", "::1 is not a public address");
  CHECK_FETCH_REFUSED(&policy, "http://169.254.169.254/latest/meta-data/", "not a public address");
  stop_server(&server);
  CHECK_INT_EQ(atomic_load(&server.accepted), 0);

  /* The same server is reachable once private addresses are allowed, so
   * the refusal above came from the address check. */
  test_server again = {.responses = {HELLO_RESPONSE}, .response_count = 1};
  CHECK(start_server(&again));
  free(url);
  url = local_url(&again, "/cat.png");
  policy.allow_private_addresses = true;
  CHECK_FETCHED(&policy, url, "hello");
  stop_server(&again);
  CHECK_INT_EQ(atomic_load(&again.accepted), 1);
  free(url);
}

static void remote_fetch_limits(void) {
  media_policy policy = {.allow_remote_media = true, .allow_private_addresses = true,
                         .max_bytes = 4, .remote_timeout_seconds = 5};
  /* Too large by Content-Length, and without one (close-delimited). */
  test_server server = {.responses = {HELLO_RESPONSE, "HTTP/1.0 200 OK\r\n\r\nhello world",
                                      "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n",
                                      "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"},
                        .response_count = 4};
  CHECK(start_server(&server));
  char *url = local_url(&server, "/");
  CHECK_FETCH_REFUSED(&policy, url, "larger than the limit of 4 bytes");
  CHECK_FETCH_REFUSED(&policy, url, "larger than the limit of 4 bytes");
  CHECK_FETCH_REFUSED(&policy, url, "HTTP 404");
  CHECK_FETCH_REFUSED(&policy, url, "is empty");
  stop_server(&server);
  free(url);
}

static void remote_fetch_follows_redirects_with_checks(void) {
  media_policy policy = {.allow_remote_media = true, .allow_private_addresses = true,
                         .remote_timeout_seconds = 5};
  test_server server = {.responses = {"HTTP/1.0 302 Found\r\nLocation: /final\r\n"
                                      "Content-Length: 0\r\n\r\n",
                                      HELLO_RESPONSE,
                                      "HTTP/1.0 302 Found\r\nLocation: file:///etc/passwd\r\n"
                                      "Content-Length: 0\r\n\r\n"},
                        .response_count = 3};
  CHECK(start_server(&server));
  char *url = local_url(&server, "/start");
  CHECK_FETCHED(&policy, url, "hello");
  CHECK_FETCH_REFUSED(&policy, url, "Only http:// and https://");
  stop_server(&server);
  CHECK_INT_EQ(atomic_load(&server.accepted), 3);
  free(url);
}

static void *cancel_soon(void *flag) {
  usleep(200 * 1000);
  atomic_store((atomic_bool *)flag, true);
  return NULL;
}

static void remote_fetch_times_out_and_cancels(void) {
  test_server server = {.responses = {NULL, NULL}, .response_count = 2};
  CHECK(start_server(&server));
  char *url = local_url(&server, "/slow");
  media_policy quick = {.allow_remote_media = true, .allow_private_addresses = true,
                        .remote_timeout_seconds = 0.3};
  CHECK_FETCH_REFUSED(&quick, url, "timed out after 0.3 s");

  media_policy patient = {.allow_remote_media = true, .allow_private_addresses = true,
                          .remote_timeout_seconds = 10};
  atomic_bool cancel = false;
  pthread_t canceller;
  CHECK(pthread_create(&canceller, NULL, cancel_soon, &cancel) == 0);
  uint8_t *bytes = NULL;
  size_t length = 0;
  openai_error error;
  CHECK(!media_source_fetch(&patient, url, "p", (const void *)&cancel, &bytes, &length, &error));
  CHECK_INT_EQ(error.http_status, 499);
  CHECK(error.code && strcmp(error.code, "cancelled") == 0);
  openai_error_release(&error);
  pthread_join(canceller, NULL);
  stop_server(&server);
  free(url);
}

TEST_MAIN(TEST(base64_accepts_canonical_encodings), TEST(base64_refuses_everything_else),
          TEST(data_urls), TEST(data_urls_must_declare_an_image_type), TEST(audio_data_urls_and_base64),
          TEST(other_schemes_are_refused),
          TEST(cancelled_before_start),
          TEST(file_urls_stay_inside_the_allowed_directory), TEST(address_rules),
          TEST(remote_fetch_refuses_loopback_even_with_a_listener), TEST(remote_fetch_limits),
          TEST(remote_fetch_follows_redirects_with_checks),
          TEST(remote_fetch_times_out_and_cancels))
