/* Jinja lexer: template text and tags into tokens.
 *
 * Whitespace handling follows jinja2/lexer.py as Transformers configures it
 * (trim_blocks and lstrip_blocks on):
 *   - `{%-`, `{{-`, `{#-` strip all whitespace before the tag; `-%}`, `-}}`,
 *     `-#}` strip all whitespace after it;
 *   - trim_blocks drops the first newline after `%}` and `#}` (not `}}`);
 *   - lstrip_blocks drops spaces and tabs between the start of a line and a
 *     `{%` or `{#` tag, unless the tag is written `{%+`;
 *   - `{% raw %}...{% endraw %}` is kept verbatim. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "text/jinja_internal.h"

typedef struct lexer {
  const char *source;
  size_t length;
  size_t position;
  int line;
  size_t line_start; /* offset of the current line's first byte */
  const char *source_name;
  vlm_arena *arena;
  jinja_token *tokens;
  size_t count;
  size_t capacity;
  bool line_starting; /* the previous tag's match ended with a newline */
} lexer;

static bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Moves to `position`, counting lines on the way. */
static void advance_to(lexer *state, size_t position) {
  for (size_t i = state->position; i < position; i++) {
    if (state->source[i] == '\n') {
      state->line++;
      state->line_start = i + 1;
    }
  }
  state->position = position;
}

static int column_of(const lexer *state, size_t position) {
  return (int)(position - state->line_start) + 1;
}

static vlm_status lex_error(const lexer *state, size_t position, const char *message) {
  int line = state->line;
  size_t line_start = state->line_start;
  for (size_t i = state->position; i < position && i < state->length; i++) {
    if (state->source[i] == '\n') {
      line++;
      line_start = i + 1;
    }
  }
  return VLM_ERROR(INVALID_ARGUMENT, "%s:%d:%d: %s", state->source_name, line,
                   (int)(position - line_start) + 1, message);
}

static vlm_status push_token(lexer *state, jinja_token_type type, const char *text,
                             size_t length, size_t position, jinja_token **out) {
  if (state->count == state->capacity) {
    size_t capacity = state->capacity ? state->capacity * 2 : 256;
    jinja_token *grown = realloc(state->tokens, capacity * sizeof(*grown));
    if (!grown) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory lexing a template");
    state->tokens = grown;
    state->capacity = capacity;
  }
  jinja_token *token = &state->tokens[state->count++];
  memset(token, 0, sizeof(*token));
  token->type = type;
  token->text = text ? vlm_arena_strndup(state->arena, text, length) : "";
  if (!token->text) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory lexing a template");
  token->length = length;
  token->line = state->line;
  token->column = column_of(state, position);
  if (out) *out = token;
  return VLM_OK;
}

/* Emits template data between tags, after whitespace control. `strip_sign`
 * is the tag's '-', '+' or 0; `lstrip_applies` is true for block and comment
 * tags (lstrip_blocks never touches `{{`). */
static vlm_status push_text(lexer *state, size_t start, size_t end, char strip_sign,
                            bool lstrip_applies) {
  size_t text_end = end;
  if (strip_sign == '-') {
    while (text_end > start && is_space(state->source[text_end - 1])) text_end--;
  } else if (strip_sign != '+' && lstrip_applies) {
    size_t line_begin = start;
    for (size_t i = end; i > start; i--) {
      if (state->source[i - 1] == '\n') {
        line_begin = i;
        break;
      }
    }
    if ((line_begin > start || state->line_starting) && line_begin < end) {
      bool all_space = true;
      for (size_t i = line_begin; i < end; i++)
        if (!is_space(state->source[i])) all_space = false;
      if (all_space) text_end = line_begin;
    }
  }
  if (text_end > start)
    VLM_RETURN_IF_ERROR(push_token(state, JINJA_TOKEN_TEXT, state->source + start,
                                   text_end - start, start, NULL));
  return VLM_OK;
}

static bool starts_with(const lexer *state, size_t position, const char *text) {
  size_t length = strlen(text);
  return position + length <= state->length &&
         memcmp(state->source + position, text, length) == 0;
}

/* Length of a block/comment end at `position` ("+%}", "-%}" + whitespace,
 * "%}" + one newline), or 0. `close` is '%' or '#'. */
static size_t match_tag_end(const lexer *state, size_t position, char close) {
  char plain[3] = {close, '}', 0};
  char plus[4] = {'+', close, '}', 0};
  char minus[4] = {'-', close, '}', 0};
  if (starts_with(state, position, plus)) return 3;
  if (starts_with(state, position, minus)) {
    size_t end = position + 3;
    while (end < state->length && is_space(state->source[end])) end++;
    return end - position;
  }
  if (starts_with(state, position, plain)) {
    size_t end = position + 2;
    if (end < state->length && state->source[end] == '\n') end++;
    return end - position;
  }
  return 0;
}

static size_t match_variable_end(const lexer *state, size_t position) {
  if (starts_with(state, position, "-}}")) {
    size_t end = position + 3;
    while (end < state->length && is_space(state->source[end])) end++;
    return end - position;
  }
  return starts_with(state, position, "}}") ? 2 : 0;
}

/* Finishes a tag whose end is `end_length` bytes at the current position. */
static void consume_tag_end(lexer *state, size_t end_length) {
  size_t end = state->position + end_length;
  state->line_starting = state->source[end - 1] == '\n';
  advance_to(state, end);
}

static vlm_status lex_comment(lexer *state) {
  for (size_t i = state->position; i < state->length; i++) {
    size_t end_length = match_tag_end(state, i, '#');
    if (end_length) {
      advance_to(state, i);
      consume_tag_end(state, end_length);
      return VLM_OK;
    }
  }
  return lex_error(state, state->position, "Missing end of comment tag");
}

/* `{% raw %}` at `tag_start` (strip sign already skipped): when it is one,
 * emits its body as text and returns true in *matched. */
static vlm_status lex_raw(lexer *state, size_t after_sign, bool *matched) {
  *matched = false;
  size_t i = after_sign;
  while (i < state->length && is_space(state->source[i])) i++;
  if (!starts_with(state, i, "raw")) return VLM_OK;
  i += 3;
  while (i < state->length && is_space(state->source[i])) i++;
  size_t open_end;
  if (starts_with(state, i, "-%}")) {
    open_end = i + 3;
    while (open_end < state->length && is_space(state->source[open_end])) open_end++;
  } else if (starts_with(state, i, "%}")) {
    open_end = i + 2;
  } else {
    return VLM_OK;
  }
  *matched = true;
  for (size_t j = open_end; j < state->length; j++) {
    if (!starts_with(state, j, "{%")) continue;
    size_t k = j + 2;
    char sign = 0;
    if (k < state->length && (state->source[k] == '-' || state->source[k] == '+'))
      sign = state->source[k++];
    while (k < state->length && is_space(state->source[k])) k++;
    if (!starts_with(state, k, "endraw")) continue;
    k += 6;
    while (k < state->length && is_space(state->source[k])) k++;
    size_t end_length = match_tag_end(state, k, '%');
    if (!end_length) continue;
    advance_to(state, open_end);
    state->line_starting = false;
    VLM_RETURN_IF_ERROR(push_text(state, open_end, j, sign, true));
    advance_to(state, k);
    consume_tag_end(state, end_length);
    return VLM_OK;
  }
  return lex_error(state, after_sign, "Missing end of raw directive");
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static void append_utf8(vlm_string_builder *builder, uint32_t code_point) {
  char bytes[4];
  size_t length;
  if (code_point < 0x80) {
    bytes[0] = (char)code_point;
    length = 1;
  } else if (code_point < 0x800) {
    bytes[0] = (char)(0xC0 | (code_point >> 6));
    bytes[1] = (char)(0x80 | (code_point & 0x3F));
    length = 2;
  } else if (code_point < 0x10000) {
    bytes[0] = (char)(0xE0 | (code_point >> 12));
    bytes[1] = (char)(0x80 | ((code_point >> 6) & 0x3F));
    bytes[2] = (char)(0x80 | (code_point & 0x3F));
    length = 3;
  } else {
    bytes[0] = (char)(0xF0 | (code_point >> 18));
    bytes[1] = (char)(0x80 | ((code_point >> 12) & 0x3F));
    bytes[2] = (char)(0x80 | ((code_point >> 6) & 0x3F));
    bytes[3] = (char)(0x80 | (code_point & 0x3F));
    length = 4;
  }
  vlm_sb_append(builder, bytes, length);
}

/* Decodes one backslash escape as Python's unicode-escape codec does;
 * unknown escapes keep their backslash. Returns bytes consumed after '\'. */
static size_t decode_escape(const char *text, size_t available, vlm_string_builder *builder) {
  if (available == 0) {
    vlm_sb_append_literal(builder, "\\");
    return 0;
  }
  char c = text[0];
  static const char simple_from[] = "\\'\"abfnrtv\n";
  static const char simple_to[] = "\\'\"\a\b\f\n\r\t\v";
  const char *found = strchr(simple_from, c);
  if (found && c != 0) {
    size_t index = (size_t)(found - simple_from);
    if (c != '\n') vlm_sb_append(builder, &simple_to[index], 1);
    return 1; /* backslash-newline is a line continuation */
  }
  if (c >= '0' && c <= '7') {
    uint32_t value = 0;
    size_t used = 0;
    while (used < 3 && used < available && text[used] >= '0' && text[used] <= '7')
      value = value * 8 + (uint32_t)(text[used++] - '0');
    append_utf8(builder, value);
    return used;
  }
  size_t digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
  if (digits && available > digits) {
    uint32_t value = 0;
    bool valid = true;
    for (size_t i = 1; i <= digits; i++) {
      int digit = hex_value(text[i]);
      if (digit < 0) valid = false;
      else value = value * 16 + (uint32_t)digit;
    }
    if (valid && value <= 0x10FFFF && !(value >= 0xD800 && value <= 0xDFFF)) {
      append_utf8(builder, value);
      return digits + 1;
    }
  }
  vlm_sb_append_literal(builder, "\\");
  return 0;
}

static vlm_status lex_string(lexer *state) {
  size_t start = state->position;
  char quote = state->source[start];
  vlm_string_builder builder = {0};
  size_t i = start + 1;
  while (i < state->length && state->source[i] != quote) {
    if (state->source[i] == '\\') {
      i += 1 + decode_escape(state->source + i + 1, state->length - i - 1, &builder);
    } else {
      vlm_sb_append(&builder, state->source + i, 1);
      i++;
    }
  }
  if (i >= state->length) {
    vlm_sb_release(&builder);
    return lex_error(state, start, "unterminated string literal");
  }
  if (builder.failed) {
    vlm_sb_release(&builder);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory lexing a template");
  }
  vlm_status status = push_token(state, JINJA_TOKEN_STRING, builder.data ? builder.data : "",
                                 builder.length, start, NULL);
  vlm_sb_release(&builder);
  VLM_RETURN_IF_ERROR(status);
  advance_to(state, i + 1);
  return VLM_OK;
}

static vlm_status lex_number(lexer *state) {
  size_t start = state->position, i = start;
  while (i < state->length && isdigit((unsigned char)state->source[i])) i++;
  bool is_float = false;
  if (i + 1 < state->length && state->source[i] == '.' &&
      isdigit((unsigned char)state->source[i + 1])) {
    is_float = true;
    i++;
    while (i < state->length && isdigit((unsigned char)state->source[i])) i++;
  }
  if (i < state->length && (state->source[i] == 'e' || state->source[i] == 'E')) {
    size_t j = i + 1;
    if (j < state->length && (state->source[j] == '+' || state->source[j] == '-')) j++;
    if (j < state->length && isdigit((unsigned char)state->source[j])) {
      is_float = true;
      i = j;
      while (i < state->length && isdigit((unsigned char)state->source[i])) i++;
    }
  }
  jinja_token *token = NULL;
  VLM_RETURN_IF_ERROR(push_token(state, is_float ? JINJA_TOKEN_FLOAT : JINJA_TOKEN_INTEGER,
                                 state->source + start, i - start, start, &token));
  if (is_float) {
    token->number = strtod(token->text, NULL);
  } else {
    if (i - start > 1 && state->source[start] == '0')
      return lex_error(state, start, "integer literals may not start with 0");
    if (i - start > 18) return lex_error(state, start, "integer literal too large");
    token->integer = strtoll(token->text, NULL, 10);
  }
  advance_to(state, i);
  return VLM_OK;
}

static const char *const operators[] = {
    "//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[", "]",
    "(",  ")",  "{",  "}",  ">",  "<",  "=", ".", ":", "|", ",", ";",
};

/* Tokens inside `{{ }}` or `{% %}` up to the closing delimiter, which is only
 * recognised outside brackets (so `{{ {'a': {}} }}` works, as in Jinja). */
static vlm_status lex_tag(lexer *state, bool is_block) {
  char brackets[JINJA_MAX_NESTING];
  size_t depth = 0;
  size_t tag_start = state->position;
  for (;;) {
    while (state->position < state->length && is_space(state->source[state->position]))
      advance_to(state, state->position + 1);
    if (state->position >= state->length)
      return lex_error(state, tag_start, is_block ? "unexpected end of template inside a block tag"
                                                  : "unexpected end of template inside {{ }}");
    if (depth == 0) {
      size_t end_length = is_block ? match_tag_end(state, state->position, '%')
                                   : match_variable_end(state, state->position);
      if (end_length) {
        VLM_RETURN_IF_ERROR(push_token(state, is_block ? JINJA_TOKEN_BLOCK_END : JINJA_TOKEN_VARIABLE_END,
                                       NULL, 0, state->position, NULL));
        consume_tag_end(state, end_length);
        return VLM_OK;
      }
    }
    char c = state->source[state->position];
    if (isdigit((unsigned char)c)) {
      VLM_RETURN_IF_ERROR(lex_number(state));
    } else if (isalpha((unsigned char)c) || c == '_') {
      size_t end = state->position;
      while (end < state->length &&
             (isalnum((unsigned char)state->source[end]) || state->source[end] == '_'))
        end++;
      VLM_RETURN_IF_ERROR(push_token(state, JINJA_TOKEN_NAME, state->source + state->position,
                                     end - state->position, state->position, NULL));
      advance_to(state, end);
    } else if (c == '\'' || c == '"') {
      VLM_RETURN_IF_ERROR(lex_string(state));
    } else {
      const char *match = NULL;
      for (size_t i = 0; i < sizeof(operators) / sizeof(operators[0]) && !match; i++)
        if (starts_with(state, state->position, operators[i])) match = operators[i];
      if (!match) {
        char message[64];
        snprintf(message, sizeof(message), "unexpected character '%c'", c);
        if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
          snprintf(message, sizeof(message), "unexpected byte 0x%02x", (unsigned char)c);
        return lex_error(state, state->position, message);
      }
      char first = match[0];
      if (first == '(' || first == '[' || first == '{') {
        if (depth == JINJA_MAX_NESTING) return lex_error(state, state->position, "brackets nest too deeply");
        brackets[depth++] = first == '(' ? ')' : first == '[' ? ']' : '}';
      } else if (first == ')' || first == ']' || first == '}') {
        if (depth == 0 || brackets[depth - 1] != first) {
          char message[48];
          snprintf(message, sizeof(message), "unexpected '%c'", first);
          return lex_error(state, state->position, message);
        }
        depth--;
      }
      size_t length = strlen(match);
      VLM_RETURN_IF_ERROR(push_token(state, JINJA_TOKEN_OPERATOR, match, length,
                                     state->position, NULL));
      advance_to(state, state->position + length);
    }
  }
}

/* Finds the next `{{`, `{%` or `{#` at or after `from`. */
static size_t find_tag(const lexer *state, size_t from) {
  for (size_t i = from; i + 1 < state->length; i++) {
    if (state->source[i] != '{') continue;
    char next = state->source[i + 1];
    if (next == '{' || next == '%' || next == '#') return i;
  }
  return state->length;
}

static vlm_status lex_all(lexer *state) {
  while (state->position < state->length) {
    size_t tag = find_tag(state, state->position);
    if (tag == state->length) {
      VLM_RETURN_IF_ERROR(push_text(state, state->position, state->length, 0, false));
      advance_to(state, state->length);
      break;
    }
    char kind = state->source[tag + 1];
    char sign = 0;
    size_t after = tag + 2;
    if (after < state->length && (state->source[after] == '-' || state->source[after] == '+'))
      sign = state->source[after++];
    if (kind == '%') {
      bool is_raw = false;
      size_t text_start = state->position;
      /* raw needs the text emitted first, with the raw tag's strip sign */
      size_t i = after;
      while (i < state->length && is_space(state->source[i])) i++;
      if (starts_with(state, i, "raw")) {
        VLM_RETURN_IF_ERROR(push_text(state, text_start, tag, sign, true));
        advance_to(state, tag);
        VLM_RETURN_IF_ERROR(lex_raw(state, after, &is_raw));
        if (is_raw) continue;
        /* not a raw tag after all (e.g. `{% rawx %}`): lex it as a block */
        VLM_RETURN_IF_ERROR(push_token(state, JINJA_TOKEN_BLOCK_BEGIN, NULL, 0, tag, NULL));
        advance_to(state, after);
        VLM_RETURN_IF_ERROR(lex_tag(state, true));
        continue;
      }
    }
    VLM_RETURN_IF_ERROR(push_text(state, state->position, tag, sign, kind != '{'));
    advance_to(state, tag);
    if (kind == '#') {
      advance_to(state, after);
      VLM_RETURN_IF_ERROR(lex_comment(state));
      continue;
    }
    VLM_RETURN_IF_ERROR(push_token(state, kind == '%' ? JINJA_TOKEN_BLOCK_BEGIN : JINJA_TOKEN_VARIABLE_BEGIN,
                                   NULL, 0, tag, NULL));
    advance_to(state, after);
    VLM_RETURN_IF_ERROR(lex_tag(state, kind == '%'));
  }
  return push_token(state, JINJA_TOKEN_END, NULL, 0, state->length, NULL);
}

vlm_status jinja_lex(const char *source, size_t length, const char *source_name,
                     vlm_arena *arena, jinja_token_list *out_tokens) {
  lexer state = {.source = source, .length = length, .line = 1, .source_name = source_name,
                 .arena = arena, .line_starting = true};
  vlm_status status = lex_all(&state);
  if (status != VLM_OK) {
    free(state.tokens);
    return status;
  }
  /* Move the tokens into the arena so the caller has one thing to free. */
  jinja_token *tokens = vlm_arena_allocate(arena, state.count * sizeof(jinja_token), 8);
  if (!tokens) {
    free(state.tokens);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory lexing a template");
  }
  memcpy(tokens, state.tokens, state.count * sizeof(jinja_token));
  free(state.tokens);
  out_tokens->tokens = tokens;
  out_tokens->count = state.count;
  return VLM_OK;
}
