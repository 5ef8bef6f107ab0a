/* The prefix cache: KV of finished requests kept in blocks of a fixed
 * number of positions, found again by later requests whose expanded
 * sequence starts the same way, so those positions are copied into the
 * slot instead of prefilled.
 *
 * A block is keyed by its positions' keys and by its parent (the block
 * before it), so a block only matches after the same whole prefix: a
 * chain, as vLLM's hashed blocks. A position's key is what decides its KV
 * on one model: the token id, for a media row the item's content digest
 * and the row's index in the item (the feature the row takes), and the
 * RoPE positions on every axis (M-RoPE positions depend on the media
 * before them, not only on the index). Keys are compared exactly (the hash
 * only picks the bucket), so a match is never a guess.
 *
 * Correctness rests on the backend: the KV of a position must be the same
 * bits however the rows before it were prefilled (chunked, decoded), which
 * the cpu backend guarantees (SPEC 3.5) and backends say by offering
 * read_kv/write_kv (src/models/modules.h). A request's output is then the
 * same with and without the cache.
 *
 * Memory: every block's bytes (header, keys, KV) count against the budget,
 * which is never exceeded: a store evicts least-recently-used blocks
 * without children first, and stops storing when nothing more can go.
 * Not thread-safe: the scheduler thread owns it. */
#ifndef VLM_ENGINE_PREFIX_CACHE_H
#define VLM_ENGINE_PREFIX_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "vlm.h"

/* One position of a sequence, as the cache compares it. */
typedef struct prefix_key {
  int32_t token;
  int32_t media_row;        /* the row's index in its media item, or -1 for a text row */
  uint8_t media[32];        /* the item's content digest; zero for a text row */
  int64_t position[3];      /* RoPE position per axis (axis 0 only for 1-axis RoPE) */
  /* The request's KV variant (the decoder's kv_variant: adapter, RoPE
   * factor set), the same on every position of a request. */
  int64_t variant[3];
} prefix_key;

typedef struct prefix_cache_options {
  uint64_t budget_bytes;    /* > 0 */
  int64_t block_positions;  /* positions per block; 0: 16 */
  uint64_t position_bytes;  /* KV bytes of one position (the backend's kv_position_bytes) */
} prefix_cache_options;

typedef struct prefix_cache_stats {
  uint64_t bytes_used;      /* never above budget_bytes */
  uint64_t budget_bytes;
  int64_t blocks;
  int64_t block_capacity;   /* the most blocks the budget holds */
  uint64_t evictions;       /* blocks evicted */
} prefix_cache_stats;

typedef struct prefix_cache prefix_cache;
/* A cached block's KV, block_positions * position_bytes bytes. */
typedef struct prefix_block prefix_block;

vlm_status prefix_cache_create(const prefix_cache_options *options, prefix_cache **out_cache);
void prefix_cache_release(prefix_cache *cache);
int64_t prefix_cache_block_positions(const prefix_cache *cache);
void prefix_cache_get_stats(const prefix_cache *cache, prefix_cache_stats *out_stats);

/* The longest chain of cached blocks that keys[0, count) starts with,
 * covering at most max_positions positions: the number of blocks, their
 * KV in out_blocks[0..) (room for max_positions / block_positions; valid
 * until the next store). The blocks become the most recently used. */
int64_t prefix_cache_match(prefix_cache *cache, const prefix_key *keys, int64_t count, int64_t max_positions,
                           const prefix_block **out_blocks);
const void *prefix_block_kv(const prefix_block *block);

/* Reads the KV of positions [first, first + count) into out. */
typedef vlm_status (*prefix_cache_read_fn)(void *context, int64_t first, int64_t count, void *out);
/* Keeps the full blocks of keys[0, count): those already cached are
 * touched, the others read through `read` and inserted, evicting as the
 * budget needs; stops (VLM_OK) at the first block the budget cannot take.
 * *out_stored: blocks inserted. */
vlm_status prefix_cache_store(prefix_cache *cache, const prefix_key *keys, int64_t count, prefix_cache_read_fn read,
                              void *context, int64_t *out_stored);

#endif
