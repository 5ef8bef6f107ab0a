#include "backends/cpu/kv_cache.h"

#include <string.h>

#include "core/alloc.h"
#include "core/status.h"

struct vlm_kv_cache {
  vlm_kv_cache_shape shape;
  const vlm_allocator *allocator;
  size_t floats_per_layer; /* capacity * kv_heads * head_dim */
  float **slots;           /* per slot: layers x {keys, values} */
  int64_t *lengths;
};

vlm_status vlm_kv_cache_create(const vlm_kv_cache_shape *shape, const vlm_allocator *allocator,
                               vlm_kv_cache **out_cache) {
  *out_cache = NULL;
  if (shape->slot_count <= 0 || shape->layer_count <= 0 || shape->kv_head_count <= 0 ||
      shape->head_dim <= 0 || shape->capacity <= 0)
    return VLM_ERROR(INVALID_ARGUMENT, "KV cache: every dimension must be positive");
  size_t per_layer, per_slot;
  if (!vlm_size_multiply((size_t)shape->capacity,
                         (size_t)shape->kv_head_count * (size_t)shape->head_dim, &per_layer) ||
      !vlm_size_multiply(per_layer, 2 * (size_t)shape->layer_count * sizeof(float), &per_slot))
    return VLM_ERROR(OUT_OF_RANGE, "KV cache: size overflows");
  vlm_kv_cache *cache = vlm_allocate_zeroed(allocator, sizeof(*cache), VLM_DEFAULT_ALIGNMENT);
  if (!cache) return VLM_ERROR(RESOURCE_EXHAUSTED, "KV cache: out of memory");
  cache->shape = *shape;
  cache->allocator = allocator;
  cache->floats_per_layer = per_layer;
  cache->slots = vlm_allocate_zeroed(allocator, (size_t)shape->slot_count * sizeof(float *),
                                     VLM_DEFAULT_ALIGNMENT);
  cache->lengths = vlm_allocate_zeroed(allocator, (size_t)shape->slot_count * sizeof(int64_t),
                                       VLM_DEFAULT_ALIGNMENT);
  bool ok = cache->slots && cache->lengths;
  for (int32_t slot = 0; ok && slot < shape->slot_count; slot++) {
    /* Not zeroed: positions at or past a slot's length are never read, and
     * leaving the pages untouched keeps an idle cache out of resident
     * memory. */
    cache->slots[slot] = vlm_allocate(allocator, per_slot, VLM_DEFAULT_ALIGNMENT);
    ok = cache->slots[slot] != NULL;
  }
  if (!ok) {
    vlm_kv_cache_release(cache);
    return VLM_ERROR(RESOURCE_EXHAUSTED,
                     "KV cache: out of memory for %d slots of %zu bytes (capacity %lld)",
                     shape->slot_count, per_slot, (long long)shape->capacity);
  }
  *out_cache = cache;
  return VLM_OK;
}

void vlm_kv_cache_release(vlm_kv_cache *cache) {
  if (!cache) return;
  for (int32_t slot = 0; cache->slots && slot < cache->shape.slot_count; slot++)
    vlm_release(cache->allocator, cache->slots[slot]);
  vlm_release(cache->allocator, cache->slots);
  vlm_release(cache->allocator, cache->lengths);
  vlm_release(cache->allocator, cache);
}

const vlm_kv_cache_shape *vlm_kv_cache_get_shape(const vlm_kv_cache *cache) {
  return &cache->shape;
}

float *vlm_kv_cache_keys(vlm_kv_cache *cache, int32_t slot, int32_t layer) {
  return cache->slots[slot] + (size_t)(2 * layer) * cache->floats_per_layer;
}

float *vlm_kv_cache_values(vlm_kv_cache *cache, int32_t slot, int32_t layer) {
  return cache->slots[slot] + (size_t)(2 * layer + 1) * cache->floats_per_layer;
}

int64_t vlm_kv_cache_length(const vlm_kv_cache *cache, int32_t slot) {
  return cache->lengths[slot];
}

void vlm_kv_cache_set_length(vlm_kv_cache *cache, int32_t slot, int64_t length) {
  cache->lengths[slot] = length;
}

void vlm_kv_cache_clear(vlm_kv_cache *cache, int32_t slot) {
  size_t used = (size_t)cache->lengths[slot] * (size_t)cache->shape.kv_head_count *
                (size_t)cache->shape.head_dim * sizeof(float);
  for (int32_t layer = 0; layer < cache->shape.layer_count; layer++) {
    memset(vlm_kv_cache_keys(cache, slot, layer), 0, used);
    memset(vlm_kv_cache_values(cache, slot, layer), 0, used);
  }
  cache->lengths[slot] = 0;
}

uint64_t vlm_kv_cache_bytes(const vlm_kv_cache *cache) {
  return (uint64_t)cache->floats_per_layer * 2 * (uint64_t)cache->shape.layer_count *
         sizeof(float) * (uint64_t)cache->shape.slot_count;
}

uint64_t vlm_kv_cache_position_bytes(const vlm_kv_cache *cache) {
  return (uint64_t)cache->shape.kv_head_count * (uint64_t)cache->shape.head_dim * 2 *
         (uint64_t)cache->shape.layer_count * sizeof(float);
}

static vlm_status check_range(const vlm_kv_cache *cache, int32_t slot, int64_t first, int64_t count,
                              int64_t end) {
  if (slot < 0 || slot >= cache->shape.slot_count)
    return VLM_ERROR(INVALID_ARGUMENT, "KV cache: slot %d is outside 0..%d", slot, cache->shape.slot_count - 1);
  if (first < 0 || count < 0 || first + count > end)
    return VLM_ERROR(OUT_OF_RANGE, "KV cache: positions [%lld, %lld) of slot %d are outside [0, %lld)",
                     (long long)first, (long long)(first + count), slot, (long long)end);
  return VLM_OK;
}

vlm_status vlm_kv_cache_read(const vlm_kv_cache *cache, int32_t slot, int64_t first, int64_t count, void *out) {
  VLM_RETURN_IF_ERROR(check_range(cache, slot, 0, 0, 0));
  VLM_RETURN_IF_ERROR(check_range(cache, slot, first, count, cache->lengths[slot]));
  size_t row = (size_t)cache->shape.kv_head_count * (size_t)cache->shape.head_dim;
  size_t bytes = (size_t)count * row * sizeof(float);
  char *to = out;
  for (int32_t layer = 0; layer < cache->shape.layer_count; layer++)
    for (int half = 0; half < 2; half++, to += bytes)
      memcpy(to, cache->slots[slot] + (size_t)(2 * layer + half) * cache->floats_per_layer + (size_t)first * row,
             bytes);
  return VLM_OK;
}

vlm_status vlm_kv_cache_write(vlm_kv_cache *cache, int32_t slot, int64_t first, int64_t count, const void *in) {
  VLM_RETURN_IF_ERROR(check_range(cache, slot, 0, 0, 0));
  if (first != cache->lengths[slot])
    return VLM_ERROR(INVALID_ARGUMENT, "KV cache: a write at position %lld of slot %d, whose length is %lld",
                     (long long)first, slot, (long long)cache->lengths[slot]);
  VLM_RETURN_IF_ERROR(check_range(cache, slot, first, count, cache->shape.capacity));
  size_t row = (size_t)cache->shape.kv_head_count * (size_t)cache->shape.head_dim;
  size_t bytes = (size_t)count * row * sizeof(float);
  const char *from = in;
  for (int32_t layer = 0; layer < cache->shape.layer_count; layer++)
    for (int half = 0; half < 2; half++, from += bytes)
      memcpy(cache->slots[slot] + (size_t)(2 * layer + half) * cache->floats_per_layer + (size_t)first * row, from,
             bytes);
  cache->lengths[slot] = first + count;
  return VLM_OK;
}
