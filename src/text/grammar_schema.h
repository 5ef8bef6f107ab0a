/* JSON Schema -> GBNF (text/grammar.h), for structured outputs and tool
 * arguments.
 *
 * The subset is the one OpenAI's structured outputs documents: type (one
 * or a list), properties, required, additionalProperties (false, true, or
 * a schema for an object without properties), enum, const, anyOf,
 * $ref/$defs/definitions (JSON pointers inside the document, recursion
 * allowed), strings with minLength/maxLength, pattern (a regex subset:
 * literals, classes, \d \w \s, ., groups, alternation, * + ? {m,n}; no
 * backreferences or lookaround) or format (date, time, date-time, uuid,
 * email, ipv4), integers with minimum/maximum/exclusiveMinimum/
 * exclusiveMaximum, numbers with integral minimum/maximum, arrays with
 * items, minItems, maxItems; annotations (title, description, default,
 * examples, $schema, $id, $comment) are ignored. Anything else is refused
 * with INVALID_ARGUMENT naming the keyword and where it is
 * ("unsupported JSON Schema keyword 'oneOf' at #/properties/a").
 *
 * The grammar is sound, not complete: everything it generates validates
 * against the schema, but it generates a canonical subset (properties in
 * the schema's order, no additional properties unless the schema is a map,
 * bounded whitespace and digit counts, dates with days 01-28).
 *
 * Bounds (hostile schemas): nesting depth 64, 20000 schema nodes, 1000
 * enum values, a 2 MiB grammar. */
#ifndef VLM_TEXT_GRAMMAR_SCHEMA_H
#define VLM_TEXT_GRAMMAR_SCHEMA_H

#include <stddef.h>

#include "io/json.h"
#include "vlm.h"

#define VLM_SCHEMA_MAX_DEPTH 64
#define VLM_SCHEMA_MAX_NODES 20000
#define VLM_SCHEMA_MAX_ENUM 1000
#define VLM_SCHEMA_MAX_GRAMMAR_BYTES (2u << 20)

typedef struct vlm_schema_compiler vlm_schema_compiler;

vlm_status vlm_schema_compiler_create(vlm_schema_compiler **out_compiler);
void vlm_schema_compiler_release(vlm_schema_compiler *compiler);
/* Compiles `schema` (borrowed until finish) into rules; *out_rule (owned
 * by the compiler) names the rule that matches one value and its trailing
 * whitespace. */
vlm_status vlm_schema_compiler_add(vlm_schema_compiler *compiler, const vlm_json_value *schema,
                                   const char **out_rule);
/* Python literals from now on (True, False, None; strings without the
 * "\/" escape): the pythonic tool-call format. Call before any add. */
void vlm_schema_compiler_set_python(vlm_schema_compiler *compiler);
/* An object schema ("type": "object") as Python keyword arguments,
 * `a=1, b="x"` without brackets (its properties must be identifiers; no
 * properties: no arguments). Needs set_python. */
vlm_status vlm_schema_compiler_add_kwargs(vlm_schema_compiler *compiler, const vlm_json_value *schema,
                                          const char **out_rule);
/* The rule for any JSON value (json_object mode: an object). */
const char *vlm_schema_compiler_any_object(vlm_schema_compiler *compiler);
/* Appends `name ::= body` verbatim (a wrapper around compiled rules). */
void vlm_schema_compiler_add_rule(vlm_schema_compiler *compiler, const char *name, const char *body);
/* A GBNF string literal for `text` (quotes included), malloc'd. */
char *vlm_gbnf_literal(const char *text, size_t length);
/* The whole grammar with `root ::= root_body`; malloc'd text. */
vlm_status vlm_schema_compiler_finish(vlm_schema_compiler *compiler, const char *root_body, char **out_grammar);

/* One call for a response_format schema: root is one value, optional
 * leading whitespace. */
vlm_status vlm_json_schema_to_grammar(const vlm_json_value *schema, char **out_grammar);
vlm_status vlm_json_schema_text_to_grammar(const char *schema_json, size_t length, char **out_grammar);
/* Any JSON object (response_format json_object). */
vlm_status vlm_json_object_grammar(char **out_grammar);

#endif
