/* GBNF grammars over bytes and their pushdown matcher (see grammar.h).
 *
 * Compiled form (as llama.cpp's): one array of elements; rule r's body
 * starts at rule_start[r] and is its alternatives separated by G_ALT and
 * ended by G_END. An element is a byte class (G_CHAR, an index into the
 * 256-bit sets) or a reference to a rule (G_REF). Repetitions, groups and
 * non-ASCII classes become generated rules, so matching knows only these
 * two kinds.
 *
 * A stack is a persistent list of element positions (the next thing to
 * match at each nesting level) in a node pool: pushing shares the tail,
 * and the pool is rewound after every trial, so a trie walk allocates only
 * along its current path. */
#include "text/grammar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

enum { G_END, G_ALT, G_REF, G_CHAR };

typedef struct gelem {
  uint32_t type;
  uint32_t value;
} gelem;

typedef struct byte_set {
  uint32_t bits[8];
} byte_set;

struct vlm_grammar {
  gelem *elements;
  size_t element_count;
  uint32_t *rule_start;
  int32_t rule_count;
  byte_set *sets;
  size_t set_count;
  uint32_t root;
};

/* ====================================================================== */
/* Parsing                                                                 */
/* ====================================================================== */

typedef struct gvec {
  gelem *items;
  size_t count, capacity;
} gvec;

typedef struct build_rule {
  char *name;      /* NULL for generated rules */
  gvec body;
  bool defined;
  int line;        /* first reference, for "undefined rule" */
} build_rule;

typedef struct parser {
  const char *text, *end, *at;
  int line;
  build_rule *rules;
  size_t rule_count, rule_capacity;
  int32_t *name_table;   /* open addressing over rule ids, -1 empty */
  size_t name_capacity;
  byte_set *sets;
  size_t set_count, set_capacity;
  size_t total_elements;
  int32_t any_char_rule, utf8_tail_rule;
  vlm_status status;
} parser;

static bool fail(parser *p, vlm_status_code code, const char *format, const char *detail) {
  if (!p->status) {
    char message[256];
    snprintf(message, sizeof(message), format, detail ? detail : "");
    p->status = vlm_status_make(code, "grammar line %d: %s", p->line, message);
  }
  return false;
}

static bool out_of_memory(parser *p) { return fail(p, VLM_STATUS_RESOURCE_EXHAUSTED, "out of memory%s", ""); }

static bool gvec_push(parser *p, gvec *vec, uint32_t type, uint32_t value) {
  if (p->total_elements >= VLM_GRAMMAR_MAX_ELEMENTS)
    return fail(p, VLM_STATUS_RESOURCE_EXHAUSTED, "the grammar expands to more than 1000000 elements%s", "");
  if (vec->count == vec->capacity) {
    size_t capacity = vec->capacity ? vec->capacity * 2 : 8;
    gelem *items = realloc(vec->items, capacity * sizeof(*items));
    if (!items) return out_of_memory(p);
    vec->items = items;
    vec->capacity = capacity;
  }
  vec->items[vec->count++] = (gelem){type, value};
  p->total_elements++;
  return true;
}

static bool gvec_append(parser *p, gvec *vec, const gelem *items, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (!gvec_push(p, vec, items[i].type, items[i].value)) return false;
  return true;
}

static int32_t new_rule(parser *p, const char *name, size_t name_length) {
  if (p->rule_count >= VLM_GRAMMAR_MAX_RULES) {
    fail(p, VLM_STATUS_RESOURCE_EXHAUSTED, "more than 200000 rules%s", "");
    return -1;
  }
  if (p->rule_count == p->rule_capacity) {
    size_t capacity = p->rule_capacity ? p->rule_capacity * 2 : 64;
    build_rule *rules = realloc(p->rules, capacity * sizeof(*rules));
    if (!rules) {
      out_of_memory(p);
      return -1;
    }
    p->rules = rules;
    p->rule_capacity = capacity;
  }
  build_rule *rule = &p->rules[p->rule_count];
  memset(rule, 0, sizeof(*rule));
  rule->line = p->line;
  if (name) {
    rule->name = malloc(name_length + 1);
    if (!rule->name) {
      out_of_memory(p);
      return -1;
    }
    memcpy(rule->name, name, name_length);
    rule->name[name_length] = 0;
  }
  return (int32_t)p->rule_count++;
}

static uint64_t hash_name(const char *name, size_t length) {
  uint64_t hash = 1469598103934665603ull;
  for (size_t i = 0; i < length; i++) hash = (hash ^ (unsigned char)name[i]) * 1099511628211ull;
  return hash;
}

static bool names_grow(parser *p) {
  size_t capacity = p->name_capacity ? p->name_capacity * 2 : 256;
  int32_t *table = malloc(capacity * sizeof(*table));
  if (!table) return out_of_memory(p);
  for (size_t i = 0; i < capacity; i++) table[i] = -1;
  for (size_t i = 0; i < p->name_capacity; i++) {
    int32_t id = p->name_table[i];
    if (id < 0) continue;
    const char *name = p->rules[id].name;
    size_t slot = hash_name(name, strlen(name)) & (capacity - 1);
    while (table[slot] >= 0) slot = (slot + 1) & (capacity - 1);
    table[slot] = id;
  }
  free(p->name_table);
  p->name_table = table;
  p->name_capacity = capacity;
  return true;
}

/* The id of the named rule, created (undefined) on first mention. */
static int32_t rule_by_name(parser *p, const char *name, size_t length) {
  if (p->name_capacity == 0 || (p->rule_count + 1) * 2 > p->name_capacity)
    if (!names_grow(p)) return -1;
  size_t slot = hash_name(name, length) & (p->name_capacity - 1);
  while (p->name_table[slot] >= 0) {
    const char *existing = p->rules[p->name_table[slot]].name;
    if (strlen(existing) == length && memcmp(existing, name, length) == 0) return p->name_table[slot];
    slot = (slot + 1) & (p->name_capacity - 1);
  }
  int32_t id = new_rule(p, name, length);
  if (id >= 0) p->name_table[slot] = id;
  return id;
}

static uint32_t new_set(parser *p) {
  if (p->set_count == p->set_capacity) {
    size_t capacity = p->set_capacity ? p->set_capacity * 2 : 64;
    byte_set *sets = realloc(p->sets, capacity * sizeof(*sets));
    if (!sets) {
      out_of_memory(p);
      return 0;
    }
    p->sets = sets;
    p->set_capacity = capacity;
  }
  memset(&p->sets[p->set_count], 0, sizeof(byte_set));
  return (uint32_t)p->set_count++;
}

static void set_add_range(byte_set *set, unsigned lo, unsigned hi) {
  for (unsigned b = lo; b <= hi && b < 256; b++) set->bits[b >> 5] |= 1u << (b & 31);
}

static bool push_byte_range(parser *p, gvec *out, unsigned lo, unsigned hi) {
  uint32_t id = new_set(p);
  if (p->status) return false;
  set_add_range(&p->sets[id], lo, hi);
  return gvec_push(p, out, G_CHAR, id);
}

static size_t encode_utf8(uint32_t cp, unsigned char *out) {
  if (cp < 0x80) { out[0] = (unsigned char)cp; return 1; }
  if (cp < 0x800) { out[0] = (unsigned char)(0xC0 | (cp >> 6)); out[1] = (unsigned char)(0x80 | (cp & 0x3F)); return 2; }
  if (cp < 0x10000) {
    out[0] = (unsigned char)(0xE0 | (cp >> 12));
    out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (unsigned char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (unsigned char)(0xF0 | (cp >> 18));
  out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (unsigned char)(0x80 | (cp & 0x3F));
  return 4;
}

static bool push_codepoint(parser *p, gvec *out, uint32_t cp) {
  unsigned char bytes[4];
  size_t count = encode_utf8(cp, bytes);
  for (size_t i = 0; i < count; i++)
    if (!push_byte_range(p, out, bytes[i], bytes[i])) return false;
  return true;
}

/* Any valid UTF-8 sequence of 2..4 bytes (no overlongs, no surrogates). */
static int32_t utf8_multibyte_rule(parser *p) {
  if (p->utf8_tail_rule >= 0) return p->utf8_tail_rule;
  int32_t id = new_rule(p, NULL, 0);
  if (id < 0) return -1;
  static const unsigned char table[][8] = {
      /* count, then lo/hi pairs */
      {2, 0xC2, 0xDF, 0x80, 0xBF},
      {3, 0xE0, 0xE0, 0xA0, 0xBF, 0x80, 0xBF},
      {3, 0xE1, 0xEC, 0x80, 0xBF, 0x80, 0xBF},
      {3, 0xED, 0xED, 0x80, 0x9F, 0x80, 0xBF},
      {3, 0xEE, 0xEF, 0x80, 0xBF, 0x80, 0xBF},
      {4, 0xF0, 0xF0, 0x90, 0xBF, 0x80, 0xBF},
  };
  gvec body = {0};
  bool ok = true;
  for (size_t row = 0; ok && row < sizeof(table) / sizeof(table[0]); row++) {
    if (row) ok = gvec_push(p, &body, G_ALT, 0);
    int count = table[row][0];
    for (int i = 0; ok && i < count && i < 3; i++) ok = push_byte_range(p, &body, table[row][1 + 2 * i], table[row][2 + 2 * i]);
    if (ok && count == 4) ok = push_byte_range(p, &body, 0x80, 0xBF);
  }
  /* F1-F3 xx xx xx and F4 80-8F xx xx */
  ok = ok && gvec_push(p, &body, G_ALT, 0) && push_byte_range(p, &body, 0xF1, 0xF3) &&
       push_byte_range(p, &body, 0x80, 0xBF) && push_byte_range(p, &body, 0x80, 0xBF) &&
       push_byte_range(p, &body, 0x80, 0xBF);
  ok = ok && gvec_push(p, &body, G_ALT, 0) && push_byte_range(p, &body, 0xF4, 0xF4) &&
       push_byte_range(p, &body, 0x80, 0x8F) && push_byte_range(p, &body, 0x80, 0xBF) &&
       push_byte_range(p, &body, 0x80, 0xBF);
  if (!ok) {
    free(body.items);
    return -1;
  }
  p->rules[id].body = body;
  p->rules[id].defined = true;
  p->utf8_tail_rule = id;
  return id;
}

static bool at_end(const parser *p) { return p->at >= p->end; }

static void skip_space(parser *p, bool newlines) {
  while (!at_end(p)) {
    char c = *p->at;
    if (c == ' ' || c == '\t' || c == '\r') {
      p->at++;
    } else if (c == '#') {
      while (!at_end(p) && *p->at != '\n') p->at++;
    } else if (c == '\n' && newlines) {
      p->line++;
      p->at++;
    } else if (c == '\\' && p->at + 1 < p->end && p->at[1] == '\n') { /* line continuation */
      p->line++;
      p->at += 2;
    } else {
      break;
    }
  }
}

static bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

static int hex_value(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* One character of a literal or class: an escape or a UTF-8 code point. */
static bool parse_char(parser *p, uint32_t *out) {
  if (at_end(p)) return fail(p, VLM_STATUS_INVALID_ARGUMENT, "unexpected end inside a literal or class%s", "");
  unsigned char c = (unsigned char)*p->at;
  if (c == '\\') {
    p->at++;
    if (at_end(p)) return fail(p, VLM_STATUS_INVALID_ARGUMENT, "unfinished escape%s", "");
    char e = *p->at++;
    int digits = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
    if (digits) {
      uint32_t value = 0;
      for (int i = 0; i < digits; i++) {
        int h = at_end(p) ? -1 : hex_value(*p->at);
        if (h < 0) return fail(p, VLM_STATUS_INVALID_ARGUMENT, "bad \\%s escape", e == 'x' ? "x" : "u");
        value = value * 16 + (uint32_t)h;
        p->at++;
      }
      if (value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF))
        return fail(p, VLM_STATUS_INVALID_ARGUMENT, "escape is not a Unicode scalar value%s", "");
      *out = value;
      return true;
    }
    switch (e) {
      case 'n': *out = '\n'; return true;
      case 't': *out = '\t'; return true;
      case 'r': *out = '\r'; return true;
      case '\\': case '"': case '[': case ']': case '-': case '^': case '\'': *out = (uint32_t)e; return true;
      default: {
        char detail[2] = {e, 0};
        return fail(p, VLM_STATUS_INVALID_ARGUMENT, "unknown escape \\%s", detail);
      }
    }
  }
  /* A UTF-8 code point, validated. */
  size_t length = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (!length || p->at + length > p->end || c == 0xC0 || c == 0xC1 || c > 0xF4)
    return fail(p, VLM_STATUS_INVALID_ARGUMENT, "invalid UTF-8 in the grammar%s", "");
  uint32_t cp = length == 1 ? c : c & (0x7F >> length);
  for (size_t i = 1; i < length; i++) {
    unsigned char next = (unsigned char)p->at[i];
    if ((next & 0xC0) != 0x80) return fail(p, VLM_STATUS_INVALID_ARGUMENT, "invalid UTF-8 in the grammar%s", "");
    cp = (cp << 6) | (next & 0x3F);
  }
  if (c == '\n') p->line++;
  p->at += length;
  *out = cp;
  return true;
}

static bool parse_literal(parser *p, gvec *out) {
  p->at++; /* opening quote */
  while (!at_end(p) && *p->at != '"') {
    uint32_t cp;
    if (!parse_char(p, &cp) || !push_codepoint(p, out, cp)) return false;
  }
  if (at_end(p)) return fail(p, VLM_STATUS_INVALID_ARGUMENT, "unterminated string literal%s", "");
  p->at++;
  return true;
}

#define MAX_CLASS_CODEPOINTS 4096

static bool parse_class(parser *p, gvec *out) {
  p->at++; /* [ */
  bool negated = !at_end(p) && *p->at == '^';
  if (negated) p->at++;
  byte_set ascii = {{0}};
  uint32_t *wide = NULL; /* non-ASCII code points of a positive class */
  size_t wide_count = 0;
  bool ok = true;
  while (ok && !at_end(p) && *p->at != ']') {
    uint32_t lo, hi;
    ok = parse_char(p, &lo);
    hi = lo;
    if (ok && p->at + 1 < p->end && *p->at == '-' && p->at[1] != ']') {
      p->at++;
      ok = parse_char(p, &hi);
      if (ok && hi < lo) ok = fail(p, VLM_STATUS_INVALID_ARGUMENT, "class range out of order%s", "");
    }
    if (!ok) break;
    if (lo < 0x80) set_add_range(&ascii, lo, hi < 0x80 ? hi : 0x7F);
    if (hi >= 0x80) {
      if (negated) {
        ok = fail(p, VLM_STATUS_INVALID_ARGUMENT, "a negated class may only exclude ASCII characters%s", "");
        break;
      }
      uint32_t from = lo < 0x80 ? 0x80 : lo;
      if (hi - from + 1 > MAX_CLASS_CODEPOINTS - wide_count) {
        ok = fail(p, VLM_STATUS_RESOURCE_EXHAUSTED, "a class holds more than 4096 non-ASCII characters%s", "");
        break;
      }
      uint32_t *grown = realloc(wide, (wide_count + (hi - from + 1)) * sizeof(*wide));
      if (!grown) {
        ok = out_of_memory(p);
        break;
      }
      wide = grown;
      for (uint32_t cp = from; cp <= hi; cp++)
        if (!(cp >= 0xD800 && cp <= 0xDFFF)) wide[wide_count++] = cp;
    }
  }
  if (ok && at_end(p)) ok = fail(p, VLM_STATUS_INVALID_ARGUMENT, "unterminated character class%s", "");
  if (!ok) {
    free(wide);
    return false;
  }
  p->at++; /* ] */
  if (negated) {
    byte_set inverse = {{0}};
    for (unsigned b = 0; b < 0x80; b++)
      if (!(ascii.bits[b >> 5] & (1u << (b & 31)))) set_add_range(&inverse, b, b);
    ascii = inverse;
  }
  bool has_ascii = false;
  for (int i = 0; i < 8; i++) has_ascii |= ascii.bits[i] != 0;
  if (!negated && !wide_count) {
    if (!has_ascii) return fail(p, VLM_STATUS_INVALID_ARGUMENT, "empty character class%s", "");
    uint32_t id = new_set(p);
    if (p->status) return false;
    p->sets[id] = ascii;
    return gvec_push(p, out, G_CHAR, id);
  }
  /* A rule: the ASCII part as one byte class, then the rest. */
  int32_t rule = new_rule(p, NULL, 0);
  gvec body = {0};
  ok = rule >= 0;
  bool first = true;
  if (ok && has_ascii) {
    uint32_t id = new_set(p);
    ok = !p->status;
    if (ok) p->sets[id] = ascii;
    ok = ok && gvec_push(p, &body, G_CHAR, id);
    first = false;
  }
  if (ok && negated) {
    int32_t tail = utf8_multibyte_rule(p);
    ok = tail >= 0 && (first || gvec_push(p, &body, G_ALT, 0)) && gvec_push(p, &body, G_REF, (uint32_t)tail);
  }
  for (size_t i = 0; ok && i < wide_count; i++) {
    ok = (first || gvec_push(p, &body, G_ALT, 0)) && push_codepoint(p, &body, wide[i]);
    first = false;
  }
  free(wide);
  if (!ok) {
    free(body.items);
    return false;
  }
  p->rules[rule].body = body;
  p->rules[rule].defined = true;
  return gvec_push(p, out, G_REF, (uint32_t)rule);
}

static bool parse_alternatives(parser *p, gvec *out, int depth);

/* A generated rule with `body`; returns its id or -1. Takes body over. */
static int32_t rule_with_body(parser *p, gvec body) {
  int32_t id = new_rule(p, NULL, 0);
  if (id < 0) {
    free(body.items);
    return -1;
  }
  p->rules[id].body = body;
  p->rules[id].defined = true;
  return id;
}

/* Applies a quantifier to out[start..count): the item becomes one element
 * and is repeated by generated rules. */
static bool quantify(parser *p, gvec *out, size_t start, long min, long max /* -1: unbounded */) {
  gelem item;
  if (out->count == start) return true; /* "" repeated is "" */
  if (out->count - start == 1) {
    item = out->items[start];
  } else {
    gvec body = {0};
    if (!gvec_append(p, &body, out->items + start, out->count - start)) {
      free(body.items);
      return false;
    }
    int32_t id = rule_with_body(p, body);
    if (id < 0) return false;
    item = (gelem){G_REF, (uint32_t)id};
  }
  p->total_elements -= out->count - start;
  out->count = start;
  for (long i = 0; i < min; i++)
    if (!gvec_push(p, out, item.type, item.value)) return false;
  if (max < 0) { /* star ::= item star | "" */
    int32_t star = new_rule(p, NULL, 0);
    if (star < 0) return false;
    gvec body = {0};
    bool ok = gvec_push(p, &body, item.type, item.value) && gvec_push(p, &body, G_REF, (uint32_t)star) &&
              gvec_push(p, &body, G_ALT, 0);
    p->rules[star].body = body;
    p->rules[star].defined = true;
    return ok && gvec_push(p, out, G_REF, (uint32_t)star);
  }
  /* opt_k ::= item opt_{k-1} | "" , opt_1 ::= item | "" */
  int32_t previous = -1;
  for (long k = 1; k <= max - min; k++) {
    gvec body = {0};
    bool ok = gvec_push(p, &body, item.type, item.value) &&
              (previous < 0 || gvec_push(p, &body, G_REF, (uint32_t)previous)) && gvec_push(p, &body, G_ALT, 0);
    if (!ok) {
      free(body.items);
      return false;
    }
    previous = rule_with_body(p, body);
    if (previous < 0) return false;
  }
  return previous < 0 || gvec_push(p, out, G_REF, (uint32_t)previous);
}

static bool parse_count(parser *p, long *out) {
  if (at_end(p) || *p->at < '0' || *p->at > '9')
    return fail(p, VLM_STATUS_INVALID_ARGUMENT, "expected a number in {m,n}%s", "");
  long value = 0;
  while (!at_end(p) && *p->at >= '0' && *p->at <= '9') {
    value = value * 10 + (*p->at++ - '0');
    if (value > VLM_GRAMMAR_MAX_REPEAT)
      return fail(p, VLM_STATUS_RESOURCE_EXHAUSTED, "a repetition count over 10000%s", "");
  }
  *out = value;
  return true;
}

static bool parse_sequence(parser *p, gvec *out, int depth) {
  bool nested = depth > 0;
  for (;;) {
    skip_space(p, nested);
    if (at_end(p)) return true;
    char c = *p->at;
    size_t start = out->count;
    if (c == '"') {
      if (!parse_literal(p, out)) return false;
    } else if (c == '[') {
      if (!parse_class(p, out)) return false;
    } else if (c == '.') {
      p->at++;
      if (p->any_char_rule < 0) {
        int32_t tail = utf8_multibyte_rule(p);
        gvec body = {0};
        if (tail < 0 || !push_byte_range(p, &body, 0x00, 0x7F) || !gvec_push(p, &body, G_ALT, 0) ||
            !gvec_push(p, &body, G_REF, (uint32_t)tail)) {
          free(body.items);
          return false;
        }
        p->any_char_rule = rule_with_body(p, body);
        if (p->any_char_rule < 0) return false;
      }
      if (!gvec_push(p, out, G_REF, (uint32_t)p->any_char_rule)) return false;
    } else if (c == '(') {
      if (depth + 1 > VLM_GRAMMAR_MAX_NESTING)
        return fail(p, VLM_STATUS_RESOURCE_EXHAUSTED, "groups nested deeper than 200%s", "");
      p->at++;
      gvec body = {0};
      if (!parse_alternatives(p, &body, depth + 1)) {
        free(body.items);
        return false;
      }
      skip_space(p, true);
      if (at_end(p) || *p->at != ')') {
        free(body.items);
        return fail(p, VLM_STATUS_INVALID_ARGUMENT, "expected ')'%s", "");
      }
      p->at++;
      int32_t id = rule_with_body(p, body);
      if (id < 0 || !gvec_push(p, out, G_REF, (uint32_t)id)) return false;
    } else if (is_name_char(c)) {
      const char *name = p->at;
      while (!at_end(p) && is_name_char(*p->at)) p->at++;
      size_t length = (size_t)(p->at - name);
      /* The start of the next rule ends this one. */
      const char *save = p->at;
      int save_line = p->line;
      skip_space(p, false);
      if (p->end - p->at >= 3 && memcmp(p->at, "::=", 3) == 0) {
        p->at = name;
        p->line = save_line;
        return true;
      }
      p->at = save;
      int32_t id = rule_by_name(p, name, length);
      if (id < 0 || !gvec_push(p, out, G_REF, (uint32_t)id)) return false;
    } else {
      return true; /* '|', ')', newline, or an error the caller reports */
    }
    /* Quantifier */
    skip_space(p, false);
    if (at_end(p)) return true;
    c = *p->at;
    if (c == '*' || c == '+' || c == '?') {
      p->at++;
      if (!quantify(p, out, start, c == '+' ? 1 : 0, c == '?' ? 1 : -1)) return false;
    } else if (c == '{') {
      p->at++;
      long min = 0, max = 0;
      skip_space(p, false);
      if (!parse_count(p, &min)) return false;
      skip_space(p, false);
      max = min;
      if (!at_end(p) && *p->at == ',') {
        p->at++;
        skip_space(p, false);
        max = -1;
        if (!at_end(p) && *p->at != '}' && !parse_count(p, &max)) return false;
        skip_space(p, false);
      }
      if (at_end(p) || *p->at != '}') return fail(p, VLM_STATUS_INVALID_ARGUMENT, "expected '}'%s", "");
      p->at++;
      if (max >= 0 && max < min) return fail(p, VLM_STATUS_INVALID_ARGUMENT, "{m,n} with n < m%s", "");
      if (!quantify(p, out, start, min, max)) return false;
    }
  }
}

static bool parse_alternatives(parser *p, gvec *out, int depth) {
  if (!parse_sequence(p, out, depth)) return false;
  for (;;) {
    skip_space(p, depth > 0);
    if (at_end(p) || *p->at != '|') return true;
    p->at++;
    if (!gvec_push(p, out, G_ALT, 0) || !parse_sequence(p, out, depth)) return false;
  }
}

static bool parse_rules(parser *p) {
  for (;;) {
    skip_space(p, true);
    if (at_end(p)) return true;
    const char *name = p->at;
    while (!at_end(p) && is_name_char(*p->at)) p->at++;
    size_t length = (size_t)(p->at - name);
    if (!length) return fail(p, VLM_STATUS_INVALID_ARGUMENT, "expected a rule name%s", "");
    skip_space(p, false);
    if (p->end - p->at < 3 || memcmp(p->at, "::=", 3) != 0)
      return fail(p, VLM_STATUS_INVALID_ARGUMENT, "expected '::=' after a rule name%s", "");
    p->at += 3;
    int32_t id = rule_by_name(p, name, length);
    if (id < 0) return false;
    if (p->rules[id].defined) return fail(p, VLM_STATUS_INVALID_ARGUMENT, "rule '%s' defined twice", p->rules[id].name);
    p->rules[id].defined = true;
    gvec body = {0};
    if (!parse_alternatives(p, &body, 0)) {
      free(body.items);
      return false;
    }
    p->rules[id].body = body;
    skip_space(p, false);
    if (!at_end(p) && *p->at != '\n' && !is_name_char(*p->at)) {
      char detail[2] = {*p->at, 0};
      return fail(p, VLM_STATUS_INVALID_ARGUMENT, "unexpected '%s'", detail);
    }
  }
}

/* ---- checks -------------------------------------------------------------- */

static bool is_alt_end(const gelem *e) { return e->type == G_END || e->type == G_ALT; }

/* Refuses rules that reach themselves without consuming a byte (left
 * recursion, also through nullable prefixes): the matcher's expansion
 * would not terminate. Kahn's algorithm over "r can start with s". */
static vlm_status check_left_recursion(const vlm_grammar *g, char **names) {
  int32_t n = g->rule_count;
  bool *nullable = calloc((size_t)n, sizeof(bool));
  int32_t *indegree = calloc((size_t)n, sizeof(int32_t));
  int32_t *queue = malloc((size_t)n * sizeof(int32_t));
  vlm_status status = VLM_OK;
  if (!nullable || !indegree || !queue) {
    status = VLM_ERROR(RESOURCE_EXHAUSTED, "grammar: out of memory");
    goto done;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (int32_t r = 0; r < n; r++) {
      if (nullable[r]) continue;
      bool all = true;
      for (size_t i = g->rule_start[r];; i++) {
        const gelem *e = &g->elements[i];
        if (is_alt_end(e)) {
          if (all) {
            nullable[r] = true;
            changed = true;
            break;
          }
          if (e->type == G_END) break;
          all = true;
          continue;
        }
        if (e->type == G_CHAR || (e->type == G_REF && !nullable[e->value])) all = false;
      }
    }
  }
  /* edges r -> s for s at a nullable-prefixed position of r */
  for (int pass = 0; pass < 2; pass++) {
    int32_t head = 0, tail = 0;
    if (pass == 1) {
      for (int32_t r = 0; r < n; r++)
        if (indegree[r] == 0) queue[tail++] = r;
    }
    for (int32_t r = 0; r < (pass == 0 ? n : 0); r++) {
      bool open = true;
      for (size_t i = g->rule_start[r];; i++) {
        const gelem *e = &g->elements[i];
        if (is_alt_end(e)) {
          if (e->type == G_END) break;
          open = true;
          continue;
        }
        if (!open) continue;
        if (e->type == G_REF) indegree[e->value]++;
        if (e->type == G_CHAR || !nullable[e->value]) open = false;
      }
    }
    if (pass == 0) continue;
    while (head < tail) {
      int32_t r = queue[head++];
      bool open = true;
      for (size_t i = g->rule_start[r];; i++) {
        const gelem *e = &g->elements[i];
        if (is_alt_end(e)) {
          if (e->type == G_END) break;
          open = true;
          continue;
        }
        if (!open) continue;
        if (e->type == G_REF && --indegree[e->value] == 0) queue[tail++] = (int32_t)e->value;
        if (e->type == G_CHAR || !nullable[e->value]) open = false;
      }
    }
    if (tail < n) {
      const char *name = NULL;
      for (int32_t r = 0; r < n && !name; r++)
        if (indegree[r] > 0 && names[r]) name = names[r];
      status = VLM_ERROR(INVALID_ARGUMENT,
                         "grammar: rule '%s' can recurse without consuming input (left recursion or a "
                         "repeated empty match)",
                         name ? name : "(generated)");
    }
  }
done:
  free(nullable);
  free(indegree);
  free(queue);
  return status;
}

static void parser_release(parser *p) {
  for (size_t i = 0; i < p->rule_count; i++) {
    free(p->rules[i].name);
    free(p->rules[i].body.items);
  }
  free(p->rules);
  free(p->name_table);
  free(p->sets);
}

vlm_status vlm_grammar_parse(const char *text, size_t length, vlm_grammar **out_grammar) {
  *out_grammar = NULL;
  if (!text) return VLM_ERROR(INVALID_ARGUMENT, "grammar: no text");
  if (length > VLM_GRAMMAR_MAX_TEXT_BYTES)
    return VLM_ERROR(RESOURCE_EXHAUSTED, "grammar: %zu bytes is over the 4 MiB limit", length);
  parser p = {.text = text, .end = text + length, .at = text, .line = 1, .any_char_rule = -1, .utf8_tail_rule = -1};
  parse_rules(&p);
  vlm_grammar *g = NULL;
  char **names = NULL;
  if (!p.status) {
    int32_t root = -1;
    for (size_t i = 0; i < p.rule_count && !p.status; i++) {
      if (!p.rules[i].defined) {
        p.line = p.rules[i].line;
        fail(&p, VLM_STATUS_INVALID_ARGUMENT, "rule '%s' is used but not defined", p.rules[i].name);
      }
      if (p.rules[i].name && strcmp(p.rules[i].name, "root") == 0) root = (int32_t)i;
    }
    if (!p.status && root < 0) p.status = VLM_ERROR(INVALID_ARGUMENT, "grammar: no 'root' rule");
    if (!p.status) {
      g = calloc(1, sizeof(*g));
      size_t total = 0;
      for (size_t i = 0; i < p.rule_count; i++) total += p.rules[i].body.count + 1;
      if (g) {
        g->elements = malloc(total * sizeof(gelem));
        g->rule_start = malloc(p.rule_count * sizeof(uint32_t));
        g->sets = malloc((p.set_count ? p.set_count : 1) * sizeof(byte_set));
        names = calloc(p.rule_count, sizeof(char *));
      }
      if (!g || !g->elements || !g->rule_start || !g->sets || !names) {
        p.status = VLM_ERROR(RESOURCE_EXHAUSTED, "grammar: out of memory");
      } else {
        size_t at = 0;
        for (size_t i = 0; i < p.rule_count; i++) {
          g->rule_start[i] = (uint32_t)at;
          if (p.rules[i].body.count)
            memcpy(g->elements + at, p.rules[i].body.items, p.rules[i].body.count * sizeof(gelem));
          at += p.rules[i].body.count;
          g->elements[at++] = (gelem){G_END, 0};
          names[i] = p.rules[i].name;
        }
        g->element_count = at;
        g->rule_count = (int32_t)p.rule_count;
        if (p.set_count) memcpy(g->sets, p.sets, p.set_count * sizeof(byte_set));
        g->set_count = p.set_count;
        g->root = (uint32_t)root;
        p.status = check_left_recursion(g, names);
      }
    }
  }
  free(names);
  parser_release(&p);
  if (p.status) {
    vlm_grammar_release(g);
    return p.status;
  }
  *out_grammar = g;
  return VLM_OK;
}

void vlm_grammar_release(vlm_grammar *grammar) {
  if (!grammar) return;
  free(grammar->elements);
  free(grammar->rule_start);
  free(grammar->sets);
  free(grammar);
}

int32_t vlm_grammar_rule_count(const vlm_grammar *grammar) { return grammar->rule_count; }

/* ====================================================================== */
/* Matching                                                                */
/* ====================================================================== */

#define EMPTY_STACK UINT32_MAX
#define MASK_CACHE_ENTRIES 32
/* Work bounds per step (a step: one byte fed, or one mask). */
#define MAX_WORK_PER_MASK (16ll << 20) /* about 0.2 s of the scheduler thread at worst */
#define MAX_POOL_NODES (16u << 20)

typedef struct stack_node {
  uint32_t element;
  uint32_t parent;
} stack_node;

typedef struct u32_vec {
  uint32_t *items;
  size_t count, capacity;
} u32_vec;

typedef struct mask_entry {
  uint32_t *key;
  size_t key_length;
  uint32_t *bits;
  uint64_t used;
} mask_entry;

struct vlm_grammar_matcher {
  const vlm_grammar *grammar;
  stack_node *pool;
  size_t pool_count, pool_capacity;
  u32_vec state;     /* the committed stacks */
  u32_vec sets;      /* scratch: stack ids of trial states, used as a stack of frames */
  u32_vec work;      /* scratch: expansion worklist */
  u32_vec key;       /* scratch: the state's canonical key */
  int64_t work_done;
  vlm_status status; /* first bound hit in a trial */
  const vlm_token_index *cache_index;
  mask_entry cache[MASK_CACHE_ENTRIES];
  uint64_t clock;
  vlm_grammar_stats stats;
};

static bool vec_push(u32_vec *vec, uint32_t value) {
  if (vec->count == vec->capacity) {
    size_t capacity = vec->capacity ? vec->capacity * 2 : 64;
    uint32_t *items = realloc(vec->items, capacity * sizeof(*items));
    if (!items) return false;
    vec->items = items;
    vec->capacity = capacity;
  }
  vec->items[vec->count++] = value;
  return true;
}

static void set_failure(vlm_grammar_matcher *m, vlm_status status) {
  if (!m->status) m->status = status;
  else vlm_status_free(status);
}

static uint32_t push_node(vlm_grammar_matcher *m, uint32_t element, uint32_t parent) {
  if (m->pool_count == m->pool_capacity) {
    if (m->pool_capacity >= MAX_POOL_NODES) {
      set_failure(m, VLM_ERROR(RESOURCE_EXHAUSTED, "grammar: a state needs more than 16M stack entries"));
      return EMPTY_STACK;
    }
    size_t capacity = m->pool_capacity ? m->pool_capacity * 2 : 1024;
    stack_node *pool = realloc(m->pool, capacity * sizeof(*pool));
    if (!pool) {
      set_failure(m, VLM_ERROR(RESOURCE_EXHAUSTED, "grammar: out of memory"));
      return EMPTY_STACK;
    }
    m->pool = pool;
    m->pool_capacity = capacity;
  }
  m->pool[m->pool_count] = (stack_node){element, parent};
  return (uint32_t)m->pool_count++;
}

static bool stacks_equal(const vlm_grammar_matcher *m, uint32_t a, uint32_t b) {
  while (a != b) {
    if (a == EMPTY_STACK || b == EMPTY_STACK) return false;
    if (m->pool[a].element != m->pool[b].element) return false;
    a = m->pool[a].parent;
    b = m->pool[b].parent;
  }
  return true;
}

/* Adds stack s to the set sets[from..count) unless it is there. */
static void set_add(vlm_grammar_matcher *m, size_t from, uint32_t s) {
  for (size_t i = from; i < m->sets.count; i++)
    if (stacks_equal(m, m->sets.items[i], s)) return;
  if (m->sets.count - from >= VLM_GRAMMAR_MAX_STACKS) {
    set_failure(m, VLM_ERROR(RESOURCE_EXHAUSTED, "grammar: a state has more than %d alternatives "
                                                 "(the grammar is too ambiguous)", VLM_GRAMMAR_MAX_STACKS));
    return;
  }
  if (!vec_push(&m->sets, s)) set_failure(m, VLM_ERROR(RESOURCE_EXHAUSTED, "grammar: out of memory"));
}

/* Expands stack s until each resulting stack has a byte class on top (or
 * is empty), adding them to the set that starts at `from`. */
static void expand(vlm_grammar_matcher *m, size_t from, uint32_t s) {
  const gelem *elements = m->grammar->elements;
  size_t base = m->work.count;
  if (!vec_push(&m->work, s)) {
    set_failure(m, VLM_ERROR(RESOURCE_EXHAUSTED, "grammar: out of memory"));
    return;
  }
  while (m->work.count > base && !m->status) {
    uint32_t top = m->work.items[--m->work.count];
    if (++m->work_done > MAX_WORK_PER_MASK) {
      set_failure(m, VLM_ERROR(RESOURCE_EXHAUSTED, "grammar: a step needs more than 16M expansions"));
      break;
    }
    if (top == EMPTY_STACK) {
      set_add(m, from, top);
      continue;
    }
    uint32_t position = m->pool[top].element;
    const gelem *e = &elements[position];
    if (e->type == G_CHAR) {
      set_add(m, from, top);
      continue;
    }
    uint32_t rest = m->pool[top].parent;
    if (!is_alt_end(&elements[position + 1])) rest = push_node(m, position + 1, rest);
    for (uint32_t i = m->grammar->rule_start[e->value];; i++) {
      /* i is the first element of an alternative */
      bool ok = is_alt_end(&elements[i]) ? vec_push(&m->work, rest) : vec_push(&m->work, push_node(m, i, rest));
      if (!ok) {
        set_failure(m, VLM_ERROR(RESOURCE_EXHAUSTED, "grammar: out of memory"));
        break;
      }
      while (!is_alt_end(&elements[i])) i++;
      if (elements[i].type == G_END) break;
    }
  }
  m->work.count = base;
}

static bool byte_in(const vlm_grammar *g, uint32_t set, unsigned char byte) {
  return (g->sets[set].bits[byte >> 5] >> (byte & 31)) & 1u;
}

/* Advances the set sets[from..to) by one byte into a new set appended at
 * sets[to..): returns whether it is non-empty. */
static bool advance(vlm_grammar_matcher *m, size_t from, size_t to, unsigned char byte) {
  const vlm_grammar *g = m->grammar;
  for (size_t i = from; i < to && !m->status; i++) {
    uint32_t s = m->sets.items[i];
    if (s == EMPTY_STACK) continue;
    uint32_t position = m->pool[s].element;
    if (!byte_in(g, g->elements[position].value, byte)) continue;
    uint32_t rest = m->pool[s].parent;
    if (!is_alt_end(&g->elements[position + 1])) rest = push_node(m, position + 1, rest);
    expand(m, to, rest);
  }
  return !m->status && m->sets.count > to;
}

/* Copies the set at sets[from..) into the committed state, compacting the
 * pool so that it holds only the committed stacks. */
static vlm_status commit(vlm_grammar_matcher *m, size_t from) {
  /* Serialize stacks bottom-up into `key` (scratch), then rebuild. */
  u32_vec flat = {0};
  bool ok = true;
  for (size_t i = from; ok && i < m->sets.count; i++) {
    size_t mark = flat.count;
    for (uint32_t s = m->sets.items[i]; ok && s != EMPTY_STACK; s = m->pool[s].parent) ok = vec_push(&flat, m->pool[s].element);
    /* reverse to bottom-up */
    for (size_t a = mark, b = flat.count; ok && a + 1 < b; a++, b--) {
      uint32_t t = flat.items[a];
      flat.items[a] = flat.items[b - 1];
      flat.items[b - 1] = t;
    }
    ok = ok && vec_push(&flat, EMPTY_STACK);
  }
  if (!ok) {
    free(flat.items);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "grammar: out of memory");
  }
  m->pool_count = 0;
  m->state.count = 0;
  uint32_t top = EMPTY_STACK;
  for (size_t i = 0; i < flat.count && !m->status; i++) {
    if (flat.items[i] == EMPTY_STACK) {
      if (!vec_push(&m->state, top)) set_failure(m, VLM_ERROR(RESOURCE_EXHAUSTED, "grammar: out of memory"));
      top = EMPTY_STACK;
    } else {
      top = push_node(m, flat.items[i], top);
    }
  }
  free(flat.items);
  m->sets.count = 0;
  vlm_status status = m->status;
  m->status = VLM_OK;
  return status;
}

vlm_status vlm_grammar_matcher_create(const vlm_grammar *grammar, vlm_grammar_matcher **out_matcher) {
  *out_matcher = NULL;
  vlm_grammar_matcher *m = calloc(1, sizeof(*m));
  if (!m) return VLM_ERROR(RESOURCE_EXHAUSTED, "grammar: out of memory");
  m->grammar = grammar;
  /* The start state: root's alternatives over an empty stack. */
  const gelem *elements = grammar->elements;
  for (uint32_t i = grammar->rule_start[grammar->root];; i++) {
    expand(m, 0, is_alt_end(&elements[i]) ? EMPTY_STACK : push_node(m, i, EMPTY_STACK));
    while (!is_alt_end(&elements[i])) i++;
    if (elements[i].type == G_END) break;
  }
  vlm_status status = m->status;
  m->status = VLM_OK;
  if (!status) status = commit(m, 0);
  if (status) {
    vlm_grammar_matcher_release(m);
    return status;
  }
  *out_matcher = m;
  return VLM_OK;
}

void vlm_grammar_matcher_release(vlm_grammar_matcher *matcher) {
  if (!matcher) return;
  free(matcher->pool);
  free(matcher->state.items);
  free(matcher->sets.items);
  free(matcher->work.items);
  free(matcher->key.items);
  for (int i = 0; i < MASK_CACHE_ENTRIES; i++) {
    free(matcher->cache[i].key);
    free(matcher->cache[i].bits);
  }
  free(matcher);
}

/* Copies the committed state into sets[0..n) for a trial. */
static size_t load_state(vlm_grammar_matcher *m) {
  m->sets.count = 0;
  m->work_done = 0;
  for (size_t i = 0; i < m->state.count; i++)
    if (!vec_push(&m->sets, m->state.items[i])) set_failure(m, VLM_ERROR(RESOURCE_EXHAUSTED, "grammar: out of memory"));
  return m->sets.count;
}

/* Runs bytes from the committed state; on success the new set is at
 * sets[*out_from..). The pool is not rewound. */
static bool run_bytes(vlm_grammar_matcher *m, const unsigned char *bytes, size_t length, size_t *out_from) {
  size_t from = 0, to = load_state(m);
  for (size_t i = 0; i < length; i++) {
    if (!advance(m, from, to, bytes[i])) return false;
    from = to;
    to = m->sets.count;
  }
  *out_from = from;
  return !m->status;
}

bool vlm_grammar_matcher_accept_bytes(vlm_grammar_matcher *matcher, const char *bytes, size_t length,
                                      vlm_status *out_status) {
  if (out_status) *out_status = VLM_OK;
  size_t pool_mark = matcher->pool_count, from = 0;
  bool ok = run_bytes(matcher, (const unsigned char *)bytes, length, &from);
  vlm_status status = matcher->status;
  matcher->status = VLM_OK;
  if (ok) status = commit(matcher, from);
  if (!ok || status) {
    matcher->pool_count = pool_mark;
    matcher->sets.count = 0;
  }
  if (status) {
    if (out_status) *out_status = status;
    else vlm_status_free(status);
    return false;
  }
  return ok;
}

bool vlm_grammar_matcher_is_complete(const vlm_grammar_matcher *matcher) {
  for (size_t i = 0; i < matcher->state.count; i++)
    if (matcher->state.items[i] == EMPTY_STACK) return true;
  return false;
}

bool vlm_grammar_matcher_is_finished(const vlm_grammar_matcher *matcher) {
  return matcher->state.count == 1 && matcher->state.items[0] == EMPTY_STACK;
}

vlm_grammar_stats vlm_grammar_matcher_stats(const vlm_grammar_matcher *matcher) { return matcher->stats; }

/* ====================================================================== */
/* The token trie                                                          */
/* ====================================================================== */

#define MAX_TOKEN_BYTES 1024

typedef struct trie_node {
  uint32_t first_child;   /* 0: none (node 0 is the root, never a child) */
  uint32_t next_sibling;  /* 0: none */
  uint32_t token_start;   /* into sorted_tokens */
  uint32_t token_count;
  uint8_t byte;
} trie_node;

struct vlm_token_index {
  int32_t vocab_size;
  trie_node *nodes;
  size_t node_count;
  int32_t *sorted_tokens;
  char **bytes;           /* per token, NULL when never allowed */
  uint16_t *lengths;
  int32_t *end_tokens;
  int32_t end_token_count;
};

typedef struct sort_context {
  char *const *bytes;
  const uint16_t *lengths;
} sort_context;

static int compare_tokens(const void *a, const void *b, void *context) {
  const sort_context *c = context;
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  size_t lx = c->lengths[x], ly = c->lengths[y];
  int order = memcmp(c->bytes[x], c->bytes[y], lx < ly ? lx : ly);
  if (order) return order;
  if (lx != ly) return lx < ly ? -1 : 1;
  return (x > y) - (x < y);
}

static vlm_status index_build(vlm_token_index *index) {
  int32_t count = 0;
  index->sorted_tokens = malloc((size_t)(index->vocab_size ? index->vocab_size : 1) * sizeof(int32_t));
  if (!index->sorted_tokens) return VLM_ERROR(RESOURCE_EXHAUSTED, "token index: out of memory");
  for (int32_t t = 0; t < index->vocab_size; t++)
    if (index->bytes[t]) index->sorted_tokens[count++] = t;
  sort_context context = {index->bytes, index->lengths};
  qsort_r(index->sorted_tokens, (size_t)count, sizeof(int32_t), compare_tokens, &context);
  size_t capacity = 1024;
  index->nodes = calloc(capacity, sizeof(trie_node));
  uint32_t path[MAX_TOKEN_BYTES + 1];      /* node at each depth along the previous token */
  uint32_t last_child[MAX_TOKEN_BYTES + 1];
  if (!index->nodes) return VLM_ERROR(RESOURCE_EXHAUSTED, "token index: out of memory");
  index->node_count = 1;
  path[0] = 0;
  last_child[0] = 0;
  size_t depth = 0; /* length of the path in use */
  const char *previous = NULL;
  size_t previous_length = 0;
  for (int32_t i = 0; i < count; i++) {
    int32_t token = index->sorted_tokens[i];
    const char *bytes = index->bytes[token];
    size_t length = index->lengths[token];
    size_t common = 0;
    if (previous)
      while (common < length && common < previous_length && bytes[common] == previous[common]) common++;
    if (common < depth) depth = common;
    for (size_t d = depth; d < length; d++) {
      if (index->node_count == capacity) {
        capacity *= 2;
        trie_node *nodes = realloc(index->nodes, capacity * sizeof(*nodes));
        if (!nodes) return VLM_ERROR(RESOURCE_EXHAUSTED, "token index: out of memory");
        index->nodes = nodes;
      }
      uint32_t node = (uint32_t)index->node_count++;
      memset(&index->nodes[node], 0, sizeof(trie_node));
      index->nodes[node].byte = (uint8_t)bytes[d];
      uint32_t parent = path[d];
      if (last_child[d]) index->nodes[last_child[d]].next_sibling = node;
      else index->nodes[parent].first_child = node;
      last_child[d] = node;
      path[d + 1] = node;
      last_child[d + 1] = 0;
    }
    depth = length;
    trie_node *leaf = &index->nodes[path[length]];
    if (!leaf->token_count) leaf->token_start = (uint32_t)i;
    leaf->token_count++;
    previous = bytes;
    previous_length = length;
  }
  return VLM_OK;
}

static vlm_status index_new(int32_t vocab_size, const int32_t *end_tokens, int32_t end_token_count,
                            vlm_token_index **out_index) {
  vlm_token_index *index = calloc(1, sizeof(*index));
  if (!index) return VLM_ERROR(RESOURCE_EXHAUSTED, "token index: out of memory");
  index->vocab_size = vocab_size;
  index->bytes = calloc((size_t)(vocab_size ? vocab_size : 1), sizeof(char *));
  index->lengths = calloc((size_t)(vocab_size ? vocab_size : 1), sizeof(uint16_t));
  index->end_tokens = malloc((size_t)(end_token_count ? end_token_count : 1) * sizeof(int32_t));
  if (!index->bytes || !index->lengths || !index->end_tokens) {
    vlm_token_index_release(index);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "token index: out of memory");
  }
  for (int32_t i = 0; i < end_token_count; i++)
    if (end_tokens[i] >= 0 && end_tokens[i] < vocab_size) index->end_tokens[index->end_token_count++] = end_tokens[i];
  *out_index = index;
  return VLM_OK;
}

/* End tokens carry no bytes: the grammar allows them only where it is complete. */
static bool index_set_bytes(vlm_token_index *index, int32_t token, const char *bytes, size_t length) {
  if (length == 0 || length > MAX_TOKEN_BYTES) return true; /* never allowed */
  for (int32_t e = 0; e < index->end_token_count; e++)
    if (index->end_tokens[e] == token) return true;
  index->bytes[token] = malloc(length);
  if (!index->bytes[token]) return false;
  memcpy(index->bytes[token], bytes, length);
  index->lengths[token] = (uint16_t)length;
  return true;
}

/* Builds the trie over the bytes set so far; on failure the index is released. */
static vlm_status index_finish(vlm_token_index *index, vlm_token_index **out_index) {
  vlm_status status = index_build(index);
  if (status) {
    vlm_token_index_release(index);
    return status;
  }
  *out_index = index;
  return VLM_OK;
}

vlm_status vlm_token_index_create_from_bytes(const char *const *tokens, const size_t *lengths, int32_t count,
                                             const int32_t *end_tokens, int32_t end_token_count,
                                             vlm_token_index **out_index) {
  *out_index = NULL;
  vlm_token_index *index = NULL;
  VLM_RETURN_IF_ERROR(index_new(count, end_tokens, end_token_count, &index));
  for (int32_t t = 0; t < count; t++) {
    if (tokens[t] && !index_set_bytes(index, t, tokens[t], lengths[t])) {
      vlm_token_index_release(index);
      return VLM_ERROR(RESOURCE_EXHAUSTED, "token index: out of memory");
    }
  }
  return index_finish(index, out_index);
}

vlm_status vlm_token_index_create(const vlm_tokenizer *tokenizer, int32_t vocab_limit, const int32_t *end_tokens,
                                  int32_t end_token_count, vlm_token_index **out_index) {
  *out_index = NULL;
  int32_t vocab = (int32_t)vlm_tokenizer_vocab_size(tokenizer);
  if (vocab_limit > 0 && vocab > vocab_limit) vocab = vocab_limit;
  vlm_token_index *index = NULL;
  VLM_RETURN_IF_ERROR(index_new(vocab, end_tokens, end_token_count, &index));
  char buffer[MAX_TOKEN_BYTES + 8];
  for (int32_t t = 0; t < vocab; t++) {
    if (vlm_tokenizer_is_special(tokenizer, t)) continue;
    size_t length = 0;
    vlm_status status = vlm_tokenizer_token_bytes(tokenizer, t, buffer, sizeof(buffer), &length);
    if (status) { /* too long or unknown: never allowed */
      vlm_status_free(status);
      continue;
    }
    if (!index_set_bytes(index, t, buffer, length)) {
      vlm_token_index_release(index);
      return VLM_ERROR(RESOURCE_EXHAUSTED, "token index: out of memory");
    }
  }
  return index_finish(index, out_index);
}

void vlm_token_index_release(vlm_token_index *index) {
  if (!index) return;
  if (index->bytes)
    for (int32_t t = 0; t < index->vocab_size; t++) free(index->bytes[t]);
  free(index->bytes);
  free(index->lengths);
  free(index->nodes);
  free(index->sorted_tokens);
  free(index->end_tokens);
  free(index);
}

int32_t vlm_token_index_vocab_size(const vlm_token_index *index) { return index->vocab_size; }

/* ---- masks ---------------------------------------------------------------- */

static void walk(vlm_grammar_matcher *m, const vlm_token_index *index, uint32_t node, size_t from, size_t to,
                 uint32_t *bits) {
  for (uint32_t child = index->nodes[node].first_child; child && !m->status; child = index->nodes[child].next_sibling) {
    const trie_node *c = &index->nodes[child];
    size_t pool_mark = m->pool_count;
    m->stats.trie_nodes_visited++;
    if (advance(m, from, to, c->byte)) {
      for (uint32_t i = 0; i < c->token_count; i++) {
        int32_t token = index->sorted_tokens[c->token_start + i];
        bits[token >> 5] |= 1u << (token & 31);
      }
      if (c->first_child) walk(m, index, child, to, m->sets.count, bits);
    }
    m->sets.count = to;
    m->pool_count = pool_mark;
  }
}

/* The committed state as a canonical key: each stack top-down, sorted. */
static bool state_key(vlm_grammar_matcher *m) {
  m->key.count = 0;
  /* Stacks are few (<= 512); a selection by comparing their serializations
   * would be quadratic, so serialize each then sort offsets. */
  u32_vec offsets = {0};
  bool ok = true;
  for (size_t i = 0; ok && i < m->state.count; i++) {
    ok = vec_push(&offsets, (uint32_t)m->key.count);
    for (uint32_t s = m->state.items[i]; ok && s != EMPTY_STACK; s = m->pool[s].parent)
      ok = vec_push(&m->key, m->pool[s].element);
    ok = ok && vec_push(&m->key, EMPTY_STACK);
  }
  if (!ok) {
    free(offsets.items);
    return false;
  }
  /* insertion sort of offsets by the sequence they start */
  for (size_t i = 1; i < offsets.count; i++) {
    uint32_t value = offsets.items[i];
    size_t j = i;
    while (j > 0) {
      const uint32_t *a = m->key.items + offsets.items[j - 1], *b = m->key.items + value;
      while (*a == *b && *a != EMPTY_STACK) a++, b++;
      if (*a <= *b) break;
      offsets.items[j] = offsets.items[j - 1];
      j--;
    }
    offsets.items[j] = value;
  }
  u32_vec sorted = {0};
  for (size_t i = 0; ok && i < offsets.count; i++)
    for (const uint32_t *at = m->key.items + offsets.items[i];; at++) {
      ok = vec_push(&sorted, *at);
      if (!ok || *at == EMPTY_STACK) break;
    }
  free(offsets.items);
  if (!ok) {
    free(sorted.items);
    return false;
  }
  free(m->key.items);
  m->key = sorted;
  return true;
}

vlm_status vlm_grammar_matcher_fill_mask(vlm_grammar_matcher *m, const vlm_token_index *index, uint32_t *bits) {
  size_t words = ((size_t)index->vocab_size + 31) / 32;
  if (m->cache_index != index) {
    for (int i = 0; i < MASK_CACHE_ENTRIES; i++) {
      free(m->cache[i].key);
      free(m->cache[i].bits);
      memset(&m->cache[i], 0, sizeof(m->cache[i]));
    }
    m->cache_index = index;
  }
  bool keyed = state_key(m);
  if (keyed) {
    for (int i = 0; i < MASK_CACHE_ENTRIES; i++) {
      mask_entry *entry = &m->cache[i];
      if (entry->bits && entry->key_length == m->key.count &&
          memcmp(entry->key, m->key.items, m->key.count * sizeof(uint32_t)) == 0) {
        memcpy(bits, entry->bits, words * sizeof(uint32_t));
        entry->used = ++m->clock;
        m->stats.mask_cache_hits++;
        return VLM_OK;
      }
    }
  }
  memset(bits, 0, words * sizeof(uint32_t));
  size_t pool_mark = m->pool_count;
  size_t to = load_state(m);
  walk(m, index, 0, 0, to, bits);
  m->pool_count = pool_mark;
  m->sets.count = 0;
  vlm_status status = m->status;
  m->status = VLM_OK;
  if (status) return status;
  if (vlm_grammar_matcher_is_complete(m))
    for (int32_t e = 0; e < index->end_token_count; e++)
      bits[index->end_tokens[e] >> 5] |= 1u << (index->end_tokens[e] & 31);
  m->stats.masks_computed++;
  if (keyed) {
    mask_entry *victim = &m->cache[0];
    for (int i = 1; i < MASK_CACHE_ENTRIES; i++)
      if (m->cache[i].used < victim->used) victim = &m->cache[i];
    uint32_t *key = malloc(m->key.count * sizeof(uint32_t) + 1);
    uint32_t *copy = victim->bits ? victim->bits : malloc(words * sizeof(uint32_t));
    if (key && copy) {
      free(victim->key);
      memcpy(key, m->key.items, m->key.count * sizeof(uint32_t));
      memcpy(copy, bits, words * sizeof(uint32_t));
      victim->key = key;
      victim->key_length = m->key.count;
      victim->bits = copy;
      victim->used = ++m->clock;
    } else {
      free(key);
      if (copy != victim->bits) free(copy);
    }
  }
  return VLM_OK;
}

static bool is_end_token(const vlm_token_index *index, int32_t token) {
  for (int32_t e = 0; e < index->end_token_count; e++)
    if (index->end_tokens[e] == token) return true;
  return false;
}

bool vlm_grammar_matcher_allows_token(vlm_grammar_matcher *m, const vlm_token_index *index, int32_t token) {
  if (token < 0 || token >= index->vocab_size) return false;
  if (is_end_token(index, token)) return vlm_grammar_matcher_is_complete(m);
  if (!index->bytes[token]) return false;
  size_t pool_mark = m->pool_count, from = 0;
  bool ok = run_bytes(m, (const unsigned char *)index->bytes[token], index->lengths[token], &from);
  m->pool_count = pool_mark;
  m->sets.count = 0;
  vlm_status_free(m->status);
  m->status = VLM_OK;
  return ok;
}

vlm_status vlm_grammar_matcher_accept_token(vlm_grammar_matcher *m, const vlm_token_index *index, int32_t token) {
  if (token < 0 || token >= index->vocab_size)
    return VLM_ERROR(INVALID_ARGUMENT, "grammar: token %d is outside the vocabulary", token);
  if (is_end_token(index, token)) {
    if (!vlm_grammar_matcher_is_complete(m))
      return VLM_ERROR(INVALID_ARGUMENT, "grammar: end of output before the grammar is complete");
    return VLM_OK;
  }
  if (!index->bytes[token])
    return VLM_ERROR(INVALID_ARGUMENT, "grammar: token %d can never be part of a constrained output", token);
  vlm_status status = VLM_OK;
  if (!vlm_grammar_matcher_accept_bytes(m, index->bytes[token], index->lengths[token], &status)) {
    if (status) return status;
    return VLM_ERROR(INVALID_ARGUMENT, "grammar: token %d does not continue a valid output", token);
  }
  return VLM_OK;
}
