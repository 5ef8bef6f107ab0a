/* The shared vision-encoder graph: a ViT tower, CLIP's (patch embedding as
 * a linear over host-side patches, class token, position embeddings,
 * pre-layernorm, pre-norm encoder layers) or SigLIP's (a biased patch
 * embedding, no class token, no pre-layernorm, the post-layernorm on the
 * last layer's output: last_hidden_state), followed by the family's feature
 * selection and, for LLaVA, its projector into the text model's hidden
 * size (other families build theirs on the features).
 *
 * Like the decoder graph (decoder.h), nodes are named after the
 * Transformers modules whose output they hold
 * ("model.vision_tower.encoder.layers.0",
 * "model.multi_modal_projector.linear_2"), so intermediates compare with
 * goldens by name. Only the encoder layers the selected feature layers need
 * are built: LLaVA's -2 skips the last layer, as its output is never read. */
#ifndef VLM_MODELS_VISION_ENCODER_H
#define VLM_MODELS_VISION_ENCODER_H

#include "graph/graph.h"
#include "io/config.h"
#include "models/blocks.h"

#define VLM_VISION_MAX_FEATURE_LAYERS VLM_GRAPH_MAX_INPUTS

typedef struct vlm_vision_description {
  const vlm_vision_config *vision;
  vlm_vit_kind kind;             /* CLIP (the zero value) or SigLIP */
  const char *tower_prefix;      /* "model.vision_tower." */
  const char *projector_prefix;  /* "model.multi_modal_projector.", or NULL: no projector (output = features) */
  /* Indices into Transformers' hidden_states tuple (0 = the pre-layernorm
   * output, i = encoder layer i - 1), already made non-negative. Several
   * are concatenated along the features. */
  int64_t feature_layers[VLM_VISION_MAX_FEATURE_LAYERS];
  int feature_layer_count;
  bool keep_class_token;         /* select strategy "full"; "default" drops it (CLIP only) */
  /* SigLIP's last_hidden_state: the feature layer is the last, through
   * post_layernorm. */
  bool post_layernorm;
  /* A key mask per sequence row: the graph input "key_mask" (i32
   * [rows], 0: no row attends to it), a NaViT patch mask (Phi-4's padded
   * crops). The family fills it, and position_ids, after
   * vlm_vision_prepare_inputs. */
  bool key_mask;
  /* Causal flags per sequence row: the graph input "causal" (i32 [rows],
   * not 0: the row attends only to its image's rows up to itself), as
   * Transformers' sdpa runs a tower whose attention says is_causal when no
   * mask was built (Phi-4's over unpadded crops). The family fills it. */
  bool causal;
  vlm_activation projector_activation;
  bool projector_bias;
  int64_t text_hidden_size;
} vlm_vision_description;

/* Patches per image and feature rows (placeholder tokens) per image. */
int64_t vlm_vision_patch_count(const vlm_vision_description *description);
int64_t vlm_vision_tokens_per_image(const vlm_vision_description *description);
/* Values per patch: channels * patch * patch, in [channel, row, column]
 * order (the conv weight's order). */
int64_t vlm_vision_patch_width(const vlm_vision_description *description);

/* Where the interesting intermediates are in a built graph. */
typedef struct vlm_vision_graph_nodes {
  int32_t hidden_states[VLM_VISION_MAX_FEATURE_LAYERS]; /* one per feature layer */
  int32_t features;   /* selected (and concatenated) features [images * tokens, width] */
  int32_t projector;  /* the graph output [images * tokens, text hidden] */
  /* The same nodes by name, for observers (which see nodes, not indices). */
  char hidden_state_names[VLM_VISION_MAX_FEATURE_LAYERS][VLM_GRAPH_NAME_LENGTH];
  char features_name[VLM_GRAPH_NAME_LENGTH];
  char projector_name[VLM_GRAPH_NAME_LENGTH];
} vlm_vision_graph_nodes;

/* The graph's inputs for `image_count` preprocessed images (pixel_values
 * [channels, height, width] of the tower's size each): "patches" (f32
 * [images * patches, patch width], vlm_vision_patchify's order),
 * "token_order" (CLIP; i32: for each sequence row, which row of [class
 * embedding; every image's patches] it is), "position_ids" (i32: its
 * position-embedding row) and "segments" (i32: its image, the attention
 * segment). Added to `out`, which the caller owns. An image without
 * values (NULL) is padding: zero patches, a segment of its own. */
struct vlm_tensor_list;
struct vlm_pixel_values;
vlm_status vlm_vision_prepare_inputs(const vlm_vision_description *description,
                                     const struct vlm_pixel_values *images, int image_count,
                                     struct vlm_tensor_list *out);

/* Builds the graph for `image_count` images over the inputs
 * vlm_vision_prepare_inputs makes; output the projected features, image
 * after image. */
vlm_status vlm_build_vision_graph(const vlm_vision_description *description, int64_t image_count,
                                  vlm_graph *graph, vlm_vision_graph_nodes *out_nodes);

/* pixel_values [channels, height, width] -> patches [patches, patch width]
 * in row-major patch order, as Conv2d(stride = kernel = patch) then
 * flatten(2).transpose(1, 2) lays them out. */
void vlm_vision_patchify(const float *pixel_values, int64_t channels, int64_t height,
                         int64_t width, int64_t patch, float *out_patches);

#endif
