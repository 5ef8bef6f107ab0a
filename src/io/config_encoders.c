/* Vision and audio encoders: each Transformers class names the same ideas
 * differently (depth/num_hidden_layers, embed_dim/hidden_size, ...), so each
 * family has its own small reader into the shared struct. */
#include <string.h>

#include "core/status.h"
#include "io/config_families.h"

typedef vlm_status (*vision_reader)(const vlm_config_section *, vlm_vision_config *);
typedef vlm_status (*audio_reader)(const vlm_config_section *, vlm_audio_config *);

static vlm_status read_size(const vlm_config_section *section, const char *key, int64_t *out) {
  return vlm_config_read_int(section, key, 1, VLM_CONFIG_MAX_DIMENSION, out);
}

static vlm_status read_layers(const vlm_config_section *section, const char *key, int64_t *out) {
  return vlm_config_read_int(section, key, 1, VLM_CONFIG_MAX_LAYERS, out);
}

static vlm_status read_heads(const vlm_config_section *section, const char *key,
                             int64_t hidden_size, int64_t *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, key, 1, VLM_CONFIG_MAX_HEADS, out));
  if (hidden_size % *out != 0)
    return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, key,
                            "(%lld) does not divide the hidden size (%lld)", (long long)*out,
                            (long long)hidden_size);
  return VLM_OK;
}

static vlm_status read_activation(const vlm_config_section *section, const char *key,
                                  const char **out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_string_or(section, key, NULL, out));
  return *out ? VLM_OK : vlm_config_type_error(section, key, "an activation name", NULL);
}

static vlm_status read_eps(const vlm_config_section *section, const char *key, double *out) {
  return vlm_config_read_double(section, key, 1e-30, 1.0, out);
}

/* ---------------------------------------------------------------------- */
/* Vision                                                                  */
/* ---------------------------------------------------------------------- */

/* The ViT shape every ViT-style config spells the same way. */
static vlm_status read_vit_shape(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(read_size(section, "hidden_size", &out->hidden_size));
  VLM_RETURN_IF_ERROR(read_size(section, "intermediate_size", &out->intermediate_size));
  VLM_RETURN_IF_ERROR(read_layers(section, "num_hidden_layers", &out->num_hidden_layers));
  VLM_RETURN_IF_ERROR(
      read_heads(section, "num_attention_heads", out->hidden_size, &out->num_attention_heads));
  out->num_key_value_heads = out->num_attention_heads;
  out->head_dim = out->hidden_size / out->num_attention_heads;
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "num_channels", 1, 64, &out->num_channels));
  VLM_RETURN_IF_ERROR(
      vlm_config_read_int(section, "patch_size", 1, VLM_CONFIG_MAX_IMAGE_SIZE, &out->patch_size));
  VLM_RETURN_IF_ERROR(read_activation(section, "hidden_act", &out->hidden_act));
  return read_eps(section, "layer_norm_eps", &out->layer_norm_eps);
}

static vlm_status read_square_image(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "image_size", 1, VLM_CONFIG_MAX_IMAGE_SIZE,
                                          &out->image_height));
  out->image_width = out->image_height;
  if (out->image_height % out->patch_size != 0)
    return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, "image_size",
                            "(%lld) is not a multiple of patch_size (%lld)",
                            (long long)out->image_height, (long long)out->patch_size);
  return VLM_OK;
}

/* CLIPVisionConfig; SiglipVisionConfig adds vision_use_head; the CLIP and
 * SigLIP attention projections carry biases. */
static vlm_status read_clip_vision(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(read_vit_shape(section, out));
  out->attention_bias = true;
  VLM_RETURN_IF_ERROR(vlm_config_read_bool_or(section, "vision_use_head", false, &out->vision_use_head));
  return read_square_image(section, out);
}

/* The Qwen patch embedder and merger. Their norms use eps=1e-6 fixed in the
 * modeling code (Qwen2VLVisionBlock, Qwen2_5_VLVisionBlock,
 * Qwen3VLVisionBlock), and qkv has a bias. */
static vlm_status read_qwen_patching(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "in_channels", 1, 64, &out->num_channels));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "patch_size", 1, 1024, &out->patch_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "spatial_merge_size", 1, 64,
                                          &out->spatial_merge_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "temporal_patch_size", 1, 64,
                                          &out->temporal_patch_size));
  VLM_RETURN_IF_ERROR(read_layers(section, "depth", &out->num_hidden_layers));
  VLM_RETURN_IF_ERROR(read_activation(section, "hidden_act", &out->hidden_act));
  out->layer_norm_eps = 1e-6;
  out->attention_bias = true;
  return VLM_OK;
}

static vlm_status read_qwen_heads(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(read_heads(section, "num_heads", out->hidden_size, &out->num_attention_heads));
  out->num_key_value_heads = out->num_attention_heads;
  out->head_dim = out->hidden_size / out->num_attention_heads;
  return VLM_OK;
}

/* Qwen2VLVisionConfig: embed_dim is the encoder width, hidden_size the
 * merger's output (the LLM width), and the MLP is embed_dim * mlp_ratio. */
static vlm_status read_qwen2_vl_vision(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(read_qwen_patching(section, out));
  VLM_RETURN_IF_ERROR(read_size(section, "embed_dim", &out->hidden_size));
  VLM_RETURN_IF_ERROR(read_size(section, "hidden_size", &out->out_hidden_size));
  int64_t mlp_ratio = 0;
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "mlp_ratio", 1, 64, &mlp_ratio));
  out->intermediate_size = out->hidden_size * mlp_ratio;
  return read_qwen_heads(section, out);
}

static vlm_status read_qwen2_5_vl_vision(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(read_qwen_patching(section, out));
  VLM_RETURN_IF_ERROR(read_size(section, "hidden_size", &out->hidden_size));
  VLM_RETURN_IF_ERROR(read_size(section, "intermediate_size", &out->intermediate_size));
  VLM_RETURN_IF_ERROR(read_size(section, "out_hidden_size", &out->out_hidden_size));
  VLM_RETURN_IF_ERROR(read_qwen_heads(section, out));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "window_size", 1, VLM_CONFIG_MAX_IMAGE_SIZE,
                                          &out->window_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "tokens_per_second", 0, 1 << 20,
                                          &out->tokens_per_second));
  return vlm_config_read_index_list(section, "fullatt_block_indexes", 0,
                                    out->num_hidden_layers - 1, false,
                                    &out->fullatt_block_indexes, NULL);
}

static vlm_status read_qwen3_vl_vision(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(read_qwen_patching(section, out));
  VLM_RETURN_IF_ERROR(read_size(section, "hidden_size", &out->hidden_size));
  VLM_RETURN_IF_ERROR(read_size(section, "intermediate_size", &out->intermediate_size));
  VLM_RETURN_IF_ERROR(read_size(section, "out_hidden_size", &out->out_hidden_size));
  VLM_RETURN_IF_ERROR(read_qwen_heads(section, out));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "num_position_embeddings", 1, 1 << 24,
                                          &out->num_position_embeddings));
  return vlm_config_read_index_list(section, "deepstack_visual_indexes", 0,
                                    out->num_hidden_layers - 1, false,
                                    &out->deepstack_visual_indexes, NULL);
}

/* Gemma3nVisionConfig is a timm MobileNet-V5 whose shape lives in timm's
 * architecture table; the config only gives the output width. */
static vlm_status read_gemma3n_vision(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(read_size(section, "hidden_size", &out->hidden_size));
  return read_eps(section, "rms_norm_eps", &out->layer_norm_eps);
}

static vlm_status read_phi4_vision(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(read_vit_shape(section, out));
  out->attention_bias = true;
  return read_square_image(section, out);
}

/* Molmo2VisionConfig.__post_init__: image_size defaults to [378, 378] and
 * num_position_embeddings to the patch grid it gives. */
static vlm_status read_molmo2_image(const vlm_config_section *section, vlm_vision_config *out) {
  vlm_index_list size;
  VLM_RETURN_IF_ERROR(vlm_config_read_index_list(section, "image_size", 1,
                                                 VLM_CONFIG_MAX_IMAGE_SIZE, false, &size, NULL));
  if (size.count == 0) size = (vlm_index_list){{378, 378}, 2};
  if (size.count != 2)
    return vlm_config_type_error(section, "image_size", "a [height, width] list",
                                 vlm_config_get(section, "image_size"));
  out->image_height = size.values[0];
  out->image_width = size.values[1];
  int64_t grid = (out->image_height / out->patch_size) * (out->image_width / out->patch_size);
  return vlm_config_read_int_or(section, "num_position_embeddings", 1, 1 << 24, grid,
                                &out->num_position_embeddings);
}

static vlm_status read_molmo2_vision(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(read_vit_shape(section, out));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "num_key_value_heads", 1, VLM_CONFIG_MAX_HEADS,
                                          &out->num_key_value_heads));
  VLM_RETURN_IF_ERROR(
      vlm_config_read_int(section, "head_dim", 1, VLM_CONFIG_MAX_HEADS, &out->head_dim));
  if (out->num_attention_heads % out->num_key_value_heads != 0)
    return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, "num_attention_heads",
                            "(%lld) is not a multiple of num_key_value_heads (%lld)",
                            (long long)out->num_attention_heads,
                            (long long)out->num_key_value_heads);
  VLM_RETURN_IF_ERROR(
      vlm_config_read_bool_or(section, "attention_bias", true, &out->attention_bias));
  return read_molmo2_image(section, out);
}

static const struct {
  const char *model_type;
  vision_reader read;
} vision_readers[] = {
    {"clip_vision_model", read_clip_vision},
    {"siglip_vision_model", read_clip_vision},
    {"qwen2_vl_vision", read_qwen2_vl_vision},
    {"qwen2_5_vl_vision", read_qwen2_5_vl_vision},
    {"qwen3_vl_vision", read_qwen3_vl_vision},
    {"qwen3_vl_moe_vision", read_qwen3_vl_vision},
    {"gemma3n_vision", read_gemma3n_vision},
    {"phi4_multimodal_vision", read_phi4_vision},
    {"molmo2_vision", read_molmo2_vision},
};

static vision_reader find_vision_reader(const char *model_type) {
  for (size_t i = 0; model_type && i < sizeof(vision_readers) / sizeof(vision_readers[0]); i++)
    if (strcmp(vision_readers[i].model_type, model_type) == 0) return vision_readers[i].read;
  return NULL;
}

bool vlm_config_is_vision_model_type(const char *model_type) {
  return find_vision_reader(model_type) != NULL;
}

vlm_status vlm_vision_config_read(const vlm_config_section *section,
                                  const vlm_config_class *config_class,
                                  vlm_vision_config *out) {
  memset(out, 0, sizeof(*out));
  vision_reader read = find_vision_reader(config_class->model_type);
  if (!read)
    return VLM_ERROR(UNIMPLEMENTED, "%s: %s\"%s\" is not a supported vision model",
                     section->source_name, section->key_prefix, config_class->model_type);
  out->model_type = config_class->model_type;
  out->section = section->object;
  return read(section, out);
}

/* ---------------------------------------------------------------------- */
/* Audio                                                                   */
/* ---------------------------------------------------------------------- */

/* Gemma3nAudioConfig (USM conformer): the feed-forward is hidden_size * 4,
 * fixed in Gemma3nAudioConformerFeedForward. */
static vlm_status read_gemma3n_audio(const vlm_config_section *section, vlm_audio_config *out) {
  VLM_RETURN_IF_ERROR(read_size(section, "hidden_size", &out->hidden_size));
  out->intermediate_size = out->hidden_size * 4;
  VLM_RETURN_IF_ERROR(read_layers(section, "conf_num_hidden_layers", &out->num_hidden_layers));
  VLM_RETURN_IF_ERROR(read_heads(section, "conf_num_attention_heads", out->hidden_size,
                                 &out->num_attention_heads));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "input_feat_size", 1, 4096,
                                          &out->input_feature_size));
  return read_eps(section, "rms_norm_eps", &out->norm_eps);
}

/* Phi4MultimodalAudioConfig (conformer); time_reduction must be even
 * (validate_architecture). */
static vlm_status read_phi4_audio(const vlm_config_section *section, vlm_audio_config *out) {
  VLM_RETURN_IF_ERROR(read_size(section, "hidden_size", &out->hidden_size));
  VLM_RETURN_IF_ERROR(read_size(section, "intermediate_size", &out->intermediate_size));
  VLM_RETURN_IF_ERROR(read_layers(section, "num_blocks", &out->num_hidden_layers));
  VLM_RETURN_IF_ERROR(
      read_heads(section, "num_attention_heads", out->hidden_size, &out->num_attention_heads));
  VLM_RETURN_IF_ERROR(
      vlm_config_read_int(section, "input_size", 1, 4096, &out->input_feature_size));
  int64_t time_reduction = 0;
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "time_reduction", 1, 1024, &time_reduction));
  if (time_reduction % 2 != 0)
    return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, "time_reduction",
                            "must be a multiple of 2, got %lld", (long long)time_reduction);
  return VLM_OK;
}

static const struct {
  const char *model_type;
  audio_reader read;
} audio_readers[] = {
    {"gemma3n_audio", read_gemma3n_audio},
    {"phi4_multimodal_audio", read_phi4_audio},
};

static audio_reader find_audio_reader(const char *model_type) {
  for (size_t i = 0; model_type && i < sizeof(audio_readers) / sizeof(audio_readers[0]); i++)
    if (strcmp(audio_readers[i].model_type, model_type) == 0) return audio_readers[i].read;
  return NULL;
}

bool vlm_config_is_audio_model_type(const char *model_type) {
  return find_audio_reader(model_type) != NULL;
}

vlm_status vlm_audio_config_read(const vlm_config_section *section,
                                 const vlm_config_class *config_class, vlm_audio_config *out) {
  memset(out, 0, sizeof(*out));
  audio_reader read = find_audio_reader(config_class->model_type);
  if (!read)
    return VLM_ERROR(UNIMPLEMENTED, "%s: %s\"%s\" is not a supported audio model",
                     section->source_name, section->key_prefix, config_class->model_type);
  out->model_type = config_class->model_type;
  out->section = section->object;
  return read(section, out);
}
