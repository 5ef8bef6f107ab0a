#include "engine/vision_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_kernels.h"
#include "core/checked.h"
#include "core/status.h"
#include "io/checkpoint.h"
#include "models/decoder.h"

struct vlm_vision_model {
  vlm_model_config config;
  const vlm_family *family;
  vlm_vision_description description;
  char embedding_name[VLM_GRAPH_NAME_LENGTH];
  vlm_tensor_manifest manifest;    /* declared components, for the accounting */
  vlm_checkpoint *weights;
  vlm_thread_pool *pool;
  vlm_vision_trace trace;
  vlm_vision_graph_nodes last_nodes;
  uint64_t bound_bytes[VLM_COMPONENT_COUNT];
};

static vlm_status open_parts(vlm_vision_model *model, const char *model_dir,
                             const vlm_vision_model_options *options) {
  VLM_RETURN_IF_ERROR(vlm_model_config_load(model_dir, options->allocator, &model->config));
  model->family = vlm_family_find(model->config.model_type);
  if (!model->family || !model->family->describe_vision || !model->family->describe_decoder)
    return VLM_ERROR(UNIMPLEMENTED, "%s: model_type '%s' has no vision path in vlm", model_dir,
                     model->config.model_type);
  VLM_RETURN_IF_ERROR(model->family->describe_vision(&model->config, &model->description));
  /* Only the decoder's naming is used: where its embedding table lives. */
  vlm_decoder_description decoder;
  model->family->describe_decoder(&model->config, &decoder);
  snprintf(model->embedding_name, sizeof(model->embedding_name), "%sembed_tokens.weight", decoder.prefix);
  vlm_manifest_init(&model->manifest);
  VLM_RETURN_IF_ERROR(model->family->declare_tensors(&model->config, &model->manifest));
  if (model->manifest.out_of_memory) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_checkpoint_options checkpoint_options = {.allocator = options->allocator,
                                               .renames = model->family->renames,
                                               .rename_count = model->family->rename_count};
  return vlm_checkpoint_open(model_dir, &checkpoint_options, &model->weights);
}

vlm_status vlm_vision_model_open(const char *model_dir, const vlm_vision_model_options *options,
                                 vlm_vision_model **out_model) {
  *out_model = NULL;
  vlm_vision_model_options defaults = {0};
  if (!options) options = &defaults;
  vlm_vision_model *model = calloc(1, sizeof(*model));
  if (!model) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  model->pool = options->pool;
  vlm_status status = open_parts(model, model_dir, options);
  if (status) {
    vlm_vision_model_release(model);
    return status;
  }
  *out_model = model;
  return VLM_OK;
}

void vlm_vision_model_release(vlm_vision_model *model) {
  if (!model) return;
  vlm_checkpoint_release(model->weights);
  vlm_manifest_release(&model->manifest);
  vlm_model_config_release(&model->config);
  free(model);
}

const vlm_vision_description *vlm_vision_model_description(const vlm_vision_model *model) {
  return &model->description;
}
int64_t vlm_vision_model_tokens_per_image(const vlm_vision_model *model) {
  return vlm_vision_tokens_per_image(&model->description);
}
int64_t vlm_vision_model_image_token_id(const vlm_vision_model *model) {
  return model->config.image_token_id;
}
int64_t vlm_vision_model_image_tokens(const vlm_vision_model *model, int64_t width, int64_t height) {
  (void)width, (void)height;
  return vlm_vision_tokens_per_image(&model->description);
}

int64_t vlm_vision_model_output_width(const vlm_vision_model *model) {
  return model->description.text_hidden_size;
}
const vlm_vision_graph_nodes *vlm_vision_model_last_nodes(const vlm_vision_model *model) {
  return &model->last_nodes;
}
uint64_t vlm_vision_model_bound_bytes(const vlm_vision_model *model, vlm_component component) {
  return (unsigned)component < VLM_COMPONENT_COUNT ? model->bound_bytes[component] : 0;
}

void vlm_vision_model_set_trace(vlm_vision_model *model, const vlm_vision_trace *trace) {
  if (trace) model->trace = *trace;
  else memset(&model->trace, 0, sizeof(model->trace));
}

/* The single accounting point for every tensor the vision side reads. */
static void account_weight(void *context, const char *name, const vlm_tensor *view) {
  vlm_vision_model *model = context;
  const vlm_expected_tensor *declared = vlm_manifest_find(&model->manifest, name);
  vlm_component component = declared ? declared->component : vlm_component_from_name(name);
  model->bound_bytes[component] += vlm_tensor_byte_size(view);
  if (model->trace.weight_observer) model->trace.weight_observer(model->trace.weight_context, name, view);
}

/* ---------------------------------------------------------------------- */

static vlm_status check_image(const vlm_vision_model *model, const vlm_pixel_values *image, int index) {
  const vlm_vision_config *vision = &model->config.vision;
  if (!image->values)
    return VLM_ERROR(INVALID_ARGUMENT, "image %d has no pixel values", index);
  if (image->channels != vision->num_channels || image->height != vision->image_height ||
      image->width != vision->image_width)
    return VLM_ERROR(INVALID_ARGUMENT,
                     "image %d: pixel_values are [%lld, %lld, %lld], the vision tower takes [%lld, %lld, %lld]",
                     index, (long long)image->channels, (long long)image->height, (long long)image->width,
                     (long long)vision->num_channels, (long long)vision->image_height,
                     (long long)vision->image_width);
  return VLM_OK;
}

static vlm_status run_encoder(vlm_vision_model *model, int image_count, const float *patches,
                              float *out_features) {
  vlm_graph graph;
  vlm_graph_init(&graph);
  vlm_status status = vlm_build_vision_graph(&model->description, image_count, &graph, &model->last_nodes);
  if (!status) {
    vlm_graph_input_binding input = {"patches", patches};
    vlm_cpu_graph_run run = {.graph = &graph, .weights = model->weights, .pool = model->pool,
                             .inputs = &input, .input_count = 1,
                             .observer = model->trace.node_observer,
                             .observer_context = model->trace.node_context,
                             .weight_observer = account_weight, .weight_observer_context = model};
    status = vlm_cpu_graph_execute(&run, out_features);
  }
  vlm_graph_release(&graph);
  return status;
}

vlm_status vlm_vision_model_encode(vlm_vision_model *model, const vlm_pixel_values *images,
                                   int image_count, float *out_features) {
  if (image_count <= 0 || !images) return VLM_ERROR(INVALID_ARGUMENT, "vision encode: no images");
  for (int i = 0; i < image_count; i++) VLM_RETURN_IF_ERROR(check_image(model, &images[i], i));
  const vlm_vision_config *vision = &model->config.vision;
  int64_t patch_values = vlm_vision_patch_count(&model->description) * vlm_vision_patch_width(&model->description);
  size_t bytes = 0;
  if (!vlm_matrix_bytes(image_count, patch_values, sizeof(float), &bytes))
    return VLM_ERROR(OUT_OF_RANGE, "%d images of %lld patch values cannot be allocated", image_count,
                     (long long)patch_values);
  float *patches = malloc(bytes);
  if (!patches) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for %d images' patches", image_count);
  for (int i = 0; i < image_count; i++)
    vlm_vision_patchify(images[i].values, vision->num_channels, vision->image_height, vision->image_width,
                        vision->patch_size, patches + i * patch_values);
  vlm_status status = run_encoder(model, image_count, patches, out_features);
  free(patches);
  return status;
}

/* ---------------------------------------------------------------------- */
/* Placeholders and merging                                                */
/* ---------------------------------------------------------------------- */

int64_t vlm_vision_model_count_placeholders(const vlm_vision_model *model, const int32_t *ids,
                                            int64_t count) {
  int64_t placeholders = 0;
  for (int64_t i = 0; i < count; i++)
    if (ids[i] == model->config.image_token_id) placeholders++;
  return placeholders;
}

vlm_status vlm_vision_model_expand_placeholders(const vlm_vision_model *model, const int32_t *ids,
                                                int64_t count, int image_count, int32_t **out_ids,
                                                int64_t *out_count) {
  *out_ids = NULL;
  *out_count = 0;
  int64_t placeholders = vlm_vision_model_count_placeholders(model, ids, count);
  if (placeholders != image_count)
    return VLM_ERROR(INVALID_ARGUMENT,
                     "the prompt has %lld image placeholder(s) (token %lld) but the request has %d image(s)",
                     (long long)placeholders, (long long)model->config.image_token_id, image_count);
  int64_t per_image = vlm_vision_model_tokens_per_image(model);
  int64_t extra = 0, total = 0;
  size_t bytes = 0;
  if (!vlm_int64_multiply(placeholders, per_image - 1, &extra) || !vlm_int64_add(count, extra, &total) ||
      !vlm_array_bytes(total ? total : 1, sizeof(int32_t), &bytes))
    return VLM_ERROR(OUT_OF_RANGE, "%lld image placeholder(s) of %lld tokens each cannot be expanded",
                     (long long)placeholders, (long long)per_image);
  int32_t *expanded = malloc(bytes);
  if (!expanded) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  int64_t written = 0;
  for (int64_t i = 0; i < count; i++) {
    int64_t copies = ids[i] == model->config.image_token_id ? per_image : 1;
    for (int64_t c = 0; c < copies; c++) expanded[written++] = ids[i];
  }
  *out_ids = expanded;
  *out_count = total;
  return VLM_OK;
}

vlm_status vlm_vision_model_merge(vlm_vision_model *model, const int32_t *ids, int64_t count,
                                  const float *features, int64_t feature_rows, float *out_embeddings) {
  int64_t placeholders = vlm_vision_model_count_placeholders(model, ids, count);
  if (placeholders != feature_rows)
    return VLM_ERROR(INVALID_ARGUMENT,
                     "image features and image tokens do not match: %lld placeholder tokens, %lld feature rows",
                     (long long)placeholders, (long long)feature_rows);
  const vlm_text_config *text = &model->config.text;
  int64_t width = model->description.text_hidden_size;
  vlm_tensor table;
  VLM_RETURN_IF_ERROR(vlm_checkpoint_get(model->weights, model->embedding_name, VLM_DTYPE_INVALID, 2,
                                         (const int64_t[]){text->vocab_size, width}, &table));
  account_weight(model, model->embedding_name, &table);
  int64_t next_feature = 0;
  for (int64_t i = 0; i < count; i++) {
    float *row = out_embeddings + i * width;
    if (ids[i] == model->config.image_token_id) {
      memcpy(row, features + (next_feature++) * width, (size_t)width * sizeof(float));
      continue;
    }
    VLM_RETURN_IF_ERROR(cpu_embedding(table.data, table.dtype, text->vocab_size, width, &ids[i], 1, 1.0f, row));
  }
  return VLM_OK;
}
