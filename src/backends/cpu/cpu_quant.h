/* Group-wise quantized linear weights (docs/KERNELS.md, "Quantized
 * weights"): `--quantize q8|q4` of a f32/bf16/f16 checkpoint at load, and
 * the int4 GPTQ/AWQ checkpoints of the hub converted into the same layout.
 *
 * Format. Outputs are packed in panels of CPU_PANEL (64) as for plain
 * weights; along k each panel is cut into groups of `group_size` inputs,
 * and each (panel, group) is one contiguous block:
 *   scales  64 x f16          (output c's scale for the group)
 *   zeros   64 x u8           (q4 only: output c's zero point, 0..16)
 *   values  group_size rows:  q8: 64 x int8 (c in order)
 *                             q4: 32 bytes, byte j = c j (low nibble) and
 *                                 c j + 32 (high nibble), unsigned 0..15
 * The weight of (k, c) is  scale * q  (q8, symmetric, q in -127..127) or
 * scale * (q - zero)  (q4). Both are exact in f32 (an f16 scale has 11
 * significant bits, the integer at most 8), so every formula for it gives
 * the same float: the dequantized matrix is a well-defined f32 matrix, and
 * the kernels compute exactly cpu_linear's contract chains over it
 * (acc = fma(x[k], w[k][c], acc) in increasing k, then + bias). A
 * quantized linear is therefore bit for bit the f32 linear of its
 * dequantized weights, on every path, at every row count and thread count.
 *
 * Decode (up to cpu_quant_fused_rows() rows) dequantizes in registers and
 * reads only the quantized bytes; more rows dequantize a chunk of a panel
 * to f32 once per row block and run the f32 micro-kernel over it. */
#ifndef VLM_BACKENDS_CPU_CPU_QUANT_H
#define VLM_BACKENDS_CPU_CPU_QUANT_H

#include "backends/cpu/cpu_kernels.h"

typedef enum cpu_quant_format {
  CPU_QUANT_NONE = 0,
  CPU_QUANT_Q8, /* symmetric int8, f16 scale per group */
  CPU_QUANT_Q4, /* unsigned int4 with a zero point, f16 scale per group */
} cpu_quant_format;

/* The group size of --quantize (q8 and q4): 32 inputs, as llama.cpp's
 * Q8_0 / Q4_0 / Q4_1 blocks. */
#define CPU_QUANT_GROUP_SIZE 32

/* "q8", "q4" (NULL for anything else). */
const char *cpu_quant_format_name(cpu_quant_format format);

/* Bytes of one (panel, group) block. */
int64_t cpu_quant_block_bytes(cpu_quant_format format, int64_t group_size);

/* Quantizes f32/bf16/f16 `weights` into a packed layer (threads split the
 * panels). q8: scale = f16(max |w| / 127), q = round(w / scale); q4: over
 * the group's range widened to contain 0, scale = f16((max - min) / 15),
 * zero = round(-min / scale), q = round(w / scale) + zero, clamped to
 * 0..15 (round half to even). Refuses non-finite weights. The bias stays
 * f32 (widened). */
vlm_status cpu_quant_pack(vlm_thread_pool *pool, const cpu_linear_weights *weights, cpu_quant_format format,
                          int64_t group_size, cpu_packed_linear **out_packed);
/* The same in two steps, so a large layer can be quantized a slice of
 * panels at a time (its source pages dropped as it goes): allocate, then
 * fill panels [begin, end) (a slice with a non-finite weight fails). */
vlm_status cpu_quant_pack_allocate(const cpu_linear_weights *weights, cpu_quant_format format, int64_t group_size,
                                   cpu_packed_linear **out_packed);
vlm_status cpu_quant_pack_panels(vlm_thread_pool *pool, const cpu_linear_weights *weights, cpu_packed_linear *packed,
                                 int64_t panel_begin, int64_t panel_end);

/* An empty q4/q8 layer (values, scales and zeros 0) to fill with the
 * setters below, for weights that are quantized already (GPTQ, AWQ).
 * `bias` (may be NULL) is `bias_dtype` [output_count]; `input_order` (may
 * be NULL) is copied. */
vlm_status cpu_quant_allocate(cpu_quant_format format, int64_t output_count, int64_t input_count,
                              int64_t group_size, const void *bias, vlm_dtype bias_dtype,
                              const int32_t *input_order, cpu_packed_linear **out_packed);
/* Step j (input input_order[j], or j) of output o holds q. Two calls for
 * outputs of different panels may run concurrently. */
void cpu_quant_set_value(cpu_packed_linear *packed, int64_t o, int64_t j, int q);
/* Output o's scale (f16 bits) and zero point for group g. */
void cpu_quant_set_group(cpu_packed_linear *packed, int64_t o, int64_t g, uint16_t scale_f16, int zero);

/* The dequantized f32 matrix [output_count, input_count] in the inputs'
 * own order (input_order undone), for tests and tools. */
void cpu_quant_dequantize(const cpu_packed_linear *packed, float *out);

/* cpu_linear_packed for quantized layers (it calls this). */
vlm_status cpu_quant_linear(vlm_thread_pool *pool, const cpu_packed_linear *weights, const float *input,
                            int64_t row_count, float *output);

/* ---- Per-path kernels (cpu_quant_kernels.c) ------------------------------ */

/* Rows a fused call takes at most (decode): 8 on AVX-512 (in passes of
 * 32 outputs past 4 rows: 16 accumulators), 4 on AVX2 (16 registers),
 * 8 on the portable path; cpu_quant_fused_rows() says which. */
#define CPU_QUANT_FUSED_ROWS 8
int cpu_quant_fused_rows(void);

/* `rows` (1..cpu_quant_fused_rows()) rows x `cols` outputs of one block,
 * over its first `k_count` steps: chains resumed from `out` when `resume`,
 * + bias when `bias` (then stored). */
typedef struct cpu_quant_tile {
  const float *x; /* at the block's first step */
  int64_t x_stride;
  const uint8_t *block;
  int64_t k_count;
  int cols;
  float *out;
  int64_t out_stride;
  bool resume;
  const float *bias;
} cpu_quant_tile;

typedef void (*cpu_quant_kernel)(const cpu_quant_tile *tile, int rows);
/* Dequantizes steps [k_first, k_first + k_count) of a block to f32 rows of
 * 64 (out[k * 64 + c]). */
typedef void (*cpu_quant_dequantizer)(const uint8_t *block, int64_t group_size, int64_t k_first, int64_t k_count,
                                      float *out);

cpu_quant_kernel cpu_quant_kernel_select(cpu_quant_format format);
cpu_quant_dequantizer cpu_quant_dequantizer_select(cpu_quant_format format);

#endif
