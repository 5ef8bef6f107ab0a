/* models/mistral: MistralConfig. */
#include "io/configs/configs.h"

/* transformers 5.23.0 MistralConfig() */
static const char mistral_defaults[] =
    "{\"class\": \"MistralConfig\",\"model_type\": \"mistral\",\"default_theta\": 10000.0,"
    "\"fields\": {\"vocab_size\": 32000,\"hidden_size\": 4096,\"intermediate_size\": 14336,"
    "\"num_hidden_layers\": 32,\"num_attention_heads\": 32,\"num_key_value_heads\": 8,"
    "\"head_dim\": null,\"hidden_act\": \"silu\",\"max_position_embeddings\": 131072,"
    "\"rms_norm_eps\": 1e-06,\"pad_token_id\": null,\"bos_token_id\": 1,\"eos_token_id\": 2,"
    "\"tie_word_embeddings\": false,\"rope_parameters\": null,\"sliding_window\": 4096}}";

static const vlm_text_rules mistral_text = {.bias = VLM_BIAS_NONE, .layers = VLM_LAYERS_ALL_SLIDING_WHEN_WINDOW};

static const vlm_config_record configs[] = {
    {.model_type = "mistral", .defaults = mistral_defaults, .text = &mistral_text,
     .tokenizer_class = "TokenizersBackend"},
};

const vlm_config_family vlm_config_family_mistral = {.configs = configs, .config_count = VLM_COUNT_OF(configs)};
