/* What AVX512-BF16's vdpbf16ps computes on this host, against candidate
 * spellings in f32 fmas, and its throughput against vfmadd (docs/KERNELS.md,
 * "Dispatch"). Not a test: vlm does not use the instruction; this is the
 * measurement behind the decision, kept so it can be rerun on another host.
 *
 *   vlm-bf16-dot-probe
 *
 * Lane i of dpbf16(acc, a, b) is compared with: the odd pair's fma then the
 * even pair's; the even pair first; the odd pair first with denormal inputs
 * and accumulator read as zero and each result flushed to zero; and one
 * rounding of acc + both products (computed in double, exact here). Prints
 * the mismatch count of each over random bf16 in four exponent bands, a few
 * hand-made cases, then instructions per second of each instruction
 * (independent chains, CPU time of one thread). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <immintrin.h>

#define TARGET_BF16 __attribute__((target("avx512f,avx512bf16")))

static uint64_t random_state = 88172645463325252ull;
static uint64_t next_random(void) {
  random_state ^= random_state << 13;
  random_state ^= random_state >> 7;
  random_state ^= random_state << 17;
  return random_state;
}
static float float_of(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float bf(uint16_t h) { return float_of((uint32_t)h << 16); }
static float flush(float f) { return f != 0 && fabsf(f) < 1.17549435e-38f ? copysignf(0.0f, f) : f; }

/* A random bf16 with its biased exponent in [low, high]. */
static uint16_t random_bf16(int low, int high) {
  uint32_t sign = next_random() & 1, exponent = (uint32_t)low + (uint32_t)(next_random() % (uint64_t)(high - low + 1));
  return (uint16_t)(sign << 15 | exponent << 7 | (next_random() & 0x7f));
}

static TARGET_BF16 float instruction(float acc, const uint16_t a[2], const uint16_t b[2]) {
  __m512 sums = _mm512_set1_ps(acc);
  __m512i pa = _mm512_set1_epi32((int)((uint32_t)a[1] << 16 | a[0]));
  __m512i pb = _mm512_set1_epi32((int)((uint32_t)b[1] << 16 | b[0]));
  return _mm512_cvtss_f32(_mm512_dpbf16_ps(sums, (__m512bh)pa, (__m512bh)pb));
}

typedef float (*model_function)(float acc, const uint16_t a[2], const uint16_t b[2]);
static float odd_then_even(float acc, const uint16_t a[2], const uint16_t b[2]) {
  return fmaf(bf(a[0]), bf(b[0]), fmaf(bf(a[1]), bf(b[1]), acc));
}
static float even_then_odd(float acc, const uint16_t a[2], const uint16_t b[2]) {
  return fmaf(bf(a[1]), bf(b[1]), fmaf(bf(a[0]), bf(b[0]), acc));
}
static float odd_then_even_flushed(float acc, const uint16_t a[2], const uint16_t b[2]) {
  acc = flush(fmaf(flush(bf(a[1])), flush(bf(b[1])), flush(acc)));
  return flush(fmaf(flush(bf(a[0])), flush(bf(b[0])), acc));
}
static float one_rounding(float acc, const uint16_t a[2], const uint16_t b[2]) {
  return (float)((double)acc + (double)bf(a[1]) * bf(b[1]) + (double)bf(a[0]) * bf(b[0]));
}

static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define CHAINS 12
static TARGET_BF16 __attribute__((noinline)) float dpbf16_loop(int64_t iterations) {
  __m512 acc[CHAINS];
  __m512bh a = (__m512bh)_mm512_set1_epi32(0x3f803f80), b = (__m512bh)_mm512_set1_epi32(0x00010001);
  for (int j = 0; j < CHAINS; j++) acc[j] = _mm512_set1_ps((float)j);
  for (int64_t i = 0; i < iterations; i++) {
#pragma GCC unroll 12
    for (int j = 0; j < CHAINS; j++) acc[j] = _mm512_dpbf16_ps(acc[j], a, b);
    __asm__("" : "+v"(a));
  }
  float sum = 0;
  for (int j = 0; j < CHAINS; j++) sum += _mm512_reduce_add_ps(acc[j]);
  return sum;
}
static TARGET_BF16 __attribute__((noinline)) float fma_loop(int64_t iterations) {
  __m512 acc[CHAINS], a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
  for (int j = 0; j < CHAINS; j++) acc[j] = _mm512_set1_ps((float)j);
  for (int64_t i = 0; i < iterations; i++) {
#pragma GCC unroll 12
    for (int j = 0; j < CHAINS; j++) acc[j] = _mm512_fmadd_ps(acc[j], a, b);
    __asm__("" : "+v"(a));
  }
  float sum = 0;
  for (int j = 0; j < CHAINS; j++) sum += _mm512_reduce_add_ps(acc[j]);
  return sum;
}

int main(void) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512bf16")) {
    printf("this CPU has no AVX512-BF16\n");
    return 0;
  }
  static const char *model_names[] = {"odd then even", "even then odd", "odd then even, DAZ/FTZ", "one rounding"};
  static const model_function models[] = {odd_then_even, even_then_odd, odd_then_even_flushed, one_rounding};
  static const struct {
    const char *name;
    int low, high, acc_low, acc_high;
  } bands[] = {{"similar magnitudes", 110, 140, 110, 140},
               {"wide exponents", 64, 190, 1, 254},
               {"products near underflow", 1, 70, 0, 10},
               {"denormal a (b normal)", 0, 0, 0, 30}};
  const long cases = 2000000;
  printf("mismatches of vdpbf16ps against each spelling, %ld random cases a band:\n", cases);
  for (int band = 0; band < 4; band++) {
    long mismatches[4] = {0, 0, 0, 0};
    for (long i = 0; i < cases; i++) {
      uint16_t a[2] = {random_bf16(bands[band].low, bands[band].high), random_bf16(bands[band].low, bands[band].high)};
      uint16_t b[2] = {random_bf16(bands[band].low, bands[band].high), random_bf16(bands[band].low, bands[band].high)};
      if (band == 3) b[0] = random_bf16(100, 160), b[1] = random_bf16(100, 160);
      uint32_t exponent = (uint32_t)bands[band].acc_low +
                          (uint32_t)(next_random() % (uint64_t)(bands[band].acc_high - bands[band].acc_low + 1));
      float acc = float_of((uint32_t)(next_random() & 1) << 31 | exponent << 23 | (uint32_t)(next_random() & 0x7fffff));
      float got = instruction(acc, a, b);
      for (int m = 0; m < 4; m++) mismatches[m] += bits_of(models[m](acc, a, b)) != bits_of(got);
    }
    printf("  %-24s", bands[band].name);
    for (int m = 0; m < 4; m++) printf("  %s: %ld", model_names[m], mismatches[m]);
    printf("\n");
  }
  const uint16_t one = 0x3f80, half_ulp = (uint16_t)((127 - 24) << 7), tiny = (uint16_t)((127 - 70) << 7);
  uint16_t ones[2] = {one, one}, halves[2] = {half_ulp, half_ulp}, tinies[2] = {tiny, 0}, zeros[2] = {0, 0};
  printf("1 + 2^-24 + 2^-24: %a (two roundings give 0x1p+0, one 0x1.000002p+0)\n", instruction(1.0f, ones, halves));
  printf("denormal accumulator 2^-130 + 0: %a\n", instruction(ldexpf(1.0f, -130), zeros, zeros));
  printf("product 2^-140 (denormal result): %a\n", instruction(0.0f, tinies, tinies));
  const int64_t iterations = 20000000;
  for (int round = 0; round < 3; round++) {
    double start = cpu_seconds();
    volatile float sink = dpbf16_loop(iterations);
    double dp = cpu_seconds() - start;
    start = cpu_seconds();
    sink = fma_loop(iterations);
    double fma = cpu_seconds() - start;
    (void)sink;
    double count = (double)iterations * CHAINS;
    printf("vdpbf16ps zmm %.2f G/s (%.0f GFLOP/s), vfmadd231ps zmm %.2f G/s (%.0f GFLOP/s), one thread, CPU time\n",
           count / dp / 1e9, count * 64 / dp / 1e9, count / fma / 1e9, count * 32 / fma / 1e9);
  }
  return 0;
}
#else
int main(void) {
  printf("not an x86-64 build\n");
  return 0;
}
#endif
