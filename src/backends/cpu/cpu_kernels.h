/* CPU operators shared by every decoder family: linear layers, norms,
 * embeddings, activations, softmax, soft-capping, RoPE and attention.
 *
 * Activations are f32. Weights stay in the checkpoint's dtype (f32, bf16 or
 * f16) and are widened to f32 as they are read; nothing converts a whole
 * model up front.
 *
 * Determinism contract (docs/KERNELS.md): every output element is computed by
 * the same sequence of floating-point operations whatever the number of rows
 * in the call (T), the thread count, the position of the row in a batch or
 * prefill chunk, and the SIMD path (portable, AVX2, AVX-512). Dot products
 * (linear layers, attention scores and weighted sums) follow one contract:
 *
 *   acc = +0; for k = 0, 1, ..., count - 1: acc = fma(a[k], w[k], acc)
 *
 * one fma chain per output in increasing k, then (linear) + bias as one f32
 * addition. The SIMD paths run many such chains side by side, one per lane
 * (outputs, never k, across a register), so every path, tile shape and row
 * count performs the same operations on the same values: they agree bit
 * for bit, and a row's result does not depend on the rows beside it.
 *
 * Row-major layouts throughout, like PyTorch. Functions taking a thread pool
 * accept NULL (run on the caller). */
#ifndef VLM_BACKENDS_CPU_CPU_KERNELS_H
#define VLM_BACKENDS_CPU_CPU_KERNELS_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/cpu/cpu_features.h"
#include "core/tensor.h"
#include "core/thread_pool.h"
#include "io/config.h"
#include "vlm.h"

/* ---- Machine limits (cpu_features.c) ------------------------------------- */

/* The FMA peak of the pool's workers in GFLOP/s on `path`, in the path's
 * own instructions: 12 independent fma chains per worker in registers
 * (zmm on AVX-512, ymm on AVX2, scalar fmaf on the portable path). The
 * denominator for GEMM and prefill efficiency (vlm bench, kernels bench).
 * 0 when the CPU cannot run `path`. */
double cpu_measure_fma_peak_gflops(vlm_thread_pool *pool, cpu_kernel_path path);

/* Read bandwidth in GB/s of the pool's workers over `bytes` of `data` (a
 * buffer far larger than the caches for a DRAM figure), best of `passes`,
 * with the path's widest loads and four independent sums per worker. The
 * yardstick for decode (vlm bench, kernels bench). */
double cpu_measure_read_gb_per_s(vlm_thread_pool *pool, cpu_kernel_path path, const void *data,
                                 int64_t bytes, int passes);

/* ---- Dot product and linear layers (cpu_linear.c) ------------------------ */

/* The contract dot product of two f32 vectors (exposed for tests). */
float cpu_dot(const float *a, const float *b, int64_t count);

/* The weights of one PyTorch nn.Linear, borrowed (e.g. from a checkpoint's
 * memory map). */
typedef struct cpu_linear_weights {
  vlm_dtype dtype;       /* f32, bf16 or f16, for weight and bias alike */
  const void *weight;    /* [output_count, input_count], row-major */
  const void *bias;      /* [output_count], or NULL */
  int64_t output_count;
  int64_t input_count;
  /* The weight is stored [input_count, output_count] instead (applied as
   * x @ W: the hub's fused MoE experts). Only the packing reads it: the
   * packed form, and so every result, is the same. */
  bool transposed;
} cpu_linear_weights;

/* Outputs per packed panel: the micro-kernel's width (64 f32 = 4 zmm or 8
 * ymm registers per row). */
#define CPU_PANEL 64

/* A linear layer repacked once for the kernels: panel p holds outputs
 * [64p, 64p + 64) k-major, element (k, c) at panels[(p * input_count + k) *
 * 64 + c] in the weight's own dtype (no widening: bf16 stays 2 bytes), the
 * outputs past output_count zero. Decode then reads one sequential stream
 * per thread, and a GEMM widens one panel chunk for many rows. Owned. */
typedef struct cpu_packed_linear {
  vlm_dtype dtype;
  int64_t output_count, input_count, panel_count;
  void *panels;
  float *bias; /* [panel_count * 64] f32 (the bias widened), or NULL */
  /* Group-wise quantized weights (cpu_quant.h; 0 = CPU_QUANT_NONE: the
   * panels above in `dtype`): the panels hold quantized blocks instead. */
  int quant_format;
  int64_t group_size, group_count, block_bytes;
  int32_t *input_order; /* NULL, or step j of every chain reads input input_order[j] */
} cpu_packed_linear;

/* Packs `weights` (threads split the panels). Refuses dtypes other than
 * f32, bf16, f16 and non-positive sizes. */
vlm_status cpu_linear_pack(vlm_thread_pool *pool, const cpu_linear_weights *weights,
                           cpu_packed_linear **out_packed);
void cpu_packed_linear_release(cpu_packed_linear *packed);
/* cpu_linear_pack in two steps, so a caller can pack a large layer a slice
 * of panels at a time (and drop each slice's source pages as it goes):
 * allocate (the bias is copied here), then fill panels [begin, end). */
vlm_status cpu_linear_pack_allocate(const cpu_linear_weights *weights, cpu_packed_linear **out_packed);
void cpu_linear_pack_panels(vlm_thread_pool *pool, const cpu_linear_weights *weights, cpu_packed_linear *packed,
                            int64_t panel_begin, int64_t panel_end);
/* Bytes the packed layer holds. */
uint64_t cpu_packed_linear_bytes(const cpu_packed_linear *packed);

/* output[t, o] = sum_k input[t, k] * weight[o, k] (+ bias[o]) for t in
 * [0, row_count), both matrices contiguous. Each output element is one
 * contract dot product followed by one f32 addition of the bias, so row t's
 * result does not depend on row_count or on the other rows. Threads split
 * the panels (and, for long inputs, blocks of rows). */
vlm_status cpu_linear_packed(vlm_thread_pool *pool, const cpu_packed_linear *weights,
                             const float *input, int64_t row_count, float *output);

/* The same from unpacked weights: packs them for this call only (for tests
 * and one-off calls; the graph executor packs once). */
vlm_status cpu_linear(vlm_thread_pool *pool, const cpu_linear_weights *weights,
                      const float *input, int64_t row_count, float *output);

/* ---- Element-wise and per-row operators (cpu_ops.c) ---------------------- */

/* Reads element `index` of an f32/bf16/f16 vector as f32. */
float cpu_load_element(const void *data, vlm_dtype dtype, int64_t index);

/* Root-mean-square norm of each of `row_count` rows of `width` values:
 * out = w * (x * r) with r = 1 / sqrt(mean(x^2) + eps) in f32, as
 * transformers' LlamaRMSNorm for f32 activations; with `add_one` (Gemma),
 * out = (x * r) * (1 + w). The mean of squares is accumulated in double, so
 * it is independent of SIMD width. `weight` (f32/bf16/f16) may be NULL (no
 * scale). In place (out == x) is allowed. */
vlm_status cpu_rms_norm(const float *x, int64_t row_count, int64_t width,
                        const void *weight, vlm_dtype weight_dtype, float eps,
                        bool add_one, float *out);

/* torch.nn.LayerNorm: out = (x - mean) * (1 / sqrt(var + eps)) * w + b with
 * the biased variance; weight and bias may each be NULL. */
vlm_status cpu_layer_norm(const float *x, int64_t row_count, int64_t width,
                          const void *weight, const void *bias,
                          vlm_dtype parameter_dtype, float eps, float *out);

/* out[i, :] = table[ids[i], :] * scale (scale 1 = plain lookup; Gemma passes
 * sqrt(hidden_size) rounded to the table dtype, as its
 * ScaledWordEmbedding does). Refuses ids outside [0, vocab_size). */
vlm_status cpu_embedding(const void *table, vlm_dtype dtype, int64_t vocab_size,
                         int64_t width, const int32_t *ids, int64_t id_count,
                         float scale, float *out);

typedef enum cpu_activation {
  CPU_ACTIVATION_SILU = 0,   /* x * sigmoid(x), "silu" / "swish" */
  CPU_ACTIVATION_GELU,       /* exact erf form, "gelu" */
  CPU_ACTIVATION_GELU_TANH,  /* "gelu_pytorch_tanh", "gelu_new" */
  CPU_ACTIVATION_QUICK_GELU, /* x * sigmoid(1.702 x) */
  CPU_ACTIVATION_RELU,
} cpu_activation;

/* Maps a config's hidden_act to an activation; false when unknown. */
bool cpu_activation_from_name(const char *name, cpu_activation *out);

/* out[i] = act(x[i]); in place allowed. */
void cpu_activate(cpu_activation activation, const float *x, int64_t count,
                  float *out);
/* out[i] = act(gate[i]) * up[i] (SwiGLU with SiLU, GeGLU with a GELU);
 * out may alias gate or up. */
void cpu_gated_activate(cpu_activation activation, const float *gate,
                        const float *up, int64_t count, float *out);

/* out = softmax(x + bias) over one row (bias may be NULL). -inf entries get
 * probability 0; a row with no finite entry gives all zeros instead of NaN.
 * exp is cpu_exp; the sum runs in 16 lanes (lane l: entries i = l mod 16 in
 * increasing i) then a fixed tree, the same on every path (cpu_exp.c).
 * In place allowed. */
void cpu_softmax(const float *x, const float *bias, int64_t count, float *out);

/* x = cap * tanh(x / cap), in place (Gemma's logit soft-capping). */
void cpu_soft_cap(float *x, int64_t count, float cap);

/* ---- Rotary position embeddings (cpu_rope.c) ----------------------------- */

/* The inverse frequencies (config->rotary_dimension / 2 of them) and the
 * cos/sin scaling ("attention_factor") for `config`, computed as
 * transformers 5.23.0's ROPE_INIT_FUNCTIONS do, with f32 tensor arithmetic.
 * `sequence_length` (max position + 1 of the step) matters only for
 * "dynamic" (which rescales once it exceeds max_position_embeddings, as
 * dynamic_rope_update does) and "longrope" (long factors beyond the original
 * context). Axial RoPE (axial_axes > 1) repeats the default frequencies
 * of rotary_dimension / axial_axes once per axis. */
vlm_status cpu_rope_inverse_frequencies(const vlm_rope_config *config,
                                        int64_t max_position_embeddings,
                                        int64_t sequence_length,
                                        float *out_inverse_frequencies,
                                        float *out_attention_scaling);
/* A value equal for two sequence lengths exactly when
 * cpu_rope_inverse_frequencies gives the same frequencies for both: 0 for
 * types that ignore the length, longrope's factor set (0 short, 1 long),
 * dynamic's length once it outgrows max_position_embeddings. */
int64_t cpu_rope_length_class(const vlm_rope_config *config, int64_t max_position_embeddings,
                              int64_t sequence_length);

/* Which position axis (0 = temporal, 1 = height, 2 = width) drives each of
 * the rotary_dimension / 2 frequencies: all 0 without M-RoPE, contiguous
 * mrope_section blocks for Qwen2/2.5-VL, the interleaved pattern of
 * Qwen3-VL, and for axial RoPE (config->axial_axes > 1, vision towers) one
 * equal block per axis. */
vlm_status cpu_rope_frequency_axes(const vlm_rope_config *config,
                                   uint8_t *out_axes);

/* cos/sin tables [token_count, frequency_count]:
 * angle = f32(position) * inverse_frequency[i] (f32 product),
 * cos = cosf(angle) * attention_scaling. `positions` is [token_count], or
 * [3, token_count] (axis-major, like transformers' [3, batch, seq]) when
 * `axes` is non-NULL. */
void cpu_rope_cos_sin(const float *inverse_frequencies, int64_t frequency_count,
                      float attention_scaling, const int64_t *positions,
                      const uint8_t *axes, int64_t token_count, float *cos_out,
                      float *sin_out);

/* Rotates x [token_count, head_count, head_dim] in place with the
 * rotate_half convention: for i < rotary_dimension / 2,
 * x[i] <- x[i] * cos - x[i + half] * sin and
 * x[i + half] <- x[i + half] * cos + x[i] * sin; dimensions from
 * rotary_dimension on pass through (partial rotary). */
void cpu_rope_apply(float *x, int64_t token_count, int64_t head_count,
                    int64_t head_dim, int64_t rotary_dimension,
                    const float *cos_table, const float *sin_table);

/* ---- Attention (cpu_attention.c) ----------------------------------------- */

/* Scaled dot-product attention of one chunk of queries against a KV cache.
 *
 * Layout: query and output [query_count, head_count, head_dim]; the caches
 * [positions, kv_head_count, head_dim], f32, where positions
 * [0, past_count + query_count) are filled and query t sits at position
 * past_count + t. Query head h reads KV head h / (head_count / kv_head_count)
 * (GQA; MQA when kv_head_count is 1).
 *
 * Per (query, head): score_j = dot(q, k_j) * scale (contract dot), then
 * soft-capped when soft_cap > 0, then + bias[t, j] when bias is given; keys
 * after the query's position are skipped when causal, keys at or before
 * position - sliding_window when sliding_window > 0; softmax as cpu_softmax;
 * out = sum_j p_j * v_j accumulated in increasing j with one fma per
 * element. Threads split (query, head) pairs, never the keys, so a query's
 * output does not depend on the chunk it came in or the thread count. */
typedef struct cpu_attention_shape {
  int64_t query_count;
  int64_t past_count;
  int64_t head_count;
  int64_t kv_head_count;
  int64_t head_dim;
  float scale;
  float soft_cap;          /* 0 = none */
  bool causal;
  int64_t sliding_window;  /* 0 = none */
  const float *bias;       /* [query_count, bias_stride] over positions, or NULL */
  int64_t bias_stride;     /* >= past_count + query_count */
  /* 0: every head reads the same bias; else head h reads bias + h *
   * bias_head_stride (a per-head bias [heads, queries, keys]). */
  int64_t bias_head_stride;
} cpu_attention_shape;

vlm_status cpu_attention(vlm_thread_pool *pool, const cpu_attention_shape *shape,
                         const float *query, const float *key_cache,
                         const float *value_cache, float *output);

/* ---- Convolution and permutation (cpu_conv.c) ---------------------------- */

typedef struct cpu_conv2d_shape {
  int64_t batch, height, width, in_channels;     /* x [batch, height, width, in] */
  int64_t out_height, out_width, out_channels;
  int64_t kernel_h, kernel_w, stride[2], padding[4], groups; /* padding: top, bottom, left, right */
} cpu_conv2d_shape;

/* torch's Conv2d over channels-last x with weight [out, in/groups, kh, kw]
 * (f32) and bias [out] or NULL: each output is a float sum over (input
 * channel of its group, ky, kx) in that order, zero padding skipped, then
 * + bias. Threads split the output rows, so the result does not depend on
 * the thread count. */
vlm_status cpu_conv2d(vlm_thread_pool *pool, const cpu_conv2d_shape *shape, const float *x, const float *weight,
                      const float *bias, float *out);

/* out = x with dimensions reordered: out dimension i is x's axes[i]; shape
 * is x's (rank <= 8). */
void cpu_permute(const float *x, int rank, const int64_t *shape, const int32_t *axes, float *out);

/* Decode rows of a batched step, each a single query against its own
 * cache (query_count 1): the bits of cpu_attention on each row, in one
 * pass over the pool. Items are (row, KV head); a query's scores are tiles
 * of keys read in place from the cache against the transposed query
 * (fma(k, q, acc) is fma(q, k, acc)), so no keys are copied. */
typedef struct cpu_attention_row {
  cpu_attention_shape shape;
  const float *query, *key_cache, *value_cache;
  float *output;
} cpu_attention_row;

vlm_status cpu_attention_decode(vlm_thread_pool *pool, const cpu_attention_row *rows, int64_t row_count);

#endif
