/* Shared by the cpu backend's .c files only: target attributes for the SIMD
 * paths and the dispatched building blocks that several operators use.
 *
 * Included first by every kernel file, because of the pragma below: a
 * compiler allowed to contract a * b + c into one fma (GCC's default for
 * GNU C once the target has FMA, e.g. under -march=native, and inside our
 * own AVX2/AVX-512 functions) would round differently in one path than in
 * another. Every fma in the kernels is written out explicitly instead. */
#ifndef VLM_BACKENDS_CPU_CPU_INTERNAL_H
#define VLM_BACKENDS_CPU_CPU_INTERNAL_H

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <stdbool.h>
#include <stdint.h>

#include "core/tensor.h"

#include "backends/cpu/cpu_features.h"

#if defined(__x86_64__)
#define CPU_HAVE_X86_PATHS 1
#define CPU_TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))
#define CPU_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))
#else
#define CPU_HAVE_X86_PATHS 0
#endif

/* exp in IEEE-exact steps (cpu_exp.c): the same bits on every path, within
 * 2 ulp of exp. cpu_exp_many: out[i] = cpu_exp(x[i]) (out may be x). */
float cpu_exp(float x);
void cpu_exp_many(const float *x, float *out, int64_t count);

/* cpu_softmax of x * scale (+ bias): one f32 multiply per entry before the
 * bias, fused into the softmax's first pass (attention's scores). */
void cpu_scaled_softmax(const float *x, float scale, const float *bias, int64_t count, float *out);

/* acc[i] = fma(scale, values[i], acc[i]) for i < count: the same fma per
 * element on every path. */
void cpu_fma_accumulate(float *acc, float scale, const float *values,
                        int64_t count);

/* ---- The micro-kernel (cpu_gemm.c) ---------------------------------------- */

/* One tile: `rows` (1..CPU_GEMM_MAX_ROWS) rows x `cols` (1..CPU_PANEL)
 * outputs; for each (r, c), in increasing k:
 *   acc = fma(x[r * x_stride + k], w[k * w_step + c], acc)
 * from acc = +0, or from out[r * out_stride + c] when `resume` (a chain
 * parked in memory between calls continues with the same bits); then
 * out[...] = acc (+ bias[c] when bias is not NULL, one f32 addition).
 * f32 weights may be read at any width (masked loads); bf16 and f16 ones
 * must be readable as a whole panel of CPU_PANEL columns (packed panels
 * are zero-padded). */
#define CPU_GEMM_MAX_ROWS 8
/* The tile height for many rows (GEMMs, attention): 6 x 64 outputs is 24
 * zmm accumulators, each broadcast input serving 4 fmas. 7 and 8 rows
 * (batched decode, weights read in place: fewer passes over a chunk) run
 * as 32-output groups on AVX-512 and 8-output groups on AVX2. */
#define CPU_GEMM_TILE_ROWS 6

typedef struct cpu_gemm_tile {
  const float *x;
  int64_t x_stride;
  const void *w;
  int64_t w_step;
  int64_t k_count;
  int cols;
  float *out;
  int64_t out_stride;
  bool resume;
  const float *bias;
  /* NULL, or memory to prefetch while the tile runs: at step k the two
   * cache lines at prefetch + 128 k (a bf16 panel's row of 64 weights:
   * decode streams the next chunks of its panels this way, spread over the
   * fmas instead of in bursts that overflow the miss buffers). */
  const char *prefetch;
} cpu_gemm_tile;

typedef void (*cpu_gemm_kernel)(const cpu_gemm_tile *tile, int rows);

/* The active path's kernel for weights of `dtype` (f32, bf16, f16). */
cpu_gemm_kernel cpu_gemm_select(vlm_dtype dtype);

#endif
