/* The chat request's structured-output and tool fields: response_format
 * (text, json_object, json_schema), tools, tool_choice, and the
 * assistant tool_calls of the history. See openai_request.h.
 *
 *   response_format json_object   the output is one JSON object (grammar)
 *   response_format json_schema   the output validates against
 *                                 json_schema.schema (grammar; `strict` is
 *                                 accepted and the schema enforced either way)
 *   tools                         handed to the chat template as
 *                                 apply_chat_template(tools=...) does
 *   tool_choice none              tools rendered, output never parsed for calls
 *   tool_choice auto (default)    output parsed for calls in the model's format
 *   tool_choice required / named  calls forced by a grammar: the format's
 *                                 wrapper around the function's parameters
 *                                 schema; required: one or more calls of
 *                                 any of the tools (one with
 *                                 parallel_tool_calls false), named: one
 *   parallel_tool_calls           false: at most one call (auto keeps the
 *                                 first the model wrote)
 * Refused: json_schema with a forced tool call (two grammars), forced
 * calls on a model whose tool-call format is unknown (vlm serve
 * --tool-call-parser names it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/openai_request.h"
#include "server/openai_request_internal.h"
#include "server/tool_calls.h"
#include "text/grammar_schema.h"

#define MAX_TOOLS 128

static bool openai_check_allowed_keys(const vlm_json_value *object, const char *const *allowed, const char *param,
                                      openai_error *error) {
  for (size_t i = 0; i < object->as.object.count; i++) {
    const vlm_json_member *member = &object->as.object.members[i];
    bool known = false;
    for (size_t j = 0; allowed[j] && !known; j++) known = openai_key_is(member, allowed[j]);
    if (known) continue;
    char field[OPENAI_PARAM_CAPACITY];
    openai_build_param(field, "%s.%.60s", param, member->key);
    openai_error_set(error, 400, "invalid_request_error", field, NULL, "Unrecognized argument '%.60s' in '%s'",
                     member->key, param);
    return false;
  }
  return true;
}

static bool schema_error(openai_error *error, const char *param, vlm_status status) {
  openai_error_set(error, 400, "invalid_request_error", param, NULL, "Invalid JSON schema: %s",
                   vlm_status_message(status));
  vlm_status_free(status);
  return false;
}

static bool parse_response_format(const vlm_json_value *body, openai_request *request, openai_error *error) {
  const vlm_json_value *format = vlm_json_object_get(body, "response_format");
  if (openai_is_absent(format)) return true;
  if (format->type != VLM_JSON_OBJECT) return openai_fail_type(error, "response_format", "an object", format);
  const vlm_json_value *type = openai_or_null(vlm_json_object_get(format, "type"));
  if (type->type != VLM_JSON_STRING) return openai_fail_type(error, "response_format.type", "a string", type);
  static const char *const text_keys[] = {"type", NULL};
  static const char *const schema_keys[] = {"type", "json_schema", NULL};
  if (vlm_json_string_equals(type, "text") || vlm_json_string_equals(type, "json_object")) {
    if (!openai_check_allowed_keys(format, text_keys, "response_format", error)) return false;
    if (vlm_json_string_equals(type, "text")) return true;
    vlm_status status = vlm_json_object_grammar(&request->grammar);
    return status ? schema_error(error, "response_format", status) : true;
  }
  if (!vlm_json_string_equals(type, "json_schema"))
    return openai_fail_invalid_value(error, "response_format.type", "must be one of text, json_object, json_schema");
  if (!openai_check_allowed_keys(format, schema_keys, "response_format", error)) return false;
  const vlm_json_value *wrapper = openai_or_null(vlm_json_object_get(format, "json_schema"));
  if (wrapper->type != VLM_JSON_OBJECT)
    return openai_fail_type(error, "response_format.json_schema", "an object", wrapper);
  static const char *const wrapper_keys[] = {"name", "description", "schema", "strict", NULL};
  if (!openai_check_allowed_keys(wrapper, wrapper_keys, "response_format.json_schema", error)) return false;
  const vlm_json_value *name = openai_or_null(vlm_json_object_get(wrapper, "name"));
  if (name->type != VLM_JSON_STRING)
    return openai_fail_type(error, "response_format.json_schema.name", "a string", name);
  const vlm_json_value *strict = vlm_json_object_get(wrapper, "strict");
  if (!openai_is_absent(strict) && strict->type != VLM_JSON_BOOL)
    return openai_fail_type(error, "response_format.json_schema.strict", "a boolean", strict);
  const vlm_json_value *schema = vlm_json_object_get(wrapper, "schema");
  vlm_status status = openai_is_absent(schema) ? vlm_json_object_grammar(&request->grammar)
                                               : vlm_json_schema_to_grammar(schema, &request->grammar);
  return status ? schema_error(error, "response_format.json_schema.schema", status) : true;
}

typedef struct tool_choice {
  enum { CHOICE_AUTO, CHOICE_NONE, CHOICE_REQUIRED, CHOICE_NAMED } kind;
  const char *name;
} tool_choice;

static bool parse_tool_choice(const vlm_json_value *body, tool_choice *out, openai_error *error) {
  out->kind = CHOICE_AUTO;
  out->name = NULL;
  const vlm_json_value *choice = vlm_json_object_get(body, "tool_choice");
  if (openai_is_absent(choice)) return true;
  if (choice->type == VLM_JSON_STRING) {
    if (vlm_json_string_equals(choice, "auto")) return true;
    if (vlm_json_string_equals(choice, "none")) out->kind = CHOICE_NONE;
    else if (vlm_json_string_equals(choice, "required")) out->kind = CHOICE_REQUIRED;
    else return openai_fail_invalid_value(error, "tool_choice", "must be none, auto, required or a named function");
    return true;
  }
  if (choice->type != VLM_JSON_OBJECT) return openai_fail_type(error, "tool_choice", "a string or an object", choice);
  const vlm_json_value *function = vlm_json_object_get(choice, "function");
  const char *name = vlm_json_get_string(vlm_json_object_get(function, "name"));
  if (!vlm_json_string_equals(vlm_json_object_get(choice, "type"), "function") || !name)
    return openai_fail_invalid_value(error, "tool_choice",
                                     "must be {\"type\": \"function\", \"function\": {\"name\": ...}}");
  out->kind = CHOICE_NAMED;
  out->name = name;
  return true;
}

/* Checks tools[i] and returns its function object. */
static bool check_tool(const vlm_json_value *tool, size_t index, const vlm_json_value **out_function,
                       openai_error *error) {
  char param[OPENAI_PARAM_CAPACITY];
  openai_build_param(param, "tools[%zu]", index);
  if (tool->type != VLM_JSON_OBJECT) return openai_fail_type(error, param, "an object", tool);
  static const char *const keys[] = {"type", "function", NULL};
  if (!openai_check_allowed_keys(tool, keys, param, error)) return false;
  if (!vlm_json_string_equals(vlm_json_object_get(tool, "type"), "function")) {
    openai_build_param(param, "tools[%zu].type", index);
    return openai_fail_invalid_value(error, param, "must be \"function\"");
  }
  const vlm_json_value *function = openai_or_null(vlm_json_object_get(tool, "function"));
  openai_build_param(param, "tools[%zu].function", index);
  if (function->type != VLM_JSON_OBJECT) return openai_fail_type(error, param, "an object", function);
  static const char *const function_keys[] = {"name", "description", "parameters", "strict", NULL};
  if (!openai_check_allowed_keys(function, function_keys, param, error)) return false;
  const vlm_json_value *name = openai_or_null(vlm_json_object_get(function, "name"));
  openai_build_param(param, "tools[%zu].function.name", index);
  if (name->type != VLM_JSON_STRING || name->as.string.length == 0 || name->as.string.length > 64 ||
      strlen(name->as.string.chars) != name->as.string.length)
    return openai_fail_invalid_value(error, param, "must be a name of 1 to 64 characters");
  *out_function = function;
  return true;
}

/* The arguments rule of a function: its parameters schema, or {}. */
static bool arguments_rule(vlm_schema_compiler *compiler, const vlm_json_value *function, size_t index,
                           bool python, const char **out_rule, openai_error *error) {
  const vlm_json_value *parameters = vlm_json_object_get(function, "parameters");
  if (openai_is_absent(parameters)) {
    static const vlm_json_value empty_object = {.type = VLM_JSON_OBJECT};
    parameters = &empty_object; /* no parameters: any object */
  }
  /* pythonic: the parameters as keyword arguments of Python literals */
  vlm_status status = python ? vlm_schema_compiler_add_kwargs(compiler, parameters, out_rule)
                             : vlm_schema_compiler_add(compiler, parameters, out_rule);
  if (!status) return true;
  char param[OPENAI_PARAM_CAPACITY];
  openai_build_param(param, "tools[%zu].function.parameters", index);
  return schema_error(error, param, status);
}

static bool forced_call_grammar(const vlm_json_value *tools, const tool_choice *choice, const void *format_pointer,
                                bool several, openai_request *request, openai_error *error) {
  const tool_format *format = format_pointer;
  vlm_schema_compiler *compiler = NULL;
  if (vlm_schema_compiler_create(&compiler)) return openai_fail_out_of_memory(error);
  bool python = tool_format_python_arguments(format);
  if (python) vlm_schema_compiler_set_python(compiler);
  vlm_string_builder root = {0};
  bool ok = true, found = false;
  for (size_t i = 0; ok && i < tools->as.array.count; i++) {
    const vlm_json_value *function = vlm_json_object_get(&tools->as.array.items[i], "function");
    const char *name = vlm_json_get_string(vlm_json_object_get(function, "name"));
    if (choice->kind == CHOICE_NAMED && strcmp(name, choice->name) != 0) continue;
    const char *rule = NULL;
    ok = arguments_rule(compiler, function, i, python, &rule, error);
    char *call = ok ? tool_format_call_item_grammar(format, name, rule) : NULL;
    if (ok && !call) ok = openai_fail_out_of_memory(error);
    if (ok) vlm_sb_appendf(&root, "%s(%s)", found ? " | " : "", call);
    free(call);
    found = true;
  }
  if (ok && !found)
    ok = openai_fail_invalid_value(error, "tool_choice", "names the function '%.64s', which is not in tools",
                                   choice->name);
  char *items = ok ? vlm_sb_finish(&root) : (vlm_sb_release(&root), NULL);
  char *root_text = items ? tool_format_calls_grammar(format, items, several) : NULL;
  free(items);
  if (ok && !root_text) ok = openai_fail_out_of_memory(error);
  if (ok) {
    vlm_status status = vlm_schema_compiler_finish(compiler, root_text, &request->grammar);
    if (status) ok = schema_error(error, "tools", status);
  }
  free(root_text);
  vlm_schema_compiler_release(compiler);
  return ok;
}

static bool parse_tools(const vlm_json_value *body, const openai_parse_options *options, openai_request *request,
                        openai_error *error) {
  const vlm_json_value *tools = vlm_json_object_get(body, "tools");
  tool_choice choice;
  if (!parse_tool_choice(body, &choice, error)) return false;
  const vlm_json_value *parallel = vlm_json_object_get(body, "parallel_tool_calls");
  if (!openai_is_absent(parallel) && parallel->type != VLM_JSON_BOOL)
    return openai_fail_type(error, "parallel_tool_calls", "a boolean", parallel);
  request->single_tool_call = !openai_is_absent(parallel) && !parallel->as.boolean;
  bool has_tools = !openai_is_absent(tools);
  if (has_tools && tools->type != VLM_JSON_ARRAY) return openai_fail_type(error, "tools", "an array", tools);
  if (has_tools && tools->as.array.count == 0) has_tools = false;
  if (!has_tools) {
    if (choice.kind == CHOICE_REQUIRED || choice.kind == CHOICE_NAMED)
      return openai_fail_invalid_value(error, "tool_choice", "needs tools");
    return true;
  }
  if (tools->as.array.count > MAX_TOOLS)
    return openai_fail_invalid_value(error, "tools", "at most %d tools are accepted", MAX_TOOLS);
  for (size_t i = 0; i < tools->as.array.count; i++) {
    const vlm_json_value *function = NULL;
    if (!check_tool(&tools->as.array.items[i], i, &function, error)) return false;
  }
  const tool_format *format = options ? options->tool_format : NULL;
  if (choice.kind == CHOICE_REQUIRED || choice.kind == CHOICE_NAMED) {
    if (!format)
      return openai_fail_unsupported(error, "tool_choice",
                                     "needs the model's tool-call format, which is unknown for this model "
                                     "(start vlm serve with --tool-call-parser " TOOL_FORMAT_NAMES ")");
    if (request->grammar)
      return openai_fail_unsupported(error, "response_format", "cannot be combined with a forced tool call");
    bool several = choice.kind == CHOICE_REQUIRED && !request->single_tool_call;
    if (!forced_call_grammar(tools, &choice, format, several, request, error)) return false;
  }
  if (choice.kind != CHOICE_NONE) request->tool_format = format;
  /* The template's input: {"messages": [...], "tools": [...]} */
  vlm_string_builder wrapped = {0};
  vlm_sb_append_literal(&wrapped, "{\"messages\":");
  vlm_sb_append(&wrapped, request->messages_json, strlen(request->messages_json));
  vlm_sb_append_literal(&wrapped, ",\"tools\":");
  vlm_sb_append_json_value(&wrapped, tools);
  vlm_sb_append_literal(&wrapped, "}");
  char *text = vlm_sb_finish(&wrapped);
  if (!text) return openai_fail_out_of_memory(error);
  free(request->messages_json);
  request->messages_json = text;
  return true;
}

bool openai_parse_structured(const vlm_json_value *body, const openai_parse_options *options,
                             openai_request *request, openai_error *error) {
  return parse_response_format(body, request, error) && parse_tools(body, options, request, error);
}

/* ---- history ---------------------------------------------------------------- */

bool openai_append_tool_calls(vlm_string_builder *json, const vlm_json_value *message, const char *param,
                              openai_error *error) {
  const vlm_json_value *calls = vlm_json_object_get(message, "tool_calls");
  if (openai_is_absent(calls)) return true;
  char field[OPENAI_PARAM_CAPACITY];
  openai_build_param(field, "%s.tool_calls", param);
  if (calls->type != VLM_JSON_ARRAY) return openai_fail_type(error, field, "an array", calls);
  if (calls->as.array.count == 0) return true;
  /* As vLLM hands them to templates: each call's arguments string parsed
   * into an object (templates print `arguments | tojson`). */
  vlm_sb_append_literal(json, ",\"tool_calls\":[");
  for (size_t i = 0; i < calls->as.array.count; i++) {
    const vlm_json_value *call = &calls->as.array.items[i];
    openai_build_param(field, "%s.tool_calls[%zu]", param, i);
    if (call->type != VLM_JSON_OBJECT) return openai_fail_type(error, field, "an object", call);
    static const char *const keys[] = {"id", "type", "function", NULL};
    if (!openai_check_allowed_keys(call, keys, field, error)) return false;
    const vlm_json_value *function = vlm_json_object_get(call, "function");
    const char *name = vlm_json_get_string(vlm_json_object_get(function, "name"));
    const vlm_json_value *arguments = vlm_json_object_get(function, "arguments");
    if (!name || !arguments || arguments->type != VLM_JSON_STRING)
      return openai_fail_invalid_value(error, field, "needs function.name and function.arguments (a JSON string)");
    vlm_json_document parsed = {0};
    vlm_json_limits limits = {.max_depth = 32, .max_input_bytes = 1u << 20};
    vlm_status status = vlm_json_parse(arguments->as.string.chars, arguments->as.string.length, &limits, NULL,
                                       "arguments", &parsed);
    if (status) {
      vlm_status_free(status);
      openai_build_param(field, "%s.tool_calls[%zu].function.arguments", param, i);
      return openai_fail_invalid_value(error, field, "is not valid JSON");
    }
    vlm_sb_appendf(json, "%s{\"type\":\"function\"", i ? "," : "");
    const char *id = vlm_json_get_string(vlm_json_object_get(call, "id"));
    if (id) {
      vlm_sb_append_literal(json, ",\"id\":");
      vlm_sb_append_json_string(json, id, strlen(id));
    }
    vlm_sb_append_literal(json, ",\"function\":{\"name\":");
    vlm_sb_append_json_string(json, name, strlen(name));
    vlm_sb_append_literal(json, ",\"arguments\":");
    vlm_sb_append_json_value(json, parsed.root);
    vlm_sb_append_literal(json, "}}");
    vlm_json_document_release(&parsed);
  }
  vlm_sb_append_literal(json, "]");
  return true;
}
