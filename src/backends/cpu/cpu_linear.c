/* Linear layers: packing weights into panels once, and the driver that runs
 * the micro-kernel of cpu_gemm.c over them for decode (a few rows, weights
 * read in place) and prefill (many rows, each panel chunk widened to f32
 * once and reused by every row tile of a block).
 *
 * Every output element is one fma chain over k (the contract in
 * cpu_kernels.h) then + bias. The driver decides only which rows and
 * outputs go through the kernel together and where a chain is parked
 * between k chunks (in the output itself: a float stored and reloaded is
 * the same float), never the operations of an element: so rows, threads,
 * chunking and the path change speed only. */
#include "backends/cpu/cpu_internal.h"

#include <math.h>
#include <string.h>

#if CPU_HAVE_X86_PATHS
#include <immintrin.h>
#endif

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/cpu_quant.h"
#include "core/alloc.h"

/* bf16/f16 calls of at most this many rows read the weights in place,
 * widening each vector in registers for all the rows of a tile; more rows
 * widen a panel chunk to f32 first, once for the whole row block (f32
 * weights: the chunk is read where it is). */
#ifndef IN_PLACE_MAX_ROWS
#define IN_PLACE_MAX_ROWS 24
#endif
/* k per chunk of a panel read in place by several row tiles: 8 KiB of
 * bf16, in L1 while they pass over it. */
#ifndef IN_PLACE_CHUNK_K
#define IN_PLACE_CHUNK_K 64
#endif
/* k per chunk of a GEMM: a widened chunk of a panel is CHUNK_K x 64 f32
 * (32 KiB at 128), read by every row tile of the block from L1. */
#ifndef CHUNK_K
#define CHUNK_K 128
#endif
/* Input rows per block of a GEMM: for each k chunk of a panel, the block's
 * inputs for that chunk and the panel's 64 outputs of the block (parked
 * chains) stay in L2 (256 KiB: half of Zen 3's, a quarter of Zen 5's) while
 * every row tile passes over the widened chunk in L1. Each weight is
 * widened once per block. Blocks sized by the whole input row (16 MiB of
 * inputs, from L3) ran a 6256 x 5120 x 1280 bf16 GEMM at 153 GFLOP/s on
 * one Zen 5 core, this size at 237 (peak ~272): 6256 rows of 1280 inputs
 * made a chunk's pass 1.6 MiB of inputs and 0.8 MiB of outputs, over L2 and
 * over the L2 TLB's reach. (Taking k chunks outermost instead parks every
 * output of the layer in L3 between chunks: measured 20-25% slower.) */
#ifndef ROW_BLOCK_BYTES
#define ROW_BLOCK_BYTES (256 << 10)
#endif
/* At least this many multiply-adds per thread's range: below that, waking
 * a thread costs more than it saves. */
#define MIN_PARALLEL_WORK 65536

static inline int64_t element_bytes(vlm_dtype dtype) { return dtype == VLM_DTYPE_F32 ? 4 : 2; }

/* ---- Packing ---------------------------------------------------------------- */

typedef struct pack_job {
  const cpu_linear_weights *weights;
  cpu_packed_linear *packed;
  int64_t first_panel; /* the loop's index 0 */
} pack_job;

/* Panels [begin, end): a transpose of 64-output x 64-k blocks, copying the
 * stored bits (no conversion). */
static void pack_panels(void *context, int64_t begin, int64_t end, int worker) {
  (void)worker;
  const pack_job *job = context;
  int64_t in = job->weights->input_count, out = job->weights->output_count;
  int64_t element = element_bytes(job->weights->dtype);
  const char *source = job->weights->weight;
  char *panels = job->packed->panels;
  for (int64_t p = job->first_panel + begin; p < job->first_panel + end; p++) {
    char *panel = panels + p * in * CPU_PANEL * element;
    for (int64_t k0 = 0; k0 < in; k0 += 64) {
      int64_t k1 = k0 + 64 < in ? k0 + 64 : in;
      for (int c = 0; c < CPU_PANEL; c++) {
        int64_t o = p * CPU_PANEL + c;
        if (o >= out) {
          for (int64_t k = k0; k < k1; k++) memset(panel + (k * CPU_PANEL + c) * element, 0, (size_t)element);
          continue;
        }
        if (job->weights->transposed) {
          /* Element (o, k) at [k, o]: a strided read of the column. */
          for (int64_t k = k0; k < k1; k++)
            memcpy(panel + (k * CPU_PANEL + c) * element, source + (k * out + o) * element, (size_t)element);
          continue;
        }
        const char *row = source + o * in * element;
        if (element == 2)
          for (int64_t k = k0; k < k1; k++)
            memcpy(panel + (k * CPU_PANEL + c) * 2, row + k * 2, 2);
        else
          for (int64_t k = k0; k < k1; k++)
            memcpy(panel + (k * CPU_PANEL + c) * 4, row + k * 4, 4);
      }
    }
  }
}

static vlm_status check_weights(const cpu_linear_weights *weights) {
  if (!weights || !weights->weight)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "linear: missing pointer");
  if (weights->dtype != VLM_DTYPE_F32 && weights->dtype != VLM_DTYPE_BF16 &&
      weights->dtype != VLM_DTYPE_F16)
    return vlm_status_make(VLM_STATUS_UNIMPLEMENTED,
                           "linear: weights of dtype %s (f32, bf16 or f16 expected)",
                           vlm_dtype_name(weights->dtype));
  if (weights->input_count <= 0 || weights->output_count <= 0)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT,
                           "linear: sizes must be positive (in %lld, out %lld)",
                           (long long)weights->input_count, (long long)weights->output_count);
  return VLM_OK;
}

vlm_status cpu_linear_pack_allocate(const cpu_linear_weights *weights, cpu_packed_linear **out_packed) {
  *out_packed = NULL;
  vlm_status status = check_weights(weights);
  if (status) return status;
  cpu_packed_linear *packed = vlm_allocate(NULL, sizeof(*packed), VLM_DEFAULT_ALIGNMENT);
  if (!packed) return vlm_status_make(VLM_STATUS_RESOURCE_EXHAUSTED, "linear: out of memory packing weights");
  int64_t panels = (weights->output_count + CPU_PANEL - 1) / CPU_PANEL;
  *packed = (cpu_packed_linear){weights->dtype, weights->output_count, weights->input_count, panels, NULL, NULL};
  size_t bytes = (size_t)(panels * CPU_PANEL * weights->input_count * element_bytes(weights->dtype));
  packed->panels = vlm_allocate_streamed(bytes); /* huge pages: decode streams it */
  if (weights->bias) packed->bias = vlm_allocate(NULL, (size_t)(panels * CPU_PANEL) * sizeof(float), VLM_DEFAULT_ALIGNMENT);
  if (!packed->panels || (weights->bias && !packed->bias)) {
    cpu_packed_linear_release(packed);
    return vlm_status_make(VLM_STATUS_RESOURCE_EXHAUSTED, "linear: out of memory for %zu bytes of packed weights",
                           bytes);
  }
  if (weights->bias)
    for (int64_t o = 0; o < panels * CPU_PANEL; o++)
      packed->bias[o] = o < weights->output_count ? cpu_load_element(weights->bias, weights->dtype, o) : 0.0f;
  *out_packed = packed;
  return VLM_OK;
}

void cpu_linear_pack_panels(vlm_thread_pool *pool, const cpu_linear_weights *weights, cpu_packed_linear *packed,
                            int64_t panel_begin, int64_t panel_end) {
  pack_job job = {weights, packed, panel_begin};
  int64_t grain = 65536 / (weights->input_count * CPU_PANEL) + 1;
  vlm_thread_pool_parallel_for(pool, panel_end - panel_begin, grain, pack_panels, &job);
}

vlm_status cpu_linear_pack(vlm_thread_pool *pool, const cpu_linear_weights *weights,
                           cpu_packed_linear **out_packed) {
  vlm_status status = cpu_linear_pack_allocate(weights, out_packed);
  if (status) return status;
  cpu_linear_pack_panels(pool, weights, *out_packed, 0, (*out_packed)->panel_count);
  return VLM_OK;
}

void cpu_packed_linear_release(cpu_packed_linear *packed) {
  if (!packed) return;
  vlm_release(NULL, packed->panels);
  vlm_release(NULL, packed->bias);
  vlm_release(NULL, packed->input_order);
  vlm_release(NULL, packed);
}

uint64_t cpu_packed_linear_bytes(const cpu_packed_linear *packed) {
  if (packed->quant_format)
    return (uint64_t)(packed->panel_count * packed->group_count * packed->block_bytes) +
           (uint64_t)(packed->bias ? packed->panel_count * CPU_PANEL * 4 : 0) +
           (uint64_t)(packed->input_order ? packed->input_count * 4 : 0);
  return (uint64_t)(packed->panel_count * CPU_PANEL) *
         (uint64_t)(packed->input_count * element_bytes(packed->dtype) + (packed->bias ? 4 : 0));
}

/* ---- Widening a panel chunk (exact: the paths differ in speed only) ---------- */

#if CPU_HAVE_X86_PATHS
static CPU_TARGET_AVX512 void avx512_widen(const uint16_t *source, vlm_dtype dtype, int64_t count, float *out) {
  /* count is a multiple of 64 (whole panel rows) */
  for (int64_t i = 0; i < count; i += 16) {
    __m256i halves = _mm256_loadu_si256((const __m256i *)(source + i));
    __m512 wide = dtype == VLM_DTYPE_F16
                      ? _mm512_cvtph_ps(halves)
                      : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(halves), 16));
    _mm512_storeu_ps(out + i, wide);
  }
}

static CPU_TARGET_AVX2 void avx2_widen(const uint16_t *source, vlm_dtype dtype, int64_t count, float *out) {
  for (int64_t i = 0; i < count; i += 8) {
    __m128i halves = _mm_loadu_si128((const __m128i *)(source + i));
    __m256 wide = dtype == VLM_DTYPE_F16
                      ? _mm256_cvtph_ps(halves)
                      : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(halves), 16));
    _mm256_storeu_ps(out + i, wide);
  }
}
#endif

static void widen(const void *source, vlm_dtype dtype, int64_t count, float *out) {
  switch (cpu_kernel_path_active()) {
#if CPU_HAVE_X86_PATHS
    case CPU_KERNEL_PATH_AVX512: avx512_widen(source, dtype, count, out); return;
    case CPU_KERNEL_PATH_AVX2: avx2_widen(source, dtype, count, out); return;
#endif
    default:
      for (int64_t i = 0; i < count; i++) out[i] = cpu_load_element(source, dtype, i);
      return;
  }
}

/* ---- Driver ------------------------------------------------------------------ */

typedef struct linear_job {
  const cpu_packed_linear *weights;
  const float *input;
  int64_t row_count;
  float *output;
  cpu_gemm_kernel kernel;        /* for the weights' dtype, read in place */
  cpu_gemm_kernel widened_kernel; /* for widened (f32) chunks */
  bool in_place;
  int64_t block_rows; /* GEMM: rows per block */
} linear_job;

/* Rows of the i-th of the tiles that cover `count` rows as evenly as
 * possible with at most `most` each (11 rows: 6 + 5). */
static int64_t tile_count(int64_t count, int most) { return (count + most - 1) / most; }
static int tile_rows(int64_t count, int64_t tiles, int64_t i) {
  return (int)(count / tiles + (i < count % tiles ? 1 : 0));
}

/* Rows [row_begin, row_end) against panel p over k [k0, k0 + length), the
 * panel's k0-th row at `w` (f32 for a widened chunk). */
static void run_row_tiles(const linear_job *job, cpu_gemm_kernel kernel, int most_rows, int64_t p, const void *w,
                          int64_t k0, int64_t length, int64_t row_begin, int64_t row_end, const char *prefetch,
                          const char *next, int64_t next_bytes) {
  const cpu_packed_linear *weights = job->weights;
  int64_t in = weights->input_count, out = weights->output_count;
  int64_t column = p * CPU_PANEL;
  bool last = k0 + length == in;
  cpu_gemm_tile tile = {NULL, in, w, CPU_PANEL, length,
                        (int)(out - column < CPU_PANEL ? out - column : CPU_PANEL), NULL, out, k0 > 0,
                        last && weights->bias ? weights->bias + column : NULL, prefetch};
  int64_t count = row_end - row_begin, tiles = tile_count(count, most_rows);
  /* The next chunk's cache lines into L2, a share before each tile. */
  int64_t lines = (next_bytes + 63) / 64, per_tile = (lines + tiles - 1) / tiles;
  for (int64_t i = 0, t = row_begin; i < tiles; i++) {
    for (int64_t l = i * per_tile; l < lines && l < (i + 1) * per_tile; l++) __builtin_prefetch(next + 64 * l, 0, 2);
    int rows = tile_rows(count, tiles, i);
    tile.x = job->input + t * in + k0;
    tile.out = job->output + t * out + column;
    kernel(&tile, rows);
    tile.prefetch = NULL; /* once per chunk */
    t += rows;
  }
}

#ifndef PREFETCH_CHUNKS
#define PREFETCH_CHUNKS 4
#endif

/* Decode-sized calls: each panel in place, a k chunk at a time, so that
 * the passes a chunk gets (one per row tile, and on AVX2 one per column
 * group) read it from L1 and the panel streams from memory once, in order.
 * One row is a single pass: whole k at once. */
static void in_place_worker(void *context, int64_t begin, int64_t end, int worker) {
  (void)worker;
  const linear_job *job = context;
  const cpu_packed_linear *weights = job->weights;
  int64_t in = weights->input_count, element = element_bytes(weights->dtype);
  int64_t chunk = job->row_count == 1 ? in : IN_PLACE_CHUNK_K;
  const char *stop = (const char *)weights->panels + end * in * CPU_PANEL * element;
  for (int64_t p = begin; p < end; p++)
    for (int64_t k0 = 0; k0 < in; k0 += chunk) {
      int64_t length = in - k0 < chunk ? in - k0 : chunk;
      const char *w = (const char *)weights->panels + (p * in + k0) * CPU_PANEL * element;
      /* bf16/f16 rows of a panel are 128 bytes: while a chunk is computed,
       * the kernel prefetches the same extent PREFETCH_CHUNKS chunks ahead
       * (the thread's panels are one stream). */
      const char *ahead = w + PREFETCH_CHUNKS * chunk * CPU_PANEL * element;
      bool prefetch = chunk < in && element == 2 && ahead + length * CPU_PANEL * element <= stop;
      run_row_tiles(job, job->kernel, CPU_GEMM_MAX_ROWS, p, w, k0, length, 0, job->row_count, prefetch ? ahead : NULL,
                    NULL, 0);
    }
}

/* GEMM-sized calls: items are panels. For each block of rows, each of the
 * thread's panels and each k chunk, the panel's chunk is widened once into
 * L1 and read by every row tile of the block, which parks its chains in
 * the output (the panel's 64 columns: in L2) between chunks. */
static void gemm_worker(void *context, int64_t begin, int64_t end, int worker) {
  (void)worker;
  const linear_job *job = context;
  const cpu_packed_linear *weights = job->weights;
  int64_t in = weights->input_count, element = element_bytes(weights->dtype);
  bool widened = weights->dtype != VLM_DTYPE_F32;
  float *scratch = widened ? vlm_allocate(NULL, (size_t)(CHUNK_K * CPU_PANEL) * sizeof(float), VLM_DEFAULT_ALIGNMENT)
                           : NULL;
  for (int64_t row_begin = 0; row_begin < job->row_count; row_begin += job->block_rows) {
    int64_t row_end = row_begin + job->block_rows < job->row_count ? row_begin + job->block_rows : job->row_count;
    for (int64_t p = begin; p < end; p++) {
      for (int64_t k0 = 0; k0 < in; k0 += CHUNK_K) {
        int64_t length = in - k0 < CHUNK_K ? in - k0 : CHUNK_K;
        const char *chunk = (const char *)weights->panels + (p * in + k0) * CPU_PANEL * element;
        /* The chunk this thread takes next (the next k chunk, the next
         * panel's first, or for the next row block its first panel's):
         * fetched while this one runs, so that widening it does not wait
         * on memory (it had: the first touch of every weight, 6% of a
         * bf16 prefill's time in the widening). */
        int64_t next_p = p, next_k0 = k0 + CHUNK_K;
        bool any_next = true;
        if (next_k0 >= in) {
          next_k0 = 0;
          next_p = p + 1 < end ? p + 1 : begin;
          any_next = p + 1 < end || row_end < job->row_count;
        }
        int64_t next_length = in - next_k0 < CHUNK_K ? in - next_k0 : CHUNK_K;
        const char *next = (const char *)weights->panels + (next_p * in + next_k0) * CPU_PANEL * element;
        int64_t next_bytes = any_next ? next_length * CPU_PANEL * element : 0;
        if (!widened || !scratch) { /* f32, or no memory to widen into: in place, same bits */
          run_row_tiles(job, job->kernel, CPU_GEMM_TILE_ROWS, p, chunk, k0, length, row_begin, row_end, NULL, next,
                        next_bytes);
          continue;
        }
        widen(chunk, weights->dtype, length * CPU_PANEL, scratch);
        run_row_tiles(job, job->widened_kernel, CPU_GEMM_TILE_ROWS, p, scratch, k0, length, row_begin, row_end,
                      NULL, next, next_bytes);
      }
    }
  }
  vlm_release(NULL, scratch);
}

vlm_status cpu_linear_packed(vlm_thread_pool *pool, const cpu_packed_linear *weights,
                             const float *input, int64_t row_count, float *output) {
  if (!weights || !input || !output)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "linear: missing pointer");
  if (row_count <= 0)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "linear: sizes must be positive (rows %lld)",
                           (long long)row_count);
  if (weights->quant_format) return cpu_quant_linear(pool, weights, input, row_count, output);
  int64_t in = weights->input_count, panels = weights->panel_count;
  linear_job job = {weights, input, row_count, output, cpu_gemm_select(weights->dtype),
                    cpu_gemm_select(VLM_DTYPE_F32), row_count <= IN_PLACE_MAX_ROWS, row_count};
  if (job.in_place) {
    int64_t work = row_count * in * CPU_PANEL;
    vlm_thread_pool_parallel_for(pool, panels, MIN_PARALLEL_WORK / work + 1, in_place_worker, &job);
    return VLM_OK;
  }
  /* Blocks of rows whose inputs for one k chunk and outputs of one panel
   * fit ROW_BLOCK_BYTES. */
  int64_t block_rows = ROW_BLOCK_BYTES / ((CHUNK_K + CPU_PANEL) * (int64_t)sizeof(float));
  block_rows = block_rows / CPU_GEMM_TILE_ROWS * CPU_GEMM_TILE_ROWS;
  job.block_rows = block_rows < row_count ? block_rows : row_count;
  int64_t work = row_count * in * CPU_PANEL;
  vlm_thread_pool_parallel_for(pool, panels, MIN_PARALLEL_WORK / work + 1, gemm_worker, &job);
  return VLM_OK;
}

vlm_status cpu_linear(vlm_thread_pool *pool, const cpu_linear_weights *weights,
                      const float *input, int64_t row_count, float *output) {
  vlm_status status = check_weights(weights);
  if (status) return status;
  if (!input || !output) return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "linear: missing pointer");
  if (row_count <= 0)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "linear: sizes must be positive (rows %lld)",
                           (long long)row_count);
  cpu_packed_linear *packed = NULL;
  status = cpu_linear_pack(pool, weights, &packed);
  if (status) return status;
  status = cpu_linear_packed(pool, packed, input, row_count, output);
  cpu_packed_linear_release(packed);
  return status;
}

/* ---- Building blocks for other operators ----------------------------------- */

float cpu_dot(const float *a, const float *b, int64_t count) {
  float acc = 0.0f;
  for (int64_t k = 0; k < count; k++) acc = fmaf(a[k], b[k], acc);
  return acc;
}

#if CPU_HAVE_X86_PATHS
static CPU_TARGET_AVX512 void avx512_fma_accumulate(float *acc, float scale,
                                                    const float *values,
                                                    int64_t count) {
  __m512 s = _mm512_set1_ps(scale);
  int64_t i = 0;
  for (; i + 16 <= count; i += 16)
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
