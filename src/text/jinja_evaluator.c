/* Jinja evaluator: renders a parsed template.
 *
 * Scoping follows Jinja2: `for` bodies and macro bodies get a fresh frame
 * (per loop iteration, so a `set` inside a loop neither survives to the next
 * iteration nor leaks out — the reason templates use namespace()), while
 * `if` bodies share their parent's frame. Name lookup walks outwards through
 * the frames; macros see the frame they were defined in at call time.
 *
 * Undefined values follow jinja2.Undefined: printing gives "", they are
 * false and iterate as empty, but any other use (arithmetic, attribute
 * access, calling) is an error naming what was undefined. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/status.h"
#include "text/jinja_internal.h"

struct jinja_frame {
  jinja_dict *variables;
  jinja_frame *parent;
};

typedef enum flow { FLOW_NORMAL, FLOW_BREAK, FLOW_CONTINUE } flow;

vlm_status jinja_error_at(const jinja_renderer *renderer, int line, int column,
                          vlm_status_code code, const char *format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return vlm_status_make(code, "%s:%d:%d: %s", renderer->source_name, line, column, message);
}

#define ERROR_AT(node, code, ...) \
  jinja_error_at(renderer, (node)->line, (node)->column, VLM_STATUS_##code, __VA_ARGS__)

static vlm_status out_of_memory(jinja_renderer *renderer, int line, int column) {
  return jinja_error_at(renderer, line, column, VLM_STATUS_RESOURCE_EXHAUSTED,
                        "template rendering exceeded its memory limit (%zu bytes)",
                        renderer->options.max_memory_bytes);
}

static vlm_status count_step(jinja_renderer *renderer, int line, int column) {
  if (++renderer->steps > renderer->options.max_steps)
    return jinja_error_at(renderer, line, column, VLM_STATUS_RESOURCE_EXHAUSTED,
                          "template rendering exceeded its step limit (%llu)",
                          (unsigned long long)renderer->options.max_steps);
  return VLM_OK;
}

/* Every recursion of the evaluator passes through evaluate() or
 * render_node(), which count it here: the parser bounds each expression's
 * height and each block's nesting, but macros calling macros stack those,
 * so the total is bounded at run time too and the C stack stays small. */
static vlm_status enter(jinja_renderer *renderer, int line, int column) {
  if (renderer->depth >= JINJA_MAX_RENDER_DEPTH)
    return jinja_error_at(renderer, line, column, VLM_STATUS_RESOURCE_EXHAUSTED,
                          "template rendering nests more than %d levels deep (expressions, "
                          "blocks and macro calls together)", JINJA_MAX_RENDER_DEPTH);
  renderer->depth++;
  return VLM_OK;
}

/* A value stored in a variable, a namespace or a macro parameter may be
 * wrapped again on the next loop iteration or call; bounding it here keeps
 * every value ==, < and the printers see shallow enough to recurse over
 * (one expression can add at most its own height on top). */
static vlm_status check_value_depth(jinja_renderer *renderer, int line, int column, const char *name,
                                    jinja_value value) {
  if (jinja_value_depth(value, JINJA_MAX_VALUE_DEPTH) >= 0) return VLM_OK;
  return jinja_error_at(renderer, line, column, VLM_STATUS_OUT_OF_RANGE,
                        "the value of '%s' nests too deeply (more than %d levels)", name,
                        JINJA_MAX_VALUE_DEPTH);
}

static vlm_status undefined_error(jinja_renderer *renderer, int line, int column,
                                  jinja_value value) {
  return jinja_error_at(renderer, line, column, VLM_STATUS_INVALID_ARGUMENT, "%s",
                        value.as.undefined_hint ? value.as.undefined_hint
                                                : "value is undefined");
}

static jinja_frame *frame_create(jinja_renderer *renderer, jinja_frame *parent) {
  jinja_frame *frame = jinja_allocate(renderer, sizeof(*frame));
  if (!frame) return NULL;
  frame->variables = jinja_dict_create(renderer, 0);
  if (!frame->variables) return NULL;
  frame->parent = parent;
  return frame;
}

static bool frame_set(jinja_renderer *renderer, jinja_frame *frame, const char *name,
                      jinja_value value) {
  return jinja_dict_set(renderer, frame->variables, jinja_string(name, strlen(name)), value);
}

static const jinja_value *frame_lookup(const jinja_frame *frame, const char *name) {
  size_t length = strlen(name);
  for (; frame; frame = frame->parent) {
    const jinja_value *value = jinja_dict_get(frame->variables, name, length);
    if (value) return value;
  }
  return NULL;
}

/* Hints are built lazily into the arena: "'name' is undefined". */
static jinja_value make_undefined(jinja_renderer *renderer, const char *format, const char *a,
                                  const char *b) {
  char buffer[256];
  snprintf(buffer, sizeof(buffer), format, a, b);
  jinja_value hint;
  if (!jinja_string_copy(renderer, buffer, strlen(buffer), &hint)) return jinja_undefined(NULL);
  return jinja_undefined(hint.as.string.chars);
}

static const char *object_name(jinja_value value) {
  switch (value.type) {
    case JINJA_DICT: return "dict object";
    case JINJA_STRING: return "str object";
    case JINJA_LIST: return value.as.list->is_tuple ? "tuple object" : "list object";
    case JINJA_NONE: return "None";
    case JINJA_INTEGER: return "int object";
    case JINJA_FLOAT: return "float object";
    case JINJA_BOOLEAN: return "bool object";
    case JINJA_NAMESPACE: return "jinja2.utils.Namespace object";
    default: return "object";
  }
}

static vlm_status evaluate(jinja_renderer *renderer, jinja_frame *frame,
                           const jinja_expression *expression, jinja_value *out);
static vlm_status render_body(jinja_renderer *renderer, jinja_frame *frame,
                              const jinja_node *node, flow *out_flow);

/* ---- attribute and item access ------------------------------------------ */

static vlm_status get_attribute(jinja_renderer *renderer, const jinja_expression *at,
                                jinja_value object, const char *name, jinja_value *out) {
  if (object.type == JINJA_UNDEFINED) return undefined_error(renderer, at->line, at->column, object);
  size_t length = strlen(name);
  if (object.type == JINJA_NAMESPACE || object.type == JINJA_DICT) {
    /* getattr first: on a dict, `x.items` is the method, as in Jinja */
    if (object.type == JINJA_DICT && jinja_find_method(renderer, object, name, out)) return VLM_OK;
    const jinja_value *found = jinja_dict_get(object.as.dict, name, length);
    if (found) {
      *out = *found;
      return VLM_OK;
    }
  } else if (jinja_find_method(renderer, object, name, out)) {
    return VLM_OK;
  }
  *out = make_undefined(renderer, "'%s' has no attribute '%s'", object_name(object), name);
  return VLM_OK;
}

/* Python index normalisation: negative counts from the end. */
static bool normalise_index(int64_t index, size_t count, size_t *out) {
  if (index < 0) index += (int64_t)count;
  if (index < 0 || (uint64_t)index >= count) return false;
  *out = (size_t)index;
  return true;
}

static vlm_status get_item(jinja_renderer *renderer, const jinja_expression *at,
                           jinja_value object, jinja_value key, jinja_value *out) {
  if (object.type == JINJA_UNDEFINED) return undefined_error(renderer, at->line, at->column, object);
  if (object.type == JINJA_DICT || object.type == JINJA_NAMESPACE) {
    const jinja_value *found = jinja_dict_get_value(object.as.dict, key);
    if (found) {
      *out = *found;
      return VLM_OK;
    }
    if (key.type == JINJA_STRING && object.type == JINJA_DICT &&
        jinja_find_method(renderer, object, key.as.string.chars, out))
      return VLM_OK;
  } else if ((object.type == JINJA_LIST || object.type == JINJA_STRING) &&
             (key.type == JINJA_INTEGER || key.type == JINJA_BOOLEAN)) {
    int64_t index = key.type == JINJA_BOOLEAN ? key.as.boolean : key.as.integer;
    size_t position;
    if (object.type == JINJA_LIST) {
      if (normalise_index(index, object.as.list->count, &position)) {
        *out = object.as.list->items[position];
        return VLM_OK;
      }
    } else {
      const char *chars = object.as.string.chars;
      size_t length = object.as.string.length;
      if (normalise_index(index, jinja_utf8_length(chars, length), &position)) {
        size_t start = jinja_utf8_offset(chars, length, position);
        size_t end = jinja_utf8_offset(chars, length, position + 1);
        *out = jinja_string(chars + start, end - start);
        return VLM_OK;
      }
    }
  } else if (key.type == JINJA_STRING && jinja_find_method(renderer, object, key.as.string.chars, out)) {
    return VLM_OK;
  }
  vlm_string_builder text = {0};
  jinja_append_repr(&text, key, 0);
  *out = make_undefined(renderer, "'%s' has no attribute %s", object_name(object),
                        text.data ? text.data : "");
  vlm_sb_release(&text);
  return VLM_OK;
}

/* Python slice semantics for lists and strings (by code point). */
static vlm_status get_slice(jinja_renderer *renderer, const jinja_expression *at,
                            jinja_value object, const jinja_value bounds[3], jinja_value *out) {
  if (object.type == JINJA_UNDEFINED) return undefined_error(renderer, at->line, at->column, object);
  int64_t values[3] = {0, 0, 1};
  bool present[3];
  for (int i = 0; i < 3; i++) {
    present[i] = bounds[i].type != JINJA_NONE && bounds[i].type != JINJA_UNDEFINED;
    if (!present[i]) continue;
    if (bounds[i].type != JINJA_INTEGER)
      return ERROR_AT(at, INVALID_ARGUMENT, "slice indices must be integers or None");
    values[i] = bounds[i].as.integer;
  }
  int64_t step = values[2];
  if (step == 0) return ERROR_AT(at, INVALID_ARGUMENT, "slice step cannot be zero");
  size_t count;
  if (object.type == JINJA_LIST) count = object.as.list->count;
  else if (object.type == JINJA_STRING)
    count = jinja_utf8_length(object.as.string.chars, object.as.string.length);
  else
    return ERROR_AT(at, INVALID_ARGUMENT, "'%s' object is not subscriptable", jinja_type_name(object));
  int64_t length = (int64_t)count;
  int64_t start, stop;
  for (int i = 0; i < 2; i++) {
    int64_t *target = i == 0 ? &start : &stop;
    if (!present[i]) {
      if (i == 0) *target = step > 0 ? 0 : length - 1;
      else *target = step > 0 ? length : -1;
      continue;
    }
    int64_t value = values[i];
    if (value < 0) value += length;
    if (step > 0) value = value < 0 ? 0 : value > length ? length : value;
    else value = value < -1 ? -1 : value > length - 1 ? length - 1 : value;
    *target = value;
  }
  jinja_list *list = jinja_list_create(renderer, 0);
  if (!list) return out_of_memory(renderer, at->line, at->column);
  vlm_string_builder text = {0};
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (object.type == JINJA_LIST) {
      if (!jinja_list_append(renderer, list, object.as.list->items[i]))
        return out_of_memory(renderer, at->line, at->column);
    } else {
      const char *chars = object.as.string.chars;
      size_t begin = jinja_utf8_offset(chars, object.as.string.length, (size_t)i);
      size_t end = jinja_utf8_offset(chars, object.as.string.length, (size_t)i + 1);
      vlm_sb_append(&text, chars + begin, end - begin);
    }
  }
  if (object.type == JINJA_LIST) {
    list->is_tuple = object.as.list->is_tuple;
    *out = (jinja_value){.type = JINJA_LIST, .as.list = list};
    return VLM_OK;
  }
  bool ok = !text.failed && jinja_string_copy(renderer, text.data ? text.data : "", text.length, out);
  vlm_sb_release(&text);
  return ok ? VLM_OK : out_of_memory(renderer, at->line, at->column);
}

/* ---- operators ------------------------------------------------------------ */

static vlm_status concatenate(jinja_renderer *renderer, const jinja_expression *at,
                              jinja_value left, jinja_value right, jinja_value *out) {
  size_t length;
  if (!vlm_size_add(left.as.string.length, right.as.string.length, &length))
    return out_of_memory(renderer, at->line, at->column);
  char *text = jinja_allocate(renderer, length + 1);
  if (!text) return out_of_memory(renderer, at->line, at->column);
  memcpy(text, left.as.string.chars, left.as.string.length);
  memcpy(text + left.as.string.length, right.as.string.chars, right.as.string.length);
  text[length] = 0;
  *out = jinja_string(text, length);
  return VLM_OK;
}

static bool is_number(jinja_value value) {
  return value.type == JINJA_INTEGER || value.type == JINJA_FLOAT || value.type == JINJA_BOOLEAN;
}
static double as_double(jinja_value value) {
  return value.type == JINJA_FLOAT ? value.as.number
         : value.type == JINJA_BOOLEAN ? (double)value.as.boolean
                                       : (double)value.as.integer;
}
static int64_t as_integer(jinja_value value) {
  return value.type == JINJA_BOOLEAN ? value.as.boolean : value.as.integer;
}

static vlm_status repeat(jinja_renderer *renderer, const jinja_expression *at, jinja_value sequence,
                         int64_t times, jinja_value *out) {
  if (times < 0) times = 0;
  if (sequence.type == JINJA_STRING) {
    size_t total;
    if (!vlm_size_multiply(sequence.as.string.length, (size_t)times, &total) ||
        total > renderer->options.max_output_bytes)
      return out_of_memory(renderer, at->line, at->column);
    char *text = jinja_allocate(renderer, total + 1);
    if (!text) return out_of_memory(renderer, at->line, at->column);
    for (int64_t i = 0; i < times; i++)
      memcpy(text + (size_t)i * sequence.as.string.length, sequence.as.string.chars,
             sequence.as.string.length);
    text[total] = 0;
    *out = jinja_string(text, total);
    return VLM_OK;
  }
  size_t total;
  if (!vlm_size_multiply(sequence.as.list->count, (size_t)times, &total))
    return out_of_memory(renderer, at->line, at->column);
  jinja_list *list = jinja_list_create(renderer, total);
  if (!list) return out_of_memory(renderer, at->line, at->column);
  for (int64_t i = 0; i < times; i++)
    for (size_t j = 0; j < sequence.as.list->count; j++) list->items[list->count++] = sequence.as.list->items[j];
  list->is_tuple = sequence.as.list->is_tuple;
  *out = (jinja_value){.type = JINJA_LIST, .as.list = list};
  return VLM_OK;
}

static vlm_status arithmetic(jinja_renderer *renderer, const jinja_expression *at,
                             const char *operation, jinja_value left, jinja_value right,
                             jinja_value *out) {
  if (left.type == JINJA_UNDEFINED) return undefined_error(renderer, at->line, at->column, left);
  if (right.type == JINJA_UNDEFINED) return undefined_error(renderer, at->line, at->column, right);
  char op = operation[0];
  bool is_floor = !strcmp(operation, "//"), is_power = !strcmp(operation, "**");
  if (op == '+' && left.type == JINJA_STRING && right.type == JINJA_STRING)
    return concatenate(renderer, at, left, right, out);
  if (op == '+' && left.type == JINJA_LIST && right.type == JINJA_LIST &&
      left.as.list->is_tuple == right.as.list->is_tuple) {
    jinja_list *list = jinja_list_create(renderer, left.as.list->count + right.as.list->count);
    if (!list) return out_of_memory(renderer, at->line, at->column);
    for (size_t i = 0; i < left.as.list->count; i++) list->items[list->count++] = left.as.list->items[i];
    for (size_t i = 0; i < right.as.list->count; i++) list->items[list->count++] = right.as.list->items[i];
    list->is_tuple = left.as.list->is_tuple;
    *out = (jinja_value){.type = JINJA_LIST, .as.list = list};
    return VLM_OK;
  }
  if (op == '*' && !is_power && (left.type == JINJA_STRING || left.type == JINJA_LIST) &&
      (right.type == JINJA_INTEGER || right.type == JINJA_BOOLEAN))
    return repeat(renderer, at, left, as_integer(right), out);
  if (op == '*' && !is_power && (right.type == JINJA_STRING || right.type == JINJA_LIST) &&
      (left.type == JINJA_INTEGER || left.type == JINJA_BOOLEAN))
    return repeat(renderer, at, right, as_integer(left), out);
  if (op == '%' && left.type == JINJA_STRING)
    return ERROR_AT(at, UNIMPLEMENTED, "unsupported: %%-formatting of strings");
  if (!is_number(left) || !is_number(right)) {
    if (op == '+' && left.type == JINJA_STRING)
      return ERROR_AT(at, INVALID_ARGUMENT, "can only concatenate str (not \"%s\") to str",
                      jinja_type_name(right));
    if (op == '+' && left.type == JINJA_LIST)
      return ERROR_AT(at, INVALID_ARGUMENT, "can only concatenate list (not \"%s\") to list",
                      jinja_type_name(right));
    return ERROR_AT(at, INVALID_ARGUMENT, "unsupported operand type(s) for %s: '%s' and '%s'",
                    operation, jinja_type_name(left), jinja_type_name(right));
  }
  bool integers = left.type != JINJA_FLOAT && right.type != JINJA_FLOAT;
  if (op == '/' && !is_floor) {
    if (as_double(right) == 0.0) return ERROR_AT(at, INVALID_ARGUMENT, "division by zero");
    *out = jinja_float(as_double(left) / as_double(right));
    return VLM_OK;
  }
  if (integers) {
    int64_t a = as_integer(left), b = as_integer(right), result = 0;
    bool overflow = false;
    if (op == '+') overflow = __builtin_add_overflow(a, b, &result);
    else if (op == '-') overflow = __builtin_sub_overflow(a, b, &result);
    else if (is_power) {
      if (b < 0) {
        *out = jinja_float(pow((double)a, (double)b));
        return VLM_OK;
      }
      result = 1;
      for (int64_t i = 0; i < b && !overflow; i++) overflow = __builtin_mul_overflow(result, a, &result);
    } else if (op == '*') overflow = __builtin_mul_overflow(a, b, &result);
    else {
      if (b == 0) return ERROR_AT(at, INVALID_ARGUMENT, "integer division or modulo by zero");
      if (a == INT64_MIN && b == -1) overflow = true;
      else {
        int64_t quotient = a / b, remainder = a % b;
        if (remainder != 0 && ((remainder < 0) != (b < 0))) {
          quotient--;
          remainder += b;
        }
        result = is_floor ? quotient : remainder;
      }
    }
    if (overflow) return ERROR_AT(at, OUT_OF_RANGE, "integer overflow in '%s'", operation);
    *out = jinja_integer(result);
    return VLM_OK;
  }
  double a = as_double(left), b = as_double(right), result;
  if (op == '+') result = a + b;
  else if (op == '-') result = a - b;
  else if (is_power) result = pow(a, b);
  else if (op == '*') result = a * b;
  else {
    if (b == 0.0) return ERROR_AT(at, INVALID_ARGUMENT, "float division by zero");
    double quotient = floor(a / b);
    result = is_floor ? quotient : a - b * quotient;
  }
  *out = jinja_float(result);
  return VLM_OK;
}

static vlm_status contains(jinja_renderer *renderer, const jinja_expression *at,
                           jinja_value needle, jinja_value haystack, bool *out) {
  if (haystack.type == JINJA_UNDEFINED)
    return undefined_error(renderer, at->line, at->column, haystack);
  if (haystack.type == JINJA_STRING) {
    if (needle.type == JINJA_UNDEFINED) return undefined_error(renderer, at->line, at->column, needle);
    if (needle.type != JINJA_STRING)
      return ERROR_AT(at, INVALID_ARGUMENT, "'in <string>' requires string as left operand, not %s",
                      jinja_type_name(needle));
    *out = needle.as.string.length == 0 ||
           memmem(haystack.as.string.chars, haystack.as.string.length, needle.as.string.chars,
                  needle.as.string.length) != NULL;
    return VLM_OK;
  }
  if (haystack.type == JINJA_LIST) {
    *out = false;
    for (size_t i = 0; i < haystack.as.list->count && !*out; i++)
      *out = jinja_equal(haystack.as.list->items[i], needle);
    return VLM_OK;
  }
  if (haystack.type == JINJA_DICT) {
    *out = jinja_dict_get_value(haystack.as.dict, needle) != NULL;
    return VLM_OK;
  }
  return ERROR_AT(at, INVALID_ARGUMENT, "argument of type '%s' is not iterable",
                  jinja_type_name(haystack));
}

static vlm_status compare_values(jinja_renderer *renderer, const jinja_expression *at,
                                 const char *operation, jinja_value left, jinja_value right,
                                 bool *out) {
  if (!strcmp(operation, "==")) *out = jinja_equal(left, right);
  else if (!strcmp(operation, "!=")) *out = !jinja_equal(left, right);
  else if (!strcmp(operation, "in")) return contains(renderer, at, left, right, out);
  else if (!strcmp(operation, "not in")) {
    VLM_RETURN_IF_ERROR(contains(renderer, at, left, right, out));
    *out = !*out;
  } else {
    if (left.type == JINJA_UNDEFINED) return undefined_error(renderer, at->line, at->column, left);
    if (right.type == JINJA_UNDEFINED) return undefined_error(renderer, at->line, at->column, right);
    int order = 0;
    if (!jinja_compare(left, right, &order))
      return ERROR_AT(at, INVALID_ARGUMENT, "'%s' not supported between instances of '%s' and '%s'",
                      operation, jinja_type_name(left), jinja_type_name(right));
    if (!strcmp(operation, "<")) *out = order < 0;
    else if (!strcmp(operation, "<=")) *out = order <= 0;
    else if (!strcmp(operation, ">")) *out = order > 0;
    else *out = order >= 0;
  }
  return VLM_OK;
}

/* ---- calls ------------------------------------------------------------------ */

static vlm_status evaluate_arguments(jinja_renderer *renderer, jinja_frame *frame,
                                     const jinja_call_argument *list, const jinja_expression *at,
                                     jinja_value *first, jinja_arguments *out) {
  size_t positional = first ? 1 : 0, keyword = 0;
  for (const jinja_call_argument *a = list; a; a = a->next) a->name ? keyword++ : positional++;
  memset(out, 0, sizeof(*out));
  out->line = at->line;
  out->column = at->column;
  out->positional = jinja_allocate(renderer, (positional + 1) * sizeof(jinja_value));
  out->keyword_values = jinja_allocate(renderer, (keyword + 1) * sizeof(jinja_value));
  out->keyword_names = jinja_allocate(renderer, (keyword + 1) * sizeof(const char *));
  if (!out->positional || !out->keyword_values || !out->keyword_names)
    return out_of_memory(renderer, at->line, at->column);
  if (first) out->positional[out->positional_count++] = *first;
  for (const jinja_call_argument *a = list; a; a = a->next) {
    jinja_value value = {0};
    VLM_RETURN_IF_ERROR(evaluate(renderer, frame, a->value, &value));
    if (a->name) {
      out->keyword_names[out->keyword_count] = a->name;
      out->keyword_values[out->keyword_count++] = value;
    } else {
      out->positional[out->positional_count++] = value;
    }
  }
  return VLM_OK;
}

static vlm_status call_macro(jinja_renderer *renderer, const jinja_expression *at,
                             const jinja_callable *macro, const jinja_arguments *arguments,
                             jinja_value *out) {
  const jinja_node *definition = macro->macro;
  if (arguments->positional_count > definition->parameter_count)
    return ERROR_AT(at, INVALID_ARGUMENT, "macro '%s' takes not more than %zu argument(s)",
                    definition->target.name, definition->parameter_count);
  if (renderer->call_depth >= renderer->options.max_call_depth)
    return ERROR_AT(at, RESOURCE_EXHAUSTED, "macro calls nest more than %d deep",
                    renderer->options.max_call_depth);
  jinja_frame *frame = frame_create(renderer, macro->closure);
  if (!frame) return out_of_memory(renderer, at->line, at->column);
  for (size_t k = 0; k < arguments->keyword_count; k++) {
    bool known = false;
    for (size_t p = 0; p < definition->parameter_count; p++)
      if (!strcmp(definition->parameters[p], arguments->keyword_names[k])) known = true;
    if (!known)
      return ERROR_AT(at, INVALID_ARGUMENT, "macro '%s' takes no keyword argument '%s'",
                      definition->target.name, arguments->keyword_names[k]);
  }
  for (size_t p = 0; p < definition->parameter_count; p++) {
    const jinja_value *given = jinja_argument(arguments, p, definition->parameters[p]);
    jinja_value value = jinja_undefined(NULL);
    if (given) value = *given;
    else if (definition->defaults[p])
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, definition->defaults[p], &value));
    else
      value = make_undefined(renderer, "parameter '%s' was not provided%s", definition->parameters[p], "");
    VLM_RETURN_IF_ERROR(check_value_depth(renderer, at->line, at->column, definition->parameters[p], value));
    if (!frame_set(renderer, frame, definition->parameters[p], value))
      return out_of_memory(renderer, at->line, at->column);
  }
  vlm_string_builder *saved = renderer->output;
  vlm_string_builder captured = {0};
  renderer->output = &captured;
  renderer->call_depth++;
  flow ignored;
  vlm_status status = render_body(renderer, frame, definition->body, &ignored);
  renderer->call_depth--;
  renderer->output = saved;
  if (status == VLM_OK && (captured.failed ||
                           !jinja_string_copy(renderer, captured.data ? captured.data : "",
                                              captured.length, out)))
    status = out_of_memory(renderer, at->line, at->column);
  vlm_sb_release(&captured);
  return status;
}

static vlm_status evaluate_call(jinja_renderer *renderer, jinja_frame *frame,
                                const jinja_expression *expression, jinja_value *out) {
  jinja_value callee = {0};
  VLM_RETURN_IF_ERROR(evaluate(renderer, frame, expression->first, &callee));
  if (callee.type == JINJA_UNDEFINED)
    return undefined_error(renderer, expression->line, expression->column, callee);
  if (callee.type != JINJA_MACRO && callee.type != JINJA_FUNCTION)
    return ERROR_AT(expression, INVALID_ARGUMENT, "'%s' object is not callable",
                    jinja_type_name(callee));
  jinja_arguments arguments;
  VLM_RETURN_IF_ERROR(evaluate_arguments(renderer, frame, expression->arguments, expression,
                                         NULL, &arguments));
  if (callee.type == JINJA_MACRO)
    return call_macro(renderer, expression, callee.as.callable, &arguments, out);
  return jinja_call_function(renderer, callee.as.callable, &arguments, out);
}

/* ---- expressions ------------------------------------------------------------ */

static vlm_status evaluate_sequence(jinja_renderer *renderer, jinja_frame *frame,
                                    const jinja_expression *expression, jinja_value *out) {
  if (expression->kind == JINJA_EXPRESSION_DICT) {
    jinja_dict *dict = jinja_dict_create(renderer, 0);
    if (!dict) return out_of_memory(renderer, expression->line, expression->column);
    for (const jinja_expression *key = expression->children; key; key = key->next->next) {
      jinja_value key_value = {0}, value = {0};
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, key, &key_value));
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, key->next, &value));
      if (!jinja_dict_set(renderer, dict, key_value, value))
        return out_of_memory(renderer, expression->line, expression->column);
    }
    *out = (jinja_value){.type = JINJA_DICT, .as.dict = dict};
    return VLM_OK;
  }
  jinja_list *list = jinja_list_create(renderer, 0);
  if (!list) return out_of_memory(renderer, expression->line, expression->column);
  list->is_tuple = expression->kind == JINJA_EXPRESSION_TUPLE;
  for (const jinja_expression *item = expression->children; item; item = item->next) {
    jinja_value value = {0};
    VLM_RETURN_IF_ERROR(evaluate(renderer, frame, item, &value));
    if (!jinja_list_append(renderer, list, value))
      return out_of_memory(renderer, expression->line, expression->column);
  }
  *out = (jinja_value){.type = JINJA_LIST, .as.list = list};
  return VLM_OK;
}

static vlm_status evaluate_compare(jinja_renderer *renderer, jinja_frame *frame,
                                   const jinja_expression *expression, jinja_value *out) {
  jinja_value left = {0};
  VLM_RETURN_IF_ERROR(evaluate(renderer, frame, expression->children, &left));
  for (const jinja_expression *step = expression->children->next; step; step = step->next) {
    jinja_value right = {0};
    VLM_RETURN_IF_ERROR(evaluate(renderer, frame, step->second, &right));
    bool result = false;
    VLM_RETURN_IF_ERROR(compare_values(renderer, step, step->name, left, right, &result));
    if (!result) {
      *out = jinja_boolean(false);
      return VLM_OK;
    }
    left = right;
  }
  *out = jinja_boolean(true);
  return VLM_OK;
}

static vlm_status evaluate_filter(jinja_renderer *renderer, jinja_frame *frame,
                                  const jinja_expression *expression, jinja_value input,
                                  jinja_value *out) {
  jinja_arguments arguments;
  VLM_RETURN_IF_ERROR(evaluate_arguments(renderer, frame, expression->arguments, expression,
                                         NULL, &arguments));
  return jinja_apply_filter(renderer, expression->builtin, input, &arguments, out);
}

static vlm_status evaluate_expression(jinja_renderer *renderer, jinja_frame *frame,
                                      const jinja_expression *expression, jinja_value *out) {
  VLM_RETURN_IF_ERROR(count_step(renderer, expression->line, expression->column));
  jinja_value a = {0}, b = {0};
  switch (expression->kind) {
    case JINJA_EXPRESSION_LITERAL:
      *out = expression->literal;
      return VLM_OK;
    case JINJA_EXPRESSION_NAME: {
      const jinja_value *found = frame_lookup(frame, expression->name);
      *out = found ? *found : make_undefined(renderer, "'%s' is undefined", expression->name, "");
      return VLM_OK;
    }
    case JINJA_EXPRESSION_LIST:
    case JINJA_EXPRESSION_TUPLE:
    case JINJA_EXPRESSION_DICT:
      return evaluate_sequence(renderer, frame, expression, out);
    case JINJA_EXPRESSION_ATTRIBUTE:
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, expression->first, &a));
      return get_attribute(renderer, expression, a, expression->name, out);
    case JINJA_EXPRESSION_SUBSCRIPT:
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, expression->first, &a));
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, expression->second, &b));
      return get_item(renderer, expression, a, b, out);
    case JINJA_EXPRESSION_SLICE: {
      jinja_value bounds[3] = {jinja_none(), jinja_none(), jinja_none()};
      const jinja_expression *parts[3] = {expression->second, expression->third, expression->fourth};
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, expression->first, &a));
      for (int i = 0; i < 3; i++)
        if (parts[i]) VLM_RETURN_IF_ERROR(evaluate(renderer, frame, parts[i], &bounds[i]));
      return get_slice(renderer, expression, a, bounds, out);
    }
    case JINJA_EXPRESSION_CALL:
      return evaluate_call(renderer, frame, expression, out);
    case JINJA_EXPRESSION_FILTER:
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, expression->first, &a));
      return evaluate_filter(renderer, frame, expression, a, out);
    case JINJA_EXPRESSION_TEST: {
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, expression->first, &a));
      jinja_arguments arguments;
      VLM_RETURN_IF_ERROR(evaluate_arguments(renderer, frame, expression->arguments, expression,
                                             NULL, &arguments));
      bool result = false;
      VLM_RETURN_IF_ERROR(jinja_apply_test(renderer, expression->builtin, a, &arguments, &result));
      *out = jinja_boolean(result != expression->negated);
      return VLM_OK;
    }
    case JINJA_EXPRESSION_UNARY:
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, expression->first, &a));
      if (a.type == JINJA_UNDEFINED) return undefined_error(renderer, expression->line, expression->column, a);
      if (!is_number(a))
        return ERROR_AT(expression, INVALID_ARGUMENT, "bad operand type for unary %s: '%s'",
                        expression->name, jinja_type_name(a));
      if (expression->name[0] == '+') *out = a.type == JINJA_BOOLEAN ? jinja_integer(a.as.boolean) : a;
      else if (a.type == JINJA_FLOAT) *out = jinja_float(-a.as.number);
      else if (as_integer(a) == INT64_MIN) return ERROR_AT(expression, OUT_OF_RANGE, "integer overflow");
      else *out = jinja_integer(-as_integer(a));
      return VLM_OK;
    case JINJA_EXPRESSION_BINARY:
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, expression->first, &a));
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, expression->second, &b));
      if (expression->name[0] == '~') {
        jinja_value left = {0}, right = {0};
        VLM_RETURN_IF_ERROR(jinja_to_string(renderer, a, expression->line, expression->column, &left));
        VLM_RETURN_IF_ERROR(jinja_to_string(renderer, b, expression->line, expression->column, &right));
        return concatenate(renderer, expression, left, right, out);
      }
      return arithmetic(renderer, expression, expression->name, a, b, out);
    case JINJA_EXPRESSION_COMPARE:
      return evaluate_compare(renderer, frame, expression, out);
    case JINJA_EXPRESSION_AND:
    case JINJA_EXPRESSION_OR:
      /* Python semantics: the deciding operand itself is the result. */
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, expression->first, &a));
      if (jinja_truthy(a) == (expression->kind == JINJA_EXPRESSION_OR)) {
        *out = a;
        return VLM_OK;
      }
      return evaluate(renderer, frame, expression->second, out);
    case JINJA_EXPRESSION_NOT:
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, expression->first, &a));
      *out = jinja_boolean(!jinja_truthy(a));
      return VLM_OK;
    case JINJA_EXPRESSION_CONDITIONAL:
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, expression->first, &a));
      if (jinja_truthy(a)) return evaluate(renderer, frame, expression->second, out);
      if (expression->third) return evaluate(renderer, frame, expression->third, out);
      *out = jinja_undefined("the inline if-expression evaluated to false and no else section was defined.");
      return VLM_OK;
  }
  return ERROR_AT(expression, INTERNAL, "unknown expression kind");
}

static vlm_status evaluate(jinja_renderer *renderer, jinja_frame *frame,
                           const jinja_expression *expression, jinja_value *out) {
  VLM_RETURN_IF_ERROR(enter(renderer, expression->line, expression->column));
  vlm_status status = evaluate_expression(renderer, frame, expression, out);
  renderer->depth--;
  return status;
}

/* ---- statements ------------------------------------------------------------ */

static vlm_status write_output(jinja_renderer *renderer, const jinja_node *node, const char *text,
                               size_t length) {
  if (length > renderer->options.max_output_bytes - renderer->output_total)
    return ERROR_AT(node, RESOURCE_EXHAUSTED, "rendered text exceeds the output limit (%zu bytes)",
                    renderer->options.max_output_bytes);
  size_t result_limit = renderer->options.max_result_bytes;
  if (result_limit && renderer->output == renderer->result && length > result_limit - renderer->result->length) {
    if (renderer->options.result_limit_reached) *renderer->options.result_limit_reached = true;
    return ERROR_AT(node, RESOURCE_EXHAUSTED, "the rendered text exceeds %zu bytes", result_limit);
  }
  renderer->output_total += length;
  vlm_sb_append(renderer->output, text, length);
  if (renderer->output->failed) return out_of_memory(renderer, node->line, node->column);
  return VLM_OK;
}

static vlm_status assign(jinja_renderer *renderer, jinja_frame *frame, const jinja_node *node,
                         const jinja_target *target, jinja_value value) {
  VLM_RETURN_IF_ERROR(check_value_depth(renderer, node->line, node->column,
                                        target->attribute ? target->attribute : target->name, value));
  if (target->attribute) {
    const jinja_value *object = frame_lookup(frame, target->name);
    if (!object || object->type != JINJA_NAMESPACE)
      return ERROR_AT(node, INVALID_ARGUMENT, "cannot assign attribute on non-namespace object");
    if (target->attribute[0] == '_')
      return ERROR_AT(node, INVALID_ARGUMENT,
                      "Chat templates cannot store underscore-prefixed attributes on a namespace, but got '%s'.",
                      target->attribute);
    if (!jinja_dict_set(renderer, object->as.dict,
                        jinja_string(target->attribute, strlen(target->attribute)), value))
      return out_of_memory(renderer, node->line, node->column);
    return VLM_OK;
  }
  if (!target->is_unpacking) {
    if (!frame_set(renderer, frame, target->name, value))
      return out_of_memory(renderer, node->line, node->column);
    return VLM_OK;
  }
  jinja_list *items = NULL;
  jinja_list characters = {0};
  if (value.type == JINJA_LIST) items = value.as.list;
  else if (value.type == JINJA_STRING) {
    /* unpacking a string yields its characters */
    size_t count = jinja_utf8_length(value.as.string.chars, value.as.string.length);
    if (count == target->name_count) {
      characters.items = jinja_allocate(renderer, (count + 1) * sizeof(jinja_value));
      if (!characters.items) return out_of_memory(renderer, node->line, node->column);
      for (size_t i = 0; i < count; i++) {
        size_t start = jinja_utf8_offset(value.as.string.chars, value.as.string.length, i);
        size_t end = jinja_utf8_offset(value.as.string.chars, value.as.string.length, i + 1);
        characters.items[i] = jinja_string(value.as.string.chars + start, end - start);
      }
      characters.count = count;
      items = &characters;
    }
  }
  if (!items)
    return ERROR_AT(node, INVALID_ARGUMENT, "cannot unpack non-iterable %s object", jinja_type_name(value));
  if (items->count != target->name_count)
    return ERROR_AT(node, INVALID_ARGUMENT, "%s values to unpack (expected %zu, got %zu)",
                    items->count > target->name_count ? "too many" : "not enough",
                    target->name_count, items->count);
  for (size_t i = 0; i < items->count; i++)
    if (!frame_set(renderer, frame, target->names[i], items->items[i]))
      return out_of_memory(renderer, node->line, node->column);
  return VLM_OK;
}

/* The values a `for` iterates over: list items, dict keys, characters. */
static vlm_status iteration_items(jinja_renderer *renderer, const jinja_node *node, jinja_value value,
                                  jinja_list **out) {
  if (value.type == JINJA_UNDEFINED) {
    *out = jinja_list_create(renderer, 0);
  } else if (value.type == JINJA_LIST) {
    *out = value.as.list;
    return VLM_OK;
  } else if (value.type == JINJA_DICT) {
    *out = jinja_list_create(renderer, value.as.dict->count);
    if (*out)
      for (size_t i = 0; i < value.as.dict->count; i++) (*out)->items[(*out)->count++] = value.as.dict->keys[i];
  } else if (value.type == JINJA_STRING) {
    size_t count = jinja_utf8_length(value.as.string.chars, value.as.string.length);
    *out = jinja_list_create(renderer, count);
    for (size_t i = 0; *out && i < count; i++) {
      size_t start = jinja_utf8_offset(value.as.string.chars, value.as.string.length, i);
      size_t end = jinja_utf8_offset(value.as.string.chars, value.as.string.length, i + 1);
      (*out)->items[(*out)->count++] = jinja_string(value.as.string.chars + start, end - start);
    }
  } else {
    return ERROR_AT(node, INVALID_ARGUMENT, "'%s' object is not iterable", jinja_type_name(value));
  }
  return *out ? VLM_OK : out_of_memory(renderer, node->line, node->column);
}

static bool set_loop_field(jinja_renderer *renderer, jinja_dict *loop, const char *name,
                           jinja_value value) {
  return jinja_dict_set(renderer, loop, jinja_string(name, strlen(name)), value);
}

static vlm_status make_loop_object(jinja_renderer *renderer, const jinja_node *node,
                                   const jinja_list *items, size_t index, jinja_value *out) {
  size_t length = items->count;
  jinja_dict *loop = jinja_dict_create(renderer, 12);
  jinja_callable *cycle = jinja_allocate(renderer, sizeof(*cycle));
  if (!loop || !cycle) return out_of_memory(renderer, node->line, node->column);
  memset(cycle, 0, sizeof(*cycle));
  cycle->function = JINJA_FUNCTION_LOOP_CYCLE;
  cycle->receiver = jinja_integer((int64_t)index);
  bool ok = set_loop_field(renderer, loop, "index", jinja_integer((int64_t)index + 1)) &&
            set_loop_field(renderer, loop, "index0", jinja_integer((int64_t)index)) &&
            set_loop_field(renderer, loop, "revindex", jinja_integer((int64_t)(length - index))) &&
            set_loop_field(renderer, loop, "revindex0", jinja_integer((int64_t)(length - index - 1))) &&
            set_loop_field(renderer, loop, "first", jinja_boolean(index == 0)) &&
            set_loop_field(renderer, loop, "last", jinja_boolean(index + 1 == length)) &&
            set_loop_field(renderer, loop, "length", jinja_integer((int64_t)length)) &&
            set_loop_field(renderer, loop, "depth", jinja_integer(1)) &&
            set_loop_field(renderer, loop, "depth0", jinja_integer(0)) &&
            set_loop_field(renderer, loop, "previtem",
                           index > 0 ? items->items[index - 1]
                                     : jinja_undefined("there is no previous item")) &&
            set_loop_field(renderer, loop, "nextitem",
                           index + 1 < length ? items->items[index + 1]
                                              : jinja_undefined("there is no next item")) &&
            set_loop_field(renderer, loop, "cycle",
                           (jinja_value){.type = JINJA_FUNCTION, .as.callable = cycle});
  if (!ok) return out_of_memory(renderer, node->line, node->column);
  *out = (jinja_value){.type = JINJA_DICT, .as.dict = loop};
  return VLM_OK;
}

static vlm_status render_for(jinja_renderer *renderer, jinja_frame *frame, const jinja_node *node) {
  jinja_value iterable = {0};
  VLM_RETURN_IF_ERROR(evaluate(renderer, frame, node->expression, &iterable));
  jinja_list *items = NULL;
  VLM_RETURN_IF_ERROR(iteration_items(renderer, node, iterable, &items));
  if (node->condition) {
    /* The inline `if` filters before the loop starts, so loop.length and
     * loop.last count only the kept items. */
    jinja_list *kept = jinja_list_create(renderer, 0);
    if (!kept) return out_of_memory(renderer, node->line, node->column);
    for (size_t i = 0; i < items->count; i++) {
      jinja_frame *probe = frame_create(renderer, frame);
      if (!probe) return out_of_memory(renderer, node->line, node->column);
      VLM_RETURN_IF_ERROR(assign(renderer, probe, node, &node->target, items->items[i]));
      jinja_value keep = {0};
      VLM_RETURN_IF_ERROR(evaluate(renderer, probe, node->condition, &keep));
      if (jinja_truthy(keep) && !jinja_list_append(renderer, kept, items->items[i]))
        return out_of_memory(renderer, node->line, node->column);
    }
    items = kept;
  }
  for (size_t i = 0; i < items->count; i++) {
    VLM_RETURN_IF_ERROR(count_step(renderer, node->line, node->column));
    jinja_frame *iteration = frame_create(renderer, frame);
    if (!iteration) return out_of_memory(renderer, node->line, node->column);
    jinja_value loop = {0};
    VLM_RETURN_IF_ERROR(make_loop_object(renderer, node, items, i, &loop));
    if (!frame_set(renderer, iteration, "loop", loop))
      return out_of_memory(renderer, node->line, node->column);
    VLM_RETURN_IF_ERROR(assign(renderer, iteration, node, &node->target, items->items[i]));
    flow result = FLOW_NORMAL;
    VLM_RETURN_IF_ERROR(render_body(renderer, iteration, node->body, &result));
    if (result == FLOW_BREAK) break;
  }
  if (items->count == 0 && node->else_body) {
    flow ignored;
    return render_body(renderer, frame, node->else_body, &ignored);
  }
  return VLM_OK;
}

static vlm_status render_set_block(jinja_renderer *renderer, jinja_frame *frame,
                                   const jinja_node *node) {
  vlm_string_builder *saved = renderer->output;
  vlm_string_builder captured = {0};
  renderer->output = &captured;
  flow ignored;
  vlm_status status = render_body(renderer, frame, node->body, &ignored);
  renderer->output = saved;
  jinja_value value = {0};
  if (status == VLM_OK && (captured.failed ||
                           !jinja_string_copy(renderer, captured.data ? captured.data : "",
                                              captured.length, &value)))
    status = out_of_memory(renderer, node->line, node->column);
  vlm_sb_release(&captured);
  VLM_RETURN_IF_ERROR(status);
  /* Filters were parsed as a chain whose innermost operand is the body. */
  const jinja_expression *chain[JINJA_MAX_EXPRESSION_DEPTH];
  size_t depth = 0;
  for (const jinja_expression *f = node->filter; f; f = f->first) {
    if (depth == JINJA_MAX_EXPRESSION_DEPTH) /* the parser bounds the chain */
      return ERROR_AT(node, INTERNAL, "filter chain longer than %d", JINJA_MAX_EXPRESSION_DEPTH);
    chain[depth++] = f;
  }
  while (depth > 0) VLM_RETURN_IF_ERROR(evaluate_filter(renderer, frame, chain[--depth], value, &value));
  return assign(renderer, frame, node, &node->target, value);
}

static vlm_status render_statement(jinja_renderer *renderer, jinja_frame *frame, const jinja_node *node,
                                   flow *out_flow) {
  VLM_RETURN_IF_ERROR(count_step(renderer, node->line, node->column));
  switch (node->kind) {
    case JINJA_NODE_TEXT:
      return write_output(renderer, node, node->text, node->length);
    case JINJA_NODE_OUTPUT: {
      jinja_value value = {0};
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, node->expression, &value));
      if (value.type == JINJA_STRING) return write_output(renderer, node, value.as.string.chars, value.as.string.length);
      VLM_RETURN_IF_ERROR(jinja_to_string(renderer, value, node->line, node->column, &value));
      return write_output(renderer, node, value.as.string.chars, value.as.string.length);
    }
    case JINJA_NODE_IF: {
      jinja_value condition = {0};
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, node->expression, &condition));
      if (jinja_truthy(condition)) return render_body(renderer, frame, node->body, out_flow);
      return render_body(renderer, frame, node->else_body, out_flow);
    }
    case JINJA_NODE_FOR:
      return render_for(renderer, frame, node);
    case JINJA_NODE_SET: {
      jinja_value value = {0};
      VLM_RETURN_IF_ERROR(evaluate(renderer, frame, node->expression, &value));
      return assign(renderer, frame, node, &node->target, value);
    }
    case JINJA_NODE_SET_BLOCK:
      return render_set_block(renderer, frame, node);
    case JINJA_NODE_MACRO: {
      jinja_callable *macro = jinja_allocate(renderer, sizeof(*macro));
      if (!macro) return out_of_memory(renderer, node->line, node->column);
      memset(macro, 0, sizeof(*macro));
      macro->macro = node;
      macro->closure = frame;
      if (!frame_set(renderer, frame, node->target.name,
                     (jinja_value){.type = JINJA_MACRO, .as.callable = macro}))
        return out_of_memory(renderer, node->line, node->column);
      return VLM_OK;
    }
    case JINJA_NODE_BREAK:
      *out_flow = FLOW_BREAK;
      return VLM_OK;
    case JINJA_NODE_CONTINUE:
      *out_flow = FLOW_CONTINUE;
      return VLM_OK;
    case JINJA_NODE_SCOPE:
      return render_body(renderer, frame, node->body, out_flow);
  }
  return ERROR_AT(node, INTERNAL, "unknown statement kind");
}

static vlm_status render_node(jinja_renderer *renderer, jinja_frame *frame, const jinja_node *node,
                              flow *out_flow) {
  VLM_RETURN_IF_ERROR(enter(renderer, node->line, node->column));
  vlm_status status = render_statement(renderer, frame, node, out_flow);
  renderer->depth--;
  return status;
}

static vlm_status render_body(jinja_renderer *renderer, jinja_frame *frame, const jinja_node *node,
                              flow *out_flow) {
  *out_flow = FLOW_NORMAL;
  for (; node; node = node->next) {
    VLM_RETURN_IF_ERROR(render_node(renderer, frame, node, out_flow));
    if (*out_flow != FLOW_NORMAL) return VLM_OK;
  }
  return VLM_OK;
}

/* ---- entry points ------------------------------------------------------------ */

void jinja_render_options_init(jinja_render_options *options) {
  options->max_output_bytes = (size_t)64 << 20;
  options->max_memory_bytes = (size_t)256 << 20;
  options->max_steps = 50u * 1000u * 1000u;
  options->max_call_depth = 64;
  options->fixed_time = -1;
  options->max_result_bytes = 0;
  options->result_limit_reached = NULL;
}

static bool add_global_function(jinja_renderer *renderer, jinja_frame *frame, const char *name,
                                jinja_function_id function) {
  jinja_callable *callable = jinja_allocate(renderer, sizeof(*callable));
  if (!callable) return false;
  memset(callable, 0, sizeof(*callable));
  callable->function = function;
  return frame_set(renderer, frame, name, (jinja_value){.type = JINJA_FUNCTION, .as.callable = callable});
}

static vlm_status make_frames(jinja_renderer *renderer, const vlm_json_value *variables,
                              jinja_frame **out) {
  jinja_frame *globals = frame_create(renderer, NULL);
  bool ok = globals && add_global_function(renderer, globals, "range", JINJA_FUNCTION_RANGE) &&
            add_global_function(renderer, globals, "namespace", JINJA_FUNCTION_NAMESPACE) &&
            add_global_function(renderer, globals, "dict", JINJA_FUNCTION_DICT) &&
            add_global_function(renderer, globals, "raise_exception", JINJA_FUNCTION_RAISE_EXCEPTION) &&
            add_global_function(renderer, globals, "strftime_now", JINJA_FUNCTION_STRFTIME_NOW);
  jinja_frame *context = ok ? frame_create(renderer, globals) : NULL;
  if (!context) return out_of_memory(renderer, 1, 1);
  if (variables && variables->type == VLM_JSON_OBJECT) {
    for (size_t i = 0; i < variables->as.object.count; i++) {
      const vlm_json_member *member = &variables->as.object.members[i];
      bool converted = true;
      jinja_value value = jinja_value_from_json(renderer, &member->value, &converted);
      if (!converted || !jinja_dict_set(renderer, context->variables,
                                        jinja_string(member->key, member->key_length), value))
        return out_of_memory(renderer, 1, 1);
    }
  }
  *out = context;
  return VLM_OK;
}

vlm_status jinja_template_render(const jinja_template *template_, const vlm_json_value *variables,
                                 const jinja_render_options *options, char **out_text,
                                 size_t *out_length) {
  *out_text = NULL;
  *out_length = 0;
  jinja_renderer renderer = {.source_name = template_->source_name};
  if (options) renderer.options = *options;
  else jinja_render_options_init(&renderer.options);
  vlm_arena_init(&renderer.arena, NULL, 64 * 1024);
  vlm_string_builder output = {0};
  renderer.output = &output;
  renderer.result = &output;
  jinja_frame *frame = NULL;
  vlm_status status = make_frames(&renderer, variables, &frame);
  flow ignored;
  if (status == VLM_OK) status = render_body(&renderer, frame, template_->body, &ignored);
  vlm_arena_reset(&renderer.arena);
  if (status == VLM_OK && output.failed)
    status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory rendering %s", template_->source_name);
  if (status != VLM_OK) {
    vlm_sb_release(&output);
    return status;
  }
  size_t length = output.length;
  char *text = vlm_sb_finish(&output);
  if (!text) text = calloc(1, 1);
  if (!text) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory rendering %s", template_->source_name);
  *out_text = text;
  *out_length = length;
  return VLM_OK;
}

/* Newlines become "\n" and one trailing newline is dropped, as Jinja's
 * lexer does with keep_trailing_newline=False. */
static char *normalise_source(vlm_arena *arena, const char *source, size_t length,
                              size_t *out_length) {
  char *copy = vlm_arena_allocate(arena, length + 1, 1);
  if (!copy) return NULL;
  size_t used = 0;
  for (size_t i = 0; i < length; i++) {
    if (source[i] == '\r') {
      copy[used++] = '\n';
      if (i + 1 < length && source[i + 1] == '\n') i++;
    } else {
      copy[used++] = source[i];
    }
  }
  if (used > 0 && copy[used - 1] == '\n') used--;
  copy[used] = 0;
  *out_length = used;
  return copy;
}

vlm_status jinja_template_parse(const char *source, size_t length, const char *source_name,
                                jinja_template **out_template) {
  *out_template = NULL;
  jinja_template *template_ = calloc(1, sizeof(*template_));
  if (!template_) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory parsing a template");
  vlm_arena_init(&template_->arena, NULL, 64 * 1024);
  template_->source_name = vlm_arena_strdup(&template_->arena, source_name ? source_name : "template");
  size_t normalised_length = 0;
  char *normalised = normalise_source(&template_->arena, source, length, &normalised_length);
  vlm_status status = VLM_OK;
  if (!template_->source_name || !normalised)
    status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory parsing a template");
  jinja_token_list tokens = {0};
  if (status == VLM_OK)
    status = jinja_lex(normalised, normalised_length, template_->source_name, &template_->arena, &tokens);
  if (status == VLM_OK)
    status = jinja_parse_tokens(&tokens, template_->source_name, &template_->arena, &template_->body);
  if (status != VLM_OK) {
    jinja_template_release(template_);
    return status;
  }
  *out_template = template_;
  return VLM_OK;
}

void jinja_template_release(jinja_template *template_) {
  if (!template_) return;
  vlm_arena_reset(&template_->arena);
  free(template_);
}
