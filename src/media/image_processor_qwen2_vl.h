/* Qwen2-VL image processor: smart_resize to multiples of patch_size *
 * merge_size within [min_pixels, max_pixels], bicubic resize, rescale and
 * normalize, the image repeated to temporal_patch_size frames and cut into
 * patches, into pixel_values [grid_t * grid_h * grid_w, 3 * T * P * P]
 * float32 and image_grid_thw. Transformers 5.23.0 uses this one class for
 * Qwen2-VL, Qwen2.5-VL and Qwen3-VL (AutoImageProcessor maps all three to
 * it); what differs is in the config (Qwen3-VL: patch_size 16, mean/std 0.5,
 * min/max pixels in `size`).
 *
 * Two variants, as Transformers 5.23.0 has them:
 *   VLM_QWEN2_VL_TORCHVISION: `Qwen2VLImageProcessor`, the torchvision
 *     backend, which AutoProcessor picks by default when torchvision is
 *     installed. The uint8 CHW tensor is resized by tvF.resize(BICUBIC,
 *     antialias=True), i.e. torch's native uint8 antialiased bicubic (no
 *     float round trip), then one float32 (x - mean * 255) / (std * 255)
 *     (the fused rescale+normalize), then patchified. Reproduced bit for bit
 *     (tests/goldens/media_qwen2_vl: every fixture image and the synthetic
 *     ones, four configs).
 *   VLM_QWEN2_VL_PIL: `Qwen2VLImageProcessorPil`: Pillow's resize, float64
 *     rescale cast to float32, float32 normalize. Also reproduced bit for bit
 *     on every golden; it differs from the default by up to 2 in the resized
 *     uint8 values, so up to 0.0300 in pixel_values with OPENAI_CLIP's std
 *     (0.0157 with Qwen3-VL's 0.5), because the two resize kernels round
 *     differently.
 *
 * Flattening order (both variants): patch rows in (grid_h / merge,
 * grid_w / merge, merge, merge) order, each row (channel, temporal, patch_y,
 * patch_x); a single image's frames are copies, and image_grid_thw is
 * [1, height / patch_size, width / patch_size].
 *
 * Errors follow what Transformers raises: smart_resize refuses an aspect
 * ratio above 200 ("absolute aspect ratio must be smaller than 200, got
 * 200.05"); there is no lower size limit in 5.23 (a 1x1 image is floored to
 * min_pixels: 56x56 with the defaults). A `size` without shortest_edge and
 * longest_edge loads but fails on the first image, as in Transformers. With
 * do_resize off, the image must already divide into patch_size * merge_size
 * blocks (Transformers fails in its reshape otherwise). Only resample 3
 * (bicubic) is implemented. do_center_crop is ignored, as Qwen2-VL's
 * _preprocess ignores it. With do_rescale and do_normalize both off
 * Transformers' torchvision variant returns uint8 pixel_values; ours are
 * the same values as float32. */
#ifndef VLM_MEDIA_IMAGE_PROCESSOR_QWEN2_VL_H
#define VLM_MEDIA_IMAGE_PROCESSOR_QWEN2_VL_H

#include <stdint.h>

#include "core/tensor.h"
#include "io/config.h"
#include "vlm/media.h"

typedef enum vlm_qwen2_vl_variant {
  VLM_QWEN2_VL_TORCHVISION = 0,
  VLM_QWEN2_VL_PIL = 1,
} vlm_qwen2_vl_variant;

/* "Qwen2VLImageProcessor" or "Qwen2VLImageProcessorPil". */
const char *vlm_qwen2_vl_processor_class_name(vlm_qwen2_vl_variant variant);

/* smart_resize as Transformers computes it (Python's float arithmetic, round
 * half to even), exact for sizes and pixel bounds below 2^53; errors as it
 * raises them (INVALID_ARGUMENT). Sizes, factor and bounds must be >= 1. */
vlm_status vlm_qwen2_vl_smart_resize(int64_t height, int64_t width, int64_t factor,
                                     int64_t min_pixels, int64_t max_pixels, int64_t *out_height,
                                     int64_t *out_width);

/* The size a width x height image is resized to (its own size when
 * do_resize is off), checked to divide into patch_size * merge_size blocks. */
vlm_status vlm_qwen2_vl_resized_size(const vlm_processor_config *config, int64_t width,
                                     int64_t height, int64_t *out_width, int64_t *out_height);

/* The grid (t, h, w in patches) an image of this size gets, from its
 * dimensions alone (no pixels: the placeholder count t*h*w / merge^2 is
 * known before decoding). */
vlm_status vlm_qwen2_vl_image_grid(const vlm_processor_config *config, int64_t width,
                                   int64_t height, int64_t out_grid_thw[3]);

/* The resize step alone: an owned interleaved uint8 RGB image of the
 * resized size, exactly what the processor holds before rescale/normalize. */
vlm_status vlm_qwen2_vl_resize(const vlm_processor_config *config, const vlm_image *image,
                               vlm_qwen2_vl_variant variant, const vlm_allocator *allocator,
                               vlm_image *out);

/* Rescale, normalize and patchify an already resized image (its sides
 * multiples of patch_size * merge_size): pixel_values and the grid. */
vlm_status vlm_qwen2_vl_patchify(const vlm_processor_config *config, const vlm_image *resized,
                                 vlm_qwen2_vl_variant variant, const vlm_allocator *allocator,
                                 vlm_tensor *out_pixel_values, int64_t out_grid_thw[3]);

/* Both: pixel_values [t*h*w, C*T*P*P] f32 (owned) and the grid. */
vlm_status vlm_qwen2_vl_preprocess(const vlm_processor_config *config, const vlm_image *image,
                                   vlm_qwen2_vl_variant variant, const vlm_allocator *allocator,
                                   vlm_tensor *out_pixel_values, int64_t out_grid_thw[3]);

#endif
