/* models/siglip: SiglipVisionConfig and SiglipImageProcessor. */
#include "io/configs/configs.h"

/* transformers 5.23.0 SiglipVisionConfig() */
static const char siglip_vision_model_defaults[] =
    "{\"class\": \"SiglipVisionConfig\",\"model_type\": \"siglip_vision_model\","
    "\"fields\": {\"hidden_size\": 768,\"intermediate_size\": 3072,\"num_hidden_layers\": 12,"
    "\"num_attention_heads\": 12,\"num_channels\": 3,\"image_size\": 224,\"patch_size\": 16,"
    "\"hidden_act\": \"gelu_pytorch_tanh\",\"layer_norm_eps\": 1e-06,\"vision_use_head\": true}}";

/* transformers 5.23.0 SiglipImageProcessor (models/siglip/image_processing_siglip.py) */
static const char siglip_image_processor_defaults[] =
    "{\"class\": \"SiglipImageProcessor\","
    "\"fields\": {\"do_convert_rgb\": true,\"do_resize\": true,"
    "\"size\": {\"height\": 224, \"width\": 224},\"default_to_square\": false,"
    "\"crop_size\": null,\"resample\": 3,"
    "\"do_rescale\": true,\"rescale_factor\": 0.00392156862745098,\"do_normalize\": true,"
    "\"image_mean\": [0.5, 0.5, 0.5],\"image_std\": [0.5, 0.5, 0.5],\"do_center_crop\": null}}";

/* SiglipVisionConfig reads as CLIPVisionConfig does, with vision_use_head. */
static const vlm_config_record configs[] = {
    {.model_type = "siglip_vision_model", .defaults = siglip_vision_model_defaults,
     .read_vision = vlm_clip_read_vision},
};

static const vlm_class_defaults image_processors[] = {
    {"SiglipImageProcessor", siglip_image_processor_defaults},
};

const vlm_config_family vlm_config_family_siglip = {
    .configs = configs,
    .config_count = VLM_COUNT_OF(configs),
    .image_processors = image_processors,
    .image_processor_count = VLM_COUNT_OF(image_processors),
};
