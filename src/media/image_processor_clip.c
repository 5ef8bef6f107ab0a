/* The CLIP image processor, torchvision and PIL variants (see the header
 * for what each one does and how exactly we match it). */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "media/image_normalize.h"
#include "media/image_processor_clip.h"
#include "media/image_resample.h"

enum { PIL_BICUBIC = 3 };

const char *vlm_clip_processor_class_name(vlm_clip_variant variant) {
  return variant == VLM_CLIP_PIL ? "CLIPImageProcessorPil" : "CLIPImageProcessor";
}

/* transformers get_resize_output_image_size(default_to_square=False):
 * the short side becomes `size`, the long one int(size * long / short)
 * (true division in double, truncated). */
static vlm_status resize_target(const vlm_processor_config *config, int64_t width, int64_t height,
                                int64_t *out_width, int64_t *out_height) {
  const vlm_image_size *size = &config->size;
  if (size->kind == VLM_IMAGE_SIZE_HEIGHT_WIDTH) {
    *out_width = size->width, *out_height = size->height;
    return VLM_OK;
  }
  if (size->kind != VLM_IMAGE_SIZE_SHORTEST_EDGE || size->shortest_edge <= 0)
    return VLM_ERROR(UNIMPLEMENTED, "CLIP image processor: only size {shortest_edge} or "
                     "{height, width} is supported");
  int64_t short_side = width <= height ? width : height, long_side = width <= height ? height : width;
  int64_t new_long = (int64_t)((double)(size->shortest_edge * long_side) / (double)short_side);
  if (width <= height) *out_width = size->shortest_edge, *out_height = new_long;
  else *out_width = new_long, *out_height = size->shortest_edge;
  if (*out_width <= 0 || *out_height <= 0 || (uint64_t)*out_width * (uint64_t)*out_height > (1ull << 32))
    return VLM_ERROR(OUT_OF_RANGE, "CLIP image processor: a %lldx%lld image resizes to %lldx%lld",
                     (long long)width, (long long)height, (long long)*out_width, (long long)*out_height);
  return VLM_OK;
}

static vlm_status image_allocate(const vlm_allocator *allocator, int64_t width, int64_t height,
                                 vlm_image *image) {
  memset(image, 0, sizeof(*image));
  image->pixels = vlm_allocate_zeroed(allocator, (size_t)(width * height * 3), VLM_DEFAULT_ALIGNMENT);
  if (!image->pixels) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a %lldx%lld image",
                                       (long long)width, (long long)height);
  image->width = width, image->height = height, image->allocator = allocator;
  image->exif_orientation = 1;
  return VLM_OK;
}

/* torchvision center_crop as TorchvisionBackend.center_crop does it: pad
 * with zeros (left/top get the smaller half) when the crop is larger, then
 * top = int((height - crop_height) / 2.0). numpy's center_crop (PIL
 * variant) uses (height - crop_height) // 2, the same when it fits. */
static vlm_status center_crop(const vlm_image *in, int64_t crop_width, int64_t crop_height,
                              const vlm_allocator *allocator, vlm_image *out) {
  int64_t pad_left = crop_width > in->width ? (crop_width - in->width) / 2 : 0;
  int64_t pad_top = crop_height > in->height ? (crop_height - in->height) / 2 : 0;
  int64_t padded_width = crop_width > in->width ? crop_width : in->width;
  int64_t padded_height = crop_height > in->height ? crop_height : in->height;
  int64_t top = (padded_height - crop_height) / 2, left = (padded_width - crop_width) / 2;
  VLM_RETURN_IF_ERROR(image_allocate(allocator, crop_width, crop_height, out));
  for (int64_t y = 0; y < crop_height; y++) {
    int64_t source_y = y + top - pad_top;
    if (source_y < 0 || source_y >= in->height) continue;
    for (int64_t x = 0; x < crop_width; x++) {
      int64_t source_x = x + left - pad_left;
      if (source_x < 0 || source_x >= in->width) continue;
      memcpy(out->pixels + (y * crop_width + x) * 3, in->pixels + (source_y * in->width + source_x) * 3, 3);
    }
  }
  return VLM_OK;
}

vlm_status vlm_clip_resize_and_crop(const vlm_processor_config *config, const vlm_image *image,
                                    vlm_clip_variant variant, const vlm_allocator *allocator,
                                    vlm_image *out) {
  memset(out, 0, sizeof(*out));
  if (!image->pixels || image->width <= 0 || image->height <= 0)
    return VLM_ERROR(INVALID_ARGUMENT, "CLIP image processor: empty image");
  vlm_image resized = {0};
  const vlm_image *current = image;
  if (config->do_resize) {
    if (config->resample != PIL_BICUBIC)
      return VLM_ERROR(UNIMPLEMENTED, "CLIP image processor: resample %lld (only 3, bicubic, is "
                       "implemented)", (long long)config->resample);
    int64_t width = 0, height = 0;
    VLM_RETURN_IF_ERROR(resize_target(config, image->width, image->height, &width, &height));
    const vlm_image_size *crop = &config->crop_size;
    if (config->do_center_crop && crop->kind == VLM_IMAGE_SIZE_HEIGHT_WIDTH && crop->width > 0 &&
        crop->height > 0 && crop->width <= width && crop->height <= height) {
      /* Resample only the pixels the crop keeps (same values, far less work
       * for long thin images: 4000x20 resizes to 67200x336). */
      VLM_RETURN_IF_ERROR(image_allocate(allocator, crop->width, crop->height, out));
      vlm_status status = vlm_resample_bicubic_u8_window(
          variant == VLM_CLIP_PIL ? VLM_RESAMPLE_PILLOW : VLM_RESAMPLE_TORCH_U8, image->pixels,
          image->width, image->height, 3, width, height, (width - crop->width) / 2,
          (height - crop->height) / 2, crop->width, crop->height, out->pixels, allocator);
      if (status) vlm_image_release(out);
      return status;
    }
    VLM_RETURN_IF_ERROR(image_allocate(allocator, width, height, &resized));
    vlm_status status = vlm_resample_bicubic_u8(
        variant == VLM_CLIP_PIL ? VLM_RESAMPLE_PILLOW : VLM_RESAMPLE_TORCH_U8, image->pixels,
        image->width, image->height, 3, resized.pixels, width, height, allocator);
    if (status) {
      vlm_image_release(&resized);
      return status;
    }
    current = &resized;
  }
  vlm_status status = VLM_OK;
  if (config->do_center_crop && config->crop_size.kind == VLM_IMAGE_SIZE_HEIGHT_WIDTH) {
    status = center_crop(current, config->crop_size.width, config->crop_size.height, allocator, out);
  } else if (config->do_center_crop) {
    status = VLM_ERROR(UNIMPLEMENTED, "CLIP image processor: crop_size must be {height, width}");
  } else {
    status = image_allocate(allocator, current->width, current->height, out);
    if (!status) memcpy(out->pixels, current->pixels, (size_t)(current->width * current->height * 3));
  }
  vlm_image_release(&resized);
  return status;
}

vlm_status vlm_clip_rescale_and_normalize(const vlm_processor_config *config,
                                          const vlm_image *image, vlm_clip_variant variant,
                                          const vlm_allocator *allocator, vlm_tensor *out) {
  int64_t shape[3] = {3, image->height, image->width};
  VLM_RETURN_IF_ERROR(vlm_tensor_create(allocator, VLM_DTYPE_F32, 3, shape, out));
  float *values = out->data;
  int64_t plane = image->width * image->height;
  float tables[3][256]; /* every uint8 value maps to one float: compute once */
  vlm_image_normalize_tables(
      config, variant == VLM_CLIP_PIL ? VLM_IMAGE_BACKEND_PIL : VLM_IMAGE_BACKEND_TORCHVISION, tables);
  for (int channel = 0; channel < 3; channel++)
    for (int64_t i = 0; i < plane; i++)
      values[channel * plane + i] = tables[channel][image->pixels[i * 3 + channel]];
  return VLM_OK;
}

vlm_status vlm_clip_preprocess(const vlm_processor_config *config, const vlm_image *image,
                               vlm_clip_variant variant, const vlm_allocator *allocator,
                               vlm_tensor *out) {
  memset(out, 0, sizeof(*out));
  vlm_image cropped;
  VLM_RETURN_IF_ERROR(vlm_clip_resize_and_crop(config, image, variant, allocator, &cropped));
  vlm_status status = vlm_clip_rescale_and_normalize(config, &cropped, variant, allocator, out);
  vlm_image_release(&cropped);
  return status;
}
