#include "media/media_item.h"

#include <string.h>

#include "core/sha256.h"

const char *vlm_media_kind_name(vlm_media_kind kind) {
  switch (kind) {
    case VLM_MEDIA_IMAGE: return "image";
    case VLM_MEDIA_AUDIO: return "audio";
    case VLM_MEDIA_VIDEO: return "video";
    default: return "media";
  }
}

const vlm_named_tensor *vlm_media_item_tensor(const vlm_media_item *item, const char *name) {
  return vlm_tensor_list_find(&item->tensors, name);
}

/* Integers go in as 8 bytes in host order (the digest never leaves the
 * process). */
static void hash_int(vlm_sha256 *hash, int64_t value) { vlm_sha256_update(hash, &value, sizeof(value)); }

void vlm_media_item_digest(const vlm_media_item *item, uint8_t out_digest[32]) {
  vlm_sha256 hash;
  vlm_sha256_init(&hash);
  hash_int(&hash, item->kind);
  const char *processor = item->processor ? item->processor : "";
  hash_int(&hash, (int64_t)strlen(processor));
  vlm_sha256_update(&hash, processor, strlen(processor));
  for (int i = 0; i < 3; i++) hash_int(&hash, item->grid[i]);
  hash_int(&hash, item->token_count);
  hash_int(&hash, item->request_kinds);
  hash_int(&hash, item->request_traits);
  hash_int(&hash, item->tensors.count);
  for (int t = 0; t < item->tensors.count; t++) {
    const vlm_named_tensor *tensor = &item->tensors.items[t];
    size_t name_length = strnlen(tensor->name, sizeof(tensor->name));
    hash_int(&hash, (int64_t)name_length);
    vlm_sha256_update(&hash, tensor->name, name_length);
    hash_int(&hash, tensor->dtype);
    hash_int(&hash, tensor->rank);
    for (int d = 0; d < tensor->rank; d++) hash_int(&hash, tensor->shape[d]);
    size_t bytes = vlm_named_tensor_bytes(tensor);
    hash_int(&hash, (int64_t)bytes);
    if (bytes) vlm_sha256_update(&hash, tensor->data, bytes);
  }
  vlm_sha256_finish(&hash, out_digest);
}

uint64_t vlm_media_item_bytes(const vlm_media_item *item) {
  uint64_t bytes = 0;
  for (int t = 0; t < item->tensors.count; t++) bytes += vlm_named_tensor_bytes(&item->tensors.items[t]);
  return bytes;
}

void vlm_media_item_release(vlm_media_item *item) {
  if (!item) return;
  if (item->charge.release) item->charge.release(item->charge.owner, item->charge.bytes);
  vlm_tensor_list_release(&item->tensors);
  memset(item, 0, sizeof(*item));
}
