/* models/molmo2: Molmo2Config and its text, vision and adapter configs. */
#include "io/configs/configs.h"

/* transformers 5.23.0 Molmo2Config() */
static const char molmo2_defaults[] =
    "{\"class\": \"Molmo2Config\",\"model_type\": \"molmo2\","
    "\"attribute_map\": {\"image_token_id\": \"image_patch_id\","
    "\"video_token_id\": \"image_patch_id\"},"
    "\"sub_configs\": {\"text_config\": {\"model_type\": \"molmo2_text\",\"auto\": false},"
    "\"vision_config\": {\"model_type\": \"molmo2_vision\",\"auto\": false},"
    "\"adapter_config\": {\"model_type\": \"molmo2_adapter\",\"auto\": false}},"
    "\"fields\": {\"image_start_token_id\": 151936,\"low_res_image_start_token_id\": 151940,"
    "\"image_end_token_id\": 151937,\"image_patch_id\": 151938,"
    "\"frame_start_token_id\": 151943,\"frame_end_token_id\": 151944,"
    "\"tie_word_embeddings\": false}}";

/* transformers 5.23.0 Molmo2TextConfig() */
static const char molmo2_text_defaults[] =
    "{\"class\": \"Molmo2TextConfig\",\"model_type\": \"molmo2_text\",\"default_theta\": 10000.0,"
    "\"attribute_map\": {\"qkv_bias\": \"attention_bias\",\"layer_norm_eps\": \"rms_norm_eps\"},"
    "\"fields\": {\"hidden_size\": 4096,\"num_attention_heads\": 32,\"num_key_value_heads\": 8,"
    "\"head_dim\": 128,\"vocab_size\": 151936,\"additional_vocab_size\": 128,"
    "\"attention_bias\": false,\"qk_norm_type\": \"qwen3\",\"num_hidden_layers\": 36,"
    "\"intermediate_size\": 12288,\"hidden_act\": \"silu\",\"max_position_embeddings\": 36864,"
    "\"rope_parameters\": null,\"rope_scaling_layers\": null,\"rms_norm_eps\": 1e-06,"
    "\"norm_after\": false,\"tie_word_embeddings\": false}}";

/* transformers 5.23.0 Molmo2VisionConfig() */
static const char molmo2_vision_defaults[] =
    "{\"class\": \"Molmo2VisionConfig\",\"model_type\": \"molmo2_vision\","
    "\"legacy_keys\": {\"image_default_input_size\": \"image_size\","
    "\"image_patch_size\": \"patch_size\",\"image_num_pos\": \"num_position_embeddings\"},"
    "\"fields\": {\"hidden_size\": 1152,\"intermediate_size\": 4304,\"num_hidden_layers\": 25,"
    "\"num_attention_heads\": 16,\"num_key_value_heads\": 16,\"head_dim\": 72,"
    "\"hidden_act\": \"gelu_pytorch_tanh\",\"layer_norm_eps\": 1e-06,\"image_size\": null,"
    "\"patch_size\": 14,\"num_position_embeddings\": null,\"num_channels\": 3,"
    "\"attention_bias\": true}}";

/* transformers 5.23.0 Molmo2AdapterConfig() */
static const char molmo2_adapter_defaults[] =
    "{\"class\": \"Molmo2AdapterConfig\",\"model_type\": \"molmo2_adapter\","
    "\"legacy_keys\": {\"vit_layers\": \"vision_feature_layer\"},"
    "\"fields\": {\"vision_feature_layer\": null,\"hidden_size\": 1152,"
    "\"num_attention_heads\": 16,\"num_key_value_heads\": 16,\"head_dim\": 72,"
    "\"attention_bias\": true,\"hidden_act\": \"silu\",\"intermediate_size\": 18944,"
    "\"text_hidden_size\": 3584,\"mlp_bias\": false}}";

/* Molmo2TextConfig: attention_bias on q, k, v only. */
static const vlm_text_rules molmo2_text = {.bias = VLM_BIAS_FIELD_QKV, .layers = VLM_LAYERS_ALL_FULL};

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
  VLM_RETURN_IF_ERROR(vlm_vision_read_vit_shape(section, out));
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

/* Molmo2AdapterConfig.__post_init__: vision_feature_layer [24, 18] when
 * unset. Molmo2Config: with a legacy vit_config, the layer indexes are
 * made non-negative and the encoder is cut after the deepest one used;
 * validate_architecture then checks they index the encoder. */
static vlm_status read_feature_layers(const vlm_config_parts *parts, vlm_model_config *out) {
  const int64_t bound = VLM_CONFIG_MAX_LAYERS;
  if (!parts->adapter) return VLM_ERROR(INTERNAL, "molmo2: no adapter_config section");
  VLM_RETURN_IF_ERROR(vlm_config_read_index_list(parts->adapter, "vision_feature_layer", -bound, bound, false,
                                                 &out->vision_feature_layers, NULL));
  if (!out->vision_feature_layers.count) out->vision_feature_layers = (vlm_index_list){{24, 18}, 2};
  out->vision_feature_layer_is_list = true;
  int64_t layers = out->vision.num_hidden_layers;
  vlm_index_list *indexes = &out->vision_feature_layers;
  if (parts->used_legacy_vision_key && indexes->count) {
    int64_t deepest = 0;
    for (size_t i = 0; i < indexes->count; i++) {
      indexes->values[i] = ((indexes->values[i] % layers) + layers) % layers;
      if (indexes->values[i] > deepest) deepest = indexes->values[i];
    }
    out->vision.num_hidden_layers = layers = deepest + 1;
  }
  for (size_t i = 0; i < indexes->count; i++)
    if (indexes->values[i] < -layers || indexes->values[i] >= layers)
      return vlm_config_error(parts->adapter, VLM_STATUS_INVALID_ARGUMENT, "vision_feature_layer",
                              "entry %lld does not index the %lld vision layers",
                              (long long)indexes->values[i], (long long)layers);
  return VLM_OK;
}

static const vlm_config_record configs[] = {
    {.model_type = "molmo2", .defaults = molmo2_defaults, .composite = true, .legacy_vision_key = "vit_config",
     .read_feature_layers = read_feature_layers, .tokenizer_class = "TokenizersBackend",
     .hub_tokenizer_class_incorrect = true},
    {.model_type = "molmo2_text", .defaults = molmo2_text_defaults, .text = &molmo2_text},
    {.model_type = "molmo2_vision", .defaults = molmo2_vision_defaults, .read_vision = read_molmo2_vision},
    {.model_type = "molmo2_adapter", .defaults = molmo2_adapter_defaults},
};

const vlm_config_family vlm_config_family_molmo2 = {.configs = configs, .config_count = VLM_COUNT_OF(configs)};
