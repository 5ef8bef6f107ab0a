/* WebP (lossy, lossless, alpha, and the first frame of an animation)
 * through libwebp. Pillow decodes every WebP with WebPAnimDecoder in
 * MODE_RGBA with the default (fancy) upsampling; a still image decoded with
 * the plain decoder in the same mode gives the same pixels. The dimensions
 * come from the bitstream header and are checked before the decoder
 * allocates anything; the still-image decoder is fed incrementally so the
 * cancel flag is polled while it works. */
#include <string.h>
#include <webp/decode.h>
#include <webp/demux.h>

#include "core/alloc.h"
#include "core/status.h"
#include "media/image_decode_internal.h"

enum { WEBP_FEED_BYTES = 32 << 10 };

static void note_metadata(vlm_decode_job *job) {
  WebPData data = {job->data, job->size};
  WebPDemuxer *demuxer = WebPDemux(&data);
  if (!demuxer) return;
  WebPChunkIterator chunk;
  if (WebPDemuxGetChunk(demuxer, "EXIF", 1, &chunk)) {
    vlm_decode_note_exif(job, chunk.chunk.bytes, chunk.chunk.size);
    WebPDemuxReleaseChunkIterator(&chunk);
  }
  if (WebPDemuxGetChunk(demuxer, "XMP ", 1, &chunk)) {
    vlm_decode_note_xmp(job, chunk.chunk.bytes, chunk.chunk.size);
    WebPDemuxReleaseChunkIterator(&chunk);
  }
  WebPDemuxDelete(demuxer);
}

static vlm_status status_from_vp8(VP8StatusCode code) {
  switch (code) {
    case VP8_STATUS_OK: return VLM_OK;
    case VP8_STATUS_NOT_ENOUGH_DATA:
    case VP8_STATUS_SUSPENDED: return VLM_ERROR(DATA_LOSS, "truncated WebP data");
    case VP8_STATUS_OUT_OF_MEMORY: return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory decoding WebP");
    case VP8_STATUS_UNSUPPORTED_FEATURE: return VLM_ERROR(UNIMPLEMENTED, "unsupported WebP feature");
    default: return VLM_ERROR(DATA_LOSS, "corrupt WebP data (libwebp status %d)", (int)code);
  }
}

/* What libwebp allocates for a still image of that size while it decodes
 * into our buffer: a full-size alpha plane (lossy with alpha) or transform
 * data (lossless) of up to a byte per pixel, and a few rows. */
static uint64_t still_library_bytes(uint64_t width, uint64_t height) {
  return width * height + 256 * width + (1u << 20);
}

static vlm_status decode_still(vlm_decode_job *job, const WebPBitstreamFeatures *features,
                               vlm_raster *raster) {
  int channels = features->has_alpha ? 4 : 3;
  /* WebPGetFeatures read the VP8/VP8L frame header (or the VP8X canvas,
   * which libwebp requires to match it): check it before the decoder
   * exists. */
  VLM_RETURN_IF_ERROR(vlm_decode_check_header(job, "WebP", features->width, features->height, channels,
                                              still_library_bytes((uint64_t)features->width,
                                                                  (uint64_t)features->height)));
  if (job->header_only) return VLM_OK;
  VLM_RETURN_IF_ERROR(vlm_raster_allocate(job, features->width, features->height, channels, raster));
  WebPDecBuffer output;
  WebPInitDecBuffer(&output);
  output.colorspace = channels == 4 ? MODE_RGBA : MODE_RGB;
  output.is_external_memory = 1;
  output.u.RGBA.rgba = raster->pixels;
  output.u.RGBA.stride = (int)(raster->width * channels);
  output.u.RGBA.size = (size_t)(raster->width * raster->height * channels);
  WebPIDecoder *decoder = WebPINewDecoder(&output);
  if (!decoder) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory decoding WebP");
  VP8StatusCode code = VP8_STATUS_SUSPENDED;
  vlm_status status = VLM_OK;
  for (size_t offset = 0; offset < job->size && code == VP8_STATUS_SUSPENDED;) {
    if (vlm_decode_cancelled(job)) {
      status = vlm_decode_cancelled_status();
      break;
    }
    size_t length = job->size - offset < WEBP_FEED_BYTES ? job->size - offset : WEBP_FEED_BYTES;
    code = WebPIAppend(decoder, job->data + offset, length);
    offset += length;
  }
  if (!status) status = status_from_vp8(code);
  WebPIDelete(decoder);
  WebPFreeDecBuffer(&output);
  return status;
}

static vlm_status decode_first_frame(vlm_decode_job *job, vlm_raster *raster) {
  WebPData data = {job->data, job->size};
  WebPDemuxer *demuxer = WebPDemux(&data);
  if (!demuxer) return VLM_ERROR(DATA_LOSS, "corrupt or truncated animated WebP");
  uint32_t width = WebPDemuxGetI(demuxer, WEBP_FF_CANVAS_WIDTH);
  uint32_t height = WebPDemuxGetI(demuxer, WEBP_FF_CANVAS_HEIGHT);
  WebPDemuxDelete(demuxer);
  /* WebPAnimDecoderNew allocates two canvases (the frame being composed
   * and the previous one), 4 bytes per pixel each, then decodes frames
   * into them: the VP8X canvas must pass the limits first. */
  VLM_RETURN_IF_ERROR(vlm_decode_check_header(job, "animated WebP", width, height, 4,
                                              8 * (uint64_t)width * height +
                                                  still_library_bytes(width, height)));
  if (job->header_only) return VLM_OK;
  VLM_RETURN_IF_ERROR(vlm_raster_allocate(job, width, height, 4, raster));
  WebPAnimDecoderOptions options;
  WebPAnimDecoderOptionsInit(&options);
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  WebPAnimDecoder *decoder = WebPAnimDecoderNew(&data, &options);
  uint8_t *frame = NULL;
  int timestamp = 0;
  vlm_status status = VLM_OK;
  if (!decoder || !WebPAnimDecoderGetNext(decoder, &frame, &timestamp))
    status = VLM_ERROR(DATA_LOSS, "corrupt animated WebP data");
  else
    memcpy(raster->pixels, frame, (size_t)width * height * 4);
  WebPAnimDecoderDelete(decoder);
  return status;
}

vlm_status vlm_decode_webp(vlm_decode_job *job, vlm_raster *raster) {
  memset(raster, 0, sizeof(*raster));
  WebPBitstreamFeatures features;
  VP8StatusCode code = WebPGetFeatures(job->data, job->size, &features);
  if (code != VP8_STATUS_OK) return status_from_vp8(code);
  note_metadata(job);
  vlm_status status = features.has_animation ? decode_first_frame(job, raster)
                                             : decode_still(job, &features, raster);
  if (status) vlm_raster_release(job, raster);
  return status;
}
