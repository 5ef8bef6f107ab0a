/* A strict JSON (RFC 8259) reader producing an arena-allocated tree.
 *
 * Why our own: checkpoint headers need exact 64-bit integers (offsets beyond
 * 2^53 must not be silently rounded as a double-only parser would), we want
 * hard limits on depth and size for hostile input, and errors that name the
 * line and column. The tree is read-only after parsing; every node lives in
 * the document's arena and dies with it.
 *
 * Objects keep their members in file order. Lookups return the *last*
 * member with a given key, as Python's json module does, so a config with a
 * repeated key means what it means to Transformers. Callers that must refuse
 * duplicates (safetensors headers) check with vlm_json_object_has_duplicates. */
#ifndef VLM_IO_JSON_H
#define VLM_IO_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"
#include "vlm.h"

typedef enum vlm_json_type {
  VLM_JSON_NULL,
  VLM_JSON_BOOL,
  VLM_JSON_NUMBER,
  VLM_JSON_STRING,
  VLM_JSON_ARRAY,
  VLM_JSON_OBJECT,
} vlm_json_type;

typedef struct vlm_json_value vlm_json_value;
typedef struct vlm_json_member vlm_json_member;

struct vlm_json_value {
  vlm_json_type type;
  union {
    bool boolean;
    struct {
      double value;
      int64_t integer;   /* valid when is_integer */
      bool is_integer;   /* written without fraction/exponent and fits int64 */
    } number;
    struct {
      const char *chars; /* UTF-8, NUL-terminated; may contain NUL (\u0000) */
      size_t length;
    } string;
    struct {
      vlm_json_value *items;
      size_t count;
    } array;
    struct {
      vlm_json_member *members;
      size_t count;
    } object;
  } as;
};

struct vlm_json_member {
  const char *key;
  size_t key_length;
  vlm_json_value value;
};

typedef struct vlm_json_limits {
  size_t max_depth;       /* nesting of arrays/objects; default 128 */
  size_t max_input_bytes; /* default: unlimited (SIZE_MAX) */
} vlm_json_limits;

typedef struct vlm_json_document {
  vlm_arena arena;
  vlm_json_value *root;
} vlm_json_document;

/* Parses `length` bytes of UTF-8 JSON. `source_name` (e.g. a file path)
 * prefixes error messages. On error the document is left empty. */
vlm_status vlm_json_parse(const char *text, size_t length,
                          const vlm_json_limits *limits,
                          const vlm_allocator *allocator,
                          const char *source_name,
                          vlm_json_document *out_document);
/* Reads a whole file (refusing files over `max_bytes`) and parses it. */
vlm_status vlm_json_parse_file(const char *path, size_t max_bytes,
                               const vlm_allocator *allocator,
                               vlm_json_document *out_document);
void vlm_json_document_release(vlm_json_document *document);

/* Lookup helpers; all accept NULL and return NULL/false for a type mismatch. */
const vlm_json_value *vlm_json_object_get(const vlm_json_value *object,
                                          const char *key);
bool vlm_json_object_has_duplicates(const vlm_json_value *object,
                                    const char **out_duplicate_key);
const vlm_json_value *vlm_json_array_get(const vlm_json_value *array,
                                         size_t index);
bool vlm_json_is_string(const vlm_json_value *value);
bool vlm_json_string_equals(const vlm_json_value *value, const char *text);
const char *vlm_json_type_name(vlm_json_type type);

/* Typed getters: return true and write *out when the value is present and of
 * the right kind. An integer getter accepts only integral numbers. */
bool vlm_json_get_int(const vlm_json_value *value, int64_t *out);
bool vlm_json_get_double(const vlm_json_value *value, double *out);
bool vlm_json_get_bool(const vlm_json_value *value, bool *out);
const char *vlm_json_get_string(const vlm_json_value *value); /* or NULL */

/* Growable output buffer with JSON writing helpers, for reports. */
typedef struct vlm_string_builder {
  char *data;
  size_t length;
  size_t capacity;
  bool failed; /* set once an allocation failed; further appends are no-ops */
} vlm_string_builder;

void vlm_sb_append(vlm_string_builder *builder, const char *text, size_t length);
/* Appends a string literal (length known at compile time). */
#define vlm_sb_append_literal(builder, literal) \
  vlm_sb_append((builder), "" literal, sizeof(literal) - 1)
void vlm_sb_appendf(vlm_string_builder *builder, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
void vlm_sb_append_json_string(vlm_string_builder *builder, const char *text,
                               size_t length);
/* Serialises a parsed value back to compact JSON (used by tests and reports). */
void vlm_sb_append_json_value(vlm_string_builder *builder,
                              const vlm_json_value *value);
/* Hands over the buffer (NUL-terminated) or NULL if an allocation failed. */
char *vlm_sb_finish(vlm_string_builder *builder);
void vlm_sb_release(vlm_string_builder *builder);

#endif
