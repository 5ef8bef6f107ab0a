/* See image_processors.h. */
#include "media/image_processors.h"

#include <stdio.h>
#include <string.h>

#include "core/status.h"
#include "media/image_processor_clip.h"
#include "media/image_processor_gemma3.h"
#include "media/image_processor_phi4.h"
#include "media/image_processor_qwen2_vl.h"

/* pixel_values [images, C, H, W] (a processor whose outputs for one image
 * are [C, H, W], stacked): image `index`'s. */
static vlm_status stacked_item_from_batch(const vlm_processor_outputs *batch, int64_t index, vlm_media_item *out) {
  vlm_tensor pixels;
  VLM_RETURN_IF_ERROR(batch->get(batch->context, "pixel_values", &pixels));
  if (pixels.dtype != VLM_DTYPE_F32 || pixels.rank != 4 || index >= pixels.shape[0])
    return VLM_ERROR(DATA_LOSS, "pixel_values is not f32 [images, channels, height, width]");
  int64_t values = pixels.shape[1] * pixels.shape[2] * pixels.shape[3];
  void *data = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&out->tensors, "pixel_values", VLM_DTYPE_F32, 3, pixels.shape + 1, &data));
  memcpy(data, (const float *)pixels.data + index * values, (size_t)values * sizeof(float));
  out->grid[0] = 1, out->grid[1] = pixels.shape[2], out->grid[2] = pixels.shape[3];
  return VLM_OK;
}

/* ---- CLIPImageProcessor (LLaVA-1.5) ------------------------------------ */

/* The crop (or the fixed size) is what the tower sees; a shortest-edge
 * resize without a crop depends on the aspect ratio, which the pixels'
 * processor works out. */
static vlm_status clip_grid(const vlm_processor_config *config, int64_t width, int64_t height, int64_t out_grid[3]) {
  (void)width, (void)height;
  const vlm_image_size *size = config->do_center_crop ? &config->crop_size : &config->size;
  if (size->kind != VLM_IMAGE_SIZE_HEIGHT_WIDTH || size->height <= 0 || size->width <= 0)
    return VLM_ERROR(NOT_FOUND, "CLIP image processor: the output size depends on the image");
  out_grid[0] = 1, out_grid[1] = size->height, out_grid[2] = size->width;
  return VLM_OK;
}

static vlm_status clip_preprocess(const vlm_processor_config *config, const vlm_image *image,
                                  vlm_image_backend backend, const vlm_allocator *allocator, vlm_media_item *out) {
  vlm_tensor pixels;
  vlm_clip_variant variant = backend == VLM_IMAGE_BACKEND_PIL ? VLM_CLIP_PIL : VLM_CLIP_TORCHVISION;
  VLM_RETURN_IF_ERROR(vlm_clip_preprocess(config, image, variant, allocator, &pixels));
  void *data = NULL;
  vlm_status status = vlm_tensor_list_add(&out->tensors, "pixel_values", VLM_DTYPE_F32, 3, pixels.shape, &data);
  if (!status) memcpy(data, pixels.data, vlm_tensor_byte_size(&pixels));
  out->grid[0] = 1, out->grid[1] = pixels.shape[1], out->grid[2] = pixels.shape[2];
  vlm_tensor_release(&pixels);
  return status;
}

/* ---- Qwen2VLImageProcessor (Qwen2-VL, Qwen2.5-VL, Qwen3-VL) -------------- */

static vlm_status qwen2_vl_grid(const vlm_processor_config *config, int64_t width, int64_t height,
                                int64_t out_grid[3]) {
  return vlm_qwen2_vl_image_grid(config, width, height, out_grid);
}

/* pixel_values [t*h*w, C*T*P*P] and image_grid_thw [3], as the processor
 * returns them for one image. */
static vlm_status qwen2_vl_preprocess(const vlm_processor_config *config, const vlm_image *image,
                                      vlm_image_backend backend, const vlm_allocator *allocator,
                                      vlm_media_item *out) {
  vlm_tensor pixels;
  vlm_qwen2_vl_variant variant = backend == VLM_IMAGE_BACKEND_PIL ? VLM_QWEN2_VL_PIL : VLM_QWEN2_VL_TORCHVISION;
  VLM_RETURN_IF_ERROR(vlm_qwen2_vl_preprocess(config, image, variant, allocator, &pixels, out->grid));
  void *data = NULL;
  vlm_status status = vlm_tensor_list_add(&out->tensors, "pixel_values", VLM_DTYPE_F32, 2, pixels.shape, &data);
  if (!status) memcpy(data, pixels.data, vlm_tensor_byte_size(&pixels));
  vlm_tensor_release(&pixels);
  int32_t *grid = NULL;
  if (!status)
    status = vlm_tensor_list_add(&out->tensors, "image_grid_thw", VLM_DTYPE_I32, 1, (const int64_t[]){3}, (void **)&grid);
  for (int a = 0; !status && a < 3; a++) grid[a] = (int32_t)out->grid[a];
  return status;
}

/* pixel_values [sum of t*h*w, C*T*P*P] with image_grid_thw [images, 3]. */
static vlm_status qwen2_vl_item_from_batch(const vlm_processor_outputs *batch, int64_t index, vlm_media_item *out) {
  vlm_tensor pixels, grids;
  VLM_RETURN_IF_ERROR(batch->get(batch->context, "pixel_values", &pixels));
  VLM_RETURN_IF_ERROR(batch->get(batch->context, "image_grid_thw", &grids));
  if (pixels.dtype != VLM_DTYPE_F32 || grids.rank != 2 || grids.shape[1] != 3 || pixels.rank != 2 ||
      index >= grids.shape[0])
    return VLM_ERROR(DATA_LOSS, "image_grid_thw and pixel_values do not have Qwen2-VL's layout");
  int64_t first = 0;
  for (int64_t i = 0; i < index; i++)
    first += vlm_tensor_value_as_int64(&grids, 3 * i) * vlm_tensor_value_as_int64(&grids, 3 * i + 1) * vlm_tensor_value_as_int64(&grids, 3 * i + 2);
  for (int a = 0; a < 3; a++) out->grid[a] = vlm_tensor_value_as_int64(&grids, 3 * index + a);
  int64_t rows = out->grid[0] * out->grid[1] * out->grid[2], width = pixels.shape[1];
  if (first < 0 || rows < 0 || first + rows > pixels.shape[0])
    return VLM_ERROR(DATA_LOSS, "the grids cover more rows than pixel_values");
  void *data = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&out->tensors, "pixel_values", VLM_DTYPE_F32, 2,
                                          (const int64_t[]){rows, width}, &data));
  memcpy(data, (const float *)pixels.data + first * width, (size_t)(rows * width) * sizeof(float));
  int32_t *grid = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&out->tensors, "image_grid_thw", VLM_DTYPE_I32, 1, (const int64_t[]){3},
                                          (void **)&grid));
  for (int a = 0; a < 3; a++) grid[a] = (int32_t)out->grid[a];
  return VLM_OK;
}

/* ---- Gemma3ImageProcessor (Gemma 3) -------------------------------------- */

/* 1 + the pan-and-scan crops of a width x height image, each of `size`. */
static vlm_status gemma3_grid(const vlm_processor_config *config, int64_t width, int64_t height,
                              int64_t out_grid[3]) {
  if (!config->do_resize || config->size.kind != VLM_IMAGE_SIZE_HEIGHT_WIDTH)
    return VLM_ERROR(NOT_FOUND, "Gemma 3 image processor: the output size depends on the image");
  vlm_crop_box boxes[VLM_GEMMA3_MAX_CROPS];
  out_grid[0] = 1 + vlm_gemma3_pan_and_scan(config, width, height, boxes);
  out_grid[1] = config->size.height, out_grid[2] = config->size.width;
  return VLM_OK;
}

/* pixel_values [1 + crops, 3, H, W] and num_crops [1], as the processor
 * returns them for one image. */
static vlm_status gemma3_preprocess(const vlm_processor_config *config, const vlm_image *image,
                                    vlm_image_backend backend, const vlm_allocator *allocator, vlm_media_item *out) {
  vlm_tensor pixels;
  int64_t crops = 0;
  vlm_gemma3_variant variant = backend == VLM_IMAGE_BACKEND_PIL ? VLM_GEMMA3_PIL : VLM_GEMMA3_TORCHVISION;
  VLM_RETURN_IF_ERROR(vlm_gemma3_preprocess(config, image, variant, allocator, &pixels, &crops));
  void *data = NULL;
  vlm_status status = vlm_tensor_list_add(&out->tensors, "pixel_values", VLM_DTYPE_F32, 4, pixels.shape, &data);
  if (!status) memcpy(data, pixels.data, vlm_tensor_byte_size(&pixels));
  out->grid[0] = pixels.shape[0], out->grid[1] = pixels.shape[2], out->grid[2] = pixels.shape[3];
  vlm_tensor_release(&pixels);
  int32_t *count = NULL;
  if (!status)
    status = vlm_tensor_list_add(&out->tensors, "num_crops", VLM_DTYPE_I32, 1, (const int64_t[]){1}, (void **)&count);
  if (!status) *count = (int32_t)crops;
  return status;
}

/* pixel_values [sum of 1 + crops, 3, H, W] with num_crops [images]: image
 * `index` is rows [sum of 1 + earlier crops, + 1 + its crops). Without
 * num_crops, the stacked layout (no crops). */
static vlm_status gemma3_item_from_batch(const vlm_processor_outputs *batch, int64_t index, vlm_media_item *out) {
  vlm_tensor pixels, crops;
  vlm_status has_crops = batch->get(batch->context, "num_crops", &crops);
  if (has_crops) {
    vlm_status_free(has_crops);
    return stacked_item_from_batch(batch, index, out);
  }
  VLM_RETURN_IF_ERROR(batch->get(batch->context, "pixel_values", &pixels));
  if (pixels.dtype != VLM_DTYPE_F32 || crops.rank != 1 || index >= crops.shape[0] || pixels.rank != 4)
    return VLM_ERROR(DATA_LOSS, "num_crops and pixel_values do not have Gemma 3's layout");
  int64_t first = 0;
  for (int64_t i = 0; i < index; i++) first += 1 + vlm_tensor_value_as_int64(&crops, i);
  int64_t images = 1 + vlm_tensor_value_as_int64(&crops, index), values = pixels.shape[1] * pixels.shape[2] * pixels.shape[3];
  if (first < 0 || images < 1 || first + images > pixels.shape[0])
    return VLM_ERROR(DATA_LOSS, "num_crops covers more images than pixel_values");
  void *data = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&out->tensors, "pixel_values", VLM_DTYPE_F32, 4,
                                          (const int64_t[]){images, pixels.shape[1], pixels.shape[2], pixels.shape[3]},
                                          &data));
  memcpy(data, (const float *)pixels.data + first * values, (size_t)(images * values) * sizeof(float));
  int32_t *count = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&out->tensors, "num_crops", VLM_DTYPE_I32, 1, (const int64_t[]){1},
                                          (void **)&count));
  *count = (int32_t)(images - 1);
  out->grid[0] = images, out->grid[1] = pixels.shape[2], out->grid[2] = pixels.shape[3];
  return VLM_OK;
}

/* ---- Phi4MultimodalImageProcessor (Phi-4-multimodal) ---------------------- */

/* The grid and token count follow from the image's size (crops, padding). */
static vlm_status phi4_grid(const vlm_processor_config *config, int64_t width, int64_t height, int64_t out_grid[3]) {
  return vlm_phi4_image_grid(config, width, height, out_grid);
}

/* image_pixel_values, image_attention_mask, image_sizes and num_img_tokens
 * of one image (the torchvision backend is the class's only one). */
static vlm_status phi4_preprocess(const vlm_processor_config *config, const vlm_image *image,
                                  vlm_image_backend backend, const vlm_allocator *allocator, vlm_media_item *out) {
  if (backend != VLM_IMAGE_BACKEND_TORCHVISION)
    return VLM_ERROR(UNIMPLEMENTED, "Phi4MultimodalImageProcessor has no Pil variant in Transformers 5.23");
  return vlm_phi4_image_preprocess(config, image, allocator, out);
}

static const vlm_image_processor_class processors[] = {
    {"CLIPImageProcessor", clip_grid, clip_preprocess, "pixel_values", stacked_item_from_batch},
    {"Qwen2VLImageProcessor", qwen2_vl_grid, qwen2_vl_preprocess, "pixel_values", qwen2_vl_item_from_batch},
    {"Gemma3ImageProcessor", gemma3_grid, gemma3_preprocess, "pixel_values", gemma3_item_from_batch},
    {"Phi4MultimodalImageProcessor", phi4_grid, phi4_preprocess, "image_pixel_values", vlm_phi4_image_item_from_batch},
};

vlm_status vlm_image_processor_find(const vlm_processor_config *config, const vlm_image_processor_class **out) {
  *out = NULL;
  const char *type = config ? config->image_processor_type : NULL;
  for (size_t i = 0; type && i < sizeof(processors) / sizeof(processors[0]); i++)
    if (strcmp(type, processors[i].name) == 0) {
      *out = &processors[i];
      return VLM_OK;
    }
  char names[256] = "";
  for (size_t i = 0; i < sizeof(processors) / sizeof(processors[0]); i++)
    snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "", processors[i].name);
  return VLM_ERROR(UNIMPLEMENTED, "image processor '%s' is not supported yet (supported: %s)", type ? type : "(none)",
                   names);
}
