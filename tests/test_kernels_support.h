/* Helpers shared by the cpu kernel tests: a fixed-seed generator and
 * conversions, so every run draws the same inputs, and the forcing of a
 * kernel path that reports the paths this CPU lacks as skipped. */
#ifndef VLM_TEST_KERNELS_SUPPORT_H
#define VLM_TEST_KERNELS_SUPPORT_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backends/cpu/cpu_features.h"
#include "core/tensor.h"
#include "test.h"

/* Forces `path` for the kernel calls that follow. False when this CPU cannot
 * run it, after reporting SKIP(cpu-lacks-<path>): the checks of that path did
 * not run here, which CI accepts only when /proc/cpuinfo lacks the path's
 * flags (scripts/check_skips.py). */
static inline bool test_force_kernel_path(cpu_kernel_path path) {
  if (cpu_kernel_path_force(path)) return true;
  char reason[64];
  snprintf(reason, sizeof(reason), "cpu-lacks-%s", cpu_kernel_path_name(path));
  test_skip(reason, "this CPU cannot run the %s kernel path; its checks did not run", cpu_kernel_path_name(path));
  return false;
}

typedef struct test_random {
  uint64_t state;
} test_random;

/* splitmix64: tiny, and good enough for test data. */
static inline uint64_t test_random_next(test_random *random) {
  uint64_t z = (random->state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in [low, high). */
static inline float test_random_uniform(test_random *random, float low, float high) {
  double unit = (double)(test_random_next(random) >> 11) / 9007199254740992.0;
  return (float)(low + (high - low) * unit);
}

static inline void test_random_fill(test_random *random, float *values, int64_t count,
                                    float low, float high) {
  for (int64_t i = 0; i < count; i++) values[i] = test_random_uniform(random, low, high);
}

/* Stores f32 values as `dtype` (f32, bf16 or f16) into `out` and rounds
 * `values` in place to what the stored copy holds, so references computed
 * from `values` see exactly the operands the kernel sees. */
static inline void test_store_as(vlm_dtype dtype, float *values, int64_t count, void *out) {
  for (int64_t i = 0; i < count; i++) {
    if (dtype == VLM_DTYPE_BF16) {
      uint16_t bits = vlm_f32_to_bf16(values[i]);
      ((uint16_t *)out)[i] = bits;
      values[i] = vlm_bf16_to_f32(bits);
    } else if (dtype == VLM_DTYPE_F16) {
      uint16_t bits = vlm_f32_to_f16(values[i]);
      ((uint16_t *)out)[i] = bits;
      values[i] = vlm_f16_to_f32(bits);
    } else {
      ((float *)out)[i] = values[i];
    }
  }
}

static inline bool test_bits_equal(const float *a, const float *b, int64_t count) {
  return memcmp(a, b, (size_t)count * sizeof(float)) == 0;
}

/* Largest |actual - expected| / (absolute + relative * scale[i]); <= 1 passes.
 * `scale` NULL means |expected|. */
static inline double test_worst_error(const float *actual, const double *expected,
                                      const double *scale, int64_t count,
                                      double absolute, double relative) {
  double worst = 0.0;
  for (int64_t i = 0; i < count; i++) {
    double allowed = absolute + relative * (scale ? scale[i] : fabs(expected[i]));
    double error = fabs((double)actual[i] - expected[i]) / allowed;
    if (!(error <= worst)) worst = error; /* NaN sticks */
  }
  return worst;
}

#endif
