/* Executing a stateless graph module (stablehlo_graph.h) through IREE's
 * runtime, on the embedded interpreter the text module uses (part of the
 * vlm_xla library).
 *
 * Opening checks the artifact's stored key against the key the caller
 * computed (the emitter's, with this runtime's release and the target
 * added; vlm_xla_graph_runtime_key does that), loads it with the
 * checkpoint's shards as parameters, checks the hash the artifact carries,
 * and binds every function to host buffers shaped as its graph's inputs
 * and outputs. A call copies the caller's tensors in by input name, runs,
 * and copies the outputs out. One thread at a time (the calls hold
 * Python's GIL). */
#ifndef VLM_BACKENDS_XLA_XLA_GRAPH_RUNTIME_H
#define VLM_BACKENDS_XLA_XLA_GRAPH_RUNTIME_H

#include "backends/xla/stablehlo_graph.h"
#include "backends/xla/xla_runtime.h"
#include "core/tensor_list.h"

typedef struct vlm_xla_graph_runtime vlm_xla_graph_runtime;

/* `emit_key` (as vlm_stablehlo_emit_graph_module left it) plus this
 * runtime's release and the target: the key the artifact must carry. */
vlm_status vlm_xla_graph_runtime_key(const vlm_xla_key *emit_key, const vlm_xla_runtime_options *options,
                                     vlm_xla_key *out_key);

/* `functions` describe the module's functions (only their graphs' shapes
 * are read here, at open); `weights` may be NULL for weightless graphs and
 * must outlive the runtime. */
vlm_status vlm_xla_graph_runtime_open(const vlm_stablehlo_graph_function *functions, int function_count,
                                      const vlm_checkpoint *weights, const vlm_xla_key *emit_key,
                                      const char *artifact_dir, const vlm_xla_runtime_options *options,
                                      vlm_xla_graph_runtime **out_runtime);
void vlm_xla_graph_runtime_release(vlm_xla_graph_runtime *runtime);

/* Runs function `index`: every graph input comes from `inputs` by name
 * (dtype and shape must match), each output is copied to outputs[i]
 * (f32, its node's element count; NULL: not wanted): `outputs` has one
 * entry per output of the function (or is NULL). */
vlm_status vlm_xla_graph_call(vlm_xla_graph_runtime *runtime, int index, const vlm_tensor_list *inputs,
                              float *const *outputs);

#endif
