/* Phi4MultimodalImageProcessor (see the header). */
#include "media/image_processor_phi4.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "media/image_normalize.h"
#include "media/image_resample.h"

/* Transformers' hard-coded token counts: a crop pools to 16 x 16. */
#define PHI4_GLOBAL_TOKENS 256
#define PHI4_GLOBAL_ROWS 16
/* Crops a grid may have: dynamic_hd's range is checked against it. */
#define PHI4_MAX_CROPS 1024

static vlm_status check_config(const vlm_processor_config *config, int64_t *out_size, int64_t *out_patch) {
  if (config->size.kind != VLM_IMAGE_SIZE_HEIGHT_WIDTH || config->size.height != config->size.width ||
      config->size.height <= 0)
    return VLM_ERROR(INVALID_ARGUMENT, "Phi4MultimodalImageProcessor only supports square sizes");
  if (config->patch_size <= 0 || config->size.height / config->patch_size < 1)
    return VLM_ERROR(INVALID_ARGUMENT, "Phi4MultimodalImageProcessor: patch_size %lld does not fit size %lld",
                     (long long)config->patch_size, (long long)config->size.height);
  if (config->dynamic_hd < 1 || config->dynamic_hd > PHI4_MAX_CROPS)
    return VLM_ERROR(INVALID_ARGUMENT, "Phi4MultimodalImageProcessor: dynamic_hd %lld is outside 1..%d",
                     (long long)config->dynamic_hd, PHI4_MAX_CROPS);
  *out_size = config->size.height;
  *out_patch = config->patch_size;
  return VLM_OK;
}

/* find_closest_aspect_ratio over sorted(target_ratios, key=w * h): equal
 * products are visited in increasing w (Python visits them in set order;
 * only an exact tie in distance between two such grids, which an image's
 * ratio does not produce, would tell the orders apart). */
static void closest_grid(double aspect, int64_t width, int64_t height, int64_t size, int64_t most,
                         int64_t *out_w, int64_t *out_h) {
  double best_difference = INFINITY, area = (double)width * (double)height;
  int64_t best_w = 1, best_h = 1;
  for (int64_t product = 1; product <= most; product++)
    for (int64_t w = 1; w <= product; w++) {
      if (product % w) continue;
      int64_t h = product / w;
      double difference = fabs(aspect - (double)w / (double)h);
      if (difference < best_difference) {
        best_difference = difference;
        best_w = w, best_h = h;
      } else if (difference == best_difference && area > 0.5 * (double)size * (double)size * (double)(w * h)) {
        best_w = w, best_h = h;
      }
    }
  *out_w = best_w, *out_h = best_h;
}

/* The stitched [0::2, 0::2] mask's useful rows and columns: the crops'
 * downsampled masks laid out as the grid, whose ones are a rectangle (the
 * HD mask zeroes trailing columns or trailing rows only). */
static void useful_extent(const vlm_phi4_image_layout *layout, int64_t *out_rows, int64_t *out_columns,
                          int64_t *out_ones) {
  int64_t m = layout->mask_size, d = m / 2 + m % 2, rows = 0, columns = 0;
  for (int64_t r = 0; r < layout->crops_h * d; r++)
    if ((r / d) * m + 2 * (r % d) < layout->valid_mask_h) rows++;
  for (int64_t c = 0; c < layout->crops_w * d; c++)
    if ((c / d) * m + 2 * (c % d) < layout->valid_mask_w) columns++;
  *out_rows = rows, *out_columns = columns, *out_ones = rows * columns;
}

vlm_status vlm_phi4_image_layout_for(const vlm_processor_config *config, int64_t width, int64_t height,
                                     vlm_phi4_image_layout *out) {
  memset(out, 0, sizeof(*out));
  int64_t size = 0, patch = 0;
  VLM_RETURN_IF_ERROR(check_config(config, &size, &patch));
  if (width <= 0 || height <= 0) return VLM_ERROR(INVALID_ARGUMENT, "Phi-4 image processor: empty image");
  int64_t crops_w = (int64_t)ceil((double)width / (double)size), crops_h = (int64_t)ceil((double)height / (double)size);
  if (crops_w > config->dynamic_hd || crops_h > config->dynamic_hd || crops_w * crops_h > config->dynamic_hd)
    closest_grid((double)width / (double)height, width, height, size, config->dynamic_hd, &crops_w, &crops_h);
  int64_t target_w = size * crops_w, target_h = size * crops_h;
  double ratio_w = (double)target_w / (double)width, ratio_h = (double)target_h / (double)height;
  int64_t resized_w, resized_h, padding_w = 0, padding_h = 0;
  if (ratio_w < ratio_h) {
    resized_w = target_w, resized_h = (int64_t)((double)height * ratio_w);
    padding_h = target_h - resized_h;
  } else {
    resized_w = (int64_t)((double)width * ratio_h), resized_h = target_h;
    padding_w = target_w - resized_w;
  }
  int64_t m = size / patch;
  int64_t mask_w = m * crops_w, mask_h = m * crops_h;
  int64_t valid_w = mask_w, valid_h = mask_h;
  if (padding_w >= patch) valid_w = mask_w - padding_w / patch < 0 ? 0 : mask_w - padding_w / patch;
  if (padding_h >= patch) valid_h = mask_h - padding_h / patch < 0 ? 0 : mask_h - padding_h / patch;
  if ((resized_h < target_h ? resized_h : target_h) < 10 || (resized_w < target_w ? resized_w : target_w) < 10)
    return VLM_ERROR(INVALID_ARGUMENT, "Phi-4 image processor: the aspect ratio of a %lldx%lld image is very extreme "
                     "(it would be resized to %lldx%lld)", (long long)width, (long long)height, (long long)resized_w,
                     (long long)resized_h);
  *out = (vlm_phi4_image_layout){.crops_w = crops_w, .crops_h = crops_h, .resized_w = resized_w,
                                 .resized_h = resized_h, .target_w = target_w, .target_h = target_h,
                                 .valid_mask_w = valid_w, .valid_mask_h = valid_h, .mask_size = m};
  int64_t ones = 0;
  useful_extent(out, &out->useful_h, &out->useful_w, &ones);
  out->token_count = PHI4_GLOBAL_TOKENS + 1 + ones + out->useful_h + PHI4_GLOBAL_ROWS;
  return VLM_OK;
}

vlm_status vlm_phi4_image_grid(const vlm_processor_config *config, int64_t width, int64_t height,
                               int64_t out_grid[3]) {
  vlm_phi4_image_layout layout;
  VLM_RETURN_IF_ERROR(vlm_phi4_image_layout_for(config, width, height, &layout));
  out_grid[0] = 1 + layout.crops_w * layout.crops_h;
  out_grid[1] = layout.useful_h, out_grid[2] = layout.useful_w;
  return VLM_OK;
}

vlm_status vlm_phi4_image_grid_from_mask(const float *mask, int64_t images, int64_t mask_size, int64_t height,
                                         int64_t width, int64_t crop_size, int64_t out_grid[3], int64_t *out_tokens) {
  if (crop_size <= 0 || mask_size <= 0 || height % crop_size || width % crop_size)
    return VLM_ERROR(INVALID_ARGUMENT, "image_sizes %lldx%lld are not whole %lld px crops", (long long)height,
                     (long long)width, (long long)crop_size);
  int64_t crops_h = height / crop_size, crops_w = width / crop_size, d = mask_size / 2 + mask_size % 2;
  if (images != 1 + crops_h * crops_w)
    return VLM_ERROR(INVALID_ARGUMENT, "%lld mask images for a %lldx%lld crop grid", (long long)images,
                     (long long)crops_w, (long long)crops_h);
  /* Phi4MultimodalImageEmbedding: the crops' [0::2, 0::2] masks stitched;
   * useful rows = the first column's sum, columns = the first row's. */
  int64_t rows = 0, columns = 0, ones = 0;
  for (int64_t r = 0; r < crops_h * d; r++)
    for (int64_t c = 0; c < crops_w * d; c++) {
      int64_t crop = 1 + (r / d) * crops_w + c / d;
      float value = mask[(crop * mask_size + 2 * (r % d)) * mask_size + 2 * (c % d)];
      ones += value != 0.0f;
      if (c == 0) rows += value != 0.0f;
      if (r == 0) columns += value != 0.0f;
    }
  out_grid[0] = images, out_grid[1] = rows, out_grid[2] = columns;
  *out_tokens = PHI4_GLOBAL_TOKENS + 1 + ones + rows + PHI4_GLOBAL_ROWS;
  return VLM_OK;
}

/* ---- torch's float bicubic ------------------------------------------------ */

/* HelperInterpCubic::compute_indices_weights: the source index
 * scale * (i + 0.5) - 0.5 in float, its floor capped at in - 1, the
 * fraction clamped to [0, 1], the four taps' indices clamped to the
 * image, get_cubic_upsample_coefficients with A = -0.75. */
static void cubic_taps(int64_t in, int64_t out, int64_t *indices, float *weights) {
  const float a = -0.75f, scale = (float)in / (float)out;
  for (int64_t i = 0; i < out; i++) {
    float real = scale * ((float)i + 0.5f) - 0.5f;
    int64_t index = (int64_t)floorf(real);
    if (index > in - 1) index = in - 1;
    float t = real - (float)index;
    t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
    float x1 = t + 1.0f, x2 = 1.0f - t, x3 = 2.0f - t;
    weights[4 * i + 0] = ((a * x1 - 5.0f * a) * x1 + 8.0f * a) * x1 - 4.0f * a;
    weights[4 * i + 1] = ((a + 2.0f) * t - (a + 3.0f)) * t * t + 1.0f;
    weights[4 * i + 2] = ((a + 2.0f) * x2 - (a + 3.0f)) * x2 * x2 + 1.0f;
    weights[4 * i + 3] = ((a * x3 - 5.0f * a) * x3 + 8.0f * a) * x3 - 4.0f * a;
    for (int j = 0; j < 4; j++) {
      int64_t tap = index - 1 + j;
      indices[4 * i + j] = tap < 0 ? 0 : tap > in - 1 ? in - 1 : tap;
    }
  }
}

vlm_status vlm_phi4_resize_bicubic_f32(const float *in, int64_t channels, int64_t in_h, int64_t in_w, float *out,
                                       int64_t out_h, int64_t out_w) {
  if (in_h == out_h && in_w == out_w) { /* torchvision returns the image as is */
    memcpy(out, in, (size_t)(channels * in_h * in_w) * sizeof(float));
    return VLM_OK;
  }
  int64_t *rows = malloc((size_t)(4 * (out_h + out_w)) * sizeof(int64_t));
  float *row_weights = malloc((size_t)(4 * (out_h + out_w)) * sizeof(float));
  if (!rows || !row_weights) {
    free(rows), free(row_weights);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a bicubic resize");
  }
  int64_t *columns = rows + 4 * out_h;
  float *column_weights = row_weights + 4 * out_h;
  cubic_taps(in_h, out_h, rows, row_weights);
  cubic_taps(in_w, out_w, columns, column_weights);
  /* cpu_upsample_generic's Interpolate<2>: per output, the row taps outer,
   * each a left-to-right sum over the column taps. */
  for (int64_t c = 0; c < channels; c++) {
    const float *plane = in + c * in_h * in_w;
    for (int64_t y = 0; y < out_h; y++)
      for (int64_t x = 0; x < out_w; x++) {
        float sum = 0.0f;
        for (int j = 0; j < 4; j++) {
          const float *line = plane + rows[4 * y + j] * in_w;
          const int64_t *taps = columns + 4 * x;
          const float *w = column_weights + 4 * x;
          float t = line[taps[0]] * w[0];
          t += line[taps[1]] * w[1];
          t += line[taps[2]] * w[2];
          t += line[taps[3]] * w[3];
          sum = j == 0 ? t * row_weights[4 * y] : sum + t * row_weights[4 * y + j];
        }
        out[(c * out_h + y) * out_w + x] = sum;
      }
  }
  free(rows);
  free(row_weights);
  return VLM_OK;
}

/* ---- The processor ---------------------------------------------------------- */

/* dynamic_preprocess's resize (uint8, antialiased bilinear) and 255 padding,
 * then the normalized float image [3, target_h, target_w]. */
static vlm_status hd_image(const vlm_processor_config *config, const vlm_image *image,
                           const vlm_phi4_image_layout *layout, const vlm_allocator *allocator, float *out) {
  uint8_t *resized = vlm_allocate(allocator, (size_t)(layout->resized_w * layout->resized_h * 3),
                                  VLM_DEFAULT_ALIGNMENT);
  if (!resized) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a %lldx%lld image",
                                 (long long)layout->resized_w, (long long)layout->resized_h);
  vlm_status status = VLM_OK;
  if (layout->resized_w == image->width && layout->resized_h == image->height)
    memcpy(resized, image->pixels, (size_t)(image->width * image->height * 3));
  else
    status = vlm_resample_u8(VLM_RESAMPLE_TORCH_U8, VLM_RESAMPLE_BILINEAR, image->pixels, image->width,
                             image->height, 3, resized, layout->resized_w, layout->resized_h, allocator);
  if (!status) {
    float tables[3][256];
    vlm_image_normalize_tables(config, VLM_IMAGE_BACKEND_TORCHVISION, tables);
    int64_t plane = layout->target_w * layout->target_h;
    for (int64_t y = 0; y < layout->target_h; y++)
      for (int64_t x = 0; x < layout->target_w; x++) {
        bool inside = y < layout->resized_h && x < layout->resized_w;
        const uint8_t *pixel = resized + (y * layout->resized_w + x) * 3;
        for (int c = 0; c < 3; c++) out[c * plane + y * layout->target_w + x] = tables[c][inside ? pixel[c] : 255];
      }
  }
  vlm_release(allocator, resized);
  return status;
}

/* image_pixel_values: the global image, then each crop of the HD image. */
static vlm_status pixel_values(const vlm_phi4_image_layout *layout, int64_t size, const float *hd, float *out) {
  int64_t crop_floats = 3 * size * size;
  VLM_RETURN_IF_ERROR(vlm_phi4_resize_bicubic_f32(hd, 3, layout->target_h, layout->target_w, out, size, size));
  for (int64_t r = 0; r < layout->crops_h; r++)
    for (int64_t k = 0; k < layout->crops_w; k++) {
      float *crop = out + (1 + r * layout->crops_w + k) * crop_floats;
      for (int c = 0; c < 3; c++)
        for (int64_t y = 0; y < size; y++)
          memcpy(crop + (c * size + y) * size,
                 hd + ((int64_t)c * layout->target_h + r * size + y) * layout->target_w + k * size,
                 (size_t)size * sizeof(float));
    }
  return VLM_OK;
}

/* image_attention_mask: all ones for the global image, each crop's part of
 * the HD mask. */
static void attention_masks(const vlm_phi4_image_layout *layout, float *out) {
  int64_t m = layout->mask_size;
  for (int64_t i = 0; i < m * m; i++) out[i] = 1.0f;
  for (int64_t r = 0; r < layout->crops_h; r++)
    for (int64_t k = 0; k < layout->crops_w; k++) {
      float *crop = out + (1 + r * layout->crops_w + k) * m * m;
      for (int64_t y = 0; y < m; y++)
        for (int64_t x = 0; x < m; x++)
          crop[y * m + x] = (r * m + y < layout->valid_mask_h && k * m + x < layout->valid_mask_w) ? 1.0f : 0.0f;
    }
}

vlm_status vlm_phi4_image_preprocess(const vlm_processor_config *config, const vlm_image *image,
                                     const vlm_allocator *allocator, vlm_media_item *out) {
  if (!image->pixels) return VLM_ERROR(INVALID_ARGUMENT, "Phi-4 image processor: empty image");
  vlm_phi4_image_layout layout;
  VLM_RETURN_IF_ERROR(vlm_phi4_image_layout_for(config, image->width, image->height, &layout));
  int64_t size = config->size.height, images = 1 + layout.crops_w * layout.crops_h, m = layout.mask_size;
  float *hd = vlm_allocate(allocator, (size_t)(3 * layout.target_w * layout.target_h) * sizeof(float),
                           VLM_DEFAULT_ALIGNMENT);
  if (!hd) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a %lldx%lld HD image", (long long)layout.target_w,
                            (long long)layout.target_h);
  vlm_status status = hd_image(config, image, &layout, allocator, hd);
  float *values = NULL, *masks = NULL;
  int32_t *sizes = NULL, *tokens = NULL;
  if (!status)
    status = vlm_tensor_list_add(&out->tensors, "image_pixel_values", VLM_DTYPE_F32, 4,
                                 (const int64_t[]){images, 3, size, size}, (void **)&values);
  if (!status) status = pixel_values(&layout, size, hd, values);
  if (!status)
    status = vlm_tensor_list_add(&out->tensors, "image_attention_mask", VLM_DTYPE_F32, 3,
                                 (const int64_t[]){images, m, m}, (void **)&masks);
  if (!status) attention_masks(&layout, masks);
  if (!status)
    status = vlm_tensor_list_add(&out->tensors, "image_sizes", VLM_DTYPE_I32, 1, (const int64_t[]){2},
                                 (void **)&sizes);
  if (!status) sizes[0] = (int32_t)layout.target_h, sizes[1] = (int32_t)layout.target_w;
  if (!status)
    status = vlm_tensor_list_add(&out->tensors, "num_img_tokens", VLM_DTYPE_I32, 1, (const int64_t[]){1},
                                 (void **)&tokens);
  if (!status) *tokens = (int32_t)layout.token_count;
  vlm_release(allocator, hd);
  out->grid[0] = images, out->grid[1] = layout.useful_h, out->grid[2] = layout.useful_w;
  return status;
}

vlm_status vlm_phi4_image_item_from_batch(const vlm_processor_outputs *batch, int64_t index, vlm_media_item *out) {
  vlm_tensor pixels, masks, sizes;
  VLM_RETURN_IF_ERROR(batch->get(batch->context, "image_pixel_values", &pixels));
  VLM_RETURN_IF_ERROR(batch->get(batch->context, "image_attention_mask", &masks));
  VLM_RETURN_IF_ERROR(batch->get(batch->context, "image_sizes", &sizes));
  if (pixels.dtype != VLM_DTYPE_F32 || masks.dtype != VLM_DTYPE_F32 || pixels.rank != 5 || masks.rank != 4 ||
      sizes.rank != 2 || sizes.shape[1] != 2 || index >= pixels.shape[0] || masks.shape[0] != pixels.shape[0] ||
      masks.shape[1] != pixels.shape[1] || sizes.shape[0] != pixels.shape[0] || masks.shape[2] != masks.shape[3])
    return VLM_ERROR(DATA_LOSS, "image_pixel_values, image_attention_mask and image_sizes do not have Phi-4's layout");
  int64_t crop = pixels.shape[4], m = masks.shape[2];
  int64_t height = vlm_tensor_value_as_int64(&sizes, 2 * index), width = vlm_tensor_value_as_int64(&sizes, 2 * index + 1);
  int64_t images = crop > 0 && height % crop == 0 && width % crop == 0 ? 1 + (height / crop) * (width / crop) : 0;
  if (images < 2 || images > pixels.shape[1])
    return VLM_ERROR(DATA_LOSS, "image_sizes %lldx%lld do not fit %lld crops of %lld px", (long long)height,
                     (long long)width, (long long)pixels.shape[1] - 1, (long long)crop);
  int64_t image_floats = pixels.shape[2] * pixels.shape[3] * crop, mask_floats = m * m;
  void *data = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&out->tensors, "image_pixel_values", VLM_DTYPE_F32, 4,
                                          (const int64_t[]){images, pixels.shape[2], pixels.shape[3], crop}, &data));
  memcpy(data, (const float *)pixels.data + index * pixels.shape[1] * image_floats,
         (size_t)(images * image_floats) * sizeof(float));
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&out->tensors, "image_attention_mask", VLM_DTYPE_F32, 3,
                                          (const int64_t[]){images, m, m}, &data));
  const float *mask = (const float *)masks.data + index * masks.shape[1] * mask_floats;
  memcpy(data, mask, (size_t)(images * mask_floats) * sizeof(float));
  int32_t *hw = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&out->tensors, "image_sizes", VLM_DTYPE_I32, 1, (const int64_t[]){2},
                                          (void **)&hw));
  hw[0] = (int32_t)height, hw[1] = (int32_t)width;
  int64_t tokens = 0;
  return vlm_phi4_image_grid_from_mask(mask, images, m, height, width, crop, out->grid, &tokens);
}
