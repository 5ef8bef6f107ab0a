/* Qwen2-VL: a ViT over 14x14x2 (temporal) patches with 2D RoPE, a 2x2
 * patch-merger MLP, and a Qwen2 decoder with 3-axis M-RoPE. */
#include <stdio.h>

#include "models/decoder.h"

#define SHAPE VLM_SHAPE

/* Transformers 4 saved the decoder at "model.*" and the tower at "visual.*".
 * The identity rules stop canonical names from being renamed again. */
static const vlm_name_rename renames[] = {
    {"model.language_model.", "model.language_model."},
    {"model.visual.", "model.visual."},
    {"model.", "model.language_model."},
    {"visual.", "model.visual."},
};

static void declare_linear(vlm_tensor_manifest *manifest, vlm_component component,
                           int64_t out, int64_t in, const char *name) {
  vlm_manifest_add(manifest, component, 2, SHAPE(out, in), "%s.weight", name);
  vlm_manifest_add(manifest, component, 1, SHAPE(out), "%s.bias", name);
}

static void declare_vision(const vlm_vision_config *vision, vlm_tensor_manifest *manifest) {
  const vlm_component tower = VLM_COMPONENT_VISION_TOWER;
  int64_t embed = vision->hidden_size, patch = vision->patch_size;
  vlm_manifest_add(manifest, tower, 5,
                   SHAPE(embed, vision->num_channels, vision->temporal_patch_size, patch, patch),
                   "model.visual.patch_embed.proj.weight");
  char name[128];
  for (int64_t block = 0; block < vision->num_hidden_layers; block++) {
#define BLOCK(suffix) (snprintf(name, sizeof(name), "model.visual.blocks.%lld." suffix, \
                                (long long)block), name)
    vlm_manifest_add(manifest, tower, 1, SHAPE(embed), "%s", BLOCK("norm1.weight"));
    vlm_manifest_add(manifest, tower, 1, SHAPE(embed), "%s", BLOCK("norm1.bias"));
    vlm_manifest_add(manifest, tower, 1, SHAPE(embed), "%s", BLOCK("norm2.weight"));
    vlm_manifest_add(manifest, tower, 1, SHAPE(embed), "%s", BLOCK("norm2.bias"));
    declare_linear(manifest, tower, 3 * embed, embed, BLOCK("attn.qkv"));
    declare_linear(manifest, tower, embed, embed, BLOCK("attn.proj"));
    declare_linear(manifest, tower, vision->intermediate_size, embed, BLOCK("mlp.fc1"));
    declare_linear(manifest, tower, embed, vision->intermediate_size, BLOCK("mlp.fc2"));
#undef BLOCK
  }
  const vlm_component projector = VLM_COMPONENT_PROJECTOR;
  int64_t merged = embed * vision->spatial_merge_size * vision->spatial_merge_size;
  vlm_manifest_add(manifest, projector, 1, SHAPE(embed), "model.visual.merger.ln_q.weight");
  vlm_manifest_add(manifest, projector, 1, SHAPE(embed), "model.visual.merger.ln_q.bias");
  declare_linear(manifest, projector, merged, merged, "model.visual.merger.mlp.0");
  declare_linear(manifest, projector, vision->out_hidden_size, merged, "model.visual.merger.mlp.2");
}

static vlm_status declare_tensors(const vlm_model_config *config,
                                  vlm_tensor_manifest *manifest) {
  static const vlm_decoder_layout layout = {0};
  vlm_declare_text_decoder(manifest, &config->text, config->tie_word_embeddings,
                           "model.language_model.", &layout);
  declare_vision(&config->vision, manifest);
  return VLM_OK;
}

static void describe_decoder(const vlm_model_config *config, vlm_decoder_description *out) {
  *out = (vlm_decoder_description){.text = &config->text,
                                   .tie_word_embeddings = config->tie_word_embeddings,
                                   .prefix = "model.language_model.", .embedding_scale = 1.0};
}

const vlm_family vlm_family_qwen2_vl = {
    .model_type = "qwen2_vl",
    .display_name = "Qwen2-VL",
    .has_vision = true,
    .prompt_flow = VLM_PROMPT_FLOW_PROCESSOR,
    .renames = renames,
    .rename_count = sizeof(renames) / sizeof(renames[0]),
    .declare_tensors = declare_tensors,
    .describe_decoder = describe_decoder,
};
