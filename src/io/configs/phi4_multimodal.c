/* models/phi4_multimodal: Phi4MultimodalConfig, its vision and audio configs,
 * Phi4MultimodalImageProcessor and Phi4MultimodalFeatureExtractor. */
#include "io/configs/configs.h"

/* transformers 5.23.0 Phi4MultimodalConfig() */
static const char phi4_multimodal_defaults[] =
    "{\"class\": \"Phi4MultimodalConfig\",\"model_type\": \"phi4_multimodal\","
    "\"default_theta\": 10000.0,"
    "\"sub_configs\": {\"audio_config\": {\"model_type\": \"phi4_multimodal_audio\","
    "\"auto\": false},\"vision_config\": {\"model_type\": \"phi4_multimodal_vision\","
    "\"auto\": false}},\"fields\": {\"vocab_size\": 200064,\"hidden_size\": 3072,"
    "\"intermediate_size\": 8192,\"num_hidden_layers\": 32,\"num_attention_heads\": 32,"
    "\"num_key_value_heads\": 8,\"hidden_act\": \"silu\",\"max_position_embeddings\": 131072,"
    "\"original_max_position_embeddings\": 4096,\"rms_norm_eps\": 1e-05,"
    "\"tie_word_embeddings\": false,\"rope_parameters\": null,\"bos_token_id\": 199999,"
    "\"eos_token_id\": null,\"pad_token_id\": 199999,\"sliding_window\": null}}";

/* transformers 5.23.0 Phi4MultimodalVisionConfig() */
static const char phi4_multimodal_vision_defaults[] =
    "{\"class\": \"Phi4MultimodalVisionConfig\",\"model_type\": \"phi4_multimodal_vision\","
    "\"fields\": {\"hidden_size\": 1152,\"intermediate_size\": 4304,\"num_hidden_layers\": 27,"
    "\"num_attention_heads\": 16,\"num_channels\": 3,\"image_size\": 448,\"patch_size\": 14,"
    "\"hidden_act\": \"gelu_pytorch_tanh\",\"layer_norm_eps\": 1e-06,\"crop_size\": 448,"
    "\"image_token_id\": 200010,\"feature_layer\": -2}}";

/* transformers 5.23.0 Phi4MultimodalAudioConfig() */
static const char phi4_multimodal_audio_defaults[] =
    "{\"class\": \"Phi4MultimodalAudioConfig\",\"model_type\": \"phi4_multimodal_audio\","
    "\"fields\": {\"hidden_size\": 1024,\"intermediate_size\": 1536,\"num_blocks\": 24,"
    "\"num_attention_heads\": 16,\"activation\": \"swish\",\"chunk_size\": -1,\"left_chunk\": 18,"
    "\"ext_pw_out_channel\": 1024,\"depthwise_separable_out_channel\": 1024,"
    "\"depthwise_multiplier\": 1,\"kernel_size\": 3,\"conv_activation\": \"swish\","
    "\"input_size\": 80,\"conv_glu_type\": \"swish\",\"time_reduction\": 8,"
    "\"bias_max_distance\": 1000,\"bias_symmetric\": false,\"nemo_activation\": \"relu\","
    "\"nemo_conv_channels\": 1024,\"downsample_rate\": 1,\"audio_token_id\": 200011,"
    "\"feature_layer\": -2}}";

/* transformers 5.23.0 Phi4MultimodalImageProcessor
 * (models/phi4_multimodal/image_processing_phi4_multimodal.py; torchvision
 * only, no Pil twin) */
static const char phi4_multimodal_image_processor_defaults[] =
    "{\"class\": \"Phi4MultimodalImageProcessor\","
    "\"fields\": {\"do_convert_rgb\": true,\"do_resize\": null,"
    "\"size\": {\"height\": 448, \"width\": 448},"
    "\"crop_size\": null,\"resample\": 3,"
    "\"do_rescale\": true,\"rescale_factor\": 0.00392156862745098,\"do_normalize\": true,"
    "\"image_mean\": [0.5, 0.5, 0.5],\"image_std\": [0.5, 0.5, 0.5],\"do_center_crop\": null,"
    "\"patch_size\": 14,\"dynamic_hd\": 36}}";

/* transformers 5.23.0 Phi4MultimodalFeatureExtractor.__init__
 * (models/phi4_multimodal/feature_extraction_phi4_multimodal.py);
 * tests/goldens/media_audio/manifest.json records the signature the oracle
 * saw, and tests/test_audio.c compares. */
static const char phi4_multimodal_feature_extractor_defaults[] =
    "{\"class\": \"Phi4MultimodalFeatureExtractor\","
    "\"fields\": {\"feature_size\": 80, \"sampling_rate\": 16000, \"hop_length\": 160, \"n_fft\": 512,"
    "\"win_length\": 400, \"preemphasis\": 0.97, \"padding_value\": 0.0, \"audio_compression_rate\": 8,"
    "\"audio_downsample_rate\": 1, \"audio_feat_stride\": 1, \"mel_min_frequency\": 0,"
    "\"mel_max_frequency\": 7690}}";

/* Phi4MultimodalConfig's own text fields: no biases, sliding_window on
 * every layer, eos_token_id [199999, 200020] unless given, and its RoPE
 * converter renaming the legacy "su" and "yarn" types to longrope after
 * standardize_rope_params. */
static const vlm_text_rules phi4_multimodal_text = {
    .bias = VLM_BIAS_NONE,
    .layers = VLM_LAYERS_ALL_SLIDING_WHEN_WINDOW,
    .default_eos_token_ids = {{199999, 200020}, 2},
    .rope = {.aliases = {{"su", "longrope", true}, {"yarn", "longrope", true}}},
};

static vlm_status read_phi4_vision(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(vlm_vision_read_vit_shape(section, out));
  out->attention_bias = true;
  return vlm_vision_read_square_image(section, out);
}

/* Phi4MultimodalAudioConfig (conformer); time_reduction must be even
 * (validate_architecture). */
static vlm_status read_phi4_audio(const vlm_config_section *section, vlm_audio_config *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_width(section, "hidden_size", &out->hidden_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_width(section, "intermediate_size", &out->intermediate_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_layers(section, "num_blocks", &out->num_hidden_layers));
  VLM_RETURN_IF_ERROR(
      vlm_config_read_heads(section, "num_attention_heads", out->hidden_size, &out->num_attention_heads));
  VLM_RETURN_IF_ERROR(
      vlm_config_read_int(section, "input_size", 1, 4096, &out->input_feature_size));
  int64_t time_reduction = 0;
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "time_reduction", 1, 1024, &time_reduction));
  if (time_reduction % 2 != 0)
    return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, "time_reduction",
                            "must be a multiple of 2, got %lld", (long long)time_reduction);
  return VLM_OK;
}

/* Phi4MultimodalVisionConfig.feature_layer. */
static vlm_status read_feature_layers(const vlm_config_parts *parts, vlm_model_config *out) {
  if (!parts->vision) return VLM_ERROR(INTERNAL, "phi4_multimodal: no vision_config section");
  return vlm_config_read_index_list(parts->vision, "feature_layer", -VLM_CONFIG_MAX_LAYERS, VLM_CONFIG_MAX_LAYERS,
                                    true, &out->vision_feature_layers, NULL);
}

static const vlm_config_record configs[] = {
    {.model_type = "phi4_multimodal", .defaults = phi4_multimodal_defaults, .composite = true,
     .text = &phi4_multimodal_text, .read_feature_layers = read_feature_layers},
    {.model_type = "phi4_multimodal_vision", .defaults = phi4_multimodal_vision_defaults,
     .read_vision = read_phi4_vision},
    {.model_type = "phi4_multimodal_audio", .defaults = phi4_multimodal_audio_defaults,
     .read_audio = read_phi4_audio},
};

static const vlm_class_defaults image_processors[] = {
    {"Phi4MultimodalImageProcessor", phi4_multimodal_image_processor_defaults},
};

static const vlm_class_defaults feature_extractors[] = {
    {"Phi4MultimodalFeatureExtractor", phi4_multimodal_feature_extractor_defaults},
};

const vlm_config_family vlm_config_family_phi4_multimodal = {
    .configs = configs,
    .config_count = VLM_COUNT_OF(configs),
    .image_processors = image_processors,
    .image_processor_count = VLM_COUNT_OF(image_processors),
    .feature_extractors = feature_extractors,
    .feature_extractor_count = VLM_COUNT_OF(feature_extractors),
};
