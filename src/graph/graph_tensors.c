#include "graph/graph_tensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"

size_t vlm_graph_tensor_bytes(const vlm_graph_tensor *tensor) {
  int64_t count = 1;
  for (int i = 0; i < tensor->rank; i++) count *= tensor->shape[i];
  return (size_t)count * vlm_dtype_size(tensor->dtype);
}

vlm_status vlm_graph_tensors_add(vlm_graph_tensors *tensors, const char *name, vlm_dtype dtype, int rank,
                                 const int64_t *shape, void **out_data) {
  *out_data = NULL;
  if (vlm_graph_tensors_find(tensors, name))
    return VLM_ERROR(INTERNAL, "graph tensors: '%s' added twice", name);
  if (rank < 1 || rank > VLM_MAX_DIMS || (dtype != VLM_DTYPE_F32 && dtype != VLM_DTYPE_I32) ||
      strlen(name) >= VLM_GRAPH_NAME_LENGTH)
    return VLM_ERROR(INTERNAL, "graph tensors: '%s' has an unsupported rank, dtype or name", name);
  int64_t count = 0;
  size_t bytes = 0;
  if (!vlm_shape_element_count(shape, rank, &count) || count < 0 ||
      !vlm_size_multiply((size_t)count, vlm_dtype_size(dtype), &bytes))
    return VLM_ERROR(OUT_OF_RANGE, "graph tensors: '%s' is too large", name);
  if (tensors->count == tensors->capacity) {
    int capacity = tensors->capacity ? 2 * tensors->capacity : 8;
    vlm_graph_tensor *grown = realloc(tensors->items, (size_t)capacity * sizeof(*grown));
    if (!grown) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    tensors->items = grown;
    tensors->capacity = capacity;
  }
  vlm_graph_tensor *tensor = &tensors->items[tensors->count];
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

const vlm_graph_tensor *vlm_graph_tensors_find(const vlm_graph_tensors *tensors, const char *name) {
  for (int i = 0; i < tensors->count; i++)
    if (strcmp(tensors->items[i].name, name) == 0) return &tensors->items[i];
  return NULL;
}

void vlm_graph_tensors_release(vlm_graph_tensors *tensors) {
  for (int i = 0; i < tensors->count; i++) vlm_release(NULL, tensors->items[i].data);
  free(tensors->items);
  memset(tensors, 0, sizeof(*tensors));
}

vlm_status vlm_graph_tensors_check(const vlm_graph_tensors *tensors, const vlm_graph *graph,
                                   const char *const *implicit, int implicit_count) {
  for (int32_t i = 0; i < graph->count; i++) {
    const vlm_node *node = &graph->nodes[i];
    if (node->op != VLM_OP_INPUT) continue;
    bool bound_elsewhere = false;
    for (int k = 0; k < implicit_count && !bound_elsewhere; k++) bound_elsewhere = strcmp(node->name, implicit[k]) == 0;
    if (bound_elsewhere) continue;
    const vlm_graph_tensor *tensor = vlm_graph_tensors_find(tensors, node->name);
    if (!tensor) return VLM_ERROR(INVALID_ARGUMENT, "graph input '%s' was not provided", node->name);
    bool same = tensor->dtype == node->dtype && tensor->rank == node->rank;
    for (int d = 0; same && d < node->rank; d++) same = tensor->shape[d] == node->shape[d];
    if (!same) {
      char want[160], got[160];
      return VLM_ERROR(INVALID_ARGUMENT, "graph input '%s': the graph takes %s %s, given %s %s", node->name,
                       vlm_dtype_name(node->dtype), vlm_shape_format(node->shape, node->rank, want, sizeof(want)),
                       vlm_dtype_name(tensor->dtype), vlm_shape_format(tensor->shape, tensor->rank, got, sizeof(got)));
    }
  }
  return VLM_OK;
}
