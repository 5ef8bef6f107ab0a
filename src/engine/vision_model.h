/* The vision side of a multimodal request (SPEC 2.4): the family's vision
 * tower and projector, and the token-embedding table for merging, bound to
 * the checkpoint's memory map and nothing else. It never binds a text
 * decoder tensor: every weight it reads goes through one accounting point
 * (the graph executor's weight observer, or the embedding lookup), which
 * tallies bytes per component and can report each name, so a test can prove
 * that no decoder-layer tensor was touched.
 *
 *   encode:  pixel_values per image -> projected features
 *            [images * tokens_per_image, text hidden]
 *   merge:   prompt ids with image placeholders (already expanded) +
 *            features -> input embeddings [T, text hidden], placeholder rows
 *            replaced by feature rows in order (LlavaModel's masked_scatter)
 *
 * A placeholder count that does not match the features is an error naming
 * both counts. */
#ifndef VLM_ENGINE_VISION_MODEL_H
#define VLM_ENGINE_VISION_MODEL_H

#include <stdint.h>

#include "backends/cpu_graph.h"
#include "core/thread_pool.h"
#include "io/config.h"
#include "models/family.h"
#include "models/vision_encoder.h"
#include "vlm.h"
#include "vlm/generate.h"

typedef struct vlm_vision_model vlm_vision_model;

typedef struct vlm_vision_model_options {
  vlm_thread_pool *pool;        /* borrowed; NULL runs single-threaded */
  const vlm_allocator *allocator;
} vlm_vision_model_options;

/* Opens config.json and maps the checkpoint of `model_dir`; fails with
 * UNIMPLEMENTED when the family has no vision path. */
vlm_status vlm_vision_model_open(const char *model_dir, const vlm_vision_model_options *options,
                                 vlm_vision_model **out_model);
void vlm_vision_model_release(vlm_vision_model *model);

const vlm_vision_description *vlm_vision_model_description(const vlm_vision_model *model);
/* Placeholder tokens (= feature rows) per image. */
int64_t vlm_vision_model_tokens_per_image(const vlm_vision_model *model);
/* The prompt positions an image of width x height (as decoded) takes.
 * The CLIP processors resize and crop every image to one size, so for the
 * families here it is tokens_per_image whatever the size; a family whose
 * processor keeps the aspect ratio (Qwen2-VL's smart_resize) answers from
 * width and height here, and admission stays exact before decoding. */
int64_t vlm_vision_model_image_tokens(const vlm_vision_model *model, int64_t width, int64_t height);
int64_t vlm_vision_model_image_token_id(const vlm_vision_model *model);
int64_t vlm_vision_model_output_width(const vlm_vision_model *model);

/* Observers for the next calls (NULL to stop): every computed node of the
 * vision graph, and every tensor bound (graph weights and the embedding
 * table alike). */
typedef struct vlm_vision_trace {
  vlm_node_observer node_observer;
  void *node_context;
  vlm_weight_observer weight_observer;
  void *weight_context;
} vlm_vision_trace;
void vlm_vision_model_set_trace(vlm_vision_model *model, const vlm_vision_trace *trace);

/* The graph nodes of the last encode (for observers comparing by index). */
const vlm_vision_graph_nodes *vlm_vision_model_last_nodes(const vlm_vision_model *model);

/* Bytes of checkpoint tensors bound per component since open (each binding
 * counted; a tensor bound twice counts twice). */
uint64_t vlm_vision_model_bound_bytes(const vlm_vision_model *model, vlm_component component);

/* Encodes `image_count` images into out_features
 * [image_count * tokens_per_image, output_width]. Each image must have the
 * tower's channels and image size. */
vlm_status vlm_vision_model_encode(vlm_vision_model *model, const vlm_pixel_values *images,
                                   int image_count, float *out_features);

/* Counts the image placeholders in `ids`. */
int64_t vlm_vision_model_count_placeholders(const vlm_vision_model *model, const int32_t *ids,
                                            int64_t count);

/* Replaces each single image placeholder by tokens_per_image copies (what
 * LlavaProcessor does to the prompt text before tokenizing). Fails when the
 * prompt's placeholder count differs from image_count. out_ids is
 * malloc'ed. */
vlm_status vlm_vision_model_expand_placeholders(const vlm_vision_model *model, const int32_t *ids,
                                                int64_t count, int image_count, int32_t **out_ids,
                                                int64_t *out_count);

/* Input embeddings for already expanded `ids`: token embeddings, with the
 * placeholder rows taken from `features` ([feature_rows, output_width]) in
 * order. out_embeddings: [count, output_width]. */
vlm_status vlm_vision_model_merge(vlm_vision_model *model, const int32_t *ids, int64_t count,
                                  const float *features, int64_t feature_rows, float *out_embeddings);

#endif
