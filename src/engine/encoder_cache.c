/* See encoder_cache.h. A list in recency order: a request holds a few
 * items and the cache a few hundred at most, so a linear lookup of 32-byte
 * digests costs nothing next to one encode. */
#include "engine/encoder_cache.h"

#include <stdlib.h>
#include <string.h>

#include "core/status.h"

typedef struct encoder_entry {
  struct encoder_entry *newer, *older;
  uint8_t digest[32];
  int64_t rows, width;
  uint64_t bytes;            /* header + features */
  float features[];
} encoder_entry;

struct encoder_cache {
  encoder_entry *newest, *oldest;
  encoder_cache_stats stats;
};

vlm_status encoder_cache_create(uint64_t budget_bytes, encoder_cache **out_cache) {
  *out_cache = NULL;
  if (!budget_bytes) return VLM_ERROR(INVALID_ARGUMENT, "encoder cache: the budget must be positive");
  encoder_cache *cache = calloc(1, sizeof(*cache));
  if (!cache) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  cache->stats.budget_bytes = budget_bytes;
  *out_cache = cache;
  return VLM_OK;
}

void encoder_cache_release(encoder_cache *cache) {
  if (!cache) return;
  for (encoder_entry *entry = cache->newest, *next; entry; entry = next) {
    next = entry->older;
    free(entry);
  }
  free(cache);
}

void encoder_cache_get_stats(const encoder_cache *cache, encoder_cache_stats *out_stats) {
  *out_stats = cache->stats;
}

static void unlink_entry(encoder_cache *cache, encoder_entry *entry) {
  if (entry->newer) entry->newer->older = entry->older;
  else cache->newest = entry->older;
  if (entry->older) entry->older->newer = entry->newer;
  else cache->oldest = entry->newer;
  entry->newer = entry->older = NULL;
}

static void push_newest(encoder_cache *cache, encoder_entry *entry) {
  entry->older = cache->newest;
  if (cache->newest) cache->newest->newer = entry;
  cache->newest = entry;
  if (!cache->oldest) cache->oldest = entry;
}

static encoder_entry *find(const encoder_cache *cache, const uint8_t digest[32]) {
  for (encoder_entry *entry = cache->newest; entry; entry = entry->older)
    if (memcmp(entry->digest, digest, 32) == 0) return entry;
  return NULL;
}

bool encoder_cache_lookup(encoder_cache *cache, const uint8_t digest[32], int64_t rows, int64_t width, float *out) {
  encoder_entry *entry = find(cache, digest);
  if (!entry || entry->rows != rows || entry->width != width) {
    cache->stats.misses++;
    return false;
  }
  unlink_entry(cache, entry);
  push_newest(cache, entry);
  memcpy(out, entry->features, (size_t)(rows * width) * sizeof(float));
  cache->stats.hits++;
  return true;
}

vlm_status encoder_cache_store(encoder_cache *cache, const uint8_t digest[32], int64_t rows, int64_t width,
                               const float *features) {
  if (rows <= 0 || width <= 0 || find(cache, digest)) return VLM_OK;
  uint64_t bytes = sizeof(encoder_entry) + (uint64_t)rows * (uint64_t)width * sizeof(float);
  if (bytes > cache->stats.budget_bytes) return VLM_OK;
  while (cache->stats.bytes_used + bytes > cache->stats.budget_bytes) {
    encoder_entry *victim = cache->oldest;
    unlink_entry(cache, victim);
    cache->stats.bytes_used -= victim->bytes;
    cache->stats.entries--;
    cache->stats.evictions++;
    free(victim);
  }
  encoder_entry *entry = malloc((size_t)bytes);
  if (!entry) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for the encoder cache");
  memset(entry, 0, sizeof(*entry));
  memcpy(entry->digest, digest, 32);
  entry->rows = rows;
  entry->width = width;
  entry->bytes = bytes;
  memcpy(entry->features, features, (size_t)(rows * width) * sizeof(float));
  push_newest(cache, entry);
  cache->stats.bytes_used += bytes;
  cache->stats.entries++;
  return VLM_OK;
}
