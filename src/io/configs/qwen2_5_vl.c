/* models/qwen2_5_vl: Qwen2_5_VLConfig and its text and vision configs. */
#include "io/configs/configs.h"

/* transformers 5.23.0 Qwen2_5_VLConfig() */
static const char qwen2_5_vl_defaults[] =
    "{\"class\": \"Qwen2_5_VLConfig\",\"model_type\": \"qwen2_5_vl\","
    "\"sub_configs\": {\"vision_config\": {\"model_type\": \"qwen2_5_vl_vision\",\"auto\": false},"
    "\"text_config\": {\"model_type\": \"qwen2_5_vl_text\",\"auto\": false}},"
    "\"fields\": {\"image_token_id\": 151655,\"video_token_id\": 151656,"
    "\"vision_start_token_id\": 151652,\"vision_end_token_id\": 151653,"
    "\"tie_word_embeddings\": false}}";

/* transformers 5.23.0 Qwen2_5_VLTextConfig() */
static const char qwen2_5_vl_text_defaults[] =
    "{\"class\": \"Qwen2_5_VLTextConfig\",\"model_type\": \"qwen2_5_vl_text\","
    "\"default_theta\": 1000000.0,\"fields\": {\"vocab_size\": 152064,\"hidden_size\": 8192,"
    "\"intermediate_size\": 29568,\"num_hidden_layers\": 80,\"num_attention_heads\": 64,"
    "\"num_key_value_heads\": 8,\"hidden_act\": \"silu\",\"max_position_embeddings\": 32768,"
    "\"rms_norm_eps\": 1e-05,\"use_sliding_window\": false,\"sliding_window\": 4096,"
    "\"max_window_layers\": 80,\"layer_types\": null,\"rope_parameters\": null,"
    "\"bos_token_id\": 151643,\"eos_token_id\": 151645,\"pad_token_id\": null}}";

/* transformers 5.23.0 Qwen2_5_VLVisionConfig() */
static const char qwen2_5_vl_vision_defaults[] =
    "{\"class\": \"Qwen2_5_VLVisionConfig\",\"model_type\": \"qwen2_5_vl_vision\","
    "\"default_theta\": 10000.0,\"attribute_map\": {\"num_attention_heads\": \"num_heads\","
    "\"num_hidden_layers\": \"depth\"},\"fields\": {\"depth\": 32,\"hidden_size\": 3584,"
    "\"hidden_act\": \"silu\",\"intermediate_size\": 3420,\"num_heads\": 16,\"in_channels\": 3,"
    "\"patch_size\": 14,\"spatial_merge_size\": 2,\"temporal_patch_size\": 2,"
    "\"tokens_per_second\": 4,\"window_size\": 112,\"out_hidden_size\": 3584,"
    "\"fullatt_block_indexes\": [7, 15, 23, 31],\"rope_parameters\": null}}";

static vlm_status read_qwen2_5_vl_vision(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(vlm_qwen_vl_read_patching(section, out));
  VLM_RETURN_IF_ERROR(vlm_config_read_width(section, "hidden_size", &out->hidden_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_width(section, "intermediate_size", &out->intermediate_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_width(section, "out_hidden_size", &out->out_hidden_size));
  VLM_RETURN_IF_ERROR(vlm_qwen_vl_read_heads(section, out));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "window_size", 1, VLM_CONFIG_MAX_IMAGE_SIZE,
                                          &out->window_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "tokens_per_second", 0, 1 << 20,
                                          &out->tokens_per_second));
  return vlm_config_read_index_list(section, "fullatt_block_indexes", 0,
                                    out->num_hidden_layers - 1, false,
                                    &out->fullatt_block_indexes, NULL);
}

/* Qwen2_5_VLTextConfig reads as Qwen2VLTextConfig (modular: a copy). */
static const vlm_config_record configs[] = {
    {.model_type = "qwen2_5_vl", .defaults = qwen2_5_vl_defaults, .composite = true, .flat_text_fallback = true,
     .tie_from_text = true, .tokenizer_class = "Qwen2Tokenizer"},
    {.model_type = "qwen2_5_vl_text", .defaults = qwen2_5_vl_text_defaults, .text = &vlm_qwen2_vl_text_rules},
    {.model_type = "qwen2_5_vl_vision", .defaults = qwen2_5_vl_vision_defaults,
     .read_vision = read_qwen2_5_vl_vision},
};

const vlm_config_family vlm_config_family_qwen2_5_vl = {.configs = configs, .config_count = VLM_COUNT_OF(configs)};
