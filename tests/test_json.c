#include "io/json.h"
#include "test.h"

static vlm_status parse(const char *text, vlm_json_document *document) {
  return vlm_json_parse(text, strlen(text), NULL, NULL, "t.json", document);
}

static void parses_nested_values(void) {
  vlm_json_document document;
  CHECK_OK(parse(" {\"a\": [1, -2.5, true, null, \"x\\n\\u00e9\\ud83d\\ude00\"],"
                 " \"b\": {\"c\": 9007199254740993}} ", &document));
  const vlm_json_value *a = vlm_json_object_get(document.root, "a");
  CHECK(a && a->type == VLM_JSON_ARRAY && a->as.array.count == 5);
  int64_t integer = 0;
  CHECK(vlm_json_get_int(vlm_json_array_get(a, 0), &integer) && integer == 1);
  double number = 0;
  CHECK(vlm_json_get_double(vlm_json_array_get(a, 1), &number) && number == -2.5);
  CHECK(!vlm_json_get_int(vlm_json_array_get(a, 1), &integer));
  CHECK_STR_EQ(vlm_json_get_string(vlm_json_array_get(a, 4)),
               "x\n\xc3\xa9\xf0\x9f\x98\x80");
  /* 2^53 + 1 must survive exactly (a double-only parser would round it). */
  const vlm_json_value *c = vlm_json_object_get(vlm_json_object_get(document.root, "b"), "c");
  CHECK(vlm_json_get_int(c, &integer) && integer == 9007199254740993LL);
  vlm_json_document_release(&document);
}

static void last_duplicate_key_wins_and_is_detectable(void) {
  vlm_json_document document;
  CHECK_OK(parse("{\"k\": 1, \"j\": 0, \"k\": 2}", &document));
  int64_t value = 0;
  CHECK(vlm_json_get_int(vlm_json_object_get(document.root, "k"), &value));
  CHECK_INT_EQ(value, 2);
  const char *duplicate = NULL;
  CHECK(vlm_json_object_has_duplicates(document.root, &duplicate));
  CHECK_STR_EQ(duplicate, "k");
  vlm_json_document_release(&document);
}

static void accepts_python_non_finite_numbers(void) {
  vlm_json_document document;
  CHECK_OK(parse("[NaN, Infinity, -Infinity, 1e400]", &document));
  double number = 0;
  CHECK(vlm_json_get_double(vlm_json_array_get(document.root, 0), &number) && isnan(number));
  CHECK(vlm_json_get_double(vlm_json_array_get(document.root, 2), &number) && isinf(number) && number < 0);
  vlm_json_document_release(&document);
}

static void rejects_malformed_text_with_position(void) {
  static const struct {
    const char *text;
    const char *fragment;
  } cases[] = {
      {"", "unexpected end of input"},
      {"{", "expected a string key"},
      {"{\"a\" 1}", "expected ':'"},
      {"[1 2]", "expected ',' or ']'"},
      {"[1,]", "expected a value"},
      {"\"abc", "unterminated string"},
      {"\"a\x01\"", "control character"},
      {"\"\\x\"", "unknown escape"},
      {"\"\\ud800\"", "high surrogate"},
      {"\"\\udc00\"", "lone low surrogate"},
      {"\"\xc3\x28\"", "invalid UTF-8"},
      {"\"\xed\xa0\x80\"", "invalid UTF-8"}, /* encoded surrogate */
      {"\"\xc0\xaf\"", "invalid UTF-8"},     /* overlong */
      {"01", "unexpected data after"},
      {"1.", "digits after '.'"},
      {"1e", "digits in exponent"},
      {"tru", "unexpected character"},
      {"{} x", "unexpected data after"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    vlm_json_document document;
    CHECK_ERROR(parse(cases[i].text, &document), VLM_STATUS_DATA_LOSS, cases[i].fragment);
    CHECK(document.root == NULL);
  }
  vlm_json_document document;
  CHECK_ERROR(parse("{\n  \"a\": [1,\n  2 x]}", &document), VLM_STATUS_DATA_LOSS,
              "t.json: invalid JSON at line 3 column 5");
}

static void enforces_depth_limit(void) {
  char text[600];
  memset(text, '[', 300);
  memset(text + 300, ']', 300);
  text[599] = '\0';
  text[599 - 1] = ']';
  vlm_json_document document;
  vlm_json_limits limits = {.max_depth = 128};
  CHECK_ERROR(vlm_json_parse(text, 600 - 1, &limits, NULL, "deep", &document),
              VLM_STATUS_OUT_OF_RANGE, "nesting deeper than 128");
  limits.max_input_bytes = 10;
  CHECK_ERROR(vlm_json_parse(text, 600 - 1, &limits, NULL, "big", &document),
              VLM_STATUS_OUT_OF_RANGE, "exceeds the limit");
}

static void round_trips_through_the_writer(void) {
  const char *text = "{\"a\":[1,2.5,\"q\\\"\\\\\\n\\u0001\"],\"b\":{},\"c\":[],\"d\":null,\"e\":false}";
  vlm_json_document document;
  CHECK_OK(parse(text, &document));
  vlm_string_builder builder = {0};
  vlm_sb_append_json_value(&builder, document.root);
  char *written = vlm_sb_finish(&builder);
  CHECK_STR_EQ(written, text);
  free(written);
  vlm_json_document_release(&document);
}

static void strings_may_contain_nul(void) {
  vlm_json_document document;
  CHECK_OK(parse("\"a\\u0000b\"", &document));
  CHECK_INT_EQ(document.root->as.string.length, 3);
  CHECK(memcmp(document.root->as.string.chars, "a\0b", 3) == 0);
  vlm_json_document_release(&document);
}

TEST_MAIN(TEST(parses_nested_values), TEST(last_duplicate_key_wins_and_is_detectable),
          TEST(accepts_python_non_finite_numbers), TEST(rejects_malformed_text_with_position),
          TEST(enforces_depth_limit), TEST(round_trips_through_the_writer),
          TEST(strings_may_contain_nul))
