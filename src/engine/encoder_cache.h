/* The encoder cache: a media item's encoder output (its feature rows)
 * kept under the item's content digest (vlm_media_item_digest), so the
 * same image in a later request skips the vision tower and projector.
 *
 * The digest covers the processor's output tensors, grid and token count,
 * so on one engine (one model, one processor config, one encoder) equal
 * digests mean equal features. Entries are evicted least recently used
 * first; the budget (entry header + features) is never exceeded, and an
 * item larger than the whole budget is simply not kept. Not thread-safe:
 * the scheduler thread owns it. */
#ifndef VLM_ENGINE_ENCODER_CACHE_H
#define VLM_ENGINE_ENCODER_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "vlm.h"

typedef struct encoder_cache_stats {
  uint64_t bytes_used;      /* never above budget_bytes */
  uint64_t budget_bytes;
  int64_t entries;
  uint64_t hits, misses, evictions;
} encoder_cache_stats;

typedef struct encoder_cache encoder_cache;

vlm_status encoder_cache_create(uint64_t budget_bytes, encoder_cache **out_cache);
void encoder_cache_release(encoder_cache *cache);
void encoder_cache_get_stats(const encoder_cache *cache, encoder_cache_stats *out_stats);

/* Copies the cached features of `digest` ([rows, width] floats) to out and
 * returns true (a hit, now the most recently used); false: a miss. An
 * entry of another shape under the digest is a miss. */
bool encoder_cache_lookup(encoder_cache *cache, const uint8_t digest[32], int64_t rows, int64_t width, float *out);
/* Keeps a copy of the features under `digest`, evicting as the budget
 * needs (nothing when they alone exceed it, or when already kept). */
vlm_status encoder_cache_store(encoder_cache *cache, const uint8_t digest[32], int64_t rows, int64_t width,
                               const float *features);

#endif
