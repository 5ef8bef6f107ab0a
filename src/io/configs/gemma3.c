/* models/gemma3: Gemma3Config, Gemma3TextConfig, Gemma3ImageProcessor and Gemma3Processor. */
#include "io/configs/configs.h"

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

/* transformers 5.23.0 Gemma3Processor.__init__ and its images_kwargs class
 * attribute (models/gemma3/processing_gemma3.py): what it passes the image
 * processor unless the call says otherwise. */
static const char gemma3_processor_defaults[] =
    "{\"class\": \"Gemma3Processor\",\"fields\": {\"image_seq_length\": 256},"
    "\"images_kwargs\": {\"do_convert_rgb\": true,\"do_pan_and_scan\": false,"
    "\"pan_and_scan_min_crop_size\": 256,\"pan_and_scan_max_num_crops\": 4,"
    "\"pan_and_scan_min_ratio_to_activate\": 1.2}}";

/* Gemma3TextConfig: every sliding_window_pattern-th layer full, q.k scaled
 * by query_pre_attn_scalar, RoPE per layer type. */
static const vlm_text_rules gemma3_text = {
    .bias = VLM_BIAS_FIELD_ALL,
    .layers = VLM_LAYERS_PERIODIC_FULL,
    .full_layer_period = 0,
    .scale = VLM_SCALE_QUERY_PRE_ATTN_SCALAR,
    .rope = {.per_layer_type = true},
};

static const vlm_config_record configs[] = {
    {.model_type = "gemma3", .defaults = gemma3_defaults, .composite = true, .tokenizer_class = "GemmaTokenizer"},
    {.model_type = "gemma3_text", .defaults = gemma3_text_defaults, .text = &gemma3_text,
     .tokenizer_class = "GemmaTokenizer"},
};

static const vlm_class_defaults image_processors[] = {
    {"Gemma3ImageProcessor", gemma3_image_processor_defaults},
};

static const vlm_class_defaults processors[] = {
    {"Gemma3Processor", gemma3_processor_defaults},
};

const vlm_config_family vlm_config_family_gemma3 = {
    .configs = configs,
    .config_count = VLM_COUNT_OF(configs),
    .image_processors = image_processors,
    .image_processor_count = VLM_COUNT_OF(image_processors),
    .processors = processors,
    .processor_count = VLM_COUNT_OF(processors),
};
