/* models/qwen3_vl: Qwen3VLConfig and its text and vision configs. */
#include "io/configs/configs.h"

/* transformers 5.23.0 Qwen3VLConfig() */
static const char qwen3_vl_defaults[] =
    "{\"class\": \"Qwen3VLConfig\",\"model_type\": \"qwen3_vl\","
    "\"sub_configs\": {\"vision_config\": {\"model_type\": \"qwen3_vl_vision\",\"auto\": false},"
    "\"text_config\": {\"model_type\": \"qwen3_vl_text\",\"auto\": false}},"
    "\"fields\": {\"image_token_id\": 151655,\"video_token_id\": 151656,"
    "\"vision_start_token_id\": 151652,\"vision_end_token_id\": 151653,"
    "\"tie_word_embeddings\": false}}";

/* transformers 5.23.0 Qwen3VLTextConfig() */
static const char qwen3_vl_text_defaults[] =
    "{\"class\": \"Qwen3VLTextConfig\",\"model_type\": \"qwen3_vl_text\","
    "\"default_theta\": 500000.0,\"fields\": {\"vocab_size\": 151936,\"hidden_size\": 4096,"
    "\"intermediate_size\": 22016,\"num_hidden_layers\": 32,\"num_attention_heads\": 32,"
    "\"num_key_value_heads\": 32,\"head_dim\": 128,\"hidden_act\": \"silu\","
    "\"max_position_embeddings\": 128000,\"rms_norm_eps\": 1e-06,\"rope_parameters\": null,"
    "\"attention_bias\": false,\"pad_token_id\": null}}";

/* transformers 5.23.0 Qwen3VLVisionConfig() */
static const char qwen3_vl_vision_defaults[] =
    "{\"class\": \"Qwen3VLVisionConfig\",\"model_type\": \"qwen3_vl_vision\","
    "\"default_theta\": 10000.0,\"attribute_map\": {\"num_attention_heads\": \"num_heads\","
    "\"num_hidden_layers\": \"depth\"},\"fields\": {\"depth\": 27,\"hidden_size\": 1152,"
    "\"hidden_act\": \"gelu_pytorch_tanh\",\"intermediate_size\": 4304,\"num_heads\": 16,"
    "\"in_channels\": 3,\"patch_size\": 16,\"spatial_merge_size\": 2,\"temporal_patch_size\": 2,"
    "\"out_hidden_size\": 3584,\"num_position_embeddings\": 2304,"
    "\"deepstack_visual_indexes\": [8, 16, 24],\"rope_parameters\": null}}";

/* Qwen3VLTextConfig: Qwen3's attention, no sliding layers, and M-RoPE
 * that Qwen3VLTextRotaryEmbedding always interleaves, [24, 20, 20] unless
 * the config says otherwise. */
const vlm_text_rules vlm_qwen3_vl_text_rules = {
    .bias = VLM_BIAS_FIELD_ALL,
    .layers = VLM_LAYERS_ALL_FULL,
    .rope = {.mrope_layout = VLM_MROPE_INTERLEAVED,
             .default_mrope_section = {24, 20, 20},
             .default_mrope_section_count = 3},
};

vlm_status vlm_qwen3_vl_read_vision(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(vlm_qwen_vl_read_patching(section, out));
  VLM_RETURN_IF_ERROR(vlm_config_read_width(section, "hidden_size", &out->hidden_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_width(section, "intermediate_size", &out->intermediate_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_width(section, "out_hidden_size", &out->out_hidden_size));
  VLM_RETURN_IF_ERROR(vlm_qwen_vl_read_heads(section, out));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "num_position_embeddings", 1, 1 << 24,
                                          &out->num_position_embeddings));
  return vlm_config_read_index_list(section, "deepstack_visual_indexes", 0,
                                    out->num_hidden_layers - 1, false,
                                    &out->deepstack_visual_indexes, NULL);
}

static const vlm_config_record configs[] = {
    {.model_type = "qwen3_vl", .defaults = qwen3_vl_defaults, .composite = true, .tokenizer_class = "Qwen2Tokenizer"},
    {.model_type = "qwen3_vl_text", .defaults = qwen3_vl_text_defaults, .text = &vlm_qwen3_vl_text_rules},
    {.model_type = "qwen3_vl_vision", .defaults = qwen3_vl_vision_defaults, .read_vision = vlm_qwen3_vl_read_vision},
};

const vlm_config_family vlm_config_family_qwen3_vl = {.configs = configs, .config_count = VLM_COUNT_OF(configs)};
