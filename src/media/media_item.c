#include "media/media_item.h"

#include <string.h>

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

void vlm_media_item_release(vlm_media_item *item) {
  if (!item) return;
  vlm_tensor_list_release(&item->tensors);
  memset(item, 0, sizeof(*item));
}
