#include "graph/graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/tensor_list.h"
#include "io/config.h"
#include "io/json.h"

static const char *const op_names[VLM_OP_COUNT] = {
    [VLM_OP_INPUT] = "input",           [VLM_OP_WEIGHT] = "weight",
    [VLM_OP_GATHER] = "gather",         [VLM_OP_SCALE] = "scale",
    [VLM_OP_ADD] = "add",               [VLM_OP_MUL] = "mul",
    [VLM_OP_RMS_NORM] = "rms_norm",     [VLM_OP_LAYER_NORM] = "layer_norm",
    [VLM_OP_LINEAR] = "linear",         [VLM_OP_ACTIVATION] = "activation",
    [VLM_OP_GATED] = "gated",           [VLM_OP_ROPE] = "rope",
    [VLM_OP_ATTENTION] = "attention",   [VLM_OP_SOFTCAP] = "softcap",
    [VLM_OP_RESHAPE] = "reshape",       [VLM_OP_SELECT_ROWS] = "select_rows",
    [VLM_OP_CONCAT] = "concat",         [VLM_OP_SLICE] = "slice",
    [VLM_OP_ROW_SELECT] = "row_select",       [VLM_OP_TRANSPOSE] = "transpose",
    [VLM_OP_SCALE_ROWS] = "scale_rows",       [VLM_OP_MOE] = "moe",
    [VLM_OP_SEGMENT_ATTENTION] = "segment_attention",
    [VLM_OP_AVERAGE_POOL] = "average_pool",
    [VLM_OP_CONV2D] = "conv2d",
    [VLM_OP_PERMUTE] = "permute",
    [VLM_OP_BIASED_ATTENTION] = "biased_attention",
    [VLM_OP_UNARY] = "unary",
    [VLM_OP_ROW_MOMENT] = "row_moment",
    [VLM_OP_MATMUL] = "matmul",
    [VLM_OP_CROSS_ATTENTION] = "cross_attention",
};

const char *vlm_op_name(vlm_op op) {
  return (unsigned)op < VLM_OP_COUNT ? op_names[op] : "invalid";
}

bool vlm_activation_from_name(const char *name, vlm_activation *out) {
  static const struct {
    const char *name;
    vlm_activation activation;
  } names[] = {{"silu", VLM_ACTIVATION_SILU},
               {"swish", VLM_ACTIVATION_SILU},
               {"gelu", VLM_ACTIVATION_GELU},
               {"gelu_pytorch_tanh", VLM_ACTIVATION_GELU_TANH},
               {"gelu_new", VLM_ACTIVATION_GELU_TANH},
               {"gelu_fast", VLM_ACTIVATION_GELU_TANH},
               {"quick_gelu", VLM_ACTIVATION_QUICK_GELU},
               {"relu", VLM_ACTIVATION_RELU}};
  if (!name) return false;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    if (strcmp(name, names[i].name) == 0) {
      *out = names[i].activation;
      return true;
    }
  }
  return false;
}

void vlm_graph_init(vlm_graph *graph) {
  memset(graph, 0, sizeof(*graph));
  vlm_arena_init(&graph->arena, NULL, 16 * 1024);
  graph->output = -1;
}

void vlm_graph_release(vlm_graph *graph) {
  vlm_status_free(graph->error);
  vlm_arena_reset(&graph->arena);
  free(graph->nodes);
  memset(graph, 0, sizeof(*graph));
  graph->output = -1;
}

vlm_status vlm_graph_take_error(vlm_graph *graph) {
  vlm_status error = graph->error;
  graph->error = VLM_OK;
  return error;
}

double vlm_graph_flops(const vlm_graph *graph) {
  double flops = 0;
  for (int32_t i = 0; i < graph->count; i++) {
    const vlm_node *node = &graph->nodes[i];
    if (node->op == VLM_OP_LINEAR) {
      const vlm_node *x = &graph->nodes[node->inputs[0]], *w = &graph->nodes[node->inputs[1]];
      flops += 2.0 * (double)x->shape[0] * (double)w->shape[0] * (double)w->shape[1];
    } else if (node->op == VLM_OP_MOE) {
      /* What the chosen experts compute: k of them per row, gate_up and down. */
      const vlm_node *x = &graph->nodes[node->inputs[0]], *gate_up = &graph->nodes[node->inputs[2]];
      flops += 2.0 * 1.5 * (double)x->shape[0] * (double)node->params.moe.top_k * (double)gate_up->shape[1] *
               (double)gate_up->shape[2];
    } else if (node->op == VLM_OP_SEGMENT_ATTENTION) {
      const vlm_node *q = &graph->nodes[node->inputs[0]];
      flops += 4.0 * (double)q->shape[0] * (double)q->shape[0] * (double)q->shape[1] * (double)q->shape[2];
    } else if (node->op == VLM_OP_BIASED_ATTENTION) {
      const vlm_node *q = &graph->nodes[node->inputs[0]], *b = &graph->nodes[node->inputs[3]];
      flops += 4.0 * (double)q->shape[0] * (double)b->shape[1] * (double)q->shape[1] * (double)q->shape[2];
    } else if (node->op == VLM_OP_CONV2D) {
      const vlm_node *w = &graph->nodes[node->inputs[1]];
      flops += 2.0 * (double)node->shape[0] * (double)node->shape[1] * (double)node->shape[2] *
               (double)node->shape[3] * (double)w->shape[1] * (double)w->shape[2] * (double)w->shape[3];
    }
  }
  return flops;
}

const vlm_node *vlm_graph_node(const vlm_graph *graph, int32_t index) {
  return index >= 0 && index < graph->count ? &graph->nodes[index] : NULL;
}

int32_t vlm_graph_find(const vlm_graph *graph, const char *name) {
  for (int32_t i = 0; i < graph->count; i++)
    if (strcmp(graph->nodes[i].name, name) == 0) return i;
  return -1;
}

/* ---------------------------------------------------------------------- */

static int32_t fail(vlm_graph *graph, vlm_status status) {
  if (!graph->error) graph->error = status;
  else vlm_status_free(status);
  return -1;
}

static bool inputs_valid(vlm_graph *graph, const int32_t *inputs, int count) {
  if (graph->error) return false;
  for (int i = 0; i < count; i++)
    if (inputs[i] < 0 || inputs[i] >= graph->count) {
      fail(graph, VLM_ERROR(INTERNAL, "graph: input %d of a new node is not a node (%d)", i,
                            inputs[i]));
      return false;
    }
  return true;
}

/* Appends a node (name formatted from `format`), returning it or NULL. */
static vlm_node *append(vlm_graph *graph, vlm_op op, const int32_t *inputs, int input_count,
                        const char *format, va_list args) {
  if (!inputs_valid(graph, inputs, input_count)) return NULL;
  if (graph->count == graph->capacity) {
    int32_t capacity = graph->capacity ? graph->capacity * 2 : 256;
    vlm_node *grown = realloc(graph->nodes, (size_t)capacity * sizeof(*grown));
    if (!grown) {
      fail(graph, VLM_ERROR(RESOURCE_EXHAUSTED, "graph: out of memory"));
      return NULL;
    }
    graph->nodes = grown;
    graph->capacity = capacity;
  }
  vlm_node *node = &graph->nodes[graph->count];
  memset(node, 0, sizeof(*node));
  node->op = op;
  node->dtype = VLM_DTYPE_F32;
  node->input_count = input_count;
  for (int i = 0; i < input_count; i++) node->inputs[i] = inputs[i];
  int written = vsnprintf(node->name, sizeof(node->name), format, args);
  if (written < 0 || written >= (int)sizeof(node->name)) {
    fail(graph, VLM_ERROR(INTERNAL, "graph: node name '%s...' is too long", node->name));
    return NULL;
  }
  graph->count++;
  return node;
}

static const vlm_node *input_node(const vlm_graph *graph, const vlm_node *node, int which) {
  return &graph->nodes[node->inputs[which]];
}

static void copy_shape(vlm_node *node, const vlm_node *from) {
  node->rank = from->rank;
  memcpy(node->shape, from->shape, sizeof(node->shape));
}

static bool same_shape(const vlm_node *a, const vlm_node *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

static int32_t shape_error(vlm_graph *graph, vlm_node *node, const char *what) {
  char shape_text[160];
  graph->count--; /* drop the half-built node */
  return fail(graph, VLM_ERROR(INVALID_ARGUMENT, "graph node '%s' (%s): %s (input shape %s)",
                               node->name, vlm_op_name(node->op), what,
                               vlm_shape_format(input_node(graph, node, 0)->shape,
                                                input_node(graph, node, 0)->rank, shape_text,
                                                sizeof(shape_text))));
}

static int32_t finish(vlm_graph *graph, vlm_node *node) {
  return node ? (int32_t)(node - graph->nodes) : -1;
}

#define BUILD(op, inputs, count)                                  \
  va_list args;                                                   \
  va_start(args, name);                                           \
  vlm_node *node = append(graph, op, inputs, count, name, args); \
  va_end(args);                                                   \
  if (!node) return -1

/* ---------------------------------------------------------------------- */

static int32_t leaf(vlm_graph *graph, vlm_op op, vlm_dtype dtype, int rank, const int64_t *shape,
                    const char *name, ...) {
  BUILD(op, NULL, 0);
  if (rank < 0 || rank > VLM_MAX_DIMS) {
    graph->count--;
    return fail(graph, VLM_ERROR(INTERNAL, "graph: leaf '%s' has rank %d", node->name, rank));
  }
  node->dtype = dtype;
  node->rank = rank;
  if (rank) memcpy(node->shape, shape, sizeof(int64_t) * (size_t)rank);
  return finish(graph, node);
}

int32_t vlm_graph_input(vlm_graph *graph, vlm_dtype dtype, int rank, const int64_t *shape,
                        const char *name) {
  return leaf(graph, VLM_OP_INPUT, dtype, rank, shape, "%s", name);
}

int32_t vlm_graph_weight(vlm_graph *graph, const char *canonical_name, vlm_dtype dtype, int rank,
                         const int64_t *shape) {
  /* Weight nodes are named by their checkpoint name; long names are fine
   * as long as they fit (checkpoint names are far shorter in practice). */
  return leaf(graph, VLM_OP_WEIGHT, dtype, rank, shape, "%s", canonical_name);
}

int32_t vlm_graph_gather(vlm_graph *graph, int32_t table, int32_t ids, const char *name, ...) {
  int32_t inputs[2] = {table, ids};
  BUILD(VLM_OP_GATHER, inputs, 2);
  const vlm_node *table_node = input_node(graph, node, 0), *ids_node = input_node(graph, node, 1);
  if (table_node->rank != 2 || ids_node->rank != 1 || ids_node->dtype != VLM_DTYPE_I32)
    return shape_error(graph, node, "needs a [rows, width] table and i32 [count] ids");
  node->rank = 2;
  node->shape[0] = ids_node->shape[0];
  node->shape[1] = table_node->shape[1];
  return finish(graph, node);
}

int32_t vlm_graph_scale(vlm_graph *graph, int32_t x, double scalar, const char *name, ...) {
  BUILD(VLM_OP_SCALE, &x, 1);
  copy_shape(node, input_node(graph, node, 0));
  node->params.scale.scalar = scalar;
  return finish(graph, node);
}

/* b's shape equals a's last b->rank dimensions (same shape included). */
static bool suffix_shape(const vlm_node *a, const vlm_node *b) {
  if (b->rank > a->rank) return false;
  for (int i = 0; i < b->rank; i++)
    if (b->shape[i] != a->shape[a->rank - b->rank + i]) return false;
  return true;
}

static int32_t elementwise(vlm_graph *graph, vlm_node *node) {
  if (!suffix_shape(input_node(graph, node, 0), input_node(graph, node, 1)))
    return shape_error(graph, node, "b is neither a's shape nor that of its trailing dimensions");
  copy_shape(node, input_node(graph, node, 0));
  return finish(graph, node);
}

int32_t vlm_graph_add(vlm_graph *graph, int32_t a, int32_t b, const char *name, ...) {
  int32_t inputs[2] = {a, b};
  BUILD(VLM_OP_ADD, inputs, 2);
  return elementwise(graph, node);
}

int32_t vlm_graph_mul(vlm_graph *graph, int32_t a, int32_t b, const char *name, ...) {
  int32_t inputs[2] = {a, b};
  BUILD(VLM_OP_MUL, inputs, 2);
  return elementwise(graph, node);
}

/* A norm's weight (and bias) must match the last dimension of x. */
static bool matches_last_dimension(const vlm_node *x, const vlm_node *vector) {
  return vector->rank == 1 && x->rank >= 1 && vector->shape[0] == x->shape[x->rank - 1];
}

int32_t vlm_graph_rms_norm(vlm_graph *graph, int32_t x, int32_t weight, double epsilon,
                           double weight_offset, const char *name, ...) {
  int32_t inputs[2] = {x, weight};
  BUILD(VLM_OP_RMS_NORM, inputs, 2);
  if (!matches_last_dimension(input_node(graph, node, 0), input_node(graph, node, 1)))
    return shape_error(graph, node, "weight does not match the last dimension");
  copy_shape(node, input_node(graph, node, 0));
  node->params.norm.epsilon = epsilon;
  node->params.norm.weight_offset = weight_offset;
  return finish(graph, node);
}

int32_t vlm_graph_layer_norm(vlm_graph *graph, int32_t x, int32_t weight, int32_t bias,
                             double epsilon, const char *name, ...) {
  int32_t inputs[3] = {x, weight, bias};
  BUILD(VLM_OP_LAYER_NORM, inputs, 3);
  if (!matches_last_dimension(input_node(graph, node, 0), input_node(graph, node, 1)) ||
      !matches_last_dimension(input_node(graph, node, 0), input_node(graph, node, 2)))
    return shape_error(graph, node, "weight or bias does not match the last dimension");
  copy_shape(node, input_node(graph, node, 0));
  node->params.norm.epsilon = epsilon;
  return finish(graph, node);
}

int32_t vlm_graph_linear(vlm_graph *graph, int32_t x, int32_t weight, int32_t bias,
                         const char *name, ...) {
  int32_t inputs[3] = {x, weight, bias};
  BUILD(VLM_OP_LINEAR, inputs, bias >= 0 ? 3 : 2);
  const vlm_node *x_node = input_node(graph, node, 0), *weight_node = input_node(graph, node, 1);
  if (x_node->rank != 2 || weight_node->rank != 2 || weight_node->shape[1] != x_node->shape[1])
    return shape_error(graph, node, "needs x [rows, in] and weight [out, in]");
  if (bias >= 0) {
    const vlm_node *bias_node = input_node(graph, node, 2);
    if (bias_node->rank != 1 || bias_node->shape[0] != weight_node->shape[0])
      return shape_error(graph, node, "bias does not match the output size");
  }
  node->rank = 2;
  node->shape[0] = x_node->shape[0];
  node->shape[1] = weight_node->shape[0];
  return finish(graph, node);
}

int32_t vlm_graph_activation(vlm_graph *graph, int32_t x, vlm_activation activation,
                             const char *name, ...) {
  BUILD(VLM_OP_ACTIVATION, &x, 1);
  copy_shape(node, input_node(graph, node, 0));
  node->params.activation.activation = activation;
  return finish(graph, node);
}

int32_t vlm_graph_gated(vlm_graph *graph, int32_t gate, int32_t up, vlm_activation activation,
                        const char *name, ...) {
  int32_t inputs[2] = {gate, up};
  BUILD(VLM_OP_GATED, inputs, 2);
  node->params.activation.activation = activation;
  if (!same_shape(input_node(graph, node, 0), input_node(graph, node, 1)))
    return shape_error(graph, node, "operands differ in shape");
  copy_shape(node, input_node(graph, node, 0));
  return finish(graph, node);
}

int32_t vlm_graph_rope(vlm_graph *graph, int32_t x, int32_t rope_index, const char *name, ...) {
  BUILD(VLM_OP_ROPE, &x, 1);
  if (input_node(graph, node, 0)->rank != 3)
    return shape_error(graph, node, "needs [rows, heads, head_dim]");
  copy_shape(node, input_node(graph, node, 0));
  node->params.rope.rope_index = rope_index;
  return finish(graph, node);
}

int32_t vlm_graph_rope_at(vlm_graph *graph, int32_t x, int32_t positions, int32_t rope_index,
                          const char *name, ...) {
  int32_t inputs[2] = {x, positions};
  BUILD(VLM_OP_ROPE, inputs, 2);
  const vlm_node *x_node = input_node(graph, node, 0), *positions_node = input_node(graph, node, 1);
  if (x_node->rank != 3 || positions_node->rank != 2 || positions_node->dtype != VLM_DTYPE_I32 ||
      positions_node->shape[1] != x_node->shape[0] || positions_node->shape[0] < 1 ||
      positions_node->shape[0] > 3)
    return shape_error(graph, node, "needs x [rows, heads, head_dim] and i32 positions [axes, rows]");
  /* One cos/sin table per parameter set: its rope nodes share positions. */
  for (int32_t i = 0; i < graph->count - 1; i++) {
    const vlm_node *other = &graph->nodes[i];
    if (other->op == VLM_OP_ROPE && other->params.rope.rope_index == rope_index &&
        (other->input_count != 2 || other->inputs[1] != positions))
      return shape_error(graph, node, "another rope node of this parameter set uses other positions");
  }
  copy_shape(node, x_node);
  node->params.rope.rope_index = rope_index;
  return finish(graph, node);
}

int32_t vlm_graph_attention(vlm_graph *graph, int32_t query, int32_t key, int32_t value,
                            int32_t layer, double scale, int64_t sliding_window,
                            double softcap, const char *name, ...) {
  int32_t inputs[3] = {query, key, value};
  BUILD(VLM_OP_ATTENTION, inputs, 3);
  const vlm_node *q = input_node(graph, node, 0), *k = input_node(graph, node, 1),
                 *v = input_node(graph, node, 2);
  if (q->rank != 3 || k->rank != 3 || !same_shape(k, v) || k->shape[0] != q->shape[0] ||
      k->shape[2] != q->shape[2] || k->shape[1] <= 0 || q->shape[1] % k->shape[1] != 0)
    return shape_error(graph, node,
                       "needs q [rows, heads, dim] and k, v [rows, kv_heads, dim] with heads "
                       "a multiple of kv_heads");
  node->rank = 2;
  node->shape[0] = q->shape[0];
  node->shape[1] = q->shape[1] * q->shape[2];
  node->params.attention.layer = layer;
  node->params.attention.kv_heads = (int32_t)k->shape[1];
  node->params.attention.head_dim = (int32_t)k->shape[2];
  node->params.attention.scale = scale;
  node->params.attention.sliding_window = sliding_window;
  node->params.attention.softcap = softcap;
  return finish(graph, node);
}

int32_t vlm_graph_softcap(vlm_graph *graph, int32_t x, double cap, const char *name, ...) {
  BUILD(VLM_OP_SOFTCAP, &x, 1);
  copy_shape(node, input_node(graph, node, 0));
  node->params.softcap.cap = cap;
  return finish(graph, node);
}

int32_t vlm_graph_reshape(vlm_graph *graph, int32_t x, int rank, const int64_t *shape,
                          const char *name, ...) {
  BUILD(VLM_OP_RESHAPE, &x, 1);
  int64_t before = 0, after = 0;
  const vlm_node *x_node = input_node(graph, node, 0);
  if (rank < 1 || rank > VLM_MAX_DIMS || !vlm_shape_element_count(shape, rank, &after) ||
      !vlm_shape_element_count(x_node->shape, x_node->rank, &before) || before != after)
    return shape_error(graph, node, "element count changes");
  node->rank = rank;
  memcpy(node->shape, shape, sizeof(int64_t) * (size_t)rank);
  return finish(graph, node);
}

int32_t vlm_graph_select_rows(vlm_graph *graph, int32_t x, const int32_t *rows, int64_t count,
                              const char *name, ...) {
  BUILD(VLM_OP_SELECT_ROWS, &x, 1);
  const vlm_node *x_node = input_node(graph, node, 0);
  int32_t *copy = count > 0 ? vlm_arena_allocate(&graph->arena, (size_t)count * sizeof(int32_t),
                                                 _Alignof(int32_t))
                            : NULL;
  if (count <= 0 || !copy) return shape_error(graph, node, "no rows selected (or out of memory)");
  for (int64_t i = 0; i < count; i++) {
    if (rows[i] < 0 || rows[i] >= x_node->shape[0])
      return shape_error(graph, node, "selected row out of range");
    copy[i] = rows[i];
  }
  copy_shape(node, x_node);
  node->shape[0] = count;
  node->params.select.rows = copy;
  node->params.select.count = count;
  return finish(graph, node);
}

int32_t vlm_graph_concat(vlm_graph *graph, const int32_t *inputs, int count, int axis,
                         const char *name, ...) {
  if (count < 1 || count > VLM_GRAPH_MAX_INPUTS) {
    if (graph->error) return -1;
    return fail(graph, VLM_ERROR(INTERNAL, "graph: concat of %d inputs", count));
  }
  BUILD(VLM_OP_CONCAT, inputs, count);
  const vlm_node *first = input_node(graph, node, 0);
  if (axis < 0 || axis >= first->rank) return shape_error(graph, node, "axis out of range");
  copy_shape(node, first);
  for (int i = 1; i < count; i++) {
    const vlm_node *part = input_node(graph, node, i);
    bool fits = part->rank == first->rank;
    for (int d = 0; fits && d < first->rank; d++) fits = d == axis || part->shape[d] == first->shape[d];
    if (!fits) return shape_error(graph, node, "inputs differ outside the concatenated dimension");
    node->shape[axis] += part->shape[axis];
  }
  node->params.concat.axis = axis;
  return finish(graph, node);
}

int32_t vlm_graph_slice(vlm_graph *graph, int32_t x, int axis, int64_t start, int64_t length,
                        const char *name, ...) {
  BUILD(VLM_OP_SLICE, &x, 1);
  const vlm_node *x_node = input_node(graph, node, 0);
  if (axis < 0 || axis >= x_node->rank || start < 0 || length < 1 || start + length > x_node->shape[axis])
    return shape_error(graph, node, "slice outside the dimension");
  copy_shape(node, x_node);
  node->shape[axis] = length;
  node->params.slice.axis = axis;
  node->params.slice.start = start;
  return finish(graph, node);
}

int32_t vlm_graph_row_select(vlm_graph *graph, int32_t mask, int32_t a, int32_t b,
                             const char *name, ...) {
  int32_t inputs[3] = {mask, a, b};
  BUILD(VLM_OP_ROW_SELECT, inputs, 3);
  const vlm_node *mask_node = input_node(graph, node, 0), *a_node = input_node(graph, node, 1);
  if (mask_node->rank != 1 || mask_node->dtype != VLM_DTYPE_I32 || !same_shape(a_node, input_node(graph, node, 2)) ||
      a_node->rank < 1 || a_node->shape[0] != mask_node->shape[0])
    return shape_error(graph, node, "needs an i32 mask [rows] and a, b of one shape [rows, ...]");
  copy_shape(node, a_node);
  return finish(graph, node);
}

int32_t vlm_graph_transpose(vlm_graph *graph, int32_t x, const char *name, ...) {
  BUILD(VLM_OP_TRANSPOSE, &x, 1);
  const vlm_node *x_node = input_node(graph, node, 0);
  if (x_node->rank != 2) return shape_error(graph, node, "needs a matrix [a, b]");
  node->rank = 2;
  node->shape[0] = x_node->shape[1];
  node->shape[1] = x_node->shape[0];
  return finish(graph, node);
}

int32_t vlm_graph_scale_rows(vlm_graph *graph, int32_t x, int32_t scales, const char *name, ...) {
  int32_t inputs[2] = {x, scales};
  BUILD(VLM_OP_SCALE_ROWS, inputs, 2);
  const vlm_node *x_node = input_node(graph, node, 0), *scales_node = input_node(graph, node, 1);
  if (x_node->rank < 1 || scales_node->rank != 1 || scales_node->dtype != VLM_DTYPE_F32 ||
      scales_node->shape[0] != x_node->shape[0])
    return shape_error(graph, node, "needs x [rows, ...] and f32 scales [rows]");
  copy_shape(node, x_node);
  return finish(graph, node);
}

int32_t vlm_graph_moe(vlm_graph *graph, int32_t x, int32_t router_logits, int32_t gate_up, int32_t down,
                      const vlm_moe_options *options, const char *name, ...) {
  int32_t inputs[4] = {x, router_logits, gate_up, down};
  BUILD(VLM_OP_MOE, inputs, 4);
  const vlm_node *x_node = input_node(graph, node, 0), *logits = input_node(graph, node, 1);
  const vlm_node *gate_up_node = input_node(graph, node, 2), *down_node = input_node(graph, node, 3);
  if (x_node->rank != 2 || logits->rank != 2 || logits->shape[0] != x_node->shape[0])
    return shape_error(graph, node, "needs x [rows, hidden] and router logits [rows, experts]");
  int64_t rows = x_node->shape[0], hidden = x_node->shape[1], experts = logits->shape[1];
  if (options->top_k < 1 || options->top_k > experts)
    return shape_error(graph, node, "needs 1 <= top_k <= experts");
  if (gate_up_node->rank != 3 || down_node->rank != 3 || gate_up_node->shape[0] != experts ||
      down_node->shape[0] != experts)
    return shape_error(graph, node, "needs gate_up and down [experts, ., .] for the router's experts");
  int64_t gate_up_out = options->gate_up_transposed ? gate_up_node->shape[2] : gate_up_node->shape[1];
  int64_t gate_up_in = options->gate_up_transposed ? gate_up_node->shape[1] : gate_up_node->shape[2];
  int64_t down_out = options->down_transposed ? down_node->shape[2] : down_node->shape[1];
  int64_t down_in = options->down_transposed ? down_node->shape[1] : down_node->shape[2];
  if (gate_up_in != hidden || down_out != hidden || gate_up_out != 2 * down_in || down_in < 1)
    return shape_error(graph, node, "needs gate_up [experts, 2I, hidden] and down [experts, hidden, I] "
                                    "(or their [in, out] transposes)");
  node->rank = 2;
  node->shape[0] = rows;
  node->shape[1] = hidden;
  node->params.moe.top_k = options->top_k;
  node->params.moe.normalize = options->normalize;
  node->params.moe.activation = options->activation;
  node->params.moe.gate_up_transposed = options->gate_up_transposed;
  node->params.moe.down_transposed = options->down_transposed;
  return finish(graph, node);
}

/* ---------------------------------------------------------------------- */
/* Encoder operations                                                      */
/* ---------------------------------------------------------------------- */

int32_t vlm_graph_average_pool(vlm_graph *graph, int32_t x, int64_t images, int64_t height, int64_t width,
                               int64_t kernel, const char *name, ...) {
  BUILD(VLM_OP_AVERAGE_POOL, &x, 1);
  const vlm_node *x_node = input_node(graph, node, 0);
  if (x_node->rank != 2 || images < 1 || height < 1 || width < 1 || kernel < 1 || kernel > height ||
      kernel > width || x_node->shape[0] != images * height * width)
    return shape_error(graph, node, "needs [images * height * width, channels] and a kernel within the grid");
  node->rank = 2;
  node->shape[0] = images * (height / kernel) * (width / kernel);
  node->shape[1] = x_node->shape[1];
  node->params.pool.images = images;
  node->params.pool.height = height;
  node->params.pool.width = width;
  node->params.pool.kernel = kernel;
  return finish(graph, node);
}

/* The shared build of every form: the key mask and the causal flags are
 * integer row inputs after segments, in that order, each when given. */
static bool row_input_ok(vlm_graph *graph, vlm_node *node, int index, int64_t rows, const char *what) {
  const vlm_node *input = input_node(graph, node, index);
  if (input->rank == 1 && input->dtype == VLM_DTYPE_I32 && input->shape[0] == rows) return true;
  shape_error(graph, node, what);
  return false;
}

static vlm_node *segment_attention_node(vlm_graph *graph, vlm_node *node, double scale, bool key_mask,
                                        bool causal) {
  const vlm_node *q = input_node(graph, node, 0), *k = input_node(graph, node, 1),
                 *v = input_node(graph, node, 2);
  if (q->rank != 3 || !same_shape(q, k) || !same_shape(q, v)) {
    shape_error(graph, node, "needs q, k, v of one shape [rows, heads, dim]");
    return NULL;
  }
  int64_t rows = q->shape[0];
  int32_t next = 4;
  if (!row_input_ok(graph, node, 3, rows, "needs i32 segment ids [rows]")) return NULL;
  node->params.segment_attention.key_mask = key_mask ? next++ : 0;
  node->params.segment_attention.causal = causal ? next++ : 0;
  if (key_mask && !row_input_ok(graph, node, node->params.segment_attention.key_mask, rows,
                                "needs an i32 key mask [rows]"))
    return NULL;
  if (causal && !row_input_ok(graph, node, node->params.segment_attention.causal, rows,
                              "needs i32 causal flags [rows]"))
    return NULL;
  node->rank = 2;
  node->shape[0] = rows;
  node->shape[1] = q->shape[1] * q->shape[2];
  node->params.segment_attention.scale = scale;
  return node;
}

int32_t vlm_graph_segment_attention(vlm_graph *graph, int32_t query, int32_t key, int32_t value,
                                    int32_t segments, double scale, const char *name, ...) {
  int32_t inputs[4] = {query, key, value, segments};
  BUILD(VLM_OP_SEGMENT_ATTENTION, inputs, 4);
  if (!segment_attention_node(graph, node, scale, false, false)) return -1;
  return finish(graph, node);
}

int32_t vlm_graph_segment_attention_masked(vlm_graph *graph, int32_t query, int32_t key, int32_t value,
                                           int32_t segments, int32_t key_mask, double scale, const char *name, ...) {
  int32_t inputs[5] = {query, key, value, segments, key_mask};
  BUILD(VLM_OP_SEGMENT_ATTENTION, inputs, 5);
  if (!segment_attention_node(graph, node, scale, true, false)) return -1;
  return finish(graph, node);
}

int32_t vlm_graph_segment_attention_causal(vlm_graph *graph, int32_t query, int32_t key, int32_t value,
                                           int32_t segments, int32_t key_mask, int32_t causal, double scale,
                                           const char *name, ...) {
  int32_t inputs[6] = {query, key, value, segments}, count = 4;
  if (key_mask >= 0) inputs[count++] = key_mask;
  if (causal >= 0) inputs[count++] = causal;
  BUILD(VLM_OP_SEGMENT_ATTENTION, inputs, count);
  if (!segment_attention_node(graph, node, scale, key_mask >= 0, causal >= 0)) return -1;
  return finish(graph, node);
}

int32_t vlm_graph_conv2d(vlm_graph *graph, int32_t x, int32_t weight, int32_t bias, const int64_t stride[2],
                         const int64_t padding[4], int64_t groups, const char *name, ...) {
  int32_t inputs[3] = {x, weight, bias};
  BUILD(VLM_OP_CONV2D, inputs, bias >= 0 ? 3 : 2);
  const vlm_node *x_node = input_node(graph, node, 0), *w = input_node(graph, node, 1);
  if (x_node->rank != 4 || w->rank != 4 || groups < 1 || stride[0] < 1 || stride[1] < 1)
    return shape_error(graph, node, "needs x [batch, height, width, channels], weight [out, in/groups, kh, kw], "
                                    "strides >= 1 and groups >= 1");
  int64_t in = x_node->shape[3], out = w->shape[0];
  if (in % groups != 0 || out % groups != 0 || w->shape[1] != in / groups)
    return shape_error(graph, node, "the weight's channels do not match the input's and the groups");
  for (int i = 0; i < 4; i++)
    if (padding[i] < 0) return shape_error(graph, node, "negative padding");
  int64_t height = x_node->shape[1] + padding[0] + padding[1] - w->shape[2];
  int64_t width = x_node->shape[2] + padding[2] + padding[3] - w->shape[3];
  if (height < 0 || width < 0) return shape_error(graph, node, "the kernel is larger than the padded input");
  if (bias >= 0) {
    const vlm_node *bias_node = input_node(graph, node, 2);
    if (bias_node->rank != 1 || bias_node->shape[0] != out)
      return shape_error(graph, node, "bias does not match the output channels");
  }
  node->rank = 4;
  node->shape[0] = x_node->shape[0];
  node->shape[1] = height / stride[0] + 1;
  node->shape[2] = width / stride[1] + 1;
  node->shape[3] = out;
  memcpy(node->params.conv.stride, stride, sizeof(node->params.conv.stride));
  memcpy(node->params.conv.padding, padding, sizeof(node->params.conv.padding));
  node->params.conv.groups = groups;
  return finish(graph, node);
}

int32_t vlm_graph_permute(vlm_graph *graph, int32_t x, const int32_t *axes, const char *name, ...) {
  BUILD(VLM_OP_PERMUTE, &x, 1);
  const vlm_node *x_node = input_node(graph, node, 0);
  bool seen[VLM_MAX_DIMS] = {false};
  node->rank = x_node->rank;
  for (int i = 0; i < x_node->rank; i++) {
    if (axes[i] < 0 || axes[i] >= x_node->rank || seen[axes[i]])
      return shape_error(graph, node, "the axes are not a permutation of the input's dimensions");
    seen[axes[i]] = true;
    node->params.permute.axes[i] = axes[i];
    node->shape[i] = x_node->shape[axes[i]];
  }
  return finish(graph, node);
}

int32_t vlm_graph_biased_attention(vlm_graph *graph, int32_t query, int32_t key, int32_t value, int32_t bias,
                                   double scale, const char *name, ...) {
  int32_t inputs[4] = {query, key, value, bias};
  BUILD(VLM_OP_BIASED_ATTENTION, inputs, 4);
  const vlm_node *q = input_node(graph, node, 0), *k = input_node(graph, node, 1),
                 *v = input_node(graph, node, 2), *b = input_node(graph, node, 3);
  if (q->rank != 3 || !same_shape(q, k) || !same_shape(q, v))
    return shape_error(graph, node, "needs q, k, v of one shape [rows, heads, dim]");
  if (b->rank != 3 || b->dtype != VLM_DTYPE_F32 || b->shape[0] != q->shape[1] || b->shape[1] != b->shape[2] ||
      b->shape[1] < 1 || q->shape[0] % b->shape[1] != 0)
    return shape_error(graph, node, "needs an f32 bias [heads, block, block] with rows a multiple of block");
  node->rank = 2;
  node->shape[0] = q->shape[0];
  node->shape[1] = q->shape[1] * q->shape[2];
  node->params.biased_attention.scale = scale;
  return finish(graph, node);
}

/* The parameters that change what a node computes, for the listing. */
static void format_parameters(vlm_string_builder *out, const vlm_node *node) {
  switch (node->op) {
    case VLM_OP_SCALE: vlm_sb_appendf(out, " scalar=%.17g", node->params.scale.scalar); break;
    case VLM_OP_RMS_NORM:
    case VLM_OP_LAYER_NORM:
      vlm_sb_appendf(out, " eps=%.17g offset=%.17g", node->params.norm.epsilon, node->params.norm.weight_offset);
      break;
    case VLM_OP_ACTIVATION:
    case VLM_OP_GATED: vlm_sb_appendf(out, " activation=%d", (int)node->params.activation.activation); break;
    case VLM_OP_SOFTCAP: vlm_sb_appendf(out, " cap=%.17g", node->params.softcap.cap); break;
    case VLM_OP_UNARY:
      vlm_sb_appendf(out, " unary=%d low=%.17g high=%.17g", (int)node->params.unary.kind, node->params.unary.low,
                     node->params.unary.high);
      break;
    case VLM_OP_ROW_MOMENT:
      vlm_sb_appendf(out, " std=%d correction=%d", (int)node->params.moment.std, (int)node->params.moment.correction);
      break;
    case VLM_OP_CROSS_ATTENTION: vlm_sb_appendf(out, " scale=%.17g", node->params.cross_attention.scale); break;
    case VLM_OP_ROPE: vlm_sb_appendf(out, " rope=%d", node->params.rope.rope_index); break;
    case VLM_OP_ATTENTION:
      vlm_sb_appendf(out, " layer=%d kv_heads=%d head_dim=%d scale=%.17g window=%lld softcap=%.17g",
                     node->params.attention.layer, node->params.attention.kv_heads,
                     node->params.attention.head_dim, node->params.attention.scale,
                     (long long)node->params.attention.sliding_window, node->params.attention.softcap);
      break;
    case VLM_OP_SELECT_ROWS:
      vlm_sb_append_literal(out, " rows=");
      for (int64_t i = 0; i < node->params.select.count; i++)
        vlm_sb_appendf(out, "%s%d", i ? "," : "", node->params.select.rows[i]);
      break;
    case VLM_OP_CONCAT: vlm_sb_appendf(out, " axis=%d", node->params.concat.axis); break;
    case VLM_OP_SLICE:
      vlm_sb_appendf(out, " axis=%d start=%lld", node->params.slice.axis, (long long)node->params.slice.start);
      break;
    case VLM_OP_SEGMENT_ATTENTION:
      vlm_sb_appendf(out, " scale=%.17g key_mask=%d causal=%d", node->params.segment_attention.scale,
                     node->params.segment_attention.key_mask, node->params.segment_attention.causal);
      break;
    case VLM_OP_MOE:
      vlm_sb_appendf(out, " top_k=%d normalize=%d activation=%d transposed=%d,%d", node->params.moe.top_k,
                     node->params.moe.normalize, (int)node->params.moe.activation,
                     node->params.moe.gate_up_transposed, node->params.moe.down_transposed);
      break;
    case VLM_OP_AVERAGE_POOL:
      vlm_sb_appendf(out, " images=%lld grid=%lldx%lld kernel=%lld", (long long)node->params.pool.images,
                     (long long)node->params.pool.height, (long long)node->params.pool.width,
                     (long long)node->params.pool.kernel);
      break;
    case VLM_OP_CONV2D:
      vlm_sb_appendf(out, " stride=%lld,%lld padding=%lld,%lld,%lld,%lld groups=%lld",
                     (long long)node->params.conv.stride[0], (long long)node->params.conv.stride[1],
                     (long long)node->params.conv.padding[0], (long long)node->params.conv.padding[1],
                     (long long)node->params.conv.padding[2], (long long)node->params.conv.padding[3],
                     (long long)node->params.conv.groups);
      break;
    case VLM_OP_PERMUTE:
      vlm_sb_append_literal(out, " axes=");
      for (int i = 0; i < node->rank; i++) vlm_sb_appendf(out, "%s%d", i ? "," : "", node->params.permute.axes[i]);
      break;
    case VLM_OP_BIASED_ATTENTION: vlm_sb_appendf(out, " scale=%.17g", node->params.biased_attention.scale); break;
    default: break;
  }
}

static void format_rope(vlm_string_builder *out, int index, const vlm_rope_config *rope) {
  vlm_sb_appendf(out, "rope %d: type=%s theta=%.17g factor=%.17g dim=%lld axial=%d", index,
                 vlm_rope_type_name(rope->type), rope->theta, rope->factor, (long long)rope->rotary_dimension,
                 rope->axial_axes);
  vlm_sb_appendf(out, " low=%.17g high=%.17g original=%lld attention=%.17g beta=%.17g,%.17g truncate=%d",
                 rope->low_freq_factor, rope->high_freq_factor, (long long)rope->original_max_position_embeddings,
                 rope->attention_factor, rope->beta_fast, rope->beta_slow, rope->truncate);
  for (size_t i = 0; i < rope->longrope_factor_count; i++)
    vlm_sb_appendf(out, "%s%.17g/%.17g", i ? "," : " longrope=", rope->short_factor[i], rope->long_factor[i]);
  for (size_t i = 0; i < rope->mrope_section_count; i++)
    vlm_sb_appendf(out, "%s%lld", i ? "," : " mrope=", (long long)rope->mrope_section[i]);
  vlm_sb_appendf(out, " interleaved=%d\n", rope->mrope_interleaved);
}

char *vlm_graph_format(const vlm_graph *graph) {
  vlm_string_builder out = {0};
  char shape_text[160];
  for (int32_t i = 0; i < graph->count; i++) {
    const vlm_node *node = &graph->nodes[i];
    vlm_sb_appendf(&out, "%%%d = %s %s %s %s", i, vlm_op_name(node->op), node->name,
                   vlm_dtype_name(node->dtype),
                   vlm_shape_format(node->shape, node->rank, shape_text, sizeof(shape_text)));
    for (int k = 0; k < node->input_count; k++)
      vlm_sb_appendf(&out, "%s%%%d", k ? ", " : " <- ", node->inputs[k]);
    format_parameters(&out, node);
    vlm_sb_append_literal(&out, "\n");
  }
  for (int32_t i = 0; i < graph->rope_count; i++)
    if (graph->ropes[i]) format_rope(&out, i, graph->ropes[i]);
  return vlm_sb_finish(&out);
}

vlm_status vlm_graph_check_inputs(const vlm_graph *graph, const vlm_tensor_list *tensors,
                                   const char *const *implicit, int implicit_count) {
  for (int32_t i = 0; i < graph->count; i++) {
    const vlm_node *node = &graph->nodes[i];
    if (node->op != VLM_OP_INPUT) continue;
    bool bound_elsewhere = false;
    for (int k = 0; k < implicit_count && !bound_elsewhere; k++) bound_elsewhere = strcmp(node->name, implicit[k]) == 0;
    if (bound_elsewhere) continue;
    const vlm_named_tensor *tensor = vlm_tensor_list_find(tensors, node->name);
    if (!tensor) return VLM_ERROR(INVALID_ARGUMENT, "graph input '%s' was not provided", node->name);
    bool same = tensor->dtype == node->dtype && tensor->rank == node->rank;
    for (int d = 0; same && d < node->rank; d++) same = tensor->shape[d] == node->shape[d];
    if (!same) {
      char want[160], got[160];
      return VLM_ERROR(INVALID_ARGUMENT, "graph input '%s': the graph takes %s %s, given %s %s", node->name,
                       vlm_dtype_name(node->dtype), vlm_shape_format(node->shape, node->rank, want, sizeof(want)),
                       vlm_dtype_name(tensor->dtype), vlm_shape_format(tensor->shape, tensor->rank, got, sizeof(got)));
    }
  }
  return VLM_OK;
}

/* ---- General elementwise, row statistics, activation matmul ----------- */

static int32_t unary(vlm_graph *graph, vlm_node *node, vlm_unary kind, double low, double high) {
  const vlm_node *x = input_node(graph, node, 0);
  if (x->dtype != VLM_DTYPE_F32) return shape_error(graph, node, "needs f32 values");
  if (kind == VLM_UNARY_CLAMP && !(low <= high)) return shape_error(graph, node, "clamp needs low <= high");
  copy_shape(node, x);
  node->params.unary.kind = kind;
  node->params.unary.low = low;
  node->params.unary.high = high;
  return finish(graph, node);
}

int32_t vlm_graph_tanh(vlm_graph *graph, int32_t x, const char *name, ...) {
  BUILD(VLM_OP_UNARY, &x, 1);
  return unary(graph, node, VLM_UNARY_TANH, 0, 0);
}

int32_t vlm_graph_softplus(vlm_graph *graph, int32_t x, const char *name, ...) {
  BUILD(VLM_OP_UNARY, &x, 1);
  return unary(graph, node, VLM_UNARY_SOFTPLUS, 0, 0);
}

int32_t vlm_graph_clamp(vlm_graph *graph, int32_t x, double low, double high, const char *name, ...) {
  BUILD(VLM_OP_UNARY, &x, 1);
  return unary(graph, node, VLM_UNARY_CLAMP, low, high);
}

static int32_t row_moment(vlm_graph *graph, vlm_node *node, bool std, int32_t correction) {
  const vlm_node *x = input_node(graph, node, 0);
  if (x->dtype != VLM_DTYPE_F32 || x->rank < 1) return shape_error(graph, node, "needs f32 rows");
  if (correction < 0 || x->shape[x->rank - 1] <= correction)
    return shape_error(graph, node, "rows too short for the correction");
  copy_shape(node, x);
  node->params.moment.std = std;
  node->params.moment.correction = correction;
  return finish(graph, node);
}

int32_t vlm_graph_row_mean(vlm_graph *graph, int32_t x, const char *name, ...) {
  BUILD(VLM_OP_ROW_MOMENT, &x, 1);
  return row_moment(graph, node, false, 0);
}

int32_t vlm_graph_row_std(vlm_graph *graph, int32_t x, int32_t correction, const char *name, ...) {
  BUILD(VLM_OP_ROW_MOMENT, &x, 1);
  return row_moment(graph, node, true, correction);
}

int32_t vlm_graph_matmul(vlm_graph *graph, int32_t a, int32_t b, const char *name, ...) {
  int32_t inputs[2] = {a, b};
  BUILD(VLM_OP_MATMUL, inputs, 2);
  const vlm_node *x = input_node(graph, node, 0), *y = input_node(graph, node, 1);
  if (x->dtype != VLM_DTYPE_F32 || y->dtype != VLM_DTYPE_F32 || x->rank != y->rank || x->rank < 2 || x->rank > 3)
    return shape_error(graph, node, "needs two f32 operands of rank 2 or 3");
  int r = x->rank;
  if ((r == 3 && x->shape[0] != y->shape[0]) || x->shape[r - 1] != y->shape[r - 2])
    return shape_error(graph, node, "operand shapes do not fit a matmul");
  copy_shape(node, x);
  node->shape[r - 1] = y->shape[r - 1];
  return finish(graph, node);
}

int32_t vlm_graph_cross_attention(vlm_graph *graph, int32_t query, int32_t key, int32_t value, double scale,
                                  const char *name, ...) {
  int32_t inputs[3] = {query, key, value};
  BUILD(VLM_OP_CROSS_ATTENTION, inputs, 3);
  const vlm_node *q = input_node(graph, node, 0), *k = input_node(graph, node, 1), *v = input_node(graph, node, 2);
  if (q->dtype != VLM_DTYPE_F32 || k->dtype != VLM_DTYPE_F32 || v->dtype != VLM_DTYPE_F32 || q->rank != 3 ||
      k->rank != 3 || v->rank != 3)
    return shape_error(graph, node, "needs f32 query, key and value of rank 3");
  if (k->shape[0] != v->shape[0] || k->shape[1] != v->shape[1] || q->shape[2] != k->shape[2] || k->shape[1] <= 0 ||
      q->shape[1] % k->shape[1] != 0)
    return shape_error(graph, node, "query, key and value shapes do not fit");
  node->rank = 2;
  node->shape[0] = q->shape[0];
  node->shape[1] = q->shape[1] * v->shape[2];
  node->params.cross_attention.scale = scale;
  return finish(graph, node);
}
