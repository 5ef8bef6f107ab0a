/* Element-wise, normalization, RoPE and attention kernels against float64
 * references (SPEC 5.4), and attention's bit-identity guarantees.
 *
 * Tolerances (|actual - expected| <= absolute + relative * scale):
 *   - norms, activations, softmax, soft-cap, RoPE rotation: a handful of f32
 *     roundings plus libm's f32 functions (expf, erff, tanhf, cosf: within
 *     a few ulp), so 1e-6 relative to the magnitude involved (2^-20) plus a
 *     small absolute floor for results near zero (GELU's 1 + erf cancels for
 *     x << 0: 1e-6 absolute there).
 *   - Parameters in bf16/f16 are compared against references built from the
 *     same rounded values (widening is exact), so the tolerance does not
 *     depend on the parameter dtype.
 *   - attention: contract dot products, an f32 softmax and an f32 weighted
 *     sum over up to ~100 keys: 2e-6 relative to sum_j p_j |v_j| and to the
 *     score magnitude. */
#include <float.h>
#include <stdint.h>

#include "backends/cpu/cpu_internal.h" /* cpu_exp */
#include "backends/cpu/cpu_kernels.h"
#include "test.h"
#include "test_kernels_support.h"

static const vlm_dtype parameter_dtypes[] = {VLM_DTYPE_F32, VLM_DTYPE_BF16, VLM_DTYPE_F16};

/* ---- Norms ---------------------------------------------------------------- */

static void check_rms_norm(vlm_dtype dtype, int64_t rows, int64_t width, bool add_one) {
  test_random random = {(uint64_t)(width * 31 + rows)};
  float *x = malloc((size_t)(rows * width) * sizeof(float));
  float *out = malloc((size_t)(rows * width) * sizeof(float));
  float *weight = malloc((size_t)width * sizeof(float));
  uint16_t *stored = malloc((size_t)width * sizeof(float));
  double *expected = malloc((size_t)(rows * width) * sizeof(double));
  test_random_fill(&random, x, rows * width, -3.0f, 3.0f);
  test_random_fill(&random, weight, width, -2.0f, 2.0f);
  test_store_as(dtype, weight, width, stored);
  const float eps = 1e-6f;
  for (int64_t t = 0; t < rows; t++) {
    double squares = 0.0;
    for (int64_t i = 0; i < width; i++) squares += (double)x[t * width + i] * x[t * width + i];
    double inverse_rms = 1.0 / sqrt(squares / (double)width + eps);
    for (int64_t i = 0; i < width; i++) {
      double normalized = x[t * width + i] * inverse_rms;
      expected[t * width + i] = add_one ? normalized * (1.0 + weight[i]) : normalized * weight[i];
    }
  }
  CHECK_OK(cpu_rms_norm(x, rows, width, stored, dtype, eps, add_one, out));
  CHECK(test_worst_error(out, expected, NULL, rows * width, 1e-7, 1e-6) <= 1.0);
  /* The stored weights widened to f32 by the caller give the same bits
   * (the norm widens them once, exactly). */
  float *widened = malloc((size_t)width * sizeof(float)), *out_f32 = malloc((size_t)(rows * width) * sizeof(float));
  for (int64_t i = 0; i < width; i++) widened[i] = cpu_load_element(stored, dtype, i);
  CHECK_OK(cpu_rms_norm(x, rows, width, widened, VLM_DTYPE_F32, eps, add_one, out_f32));
  CHECK(test_bits_equal(out_f32, out, rows * width));
  free(widened), free(out_f32);
  /* In place gives the same bits. */
  CHECK_OK(cpu_rms_norm(x, rows, width, stored, dtype, eps, add_one, x));
  CHECK(test_bits_equal(x, out, rows * width));
  free(x), free(out), free(weight), free(stored), free(expected);
}

static void rms_norm_matches_reference(void) {
  const int64_t widths[] = {1, 15, 16, 17, 64, 896, 1001};
  for (size_t d = 0; d < 3; d++)
    for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
      check_rms_norm(parameter_dtypes[d], 3, widths[w], false);
      check_rms_norm(parameter_dtypes[d], 2, widths[w], true);
    }
}

static void layer_norm_matches_reference(void) {
  const int64_t widths[] = {1, 17, 64, 1024, 1003};
  for (size_t d = 0; d < 3; d++)
    for (size_t s = 0; s < sizeof(widths) / sizeof(widths[0]); s++) {
      int64_t rows = 3, width = widths[s];
      test_random random = {(uint64_t)width};
      float *x = malloc((size_t)(rows * width) * sizeof(float));
      float *out = malloc((size_t)(rows * width) * sizeof(float));
      float *weight = malloc((size_t)width * sizeof(float)), *bias = malloc((size_t)width * sizeof(float));
      void *weight_stored = malloc((size_t)width * 4), *bias_stored = malloc((size_t)width * 4);
      double *expected = malloc((size_t)(rows * width) * sizeof(double));
      test_random_fill(&random, x, rows * width, 1.0f, 5.0f); /* non-zero mean */
      test_random_fill(&random, weight, width, -2.0f, 2.0f);
      test_random_fill(&random, bias, width, -1.0f, 1.0f);
      test_store_as(parameter_dtypes[d], weight, width, weight_stored);
      test_store_as(parameter_dtypes[d], bias, width, bias_stored);
      for (int64_t t = 0; t < rows; t++) {
        double mean = 0.0, variance = 0.0;
        for (int64_t i = 0; i < width; i++) mean += x[t * width + i];
        mean /= (double)width;
        for (int64_t i = 0; i < width; i++)
          variance += (x[t * width + i] - mean) * (x[t * width + i] - mean);
        variance /= (double)width;
        for (int64_t i = 0; i < width; i++)
          expected[t * width + i] =
              (x[t * width + i] - mean) / sqrt(variance + 1e-5) * weight[i] + bias[i];
      }
      CHECK_OK(cpu_layer_norm(x, rows, width, weight_stored, bias_stored,
                              parameter_dtypes[d], 1e-5f, out));
      /* x - mean rounds relative to |x| (up to 5), not to the result. */
      CHECK(test_worst_error(out, expected, NULL, rows * width, 4e-6, 1e-6) <= 1.0);
      /* Parameters widened to f32 by the caller: the same bits. */
      float *out_f32 = malloc((size_t)(rows * width) * sizeof(float));
      for (int64_t i = 0; i < width; i++) {
        weight[i] = cpu_load_element(weight_stored, parameter_dtypes[d], i);
        bias[i] = cpu_load_element(bias_stored, parameter_dtypes[d], i);
      }
      CHECK_OK(cpu_layer_norm(x, rows, width, weight, bias, VLM_DTYPE_F32, 1e-5f, out_f32));
      CHECK(test_bits_equal(out_f32, out, rows * width));
      free(out_f32);
      free(x), free(out), free(weight), free(bias), free(weight_stored), free(bias_stored),
          free(expected);
    }
}

static void norms_refuse_bad_arguments(void) {
  float x[4] = {0};
  CHECK_ERROR(cpu_rms_norm(x, 1, 0, NULL, VLM_DTYPE_F32, 1e-6f, false, x),
              VLM_STATUS_INVALID_ARGUMENT, "shape");
  CHECK_ERROR(cpu_layer_norm(x, 1, 4, x, NULL, VLM_DTYPE_I8, 1e-6f, x),
              VLM_STATUS_UNIMPLEMENTED, "i8");
}

/* ---- Embedding ------------------------------------------------------------ */

static void embedding_gathers_and_scales(void) {
  const int64_t vocab = 11, width = 19;
  for (size_t d = 0; d < 3; d++) {
    test_random random = {d};
    float table[11 * 19], out[3 * 19];
    uint32_t stored[11 * 19];
    test_random_fill(&random, table, vocab * width, -1.0f, 1.0f);
    test_store_as(parameter_dtypes[d], table, vocab * width, stored);
    int32_t ids[3] = {10, 0, 4};
    CHECK_OK(cpu_embedding(stored, parameter_dtypes[d], vocab, width, ids, 3, 1.0f, out));
    for (int i = 0; i < 3; i++) CHECK(test_bits_equal(out + i * width, table + ids[i] * width, width));
    CHECK_OK(cpu_embedding(stored, parameter_dtypes[d], vocab, width, ids, 3, 2.5f, out));
    int wrong = 0;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < width; j++)
        if (out[i * width + j] != table[ids[i] * width + j] * 2.5f) wrong++;
    CHECK_INT_EQ(wrong, 0);
    int32_t bad[2] = {3, 11};
    CHECK_ERROR(cpu_embedding(stored, parameter_dtypes[d], vocab, width, bad, 2, 1.0f, out),
                VLM_STATUS_OUT_OF_RANGE, "token id 11 at index 1");
  }
}

/* ---- Activations, softmax, soft-cap ---------------------------------------- */

static double reference_activation(cpu_activation activation, double x) {
  switch (activation) {
    case CPU_ACTIVATION_SILU: return x / (1.0 + exp(-x));
    case CPU_ACTIVATION_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case CPU_ACTIVATION_GELU_TANH:
      return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case CPU_ACTIVATION_QUICK_GELU: return x / (1.0 + exp(-1.702 * x));
    case CPU_ACTIVATION_RELU: return x > 0 ? x : 0.0;
  }
  return NAN;
}

static void activations_match_reference(void) {
  const char *names[] = {"silu", "gelu", "gelu_pytorch_tanh", "quick_gelu", "relu"};
  enum { count = 1003 };
  static float x[count], gate_out[count], up[count], out[count];
  static double expected[count], gated_expected[count];
  test_random random = {17};
  test_random_fill(&random, x, count, -12.0f, 12.0f);
  test_random_fill(&random, up, count, -2.0f, 2.0f);
  x[0] = 0.0f, x[1] = -0.0f, x[2] = 1e-30f, x[3] = -80.0f, x[4] = 80.0f;
  for (size_t a = 0; a < sizeof(names) / sizeof(names[0]); a++) {
    cpu_activation activation;
    CHECK(cpu_activation_from_name(names[a], &activation));
    for (int i = 0; i < count; i++) {
      expected[i] = reference_activation(activation, x[i]);
      gated_expected[i] = expected[i] * up[i];
    }
    cpu_activate(activation, x, count, out);
    /* The GELU forms compute 1 + erf (or 1 + tanh), which cancels for
     * x << 0: PyTorch's f32 kernels do the same, so the error there is
     * absolute, ~|x| * 2^-24; hence the 1e-6 floor (|x| <= 12, |up| <= 2). */
    double worst = test_worst_error(out, expected, NULL, count, 1e-6, 1e-6);
    if (!(worst <= 1.0)) fprintf(stderr, "  %s: error %g\n", names[a], worst);
    CHECK(worst <= 1.0);
    cpu_gated_activate(activation, x, up, count, gate_out);
    worst = test_worst_error(gate_out, gated_expected, NULL, count, 2e-6, 2e-6);
    if (!(worst <= 1.0)) fprintf(stderr, "  gated %s: error %g\n", names[a], worst);
    CHECK(worst <= 1.0);
  }
  cpu_activation unused;
  CHECK(!cpu_activation_from_name("tanh_but_not_really", &unused));
}

static void softmax_matches_reference_and_handles_masks(void) {
  enum { count = 37 };
  float x[count], bias[count], out[count];
  double expected[count];
  test_random random = {3};
  test_random_fill(&random, x, count, -20.0f, 20.0f);
  test_random_fill(&random, bias, count, -5.0f, 5.0f);
  bias[3] = bias[10] = -INFINITY;
  double maximum = -INFINITY, sum = 0.0;
  for (int i = 0; i < count; i++) maximum = fmax(maximum, (double)x[i] + bias[i]);
  for (int i = 0; i < count; i++) sum += exp((double)x[i] + bias[i] - maximum);
  for (int i = 0; i < count; i++) expected[i] = exp((double)x[i] + bias[i] - maximum) / sum;
  cpu_softmax(x, bias, count, out);
  CHECK(test_worst_error(out, expected, NULL, count, 1e-9, 2e-6) <= 1.0);
  CHECK(out[3] == 0.0f && out[10] == 0.0f);
  /* One finite entry: probability 1 there, no NaN. */
  for (int i = 0; i < count; i++) bias[i] = i == 7 ? 0.0f : -INFINITY;
  cpu_softmax(x, bias, count, out);
  for (int i = 0; i < count; i++) CHECK(out[i] == (i == 7 ? 1.0f : 0.0f));
  /* No finite entry: zeros, not NaN. */
  for (int i = 0; i < count; i++) bias[i] = -INFINITY;
  cpu_softmax(x, bias, count, out);
  for (int i = 0; i < count; i++) CHECK(out[i] == 0.0f);
}

/* The softmax's 16-lane sum and vector passes agree bit for bit with the
 * portable path: rows of every tail length, masked and NaN entries, scale
 * 1, an attention scale, a negative and a zero scale (without a bias and
 * with a positive scale the vector paths take max(x) * scale: the same). */
static void softmax_is_the_same_on_every_path(void) {
  enum { LONGEST = 301 };
  static float x[LONGEST], bias[LONGEST], expected[LONGEST], got[LONGEST];
  test_random random = {31};
  test_random_fill(&random, x, LONGEST, -30.0f, 30.0f);
  test_random_fill(&random, bias, LONGEST, -3.0f, 3.0f);
  for (int i = 5; i < LONGEST; i += 11) bias[i] = -INFINITY;
  x[40] = NAN;
  int failures = 0;
  static const float scales[] = {1.0f, 0.11180339753627777f, -0.37f, 0.0f};
  for (int64_t count = 1; count <= LONGEST; count += count < 40 ? 1 : 13)
    for (int variant = 0; variant < 8; variant++) {
      int with_bias = variant & 1;
      float scale = scales[variant >> 1];
      CHECK(cpu_kernel_path_force(CPU_KERNEL_PATH_PORTABLE));
      cpu_scaled_softmax(x, scale, with_bias ? bias : NULL, count, expected);
      for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++) {
        if (!test_force_kernel_path((cpu_kernel_path)path)) continue;
        cpu_scaled_softmax(x, scale, with_bias ? bias : NULL, count, got);
        if (memcmp(got, expected, (size_t)count * sizeof(float)) != 0 && failures++ < 5)
          fprintf(stderr, "  path %s: softmax of %lld entries (bias %d, scale %g) differs from portable\n",
                  cpu_kernel_path_name((cpu_kernel_path)path), (long long)count, with_bias, (double)scale);
      }
    }
  cpu_kernel_path_force(CPU_KERNEL_PATH_COUNT);
  CHECK_INT_EQ(failures, 0);
}

static void soft_cap_matches_reference(void) {
  enum { count = 100 };
  float x[count];
  double expected[count];
  test_random random = {8};
  test_random_fill(&random, x, count, -200.0f, 200.0f);
  for (int i = 0; i < count; i++) expected[i] = 30.0 * tanh(x[i] / 30.0);
  cpu_soft_cap(x, count, 30.0f);
  CHECK(test_worst_error(x, expected, NULL, count, 1e-7, 1e-6) <= 1.0);
}

/* ---- RoPE ----------------------------------------------------------------- */

static vlm_rope_config rope_config(vlm_rope_type type, int64_t dim) {
  vlm_rope_config config;
  memset(&config, 0, sizeof(config));
  config.type = type;
  config.theta = 10000.0;
  config.factor = 1.0;
  config.partial_rotary_factor = 1.0;
  config.rotary_dimension = dim;
  config.attention_factor = 1.0;
  return config;
}

/* The transformers formulas in float64 (no f32 rounding). */
static void reference_frequencies(const vlm_rope_config *config, int64_t max_positions,
                                  int64_t sequence_length, double *out) {
  int64_t dim = config->rotary_dimension;
  double base = config->theta;
  if (config->type == VLM_ROPE_DYNAMIC && sequence_length > max_positions)
    base *= pow(config->factor * sequence_length / max_positions - (config->factor - 1),
                (double)dim / (dim - 2));
  for (int64_t i = 0; i < dim / 2; i++) out[i] = 1.0 / pow(base, 2.0 * i / dim);
  if (config->type == VLM_ROPE_LONGROPE) {
    const double *factors = sequence_length > config->original_max_position_embeddings
                                ? config->long_factor
                                : config->short_factor;
    for (int64_t i = 0; i < dim / 2; i++) out[i] /= factors[i];
  }
  if (config->type == VLM_ROPE_LINEAR)
    for (int64_t i = 0; i < dim / 2; i++) out[i] /= config->factor;
  if (config->type == VLM_ROPE_LLAMA3) {
    double old = (double)config->original_max_position_embeddings;
    double low_wavelength = old / config->low_freq_factor;
    double high_wavelength = old / config->high_freq_factor;
    for (int64_t i = 0; i < dim / 2; i++) {
      double wavelength = 2 * M_PI / out[i];
      if (wavelength > low_wavelength) {
        out[i] /= config->factor;
      } else if (wavelength >= high_wavelength) {
        double smooth = (old / wavelength - config->low_freq_factor) /
                        (config->high_freq_factor - config->low_freq_factor);
        out[i] = (1 - smooth) * out[i] / config->factor + smooth * out[i];
      }
    }
  }
  if (config->type == VLM_ROPE_YARN) {
    double original = (double)config->original_max_position_embeddings;
    double low = floor(dim * log(original / (config->beta_fast * 2 * M_PI)) / (2 * log(base)));
    double high = ceil(dim * log(original / (config->beta_slow * 2 * M_PI)) / (2 * log(base)));
    low = fmax(low, 0), high = fmin(high, dim - 1);
    for (int64_t i = 0; i < dim / 2; i++) {
      double ramp = fmin(fmax((i - low) / (high - low), 0.0), 1.0);
      double extrapolation = out[i], interpolation = out[i] / config->factor;
      out[i] = interpolation * ramp + extrapolation * (1 - ramp);
    }
  }
}

static void check_frequencies(const vlm_rope_config *config, int64_t max_positions,
                              int64_t sequence_length, float expected_scaling) {
  float actual[128], scaling;
  double expected[128];
  CHECK_OK(cpu_rope_inverse_frequencies(config, max_positions, sequence_length, actual, &scaling));
  reference_frequencies(config, max_positions, sequence_length, expected);
  /* f32 powf/reciprocal/products: a few ulp of each frequency. */
  double worst = test_worst_error(actual, expected, NULL, config->rotary_dimension / 2, 0, 1e-6);
  if (!(worst <= 1.0))
    fprintf(stderr, "  rope type %d: frequency error %g\n", (int)config->type, worst);
  CHECK(worst <= 1.0);
  CHECK_NEAR(scaling, expected_scaling, 1e-7);
}

static void rope_frequencies_match_transformers_formulas(void) {
  vlm_rope_config config = rope_config(VLM_ROPE_DEFAULT, 128);
  check_frequencies(&config, 4096, 1, 1.0f);
  config.theta = 1000000.0;
  config.rotary_dimension = 64;
  check_frequencies(&config, 4096, 1, 1.0f);

  config = rope_config(VLM_ROPE_LINEAR, 64);
  config.factor = 4.0;
  check_frequencies(&config, 4096, 1, 1.0f);

  config = rope_config(VLM_ROPE_DYNAMIC, 64);
  config.factor = 2.0;
  check_frequencies(&config, 2048, 100, 1.0f);   /* within the context: default */
  check_frequencies(&config, 2048, 5000, 1.0f);  /* grown base */

  config = rope_config(VLM_ROPE_LLAMA3, 128);
  config.theta = 500000.0;
  config.factor = 8.0;
  config.low_freq_factor = 1.0;
  config.high_freq_factor = 4.0;
  config.original_max_position_embeddings = 8192;
  check_frequencies(&config, 131072, 1, 1.0f);

  config = rope_config(VLM_ROPE_YARN, 64);
  config.factor = 4.0;
  config.original_max_position_embeddings = 4096;
  config.beta_fast = 32.0;
  config.beta_slow = 1.0;
  config.truncate = true;
  config.attention_factor = 0.1 * log(4.0) + 1.0;
  check_frequencies(&config, 16384, 1, (float)(0.1 * log(4.0) + 1.0));

  config = rope_config(VLM_ROPE_LONGROPE, 16);
  const double short_factors[8] = {1, 1.1, 1.2, 1.5, 2, 3, 5, 8};
  const double long_factors[8] = {1, 2, 4, 8, 16, 32, 48, 64};
  config.short_factor = short_factors;
  config.long_factor = long_factors;
  config.longrope_factor_count = 8;
  config.original_max_position_embeddings = 4096;
  config.attention_factor = 1.19;
  check_frequencies(&config, 131072, 100, 1.19f);    /* short factors */
  check_frequencies(&config, 131072, 5000, 1.19f);   /* long factors */
  config.longrope_factor_count = 7;
  float unused[8], unused_scaling;
  CHECK_ERROR(cpu_rope_inverse_frequencies(&config, 131072, 1, unused, &unused_scaling),
              VLM_STATUS_INVALID_ARGUMENT, "longrope");

  /* Partial rotary: the frequencies of the rotated part only. */
  config = rope_config(VLM_ROPE_DEFAULT, 32); /* head_dim 128 x 0.25 */
  check_frequencies(&config, 4096, 1, 1.0f);
}

static void rope_rotation_matches_reference(void) {
  const int64_t tokens = 5, heads = 3, head_dim = 40, rotary = 24; /* partial */
  vlm_rope_config config = rope_config(VLM_ROPE_DEFAULT, rotary);
  float frequencies[12], scaling;
  CHECK_OK(cpu_rope_inverse_frequencies(&config, 4096, tokens, frequencies, &scaling));
  int64_t positions[5] = {0, 1, 7, 1000, 4095};
  float cos_table[5 * 12], sin_table[5 * 12];
  cpu_rope_cos_sin(frequencies, rotary / 2, scaling, positions, NULL, tokens, cos_table, sin_table);
  float x[5 * 3 * 40], original[5 * 3 * 40];
  double expected[5 * 3 * 40];
  test_random random = {23};
  test_random_fill(&random, x, tokens * heads * head_dim, -2.0f, 2.0f);
  memcpy(original, x, sizeof(x));
  for (int64_t t = 0; t < tokens; t++)
    for (int64_t h = 0; h < heads; h++) {
      const float *v = original + (t * heads + h) * head_dim;
      double *e = expected + (t * heads + h) * head_dim;
      for (int64_t i = 0; i < head_dim; i++) e[i] = v[i];
      for (int64_t i = 0; i < rotary / 2; i++) {
        /* transformers forms the angle as an f32 product; so does the
         * reference, then evaluates cos/sin in double. */
        double angle = (float)positions[t] * frequencies[i];
        e[i] = v[i] * cos(angle) - v[i + rotary / 2] * sin(angle);
        e[i + rotary / 2] = v[i + rotary / 2] * cos(angle) + v[i] * sin(angle);
      }
    }
  cpu_rope_apply(x, tokens, heads, head_dim, rotary, cos_table, sin_table);
  CHECK(test_worst_error(x, expected, NULL, tokens * heads * head_dim, 2e-6, 1e-6) <= 1.0);
  /* The pass-through dimensions are untouched. */
  for (int64_t t = 0; t < tokens * heads; t++)
    CHECK(test_bits_equal(x + t * head_dim + rotary, original + t * head_dim + rotary,
                          head_dim - rotary));
}

static void mrope_axes_follow_sections(void) {
  vlm_rope_config config = rope_config(VLM_ROPE_DEFAULT, 128);
  config.mrope_section_count = 3;
  config.mrope_section[0] = 16, config.mrope_section[1] = 24, config.mrope_section[2] = 24;
  uint8_t axes[64];
  CHECK_OK(cpu_rope_frequency_axes(&config, axes));
  for (int i = 0; i < 64; i++) CHECK_INT_EQ(axes[i], i < 16 ? 0 : i < 40 ? 1 : 2);
  /* Qwen3-VL interleaved [24, 20, 20]: t h w t h w ..., h and w stop after
   * 20 each, the tail is t. */
  config.mrope_interleaved = true;
  config.mrope_section[0] = 24, config.mrope_section[1] = 20, config.mrope_section[2] = 20;
  CHECK_OK(cpu_rope_frequency_axes(&config, axes));
  for (int i = 0; i < 64; i++) {
    int expected = (i % 3 == 1 && i < 60) ? 1 : (i % 3 == 2 && i < 60) ? 2 : 0;
    CHECK_INT_EQ(axes[i], expected);
  }
  config.mrope_interleaved = false;
  config.mrope_section[2] = 10;
  CHECK_ERROR(cpu_rope_frequency_axes(&config, axes), VLM_STATUS_INVALID_ARGUMENT, "covers");
  /* cos/sin take each frequency's angle from its axis's positions. */
  config.mrope_section[0] = 16, config.mrope_section[1] = 24, config.mrope_section[2] = 24;
  CHECK_OK(cpu_rope_frequency_axes(&config, axes));
  float frequencies[64], scaling, cos_table[2 * 64], sin_table[2 * 64];
  CHECK_OK(cpu_rope_inverse_frequencies(&config, 4096, 1, frequencies, &scaling));
  int64_t positions[3 * 2] = {5, 6, /* t */ 100, 101, /* h */ 200, 201 /* w */};
  cpu_rope_cos_sin(frequencies, 64, scaling, positions, axes, 2, cos_table, sin_table);
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < 64; i++) {
      float angle = (float)positions[axes[i] * 2 + t] * frequencies[i];
      CHECK(cos_table[t * 64 + i] == cosf(angle));
      CHECK(sin_table[t * 64 + i] == sinf(angle));
    }
}

/* ---- Attention ------------------------------------------------------------ */

typedef struct attention_case {
  int64_t queries, past, heads, kv_heads, head_dim, window;
  float soft_cap;
  bool causal, with_bias;
} attention_case;

static void reference_attention(const cpu_attention_shape *shape, const float *q,
                                const float *k, const float *v, double *out) {
  int64_t d = shape->head_dim, keys = shape->past_count + shape->query_count;
  int64_t group = shape->head_count / shape->kv_head_count;
  double *p = malloc((size_t)keys * sizeof(double));
  for (int64_t t = 0; t < shape->query_count; t++)
    for (int64_t h = 0; h < shape->head_count; h++) {
      int64_t position = shape->past_count + t, kv = h / group;
      double maximum = -INFINITY, sum = 0.0;
      for (int64_t j = 0; j < keys; j++) {
        bool visible = !(shape->causal && j > position) &&
                       !(shape->sliding_window > 0 && j <= position - shape->sliding_window);
        double score = 0.0;
        for (int64_t i = 0; i < d; i++)
          score += (double)q[(t * shape->head_count + h) * d + i] *
                   k[(j * shape->kv_head_count + kv) * d + i];
        score *= shape->scale;
        if (shape->soft_cap > 0) score = shape->soft_cap * tanh(score / shape->soft_cap);
        if (shape->bias) score += shape->bias[t * shape->bias_stride + j];
        p[j] = visible ? score : -INFINITY;
        maximum = fmax(maximum, p[j]);
      }
      for (int64_t j = 0; j < keys; j++) sum += p[j] == -INFINITY ? 0.0 : exp(p[j] - maximum);
      for (int64_t i = 0; i < d; i++) {
        double value = 0.0;
        for (int64_t j = 0; j < keys; j++)
          if (p[j] != -INFINITY)
            value += exp(p[j] - maximum) / sum * v[(j * shape->kv_head_count + kv) * d + i];
        out[(t * shape->head_count + h) * d + i] = value;
      }
    }
  free(p);
}

typedef struct attention_data {
  float *q, *k, *v, *bias, *out;
  double *expected;
  cpu_attention_shape shape;
} attention_data;

static void attention_data_create(const attention_case *c, uint64_t seed, attention_data *data) {
  int64_t keys = c->past + c->queries;
  test_random random = {seed};
  data->q = malloc((size_t)(c->queries * c->heads * c->head_dim) * sizeof(float));
  data->out = malloc((size_t)(c->queries * c->heads * c->head_dim) * sizeof(float));
  data->expected = malloc((size_t)(c->queries * c->heads * c->head_dim) * sizeof(double));
  data->k = malloc((size_t)(keys * c->kv_heads * c->head_dim) * sizeof(float));
  data->v = malloc((size_t)(keys * c->kv_heads * c->head_dim) * sizeof(float));
  data->bias = malloc((size_t)(c->queries * keys) * sizeof(float));
  test_random_fill(&random, data->q, c->queries * c->heads * c->head_dim, -1.5f, 1.5f);
  test_random_fill(&random, data->k, keys * c->kv_heads * c->head_dim, -1.5f, 1.5f);
  test_random_fill(&random, data->v, keys * c->kv_heads * c->head_dim, -2.0f, 2.0f);
  test_random_fill(&random, data->bias, c->queries * keys, -1.0f, 1.0f);
  /* A few masked entries, as an additive mask would have. */
  for (int64_t i = 0; i < c->queries * keys; i += 7) data->bias[i] = -INFINITY;
  data->shape = (cpu_attention_shape){c->queries, c->past, c->heads, c->kv_heads, c->head_dim,
                                      1.0f / sqrtf((float)c->head_dim), c->soft_cap, c->causal,
                                      c->window, c->with_bias ? data->bias : NULL, keys};
}

static void attention_data_release(attention_data *data) {
  free(data->q), free(data->k), free(data->v), free(data->bias), free(data->out);
  free(data->expected);
}

static void attention_matches_reference(void) {
  const attention_case cases[] = {
      {1, 0, 1, 1, 16, 0, 0.0f, true, false},     /* first decode step */
      {1, 40, 8, 2, 64, 0, 0.0f, true, false},    /* GQA decode */
      {7, 9, 4, 1, 20, 0, 0.0f, true, false},     /* MQA, odd head_dim */
      {13, 3, 4, 4, 32, 5, 0.0f, true, false},    /* sliding window */
      {6, 10, 2, 1, 48, 0, 50.0f, true, true},    /* soft-cap + bias */
      {9, 0, 3, 3, 24, 0, 0.0f, false, true},     /* bidirectional with bias */
      /* Tiles of 6 queries, keys over several 64-key panels, values copied
       * head-major (16+ queries), head dims past one 64-column chunk. */
      {40, 100, 6, 2, 72, 0, 0.0f, true, false},  /* prefill chunk after a long past */
      {70, 0, 4, 4, 80, 0, 0.0f, false, false},   /* an encoder's full attention */
      {33, 70, 6, 3, 64, 20, 0.0f, true, true},   /* windowed prefill with a bias */
  };
  vlm_thread_pool *pool = NULL;
  CHECK_OK(vlm_thread_pool_create(2, NULL, &pool));
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    attention_data data;
    attention_data_create(&cases[i], 40 + i, &data);
    CHECK_OK(cpu_attention(pool, &data.shape, data.q, data.k, data.v, data.out));
    reference_attention(&data.shape, data.q, data.k, data.v, data.expected);
    int64_t count = cases[i].queries * cases[i].heads * cases[i].head_dim;
    double worst = test_worst_error(data.out, data.expected, NULL, count, 2e-6, 2e-6);
    if (!(worst <= 1.0)) fprintf(stderr, "  case %zu: error %g\n", i, worst);
    CHECK(worst <= 1.0);
    attention_data_release(&data);
  }
  vlm_thread_pool_release(pool);
}

/* A query's output is the same bits alone (as a decode step with everything
 * before it in the cache), inside a chunk of any size, with any thread
 * count, and on every SIMD path. */
static void check_attention_invariance(const attention_case whole) {
  attention_data data;
  attention_data_create(&whole, 77, &data);
  int64_t keys = whole.past + whole.queries, row = whole.heads * whole.head_dim;
  vlm_thread_pool *pool = NULL;
  CHECK_OK(vlm_thread_pool_create(3, NULL, &pool));
  float *reference = malloc((size_t)(whole.queries * row) * sizeof(float));
  float *chunk_out = malloc((size_t)(whole.queries * row) * sizeof(float));
  bool have_reference = false;
  for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++) {
    if (!test_force_kernel_path((cpu_kernel_path)path)) continue;
    CHECK_OK(cpu_attention(NULL, &data.shape, data.q, data.k, data.v, data.out));
    if (!have_reference) memcpy(reference, data.out, (size_t)(whole.queries * row) * sizeof(float));
    have_reference = true;
    CHECK(test_bits_equal(reference, data.out, whole.queries * row));
    CHECK_OK(cpu_attention(pool, &data.shape, data.q, data.k, data.v, data.out));
    CHECK(test_bits_equal(reference, data.out, whole.queries * row));
    /* Chunks of 1 (decode-like), 4 and 10 queries, each seeing the cache up
     * to its own end and the matching slice of the bias. */
    const int64_t chunk_sizes[] = {1, 4, 10};
    for (size_t c = 0; c < 3; c++) {
      for (int64_t start = 0; start < whole.queries; start += chunk_sizes[c]) {
        int64_t size = whole.queries - start < chunk_sizes[c] ? whole.queries - start : chunk_sizes[c];
        cpu_attention_shape shape = data.shape;
        shape.query_count = size;
        shape.past_count = whole.past + start;
        shape.bias = data.bias + start * keys;
        CHECK_OK(cpu_attention(pool, &shape, data.q + start * row, data.k, data.v,
                               chunk_out + start * row));
      }
      CHECK(test_bits_equal(reference, chunk_out, whole.queries * row));
    }
  }
  cpu_kernel_path_force(CPU_KERNEL_PATH_COUNT);
  free(reference), free(chunk_out);
  attention_data_release(&data);
  vlm_thread_pool_release(pool);
}

/* One key panel (28 keys, window 11), and keys over three panels (150
 * keys, window 40) with chunks that cut tiles of 6 anywhere. */
static void attention_is_bit_identical_across_chunks_threads_and_paths(void) {
  check_attention_invariance((attention_case){23, 5, 6, 2, 72, 11, 30.0f, true, true});
  check_attention_invariance((attention_case){90, 60, 6, 2, 72, 40, 0.0f, true, true});
}

/* Where every query sees every key (an encoder), cpu_attention runs tiles
 * in blocks, key panels and value chunks outermost: it must give the bits
 * of the tile-by-tile path, which the same shape takes with a window wider
 * than the keys (same visible keys). 300 queries: 50 tiles (blocks of 8 and
 * a partial one), 5 key panels, value chunks of 128, 128 and 44 keys; head
 * dim 80 (column groups 48 + 32); a bias; 1 and 3 threads; every path; and
 * against float64. */
static void attention_encoder_blocks_match_tile_by_tile(void) {
  const attention_case c = {300, 0, 3, 3, 80, 0, 0.0f, false, true};
  attention_data data;
  attention_data_create(&c, 91, &data);
  int64_t count = c.queries * c.heads * c.head_dim;
  float *tiled = malloc((size_t)count * sizeof(float));
  vlm_thread_pool *pool = NULL;
  CHECK_OK(vlm_thread_pool_create(3, NULL, &pool));
  reference_attention(&data.shape, data.q, data.k, data.v, data.expected);
  int failures = 0;
  for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++) {
    if (!test_force_kernel_path((cpu_kernel_path)path)) continue;
    cpu_attention_shape wide = data.shape;
    wide.sliding_window = 100000;
    CHECK_OK(cpu_attention(NULL, &wide, data.q, data.k, data.v, tiled));
    for (int threaded = 0; threaded < 2; threaded++) {
      CHECK_OK(cpu_attention(threaded ? pool : NULL, &data.shape, data.q, data.k, data.v, data.out));
      if (!test_bits_equal(tiled, data.out, count) && failures++ < 3)
        fprintf(stderr, "  path %s (threads %d): blocked attention differs from tile by tile\n",
                cpu_kernel_path_name((cpu_kernel_path)path), threaded ? 3 : 1);
    }
    double worst = test_worst_error(data.out, data.expected, NULL, count, 2e-6, 2e-6);
    if (!(worst <= 1.0) && failures++ < 3) fprintf(stderr, "  path %s: error %g\n", cpu_kernel_path_name((cpu_kernel_path)path), worst);
  }
  cpu_kernel_path_force(CPU_KERNEL_PATH_COUNT);
  CHECK_INT_EQ(failures, 0);
  free(tiled);
  attention_data_release(&data);
  vlm_thread_pool_release(pool);
}

static void attention_refuses_bad_shapes(void) {
  float buffer[64] = {0};
  cpu_attention_shape shape = {1, 0, 3, 2, 4, 1.0f, 0.0f, true, 0, NULL, 0};
  CHECK_ERROR(cpu_attention(NULL, &shape, buffer, buffer, buffer, buffer),
              VLM_STATUS_INVALID_ARGUMENT, "bad shape");
  shape.kv_head_count = 1;
  shape.bias = buffer;
  CHECK_ERROR(cpu_attention(NULL, &shape, buffer, buffer, buffer, buffer),
              VLM_STATUS_INVALID_ARGUMENT, "bias stride");
}

/* Decode rows batched through cpu_attention_decode (each its own cache,
 * past, window, soft cap and bias; GQA groups of 7 and 4, MQA with 20 heads
 * (two items of at most 16 heads), head dims 64, 72, 20 and 80): each row
 * is the bits of cpu_attention on that row alone, with 1 and 3 threads,
 * on every path, and within the float64 tolerance. */
static void attention_decode_rows_match_single_calls(void) {
  const attention_case cases[] = {
      {1, 0, 14, 2, 64, 0, 0.0f, true, false},   /* first step: one key */
      {1, 40, 14, 2, 64, 0, 0.0f, true, false},  /* Qwen2-0.5B's heads */
      {1, 130, 8, 2, 72, 11, 30.0f, true, true}, /* window, soft cap, bias; columns 48 + 24 */
      {1, 70, 20, 1, 20, 0, 0.0f, true, false},  /* MQA: 20 heads, one KV head */
      {1, 9, 4, 4, 80, 0, 0.0f, true, true},     /* one head per KV head */
  };
  enum { ROWS = sizeof(cases) / sizeof(cases[0]) };
  attention_data data[ROWS];
  cpu_attention_row rows[ROWS];
  float *single[ROWS], *first_path[ROWS];
  vlm_thread_pool *pool = NULL;
  CHECK_OK(vlm_thread_pool_create(3, NULL, &pool));
  for (int i = 0; i < ROWS; i++) {
    attention_data_create(&cases[i], 90 + (uint64_t)i, &data[i]);
    int64_t count = cases[i].heads * cases[i].head_dim;
    single[i] = malloc((size_t)count * sizeof(float));
    first_path[i] = malloc((size_t)count * sizeof(float));
    rows[i] = (cpu_attention_row){data[i].shape, data[i].q, data[i].k, data[i].v, data[i].out};
    reference_attention(&data[i].shape, data[i].q, data[i].k, data[i].v, data[i].expected);
  }
  bool have_first = false;
  for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++) {
    if (!test_force_kernel_path((cpu_kernel_path)path)) continue;
    for (int threaded = 0; threaded < 2; threaded++) {
      for (int i = 0; i < ROWS; i++) memset(data[i].out, 0xff, (size_t)(cases[i].heads * cases[i].head_dim) * 4);
      CHECK_OK(cpu_attention_decode(threaded ? pool : NULL, rows, ROWS));
      for (int i = 0; i < ROWS; i++) {
        int64_t count = cases[i].heads * cases[i].head_dim;
        CHECK_OK(cpu_attention(NULL, &data[i].shape, data[i].q, data[i].k, data[i].v, single[i]));
        CHECK(test_bits_equal(single[i], data[i].out, count));
        if (!have_first) memcpy(first_path[i], data[i].out, (size_t)count * sizeof(float));
        CHECK(test_bits_equal(first_path[i], data[i].out, count));
        double worst = test_worst_error(data[i].out, data[i].expected, NULL, count, 2e-6, 2e-6);
        if (!(worst <= 1.0)) fprintf(stderr, "  row %d: error %g\n", i, worst);
        CHECK(worst <= 1.0);
      }
      have_first = true;
    }
  }
  cpu_kernel_path_force(CPU_KERNEL_PATH_COUNT);
  /* A row of two queries is refused, not attended as one. */
  cpu_attention_row two = rows[1];
  two.shape.query_count = 2;
  CHECK_ERROR(cpu_attention_decode(NULL, &two, 1), VLM_STATUS_INVALID_ARGUMENT, "decode row has 2 queries");
  for (int i = 0; i < ROWS; i++) {
    attention_data_release(&data[i]);
    free(single[i]), free(first_path[i]);
  }
  vlm_thread_pool_release(pool);
}

/* Distance in units in the last place between two finite floats. */
static int64_t ulp_distance(float a, float b) {
  int32_t ia, ib;
  memcpy(&ia, &a, 4), memcpy(&ib, &b, 4);
  if (ia < 0) ia = INT32_MIN - ia;
  if (ib < 0) ib = INT32_MIN - ib;
  return ia > ib ? (int64_t)ia - ib : (int64_t)ib - ia;
}

/* cpu_exp: within 2 ulp of double exp over the whole f32 range (subnormal
 * results within 1 of their spacing), exact at 0, the IEEE special values,
 * and the vector path bit for bit equal to the scalar one. */
static void exp_is_accurate_and_the_same_on_every_path(void) {
  int64_t worst = 0;
  float worst_at = 0;
  enum { COUNT = 1 << 16 };
  static float inputs[COUNT], scalar[COUNT], vector[COUNT];
  for (int i = 0; i < COUNT; i++) inputs[i] = -104.0f + 193.0f * (float)i / (float)(COUNT - 1);
  inputs[0] = -INFINITY, inputs[1] = INFINITY, inputs[2] = NAN, inputs[3] = 0.0f, inputs[4] = -0.0f;
  inputs[5] = 88.72283935546875f, inputs[6] = 88.7229f, inputs[7] = -103.97207f, inputs[8] = -87.5f;
  for (int i = 0; i < COUNT; i++) {
    float x = inputs[i], got = cpu_exp(x);
    scalar[i] = got;
    if (isnan(x) || isinf(x)) continue;
    double expected = exp((double)x);
    float rounded = (float)expected;
    int64_t distance = isinf(rounded) ? (isinf(got) ? 0 : 99) : ulp_distance(got, rounded);
    if (distance > worst) worst = distance, worst_at = x;
  }
  printf("  cpu_exp: worst %lld ulp (at %.9g)\n", (long long)worst, (double)worst_at);
  CHECK(worst <= 2);
  CHECK(cpu_exp(0.0f) == 1.0f && cpu_exp(-0.0f) == 1.0f);
  CHECK(cpu_exp(-INFINITY) == 0.0f && isinf(cpu_exp(INFINITY)) && isnan(cpu_exp(NAN)));
  CHECK(cpu_exp(-200.0f) == 0.0f && isinf(cpu_exp(100.0f)));
  for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++) {
    if (!test_force_kernel_path((cpu_kernel_path)path)) continue;
    for (int64_t count = COUNT; count >= COUNT - 17; count -= 17) { /* tails too */
      cpu_exp_many(inputs, vector, count);
      CHECK(memcmp(vector, scalar, (size_t)count * sizeof(float)) == 0);
    }
  }
  cpu_kernel_path_force(CPU_KERNEL_PATH_COUNT);
}

TEST_MAIN(TEST(exp_is_accurate_and_the_same_on_every_path), TEST(rms_norm_matches_reference),
          TEST(layer_norm_matches_reference),
          TEST(norms_refuse_bad_arguments),
          TEST(embedding_gathers_and_scales),
          TEST(activations_match_reference),
          TEST(softmax_matches_reference_and_handles_masks), TEST(softmax_is_the_same_on_every_path),
          TEST(soft_cap_matches_reference),
          TEST(rope_frequencies_match_transformers_formulas),
          TEST(rope_rotation_matches_reference),
          TEST(mrope_axes_follow_sections),
          TEST(attention_matches_reference),
          TEST(attention_is_bit_identical_across_chunks_threads_and_paths),
          TEST(attention_encoder_blocks_match_tile_by_tile),
          TEST(attention_decode_rows_match_single_calls),
          TEST(attention_refuses_bad_shapes))
