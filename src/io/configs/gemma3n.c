/* models/gemma3n: Gemma3nConfig and its text, vision and audio configs. */
#include "io/configs/configs.h"

/* transformers 5.23.0 Gemma3nConfig() */
static const char gemma3n_defaults[] =
    "{\"class\": \"Gemma3nConfig\",\"model_type\": \"gemma3n\","
    "\"sub_configs\": {\"text_config\": {\"model_type\": \"gemma3n_text\",\"auto\": false},"
    "\"vision_config\": {\"model_type\": \"gemma3n_vision\",\"auto\": false},"
    "\"audio_config\": {\"model_type\": \"gemma3n_audio\",\"auto\": false}},"
    "\"fields\": {\"audio_soft_tokens_per_image\": 188,\"vision_soft_tokens_per_image\": 256,"
    "\"boi_token_id\": 255999,\"eoi_token_id\": 262144,\"image_token_id\": 262145,"
    "\"boa_token_id\": 256000,\"eoa_token_id\": 262272,\"audio_token_id\": 262273,"
    "\"tie_word_embeddings\": true}}";

/* transformers 5.23.0 Gemma3nTextConfig() */
static const char gemma3n_text_defaults[] =
    "{\"class\": \"Gemma3nTextConfig\",\"model_type\": \"gemma3n_text\","
    "\"default_theta\": {\"global\": 1000000.0,\"local\": 10000.0},"
    "\"fields\": {\"vocab_size\": 262400,\"hidden_size\": 2048,\"intermediate_size\": 16384,"
    "\"num_hidden_layers\": 35,\"num_attention_heads\": 8,\"num_key_value_heads\": 2,"
    "\"head_dim\": 256,\"hidden_activation\": \"gelu_pytorch_tanh\","
    "\"max_position_embeddings\": 32768,\"rms_norm_eps\": 1e-06,\"pad_token_id\": 0,"
    "\"eos_token_id\": 1,\"bos_token_id\": 2,\"tie_word_embeddings\": true,"
    "\"rope_parameters\": null,\"attention_bias\": false,\"sliding_window\": 512,"
    "\"layer_types\": null,\"final_logit_softcapping\": 30.0,"
    "\"vocab_size_per_layer_input\": 262144,\"hidden_size_per_layer_input\": 256,"
    "\"altup_active_idx\": 0,\"altup_coef_clip\": 120.0,\"altup_correct_scale\": true,"
    "\"altup_num_inputs\": 4,\"num_kv_shared_layers\": 15,\"laurel_rank\": 64,"
    "\"activation_sparsity_pattern\": null}}";

/* transformers 5.23.0 Gemma3nVisionConfig() */
static const char gemma3n_vision_defaults[] =
    "{\"class\": \"Gemma3nVisionConfig\",\"model_type\": \"gemma3n_vision\","
    "\"fields\": {\"architecture\": \"mobilenetv5_300m_enc\",\"do_pooling\": false,"
    "\"model_args\": null,\"hidden_size\": 2048,\"vocab_size\": 128,\"vocab_offset\": 262144,"
    "\"rms_norm_eps\": 1e-06}}";

/* transformers 5.23.0 Gemma3nAudioConfig() */
static const char gemma3n_audio_defaults[] =
    "{\"class\": \"Gemma3nAudioConfig\",\"model_type\": \"gemma3n_audio\","
    "\"fields\": {\"vocab_size\": 128,\"vocab_offset\": 262272,\"input_feat_size\": 128,"
    "\"hidden_size\": 1536,\"rms_norm_eps\": 1e-06,\"conf_attention_chunk_size\": 12,"
    "\"conf_attention_context_left\": 13,\"conf_attention_context_right\": 0,"
    "\"conf_attention_logit_cap\": 50.0,\"conf_num_attention_heads\": 8,"
    "\"conf_num_hidden_layers\": 12,\"conf_conv_kernel_size\": 5,\"conf_reduction_factor\": 4,"
    "\"conf_residual_weight\": 0.5,\"sscp_conv_channel_size\": [128, 32],"
    "\"sscp_conv_group_norm_eps\": 0.001,\"sscp_conv_kernel_size\": [[3, 3], [3, 3]],"
    "\"sscp_conv_stride_size\": [[2, 2], [2, 2]]}}";

/* Gemma3nTextConfig: every 5th layer full, q.k unscaled (q and k are
 * RMS-normed), an MLP width per layer, RoPE per layer type. */
static const vlm_text_rules gemma3n_text = {
    .bias = VLM_BIAS_FIELD_ALL,
    .layers = VLM_LAYERS_PERIODIC_FULL,
    .full_layer_period = 5,
    .scale = VLM_SCALE_ONE,
    .per_layer_intermediate_size = true,
    .rope = {.per_layer_type = true},
};

/* Gemma3nVisionConfig is a timm MobileNet-V5 whose shape lives in timm's
 * architecture table; the config only gives the output width. */
static vlm_status read_gemma3n_vision(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_width(section, "hidden_size", &out->hidden_size));
  return vlm_config_read_eps(section, "rms_norm_eps", &out->layer_norm_eps);
}

/* Gemma3nAudioConfig (USM conformer): the feed-forward is hidden_size * 4,
 * fixed in Gemma3nAudioConformerFeedForward. */
static vlm_status read_gemma3n_audio(const vlm_config_section *section, vlm_audio_config *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_width(section, "hidden_size", &out->hidden_size));
  out->intermediate_size = out->hidden_size * 4;
  VLM_RETURN_IF_ERROR(vlm_config_read_layers(section, "conf_num_hidden_layers", &out->num_hidden_layers));
  VLM_RETURN_IF_ERROR(vlm_config_read_heads(section, "conf_num_attention_heads", out->hidden_size,
                                 &out->num_attention_heads));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "input_feat_size", 1, 4096,
                                          &out->input_feature_size));
  return vlm_config_read_eps(section, "rms_norm_eps", &out->norm_eps);
}

static const vlm_config_record configs[] = {
    {.model_type = "gemma3n", .defaults = gemma3n_defaults, .composite = true, .tokenizer_class = "GemmaTokenizer"},
    {.model_type = "gemma3n_text", .defaults = gemma3n_text_defaults, .text = &gemma3n_text,
     .tokenizer_class = "GemmaTokenizer"},
    {.model_type = "gemma3n_vision", .defaults = gemma3n_vision_defaults, .read_vision = read_gemma3n_vision},
    {.model_type = "gemma3n_audio", .defaults = gemma3n_audio_defaults, .read_audio = read_gemma3n_audio},
};

const vlm_config_family vlm_config_family_gemma3n = {.configs = configs, .config_count = VLM_COUNT_OF(configs)};
