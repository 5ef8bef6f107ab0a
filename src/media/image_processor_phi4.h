/* Phi-4-multimodal's image processor as Transformers 5.23.0 has it
 * (models/phi4_multimodal/image_processing_phi4_multimodal.py,
 * Phi4MultimodalImageProcessor: torchvision only, no Pil twin):
 *
 *   dynamic_preprocess  ceil(width / S) x ceil(height / S) crops of S = size
 *                       (square); more than dynamic_hd of them: the (w, h)
 *                       crop grid of at most dynamic_hd closest to the aspect
 *                       ratio (find_closest_aspect_ratio: the first closest in
 *                       order of w * h, a later equal one when the image is
 *                       larger than half the grid's area); the image resized
 *                       (torchvision's uint8 antialiased bilinear) to fill the
 *                       grid's width or height keeping its aspect ratio
 *                       (int() of the scaled other side), padded right and
 *                       bottom with 255; the patch mask [h * S / P, w * S / P]
 *                       zero in the last floor(padding / P) columns or rows
 *   rescale_and_normalize  the fused float32 torchvision form
 *   global image        the normalized HD image resized to S x S by torch's
 *                       float bicubic (antialias off, align_corners off,
 *                       A = -0.75), first in image_pixel_values, then the
 *                       crops row by row
 *   num_img_tokens      256 + 1 + sum(m) + sum(m[:, 0]) + 16, m the crops'
 *                       masks at [0::2, 0::2] stitched into the grid's
 *                       layout (Transformers hard-codes 16 x 16 pooled
 *                       tokens a crop: the model's tower must pool to that)
 *
 * The item's tensors: image_pixel_values f32 [1 + crops, 3, S, S],
 * image_attention_mask f32 [1 + crops, S / P, S / P] (the global image's all
 * ones), image_sizes i32 [2] (the HD image's height, width), num_img_tokens
 * i32 [1]; its grid {1 + crops, useful rows, useful columns} of the stitched
 * mask m (rows and columns of pooled crop tokens the model keeps).
 *
 * Everything up to the global resize is bit-exact; the float bicubic is
 * torch's arithmetic in float32 (tests/test_image_processor_phi4.c bounds
 * its difference). */
#ifndef VLM_MEDIA_IMAGE_PROCESSOR_PHI4_H
#define VLM_MEDIA_IMAGE_PROCESSOR_PHI4_H

#include <stdint.h>

#include "io/config.h"
#include "media/media_item.h"
#include "vlm/media.h"

typedef struct vlm_phi4_image_layout {
  int64_t crops_w, crops_h;        /* the crop grid (target_aspect_ratio) */
  int64_t resized_w, resized_h;    /* the image before padding */
  int64_t target_w, target_h;      /* crops_w * S, crops_h * S */
  int64_t valid_mask_w, valid_mask_h; /* unmasked patch columns and rows of the HD mask */
  int64_t mask_size;               /* S / P */
  int64_t useful_h, useful_w;      /* rows and columns of the stitched mask m */
  int64_t token_count;             /* num_img_tokens */
} vlm_phi4_image_layout;

/* The layout of a width x height image (no pixels needed), or
 * INVALID_ARGUMENT as Transformers' "the aspect ratio is very extreme". */
vlm_status vlm_phi4_image_layout_for(const vlm_processor_config *config, int64_t width, int64_t height,
                                     vlm_phi4_image_layout *out);

/* The grid and token count of an item from its image_attention_mask
 * [1 + crops, M, M] (f32) and image_sizes (height, width) with crop size S:
 * what the model's stitching keeps, for items made elsewhere (goldens). */
vlm_status vlm_phi4_image_grid_from_mask(const float *mask, int64_t images, int64_t mask_size,
                                         int64_t height, int64_t width, int64_t crop_size, int64_t out_grid[3],
                                         int64_t *out_tokens);

/* Image `index` of the class's batched outputs (image_processors.h'
 * item_from_batch): image_pixel_values [images, 1 + max crops, 3, S, S]
 * and image_attention_mask [images, 1 + max crops, M, M], images with
 * fewer crops padded; image_sizes [images, 2] (the HD image's height,
 * width) says how many are the image's own. */
vlm_status vlm_phi4_image_item_from_batch(const vlm_processor_outputs *batch, int64_t index, vlm_media_item *out);

/* The grid of a width x height image (image_processors.h). */
vlm_status vlm_phi4_image_grid(const vlm_processor_config *config, int64_t width, int64_t height,
                               int64_t out_grid[3]);

/* The item's tensors and grid (see above). */
vlm_status vlm_phi4_image_preprocess(const vlm_processor_config *config, const vlm_image *image,
                                     const vlm_allocator *allocator, vlm_media_item *out);

/* torch.nn.functional.interpolate(mode="bicubic", align_corners=False,
 * antialias=False) of planar float images [channels, in_h, in_w] into
 * [channels, out_h, out_w], in torch's float32 order of operations. */
vlm_status vlm_phi4_resize_bicubic_f32(const float *in, int64_t channels, int64_t in_h, int64_t in_w, float *out,
                                       int64_t out_h, int64_t out_w);

#endif
