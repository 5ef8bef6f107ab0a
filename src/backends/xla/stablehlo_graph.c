/* See stablehlo_graph.h. */
#include "backends/xla/stablehlo_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/xla/stablehlo_internal.h"
#include "core/status.h"

#define GRAPH_CONTRACT_VERSION 1

uint64_t vlm_stablehlo_graph_hash(const vlm_graph *graph) {
  char *listing = vlm_graph_format(graph);
  uint64_t hash = listing ? vlm_fnv1a64(listing, strlen(listing), VLM_FNV1A64_SEED) : 0;
  free(listing);
  return hash;
}

static const char *element_name(vlm_dtype dtype) { return dtype == VLM_DTYPE_I32 ? "i32" : "f32"; }

static vlm_status check_function(const vlm_stablehlo_graph_function *function) {
  if (!function->name || !function->name[0] || strlen(function->name) > 40)
    return VLM_ERROR(INVALID_ARGUMENT, "xla emitter: a graph function needs a short name");
  for (const char *c = function->name; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
      return VLM_ERROR(INVALID_ARGUMENT, "xla emitter: function name '%s' is not a plain symbol", function->name);
  if (function->output_count < 1 || function->output_count > VLM_XLA_GRAPH_MAX_OUTPUTS)
    return VLM_ERROR(INVALID_ARGUMENT, "xla emitter: function '%s' returns %d values", function->name,
                     function->output_count);
  for (int i = 0; i < function->output_count; i++)
    if (function->outputs[i] < 0 || function->outputs[i] >= function->graph->count)
      return VLM_ERROR(INVALID_ARGUMENT, "xla emitter: function '%s': output %d is not a node", function->name, i);
  return vlm_stablehlo_check_graph(function->graph);
}

static vlm_status lower_function(const vlm_stablehlo_graph_function *function, const vlm_checkpoint *weights,
                                 xla_weight_list *declared, vlm_string_builder *out) {
  VLM_RETURN_IF_ERROR(check_function(function));
  const vlm_graph *graph = function->graph;
  const char *names[VLM_XLA_GRAPH_MAX_INPUTS];
  xla_value arguments[VLM_XLA_GRAPH_MAX_INPUTS];
  int count = 0;
  for (int32_t i = 0; i < graph->count; i++) {
    const vlm_node *node = &graph->nodes[i];
    if (node->op != VLM_OP_INPUT) continue;
    if (count == VLM_XLA_GRAPH_MAX_INPUTS)
      return VLM_ERROR(UNIMPLEMENTED, "xla emitter: function '%s' has more than %d inputs", function->name, count);
    char argument[16];
    snprintf(argument, sizeof(argument), "input%d", count);
    names[count] = node->name;
    arguments[count++] = xla_argument(argument, element_name(node->dtype), node->rank, node->shape);
  }
  xla_emitter e = {.out = out, .kind = XLA_GRAPH_FUNCTION, .graph = graph, .weights = weights,
                   .declared = declared, .input_names = names, .input_values = arguments, .input_count = count};
  e.nodes = calloc((size_t)graph->count, sizeof(*e.nodes));
  e.nodes_f32 = calloc((size_t)graph->count, sizeof(*e.nodes_f32));
  /* Weights laid out by the runtime, as the text decoder's
   * (stablehlo_internal.h), but linears as stored (used_by_linear,
   * stablehlo_lower.c): IREE then never copies an unaligned parameter per
   * module, and the buckets of an encoder share one copy
   * (xla_media_encoder.c). */
  if (weights) {
    e.nodes_transposed = calloc((size_t)graph->count, sizeof(*e.nodes_transposed));
    e.nodes_transposed_f32 = calloc((size_t)graph->count, sizeof(*e.nodes_transposed_f32));
  }
  vlm_status status = e.nodes && e.nodes_f32 && (!weights || (e.nodes_transposed && e.nodes_transposed_f32))
                          ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  char type[160];
  if (!status) {
    vlm_sb_appendf(out, "  func.func @%s(", function->name);
    for (int i = 0; i < count; i++) {
      xla_type_text(&arguments[i], type, sizeof(type));
      vlm_sb_appendf(out, "%s%s: %s", i ? ", " : "", arguments[i].name, type);
    }
    vlm_sb_appendf(out, ") -> (");
    for (int i = 0; i < function->output_count; i++) {
      const vlm_node *result = &graph->nodes[function->outputs[i]];
      xla_value like = xla_make_value("f32", result->rank, result->shape);
      xla_type_text(&like, type, sizeof(type));
      vlm_sb_appendf(out, "%s%s", i ? ", " : "", type);
    }
    vlm_sb_appendf(out, ") {\n");
  }
  for (int32_t i = 0; !status && i < graph->count; i++) status = xla_lower_node(&e, i);
  if (!status) {
    xla_value results[VLM_XLA_GRAPH_MAX_OUTPUTS];
    for (int i = 0; i < function->output_count; i++) results[i] = xla_node_f32(&e, function->outputs[i]);
    vlm_sb_appendf(out, "    return ");
    for (int i = 0; i < function->output_count; i++) vlm_sb_appendf(out, "%s%s", i ? ", " : "", results[i].name);
    vlm_sb_appendf(out, " : ");
    for (int i = 0; i < function->output_count; i++) {
      xla_type_text(&results[i], type, sizeof(type));
      vlm_sb_appendf(out, "%s%s", i ? ", " : "", type);
    }
    vlm_sb_appendf(out, "\n  }\n\n");
  }
  free(e.nodes);
  free(e.nodes_f32);
  free(e.nodes_transposed);
  free(e.nodes_transposed_f32);
  return status;
}

static vlm_status add_key_fields(const vlm_stablehlo_graph_function *functions, int count,
                                 const vlm_checkpoint *weights, const xla_weight_list *declared, vlm_xla_key *key) {
  vlm_string_builder listing = {0};
  for (int i = 0; i < count; i++)
    vlm_sb_appendf(&listing, "%s%s:%016llx", i ? "," : "", functions[i].name,
                   (unsigned long long)vlm_stablehlo_graph_hash(functions[i].graph));
  char *text = vlm_sb_finish(&listing);
  if (!text) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  /* A long list of functions is kept as its hash (key values are bounded). */
  vlm_status status = strlen(text) < VLM_XLA_KEY_VALUE_LENGTH
                          ? vlm_xla_key_set(key, "functions", "%s", text)
                          : vlm_xla_key_set(key, "functions", "%d:%016llx", count,
                                            (unsigned long long)vlm_fnv1a64(text, strlen(text), VLM_FNV1A64_SEED));
  free(text);
  VLM_RETURN_IF_ERROR(status);
  uint64_t weights_hash = VLM_FNV1A64_SEED;
  char dtypes[32] = "none";
  if (weights && declared->count) xla_weights_signature(weights, declared, &weights_hash, dtypes, sizeof(dtypes));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "graph_emitter_version", "%d", VLM_XLA_GRAPH_EMITTER_VERSION));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "weights_signature", "%016llx", (unsigned long long)weights_hash));
  return vlm_xla_key_set(key, "dtype", "compute=f32,weights=%s", dtypes);
}

vlm_status vlm_stablehlo_emit_graph_module(const char *module_name, const char *description,
                                           const vlm_stablehlo_graph_function *functions, int function_count,
                                           const vlm_checkpoint *weights, vlm_xla_key *key, char **out_module) {
  *out_module = NULL;
  if (function_count < 1) return VLM_ERROR(INVALID_ARGUMENT, "xla emitter: a module needs a function");
  xla_weight_list declared = {.items = calloc(XLA_MAX_WEIGHTS, sizeof(xla_weight))};
  vlm_string_builder body = {0}, module = {0};
  vlm_status status = declared.items ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int i = 0; !status && i < function_count; i++)
    status = vlm_status_annotate(lower_function(&functions[i], weights, &declared, &body), "function '%s'",
                                 functions[i].name ? functions[i].name : "?");
  if (!status) status = add_key_fields(functions, function_count, weights, &declared, key);
  if (!status) {
    xla_emit_compatibility(&body, GRAPH_CONTRACT_VERSION, VLM_XLA_GRAPH_EMITTER_VERSION, vlm_xla_key_hash(key));
    xla_emit_module_header(&module, module_name, description ? description : "", GRAPH_CONTRACT_VERSION,
                           VLM_XLA_GRAPH_EMITTER_VERSION, key, weights, &declared);
    vlm_sb_appendf(&module, "\n");
    char *text = vlm_sb_finish(&body);
    if (text) vlm_sb_append(&module, text, strlen(text));
    else module.failed = true;
    free(text);
    vlm_sb_appendf(&module, "}\n");
    *out_module = vlm_sb_finish(&module);
    if (!*out_module) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory emitting a graph module");
  }
  vlm_sb_release(&body);
  vlm_sb_release(&module);
  free(declared.items);
  return status;
}
