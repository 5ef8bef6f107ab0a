#include "core/tensor.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/alloc.h"
#include "core/status.h"

static const struct {
  const char *name;
  const char *safetensors_name;
  size_t size;
} dtype_table[VLM_DTYPE_COUNT] = {
    [VLM_DTYPE_INVALID] = {"invalid", "INVALID", 0},
    [VLM_DTYPE_F32] = {"f32", "F32", 4},
    [VLM_DTYPE_F16] = {"f16", "F16", 2},
    [VLM_DTYPE_BF16] = {"bf16", "BF16", 2},
    [VLM_DTYPE_I32] = {"i32", "I32", 4},
    [VLM_DTYPE_I64] = {"i64", "I64", 8},
    [VLM_DTYPE_U8] = {"u8", "U8", 1},
    [VLM_DTYPE_F64] = {"f64", "F64", 8},
    [VLM_DTYPE_I8] = {"i8", "I8", 1},
    [VLM_DTYPE_I16] = {"i16", "I16", 2},
    [VLM_DTYPE_U16] = {"u16", "U16", 2},
    [VLM_DTYPE_U32] = {"u32", "U32", 4},
    [VLM_DTYPE_U64] = {"u64", "U64", 8},
    [VLM_DTYPE_BOOL] = {"bool", "BOOL", 1},
    [VLM_DTYPE_F8_E4M3] = {"f8_e4m3", "F8_E4M3", 1},
    [VLM_DTYPE_F8_E5M2] = {"f8_e5m2", "F8_E5M2", 1},
};

size_t vlm_dtype_size(vlm_dtype dtype) {
  return (unsigned)dtype < VLM_DTYPE_COUNT ? dtype_table[dtype].size : 0;
}

const char *vlm_dtype_name(vlm_dtype dtype) {
  return (unsigned)dtype < VLM_DTYPE_COUNT ? dtype_table[dtype].name
                                           : "invalid";
}

const char *vlm_dtype_safetensors_name(vlm_dtype dtype) {
  return (unsigned)dtype < VLM_DTYPE_COUNT
             ? dtype_table[dtype].safetensors_name
             : "INVALID";
}

vlm_dtype vlm_dtype_from_safetensors(const char *name, size_t length) {
  for (int dtype = 1; dtype < VLM_DTYPE_COUNT; dtype++) {
    const char *candidate = dtype_table[dtype].safetensors_name;
    if (strlen(candidate) == length && memcmp(candidate, name, length) == 0)
      return (vlm_dtype)dtype;
  }
  return VLM_DTYPE_INVALID;
}

vlm_dtype vlm_dtype_from_torch_name(const char *name) {
  static const struct {
    const char *name;
    vlm_dtype dtype;
  } names[] = {{"float32", VLM_DTYPE_F32},  {"float", VLM_DTYPE_F32},
               {"float16", VLM_DTYPE_F16},  {"half", VLM_DTYPE_F16},
               {"bfloat16", VLM_DTYPE_BF16}, {"float64", VLM_DTYPE_F64},
               {"int64", VLM_DTYPE_I64},    {"int32", VLM_DTYPE_I32},
               {"uint8", VLM_DTYPE_U8}};
  if (!name) return VLM_DTYPE_INVALID;
  if (strncmp(name, "torch.", 6) == 0) name += 6;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcasecmp(name, names[i].name) == 0) return names[i].dtype;
  return VLM_DTYPE_INVALID;
}

bool vlm_shape_element_count(const int64_t *shape, int rank, int64_t *out) {
  int64_t count = 1;
  for (int i = 0; i < rank; i++) {
    if (shape[i] < 0) return false;
    if (__builtin_mul_overflow(count, shape[i], &count)) return false;
  }
  *out = count;
  return true;
}

void vlm_tensor_set_contiguous_strides(vlm_tensor *tensor) {
  int64_t stride = 1;
  for (int i = tensor->rank - 1; i >= 0; i--) {
    tensor->strides[i] = stride;
    stride *= tensor->shape[i];
  }
}

bool vlm_tensor_is_contiguous(const vlm_tensor *tensor) {
  int64_t stride = 1;
  for (int i = tensor->rank - 1; i >= 0; i--) {
    if (tensor->shape[i] != 1 && tensor->strides[i] != stride) return false;
    stride *= tensor->shape[i];
  }
  return true;
}

int64_t vlm_tensor_element_count(const vlm_tensor *tensor) {
  int64_t count = 0;
  if (!vlm_shape_element_count(tensor->shape, tensor->rank, &count)) return -1;
  return count;
}

size_t vlm_tensor_byte_size(const vlm_tensor *tensor) {
  int64_t count = vlm_tensor_element_count(tensor);
  return count < 0 ? 0 : (size_t)count * vlm_dtype_size(tensor->dtype);
}

static vlm_status describe(vlm_dtype dtype, int rank, const int64_t *shape,
                           vlm_tensor *out, size_t *out_bytes) {
  memset(out, 0, sizeof(*out));
  if (vlm_dtype_size(dtype) == 0)
    return VLM_ERROR(INVALID_ARGUMENT, "tensor dtype is invalid");
  if (rank < 0 || rank > VLM_MAX_DIMS)
    return VLM_ERROR(INVALID_ARGUMENT, "tensor rank %d is outside 0..%d", rank,
                     VLM_MAX_DIMS);
  int64_t count = 0;
  if (!vlm_shape_element_count(shape, rank, &count))
    return VLM_ERROR(INVALID_ARGUMENT,
                     "tensor shape has a negative or overflowing dimension");
  size_t bytes;
  if (!vlm_size_multiply((size_t)count, vlm_dtype_size(dtype), &bytes))
    return VLM_ERROR(OUT_OF_RANGE, "tensor byte size overflows");
  out->dtype = dtype;
  out->rank = rank;
  if (rank) memcpy(out->shape, shape, sizeof(int64_t) * (size_t)rank);
  vlm_tensor_set_contiguous_strides(out);
  *out_bytes = bytes;
  return VLM_OK;
}

vlm_status vlm_tensor_create(const vlm_allocator *allocator, vlm_dtype dtype,
                             int rank, const int64_t *shape, vlm_tensor *out) {
  size_t bytes = 0;
  VLM_RETURN_IF_ERROR(describe(dtype, rank, shape, out, &bytes));
  out->data = vlm_allocate_zeroed(allocator, bytes, VLM_DEFAULT_ALIGNMENT);
  if (!out->data)
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory allocating %zu bytes",
                     bytes);
  out->owns_data = true;
  out->allocator = allocator;
  return VLM_OK;
}

vlm_status vlm_tensor_borrow(vlm_dtype dtype, int rank, const int64_t *shape,
                             void *data, vlm_tensor *out) {
  size_t bytes = 0;
  VLM_RETURN_IF_ERROR(describe(dtype, rank, shape, out, &bytes));
  out->data = data;
  out->owns_data = false;
  return VLM_OK;
}

void vlm_tensor_release(vlm_tensor *tensor) {
  if (tensor->owns_data) vlm_release(tensor->allocator, tensor->data);
  tensor->data = NULL;
  tensor->owns_data = false;
}

const char *vlm_shape_format(const int64_t *shape, int rank, char *buffer,
                             size_t buffer_size) {
  size_t used = 0;
  if (buffer_size == 0) return buffer;
  buffer[0] = '\0';
  used += (size_t)snprintf(buffer, buffer_size, "[");
  for (int i = 0; i < rank && used < buffer_size; i++)
    used += (size_t)snprintf(buffer + used, buffer_size - used, "%s%lld",
                             i ? ", " : "", (long long)shape[i]);
  if (used < buffer_size) snprintf(buffer + used, buffer_size - used, "]");
  return buffer;
}

float vlm_bf16_to_f32(uint16_t value) {
  uint32_t bits = (uint32_t)value << 16;
  float result;
  memcpy(&result, &bits, sizeof(result));
  return result;
}

uint16_t vlm_f32_to_bf16(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)((bits + rounding) >> 16);
}

float vlm_f16_to_f32(uint16_t value) {
  uint32_t sign = (uint32_t)(value & 0x8000u) << 16;
  uint32_t exponent = (value >> 10) & 0x1fu;
  uint32_t mantissa = value & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else { /* subnormal: renormalize */
      exponent = 127 - 15 + 1;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        exponent--;
      }
      mantissa &= 0x3ffu;
      bits = sign | (exponent << 23) | (mantissa << 13);
    }
  } else if (exponent == 31) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float result;
  memcpy(&result, &bits, sizeof(result));
  return result;
}

uint16_t vlm_f32_to_f16(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return (uint16_t)(sign | 0x7e00u); /* NaN */
  if (magnitude >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* inf */
  if (magnitude < 0x38800000u) {
    /* Result is subnormal (or zero): shift the implicit-1 mantissa into place
     * and round to nearest even. */
    if (magnitude < 0x33000000u) return (uint16_t)sign;
    uint32_t exponent = magnitude >> 23;
    uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exponent; /* 14..24 */
    uint32_t half = mantissa >> shift;
    uint32_t remainder = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (half & 1u))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
  rounded -= (112u << 23);
  return (uint16_t)(sign | (rounded >> 13));
}

bool vlm_tensor_value_as_double(const vlm_tensor *tensor, int64_t index, double *out) {
  const uint8_t *base = (const uint8_t *)tensor->data + (size_t)index * vlm_dtype_size(tensor->dtype);
  /* memcpy: golden and checkpoint bytes need not be aligned for their type. */
  switch (tensor->dtype) {
    case VLM_DTYPE_F32: { float v; memcpy(&v, base, 4); *out = v; return true; }
    case VLM_DTYPE_F64: { double v; memcpy(&v, base, 8); *out = v; return true; }
    case VLM_DTYPE_BF16: { uint16_t v; memcpy(&v, base, 2); *out = vlm_bf16_to_f32(v); return true; }
    case VLM_DTYPE_F16: { uint16_t v; memcpy(&v, base, 2); *out = vlm_f16_to_f32(v); return true; }
    case VLM_DTYPE_I64: { int64_t v; memcpy(&v, base, 8); *out = (double)v; return true; }
    case VLM_DTYPE_I32: { int32_t v; memcpy(&v, base, 4); *out = v; return true; }
    case VLM_DTYPE_U8: *out = *base; return true;
    case VLM_DTYPE_BOOL: *out = *base != 0; return true;
    default: return false;
  }
}

int64_t vlm_tensor_value_as_int64(const vlm_tensor *tensor, int64_t index) {
  double value = 0;
  vlm_tensor_value_as_double(tensor, index, &value);
  return (int64_t)value;
}
