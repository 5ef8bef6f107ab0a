/* Gemma 3's image processor, torchvision and PIL variants, as Transformers
 * 5.23.0 has them (models/gemma3/image_processing_gemma3.py and
 * image_processing_pil_gemma3.py):
 *
 *   pan-and-scan (when do_pan_and_scan: the processor's call kwargs):
 *     an image whose aspect ratio reaches pan_and_scan_min_ratio_to_activate
 *     is also cut into 2..pan_and_scan_max_num_crops crops along its long
 *     side (about one per ratio unit, none narrower than
 *     pan_and_scan_min_crop_size), the last one clipped at the edge;
 *   every image (the original first, then its crops) resized to `size`
 *     with `resample` (bilinear by default), then rescaled and normalized.
 *
 * VLM_GEMMA3_TORCHVISION (`Gemma3ImageProcessor`, what AutoProcessor picks):
 *   torch's native uint8 antialiased resize (bilinear on an AVX2, AVX-512 or
 *   arm64 CPU, which is where torchvision takes it), then the fused float32
 *   rescale+normalize. Reproduced bit for bit.
 * VLM_GEMMA3_PIL (`Gemma3ImageProcessorPil`): Pillow's resize, float64
 *   rescale cast to float32, float32 normalize. Reproduced bit for bit; it
 *   differs from the default by a few uint8 steps where the two resize
 *   kernels round differently.
 *
 * pixel_values [1 + crops, 3, height, width]: what the model's vision tower
 * takes for one image of the prompt (Gemma3Processor expands its text with
 * one image sequence per entry). */
#ifndef VLM_MEDIA_IMAGE_PROCESSOR_GEMMA3_H
#define VLM_MEDIA_IMAGE_PROCESSOR_GEMMA3_H

#include <stdint.h>

#include "core/tensor.h"
#include "io/config.h"
#include "vlm/media.h"

#define VLM_GEMMA3_MAX_CROPS 64

typedef enum vlm_gemma3_variant {
  VLM_GEMMA3_TORCHVISION = 0,
  VLM_GEMMA3_PIL = 1,
} vlm_gemma3_variant;

/* One pan-and-scan crop of the source image, in its pixels. */
typedef struct vlm_crop_box {
  int64_t x, y, width, height;
} vlm_crop_box;

/* The crops pan_and_scan cuts from a width x height image (0 when
 * do_pan_and_scan is off or the image does not qualify); at most
 * VLM_GEMMA3_MAX_CROPS boxes into `out`. */
int vlm_gemma3_pan_and_scan(const vlm_processor_config *config, int64_t width, int64_t height,
                            vlm_crop_box *out);

/* pixel_values [1 + crops, 3, H, W] (an owned f32 tensor) and the crop
 * count. */
vlm_status vlm_gemma3_preprocess(const vlm_processor_config *config, const vlm_image *image,
                                 vlm_gemma3_variant variant, const vlm_allocator *allocator, vlm_tensor *out,
                                 int64_t *out_crops);

#endif
