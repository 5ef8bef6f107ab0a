/* LLaVA-1.5: CLIP ViT-L/14-336 tower, a two-layer GELU projector, and a
 * Llama decoder. */
#include "models/decoder.h"

#define SHAPE VLM_SHAPE

static vlm_status declare_tensors(const vlm_model_config *config,
                                  vlm_tensor_manifest *manifest) {
  static const vlm_decoder_layout layout = {0};
  vlm_declare_text_decoder(manifest, &config->text, config->tie_word_embeddings,
                           "model.language_model.", &layout);
  vlm_declare_vision_transformer(manifest, &config->vision, VLM_VIT_CLIP,
                                 "model.vision_tower.vision_model.");
  /* With a list of feature layers their outputs are concatenated. */
  int64_t layers = config->vision_feature_layers.count ? (int64_t)config->vision_feature_layers.count : 1;
  int64_t in = config->vision.hidden_size * layers, out = config->text.hidden_size;
  bool bias = config->multimodal_projector_bias;
  const vlm_component projector = VLM_COMPONENT_PROJECTOR;
  vlm_manifest_add(manifest, projector, 2, SHAPE(out, in), "model.multi_modal_projector.linear_1.weight");
  if (bias) vlm_manifest_add(manifest, projector, 1, SHAPE(out), "model.multi_modal_projector.linear_1.bias");
  vlm_manifest_add(manifest, projector, 2, SHAPE(out, out), "model.multi_modal_projector.linear_2.weight");
  if (bias) vlm_manifest_add(manifest, projector, 1, SHAPE(out), "model.multi_modal_projector.linear_2.bias");
  return VLM_OK;
}

static void describe_decoder(const vlm_model_config *config, vlm_decoder_description *out) {
  *out = (vlm_decoder_description){.text = &config->text,
                                   .tie_word_embeddings = config->tie_word_embeddings,
                                   .prefix = "model.language_model.", .embedding_scale = 1.0};
}

const vlm_family vlm_family_llava = {
    .model_type = "llava",
    .display_name = "LLaVA-1.5",
    .has_vision = true,
    .renames = vlm_composite_v4_renames,
    .rename_count = VLM_COMPOSITE_V4_RENAME_COUNT,
    .declare_tensors = declare_tensors,
    .describe_decoder = describe_decoder,
};
