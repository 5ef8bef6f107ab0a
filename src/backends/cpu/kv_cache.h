/* The key/value cache: per slot, per layer, contiguous f32 arrays
 * [capacity, key_width] for keys and [capacity, value_width] for values, as
 * the decoder's KV layout says (models/kv_layout.h: the standard layout is
 * kv_heads * head_dim for both on every layer; a layer that reads another's
 * KV has no arrays of its own, and its keys/values are that layer's; a
 * latent layer has keys only).
 *
 * Why contiguous per slot rather than paged: capacity per slot is a fixed,
 * compiled parameter (the OpenXLA backend needs static shapes anyway), so a
 * slot's cache is one allocation made once; attention then streams keys
 * with unit stride and no block-table indirection, and clearing a slot is
 * setting its length to 0. Paging would save memory only for many slots
 * with very uneven lengths, which the continuous-batching scheduler can
 * revisit when it lands. */
#ifndef VLM_ENGINE_KV_CACHE_H
#define VLM_ENGINE_KV_CACHE_H

#include <stdint.h>

#include "models/kv_layout.h"
#include "vlm.h"

typedef struct vlm_kv_cache_shape {
  int32_t slot_count;
  int32_t layer_count;
  int32_t kv_head_count;
  int32_t head_dim;
  int64_t capacity; /* positions per slot */
  /* Per-layer widths (copied at create); NULL: the standard layout of
   * layer_count layers of kv_head_count * head_dim, which must then be
   * positive. */
  const vlm_kv_layout *layout;
} vlm_kv_cache_shape;

typedef struct vlm_kv_cache vlm_kv_cache;

vlm_status vlm_kv_cache_create(const vlm_kv_cache_shape *shape, const vlm_allocator *allocator,
                               vlm_kv_cache **out_cache);
void vlm_kv_cache_release(vlm_kv_cache *cache);
const vlm_kv_cache_shape *vlm_kv_cache_get_shape(const vlm_kv_cache *cache);
/* The layout the cache holds. */
const vlm_kv_layout *vlm_kv_cache_layout(const vlm_kv_cache *cache);
/* [capacity, key_width] and [capacity, value_width] arrays of one slot and
 * layer (a reading layer's: its source's; a latent layer's values: NULL). */
float *vlm_kv_cache_keys(vlm_kv_cache *cache, int32_t slot, int32_t layer);
float *vlm_kv_cache_values(vlm_kv_cache *cache, int32_t slot, int32_t layer);
/* Positions [0, length) of the slot hold valid K/V. */
int64_t vlm_kv_cache_length(const vlm_kv_cache *cache, int32_t slot);
void vlm_kv_cache_set_length(vlm_kv_cache *cache, int32_t slot, int64_t length);
/* Forgets the slot's contents (length 0 and the used bytes zeroed, so no state
 * of a finished request can leak into the next one). */
void vlm_kv_cache_clear(vlm_kv_cache *cache, int32_t slot);
/* Bytes one position's keys and values take over every layer. */
uint64_t vlm_kv_cache_position_bytes(const vlm_kv_cache *cache);
/* Copies positions [first, first + count) of the slot out to `out`
 * (layout: per layer that stores its own, keys [count, key_width] then
 * values [count, value_width]),
 * or in from `in` at the slot's length (first must equal it; the length
 * grows by count). For the engine's prefix cache. */
vlm_status vlm_kv_cache_read(const vlm_kv_cache *cache, int32_t slot, int64_t first, int64_t count, void *out);
vlm_status vlm_kv_cache_write(vlm_kv_cache *cache, int32_t slot, int64_t first, int64_t count, const void *in);
/* Bytes allocated in total. */
uint64_t vlm_kv_cache_bytes(const vlm_kv_cache *cache);

#endif
