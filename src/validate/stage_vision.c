/* The vision stages of a golden case: vision_encoder (the selected hidden
 * state of the tower, class token first), vision_features (after the select
 * strategy), projector, and the merged input_embeddings. The tower is fed the
 * golden's own processor.pixel_values, so these stages prove the model half
 * independently of the image processor (whose stages are processor.*).
 *
 * bfloat16 cases hold no processor tensors: the oracle runs the processor in
 * float32 whatever the model dtype, so each image's pixel values are read
 * from a float32 sibling case of the same family that processed the same
 * image file (tools/oracle/harness.py), or from the cases the manifest names
 * in "pixel_values_from" (a family variant reusing another's images). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/thread_pool.h"
#include "engine/vision_model.h"
#include "validate/compare.h"
#include "validate/stages.h"

#define PIXEL_VALUES "processor.pixel_values"

typedef struct vision_run {
  vlm_thread_pool *pool;
  vlm_vision_model *model;
  float *pixels;            /* [images, 3, H, W], owned copy */
  int64_t image_count;
  int64_t image_values;     /* values per image */
  /* Captured intermediates, as double for the comparison helper. */
  double *hidden_state, *features;
  int64_t hidden_state_count, features_count;
  float *projected;         /* [images * tokens, text hidden] */
} vision_run;

static void vision_run_release(vision_run *run) {
  vlm_vision_model_release(run->model);
  vlm_thread_pool_release(run->pool);
  free(run->pixels);
  free(run->hidden_state);
  free(run->features);
  free(run->projected);
}

/* ---------------------------------------------------------------------- */
/* Pixel values                                                            */
/* ---------------------------------------------------------------------- */

static const vlm_json_value *image_list(const vlm_golden_case *golden) {
  const vlm_json_value *images = vlm_json_object_get(golden->manifest.root, "images");
  return images && images->type == VLM_JSON_ARRAY ? images : NULL;
}

static vlm_status copy_pixels(const vlm_tensor *tensor, vision_run *run) {
  if (tensor->dtype != VLM_DTYPE_F32 || tensor->rank != 4)
    return VLM_ERROR(DATA_LOSS, PIXEL_VALUES " is not an f32 [images, channels, height, width] tensor");
  int64_t count = vlm_tensor_element_count(tensor);
  run->pixels = malloc((size_t)count * sizeof(float));
  if (!run->pixels) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  memcpy(run->pixels, tensor->data, (size_t)count * sizeof(float));
  run->image_count = tensor->shape[0];
  run->image_values = count / tensor->shape[0];
  return VLM_OK;
}

/* Copies the pixel values of every image of ours that `sibling` also
 * processed; `found[i]` marks the images done. */
static void take_matching_images(const vlm_golden_case *sibling, const vlm_json_value *ours,
                                 vision_run *run, bool *found) {
  const vlm_json_value *theirs = image_list(sibling);
  vlm_tensor pixels;
  if (!theirs) return;
  vlm_status status = vlm_golden_case_tensor(sibling, PIXEL_VALUES, &pixels);
  if (status || pixels.dtype != VLM_DTYPE_F32 || pixels.rank != 4 ||
      pixels.shape[0] != (int64_t)theirs->as.array.count) {
    vlm_status_free(status);
    return;
  }
  int64_t values = vlm_tensor_element_count(&pixels) / pixels.shape[0];
  if (run->image_values && run->image_values != values) return;
  run->image_values = values;
  if (!run->pixels) run->pixels = malloc((size_t)(run->image_count * values) * sizeof(float));
  for (int64_t i = 0; run->pixels && i < run->image_count; i++)
    for (size_t j = 0; !found[i] && j < theirs->as.array.count; j++) {
      const char *a = vlm_json_get_string(&ours->as.array.items[i]);
      const char *b = vlm_json_get_string(&theirs->as.array.items[j]);
      if (!a || !b || strcmp(a, b) != 0) continue;
      memcpy(run->pixels + i * values, (const float *)pixels.data + (int64_t)j * values,
             (size_t)values * sizeof(float));
      found[i] = true;
    }
}

/* Gathers each of our images from sibling cases (same parent directory)
 * that processed the same image file. */
static vlm_status pixels_from_siblings(const vlm_compare_context *context, vision_run *run) {
  const vlm_json_value *ours = image_list(context->golden);
  if (!ours || ours->as.array.count == 0) return VLM_ERROR(NOT_FOUND, "the case has no images");
  run->image_count = (int64_t)ours->as.array.count;
  bool *found = calloc((size_t)run->image_count, sizeof(bool));
  char parent[4096];
  snprintf(parent, sizeof(parent), "%s/..", context->golden->directory);
  DIR *directory = found ? opendir(parent) : NULL;
  for (struct dirent *entry; directory && (entry = readdir(directory)) != NULL;) {
    if (entry->d_name[0] == '.') continue;
    char path[4096 + 256];
    snprintf(path, sizeof(path), "%s/%s", parent, entry->d_name);
    vlm_golden_case sibling;
    vlm_status status = vlm_golden_case_open(path, context->allocator, &sibling);
    if (status) {
      vlm_status_free(status);
      continue;
    }
    take_matching_images(&sibling, ours, run, found);
    vlm_golden_case_close(&sibling);
  }
  if (directory) closedir(directory);
  /* Cases whose images another family's case already processed name it
   * ("pixel_values_from", relative to the case directory). */
  const vlm_json_value *elsewhere = vlm_json_object_get(context->golden->manifest.root, "pixel_values_from");
  for (size_t i = 0; found && elsewhere && elsewhere->type == VLM_JSON_ARRAY && i < elsewhere->as.array.count; i++) {
    const char *relative = vlm_json_get_string(&elsewhere->as.array.items[i]);
    if (!relative) continue;
    char path[8192];
    snprintf(path, sizeof(path), "%s/%s", context->golden->directory, relative);
    vlm_golden_case other;
    vlm_status status = vlm_golden_case_open(path, context->allocator, &other);
    if (status) {
      vlm_status_free(status);
      continue;
    }
    take_matching_images(&other, ours, run, found);
    vlm_golden_case_close(&other);
  }
  int64_t missing = -1;
  for (int64_t i = run->image_count - 1; found && i >= 0; i--)
    if (!found[i]) missing = i;
  vlm_status status = VLM_OK;
  if (!found || !run->pixels) status = VLM_ERROR(NOT_FOUND, "no " PIXEL_VALUES " for this case's images in it or its sibling cases");
  else if (missing >= 0)
    status = VLM_ERROR(NOT_FOUND, "no case next to this one holds " PIXEL_VALUES " for image %lld (%s)",
                       (long long)missing, vlm_json_get_string(&ours->as.array.items[missing]));
  free(found);
  return status;
}

static vlm_status read_pixels(const vlm_compare_context *context, vision_run *run) {
  vlm_tensor pixels;
  vlm_status status = vlm_golden_case_tensor(context->golden, PIXEL_VALUES, &pixels);
  if (!status) return copy_pixels(&pixels, run);
  vlm_status_free(status);
  return pixels_from_siblings(context, run);
}

/* ---------------------------------------------------------------------- */
/* Running the tower                                                       */
/* ---------------------------------------------------------------------- */

static double *copy_as_double(const float *values, int64_t count) {
  double *copy = malloc((size_t)(count ? count : 1) * sizeof(double));
  for (int64_t i = 0; copy && i < count; i++) copy[i] = values[i];
  return copy;
}

static void capture(void *context, const vlm_node *node, const float *values) {
  vision_run *run = context;
  const vlm_vision_graph_nodes *nodes = vlm_vision_model_last_nodes(run->model);
  int64_t count = 1;
  for (int i = 0; i < node->rank; i++) count *= node->shape[i];
  /* The first feature layer's hidden state is the "vision_encoder" stage. */
  if (strcmp(node->name, nodes->hidden_state_names[0]) == 0 && !run->hidden_state) {
    run->hidden_state = copy_as_double(values, count);
    run->hidden_state_count = count;
  }
  if (strcmp(node->name, nodes->features_name) == 0 && !run->features) {
    run->features = copy_as_double(values, count);
    run->features_count = count;
  }
}

static vlm_status encode_golden_images(const vlm_compare_context *context, vision_run *run) {
  memset(run, 0, sizeof(*run));
  VLM_RETURN_IF_ERROR(read_pixels(context, run));
  VLM_RETURN_IF_ERROR(vlm_thread_pool_create(context->thread_count, context->allocator, &run->pool));
  vlm_vision_model_options options = {.pool = run->pool, .allocator = context->allocator};
  VLM_RETURN_IF_ERROR(vlm_vision_model_open(context->model_directory, &options, &run->model));
  const vlm_vision_config *vision = vlm_vision_model_description(run->model)->vision;
  vlm_pixel_values *images = calloc((size_t)run->image_count, sizeof(*images));
  if (!images) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  int64_t height = vision->image_height, width = vision->image_width;
  int64_t channels = height > 0 && width > 0 ? run->image_values / (height * width) : 0;
  for (int64_t i = 0; i < run->image_count; i++)
    images[i] = (vlm_pixel_values){run->pixels + i * run->image_values, channels, height, width};
  int64_t rows = run->image_count * vlm_vision_model_tokens_per_image(run->model);
  run->projected = malloc((size_t)(rows * vlm_vision_model_output_width(run->model)) * sizeof(float));
  vlm_status status = run->projected ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_vision_trace trace = {.node_observer = capture, .node_context = run};
  vlm_vision_model_set_trace(run->model, &trace);
  if (!status) status = vlm_vision_model_encode(run->model, images, (int)run->image_count, run->projected);
  vlm_vision_model_set_trace(run->model, NULL);
  free(images);
  if (!status && (!run->hidden_state || !run->features))
    status = VLM_ERROR(INTERNAL, "the vision graph did not produce its intermediates");
  return status;
}

/* Transformers ran a bfloat16 case in bfloat16: its outputs are rounded. */
static void round_like_golden(const vlm_compare_context *context, double *values, int64_t count) {
  if (!context->golden->dtype || strcmp(context->golden->dtype, "bfloat16") != 0) return;
  for (int64_t i = 0; i < count; i++) values[i] = vlm_bf16_to_f32(vlm_f32_to_bf16((float)values[i]));
}

static vlm_status compare_captured(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                   vlm_stage_result *result, int which) {
  vision_run run;
  vlm_status status = encode_golden_images(context, &run);
  double *values = NULL;
  int64_t count = 0;
  if (!status && which == 0) values = run.hidden_state, count = run.hidden_state_count;
  if (!status && which == 1) values = run.features, count = run.features_count;
  if (!status && which == 2) {
    count = run.image_count * vlm_vision_model_tokens_per_image(run.model) *
            vlm_vision_model_output_width(run.model);
    free(run.features);
    run.features = values = copy_as_double(run.projected, count);
    if (!values) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  if (!status) {
    round_like_golden(context, values, count);
    status = vlm_compare_with_golden_tensor(context, stage, values, count, result);
  }
  vision_run_release(&run);
  return status;
}

vlm_status vlm_stage_vision_encoder(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                    vlm_stage_result *result) {
  return compare_captured(context, stage, result, 0);
}

vlm_status vlm_stage_vision_features(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                     vlm_stage_result *result) {
  return compare_captured(context, stage, result, 1);
}

vlm_status vlm_stage_projector(const vlm_compare_context *context, const vlm_golden_stage *stage,
                               vlm_stage_result *result) {
  return compare_captured(context, stage, result, 2);
}

/* ---------------------------------------------------------------------- */
/* Merged embeddings                                                       */
/* ---------------------------------------------------------------------- */

/* input_embeddings: text-only cases are plain token embeddings
 * (stage_decoder.c); image cases merge the projected features of the golden
 * pixel values into the golden (already expanded) input_ids. */
vlm_status vlm_stage_merged_input_embeddings(const vlm_compare_context *context,
                                             const vlm_golden_stage *stage, vlm_stage_result *result) {
  if (vlm_golden_image_count(context->golden) == 0)
    return vlm_stage_input_embeddings(context, stage, result);
  int32_t *ids = NULL;
  int64_t count = 0;
  vision_run run;
  memset(&run, 0, sizeof(run));
  vlm_status status = vlm_golden_token_ids(context->golden, &ids, &count);
  if (!status) status = encode_golden_images(context, &run);
  int64_t width = run.model ? vlm_vision_model_output_width(run.model) : 0;
  float *merged = status ? NULL : malloc((size_t)(count * width + 1) * sizeof(float));
  if (!status && !merged) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  int64_t rows = run.image_count * (run.model ? vlm_vision_model_tokens_per_image(run.model) : 0);
  if (!status) status = vlm_vision_model_merge(run.model, ids, count, run.projected, rows, merged);
  double *values = status ? NULL : copy_as_double(merged, count * width);
  if (!status && !values) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (!status) {
    round_like_golden(context, values, count * width);
    status = vlm_compare_with_golden_tensor(context, stage, values, count * width, result);
  }
  if (!status && !result->detail[0])
    snprintf(result->detail, sizeof(result->detail), "%lld image(s) merged from the golden pixel values",
             (long long)run.image_count);
  free(values);
  free(merged);
  free(ids);
  vision_run_release(&run);
  return status;
}
