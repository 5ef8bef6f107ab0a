/* Stateless StableHLO modules emitted from graphs: one public function per
 * graph (an encoder at one shape bucket, a single operator under test),
 * its arguments the graph's INPUT nodes in graph order, its results the
 * listed nodes, weights as parameter globals read from the checkpoint by
 * their stored names (as the text module's), no mutable global.
 *
 * The compatibility key is derived from what is emitted: each function's
 * name and the hash of its graph's listing (vlm_graph_format: every node,
 * its shape and parameters, and the RoPE parameter sets), the weights'
 * names, dtypes and shapes, and this emitter's version; the caller adds
 * the fields that say what the module is for (module kind, model type),
 * and the compiler the target fields. Two modules with the same key compute
 * the same functions. */
#ifndef VLM_BACKENDS_XLA_STABLEHLO_GRAPH_H
#define VLM_BACKENDS_XLA_STABLEHLO_GRAPH_H

#include <stdint.h>

#include "backends/xla/xla_key.h"
#include "graph/graph.h"
#include "io/checkpoint.h"
#include "vlm.h"

#define VLM_XLA_GRAPH_EMITTER_VERSION 3 /* 2: weights laid out by the runtime (scope vlm.layout), linears transposed; 3: linears as stored */
#define VLM_XLA_GRAPH_MAX_OUTPUTS 4
#define VLM_XLA_GRAPH_MAX_INPUTS 16

typedef struct vlm_stablehlo_graph_function {
  const char *name;                               /* a valid symbol: [A-Za-z0-9_] */
  const vlm_graph *graph;
  int32_t outputs[VLM_XLA_GRAPH_MAX_OUTPUTS];     /* nodes returned, in this order (f32) */
  int output_count;
} vlm_stablehlo_graph_function;

/* Emits the module (NUL-terminated, free()) named `module_name`, with
 * `description` (comment lines) on top. `key` comes in with the caller's
 * fields and leaves with the emitter's added. `weights` may be NULL for
 * graphs without weights. Any node the emitter cannot lower is refused
 * with UNIMPLEMENTED naming it. */
vlm_status vlm_stablehlo_emit_graph_module(const char *module_name, const char *description,
                                           const vlm_stablehlo_graph_function *functions, int function_count,
                                           const vlm_checkpoint *weights, vlm_xla_key *key, char **out_module);

/* Hash of a graph's listing (the "functions" key field uses it). */
uint64_t vlm_stablehlo_graph_hash(const vlm_graph *graph);

#endif
