/* Transformers' class defaults, kept as data.
 *
 * Each table describes one Transformers 5.23.0 configuration or processor
 * class as a JSON object:
 *   "class"          the Python class the values were read from;
 *   "model_type"     its model_type;
 *   "fields"         the defaults of its dataclass fields that matter for
 *                    inference (initializer_range, dropouts, use_cache, the
 *                    output_* flags and id2label are left out). A field whose
 *                    Transformers default is None stays null here even when
 *                    the class derives a value for it in __post_init__
 *                    (head_dim, num_key_value_heads, layer_types,
 *                    rope_parameters): deriving is code, in config_text.c;
 *   "default_theta"  the class attribute RoPE falls back to without a
 *                    rope_theta (only on classes with a rope_parameters field);
 *   "attribute_map"  the class's key aliases (the alias sets the real field);
 *   "legacy_keys"    keys its __post_init__ renames (legacy remote-code names);
 *   "sub_configs"    its sub_configs_defaults: the class (model_type) each
 *                    nested section resolves to, whether the file's own
 *                    model_type may choose it (AutoConfig), and the
 *                    init_kwargs used only when the section is absent.
 * The values were produced from the classes themselves, never typed in, so a
 * test can cross-check every table against Transformers. */
#include <string.h>

#include "io/config.h"

typedef struct vlm_defaults_entry {
  const char *name;
  const char *json;
} vlm_defaults_entry;

#define COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

/* transformers 5.23.0 LlamaConfig() */
static const char llama_defaults[] =
    "{\"class\": \"LlamaConfig\",\"model_type\": \"llama\",\"default_theta\": 10000.0,"
    "\"fields\": {\"vocab_size\": 32000,\"hidden_size\": 4096,\"intermediate_size\": 11008,"
    "\"num_hidden_layers\": 32,\"num_attention_heads\": 32,\"num_key_value_heads\": null,"
    "\"hidden_act\": \"silu\",\"max_position_embeddings\": 2048,\"rms_norm_eps\": 1e-06,"
    "\"pad_token_id\": null,\"bos_token_id\": 1,\"eos_token_id\": 2,"
    "\"tie_word_embeddings\": false,\"rope_parameters\": null,\"attention_bias\": false,"
    "\"mlp_bias\": false,\"head_dim\": null}}";

/* transformers 5.23.0 MistralConfig() */
static const char mistral_defaults[] =
    "{\"class\": \"MistralConfig\",\"model_type\": \"mistral\",\"default_theta\": 10000.0,"
    "\"fields\": {\"vocab_size\": 32000,\"hidden_size\": 4096,\"intermediate_size\": 14336,"
    "\"num_hidden_layers\": 32,\"num_attention_heads\": 32,\"num_key_value_heads\": 8,"
    "\"head_dim\": null,\"hidden_act\": \"silu\",\"max_position_embeddings\": 131072,"
    "\"rms_norm_eps\": 1e-06,\"pad_token_id\": null,\"bos_token_id\": 1,\"eos_token_id\": 2,"
    "\"tie_word_embeddings\": false,\"rope_parameters\": null,\"sliding_window\": 4096}}";

/* transformers 5.23.0 Qwen2Config() */
static const char qwen2_defaults[] =
    "{\"class\": \"Qwen2Config\",\"model_type\": \"qwen2\",\"default_theta\": 10000.0,"
    "\"fields\": {\"vocab_size\": 151936,\"hidden_size\": 4096,\"intermediate_size\": 22016,"
    "\"num_hidden_layers\": 32,\"num_attention_heads\": 32,\"num_key_value_heads\": 32,"
    "\"hidden_act\": \"silu\",\"max_position_embeddings\": 32768,\"rms_norm_eps\": 1e-06,"
    "\"tie_word_embeddings\": false,\"rope_parameters\": null,\"use_sliding_window\": false,"
    "\"sliding_window\": 4096,\"max_window_layers\": 28,\"layer_types\": null,"
    "\"pad_token_id\": null,\"bos_token_id\": null,\"eos_token_id\": null}}";

/* transformers 5.23.0 Qwen3Config() */
static const char qwen3_defaults[] =
    "{\"class\": \"Qwen3Config\",\"model_type\": \"qwen3\",\"default_theta\": 10000.0,"
    "\"fields\": {\"vocab_size\": 151936,\"hidden_size\": 4096,\"intermediate_size\": 22016,"
    "\"num_hidden_layers\": 32,\"num_attention_heads\": 32,\"num_key_value_heads\": 32,"
    "\"head_dim\": 128,\"hidden_act\": \"silu\",\"max_position_embeddings\": 32768,"
    "\"rms_norm_eps\": 1e-06,\"tie_word_embeddings\": false,\"rope_parameters\": null,"
    "\"attention_bias\": false,\"use_sliding_window\": false,\"sliding_window\": 4096,"
    "\"max_window_layers\": 28,\"layer_types\": null,\"pad_token_id\": null,"
    "\"bos_token_id\": null,\"eos_token_id\": null}}";

/* transformers 5.23.0 CLIPVisionConfig() */
static const char clip_vision_model_defaults[] =
    "{\"class\": \"CLIPVisionConfig\",\"model_type\": \"clip_vision_model\","
    "\"fields\": {\"hidden_size\": 768,\"intermediate_size\": 3072,\"projection_dim\": 512,"
    "\"num_hidden_layers\": 12,\"num_attention_heads\": 12,\"num_channels\": 3,"
    "\"image_size\": 224,\"patch_size\": 32,\"hidden_act\": \"quick_gelu\","
    "\"layer_norm_eps\": 1e-05}}";

/* transformers 5.23.0 SiglipVisionConfig() */
static const char siglip_vision_model_defaults[] =
    "{\"class\": \"SiglipVisionConfig\",\"model_type\": \"siglip_vision_model\","
    "\"fields\": {\"hidden_size\": 768,\"intermediate_size\": 3072,\"num_hidden_layers\": 12,"
    "\"num_attention_heads\": 12,\"num_channels\": 3,\"image_size\": 224,\"patch_size\": 16,"
    "\"hidden_act\": \"gelu_pytorch_tanh\",\"layer_norm_eps\": 1e-06,\"vision_use_head\": true}}";

/* transformers 5.23.0 LlavaConfig() */
static const char llava_defaults[] =
    "{\"class\": \"LlavaConfig\",\"model_type\": \"llava\","
    "\"attribute_map\": {\"image_token_id\": \"image_token_index\"},"
    "\"sub_configs\": {\"vision_config\": {\"model_type\": \"clip_vision_model\",\"auto\": true,"
    "\"init_kwargs\": {\"intermediate_size\": 4096,\"hidden_size\": 1024,\"patch_size\": 14,"
    "\"image_size\": 336,\"num_hidden_layers\": 24,\"num_attention_heads\": 16}},"
    "\"text_config\": {\"model_type\": \"llama\",\"auto\": true}},"
    "\"fields\": {\"image_token_index\": 32000,\"image_seq_length\": 576,"
    "\"projector_hidden_act\": \"gelu\",\"vision_feature_select_strategy\": \"default\","
    "\"vision_feature_layer\": -2,\"multimodal_projector_bias\": true,"
    "\"tie_word_embeddings\": false}}";

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

/* transformers 5.23.0 Gemma3Config() */
static const char gemma3_defaults[] =
    "{\"class\": \"Gemma3Config\",\"model_type\": \"gemma3\","
    "\"attribute_map\": {\"image_token_id\": \"image_token_index\","
    "\"boi_token_id\": \"boi_token_index\",\"eoi_token_id\": \"eoi_token_index\"},"
    "\"sub_configs\": {\"text_config\": {\"model_type\": \"gemma3_text\",\"auto\": false},"
    "\"vision_config\": {\"model_type\": \"siglip_vision_model\",\"auto\": true}},"
    "\"fields\": {\"mm_tokens_per_image\": 256,\"boi_token_index\": 255999,"
    "\"eoi_token_index\": 256000,\"image_token_index\": 262144,\"tie_word_embeddings\": true}}";

/* transformers 5.23.0 Gemma3TextConfig() */
static const char gemma3_text_defaults[] =
    "{\"class\": \"Gemma3TextConfig\",\"model_type\": \"gemma3_text\","
    "\"default_theta\": {\"global\": 1000000.0,\"local\": 10000.0},"
    "\"fields\": {\"vocab_size\": 262208,\"hidden_size\": 2304,\"intermediate_size\": 9216,"
    "\"num_hidden_layers\": 26,\"num_attention_heads\": 8,\"num_key_value_heads\": 4,"
    "\"head_dim\": 256,\"hidden_activation\": \"gelu_pytorch_tanh\","
    "\"max_position_embeddings\": 131072,\"rms_norm_eps\": 1e-06,\"pad_token_id\": 0,"
    "\"eos_token_id\": 1,\"bos_token_id\": 2,\"tie_word_embeddings\": true,"
    "\"rope_parameters\": null,\"attention_bias\": false,\"query_pre_attn_scalar\": 256,"
    "\"sliding_window\": 4096,\"layer_types\": null,\"final_logit_softcapping\": null,"
    "\"attn_logit_softcapping\": null,\"use_bidirectional_attention\": false}}";

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

/* transformers 5.23.0 Molmo2Config() */
static const char molmo2_defaults[] =
    "{\"class\": \"Molmo2Config\",\"model_type\": \"molmo2\","
    "\"attribute_map\": {\"image_token_id\": \"image_patch_id\","
    "\"video_token_id\": \"image_patch_id\"},"
    "\"sub_configs\": {\"text_config\": {\"model_type\": \"molmo2_text\",\"auto\": false},"
    "\"vision_config\": {\"model_type\": \"molmo2_vision\",\"auto\": false},"
    "\"adapter_config\": {\"model_type\": \"molmo2_adapter\",\"auto\": false}},"
    "\"fields\": {\"image_start_token_id\": 151936,\"low_res_image_start_token_id\": 151940,"
    "\"image_end_token_id\": 151937,\"image_patch_id\": 151938,"
    "\"frame_start_token_id\": 151943,\"frame_end_token_id\": 151944,"
    "\"tie_word_embeddings\": false}}";

/* transformers 5.23.0 Molmo2TextConfig() */
static const char molmo2_text_defaults[] =
    "{\"class\": \"Molmo2TextConfig\",\"model_type\": \"molmo2_text\",\"default_theta\": 10000.0,"
    "\"attribute_map\": {\"qkv_bias\": \"attention_bias\",\"layer_norm_eps\": \"rms_norm_eps\"},"
    "\"fields\": {\"hidden_size\": 4096,\"num_attention_heads\": 32,\"num_key_value_heads\": 8,"
    "\"head_dim\": 128,\"vocab_size\": 151936,\"additional_vocab_size\": 128,"
    "\"attention_bias\": false,\"qk_norm_type\": \"qwen3\",\"num_hidden_layers\": 36,"
    "\"intermediate_size\": 12288,\"hidden_act\": \"silu\",\"max_position_embeddings\": 36864,"
    "\"rope_parameters\": null,\"rope_scaling_layers\": null,\"rms_norm_eps\": 1e-06,"
    "\"norm_after\": false,\"tie_word_embeddings\": false}}";

/* transformers 5.23.0 Molmo2VisionConfig() */
static const char molmo2_vision_defaults[] =
    "{\"class\": \"Molmo2VisionConfig\",\"model_type\": \"molmo2_vision\","
    "\"legacy_keys\": {\"image_default_input_size\": \"image_size\","
    "\"image_patch_size\": \"patch_size\",\"image_num_pos\": \"num_position_embeddings\"},"
    "\"fields\": {\"hidden_size\": 1152,\"intermediate_size\": 4304,\"num_hidden_layers\": 25,"
    "\"num_attention_heads\": 16,\"num_key_value_heads\": 16,\"head_dim\": 72,"
    "\"hidden_act\": \"gelu_pytorch_tanh\",\"layer_norm_eps\": 1e-06,\"image_size\": null,"
    "\"patch_size\": 14,\"num_position_embeddings\": null,\"num_channels\": 3,"
    "\"attention_bias\": true}}";

/* transformers 5.23.0 Molmo2AdapterConfig() */
static const char molmo2_adapter_defaults[] =
    "{\"class\": \"Molmo2AdapterConfig\",\"model_type\": \"molmo2_adapter\","
    "\"legacy_keys\": {\"vit_layers\": \"vision_feature_layer\"},"
    "\"fields\": {\"vision_feature_layer\": null,\"hidden_size\": 1152,"
    "\"num_attention_heads\": 16,\"num_key_value_heads\": 16,\"head_dim\": 72,"
    "\"attention_bias\": true,\"hidden_act\": \"silu\",\"intermediate_size\": 18944,"
    "\"text_hidden_size\": 3584,\"mlp_bias\": false}}";

static const vlm_defaults_entry model_defaults[] = {
    {"llama", llama_defaults},
    {"mistral", mistral_defaults},
    {"qwen2", qwen2_defaults},
    {"qwen3", qwen3_defaults},
    {"clip_vision_model", clip_vision_model_defaults},
    {"siglip_vision_model", siglip_vision_model_defaults},
    {"llava", llava_defaults},
    {"qwen2_vl", qwen2_vl_defaults},
    {"qwen2_vl_text", qwen2_vl_text_defaults},
    {"qwen2_vl_vision", qwen2_vl_vision_defaults},
    {"qwen2_5_vl", qwen2_5_vl_defaults},
    {"qwen2_5_vl_text", qwen2_5_vl_text_defaults},
    {"qwen2_5_vl_vision", qwen2_5_vl_vision_defaults},
    {"qwen3_vl", qwen3_vl_defaults},
    {"qwen3_vl_text", qwen3_vl_text_defaults},
    {"qwen3_vl_vision", qwen3_vl_vision_defaults},
    {"qwen3_vl_moe", qwen3_vl_moe_defaults},
    {"qwen3_vl_moe_text", qwen3_vl_moe_text_defaults},
    {"qwen3_vl_moe_vision", qwen3_vl_moe_vision_defaults},
    {"gemma3", gemma3_defaults},
    {"gemma3_text", gemma3_text_defaults},
    {"gemma3n", gemma3n_defaults},
    {"gemma3n_text", gemma3n_text_defaults},
    {"gemma3n_vision", gemma3n_vision_defaults},
    {"gemma3n_audio", gemma3n_audio_defaults},
    {"phi4_multimodal", phi4_multimodal_defaults},
    {"phi4_multimodal_vision", phi4_multimodal_vision_defaults},
    {"phi4_multimodal_audio", phi4_multimodal_audio_defaults},
    {"molmo2", molmo2_defaults},
    {"molmo2_text", molmo2_text_defaults},
    {"molmo2_vision", molmo2_vision_defaults},
    {"molmo2_adapter", molmo2_adapter_defaults},
};

/* Image processor classes. Transformers 5 keeps the defaults as class
 * attributes (shared by the torchvision and PIL backends); a key the class
 * leaves unset falls back to BaseImageProcessor (rescale_factor 1/255,
 * default_to_square true) or to None. A file value of null also means "class
 * default" here, unlike in config.json: _set_attributes ignores None. The
 * Qwen2-VL min_pixels/max_pixels are __init__ arguments folded into size. */

/* transformers 5.23.0 CLIPImageProcessor (models/clip/image_processing_clip.py) */
static const char clip_image_processor_defaults[] =
    "{\"class\": \"CLIPImageProcessor\","
    "\"fields\": {\"do_convert_rgb\": true,\"do_resize\": true,"
    "\"size\": {\"shortest_edge\": 224},\"default_to_square\": false,"
    "\"crop_size\": {\"height\": 224, \"width\": 224},\"resample\": 3,"
    "\"do_rescale\": true,\"rescale_factor\": 0.00392156862745098,\"do_normalize\": true,"
    "\"image_mean\": [0.48145466, 0.4578275, 0.40821073],"
    "\"image_std\": [0.26862954, 0.26130258, 0.27577711],\"do_center_crop\": true}}";

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

/* transformers 5.23.0 Gemma3ImageProcessor (models/gemma3/image_processing_gemma3.py) */
static const char gemma3_image_processor_defaults[] =
    "{\"class\": \"Gemma3ImageProcessor\","
    "\"fields\": {\"do_convert_rgb\": true,\"do_resize\": true,"
    "\"size\": {\"height\": 224, \"width\": 224},\"default_to_square\": true,"
    "\"crop_size\": null,\"resample\": 2,"
    "\"do_rescale\": true,\"rescale_factor\": 0.00392156862745098,\"do_normalize\": true,"
    "\"image_mean\": [0.5, 0.5, 0.5],\"image_std\": [0.5, 0.5, 0.5],\"do_center_crop\": null,"
    "\"do_pan_and_scan\": null,\"pan_and_scan_min_crop_size\": null,"
    "\"pan_and_scan_max_num_crops\": null,\"pan_and_scan_min_ratio_to_activate\": null}}";

/* transformers 5.23.0 SiglipImageProcessor (models/siglip/image_processing_siglip.py) */
static const char siglip_image_processor_defaults[] =
    "{\"class\": \"SiglipImageProcessor\","
    "\"fields\": {\"do_convert_rgb\": true,\"do_resize\": true,"
    "\"size\": {\"height\": 224, \"width\": 224},\"default_to_square\": false,"
    "\"crop_size\": null,\"resample\": 3,"
    "\"do_rescale\": true,\"rescale_factor\": 0.00392156862745098,\"do_normalize\": true,"
    "\"image_mean\": [0.5, 0.5, 0.5],\"image_std\": [0.5, 0.5, 0.5],\"do_center_crop\": null}}";

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

static const vlm_defaults_entry image_processor_defaults[] = {
    {"CLIPImageProcessor", clip_image_processor_defaults},
    {"Qwen2VLImageProcessor", qwen2_vl_image_processor_defaults},
    {"Gemma3ImageProcessor", gemma3_image_processor_defaults},
    {"SiglipImageProcessor", siglip_image_processor_defaults},
    {"Phi4MultimodalImageProcessor", phi4_multimodal_image_processor_defaults},
};

/* Processor classes: the __init__ defaults of the processor-level values
 * read from processor_config.json. */

/* transformers 5.23.0 LlavaProcessor.__init__ (models/llava/processing_llava.py) */
static const char llava_processor_defaults[] =
    "{\"class\": \"LlavaProcessor\","
    "\"fields\": {\"patch_size\": null,\"vision_feature_select_strategy\": null,"
    "\"image_token\": \"<image>\",\"num_additional_image_tokens\": 0}}";

/* transformers 5.23.0 Gemma3Processor.__init__ and its images_kwargs class
 * attribute (models/gemma3/processing_gemma3.py): what it passes the image
 * processor unless the call says otherwise. */
static const char gemma3_processor_defaults[] =
    "{\"class\": \"Gemma3Processor\",\"fields\": {\"image_seq_length\": 256},"
    "\"images_kwargs\": {\"do_convert_rgb\": true,\"do_pan_and_scan\": false,"
    "\"pan_and_scan_min_crop_size\": 256,\"pan_and_scan_max_num_crops\": 4,"
    "\"pan_and_scan_min_ratio_to_activate\": 1.2}}";

static const vlm_defaults_entry processor_defaults[] = {
    {"LlavaProcessor", llava_processor_defaults},
    {"Gemma3Processor", gemma3_processor_defaults},
};

/* transformers 5.23.0 GenerationConfig._get_default_generation_params(): what
 * generate() uses for a value neither generation_config.json nor the caller
 * sets (GenerationConfig() itself leaves them all None). */
static const char generation_defaults[] =
    "{\"class\": \"GenerationConfig\","
    "\"fields\": {\"max_length\": 20,\"max_new_tokens\": null,\"do_sample\": false,"
    "\"temperature\": 1.0,\"top_k\": 50,\"top_p\": 1.0,\"min_p\": null,"
    "\"repetition_penalty\": 1.0,\"bos_token_id\": null,\"eos_token_id\": null,"
    "\"pad_token_id\": null}}";

static const char *find_entry(const vlm_defaults_entry *entries, size_t count,
                              const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < count; i++)
    if (strcmp(entries[i].name, name) == 0) return entries[i].json;
  return NULL;
}

/* Name lists, in table order; a test checks they match the tables. */
static const char *const model_type_names[] = {
    "llama", "mistral", "qwen2", "qwen3", "clip_vision_model", "siglip_vision_model",
    "llava", "qwen2_vl", "qwen2_vl_text", "qwen2_vl_vision", "qwen2_5_vl",
    "qwen2_5_vl_text", "qwen2_5_vl_vision", "qwen3_vl", "qwen3_vl_text",
    "qwen3_vl_vision", "qwen3_vl_moe", "qwen3_vl_moe_text", "qwen3_vl_moe_vision",
    "gemma3", "gemma3_text", "gemma3n", "gemma3n_text", "gemma3n_vision",
    "gemma3n_audio", "phi4_multimodal", "phi4_multimodal_vision",
    "phi4_multimodal_audio", "molmo2", "molmo2_text", "molmo2_vision", "molmo2_adapter",
};
static const char *const image_processor_names[] = {
    "CLIPImageProcessor", "Qwen2VLImageProcessor", "Gemma3ImageProcessor",
    "SiglipImageProcessor", "Phi4MultimodalImageProcessor",
};
static const char *const processor_names[] = {
    "LlavaProcessor", "Gemma3Processor",
};
_Static_assert(COUNT_OF(model_type_names) == COUNT_OF(model_defaults), "names");
_Static_assert(COUNT_OF(image_processor_names) == COUNT_OF(image_processor_defaults), "names");
_Static_assert(COUNT_OF(processor_names) == COUNT_OF(processor_defaults), "names");

static size_t name_list(const char *const *names, size_t count, const char *const **out_names) {
  if (out_names) *out_names = names;
  return count;
}

const char *vlm_config_defaults_json(const char *model_type) {
  return find_entry(model_defaults, COUNT_OF(model_defaults), model_type);
}
size_t vlm_config_default_model_types(const char *const **out_names) {
  return name_list(model_type_names, COUNT_OF(model_type_names), out_names);
}

const char *vlm_image_processor_defaults_json(const char *class_name) {
  return find_entry(image_processor_defaults, COUNT_OF(image_processor_defaults), class_name);
}
size_t vlm_image_processor_default_classes(const char *const **out_names) {
  return name_list(image_processor_names, COUNT_OF(image_processor_names), out_names);
}

const char *vlm_processor_defaults_json(const char *class_name) {
  return find_entry(processor_defaults, COUNT_OF(processor_defaults), class_name);
}
size_t vlm_processor_default_classes(const char *const **out_names) {
  return name_list(processor_names, COUNT_OF(processor_names), out_names);
}

const char *vlm_generation_defaults_json(void) { return generation_defaults; }
