/* Lowering of the decoder graph's ops to StableHLO, one node at a time, in
 * graph order. Numerics follow the cpu backend (src/backends/cpu_graph.c):
 * activations f32, weights converted from their checkpoint dtype inside the
 * module, RoPE cos/sin from the same inverse frequencies, attention over the
 * slot's cached keys with the causal mask or the caller's additive bias. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_kernels.h"
#include "backends/xla/stablehlo_internal.h"
#include "core/status.h"

static const vlm_node *node_at(const xla_emitter *e, int32_t index) { return &e->graph->nodes[index]; }

static xla_value node_shape_value(const vlm_node *node, const char *element) {
  return xla_make_value(element, node->rank, node->shape);
}

/* ---------------------------------------------------------------------- */
/* What the emitter supports                                               */
/* ---------------------------------------------------------------------- */

static bool rope_supported(const vlm_rope_config *rope) {
  /* Frequencies fixed at compile time: "dynamic" depends on the sequence
   * length, which a compiled module does not fix. "longrope" has two sets
   * of factors, both compiled: text functions choose per row from the
   * request's length (request state, stablehlo_internal.h). */
  return rope->type != VLM_ROPE_DYNAMIC;
}

vlm_status xla_check_node(const vlm_graph *graph, const vlm_node *node) {
  switch (node->op) {
    case VLM_OP_INPUT:
    case VLM_OP_WEIGHT:
    case VLM_OP_GATHER:
    case VLM_OP_SCALE:
    case VLM_OP_ADD:
    case VLM_OP_MUL:
    case VLM_OP_RMS_NORM:
    case VLM_OP_LINEAR:
    case VLM_OP_RESHAPE:
    case VLM_OP_SELECT_ROWS:
    case VLM_OP_SOFTCAP:
    case VLM_OP_ACTIVATION:
    case VLM_OP_GATED:
    case VLM_OP_LAYER_NORM:
    case VLM_OP_SEGMENT_ATTENTION:
    case VLM_OP_CONCAT:
    case VLM_OP_SLICE:
    case VLM_OP_ROW_SELECT:
    case VLM_OP_TRANSPOSE:
    case VLM_OP_AVERAGE_POOL:
    case VLM_OP_SCALE_ROWS:
    case VLM_OP_CONV2D:
    case VLM_OP_PERMUTE:
    case VLM_OP_BIASED_ATTENTION:
    case VLM_OP_UNARY:
    case VLM_OP_ROW_MOMENT:
    case VLM_OP_MATMUL:
    case VLM_OP_CROSS_ATTENTION:
      return VLM_OK;
    case VLM_OP_MOE: return xla_check_moe(node);
    case VLM_OP_ROPE: {
      int32_t index = node->params.rope.rope_index;
      if (index < 0 || index >= graph->rope_count || !graph->ropes[index])
        return VLM_ERROR(INTERNAL, "graph node '%s' names RoPE set #%d, which the graph lacks", node->name,
                         index);
      if (!rope_supported(graph->ropes[index]))
        return VLM_ERROR(UNIMPLEMENTED,
                         "xla emitter: graph node '%s': the dynamic RoPE type is not supported yet", node->name);
      return VLM_OK;
    }
    case VLM_OP_ATTENTION:
      if (node->params.attention.sliding_window < 0 || node->params.attention.softcap < 0)
        return VLM_ERROR(INVALID_ARGUMENT, "graph node '%s': negative sliding window or soft cap", node->name);
      return VLM_OK;
    default:
      return VLM_ERROR(UNIMPLEMENTED, "xla emitter: graph node '%s': op '%s' is not supported yet",
                       node->name, vlm_op_name(node->op));
  }
}

/* ---------------------------------------------------------------------- */
/* Leaves                                                                  */
/* ---------------------------------------------------------------------- */

static const char *element_of(vlm_dtype dtype) {
  switch (dtype) {
    case VLM_DTYPE_F32: return "f32";
    case VLM_DTYPE_BF16: return "bf16";
    case VLM_DTYPE_F16: return "f16";
    default: return NULL;
  }
}

/* "@"-less symbol of a parameter global: the tensor's canonical name,
 * quoted (names have dots). */
static void weight_symbol(const char *name, char *out, size_t size) { snprintf(out, size, "\"%s\"", name); }

/* Declares the parameter global of weight `node` (once per module). In a
 * text decoder (e->nodes_transposed set) every weight is a buffer the
 * runtime lays out (XLA_LAYOUT_SCOPE), `transposed` or as stored. */
static vlm_status declare_weight(xla_emitter *e, const vlm_node *node, const char *element, bool transposed) {
  xla_weight_list *list = e->declared;
  for (int i = 0; i < list->count; i++)
    if (strcmp(list->items[i].name, node->name) == 0 && list->items[i].transposed == transposed) return VLM_OK;
  if (list->count == XLA_MAX_WEIGHTS)
    return VLM_ERROR(UNIMPLEMENTED, "xla emitter: more than %d weights", XLA_MAX_WEIGHTS);
  xla_weight *weight = &list->items[list->count++];
  snprintf(weight->name, sizeof(weight->name), "%s", node->name);
  weight->rank = node->rank;
  memcpy(weight->shape, node->shape, sizeof(int64_t) * (size_t)node->rank);
  if (transposed) {
    weight->shape[0] = node->shape[1];
    weight->shape[1] = node->shape[0];
  }
  snprintf(weight->element, sizeof(weight->element), "%s", element);
  weight->transposed = transposed;
  weight->laid_out = e->nodes_transposed != NULL;
  return VLM_OK;
}

/* Whether node `index` is the weight named `name` (a graph may hold one
 * tensor as several nodes: a tied LM head is the embedding table again). */
static bool is_weight_named(const xla_emitter *e, int32_t index, const char *name) {
  const vlm_node *node = node_at(e, index);
  return node->op == VLM_OP_WEIGHT && strcmp(node->name, name) == 0;
}

/* Text decoder functions read a linear's weight transposed ([in, out]:
 * IREE streams a one-row x . W^T over [out, in] at half the speed). Graph
 * functions (media encoders, many rows per call) read it as stored: a
 * dot_general contracting W's dim 1 packs [out, in] for IREE's matmul
 * tiles without a transpose (the Phi-4 speech encoder's module: 18-24%
 * less time, 20-30% less CPU time on 128- and 1024-row matmuls;
 * docs/XLA_BACKEND.md). */
static bool used_by_linear(const xla_emitter *e, int32_t index) {
  const vlm_node *weight = node_at(e, index);
  if (!e->nodes_transposed || weight->rank != 2 || e->kind == XLA_GRAPH_FUNCTION) return false;
  for (int32_t i = 0; i < e->graph->count; i++) {
    const vlm_node *node = node_at(e, i);
    if (node->op == VLM_OP_LINEAR && node->input_count > 1 && is_weight_named(e, node->inputs[1], weight->name))
      return true;
  }
  return false;
}

/* Whether some use of the tensor of weight node `index` needs its stored
 * layout: not a linear's weight, nor the gather of a table a linear also
 * reads (a tied embedding table is gathered from the transposed copy, so
 * it is held once). */
static bool needs_stored_layout(const xla_emitter *e, int32_t index) {
  if (!used_by_linear(e, index)) return true;
  const char *name = node_at(e, index)->name;
  for (int32_t i = 0; i < e->graph->count; i++) {
    const vlm_node *node = node_at(e, i);
    for (int k = 0; k < node->input_count; k++)
      if (is_weight_named(e, node->inputs[k], name) && !(node->op == VLM_OP_LINEAR && k == 1) &&
          !(node->op == VLM_OP_GATHER && k == 0))
        return true;
  }
  return false;
}

/* A weight is a parameter global: loaded in its checkpoint dtype where the
 * graph names it, converted to f32 where an op first needs it as f32. */
static vlm_status lower_weight(xla_emitter *e, int32_t index) {
  const vlm_node *node = node_at(e, index);
  if (node->rank > XLA_MAX_RANK) return VLM_ERROR(UNIMPLEMENTED, "weight '%s' has rank %d", node->name, node->rank);
  vlm_tensor view;
  VLM_RETURN_IF_ERROR(vlm_checkpoint_get(e->weights, node->name, VLM_DTYPE_INVALID, node->rank,
                                         node->shape, &view));
  const char *element = element_of(view.dtype);
  if (!element)
    return VLM_ERROR(UNIMPLEMENTED, "tensor '%s' has dtype %s; the xla backend reads f32, bf16 and f16",
                     node->name, vlm_dtype_name(view.dtype));
  if (!needs_stored_layout(e, index)) {
    e->nodes[index] = node_shape_value(node, element); /* no value: its uses read "<name>#t" */
    return VLM_OK;
  }
  VLM_RETURN_IF_ERROR(declare_weight(e, node, element, false));
  char symbol[VLM_GRAPH_NAME_LENGTH + 4];
  weight_symbol(node->name, symbol, sizeof(symbol));
  xla_value like = node_shape_value(node, element);
  e->nodes[index] = xla_global_load(e, symbol, &like);
  return VLM_OK;
}

static xla_value weight_f32(xla_emitter *e, int32_t index) {
  if (!e->nodes_f32[index].name[0]) e->nodes_f32[index] = xla_convert(e, e->nodes[index], "f32");
  return e->nodes_f32[index];
}

/* The f32 value of an input node (computed nodes are f32 already). */
xla_value xla_input_f32(xla_emitter *e, const vlm_node *node, int which) {
  return xla_node_f32(e, node->inputs[which]);
}

xla_value xla_node_f32(xla_emitter *e, int32_t index) {
  return node_at(e, index)->op == VLM_OP_WEIGHT ? weight_f32(e, index) : e->nodes[index];
}

static vlm_status lower_input(xla_emitter *e, int32_t index) {
  const vlm_node *node = node_at(e, index);
  if (strcmp(node->name, "tokens") == 0 && e->tokens.name[0]) {
    e->nodes[index] = e->tokens;
    return VLM_OK;
  }
  if (strcmp(node->name, "features") == 0 && e->embeddings.name[0]) {
    e->nodes[index] = e->embeddings;
    return VLM_OK;
  }
  if (strcmp(node->name, "feature_mask") == 0 && e->feature_mask.name[0]) {
    e->nodes[index] = e->feature_mask;
    return VLM_OK;
  }
  if (strcmp(node->name, "layer_features") == 0 && e->layer_features.name[0]) {
    e->nodes[index] = e->layer_features;
    return VLM_OK;
  }
  for (int i = 0; i < e->input_count; i++)
    if (strcmp(node->name, e->input_names[i]) == 0) {
      e->nodes[index] = e->input_values[i];
      return VLM_OK;
    }
  return VLM_ERROR(UNIMPLEMENTED, "xla emitter: graph input '%s' has no function argument", node->name);
}

/* ---------------------------------------------------------------------- */
/* Elementwise and shape ops                                               */
/* ---------------------------------------------------------------------- */

xla_value xla_splat_like(xla_emitter *e, double number, xla_value like) {
  return xla_splat(e, number, like.element, like.rank, like.shape);
}

/* x / (1 + exp(-x)), the cpu backend's (PyTorch's) form. */
static xla_value silu(xla_emitter *e, xla_value x) {
  xla_value negated = XLA_OP(e, "negate", NULL, &x, x);
  xla_value exponential = XLA_OP(e, "exponential", NULL, &x, negated);
  xla_value denominator = XLA_OP(e, "add", NULL, &x, exponential, xla_splat_like(e, 1.0, x));
  return XLA_OP(e, "divide", NULL, &x, x, denominator);
}

xla_value xla_activate(xla_emitter *e, vlm_activation activation, xla_value x) {
  switch (activation) {
    case VLM_ACTIVATION_SILU: return silu(e, x);
    case VLM_ACTIVATION_RELU: return XLA_OP(e, "maximum", NULL, &x, x, xla_splat_like(e, 0.0, x));
    case VLM_ACTIVATION_QUICK_GELU: {
      xla_value scaled = XLA_OP(e, "multiply", NULL, &x, x, xla_splat_like(e, 1.702, x));
      return XLA_OP(e, "multiply", NULL, &x, x, XLA_OP(e, "logistic", NULL, &x, scaled));
    }
    case VLM_ACTIVATION_GELU: {
      /* 0.5 x (1 + erf(x / sqrt 2)) as the cpu backend computes it with
       * erff. StableHLO has no erf; CHLO's (which iree-compile accepts and
       * expands to a rational approximation) stays within float32
       * tolerance of erff. */
      xla_value scaled = XLA_OP(e, "multiply", NULL, &x, x, xla_splat_like(e, (float)M_SQRT1_2, x));
      xla_value one_plus = XLA_OP(e, "add", NULL, &x, xla_splat_like(e, 1.0, x), XLA_OP(e, "chlo.erf", NULL, &x, scaled));
      xla_value half_x = XLA_OP(e, "multiply", NULL, &x, x, xla_splat_like(e, 0.5, x));
      return XLA_OP(e, "multiply", NULL, &x, half_x, one_plus);
    }
    case VLM_ACTIVATION_GELU_TANH:
    default: { /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
      xla_value cube = XLA_OP(e, "multiply", NULL, &x, x, XLA_OP(e, "multiply", NULL, &x, x, x));
      xla_value inner = XLA_OP(e, "add", NULL, &x, x,
                               XLA_OP(e, "multiply", NULL, &x, cube, xla_splat_like(e, 0.044715, x)));
      inner = XLA_OP(e, "multiply", NULL, &x, inner, xla_splat_like(e, sqrt(2.0 / M_PI), x));
      xla_value one_plus = XLA_OP(e, "add", NULL, &x, xla_splat_like(e, 1.0, x), XLA_OP(e, "tanh", NULL, &x, inner));
      xla_value half_x = XLA_OP(e, "multiply", NULL, &x, x, xla_splat_like(e, 0.5, x));
      return XLA_OP(e, "multiply", NULL, &x, half_x, one_plus);
    }
  }
}

/* Operand b of add/mul broadcast over a's leading dimensions when it has
 * the shape of a's trailing ones (graph.h). */
static xla_value suffix_broadcast(xla_emitter *e, const vlm_node *node, xla_value a) {
  xla_value b = xla_input_f32(e, node, 1);
  if (b.rank == a.rank) return b;
  int64_t dims[XLA_MAX_RANK];
  for (int i = 0; i < b.rank; i++) dims[i] = a.rank - b.rank + i;
  return xla_broadcast(e, b, a.rank, a.shape, dims);
}

static void lower_elementwise(xla_emitter *e, const vlm_node *node, xla_value *out) {
  xla_value a = xla_input_f32(e, node, 0);
  switch (node->op) {
    case VLM_OP_ADD: *out = XLA_OP(e, "add", NULL, &a, a, suffix_broadcast(e, node, a)); break;
    case VLM_OP_MUL: *out = XLA_OP(e, "multiply", NULL, &a, a, suffix_broadcast(e, node, a)); break;
    case VLM_OP_SCALE:
      *out = XLA_OP(e, "multiply", NULL, &a, a, xla_splat_like(e, (float)node->params.scale.scalar, a));
      break;
    case VLM_OP_ACTIVATION: *out = xla_activate(e, node->params.activation.activation, a); break;
    case VLM_OP_GATED:
      *out = XLA_OP(e, "multiply", NULL, &a, xla_activate(e, node->params.activation.activation, a),
                    xla_input_f32(e, node, 1));
      break;
    default: { /* softcap: cap * tanh(x / cap) */
      xla_value cap = xla_splat_like(e, (float)node->params.softcap.cap, a);
      xla_value tanh = XLA_OP(e, "tanh", NULL, &a, XLA_OP(e, "divide", NULL, &a, a, cap));
      *out = XLA_OP(e, "multiply", NULL, &a, cap, tanh);
    }
  }
}

/* tanh; softplus as torch (x past 20, else log1p(exp(x))); clamp as
 * maximum then minimum, leaving out an infinite side. */
static xla_value lower_unary(xla_emitter *e, const vlm_node *node) {
  xla_value x = xla_input_f32(e, node, 0);
  switch (node->params.unary.kind) {
    case VLM_UNARY_TANH: return XLA_OP(e, "tanh", NULL, &x, x);
    case VLM_UNARY_SOFTPLUS: {
      xla_value soft = XLA_OP(e, "log_plus_one", NULL, &x, XLA_OP(e, "exponential", NULL, &x, x));
      xla_value above = xla_compare(e, x, xla_splat_like(e, 20.0, x), "GT");
      return xla_select(e, above, x, soft);
    }
    default: {
      double low = node->params.unary.low, high = node->params.unary.high;
      if (isfinite(low)) x = XLA_OP(e, "maximum", NULL, &x, x, xla_splat_like(e, (float)low, x));
      if (isfinite(high)) x = XLA_OP(e, "minimum", NULL, &x, x, xla_splat_like(e, (float)high, x));
      return x;
    }
  }
}

/* A row's mean (or std with the correction), broadcast back over it. */
static xla_value lower_row_moment(xla_emitter *e, const vlm_node *node) {
  xla_value x = xla_input_f32(e, node, 0);
  int64_t width = x.shape[x.rank - 1], dims[XLA_MAX_RANK];
  for (int i = 0; i < x.rank; i++) dims[i] = i;
  xla_value sum = xla_reduce_last(e, x, "add", 0.0);
  xla_value value = XLA_OP(e, "divide", NULL, &sum, sum, xla_splat_like(e, (double)width, sum));
  if (node->params.moment.std) {
    xla_value centered = XLA_OP(e, "subtract", NULL, &x, x, xla_broadcast(e, value, x.rank, x.shape, dims));
    xla_value squares = xla_reduce_last(e, XLA_OP(e, "multiply", NULL, &x, centered, centered), "add", 0.0);
    double divisor = (double)(width - node->params.moment.correction);
    value = XLA_OP(e, "sqrt", NULL, &squares,
                   XLA_OP(e, "divide", NULL, &squares, squares, xla_splat_like(e, divisor, squares)));
  }
  return xla_broadcast(e, value, x.rank, x.shape, dims);
}

/* a [.., m, k] x b [.., k, n] as one dot_general (the batch dimension, if
 * any, batched). */
static xla_value lower_matmul(xla_emitter *e, const vlm_node *node) {
  xla_value a = xla_input_f32(e, node, 0), b = xla_input_f32(e, node, 1);
  int r = node->rank;
  const int64_t batch[1] = {0};
  return xla_dot_general(e, a, b, r == 3 ? 1 : 0, batch, batch, r - 1, r - 2, r, node->shape);
}

/* Keys (and values) repeated to every head of their group, then scores
 * [heads, rq, rk], softmax, and the weighted values back to [rq, heads * dv]. */
static xla_value lower_cross_attention(xla_emitter *e, const vlm_node *node) {
  xla_value q = xla_input_f32(e, node, 0), k = xla_input_f32(e, node, 1), v = xla_input_f32(e, node, 2);
  int64_t rq = q.shape[0], heads = q.shape[1], dk = q.shape[2];
  int64_t rk = k.shape[0], kv_heads = k.shape[1], dv = v.shape[2], group = heads / kv_heads;
  if (group > 1) {
    k = xla_reshape(e, xla_broadcast(e, k, 4, (int64_t[]){rk, kv_heads, group, dk}, (int64_t[]){0, 1, 3}), 3,
                    (int64_t[]){rk, heads, dk});
    v = xla_reshape(e, xla_broadcast(e, v, 4, (int64_t[]){rk, kv_heads, group, dv}, (int64_t[]){0, 1, 3}), 3,
                    (int64_t[]){rk, heads, dv});
  }
  int64_t score_shape[3] = {heads, rq, rk};
  xla_value scores = xla_dot_general(e, q, k, 1, (int64_t[]){1}, (int64_t[]){1}, 2, 2, 3, score_shape);
  scores = XLA_OP(e, "multiply", NULL, &scores, scores,
                  xla_splat_like(e, (float)node->params.cross_attention.scale, scores));
  xla_value probabilities = xla_softmax_last(e, scores);
  xla_value attended = xla_dot_general(e, probabilities, v, 1, (int64_t[]){0}, (int64_t[]){1}, 2, 0, 3,
                                       (int64_t[]){heads, rq, dv});
  xla_value like = xla_make_value("f32", 3, (int64_t[]){rq, heads, dv});
  attended = XLA_OP(e, "transpose", "permutation = array<i64: 1, 0, 2>", &like, attended);
  return xla_reshape(e, attended, 2, (int64_t[]){rq, heads * dv});
}

/* x * rsqrt(mean(x^2) + eps) * w (or * (1 + w)), over the last dimension. */
static xla_value lower_rms_norm(xla_emitter *e, const vlm_node *node) {
  xla_value x = xla_input_f32(e, node, 0);
  int64_t width = x.shape[x.rank - 1];
  xla_value squares = XLA_OP(e, "multiply", NULL, &x, x, x);
  xla_value sum = xla_reduce_last(e, squares, "add", 0.0);
  xla_value mean = XLA_OP(e, "divide", NULL, &sum, sum, xla_splat_like(e, (double)width, sum));
  xla_value shifted = XLA_OP(e, "add", NULL, &mean, mean, xla_splat_like(e, (float)node->params.norm.epsilon, mean));
  xla_value inverse = XLA_OP(e, "rsqrt", NULL, &shifted, shifted);
  int64_t dims[XLA_MAX_RANK];
  for (int i = 0; i < x.rank; i++) dims[i] = i;
  xla_value normalized = XLA_OP(e, "multiply", NULL, &x, x, xla_broadcast(e, inverse, x.rank, x.shape, dims));
  xla_value weight = xla_input_f32(e, node, 1);
  if (node->params.norm.weight_offset != 0.0)
    weight = XLA_OP(e, "add", NULL, &weight, weight, xla_splat_like(e, node->params.norm.weight_offset, weight));
  int64_t last = x.rank - 1;
  xla_value broadcast_weight = xla_broadcast(e, weight, x.rank, x.shape, &last);
  return XLA_OP(e, "multiply", NULL, &x, broadcast_weight, normalized);
}

/* The f32 value of weight node `index` laid out [in, out]: the global of
 * its transpose (declared once per module), converted where it is used,
 * which IREE fuses into the matmul's dispatch (a bf16 weight stays bf16 in
 * memory). */
static vlm_status weight_transposed(xla_emitter *e, int32_t index, xla_value *out) {
  if (!e->nodes_transposed[index].name[0]) {
    const vlm_node *node = node_at(e, index);
    const char *element = e->nodes[index].element;
    VLM_RETURN_IF_ERROR(declare_weight(e, node, element, true));
    char symbol[VLM_GRAPH_NAME_LENGTH + 8];
    snprintf(symbol, sizeof(symbol), "\"%s#t\"", node->name);
    xla_value like = xla_make_value(element, 2, (int64_t[]){node->shape[1], node->shape[0]});
    e->nodes_transposed[index] = xla_global_load(e, symbol, &like);
  }
  *out = e->nodes_transposed[index];
  return VLM_OK;
}

static vlm_status weight_transposed_f32(xla_emitter *e, int32_t index, xla_value *out) {
  if (!e->nodes_transposed_f32[index].name[0]) {
    xla_value stored;
    VLM_RETURN_IF_ERROR(weight_transposed(e, index, &stored));
    e->nodes_transposed_f32[index] = strcmp(stored.element, "f32") ? xla_convert(e, stored, "f32") : stored;
  }
  *out = e->nodes_transposed_f32[index];
  return VLM_OK;
}

/* x [..., in] . W [out, in]^T (+ bias [out]); with transposed weights
 * x [..., in] . W^T [in, out], the same products. */
static vlm_status lower_linear(xla_emitter *e, const vlm_node *node, xla_value *out) {
  xla_value x = xla_input_f32(e, node, 0);
  xla_value y;
  if (node_at(e, node->inputs[1])->op == VLM_OP_WEIGHT && used_by_linear(e, node->inputs[1])) {
    xla_value weight;
    VLM_RETURN_IF_ERROR(weight_transposed_f32(e, node->inputs[1], &weight));
    y = xla_dot_general(e, x, weight, 0, NULL, NULL, x.rank - 1, 0, node->rank, node->shape);
  } else {
    xla_value weight = xla_input_f32(e, node, 1);
    y = xla_dot_general(e, x, weight, 0, NULL, NULL, x.rank - 1, 1, node->rank, node->shape);
  }
  if (node->input_count > 2) {
    int64_t last = node->rank - 1;
    xla_value bias = xla_broadcast(e, xla_input_f32(e, node, 2), node->rank, node->shape, &last);
    y = XLA_OP(e, "add", NULL, &y, y, bias);
  }
  *out = y;
  return VLM_OK;
}

/* table[ids] in the table's own dtype, then f32: only gathered rows convert.
 * A table a linear also reads (a tied LM head) is gathered from its
 * transposed copy, column by column: the module holds it once. */
static vlm_status lower_gather(xla_emitter *e, const vlm_node *node, xla_value *out) {
  xla_value ids = e->nodes[node->inputs[1]];
  xla_value ids_column = xla_reshape(e, ids, 2, (int64_t[]){ids.shape[0], 1});
  if (node_at(e, node->inputs[0])->op == VLM_OP_WEIGHT && !needs_stored_layout(e, node->inputs[0])) {
    xla_value transposed;
    VLM_RETURN_IF_ERROR(weight_transposed(e, node->inputs[0], &transposed));
    char attributes[256];
    snprintf(attributes, sizeof(attributes),
             "dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [1], "
             "start_index_map = [1], index_vector_dim = 1>, indices_are_sorted = false, "
             "slice_sizes = array<i64: %lld, 1>",
             (long long)transposed.shape[0]);
    xla_value like = xla_make_value(transposed.element, 2, (int64_t[]){ids.shape[0], transposed.shape[0]});
    xla_value rows = XLA_OP(e, "gather", attributes, &like, transposed, ids_column);
    *out = xla_convert(e, rows, "f32");
    return VLM_OK;
  }
  xla_value table = e->nodes[node->inputs[0]];
  char attributes[256];
  snprintf(attributes, sizeof(attributes),
           "dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
           "start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, "
           "slice_sizes = array<i64: 1, %lld>",
           (long long)table.shape[1]);
  xla_value like = xla_make_value(table.element, 2, (int64_t[]){ids.shape[0], table.shape[1]});
  xla_value rows = XLA_OP(e, "gather", attributes, &like, table, ids_column);
  *out = xla_convert(e, rows, "f32");
  return VLM_OK;
}

/* Static rows: identity, or one slice per run of consecutive rows joined by
 * a concatenate (the decoder selects one run; dropping each image's class
 * token leaves one run per image). */
#define MAX_ROW_RUNS 64
static vlm_status lower_select_rows(xla_emitter *e, const vlm_node *node, xla_value *out) {
  xla_value x = e->nodes[node->inputs[0]];
  const int32_t *rows = node->params.select.rows;
  int64_t count = node->params.select.count;
  if (e->kind == XLA_TOKEN_PREFILL || e->kind == XLA_EMBEDDINGS_PREFILL) {
    /* The prefill graphs are built to select one row (the logits'); which
     * row is the call's: its last valid one. */
    if (count != 1 || x.rank != 2)
      return VLM_ERROR(INTERNAL, "xla emitter: prefill graph node '%s' selects %lld rows, not the last one",
                       node->name, (long long)count);
    xla_value last = XLA_OP(e, "subtract", NULL, &e->valid_rows, e->valid_rows, xla_splat(e, 1, "i32", 0, NULL));
    *out = xla_dynamic_slice(e, x, 2, (xla_value[]){last, e->zero_index}, (int64_t[]){1, x.shape[1]});
    return VLM_OK;
  }
  if (count == x.shape[0] && rows[0] == 0 && rows[count - 1] == count - 1) {
    bool identity = true;
    for (int64_t i = 1; i < count && identity; i++) identity = rows[i] == rows[i - 1] + 1;
    if (identity) {
      *out = x;
      return VLM_OK;
    }
  }
  int64_t start[XLA_MAX_RANK] = {0}, limit[XLA_MAX_RANK];
  memcpy(limit, x.shape, sizeof(limit));
  xla_value parts[MAX_ROW_RUNS];
  int runs = 0;
  for (int64_t first = 0, last; first < count; first = last + 1) {
    for (last = first; last + 1 < count && rows[last + 1] == rows[last] + 1;) last++;
    if (runs == MAX_ROW_RUNS)
      return VLM_ERROR(UNIMPLEMENTED, "xla emitter: graph node '%s' selects more than %d runs of rows",
                       node->name, MAX_ROW_RUNS);
    start[0] = rows[first];
    limit[0] = rows[last] + 1;
    parts[runs++] = xla_slice(e, x, start, limit);
  }
  *out = runs == 1 ? parts[0] : xla_concatenate(e, runs, parts, 0);
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* RoPE                                                                    */
/* ---------------------------------------------------------------------- */

/* The per-frequency angles [rows, half]: f32(position of the frequency's
 * axis) * inverse frequency, as cpu_rope_cos_sin computes them. Positions
 * are the node's own integer input [axes, rows], or the function's 1-axis
 * row positions (e->rope_positions; for an M-RoPE model every axis then
 * has that position, so each frequency reads it). */
static vlm_status rope_angles(xla_emitter *e, const vlm_node *node, const vlm_rope_config *rope,
                              xla_value table, int64_t half, xla_value *out) {
  int64_t rows = node->shape[0], shape[2] = {rows, half};
  if (node->input_count < 2 && !e->row_positions.name[0]) {
    xla_value positions = xla_broadcast(e, e->rope_positions, 2, shape, (int64_t[]){0});
    *out = XLA_OP(e, "multiply", NULL, &positions, positions, xla_broadcast(e, table, 2, shape, (int64_t[]){1}));
    return VLM_OK;
  }
  xla_value frequencies = xla_broadcast(e, table, 2, shape, (int64_t[]){1});
  /* [axes, rows]: the node's own, or the function's 3-axis row positions. */
  xla_value positions = xla_convert(e, node->input_count < 2 ? e->row_positions : e->nodes[node->inputs[1]], "f32");
  int64_t axes = positions.shape[0];
  uint8_t axis_of[512];
  VLM_RETURN_IF_ERROR(cpu_rope_frequency_axes(rope, axis_of));
  /* Start from axis 0's positions, then take axis a's where the frequency
   * belongs to it: a select per axis, exact. */
  xla_value chosen = xla_broadcast(e, xla_reshape(e, xla_slice(e, positions, (int64_t[]){0, 0}, (int64_t[]){1, rows}),
                                                  1, &rows),
                                   2, shape, (int64_t[]){0});
  for (int64_t a = 1; a < axes; a++) {
    xla_value axis_rows = xla_reshape(e, xla_slice(e, positions, (int64_t[]){a, 0}, (int64_t[]){a + 1, rows}), 1, &rows);
    xla_value broadcast = xla_broadcast(e, axis_rows, 2, shape, (int64_t[]){0});
    xla_value slots = xla_make_value("i32", 1, &half);
    snprintf(slots.name, sizeof(slots.name), "%%t%d", e->next_temp++);
    vlm_sb_appendf(e->out, "    %s = \"stablehlo.constant\"() {value = dense<[", slots.name);
    for (int64_t i = 0; i < half; i++) vlm_sb_appendf(e->out, "%s%d", i ? ", " : "", axis_of[i] == a ? 1 : 0);
    vlm_sb_appendf(e->out, "]> : tensor<%lldxi32>} : () -> tensor<%lldxi32>\n", (long long)half, (long long)half);
    xla_value mine = xla_compare(e, xla_broadcast(e, slots, 2, shape, (int64_t[]){1}),
                                 xla_splat(e, 1, "i32", 2, shape), "EQ");
    chosen = xla_select(e, mine, broadcast, chosen);
  }
  *out = XLA_OP(e, "multiply", NULL, &chosen, chosen, frequencies);
  return VLM_OK;
}

static xla_value frequency_table(xla_emitter *e, const float *frequencies, int64_t half) {
  xla_value table = xla_make_value("f32", 1, &half);
  snprintf(table.name, sizeof(table.name), "%%t%d", e->next_temp++);
  vlm_sb_appendf(e->out, "    %s = \"stablehlo.constant\"() {value = dense<[", table.name);
  for (int64_t i = 0; i < half; i++) vlm_sb_appendf(e->out, "%s%.9e", i ? ", " : "", frequencies[i]);
  vlm_sb_appendf(e->out, "]> : tensor<%lldxf32>} : () -> tensor<%lldxf32>\n", (long long)half, (long long)half);
  return table;
}

/* cos/sin [rows, rotary/2] for one RoPE set, once per function (the set's
 * rope nodes share positions: graph.h). */
static vlm_status prepare_rope(xla_emitter *e, const vlm_node *node) {
  int32_t rope_index = node->params.rope.rope_index;
  if (e->rope_cos[rope_index].name[0]) return VLM_OK;
  const vlm_rope_config *rope = e->graph->ropes[rope_index];
  int64_t half = rope->rotary_dimension / 2;
  float frequencies[512], scaling = 1.0f;
  if (half < 1 || half > 512)
    return VLM_ERROR(UNIMPLEMENTED, "xla emitter: rotary dimension %lld", (long long)rope->rotary_dimension);
  bool two_sets = rope->type == VLM_ROPE_LONGROPE;
  if (two_sets && (!e->rope_length.name[0] || node->input_count >= 2 || e->row_positions.name[0]))
    return VLM_ERROR(UNIMPLEMENTED, "xla emitter: graph node '%s': longrope needs the request's length", node->name);
  /* longrope: the short factors up to the original length, the long ones
   * past it (cpu_rope_inverse_frequencies picks them by length). */
  int64_t longest = two_sets ? rope->original_max_position_embeddings : e->options ? e->options->capacity : 0;
  VLM_RETURN_IF_ERROR(cpu_rope_inverse_frequencies(rope, e->max_position_embeddings, longest, frequencies, &scaling));
  xla_value angle;
  VLM_RETURN_IF_ERROR(rope_angles(e, node, rope, frequency_table(e, frequencies, half), half, &angle));
  if (two_sets) {
    float long_scaling = 1.0f;
    VLM_RETURN_IF_ERROR(cpu_rope_inverse_frequencies(rope, e->max_position_embeddings, longest + 1, frequencies,
                                                     &long_scaling));
    if (long_scaling != scaling) return VLM_ERROR(INTERNAL, "longrope: the two factor sets scale differently");
    xla_value long_angle;
    VLM_RETURN_IF_ERROR(rope_angles(e, node, rope, frequency_table(e, frequencies, half), half, &long_angle));
    /* rope_length [rows] i32 > the original length: the long set. */
    int64_t shape[2] = {node->shape[0], half};
    xla_value length = xla_broadcast(e, e->rope_length, 2, shape, (int64_t[]){0});
    xla_value is_long = xla_compare(e, length, xla_splat(e, (double)longest, "i32", 2, shape), "GT");
    angle = xla_select(e, is_long, long_angle, angle);
  }
  xla_value cosine = XLA_OP(e, "cosine", NULL, &angle, angle);
  xla_value sine = XLA_OP(e, "sine", NULL, &angle, angle);
  if (scaling != 1.0f) {
    cosine = XLA_OP(e, "multiply", NULL, &cosine, cosine, xla_splat_like(e, scaling, cosine));
    sine = XLA_OP(e, "multiply", NULL, &sine, sine, xla_splat_like(e, scaling, sine));
  }
  e->rope_cos[rope_index] = cosine;
  e->rope_sin[rope_index] = sine;
  return VLM_OK;
}

/* x [rows, heads, dim]: first half * cos - second half * sin, second half *
 * cos + first half * sin over the rotary dimensions; the rest passes. */
static vlm_status lower_rope(xla_emitter *e, const vlm_node *node, xla_value *out) {
  int32_t rope_index = node->params.rope.rope_index;
  VLM_RETURN_IF_ERROR(prepare_rope(e, node));
  xla_value x = xla_input_f32(e, node, 0);
  int64_t rotary = e->graph->ropes[rope_index]->rotary_dimension, half = rotary / 2;
  int64_t rows = x.shape[0], heads = x.shape[1], dim = x.shape[2];
  int64_t half_shape[3] = {rows, heads, half};
  xla_value cosine = xla_broadcast(e, e->rope_cos[rope_index], 3, half_shape, (int64_t[]){0, 2});
  xla_value sine = xla_broadcast(e, e->rope_sin[rope_index], 3, half_shape, (int64_t[]){0, 2});
  xla_value first = xla_slice(e, x, (int64_t[]){0, 0, 0}, (int64_t[]){rows, heads, half});
  xla_value second = xla_slice(e, x, (int64_t[]){0, 0, half}, (int64_t[]){rows, heads, rotary});
  xla_value parts[3];
  parts[0] = XLA_OP(e, "subtract", NULL, &first, XLA_OP(e, "multiply", NULL, &first, first, cosine),
                    XLA_OP(e, "multiply", NULL, &first, second, sine));
  parts[1] = XLA_OP(e, "add", NULL, &first, XLA_OP(e, "multiply", NULL, &first, second, cosine),
                    XLA_OP(e, "multiply", NULL, &first, first, sine));
  int count = 2;
  if (rotary < dim) parts[count++] = xla_slice(e, x, (int64_t[]){0, 0, rotary}, (int64_t[]){rows, heads, dim});
  *out = xla_concatenate(e, count, parts, 2);
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Attention over the KV cache                                             */
/* ---------------------------------------------------------------------- */

/* The cache rows attention reads, as the function loaded them (this call's
 * own rows are not in them: they are written after the last layer):
 * prefill: the slot's rows [0, capacity) as [capacity, kv_heads, dim];
 * decode: every slot's rows [0, window) as [slots, window, kv_heads, dim]. */
static xla_value cached_rows(xla_emitter *e, int32_t layer, int which, int64_t kv_heads, int64_t dim) {
  xla_value cache = xla_current_cache(e);
  if (e->kind == XLA_DECODE) {
    int64_t slots = e->options->slot_count;
    xla_value rows = xla_slice(e, cache, (int64_t[]){layer, which, 0, 0, 0, 0},
                               (int64_t[]){layer + 1, which + 1, slots, e->window, kv_heads, dim});
    return xla_reshape(e, rows, 4, (int64_t[]){slots, e->window, kv_heads, dim});
  }
  xla_value z = e->zero_index, l = xla_splat(e, layer, "i32", 0, NULL), w = xla_splat(e, which, "i32", 0, NULL);
  int64_t shape[6] = {1, 1, 1, e->options->capacity, kv_heads, dim};
  xla_value rows = xla_dynamic_slice(e, cache, 6, (xla_value[]){l, w, e->slot, z, z, z}, shape);
  return xla_reshape(e, rows, 3, shape + 3);
}

/* Parts of the combined new rows, in (layer, keys/values) order, each
 * [1, 1, slots or 1, rows, kv_heads, dim]; concatenated to [1, 2 layers,
 * ...] and reshaped to [layers, 2, ...]. */
static xla_value stacked_new_rows(xla_emitter *e, int64_t slots, int64_t rows) {
  int layers = (int)e->text->num_hidden_layers;
  xla_value *parts = calloc((size_t)(2 * layers), sizeof(*parts));
  if (!parts) { /* the builder records the failure; emit nothing usable */
    e->out->failed = true;
    return e->new_keys[0];
  }
  int64_t kv = e->new_keys[0].shape[1], dim = e->new_keys[0].shape[2];
  int64_t part_shape[6] = {1, 1, slots, rows, kv, dim};
  for (int l = 0; l < layers; l++) {
    parts[2 * l] = xla_reshape(e, e->new_keys[l], 6, part_shape);
    parts[2 * l + 1] = xla_reshape(e, e->new_values[l], 6, part_shape);
  }
  xla_value stacked = xla_concatenate(e, 2 * layers, parts, 1);
  free(parts);
  return xla_reshape(e, stacked, 6, (int64_t[]){layers, 2, slots, rows, kv, dim});
}

/* Prefill: the chunk's rows go to [*, *, slot, start + r] for r <
 * valid_rows (padded rows keep what the cache held, so a call writes exactly
 * its rows): one update of [layers, 2, 1, chunk, kv, dim]. Decode: row b
 * goes to [*, *, b, write_index[b]] (a spill row past the capacity when the
 * slot is inactive): one update of [layers, 2, 1, 1, kv, dim] per slot. */
void xla_write_new_rows(xla_emitter *e) {
  if (!e->new_keys || !e->new_keys[0].name[0]) return;
  xla_value cache = xla_current_cache(e), z = e->zero_index;
  if (e->kind == XLA_DECODE) {
    int64_t slots = e->options->slot_count;
    xla_value stacked = stacked_new_rows(e, slots, 1);
    int64_t limit[6];
    memcpy(limit, stacked.shape, sizeof(limit));
    for (int64_t b = 0; b < slots; b++) {
      limit[2] = b + 1;
      xla_value row = xla_slice(e, stacked, (int64_t[]){0, 0, b, 0, 0, 0}, limit);
      xla_value index = xla_slice(e, e->write_index, (int64_t[]){b}, (int64_t[]){b + 1});
      index = xla_reshape(e, index, 0, NULL);
      xla_value slot = xla_splat(e, (double)b, "i32", 0, NULL);
      cache = xla_dynamic_update_slice(e, cache, row, 6, (xla_value[]){z, z, slot, index, z, z});
    }
  } else {
    xla_value update = stacked_new_rows(e, 1, e->rows);
    xla_value at_start[6] = {z, z, e->slot, e->start, z, z};
    xla_value old = xla_dynamic_slice(e, cache, 6, at_start, update.shape);
    xla_value keep = xla_broadcast(e, e->row_valid, 6, update.shape, (int64_t[]){3});
    update = xla_select(e, keep, update, old);
    cache = xla_dynamic_update_slice(e, cache, update, 6, at_start);
  }
  e->cache = cache;
}

/* Softmax over the last dimension of masked scores. Guarded so that a row
 * that may see no key (a padded row) gives zeros, never NaN: the max is
 * floored at -FLT_MAX and the sum at FLT_MIN. Rows that see a key are
 * unchanged (their max is finite and their sum at least 1). */
xla_value xla_softmax_last(xla_emitter *e, xla_value scores) {
  int64_t dims[XLA_MAX_RANK];
  for (int i = 0; i < scores.rank; i++) dims[i] = i;
  xla_value maximum = xla_reduce_last(e, scores, "maximum", -INFINITY);
  maximum = XLA_OP(e, "maximum", NULL, &maximum, maximum, xla_splat_like(e, -FLT_MAX, maximum));
  xla_value shifted = XLA_OP(e, "subtract", NULL, &scores, scores,
                             xla_broadcast(e, maximum, scores.rank, scores.shape, dims));
  xla_value exponentials = XLA_OP(e, "exponential", NULL, &scores, shifted);
  xla_value sum = xla_reduce_last(e, exponentials, "add", 0.0);
  sum = XLA_OP(e, "maximum", NULL, &sum, sum, xla_splat_like(e, FLT_MIN, sum));
  return XLA_OP(e, "divide", NULL, &scores, exponentials, xla_broadcast(e, sum, scores.rank, scores.shape, dims));
}


static xla_value logical_or(xla_emitter *e, xla_value a, xla_value b) { return XLA_OP(e, "or", NULL, &a, a, b); }
static xla_value logical_and(xla_emitter *e, xla_value a, xla_value b) { return XLA_OP(e, "and", NULL, &a, a, b); }

/* Prefill: which of the [capacity + chunk] keys (the slot's cached rows,
 * then the chunk's own) row r sees, as an additive bias [chunk, capacity +
 * chunk]. token_prefill: cached rows before `start`, and the chunk's rows
 * up to r (causal). embeddings_prefill: the caller's bias over cache indices
 * [chunk, capacity]: cached rows before `start` from its columns [0, start),
 * the chunk's own row r' from column start + r' (past the capacity: -inf).
 * A sliding window (> 0) also hides keys whose cache index is window or more
 * below the row's, as the cpu backend does. */
static xla_value prefill_bias(xla_emitter *e, int64_t window) {
  int64_t rows = e->rows, capacity = e->options->capacity, keys = capacity + rows;
  int64_t shape[2] = {rows, keys};
  xla_value key_index = xla_iota(e, "i32", 2, shape, 1);
  xla_value start = xla_broadcast(e, e->start, 2, shape, NULL);
  xla_value before_start = xla_compare(e, key_index, start, "LT");
  xla_value capacity_splat = xla_splat(e, (double)capacity, "i32", 2, shape);
  xla_value own = xla_compare(e, key_index, capacity_splat, "GE");
  xla_value row_index = xla_iota(e, "i32", 2, shape, 0);
  xla_value minus_infinity = xla_splat(e, -INFINITY, "f32", 2, shape);
  xla_value visible;
  xla_value bias = xla_splat(e, 0.0, "f32", 2, shape);
  if (e->kind == XLA_EMBEDDINGS_PREFILL) {
    xla_value overhang = xla_splat(e, -INFINITY, "f32", 2, (int64_t[]){rows, rows});
    xla_value padded = xla_concatenate(e, 2, (xla_value[]){e->bias, overhang}, 1);
    xla_value own_bias = xla_dynamic_slice(e, padded, 2, (xla_value[]){e->zero_index, e->start},
                                           (int64_t[]){rows, rows});
    bias = xla_concatenate(e, 2, (xla_value[]){e->bias, own_bias}, 1);
    visible = logical_or(e, before_start, own);
  } else {
    xla_value last_own = XLA_OP(e, "add", NULL, &row_index, row_index, capacity_splat);
    visible = logical_or(e, before_start, logical_and(e, own, xla_compare(e, key_index, last_own, "LE")));
  }
  if (window > 0) {
    /* Cache index of each key (own rows: start + r') against the row's (start + r). */
    xla_value own_index = XLA_OP(e, "add", NULL, &key_index,
                                 XLA_OP(e, "subtract", NULL, &key_index, key_index, capacity_splat), start);
    xla_value key_cache_index = xla_select(e, own, own_index, key_index);
    xla_value row_cache_index = XLA_OP(e, "add", NULL, &row_index, row_index, start);
    xla_value oldest = XLA_OP(e, "subtract", NULL, &row_cache_index, row_cache_index,
                              xla_splat(e, (double)(window - 1), "i32", 2, shape));
    visible = logical_and(e, visible, xla_compare(e, key_cache_index, oldest, "GE"));
  }
  return xla_select(e, visible, bias, minus_infinity);
}

/* Decode: row b sees slot b's cached keys [0, window rows) before its
 * position (and, with a sliding window, not window or more below it), then
 * its own key (index e->window). */
static xla_value decode_visible(xla_emitter *e, int64_t key_count, int64_t sliding_window) {
  int64_t slots = e->options->slot_count, shape[2] = {slots, key_count};
  xla_value key_index = xla_iota(e, "i32", 2, shape, 1);
  xla_value position = xla_broadcast(e, e->cache_index, 2, shape, (int64_t[]){0});
  xla_value visible = xla_compare(e, key_index, position, "LT");
  if (sliding_window > 0) {
    xla_value oldest = XLA_OP(e, "subtract", NULL, &position, position,
                              xla_splat(e, (double)(sliding_window - 1), "i32", 2, shape));
    visible = logical_and(e, visible, xla_compare(e, key_index, oldest, "GE"));
  }
  if (e->row_windows.name[0]) {
    /* A row window of 1 (graph.h's row_windows): the row sees only itself. */
    xla_value windows = xla_broadcast(e, e->row_windows, 2, shape, (int64_t[]){0});
    visible = logical_and(e, visible, xla_compare(e, windows, xla_splat(e, 0, "i32", 2, shape), "EQ"));
  }
  xla_value own = xla_compare(e, key_index, xla_splat(e, (double)e->window, "i32", 2, shape), "EQ");
  return logical_or(e, visible, own);
}

/* The mask for a layer with this sliding window (0: none), made once per
 * function and window size. */
static xla_value attention_mask(xla_emitter *e, int64_t key_count, int64_t sliding_window) {
  for (int i = 0; i < e->mask_count; i++)
    if (e->masks[i].sliding_window == sliding_window) return e->masks[i].value;
  xla_value mask = e->kind == XLA_DECODE ? decode_visible(e, key_count, sliding_window)
                                         : prefill_bias(e, sliding_window);
  if (e->mask_count < XLA_MAX_MASKS) e->masks[e->mask_count++] = (xla_mask){sliding_window, mask};
  return mask;
}

/* Scaled scores, soft-capped as the cpu backend does: cap * tanh(s / cap). */
static xla_value scaled_scores(xla_emitter *e, const vlm_node *node, xla_value scores) {
  scores = XLA_OP(e, "multiply", NULL, &scores, scores, xla_splat_like(e, (float)node->params.attention.scale, scores));
  double cap = node->params.attention.softcap;
  if (cap > 0) {
    xla_value capped = XLA_OP(e, "divide", NULL, &scores, scores, xla_splat_like(e, (float)cap, scores));
    capped = XLA_OP(e, "tanh", NULL, &capped, capped);
    scores = XLA_OP(e, "multiply", NULL, &scores, xla_splat_like(e, (float)cap, scores), capped);
  }
  return scores;
}

/* Prefill: q [T, heads, dim] against the slot's cached keys [capacity, kv,
 * dim] followed by the chunk's own [T, kv, dim]. */
static xla_value prefill_attend(xla_emitter *e, const vlm_node *node, xla_value q, xla_value keys,
                                xla_value values) {
  int64_t rows = q.shape[0], heads = q.shape[1], dim = q.shape[2], kv = keys.shape[1];
  int64_t groups = heads / kv, key_count = keys.shape[0];
  xla_value grouped = xla_reshape(e, q, 4, (int64_t[]){rows, kv, groups, dim});
  int64_t score_shape[4] = {kv, rows, groups, key_count};
  xla_value scores = xla_dot_general(e, grouped, keys, 1, (int64_t[]){1}, (int64_t[]){1}, 3, 2, 4, score_shape);
  scores = scaled_scores(e, node, scores);
  xla_value bias = attention_mask(e, key_count, node->params.attention.sliding_window);
  scores = XLA_OP(e, "add", NULL, &scores, scores, xla_broadcast(e, bias, 4, score_shape, (int64_t[]){1, 3}));
  xla_value probabilities = xla_softmax_last(e, scores);
  xla_value attended = xla_dot_general(e, probabilities, values, 1, (int64_t[]){0}, (int64_t[]){1}, 3, 0, 4,
                                       (int64_t[]){kv, rows, groups, dim});
  xla_value like = xla_make_value("f32", 4, (int64_t[]){rows, kv, groups, dim});
  attended = XLA_OP(e, "transpose", "permutation = array<i64: 1, 0, 2, 3>", &like, attended);
  return xla_reshape(e, attended, 2, (int64_t[]){rows, heads * dim});
}

/* Decode: q [slots, heads, dim]; row b against slot b's cached keys
 * [0, window) before its position, then its own key (index window). */
static xla_value decode_attend(xla_emitter *e, const vlm_node *node, xla_value q, xla_value keys,
                               xla_value values) {
  int64_t slots = q.shape[0], heads = q.shape[1], dim = q.shape[2], kv = keys.shape[2];
  int64_t groups = heads / kv, key_count = keys.shape[1];
  xla_value grouped = xla_reshape(e, q, 4, (int64_t[]){slots, kv, groups, dim});
  int64_t score_shape[4] = {slots, kv, groups, key_count};
  xla_value scores = xla_dot_general(e, grouped, keys, 2, (int64_t[]){0, 1}, (int64_t[]){0, 2}, 3, 3, 4,
                                     score_shape);
  scores = scaled_scores(e, node, scores);
  xla_value mask = attention_mask(e, key_count, node->params.attention.sliding_window);
  xla_value visible = xla_broadcast(e, mask, 4, score_shape, (int64_t[]){0, 3});
  scores = xla_select(e, visible, scores, xla_splat_like(e, -INFINITY, scores));
  xla_value probabilities = xla_softmax_last(e, scores);
  xla_value attended = xla_dot_general(e, probabilities, values, 2, (int64_t[]){0, 1}, (int64_t[]){0, 2}, 3, 1,
                                       4, (int64_t[]){slots, kv, groups, dim});
  return xla_reshape(e, attended, 2, (int64_t[]){slots, heads * dim});
}

/* The layer's K/V rows are kept for xla_write_new_rows and joined after the
 * cached rows for this call's attention. */
static xla_value lower_attention(xla_emitter *e, const vlm_node *node) {
  xla_value q = xla_input_f32(e, node, 0), k = xla_input_f32(e, node, 1), v = xla_input_f32(e, node, 2);
  int32_t layer = node->params.attention.layer;
  int64_t kv_heads = k.shape[1], dim = k.shape[2];
  e->new_keys[layer] = k;
  e->new_values[layer] = v;
  xla_value cached_keys = cached_rows(e, layer, 0, kv_heads, dim);
  xla_value cached_values = cached_rows(e, layer, 1, kv_heads, dim);
  if (e->kind == XLA_DECODE) {
    int64_t own_shape[4] = {k.shape[0], 1, kv_heads, dim};
    xla_value keys = xla_concatenate(e, 2, (xla_value[]){cached_keys, xla_reshape(e, k, 4, own_shape)}, 1);
    xla_value values = xla_concatenate(e, 2, (xla_value[]){cached_values, xla_reshape(e, v, 4, own_shape)}, 1);
    return decode_attend(e, node, q, keys, values);
  }
  xla_value keys = xla_concatenate(e, 2, (xla_value[]){cached_keys, k}, 0);
  xla_value values = xla_concatenate(e, 2, (xla_value[]){cached_values, v}, 0);
  return prefill_attend(e, node, q, keys, values);
}

/* ---------------------------------------------------------------------- */

vlm_status xla_lower_node(xla_emitter *e, int32_t index) {
  const vlm_node *node = node_at(e, index);
  VLM_RETURN_IF_ERROR(xla_check_node(e->graph, node));
  if (node->rank > XLA_MAX_RANK)
    return VLM_ERROR(UNIMPLEMENTED, "xla emitter: graph node '%s' has rank %d", node->name, node->rank);
  xla_value *out = &e->nodes[index];
  switch (node->op) {
    case VLM_OP_WEIGHT: return lower_weight(e, index);
    case VLM_OP_INPUT: return lower_input(e, index);
    case VLM_OP_GATHER: return lower_gather(e, node, out);
    case VLM_OP_RMS_NORM: *out = lower_rms_norm(e, node); return VLM_OK;
    case VLM_OP_LINEAR: return lower_linear(e, node, out);
    case VLM_OP_RESHAPE: *out = xla_reshape(e, xla_input_f32(e, node, 0), node->rank, node->shape); return VLM_OK;
    case VLM_OP_SELECT_ROWS: return lower_select_rows(e, node, out);
    case VLM_OP_ROPE: return lower_rope(e, node, out);
    case VLM_OP_ATTENTION: *out = lower_attention(e, node); return VLM_OK;
    case VLM_OP_LAYER_NORM:
    case VLM_OP_SEGMENT_ATTENTION:
    case VLM_OP_CONCAT:
    case VLM_OP_SLICE:
    case VLM_OP_ROW_SELECT:
    case VLM_OP_TRANSPOSE:
    case VLM_OP_AVERAGE_POOL:
    case VLM_OP_SCALE_ROWS:
    case VLM_OP_CONV2D:
    case VLM_OP_PERMUTE:
    case VLM_OP_BIASED_ATTENTION: return xla_lower_encoder_node(e, node, out);
    case VLM_OP_MOE: *out = xla_lower_moe(e, node); return VLM_OK;
    case VLM_OP_UNARY: *out = lower_unary(e, node); return VLM_OK;
    case VLM_OP_ROW_MOMENT: *out = lower_row_moment(e, node); return VLM_OK;
    case VLM_OP_MATMUL: *out = lower_matmul(e, node); return VLM_OK;
    case VLM_OP_CROSS_ATTENTION: *out = lower_cross_attention(e, node); return VLM_OK;
    default: lower_elementwise(e, node, out); return VLM_OK;
  }
}
