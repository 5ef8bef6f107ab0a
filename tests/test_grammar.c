/* Grammars (text/grammar.h) and JSON Schema compilation
 * (text/grammar_schema.h): matching bytes, token masks from the trie,
 * refusals of hostile input. */
#include <time.h>

#include "engine/sampling.h"
#include "io/json.h"
#include "test.h"
#include "text/grammar.h"
#include "text/grammar_schema.h"

static vlm_grammar *parse(const char *text) {
  vlm_grammar *grammar = NULL;
  CHECK_OK(vlm_grammar_parse(text, strlen(text), &grammar));
  return grammar;
}

/* Whether `input` is a complete sentence of `grammar`, fed in one piece. */
static bool matches(const vlm_grammar *grammar, const char *input) {
  vlm_grammar_matcher *m = NULL;
  if (vlm_grammar_matcher_create(grammar, &m)) return false;
  vlm_status status = VLM_OK;
  bool ok = vlm_grammar_matcher_accept_bytes(m, input, strlen(input), &status) && vlm_grammar_matcher_is_complete(m);
  CHECK(status == VLM_OK);
  vlm_status_free(status);
  vlm_grammar_matcher_release(m);
  return ok;
}

static void matches_bytes(void) {
  vlm_grammar *g = parse("root ::= \"a\" b* (\"c\" | [x-z]{2,3}) # comment\nb ::= [0-9]\n");
  CHECK(matches(g, "ac"));
  CHECK(matches(g, "a123xy"));
  CHECK(matches(g, "azzz"));
  CHECK(!matches(g, "azzzz"));
  CHECK(!matches(g, "a"));
  CHECK(!matches(g, "bc"));
  vlm_grammar_release(g);
  g = parse("root ::= [^\"\\\\]* \"\\\"\"\n");
  CHECK(matches(g, "h\xC3\xA9llo\""));
  CHECK(!matches(g, "a\\b\""));
  vlm_grammar_release(g);
  /* fed byte by byte, the prefixes are accepted and the state advances */
  g = parse("root ::= \"{\" (\"ab\" | \"ac\")+ \"}\"");
  vlm_grammar_matcher *m = NULL;
  CHECK_OK(vlm_grammar_matcher_create(g, &m));
  const char *input = "{abacab}";
  for (const char *at = input; *at; at++) CHECK(vlm_grammar_matcher_accept_bytes(m, at, 1, NULL));
  CHECK(vlm_grammar_matcher_is_finished(m));
  CHECK(!vlm_grammar_matcher_accept_bytes(m, "x", 1, NULL));
  vlm_grammar_matcher_release(m);
  vlm_grammar_release(g);
}

static void refuses_bad_grammars(void) {
  vlm_grammar *g = NULL;
  CHECK_ERROR(vlm_grammar_parse("root ::= x", 10, &g), VLM_STATUS_INVALID_ARGUMENT, "'x' is used but not defined");
  CHECK_ERROR(vlm_grammar_parse("a ::= \"x\"", 9, &g), VLM_STATUS_INVALID_ARGUMENT, "no 'root'");
  const char *left = "root ::= root \"a\" | \"b\"";
  CHECK_ERROR(vlm_grammar_parse(left, strlen(left), &g), VLM_STATUS_INVALID_ARGUMENT, "without consuming input");
  const char *empty_loop = "root ::= (\"a\"?)*";
  CHECK_ERROR(vlm_grammar_parse(empty_loop, strlen(empty_loop), &g), VLM_STATUS_INVALID_ARGUMENT,
              "without consuming input");
  const char *big = "root ::= \"a\"{10001}";
  CHECK_ERROR(vlm_grammar_parse(big, strlen(big), &g), VLM_STATUS_RESOURCE_EXHAUSTED, "over 10000");
  /* nested repetitions stay small (each level is one rule reference) */
  const char *nested = "root ::= ((\"a\"{1000}){1000}){1000}";
  CHECK_OK(vlm_grammar_parse(nested, strlen(nested), &g));
  vlm_grammar_release(g);
  g = NULL;
  vlm_string_builder huge = {0};
  vlm_sb_append_literal(&huge, "root ::=");
  for (int i = 0; i < 101; i++) vlm_sb_append_literal(&huge, " [a-z]{10000}");
  char *huge_text = vlm_sb_finish(&huge);
  CHECK_ERROR(vlm_grammar_parse(huge_text, strlen(huge_text), &g), VLM_STATUS_RESOURCE_EXHAUSTED, "1000000 elements");
  free(huge_text);
  /* deep nesting is refused, not a stack overflow */
  char deep[1200];
  size_t n = 0;
  n += (size_t)snprintf(deep, sizeof(deep), "root ::= ");
  for (int i = 0; i < 500; i++) deep[n++] = '(';
  deep[n++] = '"';
  deep[n++] = 'a';
  deep[n++] = '"';
  for (int i = 0; i < 500; i++) deep[n++] = ')';
  CHECK_ERROR(vlm_grammar_parse(deep, n, &g), VLM_STATUS_RESOURCE_EXHAUSTED, "nested deeper");
  CHECK(g == NULL);
}

/* An ambiguous grammar is bounded: the step fails instead of growing. */
static void bounds_ambiguous_grammars(void) {
  vlm_grammar *g = parse("root ::= x*\nx ::= \"a\" | \"a\" \"a\" | \"a\" y\ny ::= x");
  vlm_grammar_matcher *m = NULL;
  CHECK_OK(vlm_grammar_matcher_create(g, &m));
  char input[64];
  memset(input, 'a', sizeof(input));
  vlm_status status = VLM_OK;
  clock_t start = clock();
  bool ok = true;
  for (int i = 0; i < 64 && ok; i++) ok = vlm_grammar_matcher_accept_bytes(m, input, 1, &status);
  CHECK(!ok || status == VLM_OK);
  if (status) CHECK(vlm_status_code_of(status) == VLM_STATUS_RESOURCE_EXHAUSTED);
  vlm_status_free(status);
  CHECK((double)(clock() - start) / CLOCKS_PER_SEC < 5.0);
  vlm_grammar_matcher_release(m);
  vlm_grammar_release(g);
}

/* Masks from the trie agree with feeding each token's bytes. */
static void masks_match_tokens(void) {
  const char *tokens[] = {"{", "}", "\"", "a", "ab", "\"a", "\":", ":", "1", "12", " ", "{\"", "x", NULL, "\xC3", "\xA9"};
  size_t lengths[16];
  for (int i = 0; i < 16; i++) lengths[i] = tokens[i] ? strlen(tokens[i]) : 0;
  const int32_t end = 13;
  vlm_token_index *index = NULL;
  CHECK_OK(vlm_token_index_create_from_bytes(tokens, lengths, 16, &end, 1, &index));
  vlm_grammar *g = parse("root ::= \"{\" \"\\\"\" [a-b\\u00e9]+ \"\\\":\" [0-9]+ \"}\"");
  vlm_grammar_matcher *m = NULL;
  CHECK_OK(vlm_grammar_matcher_create(g, &m));
  const int32_t path[] = {11, 3, 4, 14, 15, 6, 9, 8, 1};
  for (size_t step = 0; step <= sizeof(path) / sizeof(path[0]); step++) {
    uint32_t bits[1] = {0};
    CHECK_OK(vlm_grammar_matcher_fill_mask(m, index, bits));
    for (int32_t t = 0; t < 16; t++) {
      bool in_mask = (bits[0] >> t) & 1u;
      CHECK(in_mask == vlm_grammar_matcher_allows_token(m, index, t));
    }
    CHECK(((bits[0] >> end) & 1u) == (step == sizeof(path) / sizeof(path[0])));
    if (step < sizeof(path) / sizeof(path[0])) {
      CHECK((bits[0] >> path[step]) & 1u);
      CHECK_OK(vlm_grammar_matcher_accept_token(m, index, path[step]));
    }
  }
  CHECK_ERROR(vlm_grammar_matcher_accept_token(m, index, 0), VLM_STATUS_INVALID_ARGUMENT, "does not continue");
  CHECK_OK(vlm_grammar_matcher_accept_token(m, index, end));
  vlm_grammar_matcher_release(m);
  vlm_grammar_release(g);
  vlm_token_index_release(index);
}

static char *compile(const char *schema) {
  char *grammar = NULL;
  CHECK_OK(vlm_json_schema_text_to_grammar(schema, strlen(schema), &grammar));
  return grammar;
}

static bool schema_accepts(const char *schema, const char *json) {
  char *text = compile(schema);
  if (!text) return false;
  vlm_grammar *g = parse(text);
  bool ok = g && matches(g, json);
  vlm_grammar_release(g);
  free(text);
  return ok;
}

static void compiles_schemas(void) {
  const char *object = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"maxLength\":5},"
                       "\"age\":{\"type\":\"integer\",\"minimum\":18,\"maximum\":130},"
                       "\"tags\":{\"type\":\"array\",\"items\":{\"enum\":[\"a\",\"b\",3]},\"minItems\":1,\"maxItems\":2},"
                       "\"note\":{\"type\":[\"string\",\"null\"]}},"
                       "\"required\":[\"name\",\"age\"],\"additionalProperties\":false}";
  CHECK(schema_accepts(object, "{\"name\":\"bob\",\"age\":42}"));
  CHECK(schema_accepts(object, "{ \"name\": \"bob\", \"age\": 130, \"tags\": [\"a\", 3], \"note\": null }"));
  CHECK(!schema_accepts(object, "{\"name\":\"bobbyy\",\"age\":42}"));
  CHECK(!schema_accepts(object, "{\"name\":\"bob\",\"age\":17}"));
  CHECK(!schema_accepts(object, "{\"name\":\"bob\",\"age\":131}"));
  CHECK(!schema_accepts(object, "{\"age\":42}"));
  CHECK(!schema_accepts(object, "{\"name\":\"bob\",\"age\":42,\"tags\":[]}"));
  CHECK(!schema_accepts(object, "{\"name\":\"bob\",\"age\":42,\"tags\":[\"a\",\"b\",\"a\"]}"));
  const char *ranges = "{\"type\":\"array\",\"items\":{\"type\":\"integer\",\"minimum\":-25,\"maximum\":1234}}";
  CHECK(schema_accepts(ranges, "[-25,-1,0,7,99,100,1234]"));
  CHECK(!schema_accepts(ranges, "[-26]"));
  CHECK(!schema_accepts(ranges, "[1235]"));
  CHECK(!schema_accepts(ranges, "[01]"));
  const char *number = "{\"type\":\"number\",\"minimum\":-2,\"maximum\":3}";
  CHECK(schema_accepts(number, "-1.5"));
  CHECK(schema_accepts(number, "2.75"));
  CHECK(schema_accepts(number, "3"));
  CHECK(!schema_accepts(number, "3.5"));
  CHECK(!schema_accepts(number, "-2.5"));
  const char *formats = "{\"type\":\"object\",\"properties\":{\"d\":{\"type\":\"string\",\"format\":\"date-time\"},"
                        "\"u\":{\"type\":\"string\",\"format\":\"uuid\"},"
                        "\"p\":{\"type\":\"string\",\"pattern\":\"^[A-Z]{2}-\\\\d{3}(x|y)?$\"}},"
                        "\"required\":[\"d\",\"u\",\"p\"]}";
  CHECK(schema_accepts(formats, "{\"d\":\"2024-01-05T10:20:30Z\",\"u\":\"0123abcd-0000-1111-2222-333344445555\",\"p\":\"AB-123y\"}"));
  CHECK(!schema_accepts(formats, "{\"d\":\"2024-13-05T10:20:30Z\",\"u\":\"0123abcd-0000-1111-2222-333344445555\",\"p\":\"AB-123\"}"));
  CHECK(!schema_accepts(formats, "{\"d\":\"2024-01-05T10:20:30Z\",\"u\":\"0123abcd-0000-1111-2222-333344445555\",\"p\":\"AB-12\"}"));
  /* recursion through $defs */
  const char *tree = "{\"$defs\":{\"node\":{\"type\":\"object\",\"properties\":{\"v\":{\"type\":\"integer\"},"
                     "\"kids\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/node\"}}},\"required\":[\"v\"]}},"
                     "\"$ref\":\"#/$defs/node\"}";
  CHECK(schema_accepts(tree, "{\"v\":1,\"kids\":[{\"v\":2},{\"v\":3,\"kids\":[{\"v\":4}]}]}"));
  CHECK(!schema_accepts(tree, "{\"kids\":[]}"));
  const char *choice = "{\"anyOf\":[{\"type\":\"boolean\"},{\"const\":{\"k\":[1,2]}}]}";
  CHECK(schema_accepts(choice, "true"));
  CHECK(schema_accepts(choice, "{\"k\":[1,2]}"));
  CHECK(!schema_accepts(choice, "{\"k\":[1]}"));
  const char *escaped = "{\"type\":\"string\",\"pattern\":\"a\\\"b\"}";
  CHECK(schema_accepts(escaped, "\"a\\\"b\""));
  char *any = NULL;
  CHECK_OK(vlm_json_object_grammar(&any));
  vlm_grammar *g = any ? parse(any) : NULL;
  CHECK(g && matches(g, "{\"a\": [1, {\"b\": null}, \"x\\u00e9\"], \"c\": -1.5e3}"));
  CHECK(g && !matches(g, "[1]"));
  vlm_grammar_release(g);
  free(any);
}

static void refuses_schemas_outside_the_subset(void) {
  char *grammar = NULL;
  const char *cases[][2] = {
      {"{\"oneOf\":[{\"type\":\"string\"}]}", "keyword 'oneOf' at #"},
      {"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"foo\":1}}}", "'foo' at #/properties/a"},
      {"{\"type\":\"string\",\"format\":\"hostname\"}", "'format' 'hostname'"},
      {"{\"type\":\"string\",\"pattern\":\"(a)\\\\1\"}", "backreferences"},
      {"{\"type\":\"string\",\"pattern\":\"(?=a)\"}", "lookaround"},
      {"{\"$ref\":\"#/$defs/missing\"}", "points at nothing"},
      {"{\"$ref\":\"http://example.com/s.json\"}", "another document"},
      {"{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/a\"}},\"$ref\":\"#/$defs/a\"}", "without consuming input"},
      {"{\"type\":\"number\",\"minimum\":0.5}", "fractional"},
      {"{\"type\":\"array\",\"maxItems\":100000}", "maxItems"},
      {"false", "matches nothing"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    vlm_status status = vlm_json_schema_text_to_grammar(cases[i][0], strlen(cases[i][0]), &grammar);
    CHECK(status != VLM_OK);
    if (status && !strstr(vlm_status_message(status), cases[i][1]))
      fprintf(stderr, "  case %zu: '%s' lacks '%s'\n", i, vlm_status_message(status), cases[i][1]), test_failures++;
    vlm_status_free(status);
    free(grammar);
    grammar = NULL;
  }
  /* deep nesting and huge enums: refused quickly */
  vlm_string_builder deep = {0};
  for (int i = 0; i < 100; i++) vlm_sb_append_literal(&deep, "{\"type\":\"array\",\"items\":");
  vlm_sb_append_literal(&deep, "{}");
  for (int i = 0; i < 100; i++) vlm_sb_append_literal(&deep, "}");
  char *text = vlm_sb_finish(&deep);
  CHECK_ERROR(vlm_json_schema_text_to_grammar(text, strlen(text), &grammar), VLM_STATUS_INVALID_ARGUMENT,
              "nested deeper than 64");
  free(text);
  vlm_string_builder wide = {0};
  vlm_sb_append_literal(&wide, "{\"enum\":[");
  for (int i = 0; i < 1001; i++) vlm_sb_appendf(&wide, "%s%d", i ? "," : "", i);
  vlm_sb_append_literal(&wide, "]}");
  text = vlm_sb_finish(&wide);
  CHECK_ERROR(vlm_json_schema_text_to_grammar(text, strlen(text), &grammar), VLM_STATUS_INVALID_ARGUMENT,
              "more than 1000 values");
  free(text);
  /* exponential $ref fan-out stays linear: each target compiles once */
  vlm_string_builder fan = {0};
  vlm_sb_append_literal(&fan, "{\"$defs\":{");
  for (int i = 0; i < 16; i++)
    vlm_sb_appendf(&fan, "%s\"d%d\":{\"type\":\"array\",\"maxItems\":2,\"items\":{\"anyOf\":[{\"$ref\":\"#/$defs/d%d\"},{\"$ref\":\"#/$defs/d%d\"}]}}",
                   i ? "," : "", i, i + 1, i + 1);
  vlm_sb_append_literal(&fan, ",\"d16\":{\"type\":\"integer\"}},\"$ref\":\"#/$defs/d0\"}");
  text = vlm_sb_finish(&fan);
  clock_t start = clock();
  CHECK_OK(vlm_json_schema_text_to_grammar(text, strlen(text), &grammar));
  CHECK((double)(clock() - start) / CLOCKS_PER_SEC < 1.0);
  free(grammar);
  free(text);
}

typedef struct sampler_constraint {
  vlm_grammar_matcher *matcher;
  const vlm_token_index *index;
} sampler_constraint;
static bool constraint_allows(void *context, int32_t token) {
  sampler_constraint *c = context;
  return vlm_grammar_matcher_allows_token(c->matcher, c->index, token);
}
static vlm_status constraint_fill(void *context, uint32_t *bits) {
  sampler_constraint *c = context;
  return vlm_grammar_matcher_fill_mask(c->matcher, c->index, bits);
}
static vlm_status constraint_accept(void *context, int32_t token) {
  sampler_constraint *c = context;
  return vlm_grammar_matcher_accept_token(c->matcher, c->index, token);
}

/* The sampler masks what the grammar forbids, keeps the greedy choice when
 * it is allowed, samples only allowed tokens, and ends with the end token. */
static void sampler_follows_the_grammar(void) {
  const char *tokens[] = {"a", "b", "ab", "c", NULL};
  size_t lengths[5] = {1, 1, 2, 1, 0};
  const int32_t end = 4;
  vlm_token_index *index = NULL;
  CHECK_OK(vlm_token_index_create_from_bytes(tokens, lengths, 5, &end, 1, &index));
  vlm_grammar *g = parse("root ::= \"a\" [bc]{1,2}");
  for (int sampled = 0; sampled < 2; sampled++) {
    vlm_sampling_params params = vlm_sampling_params_greedy();
    if (sampled) params.temperature = 1.0f, params.seed = 7;
    vlm_sampler *sampler = NULL;
    CHECK_OK(vlm_sampler_create(&params, 5, NULL, &sampler));
    sampler_constraint c = {NULL, index};
    CHECK_OK(vlm_grammar_matcher_create(g, &c.matcher));
    vlm_token_constraint constraint = {&c, constraint_allows, constraint_fill, constraint_accept};
    CHECK_OK(vlm_sampler_set_constraint(sampler, &constraint));
    /* step 1: "c" is the model's favourite but cannot start; "ab" (allowed) beats "a" */
    const float first[5] = {1.0f, 0.5f, 2.0f, 9.0f, 8.0f};
    vlm_sample_result result;
    CHECK_OK(vlm_sampler_sample(sampler, first, &result));
    if (!sampled) CHECK_INT_EQ(result.token, 2);
    CHECK(result.token == 0 || result.token == 2);
    for (int step = 0; step < 4 && result.token != end; step++) {
      const float later[5] = {0.0f, 1.0f, 5.0f, 0.5f, 3.0f};
      CHECK_OK(vlm_sampler_sample(sampler, later, &result));
      CHECK(result.token != 2 && result.token != 0);
    }
    CHECK_INT_EQ(result.token, end);
    vlm_grammar_matcher_release(c.matcher);
    vlm_sampler_release(sampler);
  }
  vlm_grammar_release(g);
  vlm_token_index_release(index);
}

TEST_MAIN(TEST(sampler_follows_the_grammar), TEST(matches_bytes), TEST(refuses_bad_grammars), TEST(bounds_ambiguous_grammars), TEST(masks_match_tokens),
          TEST(compiles_schemas), TEST(refuses_schemas_outside_the_subset))
