/* SHA-256 (FIPS 180-4), for the checkpoint digests the oracle harness writes
 * with Python's hashlib (equal digests prove equal tensor bytes without
 * checking in a second copy of every weight) and for the media content keys
 * of the engine's prefix and encoder caches (a collision there would give a
 * request another image's features, so the key is a cryptographic digest). */
#ifndef VLM_CORE_SHA256_H
#define VLM_CORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct vlm_sha256 {
  uint32_t state[8];
  uint64_t total_bytes;
  uint8_t block[64];
  size_t block_used;
} vlm_sha256;

void vlm_sha256_init(vlm_sha256 *hash);
void vlm_sha256_update(vlm_sha256 *hash, const void *data, size_t length);
/* The 32-byte digest (the hash is spent). */
void vlm_sha256_finish(vlm_sha256 *hash, uint8_t out_digest[32]);
/* Writes the digest as 64 lower-case hex digits and a NUL. */
void vlm_sha256_finish_hex(vlm_sha256 *hash, char out_hex[65]);

#endif
