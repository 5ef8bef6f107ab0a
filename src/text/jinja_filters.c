/* Jinja filters, tests, global functions and the Python methods of str,
 * dict and list that the sandbox allows, with the semantics of Jinja 3.1 and
 * CPython. Transformers' ImmutableSandboxedEnvironment forbids methods that
 * modify (list.append, dict.update, ...), so they are not offered here. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/status.h"
#include "text/jinja_internal.h"

#define FAIL(code, ...) \
  jinja_error_at(renderer, arguments->line, arguments->column, VLM_STATUS_##code, __VA_ARGS__)

static vlm_status no_memory(jinja_renderer *renderer, const jinja_arguments *arguments) {
  return FAIL(RESOURCE_EXHAUSTED, "template rendering exceeded its memory limit (%zu bytes)",
              renderer->options.max_memory_bytes);
}

const jinja_value *jinja_argument(const jinja_arguments *arguments, size_t index,
                                  const char *name) {
  if (index < arguments->positional_count) return &arguments->positional[index];
  for (size_t i = 0; name && i < arguments->keyword_count; i++)
    if (!strcmp(arguments->keyword_names[i], name)) return &arguments->keyword_values[i];
  return NULL;
}

static jinja_value list_value(jinja_list *list) {
  return (jinja_value){.type = JINJA_LIST, .as.list = list};
}

static vlm_status finish_builder(jinja_renderer *renderer, const jinja_arguments *arguments,
                                 vlm_string_builder *builder, jinja_value *out) {
  bool ok = !builder->failed &&
            jinja_string_copy(renderer, builder->data ? builder->data : "", builder->length, out);
  vlm_sb_release(builder);
  return ok ? VLM_OK : no_memory(renderer, arguments);
}

/* ---- string helpers ------------------------------------------------------ */

/* Decodes the code point at text[*i] and advances *i. */
static uint32_t next_code_point(const char *text, size_t length, size_t *i) {
  unsigned char c = (unsigned char)text[*i];
  size_t extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
  uint32_t code = extra == 3 ? c & 0x07 : extra == 2 ? c & 0x0F : extra == 1 ? c & 0x1F : c;
  (*i)++;
  for (size_t k = 0; k < extra && *i < length; k++) code = (code << 6) | ((unsigned char)text[(*i)++] & 0x3F);
  return code;
}

/* str.isspace() for one code point. */
static bool is_python_space(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

static bool in_character_set(uint32_t code, const jinja_value *characters) {
  if (!characters || characters->type != JINJA_STRING) return is_python_space(code);
  const char *set = characters->as.string.chars;
  size_t length = characters->as.string.length;
  for (size_t i = 0; i < length;)
    if (next_code_point(set, length, &i) == code) return true;
  return false;
}

/* str.strip/lstrip/rstrip with an optional set of characters. */
static jinja_value strip_string(jinja_value text, const jinja_value *characters, bool left, bool right) {
  const char *chars = text.as.string.chars;
  size_t start = 0, end = text.as.string.length;
  if (characters && characters->type == JINJA_NONE) characters = NULL;
  while (left && start < end) {
    size_t next = start;
    if (!in_character_set(next_code_point(chars, end, &next), characters)) break;
    start = next;
  }
  while (right && end > start) {
    size_t previous = end - 1;
    while (previous > start && ((unsigned char)chars[previous] & 0xC0) == 0x80) previous--;
    size_t probe = previous;
    if (!in_character_set(next_code_point(chars, end, &probe), characters)) break;
    end = previous;
  }
  return jinja_string(chars + start, end - start);
}

static bool has_prefix(jinja_value text, jinja_value prefix) {
  return prefix.type == JINJA_STRING && prefix.as.string.length <= text.as.string.length &&
         memcmp(text.as.string.chars, prefix.as.string.chars, prefix.as.string.length) == 0;
}

static bool has_suffix(jinja_value text, jinja_value suffix) {
  return suffix.type == JINJA_STRING && suffix.as.string.length <= text.as.string.length &&
         memcmp(text.as.string.chars + text.as.string.length - suffix.as.string.length,
                suffix.as.string.chars, suffix.as.string.length) == 0;
}

typedef enum case_mode { CASE_UPPER, CASE_LOWER, CASE_TITLE, CASE_CAPITALIZE } case_mode;

/* Case mapping for ASCII letters; other characters pass through. Python's
 * title() starts a word after any non-letter. */
static vlm_status change_case(jinja_renderer *renderer, const jinja_arguments *arguments,
                              jinja_value text, case_mode mode, bool jinja_title, jinja_value *out) {
  char *copy = jinja_allocate(renderer, text.as.string.length + 1);
  if (!copy) return no_memory(renderer, arguments);
  bool word_start = true;
  for (size_t i = 0; i < text.as.string.length; i++) {
    unsigned char c = (unsigned char)text.as.string.chars[i];
    bool letter = isalpha(c) || c >= 0x80;
    switch (mode) {
      case CASE_UPPER: c = (unsigned char)toupper(c); break;
      case CASE_LOWER: c = (unsigned char)tolower(c); break;
      case CASE_CAPITALIZE: c = (unsigned char)(i == 0 ? toupper(c) : tolower(c)); break;
      case CASE_TITLE:
        c = (unsigned char)(word_start ? toupper(c) : tolower(c));
        /* Jinja's title filter splits words on whitespace, '-', '(', '{', '[', '<' */
        if (jinja_title) word_start = isspace(c) || strchr("-({[<", c) != NULL;
        else word_start = !letter;
        break;
    }
    copy[i] = (char)c;
  }
  copy[text.as.string.length] = 0;
  *out = jinja_string(copy, text.as.string.length);
  return VLM_OK;
}

static vlm_status replace_string(jinja_renderer *renderer, const jinja_arguments *arguments,
                                 jinja_value text, jinja_value old, jinja_value replacement,
                                 int64_t count, jinja_value *out) {
  if (old.type != JINJA_STRING || replacement.type != JINJA_STRING)
    return FAIL(INVALID_ARGUMENT, "replace() arguments must be strings");
  vlm_string_builder builder = {0};
  const char *chars = text.as.string.chars;
  size_t length = text.as.string.length, position = 0;
  int64_t done = 0;
  if (old.as.string.length == 0) {
    /* Python inserts the replacement between every character */
    for (size_t i = 0; i <= length; done++) {
      if (count >= 0 && done >= count) {
        vlm_sb_append(&builder, chars + i, length - i);
        break;
      }
      vlm_sb_append(&builder, replacement.as.string.chars, replacement.as.string.length);
      if (i == length) break;
      size_t next = i;
      next_code_point(chars, length, &next);
      vlm_sb_append(&builder, chars + i, next - i);
      i = next;
    }
    return finish_builder(renderer, arguments, &builder, out);
  }
  while (count < 0 || done < count) {
    const char *found = memmem(chars + position, length - position, old.as.string.chars, old.as.string.length);
    if (!found) break;
    size_t at = (size_t)(found - chars);
    vlm_sb_append(&builder, chars + position, at - position);
    vlm_sb_append(&builder, replacement.as.string.chars, replacement.as.string.length);
    position = at + old.as.string.length;
    done++;
    if (builder.length > renderer->options.max_output_bytes) break;
  }
  vlm_sb_append(&builder, chars + position, length - position);
  return finish_builder(renderer, arguments, &builder, out);
}

/* str.split / str.rsplit (rsplit only matters with maxsplit). */
static vlm_status split_string(jinja_renderer *renderer, const jinja_arguments *arguments,
                               jinja_value text, const jinja_value *separator, int64_t max_split,
                               jinja_value *out) {
  jinja_list *list = jinja_list_create(renderer, 0);
  if (!list) return no_memory(renderer, arguments);
  const char *chars = text.as.string.chars;
  size_t length = text.as.string.length;
  if (!separator || separator->type == JINJA_NONE) {
    size_t i = 0;
    int64_t splits = 0;
    for (;;) {
      while (i < length) {
        size_t next = i;
        if (!is_python_space(next_code_point(chars, length, &next))) break;
        i = next;
      }
      if (i >= length) break;
      size_t start = i;
      if (max_split >= 0 && splits >= max_split) {
        /* the rest, with trailing whitespace stripped */
        jinja_value rest = strip_string(jinja_string(chars + start, length - start), NULL, false, true);
        if (!jinja_list_append(renderer, list, rest)) return no_memory(renderer, arguments);
        break;
      }
      while (i < length) {
        size_t next = i;
        if (is_python_space(next_code_point(chars, length, &next))) break;
        i = next;
      }
      if (!jinja_list_append(renderer, list, jinja_string(chars + start, i - start)))
        return no_memory(renderer, arguments);
      splits++;
    }
  } else {
    if (separator->type != JINJA_STRING) return FAIL(INVALID_ARGUMENT, "must be str or None");
    size_t separator_length = separator->as.string.length;
    if (separator_length == 0) return FAIL(INVALID_ARGUMENT, "empty separator");
    size_t position = 0;
    int64_t splits = 0;
    for (;;) {
      const char *found = (max_split < 0 || splits < max_split)
                              ? memmem(chars + position, length - position, separator->as.string.chars, separator_length)
                              : NULL;
      size_t end = found ? (size_t)(found - chars) : length;
      if (!jinja_list_append(renderer, list, jinja_string(chars + position, end - position)))
        return no_memory(renderer, arguments);
      if (!found) break;
      position = end + separator_length;
      splits++;
    }
  }
  *out = list_value(list);
  return VLM_OK;
}

static vlm_status join_values(jinja_renderer *renderer, const jinja_arguments *arguments,
                              jinja_value separator, const jinja_list *items, const jinja_value *attribute,
                              bool require_strings, jinja_value *out) {
  vlm_string_builder builder = {0};
  for (size_t i = 0; i < items->count; i++) {
    if (i) vlm_sb_append(&builder, separator.as.string.chars, separator.as.string.length);
    jinja_value item = items->items[i];
    if (attribute && item.type == JINJA_DICT) {
      const jinja_value *found = jinja_dict_get_value(item.as.dict, *attribute);
      item = found ? *found : jinja_undefined(NULL);
    }
    if (require_strings && item.type != JINJA_STRING) {
      vlm_sb_release(&builder);
      return FAIL(INVALID_ARGUMENT, "sequence item %zu: expected str instance, %s found", i,
                  jinja_type_name(item));
    }
    if (!jinja_append_str(&builder, item)) {
      vlm_sb_release(&builder);
      return FAIL(OUT_OF_RANGE, "value nests too deeply to print");
    }
    if (builder.length > renderer->options.max_output_bytes) {
      vlm_sb_release(&builder);
      return FAIL(RESOURCE_EXHAUSTED, "joined text exceeds the output limit");
    }
  }
  return finish_builder(renderer, arguments, &builder, out);
}

/* Items of anything iterable, as a list (dict: keys; str: characters). */
static vlm_status iterate(jinja_renderer *renderer, const jinja_arguments *arguments,
                          jinja_value value, jinja_list **out) {
  if (value.type == JINJA_LIST) {
    *out = value.as.list;
    return VLM_OK;
  }
  jinja_list *list = jinja_list_create(renderer, 0);
  if (!list) return no_memory(renderer, arguments);
  if (value.type == JINJA_DICT) {
    for (size_t i = 0; i < value.as.dict->count; i++)
      if (!jinja_list_append(renderer, list, value.as.dict->keys[i])) return no_memory(renderer, arguments);
  } else if (value.type == JINJA_STRING) {
    const char *chars = value.as.string.chars;
    size_t length = value.as.string.length;
    for (size_t i = 0; i < length;) {
      size_t start = i;
      next_code_point(chars, length, &i);
      if (!jinja_list_append(renderer, list, jinja_string(chars + start, i - start)))
        return no_memory(renderer, arguments);
    }
  } else if (value.type != JINJA_UNDEFINED) {
    return FAIL(INVALID_ARGUMENT, "'%s' object is not iterable", jinja_type_name(value));
  }
  *out = list;
  return VLM_OK;
}

/* ---- tests ------------------------------------------------------------------ */

static const char *const test_names[] = {
    "defined", "undefined", "none", "boolean", "false", "true", "integer", "float", "number",
    "string", "mapping", "iterable", "sequence", "callable", "sameas", "escaped", "in",
    "lower", "upper", "odd", "even", "divisibleby", "eq", "equalto", "==", "ne", "!=",
    "lt", "lessthan", "<", "le", "<=", "gt", "greaterthan", ">", "ge", ">=", NULL};

int jinja_test_find(const char *name) {
  for (int i = 0; test_names[i]; i++)
    if (!strcmp(test_names[i], name)) return i;
  return -1;
}

vlm_status jinja_apply_test(jinja_renderer *renderer, int test, jinja_value input,
                            const jinja_arguments *arguments, bool *out) {
  const char *name = test_names[test];
  const jinja_value *other = jinja_argument(arguments, 0, NULL);
  jinja_value_type type = input.type;
  if (!strcmp(name, "defined")) *out = type != JINJA_UNDEFINED;
  else if (!strcmp(name, "undefined")) *out = type == JINJA_UNDEFINED;
  else if (!strcmp(name, "none")) *out = type == JINJA_NONE;
  else if (!strcmp(name, "boolean")) *out = type == JINJA_BOOLEAN;
  else if (!strcmp(name, "false")) *out = type == JINJA_BOOLEAN && !input.as.boolean;
  else if (!strcmp(name, "true")) *out = type == JINJA_BOOLEAN && input.as.boolean;
  else if (!strcmp(name, "integer")) *out = type == JINJA_INTEGER;
  else if (!strcmp(name, "float")) *out = type == JINJA_FLOAT;
  else if (!strcmp(name, "number")) *out = type == JINJA_INTEGER || type == JINJA_FLOAT || type == JINJA_BOOLEAN;
  else if (!strcmp(name, "string")) *out = type == JINJA_STRING;
  else if (!strcmp(name, "mapping")) *out = type == JINJA_DICT;
  /* jinja2.Undefined is iterable (as empty) and has len() and [] */
  else if (!strcmp(name, "iterable")) *out = type == JINJA_STRING || type == JINJA_LIST || type == JINJA_DICT || type == JINJA_UNDEFINED;
  else if (!strcmp(name, "sequence")) *out = type == JINJA_STRING || type == JINJA_LIST || type == JINJA_DICT || type == JINJA_UNDEFINED;
  else if (!strcmp(name, "callable")) *out = type == JINJA_MACRO || type == JINJA_FUNCTION;
  else if (!strcmp(name, "escaped")) *out = false;
  else if (!strcmp(name, "lower") || !strcmp(name, "upper")) {
    jinja_value text = {0};
    VLM_RETURN_IF_ERROR(jinja_to_string(renderer, input, arguments->line, arguments->column, &text));
    bool cased = false, matches = true;
    for (size_t i = 0; i < text.as.string.length; i++) {
      int c = (unsigned char)text.as.string.chars[i];
      if (isalpha(c)) {
        cased = true;
        if (name[0] == 'l' ? isupper(c) : islower(c)) matches = false;
      }
    }
    *out = cased && matches;
  } else if (!strcmp(name, "odd") || !strcmp(name, "even") || !strcmp(name, "divisibleby")) {
    int64_t divisor = 2;
    if (name[0] == 'd') {
      if (!other || other->type != JINJA_INTEGER || other->as.integer == 0)
        return FAIL(INVALID_ARGUMENT, "divisibleby needs a non-zero integer");
      divisor = other->as.integer;
    }
    if (type != JINJA_INTEGER && type != JINJA_BOOLEAN)
      return FAIL(INVALID_ARGUMENT, "test '%s' needs an integer, got '%s'", name, jinja_type_name(input));
    int64_t value = type == JINJA_BOOLEAN ? input.as.boolean : input.as.integer;
    int64_t remainder = divisor == -1 ? 0 : value % divisor;
    *out = name[0] == 'o' ? remainder != 0 : remainder == 0;
  } else {
    if (!other) return FAIL(INVALID_ARGUMENT, "test '%s' needs an argument", name);
    if (!strcmp(name, "sameas")) {
      bool scalar = type == JINJA_NONE || type == JINJA_BOOLEAN || type == JINJA_UNDEFINED;
      *out = scalar ? type == other->type && jinja_equal(input, *other)
                    : type == other->type && input.as.list == other->as.list;
    } else if (!strcmp(name, "in")) {
      *out = false;
      if (other->type == JINJA_STRING && type == JINJA_STRING)
        *out = memmem(other->as.string.chars, other->as.string.length, input.as.string.chars,
                      input.as.string.length) != NULL || input.as.string.length == 0;
      else if (other->type == JINJA_LIST)
        for (size_t i = 0; i < other->as.list->count && !*out; i++) *out = jinja_equal(other->as.list->items[i], input);
      else if (other->type == JINJA_DICT) *out = jinja_dict_get_value(other->as.dict, input) != NULL;
      else return FAIL(INVALID_ARGUMENT, "argument of type '%s' is not iterable", jinja_type_name(*other));
    } else if (!strcmp(name, "eq") || !strcmp(name, "equalto") || !strcmp(name, "==")) {
      *out = jinja_equal(input, *other);
    } else if (!strcmp(name, "ne") || !strcmp(name, "!=")) {
      *out = !jinja_equal(input, *other);
    } else {
      int order = 0;
      if (!jinja_compare(input, *other, &order))
        return FAIL(INVALID_ARGUMENT, "'%s' not supported between instances of '%s' and '%s'", name,
                    jinja_type_name(input), jinja_type_name(*other));
      if (!strcmp(name, "lt") || !strcmp(name, "lessthan") || !strcmp(name, "<")) *out = order < 0;
      else if (!strcmp(name, "le") || !strcmp(name, "<=")) *out = order <= 0;
      else if (!strcmp(name, "gt") || !strcmp(name, "greaterthan") || !strcmp(name, ">")) *out = order > 0;
      else *out = order >= 0;
    }
  }
  return VLM_OK;
}

/* ---- filters ---------------------------------------------------------------- */

typedef enum filter_id {
  FILTER_ABS, FILTER_ATTR, FILTER_CAPITALIZE, FILTER_COUNT, FILTER_D, FILTER_DEFAULT,
  FILTER_DICTSORT, FILTER_E, FILTER_ESCAPE, FILTER_FIRST, FILTER_FLOAT, FILTER_INDENT,
  FILTER_INT, FILTER_ITEMS, FILTER_JOIN, FILTER_LAST, FILTER_LENGTH, FILTER_LIST,
  FILTER_LOWER, FILTER_MAP, FILTER_MAX, FILTER_MIN, FILTER_REJECT, FILTER_REJECTATTR,
  FILTER_REPLACE, FILTER_REVERSE, FILTER_ROUND, FILTER_SAFE, FILTER_SELECT,
  FILTER_SELECTATTR, FILTER_SORT, FILTER_STRING, FILTER_SUM, FILTER_TITLE, FILTER_TOJSON,
  FILTER_TRIM, FILTER_UNIQUE, FILTER_UPPER, FILTER_WORDCOUNT, FILTER_COUNT_OF
} filter_id;

static const char *const filter_names[] = {
    "abs", "attr", "capitalize", "count", "d", "default", "dictsort", "e", "escape", "first",
    "float", "indent", "int", "items", "join", "last", "length", "list", "lower", "map",
    "max", "min", "reject", "rejectattr", "replace", "reverse", "round", "safe", "select",
    "selectattr", "sort", "string", "sum", "title", "tojson", "trim", "unique", "upper",
    "wordcount", NULL};

int jinja_filter_find(const char *name) {
  for (int i = 0; filter_names[i]; i++)
    if (!strcmp(filter_names[i], name)) return i;
  return -1;
}

static vlm_status length_of(jinja_renderer *renderer, const jinja_arguments *arguments,
                            jinja_value input, int64_t *out) {
  switch (input.type) {
    case JINJA_UNDEFINED: *out = 0; return VLM_OK;
    case JINJA_STRING: *out = (int64_t)jinja_utf8_length(input.as.string.chars, input.as.string.length); return VLM_OK;
    case JINJA_LIST: *out = (int64_t)input.as.list->count; return VLM_OK;
    case JINJA_DICT: *out = (int64_t)input.as.dict->count; return VLM_OK;
    default: return FAIL(INVALID_ARGUMENT, "object of type '%s' has no len()", jinja_type_name(input));
  }
}

static vlm_status filter_tojson(jinja_renderer *renderer, jinja_value input,
                                const jinja_arguments *arguments, jinja_value *out) {
  const jinja_value *indent = jinja_argument(arguments, 0, "indent");
  const jinja_value *sort_keys = jinja_argument(arguments, 3, "sort_keys");
  const jinja_value *separators = jinja_argument(arguments, 2, "separators");
  const jinja_value *ensure_ascii = jinja_argument(arguments, 1, "ensure_ascii");
  if (ensure_ascii && jinja_truthy(*ensure_ascii))
    return FAIL(UNIMPLEMENTED, "unsupported: tojson(ensure_ascii=true)");
  int indent_width = -1;
  if (indent && indent->type == JINJA_INTEGER) indent_width = (int)(indent->as.integer < 0 ? 0 : indent->as.integer > 64 ? 64 : indent->as.integer);
  else if (indent && indent->type != JINJA_NONE) return FAIL(UNIMPLEMENTED, "unsupported: tojson indent of type '%s'", jinja_type_name(*indent));
  const char *item_separator = indent_width >= 0 ? "," : ", ", *key_separator = ": ";
  if (separators && separators->type == JINJA_LIST) {
    if (separators->as.list->count != 2 || separators->as.list->items[0].type != JINJA_STRING ||
        separators->as.list->items[1].type != JINJA_STRING)
      return FAIL(INVALID_ARGUMENT, "tojson separators must be two strings");
    item_separator = separators->as.list->items[0].as.string.chars;
    key_separator = separators->as.list->items[1].as.string.chars;
  }
  vlm_string_builder builder = {0};
  if (!jinja_append_json(&builder, input, indent_width, 0, sort_keys && jinja_truthy(*sort_keys),
                         item_separator, key_separator)) {
    vlm_sb_release(&builder);
    return FAIL(INVALID_ARGUMENT, "Object of type %s is not JSON serializable (or nests too deeply)",
                jinja_type_name(input));
  }
  return finish_builder(renderer, arguments, &builder, out);
}

static vlm_status filter_indent(jinja_renderer *renderer, jinja_value input,
                                const jinja_arguments *arguments, jinja_value *out) {
  const jinja_value *width = jinja_argument(arguments, 0, "width");
  const jinja_value *first = jinja_argument(arguments, 1, "first");
  const jinja_value *blank = jinja_argument(arguments, 2, "blank");
  vlm_string_builder indentation = {0};
  if (!width) vlm_sb_append_literal(&indentation, "    ");
  else if (width->type == JINJA_STRING) vlm_sb_append(&indentation, width->as.string.chars, width->as.string.length);
  else if (width->type == JINJA_INTEGER)
    for (int64_t i = 0; i < width->as.integer && i < 256; i++) vlm_sb_append_literal(&indentation, " ");
  jinja_value text = {0};
  VLM_RETURN_IF_ERROR(jinja_to_string(renderer, input, arguments->line, arguments->column, &text));
  /* Jinja appends "\n" and splits lines, so a trailing newline is dropped */
  vlm_string_builder builder = {0};
  const char *chars = text.as.string.chars;
  size_t length = text.as.string.length, start = 0;
  bool first_line = true;
  if (first && jinja_truthy(*first)) vlm_sb_append(&builder, indentation.data, indentation.length);
  while (start < length) {
    size_t end = start;
    while (end < length && chars[end] != '\n' && chars[end] != '\r') end++;
    if (!first_line) {
      vlm_sb_append_literal(&builder, "\n");
      if (end > start || (blank && jinja_truthy(*blank))) vlm_sb_append(&builder, indentation.data, indentation.length);
    }
    vlm_sb_append(&builder, chars + start, end - start);
    first_line = false;
    if (end < length && chars[end] == '\r' && end + 1 < length && chars[end + 1] == '\n') end++;
    start = end + 1;
  }
  vlm_sb_release(&indentation);
  return finish_builder(renderer, arguments, &builder, out);
}

/* Attribute lookup used by map/selectattr/sort: dotted paths like "a.b". */
static jinja_value lookup_path(jinja_value item, jinja_value path) {
  if (path.type == JINJA_INTEGER) {
    if (item.type == JINJA_LIST && path.as.integer >= 0 && (size_t)path.as.integer < item.as.list->count)
      return item.as.list->items[path.as.integer];
    return jinja_undefined(NULL);
  }
  if (path.type != JINJA_STRING) return jinja_undefined(NULL);
  const char *chars = path.as.string.chars;
  size_t length = path.as.string.length, start = 0;
  while (start <= length) {
    const char *dot = memchr(chars + start, '.', length - start);
    size_t end = dot ? (size_t)(dot - chars) : length;
    if (item.type != JINJA_DICT && item.type != JINJA_NAMESPACE) return jinja_undefined(NULL);
    const jinja_value *found = jinja_dict_get(item.as.dict, chars + start, end - start);
    if (!found) return jinja_undefined(NULL);
    item = *found;
    start = end + 1;
  }
  return item;
}

/* select/reject/selectattr/rejectattr. */
static vlm_status filter_select(jinja_renderer *renderer, jinja_value input, const jinja_arguments *arguments,
                                bool by_attribute, bool keep_when, jinja_value *out) {
  jinja_list *items = NULL;
  VLM_RETURN_IF_ERROR(iterate(renderer, arguments, input, &items));
  size_t next = 0;
  jinja_value attribute = jinja_none();
  if (by_attribute) {
    if (arguments->positional_count < 1) return FAIL(INVALID_ARGUMENT, "missing attribute for selectattr");
    attribute = arguments->positional[next++];
  }
  int test = -1;
  if (next < arguments->positional_count) {
    jinja_value name = arguments->positional[next++];
    if (name.type != JINJA_STRING || (test = jinja_test_find(name.as.string.chars)) < 0)
      return FAIL(INVALID_ARGUMENT, "No test named '%s'.", name.type == JINJA_STRING ? name.as.string.chars : "?");
  }
  jinja_arguments test_arguments = *arguments;
  test_arguments.positional += next;
  test_arguments.positional_count -= next;
  jinja_list *kept = jinja_list_create(renderer, 0);
  if (!kept) return no_memory(renderer, arguments);
  for (size_t i = 0; i < items->count; i++) {
    jinja_value value = by_attribute ? lookup_path(items->items[i], attribute) : items->items[i];
    bool result = false;
    if (test >= 0) VLM_RETURN_IF_ERROR(jinja_apply_test(renderer, test, value, &test_arguments, &result));
    else result = jinja_truthy(value);
    if (result == keep_when && !jinja_list_append(renderer, kept, items->items[i])) return no_memory(renderer, arguments);
  }
  *out = list_value(kept);
  return VLM_OK;
}

static vlm_status filter_map(jinja_renderer *renderer, jinja_value input, const jinja_arguments *arguments,
                             jinja_value *out) {
  jinja_list *items = NULL;
  VLM_RETURN_IF_ERROR(iterate(renderer, arguments, input, &items));
  jinja_list *mapped = jinja_list_create(renderer, items->count);
  if (!mapped) return no_memory(renderer, arguments);
  const jinja_value *attribute = jinja_argument(arguments, SIZE_MAX, "attribute");
  const jinja_value *fallback = jinja_argument(arguments, SIZE_MAX, "default");
  int filter = -1;
  jinja_arguments filter_arguments = *arguments;
  if (!attribute) {
    if (arguments->positional_count < 1 || arguments->positional[0].type != JINJA_STRING)
      return FAIL(INVALID_ARGUMENT, "map needs a filter name or attribute=");
    filter = jinja_filter_find(arguments->positional[0].as.string.chars);
    if (filter < 0 || filter == FILTER_MAP)
      return FAIL(INVALID_ARGUMENT, "No filter named '%s'.", arguments->positional[0].as.string.chars);
    filter_arguments.positional++;
    filter_arguments.positional_count--;
  }
  for (size_t i = 0; i < items->count; i++) {
    jinja_value value = {0};
    if (attribute) {
      value = lookup_path(items->items[i], *attribute);
      if (value.type == JINJA_UNDEFINED && fallback) value = *fallback;
    } else {
      VLM_RETURN_IF_ERROR(jinja_apply_filter(renderer, filter, items->items[i], &filter_arguments, &value));
    }
    mapped->items[mapped->count++] = value;
  }
  *out = list_value(mapped);
  return VLM_OK;
}

/* Sort key comparison with Jinja's case-insensitive default for strings. */
typedef struct sort_entry {
  jinja_value key;
  jinja_value item;
  size_t index;
} sort_entry;
static bool sort_failed;
static bool sort_case_sensitive;

static int compare_entries(const void *a, const void *b) {
  const sort_entry *x = a, *y = b;
  jinja_value left = x->key, right = y->key;
  int order = 0;
  if (!sort_case_sensitive && left.type == JINJA_STRING && right.type == JINJA_STRING) {
    size_t length = left.as.string.length < right.as.string.length ? left.as.string.length : right.as.string.length;
    for (size_t i = 0; i < length && !order; i++) {
      int c = tolower((unsigned char)left.as.string.chars[i]), d = tolower((unsigned char)right.as.string.chars[i]);
      order = c < d ? -1 : c > d;
    }
    if (!order) order = left.as.string.length < right.as.string.length ? -1 : left.as.string.length > right.as.string.length;
  } else if (!jinja_compare(left, right, &order)) {
    sort_failed = true;
  }
  if (!order) order = x->index < y->index ? -1 : x->index > y->index; /* stable */
  return order;
}

static vlm_status sort_values(jinja_renderer *renderer, const jinja_arguments *arguments, jinja_list *items,
                              const jinja_value *attribute, bool reverse,
                              bool case_sensitive, jinja_value *out) {
  sort_entry *entries = jinja_allocate(renderer, (items->count + 1) * sizeof(sort_entry));
  jinja_list *sorted = jinja_list_create(renderer, items->count);
  if (!entries || !sorted) return no_memory(renderer, arguments);
  for (size_t i = 0; i < items->count; i++) {
    jinja_value item = items->items[i];
    entries[i].item = item;
    entries[i].index = reverse ? items->count - i : i;
    entries[i].key = attribute ? lookup_path(item, *attribute) : item;
  }
  sort_failed = false;
  sort_case_sensitive = case_sensitive;
  qsort(entries, items->count, sizeof(sort_entry), compare_entries);
  if (sort_failed) return FAIL(INVALID_ARGUMENT, "'<' not supported between the items being sorted");
  for (size_t i = 0; i < items->count; i++)
    sorted->items[sorted->count++] = entries[reverse ? items->count - 1 - i : i].item;
  *out = list_value(sorted);
  return VLM_OK;
}

static vlm_status dict_items(jinja_renderer *renderer, const jinja_arguments *arguments, jinja_value input,
                             jinja_value *out) {
  jinja_list *list = jinja_list_create(renderer, input.type == JINJA_DICT ? input.as.dict->count : 0);
  if (!list) return no_memory(renderer, arguments);
  if (input.type == JINJA_DICT || input.type == JINJA_NAMESPACE) {
    for (size_t i = 0; i < input.as.dict->count; i++) {
      jinja_list *pair = jinja_list_create(renderer, 2);
      if (!pair) return no_memory(renderer, arguments);
      pair->is_tuple = true;
      pair->items[0] = input.as.dict->keys[i];
      pair->items[1] = input.as.dict->values[i];
      pair->count = 2;
      if (!jinja_list_append(renderer, list, list_value(pair))) return no_memory(renderer, arguments);
    }
  } else if (input.type != JINJA_UNDEFINED) {
    return FAIL(INVALID_ARGUMENT, "Can only get item pairs from a mapping.");
  }
  *out = list_value(list);
  return VLM_OK;
}

static vlm_status filter_number(jinja_renderer *renderer, filter_id filter, jinja_value input,
                                const jinja_arguments *arguments, jinja_value *out) {
  const jinja_value *fallback = jinja_argument(arguments, 0, "default");
  if (filter == FILTER_INT) {
    if (input.type == JINJA_INTEGER || input.type == JINJA_BOOLEAN) *out = jinja_integer(input.type == JINJA_BOOLEAN ? input.as.boolean : input.as.integer);
    else if (input.type == JINJA_FLOAT && isfinite(input.as.number) && fabs(input.as.number) < 9e18) *out = jinja_integer((int64_t)input.as.number);
    else if (input.type == JINJA_STRING) {
      char *end = NULL;
      errno = 0;
      long long value = strtoll(input.as.string.chars, &end, 10);
      while (end && isspace((unsigned char)*end)) end++;
      bool valid = end && end != input.as.string.chars && *end == 0 && errno == 0;
      *out = valid ? jinja_integer(value) : fallback ? *fallback : jinja_integer(0);
    } else *out = fallback ? *fallback : jinja_integer(0);
    return VLM_OK;
  }
  if (filter == FILTER_FLOAT) {
    if (input.type == JINJA_INTEGER || input.type == JINJA_BOOLEAN || input.type == JINJA_FLOAT)
      *out = jinja_float(input.type == JINJA_FLOAT ? input.as.number : input.type == JINJA_BOOLEAN ? input.as.boolean : (double)input.as.integer);
    else if (input.type == JINJA_STRING) {
      char *end = NULL;
      double value = strtod(input.as.string.chars, &end);
      while (end && isspace((unsigned char)*end)) end++;
      *out = end && end != input.as.string.chars && *end == 0 ? jinja_float(value) : fallback ? *fallback : jinja_float(0.0);
    } else *out = fallback ? *fallback : jinja_float(0.0);
    return VLM_OK;
  }
  if (input.type != JINJA_INTEGER && input.type != JINJA_FLOAT && input.type != JINJA_BOOLEAN)
    return FAIL(INVALID_ARGUMENT, "bad operand type for %s: '%s'", filter_names[filter], jinja_type_name(input));
  double value = input.type == JINJA_FLOAT ? input.as.number : input.type == JINJA_BOOLEAN ? input.as.boolean : (double)input.as.integer;
  if (filter == FILTER_ABS) {
    if (input.type == JINJA_FLOAT) *out = jinja_float(fabs(value));
    else if (input.type == JINJA_INTEGER && input.as.integer == INT64_MIN) return FAIL(OUT_OF_RANGE, "integer overflow");
    else *out = jinja_integer(input.type == JINJA_BOOLEAN ? input.as.boolean : llabs(input.as.integer));
    return VLM_OK;
  }
  /* round(value, precision=0, method='common') always gives a float */
  const jinja_value *precision = jinja_argument(arguments, 0, "precision");
  const jinja_value *method = jinja_argument(arguments, 1, "method");
  int64_t digits = precision && precision->type == JINJA_INTEGER ? precision->as.integer : 0;
  if (digits < -20 || digits > 20) return FAIL(OUT_OF_RANGE, "round precision out of range");
  double scale = pow(10.0, (double)digits);
  double scaled = value * scale;
  const char *how = method && method->type == JINJA_STRING ? method->as.string.chars : "common";
  if (!strcmp(how, "floor")) scaled = floor(scaled);
  else if (!strcmp(how, "ceil")) scaled = ceil(scaled);
  else if (!strcmp(how, "common")) scaled = round(scaled);
  else return FAIL(INVALID_ARGUMENT, "method must be common, ceil or floor");
  *out = jinja_float(scaled / scale);
  return VLM_OK;
}

static vlm_status filter_first_last(jinja_renderer *renderer, jinja_value input, const jinja_arguments *arguments,
                                    bool first, jinja_value *out) {
  jinja_list *items = NULL;
  VLM_RETURN_IF_ERROR(iterate(renderer, arguments, input, &items));
  if (items->count == 0) *out = jinja_undefined(first ? "No first item, sequence was empty." : "No last item, sequence was empty.");
  else *out = items->items[first ? 0 : items->count - 1];
  return VLM_OK;
}

static vlm_status filter_escape(jinja_renderer *renderer, jinja_value input, const jinja_arguments *arguments,
                                jinja_value *out) {
  jinja_value text = {0};
  VLM_RETURN_IF_ERROR(jinja_to_string(renderer, input, arguments->line, arguments->column, &text));
  vlm_string_builder builder = {0};
  for (size_t i = 0; i < text.as.string.length; i++) {
    char c = text.as.string.chars[i];
    switch (c) {
      case '&': vlm_sb_append_literal(&builder, "&amp;"); break;
      case '<': vlm_sb_append_literal(&builder, "&lt;"); break;
      case '>': vlm_sb_append_literal(&builder, "&gt;"); break;
      case '"': vlm_sb_append_literal(&builder, "&#34;"); break;
      case '\'': vlm_sb_append_literal(&builder, "&#39;"); break;
      default: vlm_sb_append(&builder, &c, 1);
    }
  }
  return finish_builder(renderer, arguments, &builder, out);
}

static vlm_status filter_reverse_unique(jinja_renderer *renderer, filter_id filter, jinja_value input,
                                        const jinja_arguments *arguments, jinja_value *out) {
  if (filter == FILTER_REVERSE && input.type == JINJA_STRING) {
    jinja_list *characters;
    VLM_RETURN_IF_ERROR(iterate(renderer, arguments, input, &characters));
    vlm_string_builder builder = {0};
    for (size_t i = characters->count; i > 0; i--)
      vlm_sb_append(&builder, characters->items[i - 1].as.string.chars, characters->items[i - 1].as.string.length);
    return finish_builder(renderer, arguments, &builder, out);
  }
  jinja_list *items = NULL;
  VLM_RETURN_IF_ERROR(iterate(renderer, arguments, input, &items));
  jinja_list *result = jinja_list_create(renderer, items->count);
  if (!result) return no_memory(renderer, arguments);
  for (size_t i = 0; i < items->count; i++) {
    if (filter == FILTER_REVERSE) {
      result->items[result->count++] = items->items[items->count - 1 - i];
      continue;
    }
    bool seen = false;
    for (size_t j = 0; j < result->count && !seen; j++) seen = jinja_equal(result->items[j], items->items[i]);
    if (!seen) result->items[result->count++] = items->items[i];
  }
  *out = list_value(result);
  return VLM_OK;
}

static vlm_status filter_aggregate(jinja_renderer *renderer, filter_id filter, jinja_value input,
                                   const jinja_arguments *arguments, jinja_value *out) {
  jinja_list *items = NULL;
  VLM_RETURN_IF_ERROR(iterate(renderer, arguments, input, &items));
  const jinja_value *attribute = jinja_argument(arguments, filter == FILTER_SUM ? 0 : 1, "attribute");
  if (filter == FILTER_SUM) {
    const jinja_value *start = jinja_argument(arguments, 1, "start");
    jinja_value total = start ? *start : jinja_integer(0);
    for (size_t i = 0; i < items->count; i++) {
      jinja_value value = attribute ? lookup_path(items->items[i], *attribute) : items->items[i];
      bool float_sum = total.type == JINJA_FLOAT || value.type == JINJA_FLOAT;
      if ((total.type != JINJA_INTEGER && total.type != JINJA_FLOAT) ||
          (value.type != JINJA_INTEGER && value.type != JINJA_FLOAT))
        return FAIL(INVALID_ARGUMENT, "sum supports numbers only");
      if (float_sum) {
        double a = total.type == JINJA_FLOAT ? total.as.number : (double)total.as.integer;
        double b = value.type == JINJA_FLOAT ? value.as.number : (double)value.as.integer;
        total = jinja_float(a + b);
      } else {
        int64_t sum;
        if (__builtin_add_overflow(total.as.integer, value.as.integer, &sum)) return FAIL(OUT_OF_RANGE, "integer overflow in sum");
        total = jinja_integer(sum);
      }
    }
    *out = total;
    return VLM_OK;
  }
  const jinja_value *case_sensitive = jinja_argument(arguments, 0, "case_sensitive");
  jinja_value sorted = {0};
  VLM_RETURN_IF_ERROR(sort_values(renderer, arguments, items, attribute, false,
                                  case_sensitive && jinja_truthy(*case_sensitive), &sorted));
  if (sorted.as.list->count == 0) *out = jinja_undefined("No aggregated item, sequence was empty.");
  else *out = sorted.as.list->items[filter == FILTER_MIN ? 0 : sorted.as.list->count - 1];
  return VLM_OK;
}

vlm_status jinja_apply_filter(jinja_renderer *renderer, int filter, jinja_value input,
                              const jinja_arguments *arguments, jinja_value *out) {
  const jinja_value *first = jinja_argument(arguments, 0, NULL);
  switch ((filter_id)filter) {
    case FILTER_SAFE:
      *out = input;
      return VLM_OK;
    case FILTER_D:
    case FILTER_DEFAULT: {
      const jinja_value *fallback = jinja_argument(arguments, 0, "default_value");
      const jinja_value *boolean = jinja_argument(arguments, 1, "boolean");
      bool use_fallback = input.type == JINJA_UNDEFINED || (boolean && jinja_truthy(*boolean) && !jinja_truthy(input));
      *out = use_fallback ? (fallback ? *fallback : jinja_string("", 0)) : input;
      return VLM_OK;
    }
    case FILTER_LENGTH:
    case FILTER_COUNT: {
      int64_t length = 0;
      VLM_RETURN_IF_ERROR(length_of(renderer, arguments, input, &length));
      *out = jinja_integer(length);
      return VLM_OK;
    }
    case FILTER_STRING:
      return jinja_to_string(renderer, input, arguments->line, arguments->column, out);
    case FILTER_TRIM: {
      jinja_value text = {0};
      VLM_RETURN_IF_ERROR(jinja_to_string(renderer, input, arguments->line, arguments->column, &text));
      *out = strip_string(text, jinja_argument(arguments, 0, "chars"), true, true);
      return VLM_OK;
    }
    case FILTER_UPPER:
    case FILTER_LOWER:
    case FILTER_TITLE:
    case FILTER_CAPITALIZE: {
      jinja_value text = {0};
      VLM_RETURN_IF_ERROR(jinja_to_string(renderer, input, arguments->line, arguments->column, &text));
      case_mode mode = filter == FILTER_UPPER ? CASE_UPPER : filter == FILTER_LOWER ? CASE_LOWER
                       : filter == FILTER_TITLE ? CASE_TITLE : CASE_CAPITALIZE;
      return change_case(renderer, arguments, text, mode, true, out);
    }
    case FILTER_REPLACE: {
      jinja_value text = {0};
      VLM_RETURN_IF_ERROR(jinja_to_string(renderer, input, arguments->line, arguments->column, &text));
      const jinja_value *old = jinja_argument(arguments, 0, "old");
      const jinja_value *replacement = jinja_argument(arguments, 1, "new");
      const jinja_value *count = jinja_argument(arguments, 2, "count");
      if (!old || !replacement) return FAIL(INVALID_ARGUMENT, "replace needs two arguments");
      jinja_value old_text = {0}, new_text = {0};
      VLM_RETURN_IF_ERROR(jinja_to_string(renderer, *old, arguments->line, arguments->column, &old_text));
      VLM_RETURN_IF_ERROR(jinja_to_string(renderer, *replacement, arguments->line, arguments->column, &new_text));
      return replace_string(renderer, arguments, text, old_text, new_text,
                            count && count->type == JINJA_INTEGER ? count->as.integer : -1, out);
    }
    case FILTER_JOIN: {
      jinja_list *items = NULL;
      VLM_RETURN_IF_ERROR(iterate(renderer, arguments, input, &items));
      const jinja_value *separator = jinja_argument(arguments, 0, "d");
      jinja_value separator_text = jinja_string("", 0);
      if (separator) VLM_RETURN_IF_ERROR(jinja_to_string(renderer, *separator, arguments->line, arguments->column, &separator_text));
      return join_values(renderer, arguments, separator_text, items, jinja_argument(arguments, 1, "attribute"), false, out);
    }
    case FILTER_FIRST:
    case FILTER_LAST:
      return filter_first_last(renderer, input, arguments, filter == FILTER_FIRST, out);
    case FILTER_LIST: {
      jinja_list *items = NULL;
      VLM_RETURN_IF_ERROR(iterate(renderer, arguments, input, &items));
      jinja_list *copy = jinja_list_create(renderer, items->count);
      if (!copy) return no_memory(renderer, arguments);
      for (size_t i = 0; i < items->count; i++) copy->items[copy->count++] = items->items[i];
      *out = list_value(copy);
      return VLM_OK;
    }
    case FILTER_ITEMS:
      return dict_items(renderer, arguments, input, out);
    case FILTER_DICTSORT: {
      if (input.type != JINJA_DICT) return FAIL(INVALID_ARGUMENT, "dictsort needs a mapping");
      jinja_value pairs = {0};
      VLM_RETURN_IF_ERROR(dict_items(renderer, arguments, input, &pairs));
      const jinja_value *case_sensitive = jinja_argument(arguments, 0, "case_sensitive");
      const jinja_value *by = jinja_argument(arguments, 1, "by");
      const jinja_value *reverse = jinja_argument(arguments, 2, "reverse");
      bool by_value = by && by->type == JINJA_STRING && !strcmp(by->as.string.chars, "value");
      jinja_value index = jinja_integer(by_value ? 1 : 0);
      return sort_values(renderer, arguments, pairs.as.list, &index, reverse && jinja_truthy(*reverse),
                         case_sensitive && jinja_truthy(*case_sensitive), out);
    }
    case FILTER_SORT: {
      jinja_list *items = NULL;
      VLM_RETURN_IF_ERROR(iterate(renderer, arguments, input, &items));
      const jinja_value *reverse = jinja_argument(arguments, 0, "reverse");
      const jinja_value *case_sensitive = jinja_argument(arguments, 1, "case_sensitive");
      const jinja_value *attribute = jinja_argument(arguments, 2, "attribute");
      return sort_values(renderer, arguments, items, attribute, reverse && jinja_truthy(*reverse),
                         case_sensitive && jinja_truthy(*case_sensitive), out);
    }
    case FILTER_MAP:
      return filter_map(renderer, input, arguments, out);
    case FILTER_SELECT:
    case FILTER_REJECT:
      return filter_select(renderer, input, arguments, false, filter == FILTER_SELECT, out);
    case FILTER_SELECTATTR:
    case FILTER_REJECTATTR:
      return filter_select(renderer, input, arguments, true, filter == FILTER_SELECTATTR, out);
    case FILTER_TOJSON:
      return filter_tojson(renderer, input, arguments, out);
    case FILTER_INDENT:
      return filter_indent(renderer, input, arguments, out);
    case FILTER_E:
    case FILTER_ESCAPE:
      return filter_escape(renderer, input, arguments, out);
    case FILTER_ABS:
    case FILTER_INT:
    case FILTER_FLOAT:
    case FILTER_ROUND:
      return filter_number(renderer, (filter_id)filter, input, arguments, out);
    case FILTER_REVERSE:
    case FILTER_UNIQUE:
      return filter_reverse_unique(renderer, (filter_id)filter, input, arguments, out);
    case FILTER_SUM:
    case FILTER_MIN:
    case FILTER_MAX:
      return filter_aggregate(renderer, (filter_id)filter, input, arguments, out);
    case FILTER_ATTR:
      if (!first || first->type != JINJA_STRING) return FAIL(INVALID_ARGUMENT, "attr needs a name");
      if ((input.type == JINJA_DICT && jinja_find_method(renderer, input, first->as.string.chars, out)) ||
          jinja_find_method(renderer, input, first->as.string.chars, out))
        return VLM_OK;
      *out = input.type == JINJA_NAMESPACE && jinja_dict_get_value(input.as.dict, *first)
                 ? *jinja_dict_get_value(input.as.dict, *first)
                 : jinja_undefined(NULL);
      return VLM_OK;
    case FILTER_WORDCOUNT: {
      jinja_value text = {0};
      VLM_RETURN_IF_ERROR(jinja_to_string(renderer, input, arguments->line, arguments->column, &text));
      int64_t words = 0;
      bool in_word = false;
      for (size_t i = 0; i < text.as.string.length; i++) {
        unsigned char c = (unsigned char)text.as.string.chars[i];
        bool word = isalnum(c) || c == '_' || c >= 0x80;
        if (word && !in_word) words++;
        in_word = word;
      }
      *out = jinja_integer(words);
      return VLM_OK;
    }
    case FILTER_COUNT_OF:
      break;
  }
  return FAIL(INTERNAL, "unknown filter");
}

/* ---- methods and global functions -------------------------------------------- */

static const char *const string_methods[] = {
    "strip", "lstrip", "rstrip", "split", "rsplit", "startswith", "endswith", "upper", "lower",
    "title", "capitalize", "replace", "find", "rfind", "count", "join", "isdigit", "isalpha",
    "isalnum", "isspace", "isupper", "islower", "removeprefix", "removesuffix", "splitlines", NULL};
static const char *const dict_methods[] = {"items", "keys", "values", "get", NULL};
static const char *const list_methods[] = {"index", "count", NULL};

static bool in_table(const char *const *table, const char *name) {
  for (size_t i = 0; table[i]; i++)
    if (!strcmp(table[i], name)) return true;
  return false;
}

bool jinja_find_method(jinja_renderer *renderer, jinja_value receiver, const char *name, jinja_value *out) {
  const char *const *table = receiver.type == JINJA_STRING ? string_methods
                             : receiver.type == JINJA_DICT ? dict_methods
                             : receiver.type == JINJA_LIST ? list_methods
                                                           : NULL;
  if (!table || !in_table(table, name)) return false;
  jinja_callable *method = jinja_allocate(renderer, sizeof(*method));
  if (!method) return false;
  memset(method, 0, sizeof(*method));
  method->function = JINJA_FUNCTION_METHOD;
  method->method_name = name;
  method->receiver = receiver;
  *out = (jinja_value){.type = JINJA_FUNCTION, .as.callable = method};
  return true;
}

static vlm_status string_predicate(const char *name, jinja_value text, jinja_value *out) {
  bool result = text.as.string.length > 0, cased = false;
  for (size_t i = 0; i < text.as.string.length; i++) {
    int c = (unsigned char)text.as.string.chars[i];
    if (!strcmp(name, "isdigit")) result = result && isdigit(c);
    else if (!strcmp(name, "isalpha")) result = result && (isalpha(c) || c >= 0x80);
    else if (!strcmp(name, "isalnum")) result = result && (isalnum(c) || c >= 0x80);
    else if (!strcmp(name, "isspace")) result = result && isspace(c);
    else {
      if (isalpha(c)) cased = true;
      if (!strcmp(name, "isupper") ? islower(c) : isupper(c)) result = false;
    }
  }
  if (!strcmp(name, "isupper") || !strcmp(name, "islower")) result = result && cased;
  *out = jinja_boolean(result);
  return VLM_OK;
}

static bool affix_matches(jinja_value text, const jinja_value *affix, bool prefix) {
  if (affix->type == JINJA_LIST) {
    for (size_t i = 0; i < affix->as.list->count; i++)
      if (prefix ? has_prefix(text, affix->as.list->items[i]) : has_suffix(text, affix->as.list->items[i]))
        return true;
    return false;
  }
  return prefix ? has_prefix(text, *affix) : has_suffix(text, *affix);
}

static vlm_status call_string_method(jinja_renderer *renderer, const char *name, jinja_value text,
                                     const jinja_arguments *arguments, jinja_value *out) {
  const jinja_value *first = jinja_argument(arguments, 0, NULL);
  const jinja_value *second = jinja_argument(arguments, 1, NULL);
  if (!strcmp(name, "strip") || !strcmp(name, "lstrip") || !strcmp(name, "rstrip")) {
    if (first && first->type != JINJA_STRING && first->type != JINJA_NONE)
      return FAIL(INVALID_ARGUMENT, "%s arg must be None or str", name);
    *out = strip_string(text, first, name[0] != 'r', name[0] != 'l');
    return VLM_OK;
  }
  if (!strcmp(name, "split") || !strcmp(name, "rsplit")) {
    const jinja_value *separator = jinja_argument(arguments, 0, "sep");
    const jinja_value *max_split = jinja_argument(arguments, 1, "maxsplit");
    int64_t limit = max_split && max_split->type == JINJA_INTEGER ? max_split->as.integer : -1;
    if (name[0] == 'r' && limit >= 0) return FAIL(UNIMPLEMENTED, "unsupported: rsplit with maxsplit");
    return split_string(renderer, arguments, text, separator, limit, out);
  }
  if (!strcmp(name, "splitlines")) {
    jinja_value separator = jinja_string("\n", 1);
    VLM_RETURN_IF_ERROR(split_string(renderer, arguments, text, &separator, -1, out));
    if (out->as.list->count && out->as.list->items[out->as.list->count - 1].as.string.length == 0)
      out->as.list->count--;
    return VLM_OK;
  }
  if (!strcmp(name, "startswith") || !strcmp(name, "endswith")) {
    if (!first) return FAIL(INVALID_ARGUMENT, "%s() takes at least 1 argument", name);
    *out = jinja_boolean(affix_matches(text, first, name[0] == 's'));
    return VLM_OK;
  }
  if (!strcmp(name, "removeprefix") || !strcmp(name, "removesuffix")) {
    if (!first || first->type != JINJA_STRING) return FAIL(INVALID_ARGUMENT, "%s() needs a string", name);
    bool prefix = !strcmp(name, "removeprefix");
    *out = text;
    if (prefix ? has_prefix(text, *first) : has_suffix(text, *first)) {
      out->as.string.length -= first->as.string.length;
      if (prefix) out->as.string.chars += first->as.string.length;
    }
    return VLM_OK;
  }
  if (!strcmp(name, "upper") || !strcmp(name, "lower") || !strcmp(name, "title") || !strcmp(name, "capitalize")) {
    case_mode mode = name[0] == 'u' ? CASE_UPPER : name[0] == 'l' ? CASE_LOWER : name[0] == 't' ? CASE_TITLE : CASE_CAPITALIZE;
    return change_case(renderer, arguments, text, mode, false, out);
  }
  if (!strcmp(name, "replace")) {
    if (!first || !second) return FAIL(INVALID_ARGUMENT, "replace() takes at least 2 arguments");
    const jinja_value *count = jinja_argument(arguments, 2, "count");
    return replace_string(renderer, arguments, text, *first, *second,
                          count && count->type == JINJA_INTEGER ? count->as.integer : -1, out);
  }
  if (!strcmp(name, "find") || !strcmp(name, "rfind") || !strcmp(name, "count")) {
    if (!first || first->type != JINJA_STRING) return FAIL(INVALID_ARGUMENT, "%s() needs a string", name);
    const char *chars = text.as.string.chars;
    size_t length = text.as.string.length, needle = first->as.string.length;
    int64_t result = name[0] == 'c' ? 0 : -1;
    for (size_t i = 0; i + needle <= length; i++) {
      if (memcmp(chars + i, first->as.string.chars, needle) != 0) continue;
      int64_t position = (int64_t)jinja_utf8_length(chars, i);
      if (name[0] == 'f') {
        result = position;
        break;
      }
      if (name[0] == 'r') result = position;
      else {
        result++;
        if (needle) i += needle - 1;
      }
    }
    *out = jinja_integer(result);
    return VLM_OK;
  }
  if (!strcmp(name, "join")) {
    if (!first) return FAIL(INVALID_ARGUMENT, "join() takes exactly one argument");
    jinja_list *items = NULL;
    VLM_RETURN_IF_ERROR(iterate(renderer, arguments, *first, &items));
    return join_values(renderer, arguments, text, items, NULL, true, out);
  }
  return string_predicate(name, text, out);
}

static vlm_status call_method(jinja_renderer *renderer, const jinja_callable *method,
                              const jinja_arguments *arguments, jinja_value *out) {
  jinja_value receiver = method->receiver;
  const char *name = method->method_name;
  const jinja_value *first = jinja_argument(arguments, 0, NULL);
  if (receiver.type == JINJA_STRING) return call_string_method(renderer, name, receiver, arguments, out);
  if (receiver.type == JINJA_DICT) {
    if (!strcmp(name, "items")) return dict_items(renderer, arguments, receiver, out);
    if (!strcmp(name, "get")) {
      if (!first) return FAIL(INVALID_ARGUMENT, "get expected at least 1 argument, got 0");
      const jinja_value *found = jinja_dict_get_value(receiver.as.dict, *first);
      const jinja_value *fallback = jinja_argument(arguments, 1, NULL);
      *out = found ? *found : fallback ? *fallback : jinja_none();
      return VLM_OK;
    }
    jinja_list *list = jinja_list_create(renderer, receiver.as.dict->count);
    if (!list) return no_memory(renderer, arguments);
    for (size_t i = 0; i < receiver.as.dict->count; i++)
      list->items[list->count++] = name[0] == 'k' ? receiver.as.dict->keys[i] : receiver.as.dict->values[i];
    *out = list_value(list);
    return VLM_OK;
  }
  if (!first) return FAIL(INVALID_ARGUMENT, "%s() takes exactly one argument", name);
  int64_t count = 0;
  for (size_t i = 0; i < receiver.as.list->count; i++) {
    if (!jinja_equal(receiver.as.list->items[i], *first)) continue;
    if (name[0] == 'i') {
      *out = jinja_integer((int64_t)i);
      return VLM_OK;
    }
    count++;
  }
  if (name[0] == 'i') return FAIL(INVALID_ARGUMENT, "list.index(x): x not in list");
  *out = jinja_integer(count);
  return VLM_OK;
}

/* The sandbox refuses ranges over 100000 items (jinja2.sandbox.MAX_RANGE). */
static vlm_status call_range(jinja_renderer *renderer, const jinja_arguments *arguments, jinja_value *out) {
  int64_t values[3] = {0, 0, 1};
  size_t count = arguments->positional_count;
  if (count < 1 || count > 3 || arguments->keyword_count) return FAIL(INVALID_ARGUMENT, "range expected 1 to 3 arguments");
  for (size_t i = 0; i < count; i++) {
    jinja_value value = arguments->positional[i];
    if (value.type != JINJA_INTEGER && value.type != JINJA_BOOLEAN)
      return FAIL(INVALID_ARGUMENT, "'%s' object cannot be interpreted as an integer", jinja_type_name(value));
    values[count == 1 ? 1 : i] = value.type == JINJA_BOOLEAN ? value.as.boolean : value.as.integer;
  }
  int64_t start = values[0], stop = values[1], step = values[2];
  if (step == 0) return FAIL(INVALID_ARGUMENT, "range() arg 3 must not be zero");
  double length = step > 0 ? ceil(((double)stop - (double)start) / (double)step)
                           : ceil(((double)start - (double)stop) / (double)-step);
  if (length < 0) length = 0;
  if (length > 100000)
    return FAIL(OUT_OF_RANGE, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  jinja_list *list = jinja_list_create(renderer, (size_t)length);
  if (!list) return no_memory(renderer, arguments);
  for (int64_t i = 0; i < (int64_t)length; i++) list->items[list->count++] = jinja_integer(start + i * step);
  *out = list_value(list);
  return VLM_OK;
}

/* namespace(...) and dict(...): a mapping argument and/or keywords. */
static vlm_status call_mapping(jinja_renderer *renderer, const jinja_arguments *arguments, bool is_namespace,
                               jinja_value *out) {
  jinja_dict *dict = jinja_dict_create(renderer, 0);
  if (!dict) return no_memory(renderer, arguments);
  if (arguments->positional_count > 1) return FAIL(INVALID_ARGUMENT, "expected at most 1 positional argument");
  if (arguments->positional_count == 1) {
    jinja_value source = arguments->positional[0];
    if (source.type != JINJA_DICT) return FAIL(INVALID_ARGUMENT, "expected a mapping, got '%s'", jinja_type_name(source));
    for (size_t i = 0; i < source.as.dict->count; i++)
      if (!jinja_dict_set(renderer, dict, source.as.dict->keys[i], source.as.dict->values[i])) return no_memory(renderer, arguments);
  }
  for (size_t i = 0; i < arguments->keyword_count; i++) {
    const char *name = arguments->keyword_names[i];
    if (!jinja_dict_set(renderer, dict, jinja_string(name, strlen(name)), arguments->keyword_values[i]))
      return no_memory(renderer, arguments);
  }
  for (size_t i = 0; is_namespace && i < dict->count; i++) {
    if (dict->keys[i].type == JINJA_STRING && dict->keys[i].as.string.chars[0] == '_')
      return FAIL(INVALID_ARGUMENT,
                  "Chat templates cannot store underscore-prefixed attributes on a namespace, but got '%s'. "
                  "Please rename the attribute.", dict->keys[i].as.string.chars);
    /* A namespace is one of the places a value survives a loop iteration,
     * so what it holds is bounded like a variable's value (evaluator's
     * check_value_depth). */
    if (jinja_value_depth(dict->values[i], JINJA_MAX_VALUE_DEPTH) < 0)
      return FAIL(OUT_OF_RANGE, "the value of '%s' nests too deeply (more than %d levels)",
                  dict->keys[i].type == JINJA_STRING ? dict->keys[i].as.string.chars : "?",
                  JINJA_MAX_VALUE_DEPTH);
  }
  *out = (jinja_value){.type = is_namespace ? JINJA_NAMESPACE : JINJA_DICT, .as.dict = dict};
  return VLM_OK;
}

static vlm_status call_strftime(jinja_renderer *renderer, const jinja_arguments *arguments, jinja_value *out) {
  const jinja_value *format = jinja_argument(arguments, 0, "format");
  if (!format || format->type != JINJA_STRING) return FAIL(INVALID_ARGUMENT, "strftime_now needs a format string");
  time_t now = renderer->options.fixed_time >= 0 ? (time_t)renderer->options.fixed_time : time(NULL);
  struct tm local;
  if (!localtime_r(&now, &local)) return FAIL(INTERNAL, "localtime failed");
  char buffer[512];
  size_t length = format->as.string.length ? strftime(buffer, sizeof(buffer), format->as.string.chars, &local) : 0;
  if (length == 0 && format->as.string.length) return FAIL(INVALID_ARGUMENT, "strftime_now format gives no text or too much");
  return jinja_string_copy(renderer, buffer, length, out) ? VLM_OK : no_memory(renderer, arguments);
}

vlm_status jinja_call_function(jinja_renderer *renderer, const jinja_callable *callable,
                               const jinja_arguments *arguments, jinja_value *out) {
  switch (callable->function) {
    case JINJA_FUNCTION_RANGE: return call_range(renderer, arguments, out);
    case JINJA_FUNCTION_NAMESPACE: return call_mapping(renderer, arguments, true, out);
    case JINJA_FUNCTION_DICT: return call_mapping(renderer, arguments, false, out);
    case JINJA_FUNCTION_RAISE_EXCEPTION: {
      const jinja_value *message = jinja_argument(arguments, 0, "message");
      jinja_value text = jinja_string("", 0);
      if (message) VLM_RETURN_IF_ERROR(jinja_to_string(renderer, *message, arguments->line, arguments->column, &text));
      return FAIL(INVALID_ARGUMENT, "%.*s", (int)(text.as.string.length > 800 ? 800 : text.as.string.length),
                  text.as.string.chars);
    }
    case JINJA_FUNCTION_STRFTIME_NOW: return call_strftime(renderer, arguments, out);
    case JINJA_FUNCTION_LOOP_CYCLE:
      if (arguments->positional_count == 0) return FAIL(INVALID_ARGUMENT, "no items for cycling given");
      *out = arguments->positional[(size_t)callable->receiver.as.integer % arguments->positional_count];
      return VLM_OK;
    case JINJA_FUNCTION_METHOD: return call_method(renderer, callable, arguments, out);
  }
  return FAIL(INTERNAL, "unknown function");
}
