/* models/youtu: YoutuConfig (Youtu-LLM's multi-head latent attention). */
#include "io/configs/configs.h"

/* transformers 5.23.0 YoutuConfig() */
static const char youtu_defaults[] =
    "{\"class\": \"YoutuConfig\",\"model_type\": \"youtu\",\"default_theta\": 10000.0,"
    "\"fields\": {\"vocab_size\": 128256,\"hidden_size\": 2048,\"intermediate_size\": 6144,"
    "\"num_hidden_layers\": 32,\"num_attention_heads\": 16,\"num_key_value_heads\": 16,"
    "\"kv_lora_rank\": 512,\"q_lora_rank\": 1536,\"qk_rope_head_dim\": 64,\"v_head_dim\": 128,"
    "\"qk_nope_head_dim\": 128,\"hidden_act\": \"silu\",\"max_position_embeddings\": 131072,"
    "\"rms_norm_eps\": 1e-06,\"pad_token_id\": null,\"bos_token_id\": 128000,"
    "\"eos_token_id\": 128001,\"tie_word_embeddings\": true,\"rope_parameters\": null,"
    "\"rope_interleave\": true,\"attention_bias\": false}}";

/* YoutuConfig.__post_init__ sets head_dim to qk_rope_head_dim (what the
 * rotary embedding is sized by); the attention's own sizes and scaling
 * are the family's (models). attention_bias is on q_a_proj and
 * kv_a_proj_with_mqa only, which the family reads itself. */
static const vlm_text_rules youtu_text = {.head_dim = VLM_HEAD_DIM_ROPE_DIMS, .bias = VLM_BIAS_NONE};

static const vlm_config_record configs[] = {
    {.model_type = "youtu", .defaults = youtu_defaults, .text = &youtu_text},
};

const vlm_config_family vlm_config_family_youtu = {.configs = configs, .config_count = VLM_COUNT_OF(configs)};
