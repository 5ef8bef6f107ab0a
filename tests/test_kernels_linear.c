/* cpu_linear and cpu_dot: accuracy against float64 references, and the
 * bit-identity guarantees (batch invariance, thread count, SIMD path). */
#include <stdint.h>

#include "backends/cpu/cpu_internal.h" /* cpu_dot_rows */
#include "backends/cpu/cpu_kernels.h"
#include "core/alloc.h"
#include "test.h"
#include "test_kernels_support.h"

static const vlm_dtype weight_dtypes[] = {VLM_DTYPE_F32, VLM_DTYPE_BF16, VLM_DTYPE_F16};

/* A random linear layer: weights stored in `dtype`, plus the f32 values they
 * hold (for references). */
typedef struct test_layer {
  cpu_linear_weights weights;
  float *weight_values, *bias_values;
  void *weight_storage, *bias_storage;
} test_layer;

static void layer_create(test_layer *layer, vlm_dtype dtype, int64_t out, int64_t in,
                         bool with_bias, uint64_t seed) {
  test_random random = {seed};
  size_t element = vlm_dtype_size(dtype);
  layer->weight_values = malloc((size_t)(out * in) * sizeof(float));
  layer->bias_values = malloc((size_t)out * sizeof(float));
  layer->weight_storage = malloc((size_t)(out * in) * element);
  layer->bias_storage = malloc((size_t)out * element);
  test_random_fill(&random, layer->weight_values, out * in, -1.0f, 1.0f);
  test_random_fill(&random, layer->bias_values, out, -1.0f, 1.0f);
  test_store_as(dtype, layer->weight_values, out * in, layer->weight_storage);
  test_store_as(dtype, layer->bias_values, out, layer->bias_storage);
  layer->weights = (cpu_linear_weights){dtype, layer->weight_storage,
                                        with_bias ? layer->bias_storage : NULL, out, in};
}

static void layer_release(test_layer *layer) {
  free(layer->weight_values);
  free(layer->bias_values);
  free(layer->weight_storage);
  free(layer->bias_storage);
}

/* Reference y (double) and the scale sum_k |x w| + |b| its error is measured
 * against. */
static void reference_linear(const test_layer *layer, const float *x, int64_t rows,
                             double *expected, double *scale) {
  int64_t in = layer->weights.input_count, out = layer->weights.output_count;
  for (int64_t t = 0; t < rows; t++)
    for (int64_t o = 0; o < out; o++) {
      double sum = 0.0, magnitude = 0.0;
      for (int64_t k = 0; k < in; k++) {
        double product = (double)x[t * in + k] * layer->weight_values[o * in + k];
        sum += product;
        magnitude += fabs(product);
      }
      if (layer->weights.bias) {
        sum += layer->bias_values[o];
        magnitude += fabs(layer->bias_values[o]);
      }
      expected[t * out + o] = sum;
      scale[t * out + o] = magnitude;
    }
}

static void for_each_path(void (*body)(cpu_kernel_path path, void *context), void *context) {
  for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++) {
    if (!test_force_kernel_path((cpu_kernel_path)path)) continue;
    body((cpu_kernel_path)path, context);
  }
  cpu_kernel_path_force(CPU_KERNEL_PATH_COUNT);
}

/* Tolerance: the kernel sees exactly the operands of the reference (weights
 * already rounded to their dtype), so the only error is f32 accumulation:
 * with 16 lanes and a 4-level tree a dot of K terms rounds at most
 * K / 16 + 4 times, each within 2^-24 of the running magnitude. 4e-6 of
 * sum |x w| covers K up to ~1000 with margin; it is the same for every
 * weight dtype because widening bf16/f16 to f32 is exact. */
#define LINEAR_RELATIVE_TOLERANCE 4e-6

static void check_accuracy(cpu_kernel_path path, void *context) {
  (void)context;
  static const int64_t shapes[][3] = {/* rows, out, in */
                                      {1, 1, 1},   {1, 7, 5},    {3, 13, 16},
                                      {5, 6, 17},  {37, 29, 100}, {9, 64, 896},
                                      {4, 12, 31}, {2, 3, 1000}};
  for (size_t d = 0; d < 3; d++)
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
      for (int with_bias = 0; with_bias < 2; with_bias++) {
        int64_t rows = shapes[s][0], out = shapes[s][1], in = shapes[s][2];
        test_layer layer;
        layer_create(&layer, weight_dtypes[d], out, in, with_bias, 100 + s);
        test_random random = {7 + s};
        float *x = malloc((size_t)(rows * in) * sizeof(float));
        float *y = malloc((size_t)(rows * out) * sizeof(float));
        double *expected = malloc((size_t)(rows * out) * sizeof(double));
        double *scale = malloc((size_t)(rows * out) * sizeof(double));
        test_random_fill(&random, x, rows * in, -2.0f, 2.0f);
        CHECK_OK(cpu_linear(NULL, &layer.weights, x, rows, y));
        reference_linear(&layer, x, rows, expected, scale);
        double worst = test_worst_error(y, expected, scale, rows * out, 1e-30,
                                        LINEAR_RELATIVE_TOLERANCE);
        if (!(worst <= 1.0))
          fprintf(stderr, "  path %s dtype %s shape %lldx%lldx%lld bias %d: error %g\n",
                  cpu_kernel_path_name(path), vlm_dtype_name(weight_dtypes[d]),
                  (long long)rows, (long long)out, (long long)in, with_bias, worst);
        CHECK(worst <= 1.0);
        free(x), free(y), free(expected), free(scale);
        layer_release(&layer);
      }
}

static void linear_matches_float64_reference(void) { for_each_path(check_accuracy, NULL); }

/* Against the unrounded float64 weights, the per-dtype tolerance is the
 * dtype's own rounding: 2^-9 relative for bf16 (8 significant bits, round
 * to nearest), 2^-12 for f16 (11 bits), plus the f32 accumulation term. */
static void linear_error_against_unrounded_weights_is_the_dtype_rounding(void) {
  const double dtype_tolerance[] = {LINEAR_RELATIVE_TOLERANCE,
                                    LINEAR_RELATIVE_TOLERANCE + 1.0 / 512,
                                    LINEAR_RELATIVE_TOLERANCE + 1.0 / 4096};
  int64_t rows = 3, out = 40, in = 333;
  for (size_t d = 0; d < 3; d++) {
    test_layer exact, rounded;
    layer_create(&exact, VLM_DTYPE_F32, out, in, true, 5);
    layer_create(&rounded, weight_dtypes[d], out, in, true, 5);
    test_random random = {11};
    float x[3 * 333], y[3 * 40];
    double expected[3 * 40], scale[3 * 40];
    test_random_fill(&random, x, rows * in, -2.0f, 2.0f);
    CHECK_OK(cpu_linear(NULL, &rounded.weights, x, rows, y));
    reference_linear(&exact, x, rows, expected, scale);
    CHECK(test_worst_error(y, expected, scale, rows * out, 1e-30, dtype_tolerance[d]) <= 1.0);
    layer_release(&exact);
    layer_release(&rounded);
  }
}

/* Checks that row t of a 37-row call (packed tiles) has the same bits as
 * the single-row call of that row and as sub-batches containing it (direct
 * and tall tiles), with 1 or 3 threads,
 * and that every path gives the portable path's bits. */
typedef struct invariance_context {
  vlm_thread_pool *pool;
  float *reference; /* [shape][dtype][rows, out], from the portable path */
} invariance_context;

static void check_invariance_shape(invariance_context *context, cpu_kernel_path path,
                                   int shape, int64_t in) {
  const int64_t rows = 37, out = 53;
  for (size_t d = 0; d < 3; d++) {
    test_layer layer;
    layer_create(&layer, weight_dtypes[d], out, in, d != 1, 21 + d);
    test_random random = {3};
    float *x = malloc((size_t)(rows * in) * sizeof(float));
    float *batch = malloc((size_t)(rows * out) * sizeof(float));
    float *threaded = malloc((size_t)(rows * out) * sizeof(float));
    float single[53], partial[11 * 53];
    test_random_fill(&random, x, rows * in, -2.0f, 2.0f);
    CHECK_OK(cpu_linear(NULL, &layer.weights, x, rows, batch));
    CHECK_OK(cpu_linear(context->pool, &layer.weights, x, rows, threaded));
    CHECK(test_bits_equal(batch, threaded, rows * out));
    int mismatched_rows = 0;
    for (int64_t t = 0; t < rows; t++) {
      CHECK_OK(cpu_linear(context->pool, &layer.weights, x + t * in, 1, single));
      if (!test_bits_equal(single, batch + t * out, out)) mismatched_rows++;
    }
    CHECK_INT_EQ(mismatched_rows, 0);
    /* Sub-batches starting anywhere, of every tiling regime (direct, tall
     * 8 x 3 tiles, packed): rows [5, 5 + n) as a batch of n. */
    static const int64_t sub_batches[] = {2, 8, 11};
    for (size_t b = 0; b < sizeof(sub_batches) / sizeof(sub_batches[0]); b++) {
      int64_t n = sub_batches[b];
      CHECK_OK(cpu_linear(context->pool, &layer.weights, x + 5 * in, n, partial));
      CHECK(test_bits_equal(partial, batch + 5 * out, n * out));
    }
    float *reference = context->reference + (shape * 3 + d) * rows * out;
    if (path == CPU_KERNEL_PATH_PORTABLE) {
      memcpy(reference, batch, (size_t)(rows * out) * sizeof(float));
    } else if (!test_bits_equal(reference, batch, rows * out)) {
      fprintf(stderr, "  path %s dtype %s in %lld differs from portable\n",
              cpu_kernel_path_name(path), vlm_dtype_name(weight_dtypes[d]), (long long)in);
      CHECK(false);
    }
    free(x), free(batch), free(threaded);
    layer_release(&layer);
  }
}

/* 37 rows x 53 outputs: tails in every tile dimension; 211 inputs fit one k
 * chunk of a GEMM, 1100 span two (CHUNK_K = 1024) with a partial block. */
static void check_invariance(cpu_kernel_path path, void *raw) {
  check_invariance_shape(raw, path, 0, 211);
  check_invariance_shape(raw, path, 1, 1100);
}

static void linear_is_bit_identical_across_rows_threads_and_paths(void) {
  invariance_context context = {0};
  CHECK_OK(vlm_thread_pool_create(3, NULL, &context.pool));
  context.reference = malloc(2 * 3 * 37 * 53 * sizeof(float));
  for_each_path(check_invariance, &context);
  free(context.reference);
  vlm_thread_pool_release(context.pool);
}

static void dot_is_bit_identical_across_paths(void) {
  test_random random = {99};
  float a[1031], b[1031];
  test_random_fill(&random, a, 1031, -3.0f, 3.0f);
  test_random_fill(&random, b, 1031, -3.0f, 3.0f);
  const int64_t lengths[] = {1, 2, 15, 16, 17, 31, 64, 100, 1031};
  for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
    float results[CPU_KERNEL_PATH_COUNT];
    int computed = 0;
    for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++) {
      if (!test_force_kernel_path((cpu_kernel_path)path)) continue;
      results[computed++] = cpu_dot(a, b, lengths[i]);
    }
    for (int p = 1; p < computed; p++)
      CHECK(memcmp(&results[p], &results[0], sizeof(float)) == 0);
  }
  cpu_kernel_path_force(CPU_KERNEL_PATH_COUNT);
}

/* The contract spelled out in scalar code, independent of the kernels. */
/* Attention scores: one row against many (AVX-512 reduces sixteen trees at
 * once, transposed); every score has the bits of the portable cpu_dot. */
static void dot_rows_are_dots_on_every_path(void) {
  test_random random = {7};
  enum { ROWS = 50, LENGTH = 130 };
  static float a[LENGTH], b[ROWS * LENGTH], expected[ROWS], got[ROWS];
  test_random_fill(&random, a, LENGTH, -3.0f, 3.0f);
  test_random_fill(&random, b, ROWS * LENGTH, -3.0f, 3.0f);
  const int64_t lengths[] = {1, 15, 16, 17, 64, 100, 128}, counts[] = {1, 15, 16, 17, 33, 50};
  for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); l++)
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
      CHECK(cpu_kernel_path_force(CPU_KERNEL_PATH_PORTABLE));
      for (int64_t j = 0; j < counts[c]; j++) expected[j] = cpu_dot(a, b + j * LENGTH, lengths[l]);
      for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++) {
        if (!test_force_kernel_path((cpu_kernel_path)path)) continue;
        memset(got, 0, sizeof(got));
        cpu_dot_rows(a, b, LENGTH, counts[c], lengths[l], got);
        if (!test_bits_equal(got, expected, counts[c])) {
          fprintf(stderr, "  path %s: %lld rows of length %lld differ from cpu_dot\n",
                  cpu_kernel_path_name((cpu_kernel_path)path), (long long)counts[c], (long long)lengths[l]);
          CHECK(false);
        }
      }
    }
  cpu_kernel_path_force(CPU_KERNEL_PATH_COUNT);
}

static void dot_follows_the_written_contract(void) {
  test_random random = {5};
  float a[77], b[77];
  test_random_fill(&random, a, 77, -1.0f, 1.0f);
  test_random_fill(&random, b, 77, -1.0f, 1.0f);
  float lanes[16] = {0};
  for (int k = 0; k < 80; k++) {
    float x = k < 77 ? a[k] : 0.0f, w = k < 77 ? b[k] : 0.0f;
    lanes[k % 16] = fmaf(x, w, lanes[k % 16]);
  }
  float s8[8], s4[4];
  for (int l = 0; l < 8; l++) s8[l] = lanes[l] + lanes[l + 8];
  for (int l = 0; l < 4; l++) s4[l] = s8[l] + s8[l + 4];
  float expected = (s4[0] + s4[2]) + (s4[1] + s4[3]);
  for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++) {
    if (!test_force_kernel_path((cpu_kernel_path)path)) continue;
    float actual = cpu_dot(a, b, 77);
    CHECK(memcmp(&actual, &expected, sizeof(float)) == 0);
  }
  cpu_kernel_path_force(CPU_KERNEL_PATH_COUNT);
}

static void linear_refuses_bad_arguments(void) {
  float x[4] = {0}, y[4];
  cpu_linear_weights weights = {VLM_DTYPE_I32, x, NULL, 2, 2};
  CHECK_ERROR(cpu_linear(NULL, &weights, x, 1, y), VLM_STATUS_UNIMPLEMENTED, "i32");
  weights.dtype = VLM_DTYPE_F32;
  CHECK_ERROR(cpu_linear(NULL, &weights, x, 0, y), VLM_STATUS_INVALID_ARGUMENT, "positive");
  weights.weight = NULL;
  CHECK_ERROR(cpu_linear(NULL, &weights, x, 1, y), VLM_STATUS_INVALID_ARGUMENT, "missing");
}

static void features_are_consistent(void) {
  const cpu_features *features = cpu_features_detect();
  if (features->avx512) CHECK(features->avx2);
  if (features->avx512_bf16) CHECK(features->avx512);
  CHECK(cpu_kernel_path_supported(CPU_KERNEL_PATH_PORTABLE));
  CHECK(!cpu_kernel_path_force((cpu_kernel_path)42));
  fprintf(stderr, "  active path: %s (avx2 %d, avx512 %d, avx512_bf16 %d)\n",
          cpu_kernel_path_name(cpu_kernel_path_active()), features->avx2,
          features->avx512, features->avx512_bf16);
}

TEST_MAIN(TEST(features_are_consistent),
          TEST(dot_rows_are_dots_on_every_path), TEST(dot_follows_the_written_contract),
          TEST(dot_is_bit_identical_across_paths),
          TEST(linear_matches_float64_reference),
          TEST(linear_error_against_unrounded_weights_is_the_dtype_rounding),
          TEST(linear_is_bit_identical_across_rows_threads_and_paths),
          TEST(linear_refuses_bad_arguments))
