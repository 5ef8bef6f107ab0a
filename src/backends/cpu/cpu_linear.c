/* Linear layers (GEMV for decode, GEMM for prefill) and the contract dot
 * product, in three paths that agree bit for bit.
 *
 * Every output element y[t, o] is one 16-lane contract dot product of input
 * row t with weight row o (see cpu_kernels.h), then + bias[o]. The paths
 * differ only in how many such dot products they run at once: AVX-512 keeps a
 * tile of 4 rows x 6 outputs = 24 zmm accumulators, so each weight vector is
 * converted once and used by 4 rows and each input vector is used by 6
 * outputs; AVX2 a tile of 2 x 3 (two ymm registers per accumulator); the
 * portable path one element at a time. Tiling never mixes elements, so the
 * result of an element does not depend on the tile, the row count or the
 * thread that computed it: that is the batch-invariance argument in full.
 * GEMMs also cut k into chunks and park the 16-lane accumulators in memory
 * between chunks; a float stored and reloaded is the same float, so that
 * too changes speed only.
 *
 * The horizontal sum is a fixed tree (8 + 8, 4 + 4, 2 + 2, 1 + 1). A faster
 * transposing reduction of several accumulators at once would be allowed if
 * it performs the same additions. */
#include "backends/cpu/cpu_internal.h"

#include <math.h>
#include <string.h>

#if CPU_HAVE_X86_PATHS
#include <immintrin.h>
#endif

#include "backends/cpu/cpu_kernels.h"
#include "core/alloc.h"

#define LANES 16
/* Threads split the outputs in groups of this many (a multiple of every
 * path's tile width, so only a thread's last tile can be narrow). */
#define OUTPUT_GROUP 6
/* Input rows per block of a GEMM: every weight tile is widened once per
 * block, so a block should hold many rows even for long rows (a 5632-wide
 * down projection gave 29-row blocks at 640 KiB, widening its weights 21
 * times for 596 rows). 4 MiB of rows live in L3 rather than L2; the
 * hardware prefetcher streams a row tile's rows well from there. Measured
 * (2 threads, bf16, cpu-time GFLOP/s per core): 596x2048x5632 57-61 -> 78-84,
 * 512x896x4864 60-70 -> 84-85, 577x1024x4096 61-69 -> 78-87 against
 * 640 KiB; 8 and 16 MiB were no better. */
#define ROW_BLOCK_BYTES (4096 * 1024)
/* Software prefetch of the next weight tile (see tile_arguments) only when a
 * tile is small: long rows are streams the hardware prefetcher follows well,
 * and prefetching a whole large tile ahead would evict the current one from
 * L1. */
#define PREFETCH_MAX_TILE_BYTES (16 * 1024)
/* One input row (decode at batch 1) against weight rows of at most this
 * many bytes runs one output at a time, so the weights are read as one
 * sequential stream, which the hardware prefetcher follows at nearly the
 * plain-read bandwidth. The 1x6 tile interleaves six rows of a few KiB,
 * six short streams, and even with its software prefetch reached ~70% of
 * it. Longer rows keep the 1x6 tile: one row's fma chain alone is bound by
 * the fma latency. Measured (bf16, 2 threads, GB/s, sequential vs 1x6,
 * noisy VM, plain read 24-33): 4864x896 23-30 vs 18-22, 151936x896 (a
 * vocabulary head) 27-29 vs 19-21, 4096x1024 22-27 vs 16-21, 2048x2048
 * 22-25 vs 21-24, 2048x3072 18-19 vs 21-22, 896x4864 16-20 vs 22-25. */
#define SEQUENTIAL_MAX_ROW_BYTES 4096
/* k per chunk in a GEMM (a multiple of 16): a widened chunk of a 6-output
 * tile is 6 x 1024 x 4 = 24 KiB, which stays in L1 while the row tiles of a
 * block stream past it (measured: 512 and 1024 tie for 896 inputs, 1024 is
 * best for 4864). */
#define CHUNK_K 1024
/* Bytes per weight element (f32, bf16 or f16), inline: vlm_dtype_size is an
 * out-of-line call, and one in a tile's k loop made the compiler spill and
 * reload every accumulator around it at each step. */
static inline int64_t weight_element_bytes(vlm_dtype dtype) { return dtype == VLM_DTYPE_F32 ? 4 : 2; }

/* Parked accumulators of one (row, output) pair. */
#define PARTIAL_PAIR(r, c) (((r) * 6 + (c)) * LANES)

/* ---- Portable path --------------------------------------------------------- */

static float tree_sum(const float lanes[LANES]) {
  float s8[8], s4[4];
  for (int l = 0; l < 8; l++) s8[l] = lanes[l] + lanes[l + 8];
  for (int l = 0; l < 4; l++) s4[l] = s8[l] + s8[l + 4];
  float s2_0 = s4[0] + s4[2], s2_1 = s4[1] + s4[3];
  return s2_0 + s2_1;
}

/* Reads 16 (or `count` < 16, zero-padded) elements from index `index`. */
static void portable_load(const void *data, vlm_dtype dtype, int64_t index,
                          int count, float out[LANES]) {
  for (int l = 0; l < LANES; l++)
    out[l] = l < count ? cpu_load_element(data, dtype, index + l) : 0.0f;
}

static float portable_dot(const float *x, const void *w, vlm_dtype dtype,
                          int64_t w_index, int64_t count) {
  float acc[LANES] = {0}, xv[LANES], wv[LANES];
  for (int64_t k = 0; k < count; k += LANES) {
    int block = count - k < LANES ? (int)(count - k) : LANES;
    portable_load(x, VLM_DTYPE_F32, k, block, xv);
    portable_load(w, dtype, w_index + k, block, wv);
    for (int l = 0; l < LANES; l++) acc[l] = fmaf(xv[l], wv[l], acc[l]);
  }
  return tree_sum(acc);
}

typedef struct linear_job {
  const cpu_linear_weights *weights;
  const float *input;
  int64_t row_count;
  float *output;
} linear_job;

/* One tile: `rows` input rows from x against `cols` weight rows from w,
 * written to y; the driver resolves pointers and bias values. */
typedef struct tile_arguments {
  const float *x;     /* first input row of the tile at the first k */
  const void *w;      /* first weight row of the tile at the first k */
  int64_t x_stride, w_stride; /* between rows, in elements */
  int64_t k_count;    /* k values in this call */
  float *y;           /* y[first row, first output] */
  int64_t y_stride;   /* output_count */
  const float *bias;  /* `cols` values, or NULL */
  /* Long rows are cut into chunks of k (CHUNK_K) so one chunk of a weight
   * tile stays in L1 across row tiles. Between chunks the 16-lane
   * accumulators are parked here exactly as they are ([row][6][16] floats),
   * which changes nothing in the arithmetic. NULL: one call covers all k. */
  float *partial;
  bool first_chunk, last_chunk;
  /* Decode reads each weight once, straight from memory. Tiles read their
   * rows interleaved, 16 elements of each at a time, which the hardware
   * prefetcher follows poorly over rows of a few KiB; so each k step also
   * prefetches its share of the next tile, in address order. NULL: none. */
  const char *prefetch;
} tile_arguments;

static float bias_value(const cpu_linear_weights *weights, int64_t output) {
  return weights->bias ? cpu_load_element(weights->bias, weights->dtype, output) : 0.0f;
}

static void portable_linear_range(const linear_job *job, int64_t output_begin,
                                  int64_t output_end) {
  const cpu_linear_weights *weights = job->weights;
  int64_t in = weights->input_count, out = weights->output_count;
  for (int64_t t = 0; t < job->row_count; t++)
    for (int64_t o = output_begin; o < output_end; o++) {
      float sum = portable_dot(job->input + t * in, weights->weight,
                               weights->dtype, o * in, in);
      /* The bias is added to every path's result the same way: one f32
       * addition after the tree (adding +0 when absent changes nothing but
       * the sign of a zero, so skip it then, on every path). */
      if (weights->bias) sum += bias_value(weights, o);
      job->output[t * out + o] = sum;
    }
}

/* ---- AVX-512 path ---------------------------------------------------------- */
#if CPU_HAVE_X86_PATHS

static inline __attribute__((always_inline)) CPU_TARGET_AVX2 float
tree_sum_from8(__m256 s8) {
  __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  __m128 s1 = _mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1));
  return _mm_cvtss_f32(s1);
}

static inline __attribute__((always_inline)) CPU_TARGET_AVX512 float
avx512_tree_sum(__m512 lanes) {
  __m256 low = _mm512_castps512_ps256(lanes);
  __m256 high = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(lanes), 1));
  return tree_sum_from8(_mm256_add_ps(low, high));
}

static inline __attribute__((always_inline)) CPU_TARGET_AVX512 __m512
avx512_widen(__m256i halves, vlm_dtype dtype) {
  if (dtype == VLM_DTYPE_F16) return _mm512_cvtph_ps(halves);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(halves), 16));
}

/* 16 elements from `index`; `count` < 16 loads that many and zeros the rest
 * (masked loads never touch memory past the end). */
static inline __attribute__((always_inline)) CPU_TARGET_AVX512 __m512
avx512_load(const void *data, vlm_dtype dtype, int64_t index, int count) {
  __mmask16 mask = (__mmask16)((1u << count) - 1);
  if (dtype == VLM_DTYPE_F32) {
    const float *p = (const float *)data + index;
    return count == LANES ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(mask, p);
  }
  const uint16_t *p = (const uint16_t *)data + index;
  __m256i halves = count == LANES ? _mm256_loadu_si256((const __m256i *)p)
                                  : _mm256_maskz_loadu_epi16(mask, p);
  return avx512_widen(halves, dtype);
}

/* One block of 16 k for a rows x cols tile. */
static inline __attribute__((always_inline)) CPU_TARGET_AVX512 void
avx512_tile_step(const tile_arguments *a, vlm_dtype dtype, int64_t k, int count,
                 int rows, int cols, __m512 acc[4][6]) {
  __m512 xv[4];
  if (a->prefetch) {
    int64_t step_bytes = cols * LANES * weight_element_bytes(dtype);
    const char *next = a->prefetch + k / LANES * step_bytes;
    for (int64_t b = 0; b < step_bytes; b += 64) _mm_prefetch(next + b, _MM_HINT_T0);
  }
#pragma GCC unroll 4
  for (int r = 0; r < rows; r++)
    xv[r] = avx512_load(a->x + r * a->x_stride, VLM_DTYPE_F32, k, count);
#pragma GCC unroll 6
  for (int c = 0; c < cols; c++) {
    __m512 wv = avx512_load(a->w, dtype, c * a->w_stride + k, count);
#pragma GCC unroll 4
    for (int r = 0; r < rows; r++) acc[r][c] = _mm512_fmadd_ps(xv[r], wv, acc[r][c]);
  }
}

/* Inlined with constant rows, cols and dtype so the accumulators live in
 * registers. */
static inline __attribute__((always_inline)) CPU_TARGET_AVX512 void
avx512_tile(const tile_arguments *a, vlm_dtype dtype, int rows, int cols) {
  __m512 acc[4][6];
  bool resume = a->partial && !a->first_chunk, park = a->partial && !a->last_chunk;
#pragma GCC unroll 4
  for (int r = 0; r < rows; r++)
#pragma GCC unroll 6
    for (int c = 0; c < cols; c++)
      acc[r][c] = resume ? _mm512_loadu_ps(a->partial + PARTIAL_PAIR(r, c)) : _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + LANES <= a->k_count; k += LANES) avx512_tile_step(a, dtype, k, LANES, rows, cols, acc);
  if (k < a->k_count) avx512_tile_step(a, dtype, k, (int)(a->k_count - k), rows, cols, acc);
#pragma GCC unroll 4
  for (int r = 0; r < rows; r++)
#pragma GCC unroll 6
    for (int c = 0; c < cols; c++) {
      if (park) {
        _mm512_storeu_ps(a->partial + PARTIAL_PAIR(r, c), acc[r][c]);
        continue;
      }
      float sum = avx512_tree_sum(acc[r][c]);
      if (a->bias) sum += a->bias[c];
      a->y[r * a->y_stride + c] = sum;
    }
}

/* Full tiles are 4 x 6; a narrower last tile runs one output at a time. */
#define AVX512_TILE_FUNCTION(name, dtype)                                      \
  static CPU_TARGET_AVX512 void name(const tile_arguments *a, int rows,        \
                                     int cols) {                               \
    if (cols == 6) {                                                           \
      switch (rows) {                                                          \
        case 4: avx512_tile(a, dtype, 4, 6); return;                           \
        case 3: avx512_tile(a, dtype, 3, 6); return;                           \
        case 2: avx512_tile(a, dtype, 2, 6); return;                           \
        default: avx512_tile(a, dtype, 1, 6); return;                          \
      }                                                                        \
    }                                                                          \
    for (int c = 0; c < cols; c++) {                                          \
      tile_arguments one = *a;                                                 \
      one.w = (const char *)a->w + c * a->w_stride * (int64_t)vlm_dtype_size(dtype); \
      one.y = a->y + c;                                                        \
      one.bias = a->bias ? a->bias + c : NULL;                                 \
      one.partial = a->partial ? a->partial + PARTIAL_PAIR(0, c) : NULL;       \
      one.prefetch = NULL;                                                     \
      switch (rows) {                                                          \
        case 4: avx512_tile(&one, dtype, 4, 1); break;                         \
        case 3: avx512_tile(&one, dtype, 3, 1); break;                         \
        case 2: avx512_tile(&one, dtype, 2, 1); break;                         \
        default: avx512_tile(&one, dtype, 1, 1); break;                        \
      }                                                                        \
    }                                                                          \
  }
static CPU_TARGET_AVX512 void avx512_widen_all(const void *w, vlm_dtype dtype,
                                               int64_t count, float *out) {
  int64_t i = 0;
  for (; i + LANES <= count; i += LANES)
    _mm512_storeu_ps(out + i, avx512_load(w, dtype, i, LANES));
  if (i < count)
    _mm512_mask_storeu_ps(out + i, (__mmask16)((1u << (count - i)) - 1),
                          avx512_load(w, dtype, i, (int)(count - i)));
}

AVX512_TILE_FUNCTION(avx512_tile_f32, VLM_DTYPE_F32)
AVX512_TILE_FUNCTION(avx512_tile_bf16, VLM_DTYPE_BF16)
AVX512_TILE_FUNCTION(avx512_tile_f16, VLM_DTYPE_F16)

/* Sixteen contract dots of one f32 row `a` against rows b_0..b_15 (stride
 * b_stride), for attention scores, whose rows are short (head_dim 64 or
 * 128): there the per-dot tree sum cost more than the fmas. The trees of
 * all sixteen run at once, transposed: each step adds exactly the pairs of
 * the written tree (l + l+8, then l + l+4, then l + l+2, then 0 + 1) for
 * every accumulator, so every result has the bits of cpu_dot. */
static inline __attribute__((always_inline)) CPU_TARGET_AVX512 void
avx512_transposed_tree16(const __m512 acc[16], float *out) {
  /* s8 = lanes l + l+8: [0..7] of accumulator 2i, then of 2i+1. */
  __m512 s8[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++)
    s8[i] = _mm512_add_ps(_mm512_shuffle_f32x4(acc[2 * i], acc[2 * i + 1], 0x44),
                          _mm512_shuffle_f32x4(acc[2 * i], acc[2 * i + 1], 0xEE));
  /* s4 = s8 l + l+4: one 128-bit lane per accumulator 4m..4m+3. */
  __m512 s4[4];
#pragma GCC unroll 4
  for (int m = 0; m < 4; m++)
    s4[m] = _mm512_add_ps(_mm512_shuffle_f32x4(s8[2 * m], s8[2 * m + 1], 0x88),
                          _mm512_shuffle_f32x4(s8[2 * m], s8[2 * m + 1], 0xDD));
  /* s2 = s4 0 + 2, 1 + 3: lane k holds accumulators k and 4 + k (of 8). */
  __m512 s2[2];
#pragma GCC unroll 2
  for (int p = 0; p < 2; p++)
    s2[p] = _mm512_add_ps(_mm512_shuffle_ps(s4[2 * p], s4[2 * p + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                          _mm512_shuffle_ps(s4[2 * p], s4[2 * p + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  /* s1 = s2 0 + 1: element 4k + m is accumulator 4m + k. */
  __m512 s1 = _mm512_add_ps(_mm512_shuffle_ps(s2[0], s2[1], _MM_SHUFFLE(2, 0, 2, 0)),
                            _mm512_shuffle_ps(s2[0], s2[1], _MM_SHUFFLE(3, 1, 3, 1)));
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  _mm512_storeu_ps(out, _mm512_permutexvar_ps(order, s1));
}

/* The sixteen rows' dots with `steps` full blocks of 16 (a constant once
 * inlined, so the row `a` stays in registers) and an optional masked last
 * block; one row at a time, so each row is read in address order. */
static inline __attribute__((always_inline)) CPU_TARGET_AVX512 void
avx512_dot_rows16_steps(const float *a, const float *b, int64_t b_stride, int steps, __mmask16 tail, float *out) {
  __m512 av[9], acc[16];
#pragma GCC unroll 8
  for (int s = 0; s < steps; s++) av[s] = _mm512_loadu_ps(a + LANES * s);
  if (tail) av[steps] = _mm512_maskz_loadu_ps(tail, a + LANES * steps);
  const float *row = b;
#pragma GCC unroll 16
  for (int j = 0; j < 16; j++, row += b_stride) {
    __m512 sum = _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int s = 0; s < steps; s++) sum = _mm512_fmadd_ps(av[s], _mm512_loadu_ps(row + LANES * s), sum);
    if (tail) sum = _mm512_fmadd_ps(av[steps], _mm512_maskz_loadu_ps(tail, row + LANES * steps), sum);
    acc[j] = sum;
  }
  avx512_transposed_tree16(acc, out);
}

/* Rows of up to 143 elements (head dims); false: longer, use the tiles. */
static CPU_TARGET_AVX512 bool avx512_dot_rows16(const float *a, const float *b, int64_t b_stride, int64_t length,
                                               float *out) {
  int steps = (int)(length / LANES);
  __mmask16 tail = (__mmask16)((1u << (length % LANES)) - 1);
  switch (steps) {
    case 0: avx512_dot_rows16_steps(a, b, b_stride, 0, tail, out); return true;
    case 1: avx512_dot_rows16_steps(a, b, b_stride, 1, tail, out); return true;
    case 2: avx512_dot_rows16_steps(a, b, b_stride, 2, tail, out); return true;
    case 3: avx512_dot_rows16_steps(a, b, b_stride, 3, tail, out); return true;
    case 4: avx512_dot_rows16_steps(a, b, b_stride, 4, tail, out); return true;
    case 5: avx512_dot_rows16_steps(a, b, b_stride, 5, tail, out); return true;
    case 6: avx512_dot_rows16_steps(a, b, b_stride, 6, tail, out); return true;
    case 7: avx512_dot_rows16_steps(a, b, b_stride, 7, tail, out); return true;
    case 8: avx512_dot_rows16_steps(a, b, b_stride, 8, tail, out); return true;
    default: return false;
  }
}

/* Tall tiles for small batches (decode with a few slots): up to 8 rows x 3
 * outputs, weights read in place and widened once per 16 k for all 8 rows,
 * so the weight stream overlaps the fmas instead of going through a
 * separate widening pass. Registers: 24 accumulators, 3 weight vectors and
 * one input vector. Every element is still one 16-lane contract dot. */
static inline __attribute__((always_inline)) CPU_TARGET_AVX512 void
avx512_tall_tile(const tile_arguments *a, vlm_dtype dtype, int rows, int cols) {
  __m512 acc[8][3];
#pragma GCC unroll 8
  for (int r = 0; r < rows; r++)
#pragma GCC unroll 3
    for (int c = 0; c < cols; c++) acc[r][c] = _mm512_setzero_ps();
  int64_t step_bytes = cols * LANES * weight_element_bytes(dtype);
  for (int64_t k = 0; k < a->k_count; k += LANES) {
    int count = a->k_count - k < LANES ? (int)(a->k_count - k) : LANES;
    if (a->prefetch) {
      const char *next = a->prefetch + k / LANES * step_bytes;
      for (int64_t b = 0; b < step_bytes; b += 64) _mm_prefetch(next + b, _MM_HINT_T0);
    }
    __m512 wv[3];
#pragma GCC unroll 3
    for (int c = 0; c < cols; c++) wv[c] = avx512_load(a->w, dtype, c * a->w_stride + k, count);
#pragma GCC unroll 8
    for (int r = 0; r < rows; r++) {
      __m512 xv = avx512_load(a->x + r * a->x_stride, VLM_DTYPE_F32, k, count);
#pragma GCC unroll 3
      for (int c = 0; c < cols; c++) acc[r][c] = _mm512_fmadd_ps(xv, wv[c], acc[r][c]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < rows; r++)
#pragma GCC unroll 3
    for (int c = 0; c < cols; c++) {
      float sum = avx512_tree_sum(acc[r][c]);
      if (a->bias) sum += a->bias[c];
      a->y[r * a->y_stride + c] = sum;
    }
}

#define AVX512_TALL_CASES(dtype, cols)                 \
  switch (rows) {                                      \
    case 8: avx512_tall_tile(a, dtype, 8, cols); return; \
    case 7: avx512_tall_tile(a, dtype, 7, cols); return; \
    case 6: avx512_tall_tile(a, dtype, 6, cols); return; \
    case 5: avx512_tall_tile(a, dtype, 5, cols); return; \
    case 4: avx512_tall_tile(a, dtype, 4, cols); return; \
    case 3: avx512_tall_tile(a, dtype, 3, cols); return; \
    case 2: avx512_tall_tile(a, dtype, 2, cols); return; \
    default: avx512_tall_tile(a, dtype, 1, cols); return; \
  }
#define AVX512_TALL_FUNCTION(name, dtype)                                        \
  static CPU_TARGET_AVX512 void name(const tile_arguments *a, int rows, int cols) { \
    if (cols == 3) AVX512_TALL_CASES(dtype, 3)                                   \
    if (cols == 2) AVX512_TALL_CASES(dtype, 2)                                   \
    AVX512_TALL_CASES(dtype, 1)                                                  \
  }
AVX512_TALL_FUNCTION(avx512_tall_f32, VLM_DTYPE_F32)
AVX512_TALL_FUNCTION(avx512_tall_bf16, VLM_DTYPE_BF16)
AVX512_TALL_FUNCTION(avx512_tall_f16, VLM_DTYPE_F16)

/* One input row against weight rows [begin, end), one output at a time
 * (see SEQUENTIAL_MAX_ROW_BYTES): each output is the 1 x 1 tile's
 * arithmetic, without its per-output setup, which cost as much as a short
 * row's fmas over a vocabulary head's 151936 outputs. */
static inline __attribute__((always_inline)) CPU_TARGET_AVX512 void
avx512_sequential(const float *x, const void *w, int64_t in, const float *bias, vlm_dtype dtype, int64_t begin,
                  int64_t end, float *y) {
  for (int64_t o = begin; o < end; o++) {
    int64_t first = o * in;
    __m512 acc = _mm512_setzero_ps();
    int64_t k = 0;
    for (; k + LANES <= in; k += LANES)
      acc = _mm512_fmadd_ps(_mm512_loadu_ps(x + k), avx512_load(w, dtype, first + k, LANES), acc);
    if (k < in) {
      int count = (int)(in - k);
      acc = _mm512_fmadd_ps(avx512_load(x, VLM_DTYPE_F32, k, count), avx512_load(w, dtype, first + k, count), acc);
    }
    float sum = avx512_tree_sum(acc);
    if (bias) sum += bias[o - begin];
    y[o] = sum;
  }
}

#define AVX512_SEQUENTIAL_FUNCTION(name, dtype)                                                        \
  static CPU_TARGET_AVX512 void name(const float *x, const void *w, int64_t in, const float *bias,      \
                                     int64_t begin, int64_t end, float *y) {                           \
    avx512_sequential(x, w, in, bias, dtype, begin, end, y);                                            \
  }
AVX512_SEQUENTIAL_FUNCTION(avx512_sequential_f32, VLM_DTYPE_F32)
AVX512_SEQUENTIAL_FUNCTION(avx512_sequential_bf16, VLM_DTYPE_BF16)
AVX512_SEQUENTIAL_FUNCTION(avx512_sequential_f16, VLM_DTYPE_F16)

/* ---- AVX2 path ------------------------------------------------------------- */

/* The 16 lanes as two ymm registers: [0] = lanes 0-7, [1] = lanes 8-15. */
typedef struct avx2_lanes {
  __m256 half[2];
} avx2_lanes;

static inline __attribute__((always_inline)) CPU_TARGET_AVX2 __m256
avx2_load8(const void *data, vlm_dtype dtype, int64_t index) {
  if (dtype == VLM_DTYPE_F32) return _mm256_loadu_ps((const float *)data + index);
  __m128i halves = _mm_loadu_si128((const __m128i *)((const uint16_t *)data + index));
  if (dtype == VLM_DTYPE_F16) return _mm256_cvtph_ps(halves);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(halves), 16));
}

/* 16 lanes from `index`; a partial block goes through a zero-padded copy. */
static inline __attribute__((always_inline)) CPU_TARGET_AVX2 avx2_lanes
avx2_load(const void *data, vlm_dtype dtype, int64_t index, int count) {
  avx2_lanes lanes;
  if (count == LANES) {
    lanes.half[0] = avx2_load8(data, dtype, index);
    lanes.half[1] = avx2_load8(data, dtype, index + 8);
    return lanes;
  }
  float padded[LANES];
  portable_load(data, dtype, index, count, padded);
  lanes.half[0] = _mm256_loadu_ps(padded);
  lanes.half[1] = _mm256_loadu_ps(padded + 8);
  return lanes;
}

static inline __attribute__((always_inline)) CPU_TARGET_AVX2 void
avx2_tile_step(const tile_arguments *a, vlm_dtype dtype, int64_t k, int count,
               int rows, int cols, avx2_lanes acc[2][3]) {
  avx2_lanes xv[2];
#pragma GCC unroll 2
  for (int r = 0; r < rows; r++)
    xv[r] = avx2_load(a->x + r * a->x_stride, VLM_DTYPE_F32, k, count);
#pragma GCC unroll 3
  for (int c = 0; c < cols; c++) {
    avx2_lanes wv = avx2_load(a->w, dtype, c * a->w_stride + k, count);
#pragma GCC unroll 2
    for (int r = 0; r < rows; r++)
      for (int h = 0; h < 2; h++)
        acc[r][c].half[h] = _mm256_fmadd_ps(xv[r].half[h], wv.half[h], acc[r][c].half[h]);
  }
}

static inline __attribute__((always_inline)) CPU_TARGET_AVX2 void
avx2_tile(const tile_arguments *a, vlm_dtype dtype, int rows, int cols) {
  avx2_lanes acc[2][3];
  bool resume = a->partial && !a->first_chunk, park = a->partial && !a->last_chunk;
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++)
      for (int h = 0; h < 2; h++)
        acc[r][c].half[h] = resume ? _mm256_loadu_ps(a->partial + PARTIAL_PAIR(r, c) + 8 * h)
                                   : _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + LANES <= a->k_count; k += LANES) avx2_tile_step(a, dtype, k, LANES, rows, cols, acc);
  if (k < a->k_count) avx2_tile_step(a, dtype, k, (int)(a->k_count - k), rows, cols, acc);
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++) {
      if (park) {
        for (int h = 0; h < 2; h++)
          _mm256_storeu_ps(a->partial + PARTIAL_PAIR(r, c) + 8 * h, acc[r][c].half[h]);
        continue;
      }
      float sum = tree_sum_from8(_mm256_add_ps(acc[r][c].half[0], acc[r][c].half[1]));
      if (a->bias) sum += a->bias[c];
      a->y[r * a->y_stride + c] = sum;
    }
}

/* Full tiles are 2 x 3; a narrower last tile runs one output at a time. */
#define AVX2_TILE_FUNCTION(name, dtype)                                        \
  static CPU_TARGET_AVX2 void name(const tile_arguments *a, int rows, int cols) { \
    if (cols == 3) {                                                           \
      if (rows == 2) avx2_tile(a, dtype, 2, 3);                                \
      else avx2_tile(a, dtype, 1, 3);                                          \
      return;                                                                  \
    }                                                                          \
    for (int c = 0; c < cols; c++) {                                          \
      tile_arguments one = *a;                                                 \
      one.w = (const char *)a->w + c * a->w_stride * (int64_t)vlm_dtype_size(dtype); \
      one.y = a->y + c;                                                        \
      one.bias = a->bias ? a->bias + c : NULL;                                 \
      one.partial = a->partial ? a->partial + PARTIAL_PAIR(0, c) : NULL;       \
      one.prefetch = NULL;                                                     \
      if (rows == 2) avx2_tile(&one, dtype, 2, 1);                             \
      else avx2_tile(&one, dtype, 1, 1);                                       \
    }                                                                          \
  }
static CPU_TARGET_AVX2 void avx2_widen_all(const void *w, vlm_dtype dtype,
                                           int64_t count, float *out) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) _mm256_storeu_ps(out + i, avx2_load8(w, dtype, i));
  for (; i < count; i++) out[i] = cpu_load_element(w, dtype, i);
}

AVX2_TILE_FUNCTION(avx2_tile_f32, VLM_DTYPE_F32)
AVX2_TILE_FUNCTION(avx2_tile_bf16, VLM_DTYPE_BF16)
AVX2_TILE_FUNCTION(avx2_tile_f16, VLM_DTYPE_F16)

#endif /* CPU_HAVE_X86_PATHS */

/* ---- Driver ---------------------------------------------------------------- */

typedef void (*tile_function)(const tile_arguments *a, int rows, int cols);

typedef struct tile_kernels {
  tile_function direct;  /* reads weights in their own dtype */
  tile_function packed;  /* reads a tile widened to f32 beforehand */
  void (*widen)(const void *w, vlm_dtype dtype, int64_t count, float *out);
  int rows, cols;
  tile_function tall;    /* NULL, or 8 x 3 tiles for small batches */
  /* NULL, or one row against outputs [begin, end), one at a time; bias:
   * the range's values or NULL. */
  void (*sequential)(const float *x, const void *w, int64_t in, const float *bias, int64_t begin, int64_t end,
                     float *y);
} tile_kernels;

/* From this many rows on, weight tiles are widened to f32 a chunk at a time
 * and reused by every row tile of a block, instead of being converted again
 * for every 4 rows. Widening is exact, so this changes speed only. */
#define PACK_MIN_ROWS 8
/* AVX-512 runs batches of this many rows on tall tiles (8 rows x 3
 * outputs, weights widened in registers) instead: measured on the
 * Qwen2-0.5B-shaped checkpoint's decode steps (vlm bench --decode-batch). */
#define TALL_ROWS 8
#define TALL_COLS 3
#define TALL_MIN_ROWS 2
#define TALL_MAX_ROWS 32

/* Decode-sized calls: tiles of tile_rows x tile_cols read the weights in
 * place, whole rows at once (the direct tiles, or the tall ones). */
static void in_place_linear_range(const linear_job *job, tile_function tile, int tile_rows, int tile_cols,
                                  int64_t output_begin, int64_t output_end) {
  const cpu_linear_weights *weights = job->weights;
  int64_t in = weights->input_count, out = weights->output_count;
  int64_t element = (int64_t)vlm_dtype_size(weights->dtype);
  for (int64_t o = output_begin; o < output_end; o += tile_cols) {
    int cols = output_end - o < tile_cols ? (int)(output_end - o) : tile_cols;
    float bias[8];
    for (int c = 0; c < cols; c++) bias[c] = bias_value(weights, o + c);
    tile_arguments a = {NULL, (const char *)weights->weight + o * in * element, in, in, in,
                        NULL, out, weights->bias ? bias : NULL, NULL, true, true, NULL};
    int64_t tile_bytes = tile_cols * in * element;
    if (tile_bytes <= PREFETCH_MAX_TILE_BYTES && o + 2 * tile_cols <= output_end)
      a.prefetch = (const char *)a.w + tile_bytes;
    for (int64_t t = 0; t < job->row_count; t += tile_rows) {
      int rows = job->row_count - t < tile_rows ? (int)(job->row_count - t) : tile_rows;
      a.x = job->input + t * in;
      a.y = job->output + t * out + o;
      tile(&a, rows, cols);
    }
  }
}

/* Decode at batch 1 over short rows: the bias values a block at a time. */
static void sequential_range(const linear_job *job,
                             void (*kernel)(const float *, const void *, int64_t, const float *, int64_t, int64_t,
                                            float *),
                             int64_t output_begin, int64_t output_end) {
  const cpu_linear_weights *weights = job->weights;
  if (!weights->bias) {
    kernel(job->input, weights->weight, weights->input_count, NULL, output_begin, output_end, job->output);
    return;
  }
  float bias[256];
  for (int64_t o = output_begin; o < output_end; o += 256) {
    int64_t end = output_end - o < 256 ? output_end : o + 256;
    for (int64_t c = o; c < end; c++) bias[c - o] = bias_value(weights, c);
    kernel(job->input, weights->weight, weights->input_count, bias, o, end, job->output);
  }
}

/* Per-worker scratch of a GEMM: one widened chunk of a weight tile and the
 * parked accumulators of a row block. */
typedef struct gemm_scratch {
  float *packed;  /* [6][CHUNK_K] */
  float *partial; /* [block_rows][6][16] */
} gemm_scratch;

/* GEMM-sized calls. For each block of rows (kept in L2) and each weight tile:
 * widen the tile one k chunk at a time into L1 and run every row tile of the
 * block over that chunk, parking the accumulators between chunks. */
static void packed_linear_range(const linear_job *job, const tile_kernels *kernels,
                                const gemm_scratch *scratch, int64_t block_rows,
                                int64_t output_begin, int64_t output_end) {
  const cpu_linear_weights *weights = job->weights;
  int64_t in = weights->input_count, out = weights->output_count;
  int64_t element = (int64_t)vlm_dtype_size(weights->dtype);
  for (int64_t block = 0; block < job->row_count; block += block_rows) {
    int64_t block_end = block + block_rows < job->row_count ? block + block_rows
                                                            : job->row_count;
    for (int64_t o = output_begin; o < output_end; o += kernels->cols) {
      int cols = output_end - o < kernels->cols ? (int)(output_end - o) : kernels->cols;
      float bias[8];
      for (int c = 0; c < cols; c++) bias[c] = bias_value(weights, o + c);
      for (int64_t k = 0; k < in; k += CHUNK_K) {
        int64_t length = in - k < CHUNK_K ? in - k : CHUNK_K;
        for (int c = 0; c < cols; c++)
          kernels->widen((const char *)weights->weight + ((o + c) * in + k) * element,
                         weights->dtype, length, scratch->packed + c * length);
        tile_arguments a = {NULL, scratch->packed, in, length, length, NULL, out,
                            weights->bias ? bias : NULL, NULL, k == 0, k + length == in, NULL};
        for (int64_t t = block; t < block_end; t += kernels->rows) {
          int rows = block_end - t < kernels->rows ? (int)(block_end - t) : kernels->rows;
          a.x = job->input + t * in + k;
          a.y = job->output + t * out + o;
          a.partial = scratch->partial + (t - block) * 6 * LANES;
          kernels->packed(&a, rows, cols);
        }
      }
    }
  }
}

static bool select_tile_kernels(vlm_dtype dtype, tile_kernels *out) {
  switch (cpu_kernel_path_active()) {
#if CPU_HAVE_X86_PATHS
    case CPU_KERNEL_PATH_AVX512:
      *out = (tile_kernels){dtype == VLM_DTYPE_F32    ? avx512_tile_f32
                            : dtype == VLM_DTYPE_BF16 ? avx512_tile_bf16
                                                      : avx512_tile_f16,
                            avx512_tile_f32, avx512_widen_all, 4, 6,
                            dtype == VLM_DTYPE_F32    ? avx512_tall_f32
                            : dtype == VLM_DTYPE_BF16 ? avx512_tall_bf16
                                                      : avx512_tall_f16,
                            dtype == VLM_DTYPE_F32    ? avx512_sequential_f32
                            : dtype == VLM_DTYPE_BF16 ? avx512_sequential_bf16
                                                      : avx512_sequential_f16};
      return true;
    case CPU_KERNEL_PATH_AVX2:
      *out = (tile_kernels){dtype == VLM_DTYPE_F32    ? avx2_tile_f32
                            : dtype == VLM_DTYPE_BF16 ? avx2_tile_bf16
                                                      : avx2_tile_f16,
                            avx2_tile_f32, avx2_widen_all, 2, 3, NULL, NULL};
      return true;
#endif
    default:
      (void)dtype;
      return false;
  }
}

static void linear_worker(void *context, int64_t group_begin, int64_t group_end,
                          int worker_index) {
  (void)worker_index;
  const linear_job *job = context;
  int64_t out = job->weights->output_count;
  int64_t output_begin = group_begin * OUTPUT_GROUP;
  int64_t output_end = group_end * OUTPUT_GROUP < out ? group_end * OUTPUT_GROUP : out;
  tile_kernels kernels;
  if (!select_tile_kernels(job->weights->dtype, &kernels)) {
    portable_linear_range(job, output_begin, output_end);
    return;
  }
  if (kernels.tall && job->row_count >= TALL_MIN_ROWS && job->row_count <= TALL_MAX_ROWS) {
    in_place_linear_range(job, kernels.tall, TALL_ROWS, TALL_COLS, output_begin, output_end);
    return;
  }
  if (job->row_count < PACK_MIN_ROWS) {
    int64_t row_bytes = job->weights->input_count * weight_element_bytes(job->weights->dtype);
    bool sequential = job->row_count == 1 && row_bytes <= SEQUENTIAL_MAX_ROW_BYTES;
    if (sequential && kernels.sequential) {
      sequential_range(job, kernels.sequential, output_begin, output_end);
      return;
    }
    int cols = sequential ? 1 : kernels.cols;
    in_place_linear_range(job, kernels.direct, kernels.rows, cols, output_begin, output_end);
    return;
  }
  /* The row block's input stays in L2 while the weight tiles pass over it. */
  int64_t in = job->weights->input_count;
  int64_t block_rows = ROW_BLOCK_BYTES / (in * (int64_t)sizeof(float));
  block_rows = block_rows < kernels.rows ? kernels.rows : block_rows / kernels.rows * kernels.rows;
  if (block_rows > job->row_count) block_rows = job->row_count;
  gemm_scratch scratch;
  scratch.packed = vlm_allocate(NULL, 6 * CHUNK_K * sizeof(float), VLM_DEFAULT_ALIGNMENT);
  scratch.partial = vlm_allocate(NULL, (size_t)(block_rows + kernels.rows) * 6 * LANES * sizeof(float),
                                 VLM_DEFAULT_ALIGNMENT);
  if (scratch.packed && scratch.partial)
    packed_linear_range(job, &kernels, &scratch, block_rows, output_begin, output_end);
  else /* no scratch memory: slower, same bits */
    in_place_linear_range(job, kernels.direct, kernels.rows, kernels.cols, output_begin, output_end);
  vlm_release(NULL, scratch.packed);
  vlm_release(NULL, scratch.partial);
}

vlm_status cpu_linear(vlm_thread_pool *pool, const cpu_linear_weights *weights,
                      const float *input, int64_t row_count, float *output) {
  if (!weights || !weights->weight || !input || !output)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "linear: missing pointer");
  if (weights->dtype != VLM_DTYPE_F32 && weights->dtype != VLM_DTYPE_BF16 &&
      weights->dtype != VLM_DTYPE_F16)
    return vlm_status_make(VLM_STATUS_UNIMPLEMENTED,
                           "linear: weights of dtype %s (f32, bf16 or f16 expected)",
                           vlm_dtype_name(weights->dtype));
  if (row_count <= 0 || weights->input_count <= 0 || weights->output_count <= 0)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT,
                           "linear: sizes must be positive (rows %lld, in %lld, out %lld)",
                           (long long)row_count, (long long)weights->input_count,
                           (long long)weights->output_count);
  linear_job job = {weights, input, row_count, output};
  int64_t group_count = (weights->output_count + OUTPUT_GROUP - 1) / OUTPUT_GROUP;
  /* At least ~64k multiply-adds per range: below that, waking a thread costs
   * more than it saves. The grain changes who computes an element, never how. */
  int64_t work_per_group = row_count * weights->input_count * OUTPUT_GROUP;
  int64_t grain = 65536 / work_per_group + 1;
  vlm_thread_pool_parallel_for(pool, group_count, grain, linear_worker, &job);
  return VLM_OK;
}

/* ---- Building blocks for other operators ----------------------------------- */

float cpu_dot(const float *a, const float *b, int64_t count) {
  if (count <= 0) return 0.0f;
  float result;
  tile_kernels kernels;
  if (!select_tile_kernels(VLM_DTYPE_F32, &kernels))
    return portable_dot(a, b, VLM_DTYPE_F32, 0, count);
  tile_arguments arguments = {a, b, count, count, count, &result, 1, NULL, NULL,
                              false, false, NULL};
  kernels.direct(&arguments, 1, 1);
  return result;
}

void cpu_dot_rows(const float *a, const float *b, int64_t b_stride, int64_t row_count,
                  int64_t length, float *out) {
  tile_kernels kernels;
  if (length <= 0 || !select_tile_kernels(VLM_DTYPE_F32, &kernels)) {
    for (int64_t j = 0; j < row_count; j++) out[j] = cpu_dot(a, b + j * b_stride, length);
    return;
  }
  int64_t j = 0;
#if CPU_HAVE_X86_PATHS
  if (cpu_kernel_path_active() == CPU_KERNEL_PATH_AVX512 && length < 9 * LANES)
    for (; j + 16 <= row_count; j += 16) avx512_dot_rows16(a, b + j * b_stride, b_stride, length, out + j);
#endif
  /* One query row against up to `cols` key rows per tile: the same 16-lane
   * dot per element as cpu_dot, with the query loaded once per tile. */
  for (; j < row_count; j += kernels.cols) {
    int cols = row_count - j < kernels.cols ? (int)(row_count - j) : kernels.cols;
    tile_arguments arguments = {a, b + j * b_stride, length, b_stride, length, out + j, row_count,
                                NULL, NULL, false, false, NULL};
    kernels.direct(&arguments, 1, cols);
  }
}

#if CPU_HAVE_X86_PATHS
static CPU_TARGET_AVX512 void avx512_weighted_sum(float *out, const float *weights,
                                                  const float *values, int64_t stride,
                                                  int64_t count, int64_t width) {
  int64_t i = 0;
  /* 64 columns at a time stay in registers across all rows. */
  for (; i + 4 * LANES <= width; i += 4 * LANES) {
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    __m512 acc2 = _mm512_setzero_ps(), acc3 = _mm512_setzero_ps();
    for (int64_t j = 0; j < count; j++) {
      const float *v = values + j * stride + i;
      __m512 p = _mm512_set1_ps(weights[j]);
      acc0 = _mm512_fmadd_ps(p, _mm512_loadu_ps(v), acc0);
      acc1 = _mm512_fmadd_ps(p, _mm512_loadu_ps(v + LANES), acc1);
      acc2 = _mm512_fmadd_ps(p, _mm512_loadu_ps(v + 2 * LANES), acc2);
      acc3 = _mm512_fmadd_ps(p, _mm512_loadu_ps(v + 3 * LANES), acc3);
    }
    _mm512_storeu_ps(out + i, acc0);
    _mm512_storeu_ps(out + i + LANES, acc1);
    _mm512_storeu_ps(out + i + 2 * LANES, acc2);
    _mm512_storeu_ps(out + i + 3 * LANES, acc3);
  }
  for (; i < width; i++) {
    float acc = 0.0f;
    for (int64_t j = 0; j < count; j++) acc = fmaf(weights[j], values[j * stride + i], acc);
    out[i] = acc;
  }
}
#endif

void cpu_weighted_sum(float *out, const float *weights, const float *values, int64_t stride,
                      int64_t count, int64_t width) {
#if CPU_HAVE_X86_PATHS
  if (cpu_kernel_path_active() == CPU_KERNEL_PATH_AVX512) {
    avx512_weighted_sum(out, weights, values, stride, count, width);
    return;
  }
#endif
  memset(out, 0, (size_t)width * sizeof(float));
  for (int64_t j = 0; j < count; j++) cpu_fma_accumulate(out, weights[j], values + j * stride, width);
}

#if CPU_HAVE_X86_PATHS
static CPU_TARGET_AVX512 void avx512_fma_accumulate(float *acc, float scale,
                                                    const float *values,
                                                    int64_t count) {
  __m512 s = _mm512_set1_ps(scale);
  int64_t i = 0;
  for (; i + LANES <= count; i += LANES)
    _mm512_storeu_ps(acc + i, _mm512_fmadd_ps(s, _mm512_loadu_ps(values + i),
                                              _mm512_loadu_ps(acc + i)));
  for (; i < count; i++) acc[i] = fmaf(scale, values[i], acc[i]);
}

static CPU_TARGET_AVX2 void avx2_fma_accumulate(float *acc, float scale,
                                                const float *values, int64_t count) {
  __m256 s = _mm256_set1_ps(scale);
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    _mm256_storeu_ps(acc + i, _mm256_fmadd_ps(s, _mm256_loadu_ps(values + i),
                                              _mm256_loadu_ps(acc + i)));
  for (; i < count; i++) acc[i] = fmaf(scale, values[i], acc[i]);
}
#endif

void cpu_fma_accumulate(float *acc, float scale, const float *values, int64_t count) {
  switch (cpu_kernel_path_active()) {
#if CPU_HAVE_X86_PATHS
    case CPU_KERNEL_PATH_AVX512: avx512_fma_accumulate(acc, scale, values, count); return;
    case CPU_KERNEL_PATH_AVX2: avx2_fma_accumulate(acc, scale, values, count); return;
#endif
    default:
      for (int64_t i = 0; i < count; i++) acc[i] = fmaf(scale, values[i], acc[i]);
      return;
  }
}
