/* What the Qwen-VL families share (qwen2_vl.c, qwen2_5_vl.c, qwen3_vl.c):
 * the processor's patches and grid (Qwen2VLImageProcessor serves all
 * three), the placeholder expansion of their processors (one
 * <|image_pad|> becomes t*h*w / merge^2 of them), the decoder's M-RoPE
 * positions (get_rope_index, the same algorithm for images in all three),
 * the tower's axial 2D RoPE and its positions in the processor's
 * block-major patch order, and the xla row buckets smart_resize implies.
 * The towers themselves differ and live in each family's file. */
#ifndef VLM_MODELS_QWEN_VL_H
#define VLM_MODELS_QWEN_VL_H

#include <stdint.h>

#include "graph/graph.h"
#include "io/config.h"
#include "media/media_item.h"
#include "models/family.h"

/* Transformers 4 saved the decoder at "model.*" and the tower at
 * "visual.*" (Qwen2-VL, Qwen2.5-VL; 5.23 still saves them so). */
#define VLM_QWEN_VL_V4_RENAME_COUNT 4
extern const vlm_name_rename vlm_qwen_vl_v4_renames[VLM_QWEN_VL_V4_RENAME_COUNT];

/* The item's grid in patches, checked against its pixel_values (whole
 * merge blocks, [t*h*w, channels*temporal*patch*patch] f32). */
vlm_status vlm_qwen_vl_item_grid(const vlm_vision_config *vision, const vlm_media_item *item, int64_t grid[3]);

/* vlm_family_image functions every Qwen-VL family uses as they are. */
int64_t vlm_qwen_vl_placeholder_token(const vlm_model_config *config);
const char *vlm_qwen_vl_content_placeholder(const vlm_model_config *config);
vlm_status vlm_qwen_vl_token_count(const vlm_model_config *config, const vlm_processor_config *processor,
                                   const int64_t grid[3], int64_t *out_count);
vlm_status vlm_qwen_vl_expand(const vlm_model_config *config, const vlm_media_item *item, const char *placeholder,
                              vlm_token_text_fn token_text, void *context, struct vlm_string_builder *out);
/* The item's patches (t*h*w rows). */
vlm_status vlm_qwen_vl_encoder_rows(const vlm_model_config *config, const vlm_media_item *item, int64_t *out_rows);
/* Doubling from 256 rows up to the most smart_resize can give one frame. */
int vlm_qwen_vl_encoder_buckets(const vlm_model_config *config, const vlm_processor_config *processor,
                                int64_t *out_rows, int capacity);
/* get_rope_index (5.23) for prompts with images (vlm_family_positions_fn). */
vlm_status vlm_qwen_vl_positions(const vlm_model_config *config, const int32_t *ids, int64_t count,
                                 const vlm_media_item *const *items, int item_count, int64_t *out,
                                 int64_t *out_delta);

/* Each patch's (row, column) in the processor's block-major order
 * (vision_utils.get_vision_position_ids): rows[r], columns[r] for the
 * item's t*h*w patches; frames[r] its frame (may be NULL). */
void vlm_qwen_vl_patch_positions(const int64_t grid[3], int64_t merge, int32_t *rows, int32_t *columns,
                                 int32_t *frames);

/* The tower's axial RoPE (rope_type "axial"): theta from the vision
 * config's rope_parameters (10000 by default), default frequencies over
 * head_dim / 2, one half per axis; allocated in the graph's arena. */
const vlm_rope_config *vlm_qwen_vl_vision_rope(const vlm_vision_config *vision, vlm_graph *graph);

/* A tower block's attention: fused qkv (with bias), q/k rotated at
 * `positions` (rope set 0), attention within `segments`, proj (with bias);
 * nodes under `prefix` ("model.visual.blocks.3."). */
int32_t vlm_qwen_vl_attention(vlm_graph *graph, const vlm_vision_config *vision, int32_t x, int32_t positions,
                              int32_t segments, const char *prefix);

/* The decoder: a Qwen2/Qwen3 stack under "model.language_model.". */
void vlm_qwen_vl_describe_decoder(const vlm_model_config *config, struct vlm_decoder_description *out);

/* Qwen3-VL's tower, image path and decoder description (qwen3_vl.c),
 * which Qwen3-VL-MoE shares (qwen3_vl_moe.c). */
void vlm_qwen3_vl_declare_vision(const vlm_vision_config *vision, vlm_tensor_manifest *manifest);
extern const vlm_family_image vlm_qwen3_vl_image;
void vlm_qwen3_vl_describe_decoder(const vlm_model_config *config, struct vlm_decoder_description *out);

#endif
