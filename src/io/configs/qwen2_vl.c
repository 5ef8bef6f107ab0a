/* models/qwen2_vl: Qwen2VLConfig, its text and vision configs, and Qwen2VLImageProcessor. */
#include "io/configs/configs.h"

/* transformers 5.23.0 Qwen2VLConfig() */
static const char qwen2_vl_defaults[] =
    "{\"class\": \"Qwen2VLConfig\",\"model_type\": \"qwen2_vl\","
    "\"sub_configs\": {\"vision_config\": {\"model_type\": \"qwen2_vl_vision\",\"auto\": false},"
    "\"text_config\": {\"model_type\": \"qwen2_vl_text\",\"auto\": false}},"
    "\"fields\": {\"image_token_id\": 151655,\"video_token_id\": 151656,"
    "\"vision_start_token_id\": 151652,\"vision_end_token_id\": 151653,"
    "\"tie_word_embeddings\": false}}";

/* transformers 5.23.0 Qwen2VLTextConfig() */
static const char qwen2_vl_text_defaults[] =
    "{\"class\": \"Qwen2VLTextConfig\",\"model_type\": \"qwen2_vl_text\","
    "\"default_theta\": 1000000.0,\"fields\": {\"vocab_size\": 152064,\"hidden_size\": 8192,"
    "\"intermediate_size\": 29568,\"num_hidden_layers\": 80,\"num_attention_heads\": 64,"
    "\"num_key_value_heads\": 8,\"hidden_act\": \"silu\",\"max_position_embeddings\": 32768,"
    "\"rms_norm_eps\": 1e-05,\"use_sliding_window\": false,\"sliding_window\": 4096,"
    "\"max_window_layers\": 80,\"layer_types\": null,\"rope_parameters\": null,"
    "\"bos_token_id\": 151643,\"eos_token_id\": 151645,\"pad_token_id\": null}}";

/* transformers 5.23.0 Qwen2VLVisionConfig() */
static const char qwen2_vl_vision_defaults[] =
    "{\"class\": \"Qwen2VLVisionConfig\",\"model_type\": \"qwen2_vl_vision\","
    "\"default_theta\": 10000.0,\"attribute_map\": {\"num_attention_heads\": \"num_heads\","
    "\"num_hidden_layers\": \"depth\"},\"fields\": {\"depth\": 32,\"embed_dim\": 1280,"
    "\"hidden_size\": 3584,\"hidden_act\": \"quick_gelu\",\"mlp_ratio\": 4,\"num_heads\": 16,"
    "\"in_channels\": 3,\"patch_size\": 14,\"spatial_merge_size\": 2,\"temporal_patch_size\": 2,"
    "\"rope_parameters\": null}}";

/* transformers 5.23.0 Qwen2VLImageProcessor (models/qwen2_vl/image_processing_qwen2_vl.py) */
static const char qwen2_vl_image_processor_defaults[] =
    "{\"class\": \"Qwen2VLImageProcessor\","
    "\"fields\": {\"do_convert_rgb\": true,\"do_resize\": true,"
    "\"size\": {\"shortest_edge\": 3136, \"longest_edge\": 1003520},"
    "\"default_to_square\": false,\"crop_size\": null,\"resample\": 3,"
    "\"do_rescale\": true,\"rescale_factor\": 0.00392156862745098,\"do_normalize\": true,"
    "\"image_mean\": [0.48145466, 0.4578275, 0.40821073],"
    "\"image_std\": [0.26862954, 0.26130258, 0.27577711],\"do_center_crop\": null,"
    "\"patch_size\": 14,\"temporal_patch_size\": 2,\"merge_size\": 2,"
    "\"min_pixels\": null,\"max_pixels\": null}}";

/* Qwen2VLTextConfig: Qwen2's biases and sliding layers, heads sized from
 * hidden_size alone, and its RoPE converter: the legacy "mrope" type is
 * plain RoPE whose sections come from mrope_section, laid out contiguously. */
const vlm_text_rules vlm_qwen2_vl_text_rules = {
    .head_dim = VLM_HEAD_DIM_ALWAYS_DERIVED,
    .bias = VLM_BIAS_QKV_ALWAYS,
    .layers = VLM_LAYERS_MAX_WINDOW_LAYERS,
    .rope = {.ignores_partial_rotary_factor = true,
             .aliases = {{"mrope", "default", false}},
             .mrope_layout = VLM_MROPE_CONTIGUOUS},
};

/* The Qwen patch embedder and merger. Their norms use eps=1e-6 fixed in the
 * modeling code (Qwen2VLVisionBlock, Qwen2_5_VLVisionBlock,
 * Qwen3VLVisionBlock), and qkv has a bias. */
vlm_status vlm_qwen_vl_read_patching(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "in_channels", 1, 64, &out->num_channels));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "patch_size", 1, 1024, &out->patch_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "spatial_merge_size", 1, 64,
                                          &out->spatial_merge_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "temporal_patch_size", 1, 64,
                                          &out->temporal_patch_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_layers(section, "depth", &out->num_hidden_layers));
  VLM_RETURN_IF_ERROR(vlm_config_read_activation(section, "hidden_act", &out->hidden_act));
  out->layer_norm_eps = 1e-6;
  out->attention_bias = true;
  return VLM_OK;
}

vlm_status vlm_qwen_vl_read_heads(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_heads(section, "num_heads", out->hidden_size, &out->num_attention_heads));
  out->num_key_value_heads = out->num_attention_heads;
  out->head_dim = out->hidden_size / out->num_attention_heads;
  return VLM_OK;
}

/* Qwen2VLVisionConfig: embed_dim is the encoder width, hidden_size the
 * merger's output (the LLM width), and the MLP is embed_dim * mlp_ratio. */
static vlm_status read_qwen2_vl_vision(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(vlm_qwen_vl_read_patching(section, out));
  VLM_RETURN_IF_ERROR(vlm_config_read_width(section, "embed_dim", &out->hidden_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_width(section, "hidden_size", &out->out_hidden_size));
  int64_t mlp_ratio = 0;
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "mlp_ratio", 1, 64, &mlp_ratio));
  out->intermediate_size = out->hidden_size * mlp_ratio;
  return vlm_qwen_vl_read_heads(section, out);
}

static const vlm_config_record configs[] = {
    {.model_type = "qwen2_vl", .defaults = qwen2_vl_defaults, .composite = true, .flat_text_fallback = true,
     .tie_from_text = true, .tokenizer_class = "Qwen2Tokenizer"},
    {.model_type = "qwen2_vl_text", .defaults = qwen2_vl_text_defaults, .text = &vlm_qwen2_vl_text_rules},
    {.model_type = "qwen2_vl_vision", .defaults = qwen2_vl_vision_defaults, .read_vision = read_qwen2_vl_vision},
};

static const vlm_class_defaults image_processors[] = {
    {"Qwen2VLImageProcessor", qwen2_vl_image_processor_defaults},
};

const vlm_config_family vlm_config_family_qwen2_vl = {
    .configs = configs,
    .config_count = VLM_COUNT_OF(configs),
    .image_processors = image_processors,
    .image_processor_count = VLM_COUNT_OF(image_processors),
};
