/* Element-wise and per-row operators: norms, embedding lookup, activations,
 * softmax, soft-capping.
 *
 * One portable implementation each, used whatever the SIMD path: they are a
 * small share of decoder time, and a single implementation is trivially the
 * same on every path. Row reductions (norm statistics) accumulate in double
 * in index order, which makes them independent of vector width and closer to
 * PyTorch's f32 cascade sums than a plain f32 loop. */
#include "backends/cpu/cpu_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_kernels.h"

float cpu_load_element(const void *data, vlm_dtype dtype, int64_t index) {
  switch (dtype) {
    case VLM_DTYPE_BF16: return vlm_bf16_to_f32(((const uint16_t *)data)[index]);
    case VLM_DTYPE_F16: return vlm_f16_to_f32(((const uint16_t *)data)[index]);
    default: return ((const float *)data)[index];
  }
}

static bool is_float_dtype(vlm_dtype dtype) {
  return dtype == VLM_DTYPE_F32 || dtype == VLM_DTYPE_BF16 || dtype == VLM_DTYPE_F16;
}

static vlm_status check_rows(const char *name, const float *x, int64_t row_count,
                             int64_t width, vlm_dtype dtype, const float *out) {
  if (!x || !out)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "%s: missing pointer", name);
  if (row_count < 0 || width <= 0)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT,
                           "%s: bad shape [%lld, %lld]", name, (long long)row_count,
                           (long long)width);
  if (!is_float_dtype(dtype))
    return vlm_status_make(VLM_STATUS_UNIMPLEMENTED, "%s: parameters of dtype %s",
                           name, vlm_dtype_name(dtype));
  return VLM_OK;
}

/* A norm's parameters as f32: `data` itself, or widened once into `*owned`
 * (exact) instead of once per row and element (a call per element: ~5% of
 * a CLIP-L encode in f16 LayerNorm weights). NULL `data` stays NULL. */
static vlm_status f32_parameters(const char *name, const void *data, vlm_dtype dtype, int64_t width,
                                 const float **out, float **owned) {
  *out = data, *owned = NULL;
  if (!data || dtype == VLM_DTYPE_F32) return VLM_OK;
  *owned = malloc((size_t)width * sizeof(float));
  if (!*owned) return vlm_status_make(VLM_STATUS_RESOURCE_EXHAUSTED, "%s: out of memory", name);
  for (int64_t i = 0; i < width; i++) (*owned)[i] = cpu_load_element(data, dtype, i);
  *out = *owned;
  return VLM_OK;
}

vlm_status cpu_rms_norm(const float *x, int64_t row_count, int64_t width,
                        const void *weight_data, vlm_dtype weight_dtype, float eps,
                        bool add_one, float *out) {
  vlm_status status = check_rows("rms_norm", x, row_count, width, weight_dtype, out);
  if (status) return status;
  const float *weight;
  float *owned;
  status = f32_parameters("rms_norm", weight_data, weight_dtype, width, &weight, &owned);
  if (status) return status;
  for (int64_t t = 0; t < row_count; t++) {
    const float *row = x + t * width;
    float *result = out + t * width;
    double sum_of_squares = 0.0;
    for (int64_t i = 0; i < width; i++) sum_of_squares += (double)row[i] * row[i];
    /* variance is an f32 tensor in transformers; rsqrt(variance + eps) too. */
    float mean = (float)(sum_of_squares / (double)width);
    float inverse_rms = 1.0f / sqrtf(mean + eps);
    for (int64_t i = 0; i < width; i++) {
      float normalized = row[i] * inverse_rms;
      if (!weight) {
        result[i] = normalized;
        continue;
      }
      float w = weight[i];
      result[i] = add_one ? normalized * (1.0f + w) : w * normalized;
    }
  }
  free(owned);
  return VLM_OK;
}

vlm_status cpu_layer_norm(const float *x, int64_t row_count, int64_t width,
                          const void *weight_data, const void *bias_data,
                          vlm_dtype parameter_dtype, float eps, float *out) {
  vlm_status status = check_rows("layer_norm", x, row_count, width, parameter_dtype, out);
  if (status) return status;
  const float *weight, *bias;
  float *owned_weight, *owned_bias;
  status = f32_parameters("layer_norm", weight_data, parameter_dtype, width, &weight, &owned_weight);
  if (status) return status;
  status = f32_parameters("layer_norm", bias_data, parameter_dtype, width, &bias, &owned_bias);
  if (status) {
    free(owned_weight);
    return status;
  }
  for (int64_t t = 0; t < row_count; t++) {
    const float *row = x + t * width;
    float *result = out + t * width;
    double sum = 0.0;
    for (int64_t i = 0; i < width; i++) sum += row[i];
    double mean = sum / (double)width, squares = 0.0;
    for (int64_t i = 0; i < width; i++) squares += (row[i] - mean) * (row[i] - mean);
    float mean_f32 = (float)mean;
    float inverse_std = (float)(1.0 / sqrt(squares / (double)width + (double)eps));
    for (int64_t i = 0; i < width; i++) {
      float value = (row[i] - mean_f32) * inverse_std;
      if (weight) value = value * weight[i];
      if (bias) value = value + bias[i];
      result[i] = value;
    }
  }
  free(owned_weight);
  free(owned_bias);
  return VLM_OK;
}

vlm_status cpu_embedding(const void *table, vlm_dtype dtype, int64_t vocab_size,
                         int64_t width, const int32_t *ids, int64_t id_count,
                         float scale, float *out) {
  if (!table || !ids || !out)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "embedding: missing pointer");
  if (!is_float_dtype(dtype))
    return vlm_status_make(VLM_STATUS_UNIMPLEMENTED, "embedding: table of dtype %s",
                           vlm_dtype_name(dtype));
  for (int64_t i = 0; i < id_count; i++) {
    if (ids[i] < 0 || ids[i] >= vocab_size)
      return vlm_status_make(VLM_STATUS_OUT_OF_RANGE,
                             "embedding: token id %d at index %lld is outside the "
                             "vocabulary [0, %lld)",
                             ids[i], (long long)i, (long long)vocab_size);
  }
  for (int64_t i = 0; i < id_count; i++) {
    int64_t base = (int64_t)ids[i] * width;
    float *row = out + i * width;
    for (int64_t j = 0; j < width; j++) row[j] = cpu_load_element(table, dtype, base + j);
    if (scale != 1.0f)
      for (int64_t j = 0; j < width; j++) row[j] *= scale;
  }
  return VLM_OK;
}

bool cpu_activation_from_name(const char *name, cpu_activation *out) {
  static const struct {
    const char *name;
    cpu_activation activation;
  } names[] = {
      {"silu", CPU_ACTIVATION_SILU},           {"swish", CPU_ACTIVATION_SILU},
      {"gelu", CPU_ACTIVATION_GELU},           {"gelu_pytorch_tanh", CPU_ACTIVATION_GELU_TANH},
      {"gelu_new", CPU_ACTIVATION_GELU_TANH},  {"quick_gelu", CPU_ACTIVATION_QUICK_GELU},
      {"relu", CPU_ACTIVATION_RELU},
  };
  if (!name) return false;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcmp(name, names[i].name) == 0) {
      *out = names[i].activation;
      return true;
    }
  return false;
}

/* The formulas follow PyTorch's f32 CPU kernels: gelu 0.5 x (1 + erf(x /
 * sqrt 2)), the tanh form 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715
 * x^3))), relu; silu x / (1 + exp(-x)) and quick_gelu x / (1 + exp(-1.702
 * x)) are sigmoid_family's, below. */
static float activate_one(cpu_activation activation, float x) {
  switch (activation) {
    case CPU_ACTIVATION_GELU: return 0.5f * x * (1.0f + erff(x * (float)M_SQRT1_2));
    case CPU_ACTIVATION_GELU_TANH: {
      const float kappa = 0.044715f, beta = (float)(M_SQRT2 * M_2_SQRTPI * 0.5);
      float inner = beta * (x + kappa * x * x * x);
      return 0.5f * x * (1.0f + tanhf(inner));
    }
    case CPU_ACTIVATION_RELU: return x > 0.0f ? x : 0.0f;
    case CPU_ACTIVATION_SILU:
    case CPU_ACTIVATION_QUICK_GELU: break; /* never called for these */
  }
  return x;
}

/* silu and quick_gelu, x / (1 + exp(-s x)) with cpu_exp, a block at a time
 * so the exps are vectorised (cpu_exp_many: the same bits as cpu_exp);
 * `up` (may be NULL) multiplies the result as in the gated form. */
#define EXP_BLOCK 256
static void sigmoid_family(float minus_slope, const float *x, const float *up, int64_t count, float *out) {
  float exps[EXP_BLOCK];
  for (int64_t first = 0; first < count; first += EXP_BLOCK) {
    int64_t n = count - first < EXP_BLOCK ? count - first : EXP_BLOCK;
    for (int64_t i = 0; i < n; i++) exps[i] = minus_slope == -1.0f ? -x[first + i] : minus_slope * x[first + i];
    cpu_exp_many(exps, exps, n);
    for (int64_t i = 0; i < n; i++) {
      float value = x[first + i] / (1.0f + exps[i]);
      out[first + i] = up ? value * up[first + i] : value;
    }
  }
}

static bool sigmoid_slope(cpu_activation activation, float *minus_slope) {
  if (activation == CPU_ACTIVATION_SILU) *minus_slope = -1.0f;
  else if (activation == CPU_ACTIVATION_QUICK_GELU) *minus_slope = -1.702f;
  else return false;
  return true;
}

void cpu_activate(cpu_activation activation, const float *x, int64_t count,
                  float *out) {
  float minus_slope;
  if (sigmoid_slope(activation, &minus_slope)) {
    sigmoid_family(minus_slope, x, NULL, count, out);
    return;
  }
  for (int64_t i = 0; i < count; i++) out[i] = activate_one(activation, x[i]);
}

void cpu_gated_activate(cpu_activation activation, const float *gate,
                        const float *up, int64_t count, float *out) {
  float minus_slope;
  if (sigmoid_slope(activation, &minus_slope)) {
    sigmoid_family(minus_slope, gate, up, count, out);
    return;
  }
  for (int64_t i = 0; i < count; i++) out[i] = activate_one(activation, gate[i]) * up[i];
}

void cpu_soft_cap(float *x, int64_t count, float cap) {
  for (int64_t i = 0; i < count; i++) x[i] = cap * tanhf(x[i] / cap);
}
