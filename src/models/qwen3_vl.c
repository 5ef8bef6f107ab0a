/* Qwen3-VL (dense): Qwen2-VL's processor classes, placeholders and M-RoPE
 * positions, another tower, a Qwen3 decoder (per-head q/k norms) with
 * interleaved M-RoPE, and DeepStack. Transformers 5.23.0's
 * Qwen3VLForConditionalGeneration (modeling_qwen3_vl.py):
 *
 *   patch_embed  Conv3d(C, E, (T, P, P), with bias) = a linear over the
 *                processor's flattened patches
 *   pos_embed    a learned side x side table resampled to each image's
 *                patch grid (bilinear, align_corners: four taps a patch,
 *                vision_utils.get_vision_interpolation_indices_and_weights,
 *                in the processor's merge-block order), added to the patches
 *   blocks       x = x + proj(attention(rope(qkv(norm1(x)))))    per image
 *                x = x + linear_fc2(act(linear_fc1(norm2(x))))    LayerNorm 1e-6
 *   merger       linear_fc2(GELU(linear_fc1(norm(x).view(-1, 4E))))
 *   DeepStack    deepstack_merger_list[j] on the output of block
 *                deepstack_visual_indexes[j]: the same MLP with its
 *                LayerNorm after the view (over 4E); feature j is added to
 *                the decoder's hidden states at the image tokens after
 *                decoder layer j (Qwen3VLTextModel._deepstack_process)
 *
 * DeepStack reaches the decoder through the general layer-features
 * contract (models/decoder.h): the encoder's output row is the merger's
 * feature then the DeepStack ones, [tokens, (1 + L) * hidden], and the
 * description lists layers 0..L-1. The interpolation taps and weights are
 * computed on the host in float32 as Transformers does (they depend only
 * on the grid); the graph gathers the four table rows and weights them
 * (scale_rows). */
#include <math.h>
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
#define TAPS 4
/* Every LayerNorm of the tower and mergers: nn.LayerNorm(..., eps=1e-6) in code. */
#define VISION_EPS 1e-6

static void declare_linear(vlm_tensor_manifest *manifest, vlm_component component, int64_t out, int64_t in,
                           const char *name) {
  vlm_manifest_add(manifest, component, 2, SHAPE(out, in), "%s.weight", name);
  vlm_manifest_add(manifest, component, 1, SHAPE(out), "%s.bias", name);
}

static void declare_norm(vlm_tensor_manifest *manifest, vlm_component component, int64_t width, const char *name) {
  vlm_manifest_add(manifest, component, 1, SHAPE(width), "%s.weight", name);
  vlm_manifest_add(manifest, component, 1, SHAPE(width), "%s.bias", name);
}

/* merger (norm before the view) or a DeepStack merger (after it). */
static void declare_merger(const vlm_vision_config *vision, vlm_tensor_manifest *manifest, const char *prefix,
                           bool postshuffle) {
  const vlm_component projector = VLM_COMPONENT_PROJECTOR;
  int64_t embed = vision->hidden_size, merged = embed * vision->spatial_merge_size * vision->spatial_merge_size;
  char norm[128], fc1[128], fc2[128];
  /* The prefixes are this file's short literals; a truncated name would only
   * declare a tensor no checkpoint has, which the manifest check refuses. */
  if (snprintf(norm, sizeof(norm), "%snorm", prefix) >= (int)sizeof(norm) ||
      snprintf(fc1, sizeof(fc1), "%slinear_fc1", prefix) >= (int)sizeof(fc1) ||
      snprintf(fc2, sizeof(fc2), "%slinear_fc2", prefix) >= (int)sizeof(fc2))
    norm[0] = fc1[0] = fc2[0] = '\0';
  declare_norm(manifest, projector, postshuffle ? merged : embed, norm);
  declare_linear(manifest, projector, merged, merged, fc1);
  declare_linear(manifest, projector, vision->out_hidden_size, merged, fc2);
}

void vlm_qwen3_vl_declare_vision(const vlm_vision_config *vision, vlm_tensor_manifest *manifest) {
  const vlm_component tower = VLM_COMPONENT_VISION_TOWER;
  int64_t embed = vision->hidden_size, patch = vision->patch_size, inner = vision->intermediate_size;
  vlm_manifest_add(manifest, tower, 5, SHAPE(embed, vision->num_channels, vision->temporal_patch_size, patch, patch),
                   VISUAL "patch_embed.proj.weight");
  vlm_manifest_add(manifest, tower, 1, SHAPE(embed), VISUAL "patch_embed.proj.bias");
  vlm_manifest_add(manifest, tower, 2, SHAPE(vision->num_position_embeddings, embed), VISUAL "pos_embed.weight");
  char name[128];
  for (int64_t block = 0; block < vision->num_hidden_layers; block++) {
#define BLOCK(suffix) (snprintf(name, sizeof(name), VISUAL "blocks.%lld." suffix, (long long)block), name)
    declare_norm(manifest, tower, embed, BLOCK("norm1"));
    declare_norm(manifest, tower, embed, BLOCK("norm2"));
    declare_linear(manifest, tower, 3 * embed, embed, BLOCK("attn.qkv"));
    declare_linear(manifest, tower, embed, embed, BLOCK("attn.proj"));
    declare_linear(manifest, tower, inner, embed, BLOCK("mlp.linear_fc1"));
    declare_linear(manifest, tower, embed, inner, BLOCK("mlp.linear_fc2"));
#undef BLOCK
  }
  declare_merger(vision, manifest, VISUAL "merger.", false);
  for (size_t j = 0; j < vision->deepstack_visual_indexes.count; j++) {
    snprintf(name, sizeof(name), VISUAL "deepstack_merger_list.%zu.", j);
    declare_merger(vision, manifest, name, true);
  }
}

static vlm_status declare_tensors(const vlm_model_config *config, vlm_tensor_manifest *manifest) {
  static const vlm_decoder_layout layout = {.qk_norm = true};
  vlm_declare_text_decoder(manifest, &config->text, config->tie_word_embeddings, "model.language_model.", &layout);
  vlm_qwen3_vl_declare_vision(&config->vision, manifest);
  return VLM_OK;
}

/* The Qwen3 decoder; DeepStack feature j goes in after layer j. */
void vlm_qwen3_vl_describe_decoder(const vlm_model_config *config, vlm_decoder_description *out) {
  vlm_qwen_vl_describe_decoder(config, out);
  out->layout.qk_norm = true;
  size_t count = config->vision.deepstack_visual_indexes.count;
  if (count > (size_t)config->text.num_hidden_layers) count = (size_t)config->text.num_hidden_layers;
  out->layer_features.count = count;
  for (size_t j = 0; j < count; j++) out->layer_features.values[j] = (int64_t)j;
}

/* ---- Shapes --------------------------------------------------------------- */

/* The learned table's side: int(num_position_embeddings ** 0.5). */
static int64_t table_side(const vlm_vision_config *vision) {
  int64_t side = (int64_t)sqrt((double)vision->num_position_embeddings);
  while (side * side > vision->num_position_embeddings) side--;
  while ((side + 1) * (side + 1) <= vision->num_position_embeddings) side++;
  return side;
}

static vlm_status check_vision(const vlm_model_config *config) {
  const vlm_vision_config *vision = &config->vision;
  if (vision->hidden_size <= 0 || vision->num_attention_heads <= 0 || vision->head_dim % 4 != 0 ||
      vision->spatial_merge_size <= 0 || vision->patch_size <= 0 || vision->temporal_patch_size <= 0 ||
      vision->out_hidden_size <= 0 || vision->intermediate_size <= 0)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: the Qwen3-VL vision config does not fit together "
                     "(head_dim %lld must split into 4 rotary parts)", (long long)vision->head_dim);
  int64_t side = table_side(vision);
  if (side < 1 || side * side != vision->num_position_embeddings)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: vision_config.num_position_embeddings %lld is not a square grid",
                     (long long)vision->num_position_embeddings);
  for (size_t j = 0; j < vision->deepstack_visual_indexes.count; j++) {
    int64_t block = vision->deepstack_visual_indexes.values[j];
    if (block < 0 || block >= vision->num_hidden_layers)
      return VLM_ERROR(INVALID_ARGUMENT, "config.json: deepstack_visual_indexes names block %lld of %lld",
                       (long long)block, (long long)vision->num_hidden_layers);
  }
  if (vision->deepstack_visual_indexes.count > (size_t)config->text.num_hidden_layers)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: %zu DeepStack features for %lld decoder layers",
                     vision->deepstack_visual_indexes.count, (long long)config->text.num_hidden_layers);
  if (vision->out_hidden_size != config->text.hidden_size)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: the merger gives %lld-wide features, the decoder takes %lld",
                     (long long)vision->out_hidden_size, (long long)config->text.hidden_size);
  return VLM_OK;
}

/* ---- The image path (vlm_family_image) --------------------------------- */

static vlm_status encoder_rows(const vlm_model_config *config, const vlm_media_item *item, int64_t *out_rows) {
  VLM_RETURN_IF_ERROR(check_vision(config));
  return vlm_qwen_vl_encoder_rows(config, item, out_rows);
}

/* _interpolation_axis_taps_weights (bilinear, align_corners, border), in
 * float32 as torch computes it: src = index * (side - 1) / max(size - 1, 1). */
static void axis_taps(int64_t index, int64_t size, int64_t side, int32_t taps[2], float weights[2]) {
  float src = (float)index * (float)(side - 1) / (float)(size - 1 > 1 ? size - 1 : 1);
  float floor_src = floorf(src);
  for (int k = 0; k < 2; k++) {
    int64_t tap = (int64_t)floor_src + k;
    taps[k] = (int32_t)(tap < 0 ? 0 : tap > side - 1 ? side - 1 : tap);
    float distance = fabsf(src - floor_src - (float)k);
    weights[k] = 1.0f - distance > 0.0f ? 1.0f - distance : 0.0f;
  }
}

/* The graph's inputs, padded to `rows` (whole merge blocks; padding rows
 * zero, segment -1, position taps 0 with weight 0):
 *   patches [rows, C*T*P*P], rope_positions [2, rows], segments [rows]
 *   pos_index_K [rows] i32, pos_weight_K [rows] f32 for the four taps K
 *   (top-left, top-right, bottom-left, bottom-right) into the table */
static vlm_status encoder_inputs(const vlm_model_config *config, const vlm_media_item *item, int64_t rows,
                                 vlm_tensor_list *out) {
  const vlm_vision_config *vision = &config->vision;
  int64_t grid[3], real = 0;
  VLM_RETURN_IF_ERROR(encoder_rows(config, item, &real));
  VLM_RETURN_IF_ERROR(vlm_qwen_vl_item_grid(vision, item, grid));
  int64_t merge = vision->spatial_merge_size, side = table_side(vision);
  if (rows < real || rows % (merge * merge))
    return VLM_ERROR(INVALID_ARGUMENT, "%lld encoder rows cannot hold the image's %lld (in whole merge blocks)",
                     (long long)rows, (long long)real);
  const vlm_named_tensor *pixels = vlm_media_item_tensor(item, "pixel_values");
  int64_t width = pixels->shape[1];
  float *patches = NULL, *weights[TAPS];
  int32_t *positions = NULL, *segments = NULL, *indices[TAPS];
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "patches", VLM_DTYPE_F32, 2, SHAPE(rows, width), (void **)&patches));
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "rope_positions", VLM_DTYPE_I32, 2, SHAPE(2, rows), (void **)&positions));
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "segments", VLM_DTYPE_I32, 1, SHAPE(rows), (void **)&segments));
  for (int k = 0; k < TAPS; k++) {
    char name[32];
    snprintf(name, sizeof(name), "pos_index_%d", k);
    VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, name, VLM_DTYPE_I32, 1, SHAPE(rows), (void **)&indices[k]));
    snprintf(name, sizeof(name), "pos_weight_%d", k);
    VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, name, VLM_DTYPE_F32, 1, SHAPE(rows), (void **)&weights[k]));
  }
  memcpy(patches, pixels->data, (size_t)(real * width) * sizeof(float));
  vlm_qwen_vl_patch_positions(grid, merge, positions, positions + rows, segments);
  for (int64_t r = 0; r < real; r++) {
    int32_t row_taps[2], column_taps[2];
    float row_weights[2], column_weights[2];
    axis_taps(positions[r], grid[1], side, row_taps, row_weights);
    axis_taps(positions[rows + r], grid[2], side, column_taps, column_weights);
    for (int a = 0; a < 2; a++)
      for (int b = 0; b < 2; b++) {
        indices[2 * a + b][r] = (int32_t)(row_taps[a] * side + column_taps[b]);
        weights[2 * a + b][r] = row_weights[a] * column_weights[b];
      }
  }
  for (int64_t r = real; r < rows; r++) segments[r] = -1;
  return VLM_OK;
}

/* sum over the taps of pos_embed[index_K] * weight_K, in tap order. */
static int32_t position_embedding(const vlm_vision_config *vision, vlm_graph *graph, int64_t rows) {
  int32_t table = vlm_graph_weight(graph, VISUAL "pos_embed.weight", VLM_DTYPE_INVALID, 2,
                                   SHAPE(vision->num_position_embeddings, vision->hidden_size));
  int32_t sum = -1;
  for (int k = 0; k < TAPS; k++) {
    char name[32];
    snprintf(name, sizeof(name), "pos_index_%d", k);
    int32_t index = vlm_graph_input(graph, VLM_DTYPE_I32, 1, SHAPE(rows), name);
    snprintf(name, sizeof(name), "pos_weight_%d", k);
    int32_t weight = vlm_graph_input(graph, VLM_DTYPE_F32, 1, SHAPE(rows), name);
    int32_t tap = vlm_graph_gather(graph, table, index, VISUAL "pos_embed.tap_%d", k);
    tap = vlm_graph_scale_rows(graph, tap, weight, VISUAL "pos_embed.tap_%d_weighted", k);
    sum = k == 0 ? tap : vlm_graph_add(graph, sum, tap, VISUAL "pos_embed.taps_0_to_%d", k);
  }
  return sum;
}

static int32_t vision_block(const vlm_vision_config *vision, vlm_graph *graph, vlm_activation activation,
                            int32_t residual, int32_t positions, int32_t segments, int64_t block) {
  int64_t embed = vision->hidden_size, inner = vision->intermediate_size;
  char prefix[64], module[VLM_GRAPH_NAME_LENGTH];
  snprintf(prefix, sizeof(prefix), VISUAL "blocks.%lld.", (long long)block);
#define MODULE(suffix) (snprintf(module, sizeof(module), "%s" suffix, prefix), module)
  int32_t x = vlm_qwen_vl_layer_norm(graph, residual, MODULE("norm1"), embed, VISION_EPS);
  x = vlm_qwen_vl_attention(graph, vision, x, positions, segments, prefix);
  residual = vlm_graph_add(graph, residual, x, "%sresidual_attention", prefix);
  x = vlm_qwen_vl_layer_norm(graph, residual, MODULE("norm2"), embed, VISION_EPS);
  x = vlm_qwen_vl_linear(graph, x, MODULE("mlp.linear_fc1"), inner, embed, true);
  x = vlm_graph_activation(graph, x, activation, "%smlp.act", prefix);
  x = vlm_qwen_vl_linear(graph, x, MODULE("mlp.linear_fc2"), embed, inner, true);
#undef MODULE
  return vlm_graph_add(graph, residual, x, VISUAL "blocks.%lld", (long long)block);
}

/* Qwen3VLVisionPatchMerger: the norm before the 4-row view (merger) or
 * after it (DeepStack's use_postshuffle_norm), then fc1, GELU (erf), fc2. */
static int32_t merger(const vlm_vision_config *vision, vlm_graph *graph, int32_t x, const char *prefix,
                      bool postshuffle) {
  int64_t embed = vision->hidden_size, merged = embed * vision->spatial_merge_size * vision->spatial_merge_size;
  int64_t rows = vlm_graph_node(graph, x) ? vlm_graph_node(graph, x)->shape[0] : 0;
  char module[VLM_GRAPH_NAME_LENGTH];
  snprintf(module, sizeof(module), "%snorm", prefix);
  if (!postshuffle) x = vlm_qwen_vl_layer_norm(graph, x, module, embed, VISION_EPS);
  x = vlm_graph_reshape(graph, x, 2, SHAPE(rows * embed / merged, merged), "%sgrouped", prefix);
  if (postshuffle) x = vlm_qwen_vl_layer_norm(graph, x, module, merged, VISION_EPS);
  snprintf(module, sizeof(module), "%slinear_fc1", prefix);
  x = vlm_qwen_vl_linear(graph, x, module, merged, merged, true);
  x = vlm_graph_activation(graph, x, VLM_ACTIVATION_GELU, "%sact_fn", prefix);
  snprintf(module, sizeof(module), "%slinear_fc2", prefix);
  return vlm_qwen_vl_linear(graph, x, module, vision->out_hidden_size, merged, true);
}

static vlm_status build_encoder(const vlm_model_config *config, int64_t rows, vlm_graph *graph,
                                vlm_encoder_nodes *out_nodes) {
  const vlm_vision_config *vision = &config->vision;
  VLM_RETURN_IF_ERROR(check_vision(config));
  int64_t merge = vision->spatial_merge_size, embed = vision->hidden_size;
  int64_t width = vision->num_channels * vision->temporal_patch_size * vision->patch_size * vision->patch_size;
  if (rows <= 0 || rows % (merge * merge))
    return VLM_ERROR(INVALID_ARGUMENT, "%lld encoder rows are not whole merge blocks", (long long)rows);
  vlm_activation activation;
  if (!vlm_activation_from_name(vision->hidden_act, &activation))
    return VLM_ERROR(UNIMPLEMENTED, "vision encoder: activation '%s' is not supported", vision->hidden_act);
  size_t deepstack = vision->deepstack_visual_indexes.count;
  if (1 + deepstack > VLM_GRAPH_MAX_INPUTS)
    return VLM_ERROR(UNIMPLEMENTED, "vision encoder: %zu DeepStack features are more than the graph joins", deepstack);
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
  int32_t bias = vlm_graph_weight(graph, VISUAL "patch_embed.proj.bias", VLM_DTYPE_INVALID, 1, SHAPE(embed));
  int32_t hidden = vlm_graph_linear(graph, patches, kernel, bias, VISUAL "patch_embed");
  hidden = vlm_graph_add(graph, hidden, position_embedding(vision, graph, rows), VISUAL "patch_embed_positioned");
  int32_t embedded = hidden;
  int32_t parts[VLM_GRAPH_MAX_INPUTS];
  int part_count = 1;
  for (int64_t block = 0; block < vision->num_hidden_layers; block++) {
    hidden = vision_block(vision, graph, activation, hidden, positions, segments, block);
    for (size_t j = 0; j < deepstack; j++) {
      if (vision->deepstack_visual_indexes.values[j] != block) continue;
      char prefix[64];
      snprintf(prefix, sizeof(prefix), VISUAL "deepstack_merger_list.%zu.", j);
      parts[1 + j] = merger(vision, graph, hidden, prefix, true);
      part_count++;
    }
  }
  int32_t encoded = hidden;
  parts[0] = merger(vision, graph, hidden, VISUAL "merger.", false);
  int32_t output = parts[0], layer_features = -1;
  if (deepstack) {
    layer_features = deepstack == 1 ? parts[1]
                                    : vlm_graph_concat(graph, parts + 1, (int)deepstack, 1, VISUAL "deepstack_features");
    output = vlm_graph_concat(graph, parts, part_count, 1, VISUAL "features_and_deepstack");
  }
  graph->output = output;
  *out_nodes = (vlm_encoder_nodes){.output = output, .stage_count = 3};
  out_nodes->stages[0].stage = "vision_embeddings";
  out_nodes->stages[0].node = embedded;
  out_nodes->stages[1].stage = "vision_encoder";
  out_nodes->stages[1].node = encoded;
  out_nodes->stages[2].stage = "projector";
  out_nodes->stages[2].node = parts[0];
  if (deepstack) {
    out_nodes->stages[3].stage = "deepstack_features";
    out_nodes->stages[3].node = layer_features;
    out_nodes->stage_count = 4;
  }
  return vlm_graph_take_error(graph);
}

const vlm_family_image vlm_qwen3_vl_image = {
    .placeholder_token = vlm_qwen_vl_placeholder_token,
    .content_placeholder = vlm_qwen_vl_content_placeholder,
    .token_count = vlm_qwen_vl_token_count,
    .expand = vlm_qwen_vl_expand,
    .encoder_rows = encoder_rows,
    .encoder_inputs = encoder_inputs,
    .build_encoder = build_encoder,
    .encoder_buckets = vlm_qwen_vl_encoder_buckets,
};

/* The hub's Qwen3-VL checkpoints already use the canonical
 * model.language_model.* / model.visual.* names: no renames. */
static const vlm_family_layout layouts[] = {
    {"Transformers 5.23", "qwen3_vl", false},
};

const vlm_family vlm_family_qwen3_vl = {
    .model_type = "qwen3_vl",
    .display_name = "Qwen3-VL",
    .layouts = layouts, .layout_count = 1,
    .has_vision = true,
    .prompt_flow = VLM_PROMPT_FLOW_PROCESSOR,
    .declare_tensors = declare_tensors,
    .describe_decoder = vlm_qwen3_vl_describe_decoder,
    .image = &vlm_qwen3_vl_image,
    .positions = vlm_qwen_vl_positions,
};
