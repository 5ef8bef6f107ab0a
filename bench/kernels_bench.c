/* Micro-benchmark of the cpu kernels: GEMV (decode) read bandwidth and GEMM
 * (prefill) FLOP rate of cpu_linear on Qwen2-0.5B shapes, plus a plain read
 * of the same bytes as the bandwidth yardstick.
 *
 *   kernels_bench [threads] [repeats]
 *
 * Small weight matrices are replicated past the L3 size and visited in turn,
 * so decode numbers are DRAM numbers, as in a real model whose layers do not
 * fit in cache. Reports the best of `repeats` runs (others may be using the
 * machine). VLM_CPU_PATH=portable|avx2|avx512 picks a path. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <immintrin.h>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/cpu_kernels.h"
#include "core/alloc.h"
#include "core/thread_pool.h"

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *allocate_random_bf16(size_t count) {
  uint16_t *data = vlm_allocate(NULL, count * sizeof(uint16_t), 64);
  if (!data) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  uint32_t state = 12345;
  for (size_t i = 0; i < count; i++) {
    state = state * 1664525u + 1013904223u;
    /* random values in about [-1, 1]: sign, exponent 0x7e/0x7f, mantissa */
    data[i] = (uint16_t)(((state >> 16) & 0x807f) | 0x3f00);
  }
  return data;
}

typedef struct read_job {
  const uint8_t *data;
  int64_t bytes;
  uint64_t sums[64 * 8];
} read_job;

/* Sums 4 KiB pages [begin, end) with four independent vector accumulators, so
 * the loop is limited by memory, not by a chain of additions. */
static void read_worker(void *context, int64_t begin, int64_t end, int worker) {
  read_job *job = context;
  typedef uint64_t vector __attribute__((vector_size(32)));
  const vector *words = (const vector *)(job->data + begin * 4096);
  int64_t count = (end - begin) * 4096 / (int64_t)sizeof(vector);
  vector sum[4] = {{0}, {0}, {0}, {0}};
  for (int64_t i = 0; i + 4 <= count; i += 4)
    for (int j = 0; j < 4; j++) sum[j] += words[i + j];
  vector total = sum[0] + sum[1] + sum[2] + sum[3];
  job->sums[worker * 8] = total[0] + total[1] + total[2] + total[3];
}

/* Plain read bandwidth of `bytes` with all workers (the bound to compare with). */
static double read_bandwidth(vlm_thread_pool *pool, const void *data, int64_t bytes,
                             int repeats) {
  read_job job = {data, bytes, {0}};
  double best = 1e9;
  for (int r = 0; r < repeats; r++) {
    double start = now_seconds();
    vlm_thread_pool_parallel_for(pool, bytes / 4096, 64, read_worker, &job);
    double elapsed = now_seconds() - start;
    if (elapsed < best) best = elapsed;
  }
  return (double)bytes / best / 1e9;
}

static void bench_gemv(vlm_thread_pool *pool, int64_t out, int64_t in, int repeats) {
  int64_t matrix_bytes = out * in * 2;
  /* At least 256 MiB of distinct weights, so each call reads from DRAM. */
  int copies = (int)((256ll << 20) / matrix_bytes) + 1;
  uint16_t *weights = allocate_random_bf16((size_t)(out * in) * (size_t)copies);
  float *x = vlm_allocate(NULL, (size_t)in * sizeof(float), 64);
  float *y = vlm_allocate(NULL, (size_t)out * sizeof(float), 64);
  for (int64_t i = 0; i < in; i++) x[i] = (float)(i % 7) * 0.25f - 0.75f;
  double best = 1e9;
  for (int r = 0; r < repeats; r++) {
    double start = now_seconds();
    for (int c = 0; c < copies; c++) {
      cpu_linear_weights w = {VLM_DTYPE_BF16, weights + (size_t)c * (size_t)(out * in),
                              NULL, out, in};
      vlm_status status = cpu_linear(pool, &w, x, 1, y);
      if (status) {
        fprintf(stderr, "%s\n", vlm_status_message(status));
        exit(1);
      }
    }
    double elapsed = (now_seconds() - start) / copies;
    if (elapsed < best) best = elapsed;
  }
  double bandwidth = read_bandwidth(pool, weights, matrix_bytes * copies, repeats);
  printf("gemv bf16 %6lld x %4lld: %8.1f us  %6.1f GB/s  (plain read of the same "
         "bytes %5.1f GB/s: %3.0f%%)\n",
         (long long)out, (long long)in, best * 1e6, matrix_bytes / best / 1e9, bandwidth,
         100.0 * matrix_bytes / best / 1e9 / bandwidth);
  vlm_release(NULL, weights), vlm_release(NULL, x), vlm_release(NULL, y);
}

static void bench_gemm(vlm_thread_pool *pool, vlm_dtype dtype, int64_t rows, int64_t out,
                       int64_t in, int repeats) {
  void *weights;
  if (dtype == VLM_DTYPE_BF16) {
    weights = allocate_random_bf16((size_t)(out * in));
  } else {
    float *values = vlm_allocate(NULL, (size_t)(out * in) * sizeof(float), 64);
    for (int64_t i = 0; i < out * in; i++) values[i] = (float)(i % 13) * 0.1f - 0.6f;
    weights = values;
  }
  float *x = vlm_allocate(NULL, (size_t)(rows * in) * sizeof(float), 64);
  float *y = vlm_allocate(NULL, (size_t)(rows * out) * sizeof(float), 64);
  for (int64_t i = 0; i < rows * in; i++) x[i] = (float)(i % 11) * 0.125f - 0.5f;
  cpu_linear_weights w = {dtype, weights, NULL, out, in};
  double best = 1e9;
  for (int r = 0; r < repeats; r++) {
    double start = now_seconds();
    vlm_status status = cpu_linear(pool, &w, x, rows, y);
    if (status) {
      fprintf(stderr, "%s\n", vlm_status_message(status));
      exit(1);
    }
    double elapsed = now_seconds() - start;
    if (elapsed < best) best = elapsed;
  }
  double flops = 2.0 * (double)rows * (double)out * (double)in;
  printf("gemm %-4s T=%lld %5lld x %5lld: %8.2f ms  %6.1f GFLOP/s\n",
         vlm_dtype_name(dtype), (long long)rows, (long long)out, (long long)in,
         best * 1e3, flops / best / 1e9);
  vlm_release(NULL, weights), vlm_release(NULL, x), vlm_release(NULL, y);
}

static void bench_fma_peak(vlm_thread_pool *pool, int repeats) {
  if (!cpu_features_detect()->avx512) return;
  double best = 0;
  for (int r = 0; r < repeats; r++) {
    double gflops = cpu_measure_fma_peak_gflops(pool);
    if (gflops > best) best = gflops;
  }
  printf("fma peak (zmm, %d workers): %6.1f GFLOP/s\n", vlm_thread_pool_size(pool), best);
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  int repeats = argc > 2 ? atoi(argv[2]) : 5;
  vlm_thread_pool *pool = NULL;
  vlm_status status = vlm_thread_pool_create(threads, NULL, &pool);
  if (status) {
    fprintf(stderr, "%s\n", vlm_status_message(status));
    return 1;
  }
  printf("path %s, %d threads, best of %d\n", cpu_kernel_path_name(cpu_kernel_path_active()),
         vlm_thread_pool_size(pool), repeats);
  if (argc > 3) { /* one shape: OUTxIN (GEMV, bf16) or ROWSxOUTxIN (GEMM, bf16) */
    long long rows = 0, out = 0, in = 0;
    int fields = sscanf(argv[3], "%lldx%lldx%lld", &rows, &out, &in);
    if (fields == 2) in = out, out = rows, rows = 1;
    if ((fields != 2 && fields != 3) || rows <= 0 || out <= 0 || in <= 0) {
      fprintf(stderr, "usage: vlm-kernels-bench [threads] [repeats] [OUTxIN | ROWSxOUTxIN]\n");
      return 2;
    }
    if (rows == 1) bench_gemv(pool, out, in, repeats);
    else bench_gemm(pool, VLM_DTYPE_BF16, rows, out, in, repeats);
    vlm_thread_pool_release(pool);
    return 0;
  }
  bench_fma_peak(pool, repeats);
  bench_gemv(pool, 4864, 896, repeats);
  bench_gemv(pool, 896, 4864, repeats);
  bench_gemv(pool, 151936, 896, repeats);
  bench_gemm(pool, VLM_DTYPE_BF16, 512, 4864, 896, repeats);
  bench_gemm(pool, VLM_DTYPE_BF16, 512, 896, 4864, repeats);
  bench_gemm(pool, VLM_DTYPE_F32, 512, 4864, 896, repeats);
  vlm_thread_pool_release(pool);
  return 0;
}
