/* GIF, first frame, through giflib's record-level API (only the first image
 * is decompressed, row by row, polling the cancel flag).
 *
 * Pillow's first frame (GifImagePlugin 12.3): the canvas is the logical
 * screen, enlarged when the frame extends past it; it starts filled with the
 * frame's transparent index if it has one, else index 0; the frame is pasted
 * at its offset; pixels are palette entries (local palette, else global; no
 * palette: gray levels). A transparent index becomes alpha 0, which the
 * front end composites or drops like convert_to_rgb / convert("RGB"). */
#include <gif_lib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "media/image_decode_internal.h"

typedef struct gif_memory_reader {
  const uint8_t *data;
  size_t size, offset;
} gif_memory_reader;

static int read_from_memory(GifFileType *gif, GifByteType *target, int length) {
  gif_memory_reader *reader = gif->UserData;
  size_t available = reader->size - reader->offset;
  size_t count = (size_t)length < available ? (size_t)length : available;
  memcpy(target, reader->data + reader->offset, count);
  reader->offset += count;
  return (int)count;
}

static vlm_status gif_error(int code) {
  if (code == D_GIF_ERR_READ_FAILED || code == D_GIF_ERR_EOF_TOO_SOON)
    return VLM_ERROR(DATA_LOSS, "truncated GIF data");
  if (code == D_GIF_ERR_NOT_ENOUGH_MEM) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory decoding GIF");
  const char *text = GifErrorString(code);
  return VLM_ERROR(DATA_LOSS, "corrupt GIF data: %s", text ? text : "unknown error");
}

/* Reads extensions up to the first image descriptor; returns the
 * transparent index of its graphic control extension, or -1. */
static vlm_status find_first_image(GifFileType *gif, int *transparent_index) {
  *transparent_index = -1;
  for (;;) {
    GifRecordType record;
    if (DGifGetRecordType(gif, &record) == GIF_ERROR) return gif_error(gif->Error);
    if (record == IMAGE_DESC_RECORD_TYPE) {
      if (DGifGetImageDesc(gif) == GIF_ERROR) return gif_error(gif->Error);
      return VLM_OK;
    }
    if (record == TERMINATE_RECORD_TYPE) return VLM_ERROR(DATA_LOSS, "GIF has no image");
    if (record != EXTENSION_RECORD_TYPE) continue;
    int code = 0;
    GifByteType *extension = NULL;
    if (DGifGetExtension(gif, &code, &extension) == GIF_ERROR) return gif_error(gif->Error);
    bool first_block = true;
    while (extension) {
      if (first_block && code == GRAPHICS_EXT_FUNC_CODE && extension[0] >= 4)
        *transparent_index = (extension[1] & 1) ? extension[4] : -1;
      first_block = false;
      if (DGifGetExtensionNext(gif, &extension) == GIF_ERROR) return gif_error(gif->Error);
    }
  }
}

static void index_to_rgba(const ColorMapObject *palette, int index, int transparent_index,
                          uint8_t *out) {
  if (!palette) {
    out[0] = out[1] = out[2] = (uint8_t)index;
  } else if (index < palette->ColorCount) {
    out[0] = palette->Colors[index].Red, out[1] = palette->Colors[index].Green;
    out[2] = palette->Colors[index].Blue;
  } else {
    out[0] = out[1] = out[2] = 0;
  }
  out[3] = index == transparent_index ? 0 : 255;
}

/* Row order of an interlaced GIF: four passes. */
static int64_t interlaced_row(int64_t sequence, int64_t height) {
  static const int starts[4] = {0, 4, 2, 1}, steps[4] = {8, 8, 4, 2};
  for (int pass = 0; pass < 4; pass++) {
    int64_t rows = starts[pass] < height ? (height - starts[pass] + steps[pass] - 1) / steps[pass] : 0;
    if (sequence < rows) return starts[pass] + sequence * steps[pass];
    sequence -= rows;
  }
  return 0;
}

static vlm_status decode_frame(vlm_decode_job *job, GifFileType *gif, int transparent_index,
                               GifByteType *line, vlm_raster *raster) {
  const GifImageDesc *frame = &gif->Image;
  const ColorMapObject *palette = frame->ColorMap ? frame->ColorMap : gif->SColorMap;
  uint8_t fill[4];
  index_to_rgba(palette, transparent_index >= 0 ? transparent_index : 0, transparent_index, fill);
  size_t pixels = (size_t)(raster->width * raster->height);
  for (size_t i = 0; i < pixels; i++) memcpy(raster->pixels + 4 * i, fill, 4);
  for (int64_t sequence = 0; sequence < frame->Height; sequence++) {
    if (vlm_decode_cancelled(job)) return vlm_decode_cancelled_status();
    if (DGifGetLine(gif, line, frame->Width) == GIF_ERROR) return gif_error(gif->Error);
    int64_t y = frame->Top + (frame->Interlace ? interlaced_row(sequence, frame->Height) : sequence);
    uint8_t *row = raster->pixels + ((size_t)y * (size_t)raster->width + (size_t)frame->Left) * 4;
    for (int64_t x = 0; x < frame->Width; x++) index_to_rgba(palette, line[x], transparent_index, row + 4 * x);
  }
  return VLM_OK;
}

vlm_status vlm_decode_gif(vlm_decode_job *job, vlm_raster *raster) {
  memset(raster, 0, sizeof(*raster));
  gif_memory_reader reader = {.data = job->data, .size = job->size};
  int error = 0;
  GifFileType *gif = DGifOpen(&reader, read_from_memory, &error);
  if (!gif) return gif_error(error);
  int transparent_index = -1;
  GifByteType *line = NULL;
  vlm_status status = find_first_image(gif, &transparent_index);
  if (!status) {
    const GifImageDesc *frame = &gif->Image;
    if (frame->Width <= 0 || frame->Height <= 0 || frame->Left < 0 || frame->Top < 0) {
      status = VLM_ERROR(DATA_LOSS, "corrupt GIF data: invalid frame %dx%d at (%d, %d)", frame->Width,
                         frame->Height, frame->Left, frame->Top);
    } else {
      int64_t width = gif->SWidth > frame->Left + frame->Width ? gif->SWidth : frame->Left + frame->Width;
      int64_t height = gif->SHeight > frame->Top + frame->Height ? gif->SHeight : frame->Top + frame->Height;
      /* giflib has allocated nothing sized by the screen or the frame yet
       * (it decodes into our line buffer). */
      status = vlm_decode_check_header(job, "GIF", width, height, 4, (uint64_t)frame->Width);
      if (!status && !job->header_only) status = vlm_raster_allocate(job, width, height, 4, raster);
      if (!status && !job->header_only) {
        line = vlm_allocate(job->allocator, (size_t)frame->Width, VLM_DEFAULT_ALIGNMENT);
        status = line ? decode_frame(job, gif, transparent_index, line, raster)
                      : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
      }
    }
  }
  if (line) vlm_release(job->allocator, line);
  DGifCloseFile(gif, &error);
  if (status) vlm_raster_release(job, raster);
  return status;
}
