/* See qwen_vl.h. Transformers 5.23.0: Qwen2VLProcessor (and Qwen2.5-VL's,
 * Qwen3-VL's: the same expansion), get_rope_index of Qwen2VLModel,
 * Qwen2_5_VLModel and Qwen3VLModel (the same for images), and
 * vision_utils.get_vision_position_ids. */
#include "models/qwen_vl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/status.h"
#include "io/json.h"
#include "models/decoder.h"
#include "models/nn.h"

#define SHAPE VLM_SHAPE

/* The identity rules stop canonical names from being renamed again. */
const vlm_name_rename vlm_qwen_vl_v4_renames[VLM_QWEN_VL_V4_RENAME_COUNT] = {
    {"model.language_model.", "model.language_model."},
    {"model.visual.", "model.visual."},
    {"model.", "model.language_model."},
    {"visual.", "model.visual."},
};

vlm_status vlm_qwen_vl_item_grid(const vlm_vision_config *vision, const vlm_media_item *item, int64_t grid[3]) {
  int64_t merge = vision->spatial_merge_size;
  for (int a = 0; a < 3; a++) grid[a] = item->grid[a];
  if (merge <= 0 || grid[0] < 1 || grid[1] < merge || grid[2] < merge || grid[1] % merge || grid[2] % merge)
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

int64_t vlm_qwen_vl_placeholder_token(const vlm_model_config *config) { return config->image_token_id; }

/* What the Qwen-VL templates print for an image part (vLLM's
 * get_placeholder_str), for a template that reads content as a string. */
const char *vlm_qwen_vl_content_placeholder(const vlm_model_config *config) {
  (void)config;
  return "<|vision_start|><|image_pad|><|vision_end|>";
}

vlm_status vlm_qwen_vl_token_count(const vlm_model_config *config, const vlm_processor_config *processor,
                                   const int64_t grid[3], int64_t *out_count) {
  (void)processor;
  int64_t merge = config->vision.spatial_merge_size;
  if (merge <= 0 || grid[1] % merge || grid[2] % merge)
    return VLM_ERROR(INVALID_ARGUMENT, "image grid %lldx%lld is not whole %lldx%lld merge blocks", (long long)grid[1],
                     (long long)grid[2], (long long)merge, (long long)merge);
  *out_count = grid[0] * grid[1] * grid[2] / (merge * merge);
  return VLM_OK;
}

/* Each image token becomes grid.prod() / merge^2 of them. */
vlm_status vlm_qwen_vl_expand(const vlm_model_config *config, const vlm_media_item *item, const char *placeholder,
                              vlm_token_text_fn token_text, void *context, vlm_string_builder *out) {
  (void)config, (void)token_text, (void)context;
  size_t length = strlen(placeholder);
  for (int64_t i = 0; i < item->token_count; i++) vlm_sb_append(out, placeholder, length);
  return VLM_OK;
}

vlm_status vlm_qwen_vl_encoder_rows(const vlm_model_config *config, const vlm_media_item *item, int64_t *out_rows) {
  int64_t grid[3];
  VLM_RETURN_IF_ERROR(vlm_qwen_vl_item_grid(&config->vision, item, grid));
  *out_rows = grid[0] * grid[1] * grid[2];
  return VLM_OK;
}

/* smart_resize can overshoot max_pixels: rounding adds up to f/2 to each
 * side (f = patch * merge), and for a narrow image the short side is
 * raised to f while the long one is only scaled to sqrt(max * aspect)
 * (aspect at most 200, its MAX_RATIO), so no frame exceeds max + f *
 * sqrt(200 * max) + f * f pixels. */
int vlm_qwen_vl_encoder_buckets(const vlm_model_config *config, const vlm_processor_config *processor,
                                int64_t *out_rows, int capacity) {
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

/* Runs of text tokens count on from the position reached, the same on all
 * three axes; each run of image tokens is one image: t, h, w over its
 * merged grid from the position reached, after which the position moves on
 * by max(h, w) / merge (5.23 ignores t there). */
vlm_status vlm_qwen_vl_positions(const vlm_model_config *config, const int32_t *ids, int64_t count,
                                 const vlm_media_item *const *items, int item_count, int64_t *out,
                                 int64_t *out_delta) {
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

void vlm_qwen_vl_patch_positions(const int64_t grid[3], int64_t merge, int32_t *rows, int32_t *columns,
                                 int32_t *frames) {
  int64_t r = 0;
  for (int64_t t = 0; t < grid[0]; t++)
    for (int64_t block_row = 0; block_row < grid[1] / merge; block_row++)
      for (int64_t block_column = 0; block_column < grid[2] / merge; block_column++)
        for (int64_t y = 0; y < merge; y++)
          for (int64_t x = 0; x < merge; x++, r++) {
            rows[r] = (int32_t)(block_row * merge + y);
            columns[r] = (int32_t)(block_column * merge + x);
            if (frames) frames[r] = (int32_t)t;
          }
}

const vlm_rope_config *vlm_qwen_vl_vision_rope(const vlm_vision_config *vision, vlm_graph *graph) {
  vlm_rope_config *rope = vlm_arena_allocate(&graph->arena, sizeof(*rope), _Alignof(vlm_rope_config));
  if (!rope) return NULL;
  double theta = 10000.0;
  const vlm_json_value *parameters = vlm_json_object_get(vision->section, "rope_parameters");
  vlm_json_get_double(vlm_json_object_get(parameters, "rope_theta"), &theta);
  *rope = (vlm_rope_config){.type = VLM_ROPE_DEFAULT, .theta = theta, .factor = 1.0, .partial_rotary_factor = 1.0,
                            .rotary_dimension = vision->head_dim, .attention_factor = 1.0, .axial_axes = 2};
  return rope;
}

int32_t vlm_qwen_vl_attention(vlm_graph *graph, const vlm_vision_config *vision, int32_t x, int32_t positions,
                              int32_t segments, const char *prefix) {
  int64_t embed = vision->hidden_size, heads = vision->num_attention_heads, head_dim = vision->head_dim;
  const vlm_node *node = vlm_graph_node(graph, x);
  if (!node) return -1;
  int64_t rows = node->shape[0];
  char module[VLM_GRAPH_NAME_LENGTH];
  snprintf(module, sizeof(module), "%sattn.qkv", prefix);
  int32_t qkv = vlm_nn_linear(graph, x, module, 3 * embed, embed, true);
  int32_t parts[3];
  static const char *const names[3] = {"q", "k", "v"};
  for (int i = 0; i < 3; i++) {
    parts[i] = vlm_graph_slice(graph, qkv, 1, i * embed, embed, "%sattn.%s", prefix, names[i]);
    parts[i] = vlm_graph_reshape(graph, parts[i], 3, SHAPE(rows, heads, head_dim), "%sattn.%s_heads", prefix,
                                 names[i]);
  }
  parts[0] = vlm_graph_rope_at(graph, parts[0], positions, 0, "%sattn.q_rope", prefix);
  parts[1] = vlm_graph_rope_at(graph, parts[1], positions, 0, "%sattn.k_rope", prefix);
  int32_t attended = vlm_graph_segment_attention(graph, parts[0], parts[1], parts[2], segments,
                                                 1.0 / sqrt((double)head_dim), "%sattn.attention", prefix);
  snprintf(module, sizeof(module), "%sattn.proj", prefix);
  return vlm_nn_linear(graph, attended, module, embed, embed, true);
}

void vlm_qwen_vl_describe_decoder(const vlm_model_config *config, vlm_decoder_description *out) {
  *out = (vlm_decoder_description){.text = &config->text,
                                   .tie_word_embeddings = config->tie_word_embeddings,
                                   .prefix = "model.language_model.", .embedding_scale = 1.0};
}
