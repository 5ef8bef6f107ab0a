#include "backends/cpu_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu_moe.h"
#include "backends/cpu_packs.h"
#include "core/alloc.h"
#include "core/status.h"

/* Where a node's value lives. Computed nodes own a buffer; reshapes alias
 * their input's; weights and inputs point at memory the caller owns. */
typedef struct node_value {
  const void *data;
  vlm_dtype dtype;
  int32_t owner;        /* node whose buffer this is (itself unless aliased) */
  float *buffer;        /* owned buffer (computed nodes only) */
  size_t capacity;      /* floats in buffer */
  int32_t uses_left;    /* consumers of every node sharing this owner */
} node_value;

typedef struct free_buffer {
  float *buffer;
  size_t capacity;
} free_buffer;

typedef struct executor {
  const vlm_cpu_graph_run *run;
  const vlm_graph *graph;
  node_value *values;
  free_buffer *free_list;
  int32_t free_count;
  /* Per RoPE parameter set: cos [rows, rotary/2] then sin, on first use. */
  float *rope_cos_sin[VLM_GRAPH_MAX_ROPES];
} executor;

static int64_t element_count(const vlm_node *node) {
  int64_t count = 1;
  for (int i = 0; i < node->rank; i++) count *= node->shape[i];
  return count;
}

static const float *input_f32(const executor *state, const vlm_node *node, int which) {
  return state->values[node->inputs[which]].data;
}

/* ---------------------------------------------------------------------- */
/* Buffers                                                                 */
/* ---------------------------------------------------------------------- */

static vlm_status take_buffer(executor *state, int32_t index, size_t floats) {
  node_value *value = &state->values[index];
  for (int32_t i = 0; i < state->free_count; i++) {
    if (state->free_list[i].capacity < floats) continue;
    value->buffer = state->free_list[i].buffer;
    value->capacity = state->free_list[i].capacity;
    state->free_list[i] = state->free_list[--state->free_count];
    value->data = value->buffer;
    return VLM_OK;
  }
  value->buffer = vlm_allocate(NULL, (floats ? floats : 1) * sizeof(float), VLM_DEFAULT_ALIGNMENT);
  if (!value->buffer)
    return VLM_ERROR(RESOURCE_EXHAUSTED, "graph node '%s': out of memory for %zu floats",
                     state->graph->nodes[index].name, floats);
  value->capacity = floats;
  value->data = value->buffer;
  return VLM_OK;
}

static void give_back(executor *state, int32_t owner) {
  node_value *value = &state->values[owner];
  if (!value->buffer) return;
  state->free_list[state->free_count++] = (free_buffer){value->buffer, value->capacity};
  value->buffer = NULL;
}

/* Counts consumers per owning buffer so buffers return to the free list
 * after their last use. The graph output is never recycled. */
static void plan_lifetimes(executor *state) {
  const vlm_graph *graph = state->graph;
  for (int32_t i = 0; i < graph->count; i++) {
    const vlm_node *node = &graph->nodes[i];
    state->values[i].owner = node->op == VLM_OP_RESHAPE ? state->values[node->inputs[0]].owner : i;
  }
  for (int32_t i = 0; i < graph->count; i++) {
    const vlm_node *node = &graph->nodes[i];
    for (int k = 0; k < node->input_count; k++)
      state->values[state->values[node->inputs[k]].owner].uses_left++;
  }
  if (graph->output >= 0) state->values[state->values[graph->output].owner].uses_left++;
}

static void release_inputs(executor *state, const vlm_node *node) {
  for (int k = 0; k < node->input_count; k++) {
    int32_t owner = state->values[node->inputs[k]].owner;
    if (--state->values[owner].uses_left == 0) give_back(state, owner);
  }
}

/* ---------------------------------------------------------------------- */
/* Leaves                                                                  */
/* ---------------------------------------------------------------------- */

/* A linear weight `X.weight` of a GPTQ/AWQ checkpoint is stored as
 * X.qweight, X.qzeros, X.scales (cpu_hub_quant.h): bound as its qweight
 * with the dtype I32, which only a linear accepts (it packs the layer
 * through the store). Layers left unquantized are plain X.weight. */
static bool bind_hub_weight(executor *state, int32_t index) {
  const vlm_node *node = &state->graph->nodes[index];
  size_t length = strlen(node->name);
  if (!state->run->packs || !vlm_cpu_packs_hub_quantization(state->run->packs) || node->rank != 2 || length < 7 ||
      strcmp(node->name + length - 7, ".weight") != 0 || length > 500)
    return false;
  char name[512];
  snprintf(name, sizeof(name), "%.*sqweight", (int)(length - 6), node->name);
  const vlm_tensor_info *qweight = vlm_checkpoint_find(state->run->weights, name);
  if (!qweight) return false;
  state->values[index].data = qweight->data;
  state->values[index].dtype = VLM_DTYPE_I32;
  return true;
}

static vlm_status bind_weight(executor *state, int32_t index) {
  const vlm_node *node = &state->graph->nodes[index];
  vlm_tensor view;
  vlm_status found = vlm_checkpoint_get(state->run->weights, node->name, VLM_DTYPE_INVALID, node->rank, node->shape,
                                        &view);
  if (vlm_status_code_of(found) == VLM_STATUS_NOT_FOUND && bind_hub_weight(state, index)) {
    vlm_status_free(found);
    return VLM_OK;
  }
  VLM_RETURN_IF_ERROR(found);
  if (view.dtype != VLM_DTYPE_F32 && view.dtype != VLM_DTYPE_BF16 && view.dtype != VLM_DTYPE_F16)
    return VLM_ERROR(UNIMPLEMENTED, "tensor '%s' has dtype %s; the cpu backend reads f32, bf16 and f16",
                     node->name, vlm_dtype_name(view.dtype));
  state->values[index].data = view.data;
  state->values[index].dtype = view.dtype;
  if (state->run->weight_observer)
    state->run->weight_observer(state->run->weight_observer_context, node->name, &view);
  return VLM_OK;
}

static vlm_status bind_input(executor *state, int32_t index) {
  const vlm_node *node = &state->graph->nodes[index];
  const void *data = NULL;
  if (strcmp(node->name, "tokens") == 0) data = state->run->tokens;
  else if (strcmp(node->name, "features") == 0) data = state->run->features;
  else if (strcmp(node->name, "feature_mask") == 0) data = state->run->feature_mask;
  const vlm_named_tensor *tensor = !data && state->run->inputs ? vlm_tensor_list_find(state->run->inputs, node->name)
                                                                : NULL;
  if (tensor) {
    bool same = tensor->dtype == node->dtype && tensor->rank == node->rank;
    for (int d = 0; same && d < node->rank; d++) same = tensor->shape[d] == node->shape[d];
    if (!same) return VLM_ERROR(INVALID_ARGUMENT, "graph input '%s' does not have the node's dtype and shape", node->name);
    data = tensor->data;
  }
  if (!data)
    return VLM_ERROR(INVALID_ARGUMENT, "graph input '%s' was not provided", node->name);
  state->values[index].data = data;
  state->values[index].dtype = node->dtype;
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Operations                                                              */
/* ---------------------------------------------------------------------- */

static cpu_activation to_cpu_activation(vlm_activation activation) {
  switch (activation) {
    case VLM_ACTIVATION_SILU: return CPU_ACTIVATION_SILU;
    case VLM_ACTIVATION_GELU: return CPU_ACTIVATION_GELU;
    case VLM_ACTIVATION_GELU_TANH: return CPU_ACTIVATION_GELU_TANH;
    case VLM_ACTIVATION_QUICK_GELU: return CPU_ACTIVATION_QUICK_GELU;
    case VLM_ACTIVATION_RELU: return CPU_ACTIVATION_RELU;
  }
  return CPU_ACTIVATION_SILU;
}

/* The packed GPTQ/AWQ layer behind a weight bound by bind_hub_weight. */
static vlm_status hub_linear(const vlm_cpu_graph_run *run, const vlm_node *weight_node, const node_value *weight,
                             const node_value *bias, const cpu_packed_linear **out_packed) {
  char prefix[512];
  snprintf(prefix, sizeof(prefix), "%.*s", (int)(strlen(weight_node->name) - 6), weight_node->name);
  return vlm_cpu_packs_get_hub(run->packs, run->pool, run->weights, prefix, weight->data, weight_node->shape[0],
                               weight_node->shape[1], bias ? bias->data : NULL, bias ? bias->dtype : VLM_DTYPE_F32,
                               out_packed);
}

static vlm_status run_linear(executor *state, const vlm_node *node, float *out) {
  const node_value *weight = &state->values[node->inputs[1]];
  const vlm_node *weight_node = &state->graph->nodes[node->inputs[1]];
  const node_value *bias = node->input_count > 2 ? &state->values[node->inputs[2]] : NULL;
  if (weight->dtype == VLM_DTYPE_I32) {
    const cpu_packed_linear *packed = NULL;
    VLM_RETURN_IF_ERROR(hub_linear(state->run, weight_node, weight, bias, &packed));
    return cpu_linear_packed(state->run->pool, packed, input_f32(state, node, 0), node->shape[0], out);
  }
  if (bias && bias->dtype != weight->dtype)
    return VLM_ERROR(UNIMPLEMENTED, "graph node '%s': bias dtype %s differs from weight dtype %s",
                     node->name, vlm_dtype_name(bias->dtype), vlm_dtype_name(weight->dtype));
  cpu_linear_weights weights = {weight->dtype, weight->data, bias ? bias->data : NULL,
                                weight_node->shape[0], weight_node->shape[1]};
  if (!state->run->packs)
    return cpu_linear(state->run->pool, &weights, input_f32(state, node, 0), node->shape[0], out);
  const cpu_packed_linear *packed = NULL;
  VLM_RETURN_IF_ERROR(vlm_cpu_packs_get(state->run->packs, state->run->pool, &weights, state->run->weights, &packed));
  return cpu_linear_packed(state->run->pool, packed, input_f32(state, node, 0), node->shape[0], out);
}

/* Norms and element-wise nodes of prefill-sized tensors run on the pool:
 * rows (norms) or elements are independent, each computed by the same
 * operations wherever it falls, so splitting changes nothing but the time
 * (single-threaded, they were ~7% of a 2-thread bf16 prefill's CPU time,
 * the other worker waiting). Below these sizes one thread does it all. */
#define PARALLEL_NORM_ROWS 16
#define ELEMENTWISE_GRAIN 16384

typedef struct norm_job {
  const executor *state;
  const vlm_node *node;
  const float *x;
  int64_t width;
  float *out;
  vlm_status status[VLM_THREAD_POOL_MAX_THREADS];
} norm_job;

static void norm_rows(void *context, int64_t begin, int64_t end, int worker) {
  norm_job *job = context;
  const vlm_node *node = job->node;
  const node_value *weight = &job->state->values[node->inputs[1]];
  const float *x = job->x + begin * job->width;
  float *out = job->out + begin * job->width;
  float eps = (float)node->params.norm.epsilon;
  vlm_status status =
      node->op == VLM_OP_LAYER_NORM
          ? cpu_layer_norm(x, end - begin, job->width, weight->data, job->state->values[node->inputs[2]].data,
                           weight->dtype, eps, out)
          : cpu_rms_norm(x, end - begin, job->width, weight->data, weight->dtype, eps,
                         node->params.norm.weight_offset == 1.0, out);
  if (status && !job->status[worker]) job->status[worker] = status;
  else vlm_status_free(status);
}

static vlm_status run_norm(executor *state, const vlm_node *node, float *out) {
  const vlm_node *x = &state->graph->nodes[node->inputs[0]];
  int64_t width = x->shape[x->rank - 1], rows = element_count(x) / width;
  const node_value *weight = &state->values[node->inputs[1]];
  if (node->op == VLM_OP_LAYER_NORM && state->values[node->inputs[2]].dtype != weight->dtype)
    return VLM_ERROR(UNIMPLEMENTED, "graph node '%s': weight and bias dtypes differ", node->name);
  norm_job *job = vlm_allocate(NULL, sizeof(*job), VLM_DEFAULT_ALIGNMENT);
  if (!job) return VLM_ERROR(RESOURCE_EXHAUSTED, "graph node '%s': out of memory", node->name);
  memset(job, 0, sizeof(*job));
  job->state = state, job->node = node, job->x = input_f32(state, node, 0), job->width = width, job->out = out;
  if (rows <= 0) norm_rows(job, 0, rows, 0); /* the kernel's own refusal */
  else vlm_thread_pool_parallel_for(state->run->pool, rows, PARALLEL_NORM_ROWS, norm_rows, job);
  vlm_status status = VLM_OK;
  for (int i = 0; i < VLM_THREAD_POOL_MAX_THREADS; i++) {
    if (job->status[i] && !status) status = job->status[i];
    else vlm_status_free(job->status[i]);
  }
  vlm_release(NULL, job);
  return status;
}

static vlm_status run_gather(executor *state, const vlm_node *node, float *out) {
  const node_value *table = &state->values[node->inputs[0]];
  const vlm_node *table_node = &state->graph->nodes[node->inputs[0]];
  const vlm_node *ids_node = &state->graph->nodes[node->inputs[1]];
  if (ids_node->dtype != VLM_DTYPE_I32)
    return VLM_ERROR(UNIMPLEMENTED, "graph node '%s': ids must be i32", node->name);
  return cpu_embedding(table->data, table->dtype, table_node->shape[0], table_node->shape[1],
                       state->values[node->inputs[1]].data, ids_node->shape[0], 1.0f, out);
}

/* Where a rope node's positions come from: its own integer input [axes,
 * rows], or the step's rows. */
typedef struct rope_positions {
  int64_t *owned;          /* widened copy of an input's i32 positions */
  const int64_t *values;   /* [axes, rows] */
  int axes;
  int64_t rows;
} rope_positions;

static vlm_status node_positions(executor *state, const vlm_node *node, rope_positions *out) {
  memset(out, 0, sizeof(*out));
  if (node->input_count < 2) {
    const vlm_row_context *rows = &state->graph->rows;
    *out = (rope_positions){NULL, rows->positions, rows->position_axes, rows->row_count};
    return out->values ? VLM_OK : VLM_ERROR(INVALID_ARGUMENT, "graph node '%s': the step has no positions", node->name);
  }
  const vlm_node *input = &state->graph->nodes[node->inputs[1]];
  const int32_t *values = state->values[node->inputs[1]].data;
  int64_t count = input->shape[0] * input->shape[1];
  out->owned = malloc((size_t)count * sizeof(int64_t));
  if (!out->owned) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; i < count; i++) out->owned[i] = values[i];
  *out = (rope_positions){out->owned, out->owned, (int)input->shape[0], input->shape[1]};
  return VLM_OK;
}

/* The number of position axes a parameter set rotates by. */
static int rope_axes(const vlm_rope_config *rope) {
  if (rope->axial_axes > 1) return rope->axial_axes;
  return rope->mrope_section_count > 0 ? 3 : 1;
}

/* The cos/sin tables of one RoPE parameter set for this step's rows: the
 * same for the q and k of every layer that uses the set (they share
 * positions: graph.h), so computed once per execution, on first use. */
static vlm_status prepare_rope(executor *state, const vlm_node *node) {
  int32_t rope_index = node->params.rope.rope_index;
  const vlm_graph *graph = state->graph;
  if (rope_index < 0 || rope_index >= graph->rope_count || !graph->ropes[rope_index])
    return VLM_ERROR(INTERNAL, "graph has no RoPE parameters #%d", rope_index);
  if (state->rope_cos_sin[rope_index]) return VLM_OK;
  const vlm_rope_config *rope = graph->ropes[rope_index];
  rope_positions positions;
  VLM_RETURN_IF_ERROR(node_positions(state, node, &positions));
  int wanted = rope_axes(rope);
  if (positions.axes != wanted) {
    free(positions.owned);
    return VLM_ERROR(INVALID_ARGUMENT, "graph node '%s': %d-axis positions given to a %d-axis RoPE", node->name,
                     positions.axes, wanted);
  }
  int64_t longest = 0;
  for (int64_t i = 0; i < positions.rows * positions.axes; i++)
    if (positions.values[i] + 1 > longest) longest = positions.values[i] + 1;
  int64_t frequencies = rope->rotary_dimension / 2;
  size_t table_floats = (size_t)(positions.rows * frequencies);
  float *inverse_frequencies = vlm_allocate(NULL, (size_t)(frequencies + 1) * sizeof(float),
                                            VLM_DEFAULT_ALIGNMENT);
  float *cos_sin = vlm_allocate(NULL, 2 * table_floats * sizeof(float) + 1, VLM_DEFAULT_ALIGNMENT);
  uint8_t *axes = wanted > 1 ? malloc((size_t)frequencies) : NULL;
  float scaling = 1.0f;
  vlm_status status = inverse_frequencies && cos_sin && (wanted == 1 || axes)
                          ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  /* Per-row sequence lengths matter only to the length-dependent types,
   * and only for rows at the step's positions (one axis). */
  const int64_t *lengths = state->graph->rows.rope_lengths;
  bool per_row = lengths && wanted == 1 && node->input_count < 2 &&
                 (rope->type == VLM_ROPE_LONGROPE || rope->type == VLM_ROPE_DYNAMIC);
  if (!status && !per_row)
    status = cpu_rope_inverse_frequencies(rope, state->run->max_position_embeddings, longest,
                                          inverse_frequencies, &scaling);
  if (!status && axes) status = cpu_rope_frequency_axes(rope, axes);
  if (!status && !per_row)
    cpu_rope_cos_sin(inverse_frequencies, frequencies, scaling, positions.values, axes, positions.rows,
                     cos_sin, cos_sin + table_floats);
  for (int64_t r = 0; !status && per_row && r < positions.rows; r++) {
    status = cpu_rope_inverse_frequencies(rope, state->run->max_position_embeddings, lengths[r],
                                          inverse_frequencies, &scaling);
    if (!status)
      cpu_rope_cos_sin(inverse_frequencies, frequencies, scaling, positions.values + r, NULL, 1,
                       cos_sin + r * frequencies, cos_sin + table_floats + r * frequencies);
  }
  vlm_release(NULL, inverse_frequencies);
  free(axes);
  free(positions.owned);
  if (status) {
    vlm_release(NULL, cos_sin);
    return status;
  }
  state->rope_cos_sin[rope_index] = cos_sin;
  return VLM_OK;
}

static vlm_status run_rope(executor *state, const vlm_node *node, float *out) {
  VLM_RETURN_IF_ERROR(prepare_rope(state, node));
  int32_t rope_index = node->params.rope.rope_index;
  const vlm_rope_config *rope = state->graph->ropes[rope_index];
  int64_t row_count = node->shape[0];
  if (node->input_count < 2 && row_count != state->graph->rows.row_count)
    return VLM_ERROR(INTERNAL, "graph node '%s' has %lld rows, the step %lld", node->name,
                     (long long)row_count, (long long)state->graph->rows.row_count);
  const float *cos_table = state->rope_cos_sin[rope_index];
  const float *sin_table = cos_table + (size_t)(row_count * (rope->rotary_dimension / 2));
  memcpy(out, input_f32(state, node, 0), (size_t)element_count(node) * sizeof(float));
  cpu_rope_apply(out, row_count, node->shape[1], node->shape[2], rope->rotary_dimension, cos_table,
                 sin_table);
  return VLM_OK;
}

/* Stores each row's K and V at its cache index, then attends per run of
 * rows that share a slot and have consecutive cache indices (a prefill chunk
 * is one run; a batched decode step is one run per row). */
static vlm_status run_attention(executor *state, const vlm_node *node, float *out) {
  const vlm_row_context *rows = &state->graph->rows;
  vlm_kv_cache *cache = state->run->cache;
  if (!cache) return VLM_ERROR(INTERNAL, "graph node '%s' needs a KV cache", node->name);
  const vlm_kv_cache_shape *cache_shape = vlm_kv_cache_get_shape(cache);
  const vlm_node *query_node = &state->graph->nodes[node->inputs[0]];
  int64_t row_count = query_node->shape[0], heads = query_node->shape[1];
  int64_t kv_heads = node->params.attention.kv_heads, head_dim = node->params.attention.head_dim;
  int32_t layer = node->params.attention.layer;
  const vlm_kv_layout *layout = vlm_kv_cache_layout(cache);
  const vlm_kv_layer *kv_layer = layer >= 0 && layer < layout->layer_count ? &layout->layers[layer] : NULL;
  /* A latent layer (MLA's absorbed form) caches one vector a token, which
   * is its key and its value both: the node's K and V are one input. */
  bool latent = kv_layer && kv_layer->latent;
  if (layer >= cache_shape->layer_count || !kv_layer || kv_layer->key_width != kv_heads * head_dim ||
      (latent ? kv_heads != 1 || node->inputs[1] != node->inputs[2] : kv_layer->value_width != kv_heads * head_dim))
    return VLM_ERROR(INTERNAL, "graph node '%s' does not fit the KV cache layout", node->name);
  size_t kv_row = (size_t)(kv_heads * head_dim);
  const float *keys = input_f32(state, node, 1), *values = input_f32(state, node, 2);
  /* A layer that reads an earlier layer's KV stores nothing: its source
   * wrote these rows earlier in the step. */
  for (int64_t r = 0; kv_layer->source < 0 && r < row_count; r++) {
    int32_t slot = rows->slots[r];
    int64_t index = rows->cache_indices[r];
    memcpy(vlm_kv_cache_keys(cache, slot, layer) + (size_t)index * kv_row, keys + (size_t)r * kv_row,
           kv_row * sizeof(float));
    if (!latent)
      memcpy(vlm_kv_cache_values(cache, slot, layer) + (size_t)index * kv_row,
             values + (size_t)r * kv_row, kv_row * sizeof(float));
  }
  const float *queries = input_f32(state, node, 0);
  size_t query_row = (size_t)(heads * head_dim);
  /* Runs of one row (decode) go to cpu_attention_decode together: one pass
   * over the pool for the whole batch, the same bits as one call each. */
  cpu_attention_row *singles = vlm_allocate(NULL, (size_t)row_count * sizeof(*singles), VLM_DEFAULT_ALIGNMENT);
  if (!singles) return VLM_ERROR(RESOURCE_EXHAUSTED, "graph node '%s': out of memory", node->name);
  int64_t single_count = 0;
  vlm_status status = VLM_OK;
  for (int64_t first = 0, last; first < row_count && !status; first = last) {
    for (last = first + 1; last < row_count && rows->slots[last] == rows->slots[first] &&
                           rows->cache_indices[last] == rows->cache_indices[last - 1] + 1;
         last++) {
    }
    int32_t slot = rows->slots[first];
    cpu_attention_shape shape = {
        .query_count = last - first, .past_count = rows->cache_indices[first],
        .head_count = heads, .kv_head_count = kv_heads, .head_dim = head_dim,
        .scale = (float)node->params.attention.scale, .soft_cap = (float)node->params.attention.softcap,
        .causal = rows->bias == NULL,
        .sliding_window = rows->row_windows && last - first == 1 && rows->row_windows[first] > 0
                              ? rows->row_windows[first] : node->params.attention.sliding_window,
        .bias = rows->bias ? rows->bias + first * rows->bias_key_count : NULL,
        .bias_stride = rows->bias_key_count};
    if (last - first == 1) {
      singles[single_count++] = (cpu_attention_row){shape, queries + (size_t)first * query_row,
                                                    vlm_kv_cache_keys(cache, slot, layer),
                                                    latent ? vlm_kv_cache_keys(cache, slot, layer)
                                                           : vlm_kv_cache_values(cache, slot, layer),
                                                    out + (size_t)first * query_row};
      continue;
    }
    status = cpu_attention(state->run->pool, &shape, queries + (size_t)first * query_row,
                           vlm_kv_cache_keys(cache, slot, layer),
                           latent ? vlm_kv_cache_keys(cache, slot, layer) : vlm_kv_cache_values(cache, slot, layer),
                           out + (size_t)first * query_row);
  }
  if (!status && single_count) status = cpu_attention_decode(state->run->pool, singles, single_count);
  vlm_release(NULL, singles);
  return status;
}

static float value_at(const node_value *value, int64_t index);

/* a + b, a * b with b repeated over a's leading dimensions (graph.h), or b
 * a weight in its own dtype. */
static bool run_broadcast(executor *state, const vlm_node *node, float *out) {
  if (node->op != VLM_OP_ADD && node->op != VLM_OP_MUL) return false;
  const node_value *b = &state->values[node->inputs[1]];
  int64_t count = element_count(node), b_count = element_count(&state->graph->nodes[node->inputs[1]]);
  if (b_count == count && b->dtype == VLM_DTYPE_F32) return false;
  const float *a = input_f32(state, node, 0);
  for (int64_t i = 0; i < count; i++) {
    float other = value_at(b, i % b_count);
    out[i] = node->op == VLM_OP_ADD ? a[i] + other : a[i] * other;
  }
  return true;
}

static const float *as_f32(executor *state, int32_t index, float **owned);

typedef struct elementwise_job {
  const vlm_node *node;
  const float *a, *b;
  float *out;
} elementwise_job;

/* Elements [begin, end) of an element-wise node. */
static void elementwise_range(void *context, int64_t begin, int64_t end, int worker) {
  (void)worker;
  const elementwise_job *job = context;
  const vlm_node *node = job->node;
  const float *a = job->a + begin, *b = job->b ? job->b + begin : NULL;
  float *out = job->out + begin;
  int64_t count = end - begin;
  switch (node->op) {
    case VLM_OP_ADD:
      for (int64_t i = 0; i < count; i++) out[i] = a[i] + b[i];
      break;
    case VLM_OP_MUL:
      for (int64_t i = 0; i < count; i++) out[i] = a[i] * b[i];
      break;
    case VLM_OP_SCALE: {
      float scalar = (float)node->params.scale.scalar;
      for (int64_t i = 0; i < count; i++) out[i] = a[i] * scalar;
      break;
    }
    case VLM_OP_ACTIVATION:
      cpu_activate(to_cpu_activation(node->params.activation.activation), a, count, out);
      break;
    case VLM_OP_GATED:
      cpu_gated_activate(to_cpu_activation(node->params.activation.activation), a, b, count, out);
      break;
    case VLM_OP_SOFTCAP:
      memcpy(out, a, (size_t)count * sizeof(float));
      cpu_soft_cap(out, count, (float)node->params.softcap.cap);
      break;
    default:
      break;
  }
}

static vlm_status run_elementwise(executor *state, const vlm_node *node, float *out) {
  if (run_broadcast(state, node, out)) return VLM_OK;
  /* A weight operand (e.g. a norm's statistics scaled) in its own dtype. */
  float *copy = NULL;
  const float *a = as_f32(state, node->inputs[0], &copy);
  if (!a) return VLM_ERROR(RESOURCE_EXHAUSTED, "graph node '%s': out of memory", node->name);
  const float *b = node->input_count > 1 ? input_f32(state, node, 1) : NULL;
  elementwise_job job = {node, a, b, out};
  vlm_thread_pool_parallel_for(state->run->pool, element_count(node), ELEMENTWISE_GRAIN, elementwise_range, &job);
  free(copy);
  return VLM_OK;
}

static void run_select_rows(executor *state, const vlm_node *node, float *out) {
  const float *x = input_f32(state, node, 0);
  size_t row_floats = (size_t)(element_count(node) / node->shape[0]);
  for (int64_t i = 0; i < node->params.select.count; i++)
    memcpy(out + (size_t)i * row_floats, x + (size_t)node->params.select.rows[i] * row_floats,
           row_floats * sizeof(float));
}

/* ---------------------------------------------------------------------- */
/* Encoder operations                                                      */
/* ---------------------------------------------------------------------- */

/* Each run of consecutive rows with one segment id attends to itself with
 * cpu_attention: its own k/v rows serve as a cache holding past_count 0
 * positions. A segment id that reappears after another one is refused
 * (graph.h: segments are consecutive). A segment whose rows are all
 * causal runs cpu_attention's causal path, one with none its non-causal
 * path; with a key mask masking some of its keys, or causal flags that
 * differ between its rows, it gets an additive bias instead: -inf in the
 * columns a row may not see (segment_bias). */

/* bias [count, count] of one segment (rows first..): per row, -inf after
 * it when causal, and -inf over the masked keys it would see unless it
 * would then see none (graph.h). */
static void segment_bias(const int32_t *key_mask, const int32_t *causal, int64_t first, int64_t count,
                         float *bias) {
  for (int64_t r = 0; r < count; r++) {
    int64_t visible = causal && causal[first + r] ? r + 1 : count;
    bool any_unmasked = false;
    for (int64_t j = 0; j < visible; j++) any_unmasked |= !key_mask || key_mask[first + j] != 0;
    for (int64_t j = 0; j < count; j++)
      bias[r * count + j] = j >= visible || (any_unmasked && key_mask && !key_mask[first + j]) ? -INFINITY : 0.0f;
  }
}

static vlm_status run_segment_attention(executor *state, const vlm_node *node, float *out) {
  const vlm_node *query_node = &state->graph->nodes[node->inputs[0]];
  int64_t rows = query_node->shape[0], heads = query_node->shape[1], dim = query_node->shape[2];
  size_t row_floats = (size_t)(heads * dim);
  const float *queries = input_f32(state, node, 0), *keys = input_f32(state, node, 1),
              *values = input_f32(state, node, 2);
  const int32_t *segments = state->values[node->inputs[3]].data;
  int32_t mask_input = node->params.segment_attention.key_mask, causal_input = node->params.segment_attention.causal;
  const int32_t *key_mask = mask_input ? state->values[node->inputs[mask_input]].data : NULL;
  const int32_t *causal = causal_input ? state->values[node->inputs[causal_input]].data : NULL;
  vlm_status status = VLM_OK;
  float *bias = NULL;
  for (int64_t first = 0, last; !status && first < rows; first = last) {
    for (last = first + 1; last < rows && segments[last] == segments[first];) last++;
    for (int64_t earlier = 0; earlier < first; earlier++)
      if (segments[earlier] == segments[first]) {
        status = VLM_ERROR(INVALID_ARGUMENT, "graph node '%s': segment %d is not one run of rows (rows %lld and %lld)",
                           node->name, segments[first], (long long)earlier, (long long)first);
        break;
      }
    if (status) break;
    int64_t count = last - first, masked = 0, causal_rows = 0;
    for (int64_t j = first; key_mask && j < last; j++) masked += key_mask[j] == 0;
    for (int64_t j = first; causal && j < last; j++) causal_rows += causal[j] != 0;
    cpu_attention_shape shape = {.query_count = count, .past_count = 0, .head_count = heads,
                                 .kv_head_count = heads, .head_dim = dim,
                                 .scale = (float)node->params.segment_attention.scale,
                                 .causal = causal_rows == count};
    /* A mask over every key of a non-causal segment is ignored; a causal
     * one's first rows may still see only masked keys, so it takes the bias. */
    bool mixed = causal_rows > 0 && causal_rows < count;
    if ((masked > 0 && (masked < count || shape.causal)) || mixed) {
      free(bias);
      bias = malloc((size_t)(count * count) * sizeof(float));
      if (!bias) {
        status = VLM_ERROR(RESOURCE_EXHAUSTED, "graph node '%s': out of memory for a key mask", node->name);
        break;
      }
      segment_bias(key_mask, causal, first, count, bias);
      shape.bias = bias;
      shape.bias_stride = count;
      shape.causal = false; /* the bias holds it */
    }
    size_t offset = (size_t)first * row_floats;
    status = cpu_attention(state->run->pool, &shape, queries + offset, keys + offset, values + offset, out + offset);
  }
  free(bias);
  return status;
}

/* Reads element i of a computed (f32) value or a weight in its own dtype. */
static float value_at(const node_value *value, int64_t index) {
  return value->dtype == VLM_DTYPE_F32 ? ((const float *)value->data)[index]
                                       : cpu_load_element(value->data, value->dtype, index);
}

/* Blocks of the inputs interleave: outer = product of the dims before the
 * axis, each input contributing shape[axis] * inner elements per block. */
static void run_concat(executor *state, const vlm_node *node, float *out) {
  int axis = node->params.concat.axis;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= node->shape[d];
  for (int d = axis + 1; d < node->rank; d++) inner *= node->shape[d];
  int64_t out_block = node->shape[axis] * inner, column = 0;
  for (int k = 0; k < node->input_count; k++) {
    const node_value *part = &state->values[node->inputs[k]];
    int64_t block = state->graph->nodes[node->inputs[k]].shape[axis] * inner;
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < block; i++) out[o * out_block + column + i] = value_at(part, o * block + i);
    column += block;
  }
}

static void run_slice(executor *state, const vlm_node *node, float *out) {
  const vlm_node *x = &state->graph->nodes[node->inputs[0]];
  const node_value *value = &state->values[node->inputs[0]];
  int axis = node->params.slice.axis;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= x->shape[d];
  for (int d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
  int64_t length = node->shape[axis] * inner, stride = x->shape[axis] * inner, start = node->params.slice.start * inner;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < length; i++) out[o * length + i] = value_at(value, o * stride + start + i);
}

static void run_row_select(executor *state, const vlm_node *node, float *out) {
  const int32_t *mask = state->values[node->inputs[0]].data;
  const node_value *a = &state->values[node->inputs[1]], *b = &state->values[node->inputs[2]];
  int64_t rows = node->shape[0], width = element_count(node) / (rows ? rows : 1);
  for (int64_t r = 0; r < rows; r++) {
    const node_value *source = mask[r] ? a : b;
    for (int64_t i = 0; i < width; i++) out[r * width + i] = value_at(source, r * width + i);
  }
}

/* x [a, b] (a weight in its own dtype, or a computed value) -> [b, a]. */
static void run_transpose(executor *state, const vlm_node *node, float *out) {
  const node_value *x = &state->values[node->inputs[0]];
  int64_t rows = node->shape[1], columns = node->shape[0]; /* of the input */
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < columns; c++) out[c * rows + r] = value_at(x, r * columns + c);
}

/* AvgPool2d(kernel, stride = kernel) as torch's cpu_avg_pool computes it
 * for a contiguous float tensor: per output, a float sum over the window in
 * row-major order, then divided by kernel^2. */
static void run_average_pool(executor *state, const vlm_node *node, float *out) {
  const node_value *x = &state->values[node->inputs[0]];
  int64_t images = node->params.pool.images, height = node->params.pool.height;
  int64_t width = node->params.pool.width, kernel = node->params.pool.kernel, channels = node->shape[1];
  int64_t out_height = height / kernel, out_width = width / kernel;
  float divisor = (float)(kernel * kernel);
  for (int64_t image = 0; image < images; image++)
    for (int64_t oy = 0; oy < out_height; oy++)
      for (int64_t ox = 0; ox < out_width; ox++) {
        float *target = out + ((image * out_height + oy) * out_width + ox) * channels;
        for (int64_t c = 0; c < channels; c++) {
          float sum = 0.0f;
          for (int64_t ky = 0; ky < kernel; ky++)
            for (int64_t kx = 0; kx < kernel; kx++) {
              int64_t row = (image * height + oy * kernel + ky) * width + ox * kernel + kx;
              sum += value_at(x, row * channels + c);
            }
          target[c] = sum / divisor;
        }
      }
}

static void run_scale_rows(executor *state, const vlm_node *node, float *out) {
  const node_value *x = &state->values[node->inputs[0]], *scales = &state->values[node->inputs[1]];
  int64_t rows = node->shape[0], width = element_count(node) / (rows ? rows : 1);
  for (int64_t r = 0; r < rows; r++) {
    float scale = value_at(scales, r);
    for (int64_t i = 0; i < width; i++) out[r * width + i] = value_at(x, r * width + i) * scale;
  }
}

static vlm_status run_moe(executor *state, const vlm_node *node, float *out) {
  const node_value *gate_up = &state->values[node->inputs[2]], *down = &state->values[node->inputs[3]];
  const vlm_node *gate_up_node = &state->graph->nodes[node->inputs[2]];
  const vlm_node *down_node = &state->graph->nodes[node->inputs[3]];
  bool packable = gate_up_node->op == VLM_OP_WEIGHT && down_node->op == VLM_OP_WEIGHT;
  return vlm_cpu_moe_run(state->run, packable, node, input_f32(state, node, 0), input_f32(state, node, 1), gate_up->data,
                         gate_up->dtype, gate_up_node->shape, down->data, down->dtype, down_node->shape, out);
}

/* A value as f32: itself, or a converted copy in *owned (a weight in
 * bf16/f16), freed by the caller. */
static const float *as_f32(executor *state, int32_t index, float **owned) {
  const node_value *value = &state->values[index];
  *owned = NULL;
  if (value->dtype == VLM_DTYPE_F32) return value->data;
  int64_t count = element_count(&state->graph->nodes[index]);
  *owned = malloc((size_t)(count ? count : 1) * sizeof(float));
  for (int64_t i = 0; *owned && i < count; i++) (*owned)[i] = value_at(value, i);
  return *owned;
}

static vlm_status run_conv2d(executor *state, const vlm_node *node, float *out) {
  const vlm_node *x = &state->graph->nodes[node->inputs[0]], *w = &state->graph->nodes[node->inputs[1]];
  float *weight_copy = NULL, *bias_copy = NULL;
  const float *weight = as_f32(state, node->inputs[1], &weight_copy);
  const float *bias = node->input_count > 2 ? as_f32(state, node->inputs[2], &bias_copy) : NULL;
  vlm_status status = VLM_OK;
  if (!weight || (node->input_count > 2 && !bias)) {
    status = VLM_ERROR(RESOURCE_EXHAUSTED, "graph node '%s': out of memory", node->name);
  } else {
    cpu_conv2d_shape shape = {.batch = x->shape[0], .height = x->shape[1], .width = x->shape[2],
                              .in_channels = x->shape[3], .out_height = node->shape[1], .out_width = node->shape[2],
                              .out_channels = node->shape[3], .kernel_h = w->shape[2], .kernel_w = w->shape[3],
                              .groups = node->params.conv.groups};
    memcpy(shape.stride, node->params.conv.stride, sizeof(shape.stride));
    memcpy(shape.padding, node->params.conv.padding, sizeof(shape.padding));
    status = cpu_conv2d(state->run->pool, &shape, input_f32(state, node, 0), weight, bias, out);
  }
  free(weight_copy);
  free(bias_copy);
  return status;
}

static vlm_status run_permute(executor *state, const vlm_node *node, float *out) {
  const vlm_node *x = &state->graph->nodes[node->inputs[0]];
  float *copy = NULL;
  const float *values = as_f32(state, node->inputs[0], &copy);
  if (!values) return VLM_ERROR(RESOURCE_EXHAUSTED, "graph node '%s': out of memory", node->name);
  cpu_permute(values, x->rank, x->shape, node->params.permute.axes, out);
  free(copy);
  return VLM_OK;
}

/* tanh, softplus, clamp: scalar libm per element (the same bits on every
 * kernel path and thread count). */
static vlm_status run_unary(executor *state, const vlm_node *node, float *out) {
  const float *x = input_f32(state, node, 0);
  int64_t count = element_count(node);
  float low = (float)node->params.unary.low, high = (float)node->params.unary.high;
  switch (node->params.unary.kind) {
    case VLM_UNARY_TANH:
      for (int64_t i = 0; i < count; i++) out[i] = tanhf(x[i]);
      break;
    case VLM_UNARY_SOFTPLUS:
      for (int64_t i = 0; i < count; i++) out[i] = x[i] > 20.0f ? x[i] : log1pf(expf(x[i]));
      break;
    case VLM_UNARY_CLAMP:
      for (int64_t i = 0; i < count; i++) out[i] = x[i] < low ? low : x[i] > high ? high : x[i];
      break;
    default: return VLM_ERROR(INTERNAL, "graph node '%s': unknown unary function", node->name);
  }
  return VLM_OK;
}

/* Each row's mean or std (two passes, f64 sums in order), repeated. */
static vlm_status run_row_moment(executor *state, const vlm_node *node, float *out) {
  const float *x = input_f32(state, node, 0);
  int64_t width = node->shape[node->rank - 1], rows = element_count(node) / width;
  for (int64_t r = 0; r < rows; r++) {
    const float *row = x + r * width;
    double sum = 0;
    for (int64_t i = 0; i < width; i++) sum += row[i];
    double mean = sum / (double)width, value = mean;
    if (node->params.moment.std) {
      double squares = 0;
      for (int64_t i = 0; i < width; i++) squares += (row[i] - mean) * (row[i] - mean);
      value = sqrt(squares / (double)(width - node->params.moment.correction));
    }
    for (int64_t i = 0; i < width; i++) out[r * width + i] = (float)value;
  }
  return VLM_OK;
}

/* a [B, m, k] x b [B, k, n]: f32 sums over k in order. */
static vlm_status run_matmul(executor *state, const vlm_node *node, float *out) {
  const vlm_node *a_node = &state->graph->nodes[node->inputs[0]];
  const float *a = input_f32(state, node, 0), *b = input_f32(state, node, 1);
  int r = node->rank;
  int64_t batch = r == 3 ? node->shape[0] : 1, m = node->shape[r - 2], n = node->shape[r - 1];
  int64_t k = a_node->shape[r - 1];
  for (int64_t p = 0; p < batch; p++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        float sum = 0.0f;
        for (int64_t t = 0; t < k; t++) sum += a[(p * m + i) * k + t] * b[(p * k + t) * n + j];
        out[(p * m + i) * n + j] = sum;
      }
  return VLM_OK;
}

/* Every query row over every key row, per head (f32 sums in order, a
 * max-shifted softmax): the same bits on every path and thread count. */
static vlm_status run_cross_attention(executor *state, const vlm_node *node, float *out) {
  const vlm_node *q_node = &state->graph->nodes[node->inputs[0]];
  const vlm_node *k_node = &state->graph->nodes[node->inputs[1]];
  const vlm_node *v_node = &state->graph->nodes[node->inputs[2]];
  const float *q = input_f32(state, node, 0), *k = input_f32(state, node, 1), *v = input_f32(state, node, 2);
  int64_t rq = q_node->shape[0], heads = q_node->shape[1], dk = q_node->shape[2];
  int64_t rk = k_node->shape[0], kv_heads = k_node->shape[1], dv = v_node->shape[2], group = heads / kv_heads;
  float scale = (float)node->params.cross_attention.scale;
  float *scores = vlm_allocate(NULL, (size_t)rk * sizeof(float), VLM_DEFAULT_ALIGNMENT);
  if (!scores) return VLM_ERROR(RESOURCE_EXHAUSTED, "graph node '%s': out of memory", node->name);
  for (int64_t i = 0; i < rq; i++)
    for (int64_t h = 0; h < heads; h++) {
      const float *query = q + (i * heads + h) * dk;
      int64_t kv = h / group;
      float maximum = -INFINITY, total = 0.0f;
      for (int64_t j = 0; j < rk; j++) {
        const float *keyrow = k + (j * kv_heads + kv) * dk;
        float dot = 0.0f;
        for (int64_t d = 0; d < dk; d++) dot += query[d] * keyrow[d];
        scores[j] = dot * scale;
        if (scores[j] > maximum) maximum = scores[j];
      }
      for (int64_t j = 0; j < rk; j++) {
        scores[j] = expf(scores[j] - maximum);
        total += scores[j];
      }
      float *target = out + (i * heads + h) * dv;
      for (int64_t d = 0; d < dv; d++) {
        float sum = 0.0f;
        for (int64_t j = 0; j < rk; j++) sum += scores[j] * v[(j * kv_heads + kv) * dv + d];
        target[d] = sum / total;
      }
    }
  vlm_release(NULL, scores);
  return VLM_OK;
}

/* Each block of rows attends to itself with cpu_attention's non-causal
 * path and the per-head bias (bias_head_stride block^2). */
static vlm_status run_biased_attention(executor *state, const vlm_node *node, float *out) {
  const vlm_node *query_node = &state->graph->nodes[node->inputs[0]];
  const vlm_node *bias_node = &state->graph->nodes[node->inputs[3]];
  int64_t rows = query_node->shape[0], heads = query_node->shape[1], dim = query_node->shape[2];
  int64_t block = bias_node->shape[1];
  size_t row_floats = (size_t)(heads * dim);
  const float *queries = input_f32(state, node, 0), *keys = input_f32(state, node, 1),
              *values = input_f32(state, node, 2), *bias = input_f32(state, node, 3);
  for (int64_t first = 0; first < rows; first += block) {
    cpu_attention_shape shape = {.query_count = block, .past_count = 0, .head_count = heads, .kv_head_count = heads,
                                 .head_dim = dim, .scale = (float)node->params.biased_attention.scale,
                                 .causal = false, .bias = bias, .bias_stride = block,
                                 .bias_head_stride = block * block};
    size_t offset = (size_t)first * row_floats;
    VLM_RETURN_IF_ERROR(cpu_attention(state->run->pool, &shape, queries + offset, keys + offset, values + offset,
                                      out + offset));
  }
  return VLM_OK;
}

static vlm_status run_node(executor *state, int32_t index) {
  const vlm_node *node = &state->graph->nodes[index];
  switch (node->op) {
    case VLM_OP_WEIGHT: return bind_weight(state, index);
    case VLM_OP_INPUT: return bind_input(state, index);
    case VLM_OP_RESHAPE: /* an alias: a reshaped weight keeps its dtype */
      state->values[index].data = state->values[node->inputs[0]].data;
      state->values[index].dtype = state->values[node->inputs[0]].dtype;
      return VLM_OK;
    default: break;
  }
  VLM_RETURN_IF_ERROR(take_buffer(state, index, (size_t)element_count(node)));
  float *out = state->values[index].buffer;
  state->values[index].dtype = VLM_DTYPE_F32;
  switch (node->op) {
    case VLM_OP_LINEAR: return run_linear(state, node, out);
    case VLM_OP_RMS_NORM:
    case VLM_OP_LAYER_NORM: return run_norm(state, node, out);
    case VLM_OP_GATHER: return run_gather(state, node, out);
    case VLM_OP_ROPE: return run_rope(state, node, out);
    case VLM_OP_ATTENTION: return run_attention(state, node, out);
    case VLM_OP_SELECT_ROWS: run_select_rows(state, node, out); return VLM_OK;
    case VLM_OP_SEGMENT_ATTENTION: return run_segment_attention(state, node, out);
    case VLM_OP_CONCAT: run_concat(state, node, out); return VLM_OK;
    case VLM_OP_SLICE: run_slice(state, node, out); return VLM_OK;
    case VLM_OP_ROW_SELECT: run_row_select(state, node, out); return VLM_OK;
    case VLM_OP_TRANSPOSE: run_transpose(state, node, out); return VLM_OK;
    case VLM_OP_AVERAGE_POOL: run_average_pool(state, node, out); return VLM_OK;
    case VLM_OP_SCALE_ROWS: run_scale_rows(state, node, out); return VLM_OK;
    case VLM_OP_MOE: return run_moe(state, node, out);
    case VLM_OP_CONV2D: return run_conv2d(state, node, out);
    case VLM_OP_PERMUTE: return run_permute(state, node, out);
    case VLM_OP_BIASED_ATTENTION: return run_biased_attention(state, node, out);
    case VLM_OP_UNARY: return run_unary(state, node, out);
    case VLM_OP_ROW_MOMENT: return run_row_moment(state, node, out);
    case VLM_OP_MATMUL: return run_matmul(state, node, out);
    case VLM_OP_CROSS_ATTENTION: return run_cross_attention(state, node, out);
    default: return run_elementwise(state, node, out);
  }
}

static bool op_supported(vlm_op op) {
  switch (op) {
    case VLM_OP_INPUT: case VLM_OP_WEIGHT: case VLM_OP_GATHER: case VLM_OP_SCALE: case VLM_OP_ADD:
    case VLM_OP_MUL: case VLM_OP_RMS_NORM: case VLM_OP_LAYER_NORM: case VLM_OP_LINEAR: case VLM_OP_ACTIVATION:
    case VLM_OP_GATED: case VLM_OP_ROPE: case VLM_OP_ATTENTION: case VLM_OP_SOFTCAP: case VLM_OP_RESHAPE:
    case VLM_OP_SELECT_ROWS: case VLM_OP_CONCAT: case VLM_OP_SLICE: case VLM_OP_ROW_SELECT:
    case VLM_OP_SCALE_ROWS: case VLM_OP_SEGMENT_ATTENTION: case VLM_OP_TRANSPOSE: case VLM_OP_AVERAGE_POOL:
    case VLM_OP_MOE:
    case VLM_OP_CONV2D: case VLM_OP_PERMUTE: case VLM_OP_BIASED_ATTENTION:
    case VLM_OP_UNARY: case VLM_OP_ROW_MOMENT: case VLM_OP_MATMUL: case VLM_OP_CROSS_ATTENTION:
      return true;
    default: return false;
  }
}

vlm_status vlm_cpu_graph_check(const vlm_graph *graph) {
  for (int32_t i = 0; i < graph->count; i++)
    if (!op_supported(graph->nodes[i].op))
      return VLM_ERROR(UNIMPLEMENTED, "cpu backend: graph node '%s': op '%s' is not supported",
                       graph->nodes[i].name, vlm_op_name(graph->nodes[i].op));
  return VLM_OK;
}

static void executor_release(executor *state) {
  for (int32_t i = 0; state->values && i < state->graph->count; i++)
    vlm_release(NULL, state->values[i].buffer);
  for (int32_t i = 0; i < state->free_count; i++) vlm_release(NULL, state->free_list[i].buffer);
  for (int i = 0; i < VLM_GRAPH_MAX_ROPES; i++) vlm_release(NULL, state->rope_cos_sin[i]);
  free(state->values);
  free(state->free_list);
}

/* Every expert of a moe node, packed one expert matrix at a time (each
 * leaves the memory map as it is packed). */
static vlm_status prepare_experts(const vlm_cpu_graph_run *run, const executor *state, const vlm_node *node) {
  for (int which = 2; which < 4; which++) {
    const node_value *value = &state->values[node->inputs[which]];
    const vlm_node *weight_node = &run->graph->nodes[node->inputs[which]];
    if (!value->data || weight_node->op != VLM_OP_WEIGHT) continue;
    bool transposed = which == 2 ? node->params.moe.gate_up_transposed : node->params.moe.down_transposed;
    for (int64_t e = 0; e < weight_node->shape[0]; e++) {
      cpu_linear_weights weights = vlm_cpu_moe_expert(value->data, value->dtype, weight_node->shape, e, transposed);
      const cpu_packed_linear *packed;
      VLM_RETURN_IF_ERROR(vlm_cpu_packs_get(run->packs, run->pool, &weights, run->weights, &packed));
    }
  }
  return VLM_OK;
}

vlm_status vlm_cpu_graph_prepare(const vlm_cpu_graph_run *run) {
  const vlm_graph *graph = run->graph;
  if (!run->packs) return VLM_OK;
  executor state = {.run = run, .graph = graph};
  state.values = calloc((size_t)graph->count, sizeof(*state.values));
  vlm_status status = state.values ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int32_t i = 0; !status && i < graph->count; i++) {
    const vlm_node *node = &graph->nodes[i];
    if (node->op == VLM_OP_WEIGHT) status = bind_weight(&state, i);
    else if (node->op == VLM_OP_RESHAPE) state.values[i] = state.values[node->inputs[0]];
    if (!status && node->op == VLM_OP_MOE) status = prepare_experts(run, &state, node);
    if (status || node->op != VLM_OP_LINEAR) continue;
    const node_value *weight = &state.values[node->inputs[1]];
    const node_value *bias = node->input_count > 2 ? &state.values[node->inputs[2]] : NULL;
    const vlm_node *weight_node = &graph->nodes[node->inputs[1]];
    if (weight->data && weight->dtype == VLM_DTYPE_I32) {
      const cpu_packed_linear *packed;
      status = hub_linear(run, &graph->nodes[node->inputs[1]], weight, bias && bias->data ? bias : NULL, &packed);
      continue;
    }
    /* Only weights bound from the checkpoint; a bias of another dtype is
     * refused when the graph runs. */
    if (!weight->data || (bias && (!bias->data || bias->dtype != weight->dtype))) continue;
    cpu_linear_weights weights = {weight->dtype, weight->data, bias ? bias->data : NULL, weight_node->shape[0],
                                  weight_node->shape[1]};
    const cpu_packed_linear *packed;
    status = vlm_cpu_packs_get(run->packs, run->pool, &weights, run->weights, &packed);
  }
  free(state.values);
  return status;
}

vlm_status vlm_cpu_graph_execute(const vlm_cpu_graph_run *run, float *output) {
  const vlm_graph *graph = run->graph;
  if (graph->output < 0 || graph->output >= graph->count)
    return VLM_ERROR(INTERNAL, "graph has no output node");
  VLM_RETURN_IF_ERROR(vlm_cpu_graph_check(graph));
  executor state = {.run = run, .graph = graph};
  state.values = calloc((size_t)graph->count, sizeof(*state.values));
  state.free_list = calloc((size_t)graph->count, sizeof(*state.free_list));
  vlm_status status = state.values && state.free_list ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (!status) plan_lifetimes(&state);
  for (int32_t i = 0; !status && i < graph->count; i++) {
    status = run_node(&state, i);
    const vlm_node *node = &graph->nodes[i];
    if (!status && run->observer && node->op != VLM_OP_WEIGHT && node->op != VLM_OP_INPUT &&
        state.values[i].dtype == VLM_DTYPE_F32)
      run->observer(run->observer_context, node, state.values[i].data);
    if (!status) release_inputs(&state, node);
  }
  if (!status)
    memcpy(output, state.values[graph->output].data,
           (size_t)element_count(&graph->nodes[graph->output]) * sizeof(float));
  executor_release(&state);
  return status;
}
