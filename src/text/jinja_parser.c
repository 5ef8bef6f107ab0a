/* Jinja parser: tokens into a syntax tree.
 *
 * Precedence follows jinja2/parser.py, lowest first: conditional
 * (`a if b else c`), or, and, not, comparisons (chained, plus `in`/`not in`),
 * + and -, ~, * / // %, **, unary - and +, then primaries with their
 * postfixes (attribute, subscript, call) and, binding tightest of all, the
 * `|filter` and `is test` chains. So `'a' + x | trim` trims only x, exactly
 * as in Jinja.
 *
 * Everything outside the supported subset is refused here, at load time,
 * with the position of the offending token. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "text/jinja_internal.h"

typedef struct parser {
  const jinja_token *tokens;
  size_t count;
  size_t position;
  const char *source_name;
  vlm_arena *arena;
  int depth;
} parser;

static const jinja_token *peek(const parser *state) { return &state->tokens[state->position]; }

static const jinja_token *peek_at(const parser *state, size_t offset) {
  size_t index = state->position + offset;
  return &state->tokens[index < state->count ? index : state->count - 1];
}

static const jinja_token *next_token(parser *state) {
  const jinja_token *token = &state->tokens[state->position];
  if (token->type != JINJA_TOKEN_END) state->position++;
  return token;
}

static vlm_status parse_error(const parser *state, const jinja_token *token,
                              const char *format, ...) __attribute__((format(printf, 3, 4)));

static vlm_status parse_error(const parser *state, const jinja_token *token,
                              const char *format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return VLM_ERROR(INVALID_ARGUMENT, "%s:%d:%d: %s", state->source_name, token->line,
                   token->column, message);
}

static bool is_operator(const jinja_token *token, const char *text) {
  return token->type == JINJA_TOKEN_OPERATOR && strcmp(token->text, text) == 0;
}

static bool is_name(const jinja_token *token, const char *text) {
  return token->type == JINJA_TOKEN_NAME && strcmp(token->text, text) == 0;
}

static const char *describe(const jinja_token *token) {
  switch (token->type) {
    case JINJA_TOKEN_END: return "end of template";
    case JINJA_TOKEN_BLOCK_END: return "end of statement block";
    case JINJA_TOKEN_VARIABLE_END: return "end of print statement";
    case JINJA_TOKEN_TEXT: return "template data";
    default: return token->text;
  }
}

static vlm_status expect_operator(parser *state, const char *text) {
  const jinja_token *token = peek(state);
  if (!is_operator(token, text))
    return parse_error(state, token, "expected '%s', got '%s'", text, describe(token));
  next_token(state);
  return VLM_OK;
}

static vlm_status expect_block_end(parser *state) {
  const jinja_token *token = peek(state);
  if (token->type != JINJA_TOKEN_BLOCK_END)
    return parse_error(state, token, "expected end of statement block, got '%s'", describe(token));
  next_token(state);
  return VLM_OK;
}

static vlm_status expect_name(parser *state, const char **out) {
  const jinja_token *token = peek(state);
  if (token->type != JINJA_TOKEN_NAME)
    return parse_error(state, token, "expected a name, got '%s'", describe(token));
  next_token(state);
  *out = token->text;
  return VLM_OK;
}

static void *allocate(parser *state, size_t size) {
  void *memory = vlm_arena_allocate(state->arena, size, 8);
  if (memory) memset(memory, 0, size);
  return memory;
}

#define OUT_OF_MEMORY VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory parsing a template")

static vlm_status new_expression(parser *state, jinja_expression_kind kind,
                                 const jinja_token *at, jinja_expression **out) {
  jinja_expression *expression = allocate(state, sizeof(*expression));
  if (!expression) return OUT_OF_MEMORY;
  expression->kind = kind;
  expression->line = at->line;
  expression->column = at->column;
  expression->height = 1;
  *out = expression;
  return VLM_OK;
}

static int height_of(const jinja_expression *expression) { return expression ? expression->height : 0; }

static int max_int(int a, int b) { return a > b ? a : b; }

/* Records the height of a node whose operands are all attached, and
 * refuses a tree taller than the evaluator may recurse. Every node is
 * sealed when it is complete, so chains built in a loop are caught at the
 * link that makes them too deep, and the tree is never walked again. */
static vlm_status seal(parser *state, jinja_expression *expression) {
  int height = max_int(max_int(height_of(expression->first), height_of(expression->second)),
                       max_int(height_of(expression->third), height_of(expression->fourth)));
  for (const jinja_expression *child = expression->children; child; child = child->next)
    height = max_int(height, child->height);
  for (const jinja_call_argument *argument = expression->arguments; argument; argument = argument->next)
    height = max_int(height, height_of(argument->value));
  expression->height = height + 1;
  if (expression->height <= JINJA_MAX_EXPRESSION_DEPTH) return VLM_OK;
  return VLM_ERROR(INVALID_ARGUMENT,
                   "%s:%d:%d: expression nests more than %d levels deep (a chain of attributes, "
                   "subscripts, calls, filters, tests or operators that long cannot be evaluated)",
                   state->source_name, expression->line, expression->column, JINJA_MAX_EXPRESSION_DEPTH);
}

static vlm_status parse_expression(parser *state, bool with_conditional, jinja_expression **out);
static vlm_status parse_unary(parser *state, bool with_filter, jinja_expression **out);
static vlm_status parse_primary(parser *state, jinja_expression **out);

/* Depth guard for the recursive descent: hostile input like "((((...))))"
 * must fail cleanly rather than overflow the stack. */
static vlm_status enter(parser *state) {
  if (++state->depth > JINJA_MAX_NESTING)
    return parse_error(state, peek(state), "expression nests more than %d levels deep",
                       JINJA_MAX_NESTING);
  return VLM_OK;
}

/* ( arguments ) after a call or filter; the '(' is current. */
static vlm_status parse_call_arguments(parser *state, jinja_call_argument **out) {
  VLM_RETURN_IF_ERROR(expect_operator(state, "("));
  jinja_call_argument *head = NULL, **tail = &head;
  bool seen_keyword = false;
  while (!is_operator(peek(state), ")")) {
    if (head) VLM_RETURN_IF_ERROR(expect_operator(state, ","));
    if (is_operator(peek(state), ")")) break; /* trailing comma */
    if (is_operator(peek(state), "*") || is_operator(peek(state), "**"))
      return parse_error(state, peek(state), "unsupported: *args and **kwargs in calls");
    jinja_call_argument *argument = allocate(state, sizeof(*argument));
    if (!argument) return OUT_OF_MEMORY;
    if (peek(state)->type == JINJA_TOKEN_NAME && is_operator(peek_at(state, 1), "=")) {
      argument->name = next_token(state)->text;
      next_token(state);
      seen_keyword = true;
    } else if (seen_keyword) {
      return parse_error(state, peek(state), "invalid syntax for function call expression");
    }
    VLM_RETURN_IF_ERROR(parse_expression(state, true, &argument->value));
    *tail = argument;
    tail = &argument->next;
  }
  next_token(state);
  *out = head;
  return VLM_OK;
}

static vlm_status parse_subscript(parser *state, jinja_expression *object, jinja_expression **out) {
  const jinja_token *open = next_token(state); /* [ */
  jinja_expression *parts[3] = {NULL, NULL, NULL};
  bool is_slice = false;
  int part = 0;
  for (;;) {
    const jinja_token *token = peek(state);
    if (is_operator(token, "]")) break;
    if (is_operator(token, ":")) {
      if (part == 2) return parse_error(state, token, "expected ']'");
      is_slice = true;
      part++;
      next_token(state);
      continue;
    }
    if (parts[part]) return parse_error(state, token, "expected ']', got '%s'", describe(token));
    VLM_RETURN_IF_ERROR(parse_expression(state, true, &parts[part]));
  }
  next_token(state);
  if (!is_slice && !parts[0]) return parse_error(state, open, "expected an expression in []");
  jinja_expression *expression = NULL;
  VLM_RETURN_IF_ERROR(new_expression(state, is_slice ? JINJA_EXPRESSION_SLICE : JINJA_EXPRESSION_SUBSCRIPT,
                                     open, &expression));
  expression->first = object;
  expression->second = parts[0];
  expression->third = parts[1];
  expression->fourth = parts[2];
  VLM_RETURN_IF_ERROR(seal(state, expression));
  *out = expression;
  return VLM_OK;
}

static vlm_status parse_postfix(parser *state, jinja_expression **inout) {
  for (;;) {
    const jinja_token *token = peek(state);
    if (is_operator(token, ".")) {
      next_token(state);
      const jinja_token *attribute = next_token(state);
      jinja_expression *expression = NULL;
      if (attribute->type == JINJA_TOKEN_NAME) {
        VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_ATTRIBUTE, token, &expression));
        expression->name = attribute->text;
      } else if (attribute->type == JINJA_TOKEN_INTEGER) {
        jinja_expression *index = NULL;
        VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_LITERAL, attribute, &index));
        index->literal = jinja_integer(attribute->integer);
        VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_SUBSCRIPT, token, &expression));
        expression->second = index;
      } else {
        return parse_error(state, attribute, "expected a name after '.'");
      }
      expression->first = *inout;
      VLM_RETURN_IF_ERROR(seal(state, expression));
      *inout = expression;
    } else if (is_operator(token, "[")) {
      VLM_RETURN_IF_ERROR(parse_subscript(state, *inout, inout));
    } else if (is_operator(token, "(")) {
      jinja_expression *expression = NULL;
      VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_CALL, token, &expression));
      expression->first = *inout;
      VLM_RETURN_IF_ERROR(parse_call_arguments(state, &expression->arguments));
      VLM_RETURN_IF_ERROR(seal(state, expression));
      *inout = expression;
    } else {
      return VLM_OK;
    }
  }
}

/* A filter or test name, possibly dotted. */
static vlm_status parse_dotted_name(parser *state, const char **out) {
  VLM_RETURN_IF_ERROR(expect_name(state, out));
  while (is_operator(peek(state), ".")) {
    next_token(state);
    const char *part = NULL;
    VLM_RETURN_IF_ERROR(expect_name(state, &part));
    size_t length = strlen(*out) + strlen(part) + 2;
    char *joined = vlm_arena_allocate(state->arena, length, 1);
    if (!joined) return OUT_OF_MEMORY;
    snprintf(joined, length, "%s.%s", *out, part);
    *out = joined;
  }
  return VLM_OK;
}

static vlm_status parse_filter(parser *state, jinja_expression *operand, jinja_expression **out) {
  const jinja_token *at = peek(state);
  jinja_expression *expression = NULL;
  VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_FILTER, at, &expression));
  VLM_RETURN_IF_ERROR(parse_dotted_name(state, &expression->name));
  expression->builtin = jinja_filter_find(expression->name);
  if (expression->builtin < 0) return parse_error(state, at, "No filter named '%s'.", expression->name);
  if (is_operator(peek(state), "("))
    VLM_RETURN_IF_ERROR(parse_call_arguments(state, &expression->arguments));
  expression->first = operand;
  VLM_RETURN_IF_ERROR(seal(state, expression));
  *out = expression;
  return VLM_OK;
}

/* Can this token start the single, unparenthesised argument of a test
 * (`x is divisibleby 3`)? Mirrors jinja2's parse_test. */
static bool starts_test_argument(const jinja_token *token) {
  if (token->type == JINJA_TOKEN_NAME)
    return !is_name(token, "else") && !is_name(token, "or") && !is_name(token, "and");
  if (token->type == JINJA_TOKEN_STRING || token->type == JINJA_TOKEN_INTEGER ||
      token->type == JINJA_TOKEN_FLOAT)
    return true;
  return is_operator(token, "(") || is_operator(token, "[") || is_operator(token, "{");
}

static vlm_status parse_test(parser *state, jinja_expression *operand, jinja_expression **out) {
  const jinja_token *at = next_token(state); /* is */
  jinja_expression *expression = NULL;
  VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_TEST, at, &expression));
  if (is_name(peek(state), "not")) {
    next_token(state);
    expression->negated = true;
  }
  const jinja_token *name_token = peek(state);
  VLM_RETURN_IF_ERROR(parse_dotted_name(state, &expression->name));
  expression->builtin = jinja_test_find(expression->name);
  if (expression->builtin < 0)
    return parse_error(state, name_token, "No test named '%s'.", expression->name);
  if (is_operator(peek(state), "(")) {
    VLM_RETURN_IF_ERROR(parse_call_arguments(state, &expression->arguments));
  } else if (starts_test_argument(peek(state))) {
    jinja_call_argument *argument = allocate(state, sizeof(*argument));
    if (!argument) return OUT_OF_MEMORY;
    VLM_RETURN_IF_ERROR(parse_primary(state, &argument->value));
    VLM_RETURN_IF_ERROR(parse_postfix(state, &argument->value));
    expression->arguments = argument;
  }
  expression->first = operand;
  VLM_RETURN_IF_ERROR(seal(state, expression));
  *out = expression;
  return VLM_OK;
}

/* The `|filter`, `is test` and trailing-call chain after a unary operand. */
static vlm_status parse_filter_chain(parser *state, jinja_expression **inout) {
  for (;;) {
    const jinja_token *token = peek(state);
    if (is_operator(token, "|")) {
      next_token(state);
      VLM_RETURN_IF_ERROR(parse_filter(state, *inout, inout));
    } else if (is_name(token, "is")) {
      VLM_RETURN_IF_ERROR(parse_test(state, *inout, inout));
    } else if (is_operator(token, "(")) {
      jinja_expression *expression = NULL;
      VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_CALL, token, &expression));
      expression->first = *inout;
      VLM_RETURN_IF_ERROR(parse_call_arguments(state, &expression->arguments));
      VLM_RETURN_IF_ERROR(seal(state, expression));
      *inout = expression;
    } else {
      return VLM_OK;
    }
  }
}

/* Parses `[...]`, `(...)` and `{...}` literals; the opener is current. */
static vlm_status parse_sequence(parser *state, jinja_expression **out) {
  const jinja_token *open = next_token(state);
  char close = open->text[0] == '[' ? ']' : open->text[0] == '(' ? ')' : '}';
  char close_text[2] = {close, 0};
  jinja_expression_kind kind = close == ']' ? JINJA_EXPRESSION_LIST
                               : close == ')' ? JINJA_EXPRESSION_TUPLE
                                              : JINJA_EXPRESSION_DICT;
  jinja_expression *expression = NULL;
  VLM_RETURN_IF_ERROR(new_expression(state, kind, open, &expression));
  jinja_expression **tail = &expression->children;
  size_t count = 0;
  bool trailing_comma = false;
  while (!is_operator(peek(state), close_text)) {
    if (count) {
      VLM_RETURN_IF_ERROR(expect_operator(state, ","));
      trailing_comma = true;
      if (is_operator(peek(state), close_text)) break;
    }
    trailing_comma = false;
    jinja_expression *item = NULL;
    VLM_RETURN_IF_ERROR(parse_expression(state, true, &item));
    *tail = item;
    tail = &item->next;
    if (kind == JINJA_EXPRESSION_DICT) {
      VLM_RETURN_IF_ERROR(expect_operator(state, ":"));
      VLM_RETURN_IF_ERROR(parse_expression(state, true, &item));
      *tail = item;
      tail = &item->next;
    }
    count++;
  }
  next_token(state);
  /* `(x)` is just x; `(x,)` and `()` are tuples. */
  if (kind == JINJA_EXPRESSION_TUPLE && count == 1 && !trailing_comma) {
    *out = expression->children;
    (*out)->next = NULL;
    return VLM_OK;
  }
  VLM_RETURN_IF_ERROR(seal(state, expression));
  *out = expression;
  return VLM_OK;
}

static vlm_status parse_primary(parser *state, jinja_expression **out) {
  VLM_RETURN_IF_ERROR(enter(state));
  const jinja_token *token = peek(state);
  jinja_expression *expression = NULL;
  switch (token->type) {
    case JINJA_TOKEN_NAME: {
      next_token(state);
      const char *name = token->text;
      VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_LITERAL, token, &expression));
      if (!strcmp(name, "true") || !strcmp(name, "True")) expression->literal = jinja_boolean(true);
      else if (!strcmp(name, "false") || !strcmp(name, "False")) expression->literal = jinja_boolean(false);
      else if (!strcmp(name, "none") || !strcmp(name, "None")) expression->literal = jinja_none();
      else {
        expression->kind = JINJA_EXPRESSION_NAME;
        expression->name = name;
      }
      break;
    }
    case JINJA_TOKEN_STRING: {
      /* Adjacent string literals concatenate, as in Python. */
      size_t length = 0, end = state->position;
      while (state->tokens[end].type == JINJA_TOKEN_STRING) length += state->tokens[end++].length;
      char *text = vlm_arena_allocate(state->arena, length + 1, 1);
      if (!text) return OUT_OF_MEMORY;
      size_t offset = 0;
      while (state->position < end) {
        const jinja_token *part = next_token(state);
        memcpy(text + offset, part->text, part->length);
        offset += part->length;
      }
      text[length] = 0;
      VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_LITERAL, token, &expression));
      expression->literal = jinja_string(text, length);
      break;
    }
    case JINJA_TOKEN_INTEGER:
    case JINJA_TOKEN_FLOAT:
      next_token(state);
      VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_LITERAL, token, &expression));
      expression->literal = token->type == JINJA_TOKEN_INTEGER ? jinja_integer(token->integer)
                                                               : jinja_float(token->number);
      break;
    case JINJA_TOKEN_OPERATOR:
      if (is_operator(token, "(") || is_operator(token, "[") || is_operator(token, "{")) {
        VLM_RETURN_IF_ERROR(parse_sequence(state, &expression));
        break;
      }
      /* fall through */
    default:
      return parse_error(state, token, "unexpected '%s'", describe(token));
  }
  VLM_RETURN_IF_ERROR(parse_postfix(state, &expression));
  state->depth--;
  *out = expression;
  return VLM_OK;
}

static vlm_status parse_unary(parser *state, bool with_filter, jinja_expression **out) {
  VLM_RETURN_IF_ERROR(enter(state));
  const jinja_token *token = peek(state);
  jinja_expression *expression = NULL;
  if (is_operator(token, "-") || is_operator(token, "+")) {
    next_token(state);
    VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_UNARY, token, &expression));
    expression->name = token->text;
    VLM_RETURN_IF_ERROR(parse_unary(state, false, &expression->first));
    VLM_RETURN_IF_ERROR(seal(state, expression));
  } else {
    VLM_RETURN_IF_ERROR(parse_primary(state, &expression));
  }
  VLM_RETURN_IF_ERROR(parse_postfix(state, &expression));
  if (with_filter) VLM_RETURN_IF_ERROR(parse_filter_chain(state, &expression));
  state->depth--;
  *out = expression;
  return VLM_OK;
}

/* One level of left-associative binary operators. */
typedef vlm_status (*operand_parser)(parser *state, jinja_expression **out);

static vlm_status parse_binary_level(parser *state, const char *const *operators,
                                     operand_parser operand, jinja_expression **out) {
  VLM_RETURN_IF_ERROR(enter(state));
  jinja_expression *left = NULL;
  VLM_RETURN_IF_ERROR(operand(state, &left));
  for (;;) {
    const jinja_token *token = peek(state);
    const char *matched = NULL;
    for (size_t i = 0; operators[i] && !matched; i++)
      if (is_operator(token, operators[i])) matched = operators[i];
    if (!matched) break;
    next_token(state);
    jinja_expression *expression = NULL;
    VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_BINARY, token, &expression));
    expression->name = matched;
    expression->first = left;
    VLM_RETURN_IF_ERROR(operand(state, &expression->second));
    VLM_RETURN_IF_ERROR(seal(state, expression));
    left = expression;
  }
  state->depth--;
  *out = left;
  return VLM_OK;
}

static vlm_status parse_power_operand(parser *state, jinja_expression **out) {
  return parse_unary(state, true, out);
}
static vlm_status parse_power(parser *state, jinja_expression **out) {
  static const char *const ops[] = {"**", NULL};
  return parse_binary_level(state, ops, parse_power_operand, out);
}
static vlm_status parse_product(parser *state, jinja_expression **out) {
  static const char *const ops[] = {"*", "/", "//", "%", NULL};
  return parse_binary_level(state, ops, parse_power, out);
}
static vlm_status parse_concat(parser *state, jinja_expression **out) {
  static const char *const ops[] = {"~", NULL};
  return parse_binary_level(state, ops, parse_product, out);
}
static vlm_status parse_sum(parser *state, jinja_expression **out) {
  static const char *const ops[] = {"+", "-", NULL};
  return parse_binary_level(state, ops, parse_concat, out);
}

static vlm_status parse_compare(parser *state, jinja_expression **out) {
  jinja_expression *left = NULL;
  VLM_RETURN_IF_ERROR(parse_sum(state, &left));
  static const char *const comparisons[] = {"==", "!=", "<", "<=", ">", ">="};
  jinja_expression *compare = NULL;
  jinja_expression **tail = NULL;
  for (;;) {
    const jinja_token *token = peek(state);
    const char *operation = NULL;
    for (size_t i = 0; i < 6 && !operation; i++)
      if (is_operator(token, comparisons[i])) operation = comparisons[i];
    if (operation) {
      next_token(state);
    } else if (is_name(token, "in")) {
      next_token(state);
      operation = "in";
    } else if (is_name(token, "not") && is_name(peek_at(state, 1), "in")) {
      next_token(state);
      next_token(state);
      operation = "not in";
    } else {
      break;
    }
    if (!compare) {
      VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_COMPARE, token, &compare));
      compare->children = left;
      tail = &left->next;
    }
    jinja_expression *right = NULL;
    VLM_RETURN_IF_ERROR(parse_sum(state, &right));
    /* The operator rides on the right operand. */
    right->next = NULL;
    jinja_expression *holder = NULL;
    VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_BINARY, token, &holder));
    holder->name = operation;
    holder->second = right;
    VLM_RETURN_IF_ERROR(seal(state, holder));
    *tail = holder;
    tail = &holder->next;
  }
  if (compare) VLM_RETURN_IF_ERROR(seal(state, compare));
  *out = compare ? compare : left;
  return VLM_OK;
}

static vlm_status parse_not(parser *state, jinja_expression **out) {
  VLM_RETURN_IF_ERROR(enter(state));
  const jinja_token *token = peek(state);
  if (is_name(token, "not")) {
    next_token(state);
    jinja_expression *expression = NULL;
    VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_NOT, token, &expression));
    VLM_RETURN_IF_ERROR(parse_not(state, &expression->first));
    VLM_RETURN_IF_ERROR(seal(state, expression));
    *out = expression;
  } else {
    VLM_RETURN_IF_ERROR(parse_compare(state, out));
  }
  state->depth--;
  return VLM_OK;
}

static vlm_status parse_logical(parser *state, const char *word, jinja_expression_kind kind,
                                operand_parser operand, jinja_expression **out) {
  jinja_expression *left = NULL;
  VLM_RETURN_IF_ERROR(operand(state, &left));
  while (is_name(peek(state), word)) {
    const jinja_token *token = next_token(state);
    jinja_expression *expression = NULL;
    VLM_RETURN_IF_ERROR(new_expression(state, kind, token, &expression));
    expression->first = left;
    VLM_RETURN_IF_ERROR(operand(state, &expression->second));
    VLM_RETURN_IF_ERROR(seal(state, expression));
    left = expression;
  }
  *out = left;
  return VLM_OK;
}

static vlm_status parse_and(parser *state, jinja_expression **out) {
  return parse_logical(state, "and", JINJA_EXPRESSION_AND, parse_not, out);
}
static vlm_status parse_or(parser *state, jinja_expression **out) {
  return parse_logical(state, "or", JINJA_EXPRESSION_OR, parse_and, out);
}

static vlm_status parse_expression(parser *state, bool with_conditional, jinja_expression **out) {
  VLM_RETURN_IF_ERROR(enter(state));
  jinja_expression *expression = NULL;
  VLM_RETURN_IF_ERROR(parse_or(state, &expression));
  while (with_conditional && is_name(peek(state), "if")) {
    const jinja_token *token = next_token(state);
    jinja_expression *conditional = NULL;
    VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_CONDITIONAL, token, &conditional));
    conditional->second = expression;
    VLM_RETURN_IF_ERROR(parse_or(state, &conditional->first));
    if (is_name(peek(state), "else")) {
      next_token(state);
      VLM_RETURN_IF_ERROR(parse_expression(state, true, &conditional->third));
    }
    VLM_RETURN_IF_ERROR(seal(state, conditional));
    expression = conditional;
  }
  state->depth--;
  *out = expression;
  return VLM_OK;
}

/* An expression that may be an unparenthesised tuple: `a, b`. */
static vlm_status parse_tuple(parser *state, bool with_conditional, jinja_expression **out) {
  const jinja_token *start = peek(state);
  jinja_expression *first = NULL;
  VLM_RETURN_IF_ERROR(parse_expression(state, with_conditional, &first));
  if (!is_operator(peek(state), ",")) {
    *out = first;
    return VLM_OK;
  }
  jinja_expression *tuple = NULL;
  VLM_RETURN_IF_ERROR(new_expression(state, JINJA_EXPRESSION_TUPLE, start, &tuple));
  tuple->children = first;
  jinja_expression **tail = &first->next;
  while (is_operator(peek(state), ",")) {
    next_token(state);
    const jinja_token *token = peek(state);
    if (token->type == JINJA_TOKEN_BLOCK_END || token->type == JINJA_TOKEN_VARIABLE_END ||
        is_name(token, "in") || is_name(token, "if") || is_name(token, "recursive"))
      break;
    jinja_expression *item = NULL;
    VLM_RETURN_IF_ERROR(parse_expression(state, with_conditional, &item));
    *tail = item;
    tail = &item->next;
  }
  VLM_RETURN_IF_ERROR(seal(state, tuple));
  *out = tuple;
  return VLM_OK;
}

/* ---- statements ------------------------------------------------------------ */

static vlm_status parse_body(parser *state, const char *const *end_tags, jinja_node **out_body,
                             const char **out_end_tag);

static vlm_status new_node(parser *state, jinja_node_kind kind, const jinja_token *at,
                           jinja_node **out) {
  jinja_node *node = allocate(state, sizeof(*node));
  if (!node) return OUT_OF_MEMORY;
  node->kind = kind;
  node->line = at->line;
  node->column = at->column;
  *out = node;
  return VLM_OK;
}

/* Assignment targets: `name`, `name.attribute` (namespaces, set only) or
 * `a, b` / `(a, b)` for unpacking. */
static vlm_status parse_target(parser *state, bool allow_namespace, jinja_target *target) {
  bool parenthesised = is_operator(peek(state), "(");
  if (parenthesised) next_token(state);
  const char *name = NULL;
  VLM_RETURN_IF_ERROR(expect_name(state, &name));
  if (allow_namespace && !parenthesised && is_operator(peek(state), ".")) {
    next_token(state);
    target->name = name;
    return expect_name(state, &target->attribute);
  }
  if (!parenthesised && !is_operator(peek(state), ",")) {
    target->name = name;
    return VLM_OK;
  }
  const char *names[64];
  size_t count = 0;
  names[count++] = name;
  while (is_operator(peek(state), ",")) {
    next_token(state);
    if (peek(state)->type != JINJA_TOKEN_NAME || is_name(peek(state), "in")) break;
    if (count == 64) return parse_error(state, peek(state), "too many names to unpack");
    VLM_RETURN_IF_ERROR(expect_name(state, &names[count++]));
  }
  if (parenthesised) VLM_RETURN_IF_ERROR(expect_operator(state, ")"));
  if (count == 1 && parenthesised) {
    target->name = names[0];
    return VLM_OK;
  }
  target->names = vlm_arena_allocate(state->arena, count * sizeof(const char *), 8);
  if (!target->names) return OUT_OF_MEMORY;
  memcpy(target->names, names, count * sizeof(const char *));
  target->name_count = count;
  target->is_unpacking = true;
  return VLM_OK;
}

static vlm_status parse_if(parser *state, const jinja_token *at, jinja_node **out) {
  jinja_node *node = NULL;
  VLM_RETURN_IF_ERROR(new_node(state, JINJA_NODE_IF, at, &node));
  VLM_RETURN_IF_ERROR(parse_tuple(state, true, &node->expression));
  VLM_RETURN_IF_ERROR(expect_block_end(state));
  static const char *const ends[] = {"elif", "else", "endif", NULL};
  const char *end_tag;
  VLM_RETURN_IF_ERROR(parse_body(state, ends, &node->body, &end_tag));
  if (!strcmp(end_tag, "elif")) {
    VLM_RETURN_IF_ERROR(enter(state));
    VLM_RETURN_IF_ERROR(parse_if(state, peek(state), &node->else_body));
    state->depth--;
  } else if (!strcmp(end_tag, "else")) {
    VLM_RETURN_IF_ERROR(expect_block_end(state));
    static const char *const endif[] = {"endif", NULL};
    VLM_RETURN_IF_ERROR(parse_body(state, endif, &node->else_body, &end_tag));
    VLM_RETURN_IF_ERROR(expect_block_end(state));
  } else {
    VLM_RETURN_IF_ERROR(expect_block_end(state));
  }
  *out = node;
  return VLM_OK;
}

static vlm_status parse_for(parser *state, const jinja_token *at, jinja_node **out) {
  jinja_node *node = NULL;
  VLM_RETURN_IF_ERROR(new_node(state, JINJA_NODE_FOR, at, &node));
  VLM_RETURN_IF_ERROR(parse_target(state, false, &node->target));
  if (!is_name(peek(state), "in"))
    return parse_error(state, peek(state), "expected 'in', got '%s'", describe(peek(state)));
  next_token(state);
  VLM_RETURN_IF_ERROR(parse_tuple(state, false, &node->expression));
  if (is_name(peek(state), "if")) {
    next_token(state);
    VLM_RETURN_IF_ERROR(parse_expression(state, true, &node->condition));
  }
  if (is_name(peek(state), "recursive"))
    return parse_error(state, peek(state), "unsupported Jinja feature: recursive loops");
  VLM_RETURN_IF_ERROR(expect_block_end(state));
  static const char *const ends[] = {"endfor", "else", NULL};
  const char *end_tag;
  VLM_RETURN_IF_ERROR(parse_body(state, ends, &node->body, &end_tag));
  VLM_RETURN_IF_ERROR(expect_block_end(state));
  if (!strcmp(end_tag, "else")) {
    static const char *const endfor[] = {"endfor", NULL};
    VLM_RETURN_IF_ERROR(parse_body(state, endfor, &node->else_body, &end_tag));
    VLM_RETURN_IF_ERROR(expect_block_end(state));
  }
  *out = node;
  return VLM_OK;
}

static vlm_status parse_set(parser *state, const jinja_token *at, jinja_node **out) {
  jinja_node *node = NULL;
  VLM_RETURN_IF_ERROR(new_node(state, JINJA_NODE_SET, at, &node));
  VLM_RETURN_IF_ERROR(parse_target(state, true, &node->target));
  if (is_operator(peek(state), "=")) {
    next_token(state);
    VLM_RETURN_IF_ERROR(parse_tuple(state, true, &node->expression));
    VLM_RETURN_IF_ERROR(expect_block_end(state));
    *out = node;
    return VLM_OK;
  }
  /* {% set x | filter %}...{% endset %} captures its body. */
  node->kind = JINJA_NODE_SET_BLOCK;
  if (node->target.is_unpacking)
    return parse_error(state, at, "a block assignment needs a single name");
  while (is_operator(peek(state), "|")) {
    next_token(state);
    VLM_RETURN_IF_ERROR(parse_filter(state, node->filter, &node->filter));
  }
  VLM_RETURN_IF_ERROR(expect_block_end(state));
  static const char *const ends[] = {"endset", NULL};
  const char *end_tag;
  VLM_RETURN_IF_ERROR(parse_body(state, ends, &node->body, &end_tag));
  VLM_RETURN_IF_ERROR(expect_block_end(state));
  *out = node;
  return VLM_OK;
}

static vlm_status parse_macro(parser *state, const jinja_token *at, jinja_node **out) {
  jinja_node *node = NULL;
  VLM_RETURN_IF_ERROR(new_node(state, JINJA_NODE_MACRO, at, &node));
  VLM_RETURN_IF_ERROR(expect_name(state, &node->target.name));
  VLM_RETURN_IF_ERROR(expect_operator(state, "("));
  const char *names[64];
  jinja_expression *defaults[64];
  size_t count = 0;
  while (!is_operator(peek(state), ")")) {
    if (count) VLM_RETURN_IF_ERROR(expect_operator(state, ","));
    if (is_operator(peek(state), ")")) break;
    if (count == 64) return parse_error(state, peek(state), "too many macro parameters");
    VLM_RETURN_IF_ERROR(expect_name(state, &names[count]));
    defaults[count] = NULL;
    if (is_operator(peek(state), "=")) {
      next_token(state);
      VLM_RETURN_IF_ERROR(parse_expression(state, true, &defaults[count]));
    } else if (count && defaults[count - 1]) {
      return parse_error(state, peek(state), "non-default argument follows default argument");
    }
    count++;
  }
  next_token(state);
  VLM_RETURN_IF_ERROR(expect_block_end(state));
  node->parameter_count = count;
  node->parameters = vlm_arena_allocate(state->arena, (count + 1) * sizeof(const char *), 8);
  node->defaults = vlm_arena_allocate(state->arena, (count + 1) * sizeof(jinja_expression *), 8);
  if (!node->parameters || !node->defaults) return OUT_OF_MEMORY;
  memcpy(node->parameters, names, count * sizeof(const char *));
  memcpy(node->defaults, defaults, count * sizeof(jinja_expression *));
  static const char *const ends[] = {"endmacro", NULL};
  const char *end_tag;
  VLM_RETURN_IF_ERROR(parse_body(state, ends, &node->body, &end_tag));
  /* `{% endmacro name %}` is allowed by Jinja */
  if (peek(state)->type == JINJA_TOKEN_NAME) next_token(state);
  VLM_RETURN_IF_ERROR(expect_block_end(state));
  *out = node;
  return VLM_OK;
}

/* Tags Jinja knows but chat templates do not need: refused by name so the
 * user learns why the template cannot be loaded. */
static bool is_unsupported_tag(const char *name) {
  static const char *const tags[] = {"include", "import", "from", "extends", "block", "call",
                                     "filter", "with", "autoescape", "trans", "do", NULL};
  for (size_t i = 0; tags[i]; i++)
    if (!strcmp(name, tags[i])) return true;
  return false;
}

static vlm_status parse_statement(parser *state, jinja_node **out) {
  VLM_RETURN_IF_ERROR(enter(state));
  const jinja_token *token = next_token(state);
  if (token->type != JINJA_TOKEN_NAME)
    return parse_error(state, token, "tag name expected, got '%s'", describe(token));
  const char *name = token->text;
  vlm_status status = VLM_OK;
  if (!strcmp(name, "if")) status = parse_if(state, token, out);
  else if (!strcmp(name, "for")) status = parse_for(state, token, out);
  else if (!strcmp(name, "set")) status = parse_set(state, token, out);
  else if (!strcmp(name, "macro")) status = parse_macro(state, token, out);
  else if (!strcmp(name, "break") || !strcmp(name, "continue")) {
    status = new_node(state, name[0] == 'b' ? JINJA_NODE_BREAK : JINJA_NODE_CONTINUE, token, out);
    if (status == VLM_OK) status = expect_block_end(state);
  } else if (!strcmp(name, "generation")) {
    /* Transformers' AssistantTracker tag: renders its body unchanged. */
    status = new_node(state, JINJA_NODE_SCOPE, token, out);
    if (status == VLM_OK) status = expect_block_end(state);
    static const char *const ends[] = {"endgeneration", NULL};
    const char *end_tag;
    if (status == VLM_OK) status = parse_body(state, ends, &(*out)->body, &end_tag);
    if (status == VLM_OK) status = expect_block_end(state);
  } else if (is_unsupported_tag(name)) {
    return parse_error(state, token, "unsupported Jinja tag '%s' in a chat template", name);
  } else {
    return parse_error(state, token, "Encountered unknown tag '%s'.", name);
  }
  state->depth--;
  return status;
}

/* Statements up to one of `end_tags` (NULL-terminated; NULL itself means
 * the end of the template). Leaves the parser after the end tag's name. */
static vlm_status parse_body(parser *state, const char *const *end_tags, jinja_node **out_body,
                             const char **out_end_tag) {
  VLM_RETURN_IF_ERROR(enter(state));
  jinja_node *head = NULL, **tail = &head;
  for (;;) {
    const jinja_token *token = peek(state);
    jinja_node *node = NULL;
    if (token->type == JINJA_TOKEN_END) {
      if (end_tags)
        return parse_error(state, token, "unexpected end of template: expected '%s'",
                           end_tags[0]);
      break;
    }
    if (token->type == JINJA_TOKEN_TEXT) {
      next_token(state);
      VLM_RETURN_IF_ERROR(new_node(state, JINJA_NODE_TEXT, token, &node));
      node->text = token->text;
      node->length = token->length;
    } else if (token->type == JINJA_TOKEN_VARIABLE_BEGIN) {
      next_token(state);
      VLM_RETURN_IF_ERROR(new_node(state, JINJA_NODE_OUTPUT, token, &node));
      VLM_RETURN_IF_ERROR(parse_tuple(state, true, &node->expression));
      const jinja_token *end = next_token(state);
      if (end->type != JINJA_TOKEN_VARIABLE_END)
        return parse_error(state, end, "expected end of print statement, got '%s'", describe(end));
    } else if (token->type == JINJA_TOKEN_BLOCK_BEGIN) {
      const jinja_token *name = peek_at(state, 1);
      bool is_end = false;
      for (size_t i = 0; end_tags && end_tags[i]; i++) {
        if (is_name(name, end_tags[i])) {
          next_token(state);
          next_token(state);
          *out_end_tag = end_tags[i];
          is_end = true;
        }
      }
      if (is_end) break;
      if (name->type == JINJA_TOKEN_NAME &&
          (!strncmp(name->text, "end", 3) || !strcmp(name->text, "else") || !strcmp(name->text, "elif")))
        return parse_error(state, name, "unexpected '%s'%s%s", name->text,
                           end_tags ? ", expected " : "", end_tags ? end_tags[0] : "");
      next_token(state);
      VLM_RETURN_IF_ERROR(parse_statement(state, &node));
    } else {
      return parse_error(state, token, "unexpected '%s'", describe(token));
    }
    *tail = node;
    tail = &node->next;
  }
  state->depth--;
  *out_body = head;
  return VLM_OK;
}

vlm_status jinja_parse_tokens(const jinja_token_list *tokens, const char *source_name,
                              vlm_arena *arena, jinja_node **out_body) {
  parser state = {.tokens = tokens->tokens, .count = tokens->count,
                  .source_name = source_name, .arena = arena};
  return parse_body(&state, NULL, out_body, NULL);
}
