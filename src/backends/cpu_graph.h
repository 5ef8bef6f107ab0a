/* The cpu backend's graph executor: runs a vlm_graph (src/graph) node by
 * node on the kernels of src/backends/cpu, binding weight nodes to the
 * memory-mapped checkpoint (no copies) and attention nodes to the KV cache.
 *
 * Intermediate buffers are recycled as soon as their last consumer has run,
 * so a step's peak memory is a few activations, not one per node. An
 * optional observer sees every computed node (by name) before its buffer is
 * recycled: that is how intermediates are dumped and compared with goldens. */
#ifndef VLM_BACKENDS_CPU_GRAPH_H
#define VLM_BACKENDS_CPU_GRAPH_H

#include "core/thread_pool.h"
#include "backends/cpu/kv_cache.h"
#include "graph/graph.h"
#include "core/tensor_list.h"
#include "io/checkpoint.h"

typedef void (*vlm_node_observer)(void *context, const vlm_node *node, const float *values);
/* Called once per weight node as it is bound to the checkpoint: the record
 * of exactly which tensors a graph touched (the vision side proves with it
 * that it never reads a decoder layer). */
typedef void (*vlm_weight_observer)(void *context, const char *name, const vlm_tensor *view);


typedef struct vlm_cpu_graph_run {
  const vlm_graph *graph;
  const vlm_checkpoint *weights;
  vlm_kv_cache *cache;             /* may be NULL for graphs without attention */
  vlm_thread_pool *pool;           /* may be NULL */
  int64_t max_position_embeddings; /* for dynamic RoPE */
  const int32_t *tokens;           /* input "tokens" */
  const float *features;           /* input "features" */
  const int32_t *feature_mask;     /* input "feature_mask" */
  const vlm_tensor_list *inputs; /* further inputs by node name (e.g. "patches"); may be NULL */
  vlm_node_observer observer;
  void *observer_context;
  vlm_weight_observer weight_observer;
  void *weight_observer_context;
  /* Linear weights repacked for the kernels, kept across runs (a module's
   * store); NULL packs them per call (tests). */
  struct vlm_cpu_packs *packs;
} vlm_cpu_graph_run;

/* OK when the executor implements every node of `graph` (the predicate
 * module support asks: engine/module_support.h); UNIMPLEMENTED naming the
 * first node and op it does not. */
vlm_status vlm_cpu_graph_check(const vlm_graph *graph);

/* Packs every linear weight of the graph into run->packs without running
 * it (a module calls this at open, so the first request does not pay for
 * packing). Nothing to do without packs. */
vlm_status vlm_cpu_graph_prepare(const vlm_cpu_graph_run *run);

/* Executes the graph and copies its output node (f32) into `output`. */
vlm_status vlm_cpu_graph_execute(const vlm_cpu_graph_run *run, float *output);

#endif
