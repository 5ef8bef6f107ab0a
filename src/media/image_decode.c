/* Image decode front end: format sniffing, limits, alpha and EXIF
 * orientation. The per-format work is in image_{jpeg,png,webp,gif}.c.
 *
 * Every step reproduces what transformers 5.23.0 + Pillow 12.3.0 do to a
 * file before the image processor sees it (see include/vlm/media.h); the
 * goldens in tests/goldens/media prove it per fixture image. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "io/file.h"
#include "media/image_decode_internal.h"
#include "vlm/media.h"

/* ------------------------------------------------------------------------ */
/* Sniffing                                                                  */
/* ------------------------------------------------------------------------ */

static bool starts_with(const uint8_t *data, size_t size, const char *magic, size_t length) {
  return size >= length && memcmp(data, magic, length) == 0;
}

vlm_image_format vlm_image_format_sniff(const uint8_t *data, size_t size) {
  if (size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) return VLM_IMAGE_FORMAT_JPEG;
  if (starts_with(data, size, "\x89PNG\r\n\x1a\n", 8)) return VLM_IMAGE_FORMAT_PNG;
  if (starts_with(data, size, "GIF87a", 6) || starts_with(data, size, "GIF89a", 6))
    return VLM_IMAGE_FORMAT_GIF;
  if (size >= 12 && memcmp(data, "RIFF", 4) == 0 && memcmp(data + 8, "WEBP", 4) == 0)
    return VLM_IMAGE_FORMAT_WEBP;
  return VLM_IMAGE_FORMAT_UNKNOWN;
}

const char *vlm_image_format_name(vlm_image_format format) {
  switch (format) {
    case VLM_IMAGE_FORMAT_JPEG: return "JPEG";
    case VLM_IMAGE_FORMAT_PNG: return "PNG";
    case VLM_IMAGE_FORMAT_WEBP: return "WebP";
    case VLM_IMAGE_FORMAT_GIF: return "GIF";
    default: return "unknown";
  }
}

/* Names what the bytes are when they are a known non-image (or an image
 * format we do not decode), so the user learns why it was refused. */
static const char *describe_other_media(const uint8_t *data, size_t size) {
  if (size >= 12 && memcmp(data, "RIFF", 4) == 0) {
    if (memcmp(data + 8, "WAVE", 4) == 0) return "WAV audio";
    if (memcmp(data + 8, "AVI ", 4) == 0) return "AVI video";
    return "a RIFF container";
  }
  if (starts_with(data, size, "fLaC", 4)) return "FLAC audio";
  if (starts_with(data, size, "OggS", 4)) return "Ogg audio/video";
  if (starts_with(data, size, "ID3", 3)) return "MP3 audio";
  if (size >= 2 && data[0] == 0xFF && (data[1] & 0xE0) == 0xE0) return "MPEG audio";
  if (starts_with(data, size, "\x1a\x45\xdf\xa3", 4)) return "Matroska/WebM video";
  if (size >= 12 && memcmp(data + 4, "ftyp", 4) == 0) {
    if (memcmp(data + 8, "avif", 4) == 0 || memcmp(data + 8, "heic", 4) == 0 ||
        memcmp(data + 8, "mif1", 4) == 0)
      return "a HEIF/AVIF image (not supported)";
    return "MP4/QuickTime video";
  }
  if (starts_with(data, size, "BM", 2)) return "a BMP image (not supported)";
  if (starts_with(data, size, "II*\0", 4) || starts_with(data, size, "MM\0*", 4))
    return "a TIFF image (not supported)";
  size_t printable = 0, checked = size < 64 ? size : 64;
  for (size_t i = 0; i < checked; i++)
    if ((data[i] >= 0x20 && data[i] < 0x7F) || data[i] == '\n' || data[i] == '\r' || data[i] == '\t')
      printable++;
  if (checked > 0 && printable == checked) return "text";
  return NULL;
}

static vlm_status not_an_image(const uint8_t *data, size_t size) {
  if (size == 0) return VLM_ERROR(INVALID_ARGUMENT, "not an image: the data is empty");
  const char *what = describe_other_media(data, size);
  if (what)
    return VLM_ERROR(INVALID_ARGUMENT, "not an image: the data is %s (expected JPEG, PNG, WebP or GIF)",
                     what);
  char hex[3 * 8 + 1] = {0};
  size_t shown = size < 8 ? size : 8;
  for (size_t i = 0; i < shown; i++) snprintf(hex + 3 * i, 4, i ? " %02x" : "%02x ", data[i]);
  return VLM_ERROR(INVALID_ARGUMENT,
                   "not an image: unrecognized leading bytes %s (expected JPEG, PNG, WebP or GIF)", hex);
}

/* ------------------------------------------------------------------------ */
/* Rasters, limits, cancellation                                             */
/* ------------------------------------------------------------------------ */

/* pixels x channels + library bytes, or UINT64_MAX when that overflows. */
static uint64_t decode_bytes(uint64_t pixels, int channels, uint64_t library_bytes) {
  uint64_t raster = 0, total = 0;
  if (__builtin_mul_overflow(pixels, (uint64_t)channels, &raster) ||
      __builtin_add_overflow(raster, library_bytes, &total))
    return UINT64_MAX;
  return total;
}

vlm_status vlm_decode_check_header(vlm_decode_job *job, const char *format, int64_t width,
                                   int64_t height, int channels, uint64_t library_bytes) {
  if (width <= 0 || height <= 0)
    return VLM_ERROR(DATA_LOSS, "invalid %s image size %lldx%lld", format, (long long)width, (long long)height);
  uint64_t pixels = 0;
  bool overflows = __builtin_mul_overflow((uint64_t)width, (uint64_t)height, &pixels);
  if (overflows || pixels > job->limits.max_decoded_pixels)
    return VLM_ERROR(OUT_OF_RANGE, "%lldx%lld = %llu%s pixels exceeds the limit of %llu pixels (%s header)",
                     (long long)width, (long long)height, (unsigned long long)(overflows ? UINT64_MAX : pixels),
                     overflows ? "+" : "", (unsigned long long)job->limits.max_decoded_pixels, format);
  uint64_t bytes = decode_bytes(pixels, channels, library_bytes);
  if (bytes > job->limits.max_decoded_bytes || bytes > SIZE_MAX / 2)
    return VLM_ERROR(OUT_OF_RANGE, "a %lldx%lld image needs %llu%s bytes to decode, over the limit of %llu "
                     "bytes (%s header)", (long long)width, (long long)height, (unsigned long long)bytes,
                     bytes == UINT64_MAX ? "+" : "", (unsigned long long)job->limits.max_decoded_bytes, format);
  job->header.width = width;
  job->header.height = height;
  job->header.decode_bytes = bytes;
  return VLM_OK;
}

vlm_status vlm_raster_allocate(const vlm_decode_job *job, int64_t width, int64_t height,
                               int channels, vlm_raster *raster) {
  memset(raster, 0, sizeof(*raster));
  if (width <= 0 || height <= 0)
    return VLM_ERROR(DATA_LOSS, "invalid image size %lldx%lld", (long long)width, (long long)height);
  uint64_t pixels = 0;
  if (__builtin_mul_overflow((uint64_t)width, (uint64_t)height, &pixels) ||
      pixels > job->limits.max_decoded_pixels)
    return VLM_ERROR(OUT_OF_RANGE, "%lldx%lld exceeds the limit of %llu pixels", (long long)width,
                     (long long)height, (unsigned long long)job->limits.max_decoded_pixels);
  size_t bytes = 0;
  if (pixels > SIZE_MAX || !vlm_size_multiply((size_t)pixels, (size_t)channels, &bytes))
    return VLM_ERROR(OUT_OF_RANGE, "%lldx%lld image is too large to address", (long long)width,
                     (long long)height);
  raster->pixels = vlm_allocate(job->allocator, bytes, VLM_DEFAULT_ALIGNMENT);
  if (!raster->pixels)
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for %lldx%lld pixels", (long long)width,
                     (long long)height);
  raster->width = width;
  raster->height = height;
  raster->channels = channels;
  return VLM_OK;
}

void vlm_raster_release(const vlm_decode_job *job, vlm_raster *raster) {
  if (raster->pixels) vlm_release(job->allocator, raster->pixels);
  memset(raster, 0, sizeof(*raster));
}

bool vlm_decode_cancelled(const vlm_decode_job *job) {
  return job->cancel && atomic_load_explicit(job->cancel, memory_order_relaxed);
}

vlm_status vlm_decode_cancelled_status(void) {
  return VLM_ERROR(CANCELLED, "decoding cancelled");
}

/* ------------------------------------------------------------------------ */
/* EXIF / XMP orientation                                                    */
/* ------------------------------------------------------------------------ */

static uint32_t read_u16(const uint8_t *p, bool big_endian) {
  return big_endian ? (uint32_t)(p[0] << 8 | p[1]) : (uint32_t)(p[1] << 8 | p[0]);
}

uint32_t vlm_decode_read_u32(const uint8_t *p, bool big_endian) {
  return big_endian ? ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3])
                    : ((uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0]);
}

int vlm_exif_orientation(const uint8_t *data, size_t size) {
  if (size >= 6 && memcmp(data, "Exif\0\0", 6) == 0) data += 6, size -= 6;
  if (size < 8) return 0;
  bool big_endian;
  if (memcmp(data, "MM\0*", 4) == 0) big_endian = true;
  else if (memcmp(data, "II*\0", 4) == 0) big_endian = false;
  else return 0;
  uint32_t ifd = vlm_decode_read_u32(data + 4, big_endian);
  if (ifd > size - 2) return 0;
  uint32_t count = read_u16(data + ifd, big_endian);
  for (uint32_t i = 0; i < count; i++) {
    size_t entry = (size_t)ifd + 2 + (size_t)i * 12;
    if (entry + 12 > size) return 0;
    if (read_u16(data + entry, big_endian) != 0x0112) continue;
    uint32_t type = read_u16(data + entry + 2, big_endian);
    uint32_t value = type == 3 ? read_u16(data + entry + 8, big_endian)
                   : type == 4 ? vlm_decode_read_u32(data + entry + 8, big_endian) : 0;
    return value >= 1 && value <= 8 ? (int)value : 0;
  }
  return 0;
}

int vlm_xmp_orientation(const uint8_t *data, size_t size) {
  static const char key[] = "tiff:Orientation";
  size_t key_length = sizeof(key) - 1;
  for (size_t i = 0; i + key_length + 2 < size; i++) {
    if (memcmp(data + i, key, key_length) != 0) continue;
    const uint8_t *p = data + i + key_length;
    /* Pillow: re.search(r'tiff:Orientation(="|>)([0-9])', xmp) */
    if (p[0] == '>' && p[1] >= '0' && p[1] <= '9') return p[1] - '0';
    if (i + key_length + 3 < size && p[0] == '=' && p[1] == '"' && p[2] >= '0' && p[2] <= '9')
      return p[2] - '0';
  }
  return 0;
}

void vlm_decode_note_exif(vlm_decode_job *job, const uint8_t *data, size_t size) {
  int orientation = vlm_exif_orientation(data, size);
  if (orientation && !job->exif_orientation) job->exif_orientation = orientation;
}

void vlm_decode_note_xmp(vlm_decode_job *job, const uint8_t *data, size_t size) {
  int orientation = vlm_xmp_orientation(data, size);
  if (orientation && !job->xmp_orientation) job->xmp_orientation = orientation;
}

/* Source coordinates of output pixel (x, y) for PIL.ImageOps.exif_transpose:
 * 2 FLIP_LEFT_RIGHT, 3 ROTATE_180, 4 FLIP_TOP_BOTTOM, 5 TRANSPOSE,
 * 6 ROTATE_270, 7 TRANSVERSE, 8 ROTATE_90. */
static void orientation_source(int orientation, int64_t width, int64_t height, int64_t x,
                               int64_t y, int64_t *source_x, int64_t *source_y) {
  switch (orientation) {
    case 2: *source_x = width - 1 - x, *source_y = y; break;
    case 3: *source_x = width - 1 - x, *source_y = height - 1 - y; break;
    case 4: *source_x = x, *source_y = height - 1 - y; break;
    case 5: *source_x = y, *source_y = x; break;
    case 6: *source_x = y, *source_y = height - 1 - x; break;
    case 7: *source_x = width - 1 - y, *source_y = height - 1 - x; break;
    case 8: *source_x = width - 1 - y, *source_y = x; break;
    default: *source_x = x, *source_y = y; break;
  }
}

static vlm_status apply_orientation(const vlm_decode_job *job, int orientation, vlm_image *image) {
  if (orientation < 2 || orientation > 8) return VLM_OK;
  bool swaps = orientation >= 5;
  int64_t out_width = swaps ? image->height : image->width;
  int64_t out_height = swaps ? image->width : image->height;
  uint8_t *rotated = vlm_allocate(job->allocator, (size_t)(out_width * out_height * 3),
                                  VLM_DEFAULT_ALIGNMENT);
  if (!rotated) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory applying EXIF orientation");
  for (int64_t y = 0; y < out_height; y++) {
    for (int64_t x = 0; x < out_width; x++) {
      int64_t source_x, source_y;
      orientation_source(orientation, image->width, image->height, x, y, &source_x, &source_y);
      memcpy(rotated + (y * out_width + x) * 3, image->pixels + (source_y * image->width + source_x) * 3, 3);
    }
  }
  vlm_release(job->allocator, image->pixels);
  image->pixels = rotated;
  image->width = out_width;
  image->height = out_height;
  return VLM_OK;
}

/* ------------------------------------------------------------------------ */
/* Alpha                                                                     */
/* ------------------------------------------------------------------------ */

/* Pillow's ImagingAlphaComposite (libImaging/AlphaComposite.c) of `value`
 * with alpha `alpha` over opaque white, as convert_to_rgb does it. */
static uint8_t composite_on_white(uint32_t value, uint32_t alpha) {
  enum { PRECISION_BITS = 7 };
  if (alpha == 0) return 255;
  uint32_t blend = 255 * (255 - alpha);
  uint32_t out_alpha_255 = alpha * 255 + blend;
  uint32_t coefficient1 = alpha * 255 * 255 * (1u << PRECISION_BITS) / out_alpha_255;
  uint32_t coefficient2 = 255 * (1u << PRECISION_BITS) - coefficient1;
  uint32_t sum = value * coefficient1 + 255 * coefficient2 + (0x80u << PRECISION_BITS);
  return (uint8_t)((((sum >> 8) + sum) >> 8) >> PRECISION_BITS);
}

/* RGBA to RGB in place (the buffer keeps its larger allocation). */
static void flatten_alpha(vlm_raster *raster, vlm_alpha_mode mode) {
  size_t pixels = (size_t)(raster->width * raster->height);
  uint8_t *in = raster->pixels, *out = raster->pixels;
  for (size_t i = 0; i < pixels; i++, in += 4, out += 3) {
    uint8_t r = in[0], g = in[1], b = in[2], a = in[3];
    if (mode == VLM_ALPHA_COMPOSITE_WHITE && a != 255) {
      r = composite_on_white(r, a), g = composite_on_white(g, a), b = composite_on_white(b, a);
    }
    out[0] = r, out[1] = g, out[2] = b;
  }
  raster->channels = 3;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                              */
/* ------------------------------------------------------------------------ */

static vlm_status decode_format(vlm_image_format format, vlm_decode_job *job, vlm_raster *raster) {
  switch (format) {
    case VLM_IMAGE_FORMAT_JPEG: return vlm_decode_jpeg(job, raster);
    case VLM_IMAGE_FORMAT_PNG: return vlm_decode_png(job, raster);
    case VLM_IMAGE_FORMAT_WEBP: return vlm_decode_webp(job, raster);
    case VLM_IMAGE_FORMAT_GIF: return vlm_decode_gif(job, raster);
    default: return not_an_image(job->data, job->size);
  }
}

/* The job with every limit resolved (zero members: the defaults), after
 * the encoded-size limit and the cancel flag are checked. */
static vlm_status start_job(const uint8_t *data, size_t size, const vlm_image_decode_options *options,
                            vlm_decode_job *out) {
  vlm_decode_job job = {.data = data, .size = size};
  job.limits.max_encoded_bytes = options && options->limits.max_encoded_bytes
                                     ? options->limits.max_encoded_bytes
                                     : VLM_MEDIA_DEFAULT_MAX_ENCODED_BYTES;
  job.limits.max_decoded_pixels = options && options->limits.max_decoded_pixels
                                      ? options->limits.max_decoded_pixels
                                      : VLM_MEDIA_DEFAULT_MAX_DECODED_PIXELS;
  uint64_t bytes_per_pixel_default = 0;
  if (__builtin_mul_overflow(job.limits.max_decoded_pixels, (uint64_t)VLM_MEDIA_DEFAULT_BYTES_PER_PIXEL,
                             &bytes_per_pixel_default))
    bytes_per_pixel_default = UINT64_MAX;
  job.limits.max_decoded_bytes = options && options->limits.max_decoded_bytes ? options->limits.max_decoded_bytes
                                                                              : bytes_per_pixel_default;
  job.cancel = options ? options->cancel : NULL;
  job.allocator = options ? options->allocator : NULL;
  if (size > job.limits.max_encoded_bytes)
    return VLM_ERROR(OUT_OF_RANGE, "%zu encoded bytes exceed the limit of %zu bytes", size,
                     job.limits.max_encoded_bytes);
  if (vlm_decode_cancelled(&job)) return vlm_decode_cancelled_status();
  *out = job;
  return VLM_OK;
}

static vlm_status decode_memory(const uint8_t *data, size_t size,
                                const vlm_image_decode_options *options, vlm_image *out) {
  vlm_decode_job job;
  VLM_RETURN_IF_ERROR(start_job(data, size, options, &job));
  vlm_image_format format = vlm_image_format_sniff(data, size);
  vlm_raster raster;
  VLM_RETURN_IF_ERROR(decode_format(format, &job, &raster));
  if (raster.channels == 4) flatten_alpha(&raster, options ? options->alpha : VLM_ALPHA_COMPOSITE_WHITE);
  out->pixels = raster.pixels;
  out->width = raster.width;
  out->height = raster.height;
  out->format = format;
  out->allocator = job.allocator;
  out->exif_orientation = job.exif_orientation ? job.exif_orientation
                          : job.xmp_orientation ? job.xmp_orientation : 1;
  if (options && options->ignore_exif_orientation) return VLM_OK;
  vlm_status status = apply_orientation(&job, out->exif_orientation, out);
  if (status) vlm_image_release(out);
  return status;
}

vlm_status vlm_image_decode_memory(const uint8_t *data, size_t size, const char *name,
                                   const vlm_image_decode_options *options, vlm_image *out) {
  memset(out, 0, sizeof(*out));
  if (!data && size) return VLM_ERROR(INVALID_ARGUMENT, "%s: no data", name ? name : "image");
  vlm_status status = decode_memory(data ? data : (const uint8_t *)"", size, options, out);
  if (status) memset(out, 0, sizeof(*out));
  return vlm_status_annotate(status, "%s", name ? name : "image");
}

vlm_status vlm_image_read_header(const uint8_t *data, size_t size, const char *name,
                                 const vlm_image_decode_options *options, vlm_image_header *out) {
  memset(out, 0, sizeof(*out));
  if (!data && size) return VLM_ERROR(INVALID_ARGUMENT, "%s: no data", name ? name : "image");
  if (!data) data = (const uint8_t *)"";
  vlm_decode_job job;
  vlm_status status = start_job(data, size, options, &job);
  if (!status) {
    job.header_only = true;
    vlm_image_format format = vlm_image_format_sniff(data, size);
    vlm_raster raster;
    status = decode_format(format, &job, &raster); /* stops after the header: no raster */
    if (!status && !job.header.width) status = VLM_ERROR(INTERNAL, "the %s decoder read no header",
                                                          vlm_image_format_name(format));
    if (!status) {
      *out = job.header;
      out->format = format;
    }
  }
  return vlm_status_annotate(status, "%s", name ? name : "image");
}

vlm_status vlm_image_decode_file(const char *path, const vlm_image_decode_options *options,
                                 vlm_image *out) {
  memset(out, 0, sizeof(*out));
  const char *slash = strrchr(path, '/');
  const char *name = slash ? slash + 1 : path;
  size_t limit = options && options->limits.max_encoded_bytes ? options->limits.max_encoded_bytes
                                                              : VLM_MEDIA_DEFAULT_MAX_ENCODED_BYTES;
  char *data = NULL;
  size_t size = 0;
  /* vlm_file_read_all refuses an oversized file from its size, unread. */
  VLM_RETURN_IF_ERROR(vlm_file_read_all(path, limit, &data, &size));
  vlm_status status = vlm_image_decode_memory((const uint8_t *)data, size, name, options, out);
  free(data);
  return status;
}

void vlm_image_release(vlm_image *image) {
  if (!image) return;
  if (image->pixels) vlm_release(image->allocator, image->pixels);
  memset(image, 0, sizeof(*image));
}
