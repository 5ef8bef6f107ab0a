/* The compatibility key of a compiled xla artifact (SPEC 3.3).
 *
 * A key is an ordered list of name=value text fields: what the emitter
 * fixed (contract and emitter versions, architecture config hash, weight
 * signature, dtype, capacity, slots, prefill chunk, position and mask modes,
 * KV layout, encoder buckets, side inputs) and what the compiler added
 * (compiler version, target, target flags, CPU features). The artifact's
 * sidecar (key.json) stores the whole key; the cache directory is named by
 * its hash. Before anything executes, the loader compares the key it
 * expects with the stored one field by field and refuses the artifact,
 * naming the first field that differs. */
#ifndef VLM_BACKENDS_XLA_XLA_KEY_H
#define VLM_BACKENDS_XLA_XLA_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "vlm.h"

/* Bumped whenever the emitted modules change in a way an old artifact would
 * not match (numerics, signatures, layouts). */
#define VLM_XLA_EMITTER_VERSION 5 /* 2: parameters by stored name; 3: writes after reads, decode windows, last-row prefill logits; 4: features merged in embeddings_prefill, M-RoPE, decode RoPE positions apart from cache indices, key from the graphs; 5: weights laid out by the runtime (scope vlm.layout), linear weights transposed [in, out] */
#define VLM_XLA_KEY_MAX_FIELDS 24
#define VLM_XLA_KEY_NAME_LENGTH 32
#define VLM_XLA_KEY_VALUE_LENGTH 512

typedef struct vlm_xla_key_field {
  char name[VLM_XLA_KEY_NAME_LENGTH];
  char value[VLM_XLA_KEY_VALUE_LENGTH];
} vlm_xla_key_field;

typedef struct vlm_xla_key {
  int field_count;
  vlm_xla_key_field fields[VLM_XLA_KEY_MAX_FIELDS];
} vlm_xla_key;

/* Sets (adds or replaces) a field; values longer than the limit are an
 * error, never truncated silently. */
vlm_status vlm_xla_key_set(vlm_xla_key *key, const char *name, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* The field's value, or NULL. */
const char *vlm_xla_key_get(const vlm_xla_key *key, const char *name);
/* FNV-1a 64 over the fields sorted by name, so the hash does not depend on
 * insertion order. */
uint64_t vlm_xla_key_hash(const vlm_xla_key *key);
/* The hash as 16 lower-case hex digits (out: 17 bytes). */
void vlm_xla_key_hash_hex(const vlm_xla_key *key, char out[17]);

/* OK when every field of `expected` is in `actual` with the same value and
 * `actual` has no other fields; otherwise FAILED_PRECONDITION naming the
 * first difference, prefixed by `what` (e.g. the artifact path). */
vlm_status vlm_xla_key_check(const vlm_xla_key *expected, const vlm_xla_key *actual,
                             const char *what);

/* Sidecar JSON: {"format": "vlm-xla-artifact/1", "key_hash": "...",
 * "artifact": "<file name>", "key": {name: value, ...}}. */
vlm_status vlm_xla_key_write_json(const vlm_xla_key *key, const char *artifact_name,
                                  const char *path);
vlm_status vlm_xla_key_read_json(const char *path, vlm_xla_key *out_key);

uint64_t vlm_fnv1a64(const void *data, size_t length, uint64_t seed);
#define VLM_FNV1A64_SEED 0xcbf29ce484222325ULL

#endif
