/* Qwen2-VL: a ViT over 14x14x2 (temporal) patches with 2D (axial) RoPE and
 * attention within each image, a 2x2 patch-merger MLP, and a Qwen2 decoder
 * with 3-axis M-RoPE. Transformers 5.23.0's Qwen2VLForConditionalGeneration
 * (modeling_qwen2_vl.py) and Qwen2VLProcessor:
 *
 *   patch_embed  Conv3d(C, E, (T, P, P), no bias) = a linear over the
 *                processor's flattened patches [rows, C*T*P*P]
 *   blocks       x = x + proj(attention(rope(qkv(norm1(x)))))    per image
 *                x = x + fc2(act(fc1(norm2(x))))
 *   merger       mlp(ln_q(x).view(-1, 4E)): Linear(4E, 4E), GELU, Linear
 *
 * The processor lays the patches out block-major (2x2 merge blocks), so
 * the merger's view groups four consecutive rows; RoPE positions are each
 * patch's (row, column) in that order (vision_utils.get_vision_position_ids).
 * One <|image_pad|> in the text becomes t*h*w/4 copies; the decoder's
 * positions are get_rope_index's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/tensor_list.h"
#include "graph/graph.h"
#include "media/media_item.h"
#include "models/decoder.h"
#include "models/qwen_vl.h"

#define SHAPE VLM_SHAPE
#define VISUAL "model.visual."

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
                   VISUAL "patch_embed.proj.weight");
  char name[128];
  for (int64_t block = 0; block < vision->num_hidden_layers; block++) {
#define BLOCK(suffix) (snprintf(name, sizeof(name), VISUAL "blocks.%lld." suffix, (long long)block), name)
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
  vlm_manifest_add(manifest, projector, 1, SHAPE(embed), VISUAL "merger.ln_q.weight");
  vlm_manifest_add(manifest, projector, 1, SHAPE(embed), VISUAL "merger.ln_q.bias");
  declare_linear(manifest, projector, merged, merged, VISUAL "merger.mlp.0");
  declare_linear(manifest, projector, vision->out_hidden_size, merged, VISUAL "merger.mlp.2");
}

static vlm_status declare_tensors(const vlm_model_config *config,
                                  vlm_tensor_manifest *manifest) {
  static const vlm_decoder_layout layout = {0};
  vlm_declare_text_decoder(manifest, &config->text, config->tie_word_embeddings,
                           "model.language_model.", &layout);
  declare_vision(&config->vision, manifest);
  return VLM_OK;
}

/* ---- Shapes --------------------------------------------------------------- */

static vlm_status check_vision(const vlm_vision_config *vision) {
  int64_t merge = vision->spatial_merge_size;
  if (vision->hidden_size <= 0 || vision->num_attention_heads <= 0 || vision->head_dim % 4 != 0 || merge <= 0 ||
      vision->patch_size <= 0 || vision->temporal_patch_size <= 0 || vision->out_hidden_size <= 0)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: the Qwen2-VL vision config does not fit together "
                     "(head_dim %lld must split into 4 rotary parts)", (long long)vision->head_dim);
  return VLM_OK;
}

/* ---- The image path (vlm_family_image) --------------------------------- */

static vlm_status encoder_rows(const vlm_model_config *config, const vlm_media_item *item, int64_t *out_rows) {
  VLM_RETURN_IF_ERROR(check_vision(&config->vision));
  return vlm_qwen_vl_encoder_rows(config, item, out_rows);
}

/* patches (padded with zero rows), each row's (row, column) in the grid in
 * the processor's block-major order, and its frame as the attention
 * segment (vision_utils.get_vision_attention_seqlens: one per frame);
 * padding rows are segment -1, by themselves. */
static vlm_status encoder_inputs(const vlm_model_config *config, const vlm_media_item *item, int64_t rows,
                                 vlm_tensor_list *out) {
  const vlm_vision_config *vision = &config->vision;
  int64_t grid[3], real = 0;
  VLM_RETURN_IF_ERROR(encoder_rows(config, item, &real));
  VLM_RETURN_IF_ERROR(vlm_qwen_vl_item_grid(vision, item, grid));
  int64_t merge = vision->spatial_merge_size;
  if (rows < real || rows % (merge * merge))
    return VLM_ERROR(INVALID_ARGUMENT, "%lld encoder rows cannot hold the image's %lld (in whole merge blocks)",
                     (long long)rows, (long long)real);
  const vlm_named_tensor *pixels = vlm_media_item_tensor(item, "pixel_values");
  int64_t width = pixels->shape[1];
  float *patches = NULL;
  int32_t *positions = NULL, *segments = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "patches", VLM_DTYPE_F32, 2, SHAPE(rows, width), (void **)&patches));
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "rope_positions", VLM_DTYPE_I32, 2, SHAPE(2, rows), (void **)&positions));
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "segments", VLM_DTYPE_I32, 1, SHAPE(rows), (void **)&segments));
  memcpy(patches, pixels->data, (size_t)(real * width) * sizeof(float));
  vlm_qwen_vl_patch_positions(grid, merge, positions, positions + rows, segments);
  for (int64_t r = real; r < rows; r++) segments[r] = -1;
  return VLM_OK;
}

static int32_t vision_block(const vlm_vision_config *vision, vlm_graph *graph, vlm_activation activation,
                            int32_t residual, int32_t positions, int32_t segments, int64_t block) {
  int64_t embed = vision->hidden_size;
  double eps = vision->layer_norm_eps;
  char prefix[64], module[VLM_GRAPH_NAME_LENGTH];
  snprintf(prefix, sizeof(prefix), VISUAL "blocks.%lld.", (long long)block);
#define MODULE(suffix) (snprintf(module, sizeof(module), "%s" suffix, prefix), module)
  int32_t x = vlm_qwen_vl_layer_norm(graph, residual, MODULE("norm1"), embed, eps);
  x = vlm_qwen_vl_attention(graph, vision, x, positions, segments, prefix);
  residual = vlm_graph_add(graph, residual, x, "%sresidual_attention", prefix);
  x = vlm_qwen_vl_layer_norm(graph, residual, MODULE("norm2"), embed, eps);
  x = vlm_qwen_vl_linear(graph, x, MODULE("mlp.fc1"), vision->intermediate_size, embed, true);
  x = vlm_graph_activation(graph, x, activation, "%smlp.act", prefix);
  x = vlm_qwen_vl_linear(graph, x, MODULE("mlp.fc2"), embed, vision->intermediate_size, true);
#undef MODULE
  return vlm_graph_add(graph, residual, x, VISUAL "blocks.%lld", (long long)block);
}

static vlm_status build_encoder(const vlm_model_config *config, int64_t rows, vlm_graph *graph,
                                vlm_encoder_nodes *out_nodes) {
  const vlm_vision_config *vision = &config->vision;
  VLM_RETURN_IF_ERROR(check_vision(vision));
  int64_t merge = vision->spatial_merge_size, embed = vision->hidden_size;
  int64_t width = vision->num_channels * vision->temporal_patch_size * vision->patch_size * vision->patch_size;
  if (rows <= 0 || rows % (merge * merge))
    return VLM_ERROR(INVALID_ARGUMENT, "%lld encoder rows are not whole merge blocks", (long long)rows);
  vlm_activation activation = VLM_ACTIVATION_QUICK_GELU;
  if (!vlm_activation_from_name(vision->hidden_act, &activation))
    return VLM_ERROR(UNIMPLEMENTED, "vision encoder: activation '%s' is not supported", vision->hidden_act);
  graph->ropes[0] = vlm_qwen_vl_vision_rope(vision, graph);
  graph->rope_count = 1;
  if (!graph->ropes[0]) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  int32_t patches = vlm_graph_input(graph, VLM_DTYPE_F32, 2, SHAPE(rows, width), "patches");
  int32_t positions = vlm_graph_input(graph, VLM_DTYPE_I32, 2, SHAPE(2, rows), "rope_positions");
  int32_t segments = vlm_graph_input(graph, VLM_DTYPE_I32, 1, SHAPE(rows), "segments");
  int32_t kernel = vlm_graph_weight(graph, VISUAL "patch_embed.proj.weight", VLM_DTYPE_INVALID, 5,
                                    SHAPE(embed, vision->num_channels, vision->temporal_patch_size,
                                          vision->patch_size, vision->patch_size));
  kernel = vlm_graph_reshape(graph, kernel, 2, SHAPE(embed, width), VISUAL "patch_embed.proj.weight_as_matrix");
  int32_t hidden = vlm_graph_linear(graph, patches, kernel, -1, VISUAL "patch_embed");
  for (int64_t block = 0; block < vision->num_hidden_layers; block++)
    hidden = vision_block(vision, graph, activation, hidden, positions, segments, block);
  int32_t encoded = hidden;
  int64_t merged = embed * merge * merge;
  int32_t x = vlm_qwen_vl_layer_norm(graph, hidden, VISUAL "merger.ln_q", embed, vision->layer_norm_eps);
  x = vlm_graph_reshape(graph, x, 2, SHAPE(rows / (merge * merge), merged), VISUAL "merger.grouped");
  x = vlm_qwen_vl_linear(graph, x, VISUAL "merger.mlp.0", merged, merged, true);
  x = vlm_graph_activation(graph, x, VLM_ACTIVATION_GELU, VISUAL "merger.mlp.1");
  x = vlm_qwen_vl_linear(graph, x, VISUAL "merger.mlp.2", vision->out_hidden_size, merged, true);
  if (vision->out_hidden_size != config->text.hidden_size)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: the merger gives %lld-wide features, the decoder takes %lld",
                     (long long)vision->out_hidden_size, (long long)config->text.hidden_size);
  graph->output = x;
  *out_nodes = (vlm_encoder_nodes){.output = x, .stage_count = 2};
  out_nodes->stages[0].stage = "vision_encoder";
  out_nodes->stages[0].node = encoded;
  out_nodes->stages[1].stage = "projector";
  out_nodes->stages[1].node = x;
  return vlm_graph_take_error(graph);
}

static const vlm_family_image image_path = {
    .placeholder_token = vlm_qwen_vl_placeholder_token,
    .content_placeholder = vlm_qwen_vl_content_placeholder,
    .token_count = vlm_qwen_vl_token_count,
    .expand = vlm_qwen_vl_expand,
    .encoder_rows = encoder_rows,
    .encoder_inputs = encoder_inputs,
    .build_encoder = build_encoder,
    .encoder_buckets = vlm_qwen_vl_encoder_buckets,
};

static const vlm_family_layout layouts[] = {
    {"Transformers 5.23", "qwen2_vl", false},
    {"hub 4.x", "qwen2_vl_v4", false},
};

const vlm_family vlm_family_qwen2_vl = {
    .model_type = "qwen2_vl",
    .display_name = "Qwen2-VL",
    .layouts = layouts, .layout_count = 2,
    .has_vision = true,
    .prompt_flow = VLM_PROMPT_FLOW_PROCESSOR,
    .renames = vlm_qwen_vl_v4_renames,
    .rename_count = VLM_QWEN_VL_V4_RENAME_COUNT,
    .declare_tensors = declare_tensors,
    .describe_decoder = vlm_qwen_vl_describe_decoder,
    .image = &image_path,
    .positions = vlm_qwen_vl_positions,
};
