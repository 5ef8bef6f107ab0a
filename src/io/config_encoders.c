/* Vision and audio encoders: each Transformers class names the same ideas
 * differently (depth/num_hidden_layers, embed_dim/hidden_size, ...), so each
 * class's record has its own small reader into the shared struct (in its
 * src/io/configs file); the readers every ViT-style class shares are here. */
#include <string.h>

#include "core/status.h"
#include "io/config_record.h"

vlm_status vlm_config_read_width(const vlm_config_section *section, const char *key, int64_t *out) {
  return vlm_config_read_int(section, key, 1, VLM_CONFIG_MAX_DIMENSION, out);
}

vlm_status vlm_config_read_layers(const vlm_config_section *section, const char *key, int64_t *out) {
  return vlm_config_read_int(section, key, 1, VLM_CONFIG_MAX_LAYERS, out);
}

vlm_status vlm_config_read_heads(const vlm_config_section *section, const char *key, int64_t hidden_size,
                                 int64_t *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, key, 1, VLM_CONFIG_MAX_HEADS, out));
  if (hidden_size % *out != 0)
    return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, key,
                            "(%lld) does not divide the hidden size (%lld)", (long long)*out,
                            (long long)hidden_size);
  return VLM_OK;
}

vlm_status vlm_config_read_activation(const vlm_config_section *section, const char *key, const char **out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_string_or(section, key, NULL, out));
  return *out ? VLM_OK : vlm_config_type_error(section, key, "an activation name", NULL);
}

vlm_status vlm_config_read_eps(const vlm_config_section *section, const char *key, double *out) {
  return vlm_config_read_double(section, key, 1e-30, 1.0, out);
}

vlm_status vlm_vision_read_vit_shape(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_width(section, "hidden_size", &out->hidden_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_width(section, "intermediate_size", &out->intermediate_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_layers(section, "num_hidden_layers", &out->num_hidden_layers));
  VLM_RETURN_IF_ERROR(
      vlm_config_read_heads(section, "num_attention_heads", out->hidden_size, &out->num_attention_heads));
  out->num_key_value_heads = out->num_attention_heads;
  out->head_dim = out->hidden_size / out->num_attention_heads;
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "num_channels", 1, 64, &out->num_channels));
  VLM_RETURN_IF_ERROR(
      vlm_config_read_int(section, "patch_size", 1, VLM_CONFIG_MAX_IMAGE_SIZE, &out->patch_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_activation(section, "hidden_act", &out->hidden_act));
  return vlm_config_read_eps(section, "layer_norm_eps", &out->layer_norm_eps);
}

vlm_status vlm_vision_read_square_image(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "image_size", 1, VLM_CONFIG_MAX_IMAGE_SIZE,
                                          &out->image_height));
  out->image_width = out->image_height;
  if (out->image_height % out->patch_size != 0)
    return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, "image_size",
                            "(%lld) is not a multiple of patch_size (%lld)",
                            (long long)out->image_height, (long long)out->patch_size);
  return VLM_OK;
}

vlm_status vlm_vision_config_read(const vlm_config_section *section,
                                  const vlm_config_class *config_class,
                                  vlm_vision_config *out) {
  memset(out, 0, sizeof(*out));
  const vlm_config_record *record = vlm_config_record_find(config_class->model_type);
  if (!record || !record->read_vision)
    return VLM_ERROR(UNIMPLEMENTED, "%s: %s\"%s\" is not a supported vision model",
                     section->source_name, section->key_prefix, config_class->model_type);
  out->model_type = config_class->model_type;
  out->section = section->object;
  return record->read_vision(section, out);
}

vlm_status vlm_audio_config_read(const vlm_config_section *section,
                                 const vlm_config_class *config_class, vlm_audio_config *out) {
  memset(out, 0, sizeof(*out));
  const vlm_config_record *record = vlm_config_record_find(config_class->model_type);
  if (!record || !record->read_audio)
    return VLM_ERROR(UNIMPLEMENTED, "%s: %s\"%s\" is not a supported audio model",
                     section->source_name, section->key_prefix, config_class->model_type);
  out->model_type = config_class->model_type;
  out->section = section->object;
  return record->read_audio(section, out);
}
