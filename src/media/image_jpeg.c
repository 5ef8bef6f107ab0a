/* JPEG through libjpeg-turbo, configured as Pillow's JpegDecode leaves it
 * (islow IDCT, fancy upsampling, block smoothing for progressive files), so
 * the RGB values equal Pillow's.
 *
 * CMYK and YCCK files are read as CMYK (libjpeg converts YCCK) and then
 * converted like Pillow: it always assumes Adobe polarity ("CMYK;I", i.e.
 * inverted), then convert("RGB") uses cmyk2rgb from libImaging/Convert.c.
 *
 * libjpeg reports fatal errors through error_exit, which must not return:
 * we longjmp back. A premature end of data is only a warning to libjpeg (it
 * pads with gray), but Pillow raises "image file is truncated", so we make
 * that warning fatal too. */
#include <limits.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>

#include <jpeglib.h>
/* libjpeg-turbo keeps message codes in jerror.h; JWRN_JPEG_EOF is the
 * "premature end of JPEG file" warning. */
#include <jerror.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "media/image_decode_internal.h"

/* Progressive files are absorbed scan by scan inside jpeg_start_decompress,
 * and every scan walks every block of its components: a file of many tiny
 * scans is work without end (a known libjpeg decompression bomb; djpeg has
 * -maxscans for it). Real encoders write at most a few dozen. */
#define JPEG_MAX_SCANS 100

typedef struct jpeg_error_context {
  struct jpeg_error_mgr manager;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  bool truncated;
  bool too_many_scans;
  bool cancelled;
} jpeg_error_context;

typedef struct jpeg_progress_context {
  struct jpeg_progress_mgr manager;
  const vlm_decode_job *job;
} jpeg_progress_context;

/* libjpeg calls this between scans and rows, also while it absorbs a
 * progressive file: the scan limit and the cancel flag apply there too. */
static void on_progress(j_common_ptr info) {
  jpeg_error_context *errors = (jpeg_error_context *)info->err;
  const jpeg_progress_context *progress = (const jpeg_progress_context *)info->progress;
  if (((j_decompress_ptr)info)->input_scan_number > JPEG_MAX_SCANS) errors->too_many_scans = true;
  else if (vlm_decode_cancelled(progress->job)) errors->cancelled = true;
  else return;
  longjmp(errors->jump, 1);
}

static void on_error_exit(j_common_ptr info) {
  jpeg_error_context *context = (jpeg_error_context *)info->err;
  info->err->format_message(info, context->message);
  longjmp(context->jump, 1);
}

static void on_emit_message(j_common_ptr info, int level) {
  jpeg_error_context *context = (jpeg_error_context *)info->err;
  if (level == -1 && info->err->msg_code == JWRN_JPEG_EOF) {
    context->truncated = true;
    longjmp(context->jump, 1);
  }
}

/* Pillow's MULDIV255 and cmyk2rgb, after undoing the Adobe inversion. */
static inline int multiply_divide_255(int a, int b) {
  int product = a * b + 128;
  return ((product >> 8) + product) >> 8;
}

static inline uint8_t clip8(int value) {
  return (uint8_t)(value < 0 ? 0 : value > 255 ? 255 : value);
}

static void cmyk_row_to_rgb(const uint8_t *cmyk, uint8_t *rgb, int64_t width) {
  for (int64_t x = 0; x < width; x++, cmyk += 4, rgb += 3) {
    int c = 255 - cmyk[0], m = 255 - cmyk[1], y = 255 - cmyk[2], k = 255 - cmyk[3];
    int not_k = 255 - k;
    rgb[0] = clip8(not_k - multiply_divide_255(c, not_k));
    rgb[1] = clip8(not_k - multiply_divide_255(m, not_k));
    rgb[2] = clip8(not_k - multiply_divide_255(y, not_k));
  }
}

static void note_markers(vlm_decode_job *job, struct jpeg_decompress_struct *info) {
  static const char xmp_prefix[] = "http://ns.adobe.com/xap/1.0/";
  for (jpeg_saved_marker_ptr marker = info->marker_list; marker; marker = marker->next) {
    if (marker->marker != JPEG_APP0 + 1) continue;
    if (marker->data_length >= 6 && memcmp(marker->data, "Exif\0\0", 6) == 0)
      vlm_decode_note_exif(job, marker->data, marker->data_length);
    else if (marker->data_length >= sizeof(xmp_prefix) &&
             memcmp(marker->data, xmp_prefix, sizeof(xmp_prefix) - 1) == 0)
      vlm_decode_note_xmp(job, marker->data, marker->data_length);
  }
}

/* What libjpeg will allocate, from the header (component sizes in blocks
 * are known once jpeg_read_header has seen the first scan): a progressive
 * or multi-scan file keeps every coefficient of the image (64 x 2 bytes per
 * 8x8 block and component); any file keeps a few block rows per component;
 * CMYK adds our conversion row. */
static uint64_t jpeg_library_bytes(const struct jpeg_decompress_struct *info) {
  bool whole_image = info->progressive_mode || info->comps_in_scan < info->num_components;
  uint64_t bytes = 1u << 20;
  for (int c = 0; c < info->num_components; c++) {
    const jpeg_component_info *component = &info->comp_info[c];
    /* libjpeg pads each array to whole MCUs (sampling factors). */
    uint64_t h = (uint64_t)component->h_samp_factor, v = (uint64_t)component->v_samp_factor;
    uint64_t blocks_wide = (component->width_in_blocks + h - 1) / h * h;
    uint64_t blocks_high = (component->height_in_blocks + v - 1) / v * v;
    bytes += blocks_wide * 128 * (uint64_t)component->v_samp_factor * 4; /* row groups */
    if (whole_image) bytes += blocks_wide * blocks_high * 128;
  }
  return bytes + 4 * (uint64_t)info->image_width;
}

/* The scanline loop; separate so no local is live across the setjmp. */
static vlm_status read_scanlines(vlm_decode_job *job, struct jpeg_decompress_struct *info,
                                 uint8_t *cmyk_row, vlm_raster *raster) {
  bool cmyk = info->out_color_space == JCS_CMYK;
  while (info->output_scanline < info->output_height) {
    if (vlm_decode_cancelled(job)) return vlm_decode_cancelled_status();
    uint8_t *row = raster->pixels + (size_t)info->output_scanline * (size_t)raster->width * 3;
    JSAMPROW target = cmyk ? cmyk_row : row;
    if (jpeg_read_scanlines(info, &target, 1) != 1) return VLM_ERROR(DATA_LOSS, "truncated JPEG data");
    if (cmyk) cmyk_row_to_rgb(cmyk_row, row, raster->width);
  }
  return VLM_OK;
}

vlm_status vlm_decode_jpeg(vlm_decode_job *job, vlm_raster *raster) {
  struct jpeg_decompress_struct info;
  jpeg_error_context errors;
  memset(&errors, 0, sizeof(errors));
  memset(raster, 0, sizeof(*raster));
  /* volatile: modified between setjmp and a possible longjmp. */
  uint8_t *volatile cmyk_row = NULL;
  vlm_status volatile status = VLM_OK;
  jpeg_progress_context progress = {.manager.progress_monitor = on_progress, .job = job};
  info.err = jpeg_std_error(&errors.manager);
  errors.manager.error_exit = on_error_exit;
  errors.manager.emit_message = on_emit_message;
  if (setjmp(errors.jump)) {
    if (status) vlm_status_free(status);
    if (errors.too_many_scans)
      status = VLM_ERROR(OUT_OF_RANGE, "JPEG has more than %d scans", JPEG_MAX_SCANS);
    else if (errors.cancelled)
      status = vlm_decode_cancelled_status();
    else
      status = errors.truncated ? VLM_ERROR(DATA_LOSS, "truncated JPEG data")
                                : VLM_ERROR(DATA_LOSS, "corrupt JPEG data: %s", errors.message);
    goto done;
  }
  jpeg_create_decompress(&info);
  info.progress = &progress.manager;
  jpeg_mem_src(&info, job->data, (unsigned long)job->size);
  jpeg_save_markers(&info, JPEG_APP0 + 1, 0xFFFF);
  jpeg_read_header(&info, TRUE);
  note_markers(job, &info);
  int components = info.num_components;
  if (components == 4) info.out_color_space = JCS_CMYK;
  else if (components == 1 || components == 3) info.out_color_space = JCS_RGB;
  else {
    status = VLM_ERROR(UNIMPLEMENTED, "JPEG with %d components is not supported", components);
    goto done;
  }
  /* The limits, from the header alone, before jpeg_start_decompress
   * allocates libjpeg's buffers. */
  uint64_t library_bytes = jpeg_library_bytes(&info);
  status = vlm_decode_check_header(job, "JPEG", info.image_width, info.image_height, 3, library_bytes);
  if (status || job->header_only) goto done;
  /* A second line of defence: libjpeg refuses to grow its arrays past
   * twice the estimate (it has no backing store to spill to). */
  uint64_t ceiling = 2 * library_bytes + (16u << 20);
  info.mem->max_memory_to_use = (long)(ceiling < (uint64_t)LONG_MAX ? ceiling : (uint64_t)LONG_MAX);
  status = vlm_raster_allocate(job, info.image_width, info.image_height, 3, raster);
  if (status) goto done;
  jpeg_start_decompress(&info);
  if (components == 4) {
    cmyk_row = vlm_allocate(job->allocator, (size_t)raster->width * 4, VLM_DEFAULT_ALIGNMENT);
    if (!cmyk_row) {
      status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
      goto done;
    }
  }
  status = read_scanlines(job, &info, cmyk_row, raster);
  if (!status) jpeg_finish_decompress(&info);
done:
  jpeg_destroy_decompress(&info);
  if (cmyk_row) vlm_release(job->allocator, cmyk_row);
  if (status) vlm_raster_release(job, raster);
  return status;
}
