#include <stdio.h>

#include "models/blocks.h"
#include "models/nn.h"

#define SHAPE VLM_SHAPE
#define ADD(component, rank, shape, ...) \
  vlm_manifest_add(manifest, component, rank, shape, __VA_ARGS__)

const vlm_name_rename vlm_composite_v4_renames[VLM_COMPOSITE_V4_RENAME_COUNT] = {
    {"language_model.model.", "model.language_model."},
    {"language_model.lm_head.", "lm_head."},
    {"vision_tower.vision_model.", "model.vision_tower."},
    {"model.vision_tower.vision_model.", "model.vision_tower."},
    {"vision_tower.", "model.vision_tower."},
    {"multi_modal_projector.", "model.multi_modal_projector."},
};

static void declare_decoder_layer(vlm_tensor_manifest *manifest, const vlm_text_config *text,
                                  const char *prefix, int64_t layer,
                                  const vlm_decoder_layout *layout) {
  const vlm_component decoder = VLM_COMPONENT_TEXT_DECODER;
  char name[256];
  int64_t hidden = text->hidden_size, head_dim = text->head_dim;
  int64_t query = text->num_attention_heads * head_dim;
  int64_t key_value = text->num_key_value_heads * head_dim;
  int64_t intermediate = text->layer_intermediate_sizes
                             ? text->layer_intermediate_sizes[layer]
                             : text->intermediate_size;
#define LAYER(suffix) (snprintf(name, sizeof(name), "%slayers.%lld." suffix, prefix, \
                                (long long)layer), name)
  ADD(decoder, 1, SHAPE(hidden), "%s", LAYER("input_layernorm.weight"));
  ADD(decoder, 1, SHAPE(hidden), "%s", LAYER("post_attention_layernorm.weight"));
  if (layout->sandwich_norms) {
    ADD(decoder, 1, SHAPE(hidden), "%s", LAYER("pre_feedforward_layernorm.weight"));
    ADD(decoder, 1, SHAPE(hidden), "%s", LAYER("post_feedforward_layernorm.weight"));
  }
  if (layout->fused_qkv) {
    vlm_nn_declare_linear(manifest, decoder, LAYER("self_attn.qkv_proj"), query + 2 * key_value, hidden,
                          text->attention_bias);
  } else {
    vlm_nn_declare_linear(manifest, decoder, LAYER("self_attn.q_proj"), query, hidden, text->attention_bias);
    vlm_nn_declare_linear(manifest, decoder, LAYER("self_attn.k_proj"), key_value, hidden, text->attention_bias);
    vlm_nn_declare_linear(manifest, decoder, LAYER("self_attn.v_proj"), key_value, hidden, text->attention_bias);
  }
  vlm_nn_declare_linear(manifest, decoder, LAYER("self_attn.o_proj"), hidden, query, text->attention_output_bias);
  if (layout->qk_norm) {
    ADD(decoder, 1, SHAPE(head_dim), "%s", LAYER("self_attn.q_norm.weight"));
    ADD(decoder, 1, SHAPE(head_dim), "%s", LAYER("self_attn.k_norm.weight"));
  }
  if (layout->sparse_layers && layout->sparse_layers[layer]) {
    int64_t experts = layout->experts, inner = layout->expert_intermediate_size;
    ADD(decoder, 2, SHAPE(experts, hidden), "%s", LAYER("mlp.gate.weight"));
    ADD(decoder, 3, SHAPE(experts, 2 * inner, hidden), "%s", LAYER("mlp.experts.gate_up_proj"));
    vlm_manifest_allow_shape(manifest, 3, SHAPE(experts, hidden, 2 * inner));
    ADD(decoder, 3, SHAPE(experts, hidden, inner), "%s", LAYER("mlp.experts.down_proj"));
    vlm_manifest_allow_shape(manifest, 3, SHAPE(experts, inner, hidden));
  } else if (layout->fused_gate_up) {
    vlm_nn_declare_linear(manifest, decoder, LAYER("mlp.gate_up_proj"), 2 * intermediate, hidden, text->mlp_bias);
  } else {
    vlm_nn_declare_linear(manifest, decoder, LAYER("mlp.gate_proj"), intermediate, hidden, text->mlp_bias);
    vlm_nn_declare_linear(manifest, decoder, LAYER("mlp.up_proj"), intermediate, hidden, text->mlp_bias);
  }
  if (!layout->sparse_layers || !layout->sparse_layers[layer])
    vlm_nn_declare_linear(manifest, decoder, LAYER("mlp.down_proj"), hidden, intermediate, text->mlp_bias);
#undef LAYER
}

void vlm_declare_text_decoder(vlm_tensor_manifest *manifest, const vlm_text_config *text,
                              bool tie_word_embeddings, const char *prefix,
                              const vlm_decoder_layout *layout) {
  ADD(VLM_COMPONENT_EMBEDDINGS, 2, SHAPE(text->vocab_size, text->hidden_size),
      "%sembed_tokens.weight", prefix);
  for (int64_t layer = 0; layer < text->num_hidden_layers; layer++)
    declare_decoder_layer(manifest, text, prefix, layer, layout);
  ADD(VLM_COMPONENT_TEXT_DECODER, 1, SHAPE(text->hidden_size), "%snorm.weight", prefix);
  ADD(VLM_COMPONENT_EMBEDDINGS, 2, SHAPE(text->vocab_size, text->hidden_size),
      "lm_head.weight");
  /* Tied: Transformers ignores a stored lm_head and reuses the embeddings. */
  if (tie_word_embeddings) vlm_manifest_mark_optional(manifest);
}

static void declare_encoder_layer(vlm_tensor_manifest *manifest,
                                  const vlm_vision_config *vision, const char *prefix,
                                  int64_t layer) {
  const vlm_component tower = VLM_COMPONENT_VISION_TOWER;
  int64_t hidden = vision->hidden_size, intermediate = vision->intermediate_size;
  char name[256];
#define LAYER(suffix) (snprintf(name, sizeof(name), "%sencoder.layers.%lld." suffix, prefix, \
                                (long long)layer), name)
  vlm_nn_declare_layer_norm(manifest, tower, LAYER("layer_norm1"), hidden);
  vlm_nn_declare_linear(manifest, tower, LAYER("self_attn.q_proj"), hidden, hidden, true);
  vlm_nn_declare_linear(manifest, tower, LAYER("self_attn.k_proj"), hidden, hidden, true);
  vlm_nn_declare_linear(manifest, tower, LAYER("self_attn.v_proj"), hidden, hidden, true);
  vlm_nn_declare_linear(manifest, tower, LAYER("self_attn.out_proj"), hidden, hidden, true);
  vlm_nn_declare_layer_norm(manifest, tower, LAYER("layer_norm2"), hidden);
  vlm_nn_declare_linear(manifest, tower, LAYER("mlp.fc1"), intermediate, hidden, true);
  vlm_nn_declare_linear(manifest, tower, LAYER("mlp.fc2"), hidden, intermediate, true);
#undef LAYER
}

static void declare_siglip_head(vlm_tensor_manifest *manifest, const vlm_vision_config *vision,
                                const char *prefix) {
  const vlm_component tower = VLM_COMPONENT_VISION_TOWER;
  int64_t hidden = vision->hidden_size;
  char name[256];
  ADD(tower, 3, SHAPE(1, 1, hidden), "%shead.probe", prefix);
  ADD(tower, 2, SHAPE(3 * hidden, hidden), "%shead.attention.in_proj_weight", prefix);
  ADD(tower, 1, SHAPE(3 * hidden), "%shead.attention.in_proj_bias", prefix);
  snprintf(name, sizeof(name), "%shead.attention.out_proj", prefix);
  vlm_nn_declare_linear(manifest, tower, name, hidden, hidden, true);
  snprintf(name, sizeof(name), "%shead.layernorm", prefix);
  vlm_nn_declare_layer_norm(manifest, tower, name, hidden);
  snprintf(name, sizeof(name), "%shead.mlp.fc1", prefix);
  vlm_nn_declare_linear(manifest, tower, name, vision->intermediate_size, hidden, true);
  snprintf(name, sizeof(name), "%shead.mlp.fc2", prefix);
  vlm_nn_declare_linear(manifest, tower, name, hidden, vision->intermediate_size, true);
}

void vlm_declare_vision_transformer(vlm_tensor_manifest *manifest,
                                    const vlm_vision_config *vision, vlm_vit_kind kind,
                                    const char *prefix) {
  const vlm_component tower = VLM_COMPONENT_VISION_TOWER;
  int64_t hidden = vision->hidden_size, patch = vision->patch_size;
  int64_t patches = (vision->image_height / patch) * (vision->image_width / patch);
  char name[256];
  if (kind == VLM_VIT_CLIP) ADD(tower, 1, SHAPE(hidden), "%sembeddings.class_embedding", prefix);
  ADD(tower, 4, SHAPE(hidden, vision->num_channels, patch, patch),
      "%sembeddings.patch_embedding.weight", prefix);
  if (kind == VLM_VIT_SIGLIP)
    ADD(tower, 1, SHAPE(hidden), "%sembeddings.patch_embedding.bias", prefix);
  ADD(tower, 2, SHAPE(patches + (kind == VLM_VIT_CLIP ? 1 : 0), hidden),
      "%sembeddings.position_embedding.weight", prefix);
  if (kind == VLM_VIT_CLIP) {
    /* Sic: Transformers' CLIP spells it "pre_layrnorm". */
    snprintf(name, sizeof(name), "%spre_layrnorm", prefix);
    vlm_nn_declare_layer_norm(manifest, tower, name, hidden);
  }
  for (int64_t layer = 0; layer < vision->num_hidden_layers; layer++)
    declare_encoder_layer(manifest, vision, prefix, layer);
  snprintf(name, sizeof(name), "%spost_layernorm", prefix);
  vlm_nn_declare_layer_norm(manifest, tower, name, hidden);
  if (kind == VLM_VIT_SIGLIP && vision->vision_use_head) declare_siglip_head(manifest, vision, prefix);
}
