/* Lowering of the moe op (graph.h, vlm_graph_moe) to StableHLO, with the
 * cpu backend's numerics (src/backends/cpu_moe.c) in f32: the router's
 * softmax, its top k by repeated maximum (the lowest expert among equal
 * probabilities, as the cpu's strict comparison picks), renormalised in
 * the router's order; then the experts, one of two ways by the step's size
 * (both static shapes, no host round trip):
 *
 *   few rows (rows * k <= experts: decode) each row's k experts' matrices
 *       are gathered and applied as batched products, so only the chosen
 *       experts are read, and the k outputs are summed in the router's order;
 *   many rows (prefill chunks) every expert runs on every row as two
 *       batched products, and a [rows, experts] weight matrix that is 0 off
 *       the chosen experts combines them (the sum's order is the compiler's).
 *
 * gate_up [E, 2I, H] / down [E, H, I], or [E, H, 2I] / [E, I, H] when the
 * node says transposed: only which dimension contracts changes. */
#include <math.h>
#include <stdio.h>

#include "backends/xla/stablehlo_internal.h"
#include "core/status.h"

#define MAX_TOP_K 32

typedef struct routing {
  xla_value experts[MAX_TOP_K]; /* [rows] i32 per choice j */
  xla_value weights[MAX_TOP_K]; /* [rows] f32 */
  xla_value one_hot[MAX_TOP_K]; /* [rows, E] i1 */
} routing;

static void route(xla_emitter *e, const vlm_node *node, xla_value logits, routing *out) {
  int64_t experts = logits.shape[1];
  int k = node->params.moe.top_k;
  xla_value remaining = xla_softmax_last(e, logits);
  xla_value index = xla_iota(e, "i32", 2, logits.shape, 1);
  xla_value none = xla_splat(e, (double)experts, "i32", 2, logits.shape);
  xla_value removed = xla_splat(e, -1.0, "f32", 2, logits.shape);
  for (int j = 0; j < k; j++) {
    xla_value best = xla_reduce_last(e, remaining, "maximum", -INFINITY);
    xla_value is_best = xla_compare(e, remaining, xla_broadcast(e, best, 2, logits.shape, (int64_t[]){0}), "EQ");
    xla_value candidates = xla_select(e, is_best, index, none);
    out->experts[j] = xla_reduce_last(e, candidates, "minimum", (double)experts);
    out->one_hot[j] = xla_compare(e, index, xla_broadcast(e, out->experts[j], 2, logits.shape, (int64_t[]){0}),
                                  "EQ");
    out->weights[j] = best;
    remaining = xla_select(e, out->one_hot[j], removed, remaining);
  }
  if (!node->params.moe.normalize) return;
  xla_value sum = out->weights[0];
  for (int j = 1; j < k; j++) sum = XLA_OP(e, "add", NULL, &sum, sum, out->weights[j]);
  for (int j = 0; j < k; j++) out->weights[j] = XLA_OP(e, "divide", NULL, &sum, out->weights[j], sum);
}

/* Expert matrices of `weights` [E, a, b] (own dtype) for each row's expert: [rows, a, b] f32. */
static xla_value gather_experts(xla_emitter *e, xla_value weights, xla_value experts) {
  int64_t rows = experts.shape[0];
  xla_value column = xla_reshape(e, experts, 2, (int64_t[]){rows, 1});
  char attributes[320];
  snprintf(attributes, sizeof(attributes),
           "dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], "
           "start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, "
           "slice_sizes = array<i64: 1, %lld, %lld>",
           (long long)weights.shape[1], (long long)weights.shape[2]);
  xla_value like = xla_make_value(weights.element, 3, (int64_t[]){rows, weights.shape[1], weights.shape[2]});
  return xla_convert(e, XLA_OP(e, "gather", attributes, &like, weights, column), "f32");
}

/* act(gate) * up of h [..., 2I] (the first half the gate). */
static xla_value gated(xla_emitter *e, const vlm_node *node, xla_value h, int64_t inner) {
  int64_t start[XLA_MAX_RANK] = {0}, limit[XLA_MAX_RANK];
  for (int d = 0; d < h.rank; d++) limit[d] = h.shape[d];
  limit[h.rank - 1] = inner;
  xla_value gate = xla_slice(e, h, start, limit);
  start[h.rank - 1] = inner;
  limit[h.rank - 1] = 2 * inner;
  xla_value up = xla_slice(e, h, start, limit);
  return XLA_OP(e, "multiply", NULL, &gate, xla_activate(e, node->params.moe.activation, gate), up);
}

static xla_value few_rows(xla_emitter *e, const vlm_node *node, xla_value x, const routing *routed, int64_t inner) {
  int64_t rows = x.shape[0], hidden = x.shape[1];
  xla_value gate_up = e->nodes[node->inputs[2]], down = e->nodes[node->inputs[3]];
  int64_t gate_up_in = node->params.moe.gate_up_transposed ? 1 : 2;
  int64_t down_in = node->params.moe.down_transposed ? 1 : 2;
  xla_value sum = {{0}};
  for (int j = 0; j < node->params.moe.top_k; j++) {
    xla_value w = gather_experts(e, gate_up, routed->experts[j]);
    xla_value h = xla_dot_general(e, x, w, 1, (int64_t[]){0}, (int64_t[]){0}, 1, gate_up_in, 2,
                                  (int64_t[]){rows, 2 * inner});
    xla_value g = gated(e, node, h, inner);
    xla_value d = gather_experts(e, down, routed->experts[j]);
    xla_value y = xla_dot_general(e, g, d, 1, (int64_t[]){0}, (int64_t[]){0}, 1, down_in, 2,
                                  (int64_t[]){rows, hidden});
    y = XLA_OP(e, "multiply", NULL, &y, y, xla_broadcast(e, routed->weights[j], 2, y.shape, (int64_t[]){0}));
    sum = j == 0 ? y : XLA_OP(e, "add", NULL, &sum, sum, y);
  }
  return sum;
}

static xla_value many_rows(xla_emitter *e, const vlm_node *node, xla_value x, const routing *routed,
                           int64_t experts, int64_t inner) {
  int64_t rows = x.shape[0], hidden = x.shape[1];
  xla_value gate_up = xla_input_f32(e, node, 2), down = xla_input_f32(e, node, 3);
  int64_t gate_up_in = node->params.moe.gate_up_transposed ? 1 : 2;
  int64_t down_in = node->params.moe.down_transposed ? 1 : 2;
  /* [rows, E, 2I]: rows are lhs's free dimension, (E, 2I) rhs's. */
  xla_value h = xla_dot_general(e, x, gate_up, 0, NULL, NULL, 1, gate_up_in, 3,
                                (int64_t[]){rows, experts, 2 * inner});
  xla_value g = gated(e, node, h, inner);
  /* [E, rows, hidden], batched over the experts. */
  xla_value y = xla_dot_general(e, g, down, 1, (int64_t[]){1}, (int64_t[]){0}, 2, down_in, 3,
                                (int64_t[]){experts, rows, hidden});
  int64_t pair[2] = {rows, experts};
  xla_value zero = xla_splat(e, 0.0, "f32", 2, pair);
  xla_value combine = zero;
  for (int j = 0; j < node->params.moe.top_k; j++)
    combine = xla_select(e, routed->one_hot[j], xla_broadcast(e, routed->weights[j], 2, pair, (int64_t[]){0}),
                         combine);
  y = XLA_OP(e, "multiply", NULL, &y, y, xla_broadcast(e, combine, 3, y.shape, (int64_t[]){1, 0}));
  xla_value like = xla_make_value("f32", 3, (int64_t[]){rows, hidden, experts});
  y = XLA_OP(e, "transpose", "permutation = array<i64: 1, 2, 0>", &like, y);
  return xla_reduce_last(e, y, "add", 0.0);
}

xla_value xla_lower_moe(xla_emitter *e, const vlm_node *node) {
  xla_value x = xla_input_f32(e, node, 0), logits = xla_input_f32(e, node, 1);
  int64_t experts = logits.shape[1];
  const vlm_node *down = &e->graph->nodes[node->inputs[3]];
  int64_t inner = node->params.moe.down_transposed ? down->shape[1] : down->shape[2];
  routing routed;
  route(e, node, logits, &routed);
  if (x.shape[0] * node->params.moe.top_k <= experts) return few_rows(e, node, x, &routed, inner);
  return many_rows(e, node, x, &routed, experts, inner);
}

vlm_status xla_check_moe(const vlm_node *node) {
  if (node->params.moe.top_k > MAX_TOP_K)
    return VLM_ERROR(UNIMPLEMENTED, "xla emitter: graph node '%s' routes to %d experts a row (at most %d)",
                     node->name, node->params.moe.top_k, MAX_TOP_K);
  return VLM_OK;
}
