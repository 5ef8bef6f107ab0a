/* Named, owned tensors: a media item's processor outputs (pixel values,
 * grids) and the data a graph's inputs are bound to.
 *
 * A family's encoder turns a media item into the inputs of its graph (the
 * patches, and the integer tables that say where each row goes: token
 * order, position ids, RoPE positions, attention segments). Both backends
 * bind the same list by node name (the cpu executor to its INPUT nodes,
 * the xla runtime to the function's arguments), so host-side preparation
 * is written once. */
#ifndef VLM_CORE_TENSOR_LIST_H
#define VLM_CORE_TENSOR_LIST_H

#include <stdint.h>

#include "core/tensor.h"
#include "vlm.h"

#define VLM_TENSOR_NAME_LENGTH 128

typedef struct vlm_named_tensor {
  char name[VLM_TENSOR_NAME_LENGTH];
  vlm_dtype dtype;   /* f32 or i32 */
  int rank;
  int64_t shape[VLM_MAX_DIMS];
  void *data;        /* owned, 64-byte aligned, zero-filled when added */
} vlm_named_tensor;

typedef struct vlm_tensor_list {
  vlm_named_tensor *items;
  int count, capacity;
} vlm_tensor_list;

/* Adds a zero-filled tensor and returns its data in *out_data. A name
 * already in the list is an error (INTERNAL), as is a size that overflows. */
vlm_status vlm_tensor_list_add(vlm_tensor_list *tensors, const char *name, vlm_dtype dtype, int rank,
                                 const int64_t *shape, void **out_data);
/* The tensor named `name`, or NULL. */
const vlm_named_tensor *vlm_tensor_list_find(const vlm_tensor_list *tensors, const char *name);
/* Bytes of a tensor's data. */
size_t vlm_named_tensor_bytes(const vlm_named_tensor *tensor);
/* Frees every tensor; the list can be reused. */
void vlm_tensor_list_release(vlm_tensor_list *tensors);

#endif
