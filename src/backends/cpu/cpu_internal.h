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

#include <stdint.h>

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

/* acc[i] = fma(scale, values[i], acc[i]) for i < count: the same fma per
 * element on every path (attention's weighted sum of values). */
void cpu_fma_accumulate(float *acc, float scale, const float *values,
                        int64_t count);

/* out[j] = cpu_dot(a, b + j * b_stride, length) for j < row_count, bit for
 * bit, with the query loaded once per tile of rows (attention scores). */
void cpu_dot_rows(const float *a, const float *b, int64_t b_stride, int64_t row_count,
                  int64_t length, float *out);

/* out[i] = sum over j in increasing order of fma(weights[j], values[j *
 * stride + i], .) from 0: exactly cpu_fma_accumulate row after row into a
 * zeroed out, with the accumulators kept in registers (attention's
 * weighted sum of values). */
void cpu_weighted_sum(float *out, const float *weights, const float *values, int64_t stride,
                      int64_t count, int64_t width);

#endif
