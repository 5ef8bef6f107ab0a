/* See cpu_encoder.h. */
#include "backends/cpu/cpu_encoder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu_packs.h"
#include "core/status.h"
#include "core/tensor_list.h"
#include "graph/graph.h"

#define NODE_NAMES 64

/* What the encoder needs of a family's image or audio path (the same
 * three functions in both, models/family.h). */
typedef struct encoder_path {
  vlm_status (*encoder_rows)(const vlm_model_config *config, const vlm_media_item *item, int64_t *out_rows);
  vlm_status (*encoder_inputs)(const vlm_model_config *config, const vlm_media_item *item, int64_t rows,
                               vlm_tensor_list *out);
  vlm_status (*build_encoder)(const vlm_model_config *config, int64_t rows, vlm_graph *graph,
                              vlm_encoder_nodes *out_nodes);
} encoder_path;

struct vlm_cpu_encoder {
  vlm_model *model;
  vlm_media_kind kind;
  encoder_path path[1];
  vlm_thread_pool *pool;
  vlm_cpu_packs *packs; /* the encoder's linear weights, packed on first use */
  vlm_encoder_trace trace;
  vlm_encoder_nodes last_nodes;
  char stage_node_names[VLM_ENCODER_MAX_STAGES + 1][VLM_GRAPH_NAME_LENGTH];
  int64_t output_width;
  uint64_t bound_bytes[VLM_COMPONENT_COUNT];
};

vlm_status vlm_cpu_encoder_open(vlm_model *model, vlm_media_kind kind, const vlm_cpu_encoder_options *options,
                                vlm_cpu_encoder **out_encoder) {
  *out_encoder = NULL;
  const vlm_family_image *image = kind == VLM_MEDIA_IMAGE && model->family ? model->family->image : NULL;
  const vlm_family_audio *audio = kind == VLM_MEDIA_AUDIO && model->family ? model->family->audio : NULL;
  if (!image && !audio)
    return VLM_ERROR(UNIMPLEMENTED, "%s: model_type '%s' has no %s path in vlm", model->directory,
                     model->config.model_type, vlm_media_kind_name(kind));
  vlm_cpu_encoder *encoder = calloc(1, sizeof(*encoder));
  if (!encoder) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  encoder->model = vlm_model_retain(model);
  encoder->kind = kind;
  if (image) *encoder->path = (encoder_path){image->encoder_rows, image->encoder_inputs, image->build_encoder};
  else *encoder->path = (encoder_path){audio->encoder_rows, audio->encoder_inputs, audio->build_encoder};
  encoder->pool = options ? options->pool : NULL;
  encoder->output_width = vlm_model_feature_width(model);
  vlm_status status = vlm_cpu_packs_create(&encoder->packs);
  if (!status)
    cpu_kernel_log_choice(kind == VLM_MEDIA_AUDIO ? "audio encoder" : "image encoder", vlm_thread_pool_size(encoder->pool));
  if (status) {
    vlm_cpu_encoder_release(encoder);
    return status;
  }
  *out_encoder = encoder;
  return VLM_OK;
}

void vlm_cpu_encoder_release(vlm_cpu_encoder *encoder) {
  if (!encoder) return;
  vlm_cpu_packs_release(encoder->packs);
  vlm_model_release(encoder->model);
  free(encoder);
}

int64_t vlm_cpu_encoder_output_width(const vlm_cpu_encoder *encoder) { return encoder->output_width; }

void vlm_cpu_encoder_set_trace(vlm_cpu_encoder *encoder, const vlm_encoder_trace *trace) {
  if (trace) encoder->trace = *trace;
  else memset(&encoder->trace, 0, sizeof(encoder->trace));
}

const vlm_encoder_nodes *vlm_cpu_encoder_last_nodes(const vlm_cpu_encoder *encoder) { return &encoder->last_nodes; }

const char *vlm_cpu_encoder_node_name(const vlm_cpu_encoder *encoder, int32_t index) {
  for (int i = 0; i < encoder->last_nodes.stage_count; i++)
    if (encoder->last_nodes.stages[i].node == index) return encoder->stage_node_names[i];
  if (index == encoder->last_nodes.output) return encoder->stage_node_names[VLM_ENCODER_MAX_STAGES];
  return "";
}

uint64_t vlm_cpu_encoder_bound_bytes(const vlm_cpu_encoder *encoder, vlm_component component) {
  return (unsigned)component < VLM_COMPONENT_COUNT ? encoder->bound_bytes[component] : 0;
}

/* The single accounting point for every tensor the encoder reads. */
static void account_weight(void *context, const char *name, const vlm_tensor *view) {
  vlm_cpu_encoder *encoder = context;
  const vlm_expected_tensor *declared = vlm_manifest_find(&encoder->model->manifest, name);
  vlm_component component = declared ? declared->component : vlm_component_from_name(name);
  encoder->bound_bytes[component] += vlm_tensor_byte_size(view);
  if (encoder->trace.weight_observer) encoder->trace.weight_observer(encoder->trace.weight_context, name, view);
}

static void remember_names(vlm_cpu_encoder *encoder, const vlm_graph *graph) {
  for (int i = 0; i < encoder->last_nodes.stage_count; i++)
    snprintf(encoder->stage_node_names[i], VLM_GRAPH_NAME_LENGTH, "%s",
             graph->nodes[encoder->last_nodes.stages[i].node].name);
  snprintf(encoder->stage_node_names[VLM_ENCODER_MAX_STAGES], VLM_GRAPH_NAME_LENGTH, "%s",
           graph->nodes[encoder->last_nodes.output].name);
}

vlm_status vlm_cpu_encoder_encode(vlm_cpu_encoder *encoder, const vlm_media_item *item, float *out_features) {
  const vlm_model_config *config = &encoder->model->config;
  if (!item || item->kind != encoder->kind || item->token_count <= 0)
    return VLM_ERROR(INVALID_ARGUMENT, "encode: not an %s item with placeholder tokens", vlm_media_kind_name(encoder->kind));
  int64_t rows = 0;
  VLM_RETURN_IF_ERROR(encoder->path->encoder_rows(config, item, &rows));
  vlm_tensor_list inputs = {0};
  vlm_graph graph;
  vlm_graph_init(&graph);
  vlm_status status = encoder->path->encoder_inputs(config, item, rows, &inputs);
  if (!status) status = encoder->path->build_encoder(config, rows, &graph, &encoder->last_nodes);
  if (!status) status = vlm_graph_check_inputs(&graph, &inputs, NULL, 0);
  const vlm_node *output = !status ? vlm_graph_node(&graph, encoder->last_nodes.output) : NULL;
  if (!status && (!output || output->rank != 2 || output->shape[1] != encoder->output_width ||
                  output->shape[0] < item->token_count))
    status = VLM_ERROR(INTERNAL, "the encoder graph gives no [%lld, %lld] features", (long long)item->token_count,
                       (long long)encoder->output_width);
  float *all_rows = NULL;
  if (!status) {
    remember_names(encoder, &graph);
    graph.output = encoder->last_nodes.output;
    bool padded = output->shape[0] != item->token_count;
    all_rows = padded ? malloc((size_t)(output->shape[0] * output->shape[1]) * sizeof(float)) : out_features;
    if (!all_rows) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for the encoder's output");
  }
  if (!status) {
    vlm_cpu_graph_run run = {.graph = &graph, .weights = encoder->model->weights, .pool = encoder->pool,
                             .inputs = &inputs, .observer = encoder->trace.node_observer,
                             .observer_context = encoder->trace.node_context, .weight_observer = account_weight,
                             .weight_observer_context = encoder, .packs = encoder->packs};
    status = vlm_cpu_graph_execute(&run, all_rows);
    if (!status && all_rows != out_features)
      memcpy(out_features, all_rows, (size_t)(item->token_count * encoder->output_width) * sizeof(float));
  }
  if (all_rows != out_features) free(all_rows);
  vlm_graph_release(&graph);
  vlm_tensor_list_release(&inputs);
  return status;
}

/* ---- The engine's table ---------------------------------------------------- */

static int64_t table_output_width(void *self) { return vlm_cpu_encoder_output_width(self); }
static vlm_status table_encode(void *self, const vlm_media_item *item, float *out) {
  return vlm_cpu_encoder_encode(self, item, out);
}
static void table_release(void *self) { vlm_cpu_encoder_release(self); }

static const vlm_media_encoder_operations cpu_image_operations = {
    .backend = "cpu", .kind = VLM_MEDIA_IMAGE, .output_width = table_output_width, .encode = table_encode,
    .release = table_release};
static const vlm_media_encoder_operations cpu_audio_operations = {
    .backend = "cpu", .kind = VLM_MEDIA_AUDIO, .output_width = table_output_width, .encode = table_encode,
    .release = table_release};

vlm_status vlm_media_encoder_open_cpu(vlm_model *model, vlm_media_kind kind, const vlm_cpu_encoder_options *options,
                                      vlm_media_encoder **out_encoder) {
  *out_encoder = NULL;
  vlm_media_encoder *handle = calloc(1, sizeof(*handle));
  if (!handle) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_cpu_encoder *encoder = NULL;
  vlm_status status = vlm_cpu_encoder_open(model, kind, options, &encoder);
  if (status) {
    free(handle);
    return status;
  }
  handle->operations = kind == VLM_MEDIA_AUDIO ? &cpu_audio_operations : &cpu_image_operations;
  handle->self = encoder;
  *out_encoder = handle;
  return VLM_OK;
}
