/* Images on the callers' threads: the vision side's lazy opening, header
 * reads and token counts (admission before decoding), and decoding plus
 * preprocessing under the engine's memory budget.
 *
 * Every vlm_engine_load_image_* reserves, from the image's header, what
 * decoding and preprocessing it will hold (the raster, the codec's
 * buffers, the EXIF-rotated copy) from the engine's media memory budget
 * (engine_media_memory.c) before decoding, and gives it back when the
 * pixel values are made. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cpu/cpu_modules.h"
#include "core/checked.h"
#include "core/status.h"
#include "engine/engine_internal.h"
#include "io/file.h"
#include "media/media_item.h"
#include "models/family.h"
#include "vlm/media.h"

vlm_status engine_refuse_images(const vlm_engine *engine, int image_count) {
  if (engine->model->family && engine->model->family->image && !engine->model->has_processor)
    return VLM_ERROR(UNIMPLEMENTED, "%s has no preprocessor_config.json or processor_config.json: its images "
                     "cannot be processed; the request has %d image(s)",
                     engine->model->directory, image_count);
  return VLM_ERROR(UNIMPLEMENTED, "model_type '%s' takes no image input; the request has %d image(s)",
                   engine->config->model_type, image_count);
}

/* The image encoder: the one given at open, or the cpu backend's, built
 * with the first image, under its lock. */
vlm_status engine_ensure_vision(vlm_engine *engine, int image_count) {
  if (!engine->accepts_images) return engine_refuse_images(engine, image_count);
  pthread_mutex_lock(&engine->vision_mutex);
  vlm_status status = VLM_OK;
  if (!engine->image_encoder) {
    vlm_cpu_encoder_options options = {.pool = engine->pool};
    status = vlm_media_encoder_open_cpu(engine->model, VLM_MEDIA_IMAGE, &options, &engine->image_encoder);
  }
  if (!status && engine->image_encoder->operations->output_width(engine->image_encoder->self) !=
                     engine_feature_width(engine))
    status = VLM_ERROR(INTERNAL, "the %s image encoder gives %lld-wide features, the text decoder takes %lld",
                       engine->image_encoder->operations->backend,
                       (long long)engine->image_encoder->operations->output_width(engine->image_encoder->self),
                       (long long)engine_feature_width(engine));
  pthread_mutex_unlock(&engine->vision_mutex);
  return status;
}

/* ---------------------------------------------------------------------- */
/* Headers and token counts                                                */
/* ---------------------------------------------------------------------- */

/* A header's token count needs only the model's configs: neither the
 * encoder nor any weights are touched before admission. */
vlm_status vlm_engine_image_tokens(vlm_engine *engine, int64_t width, int64_t height, int64_t *out_tokens) {
  *out_tokens = 0;
  if (!engine->accepts_images) return engine_refuse_images(engine, 1);
  return vlm_model_image_tokens(engine->model, width, height, out_tokens);
}

/* What load_image reserves: the decode, and the rotated copy an EXIF
 * orientation makes. */
static uint64_t image_reserve_bytes(const vlm_image_header *header) {
  uint64_t pixels = 0, rotated_copy = 0, needed = 0;
  if (__builtin_mul_overflow((uint64_t)header->width, (uint64_t)header->height, &pixels) ||
      __builtin_mul_overflow(pixels, 3u, &rotated_copy) ||
      __builtin_add_overflow(header->decode_bytes, rotated_copy, &needed))
    needed = UINT64_MAX;
  return needed;
}

vlm_status vlm_engine_read_image_header(vlm_engine *engine, const uint8_t *data, size_t size, const char *name,
                                        vlm_engine_image_header *out) {
  memset(out, 0, sizeof(*out));
  if (!engine->accepts_images) return engine_refuse_images(engine, 1);
  vlm_image_header header;
  VLM_RETURN_IF_ERROR(vlm_image_read_header(data, size, name, NULL, &header));
  out->width = header.width;
  out->height = header.height;
  out->decode_bytes = header.decode_bytes;
  out->reserve_bytes = image_reserve_bytes(&header);
  vlm_status status = vlm_engine_image_tokens(engine, header.width, header.height, &out->tokens);
  if (vlm_status_code_of(status) == VLM_STATUS_NOT_FOUND) {
    /* The processor needs the pixels to tell (a shortest-edge resize
     * without a crop): its placeholder's one token is a lower bound, so
     * admission stays sound and submit checks the exact count. */
    vlm_status_free(status);
    out->tokens = 1;
    return VLM_OK;
  }
  return vlm_status_annotate(status, "%s", name ? name : "image");
}

vlm_status vlm_engine_read_image_header_file(vlm_engine *engine, const char *path, vlm_engine_image_header *out) {
  memset(out, 0, sizeof(*out));
  if (!engine->accepts_images) return engine_refuse_images(engine, 1);
  const char *slash = strrchr(path, '/');
  char *data = NULL;
  size_t size = 0;
  VLM_RETURN_IF_ERROR(vlm_file_read_all(path, VLM_MEDIA_DEFAULT_MAX_ENCODED_BYTES, &data, &size));
  vlm_status status = vlm_engine_read_image_header(engine, (const uint8_t *)data, size, slash ? slash + 1 : path, out);
  free(data);
  return status;
}

/* ---------------------------------------------------------------------- */
/* Decoding and preprocessing                                              */
/* ---------------------------------------------------------------------- */

/* The model's image processor (the registry's class) into a media item. */
static vlm_status finish_loaded_image(vlm_engine *engine, const vlm_image *image, const char *name, double start,
                                      vlm_loaded_image *out_image) {
  vlm_media_item *item = calloc(1, sizeof(*item));
  if (!item) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_status status = vlm_status_annotate(vlm_model_image_item(engine->model, image, engine->allocator, item), "%s",
                                          name);
  if (status) {
    free(item);
    return status;
  }
  item->preprocess_seconds = engine_now_seconds() - start;
  *out_image = (vlm_loaded_image){item, item->token_count, item->preprocess_seconds};
  return VLM_OK;
}

/* The header first (limits, and what the decode will hold), a
 * reservation of that much in the budget, then the decode. */
static vlm_status load_image(vlm_engine *engine, const uint8_t *data, size_t size, const char *name,
                             const void *cancel, vlm_media_reservation *from, double start,
                             vlm_loaded_image *out_image) {
  VLM_RETURN_IF_ERROR(engine_ensure_vision(engine, 1));
  vlm_image_header header;
  VLM_RETURN_IF_ERROR(vlm_image_read_header(data, size, name, NULL, &header));
  uint64_t reserved = 0;
  VLM_RETURN_IF_ERROR(engine_take_media_memory(engine, from, image_reserve_bytes(&header), cancel, name, &reserved));
  vlm_image_decode_options options = {.allocator = engine->allocator, .cancel = cancel};
  vlm_image image;
  vlm_status status = vlm_image_decode_memory(data, size, name, &options, &image);
  if (!status) {
    status = finish_loaded_image(engine, &image, name, start, out_image);
    vlm_image_release(&image);
  }
  /* The pixels stay charged until the request is done with them. */
  if (!status) engine_charge_media_item(engine, out_image->item, reserved);
  else engine_release_media_memory(engine, reserved);
  return status;
}

vlm_status vlm_engine_load_image_memory(vlm_engine *engine, const uint8_t *data, size_t size,
                                        const char *name, const void *cancel,
                                        vlm_loaded_image *out_image) {
  memset(out_image, 0, sizeof(*out_image));
  return load_image(engine, data, size, name ? name : "image", cancel, NULL, engine_now_seconds(), out_image);
}

vlm_status vlm_engine_load_image_memory_from(vlm_engine *engine, const uint8_t *data, size_t size,
                                             const char *name, const void *cancel, vlm_media_reservation *from,
                                             vlm_loaded_image *out_image) {
  memset(out_image, 0, sizeof(*out_image));
  return load_image(engine, data, size, name ? name : "image", cancel, from, engine_now_seconds(), out_image);
}

vlm_status vlm_engine_load_image_file(vlm_engine *engine, const char *path, const void *cancel,
                                      vlm_loaded_image *out_image) {
  memset(out_image, 0, sizeof(*out_image));
  double start = engine_now_seconds();
  VLM_RETURN_IF_ERROR(engine_ensure_vision(engine, 1));
  const char *slash = strrchr(path, '/');
  char *data = NULL;
  size_t size = 0;
  /* vlm_file_read_all refuses an oversized file from its size, unread. */
  VLM_RETURN_IF_ERROR(vlm_file_read_all(path, VLM_MEDIA_DEFAULT_MAX_ENCODED_BYTES, &data, &size));
  vlm_status status = load_image(engine, (const uint8_t *)data, size, slash ? slash + 1 : path, cancel, NULL, start,
                                 out_image);
  free(data);
  return status;
}

void vlm_loaded_image_release(vlm_loaded_image *image) {
  if (!image) return;
  vlm_media_item_release(image->item);
  free(image->item);
  memset(image, 0, sizeof(*image));
}
