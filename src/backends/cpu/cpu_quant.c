/* Group-wise quantized linear layers (format and contract in cpu_quant.h):
 * quantizing a float layer at load, filling a layer from already-quantized
 * values, and the driver that runs the kernels of cpu_quant_kernels.c.
 *
 * The driver follows cpu_linear.c: threads split the panels; up to
 * cpu_quant_fused_rows() rows (decode) read each block in place and
 * dequantize it in registers, so decode reads only the quantized bytes;
 * more rows dequantize each k chunk of a panel to f32 once per row block
 * (in L1) and run the f32 micro-kernel's 6-row tiles over it. Both form the
 * same exact weights and the same chains, so they agree bit for bit. */
#include "backends/cpu/cpu_internal.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "backends/cpu/cpu_quant.h"
#include "core/alloc.h"
#include "core/status.h"

#define CHUNK_K 128
#define ROW_BLOCK_BYTES (256 << 10)
#define MIN_PARALLEL_WORK 65536

const char *cpu_quant_format_name(cpu_quant_format format) {
  return format == CPU_QUANT_Q8 ? "q8" : format == CPU_QUANT_Q4 ? "q4" : NULL;
}

int64_t cpu_quant_block_bytes(cpu_quant_format format, int64_t group_size) {
  return format == CPU_QUANT_Q8 ? 128 + group_size * 64 : 192 + group_size * 32;
}

static uint8_t *block_at(const cpu_packed_linear *packed, int64_t panel, int64_t group) {
  return (uint8_t *)packed->panels + (panel * packed->group_count + group) * packed->block_bytes;
}

vlm_status cpu_quant_allocate(cpu_quant_format format, int64_t output_count, int64_t input_count,
                              int64_t group_size, const void *bias, vlm_dtype bias_dtype,
                              const int32_t *input_order, cpu_packed_linear **out_packed) {
  *out_packed = NULL;
  if (format != CPU_QUANT_Q8 && format != CPU_QUANT_Q4)
    return VLM_ERROR(INVALID_ARGUMENT, "quantized linear: unknown format %d", (int)format);
  if (output_count <= 0 || input_count <= 0 || group_size <= 0 || group_size > input_count)
    return VLM_ERROR(INVALID_ARGUMENT, "quantized linear: sizes out %lld, in %lld, group %lld",
                     (long long)output_count, (long long)input_count, (long long)group_size);
  if (bias && bias_dtype != VLM_DTYPE_F32 && bias_dtype != VLM_DTYPE_BF16 && bias_dtype != VLM_DTYPE_F16)
    return VLM_ERROR(UNIMPLEMENTED, "quantized linear: a bias of dtype %s", vlm_dtype_name(bias_dtype));
  cpu_packed_linear *packed = vlm_allocate(NULL, sizeof(*packed), VLM_DEFAULT_ALIGNMENT);
  if (!packed) return VLM_ERROR(RESOURCE_EXHAUSTED, "quantized linear: out of memory");
  memset(packed, 0, sizeof(*packed));
  packed->dtype = VLM_DTYPE_F32; /* what the GEMM path widens to */
  packed->output_count = output_count;
  packed->input_count = input_count;
  packed->panel_count = (output_count + CPU_PANEL - 1) / CPU_PANEL;
  packed->quant_format = format;
  packed->group_size = group_size;
  packed->group_count = (input_count + group_size - 1) / group_size;
  packed->block_bytes = cpu_quant_block_bytes(format, group_size);
  size_t bytes = (size_t)(packed->panel_count * packed->group_count * packed->block_bytes);
  packed->panels = vlm_allocate(NULL, bytes, VLM_DEFAULT_ALIGNMENT);
  if (bias) packed->bias = vlm_allocate(NULL, (size_t)(packed->panel_count * CPU_PANEL) * sizeof(float), VLM_DEFAULT_ALIGNMENT);
  if (input_order) packed->input_order = vlm_allocate(NULL, (size_t)input_count * sizeof(int32_t), VLM_DEFAULT_ALIGNMENT);
  if (!packed->panels || (bias && !packed->bias) || (input_order && !packed->input_order)) {
    cpu_packed_linear_release(packed);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "quantized linear: out of memory for %zu bytes", bytes);
  }
  memset(packed->panels, 0, bytes);
  if (bias)
    for (int64_t o = 0; o < packed->panel_count * CPU_PANEL; o++)
      packed->bias[o] = o < output_count ? cpu_load_element(bias, bias_dtype, o) : 0.0f;
  if (input_order) memcpy(packed->input_order, input_order, (size_t)input_count * sizeof(int32_t));
  *out_packed = packed;
  return VLM_OK;
}

void cpu_quant_set_value(cpu_packed_linear *packed, int64_t o, int64_t j, int q) {
  int64_t g = j / packed->group_size, c = o % CPU_PANEL;
  uint8_t *block = block_at(packed, o / CPU_PANEL, g);
  int64_t row = j - g * packed->group_size;
  if (packed->quant_format == CPU_QUANT_Q8) {
    block[128 + row * 64 + c] = (uint8_t)(int8_t)q;
    return;
  }
  uint8_t *byte = &block[192 + row * 32 + (c & 31)];
  if (c < 32) *byte = (uint8_t)((*byte & 0xF0) | (q & 15));
  else *byte = (uint8_t)((*byte & 0x0F) | ((q & 15) << 4));
}

void cpu_quant_set_group(cpu_packed_linear *packed, int64_t o, int64_t g, uint16_t scale_f16, int zero) {
  uint8_t *block = block_at(packed, o / CPU_PANEL, g);
  int64_t c = o % CPU_PANEL;
  memcpy(block + 2 * c, &scale_f16, 2);
  if (packed->quant_format == CPU_QUANT_Q4) block[128 + c] = (uint8_t)zero;
}

void cpu_quant_dequantize(const cpu_packed_linear *packed, float *out) {
  int64_t in = packed->input_count, g_size = packed->group_size;
  float row[CPU_PANEL];
  cpu_quant_dequantizer dequantize = cpu_quant_dequantizer_select((cpu_quant_format)packed->quant_format);
  for (int64_t p = 0; p < packed->panel_count; p++)
    for (int64_t j = 0; j < in; j++) {
      int64_t g = j / g_size;
      dequantize(block_at(packed, p, g), g_size, j - g * g_size, 1, row);
      int64_t k = packed->input_order ? packed->input_order[j] : j;
      for (int c = 0; c < CPU_PANEL && p * CPU_PANEL + c < packed->output_count; c++)
        out[(p * CPU_PANEL + c) * in + k] = row[c];
    }
}

/* ---- Quantizing a float layer ---------------------------------------------- */

typedef struct quantize_job {
  const cpu_linear_weights *weights;
  cpu_packed_linear *packed;
  atomic_int non_finite;
} quantize_job;

static uint16_t scale_bits(float scale) {
  uint16_t bits = vlm_f32_to_f16(scale);
  return (bits & 0x7C00) == 0x7C00 ? 0x7BFF : bits; /* past the f16 range: its largest */
}

/* Row o of the source as f32 (exact widening). */
static void load_row(const cpu_linear_weights *weights, int64_t o, float *out) {
  int64_t in = weights->input_count;
  if (weights->dtype == VLM_DTYPE_F32) {
    memcpy(out, (const float *)weights->weight + o * in, (size_t)in * sizeof(float));
  } else if (weights->dtype == VLM_DTYPE_BF16) {
    const uint16_t *row = (const uint16_t *)weights->weight + o * in;
    for (int64_t k = 0; k < in; k++) {
      uint32_t bits = (uint32_t)row[k] << 16;
      memcpy(&out[k], &bits, 4);
    }
  } else {
    const uint16_t *row = (const uint16_t *)weights->weight + o * in;
    for (int64_t k = 0; k < in; k++) out[k] = vlm_f16_to_f32(row[k]);
  }
}

/* Output o's group g from its row `w` (f32); false on a non-finite value. */
static bool quantize_group(cpu_packed_linear *packed, const float *w, int64_t o, int64_t g) {
  int64_t k0 = g * packed->group_size, k1 = k0 + packed->group_size;
  if (k1 > packed->input_count) k1 = packed->input_count;
  float low = 0.0f, high = 0.0f, magnitude = 0.0f;
  for (int64_t k = k0; k < k1; k++) {
    if (!isfinite(w[k])) return false;
    low = w[k] < low ? w[k] : low;
    high = w[k] > high ? w[k] : high;
    magnitude = fabsf(w[k]) > magnitude ? fabsf(w[k]) : magnitude;
  }
  bool q8 = packed->quant_format == CPU_QUANT_Q8;
  uint16_t bits = scale_bits(q8 ? magnitude / 127.0f : (high - low) / 15.0f);
  float scale = vlm_f16_to_f32(bits);
  int zero = 0;
  if (!q8 && scale > 0.0f) {
    float z = rintf(-low / scale);
    zero = z < 0.0f ? 0 : z > 15.0f ? 15 : (int)z;
  }
  cpu_quant_set_group(packed, o, g, bits, zero);
  uint8_t *block = block_at(packed, o / CPU_PANEL, g);
  int c = (int)(o % CPU_PANEL);
  float lowest = q8 ? -127.0f : (float)-zero, highest = q8 ? 127.0f : (float)(15 - zero);
  for (int64_t k = k0; k < k1; k++) {
    float r = scale > 0.0f ? rintf(w[k] / scale) : 0.0f;
    r = r < lowest ? lowest : r > highest ? highest : r;
    int q = (int)r + zero;
    if (q8) {
      block[128 + (k - k0) * 64 + c] = (uint8_t)(int8_t)q;
    } else {
      uint8_t *byte = &block[192 + (k - k0) * 32 + (c & 31)];
      *byte = c < 32 ? (uint8_t)((*byte & 0xF0) | q) : (uint8_t)((*byte & 0x0F) | (q << 4));
    }
  }
  return true;
}

static void quantize_panels(void *context, int64_t begin, int64_t end, int worker) {
  (void)worker;
  quantize_job *job = context;
  int64_t out = job->weights->output_count;
  float *row = vlm_allocate(NULL, (size_t)job->weights->input_count * sizeof(float), VLM_DEFAULT_ALIGNMENT);
  if (!row) {
    atomic_store(&job->non_finite, 2);
    return;
  }
  for (int64_t p = begin; p < end; p++)
    for (int64_t o = p * CPU_PANEL; o < (p + 1) * CPU_PANEL && o < out; o++) {
      load_row(job->weights, o, row);
      for (int64_t g = 0; g < job->packed->group_count; g++)
        if (!quantize_group(job->packed, row, o, g)) atomic_store(&job->non_finite, 1);
    }
  vlm_release(NULL, row);
}

typedef struct quantize_range {
  quantize_job *job;
  int64_t first_panel;
} quantize_range;

static void quantize_range_worker(void *context, int64_t begin, int64_t end, int worker) {
  const quantize_range *range = context;
  quantize_panels(range->job, range->first_panel + begin, range->first_panel + end, worker);
}

vlm_status cpu_quant_pack_allocate(const cpu_linear_weights *weights, cpu_quant_format format, int64_t group_size,
                                   cpu_packed_linear **out_packed) {
  *out_packed = NULL;
  if (!weights || !weights->weight) return VLM_ERROR(INVALID_ARGUMENT, "quantize: missing pointer");
  if (weights->dtype != VLM_DTYPE_F32 && weights->dtype != VLM_DTYPE_BF16 && weights->dtype != VLM_DTYPE_F16)
    return VLM_ERROR(UNIMPLEMENTED, "quantize: weights of dtype %s (f32, bf16 or f16 expected)",
                     vlm_dtype_name(weights->dtype));
  if (group_size > weights->input_count) group_size = weights->input_count;
  return cpu_quant_allocate(format, weights->output_count, weights->input_count, group_size, weights->bias,
                            weights->dtype, NULL, out_packed);
}

vlm_status cpu_quant_pack_panels(vlm_thread_pool *pool, const cpu_linear_weights *weights, cpu_packed_linear *packed,
                                 int64_t panel_begin, int64_t panel_end) {
  quantize_job job = {weights, packed, 0};
  quantize_range range = {&job, panel_begin};
  int64_t grain = 65536 / (weights->input_count * CPU_PANEL) + 1;
  vlm_thread_pool_parallel_for(pool, panel_end - panel_begin, grain, quantize_range_worker, &range);
  int failure = atomic_load(&job.non_finite);
  if (failure == 2) return VLM_ERROR(RESOURCE_EXHAUSTED, "quantize: out of memory");
  if (failure) return VLM_ERROR(INVALID_ARGUMENT, "quantize: the weights hold a non-finite value");
  return VLM_OK;
}

vlm_status cpu_quant_pack(vlm_thread_pool *pool, const cpu_linear_weights *weights, cpu_quant_format format,
                          int64_t group_size, cpu_packed_linear **out_packed) {
  cpu_packed_linear *packed = NULL;
  VLM_RETURN_IF_ERROR(cpu_quant_pack_allocate(weights, format, group_size, &packed));
  vlm_status status = cpu_quant_pack_panels(pool, weights, packed, 0, packed->panel_count);
  if (status) {
    cpu_packed_linear_release(packed);
    return status;
  }
  *out_packed = packed;
  return VLM_OK;
}

/* ---- Driver ------------------------------------------------------------------ */

typedef struct quant_job {
  const cpu_packed_linear *weights;
  const float *input; /* in the chains' order (input_order applied) */
  int64_t row_count;
  float *output;
  cpu_quant_kernel kernel;
  cpu_quant_dequantizer dequantize;
  cpu_gemm_kernel f32_kernel;
  int64_t block_rows;
} quant_job;

static int panel_columns(const cpu_packed_linear *weights, int64_t p) {
  int64_t left = weights->output_count - p * CPU_PANEL;
  return (int)(left < CPU_PANEL ? left : CPU_PANEL);
}

/* Decode: every row of the call against each block in place. */
static void fused_worker(void *context, int64_t begin, int64_t end, int worker) {
  (void)worker;
  const quant_job *job = context;
  const cpu_packed_linear *weights = job->weights;
  int64_t in = weights->input_count, out = weights->output_count, g_size = weights->group_size;
  for (int64_t p = begin; p < end; p++)
    for (int64_t g = 0; g < weights->group_count; g++) {
      int64_t k0 = g * g_size;
      bool last = g == weights->group_count - 1;
      cpu_quant_tile tile = {job->input + k0, in, block_at(weights, p, g), last ? in - k0 : g_size,
                             panel_columns(weights, p), job->output + p * CPU_PANEL, out, g > 0,
                             last && weights->bias ? weights->bias + p * CPU_PANEL : NULL};
      job->kernel(&tile, (int)job->row_count);
    }
}

/* Steps [k0, k0 + length) of panel p as f32 rows of 64. */
static void dequantize_chunk(const quant_job *job, int64_t p, int64_t k0, int64_t length, float *scratch) {
  const cpu_packed_linear *weights = job->weights;
  int64_t g_size = weights->group_size;
  for (int64_t k = k0; k < k0 + length;) {
    int64_t g = k / g_size, piece = (g + 1) * g_size - k;
    if (piece > k0 + length - k) piece = k0 + length - k;
    job->dequantize(block_at(weights, p, g), g_size, k - g * g_size, piece, scratch + (k - k0) * CPU_PANEL);
    k += piece;
  }
}

static void gemm_worker(void *context, int64_t begin, int64_t end, int worker) {
  (void)worker;
  const quant_job *job = context;
  const cpu_packed_linear *weights = job->weights;
  int64_t in = weights->input_count, out = weights->output_count;
  float *scratch = vlm_allocate(NULL, (size_t)(CHUNK_K * CPU_PANEL) * sizeof(float), VLM_DEFAULT_ALIGNMENT);
  if (!scratch) { /* no memory: one step at a time through a row on the stack */
    float row[CPU_PANEL];
    for (int64_t p = begin; p < end; p++)
      for (int64_t k = 0; k < in; k++) {
        dequantize_chunk(job, p, k, 1, row);
        for (int64_t t = 0; t < job->row_count; t++) {
          cpu_gemm_tile tile = {job->input + t * in + k, in, row, CPU_PANEL, 1, panel_columns(weights, p),
                                job->output + t * out + p * CPU_PANEL, out, k > 0,
                                k == in - 1 && weights->bias ? weights->bias + p * CPU_PANEL : NULL, NULL};
          job->f32_kernel(&tile, 1);
        }
      }
    return;
  }
  for (int64_t row_begin = 0; row_begin < job->row_count; row_begin += job->block_rows) {
    int64_t row_end = row_begin + job->block_rows < job->row_count ? row_begin + job->block_rows : job->row_count;
    for (int64_t p = begin; p < end; p++)
      for (int64_t k0 = 0; k0 < in; k0 += CHUNK_K) {
        int64_t length = in - k0 < CHUNK_K ? in - k0 : CHUNK_K;
        dequantize_chunk(job, p, k0, length, scratch);
        bool last = k0 + length == in;
        int64_t count = row_end - row_begin;
        int64_t tiles = (count + CPU_GEMM_TILE_ROWS - 1) / CPU_GEMM_TILE_ROWS;
        for (int64_t i = 0, t = row_begin; i < tiles; i++) {
          int rows = (int)(count / tiles + (i < count % tiles ? 1 : 0));
          cpu_gemm_tile tile = {job->input + t * in + k0, in, scratch, CPU_PANEL, length, panel_columns(weights, p),
                                job->output + t * out + p * CPU_PANEL, out, k0 > 0,
                                last && weights->bias ? weights->bias + p * CPU_PANEL : NULL, NULL};
          job->f32_kernel(&tile, rows);
          t += rows;
        }
      }
  }
  vlm_release(NULL, scratch);
}

vlm_status cpu_quant_linear(vlm_thread_pool *pool, const cpu_packed_linear *weights, const float *input,
                            int64_t row_count, float *output) {
  if (!weights || !input || !output) return VLM_ERROR(INVALID_ARGUMENT, "quantized linear: missing pointer");
  if (row_count <= 0) return VLM_ERROR(INVALID_ARGUMENT, "quantized linear: %lld rows", (long long)row_count);
  int64_t in = weights->input_count;
  float *ordered = NULL;
  if (weights->input_order) { /* act-order: the chains' steps in the stored order */
    ordered = vlm_allocate(NULL, (size_t)(row_count * in) * sizeof(float), VLM_DEFAULT_ALIGNMENT);
    if (!ordered) return VLM_ERROR(RESOURCE_EXHAUSTED, "quantized linear: out of memory reordering inputs");
    for (int64_t t = 0; t < row_count; t++)
      for (int64_t j = 0; j < in; j++) ordered[t * in + j] = input[t * in + weights->input_order[j]];
    input = ordered;
  }
  cpu_quant_format format = (cpu_quant_format)weights->quant_format;
  quant_job job = {weights, input, row_count, output, cpu_quant_kernel_select(format),
                   cpu_quant_dequantizer_select(format), cpu_gemm_select(VLM_DTYPE_F32), row_count};
  int64_t work = row_count * in * CPU_PANEL;
  if (row_count <= cpu_quant_fused_rows()) {
    vlm_thread_pool_parallel_for(pool, weights->panel_count, MIN_PARALLEL_WORK / work + 1, fused_worker, &job);
  } else {
    int64_t block_rows = ROW_BLOCK_BYTES / ((CHUNK_K + CPU_PANEL) * (int64_t)sizeof(float));
    block_rows = block_rows / CPU_GEMM_TILE_ROWS * CPU_GEMM_TILE_ROWS;
    job.block_rows = block_rows < row_count ? block_rows : row_count;
    vlm_thread_pool_parallel_for(pool, weights->panel_count, MIN_PARALLEL_WORK / work + 1, gemm_worker, &job);
  }
  vlm_release(NULL, ordered);
  return VLM_OK;
}
