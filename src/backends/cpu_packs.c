#include "backends/cpu_packs.h"

#include <pthread.h>
#include <stdlib.h>

#include "backends/cpu_hub_quant.h"
#include "core/status.h"

typedef struct pack_entry {
  const void *weight, *bias;
  cpu_packed_linear *packed;
} pack_entry;

struct vlm_cpu_packs {
  pthread_mutex_t lock;
  pack_entry *entries; /* open addressing on the weight address; NULL weight = empty */
  int64_t capacity, count;
  uint64_t bytes;
  cpu_quant_format quantize;
  int64_t group_size;
  const vlm_quantization_config *hub;
};

void vlm_cpu_packs_set_hub_quantization(vlm_cpu_packs *packs, const vlm_quantization_config *config) {
  packs->hub = config && config->method != VLM_QUANT_METHOD_NONE ? config : NULL;
}
const vlm_quantization_config *vlm_cpu_packs_hub_quantization(const vlm_cpu_packs *packs) { return packs->hub; }

void vlm_cpu_packs_set_quantization(vlm_cpu_packs *packs, cpu_quant_format format, int64_t group_size) {
  packs->quantize = format;
  packs->group_size = group_size;
}

vlm_status vlm_cpu_packs_create(vlm_cpu_packs **out_packs) {
  *out_packs = NULL;
  vlm_cpu_packs *packs = calloc(1, sizeof(*packs));
  if (!packs) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  pthread_mutex_init(&packs->lock, NULL);
  *out_packs = packs;
  return VLM_OK;
}

void vlm_cpu_packs_release(vlm_cpu_packs *packs) {
  if (!packs) return;
  for (int64_t i = 0; i < packs->capacity; i++) cpu_packed_linear_release(packs->entries[i].packed);
  free(packs->entries);
  pthread_mutex_destroy(&packs->lock);
  free(packs);
}

static int64_t slot_of(const vlm_cpu_packs *packs, const void *weight, const void *bias) {
  uint64_t hash = ((uint64_t)(uintptr_t)weight ^ ((uint64_t)(uintptr_t)bias * 0x9e3779b97f4a7c15ull)) *
                  0xbf58476d1ce4e5b9ull;
  int64_t i = (int64_t)(hash >> 17) & (packs->capacity - 1);
  while (packs->entries[i].weight &&
         (packs->entries[i].weight != weight || packs->entries[i].bias != bias))
    i = (i + 1) & (packs->capacity - 1);
  return i;
}

static vlm_status grow(vlm_cpu_packs *packs) {
  int64_t capacity = packs->capacity ? 2 * packs->capacity : 64;
  pack_entry *entries = calloc((size_t)capacity, sizeof(pack_entry));
  if (!entries) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  pack_entry *old = packs->entries;
  int64_t old_capacity = packs->capacity;
  packs->entries = entries;
  packs->capacity = capacity;
  for (int64_t i = 0; i < old_capacity; i++)
    if (old[i].weight) packs->entries[slot_of(packs, old[i].weight, old[i].bias)] = old[i];
  free(old);
  return VLM_OK;
}

/* Slices of about this many source bytes: the source of a slice leaves the
 * resident set as soon as it is packed, so packing a vocabulary head does
 * not hold it twice. */
#define SLICE_BYTES (16 << 20)

static void pack_in_slices(vlm_thread_pool *pool, const cpu_linear_weights *weights, const vlm_checkpoint *checkpoint,
                           cpu_packed_linear *packed) {
  size_t row_bytes = (size_t)weights->input_count * vlm_dtype_size(weights->dtype);
  size_t panel_bytes = row_bytes * CPU_PANEL;
  int64_t slice = (int64_t)(SLICE_BYTES / panel_bytes) + 1;
  if (weights->transposed) {
    /* Every panel reads every stored row: evict the source once, after. */
    cpu_linear_pack_panels(pool, weights, packed, 0, packed->panel_count);
    if (checkpoint) vlm_checkpoint_evict(checkpoint, weights->weight, (size_t)weights->output_count * row_bytes);
    return;
  }
  for (int64_t p = 0; p < packed->panel_count; p += slice) {
    int64_t end = p + slice < packed->panel_count ? p + slice : packed->panel_count;
    cpu_linear_pack_panels(pool, weights, packed, p, end);
    if (!checkpoint) continue;
    int64_t first_row = p * CPU_PANEL;
    int64_t rows = (end * CPU_PANEL < weights->output_count ? end * CPU_PANEL : weights->output_count) - first_row;
    vlm_checkpoint_evict(checkpoint, (const char *)weights->weight + (size_t)first_row * row_bytes,
                         (size_t)rows * row_bytes);
  }
}

/* The same for --quantize: slices of panels quantized, their source
 * evicted. */
static vlm_status quantize_in_slices(vlm_thread_pool *pool, const cpu_linear_weights *weights,
                                     const vlm_checkpoint *checkpoint, cpu_packed_linear *packed) {
  size_t row_bytes = (size_t)weights->input_count * vlm_dtype_size(weights->dtype);
  int64_t slice = (int64_t)(SLICE_BYTES / (row_bytes * CPU_PANEL)) + 1;
  for (int64_t p = 0; p < packed->panel_count; p += slice) {
    int64_t end = p + slice < packed->panel_count ? p + slice : packed->panel_count;
    VLM_RETURN_IF_ERROR(cpu_quant_pack_panels(pool, weights, packed, p, end));
    if (!checkpoint) continue;
    int64_t first_row = p * CPU_PANEL;
    int64_t rows = (end * CPU_PANEL < weights->output_count ? end * CPU_PANEL : weights->output_count) - first_row;
    vlm_checkpoint_evict(checkpoint, (const char *)weights->weight + (size_t)first_row * row_bytes,
                         (size_t)rows * row_bytes);
  }
  return VLM_OK;
}

vlm_status vlm_cpu_packs_get(vlm_cpu_packs *packs, vlm_thread_pool *pool, const cpu_linear_weights *weights,
                             const vlm_checkpoint *checkpoint, const cpu_packed_linear **out_packed) {
  *out_packed = NULL;
  pthread_mutex_lock(&packs->lock);
  vlm_status status = VLM_OK;
  if (2 * (packs->count + 1) > packs->capacity) status = grow(packs);
  if (!status) {
    pack_entry *entry = &packs->entries[slot_of(packs, weights->weight, weights->bias)];
    if (!entry->weight) {
      cpu_packed_linear *packed = NULL;
      if (packs->quantize) {
        status = cpu_quant_pack_allocate(weights, packs->quantize, packs->group_size, &packed);
        if (!status) status = quantize_in_slices(pool, weights, checkpoint, packed);
        if (status) {
          cpu_packed_linear_release(packed);
          packed = NULL;
        }
      } else {
        status = cpu_linear_pack_allocate(weights, &packed);
        if (!status) pack_in_slices(pool, weights, checkpoint, packed);
      }
      if (!status) {
        *entry = (pack_entry){weights->weight, weights->bias, packed};
        packs->count++;
        packs->bytes += cpu_packed_linear_bytes(packed);
      }
    }
    if (!status) *out_packed = entry->packed;
  }
  pthread_mutex_unlock(&packs->lock);
  return status;
}

vlm_status vlm_cpu_packs_get_hub(vlm_cpu_packs *packs, vlm_thread_pool *pool, const vlm_checkpoint *checkpoint,
                                 const char *prefix, const void *qweight, int64_t output_count, int64_t input_count,
                                 const void *bias, vlm_dtype bias_dtype, const cpu_packed_linear **out_packed) {
  *out_packed = NULL;
  if (!packs->hub) return VLM_ERROR(INTERNAL, "%s: a quantized layer without a quantization config", prefix);
  pthread_mutex_lock(&packs->lock);
  vlm_status status = VLM_OK;
  if (2 * (packs->count + 1) > packs->capacity) status = grow(packs);
  if (!status) {
    pack_entry *entry = &packs->entries[slot_of(packs, qweight, bias)];
    if (!entry->weight) {
      cpu_packed_linear *packed = NULL;
      status = cpu_hub_quant_pack(pool, checkpoint, packs->hub, prefix, output_count, input_count, bias, bias_dtype,
                                  &packed);
      if (!status) {
        *entry = (pack_entry){qweight, bias, packed};
        packs->count++;
        packs->bytes += cpu_packed_linear_bytes(packed);
      }
    }
    if (!status) *out_packed = entry->packed;
  }
  pthread_mutex_unlock(&packs->lock);
  return status;
}

int64_t vlm_cpu_packs_count(const vlm_cpu_packs *packs) { return packs->count; }
uint64_t vlm_cpu_packs_bytes(const vlm_cpu_packs *packs) { return packs->bytes; }
