/* Bicubic and bilinear uint8 resampling, bit-exact with torch and with Pillow (see
 * image_resample.h for which is which and why they differ). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "media/image_resample.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* Per-axis plan: for each output index, the first input index, the tap
 * count, and `taps` integer weights with `precision` fractional bits. */
typedef struct resample_plan {
  int64_t *starts, *counts;
  int32_t *weights;
  int64_t taps;
  int precision;
} resample_plan;

/* torch: HelperInterpCubic::aa_filter with cubic_convolution1/2 (UpSample.h). */
static double torch_cubic(double x) {
  const double a = -0.5;
  x = fabs(x);
  if (x < 1.0) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2.0) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

/* Pillow: bicubic_filter (Resample.c). */
static double pillow_cubic(double x) {
  const double a = -0.5;
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

/* torch HelperInterpLinear::aa_filter and Pillow bilinear_filter (the same
 * triangle). */
static double triangle(double x) {
  if (x < 0.0) x = -x;
  return x < 1.0 ? 1.0 - x : 0.0;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The AVX2 loops run when the CPU has AVX2, unless VLM_CPU_PATH=portable
 * (the CPU backend's switch, see docs/KERNELS.md) asks for the baseline
 * ones, so tests can compare the two. */
static bool simd_allowed(void) {
  const char *forced = getenv("VLM_CPU_PATH");
  return __builtin_cpu_supports("avx2") && !(forced && strcmp(forced, "portable") == 0);
}
#endif

static void plan_release(resample_plan *plan) {
  free(plan->starts);
  free(plan->counts);
  free(plan->weights);
  memset(plan, 0, sizeof(*plan));
}

/* The double weights (identical formulas in torch and Pillow apart from
 * the cubic), then their fixed-point form. */
static vlm_status plan_create(vlm_resample_kind kind, vlm_resample_filter filter_kind, int64_t in_size,
                              int64_t out_size, resample_plan *plan) {
  memset(plan, 0, sizeof(*plan));
  double scale = (double)in_size / (double)out_size;
  double filter_scale = scale >= 1.0 ? scale : 1.0;
  double support = (filter_kind == VLM_RESAMPLE_BILINEAR ? 1.0 : 2.0) * filter_scale;
  int64_t taps = (int64_t)ceil(support) * 2 + 1;
  double *weights = calloc((size_t)(out_size * taps), sizeof(double));
  plan->starts = calloc((size_t)out_size, sizeof(int64_t));
  plan->counts = calloc((size_t)out_size, sizeof(int64_t));
  plan->weights = calloc((size_t)(out_size * taps), sizeof(int32_t));
  if (!weights || !plan->starts || !plan->counts || !plan->weights) {
    free(weights);
    plan_release(plan);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for resampling weights");
  }
  double (*filter)(double) = filter_kind == VLM_RESAMPLE_BILINEAR ? triangle
                             : kind == VLM_RESAMPLE_TORCH_U8     ? torch_cubic
                                                                 : pillow_cubic;
  double inverse_scale = 1.0 / filter_scale, largest = 0.0;
  for (int64_t i = 0; i < out_size; i++) {
    double center = scale * ((double)i + 0.5);
    int64_t start = (int64_t)(center - support + 0.5);
    if (start < 0) start = 0;
    int64_t end = (int64_t)(center + support + 0.5);
    if (end > in_size) end = in_size;
    int64_t count = end - start;
    if (count < 0) count = 0;
    if (count > taps) count = taps;
    double *w = weights + i * taps, total = 0.0;
    for (int64_t j = 0; j < count; j++) {
      w[j] = filter(((double)(j + start) - center + 0.5) * inverse_scale);
      total += w[j];
    }
    if (total != 0.0) {
      for (int64_t j = 0; j < count; j++) {
        w[j] /= total;
        if (w[j] > largest) largest = w[j];
      }
    }
    plan->starts[i] = start;
    plan->counts[i] = count;
  }
  int precision = 22; /* Pillow's PRECISION_BITS = 32 - 8 - 2 */
  if (kind == VLM_RESAMPLE_TORCH_U8) {
    /* torch: the most bits such that the largest weight fits in int16. */
    for (precision = 0; precision < 22; precision++)
      if ((int)(0.5 + largest * (1 << (precision + 1))) >= (1 << 15)) break;
  }
  for (int64_t k = 0; k < out_size * taps; k++) {
    double v = weights[k] * (double)(1 << precision);
    plan->weights[k] = v < 0 ? (int32_t)(-0.5 + v) : (int32_t)(0.5 + v);
  }
  plan->taps = taps;
  plan->precision = precision;
  free(weights);
  return VLM_OK;
}

static inline uint8_t round_and_clip(int32_t sum, int precision) {
  int32_t value = sum >> precision;
  return (uint8_t)(value < 0 ? 0 : value > 255 ? 255 : value);
}

/* Sums fit in int32 in both passes: |value| <= 255 x the weights' absolute
 * sum (< 2 for the bicubic) x 2^precision (<= 2^22) < 2^31. */

/* Output columns [x0, x0 + width) of input rows [0, rows). */
static void resample_horizontal_baseline(const resample_plan *plan, const uint8_t *in,
                                         int64_t in_width, int64_t rows, int channels,
                                         uint8_t *out, int64_t x0, int64_t width) {
  int32_t rounding = (int32_t)1 << (plan->precision - 1);
  for (int64_t y = 0; y < rows; y++) {
    const uint8_t *row = in + y * in_width * channels;
    uint8_t *target = out + y * width * channels;
    for (int64_t x = 0; x < width; x++) {
      const int32_t *w = plan->weights + (x0 + x) * plan->taps;
      const uint8_t *source = row + plan->starts[x0 + x] * channels;
      int64_t count = plan->counts[x0 + x];
      if (channels == 3) {
        int32_t r = rounding, g = rounding, b = rounding;
        for (int64_t j = 0; j < count; j++, source += 3) {
          r += w[j] * source[0], g += w[j] * source[1], b += w[j] * source[2];
        }
        target[x * 3] = round_and_clip(r, plan->precision);
        target[x * 3 + 1] = round_and_clip(g, plan->precision);
        target[x * 3 + 2] = round_and_clip(b, plan->precision);
        continue;
      }
      for (int c = 0; c < channels; c++) {
        int32_t sum = rounding;
        for (int64_t j = 0; j < count; j++) sum += w[j] * source[j * channels + c];
        target[x * channels + c] = round_and_clip(sum, plan->precision);
      }
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
/* RGB rows with the three channels of a tap in one vector: 4 bytes from
 * the tap's pixel (the 4th, the next pixel's red, is multiplied and then
 * ignored) widened to int32, times the weight, summed; the same integer
 * sums as the baseline, and packs saturating to [0, 255] is its clip.
 * A pixel whose last 4-byte read would pass the end of `in` takes the
 * baseline loop. */
__attribute__((target("avx2"))) static void resample_horizontal_rgb_avx2(
    const resample_plan *plan, const uint8_t *in, int64_t in_width, int64_t rows, uint8_t *out,
    int64_t x0, int64_t width) {
  const uint8_t *end = in + rows * in_width * 3;
  int32_t rounding = (int32_t)1 << (plan->precision - 1);
  for (int64_t y = 0; y < rows; y++) {
    const uint8_t *row = in + y * in_width * 3;
    uint8_t *target = out + y * width * 3;
    for (int64_t x = 0; x < width; x++) {
      const int32_t *w = plan->weights + (x0 + x) * plan->taps;
      const uint8_t *source = row + plan->starts[x0 + x] * 3;
      int64_t count = plan->counts[x0 + x];
      if (source + count * 3 >= end) {
        resample_horizontal_baseline(plan, row, in_width, 1, 3, target + x * 3, x0 + x, 1);
        continue;
      }
      __m128i sum = _mm_set1_epi32(rounding);
      for (int64_t j = 0; j < count; j++) {
        int32_t four;
        memcpy(&four, source + j * 3, 4);
        __m128i pixel = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(four));
        sum = _mm_add_epi32(sum, _mm_mullo_epi32(pixel, _mm_set1_epi32(w[j])));
      }
      sum = _mm_srai_epi32(sum, plan->precision);
      __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(sum, sum), _mm_setzero_si128());
      uint32_t packed = (uint32_t)_mm_cvtsi128_si32(bytes);
      target[x * 3] = (uint8_t)packed;
      target[x * 3 + 1] = (uint8_t)(packed >> 8);
      target[x * 3 + 2] = (uint8_t)(packed >> 16);
    }
  }
}
#endif

static void resample_horizontal(const resample_plan *plan, const uint8_t *in, int64_t in_width,
                                int64_t rows, int channels, uint8_t *out, int64_t x0, int64_t width) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (channels == 3 && simd_allowed()) {
    resample_horizontal_rgb_avx2(plan, in, in_width, rows, out, x0, width);
    return;
  }
#endif
  resample_horizontal_baseline(plan, in, in_width, rows, channels, out, x0, width);
}

/* One output row of the vertical pass: `count` input rows `stride` apart,
 * weighted and summed column by column. Blocks of a fixed 64 columns keep
 * the sums in registers and let -O2 vectorise the loops (its cost model
 * only takes loops of a known trip count); the tail is plain. */
enum { VERTICAL_BLOCK = 64 };
static inline __attribute__((always_inline)) void vertical_row(
    const int32_t *w, int64_t count, const uint8_t *source, int64_t stride, int32_t rounding,
    int precision, uint8_t *target) {
  int64_t i = 0;
  for (; i + VERTICAL_BLOCK <= stride; i += VERTICAL_BLOCK) {
    int32_t sums[VERTICAL_BLOCK];
    for (int k = 0; k < VERTICAL_BLOCK; k++) sums[k] = rounding;
    for (int64_t j = 0; j < count; j++) {
      const uint8_t *line = source + j * stride + i;
      int32_t weight = w[j];
      for (int k = 0; k < VERTICAL_BLOCK; k++) sums[k] += weight * line[k];
    }
    for (int k = 0; k < VERTICAL_BLOCK; k++) target[i + k] = round_and_clip(sums[k], precision);
  }
  for (; i < stride; i++) {
    int32_t sum = rounding;
    for (int64_t j = 0; j < count; j++) sum += w[j] * source[j * stride + i];
    target[i] = round_and_clip(sum, precision);
  }
}

/* Output rows [y0, y0 + height); `in` starts at input row `first_row`.
 * Integer arithmetic, so the AVX2 build of the same loop (chosen at run
 * time) gives identical bytes. */
#define VERTICAL_PASS_BODY                                                                  \
  int32_t rounding = (int32_t)1 << (plan->precision - 1);                                   \
  int64_t stride = width * channels;                                                        \
  for (int64_t y = 0; y < height; y++)                                                      \
    vertical_row(plan->weights + (y0 + y) * plan->taps, plan->counts[y0 + y],               \
                 in + (plan->starts[y0 + y] - first_row) * stride, stride, rounding,        \
                 plan->precision, out + y * stride);

static void resample_vertical_baseline(const resample_plan *plan, const uint8_t *in,
                                       int64_t first_row, int64_t width, int channels,
                                       uint8_t *out, int64_t y0, int64_t height) {
  VERTICAL_PASS_BODY
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) static void resample_vertical_avx2(
    const resample_plan *plan, const uint8_t *in, int64_t first_row, int64_t width, int channels,
    uint8_t *out, int64_t y0, int64_t height) {
  VERTICAL_PASS_BODY
}
#endif

static void resample_vertical(const resample_plan *plan, const uint8_t *in, int64_t first_row,
                              int64_t width, int channels, uint8_t *out, int64_t y0, int64_t height) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (simd_allowed()) {
    resample_vertical_avx2(plan, in, first_row, width, channels, out, y0, height);
    return;
  }
#endif
  resample_vertical_baseline(plan, in, first_row, width, channels, out, y0, height);
}

static vlm_status resample_window(vlm_resample_kind kind, vlm_resample_filter filter, const uint8_t *in,
                                  int64_t in_width, int64_t in_height, int channels, int64_t out_width,
                                  int64_t out_height, int64_t x0, int64_t y0, int64_t window_width,
                                  int64_t window_height, uint8_t *out, const vlm_allocator *allocator) {
  if (in_width <= 0 || in_height <= 0 || out_width <= 0 || out_height <= 0 || x0 < 0 || y0 < 0 ||
      window_width <= 0 || window_height <= 0 || x0 + window_width > out_width ||
      y0 + window_height > out_height)
    return VLM_ERROR(INVALID_ARGUMENT, "cannot resample %lldx%lld to %lldx%lld", (long long)in_width,
                     (long long)in_height, (long long)out_width, (long long)out_height);
  bool horizontal = in_width != out_width, vertical = in_height != out_height;
  resample_plan columns = {0}, rows = {0};
  uint8_t *buffer = NULL;
  vlm_status status = VLM_OK;
  if (horizontal) status = plan_create(kind, filter, in_width, out_width, &columns);
  if (!status && vertical) status = plan_create(kind, filter, in_height, out_height, &rows);
  /* The input rows the window needs. */
  int64_t first_row = y0, last_row = y0 + window_height;
  if (!status && vertical) {
    first_row = rows.starts[y0], last_row = 0;
    for (int64_t y = y0; y < y0 + window_height; y++) {
      if (rows.starts[y] < first_row) first_row = rows.starts[y];
      if (rows.starts[y] + rows.counts[y] > last_row) last_row = rows.starts[y] + rows.counts[y];
    }
    if (last_row <= first_row) last_row = first_row + 1;
  }
  int64_t row_count = last_row - first_row;
  if (!status) {
    buffer = vlm_allocate(allocator, (size_t)(window_width * row_count * channels), VLM_DEFAULT_ALIGNMENT);
    if (!buffer) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory resampling");
  }
  if (!status) {
    const uint8_t *first = in + first_row * in_width * channels;
    if (horizontal) {
      resample_horizontal(&columns, first, in_width, row_count, channels, buffer, x0, window_width);
    } else {
      for (int64_t y = 0; y < row_count; y++)
        memcpy(buffer + y * window_width * channels, first + (y * in_width + x0) * channels,
               (size_t)(window_width * channels));
    }
    if (vertical) resample_vertical(&rows, buffer, first_row, window_width, channels, out, y0, window_height);
    else memcpy(out, buffer, (size_t)(window_width * window_height * channels));
  }
  if (buffer) vlm_release(allocator, buffer);
  plan_release(&columns);
  plan_release(&rows);
  return status;
}

vlm_status vlm_resample_bicubic_u8_window(vlm_resample_kind kind, const uint8_t *in,
                                          int64_t in_width, int64_t in_height, int channels,
                                          int64_t out_width, int64_t out_height, int64_t x0,
                                          int64_t y0, int64_t window_width, int64_t window_height,
                                          uint8_t *out, const vlm_allocator *allocator) {
  return resample_window(kind, VLM_RESAMPLE_BICUBIC, in, in_width, in_height, channels, out_width, out_height, x0,
                         y0, window_width, window_height, out, allocator);
}

vlm_status vlm_resample_bicubic_u8(vlm_resample_kind kind, const uint8_t *in, int64_t in_width,
                                   int64_t in_height, int channels, uint8_t *out,
                                   int64_t out_width, int64_t out_height,
                                   const vlm_allocator *allocator) {
  return resample_window(kind, VLM_RESAMPLE_BICUBIC, in, in_width, in_height, channels, out_width, out_height, 0,
                         0, out_width, out_height, out, allocator);
}

vlm_status vlm_resample_u8(vlm_resample_kind kind, vlm_resample_filter filter, const uint8_t *in,
                           int64_t in_width, int64_t in_height, int channels, uint8_t *out,
                           int64_t out_width, int64_t out_height, const vlm_allocator *allocator) {
  return resample_window(kind, filter, in, in_width, in_height, channels, out_width, out_height, 0, 0, out_width,
                         out_height, out, allocator);
}
