/* The quantized kernels of cpu_quant.h in three paths: a fused decode tile
 * (dequantize in registers, then the contract fma chain) and a
 * dequantizer to f32 rows for the GEMM path. Every dequantized weight is
 * exact in f32 (cpu_quant.h), so the paths agree bit for bit whatever
 * instructions form it: scale * q, or fmsub(q, scale, zero * scale), whose
 * one rounding is of an exact value. */
#include "backends/cpu/cpu_internal.h"

#include <math.h>
#include <string.h>

#if CPU_HAVE_X86_PATHS
#include <immintrin.h>
#endif

#include "backends/cpu/cpu_quant.h"

/* Block layout: scales (64 f16) at 0, q4 zeros (64 u8) at 128, values at
 * 128 (q8) or 192 (q4); a q8 row is 64 bytes, a q4 row 32. */
#define SCALES_OFFSET 0
#define ZEROS_OFFSET 128
#define Q8_VALUES_OFFSET 128
#define Q4_VALUES_OFFSET 192

static inline const uint16_t *block_scales(const uint8_t *block) {
  return (const uint16_t *)(const void *)(block + SCALES_OFFSET);
}

/* ---- Portable path --------------------------------------------------------- */

static inline float portable_weight(const uint8_t *block, cpu_quant_format format, int64_t k, int c) {
  float scale = vlm_f16_to_f32(block_scales(block)[c]);
  if (format == CPU_QUANT_Q8) return scale * (float)(int8_t)block[Q8_VALUES_OFFSET + k * 64 + c];
  uint8_t byte = block[Q4_VALUES_OFFSET + k * 32 + (c & 31)];
  int q = c < 32 ? byte & 15 : byte >> 4;
  return scale * (float)(q - (int)block[ZEROS_OFFSET + c]);
}

static void portable_dequantize(const uint8_t *block, cpu_quant_format format, int64_t k_first, int64_t k_count,
                                float *out) {
  for (int64_t k = 0; k < k_count; k++)
    for (int c = 0; c < CPU_PANEL; c++) out[k * CPU_PANEL + c] = portable_weight(block, format, k_first + k, c);
}

static void portable_tile(const cpu_quant_tile *t, cpu_quant_format format, int rows) {
  float acc[CPU_QUANT_FUSED_ROWS][CPU_PANEL], w[CPU_PANEL];
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < t->cols; c++) acc[r][c] = t->resume ? t->out[r * t->out_stride + c] : 0.0f;
  for (int64_t k = 0; k < t->k_count; k++) {
    for (int c = 0; c < t->cols; c++) w[c] = portable_weight(t->block, format, k, c);
    for (int r = 0; r < rows; r++) {
      float x = t->x[r * t->x_stride + k];
      for (int c = 0; c < t->cols; c++) acc[r][c] = fmaf(x, w[c], acc[r][c]);
    }
  }
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < t->cols; c++)
      t->out[r * t->out_stride + c] = t->bias ? acc[r][c] + t->bias[c] : acc[r][c];
}

static void portable_q8(const cpu_quant_tile *t, int rows) { portable_tile(t, CPU_QUANT_Q8, rows); }
static void portable_q4(const cpu_quant_tile *t, int rows) { portable_tile(t, CPU_QUANT_Q4, rows); }
static void portable_dequantize_q8(const uint8_t *block, int64_t group_size, int64_t k_first, int64_t k_count,
                                   float *out) {
  (void)group_size;
  portable_dequantize(block, CPU_QUANT_Q8, k_first, k_count, out);
}
static void portable_dequantize_q4(const uint8_t *block, int64_t group_size, int64_t k_first, int64_t k_count,
                                   float *out) {
  (void)group_size;
  portable_dequantize(block, CPU_QUANT_Q4, k_first, k_count, out);
}

#if CPU_HAVE_X86_PATHS

/* ---- AVX-512 path ---------------------------------------------------------- */

/* Passes of `vectors` (4 or 2) vectors of 16 outputs: 1-4 rows take the
 * whole panel (16 accumulators at 4 rows, 4 scales, 4 offsets, 4 weight
 * vectors), 5-8 rows halves (16 accumulators at 8 rows). As on AVX2, a q4
 * pass pairs low and high nibbles of the same 16 bytes (outputs c and
 * c + 32): one widening, then masks and a shift. */

static inline __attribute__((always_inline)) int avx512_column(cpu_quant_format format, int vectors, int pass,
                                                               int v) {
  if (format == CPU_QUANT_Q8) return 16 * vectors * pass + 16 * v;
  int half = vectors / 2;
  return (v >= half ? 32 : 0) + 16 * half * pass + 16 * (v % half);
}

static inline __attribute__((always_inline)) CPU_TARGET_AVX512 void
avx512_group(const uint8_t *block, cpu_quant_format format, int vectors, int pass, __m512 *scale, __m512 *offset) {
  const uint16_t *scales = block_scales(block);
#pragma GCC unroll 4
  for (int v = 0; v < vectors; v++) {
    int c = avx512_column(format, vectors, pass, v);
    scale[v] = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(scales + c)));
    offset[v] = _mm512_setzero_ps();
    if (format == CPU_QUANT_Q4) {
      __m128i zeros = _mm_loadu_si128((const __m128i *)(const void *)(block + ZEROS_OFFSET + c));
      offset[v] = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(zeros)), scale[v]);
    }
  }
}

/* The pass's weights of step k, exact. */
static inline __attribute__((always_inline)) CPU_TARGET_AVX512 void
avx512_weights(const uint8_t *block, cpu_quant_format format, const __m512 *scale, const __m512 *offset, int64_t k,
               int vectors, int pass, __m512 *w) {
  if (format == CPU_QUANT_Q8) {
    const uint8_t *row = block + Q8_VALUES_OFFSET + k * 64;
#pragma GCC unroll 4
    for (int v = 0; v < vectors; v++) {
      const void *p = row + avx512_column(format, vectors, pass, v);
      __m512i q = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p));
      w[v] = _mm512_mul_ps(_mm512_cvtepi32_ps(q), scale[v]);
    }
    return;
  }
  const uint8_t *row = block + Q4_VALUES_OFFSET + k * 32;
  const __m512i nibble = _mm512_set1_epi32(15);
  int half = vectors / 2;
#pragma GCC unroll 2
  for (int v = 0; v < half; v++) {
    const void *p = row + avx512_column(format, vectors, pass, v);
    __m512i bytes = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p));
    /* Bytes zero-extended: the shift alone leaves the high nibble. */
    __m512i low = _mm512_and_si512(bytes, nibble), high = _mm512_srli_epi32(bytes, 4);
    w[v] = _mm512_fmsub_ps(_mm512_cvtepi32_ps(low), scale[v], offset[v]);
    w[v + half] = _mm512_fmsub_ps(_mm512_cvtepi32_ps(high), scale[v + half], offset[v + half]);
  }
}

static inline __attribute__((always_inline)) CPU_TARGET_AVX512 void
avx512_tile(const cpu_quant_tile *t, cpu_quant_format format, int rows, int vectors) {
  for (int pass = 0; pass < CPU_PANEL / (16 * vectors); pass++) {
    int columns[4];
    __mmask16 masks[4];
    bool any = false;
#pragma GCC unroll 4
    for (int v = 0; v < vectors; v++) {
      columns[v] = avx512_column(format, vectors, pass, v);
      int left = t->cols - columns[v];
      masks[v] = (__mmask16)(left >= 16 ? 0xFFFF : left <= 0 ? 0 : (1u << left) - 1);
      any = any || left > 0;
    }
    if (!any) continue;
    __m512 scale[4], offset[4];
    avx512_group(t->block, format, vectors, pass, scale, offset);
    __m512 acc[CPU_QUANT_FUSED_ROWS][4];
#pragma GCC unroll 8
    for (int r = 0; r < rows; r++)
#pragma GCC unroll 4
      for (int v = 0; v < vectors; v++)
        acc[r][v] = t->resume ? _mm512_maskz_loadu_ps(masks[v], t->out + r * t->out_stride + columns[v])
                              : _mm512_setzero_ps();
    for (int64_t k = 0; k < t->k_count; k++) {
      __m512 w[4];
      avx512_weights(t->block, format, scale, offset, k, vectors, pass, w);
#pragma GCC unroll 8
      for (int r = 0; r < rows; r++) {
        __m512 xb = _mm512_set1_ps(t->x[r * t->x_stride + k]);
#pragma GCC unroll 4
        for (int v = 0; v < vectors; v++) acc[r][v] = _mm512_fmadd_ps(xb, w[v], acc[r][v]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < rows; r++)
#pragma GCC unroll 4
      for (int v = 0; v < vectors; v++) {
        __m512 sum = acc[r][v];
        if (t->bias) sum = _mm512_add_ps(sum, _mm512_maskz_loadu_ps(masks[v], t->bias + columns[v]));
        _mm512_mask_storeu_ps(t->out + r * t->out_stride + columns[v], masks[v], sum);
      }
  }
}

#define AVX512_KERNEL(name, format)                                       \
  static CPU_TARGET_AVX512 void name(const cpu_quant_tile *t, int rows) { \
    switch (rows) {                                                       \
      case 8: avx512_tile(t, format, 8, 2); return;                       \
      case 7: avx512_tile(t, format, 7, 2); return;                       \
      case 6: avx512_tile(t, format, 6, 2); return;                       \
      case 5: avx512_tile(t, format, 5, 2); return;                       \
      case 4: avx512_tile(t, format, 4, 4); return;                       \
      case 3: avx512_tile(t, format, 3, 4); return;                       \
      case 2: avx512_tile(t, format, 2, 4); return;                       \
      default: avx512_tile(t, format, 1, 4); return;                      \
    }                                                                     \
  }
AVX512_KERNEL(avx512_q8, CPU_QUANT_Q8)
AVX512_KERNEL(avx512_q4, CPU_QUANT_Q4)

static inline __attribute__((always_inline)) CPU_TARGET_AVX512 void
avx512_dequantize(const uint8_t *block, cpu_quant_format format, int64_t k_first, int64_t k_count, float *out) {
  __m512 scale[4], offset[4];
  avx512_group(block, format, 4, 0, scale, offset);
  for (int64_t k = 0; k < k_count; k++) {
    __m512 w[4];
    avx512_weights(block, format, scale, offset, k_first + k, 4, 0, w);
#pragma GCC unroll 4
    for (int v = 0; v < 4; v++) _mm512_storeu_ps(out + k * CPU_PANEL + avx512_column(format, 4, 0, v), w[v]);
  }
}
static CPU_TARGET_AVX512 void avx512_dequantize_q8(const uint8_t *block, int64_t group_size, int64_t k_first,
                                                   int64_t k_count, float *out) {
  (void)group_size;
  avx512_dequantize(block, CPU_QUANT_Q8, k_first, k_count, out);
}
static CPU_TARGET_AVX512 void avx512_dequantize_q4(const uint8_t *block, int64_t group_size, int64_t k_first,
                                                   int64_t k_count, float *out) {
  (void)group_size;
  avx512_dequantize(block, CPU_QUANT_Q4, k_first, k_count, out);
}

/* ---- AVX2 path ------------------------------------------------------------- */

/* 16 registers: passes of `vectors` (2 or 4) vectors of 8 outputs: rows x
 * vectors accumulators, as many scales and offsets, and a broadcast. 1 row
 * takes 4 vectors (4 chains: with 2, the chains of 4-cycle fmas would
 * bound a step), 2-4 rows 2 (15 registers at 4 rows). q8 passes are
 * consecutive columns; a q4 pass pairs each vector of low nibbles with the
 * high nibbles of the same bytes (columns c and c + 32): one byte widening
 * (a shuffle) then masks and a shift serve both. */

static inline __attribute__((always_inline)) CPU_TARGET_AVX2 __m256i avx2_lanes(int count) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), lanes);
}

static inline __attribute__((always_inline)) int avx2_passes(int vectors) {
  return CPU_PANEL / (8 * vectors);
}

/* The first column of vector v of pass `pass`. q4, 4 vectors: bytes
 * [16 pass, 16 pass + 16) low then high nibbles; 2 vectors: bytes
 * [8 pass, 8 pass + 8). */
static inline __attribute__((always_inline)) int avx2_column(cpu_quant_format format, int vectors, int pass, int v) {
  if (format == CPU_QUANT_Q8) return 8 * vectors * pass + 8 * v;
  int half = vectors / 2; /* vectors per nibble half */
  return (v >= half ? 32 : 0) + 8 * half * pass + 8 * (v % half);
}

static inline __attribute__((always_inline)) CPU_TARGET_AVX2 void
avx2_weights(const uint8_t *block, cpu_quant_format format, const __m256 *scale, const __m256 *offset, int64_t k,
             int vectors, int pass, __m256 *w) {
  if (format == CPU_QUANT_Q8) {
    const uint8_t *row = block + Q8_VALUES_OFFSET + k * 64;
#pragma GCC unroll 4
    for (int v = 0; v < vectors; v++) {
      const void *p = row + avx2_column(format, vectors, pass, v);
      __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p));
      w[v] = _mm256_mul_ps(_mm256_cvtepi32_ps(q), scale[v]);
    }
    return;
  }
  const uint8_t *row = block + Q4_VALUES_OFFSET + k * 32;
  const __m256i nibble = _mm256_set1_epi32(15);
  int half = vectors / 2;
#pragma GCC unroll 2
  for (int v = 0; v < half; v++) {
    const void *p = row + avx2_column(format, vectors, pass, v);
    __m256i bytes = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
    /* Bytes zero-extended: the shift alone leaves the high nibble. */
    __m256i low = _mm256_and_si256(bytes, nibble), high = _mm256_srli_epi32(bytes, 4);
    w[v] = _mm256_fmsub_ps(_mm256_cvtepi32_ps(low), scale[v], offset[v]);
    w[v + half] = _mm256_fmsub_ps(_mm256_cvtepi32_ps(high), scale[v + half], offset[v + half]);
  }
}

static inline __attribute__((always_inline)) CPU_TARGET_AVX2 void
avx2_group(const uint8_t *block, cpu_quant_format format, int vectors, int pass, __m256 *scale, __m256 *offset) {
  const uint16_t *scales = block_scales(block);
#pragma GCC unroll 4
  for (int v = 0; v < vectors; v++) {
    int c = avx2_column(format, vectors, pass, v);
    scale[v] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(scales + c)));
    offset[v] = _mm256_setzero_ps();
    if (format == CPU_QUANT_Q4) {
      __m128i zeros = _mm_loadl_epi64((const __m128i *)(const void *)(block + ZEROS_OFFSET + c));
      offset[v] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(zeros)), scale[v]);
    }
  }
}

static inline __attribute__((always_inline)) CPU_TARGET_AVX2 void
avx2_tile(const cpu_quant_tile *t, cpu_quant_format format, int rows, int vectors) {
  for (int pass = 0; pass < avx2_passes(vectors); pass++) {
    int columns[4];
    bool any = false, whole = true;
    __m256i mask[4];
#pragma GCC unroll 4
    for (int v = 0; v < vectors; v++) {
      columns[v] = avx2_column(format, vectors, pass, v);
      mask[v] = avx2_lanes(t->cols - columns[v]);
      any = any || columns[v] < t->cols;
      whole = whole && columns[v] + 8 <= t->cols;
    }
    if (!any) continue;
    __m256 scale[4], offset[4];
    avx2_group(t->block, format, vectors, pass, scale, offset);
    __m256 acc[CPU_QUANT_FUSED_ROWS][4];
#pragma GCC unroll 4
    for (int r = 0; r < rows; r++)
#pragma GCC unroll 4
      for (int v = 0; v < vectors; v++) {
        const float *p = t->out + r * t->out_stride + columns[v];
        acc[r][v] = !t->resume ? _mm256_setzero_ps() : whole ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask[v]);
      }
    for (int64_t k = 0; k < t->k_count; k++) {
      __m256 w[4];
      avx2_weights(t->block, format, scale, offset, k, vectors, pass, w);
#pragma GCC unroll 4
      for (int r = 0; r < rows; r++) {
        __m256 xb = _mm256_broadcast_ss(t->x + r * t->x_stride + k);
#pragma GCC unroll 4
        for (int v = 0; v < vectors; v++) acc[r][v] = _mm256_fmadd_ps(xb, w[v], acc[r][v]);
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < rows; r++)
#pragma GCC unroll 4
      for (int v = 0; v < vectors; v++) {
        __m256 sum = acc[r][v];
        const float *b = t->bias ? t->bias + columns[v] : NULL;
        if (b) sum = _mm256_add_ps(sum, whole ? _mm256_loadu_ps(b) : _mm256_maskload_ps(b, mask[v]));
        float *p = t->out + r * t->out_stride + columns[v];
        if (whole) _mm256_storeu_ps(p, sum);
        else _mm256_maskstore_ps(p, mask[v], sum);
      }
  }
}

#define AVX2_KERNEL(name, format)                                    \
  static CPU_TARGET_AVX2 void name(const cpu_quant_tile *t, int rows) { \
    switch (rows) {                                                  \
      case 4: avx2_tile(t, format, 4, 2); return;                    \
      case 3: avx2_tile(t, format, 3, 2); return;                    \
      case 2: avx2_tile(t, format, 2, 2); return;                    \
      default: avx2_tile(t, format, 1, 4); return;                   \
    }                                                                \
  }
AVX2_KERNEL(avx2_q8, CPU_QUANT_Q8)
AVX2_KERNEL(avx2_q4, CPU_QUANT_Q4)

static inline __attribute__((always_inline)) CPU_TARGET_AVX2 void
avx2_dequantize(const uint8_t *block, cpu_quant_format format, int64_t k_first, int64_t k_count, float *out) {
  for (int pass = 0; pass < avx2_passes(4); pass++) {
    __m256 scale[4], offset[4];
    avx2_group(block, format, 4, pass, scale, offset);
    for (int64_t k = 0; k < k_count; k++) {
      __m256 w[4];
      avx2_weights(block, format, scale, offset, k_first + k, 4, pass, w);
#pragma GCC unroll 4
      for (int v = 0; v < 4; v++) _mm256_storeu_ps(out + k * CPU_PANEL + avx2_column(format, 4, pass, v), w[v]);
    }
  }
}
static CPU_TARGET_AVX2 void avx2_dequantize_q8(const uint8_t *block, int64_t group_size, int64_t k_first,
                                               int64_t k_count, float *out) {
  (void)group_size;
  avx2_dequantize(block, CPU_QUANT_Q8, k_first, k_count, out);
}
static CPU_TARGET_AVX2 void avx2_dequantize_q4(const uint8_t *block, int64_t group_size, int64_t k_first,
                                               int64_t k_count, float *out) {
  (void)group_size;
  avx2_dequantize(block, CPU_QUANT_Q4, k_first, k_count, out);
}

#endif /* CPU_HAVE_X86_PATHS */

int cpu_quant_fused_rows(void) {
  return cpu_kernel_path_active() == CPU_KERNEL_PATH_AVX2 ? 4 : CPU_QUANT_FUSED_ROWS;
}

cpu_quant_kernel cpu_quant_kernel_select(cpu_quant_format format) {
  bool q8 = format == CPU_QUANT_Q8;
  switch (cpu_kernel_path_active()) {
#if CPU_HAVE_X86_PATHS
    case CPU_KERNEL_PATH_AVX512: return q8 ? avx512_q8 : avx512_q4;
    case CPU_KERNEL_PATH_AVX2: return q8 ? avx2_q8 : avx2_q4;
#endif
    default: return q8 ? portable_q8 : portable_q4;
  }
}

cpu_quant_dequantizer cpu_quant_dequantizer_select(cpu_quant_format format) {
  bool q8 = format == CPU_QUANT_Q8;
  switch (cpu_kernel_path_active()) {
#if CPU_HAVE_X86_PATHS
    case CPU_KERNEL_PATH_AVX512: return q8 ? avx512_dequantize_q8 : avx512_dequantize_q4;
    case CPU_KERNEL_PATH_AVX2: return q8 ? avx2_dequantize_q8 : avx2_dequantize_q4;
#endif
    default: return q8 ? portable_dequantize_q8 : portable_dequantize_q4;
  }
}
