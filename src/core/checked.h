/* Overflow-checked arithmetic for every size or count derived from input.
 *
 * A request field (max_tokens), a header (image dimensions, tensor shapes)
 * or a config value is an attacker's number: `a + b` or `a * b` on it may
 * wrap, and a wrapped size admits a request or allocates a buffer far
 * smaller than what is then written. These helpers return false instead of
 * wrapping (the result is then unspecified); callers refuse the input.
 * They are the one place for this: alloc.h re-exports the size_t ones. */
#ifndef VLM_CORE_CHECKED_H
#define VLM_CORE_CHECKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline bool vlm_size_add(size_t a, size_t b, size_t *out) {
  return !__builtin_add_overflow(a, b, out);
}
static inline bool vlm_size_multiply(size_t a, size_t b, size_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}
/* a * b * c */
static inline bool vlm_size_multiply3(size_t a, size_t b, size_t c, size_t *out) {
  size_t partial;
  return vlm_size_multiply(a, b, &partial) && vlm_size_multiply(partial, c, out);
}

static inline bool vlm_int64_add(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_add_overflow(a, b, out);
}
static inline bool vlm_int64_multiply(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}

/* A signed count as a size_t: false when negative (or, on a 32-bit size_t,
 * too large). */
static inline bool vlm_size_from_int64(int64_t value, size_t *out) {
  if (value < 0 || (uint64_t)value > (uint64_t)SIZE_MAX) return false;
  *out = (size_t)value;
  return true;
}

/* count elements of element_size bytes: the byte size of an array whose
 * length came from input. False when count is negative or the product
 * overflows. */
static inline bool vlm_array_bytes(int64_t count, size_t element_size, size_t *out) {
  size_t elements;
  return vlm_size_from_int64(count, &elements) && vlm_size_multiply(elements, element_size, out);
}

/* rows x columns elements of element_size bytes (e.g. [tokens, hidden]
 * floats). */
static inline bool vlm_matrix_bytes(int64_t rows, int64_t columns, size_t element_size, size_t *out) {
  size_t r, c;
  return vlm_size_from_int64(rows, &r) && vlm_size_from_int64(columns, &c) &&
         vlm_size_multiply3(r, c, element_size, out);
}

#endif
