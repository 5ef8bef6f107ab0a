/* Micro-benchmark of the cpu kernels on Qwen2-0.5B and CLIP-L shapes, each
 * quoted as a fraction of a bound measured in the same run on the same
 * path: GEMV (decode) against a plain read of the same bytes, GEMM and
 * attention (prefill, encoders) against the FMA peak, batched GEMV against
 * the roofline max(bytes / read, flops / peak).
 *
 *   vlm-kernels-bench [threads] [repeats] [OUTxIN | ROWSxOUTxIN | attention]
 *
 * Small weight matrices are replicated past the L3 size and visited in turn,
 * so decode numbers are DRAM numbers, as in a real model whose layers do not
 * fit in cache. Reports the best of `repeats` runs (others may be using the
 * machine). VLM_CPU_PATH=portable|avx2|avx512 picks a path;
 * VLM_BENCH_CLOCK=cpu measures CPU time instead of wall time (below);
 * VLM_BENCH_GEMM_DRAM=1 replicates GEMM weights past L3 too. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/cpu_quant.h"
#include "core/alloc.h"
#include "core/thread_pool.h"

/* VLM_BENCH_CLOCK=cpu times everything (kernels and the FMA peak alike) in
 * process CPU time per thread instead of wall time: on a machine shared
 * with other jobs, time spent descheduled then counts for neither side of a
 * ratio. */
static bool cpu_clock;
static int bench_threads = 1;

static double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_seconds(void) {
  if (!cpu_clock) return wall_seconds();
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9) / bench_threads;
}

static void fail(vlm_status status) {
  if (!status) return;
  fprintf(stderr, "%s\n", vlm_status_message(status));
  exit(1);
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

static float *allocate_inputs(int64_t count) {
  float *x = vlm_allocate(NULL, (size_t)count * sizeof(float), 64);
  for (int64_t i = 0; i < count; i++) x[i] = (float)(i % 11) * 0.125f - 0.5f;
  return x;
}

static double fma_peak(vlm_thread_pool *pool) {
  double best = 0;
  for (int r = 0; r < 20; r++) {
    double wall = wall_seconds(), start = now_seconds();
    double gflops = cpu_measure_fma_peak_gflops(pool, cpu_kernel_path_active());
    /* the probe times itself on the wall clock: rescale to ours */
    gflops *= (wall_seconds() - wall) / (now_seconds() - start);
    if (gflops > best) best = gflops;
  }
  return best;
}

/* Decode: `rows` rows (1 = one slot) against `copies` packed copies of an
 * OUT x IN bf16 matrix (at least 256 MiB in all, so each call reads DRAM). */
/* VLM_BENCH_QUANT=q8|q4: GEMVs of quantized weights (cpu_quant.h, groups
 * of 32) instead of bf16, their bytes the quantized ones. */
static cpu_quant_format bench_quant(void) {
  const char *name = getenv("VLM_BENCH_QUANT");
  return !name ? CPU_QUANT_NONE : strcmp(name, "q8") == 0 ? CPU_QUANT_Q8 : strcmp(name, "q4") == 0 ? CPU_QUANT_Q4
                                                                                                   : CPU_QUANT_NONE;
}

static void bench_gemv(vlm_thread_pool *pool, int64_t rows, int64_t out, int64_t in, int repeats, double peak) {
  cpu_quant_format quant = bench_quant();
  int64_t matrix_bytes = quant ? cpu_quant_block_bytes(quant, CPU_QUANT_GROUP_SIZE) * ((out + 63) / 64) *
                                     ((in + CPU_QUANT_GROUP_SIZE - 1) / CPU_QUANT_GROUP_SIZE)
                               : out * in * 2;
  int copies = (int)((256ll << 20) / matrix_bytes) + 1;
  uint16_t *weights = allocate_random_bf16((size_t)(out * in));
  cpu_packed_linear **packed = calloc((size_t)copies, sizeof(*packed));
  for (int c = 0; c < copies; c++) {
    cpu_linear_weights w = {VLM_DTYPE_BF16, weights, NULL, out, in};
    if (quant) fail(cpu_quant_pack(pool, &w, quant, CPU_QUANT_GROUP_SIZE, &packed[c]));
    else fail(cpu_linear_pack(pool, &w, &packed[c]));
  }
  const char *label = quant ? cpu_quant_format_name(quant) : "bf16";
  vlm_release(NULL, weights);
  float *x = allocate_inputs(rows * in);
  float *y = vlm_allocate(NULL, (size_t)(rows * out) * sizeof(float), 64);
  double best = 1e9, bandwidth = 0;
  for (int r = 0; r < repeats; r++) {
    double start = now_seconds();
    for (int c = 0; c < copies; c++) fail(cpu_linear_packed(pool, packed[c], x, rows, y));
    double elapsed = (now_seconds() - start) / copies;
    if (elapsed < best) best = elapsed;
    /* the yardstick alternates with the kernel: a plain read of the same
     * panels in the same order */
    start = now_seconds();
    for (int c = 0; c < copies; c++)
      cpu_measure_read_gb_per_s(pool, cpu_kernel_path_active(), packed[c]->panels,
                                (int64_t)cpu_packed_linear_bytes(packed[c]), 1);
    double gb = (double)matrix_bytes * copies / (now_seconds() - start) / 1e9;
    if (gb > bandwidth) bandwidth = gb;
  }
  double gb_per_s = (double)matrix_bytes / best / 1e9;
  if (rows == 1) {
    printf("gemv %s %6lld x %4lld: %8.1f us  %6.1f GB/s  (plain read %5.1f GB/s: %3.0f%%)\n", label, (long long)out,
           (long long)in, best * 1e6, gb_per_s, bandwidth, 100.0 * gb_per_s / bandwidth);
  } else {
    double flops = 2.0 * (double)rows * (double)out * (double)in;
    double bound = (double)matrix_bytes / (bandwidth * 1e9);
    if (flops / (peak * 1e9) > bound) bound = flops / (peak * 1e9);
    printf("gemv %s T=%lld %6lld x %4lld: %8.1f us  %6.1f GB/s %6.1f GFLOP/s (roofline %.1f us: %3.0f%%)\n",
           label, (long long)rows, (long long)out, (long long)in, best * 1e6, gb_per_s, flops / best / 1e9, bound * 1e6,
           100.0 * bound / best);
  }
  for (int c = 0; c < copies; c++) cpu_packed_linear_release(packed[c]);
  free(packed);
  vlm_release(NULL, x), vlm_release(NULL, y);
}

static void bench_gemm(vlm_thread_pool *pool, vlm_dtype dtype, int64_t rows, int64_t out, int64_t in, int repeats,
                       double peak) {
  void *weights;
  if (dtype == VLM_DTYPE_BF16) {
    weights = allocate_random_bf16((size_t)(out * in));
  } else {
    float *values = vlm_allocate(NULL, (size_t)(out * in) * sizeof(float), 64);
    for (int64_t i = 0; i < out * in; i++) values[i] = (float)(i % 13) * 0.1f - 0.6f;
    weights = values;
  }
  cpu_linear_weights w = {dtype, weights, NULL, out, in};
  /* VLM_BENCH_GEMM_DRAM=1: copies past the L3 size visited in turn, as a
   * model's layers are (each call's weights come from DRAM). */
  const char *dram = getenv("VLM_BENCH_GEMM_DRAM");
  int64_t matrix_bytes = out * in * (dtype == VLM_DTYPE_F32 ? 4 : 2);
  int copies = dram && strcmp(dram, "1") == 0 ? (int)((256ll << 20) / matrix_bytes) + 1 : 1;
  cpu_packed_linear **packed = calloc((size_t)copies, sizeof(*packed));
  for (int c = 0; c < copies; c++) fail(cpu_linear_pack(pool, &w, &packed[c]));
  float *x = allocate_inputs(rows * in);
  float *y = vlm_allocate(NULL, (size_t)(rows * out) * sizeof(float), 64);
  double best = 1e9;
  for (int r = 0; r < repeats; r++) {
    double start = now_seconds();
    for (int c = 0; c < copies; c++) fail(cpu_linear_packed(pool, packed[c], x, rows, y));
    double elapsed = (now_seconds() - start) / copies;
    if (elapsed < best) best = elapsed;
  }
  double gflops = 2.0 * (double)rows * (double)out * (double)in / best / 1e9;
  printf("gemm %-4s T=%lld %5lld x %5lld%s: %8.2f ms  %6.1f GFLOP/s (%3.0f%% of peak)\n", vlm_dtype_name(dtype),
         (long long)rows, (long long)out, (long long)in, copies > 1 ? " (DRAM)" : "", best * 1e3, gflops,
         100.0 * gflops / peak);
  for (int c = 0; c < copies; c++) cpu_packed_linear_release(packed[c]);
  free(packed);
  vlm_release(NULL, weights), vlm_release(NULL, x), vlm_release(NULL, y);
}

/* Attention of T queries on themselves (past 0): causal (a decoder's
 * prefill) or not (an encoder). FLOPs: scores and weighted sums over the
 * visible keys. */
static void bench_attention(vlm_thread_pool *pool, const char *label, int64_t t, int64_t heads, int64_t kv_heads,
                            int64_t d, bool causal, int repeats, double peak) {
  float *q = allocate_inputs(t * heads * d), *k = allocate_inputs(t * kv_heads * d);
  float *v = allocate_inputs(t * kv_heads * d), *out = allocate_inputs(t * heads * d);
  cpu_attention_shape shape = {t, 0, heads, kv_heads, d, 0.125f, 0.0f, causal, 0, NULL, 0};
  double best = 1e9;
  for (int r = 0; r < repeats; r++) {
    double start = now_seconds();
    fail(cpu_attention(pool, &shape, q, k, v, out));
    double elapsed = now_seconds() - start;
    if (elapsed < best) best = elapsed;
  }
  double pairs = causal ? (double)t * (double)(t + 1) / 2 : (double)t * (double)t;
  double gflops = 2.0 * 2.0 * pairs * (double)heads * (double)d / best / 1e9;
  printf("attention %-22s T=%lld heads %lld/%lld d %lld: %7.2f ms  %6.1f GFLOP/s (%3.0f%% of peak)\n", label,
         (long long)t, (long long)heads, (long long)kv_heads, (long long)d, best * 1e3, gflops,
         100.0 * gflops / peak);
  vlm_release(NULL, q), vlm_release(NULL, k), vlm_release(NULL, v), vlm_release(NULL, out);
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  int repeats = argc > 2 ? atoi(argv[2]) : 5;
  vlm_thread_pool *pool = NULL;
  fail(vlm_thread_pool_create(threads, NULL, &pool));
  const char *clock_name = getenv("VLM_BENCH_CLOCK");
  cpu_clock = clock_name && strcmp(clock_name, "cpu") == 0;
  bench_threads = vlm_thread_pool_size(pool);
  char isa[160];
  cpu_features_describe(isa, sizeof(isa));
  double peak = fma_peak(pool);
  printf("path %s (%s), %d threads, best of %d, %s time; fma peak %.1f GFLOP/s\n",
         cpu_kernel_path_name(cpu_kernel_path_active()), isa, vlm_thread_pool_size(pool), repeats,
         cpu_clock ? "cpu" : "wall", peak);
  if (argc > 3 && strncmp(argv[3], "attention", 9) == 0) {
    if (strcmp(argv[3], "attention-clip") != 0)
      bench_attention(pool, "(Qwen2 prefill, causal)", 512, 14, 2, 64, true, repeats, peak);
    if (strcmp(argv[3], "attention-causal") != 0 && strcmp(argv[3], "attention-long") != 0)
      bench_attention(pool, "(CLIP-L, full)", 577, 16, 16, 64, false, repeats, peak);
    if (strcmp(argv[3], "attention-long") == 0) /* Qwen2-VL-2B tower, a 1280x960 photo */
      bench_attention(pool, "(Qwen2-VL vision, full)", 6256, 16, 16, 80, false, repeats, peak);
  } else if (argc > 3) { /* one shape: OUTxIN (GEMV, bf16) or ROWSxOUTxIN (GEMM, bf16) */
    long long rows = 0, out = 0, in = 0;
    int fields = sscanf(argv[3], "%lldx%lldx%lld", &rows, &out, &in);
    if (fields == 2) in = out, out = rows, rows = 1;
    if ((fields != 2 && fields != 3) || rows <= 0 || out <= 0 || in <= 0) {
      fprintf(stderr, "usage: vlm-kernels-bench [threads] [repeats] [OUTxIN | ROWSxOUTxIN | attention]\n");
      return 2;
    }
    if (rows <= 32) bench_gemv(pool, rows, out, in, repeats, peak);
    else bench_gemm(pool, VLM_DTYPE_BF16, rows, out, in, repeats, peak);
  } else {
    bench_gemv(pool, 1, 4864, 896, repeats, peak);
    bench_gemv(pool, 1, 896, 4864, repeats, peak);
    bench_gemv(pool, 1, 151936, 896, repeats, peak);
    bench_gemv(pool, 8, 4864, 896, repeats, peak);
    bench_gemv(pool, 8, 896, 4864, repeats, peak);
    bench_gemm(pool, VLM_DTYPE_BF16, 512, 4864, 896, repeats, peak);
    bench_gemm(pool, VLM_DTYPE_BF16, 512, 896, 4864, repeats, peak);
    bench_gemm(pool, VLM_DTYPE_F32, 512, 4864, 896, repeats, peak);
    bench_gemm(pool, VLM_DTYPE_F16, 577, 4096, 1024, repeats, peak);
    bench_gemm(pool, VLM_DTYPE_F16, 577, 1024, 4096, repeats, peak);
    bench_attention(pool, "(Qwen2 prefill, causal)", 512, 14, 2, 64, true, repeats, peak);
    bench_attention(pool, "(CLIP-L, full)", 577, 16, 16, 64, false, repeats, peak);
  }
  printf("fma peak after: %.1f GFLOP/s\n", fma_peak(pool));
  vlm_thread_pool_release(pool);
  return 0;
}
