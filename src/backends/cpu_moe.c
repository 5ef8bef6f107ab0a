#include "backends/cpu_moe.h"

#include <stdlib.h>
#include <string.h>

#include "backends/cpu_packs.h"
#include "core/alloc.h"
#include "core/status.h"

void vlm_cpu_moe_route(const float *logits, int64_t experts, int32_t top_k, bool normalize, float *scratch,
                       int32_t *out_experts, float *out_weights) {
  cpu_softmax(logits, NULL, experts, scratch);
  /* Selection by repeated maximum: k is small (4 to 8). A NaN never wins
   * a comparison, so rows of NaN logits still get k distinct experts. */
  for (int32_t j = 0; j < top_k; j++) {
    int64_t best = -1;
    for (int64_t e = 0; e < experts; e++) {
      bool taken = false;
      for (int32_t i = 0; i < j && !taken; i++) taken = out_experts[i] == e;
      if (!taken && (best < 0 || scratch[e] > scratch[best])) best = e;
    }
    out_experts[j] = (int32_t)best;
    out_weights[j] = scratch[best];
  }
  if (!normalize) return;
  float sum = 0.0f;
  for (int32_t j = 0; j < top_k; j++) sum += out_weights[j];
  for (int32_t j = 0; j < top_k; j++) out_weights[j] /= sum;
}

cpu_linear_weights vlm_cpu_moe_expert(const void *data, vlm_dtype dtype, const int64_t shape[3], int64_t expert,
                                      bool transposed) {
  size_t slab = (size_t)(shape[1] * shape[2]) * vlm_dtype_size(dtype);
  return (cpu_linear_weights){.dtype = dtype, .weight = (const char *)data + (size_t)expert * slab, .bias = NULL,
                              .output_count = transposed ? shape[2] : shape[1],
                              .input_count = transposed ? shape[1] : shape[2], .transposed = transposed};
}

static vlm_status expert_linear(const vlm_cpu_graph_run *run, bool packable, const cpu_linear_weights *weights,
                                const float *input, int64_t rows, float *output) {
  if (!run->packs || !packable) return cpu_linear(run->pool, weights, input, rows, output);
  const cpu_packed_linear *packed = NULL;
  VLM_RETURN_IF_ERROR(vlm_cpu_packs_get(run->packs, run->pool, weights, run->weights, &packed));
  return cpu_linear_packed(run->pool, packed, input, rows, output);
}

static cpu_activation to_cpu(vlm_activation activation) {
  switch (activation) {
    case VLM_ACTIVATION_GELU: return CPU_ACTIVATION_GELU;
    case VLM_ACTIVATION_GELU_TANH: return CPU_ACTIVATION_GELU_TANH;
    case VLM_ACTIVATION_QUICK_GELU: return CPU_ACTIVATION_QUICK_GELU;
    case VLM_ACTIVATION_RELU: return CPU_ACTIVATION_RELU;
    case VLM_ACTIVATION_SILU:
    default: return CPU_ACTIVATION_SILU;
  }
}

typedef struct moe_scratch {
  int32_t *chosen;     /* [rows * k] expert of (row, j) */
  float *weights;      /* [rows * k] */
  int32_t *pairs;      /* [rows * k] (row * k + j), grouped by expert */
  int64_t *starts;     /* [experts + 1] each expert's range of pairs */
  float *probabilities, *inputs, *gate_up, *gated, *outputs, *weighted;
} moe_scratch;

static void scratch_release(moe_scratch *s) {
  free(s->chosen);
  free(s->weights);
  free(s->pairs);
  free(s->starts);
  vlm_release(NULL, s->probabilities);
  vlm_release(NULL, s->inputs);
  vlm_release(NULL, s->gate_up);
  vlm_release(NULL, s->gated);
  vlm_release(NULL, s->outputs);
  vlm_release(NULL, s->weighted);
}

static float *floats(int64_t count) {
  return vlm_allocate(NULL, (size_t)(count > 0 ? count : 1) * sizeof(float), VLM_DEFAULT_ALIGNMENT);
}

vlm_status vlm_cpu_moe_run(const vlm_cpu_graph_run *run, bool packable, const vlm_node *node, const float *x,
                           const float *logits,
                           const void *gate_up, vlm_dtype gate_up_dtype, const int64_t gate_up_shape[3],
                           const void *down, vlm_dtype down_dtype, const int64_t down_shape[3], float *out) {
  int64_t rows = node->shape[0], hidden = node->shape[1], experts = gate_up_shape[0];
  int32_t k = node->params.moe.top_k;
  bool gate_up_t = node->params.moe.gate_up_transposed, down_t = node->params.moe.down_transposed;
  int64_t inner = down_t ? down_shape[1] : down_shape[2];
  int64_t pair_count = rows * k;
  moe_scratch s = {0};
  s.chosen = malloc((size_t)pair_count * sizeof(int32_t));
  s.weights = malloc((size_t)pair_count * sizeof(float));
  s.pairs = malloc((size_t)pair_count * sizeof(int32_t));
  s.starts = calloc((size_t)experts + 1, sizeof(int64_t));
  s.probabilities = floats(experts);
  s.weighted = floats(pair_count * hidden);
  if (!s.chosen || !s.weights || !s.pairs || !s.starts || !s.probabilities || !s.weighted) {
    scratch_release(&s);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "graph node '%s': out of memory", node->name);
  }
  for (int64_t r = 0; r < rows; r++)
    vlm_cpu_moe_route(logits + r * experts, experts, k, node->params.moe.normalize, s.probabilities,
                      s.chosen + r * k, s.weights + r * k);
  /* Counting sort of the (row, j) pairs by expert, rows in order. */
  for (int64_t p = 0; p < pair_count; p++) s.starts[s.chosen[p] + 1]++;
  int64_t largest = 0;
  for (int64_t e = 0; e < experts; e++) {
    if (s.starts[e + 1] > largest) largest = s.starts[e + 1];
    s.starts[e + 1] += s.starts[e];
  }
  int64_t *fill = calloc((size_t)experts, sizeof(int64_t));
  s.inputs = floats(largest * hidden);
  s.gate_up = floats(largest * 2 * inner);
  s.gated = floats(largest * inner);
  s.outputs = floats(largest * hidden);
  vlm_status status = fill && s.inputs && s.gate_up && s.gated && s.outputs
                          ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "graph node '%s': out of memory", node->name);
  for (int64_t p = 0; !status && p < pair_count; p++) {
    int32_t e = s.chosen[p];
    s.pairs[s.starts[e] + fill[e]++] = (int32_t)p;
  }
  free(fill);
  cpu_activation activation = to_cpu(node->params.moe.activation);
  for (int64_t e = 0; !status && e < experts; e++) {
    int64_t first = s.starts[e], count = s.starts[e + 1] - first;
    if (count == 0) continue; /* an expert no row chose is never read */
    for (int64_t i = 0; i < count; i++)
      memcpy(s.inputs + i * hidden, x + (s.pairs[first + i] / k) * hidden, (size_t)hidden * sizeof(float));
    cpu_linear_weights up = vlm_cpu_moe_expert(gate_up, gate_up_dtype, gate_up_shape, e, gate_up_t);
    status = expert_linear(run, packable, &up, s.inputs, count, s.gate_up);
    for (int64_t i = 0; !status && i < count; i++)
      cpu_gated_activate(activation, s.gate_up + i * 2 * inner, s.gate_up + i * 2 * inner + inner, inner,
                         s.gated + i * inner);
    cpu_linear_weights down_weights = vlm_cpu_moe_expert(down, down_dtype, down_shape, e, down_t);
    if (!status) status = expert_linear(run, packable, &down_weights, s.gated, count, s.outputs);
    for (int64_t i = 0; !status && i < count; i++) {
      int32_t pair = s.pairs[first + i];
      float weight = s.weights[pair];
      float *target = s.weighted + (int64_t)pair * hidden;
      for (int64_t h = 0; h < hidden; h++) target[h] = s.outputs[i * hidden + h] * weight;
    }
  }
  /* The k weighted outputs of each row summed in the router's order, as
   * grouped_mm_experts_forward's view(tokens, k, hidden).sum(dim=1). */
  for (int64_t r = 0; !status && r < rows; r++) {
    float *target = out + r * hidden;
    memcpy(target, s.weighted + r * k * hidden, (size_t)hidden * sizeof(float));
    for (int32_t j = 1; j < k; j++) {
      const float *part = s.weighted + (r * k + j) * hidden;
      for (int64_t h = 0; h < hidden; h++) target[h] += part[h];
    }
  }
  scratch_release(&s);
  return status;
}
