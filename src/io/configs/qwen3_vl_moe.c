/* models/qwen3_vl_moe: Qwen3VLMoeConfig and its text and vision configs. */
#include "io/configs/configs.h"

/* transformers 5.23.0 Qwen3VLMoeConfig() */
static const char qwen3_vl_moe_defaults[] =
    "{\"class\": \"Qwen3VLMoeConfig\",\"model_type\": \"qwen3_vl_moe\","
    "\"sub_configs\": {\"vision_config\": {\"model_type\": \"qwen3_vl_moe_vision\","
    "\"auto\": false},\"text_config\": {\"model_type\": \"qwen3_vl_moe_text\",\"auto\": false}},"
    "\"fields\": {\"image_token_id\": 151655,\"video_token_id\": 151656,"
    "\"vision_start_token_id\": 151652,\"vision_end_token_id\": 151653,"
    "\"tie_word_embeddings\": false}}";

/* transformers 5.23.0 Qwen3VLMoeTextConfig() */
static const char qwen3_vl_moe_text_defaults[] =
    "{\"class\": \"Qwen3VLMoeTextConfig\",\"model_type\": \"qwen3_vl_moe_text\","
    "\"default_theta\": 500000.0,\"attribute_map\": {\"num_experts\": \"num_local_experts\"},"
    "\"fields\": {\"vocab_size\": 151936,\"hidden_size\": 2048,\"intermediate_size\": 5632,"
    "\"num_hidden_layers\": 24,\"num_attention_heads\": 16,\"num_key_value_heads\": 16,"
    "\"hidden_act\": \"silu\",\"max_position_embeddings\": 128000,\"rms_norm_eps\": 1e-06,"
    "\"tie_word_embeddings\": true,\"rope_parameters\": null,\"attention_bias\": false,"
    "\"decoder_sparse_step\": 1,\"moe_intermediate_size\": 1408,\"num_experts_per_tok\": 4,"
    "\"num_experts\": 60,\"mlp_only_layers\": null,\"pad_token_id\": null,\"bos_token_id\": null,"
    "\"eos_token_id\": null,\"head_dim\": null}}";

/* transformers 5.23.0 Qwen3VLMoeVisionConfig() */
static const char qwen3_vl_moe_vision_defaults[] =
    "{\"class\": \"Qwen3VLMoeVisionConfig\",\"model_type\": \"qwen3_vl_moe_vision\","
    "\"default_theta\": 10000.0,\"attribute_map\": {\"num_attention_heads\": \"num_heads\","
    "\"num_hidden_layers\": \"depth\"},\"fields\": {\"depth\": 27,\"hidden_size\": 1152,"
    "\"hidden_act\": \"gelu_pytorch_tanh\",\"intermediate_size\": 4304,\"num_heads\": 16,"
    "\"in_channels\": 3,\"patch_size\": 16,\"spatial_merge_size\": 2,\"temporal_patch_size\": 2,"
    "\"out_hidden_size\": 3584,\"num_position_embeddings\": 2304,"
    "\"deepstack_visual_indexes\": [8, 16, 24],\"rope_parameters\": null}}";

/* The text and vision configs read as Qwen3-VL's (modular: derived). */
static const vlm_config_record configs[] = {
    {.model_type = "qwen3_vl_moe", .defaults = qwen3_vl_moe_defaults, .composite = true,
     .tokenizer_class = "Qwen2Tokenizer"},
    {.model_type = "qwen3_vl_moe_text", .defaults = qwen3_vl_moe_text_defaults, .text = &vlm_qwen3_vl_text_rules},
    {.model_type = "qwen3_vl_moe_vision", .defaults = qwen3_vl_moe_vision_defaults,
     .read_vision = vlm_qwen3_vl_read_vision},
};

const vlm_config_family vlm_config_family_qwen3_vl_moe = {.configs = configs, .config_count = VLM_COUNT_OF(configs)};
