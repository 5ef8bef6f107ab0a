/* Image decoding (SPEC 2.1): JPEG, PNG, WebP and GIF (first frame) into owned
 * RGB8 pixels, with limits checked before anything large is allocated and a
 * cancellation flag polled between scanlines.
 *
 * This is a worker API: the server's scheduler calls it from worker threads.
 * It keeps no global state, so any number of decodes may run at once.
 *
 * What the pixels are (verified against transformers 5.23.0 / Pillow 12.3.0):
 *   - EXIF orientation (tag 0x0112 in JPEG APP1, PNG eXIf, WebP EXIF, or an
 *     XMP tiff:Orientation as Pillow's getexif reads it) is applied as
 *     transformers.image_utils.load_image does (PIL.ImageOps.exif_transpose).
 *   - 16-bit PNG channels keep their high byte (Pillow's "RGB;16B" rawmodes),
 *     except 16-bit grayscale without alpha, which Pillow opens as "I;16" and
 *     converts to RGB by clipping the value to 255.
 *   - Gray is replicated, palettes are looked up, CMYK/YCCK JPEGs go through
 *     Pillow's cmyk2rgb (Adobe files store inverted CMYK).
 *   - Alpha (RGBA, gray+alpha, palette or color-key transparency, GIF
 *     transparency): by default composited on white exactly as the
 *     processors' convert_to_rgb does (Pillow alpha_composite); with
 *     VLM_ALPHA_DISCARD it is dropped, as load_image's convert("RGB") does. */
#ifndef VLM_MEDIA_H
#define VLM_MEDIA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdatomic.h>
#endif

#include "vlm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VLM_MEDIA_DEFAULT_MAX_ENCODED_BYTES ((size_t)20 << 20)     /* 20 MiB */
#define VLM_MEDIA_DEFAULT_MAX_DECODED_PIXELS ((uint64_t)64 << 20)  /* 64 Mpx */
#define VLM_MEDIA_DEFAULT_BYTES_PER_PIXEL 12                         /* 768 MiB at 64 Mpx */

/* Every limit is checked from the header, before the codec library or
 * vlm allocates anything for the pixels: a 66-byte PNG claiming
 * 2147483647 x 2147483647 pixels is refused in microseconds. */
typedef struct vlm_media_limits {
  size_t max_encoded_bytes;     /* size of the file or buffer */
  uint64_t max_decoded_pixels;  /* width x height of the image (GIF, animated WebP: canvas) */
  /* The decoded pixels plus the codec library's own buffers as the header
   * implies them (libpng's rows, libjpeg's coefficient arrays, libwebp's
   * animation canvases); 0: VLM_MEDIA_DEFAULT_BYTES_PER_PIXEL x
   * max_decoded_pixels. Within it, any image of up to max_decoded_pixels
   * decodes except a PNG whose rows alone would take more (over ~64 M pixels
   * wide at the default). */
  uint64_t max_decoded_bytes;
} vlm_media_limits;

typedef enum vlm_alpha_mode {
  VLM_ALPHA_COMPOSITE_WHITE = 0, /* the image processors' convert_to_rgb */
  VLM_ALPHA_DISCARD = 1,         /* load_image's PIL convert("RGB") */
} vlm_alpha_mode;

typedef struct vlm_image_decode_options {
  vlm_media_limits limits;          /* zero members: the defaults above */
  vlm_alpha_mode alpha;
  bool ignore_exif_orientation;     /* true: pixels as stored */
#ifndef __cplusplus
  const atomic_bool *cancel;        /* NULL or a flag another thread may set */
#else
  const void *cancel;
#endif
  const vlm_allocator *allocator;   /* NULL: system allocator */
} vlm_image_decode_options;

typedef enum vlm_image_format {
  VLM_IMAGE_FORMAT_UNKNOWN = 0,
  VLM_IMAGE_FORMAT_JPEG,
  VLM_IMAGE_FORMAT_PNG,
  VLM_IMAGE_FORMAT_WEBP,
  VLM_IMAGE_FORMAT_GIF,
} vlm_image_format;

/* Owned, row-major, interleaved RGB8 pixels (3 * width bytes per row). */
typedef struct vlm_image {
  uint8_t *pixels;
  int64_t width, height;
  vlm_image_format format;          /* what the bytes were */
  int exif_orientation;             /* 1..8 as found (1 when none) */
  const vlm_allocator *allocator;
} vlm_image;

/* The format from the first bytes (never the file name). */
vlm_image_format vlm_image_format_sniff(const uint8_t *data, size_t size);
const char *vlm_image_format_name(vlm_image_format format);

/* Decodes `size` bytes. `name` (e.g. the file name; NULL: "image") prefixes
 * every error: "chelsea.jpg: truncated JPEG data". Options may be NULL.
 * Errors: OUT_OF_RANGE for limits (from the header, before decoding), DATA_LOSS for corrupt or truncated data,
 * INVALID_ARGUMENT for bytes that are not an image (audio, video, text),
 * CANCELLED when the flag was set. On error *out is zeroed. */
vlm_status vlm_image_decode_memory(const uint8_t *data, size_t size, const char *name,
                                   const vlm_image_decode_options *options, vlm_image *out);
/* Reads the file (refusing it before reading when it exceeds
 * max_encoded_bytes) and decodes it; errors name the file's base name. */
vlm_status vlm_image_decode_file(const char *path, const vlm_image_decode_options *options,
                                 vlm_image *out);
void vlm_image_release(vlm_image *image);

/* What an image's header declares, read without decoding any pixels. */
typedef struct vlm_image_header {
  vlm_image_format format;
  int64_t width, height;          /* as stored (EXIF orientation may swap them) */
  /* At most what decoding it allocates: the raster plus the codec
   * library's buffers (what max_decoded_bytes is checked against). */
  uint64_t decode_bytes;
} vlm_image_header;

/* Reads just enough of the image to know its size (up to the first scan,
 * frame or pixel data) and checks it against the limits as decoding would:
 * microseconds and a few KiB for any file, so a caller can count what an
 * image will cost (prompt tokens, memory) before decoding it. Errors as
 * vlm_image_decode_memory; a file that passes may still fail to decode. */
vlm_status vlm_image_read_header(const uint8_t *data, size_t size, const char *name,
                                 const vlm_image_decode_options *options, vlm_image_header *out);

#ifdef __cplusplus
}
#endif

#endif
