/* See audio_processors.h. */
#include "media/audio_processors.h"

#include <stdio.h>
#include <string.h>

#include "core/status.h"
#include "core/tensor.h"
#include "media/audio_features_phi4.h"

/* ---- Phi4MultimodalFeatureExtractor (Phi-4-multimodal) ----------------- */

/* What the extractor returns for one clip (batch of one, no padding):
 * audio_input_features [frames, feature_size] (its [1, frames, 80] without
 * the batch axis) and audio_embed_sizes [1] (int32 here, int64 in torch); no audio_attention_mask (the
 * class returns none for a single clip). Grid: 1, frames, feature_size. */
static vlm_status phi4_preprocess(const vlm_feature_extractor_config *config, const float *samples, int64_t count,
                                  const vlm_allocator *allocator, vlm_media_item *out) {
  vlm_tensor features;
  VLM_RETURN_IF_ERROR(vlm_phi4_audio_features(config, samples, count, allocator, &features));
  void *data = NULL;
  vlm_status status = vlm_tensor_list_add(&out->tensors, "audio_input_features", VLM_DTYPE_F32, 2, features.shape, &data);
  if (!status) memcpy(data, features.data, vlm_tensor_byte_size(&features));
  out->grid[0] = 1, out->grid[1] = features.shape[0], out->grid[2] = features.shape[1];
  vlm_tensor_release(&features);
  int32_t *sizes = NULL;
  if (!status)
    status = vlm_tensor_list_add(&out->tensors, "audio_embed_sizes", VLM_DTYPE_I32, 1, (const int64_t[]){1},
                                 (void **)&sizes);
  if (!status) sizes[0] = (int32_t)vlm_phi4_audio_embed_size(config, out->grid[1]);
  return status;
}

/* One clip's audio_input_features [frames, feature_size] (the oracle
 * records a single clip's; its batch axis dropped) and audio_embed_sizes. */
static vlm_status phi4_item_from_batch(const vlm_processor_outputs *batch, int64_t index, vlm_media_item *out) {
  vlm_tensor features, sizes;
  VLM_RETURN_IF_ERROR(batch->get(batch->context, "audio_input_features", &features));
  VLM_RETURN_IF_ERROR(batch->get(batch->context, "audio_embed_sizes", &sizes));
  if (index != 0 || features.dtype != VLM_DTYPE_F32 || features.rank != 2 || vlm_tensor_element_count(&sizes) != 1)
    return VLM_ERROR(DATA_LOSS, "audio_input_features is not one clip's f32 [frames, mels]");
  out->processor = "Phi4MultimodalFeatureExtractor";
  void *data = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&out->tensors, "audio_input_features", VLM_DTYPE_F32, 2, features.shape,
                                          &data));
  memcpy(data, features.data, (size_t)vlm_tensor_element_count(&features) * sizeof(float));
  out->grid[0] = 1, out->grid[1] = features.shape[0], out->grid[2] = features.shape[1];
  int32_t *size = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(&out->tensors, "audio_embed_sizes", VLM_DTYPE_I32, 1, (const int64_t[]){1},
                                          (void **)&size));
  *size = (int32_t)vlm_tensor_value_as_int64(&sizes, 0);
  return VLM_OK;
}

/* audio_embed_sizes of a clip of `samples`: its frames, then
 * _compute_audio_embed_size. */
static int64_t phi4_tokens_for_samples(const vlm_feature_extractor_config *config, int64_t samples) {
  int64_t frames = vlm_phi4_audio_frames(config, samples);
  return frames > 0 ? vlm_phi4_audio_embed_size(config, frames) : 0;
}

static const vlm_audio_processor_class processors[] = {
    {"Phi4MultimodalFeatureExtractor", phi4_preprocess, phi4_item_from_batch, phi4_tokens_for_samples},
};

vlm_status vlm_audio_processor_find(const vlm_feature_extractor_config *config,
                                    const vlm_audio_processor_class **out) {
  *out = NULL;
  const char *type = config ? config->feature_extractor_type : NULL;
  for (size_t i = 0; type && config->supported && i < sizeof(processors) / sizeof(processors[0]); i++)
    if (strcmp(type, processors[i].name) == 0) {
      *out = &processors[i];
      return VLM_OK;
    }
  char names[256] = "";
  for (size_t i = 0; i < sizeof(processors) / sizeof(processors[0]); i++)
    snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "", processors[i].name);
  return VLM_ERROR(UNIMPLEMENTED, "feature extractor '%s' is not supported yet (supported: %s)",
                   type ? type : "(none)", names);
}
