#include "io/json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/file.h"

/* ---------------------------------------------------------------------- */
/* Parser                                                                  */
/* ---------------------------------------------------------------------- */

/* Children of the containers being parsed are collected on one shared stack
 * and copied into the arena when their container closes, so every array and
 * object ends up contiguous without a pre-count pass. */
typedef struct parser {
  const char *text;
  size_t length;
  size_t position;
  size_t max_depth;
  const char *source_name;
  vlm_arena *arena;
  vlm_json_member *stack;
  size_t stack_count;
  size_t stack_capacity;
  vlm_status error;
} parser;

static void line_and_column(const parser *p, size_t offset, size_t *line,
                            size_t *column) {
  *line = 1;
  *column = 1;
  for (size_t i = 0; i < offset && i < p->length; i++) {
    if (p->text[i] == '\n') {
      (*line)++;
      *column = 1;
    } else {
      (*column)++;
    }
  }
}

static bool fail(parser *p, vlm_status_code code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail(parser *p, vlm_status_code code, const char *format, ...) {
  if (p->error) return false;
  char message[256];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  size_t line, column;
  line_and_column(p, p->position, &line, &column);
  p->error = vlm_status_make(code, "%s: invalid JSON at line %zu column %zu: %s",
                             p->source_name, line, column, message);
  return false;
}

static bool out_of_memory(parser *p) {
  return fail(p, VLM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

static void skip_whitespace(parser *p) {
  while (p->position < p->length) {
    char c = p->text[p->position];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    p->position++;
  }
}

static bool push_member(parser *p, vlm_json_member **out) {
  if (p->stack_count == p->stack_capacity) {
    size_t capacity = p->stack_capacity ? p->stack_capacity * 2 : 64;
    vlm_json_member *grown = realloc(p->stack, capacity * sizeof(*grown));
    if (!grown) return out_of_memory(p);
    p->stack = grown;
    p->stack_capacity = capacity;
  }
  *out = &p->stack[p->stack_count++];
  memset(*out, 0, sizeof(**out));
  return true;
}

/* Length of the valid UTF-8 sequence starting at s (at most `available`
 * bytes), or 0 when invalid (overlong, surrogate, above U+10FFFF, truncated). */
static size_t utf8_sequence_length(const unsigned char *s, size_t available) {
  unsigned char c = s[0];
  if (c < 0x80) return 1;
  size_t length;
  uint32_t minimum, code;
  if ((c & 0xe0) == 0xc0) {
    length = 2; minimum = 0x80; code = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    length = 3; minimum = 0x800; code = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    length = 4; minimum = 0x10000; code = c & 0x07;
  } else {
    return 0;
  }
  if (available < length) return 0;
  for (size_t i = 1; i < length; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    code = (code << 6) | (s[i] & 0x3f);
  }
  if (code < minimum || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
    return 0;
  return length;
}

static size_t encode_utf8(uint32_t code, char *out) {
  if (code < 0x80) {
    out[0] = (char)code;
    return 1;
  }
  if (code < 0x800) {
    out[0] = (char)(0xc0 | (code >> 6));
    out[1] = (char)(0x80 | (code & 0x3f));
    return 2;
  }
  if (code < 0x10000) {
    out[0] = (char)(0xe0 | (code >> 12));
    out[1] = (char)(0x80 | ((code >> 6) & 0x3f));
    out[2] = (char)(0x80 | (code & 0x3f));
    return 3;
  }
  out[0] = (char)(0xf0 | (code >> 18));
  out[1] = (char)(0x80 | ((code >> 12) & 0x3f));
  out[2] = (char)(0x80 | ((code >> 6) & 0x3f));
  out[3] = (char)(0x80 | (code & 0x3f));
  return 4;
}

static bool read_hex4(parser *p, uint32_t *out) {
  if (p->length - p->position < 4)
    return fail(p, VLM_STATUS_DATA_LOSS, "truncated \\u escape");
  uint32_t value = 0;
  for (int i = 0; i < 4; i++) {
    char c = p->text[p->position + (size_t)i];
    value <<= 4;
    if (c >= '0' && c <= '9') value |= (uint32_t)(c - '0');
    else if (c >= 'a' && c <= 'f') value |= (uint32_t)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') value |= (uint32_t)(c - 'A' + 10);
    else return fail(p, VLM_STATUS_DATA_LOSS, "bad hex digit in \\u escape");
  }
  p->position += 4;
  *out = value;
  return true;
}

/* Parses a string whose opening quote is at p->position. Escapes only ever
 * shrink the text (a 6-byte \uXXXX yields at most 3 bytes; a 12-byte
 * surrogate pair yields 4), so the raw span bounds the decoded size. */
static bool parse_string(parser *p, const char **out_chars, size_t *out_length) {
  p->position++; /* opening quote */
  size_t start = p->position;
  bool has_escape = false;
  while (p->position < p->length) {
    unsigned char c = (unsigned char)p->text[p->position];
    if (c == '"') break;
    if (c == '\\') {
      has_escape = true;
      p->position += 2;
      continue;
    }
    if (c < 0x20)
      return fail(p, VLM_STATUS_DATA_LOSS, "control character in string");
    if (c < 0x80) {
      p->position++;
      continue;
    }
    size_t sequence = utf8_sequence_length(
        (const unsigned char *)p->text + p->position, p->length - p->position);
    if (!sequence) return fail(p, VLM_STATUS_DATA_LOSS, "invalid UTF-8 in string");
    p->position += sequence;
  }
  if (p->position >= p->length)
    return fail(p, VLM_STATUS_DATA_LOSS, "unterminated string");
  size_t raw_length = p->position - start;
  char *chars = vlm_arena_allocate(p->arena, raw_length + 1, 1);
  if (!chars) return out_of_memory(p);
  if (!has_escape) {
    memcpy(chars, p->text + start, raw_length);
    chars[raw_length] = '\0';
    p->position++; /* closing quote */
    *out_chars = chars;
    *out_length = raw_length;
    return true;
  }
  size_t end = p->position;
  size_t written = 0;
  p->position = start;
  while (p->position < end) {
    char c = p->text[p->position];
    if (c != '\\') {
      chars[written++] = c;
      p->position++;
      continue;
    }
    p->position++;
    if (p->position >= end)
      return fail(p, VLM_STATUS_DATA_LOSS, "unterminated escape");
    char escape = p->text[p->position++];
    switch (escape) {
      case '"': chars[written++] = '"'; break;
      case '\\': chars[written++] = '\\'; break;
      case '/': chars[written++] = '/'; break;
      case 'b': chars[written++] = '\b'; break;
      case 'f': chars[written++] = '\f'; break;
      case 'n': chars[written++] = '\n'; break;
      case 'r': chars[written++] = '\r'; break;
      case 't': chars[written++] = '\t'; break;
      case 'u': {
        uint32_t code;
        if (!read_hex4(p, &code)) return false;
        if (code >= 0xdc00 && code <= 0xdfff)
          return fail(p, VLM_STATUS_DATA_LOSS, "lone low surrogate in \\u escape");
        if (code >= 0xd800 && code <= 0xdbff) {
          uint32_t low;
          if (p->position + 2 > end || p->text[p->position] != '\\' ||
              p->text[p->position + 1] != 'u')
            return fail(p, VLM_STATUS_DATA_LOSS,
                        "high surrogate not followed by a low surrogate");
          p->position += 2;
          if (!read_hex4(p, &low)) return false;
          if (low < 0xdc00 || low > 0xdfff)
            return fail(p, VLM_STATUS_DATA_LOSS,
                        "high surrogate not followed by a low surrogate");
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        }
        written += encode_utf8(code, chars + written);
        break;
      }
      default:
        p->position--;
        return fail(p, VLM_STATUS_DATA_LOSS, "unknown escape '\\%c'", escape);
    }
  }
  chars[written] = '\0';
  p->position = end + 1;
  *out_chars = chars;
  *out_length = written;
  return true;
}

static bool match_literal(parser *p, const char *literal) {
  size_t length = strlen(literal);
  if (p->length - p->position >= length &&
      memcmp(p->text + p->position, literal, length) == 0) {
    p->position += length;
    return true;
  }
  return false;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool parse_number(parser *p, vlm_json_value *out) {
  size_t start = p->position;
  /* Python's json module writes NaN/Infinity for non-finite floats, and
   * Transformers saves configs through it, so accept them as it does. */
  if (match_literal(p, "NaN")) {
    out->type = VLM_JSON_NUMBER;
    out->as.number.value = NAN;
    return true;
  }
  if (match_literal(p, "Infinity") || match_literal(p, "-Infinity")) {
    out->type = VLM_JSON_NUMBER;
    out->as.number.value = p->text[start] == '-' ? -INFINITY : INFINITY;
    return true;
  }
  bool integral = true;
  if (p->position < p->length && p->text[p->position] == '-') p->position++;
  if (p->position >= p->length || !is_digit(p->text[p->position]))
    return fail(p, VLM_STATUS_DATA_LOSS, "expected a value");
  if (p->text[p->position] == '0') {
    p->position++;
  } else {
    while (p->position < p->length && is_digit(p->text[p->position])) p->position++;
  }
  if (p->position < p->length && p->text[p->position] == '.') {
    integral = false;
    p->position++;
    if (p->position >= p->length || !is_digit(p->text[p->position]))
      return fail(p, VLM_STATUS_DATA_LOSS, "expected digits after '.'");
    while (p->position < p->length && is_digit(p->text[p->position])) p->position++;
  }
  if (p->position < p->length &&
      (p->text[p->position] == 'e' || p->text[p->position] == 'E')) {
    integral = false;
    p->position++;
    if (p->position < p->length &&
        (p->text[p->position] == '+' || p->text[p->position] == '-'))
      p->position++;
    if (p->position >= p->length || !is_digit(p->text[p->position]))
      return fail(p, VLM_STATUS_DATA_LOSS, "expected digits in exponent");
    while (p->position < p->length && is_digit(p->text[p->position])) p->position++;
  }
  size_t length = p->position - start;
  char buffer[64];
  char *number_text = buffer;
  if (length >= sizeof(buffer)) {
    number_text = vlm_arena_strndup(p->arena, p->text + start, length);
    if (!number_text) return out_of_memory(p);
  } else {
    memcpy(buffer, p->text + start, length);
    buffer[length] = '\0';
  }
  out->type = VLM_JSON_NUMBER;
  out->as.number.value = strtod(number_text, NULL);
  out->as.number.is_integer = false;
  if (integral) {
    errno = 0;
    long long integer = strtoll(number_text, NULL, 10);
    if (errno == 0) {
      out->as.number.integer = integer;
      out->as.number.is_integer = true;
    }
  }
  return true;
}

static bool parse_value(parser *p, vlm_json_value *out, size_t depth);

static bool finish_container(parser *p, size_t first, vlm_json_value *out,
                             bool is_object) {
  size_t count = p->stack_count - first;
  if (is_object) {
    vlm_json_member *members = NULL;
    if (count) {
      members = vlm_arena_allocate(p->arena, count * sizeof(*members),
                                   _Alignof(vlm_json_member));
      if (!members) return out_of_memory(p);
      memcpy(members, p->stack + first, count * sizeof(*members));
    }
    out->type = VLM_JSON_OBJECT;
    out->as.object.members = members;
    out->as.object.count = count;
  } else {
    vlm_json_value *items = NULL;
    if (count) {
      items = vlm_arena_allocate(p->arena, count * sizeof(*items),
                                 _Alignof(vlm_json_value));
      if (!items) return out_of_memory(p);
      for (size_t i = 0; i < count; i++) items[i] = p->stack[first + i].value;
    }
    out->type = VLM_JSON_ARRAY;
    out->as.array.items = items;
    out->as.array.count = count;
  }
  p->stack_count = first;
  return true;
}

static bool parse_container(parser *p, vlm_json_value *out, size_t depth,
                            bool is_object) {
  if (depth >= p->max_depth)
    return fail(p, VLM_STATUS_OUT_OF_RANGE, "nesting deeper than %zu",
                p->max_depth);
  char close = is_object ? '}' : ']';
  p->position++;
  size_t first = p->stack_count;
  skip_whitespace(p);
  if (p->position < p->length && p->text[p->position] == close) {
    p->position++;
    return finish_container(p, first, out, is_object);
  }
  for (;;) {
    vlm_json_member *member;
    if (!push_member(p, &member)) return false;
    size_t index = p->stack_count - 1; /* stack may move while parsing */
    skip_whitespace(p);
    if (is_object) {
      if (p->position >= p->length || p->text[p->position] != '"')
        return fail(p, VLM_STATUS_DATA_LOSS, "expected a string key");
      const char *key;
      size_t key_length;
      if (!parse_string(p, &key, &key_length)) return false;
      p->stack[index].key = key;
      p->stack[index].key_length = key_length;
      skip_whitespace(p);
      if (p->position >= p->length || p->text[p->position] != ':')
        return fail(p, VLM_STATUS_DATA_LOSS, "expected ':' after key");
      p->position++;
      skip_whitespace(p);
    }
    vlm_json_value value;
    if (!parse_value(p, &value, depth + 1)) return false;
    p->stack[index].value = value;
    skip_whitespace(p);
    if (p->position >= p->length)
      return fail(p, VLM_STATUS_DATA_LOSS, "unexpected end of input, expected '%c'",
                  close);
    char c = p->text[p->position];
    if (c == ',') {
      p->position++;
      continue;
    }
    if (c == close) {
      p->position++;
      return finish_container(p, first, out, is_object);
    }
    return fail(p, VLM_STATUS_DATA_LOSS, "expected ',' or '%c'", close);
  }
}

static bool parse_value(parser *p, vlm_json_value *out, size_t depth) {
  memset(out, 0, sizeof(*out));
  skip_whitespace(p);
  if (p->position >= p->length)
    return fail(p, VLM_STATUS_DATA_LOSS, "unexpected end of input");
  char c = p->text[p->position];
  switch (c) {
    case '{': return parse_container(p, out, depth, true);
    case '[': return parse_container(p, out, depth, false);
    case '"':
      out->type = VLM_JSON_STRING;
      return parse_string(p, &out->as.string.chars, &out->as.string.length);
    case 't':
      if (!match_literal(p, "true")) break;
      out->type = VLM_JSON_BOOL;
      out->as.boolean = true;
      return true;
    case 'f':
      if (!match_literal(p, "false")) break;
      out->type = VLM_JSON_BOOL;
      out->as.boolean = false;
      return true;
    case 'n':
      if (!match_literal(p, "null")) break;
      out->type = VLM_JSON_NULL;
      return true;
    default:
      return parse_number(p, out);
  }
  return fail(p, VLM_STATUS_DATA_LOSS, "unexpected character");
}

vlm_status vlm_json_parse(const char *text, size_t length,
                          const vlm_json_limits *limits,
                          const vlm_allocator *allocator,
                          const char *source_name,
                          vlm_json_document *out_document) {
  memset(out_document, 0, sizeof(*out_document));
  if (!source_name) source_name = "<json>";
  size_t max_depth = limits && limits->max_depth ? limits->max_depth : 128;
  size_t max_bytes = limits && limits->max_input_bytes ? limits->max_input_bytes
                                                       : SIZE_MAX;
  if (length > max_bytes)
    return VLM_ERROR(OUT_OF_RANGE, "%s: JSON text of %zu bytes exceeds the limit of %zu",
                     source_name, length, max_bytes);
  vlm_arena_init(&out_document->arena, allocator, 64 * 1024);
  parser p = {.text = text, .length = length, .max_depth = max_depth,
              .source_name = source_name, .arena = &out_document->arena};
  /* A UTF-8 byte-order mark is tolerated, as Python's utf-8-sig would. */
  if (length >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) p.position = 3;
  vlm_json_value *root = vlm_arena_allocate(&out_document->arena, sizeof(*root),
                                            _Alignof(vlm_json_value));
  if (!root) {
    out_of_memory(&p);
  } else if (parse_value(&p, root, 0)) {
    skip_whitespace(&p);
    if (p.position != p.length)
      fail(&p, VLM_STATUS_DATA_LOSS, "unexpected data after the JSON value");
  }
  free(p.stack);
  if (p.error) {
    vlm_arena_reset(&out_document->arena);
    out_document->root = NULL;
    return p.error;
  }
  out_document->root = root;
  return VLM_OK;
}

vlm_status vlm_json_parse_file(const char *path, size_t max_bytes,
                               const vlm_allocator *allocator,
                               vlm_json_document *out_document) {
  memset(out_document, 0, sizeof(*out_document));
  char *contents = NULL;
  size_t length = 0;
  VLM_RETURN_IF_ERROR(vlm_file_read_all(path, max_bytes, &contents, &length));
  vlm_json_limits limits = {0};
  vlm_status status =
      vlm_json_parse(contents, length, &limits, allocator, path, out_document);
  free(contents);
  return status;
}

void vlm_json_document_release(vlm_json_document *document) {
  vlm_arena_reset(&document->arena);
  document->root = NULL;
}

/* ---------------------------------------------------------------------- */
/* Access                                                                  */
/* ---------------------------------------------------------------------- */

const vlm_json_value *vlm_json_object_get(const vlm_json_value *object,
                                          const char *key) {
  if (!object || object->type != VLM_JSON_OBJECT) return NULL;
  size_t key_length = strlen(key);
  for (size_t i = object->as.object.count; i-- > 0;) {
    const vlm_json_member *member = &object->as.object.members[i];
    if (member->key_length == key_length &&
        memcmp(member->key, key, key_length) == 0)
      return &member->value;
  }
  return NULL;
}

static int compare_member_keys(const void *a, const void *b) {
  const vlm_json_member *left = *(const vlm_json_member *const *)a;
  const vlm_json_member *right = *(const vlm_json_member *const *)b;
  size_t shorter = left->key_length < right->key_length ? left->key_length
                                                        : right->key_length;
  int order = memcmp(left->key, right->key, shorter);
  if (order) return order;
  return (left->key_length > right->key_length) - (left->key_length < right->key_length);
}

bool vlm_json_object_has_duplicates(const vlm_json_value *object,
                                    const char **out_duplicate_key) {
  if (!object || object->type != VLM_JSON_OBJECT || object->as.object.count < 2)
    return false;
  size_t count = object->as.object.count;
  const vlm_json_member **sorted = malloc(count * sizeof(*sorted));
  if (!sorted) return true; /* cannot prove otherwise; callers refuse */
  for (size_t i = 0; i < count; i++) sorted[i] = &object->as.object.members[i];
  qsort(sorted, count, sizeof(*sorted), compare_member_keys);
  bool duplicate = false;
  for (size_t i = 1; i < count && !duplicate; i++) {
    if (compare_member_keys(&sorted[i - 1], &sorted[i]) == 0) {
      duplicate = true;
      if (out_duplicate_key) *out_duplicate_key = sorted[i]->key;
    }
  }
  free(sorted);
  return duplicate;
}

const vlm_json_value *vlm_json_array_get(const vlm_json_value *array,
                                         size_t index) {
  if (!array || array->type != VLM_JSON_ARRAY || index >= array->as.array.count)
    return NULL;
  return &array->as.array.items[index];
}

bool vlm_json_is_string(const vlm_json_value *value) {
  return value && value->type == VLM_JSON_STRING;
}

bool vlm_json_string_equals(const vlm_json_value *value, const char *text) {
  return vlm_json_is_string(value) && value->as.string.length == strlen(text) &&
         memcmp(value->as.string.chars, text, value->as.string.length) == 0;
}

const char *vlm_json_type_name(vlm_json_type type) {
  switch (type) {
    case VLM_JSON_NULL: return "null";
    case VLM_JSON_BOOL: return "boolean";
    case VLM_JSON_NUMBER: return "number";
    case VLM_JSON_STRING: return "string";
    case VLM_JSON_ARRAY: return "array";
    case VLM_JSON_OBJECT: return "object";
  }
  return "unknown";
}

bool vlm_json_get_int(const vlm_json_value *value, int64_t *out) {
  if (!value || value->type != VLM_JSON_NUMBER) return false;
  if (value->as.number.is_integer) {
    *out = value->as.number.integer;
    return true;
  }
  /* 4.0 is an integer to Python's int() checks in configs; accept exact
   * integral doubles in the exactly representable range. */
  double number = value->as.number.value;
  if (isfinite(number) && number == floor(number) && fabs(number) <= 9007199254740992.0) {
    *out = (int64_t)number;
    return true;
  }
  return false;
}

bool vlm_json_get_double(const vlm_json_value *value, double *out) {
  if (!value || value->type != VLM_JSON_NUMBER) return false;
  *out = value->as.number.value;
  return true;
}

bool vlm_json_get_bool(const vlm_json_value *value, bool *out) {
  if (!value || value->type != VLM_JSON_BOOL) return false;
  *out = value->as.boolean;
  return true;
}

const char *vlm_json_get_string(const vlm_json_value *value) {
  return vlm_json_is_string(value) ? value->as.string.chars : NULL;
}

/* ---------------------------------------------------------------------- */
/* Writing                                                                 */
/* ---------------------------------------------------------------------- */

static bool sb_reserve(vlm_string_builder *builder, size_t extra) {
  if (builder->failed) return false;
  size_t needed;
  if (!vlm_size_add(builder->length, extra + 1, &needed)) {
    builder->failed = true;
    return false;
  }
  if (needed <= builder->capacity) return true;
  size_t capacity = builder->capacity ? builder->capacity : 256;
  while (capacity < needed) capacity *= 2;
  char *grown = realloc(builder->data, capacity);
  if (!grown) {
    builder->failed = true;
    return false;
  }
  builder->data = grown;
  builder->capacity = capacity;
  return true;
}

void vlm_sb_append(vlm_string_builder *builder, const char *text, size_t length) {
  if (!sb_reserve(builder, length)) return;
  memcpy(builder->data + builder->length, text, length);
  builder->length += length;
  builder->data[builder->length] = '\0';
}

void vlm_sb_appendf(vlm_string_builder *builder, const char *format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int length = vsnprintf(NULL, 0, format, copy);
  va_end(copy);
  if (length > 0 && sb_reserve(builder, (size_t)length)) {
    vsnprintf(builder->data + builder->length, (size_t)length + 1, format, args);
    builder->length += (size_t)length;
  }
  va_end(args);
}

void vlm_sb_append_json_string(vlm_string_builder *builder, const char *text,
                               size_t length) {
  vlm_sb_append(builder, "\"", 1);
  size_t run_start = 0;
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    vlm_sb_append(builder, text + run_start, i - run_start);
    switch (c) {
      case '"': vlm_sb_append(builder, "\\\"", 2); break;
      case '\\': vlm_sb_append(builder, "\\\\", 2); break;
      case '\n': vlm_sb_append(builder, "\\n", 2); break;
      case '\r': vlm_sb_append(builder, "\\r", 2); break;
      case '\t': vlm_sb_append(builder, "\\t", 2); break;
      default: vlm_sb_appendf(builder, "\\u%04x", c); break;
    }
    run_start = i + 1;
  }
  vlm_sb_append(builder, text + run_start, length - run_start);
  vlm_sb_append(builder, "\"", 1);
}

static void append_number(vlm_string_builder *builder, const vlm_json_value *value) {
  if (value->as.number.is_integer) {
    vlm_sb_appendf(builder, "%lld", (long long)value->as.number.integer);
    return;
  }
  double number = value->as.number.value;
  if (isnan(number)) vlm_sb_append(builder, "NaN", 3);
  else if (isinf(number)) vlm_sb_appendf(builder, "%sInfinity", number < 0 ? "-" : "");
  else {
    /* Keep a non-integer number non-integer on re-reading: -0.0 or 1e20 must
     * not come back as the integers 0 or 100000000000000000000. */
    char text[40];
    snprintf(text, sizeof(text), "%.17g", number);
    vlm_sb_append(builder, text, strlen(text));
    if (!strpbrk(text, ".e")) vlm_sb_append(builder, ".0", 2);
  }
}

void vlm_sb_append_json_value(vlm_string_builder *builder,
                              const vlm_json_value *value) {
  switch (value->type) {
    case VLM_JSON_NULL: vlm_sb_append(builder, "null", 4); break;
    case VLM_JSON_BOOL:
      if (value->as.boolean) vlm_sb_append(builder, "true", 4);
      else vlm_sb_append(builder, "false", 5);
      break;
    case VLM_JSON_NUMBER: append_number(builder, value); break;
    case VLM_JSON_STRING:
      vlm_sb_append_json_string(builder, value->as.string.chars,
                                value->as.string.length);
      break;
    case VLM_JSON_ARRAY:
      vlm_sb_append(builder, "[", 1);
      for (size_t i = 0; i < value->as.array.count; i++) {
        if (i) vlm_sb_append(builder, ",", 1);
        vlm_sb_append_json_value(builder, &value->as.array.items[i]);
      }
      vlm_sb_append(builder, "]", 1);
      break;
    case VLM_JSON_OBJECT:
      vlm_sb_append(builder, "{", 1);
      for (size_t i = 0; i < value->as.object.count; i++) {
        const vlm_json_member *member = &value->as.object.members[i];
        if (i) vlm_sb_append(builder, ",", 1);
        vlm_sb_append_json_string(builder, member->key, member->key_length);
        vlm_sb_append(builder, ":", 1);
        vlm_sb_append_json_value(builder, &member->value);
      }
      vlm_sb_append(builder, "}", 1);
      break;
  }
}

char *vlm_sb_finish(vlm_string_builder *builder) {
  if (builder->failed) {
    vlm_sb_release(builder);
    return NULL;
  }
  if (!builder->data) sb_reserve(builder, 0);
  if (builder->failed) return NULL;
  builder->data[builder->length] = '\0';
  char *result = builder->data;
  builder->data = NULL;
  builder->length = builder->capacity = 0;
  return result;
}

void vlm_sb_release(vlm_string_builder *builder) {
  free(builder->data);
  builder->data = NULL;
  builder->length = builder->capacity = 0;
  builder->failed = false;
}
