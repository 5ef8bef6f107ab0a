/* The CLIP and SigLIP vision towers and the LLaVA projector on the shared
 * graph (see vision_encoder.h). Transformers' CLIPVisionTransformer:
 *
 *   embeddings  = [class_embedding; patch_embedding(pixels)] + position_embedding
 *   hidden      = pre_layrnorm(embeddings)             hidden_states[0]
 *   per layer:    x = x + out_proj(attention(layer_norm1(x)))
 *                 x = x + fc2(act(fc1(layer_norm2(x))))   hidden_states[i + 1]
 *
 * post_layernorm only feeds CLIP's pooled output, which LLaVA never reads.
 * SiglipVisionModel: embeddings = patch_embedding(pixels) (a biased conv) +
 * position_embedding, no class token and no pre-norm, the same layers, and
 * last_hidden_state = post_layernorm(the last layer's output). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/status.h"
#include "core/tensor_list.h"
#include "models/blocks.h"
#include "models/nn.h"
#include "models/vision_encoder.h"
#include "vlm/generate.h"

typedef struct vision_builder {
  const vlm_vision_description *description;
  const vlm_vision_config *vision;
  vlm_graph *graph;
  vlm_activation activation;
} vision_builder;

int64_t vlm_vision_patch_count(const vlm_vision_description *description) {
  const vlm_vision_config *vision = description->vision;
  return (vision->image_height / vision->patch_size) * (vision->image_width / vision->patch_size);
}

int64_t vlm_vision_tokens_per_image(const vlm_vision_description *description) {
  return vlm_vision_patch_count(description) + (description->keep_class_token ? 1 : 0);
}

int64_t vlm_vision_patch_width(const vlm_vision_description *description) {
  const vlm_vision_config *vision = description->vision;
  return vision->num_channels * vision->patch_size * vision->patch_size;
}

void vlm_vision_patchify(const float *pixel_values, int64_t channels, int64_t height,
                         int64_t width, int64_t patch, float *out_patches) {
  int64_t columns = width / patch, rows = height / patch;
  for (int64_t py = 0; py < rows; py++)
    for (int64_t px = 0; px < columns; px++) {
      float *target = out_patches + (py * columns + px) * channels * patch * patch;
      for (int64_t c = 0; c < channels; c++)
        for (int64_t y = 0; y < patch; y++) {
          const float *source = pixel_values + (c * height + py * patch + y) * width + px * patch;
          memcpy(target, source, (size_t)patch * sizeof(float));
          target += patch;
        }
    }
}

/* The tower's modules sit under a prefix ("model.vision_tower."). */
static int32_t linear(vision_builder *builder, int32_t x, const char *prefix, const char *module,
                      int64_t out, int64_t in, bool bias) {
  char name[2 * VLM_GRAPH_NAME_LENGTH];
  snprintf(name, sizeof(name), "%s%s", prefix, module);
  return vlm_nn_linear(builder->graph, x, name, out, in, bias);
}

static bool is_siglip(const vlm_vision_description *description) { return description->kind == VLM_VIT_SIGLIP; }

static int32_t layer_norm(vision_builder *builder, int32_t x, const char *prefix, const char *module) {
  char name[2 * VLM_GRAPH_NAME_LENGTH];
  snprintf(name, sizeof(name), "%s%s", prefix, module);
  return vlm_nn_layer_norm(builder->graph, x, name, builder->vision->hidden_size, builder->vision->layer_norm_eps);
}

/* Rows of the embedded sequence: per image, its class token (CLIP) then
 * its patches. */
static int64_t sequence_length(const vlm_vision_description *description) {
  return vlm_vision_patch_count(description) + (is_siglip(description) ? 0 : 1);
}

vlm_status vlm_vision_prepare_inputs(const vlm_vision_description *description, const vlm_pixel_values *images,
                                     int image_count, vlm_tensor_list *out) {
  const vlm_vision_config *vision = description->vision;
  if (image_count <= 0 || !images) return VLM_ERROR(INVALID_ARGUMENT, "vision encoder: no images");
  int64_t patches = vlm_vision_patch_count(description), width = vlm_vision_patch_width(description);
  int64_t length = sequence_length(description), rows = image_count * length;
  float *patch_values;
  int32_t *order = NULL, *positions, *segments;
  bool siglip = is_siglip(description);
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "patches", VLM_DTYPE_F32, 2,
                                            VLM_SHAPE(image_count * patches, width), (void **)&patch_values));
  if (!siglip)
    VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "token_order", VLM_DTYPE_I32, 1, VLM_SHAPE(rows), (void **)&order));
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "position_ids", VLM_DTYPE_I32, 1, VLM_SHAPE(rows), (void **)&positions));
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "segments", VLM_DTYPE_I32, 1, VLM_SHAPE(rows), (void **)&segments));
  for (int i = 0; i < image_count; i++) {
    if (!images[i].values) {
      /* Padding (a bucket's spare image): zero patches, its own segment. */
      memset(patch_values + (size_t)(i * patches * width), 0, (size_t)(patches * width) * sizeof(float));
      for (int64_t r = 0; r < length; r++) {
        if (order) order[i * length + r] = r == 0 ? 0 : (int32_t)(1 + i * patches + r - 1);
        positions[i * length + r] = (int32_t)r;
        segments[i * length + r] = i;
      }
      continue;
    }
    if (images[i].channels != vision->num_channels || images[i].height != vision->image_height ||
        images[i].width != vision->image_width)
      return VLM_ERROR(INVALID_ARGUMENT,
                       "image %d: pixel_values are [%lld, %lld, %lld], the vision tower takes [%lld, %lld, %lld]", i,
                       (long long)images[i].channels, (long long)images[i].height, (long long)images[i].width,
                       (long long)vision->num_channels, (long long)vision->image_height,
                       (long long)vision->image_width);
    vlm_vision_patchify(images[i].values, vision->num_channels, vision->image_height, vision->image_width,
                        vision->patch_size, patch_values + (size_t)(i * patches * width));
    /* CLIP: row 0 of the joined table is the class embedding, rows 1.. the
     * patches of every image in order. */
    for (int64_t r = 0; r < length; r++) {
      int64_t row = i * length + r;
      if (order) order[row] = r == 0 ? 0 : (int32_t)(1 + i * patches + r - 1);
      positions[row] = (int32_t)r;
      segments[row] = i;
    }
  }
  return VLM_OK;
}

/* Patch embedding (the stride = kernel conv as a linear over patches),
 * class token, position embeddings, pre-layernorm: hidden_states[0]. The
 * class token goes in front of each image's patches by a gather over the
 * class row joined with the patch rows; the position embedding is a gather
 * of its table by each row's position. */
static int32_t embeddings(vision_builder *builder, int64_t image_count) {
  const vlm_vision_config *vision = builder->vision;
  const vlm_vision_description *description = builder->description;
  vlm_graph *graph = builder->graph;
  const char *prefix = description->tower_prefix;
  int64_t hidden = vision->hidden_size, patch = vision->patch_size;
  int64_t patches = vlm_vision_patch_count(description), width = vlm_vision_patch_width(description);
  int64_t rows = image_count * sequence_length(description);
  int32_t input = vlm_graph_input(graph, VLM_DTYPE_F32, 2, VLM_SHAPE(image_count * patches, width),
                                  "patches");
  bool siglip = is_siglip(description);
  int32_t order = siglip ? -1 : vlm_graph_input(graph, VLM_DTYPE_I32, 1, VLM_SHAPE(rows), "token_order");
  int32_t position_ids = vlm_graph_input(graph, VLM_DTYPE_I32, 1, VLM_SHAPE(rows), "position_ids");
  int32_t kernel = vlm_nn_weight(builder->graph, 4, VLM_SHAPE(hidden, vision->num_channels, patch, patch),
                                 "%sembeddings.patch_embedding.weight", prefix);
  kernel = vlm_graph_reshape(graph, kernel, 2, VLM_SHAPE(hidden, width),
                             "%sembeddings.patch_embedding.weight_as_matrix", prefix);
  int32_t patch_bias =
      siglip ? vlm_nn_weight(builder->graph, 1, VLM_SHAPE(hidden), "%sembeddings.patch_embedding.bias", prefix) : -1;
  int32_t x = vlm_graph_linear(graph, input, kernel, patch_bias, "%sembeddings.patch_embedding", prefix);
  if (siglip) {
    int32_t table =
        vlm_nn_weight(builder->graph, 2, VLM_SHAPE(patches, hidden), "%sembeddings.position_embedding.weight", prefix);
    int32_t position_rows = vlm_graph_gather(graph, table, position_ids, "%sembeddings.position_embedding", prefix);
    return vlm_graph_add(graph, x, position_rows, "%sembeddings", prefix);
  }
  int32_t class_token = vlm_nn_weight(builder->graph, 1, VLM_SHAPE(hidden), "%sembeddings.class_embedding", prefix);
  class_token = vlm_graph_reshape(graph, class_token, 2, VLM_SHAPE(1, hidden), "%sembeddings.class_embedding_row",
                                  prefix);
  int32_t table = vlm_graph_concat(graph, (int32_t[]){class_token, x}, 2, 0, "%sembeddings.class_and_patches", prefix);
  x = vlm_graph_gather(graph, table, order, "%sembeddings.with_class_token", prefix);
  int32_t position_table = vlm_nn_weight(builder->graph, 2, VLM_SHAPE(patches + 1, hidden),
                                         "%sembeddings.position_embedding.weight", prefix);
  int32_t position_rows = vlm_graph_gather(graph, position_table, position_ids, "%sembeddings.position_embedding",
                                           prefix);
  x = vlm_graph_add(graph, x, position_rows, "%sembeddings", prefix);
  return layer_norm(builder, x, prefix, "pre_layrnorm");
}

static int32_t encoder_layer(vision_builder *builder, int32_t residual, int32_t segments, int32_t key_mask,
                             int32_t causal, int64_t layer) {
  const vlm_vision_config *vision = builder->vision;
  vlm_graph *graph = builder->graph;
  int64_t hidden = vision->hidden_size, heads = vision->num_attention_heads;
  int64_t head_dim = hidden / heads, rows = vlm_graph_node(graph, residual)->shape[0];
  char prefix[VLM_GRAPH_NAME_LENGTH];
  snprintf(prefix, sizeof(prefix), "%sencoder.layers.%lld.", builder->description->tower_prefix,
           (long long)layer);
  int32_t x = layer_norm(builder, residual, prefix, "layer_norm1");
  int32_t q = linear(builder, x, prefix, "self_attn.q_proj", hidden, hidden, true);
  int32_t k = linear(builder, x, prefix, "self_attn.k_proj", hidden, hidden, true);
  int32_t v = linear(builder, x, prefix, "self_attn.v_proj", hidden, hidden, true);
  q = vlm_graph_reshape(graph, q, 3, VLM_SHAPE(rows, heads, head_dim), "%sself_attn.q_heads", prefix);
  k = vlm_graph_reshape(graph, k, 3, VLM_SHAPE(rows, heads, head_dim), "%sself_attn.k_heads", prefix);
  v = vlm_graph_reshape(graph, v, 3, VLM_SHAPE(rows, heads, head_dim), "%sself_attn.v_heads", prefix);
  double scale = 1.0 / sqrt((double)head_dim);
  if (causal >= 0)
    x = vlm_graph_segment_attention_causal(graph, q, k, v, segments, key_mask, causal, scale,
                                           "%sself_attn.attention", prefix);
  else if (key_mask >= 0)
    x = vlm_graph_segment_attention_masked(graph, q, k, v, segments, key_mask, scale, "%sself_attn.attention",
                                           prefix);
  else
    x = vlm_graph_segment_attention(graph, q, k, v, segments, scale, "%sself_attn.attention", prefix);
  x = linear(builder, x, prefix, "self_attn.out_proj", hidden, hidden, true);
  residual = vlm_graph_add(graph, residual, x, "%sresidual_attention", prefix);
  x = layer_norm(builder, residual, prefix, "layer_norm2");
  x = linear(builder, x, prefix, "mlp.fc1", vision->intermediate_size, hidden, true);
  x = vlm_graph_activation(graph, x, builder->activation, "%smlp.activation_fn", prefix);
  x = linear(builder, x, prefix, "mlp.fc2", hidden, vision->intermediate_size, true);
  return vlm_graph_add(graph, residual, x, "%sencoder.layers.%lld", builder->description->tower_prefix,
                       (long long)layer);
}

/* Drops each image's class-token row (strategy "default"). */
static int32_t drop_class_tokens(vision_builder *builder, int32_t hidden, int64_t image_count,
                                 int index) {
  int64_t patches = vlm_vision_patch_count(builder->description);
  vlm_graph *graph = builder->graph;
  int32_t *rows = vlm_arena_allocate(&graph->arena, (size_t)(image_count * patches) * sizeof(int32_t),
                                     _Alignof(int32_t));
  if (!rows) return -1;
  for (int64_t image = 0; image < image_count; image++)
    for (int64_t p = 0; p < patches; p++) rows[image * patches + p] = (int32_t)(image * (patches + 1) + 1 + p);
  return vlm_graph_select_rows(graph, hidden, rows, image_count * patches,
                               "model.vision_features.%d", index);
}

static vlm_status check_description(const vlm_vision_description *description, int64_t image_count) {
  const vlm_vision_config *vision = description->vision;
  if (image_count <= 0) return VLM_ERROR(INVALID_ARGUMENT, "vision encoder: no images");
  if (vision->patch_size <= 0 || vision->image_height % vision->patch_size ||
      vision->image_width % vision->patch_size || vision->num_attention_heads <= 0 ||
      vision->hidden_size % vision->num_attention_heads)
    return VLM_ERROR(INVALID_ARGUMENT, "vision encoder: image %lldx%lld, patch %lld and %lld heads do not fit",
                     (long long)vision->image_height, (long long)vision->image_width,
                     (long long)vision->patch_size, (long long)vision->num_attention_heads);
  if (description->feature_layer_count < 1 || description->feature_layer_count > VLM_VISION_MAX_FEATURE_LAYERS)
    return VLM_ERROR(INVALID_ARGUMENT, "vision encoder: %d feature layers", description->feature_layer_count);
  for (int i = 0; i < description->feature_layer_count; i++)
    if (description->feature_layers[i] < 0 || description->feature_layers[i] > vision->num_hidden_layers)
      return VLM_ERROR(INVALID_ARGUMENT, "vision encoder: feature layer %lld is outside 0..%lld",
                       (long long)description->feature_layers[i], (long long)vision->num_hidden_layers);
  return VLM_OK;
}

static int32_t projector(vision_builder *builder, int32_t features, int64_t in) {
  const vlm_vision_description *description = builder->description;
  const char *prefix = description->projector_prefix;
  int64_t out = description->text_hidden_size;
  int32_t x = linear(builder, features, prefix, "linear_1", out, in, description->projector_bias);
  x = vlm_graph_activation(builder->graph, x, description->projector_activation, "%sact", prefix);
  return linear(builder, x, prefix, "linear_2", out, out, description->projector_bias);
}

vlm_status vlm_build_vision_graph(const vlm_vision_description *description, int64_t image_count,
                                  vlm_graph *graph, vlm_vision_graph_nodes *out_nodes) {
  VLM_RETURN_IF_ERROR(check_description(description, image_count));
  const vlm_vision_config *vision = description->vision;
  vision_builder builder = {description, vision, graph, VLM_ACTIVATION_QUICK_GELU};
  if (!vlm_activation_from_name(vision->hidden_act, &builder.activation))
    return VLM_ERROR(UNIMPLEMENTED, "vision encoder: activation '%s' is not supported", vision->hidden_act);
  int64_t deepest = 0;
  for (int i = 0; i < description->feature_layer_count; i++)
    if (description->feature_layers[i] > deepest) deepest = description->feature_layers[i];
  if (description->post_layernorm && (description->feature_layer_count != 1 ||
                                      description->feature_layers[0] != vision->num_hidden_layers))
    return VLM_ERROR(INVALID_ARGUMENT, "vision encoder: post_layernorm applies to the last layer's output only");
  /* hidden_states[i] is the input of layer i: build layers 0..deepest-1. */
  int32_t states[VLM_VISION_MAX_FEATURE_LAYERS + 1] = {0};
  int32_t hidden = embeddings(&builder, image_count);
  int32_t segments = vlm_graph_input(graph, VLM_DTYPE_I32, 1,
                                     VLM_SHAPE(image_count * sequence_length(description)), "segments");
  int32_t key_mask = description->key_mask
                         ? vlm_graph_input(graph, VLM_DTYPE_I32, 1,
                                           VLM_SHAPE(image_count * sequence_length(description)), "key_mask")
                         : -1;
  int32_t causal = description->causal
                       ? vlm_graph_input(graph, VLM_DTYPE_I32, 1,
                                         VLM_SHAPE(image_count * sequence_length(description)), "causal")
                       : -1;
  int32_t by_index_zero = hidden;
  for (int64_t layer = 0; layer < deepest; layer++) {
    hidden = encoder_layer(&builder, hidden, segments, key_mask, causal, layer);
    for (int i = 0; i < description->feature_layer_count; i++)
      if (description->feature_layers[i] == layer + 1) states[i] = hidden;
  }
  int32_t selected[VLM_VISION_MAX_FEATURE_LAYERS];
  for (int i = 0; i < description->feature_layer_count; i++) {
    if (description->feature_layers[i] == 0) states[i] = by_index_zero;
    if (description->post_layernorm)
      states[i] = layer_norm(&builder, states[i], description->tower_prefix, "post_layernorm");
    out_nodes->hidden_states[i] = states[i];
    selected[i] = description->keep_class_token || is_siglip(description)
                      ? states[i]
                      : drop_class_tokens(&builder, states[i], image_count, i);
  }
  int32_t features = description->feature_layer_count == 1
                         ? selected[0]
                         : vlm_graph_concat(graph, selected, description->feature_layer_count, 1,
                                            "model.vision_features");
  out_nodes->features = features;
  out_nodes->projector = description->projector_prefix
                             ? projector(&builder, features, vision->hidden_size * description->feature_layer_count)
                             : features;
  graph->output = out_nodes->projector;
  vlm_status status = vlm_graph_take_error(graph);
  if (status) return status;
  for (int i = 0; i < description->feature_layer_count; i++)
    snprintf(out_nodes->hidden_state_names[i], VLM_GRAPH_NAME_LENGTH, "%s", graph->nodes[states[i]].name);
  snprintf(out_nodes->features_name, VLM_GRAPH_NAME_LENGTH, "%s", graph->nodes[features].name);
  snprintf(out_nodes->projector_name, VLM_GRAPH_NAME_LENGTH, "%s", graph->nodes[out_nodes->projector].name);
  return VLM_OK;
}
