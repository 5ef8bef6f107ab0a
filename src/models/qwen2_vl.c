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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/tensor_list.h"
#include "graph/graph.h"
#include "io/json.h"
#include "media/media_item.h"
#include "models/decoder.h"

#define SHAPE VLM_SHAPE
#define VISUAL "model.visual."

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

static void describe_decoder(const vlm_model_config *config, vlm_decoder_description *out) {
  *out = (vlm_decoder_description){.text = &config->text,
                                   .tie_word_embeddings = config->tie_word_embeddings,
                                   .prefix = "model.language_model.", .embedding_scale = 1.0};
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

/* The item's grid in patches, checked against its pixel_values. */
static vlm_status item_grid(const vlm_vision_config *vision, const vlm_media_item *item, int64_t grid[3]) {
  int64_t merge = vision->spatial_merge_size;
  for (int a = 0; a < 3; a++) grid[a] = item->grid[a];
  if (grid[0] < 1 || grid[1] < merge || grid[2] < merge || grid[1] % merge || grid[2] % merge)
    return VLM_ERROR(INVALID_ARGUMENT, "image grid %lldx%lldx%lld is not whole %lldx%lld merge blocks",
                     (long long)grid[0], (long long)grid[1], (long long)grid[2], (long long)merge, (long long)merge);
  const vlm_named_tensor *pixels = vlm_media_item_tensor(item, "pixel_values");
  int64_t width = vision->num_channels * vision->temporal_patch_size * vision->patch_size * vision->patch_size;
  if (!pixels || pixels->dtype != VLM_DTYPE_F32 || pixels->rank != 2 || pixels->shape[1] != width ||
      pixels->shape[0] != grid[0] * grid[1] * grid[2])
    return VLM_ERROR(INVALID_ARGUMENT, "the image needs pixel_values [%lld, %lld] (its grid's patches), as "
                     "Qwen2VLImageProcessor makes them",
                     (long long)(grid[0] * grid[1] * grid[2]), (long long)width);
  return VLM_OK;
}

/* ---- The image path (vlm_family_image) --------------------------------- */

static int64_t placeholder_token(const vlm_model_config *config) { return config->image_token_id; }

static vlm_status token_count(const vlm_model_config *config, const vlm_processor_config *processor,
                              const int64_t grid[3], int64_t *out_count) {
  (void)processor;
  int64_t merge = config->vision.spatial_merge_size;
  if (merge <= 0 || grid[1] % merge || grid[2] % merge)
    return VLM_ERROR(INVALID_ARGUMENT, "image grid %lldx%lld is not whole %lldx%lld merge blocks", (long long)grid[1],
                     (long long)grid[2], (long long)merge, (long long)merge);
  *out_count = grid[0] * grid[1] * grid[2] / (merge * merge);
  return VLM_OK;
}

/* Qwen2VLProcessor: each image token becomes grid.prod() / merge^2 of them. */
static vlm_status expand(const vlm_model_config *config, const vlm_media_item *item, const char *placeholder,
                         vlm_token_text_fn token_text, void *context, vlm_string_builder *out) {
  (void)config, (void)token_text, (void)context;
  size_t length = strlen(placeholder);
  for (int64_t i = 0; i < item->token_count; i++) vlm_sb_append(out, placeholder, length);
  return VLM_OK;
}

static vlm_status encoder_rows(const vlm_model_config *config, const vlm_media_item *item, int64_t *out_rows) {
  int64_t grid[3];
  VLM_RETURN_IF_ERROR(check_vision(&config->vision));
  VLM_RETURN_IF_ERROR(item_grid(&config->vision, item, grid));
  *out_rows = grid[0] * grid[1] * grid[2];
  return VLM_OK;
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
  VLM_RETURN_IF_ERROR(item_grid(vision, item, grid));
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
  int64_t h = grid[1], w = grid[2], r = 0;
  for (int64_t t = 0; t < grid[0]; t++)
    for (int64_t block_row = 0; block_row < h / merge; block_row++)
      for (int64_t block_column = 0; block_column < w / merge; block_column++)
        for (int64_t y = 0; y < merge; y++)
          for (int64_t x = 0; x < merge; x++, r++) {
            positions[r] = (int32_t)(block_row * merge + y);
            positions[rows + r] = (int32_t)(block_column * merge + x);
            segments[r] = (int32_t)t;
          }
  for (; r < rows; r++) segments[r] = -1;
  return VLM_OK;
}

typedef struct vision_builder {
  const vlm_vision_config *vision;
  vlm_graph *graph;
  vlm_activation activation;
} vision_builder;

static int32_t weight(vision_builder *builder, const char *name, int rank, const int64_t *shape) {
  return vlm_graph_weight(builder->graph, name, VLM_DTYPE_INVALID, rank, shape);
}

static int32_t linear(vision_builder *builder, int32_t x, const char *module, int64_t out, int64_t in) {
  char weight_name[VLM_GRAPH_NAME_LENGTH], bias_name[VLM_GRAPH_NAME_LENGTH];
  snprintf(weight_name, sizeof(weight_name), "%s.weight", module);
  snprintf(bias_name, sizeof(bias_name), "%s.bias", module);
  return vlm_graph_linear(builder->graph, x, weight(builder, weight_name, 2, SHAPE(out, in)),
                          weight(builder, bias_name, 1, SHAPE(out)), "%s", module);
}

static int32_t layer_norm(vision_builder *builder, int32_t x, const char *module, int64_t width) {
  char weight_name[VLM_GRAPH_NAME_LENGTH], bias_name[VLM_GRAPH_NAME_LENGTH];
  snprintf(weight_name, sizeof(weight_name), "%s.weight", module);
  snprintf(bias_name, sizeof(bias_name), "%s.bias", module);
  return vlm_graph_layer_norm(builder->graph, x, weight(builder, weight_name, 1, SHAPE(width)),
                              weight(builder, bias_name, 1, SHAPE(width)), builder->vision->layer_norm_eps, "%s",
                              module);
}

static int32_t vision_block(vision_builder *builder, int32_t residual, int32_t positions, int32_t segments,
                            int64_t block) {
  const vlm_vision_config *vision = builder->vision;
  vlm_graph *graph = builder->graph;
  int64_t embed = vision->hidden_size, heads = vision->num_attention_heads, head_dim = vision->head_dim;
  int64_t rows = vlm_graph_node(graph, residual)->shape[0];
  char prefix[64], module[VLM_GRAPH_NAME_LENGTH];
  snprintf(prefix, sizeof(prefix), VISUAL "blocks.%lld.", (long long)block);
#define MODULE(suffix) (snprintf(module, sizeof(module), "%s" suffix, prefix), module)
  int32_t x = layer_norm(builder, residual, MODULE("norm1"), embed);
  int32_t qkv = linear(builder, x, MODULE("attn.qkv"), 3 * embed, embed);
  int32_t parts[3];
  static const char *const names[3] = {"q", "k", "v"};
  for (int i = 0; i < 3; i++) {
    parts[i] = vlm_graph_slice(graph, qkv, 1, i * embed, embed, "%sattn.%s", prefix, names[i]);
    parts[i] = vlm_graph_reshape(graph, parts[i], 3, SHAPE(rows, heads, head_dim), "%sattn.%s_heads", prefix,
                                 names[i]);
  }
  parts[0] = vlm_graph_rope_at(graph, parts[0], positions, 0, "%sattn.q_rope", prefix);
  parts[1] = vlm_graph_rope_at(graph, parts[1], positions, 0, "%sattn.k_rope", prefix);
  x = vlm_graph_segment_attention(graph, parts[0], parts[1], parts[2], segments, 1.0 / sqrt((double)head_dim),
                                  "%sattn.attention", prefix);
  x = linear(builder, x, MODULE("attn.proj"), embed, embed);
  residual = vlm_graph_add(graph, residual, x, "%sresidual_attention", prefix);
  x = layer_norm(builder, residual, MODULE("norm2"), embed);
  x = linear(builder, x, MODULE("mlp.fc1"), vision->intermediate_size, embed);
  x = vlm_graph_activation(graph, x, builder->activation, "%smlp.act", prefix);
  x = linear(builder, x, MODULE("mlp.fc2"), embed, vision->intermediate_size);
#undef MODULE
  return vlm_graph_add(graph, residual, x, VISUAL "blocks.%lld", (long long)block);
}

/* The tower's axial RoPE: theta from the vision config's rope_parameters
 * (10000 by default), default frequencies over head_dim / 2, one half per
 * axis (row, column). */
static const vlm_rope_config *vision_rope(const vlm_vision_config *vision, vlm_graph *graph) {
  vlm_rope_config *rope = vlm_arena_allocate(&graph->arena, sizeof(*rope), _Alignof(vlm_rope_config));
  if (!rope) return NULL;
  double theta = 10000.0;
  const vlm_json_value *parameters = vlm_json_object_get(vision->section, "rope_parameters");
  vlm_json_get_double(vlm_json_object_get(parameters, "rope_theta"), &theta);
  *rope = (vlm_rope_config){.type = VLM_ROPE_DEFAULT, .theta = theta, .factor = 1.0, .partial_rotary_factor = 1.0,
                            .rotary_dimension = vision->head_dim, .attention_factor = 1.0, .axial_axes = 2};
  return rope;
}

static vlm_status build_encoder(const vlm_model_config *config, int64_t rows, vlm_graph *graph,
                                vlm_encoder_nodes *out_nodes) {
  const vlm_vision_config *vision = &config->vision;
  VLM_RETURN_IF_ERROR(check_vision(vision));
  int64_t merge = vision->spatial_merge_size, embed = vision->hidden_size;
  int64_t width = vision->num_channels * vision->temporal_patch_size * vision->patch_size * vision->patch_size;
  if (rows <= 0 || rows % (merge * merge))
    return VLM_ERROR(INVALID_ARGUMENT, "%lld encoder rows are not whole merge blocks", (long long)rows);
  vision_builder builder = {vision, graph, VLM_ACTIVATION_QUICK_GELU};
  if (!vlm_activation_from_name(vision->hidden_act, &builder.activation))
    return VLM_ERROR(UNIMPLEMENTED, "vision encoder: activation '%s' is not supported", vision->hidden_act);
  graph->ropes[0] = vision_rope(vision, graph);
  graph->rope_count = 1;
  if (!graph->ropes[0]) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  int32_t patches = vlm_graph_input(graph, VLM_DTYPE_F32, 2, SHAPE(rows, width), "patches");
  int32_t positions = vlm_graph_input(graph, VLM_DTYPE_I32, 2, SHAPE(2, rows), "rope_positions");
  int32_t segments = vlm_graph_input(graph, VLM_DTYPE_I32, 1, SHAPE(rows), "segments");
  int32_t kernel = weight(&builder, VISUAL "patch_embed.proj.weight", 5,
                          SHAPE(embed, vision->num_channels, vision->temporal_patch_size, vision->patch_size,
                                vision->patch_size));
  kernel = vlm_graph_reshape(graph, kernel, 2, SHAPE(embed, width), VISUAL "patch_embed.proj.weight_as_matrix");
  int32_t hidden = vlm_graph_linear(graph, patches, kernel, -1, VISUAL "patch_embed");
  for (int64_t block = 0; block < vision->num_hidden_layers; block++)
    hidden = vision_block(&builder, hidden, positions, segments, block);
  int32_t encoded = hidden;
  int32_t x = layer_norm(&builder, hidden, VISUAL "merger.ln_q", embed);
  x = vlm_graph_reshape(graph, x, 2, SHAPE(rows / (merge * merge), embed * merge * merge), VISUAL "merger.grouped");
  x = linear(&builder, x, VISUAL "merger.mlp.0", embed * merge * merge, embed * merge * merge);
  x = vlm_graph_activation(graph, x, VLM_ACTIVATION_GELU, VISUAL "merger.mlp.1");
  x = linear(&builder, x, VISUAL "merger.mlp.2", vision->out_hidden_size, embed * merge * merge);
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

/* Rows the xla backend compiles for: doubling from 256 up to the most
 * rows smart_resize can give one frame, so every image size shares a few
 * functions. smart_resize can overshoot max_pixels: rounding adds up to
 * f/2 to each side (f = patch * merge), and for a narrow image the short
 * side is raised to f while the long one is only scaled to
 * sqrt(max * aspect) (aspect at most 200, its MAX_RATIO), so no frame
 * exceeds max + f * sqrt(200 * max) + f * f pixels. */
static int encoder_buckets(const vlm_model_config *config, const vlm_processor_config *processor, int64_t *out_rows,
                           int capacity) {
  const vlm_vision_config *vision = &config->vision;
  int64_t patch = vision->patch_size, block = vision->spatial_merge_size * vision->spatial_merge_size;
  if (patch <= 0 || block <= 0 || !processor || processor->max_pixels <= 0) return 0;
  double factor = (double)(patch * vision->spatial_merge_size), max_pixels = (double)processor->max_pixels;
  double pixels = max_pixels + factor * sqrt(200.0 * max_pixels) + factor * factor;
  int64_t largest = (int64_t)ceil(pixels / (double)(patch * patch));
  largest = (largest + block - 1) / block * block;
  int count = 0;
  for (int64_t rows = 256; rows < largest && count < capacity - 1; rows *= 2) out_rows[count++] = rows;
  if (count < capacity) out_rows[count++] = largest;
  return count;
}

static const vlm_family_image image_path = {
    .placeholder_token = placeholder_token,
    .token_count = token_count,
    .expand = expand,
    .encoder_rows = encoder_rows,
    .encoder_inputs = encoder_inputs,
    .build_encoder = build_encoder,
    .encoder_buckets = encoder_buckets,
};

/* ---- Positions (Qwen2VLModel.get_rope_index, 5.23) ---------------------- */

/* Runs of text tokens count on from the position reached, the same on all
 * three axes; each run of image tokens is one image: t, h, w over its
 * merged grid from the position reached, after which the position moves on
 * by max(h, w) / merge (5.23 ignores t there). */
static vlm_status positions(const vlm_model_config *config, const int32_t *ids, int64_t count,
                            const vlm_media_item *const *items, int item_count, int64_t *out, int64_t *out_delta) {
  int64_t merge = config->vision.spatial_merge_size, current = 0, largest = -1;
  int next_item = 0;
  for (int64_t first = 0, last; first < count; first = last) {
    bool image = ids[first] == config->image_token_id;
    for (last = first + 1; last < count && (ids[last] == config->image_token_id) == image;) last++;
    if (!image) {
      for (int64_t i = first; i < last; i++)
        for (int a = 0; a < 3; a++) out[a * count + i] = current + (i - first);
      current += last - first;
      continue;
    }
    if (next_item >= item_count)
      return VLM_ERROR(INVALID_ARGUMENT, "the prompt has more runs of image tokens than images (%d)", item_count);
    const int64_t *grid = items[next_item++]->grid;
    int64_t t = grid[0], h = grid[1] / merge, w = grid[2] / merge;
    if (t * h * w != last - first)
      return VLM_ERROR(INVALID_ARGUMENT,
                       "a run of %lld image tokens is not one image's %lld (images must be separated by text, as "
                       "<|vision_start|>...<|vision_end|> does)",
                       (long long)(last - first), (long long)(t * h * w));
    int64_t i = first;
    for (int64_t ti = 0; ti < t; ti++)
      for (int64_t hi = 0; hi < h; hi++)
        for (int64_t wi = 0; wi < w; wi++, i++) {
          out[i] = current + ti;
          out[count + i] = current + hi;
          out[2 * count + i] = current + wi;
        }
    current += (h > w ? h : w);
  }
  if (next_item != item_count)
    return VLM_ERROR(INVALID_ARGUMENT, "%d image(s) but %d run(s) of image tokens in the prompt", item_count,
                     next_item);
  for (int64_t i = 0; i < 3 * count; i++)
    if (out[i] > largest) largest = out[i];
  *out_delta = largest + 1 - count;
  return VLM_OK;
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
    .image = &image_path,
    .positions = positions,
};
