/* Quantized linear layers (cpu_quant.h): the quantizer against float64,
 * the kernels against float64 on the dequantized weights, and the
 * bit-identity guarantees: a quantized layer gives exactly the bits of the
 * f32 layer of its dequantized weights, whatever the row count (fused
 * decode tiles or dequantized GEMM chunks), the row's batch, the thread
 * count and the path. */
#include <stdint.h>

#include "backends/cpu/cpu_internal.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/cpu_quant.h"
#include "core/thread_pool.h"
#include "test.h"
#include "test_kernels_support.h"

static const cpu_quant_format formats[] = {CPU_QUANT_Q8, CPU_QUANT_Q4};

static void for_each_path(void (*body)(cpu_kernel_path path, void *context), void *context) {
  for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++) {
    if (!test_force_kernel_path((cpu_kernel_path)path)) continue;
    body((cpu_kernel_path)path, context);
  }
  cpu_kernel_path_force(CPU_KERNEL_PATH_COUNT);
}

typedef struct quant_layer {
  float *values;       /* [out, in] the source weights (bf16-rounded) */
  uint16_t *storage;   /* bf16 */
  uint16_t *bias;      /* bf16 */
  float *bias_values;
  float *dequantized;  /* [out, in] */
  cpu_linear_weights weights, dequantized_weights;
  cpu_packed_linear *packed;
} quant_layer;

static void quant_layer_create(quant_layer *layer, cpu_quant_format format, int64_t out, int64_t in,
                               int64_t group, bool with_bias, uint64_t seed) {
  test_random random = {seed};
  layer->values = malloc((size_t)(out * in) * sizeof(float));
  layer->storage = malloc((size_t)(out * in) * 2);
  layer->bias = malloc((size_t)out * 2);
  layer->bias_values = malloc((size_t)out * sizeof(float));
  layer->dequantized = malloc((size_t)(out * in) * sizeof(float));
  test_random_fill(&random, layer->values, out * in, -1.0f, 1.0f);
  /* Some rows of another scale and one shifted group, so that groups differ. */
  for (int64_t k = 0; k < in; k++) layer->values[k] *= 40.0f;
  if (out > 2)
    for (int64_t k = 0; k < in && k < 32; k++) layer->values[2 * in + k] = 0.25f + 0.5f * layer->values[2 * in + k];
  test_random_fill(&random, layer->bias_values, out, -1.0f, 1.0f);
  test_store_as(VLM_DTYPE_BF16, layer->values, out * in, layer->storage);
  test_store_as(VLM_DTYPE_BF16, layer->bias_values, out, layer->bias);
  layer->weights = (cpu_linear_weights){VLM_DTYPE_BF16, layer->storage, with_bias ? layer->bias : NULL, out, in};
  CHECK_OK(cpu_quant_pack(NULL, &layer->weights, format, group, &layer->packed));
  cpu_quant_dequantize(layer->packed, layer->dequantized);
  layer->dequantized_weights =
      (cpu_linear_weights){VLM_DTYPE_F32, layer->dequantized, with_bias ? layer->bias_values : NULL, out, in};
}

static void quant_layer_release(quant_layer *layer) {
  cpu_packed_linear_release(layer->packed);
  free(layer->values), free(layer->storage), free(layer->bias), free(layer->bias_values), free(layer->dequantized);
}

/* Every weight within half a step of its group's scale (plus the f16
 * rounding of the scale, which the clamping at the range's ends can
 * stretch by one part in 2^11 of the range), and q4 groups that do not
 * span 0 still represent their values. */
static void quantizer_error_is_half_a_step(void) {
  for (size_t f = 0; f < 2; f++) {
    const int64_t out = 70, in = 211, group = 32;
    quant_layer layer;
    quant_layer_create(&layer, formats[f], out, in, group, false, 5 + f);
    int bad = 0;
    for (int64_t o = 0; o < out; o++)
      for (int64_t g = 0; g * group < in; g++) {
        double low = 0, high = 0;
        for (int64_t k = g * group; k < (g + 1) * group && k < in; k++) {
          double w = layer.values[o * in + k];
          low = w < low ? w : low;
          high = w > high ? w : high;
        }
        double step = formats[f] == CPU_QUANT_Q8 ? fmax(-low, high) / 127 : (high - low) / 15;
        for (int64_t k = g * group; k < (g + 1) * group && k < in; k++) {
          double error = fabs((double)layer.dequantized[o * in + k] - layer.values[o * in + k]);
          if (!(error <= step * (0.5 + 1.0 / 1024) + fmax(-low, high) / 1024)) {
            if (bad++ < 3)
              fprintf(stderr, "  %s (%lld, %lld): %.9g -> %.9g (step %.3g)\n", cpu_quant_format_name(formats[f]),
                      (long long)o, (long long)k, layer.values[o * in + k], layer.dequantized[o * in + k], step);
          }
        }
      }
    CHECK_INT_EQ(bad, 0);
    quant_layer_release(&layer);
  }
}

/* The dequantized weights are scale * (q - zero) exactly, from the setters,
 * on every path (the values differ between outputs c and c + 32, which
 * share a byte). */
static void dequantized_weights_are_exact_products(void) {
  cpu_packed_linear *packed = NULL;
  CHECK_OK(cpu_quant_allocate(CPU_QUANT_Q4, 70, 40, 16, NULL, VLM_DTYPE_F32, NULL, &packed));
  if (!packed) return;
  for (int64_t o = 0; o < 70; o++) {
    for (int64_t g = 0; g < 3; g++)
      cpu_quant_set_group(packed, o, g, vlm_f32_to_f16(0.001f * (float)(o + 1) * (float)(g + 1)), (int)((o + g) % 17));
    for (int64_t k = 0; k < 40; k++) cpu_quant_set_value(packed, o, k, (int)((o * 7 + k * 3 + o / 32 * 5) % 16));
  }
  float *w = malloc(70 * 40 * sizeof(float));
  for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++) {
    if (!test_force_kernel_path((cpu_kernel_path)path)) continue;
    cpu_quant_dequantize(packed, w);
    int bad = 0;
    for (int64_t o = 0; o < 70; o++)
      for (int64_t k = 0; k < 40; k++) {
        double scale = vlm_f16_to_f32(vlm_f32_to_f16(0.001f * (float)(o + 1) * (float)(k / 16 + 1)));
        double expected = scale * (double)((o * 7 + k * 3 + o / 32 * 5) % 16 - (o + k / 16) % 17);
        if ((double)w[o * 40 + k] != expected) bad++;
      }
    CHECK_INT_EQ(bad, 0);
  }
  cpu_kernel_path_force(CPU_KERNEL_PATH_COUNT);
  free(w);
  cpu_packed_linear_release(packed);
}

static double linear_tolerance(int64_t in) {
  double u = 0x1p-24, n = (double)(in + 1);
  return n * u / (1.0 - n * u);
}

/* Against float64 on the dequantized weights: f32 accumulation only. */
static void check_accuracy(cpu_kernel_path path, void *context) {
  (void)context;
  static const int64_t shapes[][4] = {/* rows, out, in, group */
                                      {1, 1, 1, 32},   {1, 7, 5, 32},    {3, 13, 64, 32},  {4, 6, 17, 8},
                                      {5, 29, 100, 32}, {9, 64, 896, 32}, {2, 130, 300, 128}, {37, 70, 211, 32}};
  for (size_t f = 0; f < 2; f++)
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
      int64_t rows = shapes[s][0], out = shapes[s][1], in = shapes[s][2];
      quant_layer layer;
      quant_layer_create(&layer, formats[f], out, in, shapes[s][3], s % 2 == 0, 40 + s);
      test_random random = {9 + s};
      float *x = malloc((size_t)(rows * in) * sizeof(float)), *y = malloc((size_t)(rows * out) * sizeof(float));
      double *expected = malloc((size_t)(rows * out) * sizeof(double)), *scale = malloc((size_t)(rows * out) * sizeof(double));
      test_random_fill(&random, x, rows * in, -2.0f, 2.0f);
      CHECK_OK(cpu_linear_packed(NULL, layer.packed, x, rows, y));
      for (int64_t t = 0; t < rows; t++)
        for (int64_t o = 0; o < out; o++) {
          double sum = 0, magnitude = 0;
          for (int64_t k = 0; k < in; k++) {
            double product = (double)x[t * in + k] * layer.dequantized[o * in + k];
            sum += product, magnitude += fabs(product);
          }
          if (layer.weights.bias) sum += layer.bias_values[o], magnitude += fabs(layer.bias_values[o]);
          expected[t * out + o] = sum;
          scale[t * out + o] = magnitude;
        }
      double worst = test_worst_error(y, expected, scale, rows * out, 1e-30, linear_tolerance(in));
      if (!(worst <= 1.0))
        fprintf(stderr, "  path %s %s %lldx%lldx%lld: error %g\n", cpu_kernel_path_name(path),
                cpu_quant_format_name(formats[f]), (long long)rows, (long long)out, (long long)in, worst);
      CHECK(worst <= 1.0);
      free(x), free(y), free(expected), free(scale);
      quant_layer_release(&layer);
    }
}

static void quantized_linear_matches_float64_reference(void) { for_each_path(check_accuracy, NULL); }

/* The bits: the quantized layer == cpu_linear of its dequantized f32
 * weights (all rows at once and row by row), every row == its own
 * single-row call and its place in sub-batches of every regime (fused: 1-4
 * rows, dequantized chunks: 5+), 1 thread == 3 threads, every path ==
 * portable. */
typedef struct invariance_context {
  vlm_thread_pool *pool;
  float *reference[2][2];
} invariance_context;

static void check_invariance_shape(invariance_context *context, cpu_kernel_path path, int shape, int64_t out,
                                   int64_t in, int64_t group) {
  enum { ROWS = 37 };
  for (size_t f = 0; f < 2; f++) {
    quant_layer layer;
    quant_layer_create(&layer, formats[f], out, in, group, f == 0, 61 + f + (uint64_t)shape);
    test_random random = {4};
    float *x = malloc((size_t)(ROWS * in) * sizeof(float));
    float *batch = malloc((size_t)(ROWS * out) * sizeof(float)), *plain = malloc((size_t)(ROWS * out) * sizeof(float));
    float *threaded = malloc((size_t)(ROWS * out) * sizeof(float)), *partial = malloc((size_t)(ROWS * out) * sizeof(float));
    test_random_fill(&random, x, ROWS * in, -2.0f, 2.0f);
    CHECK_OK(cpu_linear_packed(NULL, layer.packed, x, ROWS, batch));
    CHECK_OK(cpu_linear(NULL, &layer.dequantized_weights, x, ROWS, plain));
    CHECK(test_bits_equal(batch, plain, ROWS * out));
    CHECK_OK(cpu_linear_packed(context->pool, layer.packed, x, ROWS, threaded));
    CHECK(test_bits_equal(batch, threaded, ROWS * out));
    int mismatched = 0;
    for (int64_t t = 0; t < ROWS; t++) {
      CHECK_OK(cpu_linear_packed(context->pool, layer.packed, x + t * in, 1, partial));
      if (!test_bits_equal(partial, batch + t * out, out)) mismatched++;
    }
    CHECK_INT_EQ(mismatched, 0);
    static const int64_t sub_batches[] = {2, 3, 4, 5, 8, 11, 30};
    for (size_t b = 0; b < sizeof(sub_batches) / sizeof(sub_batches[0]); b++) {
      int64_t n = sub_batches[b];
      CHECK_OK(cpu_linear_packed(context->pool, layer.packed, x + 5 * in, n, partial));
      if (!test_bits_equal(partial, batch + 5 * out, n * out)) {
        fprintf(stderr, "  path %s %s: rows [5, %lld) differ\n", cpu_kernel_path_name(path),
                cpu_quant_format_name(formats[f]), (long long)(5 + n));
        CHECK(false);
      }
    }
    float **reference = &context->reference[shape][f];
    if (path == CPU_KERNEL_PATH_PORTABLE) {
      *reference = malloc((size_t)(ROWS * out) * sizeof(float));
      memcpy(*reference, batch, (size_t)(ROWS * out) * sizeof(float));
    } else if (!*reference || !test_bits_equal(*reference, batch, ROWS * out)) {
      fprintf(stderr, "  path %s %s differs from portable\n", cpu_kernel_path_name(path),
              cpu_quant_format_name(formats[f]));
      CHECK(false);
    }
    free(x), free(batch), free(plain), free(threaded), free(partial);
    quant_layer_release(&layer);
  }
}

/* 53 outputs: one partial panel; 130: two and a partial third; 211 inputs:
 * a partial last group and two GEMM k chunks; 1100 with groups of 128
 * (GPTQ's): chunks that end inside groups. */
static void check_invariance(cpu_kernel_path path, void *raw) {
  check_invariance_shape(raw, path, 0, 53, 211, 32);
  check_invariance_shape(raw, path, 1, 130, 1100, 128);
}

static void quantized_linear_is_bit_identical_across_rows_threads_and_paths(void) {
  invariance_context context = {0};
  CHECK_OK(vlm_thread_pool_create(3, NULL, &context.pool));
  for_each_path(check_invariance, &context);
  for (int s = 0; s < 2; s++)
    for (int f = 0; f < 2; f++) free(context.reference[s][f]);
  vlm_thread_pool_release(context.pool);
}

/* Act-order (GPTQ's g_idx): chains run in the stored order over the inputs
 * it names: the bits of cpu_linear on the permuted weights and inputs. */
static void check_input_order(cpu_kernel_path path, void *raw) {
  (void)path, (void)raw;
  enum { OUT = 70, IN = 96, ROWS = 6, GROUP = 32 };
  int32_t order[IN];
  for (int j = 0; j < IN; j++) order[j] = (j * 37 + 11) % IN; /* 37 is prime to 96 */
  cpu_packed_linear *packed = NULL;
  CHECK_OK(cpu_quant_allocate(CPU_QUANT_Q4, OUT, IN, GROUP, NULL, VLM_DTYPE_F32, order, &packed));
  if (!packed) return;
  for (int64_t o = 0; o < OUT; o++) {
    for (int64_t g = 0; g < IN / GROUP; g++) cpu_quant_set_group(packed, o, g, vlm_f32_to_f16(0.01f * (float)(o % 5 + 1)), (int)(o % 16));
    for (int64_t j = 0; j < IN; j++) cpu_quant_set_value(packed, o, j, (int)((o + 3 * j) % 16));
  }
  float *w = malloc(OUT * IN * sizeof(float)), *permuted = malloc(OUT * IN * sizeof(float));
  float x[ROWS * IN], xp[ROWS * IN], got[ROWS * OUT], want[ROWS * OUT];
  cpu_quant_dequantize(packed, w);
  for (int64_t o = 0; o < OUT; o++)
    for (int64_t j = 0; j < IN; j++) permuted[o * IN + j] = w[o * IN + order[j]];
  test_random random = {12};
  test_random_fill(&random, x, ROWS * IN, -2.0f, 2.0f);
  for (int64_t t = 0; t < ROWS; t++)
    for (int64_t j = 0; j < IN; j++) xp[t * IN + j] = x[t * IN + order[j]];
  cpu_linear_weights plain = {VLM_DTYPE_F32, permuted, NULL, OUT, IN};
  CHECK_OK(cpu_linear(NULL, &plain, xp, ROWS, want));
  CHECK_OK(cpu_linear_packed(NULL, packed, x, ROWS, got));
  CHECK(test_bits_equal(got, want, ROWS * OUT));
  CHECK_OK(cpu_linear_packed(NULL, packed, x, 1, got));
  CHECK(test_bits_equal(got, want, OUT));
  free(w), free(permuted);
  cpu_packed_linear_release(packed);
}

static void quantized_linear_follows_the_input_order(void) { for_each_path(check_input_order, NULL); }

static void quantizer_refuses_bad_weights(void) {
  float values[2 * 40];
  for (int i = 0; i < 80; i++) values[i] = 0.5f;
  values[45] = NAN;
  cpu_linear_weights weights = {VLM_DTYPE_F32, values, NULL, 2, 40};
  cpu_packed_linear *packed = NULL;
  CHECK_ERROR(cpu_quant_pack(NULL, &weights, CPU_QUANT_Q4, 32, &packed), VLM_STATUS_INVALID_ARGUMENT, "non-finite");
  CHECK(packed == NULL);
  values[45] = INFINITY;
  CHECK_ERROR(cpu_quant_pack(NULL, &weights, CPU_QUANT_Q8, 32, &packed), VLM_STATUS_INVALID_ARGUMENT, "non-finite");
  weights.dtype = VLM_DTYPE_I32;
  CHECK_ERROR(cpu_quant_pack(NULL, &weights, CPU_QUANT_Q8, 32, &packed), VLM_STATUS_UNIMPLEMENTED, "dtype");
  CHECK_ERROR(cpu_quant_allocate(CPU_QUANT_Q4, 4, 8, 0, NULL, VLM_DTYPE_F32, NULL, &packed), VLM_STATUS_INVALID_ARGUMENT,
              "group");
  /* Constant groups and huge values survive: a constant group of 0.5 is
   * within half a step, and a scale past f16's range is clamped to its
   * largest (65504). */
  values[45] = 0.5f;
  weights.dtype = VLM_DTYPE_F32;
  CHECK_OK(cpu_quant_pack(NULL, &weights, CPU_QUANT_Q4, 32, &packed));
  float back[80];
  if (packed) cpu_quant_dequantize(packed, back);
  CHECK(packed && fabsf(back[0] - 0.5f) <= 0.5f / 15 / 2 && fabsf(back[79] - 0.5f) <= 0.5f / 15 / 2);
  cpu_packed_linear_release(packed);
  values[3] = 3e38f;
  CHECK_OK(cpu_quant_pack(NULL, &weights, CPU_QUANT_Q8, 32, &packed));
  if (packed) cpu_quant_dequantize(packed, back);
  CHECK(packed && back[3] == 65504.0f * 127.0f);
  cpu_packed_linear_release(packed);
}

TEST_MAIN(TEST(quantizer_error_is_half_a_step), TEST(dequantized_weights_are_exact_products),
          TEST(quantized_linear_matches_float64_reference),
          TEST(quantized_linear_is_bit_identical_across_rows_threads_and_paths),
          TEST(quantized_linear_follows_the_input_order), TEST(quantizer_refuses_bad_weights))
