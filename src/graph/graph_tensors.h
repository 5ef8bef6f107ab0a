/* Named, owned tensors: the data a graph's inputs are bound to.
 *
 * A family's encoder turns a media item into the inputs of its graph (the
 * patches, and the integer tables that say where each row goes: token
 * order, position ids, RoPE positions, attention segments). Both backends
 * bind the same list by node name (the cpu executor to its INPUT nodes,
 * the xla runtime to the function's arguments), so host-side preparation
 * is written once. */
#ifndef VLM_GRAPH_GRAPH_TENSORS_H
#define VLM_GRAPH_GRAPH_TENSORS_H

#include <stdint.h>

#include "core/tensor.h"
#include "graph/graph.h"
#include "vlm.h"

typedef struct vlm_graph_tensor {
  char name[VLM_GRAPH_NAME_LENGTH];
  vlm_dtype dtype;   /* f32 or i32 */
  int rank;
  int64_t shape[VLM_MAX_DIMS];
  void *data;        /* owned, 64-byte aligned, zero-filled when added */
} vlm_graph_tensor;

typedef struct vlm_graph_tensors {
  vlm_graph_tensor *items;
  int count, capacity;
} vlm_graph_tensors;

/* Adds a zero-filled tensor and returns its data in *out_data. A name
 * already in the list is an error (INTERNAL), as is a size that overflows. */
vlm_status vlm_graph_tensors_add(vlm_graph_tensors *tensors, const char *name, vlm_dtype dtype, int rank,
                                 const int64_t *shape, void **out_data);
/* The tensor named `name`, or NULL. */
const vlm_graph_tensor *vlm_graph_tensors_find(const vlm_graph_tensors *tensors, const char *name);
/* Bytes of a tensor's data. */
size_t vlm_graph_tensor_bytes(const vlm_graph_tensor *tensor);
/* Frees every tensor; the list can be reused. */
void vlm_graph_tensors_release(vlm_graph_tensors *tensors);

/* Checks that every INPUT node of `graph` has a tensor of its name with
 * the node's dtype and shape (names listed in `implicit`, e.g. "tokens",
 * are bound by the caller some other way). */
vlm_status vlm_graph_tensors_check(const vlm_graph_tensors *tensors, const vlm_graph *graph,
                                   const char *const *implicit, int implicit_count);

#endif
