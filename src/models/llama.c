/* Llama and Mistral: the plain pre-norm decoder (RMSNorm, RoPE, GQA,
 * SwiGLU). Mistral differs only in its sliding-window attention, which is a
 * config value, not a tensor. */
#include "models/decoder.h"

static vlm_status declare_tensors(const vlm_model_config *config,
                                  vlm_tensor_manifest *manifest) {
  static const vlm_decoder_layout layout = {0};
  vlm_declare_text_decoder(manifest, &config->text, config->tie_word_embeddings, "model.",
                           &layout);
  return VLM_OK;
}

/* The plain pre-norm decoder under `prefix`. */
static void describe_plain(const vlm_model_config *config, vlm_decoder_description *out) {
  *out = (vlm_decoder_description){.text = &config->text,
                                   .tie_word_embeddings = config->tie_word_embeddings,
                                   .prefix = "model.", .embedding_scale = 1.0};
}

static const vlm_family_layout llama_layouts[] = {
    {"Transformers 5.23", "llama", false},
};

const vlm_family vlm_family_llama = {
    .model_type = "llama", .display_name = "Llama",
    .layouts = llama_layouts, .layout_count = 1,
    .declare_tensors = declare_tensors,
    .describe_decoder = describe_plain,
};

static const vlm_family_layout mistral_layouts[] = {
    {"Transformers 5.23", "mistral", false},
};

const vlm_family vlm_family_mistral = {
    .model_type = "mistral", .display_name = "Mistral",
    .layouts = mistral_layouts, .layout_count = 1,
    .declare_tensors = declare_tensors,
    .describe_decoder = describe_plain,
};
