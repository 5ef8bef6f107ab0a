/* Lowering of the encoder ops the vision towers use (graph.h: "Encoders"):
 * whole sequences per call, no KV cache. Numerics follow the cpu backend
 * (src/backends/cpu_graph.c, cpu_layer_norm, cpu_attention's non-causal
 * path) in f32; where the cpu backend accumulates in double (layer norm's
 * mean and variance) the module stays f32, which the execution tests bound. */
#include <string.h>

#include "backends/xla/stablehlo_internal.h"
#include "core/status.h"

static int64_t element_count(const xla_value *value) {
  int64_t count = 1;
  for (int i = 0; i < value->rank; i++) count *= value->shape[i];
  return count;
}

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

/* q, k, v [images * L, heads, dim]: every row attends to the L rows of its
 * own sequence, unmasked. The sequences become a batch dimension next to
 * the heads, so one dot_general per product covers every image. */
static vlm_status lower_full_attention(xla_emitter *e, const vlm_node *node, xla_value *out) {
  xla_value q = xla_input_f32(e, node, 0), k = xla_input_f32(e, node, 1), v = xla_input_f32(e, node, 2);
  int64_t rows = q.shape[0], heads = q.shape[1], dim = q.shape[2];
  int64_t length = node->params.full_attention.sequence_length;
  if (length <= 0 || rows % length != 0)
    return VLM_ERROR(INTERNAL, "graph node '%s': %lld rows are not whole sequences of %lld", node->name,
                     (long long)rows, (long long)length);
  int64_t sequences = rows / length;
  int64_t split[4] = {sequences, length, heads, dim};
  q = xla_reshape(e, q, 4, split);
  k = xla_reshape(e, k, 4, split);
  v = xla_reshape(e, v, 4, split);
  /* [sequence, head, query, key] */
  int64_t score_shape[4] = {sequences, heads, length, length};
  xla_value scores = xla_dot_general(e, q, k, 2, (int64_t[]){0, 2}, (int64_t[]){0, 2}, 3, 3, 4, score_shape);
  scores = XLA_OP(e, "multiply", NULL, &scores, scores,
                  xla_splat_like(e, (float)node->params.full_attention.scale, scores));
  xla_value probabilities = xla_softmax_last(e, scores);
  /* [sequence, head, query, dim] */
  xla_value attended = xla_dot_general(e, probabilities, v, 2, (int64_t[]){0, 1}, (int64_t[]){0, 2}, 3, 1, 4,
                                       (int64_t[]){sequences, heads, length, dim});
  xla_value like = xla_make_value("f32", 4, split);
  attended = XLA_OP(e, "transpose", "permutation = array<i64: 0, 2, 1, 3>", &like, attended);
  *out = xla_reshape(e, attended, 2, (int64_t[]){rows, heads * dim});
  return VLM_OK;
}

/* x [groups * group_rows, width], row [width] -> each group led by row. */
static xla_value lower_prepend_row(xla_emitter *e, const vlm_node *node) {
  xla_value x = xla_input_f32(e, node, 0), row = xla_input_f32(e, node, 1);
  int64_t group = node->params.prepend.group_rows, width = node->shape[1];
  int64_t groups = node->shape[0] / (group + 1);
  x = xla_reshape(e, x, 3, (int64_t[]){groups, group, width});
  xla_value leading = xla_broadcast(e, row, 3, (int64_t[]){groups, 1, width}, (int64_t[]){2});
  xla_value joined = xla_concatenate(e, 2, (xla_value[]){leading, x}, 1);
  return xla_reshape(e, joined, node->rank, node->shape);
}

/* a + b with b repeating down a: flattened, a is [count / period, period]
 * and b [period] broadcasts over the first dimension (cpu: i % period). */
static xla_value lower_add_tiled(xla_emitter *e, const vlm_node *node) {
  xla_value a = xla_input_f32(e, node, 0), b = xla_input_f32(e, node, 1);
  int64_t count = element_count(&a), period = element_count(&b);
  int64_t tiled[2] = {count / period, period};
  xla_value a_tiles = xla_reshape(e, a, 2, tiled);
  xla_value b_flat = xla_reshape(e, b, 1, &period);
  xla_value sum = XLA_OP(e, "add", NULL, &a_tiles, a_tiles, xla_broadcast(e, b_flat, 2, tiled, (int64_t[]){1}));
  return xla_reshape(e, sum, node->rank, node->shape);
}

static xla_value lower_concat_columns(xla_emitter *e, const vlm_node *node) {
  xla_value parts[VLM_GRAPH_MAX_INPUTS];
  for (int i = 0; i < node->input_count; i++) parts[i] = xla_input_f32(e, node, i);
  if (node->input_count == 1) return parts[0];
  return xla_concatenate(e, node->input_count, parts, node->rank - 1);
}

vlm_status xla_lower_encoder_node(xla_emitter *e, const vlm_node *node, xla_value *out) {
  switch (node->op) {
    case VLM_OP_LAYER_NORM: *out = lower_layer_norm(e, node); return VLM_OK;
    case VLM_OP_FULL_ATTENTION: return lower_full_attention(e, node, out);
    case VLM_OP_PREPEND_ROW: *out = lower_prepend_row(e, node); return VLM_OK;
    case VLM_OP_ADD_TILED: *out = lower_add_tiled(e, node); return VLM_OK;
    case VLM_OP_CONCAT_COLUMNS: *out = lower_concat_columns(e, node); return VLM_OK;
    default:
      return VLM_ERROR(UNIMPLEMENTED, "xla emitter: graph node '%s': op '%s' is not an encoder op", node->name,
                       vlm_op_name(node->op));
  }
}
