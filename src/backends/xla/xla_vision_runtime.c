/* The vision module's runtime (xla_vision_runtime.h): the graph's inputs
 * prepared on the host exactly as for the cpu backend
 * (vlm_vision_prepare_inputs), one bound `encode` call per images_per_call
 * images, results copied out of the artifact's buffers. */
#define PY_SSIZE_T_CLEAN
#include "backends/xla/xla_runtime_internal.h"

#include "backends/xla/xla_vision_runtime.h"

#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/tensor_list.h"

enum { CALL_ENCODE, CALL_COMPATIBILITY, CALL_COUNT };
#define MAX_INPUTS 8

struct vlm_xla_vision_runtime {
  const vlm_xla_vision_encoder *model;
  int32_t images_per_call;
  int64_t tokens_per_image, projected_width, features_width;
  PyObject *session;
  PyObject *calls[CALL_COUNT];
  /* The encode function's arguments: the graph's inputs in graph order. */
  int input_count;
  char input_names[MAX_INPUTS][VLM_GRAPH_NAME_LENGTH];
  xla_binding input_bindings[MAX_INPUTS];
  xla_host_buffer inputs[MAX_INPUTS], projected, features, compatibility;
  float *zero_image;                /* pixel values of the padding images */
};

/* One host buffer per graph input, shaped as the graph for images_per_call
 * images has it. */
static vlm_status allocate_buffers(vlm_xla_vision_runtime *r) {
  const vlm_vision_description *description = &r->model->description;
  vlm_graph graph;
  vlm_graph_init(&graph);
  vlm_vision_graph_nodes nodes;
  vlm_status status = vlm_build_vision_graph(description, r->images_per_call, &graph, &nodes);
  for (int32_t i = 0; !status && i < graph.count; i++) {
    const vlm_node *node = &graph.nodes[i];
    if (node->op != VLM_OP_INPUT) continue;
    if (r->input_count == MAX_INPUTS || node->rank > 5) {
      status = VLM_ERROR(UNIMPLEMENTED, "xla vision runtime: the graph has too many or too large inputs");
      break;
    }
    int k = r->input_count++;
    snprintf(r->input_names[k], sizeof(r->input_names[k]), "%s", node->name);
    int64_t count = 1;
    for (int d = 0; d < node->rank; d++) count *= node->shape[d];
    status = xla_buffer_allocate(&r->inputs[k], (size_t)count * 4);
    r->input_bindings[k] = (xla_binding){&r->inputs[k], node->dtype == VLM_DTYPE_I32 ? "i32" : "f32", node->rank, {0}};
    memcpy(r->input_bindings[k].shape, node->shape, sizeof(int64_t) * (size_t)node->rank);
  }
  vlm_graph_release(&graph);
  VLM_RETURN_IF_ERROR(status);
  const vlm_vision_config *vision = description->vision;
  size_t f32 = sizeof(float), rows = (size_t)r->images_per_call * (size_t)r->tokens_per_image;
  r->zero_image = calloc((size_t)(vision->num_channels * vision->image_height * vision->image_width), f32);
  if (!r->zero_image) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->projected, rows * (size_t)r->projected_width * f32));
  VLM_RETURN_IF_ERROR(xla_buffer_allocate(&r->features, rows * (size_t)r->features_width * f32));
  return xla_buffer_allocate(&r->compatibility, 4 * sizeof(int32_t));
}

static vlm_status load_session(vlm_xla_vision_runtime *r, const char *artifact_dir, const char *driver) {
  int64_t images = r->images_per_call, rows = images * r->tokens_per_image;
  xla_binding outputs[2] = {{&r->projected, "f32", 2, {rows, r->projected_width}},
                            {&r->features, "f32", 2, {rows, r->features_width}}};
  xla_binding compatibility = {&r->compatibility, "i32", 1, {4}};
  PyGILState_STATE gil = PyGILState_Ensure();
  vlm_status status = xla_session_open(r->model->weights, artifact_dir, driver, &r->session);
  if (!status)
    status = xla_session_bind(r->session, "encode", r->input_count, r->input_bindings, 2, outputs,
                              &r->calls[CALL_ENCODE]);
  if (!status)
    status = xla_session_bind(r->session, "compatibility", 0, NULL, 1, &compatibility, &r->calls[CALL_COMPATIBILITY]);
  PyGILState_Release(gil);
  return status;
}

/* The artifact's own record of what it was built from. */
static vlm_status check_compatibility(vlm_xla_vision_runtime *r, const vlm_xla_key *emit_key, const char *artifact_dir) {
  VLM_RETURN_IF_ERROR(xla_invoke(r->calls[CALL_COMPATIBILITY], "compatibility"));
  const int32_t *got = r->compatibility.data;
  uint64_t hash = vlm_xla_key_hash(emit_key);
  int32_t want[4] = {VLM_XLA_VISION_CONTRACT_VERSION, VLM_XLA_VISION_EMITTER_VERSION, (int32_t)(uint32_t)hash,
                     (int32_t)(uint32_t)(hash >> 32)};
  if (memcmp(got, want, sizeof(want)) != 0)
    return VLM_ERROR(FAILED_PRECONDITION,
                     "%s: incompatible artifact: module.vmfb was built for vision contract %d, emitter %d, key "
                     "%08x%08x; expected contract %d, emitter %d, key %016llx (sidecar and artifact disagree)",
                     artifact_dir, got[0], got[1], (uint32_t)got[3], (uint32_t)got[2], want[0], want[1],
                     (unsigned long long)hash);
  return VLM_OK;
}

vlm_status vlm_xla_vision_runtime_open(const vlm_xla_vision_encoder *model,
                                       const vlm_stablehlo_vision_options *options, const char *cache_dir,
                                       const char *artifact_dir, const vlm_xla_runtime_options *runtime_options,
                                       vlm_xla_vision_runtime **out_runtime) {
  *out_runtime = NULL;
  vlm_xla_runtime_options defaults = {0};
  if (!runtime_options) runtime_options = &defaults;
  vlm_stablehlo_vision_options resolved = options ? *options : (vlm_stablehlo_vision_options){0};
  if (resolved.images_per_call == 0) resolved.images_per_call = 1;
  /* The key this model and these options need (emitting validates every
   * weight against the checkpoint), with this runtime's release standing in
   * for the compiler's. */
  char *module = NULL;
  vlm_xla_key emit_key, key;
  VLM_RETURN_IF_ERROR(vlm_stablehlo_emit_vision_encoder(model, &resolved, &module, &emit_key));
  free(module);
  char version[256];
  VLM_RETURN_IF_ERROR(vlm_xla_runtime_version(runtime_options, version, sizeof(version)));
  key = emit_key;
  VLM_RETURN_IF_ERROR(vlm_xla_key_add_target(&key, version, runtime_options->target));
  char directory[VLM_XLA_PATH_LENGTH], default_cache[VLM_XLA_PATH_LENGTH];
  if (!cache_dir) {
    vlm_xla_default_cache_dir(default_cache, sizeof(default_cache));
    cache_dir = default_cache;
  }
  if (artifact_dir) snprintf(directory, sizeof(directory), "%s", artifact_dir);
  else vlm_xla_artifact_dir(cache_dir, &key, directory, sizeof(directory));
  VLM_RETURN_IF_ERROR(vlm_xla_artifact_check(directory, &key));

  vlm_xla_vision_runtime *runtime = calloc(1, sizeof(*runtime));
  if (!runtime) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  *runtime = (vlm_xla_vision_runtime){.model = model, .images_per_call = resolved.images_per_call,
                                      .tokens_per_image = vlm_xla_vision_tokens_per_image(model),
                                      .projected_width = vlm_xla_vision_projected_width(model),
                                      .features_width = vlm_xla_vision_features_width(model)};
  vlm_status status = allocate_buffers(runtime);
  if (!status)
    status = load_session(runtime, directory, runtime_options->driver ? runtime_options->driver : "local-sync");
  if (!status) status = check_compatibility(runtime, &emit_key, directory);
  if (status) {
    vlm_xla_vision_runtime_release(runtime);
    return status;
  }
  *out_runtime = runtime;
  return VLM_OK;
}

void vlm_xla_vision_runtime_release(vlm_xla_vision_runtime *runtime) {
  if (!runtime) return;
  if (Py_IsInitialized() && (runtime->session || runtime->calls[CALL_ENCODE] || runtime->calls[CALL_COMPATIBILITY])) {
    PyGILState_STATE gil = PyGILState_Ensure();
    for (int i = 0; i < CALL_COUNT; i++) Py_XDECREF(runtime->calls[i]);
    Py_XDECREF(runtime->session);
    PyGILState_Release(gil);
  }
  for (int i = 0; i < runtime->input_count; i++) free(runtime->inputs[i].data);
  free(runtime->zero_image);
  free(runtime->projected.data);
  free(runtime->features.data);
  free(runtime->compatibility.data);
  free(runtime);
}

static vlm_status check_image(const vlm_xla_vision_runtime *runtime, const vlm_pixel_values *image, int index) {
  const vlm_vision_config *vision = runtime->model->description.vision;
  if (!image->values) return VLM_ERROR(INVALID_ARGUMENT, "image %d has no pixel values", index);
  if (image->channels != vision->num_channels || image->height != vision->image_height ||
      image->width != vision->image_width)
    return VLM_ERROR(INVALID_ARGUMENT,
                     "image %d: pixel_values are [%lld, %lld, %lld], the vision tower takes [%lld, %lld, %lld]",
                     index, (long long)image->channels, (long long)image->height, (long long)image->width,
                     (long long)vision->num_channels, (long long)vision->image_height,
                     (long long)vision->image_width);
  return VLM_OK;
}

vlm_status vlm_xla_vision_encode(vlm_xla_vision_runtime *runtime, const vlm_pixel_values *images, int image_count,
                                 float *out_projected, float *out_features) {
  if (image_count <= 0 || !images || !out_projected)
    return VLM_ERROR(INVALID_ARGUMENT, "xla vision encode: no images or no output");
  for (int i = 0; i < image_count; i++) VLM_RETURN_IF_ERROR(check_image(runtime, &images[i], i));
  const vlm_vision_config *vision = runtime->model->description.vision;
  size_t projected_row = (size_t)runtime->projected_width, features_row = (size_t)runtime->features_width;
  size_t tokens = (size_t)runtime->tokens_per_image;
  vlm_pixel_values call_images[64];
  for (int first = 0; first < image_count; first += runtime->images_per_call) {
    int count = image_count - first < runtime->images_per_call ? image_count - first : runtime->images_per_call;
    /* A partial last call is padded with zero images: each is its own
     * attention segment, so it never touches the real ones. */
    for (int i = 0; i < runtime->images_per_call; i++)
      call_images[i] = i < count ? images[first + i]
                                 : (vlm_pixel_values){runtime->zero_image, vision->num_channels, vision->image_height,
                                                      vision->image_width};
    vlm_tensor_list prepared = {0};
    vlm_status status = vlm_vision_prepare_inputs(&runtime->model->description, call_images,
                                                  runtime->images_per_call, &prepared);
    for (int k = 0; !status && k < runtime->input_count; k++) {
      const vlm_named_tensor *tensor = vlm_tensor_list_find(&prepared, runtime->input_names[k]);
      if (!tensor || vlm_named_tensor_bytes(tensor) != runtime->inputs[k].bytes)
        status = VLM_ERROR(INTERNAL, "xla vision runtime: input '%s' was not prepared as the graph takes it",
                           runtime->input_names[k]);
      else memcpy(runtime->inputs[k].data, tensor->data, runtime->inputs[k].bytes);
    }
    vlm_tensor_list_release(&prepared);
    VLM_RETURN_IF_ERROR(status);
    VLM_RETURN_IF_ERROR(xla_invoke(runtime->calls[CALL_ENCODE], "encode"));
    size_t rows = (size_t)count * tokens, row_offset = (size_t)first * tokens;
    memcpy(out_projected + row_offset * projected_row, runtime->projected.data, rows * projected_row * sizeof(float));
    if (out_features)
      memcpy(out_features + row_offset * features_row, runtime->features.data, rows * features_row * sizeof(float));
  }
  return VLM_OK;
}
