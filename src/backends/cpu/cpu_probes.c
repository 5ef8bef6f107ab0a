/* The machine's own limits, measured in the same run as a benchmark so that
 * its numbers can be quoted as fractions of them: the FMA peak (prefill and
 * encoders are FMA-bound) and the read bandwidth (decode reads every weight
 * once per step). Each probe runs in the instructions of the kernel path it
 * is asked about, so an AVX2 machine (or VLM_CPU_PATH=avx2) gets an AVX2
 * bound, not a zero. */
#include "backends/cpu/cpu_internal.h"

#include <math.h>
#include <time.h>

#if CPU_HAVE_X86_PATHS
#include <immintrin.h>
#endif

#include "backends/cpu/cpu_kernels.h"
#include "core/thread_pool.h"

/* 12 independent chains: more than latency x issue width on every x86 core
 * we know (4 cycles x 2 pipes), so the loop is bound by fma throughput. */
#define FMA_CHAINS 12
#define FMA_ITERATIONS 2000000
/* A few milliseconds per call, so that callers can take the best of many
 * calls: on a shared machine a short window is more often undisturbed, and
 * a kernel timed as the best of short runs must be compared with a peak
 * timed the same way. libm's fmaf is a call per element: far fewer
 * iterations take as long. */
#define PORTABLE_FMA_ITERATIONS 200000

static double seconds_between(const struct timespec *start, const struct timespec *end) {
  return (double)(end->tv_sec - start->tv_sec) + (double)(end->tv_nsec - start->tv_nsec) * 1e-9;
}

typedef struct fma_probe {
  cpu_kernel_path path;
  float sink[VLM_THREAD_POOL_MAX_THREADS];
} fma_probe;

#if CPU_HAVE_X86_PATHS
static CPU_TARGET_AVX512 float avx512_fma_loop(int64_t iterations) {
  __m512 accumulators[FMA_CHAINS], scale = _mm512_set1_ps(0.999f), add = _mm512_set1_ps(0.001f);
  for (int j = 0; j < FMA_CHAINS; j++) accumulators[j] = _mm512_set1_ps((float)j);
  for (int64_t i = 0; i < iterations; i++)
#pragma GCC unroll 12
    for (int j = 0; j < FMA_CHAINS; j++) accumulators[j] = _mm512_fmadd_ps(accumulators[j], scale, add);
  float sum = 0;
  for (int j = 0; j < FMA_CHAINS; j++) sum += _mm512_reduce_add_ps(accumulators[j]);
  return sum;
}

static CPU_TARGET_AVX2 float avx2_fma_loop(int64_t iterations) {
  __m256 accumulators[FMA_CHAINS], scale = _mm256_set1_ps(0.999f), add = _mm256_set1_ps(0.001f);
  for (int j = 0; j < FMA_CHAINS; j++) accumulators[j] = _mm256_set1_ps((float)j);
  for (int64_t i = 0; i < iterations; i++)
#pragma GCC unroll 12
    for (int j = 0; j < FMA_CHAINS; j++) accumulators[j] = _mm256_fmadd_ps(accumulators[j], scale, add);
  float lanes[8], sum = 0;
  for (int j = 0; j < FMA_CHAINS; j++) {
    _mm256_storeu_ps(lanes, accumulators[j]);
    for (int l = 0; l < 8; l++) sum += lanes[l];
  }
  return sum;
}
#endif

static float portable_fma_loop(int64_t iterations) {
  float accumulators[FMA_CHAINS];
  for (int j = 0; j < FMA_CHAINS; j++) accumulators[j] = (float)j;
  for (int64_t i = 0; i < iterations; i++)
    for (int j = 0; j < FMA_CHAINS; j++) accumulators[j] = fmaf(accumulators[j], 0.999f, 0.001f);
  float sum = 0;
  for (int j = 0; j < FMA_CHAINS; j++) sum += accumulators[j];
  return sum;
}

static void fma_worker(void *context, int64_t begin, int64_t end, int worker) {
  fma_probe *probe = context;
  int64_t iterations = end - begin;
  switch (probe->path) {
#if CPU_HAVE_X86_PATHS
    case CPU_KERNEL_PATH_AVX512: probe->sink[worker] += avx512_fma_loop(iterations); return;
    case CPU_KERNEL_PATH_AVX2: probe->sink[worker] += avx2_fma_loop(iterations); return;
#endif
    default: probe->sink[worker] += portable_fma_loop(iterations); return;
  }
}

double cpu_measure_fma_peak_gflops(vlm_thread_pool *pool, cpu_kernel_path path) {
  if (!cpu_kernel_path_supported(path)) return 0;
  int lanes = path == CPU_KERNEL_PATH_AVX512 ? 16 : path == CPU_KERNEL_PATH_AVX2 ? 8 : 1;
  int64_t iterations = path == CPU_KERNEL_PATH_PORTABLE ? PORTABLE_FMA_ITERATIONS : FMA_ITERATIONS;
  int workers = vlm_thread_pool_size(pool);
  fma_probe probe = {.path = path};
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  vlm_thread_pool_parallel_for(pool, iterations * workers, iterations, fma_worker, &probe);
  clock_gettime(CLOCK_MONOTONIC, &end);
  return 2.0 * lanes * FMA_CHAINS * (double)iterations * workers / seconds_between(&start, &end) / 1e9;
}

/* ---- Read bandwidth ------------------------------------------------------- */

typedef struct read_probe {
  cpu_kernel_path path;
  const char *data;
  uint64_t sink[VLM_THREAD_POOL_MAX_THREADS];
} read_probe;

#define READ_PAGE 4096

#if CPU_HAVE_X86_PATHS
static CPU_TARGET_AVX512 uint64_t avx512_read(const char *data, int64_t bytes) {
  __m512i sums[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                     _mm512_setzero_si512()};
  for (int64_t i = 0; i + 256 <= bytes; i += 256)
    for (int j = 0; j < 4; j++)
      sums[j] = _mm512_add_epi64(sums[j], _mm512_loadu_si512((const void *)(data + i + 64 * j)));
  __m512i total = _mm512_add_epi64(_mm512_add_epi64(sums[0], sums[1]), _mm512_add_epi64(sums[2], sums[3]));
  /* Lanes summed as unsigned: _mm512_reduce_add_epi64 adds signed long
   * longs in C, which overflow (undefined; UBSan stops the test). */
  uint64_t lanes[8], sum = 0;
  _mm512_storeu_si512((void *)lanes, total);
  for (int l = 0; l < 8; l++) sum += lanes[l];
  return sum;
}

static CPU_TARGET_AVX2 uint64_t avx2_read(const char *data, int64_t bytes) {
  __m256i sums[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                     _mm256_setzero_si256()};
  for (int64_t i = 0; i + 128 <= bytes; i += 128)
    for (int j = 0; j < 4; j++)
      sums[j] = _mm256_add_epi64(sums[j], _mm256_loadu_si256((const __m256i *)(data + i + 32 * j)));
  __m256i total = _mm256_add_epi64(_mm256_add_epi64(sums[0], sums[1]), _mm256_add_epi64(sums[2], sums[3]));
  uint64_t lanes[4];
  _mm256_storeu_si256((__m256i *)lanes, total);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}
#endif

static uint64_t portable_read(const char *data, int64_t bytes) {
  const uint64_t *words = (const uint64_t *)(const void *)data;
  uint64_t a = 0, b = 0, c = 0, d = 0;
  for (int64_t i = 0; i + 4 <= bytes / 8; i += 4) {
    a += words[i];
    b += words[i + 1];
    c += words[i + 2];
    d += words[i + 3];
  }
  return a + b + c + d;
}

static void read_worker(void *context, int64_t begin, int64_t end, int worker) {
  read_probe *probe = context;
  const char *data = probe->data + begin * READ_PAGE;
  int64_t bytes = (end - begin) * READ_PAGE;
  switch (probe->path) {
#if CPU_HAVE_X86_PATHS
    case CPU_KERNEL_PATH_AVX512: probe->sink[worker] += avx512_read(data, bytes); return;
    case CPU_KERNEL_PATH_AVX2: probe->sink[worker] += avx2_read(data, bytes); return;
#endif
    default: probe->sink[worker] += portable_read(data, bytes); return;
  }
}

double cpu_measure_read_gb_per_s(vlm_thread_pool *pool, cpu_kernel_path path, const void *data,
                                 int64_t bytes, int passes) {
  if (!cpu_kernel_path_supported(path) || bytes < READ_PAGE || !data) return 0;
  read_probe probe = {.path = path, .data = data};
  double best = 1e30;
  for (int pass = 0; pass < (passes > 0 ? passes : 1); pass++) {
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    vlm_thread_pool_parallel_for(pool, bytes / READ_PAGE, 64, read_worker, &probe);
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = seconds_between(&start, &end);
    if (seconds < best) best = seconds;
  }
  return (double)(bytes / READ_PAGE * READ_PAGE) / best / 1e9;
}
