/* Separable fixed-point bicubic and bilinear resampling of interleaved
 * uint8 images, in the two flavours the Transformers image processors use:
 *
 *   VLM_RESAMPLE_TORCH_U8: torch's native uint8 antialiased bicubic (what
 *     torchvision's resize runs on a CPU uint8 tensor, aten UpSampleKernel
 *     `_compute_index_ranges_int16_weights` + ImagingResample{Horizontal,
 *     Vertical}): a port of Pillow with int16 weights whose precision is
 *     chosen per axis from the largest weight, and torch's form of the cubic.
 *   VLM_RESAMPLE_PILLOW: Pillow's ImagingResample (libImaging/Resample.c):
 *     int32 weights with 22 fractional bits and Pillow's form of the cubic.
 *
 * Both, bicubic: a = -0.5, support 2; bilinear: the triangle 1 - |x|
 * (torch's HelperInterpLinear::aa_filter, Pillow's bilinear_filter),
 * support 1; the support scaled by the downscale factor, weights
 * normalized to sum 1 in double, horizontal pass first into uint8 (rounded
 * and clipped), then the vertical pass; an axis whose size does not change
 * is not resampled. Integer sums throughout, so the AVX2 loops (used when
 * the CPU has AVX2 and VLM_CPU_PATH is not "portable") give the same bytes
 * as the baseline ones. */
#ifndef VLM_MEDIA_IMAGE_RESAMPLE_H
#define VLM_MEDIA_IMAGE_RESAMPLE_H

#include <stdint.h>

#include "vlm.h"

typedef enum vlm_resample_kind {
  VLM_RESAMPLE_TORCH_U8 = 0,
  VLM_RESAMPLE_PILLOW = 1,
} vlm_resample_kind;

typedef enum vlm_resample_filter {
  VLM_RESAMPLE_BICUBIC = 0,
  VLM_RESAMPLE_BILINEAR = 1,
} vlm_resample_filter;

/* Either filter; `out` holds out_width * out_height * channels bytes.
 * (torch's native uint8 bilinear is what torchvision runs on a CPU with
 * AVX2, AVX-512 or arm64; elsewhere it resizes in float, which this does
 * not reproduce.) */
vlm_status vlm_resample_u8(vlm_resample_kind kind, vlm_resample_filter filter, const uint8_t *in,
                           int64_t in_width, int64_t in_height, int channels, uint8_t *out,
                           int64_t out_width, int64_t out_height, const vlm_allocator *allocator);

/* `out` holds out_width * out_height * channels bytes. */
vlm_status vlm_resample_bicubic_u8(vlm_resample_kind kind, const uint8_t *in, int64_t in_width,
                                   int64_t in_height, int channels, uint8_t *out,
                                   int64_t out_width, int64_t out_height,
                                   const vlm_allocator *allocator);

/* Only the window [x0, x0 + window_width) x [y0, y0 + window_height) of
 * the out_width x out_height result (what a center crop keeps): each output
 * pixel depends only on its own coordinates, so the values are identical to
 * resampling everything and cropping, at a fraction of the work. */
vlm_status vlm_resample_bicubic_u8_window(vlm_resample_kind kind, const uint8_t *in,
                                          int64_t in_width, int64_t in_height, int channels,
                                          int64_t out_width, int64_t out_height, int64_t x0,
                                          int64_t y0, int64_t window_width, int64_t window_height,
                                          uint8_t *out, const vlm_allocator *allocator);

#endif
