/* Gemma 3: SigLIP tower, an average-pooled RMS-normed projection to the
 * decoder, and a Gemma decoder (sandwich norms, QK-norm, sliding-window
 * layers, scaled embeddings). gemma3_text is the decoder alone. */
#include <math.h>

#include "models/decoder.h"

#define SHAPE VLM_SHAPE

static const vlm_decoder_layout gemma_layout = {.qk_norm = true, .sandwich_norms = true};

static vlm_status declare_tensors(const vlm_model_config *config,
                                  vlm_tensor_manifest *manifest) {
  vlm_declare_text_decoder(manifest, &config->text, config->tie_word_embeddings,
                           "model.language_model.", &gemma_layout);
  vlm_declare_vision_transformer(manifest, &config->vision, VLM_VIT_SIGLIP, "model.vision_tower.");
  int64_t vision_hidden = config->vision.hidden_size, text_hidden = config->text.hidden_size;
  vlm_manifest_add(manifest, VLM_COMPONENT_PROJECTOR, 2, SHAPE(vision_hidden, text_hidden),
                   "model.multi_modal_projector.mm_input_projection_weight");
  vlm_manifest_add(manifest, VLM_COMPONENT_PROJECTOR, 1, SHAPE(vision_hidden),
                   "model.multi_modal_projector.mm_soft_emb_norm.weight");
  return VLM_OK;
}

static vlm_status declare_text_only(const vlm_model_config *config,
                                    vlm_tensor_manifest *manifest) {
  vlm_declare_text_decoder(manifest, &config->text, config->tie_word_embeddings, "model.",
                           &gemma_layout);
  return VLM_OK;
}

/* Gemma: RMSNorm scales by (1 + w), embeddings are multiplied by
 * sqrt(hidden_size), and norms sandwich both sub-blocks. */
static void describe_gemma(const vlm_model_config *config, const char *prefix,
                           vlm_decoder_description *out) {
  *out = (vlm_decoder_description){.text = &config->text,
                                   .tie_word_embeddings = config->tie_word_embeddings,
                                   .prefix = prefix, .layout = gemma_layout,
                                   .norm_weight_offset = 1.0,
                                   .embedding_scale = sqrt((double)config->text.hidden_size)};
}

static void describe_decoder(const vlm_model_config *config, vlm_decoder_description *out) {
  describe_gemma(config, "model.language_model.", out);
}

static void describe_text_only(const vlm_model_config *config, vlm_decoder_description *out) {
  describe_gemma(config, "model.", out);
}

const vlm_family vlm_family_gemma3 = {
    .model_type = "gemma3",
    .display_name = "Gemma 3",
    .has_vision = true,
    .prompt_flow = VLM_PROMPT_FLOW_PROCESSOR,
    .renames = vlm_composite_v4_renames,
    .rename_count = VLM_COMPOSITE_V4_RENAME_COUNT,
    .declare_tensors = declare_tensors,
    .describe_decoder = describe_decoder,
};

const vlm_family vlm_family_gemma3_text = {
    .model_type = "gemma3_text", .display_name = "Gemma 3 (text)",
    .declare_tensors = declare_text_only,
    .describe_decoder = describe_text_only,
};
