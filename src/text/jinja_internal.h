/* Shared between the Jinja lexer, parser, evaluator and filters; not part of
 * the engine's interface (see jinja.h). */
#ifndef VLM_TEXT_JINJA_INTERNAL_H
#define VLM_TEXT_JINJA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"
#include "io/json.h"
#include "text/jinja.h"

/* Nesting bounds that keep the recursive-descent parser, the evaluator and
 * the printers off the end of the C stack for hostile input.
 * JINJA_MAX_NESTING bounds the parser's own recursion (brackets, unary
 * operators, nested blocks). JINJA_MAX_EXPRESSION_DEPTH bounds the height
 * of an expression tree, which the evaluator walks recursively: chains the
 * parser builds in a loop (`a.b.c...`, `x|f|g...`, `f()()...`,
 * `a + b + c...`, `a if b if c...`) are as deep as they are long, so the
 * parser refuses them past this height. jinja2 itself fails such templates
 * with a RecursionError when it compiles them.
 * JINJA_MAX_RENDER_DEPTH bounds the evaluator's recursion at run time
 * (expressions, statements and macro calls together), and
 * JINJA_MAX_VALUE_DEPTH the nesting of values (printers, ==, <, and every
 * value a template assigns). */
#define JINJA_MAX_NESTING 200
#define JINJA_MAX_EXPRESSION_DEPTH 200
#define JINJA_MAX_RENDER_DEPTH 1000
#define JINJA_MAX_VALUE_DEPTH 200

/* ---- tokens ------------------------------------------------------------ */

typedef enum jinja_token_type {
  JINJA_TOKEN_TEXT,           /* literal template data */
  JINJA_TOKEN_VARIABLE_BEGIN, /* {{ */
  JINJA_TOKEN_VARIABLE_END,   /* }} */
  JINJA_TOKEN_BLOCK_BEGIN,    /* {% */
  JINJA_TOKEN_BLOCK_END,      /* %} */
  JINJA_TOKEN_NAME,
  JINJA_TOKEN_STRING,         /* decoded value in text/length */
  JINJA_TOKEN_INTEGER,
  JINJA_TOKEN_FLOAT,
  JINJA_TOKEN_OPERATOR,       /* text holds the operator, e.g. "//" */
  JINJA_TOKEN_END,
} jinja_token_type;

typedef struct jinja_token {
  jinja_token_type type;
  const char *text; /* arena copy (decoded for strings) */
  size_t length;
  int64_t integer;
  double number;
  int line;
  int column;
} jinja_token;

typedef struct jinja_token_list {
  jinja_token *tokens;
  size_t count;
} jinja_token_list;

/* Splits normalised source into tokens, applying whitespace control,
 * trim_blocks and lstrip_blocks. Raw blocks become TEXT. */
vlm_status jinja_lex(const char *source, size_t length, const char *source_name,
                     vlm_arena *arena, jinja_token_list *out_tokens);

/* ---- values ------------------------------------------------------------ */

typedef enum jinja_value_type {
  JINJA_UNDEFINED,
  JINJA_NONE,
  JINJA_BOOLEAN,
  JINJA_INTEGER,
  JINJA_FLOAT,
  JINJA_STRING,
  JINJA_LIST,      /* also tuples: is_tuple on the list */
  JINJA_DICT,
  JINJA_NAMESPACE, /* a dict that `set ns.x = ...` may change */
  JINJA_MACRO,
  JINJA_FUNCTION,  /* a global function or a bound method */
} jinja_value_type;

typedef struct jinja_list jinja_list;
typedef struct jinja_dict jinja_dict;
typedef struct jinja_callable jinja_callable;

typedef struct jinja_value {
  jinja_value_type type;
  union {
    bool boolean;
    int64_t integer;
    double number;
    struct {
      const char *chars;
      size_t length;
    } string;
    jinja_list *list;
    jinja_dict *dict;
    jinja_callable *callable;
    /* For JINJA_UNDEFINED: why it is undefined, for error messages, e.g.
     * "'x' is undefined" (NULL: no hint). */
    const char *undefined_hint;
  } as;
} jinja_value;

/* Lists and dicts are never changed once built (the sandbox has no
 * append or update), so their nesting depth is computed once, when first
 * asked (jinja_value_depth), and kept in `depth` (0: not known yet).
 * Namespaces are the one mutable kind and are never memoized. */
struct jinja_list {
  jinja_value *items;
  size_t count;
  size_t capacity;
  bool is_tuple;
  int depth;
};

struct jinja_dict {
  jinja_value *keys;
  jinja_value *values;
  size_t count;
  size_t capacity;
  int depth;
};

/* ---- syntax tree --------------------------------------------------------- */

typedef enum jinja_expression_kind {
  JINJA_EXPRESSION_LITERAL,
  JINJA_EXPRESSION_NAME,
  JINJA_EXPRESSION_LIST,
  JINJA_EXPRESSION_TUPLE,
  JINJA_EXPRESSION_DICT,      /* children alternate key, value */
  JINJA_EXPRESSION_ATTRIBUTE, /* first.name */
  JINJA_EXPRESSION_SUBSCRIPT, /* first[second] */
  JINJA_EXPRESSION_SLICE,     /* first[second:third:fourth]; parts may be NULL */
  JINJA_EXPRESSION_CALL,      /* first(arguments) */
  JINJA_EXPRESSION_FILTER,    /* first | name(arguments) */
  JINJA_EXPRESSION_TEST,      /* first is [not] name(arguments) */
  JINJA_EXPRESSION_UNARY,     /* op first */
  JINJA_EXPRESSION_BINARY,    /* first op second */
  JINJA_EXPRESSION_COMPARE,   /* first (op second)+, chained as in Python */
  JINJA_EXPRESSION_AND,
  JINJA_EXPRESSION_OR,
  JINJA_EXPRESSION_NOT,
  JINJA_EXPRESSION_CONDITIONAL, /* second if first else third */
} jinja_expression_kind;

typedef struct jinja_expression jinja_expression;

/* A call or filter argument; `name` is set for keyword arguments. */
typedef struct jinja_call_argument {
  const char *name;
  jinja_expression *value;
  struct jinja_call_argument *next;
} jinja_call_argument;

struct jinja_expression {
  jinja_expression_kind kind;
  int line;
  int column;
  const char *name;      /* NAME, ATTRIBUTE, FILTER, TEST; operator text */
  jinja_value literal;   /* LITERAL */
  bool negated;          /* TEST: `is not` */
  jinja_expression *first;
  jinja_expression *second;
  jinja_expression *third;
  jinja_expression *fourth;
  jinja_expression *children; /* LIST/TUPLE/DICT items, COMPARE operands */
  jinja_call_argument *arguments;  /* CALL/FILTER/TEST */
  const char *filter_or_test; /* resolved entry of the filter/test tables */
  int builtin;                /* index into those tables */
  jinja_expression *next;     /* sibling in a children list */
  int height;                 /* of this subtree: 1 for a leaf */
};

typedef enum jinja_node_kind {
  JINJA_NODE_TEXT,
  JINJA_NODE_OUTPUT,
  JINJA_NODE_IF,
  JINJA_NODE_FOR,
  JINJA_NODE_SET,
  JINJA_NODE_SET_BLOCK,
  JINJA_NODE_MACRO,
  JINJA_NODE_BREAK,
  JINJA_NODE_CONTINUE,
  JINJA_NODE_SCOPE, /* generation blocks: render the body */
} jinja_node_kind;

typedef struct jinja_node jinja_node;

/* An assignment target: a name, `namespace.attribute`, or names to unpack. */
typedef struct jinja_target {
  const char *name;
  const char *attribute; /* set for ns.attribute */
  const char **names;    /* unpacking: names[0..name_count) */
  size_t name_count;
  bool is_unpacking;
} jinja_target;

struct jinja_node {
  jinja_node_kind kind;
  int line;
  int column;
  const char *text; /* TEXT */
  size_t length;
  jinja_expression *expression; /* OUTPUT; IF condition; FOR iterable; SET value */
  jinja_expression *condition;  /* FOR's inline `if` filter */
  jinja_target target;          /* FOR, SET, SET_BLOCK; MACRO name in .name */
  jinja_node *body;
  jinja_node *else_body;        /* IF else/elif, FOR else */
  /* MACRO parameters and their defaults (NULL when none). */
  const char **parameters;
  jinja_expression **defaults;
  size_t parameter_count;
  /* SET_BLOCK: filters applied to the captured body (a FILTER chain whose
   * innermost operand is NULL). */
  jinja_expression *filter;
  jinja_node *next;
};

struct jinja_template {
  vlm_arena arena;
  jinja_node *body;
  const char *source_name;
};

vlm_status jinja_parse_tokens(const jinja_token_list *tokens, const char *source_name,
                              vlm_arena *arena, jinja_node **out_body);

/* ---- rendering ------------------------------------------------------------ */

typedef struct jinja_frame jinja_frame;

typedef struct jinja_renderer {
  vlm_arena arena;         /* every value created while rendering */
  const char *source_name;
  jinja_render_options options;
  uint64_t steps;
  int call_depth;
  int depth;               /* evaluator recursion: expressions + statements */
  vlm_string_builder *output; /* where {{ }} and text go (swapped by captures) */
  vlm_string_builder *result; /* the rendered result (output when nothing captures) */
  size_t output_total;        /* bytes written across all builders */
} jinja_renderer;

/* Error helpers: every message names source:line:column. */
vlm_status jinja_error_at(const jinja_renderer *renderer, int line, int column,
                          vlm_status_code code, const char *format, ...)
    __attribute__((format(printf, 5, 6)));

/* Allocation in the render arena, failing over the memory budget. */
void *jinja_allocate(jinja_renderer *renderer, size_t size);

/* Value constructors and helpers (jinja_value.c). */
jinja_value jinja_undefined(const char *hint);
jinja_value jinja_none(void);
jinja_value jinja_boolean(bool value);
jinja_value jinja_integer(int64_t value);
jinja_value jinja_float(double value);
jinja_value jinja_string(const char *chars, size_t length);
/* A string copied into the render arena; type NONE-free UNDEFINED on OOM. */
bool jinja_string_copy(jinja_renderer *renderer, const char *chars, size_t length,
                       jinja_value *out);
jinja_list *jinja_list_create(jinja_renderer *renderer, size_t capacity);
bool jinja_list_append(jinja_renderer *renderer, jinja_list *list, jinja_value value);
jinja_dict *jinja_dict_create(jinja_renderer *renderer, size_t capacity);
/* Inserts or replaces (keeping the first position, as Python does). */
bool jinja_dict_set(jinja_renderer *renderer, jinja_dict *dict, jinja_value key,
                    jinja_value value);
/* Returns the value for a string key, or NULL. */
const jinja_value *jinja_dict_get(const jinja_dict *dict, const char *key, size_t length);
const jinja_value *jinja_dict_get_value(const jinja_dict *dict, jinja_value key);
jinja_value jinja_value_from_json(jinja_renderer *renderer, const vlm_json_value *json,
                                  bool *ok);

/* How deeply a value nests as ==, < and `in` recurse into it (a scalar is
 * 0, [1] is 1), or -1 when that is more than `limit`. A namespace compares
 * by identity, so it counts as a scalar: what it holds is checked when it
 * is stored (namespace(...) and `set ns.x`). The walk recurses at most
 * `limit` levels and visits each list or dict once (memoized). */
int jinja_value_depth(jinja_value value, int limit);

bool jinja_truthy(jinja_value value);
bool jinja_equal(jinja_value a, jinja_value b);
/* Python's `<`-style ordering: sets *out to -1/0/1; false when the types do
 * not compare. */
bool jinja_compare(jinja_value a, jinja_value b, int *out);
/* The Python type name for messages: 'str', 'int', 'dict', ... */
const char *jinja_type_name(jinja_value value);
/* Number of Unicode code points in a UTF-8 string. */
size_t jinja_utf8_length(const char *chars, size_t length);
/* Byte offset of code point `index` (clamped to the length). */
size_t jinja_utf8_offset(const char *chars, size_t length, size_t index);

/* str(value) and repr(value) as Python prints them; tojson as json.dumps
 * with ensure_ascii=False. Return false when the value nests too deeply. */
bool jinja_append_str(vlm_string_builder *builder, jinja_value value);
bool jinja_append_repr(vlm_string_builder *builder, jinja_value value, int depth);
bool jinja_append_json(vlm_string_builder *builder, jinja_value value, int indent,
                       int level, bool sort_keys, const char *item_separator,
                       const char *key_separator);
void jinja_append_python_float(vlm_string_builder *builder, double value);
/* str(value) as a value (strings are returned as they are). */
vlm_status jinja_to_string(jinja_renderer *renderer, jinja_value value, int line,
                           int column, jinja_value *out);

/* ---- filters, tests, functions (jinja_filters.c) --------------------------- */

/* Evaluated call arguments. */
typedef struct jinja_arguments {
  jinja_value *positional;
  size_t positional_count;
  const char **keyword_names;
  jinja_value *keyword_values;
  size_t keyword_count;
  int line;
  int column;
} jinja_arguments;

/* Table lookups used by the parser to refuse unknown names at load time.
 * Return -1 when unknown. */
int jinja_filter_find(const char *name);
int jinja_test_find(const char *name);

vlm_status jinja_apply_filter(jinja_renderer *renderer, int filter, jinja_value input,
                              const jinja_arguments *arguments, jinja_value *out);
vlm_status jinja_apply_test(jinja_renderer *renderer, int test, jinja_value input,
                            const jinja_arguments *arguments, bool *out);

/* Globals and methods: a callable is a builtin function id plus an optional
 * receiver (for bound methods like "text".strip). */
typedef enum jinja_function_id {
  JINJA_FUNCTION_RANGE,
  JINJA_FUNCTION_NAMESPACE,
  JINJA_FUNCTION_DICT,
  JINJA_FUNCTION_RAISE_EXCEPTION,
  JINJA_FUNCTION_STRFTIME_NOW,
  JINJA_FUNCTION_LOOP_CYCLE,
  JINJA_FUNCTION_METHOD, /* method_name on receiver */
} jinja_function_id;

struct jinja_callable {
  jinja_function_id function;
  const char *method_name;
  jinja_value receiver;
  const jinja_node *macro; /* JINJA_MACRO */
  jinja_frame *closure;    /* JINJA_MACRO: the scope it was defined in */
};

/* Looks up a method on a str/dict/list value: true (and *out is a bound
 * method) when `name` is a method that the sandbox allows. */
bool jinja_find_method(jinja_renderer *renderer, jinja_value receiver,
                       const char *name, jinja_value *out);
vlm_status jinja_call_function(jinja_renderer *renderer, const jinja_callable *callable,
                               const jinja_arguments *arguments, jinja_value *out);

/* Accessor for keyword or positional argument `index` named `name`. */
const jinja_value *jinja_argument(const jinja_arguments *arguments, size_t index,
                                  const char *name);

#endif
