/* Tool-call formats (see tool_calls.h). */
#include "server/tool_calls.h"

#include <stdlib.h>
#include <string.h>

#include "text/grammar_schema.h"

typedef enum format_kind { FORMAT_HERMES, FORMAT_LLAMA3_JSON, FORMAT_MISTRAL, FORMAT_PHI4_MINI } format_kind;

struct tool_format {
  const char *name;
  format_kind kind;
  const char *start;      /* the marker that opens the call(s) */
  const char *end;        /* hermes: closes each call; NULL: the end of the output */
  const char *arguments;  /* the key the format writes arguments under */
  const char *detect;     /* a template that renders this marker uses the format */
};

static const tool_format FORMATS[] = {
    {"hermes", FORMAT_HERMES, "<tool_call>", "</tool_call>", "arguments", "<tool_call>"},
    {"llama3_json", FORMAT_LLAMA3_JSON, "<|python_tag|>", NULL, "parameters", "<|python_tag|>"},
    {"mistral", FORMAT_MISTRAL, "[TOOL_CALLS]", NULL, "arguments", "[TOOL_CALLS]"},
    {"phi4_mini_json", FORMAT_PHI4_MINI, "functools", NULL, "arguments", "<|tool|>"},
};

const tool_format *tool_format_by_name(const char *name) {
  for (size_t i = 0; name && i < sizeof(FORMATS) / sizeof(FORMATS[0]); i++)
    if (strcmp(FORMATS[i].name, name) == 0) return &FORMATS[i];
  return NULL;
}

const tool_format *tool_format_detect(const char *template_text) {
  for (size_t i = 0; template_text && i < sizeof(FORMATS) / sizeof(FORMATS[0]); i++)
    if (strstr(template_text, FORMATS[i].detect)) return &FORMATS[i];
  return NULL;
}

const char *tool_format_name(const tool_format *format) { return format ? format->name : "none"; }

char *tool_format_call_grammar(const tool_format *format, const char *name, const char *arguments_rule) {
  vlm_string_builder prefix = {0};
  if (format->kind == FORMAT_HERMES) vlm_sb_append_literal(&prefix, "<tool_call>\n");
  else if (format->kind == FORMAT_MISTRAL) vlm_sb_append_literal(&prefix, "[TOOL_CALLS][");
  else if (format->kind == FORMAT_PHI4_MINI) vlm_sb_append_literal(&prefix, "functools[");
  vlm_sb_append_literal(&prefix, "{\"name\": ");
  vlm_sb_append_json_string(&prefix, name, strlen(name));
  vlm_sb_appendf(&prefix, ", \"%s\": ", format->arguments);
  char *prefix_text = vlm_sb_finish(&prefix);
  const char *suffix = format->kind == FORMAT_HERMES ? "}\n</tool_call>"
                       : format->kind == FORMAT_LLAMA3_JSON ? "}" : "}]";
  char *prefix_literal = prefix_text ? vlm_gbnf_literal(prefix_text, strlen(prefix_text)) : NULL;
  char *suffix_literal = vlm_gbnf_literal(suffix, strlen(suffix));
  vlm_string_builder out = {0};
  if (prefix_literal && suffix_literal) vlm_sb_appendf(&out, "%s %s %s", prefix_literal, arguments_rule, suffix_literal);
  free(prefix_text);
  free(prefix_literal);
  free(suffix_literal);
  return prefix_literal && suffix_literal ? vlm_sb_finish(&out) : (vlm_sb_release(&out), NULL);
}

/* ---- parsing --------------------------------------------------------------- */

static bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

static void trim(const char **text, size_t *length) {
  while (*length && is_space(**text)) (*text)++, (*length)--;
  while (*length && is_space((*text)[*length - 1])) (*length)--;
}

static bool add_call(tool_calls_result *out, const vlm_json_value *object, const tool_format *format) {
  if (object->type != VLM_JSON_OBJECT) return true;
  const char *name = vlm_json_get_string(vlm_json_object_get(object, "name"));
  if (!name) return true;
  const vlm_json_value *arguments = vlm_json_object_get(object, format->arguments);
  if (!arguments) arguments = vlm_json_object_get(object, format->kind == FORMAT_LLAMA3_JSON ? "arguments" : "parameters");
  vlm_string_builder json = {0};
  if (!arguments) vlm_sb_append_literal(&json, "{}");
  else if (arguments->type == VLM_JSON_STRING) vlm_sb_append(&json, arguments->as.string.chars, arguments->as.string.length);
  else vlm_sb_append_json_value(&json, arguments);
  char *text = vlm_sb_finish(&json);
  tool_call *calls = text ? realloc(out->calls, (out->count + 1) * sizeof(*calls)) : NULL;
  char *name_copy = strdup(name);
  if (!calls || !name_copy) {
    free(text);
    free(name_copy);
    if (calls) out->calls = calls;
    return false;
  }
  out->calls = calls;
  out->calls[out->count++] = (tool_call){name_copy, text};
  return true;
}

/* Parses body as one JSON value: objects are calls, arrays lists of them.
 * *out_valid: it parsed and held at least one call. */
static bool parse_calls(const tool_format *format, const char *body, size_t length, tool_calls_result *out,
                        bool *out_valid) {
  *out_valid = false;
  trim(&body, &length);
  if (!length) return true;
  vlm_json_document document = {0};
  vlm_json_limits limits = {.max_depth = 64, .max_input_bytes = 1u << 24};
  vlm_status status = vlm_json_parse(body, length, &limits, NULL, "tool call", &document);
  if (status) {
    vlm_status_free(status);
    /* llama3_json: several calls separated by ';' */
    if (format->kind != FORMAT_LLAMA3_JSON || !memchr(body, ';', length)) return true;
    size_t before = out->count;
    const char *start = body, *end = body + length;
    while (start < end) {
      const char *semicolon = memchr(start, ';', (size_t)(end - start));
      const char *stop = semicolon ? semicolon : end;
      bool valid = false;
      tool_calls_result part = {0};
      if (!parse_calls(format, start, (size_t)(stop - start), &part, &valid)) {
        tool_calls_result_release(&part);
        return false;
      }
      for (size_t i = 0; i < part.count; i++) {
        tool_call *calls = realloc(out->calls, (out->count + 1) * sizeof(*calls));
        if (!calls) {
          tool_calls_result_release(&part);
          return false;
        }
        out->calls = calls;
        out->calls[out->count++] = part.calls[i];
      }
      part.count = 0;
      tool_calls_result_release(&part);
      if (!valid) { /* all or nothing */
        for (size_t i = before; i < out->count; i++) free(out->calls[i].name), free(out->calls[i].arguments);
        out->count = before;
        return true;
      }
      start = stop + (semicolon ? 1 : 0);
    }
    *out_valid = out->count > before;
    return true;
  }
  size_t before = out->count;
  bool ok = true;
  const vlm_json_value *root = document.root;
  if (root->type == VLM_JSON_ARRAY) {
    for (size_t i = 0; ok && i < root->as.array.count; i++) ok = add_call(out, &root->as.array.items[i], format);
  } else {
    ok = add_call(out, root, format);
  }
  vlm_json_document_release(&document);
  *out_valid = out->count > before;
  return ok;
}

static bool append_content(vlm_string_builder *content, const char *text, size_t length) {
  vlm_sb_append(content, text, length);
  return !content->failed;
}

static const char *find(const char *text, size_t length, const char *needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; n <= length && i <= length - n; i++)
    if (memcmp(text + i, needle, n) == 0) return text + i;
  return NULL;
}

bool tool_calls_parse(const tool_format *format, const char *text, size_t length, tool_calls_result *out) {
  memset(out, 0, sizeof(*out));
  vlm_string_builder content = {0};
  vlm_sb_append(&content, "", 0);
  bool ok = true;
  if (format->kind == FORMAT_HERMES) {
    const char *at = text, *end = text + length;
    while (ok && at < end) {
      const char *start = find(at, (size_t)(end - at), format->start);
      if (!start) {
        ok = append_content(&content, at, (size_t)(end - at));
        break;
      }
      ok = append_content(&content, at, (size_t)(start - at));
      const char *body = start + strlen(format->start);
      const char *close = find(body, (size_t)(end - body), format->end);
      const char *body_end = close ? close : end;
      bool valid = false;
      ok = ok && parse_calls(format, body, (size_t)(body_end - body), out, &valid);
      if (ok && !valid) ok = append_content(&content, start, (size_t)((close ? close + strlen(format->end) : end) - start));
      at = close ? close + strlen(format->end) : end;
    }
  } else {
    const char *start = find(text, length, format->start);
    const char *body = start ? start + strlen(format->start) : NULL;
    if (!start && format->kind == FORMAT_LLAMA3_JSON) { /* bare JSON as the whole output */
      const char *first = text;
      size_t rest = length;
      trim(&first, &rest);
      if (rest && first[0] == '{') start = body = first;
    }
    bool valid = false;
    if (start) ok = parse_calls(format, body, (size_t)(text + length - body), out, &valid);
    if (ok) ok = append_content(&content, text, valid ? (size_t)(start - text) : length);
  }
  const char *kept = content.data ? content.data : "";
  size_t kept_length = content.length;
  if (out->count) trim(&kept, &kept_length); /* the whitespace around calls */
  out->content = ok ? malloc(kept_length + 1) : NULL; /* model text may hold NUL bytes: not strndup */
  if (out->content) {
    if (kept_length) memcpy(out->content, kept, kept_length);
    out->content[kept_length] = '\0';
  }
  out->content_length = kept_length;
  vlm_sb_release(&content);
  if (!ok || !out->content) {
    tool_calls_result_release(out);
    return false;
  }
  return true;
}

void tool_calls_result_release(tool_calls_result *result) {
  for (size_t i = 0; i < result->count; i++) {
    free(result->calls[i].name);
    free(result->calls[i].arguments);
  }
  free(result->calls);
  free(result->content);
  memset(result, 0, sizeof(*result));
}

void tool_calls_append_message_json(vlm_string_builder *out, const tool_calls_result *result, const char *id_base) {
  vlm_sb_append_literal(out, ",\"tool_calls\":[");
  for (size_t i = 0; i < result->count; i++) {
    vlm_sb_appendf(out, "%s{\"id\":\"call_%s_%zu\",\"type\":\"function\",\"function\":{\"name\":", i ? "," : "",
                   id_base, i);
    vlm_sb_append_json_string(out, result->calls[i].name, strlen(result->calls[i].name));
    vlm_sb_append_literal(out, ",\"arguments\":");
    vlm_sb_append_json_string(out, result->calls[i].arguments, strlen(result->calls[i].arguments));
    vlm_sb_append_literal(out, "}}");
  }
  vlm_sb_append_literal(out, "]");
}

/* ---- streaming ------------------------------------------------------------- */

void tool_stream_init(tool_stream *stream, const tool_format *format) {
  memset(stream, 0, sizeof(*stream));
  stream->format = format;
}

void tool_stream_release(tool_stream *stream) { vlm_sb_release(&stream->text); }

/* The longest suffix of text that is a proper prefix of the marker. */
static size_t partial_marker(const char *text, size_t length, const char *marker) {
  size_t n = strlen(marker);
  for (size_t k = n - 1; k > 0; k--)
    if (k <= length && memcmp(text + length - k, marker, k) == 0) return k;
  return 0;
}

void tool_stream_push(tool_stream *stream, const char *text, size_t length, vlm_string_builder *content) {
  vlm_sb_append(&stream->text, text, length);
  if (stream->in_calls || stream->text.failed) return;
  const char *all = stream->text.data;
  size_t total = stream->text.length;
  const char *marker = find(all + stream->released, total - stream->released, stream->format->start);
  if (!marker && stream->format->kind == FORMAT_LLAMA3_JSON && !stream->seen_text) {
    /* bare JSON: it must be the first non-space text */
    size_t i = stream->released;
    while (i < total && is_space(all[i])) i++;
    if (i < total && all[i] == '{') marker = all + i;
  }
  if (marker) {
    vlm_sb_append(content, all + stream->released, (size_t)(marker - all) - stream->released);
    stream->released = (size_t)(marker - all);
    stream->in_calls = true;
    return;
  }
  size_t hold = partial_marker(all, total, stream->format->start);
  size_t upto = total - hold;
  if (stream->format->kind == FORMAT_LLAMA3_JSON && !stream->seen_text) {
    size_t i = stream->released;
    while (i < upto && is_space(all[i])) i++;
    if (i == upto) return; /* only whitespace so far: a bare call may still come */
    stream->seen_text = true;
  }
  if (upto > stream->released) vlm_sb_append(content, all + stream->released, upto - stream->released);
  stream->released = upto;
}

bool tool_stream_finish(tool_stream *stream, vlm_string_builder *content, tool_calls_result *calls) {
  memset(calls, 0, sizeof(*calls));
  if (stream->text.failed) return false;
  const char *rest = stream->text.data ? stream->text.data + stream->released : "";
  size_t rest_length = stream->text.length - stream->released;
  if (!stream->in_calls) {
    vlm_sb_append(content, rest, rest_length);
    return !content->failed;
  }
  if (!tool_calls_parse(stream->format, rest, rest_length, calls)) return false;
  vlm_sb_append(content, calls->content, calls->content_length);
  return !content->failed;
}
