/* Tool-call parsers of model output (server/tool_calls.h): each format,
 * content around calls, malformed calls left as content, and streaming
 * split at every byte giving the same result as the whole text. */
#include "server/tool_calls.h"
#include "test.h"

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

TEST_MAIN(TEST(parses_each_format), TEST(leaves_malformed_calls_as_content), TEST(detects_formats_from_templates))
