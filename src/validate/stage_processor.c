/* The image processor stages of a golden case: processor.<tensor> (the
 * class's default, torchvision-backed implementation, e.g.
 * CLIPImageProcessor or Qwen2VLImageProcessor) and processor_pil.<tensor>
 * (its Pil one), for the tensors the processor returns batched over the
 * images (pixel_values, image_grid_thw). Each image named in the manifest's
 * "images" is decoded from the shared fixtures (../shared/fixtures/
 * media/images next to the project root, or $VLM_FIXTURES_DIR/media/images)
 * and run through the model's processor from the registry
 * (vlm_model_image_item_with), the media items' tensors concatenated along
 * their first axis as Transformers batches them. Missing fixtures FAIL the
 * stage: a stage that cannot be computed is never passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/file.h"
#include "io/json.h"
#include "media/image_processors.h"
#include "media/media_item.h"
#include "models/model.h"
#include "validate/compare.h"
#include "validate/stages.h"
#include "vlm/media.h"

/* The case directory is <root>/tests/goldens/<family>/<case>. */
static char *fixture_images_directory(const vlm_compare_context *context) {
  const char *override = getenv("VLM_FIXTURES_DIR");
  char *base = override ? strdup(override)
                        : vlm_path_join(context->golden->directory, "../../../../../shared/fixtures");
  char *images = base ? vlm_path_join(base, "media/images") : NULL;
  free(base);
  return images;
}

/* Appends one image's `tensor` (as double) to `values`. */
static vlm_status process_image(const vlm_compare_context *context, const char *path, vlm_image_backend backend,
                                const char *tensor, double *values, int64_t capacity, int64_t *count) {
  vlm_image image;
  VLM_RETURN_IF_ERROR(vlm_image_decode_file(path, NULL, &image));
  vlm_media_item item;
  vlm_status status = vlm_model_image_item_with(context->model, &image, backend, NULL, &item);
  vlm_image_release(&image);
  if (status) return status;
  const vlm_named_tensor *found = vlm_tensor_list_find(&item.tensors, tensor);
  int64_t elements = found ? (int64_t)(vlm_named_tensor_bytes(found) / vlm_dtype_size(found->dtype)) : 0;
  if (!found) status = VLM_ERROR(NOT_FOUND, "%s: the %s processor returns no %s", path, item.processor, tensor);
  else if (*count + elements > capacity)
    status = VLM_ERROR(OUT_OF_RANGE, "%s: vlm produced more values than the golden holds", path);
  for (int64_t i = 0; !status && i < elements; i++)
    values[*count + i] = found->dtype == VLM_DTYPE_I32 ? (double)((const int32_t *)found->data)[i]
                                                       : (double)((const float *)found->data)[i];
  if (!status) *count += elements;
  vlm_media_item_release(&item);
  return status;
}

/* The tensor a stage names: "processor.pixel_values" -> "pixel_values". */
static const char *processor_tensor_name(const vlm_golden_stage *stage) {
  const char *dot = strchr(stage->name, '.');
  return dot ? dot + 1 : stage->name;
}

static vlm_status compare_processor_tensor(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                           vlm_image_backend backend, vlm_stage_result *result) {
  const vlm_json_value *images = vlm_json_object_get(context->golden->manifest.root, "images");
  if (!images || images->type != VLM_JSON_ARRAY || images->as.array.count == 0)
    return VLM_ERROR(DATA_LOSS, "the golden manifest lists no \"images\"");
  if (!context->model) return VLM_ERROR(FAILED_PRECONDITION, "%s does not open", context->model_directory);
  char *directory = fixture_images_directory(context);
  if (!directory) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (!vlm_path_exists(directory)) {
    vlm_status missing = VLM_ERROR(NOT_FOUND, "fixture images are missing (%s not found; set "
                                   "VLM_FIXTURES_DIR to ../shared/fixtures)", directory);
    free(directory);
    return missing;
  }
  vlm_tensor expected;
  vlm_status status = vlm_golden_case_tensor(context->golden, stage->tensor, &expected);
  int64_t capacity = status ? 0 : vlm_tensor_element_count(&expected);
  double *values = status ? NULL : malloc((size_t)(capacity ? capacity : 1) * sizeof(double));
  if (!status && !values) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  int64_t count = 0;
  for (size_t i = 0; !status && i < images->as.array.count; i++) {
    const char *name = vlm_json_get_string(vlm_json_array_get(images, i));
    if (!name || strchr(name, '/')) {
      status = VLM_ERROR(DATA_LOSS, "images[%zu] must be a plain file name", i);
      break;
    }
    char *path = vlm_path_join(directory, name);
    status = path ? process_image(context, path, backend, processor_tensor_name(stage), values, capacity, &count)
                  : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    free(path);
  }
  if (!status) status = vlm_compare_with_golden_tensor(context, stage, values, count, result);
  if (!status && result->outcome == VLM_STAGE_MATCH && result->detail[0] == 0)
    snprintf(result->detail, sizeof(result->detail), "%s%s, %zu image(s)", context->model->processor.image_processor_type,
             backend == VLM_IMAGE_BACKEND_PIL ? "Pil" : "", images->as.array.count);
  free(values);
  free(directory);
  return status;
}

vlm_status vlm_stage_processor_tensor(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                      vlm_stage_result *result) {
  return compare_processor_tensor(context, stage, VLM_IMAGE_BACKEND_TORCHVISION, result);
}

vlm_status vlm_stage_processor_pil_tensor(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                          vlm_stage_result *result) {
  return compare_processor_tensor(context, stage, VLM_IMAGE_BACKEND_PIL, result);
}
