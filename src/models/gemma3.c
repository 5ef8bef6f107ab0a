/* Gemma 3: a SigLIP tower, an average-pooled RMS-normed projection to the
 * decoder, and a Gemma decoder (sandwich norms, QK-norm, sliding-window
 * layers, scaled embeddings). gemma3_text is the decoder alone.
 * Transformers 5.23.0's Gemma3ForConditionalGeneration and Gemma3Processor:
 *
 *   vision_tower   SiglipVisionModel: last_hidden_state (post_layernorm)
 *                  [images, patches, vision hidden], no pooling head
 *   projector      the patch grid average-pooled to mm_tokens_per_image
 *                  (AvgPool2d(patches_per_side / tokens_per_side)),
 *                  mm_soft_emb_norm (Gemma RMSNorm, x * (1 + w)), then
 *                  x @ mm_input_projection_weight ([vision hidden, text
 *                  hidden]: applied through a transpose)
 *   prompt         each <start_of_image> becomes "\n\n<start_of_image>" +
 *                  image_seq_length <image_soft_token>s + "<end_of_image>\n\n";
 *                  with pan-and-scan crops, "Here is the original image "
 *                  + that + " and here are some crops to help you see
 *                  better " + one such sequence per crop, space-separated
 *   merge          features replace the soft tokens' rows; text rows are
 *                  scaled by sqrt(hidden) in the weights' dtype
 *   prefill mask   each run of soft tokens is one bidirectional block
 *                  (token_type_ids == 1, get_block_sequence_ids_for_mask):
 *                  full layers OR(causal, block), sliding layers
 *                  AND(window, OR(causal, block)) */
#include <math.h>
#include <stdio.h>
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
#define TOWER "model.vision_tower."
#define PROJECTOR "model.multi_modal_projector."

static const vlm_decoder_layout gemma_layout = {.qk_norm = true, .sandwich_norms = true};

static vlm_status declare_tensors(const vlm_model_config *config,
                                  vlm_tensor_manifest *manifest) {
  vlm_declare_text_decoder(manifest, &config->text, config->tie_word_embeddings,
                           "model.language_model.", &gemma_layout);
  vlm_declare_vision_transformer(manifest, &config->vision, VLM_VIT_SIGLIP, TOWER);
  int64_t vision_hidden = config->vision.hidden_size, text_hidden = config->text.hidden_size;
  vlm_manifest_add(manifest, VLM_COMPONENT_PROJECTOR, 2, SHAPE(vision_hidden, text_hidden),
                   PROJECTOR "mm_input_projection_weight");
  vlm_manifest_add(manifest, VLM_COMPONENT_PROJECTOR, 1, SHAPE(vision_hidden), PROJECTOR "mm_soft_emb_norm.weight");
  return VLM_OK;
}

static vlm_status declare_text_only(const vlm_model_config *config,
                                    vlm_tensor_manifest *manifest) {
  vlm_declare_text_decoder(manifest, &config->text, config->tie_word_embeddings, "model.",
                           &gemma_layout);
  return VLM_OK;
}

/* Gemma3TextScaledWordEmbedding: embed_scale.to(self.weight.dtype), i.e.
 * sqrt(hidden) rounded to the dtype the model runs in (config.json's,
 * what from_pretrained's "auto" picks): 55.4256 becomes 55.5 in bfloat16
 * for hidden 3072. */
static double embedding_scale(const vlm_model_config *config) {
  float scale = (float)sqrt((double)config->text.hidden_size);
  vlm_dtype dtype = config->dtype ? config->dtype : config->text.dtype;
  if (dtype == VLM_DTYPE_BF16) return vlm_bf16_to_f32(vlm_f32_to_bf16(scale));
  if (dtype == VLM_DTYPE_F16) return vlm_f16_to_f32(vlm_f32_to_f16(scale));
  return scale;
}

/* Gemma: RMSNorm scales by (1 + w), embeddings are multiplied by the
 * scale above, and norms sandwich both sub-blocks. */
static void describe_gemma(const vlm_model_config *config, const char *prefix,
                           vlm_decoder_description *out) {
  *out = (vlm_decoder_description){.text = &config->text,
                                   .tie_word_embeddings = config->tie_word_embeddings,
                                   .prefix = prefix, .layout = gemma_layout,
                                   .norm_weight_offset = 1.0,
                                   .embedding_scale = embedding_scale(config)};
}

static void describe_decoder(const vlm_model_config *config, vlm_decoder_description *out) {
  describe_gemma(config, "model.language_model.", out);
}

static void describe_text_only(const vlm_model_config *config, vlm_decoder_description *out) {
  describe_gemma(config, "model.", out);
}

/* ---- Shapes --------------------------------------------------------------- */

typedef struct gemma3_vision {
  vlm_vision_description tower;
  int64_t patches_per_side, tokens_per_side, kernel, tokens; /* per image */
} gemma3_vision;

/* Gemma3MultiModalProjector's geometry: patches_per_image = image_size //
 * patch_size per side, tokens_per_side = int(mm_tokens_per_image ** 0.5),
 * kernel = patches_per_side // tokens_per_side. */
static vlm_status describe_vision(const vlm_model_config *config, gemma3_vision *out) {
  memset(out, 0, sizeof(*out));
  const vlm_vision_config *vision = &config->vision;
  out->tower = (vlm_vision_description){.vision = vision, .kind = VLM_VIT_SIGLIP, .tower_prefix = TOWER,
                                        .post_layernorm = true, .feature_layer_count = 1,
                                        .text_hidden_size = config->text.hidden_size};
  out->tower.feature_layers[0] = vision->num_hidden_layers;
  if (vision->patch_size <= 0 || vision->image_height != vision->image_width || vision->image_height <= 0 ||
      config->image_seq_length <= 0)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: the Gemma 3 vision config needs a square image_size, a "
                     "patch_size and mm_tokens_per_image");
  out->patches_per_side = vision->image_height / vision->patch_size;
  out->tokens_per_side = (int64_t)sqrt((double)config->image_seq_length);
  while ((out->tokens_per_side + 1) * (out->tokens_per_side + 1) <= config->image_seq_length) out->tokens_per_side++;
  while (out->tokens_per_side * out->tokens_per_side > config->image_seq_length) out->tokens_per_side--;
  out->kernel = out->tokens_per_side > 0 ? out->patches_per_side / out->tokens_per_side : 0;
  out->tokens = out->kernel > 0 ? (out->patches_per_side / out->kernel) * (out->patches_per_side / out->kernel) : 0;
  if (out->tokens != config->image_seq_length)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: %lldx%lld patches pool to %lld tokens, not mm_tokens_per_image "
                     "%lld", (long long)out->patches_per_side, (long long)out->patches_per_side,
                     (long long)out->tokens, (long long)config->image_seq_length);
  return VLM_OK;
}

/* The item's images (the original and its crops), checked against the tower. */
static vlm_status item_images(const vlm_model_config *config, const vlm_media_item *item, int64_t *out_images) {
  const vlm_named_tensor *pixels = vlm_media_item_tensor(item, "pixel_values");
  const vlm_vision_config *vision = &config->vision;
  if (!pixels || pixels->dtype != VLM_DTYPE_F32 || pixels->rank != 4 || pixels->shape[0] < 1 ||
      pixels->shape[1] != vision->num_channels || pixels->shape[2] != vision->image_height ||
      pixels->shape[3] != vision->image_width || pixels->shape[0] != item->grid[0])
    return VLM_ERROR(INVALID_ARGUMENT, "the image needs pixel_values [1 + crops, %lld, %lld, %lld], as "
                     "Gemma3ImageProcessor makes them", (long long)vision->num_channels,
                     (long long)vision->image_height, (long long)vision->image_width);
  *out_images = pixels->shape[0];
  return VLM_OK;
}

/* ---- The image path (vlm_family_image) --------------------------------- */

/* Gemma3Processor's image_token is the tokenizer's boi_token. */
static int64_t placeholder_token(const vlm_model_config *config) { return config->boi_token_id; }
static int64_t feature_token(const vlm_model_config *config) { return config->image_token_id; }

/* image_seq_length soft tokens per image (the original and each crop); the
 * processor's count must be the tower's pooled one, which Transformers
 * checks when it merges (get_placeholder_mask). */
static vlm_status token_count(const vlm_model_config *config, const vlm_processor_config *processor,
                              const int64_t grid[3], int64_t *out_count) {
  int64_t per_image = processor && processor->image_seq_length ? processor->image_seq_length : 256;
  if (per_image != config->image_seq_length)
    return VLM_ERROR(INVALID_ARGUMENT, "processor_config.json's image_seq_length %lld is not config.json's "
                     "mm_tokens_per_image %lld", (long long)per_image, (long long)config->image_seq_length);
  if (grid[0] < 1) return VLM_ERROR(INVALID_ARGUMENT, "an image item without images");
  *out_count = grid[0] * per_image;
  return VLM_OK;
}

/* Gemma3Processor.full_image_sequence: "\n\n" boi, the soft tokens, eoi "\n\n". */
static vlm_status append_sequence(const vlm_model_config *config, int64_t tokens, vlm_token_text_fn token_text,
                                  void *context, vlm_string_builder *out) {
  const char *boi = token_text(context, config->boi_token_id), *eoi = token_text(context, config->eoi_token_id);
  const char *soft = token_text(context, config->image_token_id);
  if (!boi || !eoi || !soft || !*boi || !*eoi || !*soft)
    return VLM_ERROR(FAILED_PRECONDITION, "the tokenizer lacks Gemma 3's image tokens (ids %lld, %lld, %lld)",
                     (long long)config->boi_token_id, (long long)config->image_token_id,
                     (long long)config->eoi_token_id);
  vlm_sb_append_literal(out, "\n\n");
  vlm_sb_append(out, boi, strlen(boi));
  size_t length = strlen(soft);
  for (int64_t i = 0; i < tokens; i++) vlm_sb_append(out, soft, length);
  vlm_sb_append(out, eoi, strlen(eoi));
  vlm_sb_append_literal(out, "\n\n");
  return VLM_OK;
}

/* Gemma3Processor.replace_image_token. */
static vlm_status expand(const vlm_model_config *config, const vlm_media_item *item, const char *placeholder,
                         vlm_token_text_fn token_text, void *context, vlm_string_builder *out) {
  (void)placeholder;
  int64_t images = item->grid[0];
  if (images < 1 || item->token_count % images)
    return VLM_ERROR(INVALID_ARGUMENT, "an image item of %lld tokens over %lld images", (long long)item->token_count,
                     (long long)images);
  int64_t per_image = item->token_count / images;
  if (images == 1) return append_sequence(config, per_image, token_text, context, out);
  vlm_sb_append_literal(out, "Here is the original image ");
  VLM_RETURN_IF_ERROR(append_sequence(config, per_image, token_text, context, out));
  vlm_sb_append_literal(out, " and here are some crops to help you see better ");
  for (int64_t i = 1; i < images; i++) {
    if (i > 1) vlm_sb_append_literal(out, " ");
    VLM_RETURN_IF_ERROR(append_sequence(config, per_image, token_text, context, out));
  }
  return VLM_OK;
}

static vlm_status encoder_rows(const vlm_model_config *config, const vlm_media_item *item, int64_t *out_rows) {
  gemma3_vision vision;
  int64_t images = 0;
  VLM_RETURN_IF_ERROR(describe_vision(config, &vision));
  VLM_RETURN_IF_ERROR(item_images(config, item, &images));
  *out_rows = images * vlm_vision_patch_count(&vision.tower);
  return VLM_OK;
}

/* Each image's patches, position ids and segment; a bucket's spare images
 * (rows beyond the item's) are zero patches in segments of their own. */
static vlm_status encoder_inputs(const vlm_model_config *config, const vlm_media_item *item, int64_t rows,
                                 vlm_tensor_list *out) {
  gemma3_vision vision;
  int64_t images = 0;
  VLM_RETURN_IF_ERROR(describe_vision(config, &vision));
  VLM_RETURN_IF_ERROR(item_images(config, item, &images));
  int64_t patches = vlm_vision_patch_count(&vision.tower), slots = patches > 0 ? rows / patches : 0;
  if (rows % patches || slots < images || slots > 64)
    return VLM_ERROR(INVALID_ARGUMENT, "%lld encoder rows cannot hold the item's %lld images of %lld patches",
                     (long long)rows, (long long)images, (long long)patches);
  const vlm_named_tensor *pixels = vlm_media_item_tensor(item, "pixel_values");
  const vlm_vision_config *tower = &config->vision;
  int64_t image_floats = tower->num_channels * tower->image_height * tower->image_width;
  vlm_pixel_values list[64];
  for (int64_t i = 0; i < slots; i++)
    list[i] = (vlm_pixel_values){i < images ? (const float *)pixels->data + i * image_floats : NULL,
                                 tower->num_channels, tower->image_height, tower->image_width};
  return vlm_vision_prepare_inputs(&vision.tower, list, (int)slots, out);
}

/* Tower, then Gemma3MultiModalProjector on its last_hidden_state. */
static vlm_status build_encoder(const vlm_model_config *config, int64_t rows, vlm_graph *graph,
                                vlm_encoder_nodes *out_nodes) {
  gemma3_vision vision;
  VLM_RETURN_IF_ERROR(describe_vision(config, &vision));
  int64_t patches = vlm_vision_patch_count(&vision.tower), images = patches > 0 ? rows / patches : 0;
  if (images < 1 || rows % patches)
    return VLM_ERROR(INVALID_ARGUMENT, "%lld encoder rows are not whole images of %lld patches", (long long)rows,
                     (long long)patches);
  vlm_vision_graph_nodes nodes;
  VLM_RETURN_IF_ERROR(vlm_build_vision_graph(&vision.tower, images, graph, &nodes));
  int64_t vision_hidden = config->vision.hidden_size, text_hidden = config->text.hidden_size;
  int64_t side = vision.patches_per_side;
  int32_t x = vlm_graph_average_pool(graph, nodes.features, images, side, side, vision.kernel, PROJECTOR "avg_pool");
  int32_t norm = vlm_graph_weight(graph, PROJECTOR "mm_soft_emb_norm.weight", VLM_DTYPE_INVALID, 1,
                                  SHAPE(vision_hidden));
  x = vlm_graph_rms_norm(graph, x, norm, config->vision.layer_norm_eps, 1.0, PROJECTOR "mm_soft_emb_norm");
  int32_t projection = vlm_graph_weight(graph, PROJECTOR "mm_input_projection_weight", VLM_DTYPE_INVALID, 2,
                                        SHAPE(vision_hidden, text_hidden));
  projection = vlm_graph_transpose(graph, projection, PROJECTOR "mm_input_projection_weight_transposed");
  x = vlm_graph_linear(graph, x, projection, -1, PROJECTOR "projected");
  graph->output = x;
  *out_nodes = (vlm_encoder_nodes){.output = x, .stage_count = 2};
  out_nodes->stages[0].stage = "vision_encoder";
  out_nodes->stages[0].node = nodes.features;
  out_nodes->stages[1].stage = "projector";
  out_nodes->stages[1].node = x;
  return vlm_graph_take_error(graph);
}

/* One function per image count an item can have: 1, and with pan-and-scan
 * up to 1 + pan_and_scan_max_num_crops. */
static int encoder_buckets(const vlm_model_config *config, const vlm_processor_config *processor, int64_t *out_rows,
                           int capacity) {
  gemma3_vision vision;
  vlm_status status = describe_vision(config, &vision);
  if (status) {
    vlm_status_free(status);
    return 0;
  }
  int64_t patches = vlm_vision_patch_count(&vision.tower);
  int64_t most = processor && processor->do_pan_and_scan ? 1 + processor->pan_and_scan_max_num_crops : 1;
  int count = 0;
  for (int64_t images = 1; images <= most && count < capacity; images++) out_rows[count++] = images * patches;
  return count;
}

static const vlm_family_image image_path = {
    .placeholder_token = placeholder_token,
    .feature_token = feature_token,
    .token_count = token_count,
    .expand = expand,
    .encoder_rows = encoder_rows,
    .encoder_inputs = encoder_inputs,
    .build_encoder = build_encoder,
    .encoder_buckets = encoder_buckets,
};

/* get_block_sequence_ids_for_mask: each run of soft tokens (token_type_ids
 * 1, which Gemma3Processor sets on the image token) is the next block. */
static vlm_status attention_blocks(const vlm_model_config *config, const int32_t *ids, int64_t count,
                                   int32_t *out_blocks, bool *out_any) {
  int32_t next = 0;
  *out_any = false;
  for (int64_t i = 0; i < count; i++) {
    bool image = ids[i] == config->image_token_id;
    if (image && (i == 0 || ids[i - 1] != config->image_token_id)) next++;
    out_blocks[i] = image ? next - 1 : -1;
    *out_any = *out_any || image;
  }
  return VLM_OK;
}

static const vlm_family_layout layouts[] = {
    {"Transformers 5.23", "gemma3", false},
    {"hub 4.x", "gemma3_v4", false},
};

const vlm_family vlm_family_gemma3 = {
    .model_type = "gemma3",
    .display_name = "Gemma 3",
    .layouts = layouts, .layout_count = 2,
    .has_vision = true,
    .prompt_flow = VLM_PROMPT_FLOW_PROCESSOR,
    .renames = vlm_composite_v4_renames,
    .rename_count = VLM_COMPOSITE_V4_RENAME_COUNT,
    .declare_tensors = declare_tensors,
    .describe_decoder = describe_decoder,
    .image = &image_path,
    .attention_blocks = attention_blocks,
};

static const vlm_family_layout text_layouts[] = {
    {"Transformers 5.23", "gemma3_text", false},
};

const vlm_family vlm_family_gemma3_text = {
    .model_type = "gemma3_text", .display_name = "Gemma 3 (text)",
    .layouts = text_layouts, .layout_count = 1,
    .declare_tensors = declare_text_only,
    .describe_decoder = describe_text_only,
};
