/* models/clip: CLIPVisionConfig and CLIPImageProcessor. */
#include "io/configs/configs.h"

/* transformers 5.23.0 CLIPVisionConfig() */
static const char clip_vision_model_defaults[] =
    "{\"class\": \"CLIPVisionConfig\",\"model_type\": \"clip_vision_model\","
    "\"fields\": {\"hidden_size\": 768,\"intermediate_size\": 3072,\"projection_dim\": 512,"
    "\"num_hidden_layers\": 12,\"num_attention_heads\": 12,\"num_channels\": 3,"
    "\"image_size\": 224,\"patch_size\": 32,\"hidden_act\": \"quick_gelu\","
    "\"layer_norm_eps\": 1e-05}}";

/* transformers 5.23.0 CLIPImageProcessor (models/clip/image_processing_clip.py) */
static const char clip_image_processor_defaults[] =
    "{\"class\": \"CLIPImageProcessor\","
    "\"fields\": {\"do_convert_rgb\": true,\"do_resize\": true,"
    "\"size\": {\"shortest_edge\": 224},\"default_to_square\": false,"
    "\"crop_size\": {\"height\": 224, \"width\": 224},\"resample\": 3,"
    "\"do_rescale\": true,\"rescale_factor\": 0.00392156862745098,\"do_normalize\": true,"
    "\"image_mean\": [0.48145466, 0.4578275, 0.40821073],"
    "\"image_std\": [0.26862954, 0.26130258, 0.27577711],\"do_center_crop\": true}}";

/* CLIPVisionConfig; SiglipVisionConfig adds vision_use_head; the CLIP and
 * SigLIP attention projections carry biases. */
vlm_status vlm_clip_read_vision(const vlm_config_section *section, vlm_vision_config *out) {
  VLM_RETURN_IF_ERROR(vlm_vision_read_vit_shape(section, out));
  out->attention_bias = true;
  VLM_RETURN_IF_ERROR(vlm_config_read_bool_or(section, "vision_use_head", false, &out->vision_use_head));
  return vlm_vision_read_square_image(section, out);
}

static const vlm_config_record configs[] = {
    {.model_type = "clip_vision_model", .defaults = clip_vision_model_defaults, .read_vision = vlm_clip_read_vision},
};

static const vlm_class_defaults image_processors[] = {
    {"CLIPImageProcessor", clip_image_processor_defaults},
};

const vlm_config_family vlm_config_family_clip = {
    .configs = configs,
    .config_count = VLM_COUNT_OF(configs),
    .image_processors = image_processors,
    .image_processor_count = VLM_COUNT_OF(image_processors),
};
