/* Tool-call parsers of model output (server/tool_calls.h): each format,
 * content around calls, malformed calls left as content, and streaming
 * split at every byte giving the same result as the whole text. */
#include "server/reasoning.h"
#include "server/tool_calls.h"
#include "test.h"
#include "text/grammar.h"
#include "text/grammar_schema.h"

static void check_parse(const char *format_name, const char *text, const char *content, size_t calls,
                        const char *name, const char *arguments) {
  const tool_format *format = tool_format_by_name(format_name);
  CHECK(format != NULL);
  tool_calls_result result;
  CHECK(tool_calls_parse(format, text, strlen(text), &result));
  if (strcmp(result.content, content) != 0) {
    fprintf(stderr, "  %s: content '%s', expected '%s'\n", format_name, result.content, content);
    test_failures++;
  }
  CHECK_INT_EQ(result.count, calls);
  if (calls && result.count) {
    CHECK(strcmp(result.calls[0].name, name) == 0);
    if (strcmp(result.calls[0].arguments, arguments) != 0) {
      fprintf(stderr, "  %s: arguments '%s', expected '%s'\n", format_name, result.calls[0].arguments, arguments);
      test_failures++;
    }
  }
  /* streamed in pieces of every size */
  for (size_t piece = 1; piece <= 5; piece++) {
    tool_stream stream;
    tool_stream_init(&stream, format);
    vlm_string_builder streamed = {0};
    vlm_sb_append(&streamed, "", 0);
    for (size_t at = 0; at < strlen(text); at += piece) {
      size_t n = strlen(text) - at < piece ? strlen(text) - at : piece;
      tool_stream_push(&stream, text + at, n, &streamed);
    }
    tool_calls_result tail;
    CHECK(tool_stream_finish(&stream, &streamed, &tail));
    CHECK_INT_EQ(tail.count, result.count);
    for (size_t i = 0; i < tail.count && i < result.count; i++)
      CHECK(strcmp(tail.calls[i].arguments, result.calls[i].arguments) == 0);
    /* what streamed as content is the content (whitespace aside) */
    if (!strstr(streamed.data, content)) {
      fprintf(stderr, "  %s piece %zu: streamed content '%s' lacks '%s'\n", format_name, piece, streamed.data, content);
      test_failures++;
    }
    tool_calls_result_release(&tail);
    vlm_sb_release(&streamed);
    tool_stream_release(&stream);
  }
  tool_calls_result_release(&result);
}

static void parses_each_format(void) {
  check_parse("hermes", "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
              "Let me check.", 1, "get_weather", "{\"city\":\"Paris\"}");
  check_parse("hermes", "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n<tool_call>{\"name\": \"b\", \"arguments\": \"{\\\"x\\\":1}\"}</tool_call>",
              "", 2, "a", "{}");
  check_parse("llama3_json", "{\"name\": \"f\", \"parameters\": {\"x\": [1, 2]}}", "", 1, "f", "{\"x\":[1,2]}");
  check_parse("llama3_json", "<|python_tag|>{\"name\": \"f\", \"parameters\": {}}; {\"name\": \"g\", \"arguments\": {\"q\": 1}}",
              "", 2, "f", "{}");
  check_parse("mistral", "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"a\": \"b\"}}]", "", 1, "f", "{\"a\":\"b\"}");
  check_parse("phi4_mini_json", "functools[{\"name\": \"f\", \"arguments\": {\"n\": 2}}]", "", 1, "f", "{\"n\":2}");
}

static void parses_pythonic(void) {
  check_parse("pythonic", "[get_weather(city=\"Paris\", days=3, unit='celsius')]", "", 1, "get_weather",
              "{\"city\":\"Paris\",\"days\":3,\"unit\":\"celsius\"}");
  check_parse("pythonic", " [a(), b(x=[1, 2.5, -3e2], y={'k': None, \"j\": (True, False)}, z='\\u00e9\\n\"',)]\n", "", 2,
              "a", "{}");
  tool_calls_result result;
  const char *two = "[a(), b(x=[1, 2.5, -3e2], y={'k': None, \"j\": (True, False)}, z='\\u00e9\\n\"',)]";
  CHECK(tool_calls_parse(tool_format_by_name("pythonic"), two, strlen(two), &result));
  CHECK_INT_EQ(result.count, 2);
  if (result.count == 2)
    CHECK(strcmp(result.calls[1].arguments,
                 "{\"x\":[1,2.5,-3e2],\"y\":{\"k\":null,\"j\":[true,false]},\"z\":\"\u00e9\\n\\\"\"}") == 0);
  tool_calls_result_release(&result);
  /* Llama 3.1's built-in tools after <|python_tag|> */
  check_parse("llama3_json", "<|python_tag|>brave_search.call(query=\"weather in Paris\")", "", 1, "brave_search",
              "{\"query\":\"weather in Paris\"}");
  /* not a whole list of calls: content */
  check_parse("pythonic", "[1, 2, 3]", "[1, 2, 3]", 0, NULL, NULL);
  check_parse("pythonic", "Sure: [f()]", "Sure: [f()]", 0, NULL, NULL);
  check_parse("pythonic", "[f(x=1)] and more", "[f(x=1)] and more", 0, NULL, NULL);
  check_parse("pythonic", "[f(x=01)]", "[f(x=01)]", 0, NULL, NULL);
  check_parse("pythonic", "[f(x=\"open)]", "[f(x=\"open)]", 0, NULL, NULL);
  check_parse("pythonic", "[f(1)]", "[f(1)]", 0, NULL, NULL);
  check_parse("pythonic", "[f(x=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]])]",
              "[f(x=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]])]", 0, NULL, NULL);
}

/* A forced pythonic call's grammar: the parameters as keyword arguments of
 * Python literals, which the parser turns into the JSON arguments. */
static void pythonic_call_grammar(void) {
  const char *schema_text = "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\", \"maxLength\": 8},"
                            " \"ok\": {\"type\": \"boolean\"}, \"note\": {\"type\": [\"string\", \"null\"]},"
                            " \"tags\": {\"type\": \"array\", \"items\": {\"enum\": [true, null, \"x\"]}}},"
                            " \"required\": [\"city\", \"ok\"], \"additionalProperties\": false}";
  vlm_json_document document = {0};
  vlm_json_limits limits = {.max_depth = 32, .max_input_bytes = 1 << 16};
  CHECK_OK(vlm_json_parse(schema_text, strlen(schema_text), &limits, NULL, "schema", &document));
  vlm_schema_compiler *compiler = NULL;
  CHECK_OK(vlm_schema_compiler_create(&compiler));
  vlm_schema_compiler_set_python(compiler);
  const char *rule = NULL;
  CHECK_OK(vlm_schema_compiler_add_kwargs(compiler, document.root, &rule));
  char *call = tool_format_call_grammar(tool_format_by_name("pythonic"), "get_weather", rule);
  char *text = NULL;
  CHECK_OK(vlm_schema_compiler_finish(compiler, call, &text));
  vlm_grammar *grammar = NULL;
  CHECK_OK(vlm_grammar_parse(text, strlen(text), &grammar));
  static const struct { const char *input; bool ok; } cases[] = {
      {"[get_weather(city=\"Paris\", ok=True)]", true},
      {"[get_weather(city=\"Paris\", ok=False, note=None, tags=[True, None, \"x\"])]", true},
      {"[get_weather(city=\"Paris\", ok=true)]", false},          /* JSON's true is not Python's */
      {"[get_weather(ok=True)]", false},                         /* city is required */
      {"[get_weather(city=\"a\\/b\", ok=True)]", false},          /* \/ is no Python escape */
      {"[get_weather(\"city\": \"Paris\", ok=True)]", false},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    vlm_grammar_matcher *m = NULL;
    CHECK_OK(vlm_grammar_matcher_create(grammar, &m));
    bool matched = vlm_grammar_matcher_accept_bytes(m, cases[i].input, strlen(cases[i].input), NULL) &&
                   vlm_grammar_matcher_is_complete(m);
    if (matched != cases[i].ok) {
      fprintf(stderr, "  pythonic grammar: '%s' %s\n", cases[i].input, matched ? "matched" : "did not match");
      test_failures++;
    }
    vlm_grammar_matcher_release(m);
    tool_calls_result result;
    CHECK(tool_calls_parse(tool_format_by_name("pythonic"), cases[i].input, strlen(cases[i].input), &result));
    if (cases[i].ok) CHECK_INT_EQ(result.count, 1);
    tool_calls_result_release(&result);
  }
  /* a property that is not an identifier cannot be a keyword */
  const char *bad = "{\"type\": \"object\", \"properties\": {\"a-b\": {\"type\": \"integer\"}}}";
  vlm_json_document bad_document = {0};
  CHECK_OK(vlm_json_parse(bad, strlen(bad), &limits, NULL, "schema", &bad_document));
  CHECK_ERROR(vlm_schema_compiler_add_kwargs(compiler, bad_document.root, &rule), VLM_STATUS_INVALID_ARGUMENT,
              "not a Python identifier");
  vlm_json_document_release(&bad_document);
  vlm_grammar_release(grammar);
  free(text);
  free(call);
  vlm_schema_compiler_release(compiler);
  vlm_json_document_release(&document);
}

/* tool_choice required: one or more calls with parallel_tool_calls, else
 * exactly one, in each format's own list syntax. */
static void several_calls_grammar(void) {
  static const struct { const char *format, *one, *two; } cases[] = {
      {"hermes", "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
       "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"name\": \"g\", \"arguments\": {}}\n</tool_call>"},
      {"llama3_json", "{\"name\": \"f\", \"parameters\": {}}", "{\"name\": \"f\", \"parameters\": {}}; {\"name\": \"g\", \"parameters\": {}}"},
      {"mistral", "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}}]",
       "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}}, {\"name\": \"g\", \"arguments\": {}}]"},
      {"phi4_mini_json", "functools[{\"name\": \"f\", \"arguments\": {}}]",
       "functools[{\"name\": \"f\", \"arguments\": {}}, {\"name\": \"g\", \"arguments\": {}}]"},
      {"pythonic", "[f()]", "[f(), g()]"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    const tool_format *format = tool_format_by_name(cases[i].format);
    const char *empty = tool_format_python_arguments(format) ? "\"\"" : "\"{}\"";
    char *f = tool_format_call_item_grammar(format, "f", empty), *g = tool_format_call_item_grammar(format, "g", empty);
    char items[1024];
    snprintf(items, sizeof(items), "%s | %s", f, g);
    for (int several = 0; several < 2; several++) {
      char *root = tool_format_calls_grammar(format, items, several);
      char text[2048];
      snprintf(text, sizeof(text), "root ::= %s\n", root);
      vlm_grammar *grammar = NULL;
      CHECK_OK(vlm_grammar_parse(text, strlen(text), &grammar));
      for (int two = 0; two < 2; two++) {
        const char *input = two ? cases[i].two : cases[i].one;
        vlm_grammar_matcher *m = NULL;
        CHECK_OK(vlm_grammar_matcher_create(grammar, &m));
        bool matched = vlm_grammar_matcher_accept_bytes(m, input, strlen(input), NULL) && vlm_grammar_matcher_is_complete(m);
        if (matched != (!two || several)) {
          fprintf(stderr, "  %s several=%d: '%s' %s\n", cases[i].format, several, input, matched ? "matched" : "did not");
          test_failures++;
        }
        vlm_grammar_matcher_release(m);
        tool_calls_result result;
        CHECK(tool_calls_parse(format, input, strlen(input), &result));
        CHECK_INT_EQ(result.count, (size_t)(two ? 2 : 1));
        tool_calls_keep_first(&result, 1);
        CHECK_INT_EQ(result.count, 1);
        tool_calls_result_release(&result);
      }
      vlm_grammar_release(grammar);
      free(root);
    }
    free(f);
    free(g);
  }
}

static void leaves_malformed_calls_as_content(void) {
  check_parse("hermes", "<tool_call>{\"name\": 3}</tool_call>", "<tool_call>{\"name\": 3}</tool_call>", 0, NULL, NULL);
  check_parse("hermes", "text <tool_call>{\"name\": \"f\", ", "text <tool_call>{\"name\": \"f\", ", 0, NULL, NULL);
  check_parse("llama3_json", "I think {\"name\": \"f\"} is it", "I think {\"name\": \"f\"} is it", 0, NULL, NULL);
  check_parse("mistral", "no calls here [TOOL", "no calls here [TOOL", 0, NULL, NULL);
  check_parse("hermes", "plain answer", "plain answer", 0, NULL, NULL);
}

static void detects_formats_from_templates(void) {
  CHECK(tool_format_detect("{{ '<tool_call>' }}") == tool_format_by_name("hermes"));
  CHECK(tool_format_detect("<|python_tag|>") == tool_format_by_name("llama3_json"));
  CHECK(tool_format_detect("[TOOL_CALLS]") == tool_format_by_name("mistral"));
  CHECK(tool_format_detect("<|tool|>") == tool_format_by_name("phi4_mini_json"));
  CHECK(tool_format_detect("{{ messages }}") == NULL);
  CHECK(tool_format_by_name("unknown") == NULL);
  char *grammar = tool_format_call_grammar(tool_format_by_name("hermes"), "f", "args");
  CHECK(grammar && strstr(grammar, "<tool_call>") && strstr(grammar, " args "));
  free(grammar);
}

/* Reasoning first, then the tool parser on the content part (the server's
 * order, as vLLM composes them): streamed in pieces of every size, the
 * reasoning, the content and the calls equal the whole text's. */
static void split_then_parse(const char *text, const char *prompt_tail, const char *reasoning_expected,
                             const char *content_expected, size_t calls_expected) {
  const tool_format *format = tool_format_by_name("hermes");
  for (size_t piece = 1; piece <= strlen(text); piece++) {
    reasoning_split split;
    reasoning_split_init(&split, REASONING_QWEN3, prompt_tail);
    tool_stream stream;
    tool_stream_init(&stream, format);
    vlm_string_builder reasoning = {0}, content = {0};
    vlm_sb_append(&reasoning, "", 0);
    vlm_sb_append(&content, "", 0);
    for (size_t at = 0; at <= strlen(text); at += piece) {
      vlm_string_builder raw = {0};
      size_t n = strlen(text) - at < piece ? strlen(text) - at : piece;
      if (n) reasoning_split_push(&split, text + at, n, &reasoning, &raw);
      else reasoning_split_finish(&split, &reasoning, &raw);
      if (raw.length) tool_stream_push(&stream, raw.data, raw.length, &content);
      vlm_sb_release(&raw);
      if (!n) break;
      if (at + n == strlen(text)) {
        vlm_string_builder rest = {0};
        reasoning_split_finish(&split, &reasoning, &rest);
        if (rest.length) tool_stream_push(&stream, rest.data, rest.length, &content);
        vlm_sb_release(&rest);
        break;
      }
    }
    tool_calls_result calls;
    CHECK(tool_stream_finish(&stream, &content, &calls));
    CHECK_INT_EQ(calls.count, calls_expected);
    if (calls.count) CHECK(strcmp(calls.calls[0].name, "get_weather") == 0);
    if (strcmp(reasoning.data, reasoning_expected) != 0 || !strstr(content.data, content_expected) ||
        strstr(content.data, "<think>") || strstr(content.data, "</think>")) {
      fprintf(stderr, "  piece %zu: reasoning '%s' content '%s'\n", piece, reasoning.data, content.data);
      test_failures++;
    }
    tool_calls_result_release(&calls);
    vlm_sb_release(&reasoning);
    vlm_sb_release(&content);
    tool_stream_release(&stream);
    reasoning_split_release(&split);
  }
}

static void reasoning_composes_with_tools(void) {
  const char *call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
  char text[512];
  snprintf(text, sizeof(text), "<think>\nThe user wants weather.\n</think>\n\nChecking.\n%s", call);
  split_then_parse(text, "<|im_start|>assistant\n", "\nThe user wants weather.\n", "Checking.", 1);
  /* a <tool_call> inside the thinking is reasoning, not a call */
  char inner[256];
  snprintf(inner, sizeof(inner), "maybe %s", call);
  snprintf(text, sizeof(text), "<think>%s</think>no call", inner);
  split_then_parse(text, NULL, inner, "no call", 0);
  /* the prompt opened the block (continue_final_message "<think>"): the completion starts inside it */
  snprintf(text, sizeof(text), "plan</think>%s", call);
  split_then_parse(text, "assistant\n<think>\n", "plan", "", 1);
}

TEST_MAIN(TEST(parses_each_format), TEST(parses_pythonic), TEST(pythonic_call_grammar), TEST(several_calls_grammar), TEST(reasoning_composes_with_tools), TEST(leaves_malformed_calls_as_content), TEST(detects_formats_from_templates))
