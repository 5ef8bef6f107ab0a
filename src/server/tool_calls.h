/* Tool calls in model output: the formats the families' chat templates
 * teach, parsed into OpenAI's message.tool_calls (and streamed), and the
 * grammar of one forced call (tool_choice "required" or a named function)
 * for constrained decoding.
 *
 *   hermes          <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>
 *                   (Qwen2.5, Qwen3, Qwen3-VL; vLLM's "hermes")
 *   llama3_json     {"name": ..., "parameters": {...}} as the whole output,
 *                   or after <|python_tag|>; several separated by ';'
 *   mistral         [TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]
 *   phi4_mini_json  functools[{"name": ..., "arguments": {...}}, ...]
 *   pythonic        [get_weather(city="Paris", days=3), f()] as the whole
 *                   output: Python keyword literals (strings, numbers,
 *                   True/False/None, lists, tuples, dicts) become the JSON
 *                   arguments (vLLM's "pythonic"; how vLLM serves Gemma 3)
 * llama3_json also reads Llama 3.1's built-in form after <|python_tag|>,
 * brave_search.call(query="x") -> brave_search {"query": "x"}.
 *
 * A call whose JSON does not parse, or lacks a string "name", stays
 * content (as vLLM's parsers leave it). */
#ifndef VLM_SERVER_TOOL_CALLS_H
#define VLM_SERVER_TOOL_CALLS_H

#include <stdbool.h>
#include <stddef.h>

#include "io/json.h"

typedef struct tool_format tool_format;

const tool_format *tool_format_by_name(const char *name);
/* From the chat template's text (the markers it renders); NULL: none. */
const tool_format *tool_format_detect(const char *template_text);
const char *tool_format_name(const tool_format *format);
#define TOOL_FORMAT_NAMES "hermes, llama3_json, mistral, phi4_mini_json, pythonic"
/* Whether a call's arguments are Python keyword arguments (pythonic): the
 * forced call's grammar then wants vlm_schema_compiler_add_kwargs. */
bool tool_format_python_arguments(const tool_format *format);

/* The GBNF expression of one call to `name` whose arguments match the
 * rule `arguments_rule` (malloc'd; NULL if out of memory). */
char *tool_format_call_grammar(const tool_format *format, const char *name, const char *arguments_rule);
/* The pieces of it: one call as an item of the format's list of calls,
 * and the list around `items` (alternatives of items): exactly one call,
 * or (`several`) one or more separated as the format writes them. */
char *tool_format_call_item_grammar(const tool_format *format, const char *name, const char *arguments_rule);
char *tool_format_calls_grammar(const tool_format *format, const char *items, bool several);

typedef struct tool_call {
  char *name;
  char *arguments; /* a JSON object as a string */
} tool_call;

typedef struct tool_calls_result {
  char *content;   /* the text outside the calls (may be empty) */
  size_t content_length;
  tool_call *calls;
  size_t count;
} tool_calls_result;

/* False only when out of memory. */
bool tool_calls_parse(const tool_format *format, const char *text, size_t length, tool_calls_result *out);
void tool_calls_result_release(tool_calls_result *result);
/* Keeps the first `count` calls (parallel_tool_calls false: one). */
void tool_calls_keep_first(tool_calls_result *result, size_t count);
/* ,"tool_calls":[{"id","type":"function","function":{"name","arguments"}}]
 * for a message (ids "call_<id_base>_<i>"). */
void tool_calls_append_message_json(vlm_string_builder *out, const tool_calls_result *result, const char *id_base);

/* Streaming: text before a call's start streams as content as soon as it
 * cannot be the start of a marker; from the first marker on, the text is
 * held and parsed at the end. */
typedef struct tool_stream {
  const tool_format *format;
  vlm_string_builder text;
  size_t released;   /* bytes of text handed out as content */
  bool in_calls;     /* a marker was seen: hold the rest */
  bool seen_text;    /* non-whitespace was released (llama3_json's bare JSON must come first) */
} tool_stream;

void tool_stream_init(tool_stream *stream, const tool_format *format);
/* Appends to *content what is content for sure. */
void tool_stream_push(tool_stream *stream, const char *text, size_t length, vlm_string_builder *content);
/* The rest: content that was held but is not a call, and the calls. */
bool tool_stream_finish(tool_stream *stream, vlm_string_builder *content, tool_calls_result *calls);
void tool_stream_release(tool_stream *stream);

#endif
