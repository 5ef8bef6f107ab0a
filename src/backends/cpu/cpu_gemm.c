/* The one micro-kernel behind linear layers and attention: a tile of up to
 * CPU_GEMM_MAX_ROWS rows x up to CPU_PANEL outputs, each output one fma
 * chain over k in increasing order (the dot-product contract of
 * cpu_kernels.h), in three paths that agree bit for bit.
 *
 * The vectors run across outputs, never across k: lane c of a register holds
 * output c's running sum, and step k adds x[r][k] * w[k][c] to it with one
 * fma. So the width of a register (16 lanes, 8 lanes, 1 scalar) and the
 * shape of a tile change which outputs are computed together, never the
 * operations that make one output. That is what lets every path, every tile
 * and every row count give the same bits, and it is why weights are stored
 * k-major in panels of CPU_PANEL outputs (cpu_linear.c packs them once).
 *
 * AVX-512 keeps rows x 4 zmm accumulators (6 x 64 outputs: 24 registers, 4
 * weight vectors, one broadcast); each weight vector read serves every row
 * and each broadcast input serves 64 outputs, so a step is 24 fmas for 4
 * vector loads and 6 broadcasts. AVX2 has 16 ymm registers: 6 rows x 16
 * outputs (12 accumulators), 2 x 32 or 1 x 64, looping over the panel's
 * column groups. */
#include "backends/cpu/cpu_internal.h"

#include <math.h>
#include <string.h>

#if CPU_HAVE_X86_PATHS
#include <immintrin.h>
#endif

#include "backends/cpu/cpu_kernels.h"

/* ---- Portable path --------------------------------------------------------- */

static float portable_weight(const void *w, vlm_dtype dtype, int64_t index) {
  return dtype == VLM_DTYPE_F32 ? ((const float *)w)[index] : cpu_load_element(w, dtype, index);
}

static void portable_gemm(const cpu_gemm_tile *t, vlm_dtype dtype, int rows) {
  float acc[CPU_PANEL];
  for (int r = 0; r < rows; r++) {
    float *out = t->out + r * t->out_stride;
    const float *x = t->x + r * t->x_stride;
    for (int c = 0; c < t->cols; c++) acc[c] = t->resume ? out[c] : 0.0f;
    for (int64_t k = 0; k < t->k_count; k++)
      for (int c = 0; c < t->cols; c++) acc[c] = fmaf(x[k], portable_weight(t->w, dtype, k * t->w_step + c), acc[c]);
    for (int c = 0; c < t->cols; c++) out[c] = t->bias ? acc[c] + t->bias[c] : acc[c];
  }
}

static void portable_gemm_f32(const cpu_gemm_tile *t, int rows) { portable_gemm(t, VLM_DTYPE_F32, rows); }
static void portable_gemm_bf16(const cpu_gemm_tile *t, int rows) { portable_gemm(t, VLM_DTYPE_BF16, rows); }
static void portable_gemm_f16(const cpu_gemm_tile *t, int rows) { portable_gemm(t, VLM_DTYPE_F16, rows); }

#if CPU_HAVE_X86_PATHS

/* ---- AVX-512 path ---------------------------------------------------------- */

static inline __attribute__((always_inline)) CPU_TARGET_AVX512 __m512
avx512_weights(const void *w, vlm_dtype dtype, int64_t index, __mmask16 mask) {
  if (dtype == VLM_DTYPE_F32) return _mm512_maskz_loadu_ps(mask, (const float *)w + index);
  /* bf16 and f16 come from packed panels, padded to whole vectors. */
  __m256i halves = _mm256_loadu_si256((const __m256i *)((const uint16_t *)w + index));
  if (dtype == VLM_DTYPE_F16) return _mm512_cvtph_ps(halves);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(halves), 16));
}

/* rows x vectors accumulators; inlined with constant rows, vectors and
 * dtype so they live in registers. `tail`: the mask of the last vector
 * (loads of f32 weights and every store). */
static inline __attribute__((always_inline)) CPU_TARGET_AVX512 void
avx512_gemm(const cpu_gemm_tile *t, vlm_dtype dtype, int rows, int vectors) {
  __m512 acc[CPU_GEMM_MAX_ROWS][4];
  int last = t->cols - 16 * (vectors - 1);
  __mmask16 tail = (__mmask16)(last >= 16 ? 0xFFFF : (1u << last) - 1);
#pragma GCC unroll 8
  for (int r = 0; r < rows; r++)
#pragma GCC unroll 4
    for (int v = 0; v < vectors; v++)
      acc[r][v] = t->resume ? _mm512_maskz_loadu_ps(v == vectors - 1 ? tail : 0xFFFF,
                                                    t->out + r * t->out_stride + 16 * v)
                            : _mm512_setzero_ps();
  const float *x = t->x;
  int64_t x_stride = t->x_stride, w_step = t->w_step;
  for (int64_t k = 0; k < t->k_count; k++) {
    if (t->prefetch) {
      _mm_prefetch(t->prefetch + 128 * k, _MM_HINT_T0);
      _mm_prefetch(t->prefetch + 128 * k + 64, _MM_HINT_T0);
    }
    __m512 wv[4];
#pragma GCC unroll 4
    for (int v = 0; v < vectors; v++)
      wv[v] = avx512_weights(t->w, dtype, k * w_step + 16 * v, v == vectors - 1 ? tail : 0xFFFF);
#pragma GCC unroll 8
    for (int r = 0; r < rows; r++) {
      __m512 xb = _mm512_set1_ps(x[r * x_stride + k]);
#pragma GCC unroll 4
      for (int v = 0; v < vectors; v++) acc[r][v] = _mm512_fmadd_ps(xb, wv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < rows; r++)
#pragma GCC unroll 4
    for (int v = 0; v < vectors; v++) {
      __mmask16 mask = v == vectors - 1 ? tail : 0xFFFF;
      __m512 sum = acc[r][v];
      if (t->bias) sum = _mm512_add_ps(sum, _mm512_maskz_loadu_ps(mask, t->bias + 16 * v));
      _mm512_mask_storeu_ps(t->out + r * t->out_stride + 16 * v, mask, sum);
    }
}

#define AVX512_ROWS(dtype, vectors)                          \
  switch (rows) {                                            \
    case 6: avx512_gemm(t, dtype, 6, vectors); return;       \
    case 5: avx512_gemm(t, dtype, 5, vectors); return;       \
    case 4: avx512_gemm(t, dtype, 4, vectors); return;       \
    case 3: avx512_gemm(t, dtype, 3, vectors); return;       \
    case 2: avx512_gemm(t, dtype, 2, vectors); return;       \
    default: avx512_gemm(t, dtype, 1, vectors); return;      \
  }

/* 7 or 8 rows: groups of 32 outputs (16 accumulators). */
static inline __attribute__((always_inline)) CPU_TARGET_AVX512 void
avx512_gemm_tall(const cpu_gemm_tile *t, vlm_dtype dtype, int rows) {
  int64_t element = dtype == VLM_DTYPE_F32 ? 4 : 2;
  for (int c = 0; c < t->cols; c += 32) {
    cpu_gemm_tile group = *t;
    group.w = (const char *)t->w + c * element;
    group.out = t->out + c;
    group.bias = t->bias ? t->bias + c : NULL;
    group.cols = t->cols - c < 32 ? t->cols - c : 32;
    if (c > 0) group.prefetch = NULL;
    if (group.cols > 16) {
      if (rows == 8) avx512_gemm(&group, dtype, 8, 2);
      else avx512_gemm(&group, dtype, 7, 2);
    } else {
      if (rows == 8) avx512_gemm(&group, dtype, 8, 1);
      else avx512_gemm(&group, dtype, 7, 1);
    }
  }
}

/* f32 weights may be any width (attention's values: head_dim columns);
 * bf16/f16 ones are packed panels, read as whole vectors. */
#define AVX512_GEMM_FUNCTION(name, dtype)                                   \
  static CPU_TARGET_AVX512 void name(const cpu_gemm_tile *t, int rows) {   \
    if (rows > 6) {                                                         \
      avx512_gemm_tall(t, dtype, rows);                                     \
      return;                                                               \
    }                                                                       \
    switch ((t->cols + 15) / 16) {                                          \
      case 1: AVX512_ROWS(dtype, 1)                                         \
      case 2: AVX512_ROWS(dtype, 2)                                         \
      case 3: AVX512_ROWS(dtype, 3)                                         \
      default: AVX512_ROWS(dtype, 4)                                        \
    }                                                                       \
  }
AVX512_GEMM_FUNCTION(avx512_gemm_f32, VLM_DTYPE_F32)
AVX512_GEMM_FUNCTION(avx512_gemm_bf16, VLM_DTYPE_BF16)
AVX512_GEMM_FUNCTION(avx512_gemm_f16, VLM_DTYPE_F16)

/* ---- AVX2 path ------------------------------------------------------------- */

static inline __attribute__((always_inline)) CPU_TARGET_AVX2 __m256i avx2_mask(int count) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), lanes);
}

static inline __attribute__((always_inline)) CPU_TARGET_AVX2 __m256
avx2_weights(const void *w, vlm_dtype dtype, int64_t index, __m256i mask, bool masked) {
  if (dtype == VLM_DTYPE_F32) {
    const float *p = (const float *)w + index;
    return masked ? _mm256_maskload_ps(p, mask) : _mm256_loadu_ps(p);
  }
  __m128i halves = _mm_loadu_si128((const __m128i *)((const uint16_t *)w + index));
  if (dtype == VLM_DTYPE_F16) return _mm256_cvtph_ps(halves);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(halves), 16));
}

/* rows x vectors accumulators over columns [0, 8 * vectors) of the tile
 * `t` (already offset to its column group); the last vector holds `last`
 * (1..8) columns. */
static inline __attribute__((always_inline)) CPU_TARGET_AVX2 void
avx2_gemm(const cpu_gemm_tile *t, vlm_dtype dtype, int rows, int vectors, int last) {
  __m256 acc[CPU_GEMM_MAX_ROWS][8];
  __m256i tail = avx2_mask(last);
  bool partial = last < 8;
#pragma GCC unroll 8
  for (int r = 0; r < rows; r++)
#pragma GCC unroll 8
    for (int v = 0; v < vectors; v++) {
      const float *p = t->out + r * t->out_stride + 8 * v;
      acc[r][v] = !t->resume ? _mm256_setzero_ps()
                  : partial && v == vectors - 1 ? _mm256_maskload_ps(p, tail)
                                                : _mm256_loadu_ps(p);
    }
  const float *x = t->x;
  int64_t x_stride = t->x_stride, w_step = t->w_step;
  for (int64_t k = 0; k < t->k_count; k++) {
    if (t->prefetch) {
      _mm_prefetch(t->prefetch + 128 * k, _MM_HINT_T0);
      _mm_prefetch(t->prefetch + 128 * k + 64, _MM_HINT_T0);
    }
    if (rows == 1) {
      /* 8 accumulators: each weight vector goes straight into its fma, or
       * 8 widened vectors, 8 sums and the input would need 17 registers
       * (one sum spilled: a chain through memory, measured 8x slower). */
      __m256 xb = _mm256_broadcast_ss(x + k);
#pragma GCC unroll 8
      for (int v = 0; v < vectors; v++) {
        __m256 w = avx2_weights(t->w, dtype, k * w_step + 8 * v, tail, partial && v == vectors - 1);
        acc[0][v] = _mm256_fmadd_ps(xb, w, acc[0][v]);
        __asm__("" : "+x"(acc[0][v])); /* keeps the load next to its fma */
      }
      continue;
    }
    __m256 wv[8];
#pragma GCC unroll 8
    for (int v = 0; v < vectors; v++)
      wv[v] = avx2_weights(t->w, dtype, k * w_step + 8 * v, tail, partial && v == vectors - 1);
#pragma GCC unroll 8
    for (int r = 0; r < rows; r++) {
      __m256 xb = _mm256_broadcast_ss(x + r * x_stride + k);
#pragma GCC unroll 8
      for (int v = 0; v < vectors; v++) acc[r][v] = _mm256_fmadd_ps(xb, wv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < rows; r++)
#pragma GCC unroll 8
    for (int v = 0; v < vectors; v++) {
      __m256 sum = acc[r][v];
      bool masked = partial && v == vectors - 1;
      if (t->bias) sum = _mm256_add_ps(sum, masked ? _mm256_maskload_ps(t->bias + 8 * v, tail)
                                                   : _mm256_loadu_ps(t->bias + 8 * v));
      float *p = t->out + r * t->out_stride + 8 * v;
      if (masked) _mm256_maskstore_ps(p, tail, sum);
      else _mm256_storeu_ps(p, sum);
    }
}

/* Column groups of 8 * `vectors`; the last group may be narrower (f32
 * only: bf16/f16 panels are whole). */
static inline __attribute__((always_inline)) CPU_TARGET_AVX2 void
avx2_gemm_groups(const cpu_gemm_tile *t, vlm_dtype dtype, int rows, int vectors) {
  int width = 8 * vectors;
  int64_t element = dtype == VLM_DTYPE_F32 ? 4 : 2;
  for (int c = 0; c < t->cols; c += width) {
    cpu_gemm_tile group = *t;
    group.w = (const char *)t->w + c * element;
    group.out = t->out + c;
    group.bias = t->bias ? t->bias + c : NULL;
    if (c > 0) group.prefetch = NULL;
    int left = t->cols - c;
    if (left >= width) {
      avx2_gemm(&group, dtype, rows, vectors, 8);
      continue;
    }
    /* A narrower last group: as many whole vectors as it needs. */
    int needed = (left + 7) / 8, last = left - 8 * (needed - 1);
    switch (needed) {
      case 1: avx2_gemm(&group, dtype, rows, 1, last); break;
      case 2: avx2_gemm(&group, dtype, rows, 2, last); break;
      case 3: avx2_gemm(&group, dtype, rows, 3, last); break;
      case 4: avx2_gemm(&group, dtype, rows, 4, last); break;
      case 5: avx2_gemm(&group, dtype, rows, 5, last); break;
      case 6: avx2_gemm(&group, dtype, rows, 6, last); break;
      case 7: avx2_gemm(&group, dtype, rows, 7, last); break;
      default: avx2_gemm(&group, dtype, rows, 8, last); break;
    }
  }
}

/* Rows 3 to 8 (batched decode) as tiles of at most 4 rows x 3
 * vectors: 12 accumulators, 3 weight vectors and a broadcast, all 16 ymm
 * registers; each broadcast input serves 3 fmas. In L1, one Zen 5 core: 8
 * rows 76% of the FMA peak as 8 x 1 (one broadcast per fma), 92% as two
 * 4 x 3 tiles. */
static inline __attribute__((always_inline)) CPU_TARGET_AVX2 void
avx2_gemm_fours(const cpu_gemm_tile *t, vlm_dtype dtype, int rows) {
  cpu_gemm_tile part = *t;
  if (rows > 4) {
    avx2_gemm_groups(&part, dtype, 4, 3);
    part.x += 4 * t->x_stride;
    part.out += 4 * t->out_stride;
    part.prefetch = NULL;
    rows -= 4;
  }
  switch (rows) {
    case 4: avx2_gemm_groups(&part, dtype, 4, 3); return;
    case 3: avx2_gemm_groups(&part, dtype, 3, 3); return;
    case 2: avx2_gemm_groups(&part, dtype, 2, 4); return;
    default: avx2_gemm_groups(&part, dtype, 1, 8); return;
  }
}

/* 1 row: 8 vectors (64 outputs, one pass over a panel); 2 rows: 4; 5 and
 * 6: 2 (12 accumulators at 6 rows, with 2 weight vectors and a broadcast:
 * 93% of the peak in L1); 3, 4, 7 and 8: tiles of at most 4 x 3 (above;
 * 3 rows 66% -> 85%, 4 rows 81% -> 90%, 7 rows 76% -> 89%). */
#define AVX2_GEMM_FUNCTION(name, dtype)                                   \
  static CPU_TARGET_AVX2 void name(const cpu_gemm_tile *t, int rows) {   \
    switch (rows) {                                                       \
      case 8: avx2_gemm_fours(t, dtype, 8); return;                       \
      case 7: avx2_gemm_fours(t, dtype, 7); return;                       \
      case 6: avx2_gemm_groups(t, dtype, 6, 2); return;                   \
      case 5: avx2_gemm_groups(t, dtype, 5, 2); return;                   \
      case 4: avx2_gemm_fours(t, dtype, 4); return;                       \
      case 3: avx2_gemm_fours(t, dtype, 3); return;                       \
      case 2: avx2_gemm_groups(t, dtype, 2, 4); return;                   \
      default: avx2_gemm_groups(t, dtype, 1, 8); return;                  \
    }                                                                     \
  }
AVX2_GEMM_FUNCTION(avx2_gemm_f32, VLM_DTYPE_F32)
AVX2_GEMM_FUNCTION(avx2_gemm_bf16, VLM_DTYPE_BF16)
AVX2_GEMM_FUNCTION(avx2_gemm_f16, VLM_DTYPE_F16)

#endif /* CPU_HAVE_X86_PATHS */

cpu_gemm_kernel cpu_gemm_select(vlm_dtype dtype) {
  switch (cpu_kernel_path_active()) {
#if CPU_HAVE_X86_PATHS
    case CPU_KERNEL_PATH_AVX512:
      return dtype == VLM_DTYPE_F32 ? avx512_gemm_f32 : dtype == VLM_DTYPE_BF16 ? avx512_gemm_bf16 : avx512_gemm_f16;
    case CPU_KERNEL_PATH_AVX2:
      return dtype == VLM_DTYPE_F32 ? avx2_gemm_f32 : dtype == VLM_DTYPE_BF16 ? avx2_gemm_bf16 : avx2_gemm_f16;
#endif
    default:
      return dtype == VLM_DTYPE_F32 ? portable_gemm_f32 : dtype == VLM_DTYPE_BF16 ? portable_gemm_bf16 : portable_gemm_f16;
  }
}
