/* The backend-neutral model description.
 *
 * A family describes its forward pass once, as a graph of named operations
 * on tensors (this file), built from shared blocks. The cpu backend executes
 * the graph with its kernels; the OpenXLA emitter lowers the same graph to
 * StableHLO. No family is written twice.
 *
 * Graphs are built per call with concrete sizes (rows in this step, the
 * slots and positions they belong to), like ggml's: building is cheap and
 * shapes are then plain numbers. Every node has a name ("layers.3.attn_norm",
 * llama.cpp's cb(cur, name, il)), so any intermediate can be dumped and
 * compared with a golden of the same name.
 *
 * Rows. Every activation is [rows, ...]. A row is one token of one request:
 * a prefill chunk is rows of one slot at consecutive positions, a decode
 * step is one row per slot. Attention receives each row's slot and position,
 * so prefill and batched decode are the same graph shape, and a row's result
 * never depends on which other rows share the step (batch invariance). */
#ifndef VLM_GRAPH_GRAPH_H
#define VLM_GRAPH_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"
#include "core/tensor.h"
#include "vlm.h"

#define VLM_GRAPH_MAX_INPUTS 6
#define VLM_GRAPH_NAME_LENGTH 128

typedef enum vlm_op {
  /* Leaves */
  VLM_OP_INPUT,        /* a named graph input (tokens, embeddings, positions, bias) */
  VLM_OP_WEIGHT,       /* a checkpoint tensor, by canonical name */
  /* Compute */
  VLM_OP_GATHER,       /* rows of a table (weight or value): table[ids[r]]    */
  VLM_OP_SCALE,        /* x * scalar                                           */
  VLM_OP_ADD,          /* a + b (same shape)                                   */
  VLM_OP_MUL,          /* a * b (same shape)                                   */
  VLM_OP_RMS_NORM,     /* over the last dim; weight_offset 1 for Gemma        */
  VLM_OP_LAYER_NORM,   /* over the last dim, weight and bias                   */
  VLM_OP_LINEAR,       /* x [rows, in] . W[out, in]^T (+ bias)                 */
  VLM_OP_ACTIVATION,   /* elementwise activation                               */
  VLM_OP_GATED,        /* activation(gate) * up                                */
  VLM_OP_ROPE,         /* rotary embedding of [rows, heads, head_dim]          */
  VLM_OP_ATTENTION,    /* write K/V to the cache, attend, [rows, heads*dim]    */
  VLM_OP_SOFTCAP,      /* cap * tanh(x / cap)                                  */
  VLM_OP_RESHAPE,      /* same data, new shape                                 */
  VLM_OP_SELECT_ROWS,  /* keep the listed rows (e.g. last row of a chunk)      */
  VLM_OP_CONCAT,       /* inputs joined along one dimension                    */
  VLM_OP_SLICE,        /* a contiguous range along one dimension               */
  VLM_OP_ROW_SELECT,   /* per row: mask[r] != 0 ? a[r] : b[r] (merging features) */
  VLM_OP_TRANSPOSE,    /* [a, b] -> [b, a] (a weight stored [in, out])       */
  VLM_OP_SCALE_ROWS,   /* per row: x[r] * scales[r] (a weight per row)         */
  VLM_OP_MOE,          /* routed experts: top-k of softmax(router) per row    */
  /* Encoders: whole sequences per step, no KV cache. */
  VLM_OP_SEGMENT_ATTENTION, /* bidirectional attention among rows of one segment */
  VLM_OP_AVERAGE_POOL,      /* mean over k x k blocks of each image's patch grid    */
  VLM_OP_CONV2D,            /* 2D convolution, channels last, strides/padding/groups */
  VLM_OP_PERMUTE,           /* dimensions reordered (any rank)                      */
  VLM_OP_BIASED_ATTENTION,  /* attention within fixed blocks of rows + per-head bias */
  VLM_OP_UNARY,             /* tanh, softplus, clamp, elementwise                   */
  VLM_OP_ROW_MOMENT,        /* each row's mean or std, repeated over the row        */
  VLM_OP_MATMUL,            /* a [.., m, k] x b [.., k, n] of two activations       */
  VLM_OP_CROSS_ATTENTION,   /* queries over keys/values of other rows and widths    */
  VLM_OP_COUNT
} vlm_op;

const char *vlm_op_name(vlm_op op);

typedef enum vlm_activation {
  VLM_ACTIVATION_SILU,
  VLM_ACTIVATION_GELU,          /* erf form */
  VLM_ACTIVATION_GELU_TANH,     /* gelu_pytorch_tanh */
  VLM_ACTIVATION_QUICK_GELU,    /* x * sigmoid(1.702 x) */
  VLM_ACTIVATION_RELU,
} vlm_activation;

/* Parses Transformers' ACT2FN names ("silu", "gelu", "gelu_pytorch_tanh",
 * "quick_gelu", "relu", ...). */
bool vlm_activation_from_name(const char *name, vlm_activation *out);

/* The elementwise functions of the unary op. */
typedef enum vlm_unary {
  VLM_UNARY_TANH,
  VLM_UNARY_SOFTPLUS, /* torch's softplus(beta 1, threshold 20): x past 20, else log1p(exp(x)) */
  VLM_UNARY_CLAMP,    /* min(max(x, low), high) */
} vlm_unary;

typedef struct vlm_node {
  vlm_op op;
  char name[VLM_GRAPH_NAME_LENGTH];
  int input_count;
  int32_t inputs[VLM_GRAPH_MAX_INPUTS]; /* node indices */
  vlm_dtype dtype;                      /* of the result */
  int rank;
  int64_t shape[VLM_MAX_DIMS];
  /* Operation parameters (which ones apply depends on op). */
  union {
    struct { double epsilon; double weight_offset; } norm;
    struct { double scalar; } scale;
    struct { vlm_activation activation; } activation;
    struct { double cap; } softcap;
    /* Which of the graph's RoPE parameter sets; the positions are the
     * step's rows' (graph->rows) or, with a second input, that input's
     * [axes, rows] integers. */
    struct { int32_t rope_index; } rope;
    struct {
      int32_t layer;                /* KV cache layer */
      int32_t kv_heads, head_dim;
      double scale;
      int64_t sliding_window;       /* 0: none */
      double softcap;               /* 0: none */
    } attention;
    struct { const int32_t *rows; int64_t count; } select;
    struct { int32_t axis; } concat;
    struct { int32_t axis; int64_t start; } slice;
    /* key_mask, causal: the node input holding each (0: none). */
    struct { double scale; int32_t key_mask, causal; } segment_attention;
    /* Rows are `images` grids of height x width patches, row-major; the
     * output is each image's (height / kernel) x (width / kernel) grid. */
    struct { int64_t images, height, width, kernel; } pool;
    /* vlm_graph_moe: k experts a row, renormalised or not, the experts'
     * activation, and whether each expert matrix is stored [in, out]. */
    struct {
      int32_t top_k;
      bool normalize;
      vlm_activation activation;
      bool gate_up_transposed, down_transposed;
    } moe;
    /* stride (height, width); padding (top, bottom, left, right). */
    struct { int64_t stride[2], padding[4], groups; } conv;
    struct { int32_t axes[VLM_MAX_DIMS]; } permute;
    struct { double scale; } biased_attention;
    struct { vlm_unary kind; double low, high; } unary;
    struct { bool std; int32_t correction; } moment;
    struct { double scale; } cross_attention;
  } params;
} vlm_node;

/* Per-row context shared by every attention and RoPE node of a step. */
typedef struct vlm_row_context {
  int64_t row_count;
  const int32_t *slots;          /* [rows] the KV cache slot of each row */
  const int64_t *cache_indices;  /* [rows] where each row's K/V is stored */
  /* RoPE positions: [rows], or [3][rows] (axis-major) for M-RoPE when
   * position_axes is 3. Equal to cache_indices for plain text; they differ
   * once images shift M-RoPE positions. */
  const int64_t *positions;
  int position_axes;             /* 1 or 3 */
  /* Optional additive bias [rows, bias_key_count] for a prefill chunk of
   * one slot (key j = cache index j): it replaces the causal mask, e.g. for
   * Gemma 3's bidirectional attention among image tokens. NULL: causal. */
  const float *bias;
  int64_t bias_key_count;
  /* Optional [rows]: the sequence length a length-dependent RoPE (longrope,
   * dynamic) computes each row's frequencies for. Transformers takes
   * max(position_ids) + 1 of its forward call: the whole prompt for every
   * row of a prefill, however it is chunked here, and the row's own
   * position + 1 in decode, whatever else is batched. NULL: the step's
   * largest position + 1. */
  const int64_t *rope_lengths;
  /* Optional [rows]: a row-wise sliding window for decode rows (> 0: the
   * row sees only its last that many keys, itself included; 0: the
   * node's own). Phi-4's cache reset past the LongRoPE switch is a window
   * of 1. */
  const int64_t *row_windows;
} vlm_row_context;

#define VLM_GRAPH_MAX_ROPES 4

typedef struct vlm_graph {
  vlm_arena arena;
  /* RoPE parameter sets the rope nodes index (e.g. 0 global, 1 sliding;
   * up to four, so a decoder may choose per layer among more: Molmo's
   * scaled and unscaled layers, MLA's rope dims). */
  const struct vlm_rope_config *ropes[VLM_GRAPH_MAX_ROPES];
  int32_t rope_count;
  vlm_node *nodes;
  int32_t count, capacity;
  int32_t output;          /* the node whose value the caller wants */
  vlm_row_context rows;
  vlm_status error;        /* first build error; later builder calls no-op */
} vlm_graph;

void vlm_graph_init(vlm_graph *graph);
void vlm_graph_release(vlm_graph *graph);
/* The first error any builder call hit (owned by the graph until taken). */
vlm_status vlm_graph_take_error(vlm_graph *graph);
const vlm_node *vlm_graph_node(const vlm_graph *graph, int32_t index);
/* Multiply-add FLOPs (2 per multiply-add) of the graph's linear layers,
 * convolutions, biased attention and segment attention (scores and
 * weighted sums, all rows counted as one segment: exact for one image, an
 * upper bound for windows), for
 * benchmarks' fractions of the FMA peak. Cached attention is not counted. */
double vlm_graph_flops(const vlm_graph *graph);
/* Index of the node named `name`, or -1. */
int32_t vlm_graph_find(const vlm_graph *graph, const char *name);

/* Builders. Each returns the new node's index (or -1 once the graph has an
 * error) and checks its inputs' shapes, recording a message naming the node
 * on mismatch. `name` is printf-style. */
int32_t vlm_graph_input(vlm_graph *graph, vlm_dtype dtype, int rank, const int64_t *shape,
                        const char *name);
int32_t vlm_graph_weight(vlm_graph *graph, const char *canonical_name, vlm_dtype dtype, int rank,
                         const int64_t *shape);
int32_t vlm_graph_gather(vlm_graph *graph, int32_t table, int32_t ids, const char *name, ...)
    __attribute__((format(printf, 4, 5)));
int32_t vlm_graph_scale(vlm_graph *graph, int32_t x, double scalar, const char *name, ...)
    __attribute__((format(printf, 4, 5)));
/* a + b and a * b. b has a's shape, or the shape of a's trailing
 * dimensions (a vector [n] against [rows, n], a [T, T] mask against [heads,
 * T, T]): it is then repeated over a's leading dimensions (numpy
 * broadcasting of a suffix). b may be a weight in its own dtype. */
int32_t vlm_graph_add(vlm_graph *graph, int32_t a, int32_t b, const char *name, ...)
    __attribute__((format(printf, 4, 5)));
int32_t vlm_graph_mul(vlm_graph *graph, int32_t a, int32_t b, const char *name, ...)
    __attribute__((format(printf, 4, 5)));
int32_t vlm_graph_rms_norm(vlm_graph *graph, int32_t x, int32_t weight, double epsilon,
                           double weight_offset, const char *name, ...)
    __attribute__((format(printf, 6, 7)));
int32_t vlm_graph_layer_norm(vlm_graph *graph, int32_t x, int32_t weight, int32_t bias,
                             double epsilon, const char *name, ...)
    __attribute__((format(printf, 6, 7)));
/* bias may be -1. */
int32_t vlm_graph_linear(vlm_graph *graph, int32_t x, int32_t weight, int32_t bias,
                         const char *name, ...) __attribute__((format(printf, 5, 6)));
int32_t vlm_graph_activation(vlm_graph *graph, int32_t x, vlm_activation activation,
                             const char *name, ...) __attribute__((format(printf, 4, 5)));
int32_t vlm_graph_gated(vlm_graph *graph, int32_t gate, int32_t up, vlm_activation activation,
                        const char *name, ...) __attribute__((format(printf, 5, 6)));
int32_t vlm_graph_rope(vlm_graph *graph, int32_t x, int32_t rope_index, const char *name, ...)
    __attribute__((format(printf, 4, 5)));
/* Writes each row's K and V to the cache of `layer` at its cache index and
 * attends over the slot's cached keys (causal, or the step's bias). On a
 * latent layer of the KV layout (models/kv_layout.h: MLA's absorbed form)
 * the cache holds one vector a token that is both key and value: pass the
 * same node [rows, 1, width] as key and value (a query head's output then
 * holds the weighted latent; the family slices what it needs). */
int32_t vlm_graph_attention(vlm_graph *graph, int32_t query, int32_t key, int32_t value,
                            int32_t layer, double scale, int64_t sliding_window,
                            double softcap, const char *name, ...)
    __attribute__((format(printf, 9, 10)));
int32_t vlm_graph_softcap(vlm_graph *graph, int32_t x, double cap, const char *name, ...)
    __attribute__((format(printf, 4, 5)));
int32_t vlm_graph_reshape(vlm_graph *graph, int32_t x, int rank, const int64_t *shape,
                          const char *name, ...) __attribute__((format(printf, 5, 6)));
/* Rows are copied into the graph. */
int32_t vlm_graph_select_rows(vlm_graph *graph, int32_t x, const int32_t *rows, int64_t count,
                              const char *name, ...) __attribute__((format(printf, 5, 6)));

/* RoPE at positions of its own: `positions` is an integer input [axes,
 * rows] (axis-major; e.g. a vision tower's (row, column) of each patch)
 * instead of the step's rows. Every rope node of one parameter set must use
 * the same positions. */
int32_t vlm_graph_rope_at(vlm_graph *graph, int32_t x, int32_t positions, int32_t rope_index,
                          const char *name, ...) __attribute__((format(printf, 5, 6)));
/* Joins 1..VLM_GRAPH_MAX_INPUTS values along `axis`; every other dimension
 * must agree (axis 0: rows one after another, e.g. a class token in front
 * of patches; the last axis: LLaVA's list of feature layers side by side). */
int32_t vlm_graph_concat(vlm_graph *graph, const int32_t *inputs, int count, int axis,
                         const char *name, ...) __attribute__((format(printf, 5, 6)));
/* Elements [start, start + length) of dimension `axis`, the others whole
 * (q, k and v out of a fused qkv projection). */
int32_t vlm_graph_slice(vlm_graph *graph, int32_t x, int axis, int64_t start, int64_t length,
                        const char *name, ...) __attribute__((format(printf, 6, 7)));
/* Row by row: mask[r] != 0 ? a[r] : b[r], with mask an integer input
 * [rows] and a, b of one shape [rows, ...]. This is how encoder features
 * replace placeholder rows of the token embeddings (masked_scatter). */
int32_t vlm_graph_row_select(vlm_graph *graph, int32_t mask, int32_t a, int32_t b,
                             const char *name, ...) __attribute__((format(printf, 5, 6)));

/* x [a, b] -> [b, a]: e.g. a projection stored [in, out] (Gemma 3's
 * mm_input_projection_weight, applied as x @ W) made the [out, in] a
 * linear takes. */
int32_t vlm_graph_transpose(vlm_graph *graph, int32_t x, const char *name, ...)
    __attribute__((format(printf, 3, 4)));

/* Row by row: x[r] * scales[r], with scales f32 [rows] (an input or a
 * computed value) and x [rows, ...]: interpolation taps weighted per row
 * (Qwen3-VL's resampled position embedding), later routing weights. */
int32_t vlm_graph_scale_rows(vlm_graph *graph, int32_t x, int32_t scales, const char *name, ...)
    __attribute__((format(printf, 4, 5)));

/* A sparse mixture of experts, as Transformers' Qwen3-MoE / Qwen3-VL-MoE
 * SparseMoeBlock computes it (TopKRouter, then the experts' grouped_mm
 * forward), for x [rows, hidden] and the router's logits [rows, experts]
 * (a linear without bias, computed before: its own node):
 *
 *   p = softmax(logits[r]) in f32
 *   e_0..e_{k-1}: the k largest p in decreasing order (ties: lower expert first)
 *   w_j = p_{e_j}, divided by (w_0 + ... + w_{k-1}) when `normalize`
 *   y_j = down_{e_j}(act(gate) * up), [gate | up] = gate_up_{e_j}(x[r]) (chunk(2))
 *   out[r] = ((y_0 * w_0 + y_1 * w_1) + ...) + y_{k-1} * w_{k-1}
 *
 * gate_up and down (checkpoint weights, or any values) are [experts, 2I, hidden] and
 * [experts, hidden, I] (each expert an nn.Linear's [out, in], as
 * Transformers 5.23 holds and saves them) or, with `gate_up_transposed` /
 * `down_transposed`, [experts, hidden, 2I] and [experts, I, hidden] (x @ W,
 * the hub's checkpoints). A row's result depends only on its own x and
 * logits (batch invariance): backends may group rows by expert, and should
 * read only the experts some row chose. */
typedef struct vlm_moe_options {
  int32_t top_k;
  bool normalize;
  vlm_activation activation;
  bool gate_up_transposed, down_transposed;
} vlm_moe_options;
int32_t vlm_graph_moe(vlm_graph *graph, int32_t x, int32_t router_logits, int32_t gate_up, int32_t down,
                      const vlm_moe_options *options, const char *name, ...) __attribute__((format(printf, 7, 8)));

/* Bidirectional attention without a KV cache: row r attends to every row
 * whose segment id (integer input `segments` [rows]) equals its own, and
 * only to those (one image, one video frame, one window). Rows of one
 * segment must be consecutive. q, k, v [rows, heads, dim] of one shape; the
 * result is [rows, heads * dim]. */
int32_t vlm_graph_segment_attention(vlm_graph *graph, int32_t query, int32_t key, int32_t value,
                                    int32_t segments, double scale, const char *name, ...)
    __attribute__((format(printf, 7, 8)));
/* The same with a key mask (integer input `key_mask` [rows]): no row
 * attends to a row whose mask is 0, its own segment's included, while that
 * row still attends to the unmasked rows of its segment (Transformers'
 * padding mask, create_bidirectional_mask over a NaViT patch mask). A
 * segment with no unmasked row attends as without the mask (such rows
 * have no defined result in Transformers: a softmax over nothing). */
int32_t vlm_graph_segment_attention_masked(vlm_graph *graph, int32_t query, int32_t key, int32_t value,
                                           int32_t segments, int32_t key_mask, double scale, const char *name, ...)
    __attribute__((format(printf, 8, 9)));
/* The same, each optional (-1: none): the key mask, and an integer input
 * `causal` [rows]: a row whose value is not 0 attends only to the rows of
 * its segment at or before it (causal attention within a segment,
 * Transformers' sdpa `is_causal` over a batch of sequences, which runs a
 * causal vision tower where no mask was built: Phi-4's unpadded crops).
 * With both, a row's keys are those of its segment it may see (all of them,
 * or the ones up to it), less the masked ones, unless that leaves none:
 * then the mask is ignored for that row. An input, not a parameter, so one
 * compiled function serves both modes. */
int32_t vlm_graph_segment_attention_causal(vlm_graph *graph, int32_t query, int32_t key, int32_t value,
                                           int32_t segments, int32_t key_mask, int32_t causal, double scale,
                                           const char *name, ...) __attribute__((format(printf, 9, 10)));

/* Average pooling as torch's AvgPool2d(kernel, stride = kernel) over each
 * image's patch grid: x [images * height * width, channels], rows in
 * row-major patch order per image, becomes [images * (height / kernel) *
 * (width / kernel), channels] in the same order (a remainder of rows or
 * columns is dropped, as AvgPool2d's floor does). Each output is the sum of
 * its kernel x kernel inputs in row-major order, divided by kernel^2. */
int32_t vlm_graph_average_pool(vlm_graph *graph, int32_t x, int64_t images, int64_t height, int64_t width,
                               int64_t kernel, const char *name, ...) __attribute__((format(printf, 7, 8)));

/* torch's Conv2d on channels-last values: x [batch, height, width,
 * in_channels], weight [out_channels, in_channels / groups, kernel_h,
 * kernel_w] (torch's layout), bias [out_channels] or -1. Output [batch,
 * (height + top + bottom - kernel_h) / stride_h + 1, (width + left + right
 * - kernel_w) / stride_w + 1, out_channels]; the padding is zeros and may
 * differ per side (a causal Conv1d is a kernel_h x 1 kernel with `top` =
 * kernel_h - 1 over [batch, time, 1, channels]). groups divides both
 * channel counts: output channel o reads input channels [g * in/groups,
 * (g + 1) * in/groups) of its group g = o / (out / groups) (depthwise:
 * groups = in_channels). A 1x1 convolution is better a linear. */
int32_t vlm_graph_conv2d(vlm_graph *graph, int32_t x, int32_t weight, int32_t bias, const int64_t stride[2],
                         const int64_t padding[4], int64_t groups, const char *name, ...)
    __attribute__((format(printf, 8, 9)));

/* x with its dimensions reordered: output dimension i is input dimension
 * axes[i] (torch's permute; numpy's transpose). */
int32_t vlm_graph_permute(vlm_graph *graph, int32_t x, const int32_t *axes, const char *name, ...)
    __attribute__((format(printf, 4, 5)));

/* Bidirectional attention within consecutive blocks of `block` rows, with
 * an additive bias per head: q, k, v [rows, heads, dim] of one shape, rows
 * a multiple of block; bias f32 [heads, block, block] (a computed value:
 * e.g. relative-position buckets gathered from a table). Row i of a block
 * attends to every row j of its block with score q.k * scale + bias[h, i,
 * j] (the bias may be -inf, but not for every key of a row). The result is
 * [rows, heads * dim]. Blocks are what an encoder that unfolds a long
 * sequence into fixed chunks runs as a batch (Phi-4's conformer). */
int32_t vlm_graph_biased_attention(vlm_graph *graph, int32_t query, int32_t key, int32_t value, int32_t bias,
                                   double scale, const char *name, ...) __attribute__((format(printf, 7, 8)));

/* tanh(x); torch's softplus (x where x > 20, else log1p(exp(x))); and
 * clamp(x, low, high) (low <= high; +-INFINITY for one side): f32, any
 * shape. */
int32_t vlm_graph_tanh(vlm_graph *graph, int32_t x, const char *name, ...) __attribute__((format(printf, 3, 4)));
int32_t vlm_graph_softplus(vlm_graph *graph, int32_t x, const char *name, ...) __attribute__((format(printf, 3, 4)));
int32_t vlm_graph_clamp(vlm_graph *graph, int32_t x, double low, double high, const char *name, ...)
    __attribute__((format(printf, 5, 6)));
/* The mean, or the standard deviation with `correction` (torch.std's: 1,
 * Bessel's; 0: the population's), of each row of x (the last dimension, at
 * least correction + 1 values), repeated over the row (the shape of x), so
 * it composes with add and mul: Gemma 3n's mean + std * k cutoff. The sums
 * are f64 on the cpu, f32 on xla. */
int32_t vlm_graph_row_mean(vlm_graph *graph, int32_t x, const char *name, ...) __attribute__((format(printf, 3, 4)));
int32_t vlm_graph_row_std(vlm_graph *graph, int32_t x, int32_t correction, const char *name, ...)
    __attribute__((format(printf, 4, 5)));
/* a [m, k] x b [k, n] -> [m, n], or batched a [B, m, k] x b [B, k, n] ->
 * [B, m, n]: two activations (MLA's absorbed query times the cached
 * latent, AltUp's per-row coefficients). */
int32_t vlm_graph_matmul(vlm_graph *graph, int32_t a, int32_t b, const char *name, ...)
    __attribute__((format(printf, 4, 5)));

/* Attention whose keys are not its queries: query [rq, heads, dk] over
 * key [rk, kv_heads, dk] and value [rk, kv_heads, dv] (heads a multiple of
 * kv_heads; head h reads kv head h / (heads / kv_heads)), every query row
 * seeing every key row: softmax(scale q.k) v -> [rq, heads * dv]. MLA's
 * absorbed decode (one latent head for every head, dk = rank + rope dims,
 * dv = rank), cross-attention poolers. */
int32_t vlm_graph_cross_attention(vlm_graph *graph, int32_t query, int32_t key, int32_t value, double scale,
                                  const char *name, ...) __attribute__((format(printf, 6, 7)));

/* Checks that every INPUT node of `graph` has a tensor of its name with
 * the node's dtype and shape in `tensors` (names listed in `implicit`,
 * e.g. "tokens", are bound by the caller some other way). */
struct vlm_tensor_list;
vlm_status vlm_graph_check_inputs(const vlm_graph *graph, const struct vlm_tensor_list *tensors,
                                  const char *const *implicit, int implicit_count);

/* A readable listing, one node per line with its parameters (and the RoPE
 * parameter sets), for debugging, golden tests and the xla compatibility
 * key: two graphs with the same listing compute the same function. */
char *vlm_graph_format(const vlm_graph *graph);

#endif
