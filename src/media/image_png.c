/* PNG through libpng, with the conversions Pillow's PNG plugin and
 * convert() make:
 *   - 16-bit channels keep the high byte (Pillow's "RGB;16B", "RGBA;16B",
 *     "LA;16B" rawmodes; libpng's png_set_strip_16 does the same), except
 *     16-bit gray without alpha, which Pillow opens as "I;16" and converts
 *     to RGB by clipping at 255;
 *   - 1/2/4-bit gray is scaled to 8 bits, palettes are looked up;
 *   - transparency (alpha channel, tRNS palette alpha or color key) becomes
 *     an alpha channel, flattened by the front end;
 *   - gamma, chromaticities and ICC profiles are ignored, as Pillow does.
 * Rows are read one at a time (every pass for interlaced files) so the
 * cancel flag is polled between scanlines. */
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "media/image_decode_internal.h"

typedef struct png_memory_reader {
  const uint8_t *data;
  size_t size, offset;
  bool truncated;
  char message[128];
} png_memory_reader;

static void read_from_memory(png_structp png, png_bytep target, size_t length) {
  png_memory_reader *reader = png_get_io_ptr(png);
  if (length > reader->size - reader->offset) {
    reader->truncated = true;
    png_error(png, "truncated");
  }
  memcpy(target, reader->data + reader->offset, length);
  reader->offset += length;
}

static void on_png_error(png_structp png, png_const_charp message) {
  png_memory_reader *reader = png_get_io_ptr(png);
  if (reader) snprintf(reader->message, sizeof(reader->message), "%s", message);
  png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp message) {
  (void)png, (void)message;
}

/* Ancillary chunks are work before the first pixel: libpng inflates every
 * zTXt, iTXt and iCCP chunk it keeps, and a 20 MB file of 8 KB chunks that
 * each inflate to 8 MB took 27 s to read a 1x1 image. Only eXIf and the
 * XMP iTXt can change the pixels (orientation), so the text and profile
 * chunks Pillow's pixels never depend on are skipped unread, at most 32
 * iTXt chunks are kept, each inflating to at most 1 MiB (Pillow refuses
 * text chunks over 1 MiB too: PngImagePlugin.MAX_TEXT_CHUNK). */
static void limit_metadata(png_structp png) {
  static const png_byte ignored[] = {'t', 'E', 'X', 't', '\0', 'z', 'T', 'X', 't', '\0', 'i', 'C', 'C', 'P', '\0',
                                     's', 'P', 'L', 'T', '\0'};
  png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, ignored, 4);
  png_set_chunk_cache_max(png, 32);
  png_set_chunk_malloc_max(png, 1u << 20);
}

static void note_metadata(vlm_decode_job *job, png_structp png, png_infop info) {
  png_uint_32 exif_length = 0;
  png_bytep exif = NULL;
  if (png_get_eXIf_1(png, info, &exif_length, &exif) && exif)
    vlm_decode_note_exif(job, exif, exif_length);
  png_textp texts = NULL;
  int text_count = 0;
  png_get_text(png, info, &texts, &text_count);
  for (int i = 0; i < text_count; i++)
    if (strcmp(texts[i].key, "XML:com.adobe.xmp") == 0 && texts[i].text)
      vlm_decode_note_xmp(job, (const uint8_t *)texts[i].text,
                          texts[i].itxt_length ? texts[i].itxt_length : texts[i].text_length);
}

/* Sets libpng's transformations; returns the channel count it will give
 * (3 or 4), or 0 for 16-bit gray, which we read raw and clip ourselves. */
static int configure_transforms(png_structp png, png_infop info) {
  int color_type = png_get_color_type(png, info);
  int bit_depth = png_get_bit_depth(png, info);
  bool has_transparency = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth == 16 && !has_transparency) return 0;
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (has_transparency) png_set_tRNS_to_alpha(png);
  if (bit_depth == 16) png_set_strip_16(png);
  if (color_type == PNG_COLOR_TYPE_GRAY || color_type == PNG_COLOR_TYPE_GRAY_ALPHA)
    png_set_gray_to_rgb(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  return png_get_channels(png, info) == 4 ? 4 : 3;
}

/* What libpng (and our 16-bit gray row) allocate for a row of `width`
 * pixels: big_row_buf and prev_row at up to 64 bits per pixel, plus slack. */
static uint64_t png_library_bytes(uint64_t width) {
  return 2 * (8 * width + 64) + 2 * width;
}

static void clip_gray16_row(const uint8_t *in, uint8_t *out, int64_t width) {
  for (int64_t x = 0; x < width; x++) {
    uint8_t value = in[2 * x] ? 255 : in[2 * x + 1]; /* big-endian: high byte first */
    out[3 * x] = out[3 * x + 1] = out[3 * x + 2] = value;
  }
}

static vlm_status read_rows(vlm_decode_job *job, png_structp png, png_infop info, int channels,
                            uint8_t *gray16_row, vlm_raster *raster) {
  size_t stride = (size_t)raster->width * (size_t)raster->channels;
  if (channels == 0) {
    for (int64_t y = 0; y < raster->height; y++) {
      if (vlm_decode_cancelled(job)) return vlm_decode_cancelled_status();
      png_read_row(png, gray16_row, NULL);
      clip_gray16_row(gray16_row, raster->pixels + (size_t)y * stride, raster->width);
    }
    return VLM_OK;
  }
  int passes = png_set_interlace_handling(png);
  (void)info;
  for (int pass = 0; pass < passes; pass++) {
    for (int64_t y = 0; y < raster->height; y++) {
      if (vlm_decode_cancelled(job)) return vlm_decode_cancelled_status();
      png_read_row(png, raster->pixels + (size_t)y * stride, NULL);
    }
  }
  return VLM_OK;
}

/* libpng allocates an ancillary chunk's declared length before reading it
 * (png_read_buffer), and its check of that length against
 * png_set_chunk_malloc_max is a benign error, which a read struct only
 * warns about: a 64 KB file whose last iTXt claimed 1.29 GB had libpng
 * malloc 1.29 GB (found by fuzz_image_decode). The file is all in memory,
 * so every chunk before the first IDAT (what png_read_info reads) must fit
 * in it; one that does not is refused before libpng sees it, as Pillow
 * refuses the same file (its chunk read comes up short). */
static vlm_status check_chunk_lengths(const uint8_t *data, size_t size) {
  size_t at = 8;
  while (at + 8 <= size) {
    uint32_t length = vlm_decode_read_u32(data + at, true);
    const uint8_t *type = data + at + 4;
    /* IDAT is streamed, not allocated: a short one is a truncated image. */
    if (memcmp(type, "IDAT", 4) == 0 || memcmp(type, "IEND", 4) == 0) break;
    if (length > 0x7fffffffu || (uint64_t)length + 12 > size - at) {
      char name[5];
      for (int i = 0; i < 4; i++) name[i] = (type[i] | 32) >= 'a' && (type[i] | 32) <= 'z' ? (char)type[i] : '?';
      name[4] = '\0';
      return VLM_ERROR(DATA_LOSS, "corrupt PNG data: chunk %s claims %u bytes, past the end of the file", name,
                       length);
    }
    at += 12 + (size_t)length;
  }
  return VLM_OK;
}

vlm_status vlm_decode_png(vlm_decode_job *job, vlm_raster *raster) {
  memset(raster, 0, sizeof(*raster));
  VLM_RETURN_IF_ERROR(check_chunk_lengths(job->data, job->size));
  png_memory_reader reader = {.data = job->data, .size = job->size};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, on_png_error, on_png_warning);
  if (!png) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  png_infop info = png_create_info_struct(png);
  uint8_t *volatile gray16_row = NULL;
  vlm_status volatile status = VLM_OK;
  if (!info) {
    png_destroy_read_struct(&png, NULL, NULL);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  if (setjmp(png_jmpbuf(png))) {
    if (status) vlm_status_free(status);
    status = reader.truncated ? VLM_ERROR(DATA_LOSS, "truncated PNG data")
                              : VLM_ERROR(DATA_LOSS, "corrupt PNG data: %s", reader.message);
    goto done;
  }
  png_set_read_fn(png, &reader, read_from_memory);
  /* libpng's own ceiling on dimensions stays above ours; ours is checked
   * below from IHDR, before libpng or we allocate anything sized by it. */
  png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
  limit_metadata(png);
  png_read_info(png, info);
  note_metadata(job, png, info);
  png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
  /* png_read_update_info (in configure_transforms) allocates libpng's two
   * row buffers, up to 8 bytes per pixel of width each: a 66-byte file
   * claiming 2^31-1 columns cost 6 GB there before the pixel limit was
   * checked. The header passes the limits first. */
  status = vlm_decode_check_header(job, "PNG", width, height, 4, png_library_bytes(width));
  if (status || job->header_only) goto done;
  int channels = configure_transforms(png, info);
  status = vlm_raster_allocate(job, width, height, channels == 4 ? 4 : 3, raster);
  if (status) goto done;
  if (channels == 0) {
    gray16_row = vlm_allocate(job->allocator, (size_t)width * 2, VLM_DEFAULT_ALIGNMENT);
    if (!gray16_row) {
      status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
      goto done;
    }
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_interlace_type(png, info) != PNG_INTERLACE_NONE) {
      status = VLM_ERROR(UNIMPLEMENTED, "interlaced 16-bit grayscale PNG is not supported");
      goto done;
    }
  }
  status = read_rows(job, png, info, channels, gray16_row, raster);
  if (!status) png_read_end(png, NULL);
done:
  png_destroy_read_struct(&png, &info, NULL);
  if (gray16_row) vlm_release(job->allocator, gray16_row);
  if (status) vlm_raster_release(job, raster);
  return status;
}
