/* Gemma3ImageProcessor and Gemma3ImageProcessorPil (see the header). */
#include "media/image_processor_gemma3.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "media/image_normalize.h"
#include "media/image_resample.h"

enum { PIL_BILINEAR = 2, PIL_BICUBIC = 3 };

/* pan_and_scan_batched / pan_and_scan, in Python's float arithmetic: the
 * crop count rounds the aspect ratio half up, is capped by how many
 * min-size crops fit, then clamped to [2, max]; crops are ceil(side / n)
 * wide, itertools.product order (rows outer), the last clipped by the
 * slice at the image's edge. */
int vlm_gemma3_pan_and_scan(const vlm_processor_config *config, int64_t width, int64_t height,
                            vlm_crop_box *out) {
  if (!config->do_pan_and_scan || width <= 0 || height <= 0) return 0;
  double w = (double)width, h = (double)height, minimum = (double)config->pan_and_scan_min_crop_size;
  int64_t long_side_crops, maximum = config->pan_and_scan_max_num_crops;
  bool landscape = width >= height;
  double ratio = landscape ? w / h : h / w;
  if (ratio < config->pan_and_scan_min_ratio_to_activate) return 0;
  long_side_crops = (int64_t)floor(ratio + 0.5);
  int64_t fitting = (int64_t)floor((landscape ? w : h) / minimum);
  if (fitting < long_side_crops) long_side_crops = fitting;
  if (long_side_crops < 2) long_side_crops = 2;
  if (long_side_crops > maximum) long_side_crops = maximum;
  if (long_side_crops > VLM_GEMMA3_MAX_CROPS) long_side_crops = VLM_GEMMA3_MAX_CROPS;
  int64_t crops_w = landscape ? long_side_crops : 1, crops_h = landscape ? 1 : long_side_crops;
  int64_t crop_w = (int64_t)ceil(w / (double)crops_w), crop_h = (int64_t)ceil(h / (double)crops_h);
  if ((double)(crop_w < crop_h ? crop_w : crop_h) < minimum) return 0;
  int count = 0;
  for (int64_t row = 0; row < crops_h; row++)
    for (int64_t column = 0; column < crops_w; column++) {
      int64_t x = crop_w * column, y = crop_h * row;
      vlm_crop_box box = {x, y, x < width ? (x + crop_w <= width ? crop_w : width - x) : 0,
                          y < height ? (y + crop_h <= height ? crop_h : height - y) : 0};
      out[count++] = box;
    }
  return count;
}

static vlm_status resize_one(const vlm_processor_config *config, const uint8_t *pixels, int64_t width,
                             int64_t height, vlm_gemma3_variant variant, const vlm_allocator *allocator,
                             uint8_t **out, int64_t *out_width, int64_t *out_height) {
  *out = NULL;
  int64_t target_width = width, target_height = height;
  if (config->do_resize) {
    if (config->size.kind != VLM_IMAGE_SIZE_HEIGHT_WIDTH)
      return VLM_ERROR(UNIMPLEMENTED, "Gemma 3 image processor: size must be {height, width}");
    target_width = config->size.width, target_height = config->size.height;
  }
  uint8_t *resized = vlm_allocate(allocator, (size_t)(target_width * target_height * 3), VLM_DEFAULT_ALIGNMENT);
  if (!resized) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a %lldx%lld image",
                                 (long long)target_width, (long long)target_height);
  vlm_status status = VLM_OK;
  if (target_width == width && target_height == height) {
    memcpy(resized, pixels, (size_t)(width * height * 3)); /* torchvision returns the image as is */
  } else if (config->resample == PIL_BILINEAR || config->resample == PIL_BICUBIC) {
    status = vlm_resample_u8(variant == VLM_GEMMA3_PIL ? VLM_RESAMPLE_PILLOW : VLM_RESAMPLE_TORCH_U8,
                             config->resample == PIL_BILINEAR ? VLM_RESAMPLE_BILINEAR : VLM_RESAMPLE_BICUBIC,
                             pixels, width, height, 3, resized, target_width, target_height, allocator);
  } else {
    status = VLM_ERROR(UNIMPLEMENTED, "Gemma 3 image processor: resample %lld (2 bilinear and 3 bicubic are "
                       "implemented)", (long long)config->resample);
  }
  if (status) {
    vlm_release(allocator, resized);
    return status;
  }
  *out = resized, *out_width = target_width, *out_height = target_height;
  return VLM_OK;
}

/* The crop's pixels copied out of the interleaved source. */
static vlm_status copy_crop(const vlm_image *image, const vlm_crop_box *box, const vlm_allocator *allocator,
                            uint8_t **out) {
  if (box->width <= 0 || box->height <= 0)
    return VLM_ERROR(INVALID_ARGUMENT, "pan-and-scan cut an empty crop from a %lldx%lld image",
                     (long long)image->width, (long long)image->height);
  *out = vlm_allocate(allocator, (size_t)(box->width * box->height * 3), VLM_DEFAULT_ALIGNMENT);
  if (!*out) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a crop");
  for (int64_t y = 0; y < box->height; y++)
    memcpy(*out + y * box->width * 3, image->pixels + ((box->y + y) * image->width + box->x) * 3,
           (size_t)(box->width * 3));
  return VLM_OK;
}

vlm_status vlm_gemma3_preprocess(const vlm_processor_config *config, const vlm_image *image,
                                 vlm_gemma3_variant variant, const vlm_allocator *allocator, vlm_tensor *out,
                                 int64_t *out_crops) {
  memset(out, 0, sizeof(*out));
  *out_crops = 0;
  if (!image->pixels || image->width <= 0 || image->height <= 0)
    return VLM_ERROR(INVALID_ARGUMENT, "Gemma 3 image processor: empty image");
  vlm_crop_box boxes[VLM_GEMMA3_MAX_CROPS];
  int crops = vlm_gemma3_pan_and_scan(config, image->width, image->height, boxes);
  float tables[3][256]; /* every uint8 value maps to one float */
  vlm_image_normalize_tables(config, variant == VLM_GEMMA3_PIL ? VLM_IMAGE_BACKEND_PIL : VLM_IMAGE_BACKEND_TORCHVISION,
                             tables);
  vlm_status status = VLM_OK;
  for (int i = 0; !status && i <= crops; i++) {
    uint8_t *source = NULL, *resized = NULL;
    int64_t width = image->width, height = image->height, out_width = 0, out_height = 0;
    if (i > 0) {
      status = copy_crop(image, &boxes[i - 1], allocator, &source);
      width = boxes[i - 1].width, height = boxes[i - 1].height;
    }
    if (!status)
      status = resize_one(config, source ? source : image->pixels, width, height, variant, allocator, &resized,
                          &out_width, &out_height);
    if (!status && i == 0) {
      status = vlm_tensor_create(allocator, VLM_DTYPE_F32, 4, (const int64_t[]){crops + 1, 3, out_height, out_width},
                                 out);
    } else if (!status && (out_width != out->shape[3] || out_height != out->shape[2])) {
      status = VLM_ERROR(INVALID_ARGUMENT, "Gemma 3 image processor: without a resize the crops differ in size");
    }
    if (!status) {
      int64_t plane = out_width * out_height;
      float *values = (float *)out->data + (size_t)(i * 3 * plane);
      for (int channel = 0; channel < 3; channel++)
        for (int64_t p = 0; p < plane; p++) values[channel * plane + p] = tables[channel][resized[p * 3 + channel]];
    }
    vlm_release(allocator, source);
    vlm_release(allocator, resized);
  }
  if (status) {
    vlm_tensor_release(out);
    return status;
  }
  *out_crops = crops;
  return VLM_OK;
}
