/* JSON Schema -> GBNF (see grammar_schema.h). Each schema node becomes a
 * rule `s<N>`; a $ref target gets its rule before its body is compiled, so
 * recursive schemas become recursive rules (always behind a '{' or '[',
 * never left-recursive). The primitives (ws, string, number, ...) are
 * emitted once, when first used. */
#include "text/grammar_schema.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "text/grammar.h"

typedef struct ref_entry {
  const vlm_json_value *target;
  char *rule;
} ref_entry;

struct vlm_schema_compiler {
  vlm_string_builder rules;
  const vlm_json_value *document; /* the root of the schema being added (for $ref) */
  ref_entry *refs;
  size_t ref_count, ref_capacity;
  char **names;                   /* rule names handed out */
  size_t name_count, name_capacity;
  int next_rule;
  int nodes;
  unsigned used;                  /* primitives emitted */
  char path[512];                 /* where we are, as a JSON pointer */
  bool python;                    /* values as Python literals (True, False, None; no "\/") */
  bool kwargs;                    /* the next top-level object: keyword arguments */
};

enum {
  USE_WS = 1, USE_STRING = 2, USE_NUMBER = 4, USE_INTEGER = 8, USE_BOOLEAN = 16, USE_NULL = 32,
  USE_VALUE = 64, USE_CHAR = 128,
};

static const char *const PRIMITIVES[] = {
    "ws ::= | \" \" | \"\\n\" [ \\t]{0,20}\n",
    "string ::= \"\\\"\" char* \"\\\"\" ws\n",
    "number ::= \"-\"? ([0-9] | [1-9] [0-9]{1,15}) (\".\" [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})? ws\n",
    "integer ::= \"-\"? ([0-9] | [1-9] [0-9]{1,15}) ws\n",
    "boolean ::= (\"true\" | \"false\") ws\n",
    "null ::= \"null\" ws\n",
    "value ::= object | array | string | number | boolean | null\n"
    "object ::= \"{\" ws (string \":\" ws value (\",\" ws string \":\" ws value)*)? \"}\" ws\n"
    "array ::= \"[\" ws (value (\",\" ws value)*)? \"]\" ws\n",
    "char ::= [^\"\\\\\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4})\n",
};

/* The same in Python's literal syntax (the pythonic tool-call format):
 * what differs from JSON; everything else is shared. */
static const char *const PYTHON_PRIMITIVES[] = {
    NULL, NULL, NULL, NULL,
    "boolean ::= (\"True\" | \"False\") ws\n",
    "null ::= \"None\" ws\n",
    NULL,
    "char ::= [^\"\\\\\\x00-\\x1F] | \"\\\\\" ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})\n",
};

static void use(vlm_schema_compiler *c, unsigned what) {
  if (what & (USE_VALUE)) what |= USE_STRING | USE_NUMBER | USE_BOOLEAN | USE_NULL | USE_WS;
  if (what & (USE_STRING)) what |= USE_CHAR | USE_WS;
  if (what & (USE_NUMBER | USE_INTEGER | USE_BOOLEAN | USE_NULL)) what |= USE_WS;
  unsigned fresh = what & ~c->used;
  for (int i = 0; i < 8; i++)
    if (fresh & (1u << i)) {
      const char *rule = c->python && PYTHON_PRIMITIVES[i] ? PYTHON_PRIMITIVES[i] : PRIMITIVES[i];
      vlm_sb_append(&c->rules, rule, strlen(rule));
    }
  c->used |= what;
}

vlm_status vlm_schema_compiler_create(vlm_schema_compiler **out_compiler) {
  *out_compiler = calloc(1, sizeof(vlm_schema_compiler));
  if (!*out_compiler) return VLM_ERROR(RESOURCE_EXHAUSTED, "schema: out of memory");
  strcpy((*out_compiler)->path, "#");
  return VLM_OK;
}

void vlm_schema_compiler_release(vlm_schema_compiler *c) {
  if (!c) return;
  vlm_sb_release(&c->rules);
  for (size_t i = 0; i < c->ref_count; i++) free(c->refs[i].rule);
  free(c->refs);
  for (size_t i = 0; i < c->name_count; i++) free(c->names[i]);
  free(c->names);
  free(c);
}

static vlm_status refuse(const vlm_schema_compiler *c, const char *format, ...) __attribute__((format(printf, 2, 3)));
static vlm_status refuse(const vlm_schema_compiler *c, const char *format, ...) {
  char message[400];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return VLM_ERROR(INVALID_ARGUMENT, "%s at %s", message, c->path);
}

static const char *new_name(vlm_schema_compiler *c) {
  if (c->name_count == c->name_capacity) {
    size_t capacity = c->name_capacity ? c->name_capacity * 2 : 32;
    char **names = realloc(c->names, capacity * sizeof(*names));
    if (!names) return NULL;
    c->names = names;
    c->name_capacity = capacity;
  }
  char buffer[32];
  snprintf(buffer, sizeof(buffer), "s%d", c->next_rule++);
  c->names[c->name_count] = strdup(buffer);
  return c->names[c->name_count] ? c->names[c->name_count++] : NULL;
}

char *vlm_gbnf_literal(const char *text, size_t length) {
  vlm_string_builder out = {0};
  vlm_sb_append_literal(&out, "\"");
  for (size_t i = 0; i < length; i++) {
    unsigned char ch = (unsigned char)text[i];
    if (ch == '"' || ch == '\\') vlm_sb_appendf(&out, "\\%c", ch);
    else if (ch < 0x20 || ch == 0x7F) vlm_sb_appendf(&out, "\\x%02X", ch);
    else vlm_sb_append(&out, (const char *)&ch, 1);
  }
  vlm_sb_append_literal(&out, "\"");
  return vlm_sb_finish(&out);
}

static void append_rule(vlm_schema_compiler *c, const char *name, const char *body) {
  vlm_sb_appendf(&c->rules, "%s ::= %s\n", name, body);
}

void vlm_schema_compiler_add_rule(vlm_schema_compiler *c, const char *name, const char *body) {
  append_rule(c, name, body);
}

/* A JSON value as a Python literal: JSON's syntax but True, False, None. */
static void append_python_literal(vlm_string_builder *out, const vlm_json_value *value) {
  switch (value->type) {
    case VLM_JSON_BOOL:
      if (value->as.boolean) vlm_sb_append_literal(out, "True");
      else vlm_sb_append_literal(out, "False");
      return;
    case VLM_JSON_NULL: vlm_sb_append_literal(out, "None"); return;
    case VLM_JSON_ARRAY:
      vlm_sb_append_literal(out, "[");
      for (size_t i = 0; i < value->as.array.count; i++) {
        if (i) vlm_sb_append_literal(out, ",");
        append_python_literal(out, &value->as.array.items[i]);
      }
      vlm_sb_append_literal(out, "]");
      return;
    case VLM_JSON_OBJECT:
      vlm_sb_append_literal(out, "{");
      for (size_t i = 0; i < value->as.object.count; i++) {
        const vlm_json_member *member = &value->as.object.members[i];
        if (i) vlm_sb_append_literal(out, ",");
        vlm_sb_append_json_string(out, member->key, member->key_length);
        vlm_sb_append_literal(out, ":");
        append_python_literal(out, &member->value);
      }
      vlm_sb_append_literal(out, "}");
      return;
    default: vlm_sb_append_json_value(out, value); return;
  }
}

/* The literal of a JSON value written compactly, then ws. */
static vlm_status literal_of_value(vlm_schema_compiler *c, const vlm_json_value *value, vlm_string_builder *out) {
  vlm_string_builder json = {0};
  if (c->python) append_python_literal(&json, value);
  else vlm_sb_append_json_value(&json, value);
  char *text = vlm_sb_finish(&json);
  char *literal = text ? vlm_gbnf_literal(text, strlen(text)) : NULL;
  free(text);
  if (!literal) return VLM_ERROR(RESOURCE_EXHAUSTED, "schema: out of memory");
  vlm_sb_append(out, literal, strlen(literal));
  free(literal);
  use(c, USE_WS);
  vlm_sb_append_literal(out, " ws");
  return VLM_OK;
}

/* ---- integer ranges ------------------------------------------------------ */

/* Decimal strings lo..hi of the same length n (lo <= hi), as GBNF. */
static void same_length_range(vlm_string_builder *out, const char *lo, const char *hi, size_t n) {
  if (n == 0) {
    vlm_sb_append_literal(out, "\"\"");
    return;
  }
  if (memcmp(lo, hi, n) == 0) {
    vlm_sb_appendf(out, "\"%.*s\"", (int)n, lo);
    return;
  }
  if (n == 1) {
    vlm_sb_appendf(out, "[%c-%c]", lo[0], hi[0]);
    return;
  }
  bool low_zeros = true, high_nines = true;
  for (size_t i = 1; i < n; i++) {
    low_zeros &= lo[i] == '0';
    high_nines &= hi[i] == '9';
  }
  if (low_zeros && high_nines) {
    vlm_sb_appendf(out, "[%c-%c] [0-9]{%zu}", lo[0], hi[0], n - 1);
    return;
  }
  if (lo[0] == hi[0]) {
    vlm_sb_appendf(out, "\"%c\" (", lo[0]);
    same_length_range(out, lo + 1, hi + 1, n - 1);
    vlm_sb_append_literal(out, ")");
    return;
  }
  char nines[24], zeros[24];
  memset(nines, '9', n);
  memset(zeros, '0', n);
  vlm_sb_appendf(out, "\"%c\" (", lo[0]);
  same_length_range(out, lo + 1, nines, n - 1);
  vlm_sb_append_literal(out, ")");
  if (lo[0] + 1 <= hi[0] - 1) vlm_sb_appendf(out, " | [%c-%c] [0-9]{%zu}", lo[0] + 1, hi[0] - 1, n - 1);
  vlm_sb_appendf(out, " | \"%c\" (", hi[0]);
  same_length_range(out, zeros, hi + 1, n - 1);
  vlm_sb_append_literal(out, ")");
}

#define MAX_DIGITS 16 /* integers are at most 16 digits, as the number rule */

/* Non-negative integers a..b (b < 0: unbounded), canonical (no leading
 * zeros), as alternatives. */
static void natural_range(vlm_string_builder *out, long long a, long long b) {
  char low[24], high[24];
  int la = snprintf(low, sizeof(low), "%lld", a);
  bool first = true;
  for (int length = la; length <= MAX_DIGITS; length++) {
    long long smallest = length == 1 ? 0 : (long long)pow(10, length - 1);
    long long largest = (long long)pow(10, length) - 1;
    long long from = a > smallest ? a : smallest;
    long long to = b >= 0 && b < largest ? b : largest;
    if (b >= 0 && from > b) break;
    if (from > to) continue;
    if (!first) vlm_sb_append_literal(out, " | ");
    first = false;
    if (b < 0 && from == smallest && length > 1) { /* every longer number too */
      vlm_sb_appendf(out, "[1-9] [0-9]{%d,%d}", length - 1, MAX_DIGITS - 1);
      break;
    }
    snprintf(low, sizeof(low), "%0*lld", length, from);
    snprintf(high, sizeof(high), "%0*lld", length, to);
    vlm_sb_append_literal(out, "(");
    same_length_range(out, low, high, (size_t)length);
    vlm_sb_append_literal(out, ")");
  }
  if (first) vlm_sb_append_literal(out, "\"0\""); /* unreachable: callers check a <= b */
}

#define LIMIT_BOUND 1000000000000000ll /* 1e15 */

/* Integers in [lo, hi] (has_lo/has_hi: bounded side), as one group. */
static void integer_range(vlm_string_builder *out, bool has_lo, long long lo, bool has_hi, long long hi) {
  vlm_sb_append_literal(out, "(");
  bool first = true;
  if (!has_lo || lo <= -1) { /* negatives -k, k in [max(1,-hi), -lo] */
    long long from = has_hi && -hi > 1 ? -hi : 1;
    long long to = has_lo ? -lo : -1;
    if (to < 0 || from <= to) {
      vlm_sb_append_literal(out, "\"-\" (");
      natural_range(out, from, to);
      vlm_sb_append_literal(out, ")");
      first = false;
    }
  }
  if (!has_hi || hi >= 0) {
    long long from = has_lo && lo > 0 ? lo : 0;
    if (!first) vlm_sb_append_literal(out, " | ");
    natural_range(out, from, has_hi ? hi : -1);
  }
  vlm_sb_append_literal(out, ")");
}

/* ---- regex patterns -> GBNF over JSON string content --------------------- */

typedef struct regex_parser {
  const char *at, *end;
  vlm_string_builder *out;
  vlm_status status;
  const vlm_schema_compiler *compiler;
  int depth;
} regex_parser;

static bool regex_fail(regex_parser *r, const char *what) {
  if (!r->status) r->status = refuse(r->compiler, "unsupported in 'pattern': %s", what);
  return false;
}

/* A literal code point inside a JSON string: JSON-special ones escaped. */
static void regex_literal(regex_parser *r, const char *bytes, size_t length) {
  if (length == 1 && (bytes[0] == '"' || bytes[0] == '\\')) {
    vlm_sb_appendf(r->out, "\"\\\\\\%c\"", bytes[0]);
  } else if (length == 1 && (unsigned char)bytes[0] < 0x20) {
    static const char *const names = "btn\x01" "fr";
    const char *escape = NULL;
    char c = bytes[0];
    if (c == '\b') escape = "b";
    else if (c == '\t') escape = "t";
    else if (c == '\n') escape = "n";
    else if (c == '\f') escape = "f";
    else if (c == '\r') escape = "r";
    (void)names;
    if (escape) vlm_sb_appendf(r->out, "\"\\\\%s\"", escape);
    else vlm_sb_appendf(r->out, "\"\\\\u00%02x\"", (unsigned char)c);
  } else {
    char *literal = vlm_gbnf_literal(bytes, length);
    if (literal) vlm_sb_append(r->out, literal, strlen(literal));
    free(literal);
  }
}

/* One class member range written into a GBNF class body, skipping what a
 * JSON string would need to escape (a sound restriction). */
static void class_range(vlm_string_builder *body, unsigned lo, unsigned hi) {
  for (unsigned c = lo; c <= hi && c < 0x80;) {
    if (c < 0x20 || c == '"' || c == '\\') {
      c++;
      continue;
    }
    unsigned end = c;
    while (end + 1 <= hi && end + 1 < 0x80 && end + 1 != '"' && end + 1 != '\\') end++;
    if (c == end) vlm_sb_appendf(body, "\\x%02X", c);
    else vlm_sb_appendf(body, "\\x%02X-\\x%02X", c, end);
    c = end + 1;
  }
}

static bool regex_class_escape(char e, vlm_string_builder *body, bool *negated_member) {
  *negated_member = false;
  switch (e) {
    case 'd': class_range(body, '0', '9'); return true;
    case 'w': class_range(body, 'a', 'z'); class_range(body, 'A', 'Z'); class_range(body, '0', '9'); class_range(body, '_', '_'); return true;
    case 's': class_range(body, ' ', ' '); return true;
    default: return false;
  }
}

static int regex_escape_char(char e) {
  switch (e) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case 'f': return '\f';
    case 'v': return '\v';
    case '.': case '\\': case '/': case '-': case '^': case '$': case '*': case '+': case '?': case '(': case ')':
    case '[': case ']': case '{': case '}': case '|': case '"': case '\'': case ' ': case ',': case ':': case '#':
    case '&': case '~': case '=': case '!': case '<': case '>': case '@': case '%': case '_': case ';': case '`':
      return e;
    default: return -1;
  }
}

static bool regex_class(regex_parser *r) {
  r->at++; /* [ */
  bool negated = r->at < r->end && *r->at == '^';
  if (negated) r->at++;
  vlm_string_builder body = {0};
  bool first = true;
  while (r->at < r->end && (*r->at != ']' || first)) {
    first = false;
    unsigned lo;
    if (*r->at == '\\') {
      if (r->at + 1 >= r->end) {
        vlm_sb_release(&body);
        return regex_fail(r, "a trailing backslash");
      }
      char e = r->at[1];
      bool unused;
      if (!negated && regex_class_escape(e, &body, &unused)) {
        r->at += 2;
        continue;
      }
      if (negated && (e == 'd' || e == 'w' || e == 's')) {
        regex_class_escape(e, &body, &unused);
        r->at += 2;
        continue;
      }
      int value = regex_escape_char(e);
      if (value < 0) {
        vlm_sb_release(&body);
        return regex_fail(r, "an escape it does not know in a class");
      }
      lo = (unsigned)value;
      r->at += 2;
    } else if ((unsigned char)*r->at >= 0x80) {
      vlm_sb_release(&body);
      return regex_fail(r, "a non-ASCII character in a class");
    } else {
      lo = (unsigned char)*r->at++;
    }
    unsigned hi = lo;
    if (r->at + 1 < r->end && *r->at == '-' && r->at[1] != ']') {
      r->at++;
      if (*r->at == '\\') {
        int value = r->at + 1 < r->end ? regex_escape_char(r->at[1]) : -1;
        if (value < 0) {
          vlm_sb_release(&body);
          return regex_fail(r, "a class range it cannot read");
        }
        hi = (unsigned)value;
        r->at += 2;
      } else if ((unsigned char)*r->at >= 0x80) {
        vlm_sb_release(&body);
        return regex_fail(r, "a non-ASCII character in a class");
      } else {
        hi = (unsigned char)*r->at++;
      }
      if (hi < lo) {
        vlm_sb_release(&body);
        return regex_fail(r, "a class range out of order");
      }
    }
    if (negated) {
      /* excluded members: written as they are (the class excludes the
       * JSON specials anyway) */
      for (unsigned c = lo; c <= hi && c < 0x80; c++)
        if (c >= 0x20 && c != '"' && c != '\\') vlm_sb_appendf(&body, "\\x%02X", c);
    } else {
      class_range(&body, lo, hi);
    }
  }
  if (r->at >= r->end) {
    vlm_sb_release(&body);
    return regex_fail(r, "an unterminated class");
  }
  r->at++;
  char *text = vlm_sb_finish(&body);
  if (!text) return regex_fail(r, "out of memory");
  if (negated) vlm_sb_appendf(r->out, "[^\"\\\\\\x00-\\x1F%s]", text);
  else if (!*text) {
    free(text);
    return regex_fail(r, "a class of only characters JSON must escape");
  } else vlm_sb_appendf(r->out, "[%s]", text);
  free(text);
  return true;
}

static bool regex_alternatives(regex_parser *r);

static bool regex_atom(regex_parser *r) {
  char c = *r->at;
  if (c == '(') {
    if (++r->depth > 32) return regex_fail(r, "groups nested deeper than 32");
    r->at++;
    if (r->at < r->end && *r->at == '?') {
      if (r->at + 1 < r->end && r->at[1] == ':') r->at += 2;
      else return regex_fail(r, "lookaround or named groups");
    }
    vlm_sb_append_literal(r->out, "(");
    if (!regex_alternatives(r)) return false;
    if (r->at >= r->end || *r->at != ')') return regex_fail(r, "an unbalanced parenthesis");
    r->at++;
    r->depth--;
    vlm_sb_append_literal(r->out, ")");
    return true;
  }
  if (c == '[') return regex_class(r);
  if (c == '.') {
    r->at++;
    vlm_sb_append_literal(r->out, "[^\"\\\\\\x00-\\x1F]");
    return true;
  }
  if (c == '\\') {
    if (r->at + 1 >= r->end) return regex_fail(r, "a trailing backslash");
    char e = r->at[1];
    r->at += 2;
    vlm_string_builder body = {0};
    bool unused;
    if (regex_class_escape(e, &body, &unused)) {
      char *text = vlm_sb_finish(&body);
      vlm_sb_appendf(r->out, "[%s]", text ? text : "");
      free(text);
      return true;
    }
    vlm_sb_release(&body);
    if (e == 'D' || e == 'W' || e == 'S') {
      const char *excluded = e == 'D' ? "0-9" : e == 'W' ? "a-zA-Z0-9_" : " ";
      vlm_sb_appendf(r->out, "[^\"\\\\\\x00-\\x1F%s]", excluded);
      return true;
    }
    int value = regex_escape_char(e);
    if (value < 0) return regex_fail(r, "backreferences, \\b or an unknown escape");
    char byte = (char)value;
    regex_literal(r, &byte, 1);
    return true;
  }
  if (c == '*' || c == '+' || c == '?' || c == '{') return regex_fail(r, "a quantifier with nothing before it");
  /* a literal code point (UTF-8 copied whole) */
  size_t length = 1;
  unsigned char lead = (unsigned char)c;
  if (lead >= 0xC0) length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
  if (r->at + length > r->end) return regex_fail(r, "invalid UTF-8");
  regex_literal(r, r->at, length);
  r->at += length;
  return true;
}

static bool regex_quantifier(regex_parser *r) {
  if (r->at >= r->end) return true;
  char c = *r->at;
  if (c == '*' || c == '+' || c == '?') {
    vlm_sb_append(r->out, &c, 1);
    r->at++;
  } else if (c == '{') {
    const char *close = memchr(r->at, '}', (size_t)(r->end - r->at));
    if (!close) return regex_fail(r, "an unterminated {m,n}");
    long min = 0, max = -1;
    char buffer[32];
    size_t length = (size_t)(close - r->at - 1);
    if (length == 0 || length >= sizeof(buffer)) return regex_fail(r, "a {m,n} it cannot read");
    memcpy(buffer, r->at + 1, length);
    buffer[length] = 0;
    char *end = NULL;
    min = strtol(buffer, &end, 10);
    if (end == buffer) return regex_fail(r, "a {m,n} it cannot read");
    if (*end == ',') {
      char *second = end + 1;
      if (*second) {
        max = strtol(second, &end, 10);
        if (end == second) return regex_fail(r, "a {m,n} it cannot read");
      }
    } else {
      max = min;
    }
    if (*end || min < 0 || min > 1000 || (max >= 0 && (max < min || max > 1000)))
      return regex_fail(r, "a {m,n} over 1000 or out of order");
    if (max < 0) vlm_sb_appendf(r->out, "{%ld,}", min);
    else vlm_sb_appendf(r->out, "{%ld,%ld}", min, max);
    r->at = close + 1;
  } else {
    return true;
  }
  if (r->at < r->end && (*r->at == '?' || *r->at == '+')) r->at++; /* lazy/possessive: same language */
  return true;
}

static bool regex_sequence(regex_parser *r) {
  bool any = false;
  while (r->at < r->end && *r->at != '|' && *r->at != ')') {
    if (*r->at == '^' || *r->at == '$') { /* anchors: the whole string is matched anyway */
      r->at++;
      continue;
    }
    vlm_sb_append_literal(r->out, " ");
    if (!regex_atom(r) || !regex_quantifier(r)) return false;
    any = true;
  }
  if (!any) vlm_sb_append_literal(r->out, " \"\"");
  return true;
}

static bool regex_alternatives(regex_parser *r) {
  if (!regex_sequence(r)) return false;
  while (r->at < r->end && *r->at == '|') {
    r->at++;
    vlm_sb_append_literal(r->out, " |");
    if (!regex_sequence(r)) return false;
  }
  return true;
}

/* ---- schema nodes ---------------------------------------------------------- */

static vlm_status compile_node(vlm_schema_compiler *c, const vlm_json_value *schema, int depth, const char **out);

static bool is_annotation(const char *key) {
  static const char *const keys[] = {"title", "description", "default", "examples", "$schema", "$id", "$comment",
                                     "deprecated", "readOnly", "writeOnly", "$defs", "definitions", NULL};
  for (int i = 0; keys[i]; i++)
    if (strcmp(key, keys[i]) == 0) return true;
  return false;
}

/* Pushes "/segment" on the path; returns the old length. */
static size_t path_push(vlm_schema_compiler *c, const char *segment) {
  size_t length = strlen(c->path);
  snprintf(c->path + length, sizeof(c->path) - length, "/%s", segment);
  return length;
}

static vlm_status resolve_ref(vlm_schema_compiler *c, const char *ref, const vlm_json_value **out) {
  if (ref[0] != '#') return refuse(c, "'$ref' to another document (%.60s)", ref);
  const vlm_json_value *node = c->document;
  const char *at = ref + 1;
  while (*at) {
    if (*at != '/') return refuse(c, "'$ref' is not a JSON pointer (%.60s)", ref);
    at++;
    char segment[256];
    size_t length = 0;
    while (*at && *at != '/') {
      char ch = *at++;
      if (ch == '~' && (*at == '0' || *at == '1')) ch = *at++ == '0' ? '~' : '/';
      if (length + 1 >= sizeof(segment)) return refuse(c, "'$ref' segment too long");
      segment[length++] = ch;
    }
    segment[length] = 0;
    if (node->type == VLM_JSON_OBJECT) {
      node = vlm_json_object_get(node, segment);
    } else if (node->type == VLM_JSON_ARRAY) {
      char *end = NULL;
      long index = strtol(segment, &end, 10);
      node = *end || index < 0 ? NULL : vlm_json_array_get(node, (size_t)index);
    } else {
      node = NULL;
    }
    if (!node) return refuse(c, "'$ref' %.60s points at nothing", ref);
  }
  *out = node;
  return VLM_OK;
}

static vlm_status compile_ref(vlm_schema_compiler *c, const char *ref, int depth, const char **out) {
  const vlm_json_value *target = NULL;
  VLM_RETURN_IF_ERROR(resolve_ref(c, ref, &target));
  for (size_t i = 0; i < c->ref_count; i++)
    if (c->refs[i].target == target) {
      *out = c->refs[i].rule;
      return VLM_OK;
    }
  if (c->ref_count == c->ref_capacity) {
    size_t capacity = c->ref_capacity ? c->ref_capacity * 2 : 16;
    ref_entry *refs = realloc(c->refs, capacity * sizeof(*refs));
    if (!refs) return VLM_ERROR(RESOURCE_EXHAUSTED, "schema: out of memory");
    c->refs = refs;
    c->ref_capacity = capacity;
  }
  const char *name = new_name(c);
  if (!name) return VLM_ERROR(RESOURCE_EXHAUSTED, "schema: out of memory");
  c->refs[c->ref_count].target = target;
  c->refs[c->ref_count].rule = strdup(name);
  if (!c->refs[c->ref_count].rule) return VLM_ERROR(RESOURCE_EXHAUSTED, "schema: out of memory");
  c->ref_count++;
  /* The rule exists before its body, so a recursive $ref refers to it. */
  const char *body = NULL;
  char saved[sizeof(c->path)];
  memcpy(saved, c->path, sizeof(saved));
  snprintf(c->path, sizeof(c->path), "%.500s", ref);
  vlm_status status = compile_node(c, target, depth + 1, &body);
  memcpy(c->path, saved, sizeof(saved));
  VLM_RETURN_IF_ERROR(status);
  append_rule(c, name, body);
  *out = name;
  return VLM_OK;
}

static vlm_status get_bound(vlm_schema_compiler *c, const vlm_json_value *schema, const char *key, bool *has,
                            double *value) {
  const vlm_json_value *field = vlm_json_object_get(schema, key);
  *has = false;
  if (!field) return VLM_OK;
  if (!vlm_json_get_double(field, value) || !isfinite(*value)) return refuse(c, "'%s' must be a number", key);
  if (fabs(*value) > (double)LIMIT_BOUND) return refuse(c, "'%s' beyond +-1e15 is not supported", key);
  *has = true;
  return VLM_OK;
}

static vlm_status compile_integer(vlm_schema_compiler *c, const vlm_json_value *schema, vlm_string_builder *out) {
  bool has_min, has_max, has_xmin, has_xmax;
  double min, max, xmin, xmax;
  VLM_RETURN_IF_ERROR(get_bound(c, schema, "minimum", &has_min, &min));
  VLM_RETURN_IF_ERROR(get_bound(c, schema, "maximum", &has_max, &max));
  VLM_RETURN_IF_ERROR(get_bound(c, schema, "exclusiveMinimum", &has_xmin, &xmin));
  VLM_RETURN_IF_ERROR(get_bound(c, schema, "exclusiveMaximum", &has_xmax, &xmax));
  if (!has_min && !has_max && !has_xmin && !has_xmax) {
    use(c, USE_INTEGER);
    vlm_sb_append_literal(out, "integer");
    return VLM_OK;
  }
  bool has_lo = has_min || has_xmin, has_hi = has_max || has_xmax;
  long long lo = (long long)-LIMIT_BOUND, hi = (long long)LIMIT_BOUND;
  if (has_min) lo = (long long)ceil(min);
  if (has_xmin && (long long)floor(xmin) + 1 > lo) lo = (long long)floor(xmin) + 1;
  if (has_max) hi = (long long)floor(max);
  if (has_xmax && (long long)ceil(xmax) - 1 < hi) hi = (long long)ceil(xmax) - 1;
  if (has_lo && has_hi && lo > hi) return refuse(c, "'minimum' is above 'maximum': no integer fits");
  integer_range(out, has_lo, lo, has_hi, hi);
  use(c, USE_WS);
  vlm_sb_append_literal(out, " ws");
  return VLM_OK;
}

static vlm_status compile_number(vlm_schema_compiler *c, const vlm_json_value *schema, vlm_string_builder *out) {
  if (vlm_json_object_get(schema, "exclusiveMinimum") || vlm_json_object_get(schema, "exclusiveMaximum"))
    return refuse(c, "unsupported JSON Schema keyword '%s' on a number",
                  vlm_json_object_get(schema, "exclusiveMinimum") ? "exclusiveMinimum" : "exclusiveMaximum");
  bool has_lo, has_hi;
  double min, max;
  VLM_RETURN_IF_ERROR(get_bound(c, schema, "minimum", &has_lo, &min));
  VLM_RETURN_IF_ERROR(get_bound(c, schema, "maximum", &has_hi, &max));
  if (!has_lo && !has_hi) {
    use(c, USE_NUMBER);
    vlm_sb_append_literal(out, "number");
    return VLM_OK;
  }
  if ((has_lo && min != floor(min)) || (has_hi && max != floor(max)))
    return refuse(c, "unsupported '%s' with a fractional value on a number",
                  has_lo && min != floor(min) ? "minimum" : "maximum");
  long long lo = has_lo ? (long long)min : 0, hi = has_hi ? (long long)max : 0;
  if (has_lo && has_hi && lo > hi) return refuse(c, "'minimum' is above 'maximum'");
  /* integers in range | k.f with k, k+1 in range | -k.f with -(k+1), -k in range */
  vlm_sb_append_literal(out, "(");
  integer_range(out, has_lo, lo, has_hi, hi);
  long long from = has_lo && lo > 0 ? lo : 0;
  if (!has_hi || from <= hi - 1) {
    vlm_sb_append_literal(out, " | ");
    integer_range(out, true, from, has_hi, hi - 1);
    vlm_sb_append_literal(out, " \".\" [0-9]{1,16}");
  }
  if (!has_lo || lo <= -1) {
    long long k_from = has_hi && -hi > 0 ? -hi : 0;
    long long k_to = has_lo ? -lo - 1 : 0;
    if (!has_lo || k_from <= k_to) {
      vlm_sb_append_literal(out, " | \"-\" ");
      integer_range(out, true, k_from, has_lo, k_to);
      vlm_sb_append_literal(out, " \".\" [0-9]{1,16}");
    }
  }
  use(c, USE_WS);
  vlm_sb_append_literal(out, ") ws");
  return VLM_OK;
}

static vlm_status compile_string(vlm_schema_compiler *c, const vlm_json_value *schema, vlm_string_builder *out) {
  const vlm_json_value *pattern = vlm_json_object_get(schema, "pattern");
  const vlm_json_value *format = vlm_json_object_get(schema, "format");
  const vlm_json_value *min_length = vlm_json_object_get(schema, "minLength");
  const vlm_json_value *max_length = vlm_json_object_get(schema, "maxLength");
  int specified = (pattern != NULL) + (format != NULL) + (min_length || max_length);
  if (specified > 1) return refuse(c, "unsupported combination of 'pattern', 'format' and 'minLength'/'maxLength'");
  use(c, USE_STRING);
  if (pattern) {
    const char *text = vlm_json_get_string(pattern);
    if (!text) return refuse(c, "'pattern' must be a string");
    if (pattern->as.string.length > 1000) return refuse(c, "'pattern' longer than 1000 characters");
    regex_parser r = {.at = text, .end = text + pattern->as.string.length, .out = out, .compiler = c};
    vlm_sb_append_literal(out, "\"\\\"\" (");
    if (!regex_alternatives(&r) && !r.status) r.status = refuse(c, "'pattern' it cannot read");
    if (!r.status && r.at < r.end) r.status = refuse(c, "unsupported in 'pattern': an unbalanced parenthesis");
    VLM_RETURN_IF_ERROR(r.status);
    vlm_sb_append_literal(out, ") \"\\\"\" ws");
    return VLM_OK;
  }
  if (format) {
    const char *name = vlm_json_get_string(format);
    static const char *const formats[][2] = {
        {"date", "[0-9]{4} \"-\" (\"0\" [1-9] | \"1\" [0-2]) \"-\" (\"0\" [1-9] | \"1\" [0-9] | \"2\" [0-8])"},
        {"time", "([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] (\".\" [0-9]{1,6})? (\"Z\" | [+-] ([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9])"},
        {"date-time", "[0-9]{4} \"-\" (\"0\" [1-9] | \"1\" [0-2]) \"-\" (\"0\" [1-9] | \"1\" [0-9] | \"2\" [0-8]) \"T\" ([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] (\".\" [0-9]{1,6})? (\"Z\" | [+-] ([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9])"},
        {"uuid", "[0-9a-f]{8} \"-\" [0-9a-f]{4} \"-\" [0-9a-f]{4} \"-\" [0-9a-f]{4} \"-\" [0-9a-f]{12}"},
        {"email", "[a-zA-Z0-9] [a-zA-Z0-9._+-]{0,30} \"@\" [a-zA-Z0-9] [a-zA-Z0-9-]{0,30} (\".\" [a-zA-Z0-9] [a-zA-Z0-9-]{0,30}){0,3} \".\" [a-zA-Z]{2,10}"},
        {"ipv4", "(\"25\" [0-5] | \"2\" [0-4] [0-9] | \"1\" [0-9] [0-9] | [1-9]? [0-9]) (\".\" (\"25\" [0-5] | \"2\" [0-4] [0-9] | \"1\" [0-9] [0-9] | [1-9]? [0-9])){3}"},
    };
    for (size_t i = 0; name && i < sizeof(formats) / sizeof(formats[0]); i++)
      if (strcmp(name, formats[i][0]) == 0) {
        vlm_sb_appendf(out, "\"\\\"\" %s \"\\\"\" ws", formats[i][1]);
        return VLM_OK;
      }
    return refuse(c, "unsupported string 'format' %s%.40s%s (supported: date, time, date-time, uuid, email, ipv4)",
                  name ? "'" : "", name ? name : "(not a string)", name ? "'" : "");
  }
  if (min_length || max_length) {
    int64_t min = 0, max = -1;
    if (min_length && (!vlm_json_get_int(min_length, &min) || min < 0 || min > 10000))
      return refuse(c, "'minLength' must be an integer in 0..10000");
    if (max_length && (!vlm_json_get_int(max_length, &max) || max < 0 || max > 10000))
      return refuse(c, "'maxLength' must be an integer in 0..10000");
    if (max >= 0 && max < min) return refuse(c, "'maxLength' is below 'minLength'");
    if (max < 0) vlm_sb_appendf(out, "\"\\\"\" char{%lld,} \"\\\"\" ws", (long long)min);
    else vlm_sb_appendf(out, "\"\\\"\" char{%lld,%lld} \"\\\"\" ws", (long long)min, (long long)max);
    return VLM_OK;
  }
  vlm_sb_append_literal(out, "string");
  return VLM_OK;
}

static vlm_status compile_array(vlm_schema_compiler *c, const vlm_json_value *schema, int depth,
                                vlm_string_builder *out) {
  const vlm_json_value *items = vlm_json_object_get(schema, "items");
  int64_t min = 0, max = -1;
  const vlm_json_value *min_items = vlm_json_object_get(schema, "minItems");
  const vlm_json_value *max_items = vlm_json_object_get(schema, "maxItems");
  if (min_items && (!vlm_json_get_int(min_items, &min) || min < 0 || min > 1000))
    return refuse(c, "'minItems' must be an integer in 0..1000");
  if (max_items && (!vlm_json_get_int(max_items, &max) || max < 0 || max > 1000))
    return refuse(c, "'maxItems' must be an integer in 0..1000");
  if (max >= 0 && max < min) return refuse(c, "'maxItems' is below 'minItems'");
  const char *item = "value";
  if (items) {
    size_t mark = path_push(c, "items");
    vlm_status status = compile_node(c, items, depth + 1, &item);
    c->path[mark] = 0;
    VLM_RETURN_IF_ERROR(status);
  } else {
    use(c, USE_VALUE);
  }
  use(c, USE_WS);
  if (max == 0) {
    vlm_sb_append_literal(out, "\"[\" ws \"]\" ws");
    return VLM_OK;
  }
  vlm_sb_appendf(out, "\"[\" ws %s%s (\",\" ws %s)", min == 0 ? "(" : "", item, item);
  long long low = min > 0 ? min - 1 : 0;
  if (max < 0) vlm_sb_appendf(out, "{%lld,}", low);
  else vlm_sb_appendf(out, "{%lld,%lld}", low, (long long)max - 1);
  vlm_sb_appendf(out, "%s \"]\" ws", min == 0 ? ")?" : "");
  return VLM_OK;
}

static bool is_identifier(const char *name, size_t length) {
  if (!length || length > 64 || (name[0] >= '0' && name[0] <= '9')) return false;
  for (size_t i = 0; i < length; i++) {
    char ch = name[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_')) return false;
  }
  return true;
}

static vlm_status compile_object(vlm_schema_compiler *c, const vlm_json_value *schema, int depth,
                                 vlm_string_builder *out) {
  const vlm_json_value *properties = vlm_json_object_get(schema, "properties");
  const vlm_json_value *required = vlm_json_object_get(schema, "required");
  const vlm_json_value *additional = vlm_json_object_get(schema, "additionalProperties");
  if (properties && properties->type != VLM_JSON_OBJECT) return refuse(c, "'properties' must be an object");
  if (required && required->type != VLM_JSON_ARRAY) return refuse(c, "'required' must be an array");
  if (additional && additional->type != VLM_JSON_BOOL && additional->type != VLM_JSON_OBJECT)
    return refuse(c, "'additionalProperties' must be a boolean or a schema");
  use(c, USE_STRING);
  size_t count = properties ? properties->as.object.count : 0;
  bool kwargs = c->kwargs && depth == 0; /* name=value, ... without braces */
  if (depth == 0) c->kwargs = false;
  if (kwargs && count == 0) { /* keyword arguments need names: no arguments */
    vlm_sb_append_literal(out, "\"\"");
    return VLM_OK;
  }
  if (required)
    for (size_t i = 0; i < required->as.array.count; i++) {
      const vlm_json_value *name = &required->as.array.items[i];
      if (name->type != VLM_JSON_STRING) return refuse(c, "'required' must list strings");
      if (!vlm_json_object_get(properties, name->as.string.chars))
        return refuse(c, "'required' names '%.60s', which is not in 'properties'", name->as.string.chars);
    }
  if (count == 0) {
    if (additional && additional->type == VLM_JSON_OBJECT) { /* a map */
      const char *value = NULL;
      size_t mark = path_push(c, "additionalProperties");
      vlm_status status = compile_node(c, additional, depth + 1, &value);
      c->path[mark] = 0;
      VLM_RETURN_IF_ERROR(status);
      vlm_sb_appendf(out, "\"{\" ws (string \":\" ws %s (\",\" ws string \":\" ws %s){0,}) ? \"}\" ws", value, value);
      return VLM_OK;
    }
    if (additional && additional->type == VLM_JSON_BOOL && !additional->as.boolean) {
      vlm_sb_append_literal(out, "\"{\" ws \"}\" ws");
      return VLM_OK;
    }
    use(c, USE_VALUE);
    vlm_sb_append_literal(out, "object");
    return VLM_OK;
  }
  if (additional && additional->type == VLM_JSON_OBJECT)
    return refuse(c, "unsupported 'additionalProperties' schema next to 'properties'");
  /* kv_i: "\"name\"" ":" ws value_i; first_i / rest_i as in the header. */
  const char **kv = calloc(count, sizeof(*kv));
  bool *is_required = calloc(count, sizeof(bool));
  if (!kv || !is_required) {
    free(kv);
    free(is_required);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "schema: out of memory");
  }
  vlm_status status = VLM_OK;
  for (size_t i = 0; i < count && !status; i++) {
    const vlm_json_member *member = &properties->as.object.members[i];
    for (size_t j = 0; required && j < required->as.array.count; j++)
      if (vlm_json_string_equals(&required->as.array.items[j], member->key)) is_required[i] = true;
    char segment[300];
    snprintf(segment, sizeof(segment), "properties/%.280s", member->key);
    size_t mark = path_push(c, segment);
    const char *value = NULL;
    status = compile_node(c, &member->value, depth + 1, &value);
    c->path[mark] = 0;
    if (status) break;
    /* the key as a JSON string (a keyword argument: name=), then as a GBNF literal */
    vlm_string_builder key = {0};
    if (kwargs && !is_identifier(member->key, member->key_length)) {
      status = refuse(c, "the property '%.60s' is not a Python identifier, so it cannot be a keyword argument",
                      member->key);
      break;
    }
    if (kwargs) vlm_sb_appendf(&key, "%s=", member->key);
    else vlm_sb_append_json_string(&key, member->key, member->key_length);
    char *key_json = vlm_sb_finish(&key);
    char *literal = key_json ? vlm_gbnf_literal(key_json, strlen(key_json)) : NULL;
    const char *name = new_name(c);
    if (!literal || !name) status = VLM_ERROR(RESOURCE_EXHAUSTED, "schema: out of memory");
    else if (kwargs) vlm_sb_appendf(&c->rules, "%s ::= %s %s\n", name, literal, value);
    else vlm_sb_appendf(&c->rules, "%s ::= %s ws \":\" ws %s\n", name, literal, value);
    free(key_json);
    free(literal);
    kv[i] = name;
  }
  if (!status) {
    /* rest_i for i = count-1 .. 0, then first_i likewise */
    char **rest = calloc(count + 1, sizeof(char *)), **first = calloc(count + 1, sizeof(char *));
    if (!rest || !first) status = VLM_ERROR(RESOURCE_EXHAUSTED, "schema: out of memory");
    for (size_t k = count; !status && k-- > 0;) {
      const char *r = new_name(c), *f = new_name(c);
      if (!r || !f) {
        status = VLM_ERROR(RESOURCE_EXHAUSTED, "schema: out of memory");
        break;
      }
      rest[k] = (char *)r;
      first[k] = (char *)f;
      const char *rest_next = rest[k + 1], *first_next = first[k + 1];
      if (is_required[k])
        vlm_sb_appendf(&c->rules, "%s ::= \",\" ws %s %s\n", r, kv[k], rest_next ? rest_next : "");
      else
        vlm_sb_appendf(&c->rules, "%s ::= (\",\" ws %s)? %s\n", r, kv[k], rest_next ? rest_next : "");
      if (is_required[k])
        vlm_sb_appendf(&c->rules, "%s ::= %s %s\n", f, kv[k], rest_next ? rest_next : "");
      else
        vlm_sb_appendf(&c->rules, "%s ::= %s %s | %s\n", f, kv[k], rest_next ? rest_next : "",
                       first_next ? first_next : "\"\"");
    }
    if (!status && kwargs) vlm_sb_appendf(out, "%s", first[0]);
    else if (!status) vlm_sb_appendf(out, "\"{\" ws %s \"}\" ws", first[0]);
    free(rest);
    free(first);
  }
  free(kv);
  free(is_required);
  return status;
}

static vlm_status check_keywords(vlm_schema_compiler *c, const vlm_json_value *schema) {
  static const char *const known[] = {"type", "properties", "required", "additionalProperties", "items",
                                      "minItems", "maxItems", "enum", "const", "anyOf", "$ref", "minLength",
                                      "maxLength", "pattern", "format", "minimum", "maximum",
                                      "exclusiveMinimum", "exclusiveMaximum", NULL};
  for (size_t i = 0; i < schema->as.object.count; i++) {
    const char *key = schema->as.object.members[i].key;
    bool ok = is_annotation(key);
    for (int k = 0; !ok && known[k]; k++) ok = strcmp(key, known[k]) == 0;
    if (!ok) return refuse(c, "unsupported JSON Schema keyword '%.60s'", key);
  }
  const char *duplicate = NULL;
  if (vlm_json_object_has_duplicates(schema, &duplicate)) return refuse(c, "duplicate key '%.60s'", duplicate);
  return VLM_OK;
}

static vlm_status compile_typed(vlm_schema_compiler *c, const vlm_json_value *schema, const char *type, int depth,
                                vlm_string_builder *out) {
  if (strcmp(type, "string") == 0) return compile_string(c, schema, out);
  if (strcmp(type, "integer") == 0) return compile_integer(c, schema, out);
  if (strcmp(type, "number") == 0) return compile_number(c, schema, out);
  if (strcmp(type, "boolean") == 0) {
    use(c, USE_BOOLEAN);
    vlm_sb_append_literal(out, "boolean");
    return VLM_OK;
  }
  if (strcmp(type, "null") == 0) {
    use(c, USE_NULL);
    vlm_sb_append_literal(out, "null");
    return VLM_OK;
  }
  if (strcmp(type, "object") == 0) return compile_object(c, schema, depth, out);
  if (strcmp(type, "array") == 0) return compile_array(c, schema, depth, out);
  return refuse(c, "unknown 'type' '%.40s'", type);
}

static vlm_status compile_body(vlm_schema_compiler *c, const vlm_json_value *schema, int depth,
                               vlm_string_builder *out) {
  if (schema->type == VLM_JSON_BOOL) {
    if (!schema->as.boolean) return refuse(c, "the schema 'false' matches nothing");
    use(c, USE_VALUE);
    vlm_sb_append_literal(out, "value");
    return VLM_OK;
  }
  if (schema->type != VLM_JSON_OBJECT) return refuse(c, "a schema must be an object");
  VLM_RETURN_IF_ERROR(check_keywords(c, schema));
  const vlm_json_value *ref = vlm_json_object_get(schema, "$ref");
  const vlm_json_value *const_value = vlm_json_object_get(schema, "const");
  const vlm_json_value *enum_value = vlm_json_object_get(schema, "enum");
  const vlm_json_value *any_of = vlm_json_object_get(schema, "anyOf");
  const vlm_json_value *type = vlm_json_object_get(schema, "type");
  int kinds = (ref != NULL) + (const_value != NULL) + (enum_value != NULL) + (any_of != NULL);
  if (kinds > 1 || (kinds == 1 && type && !enum_value && !const_value))
    return refuse(c, "unsupported combination of '$ref', 'const', 'enum', 'anyOf' and 'type' in one schema");
  if (ref) {
    const char *text = vlm_json_get_string(ref);
    if (!text) return refuse(c, "'$ref' must be a string");
    const char *rule = NULL;
    VLM_RETURN_IF_ERROR(compile_ref(c, text, depth, &rule));
    vlm_sb_append(out, rule, strlen(rule));
    return VLM_OK;
  }
  if (const_value) return literal_of_value(c, const_value, out);
  if (enum_value) {
    if (enum_value->type != VLM_JSON_ARRAY || enum_value->as.array.count == 0)
      return refuse(c, "'enum' must be a non-empty array");
    if (enum_value->as.array.count > VLM_SCHEMA_MAX_ENUM) return refuse(c, "'enum' with more than 1000 values");
    vlm_sb_append_literal(out, "(");
    for (size_t i = 0; i < enum_value->as.array.count; i++) {
      if (i) vlm_sb_append_literal(out, " | ");
      VLM_RETURN_IF_ERROR(literal_of_value(c, &enum_value->as.array.items[i], out));
    }
    vlm_sb_append_literal(out, ")");
    return VLM_OK;
  }
  if (any_of) {
    if (any_of->type != VLM_JSON_ARRAY || any_of->as.array.count == 0)
      return refuse(c, "'anyOf' must be a non-empty array");
    if (any_of->as.array.count > 100) return refuse(c, "'anyOf' with more than 100 schemas");
    vlm_string_builder alternatives = {0};
    vlm_status status = VLM_OK;
    for (size_t i = 0; i < any_of->as.array.count && !status; i++) {
      char segment[32];
      snprintf(segment, sizeof(segment), "anyOf/%zu", i);
      size_t mark = path_push(c, segment);
      const char *rule = NULL;
      status = compile_node(c, &any_of->as.array.items[i], depth + 1, &rule);
      c->path[mark] = 0;
      if (!status) vlm_sb_appendf(&alternatives, "%s%s", i ? " | " : "", rule);
    }
    char *text = vlm_sb_finish(&alternatives);
    if (!status && !text) status = VLM_ERROR(RESOURCE_EXHAUSTED, "schema: out of memory");
    if (!status) vlm_sb_appendf(out, "(%s)", text);
    free(text);
    return status;
  }
  if (!type) {
    /* No type: anything (the other keywords only constrain their own types). */
    if (schema->as.object.count && (vlm_json_object_get(schema, "properties") || vlm_json_object_get(schema, "items")))
      return refuse(c, "a schema with 'properties' or 'items' needs a 'type'");
    use(c, USE_VALUE);
    vlm_sb_append_literal(out, "value");
    return VLM_OK;
  }
  if (type->type == VLM_JSON_STRING) return compile_typed(c, schema, type->as.string.chars, depth, out);
  if (type->type != VLM_JSON_ARRAY || type->as.array.count == 0 || type->as.array.count > 7)
    return refuse(c, "'type' must be a type name or a list of them");
  vlm_sb_append_literal(out, "(");
  for (size_t i = 0; i < type->as.array.count; i++) {
    const char *name = vlm_json_get_string(&type->as.array.items[i]);
    if (!name) return refuse(c, "'type' must list type names");
    if (i) vlm_sb_append_literal(out, " | ");
    VLM_RETURN_IF_ERROR(compile_typed(c, schema, name, depth, out));
  }
  vlm_sb_append_literal(out, ")");
  return VLM_OK;
}

static vlm_status compile_node(vlm_schema_compiler *c, const vlm_json_value *schema, int depth, const char **out) {
  if (depth > VLM_SCHEMA_MAX_DEPTH) return refuse(c, "schemas nested deeper than %d", VLM_SCHEMA_MAX_DEPTH);
  if (++c->nodes > VLM_SCHEMA_MAX_NODES) return refuse(c, "more than %d schema nodes", VLM_SCHEMA_MAX_NODES);
  if (c->rules.length > VLM_SCHEMA_MAX_GRAMMAR_BYTES)
    return refuse(c, "the schema's grammar is over %u bytes", VLM_SCHEMA_MAX_GRAMMAR_BYTES);
  vlm_string_builder body = {0};
  vlm_status status = compile_body(c, schema, depth, &body);
  char *text = vlm_sb_finish(&body);
  if (!status && !text) status = VLM_ERROR(RESOURCE_EXHAUSTED, "schema: out of memory");
  const char *name = status ? NULL : new_name(c);
  if (!status && !name) status = VLM_ERROR(RESOURCE_EXHAUSTED, "schema: out of memory");
  if (!status) append_rule(c, name, text);
  free(text);
  if (!status && c->rules.failed) status = VLM_ERROR(RESOURCE_EXHAUSTED, "schema: out of memory");
  *out = name;
  return status;
}

vlm_status vlm_schema_compiler_add(vlm_schema_compiler *c, const vlm_json_value *schema, const char **out_rule) {
  *out_rule = NULL;
  c->document = schema;
  c->ref_count = 0; /* refs are per document */
  strcpy(c->path, "#");
  vlm_status status = compile_node(c, schema, 0, out_rule);
  for (size_t i = 0; i < c->ref_count; i++) free(c->refs[i].rule);
  c->ref_count = 0;
  return status;
}

void vlm_schema_compiler_set_python(vlm_schema_compiler *c) { c->python = true; }

vlm_status vlm_schema_compiler_add_kwargs(vlm_schema_compiler *c, const vlm_json_value *schema,
                                          const char **out_rule) {
  if (!c->python) return VLM_ERROR(FAILED_PRECONDITION, "schema: keyword arguments need Python literals");
  const vlm_json_value *type = vlm_json_object_get(schema, "type");
  if (schema->type != VLM_JSON_OBJECT || (type && !vlm_json_string_equals(type, "object")))
    return VLM_ERROR(INVALID_ARGUMENT, "keyword arguments need a schema of \"type\": \"object\" at #");
  const vlm_json_value *properties = vlm_json_object_get(schema, "properties");
  if (!properties || properties->type != VLM_JSON_OBJECT || properties->as.object.count == 0) {
    *out_rule = "\"\""; /* no named parameters: no arguments */
    return VLM_OK;
  }
  c->kwargs = true;
  vlm_status status = vlm_schema_compiler_add(c, schema, out_rule);
  bool unused = c->kwargs; /* the root was not compiled as an object */
  c->kwargs = false;
  if (!status && unused) status = VLM_ERROR(INVALID_ARGUMENT, "keyword arguments need an object schema at #");
  return status;
}

const char *vlm_schema_compiler_any_object(vlm_schema_compiler *c) {
  use(c, USE_VALUE);
  return "object";
}

vlm_status vlm_schema_compiler_finish(vlm_schema_compiler *c, const char *root_body, char **out_grammar) {
  *out_grammar = NULL;
  vlm_string_builder out = {0};
  vlm_sb_appendf(&out, "root ::= %s\n", root_body);
  vlm_sb_append(&out, c->rules.data ? c->rules.data : "", c->rules.length);
  char *text = vlm_sb_finish(&out);
  if (!text) return VLM_ERROR(RESOURCE_EXHAUSTED, "schema: out of memory");
  if (strlen(text) > VLM_SCHEMA_MAX_GRAMMAR_BYTES) {
    free(text);
    return VLM_ERROR(INVALID_ARGUMENT, "the schema's grammar is over %u bytes", VLM_SCHEMA_MAX_GRAMMAR_BYTES);
  }
  *out_grammar = text;
  return VLM_OK;
}

static vlm_status finish_checked(vlm_schema_compiler *c, const char *root_body, char **out_grammar) {
  vlm_status status = vlm_schema_compiler_finish(c, root_body, out_grammar);
  if (status) return status;
  /* Parse once so that a bound of the grammar itself is reported here. */
  vlm_grammar *grammar = NULL;
  status = vlm_grammar_parse(*out_grammar, strlen(*out_grammar), &grammar);
  vlm_grammar_release(grammar);
  if (status) {
    free(*out_grammar);
    *out_grammar = NULL;
  }
  return status;
}

vlm_status vlm_json_schema_to_grammar(const vlm_json_value *schema, char **out_grammar) {
  *out_grammar = NULL;
  vlm_schema_compiler *c = NULL;
  VLM_RETURN_IF_ERROR(vlm_schema_compiler_create(&c));
  const char *rule = NULL;
  vlm_status status = vlm_schema_compiler_add(c, schema, &rule);
  if (!status) {
    char root[64];
    snprintf(root, sizeof(root), "%s", rule);
    status = finish_checked(c, root, out_grammar);
  }
  vlm_schema_compiler_release(c);
  return status;
}

vlm_status vlm_json_schema_text_to_grammar(const char *schema_json, size_t length, char **out_grammar) {
  *out_grammar = NULL;
  vlm_json_document document = {0};
  vlm_json_limits limits = {.max_depth = 128, .max_input_bytes = 1u << 20};
  VLM_RETURN_IF_ERROR(vlm_json_parse(schema_json, length, &limits, NULL, "JSON schema", &document));
  vlm_status status = vlm_json_schema_to_grammar(document.root, out_grammar);
  vlm_json_document_release(&document);
  return status;
}

vlm_status vlm_json_object_grammar(char **out_grammar) {
  *out_grammar = NULL;
  vlm_schema_compiler *c = NULL;
  VLM_RETURN_IF_ERROR(vlm_schema_compiler_create(&c));
  const char *object = vlm_schema_compiler_any_object(c);
  vlm_status status = finish_checked(c, object, out_grammar);
  vlm_schema_compiler_release(c);
  return status;
}
