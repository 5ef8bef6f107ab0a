/* See golden_media.h. Transformers batches a processor's outputs over the
 * images: pixel_values [images, channels, height, width] for fixed-size
 * processors, [sum of 1 + crops, channels, height, width] with num_crops
 * [images] for Gemma 3's (each image followed by its pan-and-scan crops),
 * or [sum of patches, patch width] with image_grid_thw [images, 3] (t, h,
 * w in patches) for the Qwen2-VL processor. */
#include "validate/golden_media.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "media/image_processor_phi4.h"
#include "models/model.h"

#define PIXEL_VALUES "processor.pixel_values"
#define GRIDS "processor.image_grid_thw"
#define CROPS "processor.num_crops"
/* Phi4MultimodalImageProcessor's outputs. */
#define PHI4_PIXELS "processor.image_pixel_values"
#define PHI4_MASKS "processor.image_attention_mask"
#define PHI4_SIZES "processor.image_sizes"

static const vlm_json_value *image_list(const vlm_golden_case *golden) {
  const vlm_json_value *images = vlm_json_object_get(golden->manifest.root, "images");
  return images && images->type == VLM_JSON_ARRAY ? images : NULL;
}

static int64_t grid_value(const vlm_tensor *grids, int64_t index) {
  double value = 0;
  vlm_tensor_value_as_double(grids, index, &value);
  return (int64_t)value;
}

/* Phi-4: image_pixel_values [images, 1 + max crops, 3, S, S] and
 * image_attention_mask [images, 1 + max crops, M, M], images with fewer
 * crops padded; image_sizes [images, 2] (the HD image's height, width)
 * says how many are the image's own. */
static vlm_status phi4_item_from_case(const vlm_golden_case *golden, int64_t index, vlm_media_item *item) {
  vlm_tensor pixels, masks, sizes;
  VLM_RETURN_IF_ERROR(vlm_golden_case_tensor(golden, PHI4_PIXELS, &pixels));
  VLM_RETURN_IF_ERROR(vlm_golden_case_tensor(golden, PHI4_MASKS, &masks));
  VLM_RETURN_IF_ERROR(vlm_golden_case_tensor(golden, PHI4_SIZES, &sizes));
  if (pixels.dtype != VLM_DTYPE_F32 || masks.dtype != VLM_DTYPE_F32 || pixels.rank != 5 || masks.rank != 4 ||
      sizes.rank != 2 || sizes.shape[1] != 2 || index >= pixels.shape[0] || masks.shape[0] != pixels.shape[0] ||
      masks.shape[1] != pixels.shape[1] || sizes.shape[0] != pixels.shape[0] || masks.shape[2] != masks.shape[3])
    return VLM_ERROR(DATA_LOSS, PHI4_PIXELS ", " PHI4_MASKS " and " PHI4_SIZES " do not have Phi-4's layout");
  int64_t crop = pixels.shape[4], m = masks.shape[2];
  int64_t height = grid_value(&sizes, 2 * index), width = grid_value(&sizes, 2 * index + 1);
  int64_t images = crop > 0 && height % crop == 0 && width % crop == 0 ? 1 + (height / crop) * (width / crop) : 0;
  if (images < 2 || images > pixels.shape[1])
    return VLM_ERROR(DATA_LOSS, PHI4_SIZES " %lldx%lld do not fit %lld crops of %lld px", (long long)height,
                     (long long)width, (long long)pixels.shape[1] - 1, (long long)crop);
  int64_t image_floats = pixels.shape[2] * pixels.shape[3] * crop, mask_floats = m * m;
  item->kind = VLM_MEDIA_IMAGE;
  void *data = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&item->tensors, "image_pixel_values", VLM_DTYPE_F32, 4,
                                          (const int64_t[]){images, pixels.shape[2], pixels.shape[3], crop}, &data));
  memcpy(data, (const float *)pixels.data + index * pixels.shape[1] * image_floats,
         (size_t)(images * image_floats) * sizeof(float));
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&item->tensors, "image_attention_mask", VLM_DTYPE_F32, 3,
                                          (const int64_t[]){images, m, m}, &data));
  const float *mask = (const float *)masks.data + index * masks.shape[1] * mask_floats;
  memcpy(data, mask, (size_t)(images * mask_floats) * sizeof(float));
  int32_t *hw = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&item->tensors, "image_sizes", VLM_DTYPE_I32, 1, (const int64_t[]){2},
                                          (void **)&hw));
  hw[0] = (int32_t)height, hw[1] = (int32_t)width;
  int64_t tokens = 0;
  return vlm_phi4_image_grid_from_mask(mask, images, m, height, width, crop, item->grid, &tokens);
}

/* Image `index` of `golden`'s processor outputs into `item`. */
static vlm_status item_from_case(const vlm_golden_case *golden, int64_t index, vlm_media_item *item) {
  vlm_tensor pixels, grids;
  vlm_status phi4 = vlm_golden_case_tensor(golden, PHI4_PIXELS, &pixels);
  if (!phi4) return phi4_item_from_case(golden, index, item);
  vlm_status_free(phi4);
  VLM_RETURN_IF_ERROR(vlm_golden_case_tensor(golden, PIXEL_VALUES, &pixels));
  if (pixels.dtype != VLM_DTYPE_F32) return VLM_ERROR(DATA_LOSS, PIXEL_VALUES " is not f32");
  vlm_status has_grids = vlm_golden_case_tensor(golden, GRIDS, &grids);
  item->kind = VLM_MEDIA_IMAGE;
  void *data = NULL;
  if (!has_grids) {
    if (grids.rank != 2 || grids.shape[1] != 3 || pixels.rank != 2 || index >= grids.shape[0])
      return VLM_ERROR(DATA_LOSS, GRIDS " and " PIXEL_VALUES " do not have Qwen2-VL's layout");
    int64_t first = 0;
    for (int64_t i = 0; i < index; i++) first += grid_value(&grids, 3 * i) * grid_value(&grids, 3 * i + 1) * grid_value(&grids, 3 * i + 2);
    for (int a = 0; a < 3; a++) item->grid[a] = grid_value(&grids, 3 * index + a);
    int64_t rows = item->grid[0] * item->grid[1] * item->grid[2], width = pixels.shape[1];
    if (first + rows > pixels.shape[0]) return VLM_ERROR(DATA_LOSS, "the grids cover more rows than " PIXEL_VALUES);
    VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&item->tensors, "pixel_values", VLM_DTYPE_F32, 2,
                                            (const int64_t[]){rows, width}, &data));
    memcpy(data, (const float *)pixels.data + first * width, (size_t)(rows * width) * sizeof(float));
    int32_t *grid = NULL;
    VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&item->tensors, "image_grid_thw", VLM_DTYPE_I32, 1,
                                            (const int64_t[]){3}, (void **)&grid));
    for (int a = 0; a < 3; a++) grid[a] = (int32_t)item->grid[a];
    return VLM_OK;
  }
  vlm_status_free(has_grids);
  vlm_tensor crops;
  vlm_status has_crops = vlm_golden_case_tensor(golden, CROPS, &crops);
  if (!has_crops) {
    /* Image `index` is rows [sum of 1 + earlier crops, + 1 + its crops). */
    if (crops.rank != 1 || index >= crops.shape[0] || pixels.rank != 4)
      return VLM_ERROR(DATA_LOSS, CROPS " and " PIXEL_VALUES " do not have Gemma 3's layout");
    int64_t first = 0;
    for (int64_t i = 0; i < index; i++) first += 1 + grid_value(&crops, i);
    int64_t images = 1 + grid_value(&crops, index), values = pixels.shape[1] * pixels.shape[2] * pixels.shape[3];
    if (first + images > pixels.shape[0]) return VLM_ERROR(DATA_LOSS, CROPS " covers more images than " PIXEL_VALUES);
    VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&item->tensors, "pixel_values", VLM_DTYPE_F32, 4,
                                            (const int64_t[]){images, pixels.shape[1], pixels.shape[2], pixels.shape[3]},
                                            &data));
    memcpy(data, (const float *)pixels.data + first * values, (size_t)(images * values) * sizeof(float));
    int32_t *count = NULL;
    VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&item->tensors, "num_crops", VLM_DTYPE_I32, 1, (const int64_t[]){1},
                                            (void **)&count));
    *count = (int32_t)(images - 1);
    item->grid[0] = images, item->grid[1] = pixels.shape[2], item->grid[2] = pixels.shape[3];
    return VLM_OK;
  }
  vlm_status_free(has_crops);
  if (pixels.rank != 4 || index >= pixels.shape[0])
    return VLM_ERROR(DATA_LOSS, PIXEL_VALUES " is not [images, channels, height, width]");
  int64_t values = pixels.shape[1] * pixels.shape[2] * pixels.shape[3];
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&item->tensors, "pixel_values", VLM_DTYPE_F32, 3, pixels.shape + 1, &data));
  memcpy(data, (const float *)pixels.data + index * values, (size_t)values * sizeof(float));
  item->grid[0] = 1, item->grid[1] = pixels.shape[2], item->grid[2] = pixels.shape[3];
  return VLM_OK;
}

static bool case_has_pixels(const vlm_golden_case *golden) {
  vlm_tensor pixels;
  const char *const names[] = {PIXEL_VALUES, PHI4_PIXELS};
  for (int i = 0; i < 2; i++) {
    vlm_status status = vlm_golden_case_tensor(golden, names[i], &pixels);
    vlm_status_free(status);
    if (status == VLM_OK) return true;
  }
  return false;
}

/* Image `name` from the case in `path`, when it processed it, into
 * `item`: true when the case holds it (`*status` says how that went). */
static bool item_from_other_case(const vlm_compare_context *context, const char *path, const char *name,
                                 vlm_media_item *item, vlm_status *status) {
  vlm_golden_case other;
  vlm_status opened = vlm_golden_case_open(path, context->allocator, &other);
  if (opened) {
    vlm_status_free(opened);
    return false;
  }
  bool found = false;
  const vlm_json_value *theirs = image_list(&other);
  for (size_t j = 0; theirs && case_has_pixels(&other) && j < theirs->as.array.count && !found; j++) {
    const char *image = vlm_json_get_string(&theirs->as.array.items[j]);
    if (!image || strcmp(image, name) != 0) continue;
    *status = item_from_case(&other, (int64_t)j, item);
    found = true;
  }
  vlm_golden_case_close(&other);
  return found;
}

/* Image `name` from a sibling case (same parent directory) that processed
 * it, or from the cases the manifest names in "pixel_values_from" (relative
 * to the case: a family variant reusing another family's images), into
 * `item`; NOT_FOUND when none did. bfloat16 cases hold no processor
 * tensors: the oracle runs the processor in float32 whatever the model
 * dtype. */
static vlm_status item_from_siblings(const vlm_compare_context *context, const char *name, vlm_media_item *item) {
  char parent[4096];
  snprintf(parent, sizeof(parent), "%s/..", context->golden->directory);
  DIR *directory = opendir(parent);
  vlm_status status = VLM_OK;
  bool found = false;
  for (struct dirent *entry; directory && !found && (entry = readdir(directory)) != NULL;) {
    if (entry->d_name[0] == '.') continue;
    char path[4096 + 256];
    snprintf(path, sizeof(path), "%s/%s", parent, entry->d_name);
    found = item_from_other_case(context, path, name, item, &status);
  }
  if (directory) closedir(directory);
  const vlm_json_value *elsewhere = vlm_json_object_get(context->golden->manifest.root, "pixel_values_from");
  for (size_t i = 0; !found && elsewhere && elsewhere->type == VLM_JSON_ARRAY && i < elsewhere->as.array.count; i++) {
    const char *relative = vlm_json_get_string(&elsewhere->as.array.items[i]);
    char path[8192];
    if (!relative) continue;
    snprintf(path, sizeof(path), "%s/%s", context->golden->directory, relative);
    found = item_from_other_case(context, path, name, item, &status);
  }
  if (!found) return VLM_ERROR(NOT_FOUND, "no case next to this one (nor in pixel_values_from) holds " PIXEL_VALUES " for %s", name);
  return status;
}

void vlm_golden_media_items_release(vlm_media_item *items, int count) {
  for (int i = 0; items && i < count; i++) vlm_media_item_release(&items[i]);
  free(items);
}

int vlm_golden_audio_count(const vlm_golden_case *golden) {
  const vlm_json_value *audio = vlm_json_object_get(golden->manifest.root, "audio");
  return audio && audio->type == VLM_JSON_ARRAY ? (int)audio->as.array.count : 0;
}

/* The case's one clip from its processor outputs (the oracle records
 * audio_input_features of a single clip, [frames, mels]). */
static vlm_status audio_item_from_case(const vlm_golden_case *golden, vlm_media_item *item) {
  vlm_tensor features, sizes;
  VLM_RETURN_IF_ERROR(vlm_golden_case_tensor(golden, "processor.audio_input_features", &features));
  VLM_RETURN_IF_ERROR(vlm_golden_case_tensor(golden, "processor.audio_embed_sizes", &sizes));
  if (features.dtype != VLM_DTYPE_F32 || features.rank != 2 || vlm_tensor_element_count(&sizes) != 1)
    return VLM_ERROR(DATA_LOSS, "processor.audio_input_features is not one clip's f32 [frames, mels]");
  item->kind = VLM_MEDIA_AUDIO;
  item->processor = "Phi4MultimodalFeatureExtractor";
  void *data = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&item->tensors, "audio_input_features", VLM_DTYPE_F32, 2, features.shape,
                                          &data));
  memcpy(data, features.data, (size_t)vlm_tensor_element_count(&features) * sizeof(float));
  int32_t *size = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&item->tensors, "audio_embed_sizes", VLM_DTYPE_I32, 1, (const int64_t[]){1},
                                          (void **)&size));
  double value = 0;
  vlm_tensor_value_as_double(&sizes, 0, &value);
  *size = (int32_t)value;
  return VLM_OK;
}

vlm_status vlm_golden_media_items(const vlm_compare_context *context, vlm_media_item **out_items, int *out_count) {
  *out_items = NULL;
  *out_count = 0;
  const vlm_json_value *images = image_list(context->golden);
  int image_count = images ? (int)images->as.array.count : 0, audio_count = vlm_golden_audio_count(context->golden);
  int count = image_count + audio_count;
  if (count == 0) return VLM_OK;
  if (!context->model) return VLM_ERROR(FAILED_PRECONDITION, "%s does not open", context->model_directory);
  const vlm_model *model = context->model;
  if (image_count && (!model->family || !model->family->image))
    return VLM_ERROR(UNIMPLEMENTED, "model_type '%s' has no image path", model->config.model_type);
  if (audio_count && (!model->family || !model->family->audio))
    return VLM_ERROR(UNIMPLEMENTED, "model_type '%s' has no audio path", model->config.model_type);
  if (audio_count > 1) return VLM_ERROR(UNIMPLEMENTED, "golden cases hold one audio clip");
  vlm_media_item *items = calloc((size_t)count, sizeof(*items));
  if (!items) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  bool own = image_count && case_has_pixels(context->golden);
  vlm_status status = VLM_OK;
  for (int i = 0; !status && i < image_count; i++) {
    const char *name = vlm_json_get_string(&images->as.array.items[i]);
    status = own ? item_from_case(context->golden, i, &items[i])
                 : item_from_siblings(context, name ? name : "?", &items[i]);
    if (!status)
      status = model->family->image->token_count(&model->config, &model->processor, items[i].grid,
                                                 &items[i].token_count);
  }
  /* Images first, as the engine takes a request's items. */
  for (int i = image_count; !status && i < count; i++) {
    status = audio_item_from_case(context->golden, &items[i]);
    if (!status)
      status = model->family->audio->token_count(&model->config, &model->feature_extractor, &items[i],
                                                 &items[i].token_count);
  }
  if (!status) vlm_family_set_request_media(model->family, &model->config, items, count);
  if (status) {
    vlm_golden_media_items_release(items, count);
    return status;
  }
  *out_items = items;
  *out_count = count;
  return VLM_OK;
}
