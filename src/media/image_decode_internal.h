/* Shared between the image decode front end (image_decode.c) and the
 * per-format decoders (image_jpeg.c, image_png.c, image_webp.c, image_gif.c).
 *
 * A format decoder reads the header, checks it with vlm_decode_check_header
 * before the codec library allocates anything sized by it (so a 10^10-pixel
 * header costs nothing), asks vlm_raster_allocate for its pixels, decodes
 * row by row polling vlm_decode_cancelled, and reports any EXIF/XMP
 * orientation it saw. The front end then flattens alpha
 * and applies the orientation. Messages do not name the file: the front end
 * prefixes the name. */
#ifndef VLM_MEDIA_IMAGE_DECODE_INTERNAL_H
#define VLM_MEDIA_IMAGE_DECODE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vlm.h"
#include "vlm/media.h"

/* Decoded pixels before alpha handling: 3 (RGB) or 4 (RGBA, straight alpha)
 * interleaved channels. */
typedef struct vlm_raster {
  uint8_t *pixels;
  int64_t width, height;
  int channels;
} vlm_raster;

typedef struct vlm_decode_job {
  const uint8_t *data;
  size_t size;
  vlm_media_limits limits;        /* resolved: no zero members */
  const atomic_bool *cancel;
  const vlm_allocator *allocator;
  int exif_orientation;           /* 0: none found; else 1..8 */
  int xmp_orientation;            /* 0: none found; else 1..8 */
  /* vlm_image_read_header: decoders stop once the header passed
   * vlm_decode_check_header, which records it here. */
  bool header_only;
  vlm_image_header header;
} vlm_decode_job;

/* The header rule: every decoder calls this with the dimensions its
 * header declares, and what they imply for the codec library's own
 * buffers, BEFORE it lets the library allocate anything sized by them
 * (libpng's rows in png_read_update_info, libjpeg's arrays in
 * jpeg_start_decompress, libwebp's decoders and canvases). Refuses
 * (OUT_OF_RANGE) a size that is not positive, over max_decoded_pixels, or
 * whose raster of `channels` bytes per pixel plus `library_bytes` is over
 * max_decoded_bytes; all arithmetic is overflow-checked. The error names
 * the format, the dimensions and the limit. */
vlm_status vlm_decode_check_header(vlm_decode_job *job, const char *format, int64_t width,
                                   int64_t height, int channels, uint64_t library_bytes);
/* Checks width x height against the limit (and against overflow), then
 * allocates. The error names the dimensions and the limit. */
vlm_status vlm_raster_allocate(const vlm_decode_job *job, int64_t width, int64_t height,
                               int channels, vlm_raster *raster);
void vlm_raster_release(const vlm_decode_job *job, vlm_raster *raster);

bool vlm_decode_cancelled(const vlm_decode_job *job);
vlm_status vlm_decode_cancelled_status(void);

/* A 32-bit unsigned integer stored in either byte order (TIFF/EXIF, PNG). */
uint32_t vlm_decode_read_u32(const uint8_t *p, bool big_endian);

/* Orientation 1..8 from an EXIF block (with or without the "Exif\0\0"
 * prefix), or 0 when there is none or the block is malformed. */
int vlm_exif_orientation(const uint8_t *data, size_t size);
/* Pillow's getexif() fallback: `tiff:Orientation="N"` or
 * `tiff:Orientation>N` in XMP text; 0 when absent. */
int vlm_xmp_orientation(const uint8_t *data, size_t size);
/* Records an orientation found in the file: EXIF wins over XMP, as in
 * Pillow (XMP is only consulted when EXIF has no orientation tag). */
void vlm_decode_note_exif(vlm_decode_job *job, const uint8_t *data, size_t size);
void vlm_decode_note_xmp(vlm_decode_job *job, const uint8_t *data, size_t size);

vlm_status vlm_decode_jpeg(vlm_decode_job *job, vlm_raster *raster);
vlm_status vlm_decode_png(vlm_decode_job *job, vlm_raster *raster);
vlm_status vlm_decode_webp(vlm_decode_job *job, vlm_raster *raster);
vlm_status vlm_decode_gif(vlm_decode_job *job, vlm_raster *raster);

#endif
