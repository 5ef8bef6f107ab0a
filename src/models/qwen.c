/* Qwen2 and Qwen3 text decoders. Qwen2 always biases q/k/v (the config's
 * resolution of attention_bias says so); Qwen3 adds per-head RMSNorm on q
 * and k. */
#include "models/decoder.h"

static vlm_status declare_qwen2(const vlm_model_config *config,
                                vlm_tensor_manifest *manifest) {
  static const vlm_decoder_layout layout = {0};
  vlm_declare_text_decoder(manifest, &config->text, config->tie_word_embeddings, "model.",
                           &layout);
  return VLM_OK;
}

static vlm_status declare_qwen3(const vlm_model_config *config,
                                vlm_tensor_manifest *manifest) {
  static const vlm_decoder_layout layout = {.qk_norm = true};
  vlm_declare_text_decoder(manifest, &config->text, config->tie_word_embeddings, "model.",
                           &layout);
  return VLM_OK;
}

static void describe_qwen2(const vlm_model_config *config, vlm_decoder_description *out) {
  *out = (vlm_decoder_description){.text = &config->text,
                                   .tie_word_embeddings = config->tie_word_embeddings,
                                   .prefix = "model.", .embedding_scale = 1.0};
}

static void describe_qwen3(const vlm_model_config *config, vlm_decoder_description *out) {
  describe_qwen2(config, out);
  out->layout.qk_norm = true;
}

static const vlm_family_layout qwen2_layouts[] = {
    {"Transformers 5.23", "qwen2", false},
    {"GPTQ int4", "qwen2_gptq", true},
    {"GPTQ int4 (act-order)", "qwen2_gptq_act", true},
    {"AWQ int4 (GEMM)", "qwen2_awq", true},
};

const vlm_family vlm_family_qwen2 = {
    .model_type = "qwen2", .display_name = "Qwen2",
    .layouts = qwen2_layouts, .layout_count = 4,
    .declare_tensors = declare_qwen2,
    .describe_decoder = describe_qwen2,
};

static const vlm_family_layout qwen3_layouts[] = {
    {"Transformers 5.23", "qwen3", false},
};

const vlm_family vlm_family_qwen3 = {
    .model_type = "qwen3", .display_name = "Qwen3",
    .layouts = qwen3_layouts, .layout_count = 1,
    .declare_tensors = declare_qwen3,
    .describe_decoder = describe_qwen3,
};
