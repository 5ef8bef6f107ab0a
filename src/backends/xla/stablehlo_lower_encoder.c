/* Lowering of layer norm, concat, row select, row scaling, transpose,
 * permute and the encoder ops (graph.h: "Encoders": whole sequences per
 * call, no KV cache: segment and biased attention, average pooling,
 * conv2d). Numerics follow the cpu backend
 * (src/backends/cpu_graph.c, cpu_layer_norm, cpu_attention's non-causal
 * path) in f32; where the cpu backend accumulates in double (layer norm's
 * mean and variance) the module stays f32, which the execution tests bound. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backends/xla/stablehlo_internal.h"
#include "core/status.h"

/* (x - mean) * rsqrt(variance + eps) * weight + bias over the last
 * dimension; mean and variance over the row, the variance of the centred
 * values (two passes, as cpu_layer_norm). */
static xla_value lower_layer_norm(xla_emitter *e, const vlm_node *node) {
  xla_value x = xla_input_f32(e, node, 0);
  int64_t width = x.shape[x.rank - 1], last = x.rank - 1;
  int64_t dims[XLA_MAX_RANK];
  for (int i = 0; i < x.rank; i++) dims[i] = i;
  xla_value sum = xla_reduce_last(e, x, "add", 0.0);
  xla_value mean = XLA_OP(e, "divide", NULL, &sum, sum, xla_splat_like(e, (double)width, sum));
  xla_value centred = XLA_OP(e, "subtract", NULL, &x, x, xla_broadcast(e, mean, x.rank, x.shape, dims));
  xla_value squares = XLA_OP(e, "multiply", NULL, &x, centred, centred);
  xla_value square_sum = xla_reduce_last(e, squares, "add", 0.0);
  xla_value variance = XLA_OP(e, "divide", NULL, &square_sum, square_sum,
                              xla_splat_like(e, (double)width, square_sum));
  xla_value shifted = XLA_OP(e, "add", NULL, &variance, variance,
                             xla_splat_like(e, (float)node->params.norm.epsilon, variance));
  xla_value inverse = XLA_OP(e, "rsqrt", NULL, &shifted, shifted);
  xla_value normalized = XLA_OP(e, "multiply", NULL, &x, centred,
                                xla_broadcast(e, inverse, x.rank, x.shape, dims));
  xla_value weight = xla_broadcast(e, xla_input_f32(e, node, 1), x.rank, x.shape, &last);
  xla_value bias = xla_broadcast(e, xla_input_f32(e, node, 2), x.rank, x.shape, &last);
  xla_value scaled = XLA_OP(e, "multiply", NULL, &x, normalized, weight);
  return XLA_OP(e, "add", NULL, &x, scaled, bias);
}

/* q, k, v [rows, heads, dim]: row r attends to the rows whose segment id
 * equals its own (and, with a key mask, whose mask is not 0). One
 * dot_general per product over all rows, with the segment mask as an
 * additive bias (0 or -inf). Without a key mask every row sees at least
 * itself; with one, a segment none of whose keys is unmasked ignores the
 * mask (graph.h), so no row's softmax is empty either. */
/* same [query, key] AND key_mask[key] != 0, except in the rows where that
 * leaves nothing: a query row keeps `same` where no key of its segment is
 * unmasked. */
static xla_value masked_keys(xla_emitter *e, xla_value same, xla_value key_mask, int64_t rows) {
  int64_t pair[2] = {rows, rows};
  xla_value valid = xla_compare(e, key_mask, xla_splat(e, 0, "i32", 1, key_mask.shape), "NE");
  xla_value valid_keys = xla_broadcast(e, valid, 2, pair, (int64_t[]){1});
  xla_value keep = XLA_OP(e, "and", NULL, &same, same, valid_keys);
  /* Whether a row keeps any key: the count of kept keys per row > 0. */
  xla_value ones = xla_select(e, keep, xla_splat(e, 1, "i32", 2, pair), xla_splat(e, 0, "i32", 2, pair));
  xla_value kept = xla_reduce_last(e, ones, "add", 0.0);
  xla_value any = xla_compare(e, kept, xla_splat(e, 0, "i32", 1, kept.shape), "GT");
  return xla_select(e, xla_broadcast(e, any, 2, pair, (int64_t[]){0}), keep, same);
}

/* same [query, key] AND (causal[query] == 0 OR key <= query): segments
 * are runs of consecutive rows, so a key at or before the query in the
 * whole sequence is one at or before it in its segment. */
static xla_value causal_keys(xla_emitter *e, xla_value same, xla_value causal, int64_t rows) {
  int64_t pair[2] = {rows, rows};
  xla_value query = xla_iota(e, "i32", 2, pair, 0), key = xla_iota(e, "i32", 2, pair, 1);
  xla_value before = xla_compare(e, key, query, "LE");
  xla_value off = xla_compare(e, causal, xla_splat(e, 0, "i32", 1, causal.shape), "EQ");
  xla_value seen = XLA_OP(e, "or", NULL, &before, before, xla_broadcast(e, off, 2, pair, (int64_t[]){0}));
  return XLA_OP(e, "and", NULL, &same, same, seen);
}

static vlm_status lower_segment_attention(xla_emitter *e, const vlm_node *node, xla_value *out) {
  xla_value q = xla_input_f32(e, node, 0), k = xla_input_f32(e, node, 1), v = xla_input_f32(e, node, 2);
  xla_value segments = e->nodes[node->inputs[3]];
  int64_t rows = q.shape[0], heads = q.shape[1], dim = q.shape[2];
  int64_t pair[2] = {rows, rows};
  xla_value same = xla_compare(e, xla_broadcast(e, segments, 2, pair, (int64_t[]){0}),
                               xla_broadcast(e, segments, 2, pair, (int64_t[]){1}), "EQ");
  int32_t mask_input = node->params.segment_attention.key_mask, causal_input = node->params.segment_attention.causal;
  if (causal_input) same = causal_keys(e, same, e->nodes[node->inputs[causal_input]], rows);
  if (mask_input) same = masked_keys(e, same, e->nodes[node->inputs[mask_input]], rows);
  xla_value bias = xla_select(e, same, xla_splat(e, 0.0, "f32", 2, pair), xla_splat(e, -INFINITY, "f32", 2, pair));
  /* [head, query, key] */
  int64_t score_shape[3] = {heads, rows, rows};
  xla_value scores = xla_dot_general(e, q, k, 1, (int64_t[]){1}, (int64_t[]){1}, 2, 2, 3, score_shape);
  scores = XLA_OP(e, "multiply", NULL, &scores, scores,
                  xla_splat_like(e, (float)node->params.segment_attention.scale, scores));
  scores = XLA_OP(e, "add", NULL, &scores, scores, xla_broadcast(e, bias, 3, score_shape, (int64_t[]){1, 2}));
  xla_value probabilities = xla_softmax_last(e, scores);
  /* [head, query, dim] */
  xla_value attended = xla_dot_general(e, probabilities, v, 1, (int64_t[]){0}, (int64_t[]){1}, 2, 0, 3,
                                       (int64_t[]){heads, rows, dim});
  xla_value like = xla_make_value("f32", 3, (int64_t[]){rows, heads, dim});
  attended = XLA_OP(e, "transpose", "permutation = array<i64: 1, 0, 2>", &like, attended);
  *out = xla_reshape(e, attended, 2, (int64_t[]){rows, heads * dim});
  return VLM_OK;
}

static xla_value lower_concat(xla_emitter *e, const vlm_node *node) {
  xla_value parts[VLM_GRAPH_MAX_INPUTS];
  for (int i = 0; i < node->input_count; i++) parts[i] = xla_input_f32(e, node, i);
  if (node->input_count == 1) return parts[0];
  return xla_concatenate(e, node->input_count, parts, node->params.concat.axis);
}

static xla_value lower_slice(xla_emitter *e, const vlm_node *node) {
  xla_value x = xla_input_f32(e, node, 0);
  int64_t start[XLA_MAX_RANK] = {0}, limit[XLA_MAX_RANK];
  memcpy(limit, x.shape, sizeof(limit));
  start[node->params.slice.axis] = node->params.slice.start;
  limit[node->params.slice.axis] = node->params.slice.start + node->shape[node->params.slice.axis];
  return xla_slice(e, x, start, limit);
}

/* mask [rows] != 0 ? a : b, the mask broadcast along the row. */
static xla_value lower_row_select(xla_emitter *e, const vlm_node *node) {
  xla_value mask = e->nodes[node->inputs[0]];
  xla_value a = xla_input_f32(e, node, 1), b = xla_input_f32(e, node, 2);
  xla_value chosen = xla_compare(e, mask, xla_splat(e, 0, "i32", 1, mask.shape), "NE");
  return xla_select(e, xla_broadcast(e, chosen, a.rank, a.shape, (int64_t[]){0}), a, b);
}

/* x [a, b] -> [b, a]. */
static xla_value lower_transpose(xla_emitter *e, const vlm_node *node) {
  xla_value x = xla_input_f32(e, node, 0);
  xla_value like = xla_make_value("f32", 2, (int64_t[]){x.shape[1], x.shape[0]});
  return XLA_OP(e, "transpose", "permutation = array<i64: 1, 0>", &like, x);
}

/* [images * H * W, C] as [images, H, W, C], the remainder rows and columns
 * sliced off, split into [images, H/k, k, W/k, k, C], the two k axes moved
 * last and summed, then divided by k^2 (the cpu backend sums the window in
 * row-major order; the reduction order here is the compiler's). */
static xla_value lower_average_pool(xla_emitter *e, const vlm_node *node) {
  xla_value x = xla_input_f32(e, node, 0);
  int64_t images = node->params.pool.images, height = node->params.pool.height;
  int64_t width = node->params.pool.width, k = node->params.pool.kernel, channels = x.shape[1];
  int64_t out_height = height / k, out_width = width / k;
  xla_value grid = xla_reshape(e, x, 4, (int64_t[]){images, height, width, channels});
  if (out_height * k != height || out_width * k != width)
    grid = xla_slice(e, grid, (int64_t[]){0, 0, 0, 0}, (int64_t[]){images, out_height * k, out_width * k, channels});
  xla_value windows = xla_reshape(e, grid, 6, (int64_t[]){images, out_height, k, out_width, k, channels});
  xla_value like = xla_make_value("f32", 6, (int64_t[]){images, out_height, out_width, channels, k, k});
  windows = XLA_OP(e, "transpose", "permutation = array<i64: 0, 1, 3, 5, 2, 4>", &like, windows);
  windows = xla_reshape(e, windows, 3, (int64_t[]){images * out_height * out_width, channels, k * k});
  xla_value sum = xla_reduce_last(e, windows, "add", 0.0);
  return XLA_OP(e, "divide", NULL, &sum, sum, xla_splat_like(e, (double)(k * k), sum));
}

/* x * scales, the scales [rows] broadcast along each row. */
static xla_value lower_scale_rows(xla_emitter *e, const vlm_node *node) {
  xla_value x = xla_input_f32(e, node, 0), scales = xla_input_f32(e, node, 1);
  return XLA_OP(e, "multiply", NULL, &x, x, xla_broadcast(e, scales, x.rank, x.shape, (int64_t[]){0}));
}

/* Whether every output channel of the conv reads one input channel:
 * weights [O, 1, kh, kw] over a single input channel, or depthwise with one
 * output per channel (the speech encoder's subsampling and conv module). */
static bool per_channel_conv(const vlm_node *node, xla_value x, xla_value w) {
  int64_t channels = x.shape[3], groups = node->params.conv.groups;
  return w.shape[1] == 1 && ((groups == 1 && channels == 1) || (groups == channels && w.shape[0] == channels));
}

/* x[:, ky::sy, kx::sx, :] of the padded input, out_h x out_w positions. */
static xla_value tap_window(xla_emitter *e, xla_value x, int64_t ky, int64_t kx, const int64_t *stride,
                            int64_t out_h, int64_t out_w) {
  char attributes[320];
  snprintf(attributes, sizeof(attributes),
           "start_indices = array<i64: 0, %lld, %lld, 0>, limit_indices = array<i64: %lld, %lld, %lld, %lld>, "
           "strides = array<i64: 1, %lld, %lld, 1>",
           (long long)ky, (long long)kx, (long long)x.shape[0], (long long)(ky + stride[0] * (out_h - 1) + 1),
           (long long)(kx + stride[1] * (out_w - 1) + 1), (long long)x.shape[3], (long long)stride[0],
           (long long)stride[1]);
  xla_value like = xla_make_value("f32", 4, (int64_t[]){x.shape[0], out_h, out_w, x.shape[3]});
  return XLA_OP(e, "slice", attributes, &like, x);
}

/* A per-channel conv as the sum over its kernel taps, in (ky, kx) order as
 * the cpu kernel sums them, of the zero-padded input's strided window times
 * the tap's weight per channel: elementwise work IREE fuses into one
 * dispatch. IREE 3.13's convolution ran these at ~1.5 GFLOP/s (the speech
 * encoder's first subsampling conv, 1 -> 1024 channels: 268 ms of a 4.5 s
 * call, load 13). */
static xla_value lower_tap_conv(xla_emitter *e, const vlm_node *node, xla_value x, xla_value w) {
  const int64_t *stride = node->params.conv.stride, *padding = node->params.conv.padding;
  int64_t out = w.shape[0], kh = w.shape[2], kw = w.shape[3], out_h = node->shape[1], out_w = node->shape[2];
  if (padding[0] || padding[1] || padding[2] || padding[3]) {
    char attributes[256];
    snprintf(attributes, sizeof(attributes),
             "edge_padding_low = array<i64: 0, %lld, %lld, 0>, edge_padding_high = array<i64: 0, %lld, %lld, 0>, "
             "interior_padding = array<i64: 0, 0, 0, 0>",
             (long long)padding[0], (long long)padding[2], (long long)padding[1], (long long)padding[3]);
    xla_value like = xla_make_value("f32", 4, (int64_t[]){x.shape[0], x.shape[1] + padding[0] + padding[1],
                                                          x.shape[2] + padding[2] + padding[3], x.shape[3]});
    x = XLA_OP(e, "pad", attributes, &like, x, xla_splat(e, 0.0, "f32", 0, NULL));
  }
  /* [O, 1, kh, kw] -> [kh * kw, O]: tap t's weights are row t. */
  xla_value taps = xla_reshape(e, w, 2, (int64_t[]){out, kh * kw});
  xla_value like = xla_make_value("f32", 2, (int64_t[]){kh * kw, out});
  taps = XLA_OP(e, "transpose", "permutation = array<i64: 1, 0>", &like, taps);
  int64_t last = 3;
  if (x.shape[3] == 1 && kh * kw <= 64) {
    /* One input channel: the windows side by side, [positions, kh * kw],
     * times the taps, one matmul (a broadcast window per tap would be
     * materialized). */
    xla_value windows[64];
    for (int64_t ky = 0; ky < kh; ky++)
      for (int64_t kx = 0; kx < kw; kx++) windows[ky * kw + kx] = tap_window(e, x, ky, kx, stride, out_h, out_w);
    xla_value patches = xla_concatenate(e, (int)(kh * kw), windows, 3);
    int64_t positions = x.shape[0] * out_h * out_w;
    patches = xla_reshape(e, patches, 2, (int64_t[]){positions, kh * kw});
    xla_value product = xla_dot_general(e, patches, taps, 0, NULL, NULL, 1, 0, 2, (int64_t[]){positions, out});
    return xla_reshape(e, product, 4, node->shape);
  }
  xla_value sum = {0};
  for (int64_t ky = 0; ky < kh; ky++)
    for (int64_t kx = 0; kx < kw; kx++) {
      int64_t t = ky * kw + kx;
      xla_value window = tap_window(e, x, ky, kx, stride, out_h, out_w);
      if (window.shape[3] != out) window = xla_broadcast(e, window, 4, node->shape, (int64_t[]){0, 1, 2, 3});
      xla_value row = xla_reshape(e, xla_slice(e, taps, (int64_t[]){t, 0}, (int64_t[]){t + 1, out}), 1,
                                  (int64_t[]){out});
      xla_value product = XLA_OP(e, "multiply", NULL, &window, window, xla_broadcast(e, row, 4, node->shape, &last));
      sum = t == 0 ? product : XLA_OP(e, "add", NULL, &sum, sum, product);
    }
  return sum;
}

/* stablehlo.convolution over [b, 0, 1, f] input with torch's [o, i, 0, 1]
 * kernel, the groups as feature_group_count, then + bias per output
 * channel (the cpu backend sums (ci, ky, kx) in order; the reduction order
 * here is the compiler's); per-channel convs as tap sums (above). */
static xla_value lower_conv2d(xla_emitter *e, const vlm_node *node) {
  xla_value x = xla_input_f32(e, node, 0), w = xla_input_f32(e, node, 1);
  const int64_t *stride = node->params.conv.stride, *padding = node->params.conv.padding;
  if (per_channel_conv(node, x, w)) {
    xla_value result = lower_tap_conv(e, node, x, w);
    if (node->input_count < 3) return result;
    int64_t last = 3;
    return XLA_OP(e, "add", NULL, &result, result,
                  xla_broadcast(e, xla_input_f32(e, node, 2), 4, node->shape, &last));
  }
  char attributes[512];
  snprintf(attributes, sizeof(attributes),
           "batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[o, i, 0, 1]->[b, 0, 1, f]>, "
           "feature_group_count = %lld : i64, lhs_dilation = array<i64: 1, 1>, "
           "padding = dense<[[%lld, %lld], [%lld, %lld]]> : tensor<2x2xi64>, rhs_dilation = array<i64: 1, 1>, "
           "window_strides = array<i64: %lld, %lld>",
           (long long)node->params.conv.groups, (long long)padding[0], (long long)padding[1], (long long)padding[2],
           (long long)padding[3], (long long)stride[0], (long long)stride[1]);
  xla_value like = xla_make_value("f32", 4, node->shape);
  xla_value result = XLA_OP(e, "convolution", attributes, &like, x, w);
  if (node->input_count < 3) return result;
  int64_t last = 3;
  return XLA_OP(e, "add", NULL, &result, result, xla_broadcast(e, xla_input_f32(e, node, 2), 4, node->shape, &last));
}

static xla_value lower_permute(xla_emitter *e, const vlm_node *node) {
  xla_value x = xla_input_f32(e, node, 0);
  char attributes[128];
  int written = snprintf(attributes, sizeof(attributes), "permutation = array<i64: ");
  for (int i = 0; i < node->rank; i++)
    written += snprintf(attributes + written, sizeof(attributes) - (size_t)written, "%s%d", i ? ", " : "",
                        node->params.permute.axes[i]);
  snprintf(attributes + written, sizeof(attributes) - (size_t)written, ">");
  xla_value like = xla_make_value("f32", node->rank, node->shape);
  return XLA_OP(e, "transpose", attributes, &like, x);
}

/* q, k, v [rows, heads, dim] as [blocks, block, heads, dim]: scores
 * [blocks, heads, block, block] by one dot_general batched over (blocks,
 * heads), * scale, + the bias broadcast over the blocks, softmax, weighted
 * sums [blocks, heads, block, dim], back to [rows, heads * dim]. */
static xla_value lower_biased_attention(xla_emitter *e, const vlm_node *node) {
  xla_value q = xla_input_f32(e, node, 0), k = xla_input_f32(e, node, 1), v = xla_input_f32(e, node, 2);
  xla_value bias = xla_input_f32(e, node, 3);
  int64_t rows = q.shape[0], heads = q.shape[1], dim = q.shape[2], block = bias.shape[1], blocks = rows / block;
  int64_t split[4] = {blocks, block, heads, dim};
  q = xla_reshape(e, q, 4, split);
  k = xla_reshape(e, k, 4, split);
  v = xla_reshape(e, v, 4, split);
  int64_t score_shape[4] = {blocks, heads, block, block};
  xla_value scores = xla_dot_general(e, q, k, 2, (int64_t[]){0, 2}, (int64_t[]){0, 2}, 3, 3, 4, score_shape);
  scores = XLA_OP(e, "multiply", NULL, &scores, scores,
                  xla_splat_like(e, (float)node->params.biased_attention.scale, scores));
  scores = XLA_OP(e, "add", NULL, &scores, scores, xla_broadcast(e, bias, 4, score_shape, (int64_t[]){1, 2, 3}));
  xla_value probabilities = xla_softmax_last(e, scores);
  xla_value attended = xla_dot_general(e, probabilities, v, 2, (int64_t[]){0, 1}, (int64_t[]){0, 2}, 3, 1, 4,
                                       (int64_t[]){blocks, heads, block, dim});
  xla_value like = xla_make_value("f32", 4, split);
  attended = XLA_OP(e, "transpose", "permutation = array<i64: 0, 2, 1, 3>", &like, attended);
  return xla_reshape(e, attended, 2, (int64_t[]){rows, heads * dim});
}

vlm_status xla_lower_encoder_node(xla_emitter *e, const vlm_node *node, xla_value *out) {
  switch (node->op) {
    case VLM_OP_LAYER_NORM: *out = lower_layer_norm(e, node); return VLM_OK;
    case VLM_OP_SEGMENT_ATTENTION: return lower_segment_attention(e, node, out);
    case VLM_OP_CONCAT: *out = lower_concat(e, node); return VLM_OK;
    case VLM_OP_SLICE: *out = lower_slice(e, node); return VLM_OK;
    case VLM_OP_ROW_SELECT: *out = lower_row_select(e, node); return VLM_OK;
    case VLM_OP_TRANSPOSE: *out = lower_transpose(e, node); return VLM_OK;
    case VLM_OP_AVERAGE_POOL: *out = lower_average_pool(e, node); return VLM_OK;
    case VLM_OP_SCALE_ROWS: *out = lower_scale_rows(e, node); return VLM_OK;
    case VLM_OP_CONV2D: *out = lower_conv2d(e, node); return VLM_OK;
    case VLM_OP_PERMUTE: *out = lower_permute(e, node); return VLM_OK;
    case VLM_OP_BIASED_ATTENTION: *out = lower_biased_attention(e, node); return VLM_OK;
    default:
      return VLM_ERROR(UNIMPLEMENTED, "xla emitter: graph node '%s': op '%s' is not an encoder op", node->name,
                       vlm_op_name(node->op));
  }
}
