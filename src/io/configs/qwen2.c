/* models/qwen2: Qwen2Config. */
#include "io/configs/configs.h"

/* transformers 5.23.0 Qwen2Config() */
static const char qwen2_defaults[] =
    "{\"class\": \"Qwen2Config\",\"model_type\": \"qwen2\",\"default_theta\": 10000.0,"
    "\"fields\": {\"vocab_size\": 151936,\"hidden_size\": 4096,\"intermediate_size\": 22016,"
    "\"num_hidden_layers\": 32,\"num_attention_heads\": 32,\"num_key_value_heads\": 32,"
    "\"hidden_act\": \"silu\",\"max_position_embeddings\": 32768,\"rms_norm_eps\": 1e-06,"
    "\"tie_word_embeddings\": false,\"rope_parameters\": null,\"use_sliding_window\": false,"
    "\"sliding_window\": 4096,\"max_window_layers\": 28,\"layer_types\": null,"
    "\"pad_token_id\": null,\"bos_token_id\": null,\"eos_token_id\": null}}";

static const vlm_text_rules qwen2_text = {.bias = VLM_BIAS_QKV_ALWAYS, .layers = VLM_LAYERS_MAX_WINDOW_LAYERS};

static const vlm_config_record configs[] = {
    {.model_type = "qwen2", .defaults = qwen2_defaults, .text = &qwen2_text,
     .tokenizer_class = "Qwen2Tokenizer", .hub_tokenizer_class_incorrect = true},
};

const vlm_config_family vlm_config_family_qwen2 = {.configs = configs, .config_count = VLM_COUNT_OF(configs)};
