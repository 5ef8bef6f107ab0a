/* See golden_media.h. Transformers batches a processor's outputs over the
 * images (pixel_values [images, ...], image_grid_thw [images, 3], ...);
 * how image `index` is laid out in such a batch is the processor class's
 * to say (image_processors.h' item_from_batch), so this file knows no
 * class's layout. */
#include "validate/golden_media.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "media/audio_processors.h"
#include "media/image_processors.h"
#include "models/model.h"

static const vlm_json_value *image_list(const vlm_golden_case *golden) {
  const vlm_json_value *images = vlm_json_object_get(golden->manifest.root, "images");
  return images && images->type == VLM_JSON_ARRAY ? images : NULL;
}

/* The case's processor.<name> tensors as a batch of processor outputs. */
static vlm_status case_tensor(void *context, const char *name, vlm_tensor *out) {
  char key[256];
  snprintf(key, sizeof(key), "processor.%s", name);
  return vlm_golden_case_tensor((const vlm_golden_case *)context, key, out);
}

static vlm_processor_outputs case_outputs(const vlm_golden_case *golden) {
  return (vlm_processor_outputs){(void *)golden, case_tensor};
}

/* Image `index` of `golden`'s processor outputs into `item`. */
static vlm_status item_from_case(const vlm_image_processor_class *processor, const vlm_golden_case *golden,
                                 int64_t index, vlm_media_item *item) {
  vlm_processor_outputs batch = case_outputs(golden);
  item->kind = VLM_MEDIA_IMAGE;
  return vlm_status_annotate(processor->item_from_batch(&batch, index, item), "%s's outputs in %s",
                             processor->name, golden->directory);
}

static bool case_has_pixels(const vlm_image_processor_class *processor, const vlm_golden_case *golden) {
  vlm_tensor pixels;
  vlm_processor_outputs batch = case_outputs(golden);
  vlm_status status = batch.get(batch.context, processor->pixels_name, &pixels);
  vlm_status_free(status);
  return status == VLM_OK;
}

/* Image `name` from the case in `path`, when it processed it, into
 * `item`: true when the case holds it (`*status` says how that went). */
static bool item_from_other_case(const vlm_compare_context *context, const vlm_image_processor_class *processor,
                                 const char *path, const char *name, vlm_media_item *item, vlm_status *status) {
  vlm_golden_case other;
  vlm_status opened = vlm_golden_case_open(path, context->allocator, &other);
  if (opened) {
    vlm_status_free(opened);
    return false;
  }
  bool found = false;
  const vlm_json_value *theirs = image_list(&other);
  for (size_t j = 0; theirs && case_has_pixels(processor, &other) && j < theirs->as.array.count && !found; j++) {
    const char *image = vlm_json_get_string(&theirs->as.array.items[j]);
    if (!image || strcmp(image, name) != 0) continue;
    *status = item_from_case(processor, &other, (int64_t)j, item);
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
static vlm_status item_from_siblings(const vlm_compare_context *context, const vlm_image_processor_class *processor,
                                     const char *name, vlm_media_item *item) {
  char parent[4096];
  snprintf(parent, sizeof(parent), "%s/..", context->golden->directory);
  DIR *directory = opendir(parent);
  vlm_status status = VLM_OK;
  bool found = false;
  for (struct dirent *entry; directory && !found && (entry = readdir(directory)) != NULL;) {
    if (entry->d_name[0] == '.') continue;
    char path[4096 + 256];
    snprintf(path, sizeof(path), "%s/%s", parent, entry->d_name);
    found = item_from_other_case(context, processor, path, name, item, &status);
  }
  if (directory) closedir(directory);
  const vlm_json_value *elsewhere = vlm_json_object_get(context->golden->manifest.root, "pixel_values_from");
  for (size_t i = 0; !found && elsewhere && elsewhere->type == VLM_JSON_ARRAY && i < elsewhere->as.array.count; i++) {
    const char *relative = vlm_json_get_string(&elsewhere->as.array.items[i]);
    char path[8192];
    if (!relative) continue;
    snprintf(path, sizeof(path), "%s/%s", context->golden->directory, relative);
    found = item_from_other_case(context, processor, path, name, item, &status);
  }
  if (!found)
    return VLM_ERROR(NOT_FOUND, "no case next to this one (nor in pixel_values_from) holds processor.%s for %s",
                     processor->pixels_name, name);
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
  const vlm_image_processor_class *image_processor = NULL;
  const vlm_audio_processor_class *audio_processor = NULL;
  if (image_count) VLM_RETURN_IF_ERROR(vlm_image_processor_find(&model->processor, &image_processor));
  if (audio_count) {
    if (!model->has_feature_extractor)
      return VLM_ERROR(FAILED_PRECONDITION, "%s has no feature extractor config", context->model_directory);
    VLM_RETURN_IF_ERROR(vlm_audio_processor_find(&model->feature_extractor, &audio_processor));
  }
  vlm_media_item *items = calloc((size_t)count, sizeof(*items));
  if (!items) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  bool own = image_count && case_has_pixels(image_processor, context->golden);
  vlm_status status = VLM_OK;
  for (int i = 0; !status && i < image_count; i++) {
    const char *name = vlm_json_get_string(&images->as.array.items[i]);
    status = own ? item_from_case(image_processor, context->golden, i, &items[i])
                 : item_from_siblings(context, image_processor, name ? name : "?", &items[i]);
    if (!status)
      status = model->family->image->token_count(&model->config, &model->processor, items[i].grid,
                                                 &items[i].token_count);
  }
  /* Images first, as the engine takes a request's items. */
  for (int i = image_count; !status && i < count; i++) {
    vlm_processor_outputs batch = case_outputs(context->golden);
    items[i].kind = VLM_MEDIA_AUDIO;
    status = audio_processor->item_from_batch(&batch, 0, &items[i]);
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
