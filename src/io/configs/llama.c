/* models/llama: LlamaConfig. */
#include "io/configs/configs.h"

/* transformers 5.23.0 LlamaConfig() */
static const char llama_defaults[] =
    "{\"class\": \"LlamaConfig\",\"model_type\": \"llama\",\"default_theta\": 10000.0,"
    "\"fields\": {\"vocab_size\": 32000,\"hidden_size\": 4096,\"intermediate_size\": 11008,"
    "\"num_hidden_layers\": 32,\"num_attention_heads\": 32,\"num_key_value_heads\": null,"
    "\"hidden_act\": \"silu\",\"max_position_embeddings\": 2048,\"rms_norm_eps\": 1e-06,"
    "\"pad_token_id\": null,\"bos_token_id\": 1,\"eos_token_id\": 2,"
    "\"tie_word_embeddings\": false,\"rope_parameters\": null,\"attention_bias\": false,"
    "\"mlp_bias\": false,\"head_dim\": null}}";

static const vlm_text_rules llama_text = {.head_dim = VLM_HEAD_DIM_FIELD_OR_DERIVED, .bias = VLM_BIAS_FIELD_ALL};

static const vlm_config_record configs[] = {
    {.model_type = "llama", .defaults = llama_defaults, .text = &llama_text},
};

const vlm_config_family vlm_config_family_llama = {.configs = configs, .config_count = VLM_COUNT_OF(configs)};
