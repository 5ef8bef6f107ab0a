/* CLIP image processor (LLaVA-1.5's): shortest-edge bicubic resize, center
 * crop, rescale and normalize, into pixel_values [3, H, W] float32.
 *
 * Two variants, as Transformers 5.23.0 has them:
 *   VLM_CLIP_TORCHVISION: `CLIPImageProcessor`, the torchvision backend,
 *     which AutoProcessor picks by default when torchvision is installed.
 *     uint8 tensor resized by torch's native uint8 antialiased bicubic,
 *     uint8 center crop (zero padding when the crop is larger), then one
 *     float32 (x - mean * 255) / (std * 255) (the fused rescale+normalize).
 *     Reproduced bit for bit.
 *   VLM_CLIP_PIL: `CLIPImageProcessorPil`: Pillow's resize, numpy crop,
 *     float64 rescale cast to float32, float32 normalize. Reproduced bit for
 *     bit where the crop fits (the usual case); differs from the default by
 *     up to ~0.03 because the two resize kernels round differently. */
#ifndef VLM_MEDIA_IMAGE_PROCESSOR_CLIP_H
#define VLM_MEDIA_IMAGE_PROCESSOR_CLIP_H

#include <stdint.h>

#include "core/tensor.h"
#include "io/config.h"
#include "vlm/media.h"

typedef enum vlm_clip_variant {
  VLM_CLIP_TORCHVISION = 0,
  VLM_CLIP_PIL = 1,
} vlm_clip_variant;

/* "CLIPImageProcessor" or "CLIPImageProcessorPil". */
const char *vlm_clip_processor_class_name(vlm_clip_variant variant);

/* Resize and crop only: an owned uint8 RGB image (interleaved) of the crop
 * size, exactly what the processor holds before rescale/normalize. */
vlm_status vlm_clip_resize_and_crop(const vlm_processor_config *config, const vlm_image *image,
                                    vlm_clip_variant variant, const vlm_allocator *allocator,
                                    vlm_image *out);
/* Rescale and normalize an interleaved uint8 RGB image into an owned
 * contiguous f32 tensor [3, height, width]. */
vlm_status vlm_clip_rescale_and_normalize(const vlm_processor_config *config,
                                          const vlm_image *image, vlm_clip_variant variant,
                                          const vlm_allocator *allocator, vlm_tensor *out);
/* Both: pixel_values [3, H, W] of one image. */
vlm_status vlm_clip_preprocess(const vlm_processor_config *config, const vlm_image *image,
                               vlm_clip_variant variant, const vlm_allocator *allocator,
                               vlm_tensor *out);

#endif
