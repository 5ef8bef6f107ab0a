/* See prefix_cache.h. */
#include "engine/prefix_cache.h"

#include <stdlib.h>
#include <string.h>

#include "core/status.h"

#define DEFAULT_BLOCK_POSITIONS 16
#define MAX_BUCKETS ((size_t)1 << 22)

struct prefix_block {
  uint64_t hash;                  /* of the parent's hash and the keys */
  prefix_block *parent;           /* NULL: the first block of a sequence */
  prefix_block *bucket_next;
  prefix_block *newer, *older;    /* the LRU list */
  int32_t children;               /* cached blocks whose parent this is */
  bool pinned;                    /* on the chain a store is extending */
  prefix_key *keys;               /* [block_positions] */
  void *kv;                       /* [block_positions * position_bytes] */
};

struct prefix_cache {
  prefix_cache_options options;
  uint64_t block_bytes;           /* header + keys + KV of one block */
  prefix_block **buckets;
  size_t bucket_mask;
  prefix_block *newest, *oldest;
  prefix_cache_stats stats;
};

vlm_status prefix_cache_create(const prefix_cache_options *options, prefix_cache **out_cache) {
  *out_cache = NULL;
  if (!options->budget_bytes || !options->position_bytes || options->block_positions < 0)
    return VLM_ERROR(INVALID_ARGUMENT, "prefix cache: the budget and a position's KV bytes must be positive");
  prefix_cache *cache = calloc(1, sizeof(*cache));
  if (!cache) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  cache->options = *options;
  if (!cache->options.block_positions) cache->options.block_positions = DEFAULT_BLOCK_POSITIONS;
  uint64_t positions = (uint64_t)cache->options.block_positions;
  cache->block_bytes = sizeof(prefix_block) + positions * sizeof(prefix_key) + positions * options->position_bytes;
  /* As many buckets as blocks can fit (the budget bounds the count), so
   * chains stay short without rehashing. */
  uint64_t most_blocks = options->budget_bytes / cache->block_bytes;
  size_t buckets = 16;
  while (buckets < most_blocks && buckets < MAX_BUCKETS) buckets *= 2;
  cache->buckets = calloc(buckets, sizeof(*cache->buckets));
  if (!cache->buckets) {
    free(cache);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  cache->bucket_mask = buckets - 1;
  cache->stats.budget_bytes = options->budget_bytes;
  cache->stats.block_capacity = (int64_t)most_blocks;
  *out_cache = cache;
  return VLM_OK;
}

void prefix_cache_release(prefix_cache *cache) {
  if (!cache) return;
  for (prefix_block *block = cache->newest, *next; block; block = next) {
    next = block->older;
    free(block);
  }
  free(cache->buckets);
  free(cache);
}

int64_t prefix_cache_block_positions(const prefix_cache *cache) { return cache->options.block_positions; }
void prefix_cache_get_stats(const prefix_cache *cache, prefix_cache_stats *out_stats) { *out_stats = cache->stats; }
const void *prefix_block_kv(const prefix_block *block) { return block->kv; }

/* FNV-1a over the parent's hash and the keys' bytes (the keys are
 * compared in full on a match; this only spreads the buckets). */
static uint64_t block_hash(uint64_t parent, const prefix_key *keys, int64_t count) {
  uint64_t hash = 1469598103934665603ULL ^ parent;
  const unsigned char *bytes = (const unsigned char *)keys;
  for (size_t i = 0; i < (size_t)count * sizeof(*keys); i++) hash = (hash ^ bytes[i]) * 1099511628211ULL;
  return hash;
}

static prefix_block *find_block(const prefix_cache *cache, const prefix_block *parent, uint64_t hash,
                                const prefix_key *keys) {
  size_t key_bytes = (size_t)cache->options.block_positions * sizeof(*keys);
  for (prefix_block *block = cache->buckets[hash & cache->bucket_mask]; block; block = block->bucket_next)
    if (block->hash == hash && block->parent == parent && memcmp(block->keys, keys, key_bytes) == 0) return block;
  return NULL;
}

static void lru_unlink(prefix_cache *cache, prefix_block *block) {
  if (block->newer) block->newer->older = block->older;
  else cache->newest = block->older;
  if (block->older) block->older->newer = block->newer;
  else cache->oldest = block->newer;
  block->newer = block->older = NULL;
}

static void lru_push_newest(prefix_cache *cache, prefix_block *block) {
  block->older = cache->newest;
  block->newer = NULL;
  if (cache->newest) cache->newest->newer = block;
  cache->newest = block;
  if (!cache->oldest) cache->oldest = block;
}

/* Most recently used. Touching a chain from its first block to its last
 * leaves every parent older than its newest child, so the oldest blocks are
 * leaves and eviction never strands a child. */
static void touch(prefix_cache *cache, prefix_block *block) {
  lru_unlink(cache, block);
  lru_push_newest(cache, block);
}

int64_t prefix_cache_match(prefix_cache *cache, const prefix_key *keys, int64_t count, int64_t max_positions,
                           const prefix_block **out_blocks) {
  int64_t size = cache->options.block_positions;
  if (max_positions > count) max_positions = count;
  int64_t matched = 0;
  prefix_block *parent = NULL;
  for (int64_t first = 0; first + size <= max_positions; first += size) {
    uint64_t hash = block_hash(parent ? parent->hash : 0, keys + first, size);
    prefix_block *block = find_block(cache, parent, hash, keys + first);
    if (!block) break;
    touch(cache, block);
    out_blocks[matched++] = block;
    parent = block;
  }
  return matched;
}

/* The oldest block no other block continues and no store is extending. */
static prefix_block *eviction_candidate(const prefix_cache *cache) {
  for (prefix_block *block = cache->oldest; block; block = block->newer)
    if (!block->children && !block->pinned) return block;
  return NULL;
}

static void evict(prefix_cache *cache, prefix_block *block) {
  prefix_block **link = &cache->buckets[block->hash & cache->bucket_mask];
  while (*link != block) link = &(*link)->bucket_next;
  *link = block->bucket_next;
  lru_unlink(cache, block);
  if (block->parent) block->parent->children--;
  cache->stats.bytes_used -= cache->block_bytes;
  cache->stats.blocks--;
  cache->stats.evictions++;
  free(block);
}

/* Room for one more block within the budget, evicting; false when the
 * blocks left are all needed. */
static bool make_room(prefix_cache *cache) {
  while (cache->stats.bytes_used + cache->block_bytes > cache->stats.budget_bytes) {
    prefix_block *victim = eviction_candidate(cache);
    if (!victim) return false;
    evict(cache, victim);
  }
  return true;
}

static vlm_status insert_block(prefix_cache *cache, prefix_block *parent, uint64_t hash, const prefix_key *keys,
                               int64_t first, prefix_cache_read_fn read, void *context, prefix_block **out_block) {
  *out_block = NULL;
  int64_t size = cache->options.block_positions;
  prefix_block *block = malloc((size_t)cache->block_bytes);
  if (!block) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a prefix cache block");
  memset(block, 0, sizeof(*block));
  block->keys = (prefix_key *)(block + 1);
  block->kv = block->keys + size;
  memcpy(block->keys, keys, (size_t)size * sizeof(*keys));
  vlm_status status = read(context, first, size, block->kv);
  if (status) {
    free(block);
    return status;
  }
  block->hash = hash;
  block->parent = parent;
  if (parent) parent->children++;
  size_t bucket = hash & cache->bucket_mask;
  block->bucket_next = cache->buckets[bucket];
  cache->buckets[bucket] = block;
  lru_push_newest(cache, block);
  cache->stats.bytes_used += cache->block_bytes;
  cache->stats.blocks++;
  *out_block = block;
  return VLM_OK;
}

vlm_status prefix_cache_store(prefix_cache *cache, const prefix_key *keys, int64_t count, prefix_cache_read_fn read,
                              void *context, int64_t *out_stored) {
  *out_stored = 0;
  int64_t size = cache->options.block_positions;
  prefix_block *parent = NULL;
  vlm_status status = VLM_OK;
  for (int64_t first = 0; first + size <= count; first += size) {
    uint64_t hash = block_hash(parent ? parent->hash : 0, keys + first, size);
    prefix_block *block = find_block(cache, parent, hash, keys + first);
    if (block) {
      touch(cache, block);
    } else {
      bool room = make_room(cache);
      if (!room) break;
      status = insert_block(cache, parent, hash, keys + first, first, read, context, &block);
      if (status) break;
      ++*out_stored;
    }
    block->pinned = true; /* the chain so far must stay while it grows */
    parent = block;
  }
  for (prefix_block *block = parent; block; block = block->parent) block->pinned = false;
  return status;
}
