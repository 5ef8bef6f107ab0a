/* exp for f32, written as a sequence of IEEE operations that each round
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
static inline __attribute__((always_inline)) CPU_TARGET_AVX512 __m512 avx512_power_of_two(__m512i k) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(k, _mm512_set1_epi32(127)), 23));
}

static inline __attribute__((always_inline)) CPU_TARGET_AVX512 __m512 avx512_exp(__m512 x) {
  __mmask16 is_nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  __mmask16 high = _mm512_cmp_ps_mask(x, _mm512_set1_ps(EXP_HIGH), _CMP_GT_OQ);
  __mmask16 low = _mm512_cmp_ps_mask(x, _mm512_set1_ps(EXP_LOW), _CMP_LT_OQ);
  /* Out-of-range lanes compute on 0 (their results are replaced below). */
  __m512 in = _mm512_maskz_mov_ps((__mmask16)~(is_nan | high | low), x);
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
  __m512i k = _mm512_cvtps_epi32(n); /* n is integral: exact */
  __m512i half = _mm512_srai_epi32(k, 1);
  y = _mm512_mul_ps(_mm512_mul_ps(y, avx512_power_of_two(half)), avx512_power_of_two(_mm512_sub_epi32(k, half)));
  y = _mm512_mask_mov_ps(y, high, _mm512_set1_ps(INFINITY));
  y = _mm512_mask_mov_ps(y, low, _mm512_setzero_ps());
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
#endif

void cpu_exp_many(const float *x, float *out, int64_t count) {
#if CPU_HAVE_X86_PATHS
  if (cpu_kernel_path_active() == CPU_KERNEL_PATH_AVX512) {
    avx512_exp_many(x, out, count);
    return;
  }
#endif
  for (int64_t i = 0; i < count; i++) out[i] = cpu_exp(x[i]);
}
