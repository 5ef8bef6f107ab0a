/* Rescale + normalize of uint8 pixels as Transformers' two image-processor
 * backends compute it, shared by every processor built on them (CLIP,
 * Qwen2-VL, ...). Each uint8 value of a channel maps to one float32, so the
 * map is a 256-entry table per channel:
 *
 *   VLM_IMAGE_BACKEND_TORCHVISION (TorchvisionBackend.rescale_and_normalize):
 *     with both steps on, _fuse_mean_std_and_rescale_factor makes float32
 *     mean * (1 / factor) and std * (1 / factor) (the product rounded to
 *     float32), then (x - mean) / std in float32; rescale alone is
 *     float32(x) * float32(factor); normalize alone (x - mean) / std.
 *   VLM_IMAGE_BACKEND_PIL (PilBackend.rescale / normalize):
 *     float32(float64(x) * factor), then (x - mean) / std with float32 mean
 *     and std.
 * With neither step the value is x itself. */
#ifndef VLM_MEDIA_IMAGE_NORMALIZE_H
#define VLM_MEDIA_IMAGE_NORMALIZE_H

#include "io/config.h"

typedef enum vlm_image_backend {
  VLM_IMAGE_BACKEND_TORCHVISION = 0,
  VLM_IMAGE_BACKEND_PIL = 1,
} vlm_image_backend;

/* tables[c][v]: what value v of channel c becomes under `config`'s
 * do_rescale / rescale_factor / do_normalize / image_mean / image_std. */
void vlm_image_normalize_tables(const vlm_processor_config *config, vlm_image_backend backend,
                                float tables[3][256]);

#endif
