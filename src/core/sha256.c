#include "core/sha256.h"

#include <string.h>

static const uint32_t round_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

static uint32_t rotate_right(uint32_t value, int bits) {
  return (value >> bits) | (value << (32 - bits));
}

static void compress_block(uint32_t state[8], const uint8_t block[64]) {
  uint32_t schedule[64];
  for (int i = 0; i < 16; i++)
    schedule[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 |
                  (uint32_t)block[4 * i + 2] << 8 | (uint32_t)block[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = rotate_right(schedule[i - 15], 7) ^ rotate_right(schedule[i - 15], 18) ^
                  (schedule[i - 15] >> 3);
    uint32_t s1 = rotate_right(schedule[i - 2], 17) ^ rotate_right(schedule[i - 2], 19) ^
                  (schedule[i - 2] >> 10);
    schedule[i] = schedule[i - 16] + s0 + schedule[i - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int i = 0; i < 64; i++) {
    uint32_t sum1 = rotate_right(e, 6) ^ rotate_right(e, 11) ^ rotate_right(e, 25);
    uint32_t choose = (e & f) ^ (~e & g);
    uint32_t temp1 = h + sum1 + choose + round_constants[i] + schedule[i];
    uint32_t sum0 = rotate_right(a, 2) ^ rotate_right(a, 13) ^ rotate_right(a, 22);
    uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
    uint32_t temp2 = sum0 + majority;
    h = g;
    g = f;
    f = e;
    e = d + temp1;
    d = c;
    c = b;
    b = a;
    a = temp1 + temp2;
  }
  state[0] += a; state[1] += b; state[2] += c; state[3] += d;
  state[4] += e; state[5] += f; state[6] += g; state[7] += h;
}

void vlm_sha256_init(vlm_sha256 *hash) {
  static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                      0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(hash->state, initial, sizeof(initial));
  hash->total_bytes = 0;
  hash->block_used = 0;
}

void vlm_sha256_update(vlm_sha256 *hash, const void *data, size_t length) {
  const uint8_t *bytes = data;
  hash->total_bytes += length;
  while (length > 0) {
    size_t take = 64 - hash->block_used;
    if (take > length) take = length;
    memcpy(hash->block + hash->block_used, bytes, take);
    hash->block_used += take;
    bytes += take;
    length -= take;
    if (hash->block_used == 64) {
      compress_block(hash->state, hash->block);
      hash->block_used = 0;
    }
  }
}

void vlm_sha256_finish(vlm_sha256 *hash, uint8_t out_digest[32]) {
  uint64_t bit_length = hash->total_bytes * 8;
  static const uint8_t padding_start = 0x80;
  static const uint8_t zero = 0;
  vlm_sha256_update(hash, &padding_start, 1);
  while (hash->block_used != 56) vlm_sha256_update(hash, &zero, 1);
  uint8_t length_bytes[8];
  for (int i = 0; i < 8; i++) length_bytes[i] = (uint8_t)(bit_length >> (56 - 8 * i));
  vlm_sha256_update(hash, length_bytes, 8);
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 4; j++) out_digest[4 * i + j] = (uint8_t)(hash->state[i] >> (24 - 8 * j));
}

void vlm_sha256_finish_hex(vlm_sha256 *hash, char out_hex[65]) {
  uint8_t digest[32];
  vlm_sha256_finish(hash, digest);
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++) {
    out_hex[2 * i] = digits[digest[i] >> 4];
    out_hex[2 * i + 1] = digits[digest[i] & 15];
  }
  out_hex[64] = '\0';
}
