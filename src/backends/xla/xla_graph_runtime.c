/* See xla_graph_runtime.h. */
#define PY_SSIZE_T_CLEAN
#include "backends/xla/xla_runtime_internal.h"

#include "backends/xla/xla_graph_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

typedef struct graph_call {
  char name[48];
  int input_count, output_count;
  char input_names[VLM_XLA_GRAPH_MAX_INPUTS][VLM_GRAPH_NAME_LENGTH];
  vlm_dtype input_dtypes[VLM_XLA_GRAPH_MAX_INPUTS];
  xla_binding input_bindings[VLM_XLA_GRAPH_MAX_INPUTS], output_bindings[VLM_XLA_GRAPH_MAX_OUTPUTS];
  xla_host_buffer inputs[VLM_XLA_GRAPH_MAX_INPUTS], outputs[VLM_XLA_GRAPH_MAX_OUTPUTS];
  PyObject *call;
} graph_call;

struct vlm_xla_graph_runtime {
  PyObject *session;
  PyObject *compatibility_call;
  xla_host_buffer compatibility;
  graph_call *calls;
  int call_count;
  vlm_xla_layout *layout;   /* its own weights' layout, when the caller shared none */
};

static size_t node_bytes(const vlm_node *node) {
  size_t count = 1;
  for (int d = 0; d < node->rank; d++) count *= (size_t)node->shape[d];
  return count * 4; /* f32 and i32 */
}

static vlm_status shape_binding(xla_host_buffer *buffer, const vlm_node *node, const char *dtype, xla_binding *out) {
  if (node->rank > 5) return VLM_ERROR(UNIMPLEMENTED, "xla graph runtime: node '%s' has rank %d", node->name, node->rank);
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(buffer, node_bytes(node)));
  *out = (xla_binding){buffer, dtype, node->rank, {0}};
  memcpy(out->shape, node->shape, sizeof(int64_t) * (size_t)node->rank);
  return VLM_OK;
}

static vlm_status prepare_call(const vlm_stablehlo_graph_function *function, graph_call *call) {
  snprintf(call->name, sizeof(call->name), "%s", function->name);
  const vlm_graph *graph = function->graph;
  for (int32_t i = 0; i < graph->count; i++) {
    const vlm_node *node = &graph->nodes[i];
    if (node->op != VLM_OP_INPUT) continue;
    if (call->input_count == VLM_XLA_GRAPH_MAX_INPUTS)
      return VLM_ERROR(UNIMPLEMENTED, "xla graph runtime: '%s' has too many inputs", function->name);
    int k = call->input_count++;
    snprintf(call->input_names[k], sizeof(call->input_names[k]), "%s", node->name);
    call->input_dtypes[k] = node->dtype;
    VLM_RETURN_IF_ERROR(shape_binding(&call->inputs[k], node, node->dtype == VLM_DTYPE_I32 ? "i32" : "f32",
                                      &call->input_bindings[k]));
  }
  for (int i = 0; i < function->output_count; i++) {
    VLM_RETURN_IF_ERROR(shape_binding(&call->outputs[i], &graph->nodes[function->outputs[i]], "f32",
                                      &call->output_bindings[i]));
    call->output_count++;
  }
  return VLM_OK;
}

vlm_status vlm_xla_graph_runtime_key(const vlm_xla_key *emit_key, const vlm_xla_runtime_options *options,
                                     vlm_xla_key *out_key) {
  vlm_xla_runtime_options defaults = {0};
  if (!options) options = &defaults;
  char version[256];
  VLM_RETURN_IF_ERROR(vlm_xla_runtime_version(options, version, sizeof(version)));
  *out_key = *emit_key;
  return vlm_xla_key_add_target(out_key, version, options->target);
}

static vlm_status check_compatibility(vlm_xla_graph_runtime *runtime, const vlm_xla_key *emit_key,
                                      const char *artifact_dir) {
  VLM_RETURN_IF_ERROR(xla_invoke(runtime->compatibility_call, "compatibility"));
  const int32_t *got = runtime->compatibility.data;
  uint64_t hash = vlm_xla_key_hash(emit_key);
  int32_t want[4] = {1, VLM_XLA_GRAPH_EMITTER_VERSION, (int32_t)(uint32_t)hash, (int32_t)(uint32_t)(hash >> 32)};
  if (memcmp(got, want, sizeof(want)) != 0)
    return VLM_ERROR(FAILED_PRECONDITION,
                     "%s: incompatible artifact: module.vmfb carries key %08x%08x (emitter %d), expected %016llx "
                     "(emitter %d); sidecar and artifact disagree",
                     artifact_dir, (uint32_t)got[3], (uint32_t)got[2], got[1], (unsigned long long)hash, want[1]);
  return VLM_OK;
}

static vlm_status load(vlm_xla_graph_runtime *runtime, const vlm_checkpoint *weights, const vlm_xla_layout *layout,
                       const char *artifact_dir, const char *driver, int threads) {
  xla_binding compatibility = {&runtime->compatibility, "i32", 1, {4}};
  PyGILState_STATE gil = PyGILState_Ensure();
  vlm_status status = xla_session_open(weights, layout, artifact_dir, driver, threads, &runtime->session);
  for (int i = 0; !status && i < runtime->call_count; i++) {
    graph_call *call = &runtime->calls[i];
    status = xla_session_bind(runtime->session, call->name, call->input_count, call->input_bindings,
                              call->output_count, call->output_bindings, &call->call);
  }
  if (!status)
    status = xla_session_bind(runtime->session, "compatibility", 0, NULL, 1, &compatibility,
                              &runtime->compatibility_call);
  PyGILState_Release(gil);
  return status;
}

/* The module's weights: checked against `shared` when the caller laid
 * them out, else laid out into *out_own. The module text is emitted again
 * (milliseconds) for its parameter keys. */
static vlm_status lay_out_weights(const vlm_stablehlo_graph_function *functions, int function_count,
                                  const vlm_checkpoint *weights, const vlm_xla_layout *shared,
                                  vlm_xla_layout **out_own) {
  vlm_xla_key key;
  memset(&key, 0, sizeof(key));
  char *module = NULL;
  VLM_RETURN_IF_ERROR(vlm_stablehlo_emit_graph_module("layout", "", functions, function_count, weights, &key, &module));
  vlm_status status = shared ? vlm_xla_layout_check(shared, module) : vlm_xla_layout_create(weights, module, out_own);
  free(module);
  return status;
}

vlm_status vlm_xla_graph_runtime_open(const vlm_stablehlo_graph_function *functions, int function_count,
                                      const vlm_checkpoint *weights, const vlm_xla_key *emit_key,
                                      const char *artifact_dir, const vlm_xla_runtime_options *options,
                                      vlm_xla_graph_runtime **out_runtime) {
  *out_runtime = NULL;
  vlm_xla_runtime_options defaults = {0};
  if (!options) options = &defaults;
  vlm_xla_key key;
  VLM_RETURN_IF_ERROR(vlm_xla_graph_runtime_key(emit_key, options, &key));
  VLM_RETURN_IF_ERROR(vlm_xla_artifact_check(artifact_dir, &key));
  vlm_xla_graph_runtime *runtime = calloc(1, sizeof(*runtime));
  graph_call *calls = calloc((size_t)(function_count > 0 ? function_count : 1), sizeof(*calls));
  if (!runtime || !calls) {
    free(runtime);
    free(calls);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  runtime->calls = calls;
  runtime->call_count = function_count;
  vlm_status status = xla_buffer_allocate(&runtime->compatibility, 4 * sizeof(int32_t));
  for (int i = 0; !status && i < function_count; i++) status = prepare_call(&functions[i], &calls[i]);
  const vlm_xla_layout *layout = options->layout;
  if (!status && weights) status = lay_out_weights(functions, function_count, weights, layout, &runtime->layout);
  if (!layout) layout = runtime->layout;
  if (!status) status = load(runtime, weights, layout, artifact_dir, options->driver, options->thread_count);
  if (!status) status = check_compatibility(runtime, emit_key, artifact_dir);
  if (status) {
    vlm_xla_graph_runtime_release(runtime);
    return status;
  }
  *out_runtime = runtime;
  return VLM_OK;
}

void vlm_xla_graph_runtime_release(vlm_xla_graph_runtime *runtime) {
  if (!runtime) return;
  if (Py_IsInitialized()) {
    PyGILState_STATE gil = PyGILState_Ensure();
    for (int i = 0; i < runtime->call_count; i++) Py_XDECREF(runtime->calls[i].call);
    Py_XDECREF(runtime->compatibility_call);
    Py_XDECREF(runtime->session);
    PyGILState_Release(gil);
  }
  for (int i = 0; i < runtime->call_count; i++) {
    graph_call *call = &runtime->calls[i];
    for (int k = 0; k < call->input_count; k++) free(call->inputs[k].data);
    for (int k = 0; k < call->output_count; k++) free(call->outputs[k].data);
  }
  free(runtime->calls);
  free(runtime->compatibility.data);
  vlm_xla_layout_release(runtime->layout); /* after the session that imported it */
  free(runtime);
}

vlm_status vlm_xla_graph_call(vlm_xla_graph_runtime *runtime, int index, const vlm_tensor_list *inputs,
                              float *const *outputs) {
  if (index < 0 || index >= runtime->call_count)
    return VLM_ERROR(INVALID_ARGUMENT, "xla graph runtime: no function #%d", index);
  graph_call *call = &runtime->calls[index];
  for (int k = 0; k < call->input_count; k++) {
    const vlm_named_tensor *tensor = vlm_tensor_list_find(inputs, call->input_names[k]);
    if (!tensor) return VLM_ERROR(INVALID_ARGUMENT, "%s: input '%s' was not provided", call->name, call->input_names[k]);
    bool same = tensor->dtype == call->input_dtypes[k] && tensor->rank == call->input_bindings[k].rank;
    for (int d = 0; same && d < tensor->rank; d++) same = tensor->shape[d] == call->input_bindings[k].shape[d];
    if (!same)
      return VLM_ERROR(INVALID_ARGUMENT, "%s: input '%s' does not have the compiled dtype and shape", call->name,
                       call->input_names[k]);
    memcpy(call->inputs[k].data, tensor->data, call->inputs[k].bytes);
  }
  VLM_RETURN_IF_ERROR(xla_invoke(call->call, call->name));
  for (int i = 0; i < call->output_count; i++)
    if (outputs && outputs[i]) memcpy(outputs[i], call->outputs[i].data, call->outputs[i].bytes);
  return VLM_OK;
}
