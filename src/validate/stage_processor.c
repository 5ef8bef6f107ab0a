/* The image processor stages of a golden case: processor.pixel_values (the
 * default, torchvision-backed CLIPImageProcessor) and
 * processor_pil.pixel_values (CLIPImageProcessorPil). Each image named in
 * the manifest's "images" is decoded from the shared fixtures
 * (../shared/fixtures/media/images next to the project root, or
 * $VLM_FIXTURES_DIR/media/images) and run through vlm's processor with the
 * model's processor config. Missing fixtures FAIL the stage: a stage that
 * cannot be computed is never passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/config.h"
#include "io/file.h"
#include "io/json.h"
#include "media/image_processor_clip.h"
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

/* Appends one image's pixel values (as double) to `values`. */
static vlm_status process_image(const vlm_processor_config *config, const char *path,
                                vlm_clip_variant variant, double *values, int64_t capacity,
                                int64_t *count) {
  vlm_image image;
  VLM_RETURN_IF_ERROR(vlm_image_decode_file(path, NULL, &image));
  vlm_tensor pixels;
  vlm_status status = vlm_clip_preprocess(config, &image, variant, NULL, &pixels);
  vlm_image_release(&image);
  if (status) return status;
  int64_t elements = vlm_tensor_element_count(&pixels);
  if (*count + elements > capacity) {
    vlm_tensor_release(&pixels);
    return VLM_ERROR(OUT_OF_RANGE, "%s: vlm produced more values than the golden holds", path);
  }
  const float *data = pixels.data;
  for (int64_t i = 0; i < elements; i++) values[*count + i] = data[i];
  *count += elements;
  vlm_tensor_release(&pixels);
  return VLM_OK;
}

static vlm_status compare_pixel_values(const vlm_compare_context *context,
                                       const vlm_golden_stage *stage, vlm_clip_variant variant,
                                       vlm_stage_result *result) {
  const vlm_json_value *images = vlm_json_object_get(context->golden->manifest.root, "images");
  if (!images || images->type != VLM_JSON_ARRAY || images->as.array.count == 0)
    return VLM_ERROR(DATA_LOSS, "the golden manifest lists no \"images\"");
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
  vlm_processor_config config;
  bool have_config = false;
  if (!status) status = vlm_processor_config_load(context->model_directory, context->allocator, &config);
  if (!status) have_config = true;
  int64_t count = 0;
  for (size_t i = 0; !status && i < images->as.array.count; i++) {
    const char *name = vlm_json_get_string(vlm_json_array_get(images, i));
    if (!name || strchr(name, '/')) {
      status = VLM_ERROR(DATA_LOSS, "images[%zu] must be a plain file name", i);
      break;
    }
    char *path = vlm_path_join(directory, name);
    status = path ? process_image(&config, path, variant, values, capacity, &count)
                  : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    free(path);
  }
  if (!status) status = vlm_compare_with_golden_tensor(context, stage, values, count, result);
  if (!status && result->outcome == VLM_STAGE_MATCH && result->detail[0] == 0)
    snprintf(result->detail, sizeof(result->detail), "%s, %zu image(s)",
             vlm_clip_processor_class_name(variant), images->as.array.count);
  if (have_config) vlm_processor_config_release(&config);
  free(values);
  free(directory);
  return status;
}

vlm_status vlm_stage_processor_pixel_values(const vlm_compare_context *context,
                                            const vlm_golden_stage *stage,
                                            vlm_stage_result *result) {
  return compare_pixel_values(context, stage, VLM_CLIP_TORCHVISION, result);
}

vlm_status vlm_stage_processor_pil_pixel_values(const vlm_compare_context *context,
                                                const vlm_golden_stage *stage,
                                                vlm_stage_result *result) {
  return compare_pixel_values(context, stage, VLM_CLIP_PIL, result);
}
