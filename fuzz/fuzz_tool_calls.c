/* libFuzzer target: the tool-call parsers (server/tool_calls.h) on any
 * model output, whole and streamed in pieces: no crash, and the streamed
 * split gives the same calls as the whole text. First byte: the format. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/tool_calls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  static const char *const names[] = {"hermes", "llama3_json", "mistral", "phi4_mini_json", "pythonic"};
  const tool_format *format = tool_format_by_name(names[data[0] % 5]);
  size_t piece = (size_t)(data[1] % 7) + 1;
  const char *text = (const char *)data + 2;
  size = size - 2;
  tool_calls_result whole;
  if (!tool_calls_parse(format, text, size, &whole)) return 0;
  tool_stream stream;
  tool_stream_init(&stream, format);
  vlm_string_builder content = {0};
  for (size_t at = 0; at < size; at += piece)
    tool_stream_push(&stream, text + at, size - at < piece ? size - at : piece, &content);
  tool_calls_result streamed;
  if (tool_stream_finish(&stream, &content, &streamed)) {
    if (streamed.count != whole.count) abort();
    for (size_t i = 0; i < whole.count; i++)
      if (strcmp(streamed.calls[i].name, whole.calls[i].name) || strcmp(streamed.calls[i].arguments, whole.calls[i].arguments))
        abort();
    tool_calls_result_release(&streamed);
  }
  vlm_sb_release(&content);
  tool_stream_release(&stream);
  tool_calls_result_release(&whole);
  return 0;
}
