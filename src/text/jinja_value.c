/* Jinja values with Python semantics: truthiness, equality, ordering, and
 * the three ways a value becomes text — str() (what `{{ x }}` prints),
 * repr() (how str() prints the items of a list or dict) and json.dumps
 * (the `tojson` filter). Byte-identical prompts depend on these matching
 * CPython exactly, down to float formatting and quote choice. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/jinja_internal.h"

jinja_value jinja_undefined(const char *hint) {
  jinja_value value = {.type = JINJA_UNDEFINED};
  value.as.undefined_hint = hint;
  return value;
}
jinja_value jinja_none(void) { return (jinja_value){.type = JINJA_NONE}; }
jinja_value jinja_boolean(bool value) {
  return (jinja_value){.type = JINJA_BOOLEAN, .as.boolean = value};
}
jinja_value jinja_integer(int64_t value) {
  return (jinja_value){.type = JINJA_INTEGER, .as.integer = value};
}
jinja_value jinja_float(double value) {
  return (jinja_value){.type = JINJA_FLOAT, .as.number = value};
}
jinja_value jinja_string(const char *chars, size_t length) {
  jinja_value value = {.type = JINJA_STRING};
  value.as.string.chars = chars;
  value.as.string.length = length;
  return value;
}

void *jinja_allocate(jinja_renderer *renderer, size_t size) {
  if (size > renderer->options.max_memory_bytes ||
      renderer->arena.bytes_allocated > renderer->options.max_memory_bytes - size)
    return NULL;
  return vlm_arena_allocate(&renderer->arena, size ? size : 1, 8);
}

bool jinja_string_copy(jinja_renderer *renderer, const char *chars, size_t length,
                       jinja_value *out) {
  char *copy = jinja_allocate(renderer, length + 1);
  if (!copy) return false;
  if (length) memcpy(copy, chars, length);
  copy[length] = 0;
  *out = jinja_string(copy, length);
  return true;
}

jinja_list *jinja_list_create(jinja_renderer *renderer, size_t capacity) {
  jinja_list *list = jinja_allocate(renderer, sizeof(*list));
  if (!list) return NULL;
  memset(list, 0, sizeof(*list));
  if (capacity) {
    list->items = jinja_allocate(renderer, capacity * sizeof(jinja_value));
    if (!list->items) return NULL;
    list->capacity = capacity;
  }
  return list;
}

bool jinja_list_append(jinja_renderer *renderer, jinja_list *list, jinja_value value) {
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? list->capacity * 2 : 8;
    jinja_value *items = jinja_allocate(renderer, capacity * sizeof(jinja_value));
    if (!items) return false;
    if (list->count) memcpy(items, list->items, list->count * sizeof(jinja_value));
    list->items = items;
    list->capacity = capacity;
  }
  list->items[list->count++] = value;
  return true;
}

jinja_dict *jinja_dict_create(jinja_renderer *renderer, size_t capacity) {
  jinja_dict *dict = jinja_allocate(renderer, sizeof(*dict));
  if (!dict) return NULL;
  memset(dict, 0, sizeof(*dict));
  if (capacity) {
    dict->keys = jinja_allocate(renderer, capacity * sizeof(jinja_value));
    dict->values = jinja_allocate(renderer, capacity * sizeof(jinja_value));
    if (!dict->keys || !dict->values) return NULL;
    dict->capacity = capacity;
  }
  return dict;
}

const jinja_value *jinja_dict_get_value(const jinja_dict *dict, jinja_value key) {
  for (size_t i = 0; i < dict->count; i++)
    if (jinja_equal(dict->keys[i], key)) return &dict->values[i];
  return NULL;
}

const jinja_value *jinja_dict_get(const jinja_dict *dict, const char *key, size_t length) {
  return jinja_dict_get_value(dict, jinja_string(key, length));
}

bool jinja_dict_set(jinja_renderer *renderer, jinja_dict *dict, jinja_value key,
                    jinja_value value) {
  for (size_t i = 0; i < dict->count; i++) {
    if (jinja_equal(dict->keys[i], key)) {
      dict->values[i] = value;
      return true;
    }
  }
  if (dict->count == dict->capacity) {
    size_t capacity = dict->capacity ? dict->capacity * 2 : 8;
    jinja_value *keys = jinja_allocate(renderer, capacity * sizeof(jinja_value));
    jinja_value *values = jinja_allocate(renderer, capacity * sizeof(jinja_value));
    if (!keys || !values) return false;
    if (dict->count) {
      memcpy(keys, dict->keys, dict->count * sizeof(jinja_value));
      memcpy(values, dict->values, dict->count * sizeof(jinja_value));
    }
    dict->keys = keys;
    dict->values = values;
    dict->capacity = capacity;
  }
  dict->keys[dict->count] = key;
  dict->values[dict->count] = value;
  dict->count++;
  return true;
}

jinja_value jinja_value_from_json(jinja_renderer *renderer, const vlm_json_value *json,
                                  bool *ok) {
  switch (json->type) {
    case VLM_JSON_NULL: return jinja_none();
    case VLM_JSON_BOOL: return jinja_boolean(json->as.boolean);
    case VLM_JSON_NUMBER:
      return json->as.number.is_integer ? jinja_integer(json->as.number.integer)
                                        : jinja_float(json->as.number.value);
    case VLM_JSON_STRING:
      /* JSON documents outlive the render, so strings are borrowed. */
      return jinja_string(json->as.string.chars, json->as.string.length);
    case VLM_JSON_ARRAY: {
      jinja_list *list = jinja_list_create(renderer, json->as.array.count);
      if (!list) break;
      for (size_t i = 0; i < json->as.array.count; i++)
        list->items[list->count++] = jinja_value_from_json(renderer, &json->as.array.items[i], ok);
      return (jinja_value){.type = JINJA_LIST, .as.list = list};
    }
    case VLM_JSON_OBJECT: {
      jinja_dict *dict = jinja_dict_create(renderer, json->as.object.count);
      if (!dict) break;
      for (size_t i = 0; i < json->as.object.count; i++) {
        const vlm_json_member *member = &json->as.object.members[i];
        jinja_value key = jinja_string(member->key, member->key_length);
        if (!jinja_dict_set(renderer, dict, key, jinja_value_from_json(renderer, &member->value, ok)))
          *ok = false;
      }
      return (jinja_value){.type = JINJA_DICT, .as.dict = dict};
    }
  }
  *ok = false;
  return jinja_none();
}

static int container_depth(const jinja_value *first, const jinja_value *second, size_t count, int limit) {
  if (limit <= 0) return -1; /* a container is at least 1 deep */
  int deepest = 0;
  for (size_t i = 0; i < count; i++) {
    int depth = jinja_value_depth(first[i], limit - 1);
    if (depth >= 0 && second) {
      int other = jinja_value_depth(second[i], limit - 1);
      depth = other < 0 ? -1 : other > depth ? other : depth;
    }
    if (depth < 0) return -1;
    if (depth > deepest) deepest = depth;
  }
  return deepest + 1;
}

int jinja_value_depth(jinja_value value, int limit) {
  if (value.type == JINJA_LIST) {
    jinja_list *list = value.as.list;
    if (list->depth) return list->depth <= limit ? list->depth : -1;
    int depth = container_depth(list->items, NULL, list->count, limit);
    if (depth > 0) list->depth = depth; /* exact: a cut-off walk is never kept */
    return depth;
  }
  if (value.type == JINJA_DICT) {
    jinja_dict *dict = value.as.dict;
    if (dict->depth) return dict->depth <= limit ? dict->depth : -1;
    int depth = container_depth(dict->keys, dict->values, dict->count, limit);
    if (depth > 0) dict->depth = depth;
    return depth;
  }
  return 0; /* scalars, and namespaces (compared by identity) */
}

bool jinja_truthy(jinja_value value) {
  switch (value.type) {
    case JINJA_UNDEFINED:
    case JINJA_NONE: return false;
    case JINJA_BOOLEAN: return value.as.boolean;
    case JINJA_INTEGER: return value.as.integer != 0;
    case JINJA_FLOAT: return value.as.number != 0.0;
    case JINJA_STRING: return value.as.string.length != 0;
    case JINJA_LIST: return value.as.list->count != 0;
    case JINJA_DICT: return value.as.dict->count != 0;
    default: return true;
  }
}

/* Python treats bool as an int subtype: True == 1. */
static bool numeric(jinja_value value, double *out, bool *is_integer, int64_t *integer) {
  if (value.type == JINJA_BOOLEAN || value.type == JINJA_INTEGER) {
    *integer = value.type == JINJA_BOOLEAN ? value.as.boolean : value.as.integer;
    *out = (double)*integer;
    *is_integer = true;
    return true;
  }
  if (value.type == JINJA_FLOAT) {
    *out = value.as.number;
    *is_integer = false;
    return true;
  }
  return false;
}

bool jinja_equal(jinja_value a, jinja_value b) {
  double x, y;
  bool a_integer, b_integer;
  int64_t i, j;
  if (numeric(a, &x, &a_integer, &i) && numeric(b, &y, &b_integer, &j))
    return a_integer && b_integer ? i == j : x == y;
  if (a.type != b.type) return false;
  switch (a.type) {
    case JINJA_UNDEFINED:
    case JINJA_NONE: return true;
    case JINJA_STRING:
      return a.as.string.length == b.as.string.length &&
             memcmp(a.as.string.chars, b.as.string.chars, a.as.string.length) == 0;
    case JINJA_LIST:
      if (a.as.list == b.as.list) return true;
      if (a.as.list->count != b.as.list->count || a.as.list->is_tuple != b.as.list->is_tuple)
        return false;
      for (size_t k = 0; k < a.as.list->count; k++)
        if (!jinja_equal(a.as.list->items[k], b.as.list->items[k])) return false;
      return true;
    case JINJA_DICT:
      if (a.as.dict == b.as.dict) return true;
      if (a.as.dict->count != b.as.dict->count) return false;
      for (size_t k = 0; k < a.as.dict->count; k++) {
        const jinja_value *other = jinja_dict_get_value(b.as.dict, a.as.dict->keys[k]);
        if (!other || !jinja_equal(a.as.dict->values[k], *other)) return false;
      }
      return true;
    case JINJA_NAMESPACE: return a.as.dict == b.as.dict;
    default: return a.as.callable == b.as.callable;
  }
}

bool jinja_compare(jinja_value a, jinja_value b, int *out) {
  double x, y;
  bool a_integer, b_integer;
  int64_t i, j;
  if (numeric(a, &x, &a_integer, &i) && numeric(b, &y, &b_integer, &j)) {
    if (a_integer && b_integer) *out = i < j ? -1 : i > j;
    else *out = x < y ? -1 : x > y;
    return true;
  }
  if (a.type == JINJA_STRING && b.type == JINJA_STRING) {
    /* UTF-8 byte order is code point order. */
    size_t length = a.as.string.length < b.as.string.length ? a.as.string.length : b.as.string.length;
    int c = length ? memcmp(a.as.string.chars, b.as.string.chars, length) : 0;
    if (c == 0) c = a.as.string.length < b.as.string.length ? -1 : a.as.string.length > b.as.string.length;
    *out = c < 0 ? -1 : c > 0;
    return true;
  }
  if (a.type == JINJA_LIST && b.type == JINJA_LIST) {
    size_t count = a.as.list->count < b.as.list->count ? a.as.list->count : b.as.list->count;
    for (size_t k = 0; k < count; k++) {
      if (jinja_equal(a.as.list->items[k], b.as.list->items[k])) continue;
      return jinja_compare(a.as.list->items[k], b.as.list->items[k], out);
    }
    *out = a.as.list->count < b.as.list->count ? -1 : a.as.list->count > b.as.list->count;
    return true;
  }
  return false;
}

const char *jinja_type_name(jinja_value value) {
  switch (value.type) {
    case JINJA_UNDEFINED: return "Undefined";
    case JINJA_NONE: return "NoneType";
    case JINJA_BOOLEAN: return "bool";
    case JINJA_INTEGER: return "int";
    case JINJA_FLOAT: return "float";
    case JINJA_STRING: return "str";
    case JINJA_LIST: return value.as.list->is_tuple ? "tuple" : "list";
    case JINJA_DICT: return "dict";
    case JINJA_NAMESPACE: return "Namespace";
    case JINJA_MACRO: return "Macro";
    default: return "builtin_function_or_method";
  }
}

size_t jinja_utf8_length(const char *chars, size_t length) {
  size_t count = 0;
  for (size_t i = 0; i < length; i++)
    if (((unsigned char)chars[i] & 0xC0) != 0x80) count++;
  return count;
}

size_t jinja_utf8_offset(const char *chars, size_t length, size_t index) {
  size_t seen = 0;
  for (size_t i = 0; i < length; i++) {
    if (((unsigned char)chars[i] & 0xC0) != 0x80) {
      if (seen == index) return i;
      seen++;
    }
  }
  return length;
}

/* ---- text conversions ----------------------------------------------------- */

/* repr(float): the shortest digits that round-trip, in fixed notation for
 * exponents -4..15 and scientific notation otherwise, always with a '.' or
 * an exponent so it reads back as a float. */
void jinja_append_python_float(vlm_string_builder *builder, double value) {
  if (isnan(value)) {
    vlm_sb_append_literal(builder, "nan");
    return;
  }
  if (isinf(value)) {
    if (value < 0) vlm_sb_append_literal(builder, "-inf");
    else vlm_sb_append_literal(builder, "inf");
    return;
  }
  char scientific[40];
  for (int precision = 0; precision <= 17; precision++) {
    snprintf(scientific, sizeof(scientific), "%.*e", precision, value);
    if (strtod(scientific, NULL) == value) break;
  }
  /* scientific is "[-]d[.ddd]e[+-]XX": split into digits and exponent */
  char digits[40];
  size_t digit_count = 0;
  const char *cursor = scientific;
  bool negative = *cursor == '-';
  if (negative) cursor++;
  while (*cursor && *cursor != 'e') {
    if (*cursor != '.') digits[digit_count++] = *cursor;
    cursor++;
  }
  int exponent = atoi(cursor + 1);
  while (digit_count > 1 && digits[digit_count - 1] == '0') digit_count--;
  if (negative) vlm_sb_append_literal(builder, "-");
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      vlm_sb_append_literal(builder, "0.");
      for (int i = -1; i > exponent; i--) vlm_sb_append_literal(builder, "0");
      vlm_sb_append(builder, digits, digit_count);
    } else {
      size_t integer_digits = (size_t)exponent + 1;
      for (size_t i = 0; i < integer_digits; i++)
        vlm_sb_append(builder, i < digit_count ? &digits[i] : "0", 1);
      vlm_sb_append_literal(builder, ".");
      if (digit_count > integer_digits)
        vlm_sb_append(builder, digits + integer_digits, digit_count - integer_digits);
      else
        vlm_sb_append_literal(builder, "0");
    }
  } else {
    vlm_sb_append(builder, digits, 1);
    if (digit_count > 1) {
      vlm_sb_append_literal(builder, ".");
      vlm_sb_append(builder, digits + 1, digit_count - 1);
    }
    vlm_sb_appendf(builder, "e%c%02d", exponent < 0 ? '-' : '+', abs(exponent));
  }
}

/* Python's repr(str): single quotes unless the text has a ' and no ". */
static void append_string_repr(vlm_string_builder *builder, const char *text, size_t length) {
  bool has_single = memchr(text, '\'', length) != NULL;
  bool has_double = memchr(text, '"', length) != NULL;
  char quote = has_single && !has_double ? '"' : '\'';
  vlm_sb_append(builder, &quote, 1);
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c == (unsigned char)quote || c == '\\') {
      vlm_sb_append_literal(builder, "\\");
      vlm_sb_append(builder, &text[i], 1);
    } else if (c == '\n') vlm_sb_append_literal(builder, "\\n");
    else if (c == '\r') vlm_sb_append_literal(builder, "\\r");
    else if (c == '\t') vlm_sb_append_literal(builder, "\\t");
    else if (c < 0x20 || c == 0x7f) vlm_sb_appendf(builder, "\\x%02x", c);
    else if (c == 0xC2 && i + 1 < length &&
             (((unsigned char)text[i + 1] >= 0x80 && (unsigned char)text[i + 1] <= 0xA0) ||
              (unsigned char)text[i + 1] == 0xAD)) {
      /* U+0080..U+00A0 and U+00AD are not printable: Python writes \x80.. */
      vlm_sb_appendf(builder, "\\x%02x", (unsigned char)text[i + 1]);
      i++;
    } else vlm_sb_append(builder, &text[i], 1);
  }
  vlm_sb_append(builder, &quote, 1);
}

bool jinja_append_repr(vlm_string_builder *builder, jinja_value value, int depth) {
  if (depth > JINJA_MAX_VALUE_DEPTH) return false;
  switch (value.type) {
    case JINJA_STRING:
      append_string_repr(builder, value.as.string.chars, value.as.string.length);
      return true;
    case JINJA_LIST: {
      const jinja_list *list = value.as.list;
      vlm_sb_append(builder, list->is_tuple ? "(" : "[", 1);
      for (size_t i = 0; i < list->count; i++) {
        if (i) vlm_sb_append_literal(builder, ", ");
        if (!jinja_append_repr(builder, list->items[i], depth + 1)) return false;
      }
      if (list->is_tuple && list->count == 1) vlm_sb_append_literal(builder, ",");
      vlm_sb_append(builder, list->is_tuple ? ")" : "]", 1);
      return true;
    }
    case JINJA_DICT: {
      const jinja_dict *dict = value.as.dict;
      vlm_sb_append_literal(builder, "{");
      for (size_t i = 0; i < dict->count; i++) {
        if (i) vlm_sb_append_literal(builder, ", ");
        if (!jinja_append_repr(builder, dict->keys[i], depth + 1)) return false;
        vlm_sb_append_literal(builder, ": ");
        if (!jinja_append_repr(builder, dict->values[i], depth + 1)) return false;
      }
      vlm_sb_append_literal(builder, "}");
      return true;
    }
    case JINJA_NAMESPACE: {
      const jinja_dict *dict = value.as.dict;
      vlm_sb_append_literal(builder, "<Namespace {");
      for (size_t i = 0; i < dict->count; i++) {
        if (i) vlm_sb_append_literal(builder, ", ");
        if (!jinja_append_repr(builder, dict->keys[i], depth + 1)) return false;
        vlm_sb_append_literal(builder, ": ");
        if (!jinja_append_repr(builder, dict->values[i], depth + 1)) return false;
      }
      vlm_sb_append_literal(builder, "}>");
      return true;
    }
    default:
      return jinja_append_str(builder, value);
  }
}

bool jinja_append_str(vlm_string_builder *builder, jinja_value value) {
  switch (value.type) {
    case JINJA_UNDEFINED: return true;
    case JINJA_NONE: vlm_sb_append_literal(builder, "None"); return true;
    case JINJA_BOOLEAN:
      if (value.as.boolean) vlm_sb_append_literal(builder, "True");
      else vlm_sb_append_literal(builder, "False");
      return true;
    case JINJA_INTEGER: vlm_sb_appendf(builder, "%lld", (long long)value.as.integer); return true;
    case JINJA_FLOAT: jinja_append_python_float(builder, value.as.number); return true;
    case JINJA_STRING: vlm_sb_append(builder, value.as.string.chars, value.as.string.length); return true;
    case JINJA_LIST:
    case JINJA_DICT:
    case JINJA_NAMESPACE: return jinja_append_repr(builder, value, 0);
    case JINJA_MACRO: vlm_sb_append_literal(builder, "<Macro>"); return true;
    default: vlm_sb_append_literal(builder, "<built-in function>"); return true;
  }
}

/* json.dumps(ensure_ascii=False) string escaping. */
static void append_json_string(vlm_string_builder *builder, const char *text, size_t length) {
  vlm_sb_append_literal(builder, "\"");
  size_t run = 0;
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    vlm_sb_append(builder, text + run, i - run);
    switch (c) {
      case '"': vlm_sb_append_literal(builder, "\\\""); break;
      case '\\': vlm_sb_append_literal(builder, "\\\\"); break;
      case '\n': vlm_sb_append_literal(builder, "\\n"); break;
      case '\r': vlm_sb_append_literal(builder, "\\r"); break;
      case '\t': vlm_sb_append_literal(builder, "\\t"); break;
      case '\b': vlm_sb_append_literal(builder, "\\b"); break;
      case '\f': vlm_sb_append_literal(builder, "\\f"); break;
      default: vlm_sb_appendf(builder, "\\u%04x", c); break;
    }
    run = i + 1;
  }
  vlm_sb_append(builder, text + run, length - run);
  vlm_sb_append_literal(builder, "\"");
}

static void append_newline_indent(vlm_string_builder *builder, int indent, int level) {
  vlm_sb_append_literal(builder, "\n");
  for (int i = 0; i < indent * level; i++) vlm_sb_append_literal(builder, " ");
}

/* Python's sort of string keys (dict keys from JSON are strings). */
static int compare_keys(const void *a, const void *b) {
  const jinja_value *x = *(const jinja_value *const *)a, *y = *(const jinja_value *const *)b;
  int order = 0;
  jinja_compare(*x, *y, &order);
  return order;
}

static bool append_json_members(vlm_string_builder *builder, const jinja_dict *dict, int indent,
                                int level, bool sort_keys, const char *item_separator,
                                const char *key_separator) {
  if (dict->count == 0) {
    vlm_sb_append_literal(builder, "{}");
    return true;
  }
  size_t *order = malloc(dict->count * sizeof(size_t));
  if (!order) return false;
  for (size_t i = 0; i < dict->count; i++) order[i] = i;
  if (sort_keys) {
    const jinja_value **keys = malloc(dict->count * sizeof(*keys));
    if (!keys) {
      free(order);
      return false;
    }
    for (size_t i = 0; i < dict->count; i++) keys[i] = &dict->keys[i];
    qsort(keys, dict->count, sizeof(*keys), compare_keys);
    for (size_t i = 0; i < dict->count; i++) order[i] = (size_t)(keys[i] - dict->keys);
    free(keys);
  }
  bool ok = true;
  vlm_sb_append_literal(builder, "{");
  for (size_t n = 0; n < dict->count && ok; n++) {
    size_t i = order[n];
    if (n) vlm_sb_append(builder, item_separator, strlen(item_separator));
    if (indent >= 0) append_newline_indent(builder, indent, level + 1);
    jinja_value key = dict->keys[i];
    /* json.dumps turns non-string keys into strings */
    if (key.type == JINJA_STRING) {
      append_json_string(builder, key.as.string.chars, key.as.string.length);
    } else {
      vlm_string_builder text = {0};
      if (key.type == JINJA_BOOLEAN) vlm_sb_append(&text, key.as.boolean ? "true" : "false", key.as.boolean ? 4 : 5);
      else if (key.type == JINJA_NONE) vlm_sb_append_literal(&text, "null");
      else jinja_append_str(&text, key);
      append_json_string(builder, text.data ? text.data : "", text.length);
      vlm_sb_release(&text);
    }
    vlm_sb_append(builder, key_separator, strlen(key_separator));
    ok = jinja_append_json(builder, dict->values[i], indent, level + 1, sort_keys, item_separator,
                           key_separator);
  }
  if (indent >= 0) append_newline_indent(builder, indent, level);
  vlm_sb_append_literal(builder, "}");
  free(order);
  return ok;
}

bool jinja_append_json(vlm_string_builder *builder, jinja_value value, int indent, int level,
                       bool sort_keys, const char *item_separator, const char *key_separator) {
  if (level > JINJA_MAX_VALUE_DEPTH) return false;
  switch (value.type) {
    case JINJA_NONE: vlm_sb_append_literal(builder, "null"); return true;
    case JINJA_BOOLEAN:
      if (value.as.boolean) vlm_sb_append_literal(builder, "true");
      else vlm_sb_append_literal(builder, "false");
      return true;
    case JINJA_INTEGER: vlm_sb_appendf(builder, "%lld", (long long)value.as.integer); return true;
    case JINJA_FLOAT:
      if (isnan(value.as.number)) vlm_sb_append_literal(builder, "NaN");
      else if (isinf(value.as.number))
        vlm_sb_appendf(builder, "%sInfinity", value.as.number < 0 ? "-" : "");
      else jinja_append_python_float(builder, value.as.number);
      return true;
    case JINJA_STRING:
      append_json_string(builder, value.as.string.chars, value.as.string.length);
      return true;
    case JINJA_LIST: {
      const jinja_list *list = value.as.list;
      if (list->count == 0) {
        vlm_sb_append_literal(builder, "[]");
        return true;
      }
      vlm_sb_append_literal(builder, "[");
      for (size_t i = 0; i < list->count; i++) {
        if (i) vlm_sb_append(builder, item_separator, strlen(item_separator));
        if (indent >= 0) append_newline_indent(builder, indent, level + 1);
        if (!jinja_append_json(builder, list->items[i], indent, level + 1, sort_keys,
                               item_separator, key_separator))
          return false;
      }
      if (indent >= 0) append_newline_indent(builder, indent, level);
      vlm_sb_append_literal(builder, "]");
      return true;
    }
    case JINJA_DICT:
      return append_json_members(builder, value.as.dict, indent, level, sort_keys, item_separator,
                                 key_separator);
    default:
      return false; /* Undefined, namespaces, macros: not JSON serializable */
  }
}

vlm_status jinja_to_string(jinja_renderer *renderer, jinja_value value, int line, int column,
                           jinja_value *out) {
  if (value.type == JINJA_STRING) {
    *out = value;
    return VLM_OK;
  }
  vlm_string_builder builder = {0};
  bool ok = jinja_append_str(&builder, value);
  if (!ok || builder.failed) {
    vlm_sb_release(&builder);
    return jinja_error_at(renderer, line, column, VLM_STATUS_OUT_OF_RANGE,
                          "value nests too deeply to print");
  }
  bool copied = jinja_string_copy(renderer, builder.data ? builder.data : "", builder.length, out);
  vlm_sb_release(&builder);
  if (!copied)
    return jinja_error_at(renderer, line, column, VLM_STATUS_RESOURCE_EXHAUSTED,
                          "template rendering exceeded its memory limit (%zu bytes)",
                          renderer->options.max_memory_bytes);
  return VLM_OK;
}
