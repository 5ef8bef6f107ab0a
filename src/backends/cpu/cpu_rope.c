/* Rotary position embeddings: the inverse frequencies of every RoPE variant
 * transformers 5.23.0 defines, cos/sin tables (with the M-RoPE axis
 * selection of Qwen2/2.5/3-VL), and the rotate_half application.
 *
 * The frequency code mirrors modeling_rope_utils.py step by step. Tensor
 * arithmetic there is f32 (torch.arange(...).float()), Python scalars are
 * doubles; a Python scalar meeting an f32 tensor is rounded to f32 first.
 * `1.0 / tensor` is tensor.reciprocal() * 1.0 in PyTorch, and
 * `scalar / tensor` is tensor.reciprocal() * scalar: two roundings, kept here
 * because they can move the last bit. */
#include "backends/cpu/cpu_internal.h"

#include <math.h>
#include <string.h>

#include "backends/cpu/cpu_kernels.h"

/* base ** (arange(0, dim, 2).float() / dim), one element, in f32. */
static float base_power(float base, int64_t index, int64_t dim) {
  float exponent = (float)(2 * index) / (float)dim;
  return powf(base, exponent);
}

static void default_frequencies(double theta, int64_t dim, float *out) {
  for (int64_t i = 0; i < dim / 2; i++) out[i] = 1.0f / base_power((float)theta, i, dim);
}

static void yarn_frequencies(const vlm_rope_config *config, int64_t dim, float *out) {
  double base = config->theta, factor = config->factor;
  double beta_fast = config->beta_fast > 0 ? config->beta_fast : 32.0;
  double beta_slow = config->beta_slow > 0 ? config->beta_slow : 1.0;
  double original = (double)config->original_max_position_embeddings;
  /* find_correction_dim / find_correction_range, in Python doubles. */
  double low = (dim * log(original / (beta_fast * 2 * M_PI))) / (2 * log(base));
  double high = (dim * log(original / (beta_slow * 2 * M_PI))) / (2 * log(base));
  if (config->truncate) {
    low = floor(low);
    high = ceil(high);
  }
  if (low < 0) low = 0;
  if (high > dim - 1) high = (double)(dim - 1);
  if (low == high) high += 0.001; /* linear_ramp_factor's guard */
  float low_f32 = (float)low, range_f32 = (float)(high - low);
  for (int64_t i = 0; i < dim / 2; i++) {
    float position_frequency = base_power((float)base, i, dim);
    float extrapolation = 1.0f / position_frequency;
    float interpolation = 1.0f / ((float)factor * position_frequency);
    float ramp = ((float)i - low_f32) / range_f32;
    ramp = ramp < 0.0f ? 0.0f : ramp > 1.0f ? 1.0f : ramp;
    float extrapolation_factor = 1.0f - ramp;
    out[i] = interpolation * (1.0f - extrapolation_factor) +
             extrapolation * extrapolation_factor;
  }
}

static void llama3_frequencies(const vlm_rope_config *config, int64_t dim, float *out) {
  float factor = (float)config->factor;
  float low_factor = (float)config->low_freq_factor;
  double old_context = (double)config->original_max_position_embeddings;
  float low_wavelength = (float)(old_context / config->low_freq_factor);
  float high_wavelength = (float)(old_context / config->high_freq_factor);
  default_frequencies(config->theta, dim, out);
  for (int64_t i = 0; i < dim / 2; i++) {
    float inverse = out[i];
    float wavelength = (1.0f / inverse) * (float)(2 * M_PI);
    float scaled = wavelength > low_wavelength ? inverse / factor : inverse;
    bool medium = !(wavelength < high_wavelength) && !(wavelength > low_wavelength);
    if (medium) {
      float smooth = ((1.0f / wavelength) * (float)old_context - low_factor) /
                     (float)(config->high_freq_factor - config->low_freq_factor);
      scaled = (1.0f - smooth) * scaled / factor + smooth * scaled;
    }
    out[i] = scaled;
  }
}

/* dynamic_rope_update: once the sequence outgrows max_position_embeddings the
 * base grows with it; the arithmetic then runs on f32 tensors (seq_len is a
 * tensor there). Below, the original (default) frequencies. */
static void dynamic_frequencies(const vlm_rope_config *config, int64_t dim,
                                int64_t max_positions, int64_t sequence_length,
                                float *out) {
  if (sequence_length <= max_positions) {
    default_frequencies(config->theta, dim, out);
    return;
  }
  float factor = (float)config->factor;
  float growth = (factor * (float)sequence_length / (float)max_positions) - (float)(config->factor - 1.0);
  float base = (float)config->theta *
               powf(growth, (float)((double)dim / (double)(dim - 2)));
  for (int64_t i = 0; i < dim / 2; i++) out[i] = 1.0f / base_power(base, i, dim);
}

static vlm_status longrope_frequencies(const vlm_rope_config *config, int64_t dim,
                                       int64_t sequence_length, float *out) {
  const double *factors = sequence_length > config->original_max_position_embeddings
                              ? config->long_factor
                              : config->short_factor;
  if (!factors || config->longrope_factor_count != (size_t)(dim / 2))
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT,
                           "rope: longrope needs %lld short and long factors",
                           (long long)(dim / 2));
  for (int64_t i = 0; i < dim / 2; i++)
    out[i] = 1.0f / ((float)factors[i] * base_power((float)config->theta, i, dim));
  return VLM_OK;
}

int64_t cpu_rope_length_class(const vlm_rope_config *config, int64_t max_position_embeddings,
                              int64_t sequence_length) {
  if (config->axial_axes > 1) return 0;
  switch (config->type) {
    case VLM_ROPE_LONGROPE: return sequence_length > config->original_max_position_embeddings ? 1 : 0;
    case VLM_ROPE_DYNAMIC: return sequence_length > max_position_embeddings ? sequence_length : 0;
    default: return 0;
  }
}

vlm_status cpu_rope_inverse_frequencies(const vlm_rope_config *config,
                                        int64_t max_position_embeddings,
                                        int64_t sequence_length,
                                        float *out_inverse_frequencies,
                                        float *out_attention_scaling) {
  int64_t dim = config->rotary_dimension;
  if (dim < 2 || dim % 2 != 0 || !(config->theta > 0))
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT,
                           "rope: rotary dimension %lld and theta %g are not usable",
                           (long long)dim, config->theta);
  float *out = out_inverse_frequencies;
  *out_attention_scaling = 1.0f;
  if (config->axial_axes > 1) {
    /* compute_axial_rope_parameters: default frequencies over
     * dim / axes, one copy per axis (recomposition_frequencies). */
    int64_t axes = config->axial_axes, part = dim / axes;
    if (config->type != VLM_ROPE_DEFAULT || part < 2 || part % 2 != 0 || part * axes != dim)
      return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT,
                             "rope: axial rope over %d axes needs the default type and a rotary dimension "
                             "of %d even parts (got %lld)",
                             config->axial_axes, config->axial_axes, (long long)dim);
    default_frequencies(config->theta, part, out);
    for (int64_t a = 1; a < axes; a++) memcpy(out + a * (part / 2), out, (size_t)(part / 2) * sizeof(float));
    return VLM_OK;
  }
  switch (config->type) {
    case VLM_ROPE_DEFAULT: default_frequencies(config->theta, dim, out); return VLM_OK;
    case VLM_ROPE_LINEAR:
      default_frequencies(config->theta, dim, out);
      for (int64_t i = 0; i < dim / 2; i++) out[i] /= (float)config->factor;
      return VLM_OK;
    case VLM_ROPE_DYNAMIC:
      dynamic_frequencies(config, dim, max_position_embeddings, sequence_length, out);
      return VLM_OK;
    case VLM_ROPE_LLAMA3: llama3_frequencies(config, dim, out); return VLM_OK;
    case VLM_ROPE_YARN:
      yarn_frequencies(config, dim, out);
      *out_attention_scaling = (float)config->attention_factor;
      return VLM_OK;
    case VLM_ROPE_LONGROPE:
      *out_attention_scaling = (float)config->attention_factor;
      return longrope_frequencies(config, dim, sequence_length, out);
  }
  return vlm_status_make(VLM_STATUS_UNIMPLEMENTED, "rope: type %d", (int)config->type);
}

vlm_status cpu_rope_frequency_axes(const vlm_rope_config *config, uint8_t *out_axes) {
  int64_t count = config->rotary_dimension / 2;
  memset(out_axes, 0, (size_t)count);
  if (config->axial_axes > 1) {
    int64_t per_axis = count / config->axial_axes;
    for (int64_t i = 0; i < count; i++) out_axes[i] = (uint8_t)(i / per_axis);
    return VLM_OK;
  }
  if (config->mrope_section_count == 0) return VLM_OK;
  const int64_t *section = config->mrope_section;
  if (config->mrope_interleaved) {
    /* apply_interleaved_mrope: frequency i takes axis 1 when i % 3 == 1 and
     * i < 3 * section[1], axis 2 when i % 3 == 2 and i < 3 * section[2]. */
    for (int64_t i = 0; i < count; i++) {
      if (i % 3 == 1 && config->mrope_section_count > 1 && i < 3 * section[1]) out_axes[i] = 1;
      if (i % 3 == 2 && config->mrope_section_count > 2 && i < 3 * section[2]) out_axes[i] = 2;
    }
    return VLM_OK;
  }
  /* Contiguous sections, chunk j taking axis j % 3 (recomposition_frequencies). */
  int64_t total = 0;
  for (size_t j = 0; j < config->mrope_section_count; j++) {
    if (section[j] < 0 || total + section[j] > count)
      return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT,
                             "rope: mrope_section sums past %lld frequencies",
                             (long long)count);
    memset(out_axes + total, (int)(j % 3), (size_t)section[j]);
    total += section[j];
  }
  if (total != count)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT,
                           "rope: mrope_section covers %lld of %lld frequencies",
                           (long long)total, (long long)count);
  return VLM_OK;
}

void cpu_rope_cos_sin(const float *inverse_frequencies, int64_t frequency_count,
                      float attention_scaling, const int64_t *positions,
                      const uint8_t *axes, int64_t token_count, float *cos_out,
                      float *sin_out) {
  for (int64_t t = 0; t < token_count; t++)
    for (int64_t i = 0; i < frequency_count; i++) {
      int64_t axis = axes ? axes[i] : 0;
      float angle = (float)positions[axis * token_count + t] * inverse_frequencies[i];
      cos_out[t * frequency_count + i] = cosf(angle) * attention_scaling;
      sin_out[t * frequency_count + i] = sinf(angle) * attention_scaling;
    }
}

void cpu_rope_apply(float *x, int64_t token_count, int64_t head_count,
                    int64_t head_dim, int64_t rotary_dimension,
                    const float *cos_table, const float *sin_table) {
  int64_t half = rotary_dimension / 2;
  for (int64_t t = 0; t < token_count; t++) {
    const float *c = cos_table + t * half, *s = sin_table + t * half;
    for (int64_t h = 0; h < head_count; h++) {
      float *v = x + (t * head_count + h) * head_dim;
      for (int64_t i = 0; i < half; i++) {
        float first = v[i], second = v[i + half];
        /* q * cos + rotate_half(q) * sin, rotate_half(q) = [-q2, q1]. */
        v[i] = first * c[i] + (-second) * s[i];
        v[i + half] = second * c[i] + first * s[i];
      }
    }
  }
}
