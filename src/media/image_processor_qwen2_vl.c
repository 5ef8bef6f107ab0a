/* The Qwen2-VL image processor, torchvision and PIL variants (see the
 * header for what each one does and how exactly we match it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "media/image_normalize.h"
#include "media/image_processor_qwen2_vl.h"
#include "media/image_resample.h"

enum { PIL_BICUBIC = 3 };

/* Integers below this convert to double exactly, so Python's int / int
 * (correctly rounded) and ours (convert, then one IEEE division) agree. */
static const int64_t exact_limit = INT64_C(1) << 53;
/* Resized images above this many pixels are refused (as CLIP's are). */
static const int64_t max_resized_pixels = INT64_C(1) << 32;

const char *vlm_qwen2_vl_processor_class_name(vlm_qwen2_vl_variant variant) {
  return variant == VLM_QWEN2_VL_PIL ? "Qwen2VLImageProcessorPil" : "Qwen2VLImageProcessor";
}

/* Python's round(float): half to even, whatever the FPU rounding mode. */
static double round_half_even(double x) {
  double below = floor(x), fraction = x - below; /* exact */
  if (fraction > 0.5 || (fraction == 0.5 && fmod(below, 2.0) != 0.0)) below += 1.0;
  return below;
}

/* repr(float) as Python prints it: the shortest digits that read back as
 * the same double, fixed notation between 1e-4 and 1e16 with at least one
 * decimal ("201.0"), exponent notation outside ("1e+16"). */
static void python_float_repr(double value, char *buffer, size_t size) {
  char digits[64];
  int precision = 1;
  for (; precision < 17; precision++) {
    snprintf(digits, sizeof(digits), "%.*e", precision - 1, value);
    if (strtod(digits, NULL) == value) break;
  }
  snprintf(digits, sizeof(digits), "%.*e", precision - 1, value);
  const char *e = strchr(digits, 'e');
  int exponent = e ? atoi(e + 1) : 0;
  if (exponent < -4 || exponent >= 16) {
    snprintf(buffer, size, "%s", digits);
    return;
  }
  int decimals = precision - 1 - exponent;
  if (decimals < 1) snprintf(buffer, size, "%.0f.0", value);
  else snprintf(buffer, size, "%.*f", decimals, value);
}

/* A double that smart_resize turns back into an integer number of blocks. */
static vlm_status blocks(double value, int64_t factor, int64_t *out) {
  if (!(value >= 0.0 && value < (double)(INT64_C(1) << 52) / (double)factor))
    return VLM_ERROR(OUT_OF_RANGE, "smart_resize: the resized size is out of range");
  *out = (int64_t)value * factor;
  return VLM_OK;
}

vlm_status vlm_qwen2_vl_smart_resize(int64_t height, int64_t width, int64_t factor,
                                     int64_t min_pixels, int64_t max_pixels, int64_t *out_height,
                                     int64_t *out_width) {
  *out_height = *out_width = 0;
  if (height < 1 || width < 1 || factor < 1 || min_pixels < 1 || max_pixels < 1)
    return VLM_ERROR(INVALID_ARGUMENT, "smart_resize: height %lld, width %lld, factor %lld, "
                     "min_pixels %lld and max_pixels %lld must all be positive", (long long)height,
                     (long long)width, (long long)factor, (long long)min_pixels,
                     (long long)max_pixels);
  if (height > exact_limit / width || factor >= exact_limit || min_pixels >= exact_limit ||
      max_pixels >= exact_limit)
    return VLM_ERROR(OUT_OF_RANGE, "smart_resize: a %lldx%lld image is too large",
                     (long long)width, (long long)height);
  int64_t longer = height > width ? height : width, shorter = height > width ? width : height;
  double ratio = (double)longer / (double)shorter;
  if (ratio > 200) {
    char text[64];
    python_float_repr(ratio, text, sizeof(text));
    return VLM_ERROR(INVALID_ARGUMENT, "absolute aspect ratio must be smaller than 200, got %s", text);
  }
  double h = (double)height, w = (double)width, f = (double)factor, pixels = (double)(height * width);
  int64_t h_bar = 0, w_bar = 0, area = 0;
  VLM_RETURN_IF_ERROR(blocks(round_half_even(h / f), factor, &h_bar));
  VLM_RETURN_IF_ERROR(blocks(round_half_even(w / f), factor, &w_bar));
  if (__builtin_mul_overflow(h_bar, w_bar, &area))
    return VLM_ERROR(OUT_OF_RANGE, "smart_resize: the resized size is out of range");
  if (area > max_pixels) {
    double beta = sqrt(pixels / (double)max_pixels);
    VLM_RETURN_IF_ERROR(blocks(floor(h / beta / f), factor, &h_bar));
    VLM_RETURN_IF_ERROR(blocks(floor(w / beta / f), factor, &w_bar));
    if (h_bar < factor) h_bar = factor;
    if (w_bar < factor) w_bar = factor;
  } else if (area < min_pixels) {
    double beta = sqrt((double)min_pixels / pixels);
    VLM_RETURN_IF_ERROR(blocks(ceil(h * beta / f), factor, &h_bar));
    VLM_RETURN_IF_ERROR(blocks(ceil(w * beta / f), factor, &w_bar));
  }
  *out_height = h_bar, *out_width = w_bar;
  return VLM_OK;
}

static const char *size_keys(vlm_image_size_kind kind) {
  switch (kind) {
    case VLM_IMAGE_SIZE_HEIGHT_WIDTH: return "{height, width}";
    case VLM_IMAGE_SIZE_SHORTEST_EDGE: return "{shortest_edge}";
    case VLM_IMAGE_SIZE_LONGEST_EDGE: return "{longest_edge}";
    case VLM_IMAGE_SIZE_SHORTEST_LONGEST_EDGE: return "{shortest_edge, longest_edge}";
    case VLM_IMAGE_SIZE_MAX_HEIGHT_WIDTH: return "{max_height, max_width}";
    case VLM_IMAGE_SIZE_MIN_MAX_PIXELS: return "{min_pixels, max_pixels}";
    default: return "nothing";
  }
}

/* What Qwen2VLImageProcessor needs of its config before touching pixels. */
static vlm_status check_config(const vlm_processor_config *config) {
  if (!config->image_processor_type || strcmp(config->image_processor_type, "Qwen2VLImageProcessor") != 0)
    return VLM_ERROR(INVALID_ARGUMENT, "Qwen2-VL image processor: the processor config is for %s",
                     config->image_processor_type ? config->image_processor_type : "no class");
  if (config->patch_size < 1 || config->merge_size < 1 || config->temporal_patch_size < 1)
    return VLM_ERROR(INVALID_ARGUMENT, "Qwen2-VL image processor: patch_size %lld, merge_size %lld "
                     "and temporal_patch_size %lld must be positive", (long long)config->patch_size,
                     (long long)config->merge_size, (long long)config->temporal_patch_size);
  if (!config->do_resize) return VLM_OK;
  if (config->resample != PIL_BICUBIC)
    return VLM_ERROR(UNIMPLEMENTED, "Qwen2-VL image processor: resample %lld (only 3, bicubic, is "
                     "implemented)", (long long)config->resample);
  /* Qwen2VLImageProcessor.resize's check, raised on the first image. */
  if (config->min_pixels < 1 || config->max_pixels < 1)
    return VLM_ERROR(INVALID_ARGUMENT, "Qwen2-VL image processor: `size` dict must contain "
                     "'shortest_edge' and 'longest_edge' keys (or the config min_pixels and "
                     "max_pixels) but got %s", size_keys(config->size.kind));
  return VLM_OK;
}

vlm_status vlm_qwen2_vl_resized_size(const vlm_processor_config *config, int64_t width,
                                     int64_t height, int64_t *out_width, int64_t *out_height) {
  *out_width = *out_height = 0;
  VLM_RETURN_IF_ERROR(check_config(config));
  if (width < 1 || height < 1)
    return VLM_ERROR(INVALID_ARGUMENT, "Qwen2-VL image processor: empty image");
  int64_t block = config->patch_size * config->merge_size;
  if (config->do_resize) {
    int64_t h = 0, w = 0;
    VLM_RETURN_IF_ERROR(vlm_status_annotate(
        vlm_qwen2_vl_smart_resize(height, width, block, config->min_pixels, config->max_pixels, &h, &w),
        "Qwen2-VL image processor: a %lldx%lld image", (long long)width, (long long)height));
    width = w, height = h;
  } else if (width % block || height % block) {
    return VLM_ERROR(INVALID_ARGUMENT, "Qwen2-VL image processor: do_resize is off and a %lldx%lld "
                     "image does not divide into %lldx%lld blocks (patch_size x merge_size)",
                     (long long)width, (long long)height, (long long)block, (long long)block);
  }
  if (width > max_resized_pixels / height)
    return VLM_ERROR(OUT_OF_RANGE, "Qwen2-VL image processor: the image resizes to %lldx%lld",
                     (long long)width, (long long)height);
  *out_width = width, *out_height = height;
  return VLM_OK;
}

vlm_status vlm_qwen2_vl_image_grid(const vlm_processor_config *config, int64_t width,
                                   int64_t height, int64_t out_grid_thw[3]) {
  out_grid_thw[0] = out_grid_thw[1] = out_grid_thw[2] = 0;
  int64_t resized_width = 0, resized_height = 0;
  VLM_RETURN_IF_ERROR(vlm_qwen2_vl_resized_size(config, width, height, &resized_width, &resized_height));
  out_grid_thw[0] = 1; /* one image is one temporal patch (its frames are copies) */
  out_grid_thw[1] = resized_height / config->patch_size;
  out_grid_thw[2] = resized_width / config->patch_size;
  return VLM_OK;
}

vlm_status vlm_qwen2_vl_resize(const vlm_processor_config *config, const vlm_image *image,
                               vlm_qwen2_vl_variant variant, const vlm_allocator *allocator,
                               vlm_image *out) {
  memset(out, 0, sizeof(*out));
  if (!image->pixels || image->width <= 0 || image->height <= 0)
    return VLM_ERROR(INVALID_ARGUMENT, "Qwen2-VL image processor: empty image");
  int64_t width = 0, height = 0;
  VLM_RETURN_IF_ERROR(vlm_qwen2_vl_resized_size(config, image->width, image->height, &width, &height));
  out->pixels = vlm_allocate(allocator, (size_t)(width * height * 3), VLM_DEFAULT_ALIGNMENT);
  if (!out->pixels)
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a %lldx%lld image", (long long)width,
                     (long long)height);
  out->width = width, out->height = height, out->allocator = allocator;
  out->format = image->format, out->exif_orientation = 1;
  /* torchvision and Pillow both return the input when the size is unchanged. */
  if (width == image->width && height == image->height) {
    memcpy(out->pixels, image->pixels, (size_t)(width * height * 3));
    return VLM_OK;
  }
  vlm_status status = vlm_resample_bicubic_u8(
      variant == VLM_QWEN2_VL_PIL ? VLM_RESAMPLE_PILLOW : VLM_RESAMPLE_TORCH_U8, image->pixels,
      image->width, image->height, 3, out->pixels, width, height, allocator);
  if (status) vlm_image_release(out);
  return status;
}

/* One patch row: for each channel the P x P block at (top, left), looked up
 * through that channel's table, then its copies for the other frames. */
static void write_patch(const vlm_image *image, const float tables[3][256], int64_t patch,
                        int64_t frames, int64_t top, int64_t left, float *row) {
  int64_t area = patch * patch;
  for (int channel = 0; channel < 3; channel++) {
    float *block = row + channel * frames * area;
    const float *table = tables[channel];
    for (int64_t y = 0; y < patch; y++) {
      const uint8_t *source = image->pixels + ((top + y) * image->width + left) * 3 + channel;
      float *target = block + y * patch;
      for (int64_t x = 0; x < patch; x++) target[x] = table[source[x * 3]];
    }
    for (int64_t t = 1; t < frames; t++) memcpy(block + t * area, block, (size_t)area * sizeof(float));
  }
}

vlm_status vlm_qwen2_vl_patchify(const vlm_processor_config *config, const vlm_image *resized,
                                 vlm_qwen2_vl_variant variant, const vlm_allocator *allocator,
                                 vlm_tensor *out_pixel_values, int64_t out_grid_thw[3]) {
  memset(out_pixel_values, 0, sizeof(*out_pixel_values));
  out_grid_thw[0] = out_grid_thw[1] = out_grid_thw[2] = 0;
  VLM_RETURN_IF_ERROR(check_config(config));
  int64_t patch = config->patch_size, merge = config->merge_size, frames = config->temporal_patch_size;
  int64_t block = patch * merge;
  if (!resized->pixels || resized->width < block || resized->height < block ||
      resized->width % block || resized->height % block)
    return VLM_ERROR(INVALID_ARGUMENT, "Qwen2-VL image processor: a %lldx%lld image does not divide "
                     "into %lldx%lld blocks (patch_size x merge_size)", (long long)resized->width,
                     (long long)resized->height, (long long)block, (long long)block);
  int64_t grid_h = resized->height / patch, grid_w = resized->width / patch;
  int64_t shape[2] = {grid_h * grid_w, 3 * frames * patch * patch};
  /* Every element is written below: no zeroing pass over the (up to a few
   * hundred MB) tensor, which vlm_tensor_create would do. */
  if (shape[0] > INT64_MAX / shape[1] / 4)
    return VLM_ERROR(OUT_OF_RANGE, "Qwen2-VL image processor: pixel_values too large");
  void *data = vlm_allocate(allocator, (size_t)(shape[0] * shape[1] * 4), VLM_DEFAULT_ALIGNMENT);
  if (!data)
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for pixel_values [%lld, %lld]",
                     (long long)shape[0], (long long)shape[1]);
  vlm_status status = vlm_tensor_borrow(VLM_DTYPE_F32, 2, shape, data, out_pixel_values);
  if (status) {
    vlm_release(allocator, data);
    return status;
  }
  out_pixel_values->owns_data = true, out_pixel_values->allocator = allocator;
  float tables[3][256];
  vlm_image_normalize_tables(
      config, variant == VLM_QWEN2_VL_PIL ? VLM_IMAGE_BACKEND_PIL : VLM_IMAGE_BACKEND_TORCHVISION,
      tables);
  /* Rows in (grid_h / merge, grid_w / merge, merge, merge) order. */
  float *row = out_pixel_values->data;
  for (int64_t by = 0; by < grid_h / merge; by++)
    for (int64_t bx = 0; bx < grid_w / merge; bx++)
      for (int64_t my = 0; my < merge; my++)
        for (int64_t mx = 0; mx < merge; mx++, row += shape[1])
          write_patch(resized, tables, patch, frames, (by * merge + my) * patch,
                      (bx * merge + mx) * patch, row);
  out_grid_thw[0] = 1, out_grid_thw[1] = grid_h, out_grid_thw[2] = grid_w;
  return VLM_OK;
}

vlm_status vlm_qwen2_vl_preprocess(const vlm_processor_config *config, const vlm_image *image,
                                   vlm_qwen2_vl_variant variant, const vlm_allocator *allocator,
                                   vlm_tensor *out_pixel_values, int64_t out_grid_thw[3]) {
  memset(out_pixel_values, 0, sizeof(*out_pixel_values));
  out_grid_thw[0] = out_grid_thw[1] = out_grid_thw[2] = 0;
  vlm_image resized;
  VLM_RETURN_IF_ERROR(vlm_qwen2_vl_resize(config, image, variant, allocator, &resized));
  vlm_status status = vlm_qwen2_vl_patchify(config, &resized, variant, allocator, out_pixel_values,
                                            out_grid_thw);
  vlm_image_release(&resized);
  return status;
}
