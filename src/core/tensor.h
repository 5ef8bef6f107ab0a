/* Tensor descriptors: dtype, shape, strides, and storage that is either owned
 * (released with the tensor) or borrowed (e.g. a view into a memory-mapped
 * checkpoint, which outlives the descriptor).
 *
 * Shapes are row-major (last dimension fastest), like PyTorch and safetensors.
 * Strides are in elements, not bytes, so a view keeps its meaning when the
 * dtype is known. */
#ifndef VLM_CORE_TENSOR_H
#define VLM_CORE_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vlm.h"

#define VLM_MAX_DIMS 8

/* Every dtype a safetensors file may declare, so a checkpoint is never
 * refused merely for holding, say, a BOOL mask. Compute paths accept a
 * subset and say so. */
typedef enum vlm_dtype {
  VLM_DTYPE_INVALID = 0,
  VLM_DTYPE_F32,
  VLM_DTYPE_F16,
  VLM_DTYPE_BF16,
  VLM_DTYPE_I32,
  VLM_DTYPE_I64,
  VLM_DTYPE_U8,
  VLM_DTYPE_F64,
  VLM_DTYPE_I8,
  VLM_DTYPE_I16,
  VLM_DTYPE_U16,
  VLM_DTYPE_U32,
  VLM_DTYPE_U64,
  VLM_DTYPE_BOOL,
  VLM_DTYPE_F8_E4M3,
  VLM_DTYPE_F8_E5M2,
  VLM_DTYPE_COUNT
} vlm_dtype;

/* Size of one element in bytes; 0 for VLM_DTYPE_INVALID. */
size_t vlm_dtype_size(vlm_dtype dtype);
/* Lower-case name ("f32", "bf16", ...). */
const char *vlm_dtype_name(vlm_dtype dtype);
/* Parses a safetensors dtype name ("F32", "BF16", "F8_E4M3", ...). */
vlm_dtype vlm_dtype_from_safetensors(const char *name, size_t length);
/* The safetensors spelling ("F32", ...). */
const char *vlm_dtype_safetensors_name(vlm_dtype dtype);
/* Parses a torch/config dtype name ("float32", "bfloat16", "float16"). */
vlm_dtype vlm_dtype_from_torch_name(const char *name);

typedef struct vlm_tensor {
  vlm_dtype dtype;
  int rank;
  int64_t shape[VLM_MAX_DIMS];
  int64_t strides[VLM_MAX_DIMS]; /* in elements */
  void *data;
  bool owns_data;
  const vlm_allocator *allocator; /* releases data when owns_data */
} vlm_tensor;

/* Total element count (1 for rank 0). Returns false on overflow or a negative
 * dimension. */
bool vlm_shape_element_count(const int64_t *shape, int rank, int64_t *out);
/* Fills row-major contiguous strides. */
void vlm_tensor_set_contiguous_strides(vlm_tensor *tensor);
bool vlm_tensor_is_contiguous(const vlm_tensor *tensor);
int64_t vlm_tensor_element_count(const vlm_tensor *tensor);
size_t vlm_tensor_byte_size(const vlm_tensor *tensor);

/* Allocates an owned, zero-filled, contiguous tensor. */
vlm_status vlm_tensor_create(const vlm_allocator *allocator, vlm_dtype dtype,
                             int rank, const int64_t *shape, vlm_tensor *out);
/* Describes borrowed, contiguous memory. */
vlm_status vlm_tensor_borrow(vlm_dtype dtype, int rank, const int64_t *shape,
                             void *data, vlm_tensor *out);
/* Releases owned storage; a no-op for borrowed tensors. */
void vlm_tensor_release(vlm_tensor *tensor);

/* Formats a shape as "[2, 3, 4]" into `buffer`. Returns buffer. */
const char *vlm_shape_format(const int64_t *shape, int rank, char *buffer,
                             size_t buffer_size);

/* Element `index` (in storage order) widened to double, whatever its
 * dtype (unaligned data allowed); false for a dtype without a value. */
bool vlm_tensor_value_as_double(const vlm_tensor *tensor, int64_t index, double *out);
/* The same truncated to an integer (counts, grids, sizes); 0 for a dtype
 * without a value. */
int64_t vlm_tensor_value_as_int64(const vlm_tensor *tensor, int64_t index);

/* Scalar conversions used by tests and reference paths. */
float vlm_bf16_to_f32(uint16_t value);
uint16_t vlm_f32_to_bf16(float value); /* round to nearest even */
float vlm_f16_to_f32(uint16_t value);
uint16_t vlm_f32_to_f16(float value);  /* round to nearest even */

#endif
