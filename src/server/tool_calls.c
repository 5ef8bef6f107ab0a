/* Tool-call formats (see tool_calls.h). */
#include "server/tool_calls.h"

#include <stdlib.h>
#include <string.h>

#include "text/grammar_schema.h"

typedef enum format_kind { FORMAT_HERMES, FORMAT_LLAMA3_JSON, FORMAT_MISTRAL, FORMAT_PHI4_MINI, FORMAT_PYTHONIC } format_kind;

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
    /* [f(a=1), g(b="x")] as the whole output; no template marker to detect
     * (Gemma 3's templates define no tool format: --tool-call-parser) */
    {"pythonic", FORMAT_PYTHONIC, "[", NULL, NULL, NULL},
};

const tool_format *tool_format_by_name(const char *name) {
  for (size_t i = 0; name && i < sizeof(FORMATS) / sizeof(FORMATS[0]); i++)
    if (strcmp(FORMATS[i].name, name) == 0) return &FORMATS[i];
  return NULL;
}

const tool_format *tool_format_detect(const char *template_text) {
  for (size_t i = 0; template_text && i < sizeof(FORMATS) / sizeof(FORMATS[0]); i++)
    if (FORMATS[i].detect && strstr(template_text, FORMATS[i].detect)) return &FORMATS[i];
  return NULL;
}

const char *tool_format_name(const tool_format *format) { return format ? format->name : "none"; }

bool tool_format_python_arguments(const tool_format *format) { return format->kind == FORMAT_PYTHONIC; }

/* A format's calls as the grammar writes them: open, items separated by
 * sep, close. */
typedef struct call_layout {
  const char *open, *item_start, *sep, *close;
} call_layout;

static call_layout layout_of(const tool_format *format) {
  switch (format->kind) {
    case FORMAT_HERMES: return (call_layout){"", "<tool_call>\n{\"name\": ", "\n", ""};
    case FORMAT_LLAMA3_JSON: return (call_layout){"", "{\"name\": ", "; ", ""};
    case FORMAT_MISTRAL: return (call_layout){"[TOOL_CALLS][", "{\"name\": ", ", ", "]"};
    case FORMAT_PHI4_MINI: return (call_layout){"functools[", "{\"name\": ", ", ", "]"};
    case FORMAT_PYTHONIC: break;
  }
  return (call_layout){"[", "", ", ", "]"};
}

static char *literal_of(const char *text) { return vlm_gbnf_literal(text, strlen(text)); }

char *tool_format_call_item_grammar(const tool_format *format, const char *name, const char *arguments_rule) {
  vlm_string_builder prefix = {0};
  call_layout layout = layout_of(format);
  vlm_sb_append(&prefix, layout.item_start, strlen(layout.item_start));
  if (format->kind == FORMAT_PYTHONIC) {
    vlm_sb_appendf(&prefix, "%s(", name);
  } else {
    vlm_sb_append_json_string(&prefix, name, strlen(name));
    vlm_sb_appendf(&prefix, ", \"%s\": ", format->arguments);
  }
  char *prefix_text = vlm_sb_finish(&prefix);
  const char *suffix = format->kind == FORMAT_HERMES ? "}\n</tool_call>" : format->kind == FORMAT_PYTHONIC ? ")" : "}";
  char *prefix_literal = prefix_text ? literal_of(prefix_text) : NULL;
  char *suffix_literal = literal_of(suffix);
  vlm_string_builder out = {0};
  bool ok = prefix_literal && suffix_literal;
  if (ok) vlm_sb_appendf(&out, "%s %s %s", prefix_literal, arguments_rule, suffix_literal);
  free(prefix_text);
  free(prefix_literal);
  free(suffix_literal);
  return ok ? vlm_sb_finish(&out) : (vlm_sb_release(&out), NULL);
}

char *tool_format_calls_grammar(const tool_format *format, const char *items, bool several) {
  call_layout layout = layout_of(format);
  char *open = literal_of(layout.open), *sep = literal_of(layout.sep), *close = literal_of(layout.close);
  vlm_string_builder out = {0};
  bool ok = open && sep && close;
  if (ok && several) vlm_sb_appendf(&out, "%s (%s) (%s (%s))* %s", open, items, sep, items, close);
  else if (ok) vlm_sb_appendf(&out, "%s (%s) %s", open, items, close);
  free(open);
  free(sep);
  free(close);
  return ok ? vlm_sb_finish(&out) : (vlm_sb_release(&out), NULL);
}

char *tool_format_call_grammar(const tool_format *format, const char *name, const char *arguments_rule) {
  char *item = tool_format_call_item_grammar(format, name, arguments_rule);
  char *whole = item ? tool_format_calls_grammar(format, item, false) : NULL;
  free(item);
  return whole;
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

/* ---- pythonic: [f(a=1, b="x"), g()] -------------------------------------- */

typedef struct py_parser {
  const char *at, *end;
  int depth;
} py_parser;

static void py_space(py_parser *p) {
  while (p->at < p->end && is_space(*p->at)) p->at++;
}

static bool py_take(py_parser *p, char ch) {
  py_space(p);
  if (p->at < p->end && *p->at == ch) return p->at++, true;
  return false;
}

static bool py_is_name_char(char ch, bool first) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || (!first && ch >= '0' && ch <= '9');
}

/* An identifier (dotted: module.function); *out_length 0 when none. */
static const char *py_name(py_parser *p, size_t *out_length, bool dotted) {
  py_space(p);
  const char *start = p->at;
  while (p->at < p->end && (py_is_name_char(*p->at, p->at == start || p->at[-1] == '.') ||
                            (dotted && *p->at == '.' && p->at > start && p->at + 1 < p->end)))
    p->at++;
  *out_length = (size_t)(p->at - start);
  if (*out_length && start[*out_length - 1] == '.') p->at--, (*out_length)--;
  return start;
}

static int hex_value(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

static void append_utf8(vlm_string_builder *out, unsigned code) {
  char bytes[4];
  size_t n = 0;
  if (code < 0x80) bytes[n++] = (char)code;
  else if (code < 0x800) bytes[n++] = (char)(0xC0 | (code >> 6)), bytes[n++] = (char)(0x80 | (code & 0x3F));
  else if (code < 0x10000)
    bytes[n++] = (char)(0xE0 | (code >> 12)), bytes[n++] = (char)(0x80 | ((code >> 6) & 0x3F)),
    bytes[n++] = (char)(0x80 | (code & 0x3F));
  else
    bytes[n++] = (char)(0xF0 | (code >> 18)), bytes[n++] = (char)(0x80 | ((code >> 12) & 0x3F)),
    bytes[n++] = (char)(0x80 | ((code >> 6) & 0x3F)), bytes[n++] = (char)(0x80 | (code & 0x3F));
  vlm_sb_append(out, bytes, n);
}

/* A Python string literal ('...' or "...", the common escapes) as a JSON string. */
static bool py_string(py_parser *p, vlm_string_builder *json) {
  char quote = *p->at++;
  vlm_string_builder text = {0};
  vlm_sb_append(&text, "", 0);
  bool ok = false;
  while (p->at < p->end) {
    char ch = *p->at++;
    if (ch == quote) {
      ok = true;
      break;
    }
    if (ch == '\n') break; /* not in a one-line literal */
    if (ch != '\\') {
      vlm_sb_append(&text, &ch, 1);
      continue;
    }
    if (p->at >= p->end) break;
    char e = *p->at++;
    const char *simple = strchr("nrtbf0\\'\"", e);
    if (simple && e) {
      static const char decoded[] = "\n\r\t\b\f\0\\'\"";
      vlm_sb_append(&text, &decoded[simple - "nrtbf0\\'\""], 1);
      continue;
    }
    int digits = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
    if (!digits || p->end - p->at < digits) break;
    unsigned code = 0;
    for (int i = 0; i < digits; i++) {
      int v = hex_value(*p->at++);
      if (v < 0) digits = -1;
      code = code * 16 + (unsigned)(v < 0 ? 0 : v);
      if (digits < 0) break;
    }
    if (digits < 0 || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) break;
    append_utf8(&text, code);
  }
  if (ok && !text.failed) vlm_sb_append_json_string(json, text.data, text.length);
  vlm_sb_release(&text);
  return ok;
}

/* -?digits(.digits)?([eE][+-]?digits)? : the numbers JSON shares with Python. */
static bool py_number(py_parser *p, vlm_string_builder *json) {
  const char *start = p->at;
  if (p->at < p->end && (*p->at == '-' || *p->at == '+')) p->at++;
  const char *digits = p->at;
  while (p->at < p->end && *p->at >= '0' && *p->at <= '9') p->at++;
  if (p->at == digits || (p->at - digits > 1 && *digits == '0')) return false;
  if (p->at < p->end && *p->at == '.') {
    const char *fraction = ++p->at;
    while (p->at < p->end && *p->at >= '0' && *p->at <= '9') p->at++;
    if (p->at == fraction) return false;
  }
  if (p->at < p->end && (*p->at == 'e' || *p->at == 'E')) {
    p->at++;
    if (p->at < p->end && (*p->at == '-' || *p->at == '+')) p->at++;
    const char *exponent = p->at;
    while (p->at < p->end && *p->at >= '0' && *p->at <= '9') p->at++;
    if (p->at == exponent) return false;
  }
  if (*start == '+') start++;
  vlm_sb_append(json, start, (size_t)(p->at - start));
  return true;
}

static bool py_value(py_parser *p, vlm_string_builder *json);

/* [a, b] or (a, b) as a JSON array; {k: v} as an object (string keys). */
static bool py_container(py_parser *p, vlm_string_builder *json) {
  char open = *p->at++;
  char close = open == '[' ? ']' : open == '(' ? ')' : '}';
  vlm_sb_append(json, open == '{' ? "{" : "[", 1);
  if (++p->depth > 32) return false;
  for (size_t i = 0;; i++) {
    if (py_take(p, close)) break;
    if (i && !py_take(p, ',')) return false;
    if (i && py_take(p, close)) break; /* a trailing comma */
    if (i) vlm_sb_append_literal(json, ",");
    if (open == '{') {
      py_space(p);
      if (p->at >= p->end || (*p->at != '"' && *p->at != '\'') || !py_string(p, json) || !py_take(p, ':'))
        return false;
      vlm_sb_append_literal(json, ":");
    }
    if (!py_value(p, json)) return false;
  }
  p->depth--;
  vlm_sb_append(json, open == '{' ? "}" : "]", 1);
  return true;
}

static bool py_value(py_parser *p, vlm_string_builder *json) {
  py_space(p);
  if (p->at >= p->end) return false;
  char ch = *p->at;
  if (ch == '"' || ch == '\'') return py_string(p, json);
  if (ch == '[' || ch == '(' || ch == '{') return py_container(p, json);
  if (ch == '-' || ch == '+' || (ch >= '0' && ch <= '9')) return py_number(p, json);
  size_t length = 0;
  const char *name = py_name(p, &length, false);
  static const struct { const char *python, *json; } words[] = {{"True", "true"}, {"False", "false"}, {"None", "null"}};
  for (size_t i = 0; i < 3; i++)
    if (length == strlen(words[i].python) && !memcmp(name, words[i].python, length))
      return vlm_sb_append(json, words[i].json, strlen(words[i].json)), true;
  return false;
}

/* name(k=v, ...): the call's name and its arguments as a JSON object.
 * `strip_call`: Llama 3's built-in form brave_search.call(query="x"). */
static bool py_call(py_parser *p, tool_calls_result *out, bool strip_call, bool *out_oom) {
  size_t name_length = 0;
  const char *name = py_name(p, &name_length, true);
  if (!name_length || !py_take(p, '(')) return false;
  if (strip_call && name_length > 5 && !memcmp(name + name_length - 5, ".call", 5)) name_length -= 5;
  vlm_string_builder json = {0};
  vlm_sb_append_literal(&json, "{");
  bool ok = true;
  for (size_t i = 0; ok; i++) {
    if (py_take(p, ')')) break;
    if (i && !py_take(p, ',')) ok = false;
    else if (i && py_take(p, ')')) break;
    size_t key_length = 0;
    const char *key = ok ? py_name(p, &key_length, false) : NULL;
    ok = ok && key_length && py_take(p, '=');
    if (!ok) break;
    if (i) vlm_sb_append_literal(&json, ",");
    vlm_sb_append_json_string(&json, key, key_length);
    vlm_sb_append_literal(&json, ":");
    ok = py_value(p, &json);
  }
  vlm_sb_append_literal(&json, "}");
  char *arguments = ok ? vlm_sb_finish(&json) : (vlm_sb_release(&json), NULL);
  char *name_copy = ok ? malloc(name_length + 1) : NULL;
  tool_call *calls = ok ? realloc(out->calls, (out->count + 1) * sizeof(*calls)) : NULL;
  if (calls) out->calls = calls;
  if (!ok) return false;
  if (!arguments || !name_copy || !calls) {
    free(arguments);
    free(name_copy);
    *out_oom = true;
    return false;
  }
  memcpy(name_copy, name, name_length);
  name_copy[name_length] = '\0';
  out->calls[out->count++] = (tool_call){name_copy, arguments};
  return true;
}

/* The whole body as [call, ...] (or, `bare`, one call); all or nothing.
 * False only when out of memory. */
static bool parse_pythonic(const char *body, size_t length, bool bare, tool_calls_result *out, bool *out_valid) {
  py_parser p = {body, body + length, 0};
  size_t before = out->count;
  bool oom = false, ok = true;
  if (bare) {
    ok = py_call(&p, out, true, &oom);
  } else {
    ok = py_take(&p, '[');
    for (size_t i = 0; ok; i++) {
      if (i && py_take(&p, ']')) break;
      if (i && !py_take(&p, ',')) ok = false;
      else ok = py_call(&p, out, false, &oom);
    }
  }
  py_space(&p);
  *out_valid = ok && !oom && p.at == p.end && out->count > before;
  if (!*out_valid) {
    for (size_t i = before; i < out->count; i++) free(out->calls[i].name), free(out->calls[i].arguments);
    out->count = before;
  }
  return !oom;
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
  } else if (format->kind == FORMAT_PYTHONIC) { /* the whole output is the list, or it is content */
    const char *first = text;
    size_t rest = length;
    trim(&first, &rest);
    bool valid = false;
    if (rest && first[0] == '[') ok = parse_pythonic(first, rest, false, out, &valid);
    if (ok && !valid) ok = append_content(&content, text, length);
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
    if (ok && start && !valid && format->kind == FORMAT_LLAMA3_JSON && body != start)
      /* <|python_tag|>brave_search.call(query="x"): Llama 3.1's built-in tools */
      ok = parse_pythonic(body, (size_t)(text + length - body), true, out, &valid);
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

void tool_calls_keep_first(tool_calls_result *result, size_t count) {
  for (size_t i = count; i < result->count; i++) {
    free(result->calls[i].name);
    free(result->calls[i].arguments);
  }
  if (result->count > count) result->count = count;
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
  bool pythonic = stream->format->kind == FORMAT_PYTHONIC;
  bool bare = pythonic || stream->format->kind == FORMAT_LLAMA3_JSON;
  const char *marker = pythonic ? NULL : find(all + stream->released, total - stream->released, stream->format->start);
  if (!marker && bare && !stream->seen_text) {
    /* a bare call (llama3_json's JSON, pythonic's list) must be the first non-space text */
    size_t i = stream->released;
    while (i < total && is_space(all[i])) i++;
    if (i < total && all[i] == (pythonic ? '[' : '{')) marker = all + i;
  }
  if (marker) {
    vlm_sb_append(content, all + stream->released, (size_t)(marker - all) - stream->released);
    stream->released = (size_t)(marker - all);
    stream->in_calls = true;
    return;
  }
  size_t hold = pythonic ? 0 : partial_marker(all, total, stream->format->start);
  size_t upto = total - hold;
  if (bare && !stream->seen_text) {
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
