/* See nn.h. */
#include "models/nn.h"

#include <stdarg.h>
#include <stdio.h>

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})

void vlm_nn_declare_linear(vlm_tensor_manifest *manifest, vlm_component component, const char *module,
                           int64_t out, int64_t in, bool bias) {
  vlm_manifest_add(manifest, component, 2, SHAPE(out, in), "%s.weight", module);
  if (bias) vlm_manifest_add(manifest, component, 1, SHAPE(out), "%s.bias", module);
}

void vlm_nn_declare_layer_norm(vlm_tensor_manifest *manifest, vlm_component component, const char *module,
                               int64_t width) {
  vlm_manifest_add(manifest, component, 1, SHAPE(width), "%s.weight", module);
  vlm_manifest_add(manifest, component, 1, SHAPE(width), "%s.bias", module);
}

int32_t vlm_nn_weight(vlm_graph *graph, int rank, const int64_t *shape, const char *name_format, ...) {
  /* Twice a node name: a name cut here is too long for the graph anyway,
   * which refuses it. */
  char name[2 * VLM_GRAPH_NAME_LENGTH];
  va_list args;
  va_start(args, name_format);
  vsnprintf(name, sizeof(name), name_format, args);
  va_end(args);
  return vlm_graph_weight(graph, name, VLM_DTYPE_INVALID, rank, shape);
}

int32_t vlm_nn_linear(vlm_graph *graph, int32_t x, const char *module, int64_t out, int64_t in, bool bias) {
  int32_t weight = vlm_nn_weight(graph, 2, SHAPE(out, in), "%s.weight", module);
  int32_t bias_node = bias ? vlm_nn_weight(graph, 1, SHAPE(out), "%s.bias", module) : -1;
  return vlm_graph_linear(graph, x, weight, bias_node, "%s", module);
}

int32_t vlm_nn_layer_norm(vlm_graph *graph, int32_t x, const char *module, int64_t width, double epsilon) {
  int32_t weight = vlm_nn_weight(graph, 1, SHAPE(width), "%s.weight", module);
  int32_t bias = vlm_nn_weight(graph, 1, SHAPE(width), "%s.bias", module);
  return vlm_graph_layer_norm(graph, x, weight, bias, epsilon, "%s", module);
}

int32_t vlm_nn_rms_norm(vlm_graph *graph, int32_t x, const char *module, int64_t width, double epsilon,
                        double weight_offset) {
  int32_t weight = vlm_nn_weight(graph, 1, SHAPE(width), "%s.weight", module);
  return vlm_graph_rms_norm(graph, x, weight, epsilon, weight_offset, "%s", module);
}
