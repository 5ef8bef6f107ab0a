/* exp for f32 and the softmax built on it (below). exp is written as a sequence of IEEE operations that each round
 * once (fma, multiply, add, round-to-nearest-integer, exact power-of-two
 * scaling), so the scalar code and the AVX-512 code give the same bits and
 * every kernel path agrees (SPEC 3.5). libm's expf is one call per element
 * and cannot be vectorised to the same bits.
 *
 * Method (Cephes expf): n = rint(x log2 e); r = x - n ln 2 in two fmas
 * (ln 2 split in a high part exact in 9 bits and a low part); exp(r) =
 * 1 + r + r^2 P(r) with P of degree 5; times 2^n as two exact power-of-two
 * factors 2^(n >> 1) and 2^(n - (n >> 1)), so results that are subnormal
 * or overflow round once, in the last multiply. Within 2 ulp of exp over
 * the f32 range (tests/test_kernels.c checks it against double exp).
 * exp(NaN) = NaN, exp(+inf) = +inf, exp(x < -103.98) = 0. */
#include "backends/cpu/cpu_internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if CPU_HAVE_X86_PATHS
#include <immintrin.h>
#endif

#define EXP_HIGH 88.72283935546875f   /* above: +inf */
#define EXP_LOW (-103.97208404541015625f) /* below: 0 */
#define LOG2E 1.44269502162933349609f
#define LN2_HIGH 0.693359375f
#define LN2_LOW (-2.12194440e-4f)
#define P0 1.9875691500e-4f
#define P1 1.3981999507e-3f
#define P2 8.3334519073e-3f
#define P3 4.1665795894e-2f
#define P4 1.6666665459e-1f
#define P5 5.0000001201e-1f

static inline float power_of_two(int32_t k) { /* k in [-126, 127] */
  uint32_t bits = (uint32_t)(k + 127) << 23;
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

float cpu_exp(float x) {
  if (isnan(x)) return x;
  if (x > EXP_HIGH) return INFINITY;
  if (x < EXP_LOW) return 0.0f;
  float n = rintf(x * LOG2E);
  float r = fmaf(n, -LN2_HIGH, x);
  r = fmaf(n, -LN2_LOW, r);
  float p = fmaf(P0, r, P1);
  p = fmaf(p, r, P2);
  p = fmaf(p, r, P3);
  p = fmaf(p, r, P4);
  p = fmaf(p, r, P5);
  float y = fmaf(p, r * r, r) + 1.0f;
  int32_t k = (int32_t)n, half = k >> 1;
  return y * power_of_two(half) * power_of_two(k - half);
}

#if CPU_HAVE_X86_PATHS
/* The polynomial part on in-range lanes: y = 1 + r + r^2 P(r), times 2^n
 * by scalef, which rounds y * 2^n once, as the two exact power-of-two
 * factors of cpu_exp do (the first of them is exact: y is in [0.7, 1.5]
 * and 2^(n >> 1) normal), so the bits are the same. */
static inline __attribute__((always_inline)) CPU_TARGET_AVX512 __m512 avx512_exp_in_range(__m512 in) {
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(in, _mm512_set1_ps(LOG2E)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-LN2_HIGH), in);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(-LN2_LOW), r);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(P0), r, _mm512_set1_ps(P1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(P2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(P3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(P4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(P5));
  __m512 y = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(y, n); /* n is integral: 2^floor(n) = 2^n */
}

static inline __attribute__((always_inline)) CPU_TARGET_AVX512 __m512 avx512_exp(__m512 x) {
  /* Ordered compares: NaN lanes are out of range. Softmax's arguments
   * (v - max <= 0) are nearly always all in range: no blends then. */
  __mmask16 in_range = _mm512_cmp_ps_mask(x, _mm512_set1_ps(EXP_LOW), _CMP_GE_OQ) &
                       _mm512_cmp_ps_mask(x, _mm512_set1_ps(EXP_HIGH), _CMP_LE_OQ);
  if (in_range == 0xFFFF) return avx512_exp_in_range(x);
  __mmask16 is_nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  __mmask16 high = _mm512_cmp_ps_mask(x, _mm512_set1_ps(EXP_HIGH), _CMP_GT_OQ);
  /* Out-of-range lanes compute on 0 (their results are replaced below). */
  __m512 y = avx512_exp_in_range(_mm512_maskz_mov_ps(in_range, x));
  y = _mm512_mask_mov_ps(_mm512_setzero_ps(), in_range, y); /* below EXP_LOW: 0 */
  y = _mm512_mask_mov_ps(y, high, _mm512_set1_ps(INFINITY));
  return _mm512_mask_mov_ps(y, is_nan, x);
}

static CPU_TARGET_AVX512 void avx512_exp_many(const float *x, float *out, int64_t count) {
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) _mm512_storeu_ps(out + i, avx512_exp(_mm512_loadu_ps(x + i)));
  if (i < count) {
    __mmask16 mask = (__mmask16)((1u << (count - i)) - 1);
    _mm512_mask_storeu_ps(out + i, mask, avx512_exp(_mm512_maskz_loadu_ps(mask, x + i)));
  }
}

/* The same operations on 8 lanes. */
static inline __attribute__((always_inline)) CPU_TARGET_AVX2 __m256 avx2_power_of_two(__m256i k) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
}

static inline __attribute__((always_inline)) CPU_TARGET_AVX2 __m256 avx2_exp_in_range(__m256 in) {
  __m256 n = _mm256_round_ps(_mm256_mul_ps(in, _mm256_set1_ps(LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-LN2_HIGH), in);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(-LN2_LOW), r);
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(P0), r, _mm256_set1_ps(P1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(P2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(P3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(P4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(P5));
  __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
  __m256i k = _mm256_cvtps_epi32(n);
  __m256i half = _mm256_srai_epi32(k, 1);
  return _mm256_mul_ps(_mm256_mul_ps(y, avx2_power_of_two(half)), avx2_power_of_two(_mm256_sub_epi32(k, half)));
}

static inline __attribute__((always_inline)) CPU_TARGET_AVX2 __m256 avx2_exp(__m256 x) {
  /* Ordered compares: NaN lanes are out of range; all in range (softmax's
   * v - max, nearly always) needs no blends. */
  __m256 in_range = _mm256_and_ps(_mm256_cmp_ps(x, _mm256_set1_ps(EXP_LOW), _CMP_GE_OQ),
                                  _mm256_cmp_ps(x, _mm256_set1_ps(EXP_HIGH), _CMP_LE_OQ));
  if (_mm256_movemask_ps(in_range) == 0xFF) return avx2_exp_in_range(x);
  __m256 is_nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  __m256 high = _mm256_cmp_ps(x, _mm256_set1_ps(EXP_HIGH), _CMP_GT_OQ);
  __m256 y = _mm256_and_ps(avx2_exp_in_range(_mm256_and_ps(in_range, x)), in_range); /* below EXP_LOW: 0 */
  y = _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), high);
  return _mm256_blendv_ps(y, x, is_nan);
}

static CPU_TARGET_AVX2 void avx2_exp_many(const float *x, float *out, int64_t count) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) _mm256_storeu_ps(out + i, avx2_exp(_mm256_loadu_ps(x + i)));
  for (; i < count; i++) out[i] = cpu_exp(x[i]);
}
#endif

void cpu_exp_many(const float *x, float *out, int64_t count) {
  switch (cpu_kernel_path_active()) {
#if CPU_HAVE_X86_PATHS
    case CPU_KERNEL_PATH_AVX512: avx512_exp_many(x, out, count); return;
    case CPU_KERNEL_PATH_AVX2: avx2_exp_many(x, out, count); return;
#endif
    default:
      for (int64_t i = 0; i < count; i++) out[i] = cpu_exp(x[i]);
      return;
  }
}

/* ---- Softmax ------------------------------------------------------------------ */

/* out = exp(v - max v) / sum, v = x (+ bias). The maximum is exact in any
 * order (NaN entries are skipped: v > m is false), and a zero maximum's
 * sign cannot matter (x - (+-0) = x for x != 0, exp(+-0) = 1). The sum runs
 * in 16 lanes, lane l adding the entries i = l mod 16 in increasing i, then
 * the fixed tree l + l+8, + l+4, + l+2, + l+1: the same additions on
 * every path (one zmm, two ymm, 16 scalars), and vectorised. */

static float tree16(const float lanes[16]) {
  float s8[8], s4[4];
  for (int l = 0; l < 8; l++) s8[l] = lanes[l] + lanes[l + 8];
  for (int l = 0; l < 4; l++) s4[l] = s8[l] + s8[l + 4];
  return (s4[0] + s4[2]) + (s4[1] + s4[3]);
}

static void portable_softmax(const float *x, float scale, const float *bias, int64_t count, float *out) {
  float maximum = -INFINITY;
  for (int64_t i = 0; i < count; i++) {
    float value = bias ? x[i] * scale + bias[i] : x[i] * scale;
    out[i] = value;
    if (value > maximum) maximum = value;
  }
  if (maximum == -INFINITY) { /* no finite entry: zeros, not exp(-inf - -inf) */
    for (int64_t i = 0; i < count; i++) out[i] = 0.0f;
    return;
  }
  float lanes[16] = {0};
  for (int64_t i = 0; i < count; i++) {
    out[i] = cpu_exp(out[i] - maximum);
    lanes[i % 16] += out[i];
  }
  float inverse = 1.0f / tree16(lanes);
  for (int64_t i = 0; i < count; i++) out[i] *= inverse;
}

#if CPU_HAVE_X86_PATHS
static CPU_TARGET_AVX512 void avx512_softmax(const float *x, float scale, const float *bias, int64_t count,
                                             float *out) {
  __m512 maximum = _mm512_set1_ps(-INFINITY), scales = _mm512_set1_ps(scale);
  /* Without a bias and with scale > 0, max(x * scale) = max(x) * scale
   * exactly (rounding is monotonic), so the first pass only reads x and
   * the second forms x * scale as it goes: the same v, one pass fewer
   * through memory. */
  bool fused = !bias && scale > 0.0f;
  for (int64_t i = 0; i < count; i += 16) {
    __mmask16 mask = count - i >= 16 ? 0xFFFF : (__mmask16)((1u << (count - i)) - 1);
    __m512 value = _mm512_maskz_loadu_ps(mask, x + i);
    if (!fused) {
      value = _mm512_mul_ps(value, scales);
      if (bias) value = _mm512_add_ps(value, _mm512_maskz_loadu_ps(mask, bias + i));
      _mm512_mask_storeu_ps(out + i, mask, value);
    }
    maximum = _mm512_mask_max_ps(maximum, mask, value, maximum);
  }
  float m = _mm512_reduce_max_ps(maximum);
  if (fused) m *= scale;
  if (m == -INFINITY) {
    memset(out, 0, (size_t)count * sizeof(float));
    return;
  }
  __m512 shift = _mm512_set1_ps(m), sum = _mm512_setzero_ps();
  const float *values = fused ? x : out;
  for (int64_t i = 0; i < count; i += 16) {
    __mmask16 mask = count - i >= 16 ? 0xFFFF : (__mmask16)((1u << (count - i)) - 1);
    __m512 value = _mm512_maskz_loadu_ps(mask, values + i);
    if (fused) value = _mm512_mul_ps(value, scales);
    __m512 e = avx512_exp(_mm512_sub_ps(value, shift));
    _mm512_mask_storeu_ps(out + i, mask, e);
    sum = _mm512_mask_add_ps(sum, mask, sum, e);
  }
  float lanes[16];
  _mm512_storeu_ps(lanes, sum);
  __m512 inverse = _mm512_set1_ps(1.0f / tree16(lanes));
  for (int64_t i = 0; i < count; i += 16) {
    __mmask16 mask = count - i >= 16 ? 0xFFFF : (__mmask16)((1u << (count - i)) - 1);
    _mm512_mask_storeu_ps(out + i, mask, _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, out + i), inverse));
  }
}

static CPU_TARGET_AVX2 void avx2_softmax(const float *x, float scale, const float *bias, int64_t count, float *out) {
  /* Whole blocks of 16 in two ymm halves (lanes 0-7, 8-15); the tail as
   * the portable code does it, into the same lanes. */
  int64_t whole = count / 16 * 16;
  __m256 maximum = _mm256_set1_ps(-INFINITY), scales = _mm256_set1_ps(scale);
  for (int64_t i = 0; i < whole; i += 8) {
    __m256 value = _mm256_mul_ps(_mm256_loadu_ps(x + i), scales);
    if (bias) value = _mm256_add_ps(value, _mm256_loadu_ps(bias + i));
    _mm256_storeu_ps(out + i, value);
    maximum = _mm256_max_ps(value, maximum);
  }
  float lanes[16], m = -INFINITY;
  _mm256_storeu_ps(lanes, maximum);
  for (int l = 0; l < 8; l++)
    if (lanes[l] > m) m = lanes[l];
  for (int64_t i = whole; i < count; i++) {
    float value = bias ? x[i] * scale + bias[i] : x[i] * scale;
    out[i] = value;
    if (value > m) m = value;
  }
  if (m == -INFINITY) {
    memset(out, 0, (size_t)count * sizeof(float));
    return;
  }
  __m256 shift = _mm256_set1_ps(m), sum[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  for (int64_t i = 0; i < whole; i += 16)
    for (int h = 0; h < 2; h++) {
      __m256 e = avx2_exp(_mm256_sub_ps(_mm256_loadu_ps(out + i + 8 * h), shift));
      _mm256_storeu_ps(out + i + 8 * h, e);
      sum[h] = _mm256_add_ps(sum[h], e);
    }
  _mm256_storeu_ps(lanes, sum[0]);
  _mm256_storeu_ps(lanes + 8, sum[1]);
  for (int64_t i = whole; i < count; i++) {
    out[i] = cpu_exp(out[i] - m);
    lanes[i % 16] += out[i];
  }
  __m256 inverse = _mm256_set1_ps(1.0f / tree16(lanes));
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(out + i), inverse));
  for (; i < count; i++) out[i] *= _mm256_cvtss_f32(inverse);
}
#endif

void cpu_scaled_softmax(const float *x, float scale, const float *bias, int64_t count, float *out) {
  switch (cpu_kernel_path_active()) {
#if CPU_HAVE_X86_PATHS
    case CPU_KERNEL_PATH_AVX512: avx512_softmax(x, scale, bias, count, out); return;
    case CPU_KERNEL_PATH_AVX2: avx2_softmax(x, scale, bias, count, out); return;
#endif
    default: portable_softmax(x, scale, bias, count, out); return;
  }
}

/* x * 1 is x exactly (NaN, infinities and signed zeros included). */
void cpu_softmax(const float *x, const float *bias, int64_t count, float *out) {
  cpu_scaled_softmax(x, 1.0f, bias, count, out);
}
