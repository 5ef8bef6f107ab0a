/* models/llava: LlavaConfig and LlavaProcessor. */
#include "io/configs/configs.h"

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

/* transformers 5.23.0 LlavaProcessor.__init__ (models/llava/processing_llava.py) */
static const char llava_processor_defaults[] =
    "{\"class\": \"LlavaProcessor\","
    "\"fields\": {\"patch_size\": null,\"vision_feature_select_strategy\": null,"
    "\"image_token\": \"<image>\",\"num_additional_image_tokens\": 0}}";

static const vlm_config_record configs[] = {
    {.model_type = "llava", .defaults = llava_defaults, .composite = true, .tie_from_text = true,
     .tokenizer_class = "TokenizersBackend", .hub_tokenizer_class_incorrect = true},
};

static const vlm_class_defaults processors[] = {
    {"LlavaProcessor", llava_processor_defaults},
};

const vlm_config_family vlm_config_family_llava = {
    .configs = configs,
    .config_count = VLM_COUNT_OF(configs),
    .processors = processors,
    .processor_count = VLM_COUNT_OF(processors),
};
