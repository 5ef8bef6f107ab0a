/* The HTTP layer's string rules (server/http_policy.h): Host and Origin
 * allow-lists, the POST content type, request IDs. */
#include "server/http_policy.h"

#include "test.h"

static http_name_list list_of(const char *text) {
  http_name_list list;
  CHECK_OK(http_name_list_parse(text, "--test", &list));
  return list;
}

static void loopback_names(void) {
  static const char *const loopback[] = {"localhost", "LOCALHOST", "a.localhost", "127.0.0.1", "127.255.0.9",
                                         "::1", "::ffff:127.0.0.2"};
  for (size_t i = 0; i < sizeof(loopback) / sizeof(loopback[0]); i++)
    CHECK(http_name_is_loopback(loopback[i], strlen(loopback[i])));
  static const char *const other[] = {"localhost.example", "127.0.0.1.example", "128.0.0.1", "::2", "",
                                      "evil-localhost", "0.0.0.0", "::ffff:10.0.0.1"};
  for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
    CHECK(!http_name_is_loopback(other[i], strlen(other[i])));
}

/* Bound to loopback without --allowed-hosts: only loopback names, so a
 * page on a rebinding domain cannot reach the server by its own name. */
static void default_hosts_when_bound_to_loopback(void) {
  http_host_policy policy = {.bound_to_loopback = true};
  CHECK(http_host_allowed(&policy, NULL)); /* HTTP/1.0 without Host */
  CHECK(http_host_allowed(&policy, "localhost:8080"));
  CHECK(http_host_allowed(&policy, "127.0.0.1"));
  CHECK(http_host_allowed(&policy, "[::1]:8080"));
  CHECK(http_host_allowed(&policy, "localhost."));
  CHECK(!http_host_allowed(&policy, "rebind.example:8080"));
  CHECK(!http_host_allowed(&policy, "localhost@evil.example"));
  CHECK(!http_host_allowed(&policy, "[::1"));
  CHECK(!http_host_allowed(&policy, ""));
  CHECK(!http_host_allowed(&policy, ":8080"));
  http_host_policy open = {.bound_to_loopback = false};
  CHECK(http_host_allowed(&open, "anything.example"));
}

static void allowed_host_lists(void) {
  http_name_list hosts = list_of("api.example.com, .corp.example ,[::1],10.0.0.5");
  http_host_policy policy = {.allowed_hosts = &hosts, .bound_to_loopback = true};
  CHECK(http_host_allowed(&policy, "API.EXAMPLE.COM:443"));
  CHECK(http_host_allowed(&policy, "corp.example"));
  CHECK(http_host_allowed(&policy, "x.y.corp.example"));
  CHECK(http_host_allowed(&policy, "[::1]:80"));
  CHECK(http_host_allowed(&policy, "10.0.0.5"));
  CHECK(!http_host_allowed(&policy, "evilcorp.example"));
  CHECK(!http_host_allowed(&policy, "localhost")); /* the list replaces the default */
  CHECK(!http_host_allowed(&policy, "example.com"));
  http_name_list_release(&hosts);
  http_name_list any = list_of("*");
  policy.allowed_hosts = &any;
  CHECK(http_host_allowed(&policy, "whatever.example"));
  http_name_list_release(&any);
  http_name_list bad;
  CHECK_ERROR(http_name_list_parse("a,,b", "--allowed-hosts", &bad), VLM_STATUS_INVALID_ARGUMENT, "empty entry");
  CHECK_ERROR(http_name_list_parse("a, ", "--allowed-hosts", &bad), VLM_STATUS_INVALID_ARGUMENT, "empty entry");
}

static void origins(void) {
  http_host_policy loopback = {.bound_to_loopback = true};
  CHECK(http_origin_allowed(&loopback, NULL));
  CHECK(http_origin_allowed(&loopback, "http://localhost:3000"));
  CHECK(http_origin_allowed(&loopback, "https://127.0.0.1"));
  CHECK(!http_origin_allowed(&loopback, "https://evil.example"));
  CHECK(!http_origin_allowed(&loopback, "null"));
  CHECK(!http_origin_allowed(&loopback, "http://localhost/path"));
  CHECK(!http_origin_allowed(&loopback, "http://user@localhost"));
  CHECK(!http_origin_allowed(&loopback, "localhost"));
  http_name_list list = list_of("https://app.example.com,http://localhost:5173");
  http_host_policy listed = {.allowed_origins = &list, .bound_to_loopback = true};
  CHECK(http_origin_allowed(&listed, "HTTPS://app.example.com"));
  CHECK(http_origin_allowed(&listed, "http://localhost:5173"));
  CHECK(!http_origin_allowed(&listed, "http://localhost:3000"));
  CHECK(!http_origin_allowed(&listed, "https://app.example.com:8443"));
  http_name_list_release(&list);
}

static void content_types(void) {
  CHECK(http_content_type_is_json("application/json"));
  CHECK(http_content_type_is_json("Application/JSON; charset=utf-8"));
  CHECK(http_content_type_is_json(" application/json ;charset=UTF-8"));
  CHECK(!http_content_type_is_json(NULL));
  CHECK(!http_content_type_is_json("text/plain"));
  CHECK(!http_content_type_is_json("application/x-www-form-urlencoded"));
  CHECK(!http_content_type_is_json("application/jsonp"));
  CHECK(!http_content_type_is_json("multipart/form-data; boundary=application/json"));
}

static void request_ids(void) {
  char id[HTTP_REQUEST_ID_MAX + 1];
  http_request_id_choose("trace-1.a:b/c+d=", id);
  CHECK_STR_EQ(id, "trace-1.a:b/c+d=");
  char longest[HTTP_REQUEST_ID_MAX + 2];
  memset(longest, 'a', sizeof(longest));
  longest[HTTP_REQUEST_ID_MAX] = '\0';
  CHECK(http_request_id_is_acceptable(longest));
  longest[HTTP_REQUEST_ID_MAX] = 'a';
  longest[HTTP_REQUEST_ID_MAX + 1] = '\0';
  CHECK(!http_request_id_is_acceptable(longest));
  static const char *const refused[] = {"", "a b", "a\"b", "a\nb", "caf\xc3\xa9", "a;b", "a\\b"};
  for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) CHECK(!http_request_id_is_acceptable(refused[i]));
  char first[HTTP_REQUEST_ID_MAX + 1], second[HTTP_REQUEST_ID_MAX + 1];
  http_request_id_choose("a b", first);
  http_request_id_choose(NULL, second);
  CHECK_INT_EQ(strlen(first), 32);
  CHECK(strspn(first, "0123456789abcdef") == 32);
  CHECK(strcmp(first, second) != 0);
}

/* Issue 27: JSON is UTF-8; a body declared in another charset is refused. */
static void charsets(void) {
  CHECK(http_content_type_charset_ok(NULL));
  CHECK(http_content_type_charset_ok("application/json"));
  CHECK(http_content_type_charset_ok("application/json;"));
  CHECK(http_content_type_charset_ok("application/json; charset=utf-8"));
  CHECK(http_content_type_charset_ok("application/json;charset=UTF8"));
  CHECK(http_content_type_charset_ok("application/json; charset=\"Utf-8\" ; x=y"));
  CHECK(!http_content_type_charset_ok("application/json; charset=utf-16"));
  CHECK(!http_content_type_charset_ok("application/json; charset=\"latin1\""));
  CHECK(!http_content_type_charset_ok("application/json; x=1; Charset=UTF-32"));
  CHECK(!http_content_type_charset_ok("application/json; charset"));
  CHECK(!http_content_type_charset_ok("application/json; charset=\"utf-8"));
  CHECK(!http_content_type_charset_ok("application/json; charset=\"utf-8\"x"));
}

static void codings_and_header_syntax(void) {
  CHECK(http_content_encoding_ok(NULL));
  CHECK(http_content_encoding_ok("identity"));
  CHECK(http_content_encoding_ok(" Identity "));
  CHECK(!http_content_encoding_ok("gzip"));
  CHECK(!http_content_encoding_ok("identity, gzip"));
  CHECK(!http_content_encoding_ok(""));
  CHECK(http_header_name_ok("X-Request-ID", 12));
  CHECK(http_header_name_ok("a!#$%&'*+-.^_`|~9", 17));
  CHECK(!http_header_name_ok("Bad Name", 8));
  CHECK(!http_header_name_ok("Bad(Name)", 9));
  CHECK(!http_header_name_ok("Bad\x01", 4));
  CHECK(!http_header_name_ok("caf\xc3\xa9", 5));
  CHECK(!http_header_name_ok("", 0));
  CHECK(http_header_value_ok("Bearer key\twith tab and \x80 obs-text", 34));
  CHECK(!http_header_value_ok("Bearer key\x01", 11));
  CHECK(!http_header_value_ok("Bearer key\x7f", 11));
  CHECK(!http_header_value_ok("a\0b", 3));
}

/* libmicrohttpd's buffer after it parsed "Authorization: Bearer K\r\nX: 1":
 * line ends overwritten by NULs in place. */
static void hidden_nuls(void) {
  static const char whole[] = "Bearer K\0\0X";
  CHECK(http_header_value_is_whole(whole, 8, whole + 10, 2));
  static const char bare_lf[] = "Bearer K\0X";
  CHECK(http_header_value_is_whole(bare_lf, 8, bare_lf + 9, 2));
  static const char cut[] = "Bearer K\0junk\0\0X"; /* "Bearer K\0junk\r\n" */
  CHECK(!http_header_value_is_whole(cut, 8, cut + 15, 2));
  static const char trailing[] = "Bearer K\0\0\0X";   /* "Bearer K\0\r\n" */
  CHECK(!http_header_value_is_whole(trailing, 8, trailing + 11, 2));
  static const char last[] = "Bearer K\0\0\0\0";    /* the last header, then the empty line */
  CHECK(http_header_value_is_whole(last, 8, last + 12, 4));
  CHECK(!http_header_value_is_whole(last, 8, last + 13, 4));
  CHECK(!http_header_value_is_whole(last, 8, last + 7, 4)); /* next before the end: never */
}

TEST_MAIN(TEST(loopback_names), TEST(default_hosts_when_bound_to_loopback), TEST(allowed_host_lists),
          TEST(origins), TEST(content_types), TEST(request_ids), TEST(charsets), TEST(codings_and_header_syntax),
          TEST(hidden_nuls))
