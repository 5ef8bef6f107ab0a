/* Qwen2.5-VL: Qwen2-VL's processor, placeholders, M-RoPE positions and
 * decoder, with another tower. Transformers 5.23.0's
 * Qwen2_5_VLForConditionalGeneration (modeling_qwen2_5_vl.py):
 *
 *   patch_embed  Conv3d(C, E, (T, P, P), no bias) = a linear over the
 *                processor's flattened patches
 *   window order the merged tokens (2x2 patch blocks) permuted so that
 *                each window of W x W of them (W = window_size / merge /
 *                patch) is consecutive (get_vision_window_index), and
 *                the RoPE cos/sin with them
 *   blocks       x = x + proj(attention(rope(qkv(rms_norm1(x)))))
 *                x = x + down(silu(gate(rms_norm2(x))) * up(...)), biases
 *                attention within each window, or within each image
 *                (frame) in the fullatt_block_indexes blocks
 *   merger       mlp(rms_norm(x).view(-1, 4E)): Linear, GELU, Linear;
 *                then the merged rows back in the processor's order
 *                (argsort of the window index)
 *
 * Windows at the bottom and right edges are cut short when the merged
 * grid does not divide into whole windows (Transformers pads the index
 * with -100 and drops the padding). In the graph the patches are permuted
 * after the patch embedding by a gather of merged-token rows (Transformers'
 * permute_input_for_window_attn); the RoPE positions, and the attention
 * segments, come in window order from the host; a final gather restores
 * the processor's order. */
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

static void declare_linear(vlm_tensor_manifest *manifest, vlm_component component, int64_t out, int64_t in,
                           const char *name) {
  vlm_manifest_add(manifest, component, 2, SHAPE(out, in), "%s.weight", name);
  vlm_manifest_add(manifest, component, 1, SHAPE(out), "%s.bias", name);
}

static void declare_vision(const vlm_vision_config *vision, vlm_tensor_manifest *manifest) {
  const vlm_component tower = VLM_COMPONENT_VISION_TOWER;
  int64_t embed = vision->hidden_size, patch = vision->patch_size, inner = vision->intermediate_size;
  vlm_manifest_add(manifest, tower, 5, SHAPE(embed, vision->num_channels, vision->temporal_patch_size, patch, patch),
                   VISUAL "patch_embed.proj.weight");
  char name[128];
  for (int64_t block = 0; block < vision->num_hidden_layers; block++) {
#define BLOCK(suffix) (snprintf(name, sizeof(name), VISUAL "blocks.%lld." suffix, (long long)block), name)
    vlm_manifest_add(manifest, tower, 1, SHAPE(embed), "%s", BLOCK("norm1.weight"));
    vlm_manifest_add(manifest, tower, 1, SHAPE(embed), "%s", BLOCK("norm2.weight"));
    declare_linear(manifest, tower, 3 * embed, embed, BLOCK("attn.qkv"));
    declare_linear(manifest, tower, embed, embed, BLOCK("attn.proj"));
    declare_linear(manifest, tower, inner, embed, BLOCK("mlp.gate_proj"));
    declare_linear(manifest, tower, inner, embed, BLOCK("mlp.up_proj"));
    declare_linear(manifest, tower, embed, inner, BLOCK("mlp.down_proj"));
#undef BLOCK
  }
  const vlm_component projector = VLM_COMPONENT_PROJECTOR;
  int64_t merged = embed * vision->spatial_merge_size * vision->spatial_merge_size;
  vlm_manifest_add(manifest, projector, 1, SHAPE(embed), VISUAL "merger.ln_q.weight");
  declare_linear(manifest, projector, merged, merged, VISUAL "merger.mlp.0");
  declare_linear(manifest, projector, vision->out_hidden_size, merged, VISUAL "merger.mlp.2");
}

static vlm_status declare_tensors(const vlm_model_config *config, vlm_tensor_manifest *manifest) {
  static const vlm_decoder_layout layout = {0};
  vlm_declare_text_decoder(manifest, &config->text, config->tie_word_embeddings, "model.language_model.", &layout);
  declare_vision(&config->vision, manifest);
  return VLM_OK;
}

/* ---- Shapes --------------------------------------------------------------- */

/* Merged tokens per window side: window_size // merge // patch. */
static int64_t window_tokens(const vlm_vision_config *vision) {
  int64_t merge = vision->spatial_merge_size, patch = vision->patch_size;
  return merge > 0 && patch > 0 ? vision->window_size / merge / patch : 0;
}

static vlm_status check_vision(const vlm_vision_config *vision) {
  if (vision->hidden_size <= 0 || vision->num_attention_heads <= 0 || vision->head_dim % 4 != 0 ||
      vision->spatial_merge_size <= 0 || vision->patch_size <= 0 || vision->temporal_patch_size <= 0 ||
      vision->out_hidden_size <= 0 || vision->intermediate_size <= 0)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: the Qwen2.5-VL vision config does not fit together "
                     "(head_dim %lld must split into 4 rotary parts)", (long long)vision->head_dim);
  if (window_tokens(vision) < 1)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: vision_config.window_size %lld is smaller than one merged "
                     "token (%lld px)", (long long)vision->window_size,
                     (long long)(vision->spatial_merge_size * vision->patch_size));
  return VLM_OK;
}

static bool full_attention_block(const vlm_vision_config *vision, int64_t block) {
  for (size_t i = 0; i < vision->fullatt_block_indexes.count; i++)
    if (vision->fullatt_block_indexes.values[i] == block) return true;
  return false;
}

/* ---- The image path (vlm_family_image) --------------------------------- */

static vlm_status encoder_rows(const vlm_model_config *config, const vlm_media_item *item, int64_t *out_rows) {
  VLM_RETURN_IF_ERROR(check_vision(&config->vision));
  return vlm_qwen_vl_encoder_rows(config, item, out_rows);
}

/* get_vision_window_index for one item: order[q] is the merged token (in
 * the processor's order) at window position q; window[q] its window,
 * counted over the non-empty windows (cu_window_seqlens after
 * unique_consecutive). Windows run frame by frame, row by row of windows,
 * each raster-ordered inside. */
static void window_order(const int64_t grid[3], int64_t merge, int64_t side, int32_t *order, int32_t *window) {
  int64_t height = grid[1] / merge, width = grid[2] / merge, q = 0, id = 0;
  for (int64_t t = 0; t < grid[0]; t++)
    for (int64_t top = 0; top < height; top += side)
      for (int64_t left = 0; left < width; left += side, id++)
        for (int64_t y = top; y < top + side && y < height; y++)
          for (int64_t x = left; x < left + side && x < width; x++, q++) {
            order[q] = (int32_t)((t * height + y) * width + x);
            window[q] = (int32_t)id;
          }
}

/* The graph's inputs, padded to `rows` (whole merge blocks; padding rows
 * zero, in segment -1 for both attentions, their merged tokens mapping to
 * themselves in both gathers):
 *   patches [rows, C*T*P*P]     the processor's patches, its order
 *   window_index [rows / 4]     merged token at each window position
 *   restore_index [rows / 4]    its inverse (argsort), for the merger
 *   rope_positions [2, rows]    each patch's (row, column), window order
 *   window_segments [rows]      each patch's window, window order
 *   segments [rows]             each patch's frame, window order */
static vlm_status encoder_inputs(const vlm_model_config *config, const vlm_media_item *item, int64_t rows,
                                 vlm_tensor_list *out) {
  const vlm_vision_config *vision = &config->vision;
  int64_t grid[3], real = 0;
  VLM_RETURN_IF_ERROR(encoder_rows(config, item, &real));
  VLM_RETURN_IF_ERROR(vlm_qwen_vl_item_grid(vision, item, grid));
  int64_t merge = vision->spatial_merge_size, block = merge * merge;
  if (rows < real || rows % block)
    return VLM_ERROR(INVALID_ARGUMENT, "%lld encoder rows cannot hold the image's %lld (in whole merge blocks)",
                     (long long)rows, (long long)real);
  const vlm_named_tensor *pixels = vlm_media_item_tensor(item, "pixel_values");
  int64_t width = pixels->shape[1], tokens = real / block, slots = rows / block;
  float *patches = NULL;
  int32_t *order = NULL, *restore = NULL, *positions = NULL, *windows = NULL, *segments = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "patches", VLM_DTYPE_F32, 2, SHAPE(rows, width), (void **)&patches));
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "window_index", VLM_DTYPE_I32, 1, SHAPE(slots), (void **)&order));
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "restore_index", VLM_DTYPE_I32, 1, SHAPE(slots), (void **)&restore));
  VLM_RETURN_IF_ERROR(
      vlm_tensor_list_add(out, "rope_positions", VLM_DTYPE_I32, 2, SHAPE(2, rows), (void **)&positions));
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "window_segments", VLM_DTYPE_I32, 1, SHAPE(rows), (void **)&windows));
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "segments", VLM_DTYPE_I32, 1, SHAPE(rows), (void **)&segments));
  memcpy(patches, pixels->data, (size_t)(real * width) * sizeof(float));
  int32_t *window_of = malloc((size_t)(tokens + 1) * sizeof(int32_t));
  int32_t *patch_positions = malloc((size_t)(3 * real + 1) * sizeof(int32_t));
  if (!window_of || !patch_positions) {
    free(window_of);
    free(patch_positions);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for the window order");
  }
  window_order(grid, merge, window_tokens(vision), order, window_of);
  /* In the processor's order first, then each merged token's patches moved
   * to its window position. */
  int32_t *rows_of = patch_positions, *columns_of = patch_positions + real, *frames_of = patch_positions + 2 * real;
  vlm_qwen_vl_patch_positions(grid, merge, rows_of, columns_of, frames_of);
  for (int64_t q = 0; q < tokens; q++) {
    restore[order[q]] = (int32_t)q;
    for (int64_t k = 0; k < block; k++) {
      int64_t to = q * block + k, from = (int64_t)order[q] * block + k;
      positions[to] = rows_of[from];
      positions[rows + to] = columns_of[from];
      windows[to] = window_of[q];
      segments[to] = frames_of[from];
    }
  }
  for (int64_t q = tokens; q < slots; q++) order[q] = restore[q] = (int32_t)q;
  for (int64_t r = real; r < rows; r++) windows[r] = segments[r] = -1;
  free(window_of);
  free(patch_positions);
  return VLM_OK;
}

static int32_t vision_block(const vlm_vision_config *vision, vlm_graph *graph, int32_t residual, int32_t positions,
                            int32_t segments, int64_t block) {
  int64_t embed = vision->hidden_size, inner = vision->intermediate_size;
  double eps = vision->layer_norm_eps;
  char prefix[64], module[VLM_GRAPH_NAME_LENGTH];
  snprintf(prefix, sizeof(prefix), VISUAL "blocks.%lld.", (long long)block);
#define MODULE(suffix) (snprintf(module, sizeof(module), "%s" suffix, prefix), module)
  int32_t x = vlm_qwen_vl_rms_norm(graph, residual, MODULE("norm1"), embed, eps);
  x = vlm_qwen_vl_attention(graph, vision, x, positions, segments, prefix);
  residual = vlm_graph_add(graph, residual, x, "%sresidual_attention", prefix);
  x = vlm_qwen_vl_rms_norm(graph, residual, MODULE("norm2"), embed, eps);
  int32_t gate = vlm_qwen_vl_linear(graph, x, MODULE("mlp.gate_proj"), inner, embed, true);
  int32_t up = vlm_qwen_vl_linear(graph, x, MODULE("mlp.up_proj"), inner, embed, true);
  vlm_activation activation = VLM_ACTIVATION_SILU;
  vlm_activation_from_name(vision->hidden_act, &activation);
  x = vlm_graph_gated(graph, gate, up, activation, "%smlp.act_times_up", prefix);
  x = vlm_qwen_vl_linear(graph, x, MODULE("mlp.down_proj"), embed, inner, true);
#undef MODULE
  return vlm_graph_add(graph, residual, x, VISUAL "blocks.%lld", (long long)block);
}

static vlm_status build_encoder(const vlm_model_config *config, int64_t rows, vlm_graph *graph,
                                vlm_encoder_nodes *out_nodes) {
  const vlm_vision_config *vision = &config->vision;
  VLM_RETURN_IF_ERROR(check_vision(vision));
  int64_t merge = vision->spatial_merge_size, embed = vision->hidden_size, block = merge * merge;
  int64_t width = vision->num_channels * vision->temporal_patch_size * vision->patch_size * vision->patch_size;
  if (rows <= 0 || rows % block)
    return VLM_ERROR(INVALID_ARGUMENT, "%lld encoder rows are not whole merge blocks", (long long)rows);
  vlm_activation activation;
  if (!vlm_activation_from_name(vision->hidden_act, &activation))
    return VLM_ERROR(UNIMPLEMENTED, "vision encoder: activation '%s' is not supported", vision->hidden_act);
  if (vision->out_hidden_size != config->text.hidden_size)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: the merger gives %lld-wide features, the decoder takes %lld",
                     (long long)vision->out_hidden_size, (long long)config->text.hidden_size);
  graph->ropes[0] = vlm_qwen_vl_vision_rope(vision, graph);
  graph->rope_count = 1;
  if (!graph->ropes[0]) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  int64_t slots = rows / block, merged = embed * block;
  int32_t patches = vlm_graph_input(graph, VLM_DTYPE_F32, 2, SHAPE(rows, width), "patches");
  int32_t order = vlm_graph_input(graph, VLM_DTYPE_I32, 1, SHAPE(slots), "window_index");
  int32_t restore = vlm_graph_input(graph, VLM_DTYPE_I32, 1, SHAPE(slots), "restore_index");
  int32_t positions = vlm_graph_input(graph, VLM_DTYPE_I32, 2, SHAPE(2, rows), "rope_positions");
  int32_t windows = vlm_graph_input(graph, VLM_DTYPE_I32, 1, SHAPE(rows), "window_segments");
  int32_t frames = vlm_graph_input(graph, VLM_DTYPE_I32, 1, SHAPE(rows), "segments");
  int32_t kernel = vlm_graph_weight(graph, VISUAL "patch_embed.proj.weight", VLM_DTYPE_INVALID, 5,
                                    SHAPE(embed, vision->num_channels, vision->temporal_patch_size,
                                          vision->patch_size, vision->patch_size));
  kernel = vlm_graph_reshape(graph, kernel, 2, SHAPE(embed, width), VISUAL "patch_embed.proj.weight_as_matrix");
  int32_t hidden = vlm_graph_linear(graph, patches, kernel, -1, VISUAL "patch_embed");
  hidden = vlm_graph_reshape(graph, hidden, 2, SHAPE(slots, merged), VISUAL "patch_embed.merge_blocks");
  hidden = vlm_graph_gather(graph, hidden, order, VISUAL "patch_embed.window_order");
  hidden = vlm_graph_reshape(graph, hidden, 2, SHAPE(rows, embed), VISUAL "patch_embed.in_window_order");
  for (int64_t b = 0; b < vision->num_hidden_layers; b++)
    hidden = vision_block(vision, graph, hidden, positions, full_attention_block(vision, b) ? frames : windows, b);
  int32_t encoded = hidden;
  int32_t x = vlm_qwen_vl_rms_norm(graph, hidden, VISUAL "merger.ln_q", embed, vision->layer_norm_eps);
  x = vlm_graph_reshape(graph, x, 2, SHAPE(slots, merged), VISUAL "merger.grouped");
  x = vlm_qwen_vl_linear(graph, x, VISUAL "merger.mlp.0", merged, merged, true);
  x = vlm_graph_activation(graph, x, VLM_ACTIVATION_GELU, VISUAL "merger.mlp.1");
  x = vlm_qwen_vl_linear(graph, x, VISUAL "merger.mlp.2", vision->out_hidden_size, merged, true);
  x = vlm_graph_gather(graph, x, restore, VISUAL "merger.restored");
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
    {"Transformers 5.23", "qwen2_5_vl", false},
};

const vlm_family vlm_family_qwen2_5_vl = {
    .model_type = "qwen2_5_vl",
    .display_name = "Qwen2.5-VL",
    .layouts = layouts, .layout_count = 1,
    .has_vision = true,
    .prompt_flow = VLM_PROMPT_FLOW_PROCESSOR,
    .renames = vlm_qwen_vl_v4_renames,
    .rename_count = VLM_QWEN_VL_V4_RENAME_COUNT,
    .declare_tensors = declare_tensors,
    .describe_decoder = vlm_qwen_vl_describe_decoder,
    .image = &image_path,
    .positions = vlm_qwen_vl_positions,
};
