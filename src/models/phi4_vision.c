/* Phi-4-multimodal's image path, as Transformers 5.23.0's
 * Phi4MultimodalImageEmbedding computes it over what
 * Phi4MultimodalImageProcessor returns (media/image_processor_phi4.h):
 *
 *   tower       Phi4MultimodalVisionModel (SigLIP) over the global image and
 *               every crop, each its own attention segment; a crop's padded
 *               patches (image_attention_mask 0) are masked as keys
 *               (create_bidirectional_mask) but still computed. The tower
 *               runs once over every image of the request (flatten(0, 1)),
 *               and its attention says is_causal: where no patch of that
 *               call is padding, create_bidirectional_mask gives None and
 *               sdpa (Transformers' default) attends causally within each
 *               crop; vlm does the same (item_traits: the request's
 *               images decide together; the padded crop slots of images
 *               with fewer crops have a mask of ones, so they never do). The
 *               position ids are NaViT's: each valid patch's row and column
 *               fractions of the crop's valid extent, bucketized into the
 *               position table's grid, 0 for padded patches
 *   features    hidden_states[feature_layer] (-2: the output of the layer
 *               before the last), no post_layernorm; ReflectionPad2d((0, 1,
 *               0, 1)) when the patch grid is odd, then AvgPool2d(2, 2):
 *               B x B tokens a crop (B = 16: the processor's count)
 *   stitching   per image: the crops' token grids laid out as the crop grid
 *               (rows of crops, B rows each), cut to the useful rows and
 *               columns of the stitched [0::2, 0::2] mask, sub_GN
 *               (sub_img_feature_extensor) after each row; then glb_GN
 *               (global_img_feature_extensor); then the global image's B
 *               rows, sub_GN after each
 *   projector   img_projection_down(gelu(img_projection_up(x))), erf GELU
 *
 * The graph: the tower (vision_clip.c, key mask and position ids as
 * inputs), the pooling, a gather of the stitched rows from [pooled rows;
 * sub_GN; glb_GN] by the input "stitch_rows", and the projector. The
 * output has C * (B * B + B) + 1 rows for C tower images (the most any
 * crop grid of C - 1 crops stitches to); the item's token_count come
 * first. */
#include "models/phi4_vision.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/tensor_list.h"
#include "graph/graph.h"
#include "io/json.h"
#include "media/image_processor_phi4.h"
#include "media/media_item.h"
#include "models/blocks.h"
#include "models/nn.h"
#include "models/vision_encoder.h"
#include "vlm/generate.h"

#define SHAPE VLM_SHAPE
#define IMAGE_EMBED "model.embed_tokens_extend.image_embed."
#define TOWER IMAGE_EMBED "img_processor."
/* Phi4MultimodalImageProcessor's hard-coded pooled grid of a crop. */
#define PROCESSOR_TOKENS_PER_SIDE 16
/* Tower images (1 + crops) one item may have. */
#define MAX_IMAGES 1025

typedef struct phi4_vision {
  vlm_vision_description tower;
  int64_t side;        /* patches per side of a tower image */
  int64_t pooled_side; /* B: tokens per side after padding and pooling */
  int64_t crop_size;   /* pixels, config crop_size */
} phi4_vision;

static int64_t section_int(const vlm_model_config *config, const char *key, int64_t fallback) {
  int64_t value = fallback;
  const vlm_json_value *found = config->vision.section ? vlm_json_object_get(config->vision.section, key) : NULL;
  return found && vlm_json_get_int(found, &value) ? value : fallback;
}

static vlm_status describe_vision(const vlm_model_config *config, phi4_vision *out) {
  memset(out, 0, sizeof(*out));
  const vlm_vision_config *vision = &config->vision;
  if (vision->patch_size <= 0 || vision->image_height != vision->image_width ||
      vision->image_height < vision->patch_size || vision->num_hidden_layers < 1)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: the Phi-4 vision config needs a square image_size of whole "
                     "patches and at least one layer");
  /* hidden_states has num_hidden_layers + 1 entries (the embeddings
   * first); Python indexes it with feature_layer. */
  int64_t layer = section_int(config, "feature_layer", -2), count = vision->num_hidden_layers + 1;
  if (layer < 0) layer += count;
  if (layer < 0 || layer >= count)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: vision feature_layer %lld is outside hidden_states' %lld entries",
                     (long long)section_int(config, "feature_layer", -2), (long long)count);
  out->tower = (vlm_vision_description){.vision = vision, .kind = VLM_VIT_SIGLIP, .tower_prefix = TOWER,
                                        .feature_layer_count = 1, .key_mask = true, .causal = true,
                                        .text_hidden_size = config->text.hidden_size};
  out->tower.feature_layers[0] = layer;
  out->side = vision->image_height / vision->patch_size;
  out->pooled_side = (out->side + out->side % 2) / 2;
  out->crop_size = section_int(config, "crop_size", 448);
  if (out->crop_size <= 0) return VLM_ERROR(INVALID_ARGUMENT, "config.json: vision crop_size must be positive");
  return VLM_OK;
}

/* The item's tensors, checked against the tower. */
typedef struct phi4_item {
  const float *pixels, *masks;
  int64_t images, height, width; /* tower images; the HD image's size */
} phi4_item;

static vlm_status item_tensors(const vlm_model_config *config, const phi4_vision *vision, const vlm_media_item *item,
                               phi4_item *out) {
  const vlm_named_tensor *pixels = vlm_media_item_tensor(item, "image_pixel_values");
  const vlm_named_tensor *masks = vlm_media_item_tensor(item, "image_attention_mask");
  const vlm_named_tensor *sizes = vlm_media_item_tensor(item, "image_sizes");
  const vlm_vision_config *tower = &config->vision;
  if (!pixels || pixels->dtype != VLM_DTYPE_F32 || pixels->rank != 4 || pixels->shape[0] < 1 ||
      pixels->shape[0] > MAX_IMAGES || pixels->shape[1] != tower->num_channels ||
      pixels->shape[2] != tower->image_height || pixels->shape[3] != tower->image_width)
    return VLM_ERROR(INVALID_ARGUMENT, "the image needs image_pixel_values [1 + crops, %lld, %lld, %lld], as "
                     "Phi4MultimodalImageProcessor makes them", (long long)tower->num_channels,
                     (long long)tower->image_height, (long long)tower->image_width);
  if (!masks || masks->dtype != VLM_DTYPE_F32 || masks->rank != 3 || masks->shape[0] != pixels->shape[0] ||
      masks->shape[1] != vision->side || masks->shape[2] != vision->side)
    return VLM_ERROR(INVALID_ARGUMENT, "the image needs image_attention_mask [1 + crops, %lld, %lld] (the "
                     "processor's size / patch_size must be the tower's patch grid)", (long long)vision->side,
                     (long long)vision->side);
  if (!sizes || sizes->dtype != VLM_DTYPE_I32 || sizes->rank != 1 || sizes->shape[0] != 2)
    return VLM_ERROR(INVALID_ARGUMENT, "the image needs image_sizes [2]");
  const int32_t *hw = sizes->data;
  *out = (phi4_item){pixels->data, masks->data, pixels->shape[0], hw[0], hw[1]};
  if (out->height <= 0 || out->width <= 0 || out->height % vision->crop_size || out->width % vision->crop_size ||
      1 + (out->height / vision->crop_size) * (out->width / vision->crop_size) != out->images)
    return VLM_ERROR(INVALID_ARGUMENT, "image_sizes %lldx%lld are not the item's %lld crops of %lld px",
                     (long long)out->height, (long long)out->width, (long long)(out->images - 1),
                     (long long)vision->crop_size);
  return VLM_OK;
}

/* ---- The image path (vlm_family_image) --------------------------------- */

/* item_traits: some patch of the image is padding. */
#define TRAIT_PADDED 1u

static uint32_t item_traits(const vlm_model_config *config, const vlm_media_item *item) {
  (void)config;
  const vlm_named_tensor *masks = vlm_media_item_tensor(item, "image_attention_mask");
  if (!masks || masks->dtype != VLM_DTYPE_F32) return 0; /* encoder_inputs refuses it */
  const float *values = masks->data;
  size_t count = vlm_named_tensor_bytes(masks) / sizeof(float);
  for (size_t i = 0; i < count; i++)
    if (values[i] == 0.0f) return TRAIT_PADDED;
  return 0;
}

static int64_t placeholder_token(const vlm_model_config *config) { return config->image_token_id; }

/* Phi4MultimodalImageProcessor's num_img_tokens, from the grid (useful
 * rows and columns): 256 + 1 + rows * columns + rows + 16. The model
 * stitches B * B + B global rows, so Transformers' merge fails unless B is
 * 16; vlm refuses such a model instead. */
static vlm_status token_count(const vlm_model_config *config, const vlm_processor_config *processor,
                              const int64_t grid[3], int64_t *out_count) {
  (void)processor;
  phi4_vision vision;
  VLM_RETURN_IF_ERROR(describe_vision(config, &vision));
  if (vision.pooled_side != PROCESSOR_TOKENS_PER_SIDE)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: the vision tower pools a crop to %lldx%lld tokens, but "
                     "Phi4MultimodalImageProcessor counts 16x16", (long long)vision.pooled_side,
                     (long long)vision.pooled_side);
  if (grid[0] < 1 || grid[1] < 0 || grid[2] < 0)
    return VLM_ERROR(INVALID_ARGUMENT, "an image item without its crop grid");
  int64_t b = PROCESSOR_TOKENS_PER_SIDE;
  *out_count = b * b + 1 + grid[1] * grid[2] + grid[1] + b;
  return VLM_OK;
}

static vlm_status encoder_rows(const vlm_model_config *config, const vlm_media_item *item, int64_t *out_rows) {
  phi4_vision vision;
  phi4_item tensors;
  VLM_RETURN_IF_ERROR(describe_vision(config, &vision));
  VLM_RETURN_IF_ERROR(item_tensors(config, &vision, item, &tensors));
  *out_rows = tensors.images * vision.side * vision.side;
  return VLM_OK;
}

static int64_t output_rows(const phi4_vision *vision, int64_t images) {
  int64_t b = vision->pooled_side;
  return images * (b * b + b) + 1;
}

/* Phi4MultimodalVisionEmbeddings' position ids for one image's patch mask
 * [side, side], in float32 as torch computes them: steps 1 / valid rows
 * and 1 / valid columns, fractions i * step clamped below 1 - 1e-6,
 * bucketize(right=True) against arange(1/side, 1, 1/side) (evaluated in
 * double and rounded to float, as torch's arange is). */
static void navit_positions(const float *mask, int64_t side, int32_t *out) {
  int64_t valid_rows = 0, valid_columns = 0;
  for (int64_t i = 0; i < side; i++) {
    valid_rows += mask[i * side] != 0.0f;
    valid_columns += mask[i] != 0.0f;
  }
  double start = 1.0 / (double)side;
  int64_t count = (int64_t)ceil((1.0 - start) / start);
  float boundaries[4096];
  if (count > 4096) count = 4096;
  for (int64_t k = 0; k < count; k++) boundaries[k] = (float)(start + start * (double)k);
  float limit = (float)(1.0 - 1e-6);
  float step_h = 1.0f / (float)valid_rows, step_w = 1.0f / (float)valid_columns;
  int64_t buckets_w[4096];
  for (int64_t j = 0; j < side && j < 4096; j++) {
    float fraction = fminf((float)j * step_w, limit);
    int64_t bucket = 0;
    while (bucket < count && boundaries[bucket] <= fraction) bucket++;
    buckets_w[j] = bucket;
  }
  for (int64_t i = 0; i < side; i++) {
    float fraction = fminf((float)i * step_h, limit);
    int64_t bucket = 0;
    while (bucket < count && boundaries[bucket] <= fraction) bucket++;
    for (int64_t j = 0; j < side; j++)
      out[i * side + j] = mask[i * side + j] != 0.0f ? (int32_t)(bucket * side + buckets_w[j]) : 0;
  }
}

/* Rows of [pooled rows of every tower image; sub_GN; glb_GN] in the order
 * Phi4MultimodalImageEmbedding.forward concatenates them; the rest 0. */
static void stitch_rows(const phi4_vision *vision, const phi4_item *item, const int64_t grid[3], int64_t images,
                        int32_t *out, int64_t count) {
  int64_t b = vision->pooled_side, cell = b * b, crops_w = item->width / vision->crop_size;
  int32_t sub = (int32_t)(images * cell), glb = sub + 1;
  int64_t n = 0;
  memset(out, 0, (size_t)count * sizeof(int32_t));
  for (int64_t r = 0; r < grid[1]; r++) {
    for (int64_t c = 0; c < grid[2]; c++) {
      int64_t crop = 1 + (r / b) * crops_w + c / b;
      out[n++] = (int32_t)(crop * cell + (r % b) * b + c % b);
    }
    out[n++] = sub;
  }
  out[n++] = glb;
  for (int64_t r = 0; r < b; r++) {
    for (int64_t c = 0; c < b; c++) out[n++] = (int32_t)(r * b + c);
    out[n++] = sub;
  }
}

/* Patches, NaViT position ids, segments (one per tower image), the key
 * mask, the causal flags (all set unless some image of the request has a
 * padded patch) and the stitch order; a bucket's spare images are zero
 * patches in segments of their own, unmasked. */
static vlm_status encoder_inputs(const vlm_model_config *config, const vlm_media_item *item, int64_t rows,
                                 vlm_tensor_list *out) {
  phi4_vision vision;
  phi4_item tensors;
  VLM_RETURN_IF_ERROR(describe_vision(config, &vision));
  VLM_RETURN_IF_ERROR(item_tensors(config, &vision, item, &tensors));
  int64_t patches = vision.side * vision.side, slots = rows / patches;
  if (rows % patches || slots < tensors.images || slots > MAX_IMAGES)
    return VLM_ERROR(INVALID_ARGUMENT, "%lld encoder rows cannot hold the item's %lld images of %lld patches",
                     (long long)rows, (long long)tensors.images, (long long)patches);
  int64_t grid[3], tokens = 0;
  VLM_RETURN_IF_ERROR(vlm_phi4_image_grid_from_mask(tensors.masks, tensors.images, vision.side, tensors.height,
                                                    tensors.width, vision.crop_size, grid, &tokens));
  if (output_rows(&vision, slots) < tokens)
    return VLM_ERROR(INTERNAL, "the stitched image has more rows than the graph's output");
  const vlm_vision_config *tower = &config->vision;
  int64_t image_floats = tower->num_channels * tower->image_height * tower->image_width;
  vlm_pixel_values *list = calloc((size_t)slots, sizeof(*list));
  if (!list) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; i < slots; i++)
    list[i] = (vlm_pixel_values){i < tensors.images ? tensors.pixels + i * image_floats : NULL, tower->num_channels,
                                 tower->image_height, tower->image_width};
  vlm_status status = vlm_vision_prepare_inputs(&vision.tower, list, (int)slots, out);
  free(list);
  if (status) return status;
  int32_t *mask = NULL, *order = NULL, *causal = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "key_mask", VLM_DTYPE_I32, 1, SHAPE(rows), (void **)&mask));
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "causal", VLM_DTYPE_I32, 1, SHAPE(rows), (void **)&causal));
  int32_t causal_flag = (item->request_traits & TRAIT_PADDED) || (item_traits(config, item) & TRAIT_PADDED) ? 0 : 1;
  for (int64_t r = 0; r < rows; r++) causal[r] = causal_flag;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "stitch_rows", VLM_DTYPE_I32, 1,
                                          SHAPE(output_rows(&vision, slots)), (void **)&order));
  const vlm_named_tensor *positions = vlm_tensor_list_find(out, "position_ids"); /* after the adds move the list */
  if (!positions) return VLM_ERROR(INTERNAL, "the tower's inputs have no position_ids");
  for (int64_t i = 0; i < slots; i++) {
    int32_t *ids = (int32_t *)positions->data + i * patches;
    if (i >= tensors.images) {
      for (int64_t p = 0; p < patches; p++) mask[i * patches + p] = 1;
      continue;
    }
    const float *crop_mask = tensors.masks + i * patches;
    navit_positions(crop_mask, vision.side, ids);
    for (int64_t p = 0; p < patches; p++) mask[i * patches + p] = crop_mask[p] != 0.0f;
  }
  stitch_rows(&vision, &tensors, grid, slots, order, output_rows(&vision, slots));
  return VLM_OK;
}

/* ReflectionPad2d((0, 1, 0, 1)) of each image's odd patch grid: row and
 * column `side` repeat row and column side - 2. */
static int32_t reflect_pad(vlm_graph *graph, int32_t x, int64_t images, int64_t side) {
  int64_t padded = side + 1, count = images * padded * padded;
  int32_t *rows = vlm_arena_allocate(&graph->arena, (size_t)count * sizeof(int32_t), _Alignof(int32_t));
  if (!rows) return -1;
  for (int64_t i = 0; i < images; i++)
    for (int64_t y = 0; y < padded; y++)
      for (int64_t c = 0; c < padded; c++)
        rows[(i * padded + y) * padded + c] =
            (int32_t)((i * side + (y < side ? y : side - 2)) * side + (c < side ? c : side - 2));
  return vlm_graph_select_rows(graph, x, rows, count, IMAGE_EMBED "img_processor_padding");
}

static vlm_status build_encoder(const vlm_model_config *config, int64_t rows, vlm_graph *graph,
                                vlm_encoder_nodes *out_nodes) {
  phi4_vision vision;
  VLM_RETURN_IF_ERROR(describe_vision(config, &vision));
  int64_t patches = vision.side * vision.side, images = rows / patches;
  if (images < 1 || rows % patches)
    return VLM_ERROR(INVALID_ARGUMENT, "%lld encoder rows are not whole images of %lld patches", (long long)rows,
                     (long long)patches);
  if (vision.side < 2) return VLM_ERROR(INVALID_ARGUMENT, "config.json: a 1x1 patch grid cannot be 2x2 pooled");
  vlm_vision_graph_nodes nodes;
  VLM_RETURN_IF_ERROR(vlm_build_vision_graph(&vision.tower, images, graph, &nodes));
  int64_t width = config->vision.hidden_size, hidden = config->text.hidden_size, side = vision.side;
  int32_t x = nodes.features;
  if (side % 2) x = reflect_pad(graph, x, images, side), side += 1;
  int32_t pooled = vlm_graph_average_pool(graph, x, images, side, side, 2, IMAGE_EMBED "image_token_compression");
  int32_t sub = vlm_graph_weight(graph, IMAGE_EMBED "sub_img_feature_extensor", VLM_DTYPE_INVALID, 4,
                                 SHAPE(1, 1, 1, width));
  sub = vlm_graph_reshape(graph, sub, 2, SHAPE(1, width), IMAGE_EMBED "sub_GN");
  int32_t glb = vlm_graph_weight(graph, IMAGE_EMBED "global_img_feature_extensor", VLM_DTYPE_INVALID, 3,
                                 SHAPE(1, 1, width));
  glb = vlm_graph_reshape(graph, glb, 2, SHAPE(1, width), IMAGE_EMBED "glb_GN");
  int32_t table = vlm_graph_concat(graph, (int32_t[]){pooled, sub, glb}, 3, 0, IMAGE_EMBED "stitch_table");
  int32_t order = vlm_graph_input(graph, VLM_DTYPE_I32, 1, SHAPE(output_rows(&vision, images)), "stitch_rows");
  x = vlm_graph_gather(graph, table, order, IMAGE_EMBED "stitched");
  x = vlm_nn_linear(graph, x, IMAGE_EMBED "img_projection_up", hidden, width, true);
  x = vlm_graph_activation(graph, x, VLM_ACTIVATION_GELU, IMAGE_EMBED "img_projection_gelu");
  x = vlm_nn_linear(graph, x, IMAGE_EMBED "img_projection_down", hidden, hidden, true);
  graph->output = x;
  *out_nodes = (vlm_encoder_nodes){.output = x,
                                   .stage_count = 3,
                                   .stages = {{"vision_encoder", nodes.features},
                                              {"vision_features", pooled},
                                              {"projector", x}}};
  return vlm_graph_take_error(graph);
}

/* One function per tower image count an item can have: 1 + 1 crop up to
 * 1 + dynamic_hd crops. */
static int encoder_buckets(const vlm_model_config *config, const vlm_processor_config *processor, int64_t *out_rows,
                           int capacity) {
  phi4_vision vision;
  vlm_status status = describe_vision(config, &vision);
  if (status) {
    vlm_status_free(status);
    return 0;
  }
  int64_t most = processor && processor->dynamic_hd > 0 ? processor->dynamic_hd : 36, count = 0;
  for (int64_t crops = 1; crops <= most && count < capacity; crops++)
    out_rows[count++] = (1 + crops) * vision.side * vision.side;
  return (int)count;
}

const vlm_family_image vlm_phi4_image_path = {
    .placeholder_token = placeholder_token,
    .token_count = token_count,
    .expand = vlm_expand_repeated, /* replace_image_token: num_img_tokens copies */
    .encoder_rows = encoder_rows,
    .encoder_inputs = encoder_inputs,
    .build_encoder = build_encoder,
    .encoder_buckets = encoder_buckets,
    .item_traits = item_traits,
};

void vlm_phi4_declare_vision(const vlm_model_config *config, vlm_tensor_manifest *manifest) {
  /* Phi4MultimodalVisionModel always has its pooling head. */
  vlm_vision_config tower = config->vision;
  tower.vision_use_head = true;
  vlm_declare_vision_transformer(manifest, &tower, VLM_VIT_SIGLIP, TOWER);
  int64_t width = config->vision.hidden_size, hidden = config->text.hidden_size;
  vlm_manifest_add(manifest, VLM_COMPONENT_PROJECTOR, 3, SHAPE(1, 1, width), IMAGE_EMBED "global_img_feature_extensor");
  vlm_manifest_add(manifest, VLM_COMPONENT_PROJECTOR, 4, SHAPE(1, 1, 1, width), IMAGE_EMBED "sub_img_feature_extensor");
  vlm_manifest_add(manifest, VLM_COMPONENT_PROJECTOR, 2, SHAPE(hidden, width), IMAGE_EMBED "img_projection_up.weight");
  vlm_manifest_add(manifest, VLM_COMPONENT_PROJECTOR, 1, SHAPE(hidden), IMAGE_EMBED "img_projection_up.bias");
  vlm_manifest_add(manifest, VLM_COMPONENT_PROJECTOR, 2, SHAPE(hidden, hidden), IMAGE_EMBED "img_projection_down.weight");
  vlm_manifest_add(manifest, VLM_COMPONENT_PROJECTOR, 1, SHAPE(hidden), IMAGE_EMBED "img_projection_down.bias");
}
