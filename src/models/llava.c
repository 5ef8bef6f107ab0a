/* LLaVA-1.5: CLIP ViT-L/14-336 tower, a two-layer GELU projector, and a
 * Llama decoder. */
#include <string.h>

#include "core/status.h"
#include "core/tensor_list.h"
#include "graph/graph.h"
#include "io/json.h"
#include "media/media_item.h"
#include "models/decoder.h"
#include "models/vision_encoder.h"
#include "vlm/generate.h"

#define SHAPE VLM_SHAPE

#define TOWER_PREFIX "model.vision_tower."

static vlm_status declare_tensors(const vlm_model_config *config,
                                  vlm_tensor_manifest *manifest) {
  static const vlm_decoder_layout layout = {0};
  vlm_declare_text_decoder(manifest, &config->text, config->tie_word_embeddings,
                           "model.language_model.", &layout);
  vlm_declare_vision_transformer(manifest, &config->vision, VLM_VIT_CLIP, TOWER_PREFIX);
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

/* vision_feature_layer indexes hidden_states (embeddings output first, so
 * num_hidden_layers + 1 entries; negative counts from the end), an int or a
 * list; vision_feature_select_strategy "default" drops the class token. */
static vlm_status describe_vision(const vlm_model_config *config, vlm_vision_description *out) {
  memset(out, 0, sizeof(*out));
  *out = (vlm_vision_description){.vision = &config->vision,
                                  .tower_prefix = TOWER_PREFIX,
                                  .projector_prefix = "model.multi_modal_projector.",
                                  .projector_bias = config->multimodal_projector_bias,
                                  .text_hidden_size = config->text.hidden_size};
  const char *strategy = config->vision_feature_select_strategy ? config->vision_feature_select_strategy : "default";
  if (strcmp(strategy, "default") != 0 && strcmp(strategy, "full") != 0)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: vision_feature_select_strategy '%s' is neither 'default' nor 'full'",
                     strategy);
  out->keep_class_token = strcmp(strategy, "full") == 0;
  const char *activation = config->projector_hidden_act ? config->projector_hidden_act : "gelu";
  if (!vlm_activation_from_name(activation, &out->projector_activation))
    return VLM_ERROR(UNIMPLEMENTED, "config.json: projector_hidden_act '%s' is not supported", activation);
  const vlm_index_list *layers = &config->vision_feature_layers;
  if (layers->count < 1 || layers->count > VLM_VISION_MAX_FEATURE_LAYERS)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: vision_feature_layer has %zu entries (1..%d supported)",
                     layers->count, VLM_VISION_MAX_FEATURE_LAYERS);
  int64_t states = config->vision.num_hidden_layers + 1;
  for (size_t i = 0; i < layers->count; i++) {
    int64_t index = layers->values[i] < 0 ? states + layers->values[i] : layers->values[i];
    if (index < 0 || index >= states)
      return VLM_ERROR(INVALID_ARGUMENT, "config.json: vision_feature_layer %lld is outside the %lld hidden states",
                       (long long)layers->values[i], (long long)states);
    out->feature_layers[out->feature_layer_count++] = index;
  }
  return VLM_OK;
}

/* ---- The image path (vlm_family_image) --------------------------------- */

static int64_t placeholder_token(const vlm_model_config *config) { return config->image_token_id; }

/* LlavaProcessor: one placeholder becomes one token per selected feature
 * row of the tower (the patches, plus the class token with strategy
 * "full"), whatever the image's own size (the processor crops it). */
static vlm_status token_count(const vlm_model_config *config, const vlm_processor_config *processor,
                              const int64_t grid[3], int64_t *out_count) {
  (void)processor, (void)grid;
  vlm_vision_description description;
  VLM_RETURN_IF_ERROR(describe_vision(config, &description));
  *out_count = vlm_vision_tokens_per_image(&description);
  return VLM_OK;
}

static vlm_status expand(const vlm_model_config *config, const vlm_media_item *item, const char *placeholder,
                         vlm_token_text_fn token_text, void *context, vlm_string_builder *out) {
  (void)config, (void)token_text, (void)context;
  size_t length = strlen(placeholder);
  for (int64_t i = 0; i < item->token_count; i++) vlm_sb_append(out, placeholder, length);
  return VLM_OK;
}

static vlm_status encoder_rows(const vlm_model_config *config, const vlm_media_item *item, int64_t *out_rows) {
  (void)item;
  vlm_vision_description description;
  VLM_RETURN_IF_ERROR(describe_vision(config, &description));
  *out_rows = vlm_vision_patch_count(&description);
  return VLM_OK;
}

static vlm_status encoder_inputs(const vlm_model_config *config, const vlm_media_item *item, int64_t rows,
                                 vlm_tensor_list *out) {
  vlm_vision_description description;
  VLM_RETURN_IF_ERROR(describe_vision(config, &description));
  if (rows != vlm_vision_patch_count(&description))
    return VLM_ERROR(INVALID_ARGUMENT, "the CLIP tower takes exactly %lld patch rows, not %lld",
                     (long long)vlm_vision_patch_count(&description), (long long)rows);
  const vlm_named_tensor *pixels = vlm_media_item_tensor(item, "pixel_values");
  if (!pixels || pixels->dtype != VLM_DTYPE_F32 || pixels->rank != 3)
    return VLM_ERROR(INVALID_ARGUMENT, "the image has no f32 pixel_values [channels, height, width]");
  vlm_pixel_values image = {pixels->data, pixels->shape[0], pixels->shape[1], pixels->shape[2]};
  return vlm_vision_prepare_inputs(&description, &image, 1, out);
}

static vlm_status build_encoder(const vlm_model_config *config, int64_t rows, vlm_graph *graph,
                                vlm_encoder_nodes *out_nodes) {
  vlm_vision_description description;
  VLM_RETURN_IF_ERROR(describe_vision(config, &description));
  (void)rows;
  vlm_vision_graph_nodes nodes;
  VLM_RETURN_IF_ERROR(vlm_build_vision_graph(&description, 1, graph, &nodes));
  *out_nodes = (vlm_encoder_nodes){.output = nodes.projector, .stage_count = 3};
  out_nodes->stages[0].stage = "vision_encoder";
  out_nodes->stages[0].node = nodes.hidden_states[0];
  out_nodes->stages[1].stage = "vision_features";
  out_nodes->stages[1].node = nodes.features;
  out_nodes->stages[2].stage = "projector";
  out_nodes->stages[2].node = nodes.projector;
  return VLM_OK;
}

static const vlm_family_image image_path = {
    .placeholder_token = placeholder_token,
    .token_count = token_count,
    .expand = expand,
    .encoder_rows = encoder_rows,
    .encoder_inputs = encoder_inputs,
    .build_encoder = build_encoder,
};

static const vlm_family_layout layouts[] = {
    {"Transformers 5.23", "llava", false},
    {"hub 4.x", "llava_v4", false},
};

const vlm_family vlm_family_llava = {
    .model_type = "llava",
    .display_name = "LLaVA-1.5",
    .layouts = layouts, .layout_count = 2,
    .has_vision = true,
    .prompt_flow = VLM_PROMPT_FLOW_PROCESSOR,
    .renames = vlm_composite_v4_renames,
    .rename_count = VLM_COMPOSITE_V4_RENAME_COUNT,
    .declare_tensors = declare_tensors,
    .describe_decoder = describe_decoder,
    .image = &image_path,
};
