#include "backends/cpu/kv_cache.h"

#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"

struct vlm_kv_cache {
  vlm_kv_cache_shape shape;
  const vlm_allocator *allocator;
  vlm_kv_layout layout;
  /* Where layer l's keys ([0]) and values ([1]) start in a slot's buffer,
   * in floats (a reading layer: its source's); SIZE_MAX: none. */
  size_t offsets[VLM_KV_MAX_LAYERS][2];
  size_t floats_per_slot;
  float **slots;           /* per slot: the storing layers' {keys, values} */
  int64_t *lengths;
};

static int64_t width_of(const vlm_kv_layer *layer, int half) {
  return half ? layer->value_width : layer->key_width;
}

vlm_status vlm_kv_cache_create(const vlm_kv_cache_shape *shape, const vlm_allocator *allocator,
                               vlm_kv_cache **out_cache) {
  *out_cache = NULL;
  if (shape->slot_count <= 0 || shape->layer_count <= 0 || shape->capacity <= 0 ||
      (!shape->layout && (shape->kv_head_count <= 0 || shape->head_dim <= 0)))
    return VLM_ERROR(INVALID_ARGUMENT, "KV cache: every dimension must be positive");
  vlm_kv_layout *layout = vlm_allocate(NULL, sizeof(*layout), VLM_DEFAULT_ALIGNMENT);
  if (!layout) return VLM_ERROR(RESOURCE_EXHAUSTED, "KV cache: out of memory");
  vlm_status status = VLM_OK;
  if (shape->layout) {
    *layout = *shape->layout;
    status = vlm_kv_layout_check(layout);
    if (!status && layout->layer_count != shape->layer_count)
      status = VLM_ERROR(INVALID_ARGUMENT, "KV cache: a layout of %d layers for %d layers", layout->layer_count,
                         shape->layer_count);
  } else {
    status = vlm_kv_layout_standard(shape->layer_count, shape->kv_head_count, shape->head_dim, layout);
  }
  if (status) {
    vlm_release(NULL, layout);
    return status;
  }
  size_t per_slot = 0, floats = 0;
  bool fits = true;
  for (int32_t l = 0; fits && l < layout->layer_count; l++)
    for (int half = 0; fits && half < 2; half++) {
      size_t layer_floats;
      fits = vlm_size_multiply((size_t)shape->capacity, (size_t)width_of(&layout->layers[l], half), &layer_floats);
      if (fits && layout->layers[l].source < 0) fits = !__builtin_add_overflow(floats, layer_floats, &floats);
    }
  if (!fits || !vlm_size_multiply(floats, sizeof(float), &per_slot)) {
    vlm_release(NULL, layout);
    return VLM_ERROR(OUT_OF_RANGE, "KV cache: size overflows");
  }
  vlm_kv_cache *cache = vlm_allocate_zeroed(allocator, sizeof(*cache), VLM_DEFAULT_ALIGNMENT);
  if (!cache) {
    vlm_release(NULL, layout);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "KV cache: out of memory");
  }
  cache->shape = *shape;
  cache->shape.layout = NULL; /* the caller's; the cache keeps its copy */
  cache->allocator = allocator;
  cache->layout = *layout;
  vlm_release(NULL, layout);
  size_t offset = 0;
  for (int32_t l = 0; l < cache->layout.layer_count; l++) {
    const vlm_kv_layer *layer = &cache->layout.layers[l];
    for (int half = 0; half < 2; half++) {
      if (layer->source >= 0) {
        cache->offsets[l][half] = cache->offsets[layer->source][half];
      } else if (width_of(layer, half) == 0) {
        cache->offsets[l][half] = SIZE_MAX;
      } else {
        cache->offsets[l][half] = offset;
        offset += (size_t)shape->capacity * (size_t)width_of(layer, half);
      }
    }
  }
  cache->floats_per_slot = floats;
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

const vlm_kv_layout *vlm_kv_cache_layout(const vlm_kv_cache *cache) { return &cache->layout; }

float *vlm_kv_cache_keys(vlm_kv_cache *cache, int32_t slot, int32_t layer) {
  size_t offset = cache->offsets[layer][0];
  return offset == SIZE_MAX ? NULL : cache->slots[slot] + offset;
}

float *vlm_kv_cache_values(vlm_kv_cache *cache, int32_t slot, int32_t layer) {
  size_t offset = cache->offsets[layer][1];
  return offset == SIZE_MAX ? NULL : cache->slots[slot] + offset;
}

int64_t vlm_kv_cache_length(const vlm_kv_cache *cache, int32_t slot) {
  return cache->lengths[slot];
}

void vlm_kv_cache_set_length(vlm_kv_cache *cache, int32_t slot, int64_t length) {
  cache->lengths[slot] = length;
}

void vlm_kv_cache_clear(vlm_kv_cache *cache, int32_t slot) {
  size_t used = (size_t)cache->lengths[slot];
  for (int32_t l = 0; l < cache->layout.layer_count; l++) {
    const vlm_kv_layer *layer = &cache->layout.layers[l];
    if (layer->source >= 0) continue;
    for (int half = 0; half < 2; half++)
      if (cache->offsets[l][half] != SIZE_MAX)
        memset(cache->slots[slot] + cache->offsets[l][half], 0, used * (size_t)width_of(layer, half) * sizeof(float));
  }
  cache->lengths[slot] = 0;
}

uint64_t vlm_kv_cache_bytes(const vlm_kv_cache *cache) {
  return (uint64_t)cache->floats_per_slot * sizeof(float) * (uint64_t)cache->shape.slot_count;
}

uint64_t vlm_kv_cache_position_bytes(const vlm_kv_cache *cache) {
  return (uint64_t)vlm_kv_layout_token_values(&cache->layout) * sizeof(float);
}

/* Copies positions [first, first + count) of every storing layer between
 * the slot and `packed` (per layer, keys then values). */
static void copy_positions(const vlm_kv_cache *cache, int32_t slot, int64_t first, int64_t count, char *out,
                           const char *in) {
  for (int32_t l = 0; l < cache->layout.layer_count; l++) {
    const vlm_kv_layer *layer = &cache->layout.layers[l];
    if (layer->source >= 0) continue;
    for (int half = 0; half < 2; half++) {
      size_t width = (size_t)width_of(layer, half), bytes = (size_t)count * width * sizeof(float);
      if (!width) continue;
      float *at = cache->slots[slot] + cache->offsets[l][half] + (size_t)first * width;
      if (out) {
        memcpy(out, at, bytes);
        out += bytes;
      } else {
        memcpy(at, in, bytes);
        in += bytes;
      }
    }
  }
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
  copy_positions(cache, slot, first, count, out, NULL);
  return VLM_OK;
}

vlm_status vlm_kv_cache_write(vlm_kv_cache *cache, int32_t slot, int64_t first, int64_t count, const void *in) {
  VLM_RETURN_IF_ERROR(check_range(cache, slot, 0, 0, 0));
  if (first != cache->lengths[slot])
    return VLM_ERROR(INVALID_ARGUMENT, "KV cache: a write at position %lld of slot %d, whose length is %lld",
                     (long long)first, slot, (long long)cache->lengths[slot]);
  VLM_RETURN_IF_ERROR(check_range(cache, slot, first, count, cache->shape.capacity));
  copy_positions(cache, slot, first, count, NULL, in);
  cache->lengths[slot] = first + count;
  return VLM_OK;
}
