/* cpu_linear and cpu_dot: accuracy against float64 references, and the
 * bit-identity guarantees (batch invariance, thread count, SIMD path). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_internal.h" /* the micro-kernel */
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
 * a chain of K fmas (and the bias addition) rounds at most K + 1 times,
 * each within 2^-24 of the running magnitude, which is at most
 * sum |x w| + |b|: the classic bound (K + 1) u / (1 - (K + 1) u). It is the
 * same for every weight dtype because widening bf16/f16 to f32 is exact. */
static double linear_tolerance(int64_t in) {
  double u = 0x1p-24, n = (double)(in + 1);
  return n * u / (1.0 - n * u);
}

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
        double worst = test_worst_error(y, expected, scale, rows * out, 1e-30, linear_tolerance(in));
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
  int64_t rows = 3, out = 40, in = 333;
  const double dtype_tolerance[] = {linear_tolerance(in), linear_tolerance(in) + 1.0 / 512,
                                    linear_tolerance(in) + 1.0 / 4096};
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

/* Checks that row t of a 37-row call (a GEMM: weight chunks widened for
 * the whole call) has the same bits as the single-row call of that row
 * (decode: weights read in place) and as sub-batches containing it, of
 * every regime, with 1 or 3 threads, and that every path gives the
 * portable path's bits. */
typedef struct invariance_context {
  vlm_thread_pool *pool;
  float *reference[2][3]; /* [shape][dtype][rows, out], from the portable path */
} invariance_context;

enum { INVARIANCE_ROWS = 37 };

static void check_invariance_shape(invariance_context *context, cpu_kernel_path path,
                                   int shape, int64_t out, int64_t in) {
  const int64_t rows = INVARIANCE_ROWS;
  for (size_t d = 0; d < 3; d++) {
    test_layer layer;
    layer_create(&layer, weight_dtypes[d], out, in, d != 1, 21 + d);
    test_random random = {3};
    float *x = malloc((size_t)(rows * in) * sizeof(float));
    float *batch = malloc((size_t)(rows * out) * sizeof(float));
    float *threaded = malloc((size_t)(rows * out) * sizeof(float));
    float *partial = malloc((size_t)(rows * out) * sizeof(float));
    test_random_fill(&random, x, rows * in, -2.0f, 2.0f);
    cpu_packed_linear *packed = NULL;
    CHECK_OK(cpu_linear_pack(context->pool, &layer.weights, &packed));
    CHECK_OK(cpu_linear(NULL, &layer.weights, x, rows, batch));
    CHECK_OK(cpu_linear_packed(context->pool, packed, x, rows, threaded));
    CHECK(test_bits_equal(batch, threaded, rows * out));
    int mismatched_rows = 0;
    for (int64_t t = 0; t < rows; t++) {
      CHECK_OK(cpu_linear_packed(context->pool, packed, x + t * in, 1, partial));
      if (!test_bits_equal(partial, batch + t * out, out)) mismatched_rows++;
    }
    CHECK_INT_EQ(mismatched_rows, 0);
    /* Sub-batches starting anywhere, of every regime (in place: 2, 8, 11;
     * GEMM: 30): rows [5, 5 + n) as a batch of n. */
    static const int64_t sub_batches[] = {2, 8, 11, 30};
    for (size_t b = 0; b < sizeof(sub_batches) / sizeof(sub_batches[0]); b++) {
      int64_t n = sub_batches[b];
      CHECK_OK(cpu_linear_packed(context->pool, packed, x + 5 * in, n, partial));
      CHECK(test_bits_equal(partial, batch + 5 * out, n * out));
    }
    float **reference = &context->reference[shape][d];
    if (path == CPU_KERNEL_PATH_PORTABLE) {
      *reference = malloc((size_t)(rows * out) * sizeof(float));
      memcpy(*reference, batch, (size_t)(rows * out) * sizeof(float));
    } else if (!*reference || !test_bits_equal(*reference, batch, rows * out)) {
      fprintf(stderr, "  path %s dtype %s %lld x %lld differs from portable\n",
              cpu_kernel_path_name(path), vlm_dtype_name(weight_dtypes[d]), (long long)out, (long long)in);
      CHECK(false);
    }
    cpu_packed_linear_release(packed);
    free(x), free(batch), free(threaded), free(partial);
    layer_release(&layer);
  }
}

/* 37 rows: tails in every tile dimension; 53 outputs: one partial panel,
 * 130: two panels and a partial third; 211 inputs fit one k chunk of a
 * GEMM, 1100 span three (CHUNK_K = 512). */
static void check_invariance(cpu_kernel_path path, void *raw) {
  check_invariance_shape(raw, path, 0, 53, 211);
  check_invariance_shape(raw, path, 1, 130, 1100);
}

static void linear_is_bit_identical_across_rows_threads_and_paths(void) {
  invariance_context context = {0};
  CHECK_OK(vlm_thread_pool_create(3, NULL, &context.pool));
  for_each_path(check_invariance, &context);
  for (int s = 0; s < 2; s++)
    for (int d = 0; d < 3; d++) free(context.reference[s][d]);
  vlm_thread_pool_release(context.pool);
}

/* A GEMM of more rows than one block of rows (cpu_linear.c sizes blocks
 * to keep a k chunk's inputs and a panel's outputs in L2: a few hundred
 * rows): every row still has the bits of its own single-row call, on every
 * path, with 1 and 3 threads. 1500 rows of 300 inputs span several blocks
 * and three k chunks. */
static void check_row_blocks(cpu_kernel_path path, void *raw) {
  vlm_thread_pool *pool = raw;
  enum { ROWS = 1500, OUT = 70, IN = 300 };
  test_layer layer;
  layer_create(&layer, VLM_DTYPE_BF16, OUT, IN, true, 77);
  test_random random = {8};
  float *x = malloc((size_t)ROWS * IN * sizeof(float));
  float *batch = malloc((size_t)ROWS * OUT * sizeof(float)), *threaded = malloc((size_t)ROWS * OUT * sizeof(float));
  float row[OUT];
  test_random_fill(&random, x, (int64_t)ROWS * IN, -2.0f, 2.0f);
  CHECK_OK(cpu_linear(NULL, &layer.weights, x, ROWS, batch));
  CHECK_OK(cpu_linear(pool, &layer.weights, x, ROWS, threaded));
  CHECK(test_bits_equal(batch, threaded, (int64_t)ROWS * OUT));
  int mismatched = 0;
  for (int64_t t = 0; t < ROWS; t += 7) {
    CHECK_OK(cpu_linear(NULL, &layer.weights, x + t * IN, 1, row));
    if (!test_bits_equal(row, batch + t * OUT, OUT)) mismatched++;
  }
  if (mismatched) fprintf(stderr, "  path %s: %d rows differ from their own call\n", cpu_kernel_path_name(path), mismatched);
  CHECK_INT_EQ(mismatched, 0);
  free(x), free(batch), free(threaded);
  layer_release(&layer);
}

static void linear_rows_beyond_one_block_match_their_own_call(void) {
  vlm_thread_pool *pool = NULL;
  CHECK_OK(vlm_thread_pool_create(3, NULL, &pool));
  for_each_path(check_row_blocks, pool);
  vlm_thread_pool_release(pool);
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

/* The micro-kernel itself against the contract spelled out in scalar code:
 * every path, dtype, row count 1..6, width (whole and partial vectors),
 * weight step, a resumed chain and a bias. */
static void reference_tile(const cpu_gemm_tile *t, const float *w_values, int rows, float *out) {
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < t->cols; c++) {
      float acc = t->resume ? t->out[r * t->out_stride + c] : 0.0f;
      for (int64_t k = 0; k < t->k_count; k++) acc = fmaf(t->x[r * t->x_stride + k], w_values[k * t->w_step + c], acc);
      out[r * t->out_stride + c] = t->bias ? acc + t->bias[c] : acc;
    }
}

static void gemm_tile_follows_the_contract_on_every_path(void) {
  enum { MAX_K = 131, X_STRIDE = 140, OUT_STRIDE = 70 };
  static float x[CPU_GEMM_MAX_ROWS * X_STRIDE], w_values[MAX_K * 80], bias[64];
  /* f32-sized: test_store_as may store any of the three dtypes. */
  static float w_stored[MAX_K * 80];
  static float initial[CPU_GEMM_MAX_ROWS * OUT_STRIDE], expected[CPU_GEMM_MAX_ROWS * OUT_STRIDE],
      got[CPU_GEMM_MAX_ROWS * OUT_STRIDE];
  test_random random = {17};
  test_random_fill(&random, x, CPU_GEMM_MAX_ROWS * X_STRIDE, -2.0f, 2.0f);
  test_random_fill(&random, bias, 64, -1.0f, 1.0f);
  test_random_fill(&random, initial, CPU_GEMM_MAX_ROWS * OUT_STRIDE, -4.0f, 4.0f);
  const int widths[] = {1, 7, 8, 15, 16, 17, 33, 48, 63, 64};
  const int64_t ks[] = {1, 5, 64, MAX_K};
  int failures = 0;
  for (size_t d = 0; d < 3; d++) {
    test_random_fill(&random, w_values, MAX_K * 80, -1.0f, 1.0f);
    const void *w = w_values;
    if (weight_dtypes[d] != VLM_DTYPE_F32) {
      test_store_as(weight_dtypes[d], w_values, MAX_K * 80, w_stored);
      w = w_stored;
    }
    for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++) {
      if (!test_force_kernel_path((cpu_kernel_path)path)) continue;
      cpu_gemm_kernel kernel = cpu_gemm_select(weight_dtypes[d]);
      for (int rows = 1; rows <= CPU_GEMM_MAX_ROWS; rows++)
        for (size_t c = 0; c < sizeof(widths) / sizeof(widths[0]); c++)
          for (size_t k = 0; k < sizeof(ks) / sizeof(ks[0]); k++)
            for (int variant = 0; variant < 4; variant++) {
              /* bf16/f16 weights are whole panels (step 64); f32 ones also
               * at a step of 80, as attention's values are read */
              int64_t step = weight_dtypes[d] == VLM_DTYPE_F32 && (variant & 1) ? 80 : 64;
              cpu_gemm_tile tile = {x, X_STRIDE, w, step, ks[k], widths[c], got, OUT_STRIDE,
                                    (variant & 2) != 0, variant == 3 ? bias : NULL};
              memcpy(got, initial, sizeof(got));
              memcpy(expected, initial, sizeof(expected));
              cpu_gemm_tile reference = tile;
              reference.out = initial;
              reference_tile(&reference, w_values, rows, expected);
              kernel(&tile, rows);
              if (!test_bits_equal(got, expected, CPU_GEMM_MAX_ROWS * OUT_STRIDE) && failures++ < 5)
                fprintf(stderr, "  path %s dtype %s rows %d cols %d k %lld variant %d differs\n",
                        cpu_kernel_path_name((cpu_kernel_path)path), vlm_dtype_name(weight_dtypes[d]), rows,
                        widths[c], (long long)ks[k], variant);
            }
    }
  }
  cpu_kernel_path_force(CPU_KERNEL_PATH_COUNT);
  CHECK_INT_EQ(failures, 0);
}

static void dot_follows_the_written_contract(void) {
  test_random random = {5};
  float a[77], b[77];
  test_random_fill(&random, a, 77, -1.0f, 1.0f);
  test_random_fill(&random, b, 77, -1.0f, 1.0f);
  float expected = 0.0f;
  for (int k = 0; k < 77; k++) expected = fmaf(a[k], b[k], expected);
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

/* The bounds vlm bench quotes fractions of exist on every path the CPU can
 * run (the FMA probe was AVX-512 only, so an AVX2 machine reported 0), and
 * on no path it cannot. Values are not checked: speed is never asserted. */
static void machine_probes_work_on_every_path(void) {
  enum { BYTES = 1 << 20 };
  void *data = vlm_allocate(NULL, BYTES, 64);
  memset(data, 1, BYTES);
  for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++) {
    bool supported = cpu_kernel_path_supported((cpu_kernel_path)path);
    double peak = cpu_measure_fma_peak_gflops(NULL, (cpu_kernel_path)path);
    double read = cpu_measure_read_gb_per_s(NULL, (cpu_kernel_path)path, data, BYTES, 1);
    fprintf(stderr, "  %s: fma peak %.1f GFLOP/s, read %.1f GB/s (1 thread, noisy)\n",
            cpu_kernel_path_name((cpu_kernel_path)path), peak, read);
    CHECK(supported ? peak > 0 && read > 0 : peak == 0 && read == 0);
  }
  vlm_release(NULL, data);
}

/* The mapping of /proc/self/smaps that holds `address` has the VmFlag
 * `flag` ("hg": advised as huge pages). */
static bool mapping_has_flag(const void *address, const char *flag) {
  FILE *smaps = fopen("/proc/self/smaps", "r");
  if (!smaps) return false;
  char line[512];
  bool inside = false, found = false;
  uintptr_t at = (uintptr_t)address;
  while (fgets(line, sizeof(line), smaps)) {
    unsigned long begin, end;
    if (sscanf(line, "%lx-%lx ", &begin, &end) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      inside = at >= begin && at < end;
      continue;
    }
    if (inside && strncmp(line, "VmFlags:", 8) == 0) {
      char padded[8];
      snprintf(padded, sizeof(padded), " %s", flag);
      found = strstr(line, padded) != NULL;
      break;
    }
  }
  fclose(smaps);
  return found;
}

/* Packed panels that decode streams from memory are 2 MiB-aligned and
 * advised as transparent huge pages (a GEMV from DRAM ran ~10% faster), and
 * small ones stay plain allocations. Where the kernel has no transparent
 * huge pages the advice cannot show, and only the alignment is checked. */
static void large_panels_are_huge_page_backed(void) {
  int64_t out = 4864, in = 896;
  uint16_t *weights = calloc((size_t)(out * in), sizeof(uint16_t));
  CHECK(weights != NULL);
  cpu_linear_weights w = {VLM_DTYPE_BF16, weights, NULL, out, in};
  cpu_packed_linear *packed = NULL;
  CHECK_OK(cpu_linear_pack(NULL, &w, &packed));
  CHECK((uintptr_t)packed->panels % (2u << 20) == 0);
  FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  char mode[128] = "";
  if (thp) {
    if (!fgets(mode, sizeof(mode), thp)) mode[0] = '\0';
    fclose(thp);
  }
  if (strstr(mode, "[always]") || strstr(mode, "[madvise]")) CHECK(mapping_has_flag(packed->panels, "hg"));
  else printf("  transparent huge pages unavailable (%s): alignment checked only\n", thp ? "never" : "no sysfs");
  cpu_packed_linear_release(packed);
  /* A small layer: an ordinary allocation, no 2 MiB slack. */
  cpu_linear_weights small = {VLM_DTYPE_BF16, weights, NULL, 64, 64};
  CHECK_OK(cpu_linear_pack(NULL, &small, &packed));
  CHECK(packed->panels != NULL);
  cpu_packed_linear_release(packed);
  free(weights);
}

TEST_MAIN(TEST(features_are_consistent), TEST(machine_probes_work_on_every_path),
          TEST(gemm_tile_follows_the_contract_on_every_path), TEST(dot_follows_the_written_contract),
          TEST(dot_is_bit_identical_across_paths),
          TEST(linear_matches_float64_reference),
          TEST(linear_error_against_unrounded_weights_is_the_dtype_rounding),
          TEST(linear_is_bit_identical_across_rows_threads_and_paths),
          TEST(linear_rows_beyond_one_block_match_their_own_call),
          TEST(linear_refuses_bad_arguments), TEST(large_panels_are_huge_page_backed))
