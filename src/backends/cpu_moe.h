/* The cpu backend's mixture-of-experts op (graph.h, vlm_graph_moe): the
 * router's choice per row, then the experts, rows grouped by expert. */
#ifndef VLM_BACKENDS_CPU_MOE_H
#define VLM_BACKENDS_CPU_MOE_H

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu_graph.h"

/* One row's routing as Transformers' TopKRouter computes it in float32:
 * p = softmax(logits) (cpu_softmax), the top_k largest p in decreasing
 * order (ties: the lower expert first), renormalised by their sum (added
 * in that order) when `normalize`. `scratch` holds `experts` floats. */
void vlm_cpu_moe_route(const float *logits, int64_t experts, int32_t top_k, bool normalize, float *scratch,
                       int32_t *out_experts, float *out_weights);

/* The weights of expert `expert` of a [experts, ., .] expert tensor as one
 * linear layer ([out, in], or [in, out] when `transposed`). */
cpu_linear_weights vlm_cpu_moe_expert(const void *data, vlm_dtype dtype, const int64_t shape[3], int64_t expert,
                                      bool transposed);

/* Runs `node` (VLM_OP_MOE) on x [rows, hidden] and logits [rows, experts],
 * the expert tensors bound in their checkpoint dtype, into out [rows,
 * hidden]. With `packable` (the tensors are checkpoint weights, whose
 * addresses key run->packs) each expert matrix is packed once and kept;
 * otherwise per call. Rows are grouped by expert and each chosen expert runs once on
 * its rows (cpu_linear_packed: a row's result does not depend on the rows
 * beside it), so only the chosen experts' weights are read. */
vlm_status vlm_cpu_moe_run(const vlm_cpu_graph_run *run, bool packable, const vlm_node *node, const float *x,
                           const float *logits,
                           const void *gate_up, vlm_dtype gate_up_dtype, const int64_t gate_up_shape[3],
                           const void *down, vlm_dtype down_dtype, const int64_t down_shape[3], float *out);

#endif
