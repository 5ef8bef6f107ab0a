#include "core/tensor_list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"

size_t vlm_named_tensor_bytes(const vlm_named_tensor *tensor) {
  int64_t count = 1;
  for (int i = 0; i < tensor->rank; i++) count *= tensor->shape[i];
  return (size_t)count * vlm_dtype_size(tensor->dtype);
}

vlm_status vlm_tensor_list_add(vlm_tensor_list *tensors, const char *name, vlm_dtype dtype, int rank,
                                 const int64_t *shape, void **out_data) {
  *out_data = NULL;
  if (vlm_tensor_list_find(tensors, name))
    return VLM_ERROR(INTERNAL, "graph tensors: '%s' added twice", name);
  if (rank < 1 || rank > VLM_MAX_DIMS || (dtype != VLM_DTYPE_F32 && dtype != VLM_DTYPE_I32) ||
      strlen(name) >= VLM_TENSOR_NAME_LENGTH)
    return VLM_ERROR(INTERNAL, "graph tensors: '%s' has an unsupported rank, dtype or name", name);
  int64_t count = 0;
  size_t bytes = 0;
  if (!vlm_shape_element_count(shape, rank, &count) || count < 0 ||
      !vlm_size_multiply((size_t)count, vlm_dtype_size(dtype), &bytes))
    return VLM_ERROR(OUT_OF_RANGE, "graph tensors: '%s' is too large", name);
  if (tensors->count == tensors->capacity) {
    int capacity = tensors->capacity ? 2 * tensors->capacity : 8;
    vlm_named_tensor *grown = realloc(tensors->items, (size_t)capacity * sizeof(*grown));
    if (!grown) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    tensors->items = grown;
    tensors->capacity = capacity;
  }
  vlm_named_tensor *tensor = &tensors->items[tensors->count];
  memset(tensor, 0, sizeof(*tensor));
  snprintf(tensor->name, sizeof(tensor->name), "%s", name);
  tensor->dtype = dtype;
  tensor->rank = rank;
  memcpy(tensor->shape, shape, sizeof(int64_t) * (size_t)rank);
  tensor->data = vlm_allocate_zeroed(NULL, bytes ? bytes : 1, VLM_DEFAULT_ALIGNMENT);
  if (!tensor->data) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for '%s' (%zu bytes)", name, bytes);
  tensors->count++;
  *out_data = tensor->data;
  return VLM_OK;
}

const vlm_named_tensor *vlm_tensor_list_find(const vlm_tensor_list *tensors, const char *name) {
  for (int i = 0; i < tensors->count; i++)
    if (strcmp(tensors->items[i].name, name) == 0) return &tensors->items[i];
  return NULL;
}

void vlm_tensor_list_release(vlm_tensor_list *tensors) {
  for (int i = 0; i < tensors->count; i++) vlm_release(NULL, tensors->items[i].data);
  free(tensors->items);
  memset(tensors, 0, sizeof(*tensors));
}

