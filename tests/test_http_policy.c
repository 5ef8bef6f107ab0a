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

TEST_MAIN(TEST(loopback_names), TEST(default_hosts_when_bound_to_loopback), TEST(allowed_host_lists),
          TEST(origins), TEST(content_types), TEST(request_ids))
