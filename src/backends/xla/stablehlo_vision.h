/* The xla backend's vision module: the family's vision tower and projector
 * (src/models/vision_encoder.h, the same graph the cpu backend executes),
 * emitted as a separate, stateless StableHLO module. It is separate from
 * the text module because it has its own geometry (image size, images per
 * call) and no KV cache, so a text recompile (capacity, slots) never
 * recompiles it and the other way round.
 *
 * Static shapes: images per call B, P patches per image of width W
 * (channels * patch * patch, vlm_vision_patchify's order), T feature rows
 * (placeholder tokens) per image, F selected feature width, H the text
 * model's hidden size:
 *
 *   encode(patches [B * P, W] f32, token_order [B * (P + 1)] i32,
 *          position_ids [B * (P + 1)] i32, segments [B * (P + 1)] i32)
 *       -> (projected [B * T, H] f32, features [B * T, F] f32)
 *
 * The arguments are the graph's inputs in graph order, as
 * vlm_vision_prepare_inputs makes them (src/models/vision_encoder.h).
 *   compatibility() -> [4]: contract version, emitter version, key hash
 *                           (low, high 32 bits)
 *
 * `projected` is what replaces the image placeholders (the cpu backend's
 * vlm_vision_model_encode); `features` is the selected hidden states before
 * the projector (the goldens' "vision_features" stage), returned because it
 * is computed anyway and lets tests compare the stage.
 *
 * Module layout: weights as `util.global private @"<canonical name>" =
 * #stream.parameter.named<"model"::"<stored name>">` in their checkpoint
 * dtype (as the text module); no mutable global; module attributes
 * vlm.contract_version, vlm.emitter_version, vlm.compatibility_key,
 * vlm.compatibility_key_hash. Its compatibility key has module
 * "vision_encoder", so its artifact directory (named by the key hash)
 * never collides with the text module's. */
#ifndef VLM_BACKENDS_XLA_STABLEHLO_VISION_H
#define VLM_BACKENDS_XLA_STABLEHLO_VISION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "backends/xla/iree_compiler.h"
#include "backends/xla/xla_key.h"
#include "io/checkpoint.h"
#include "io/config.h"
#include "models/family.h"
#include "models/vision_encoder.h"
#include "vlm.h"

/* The vision module's own versions: the text module's are not bumped by
 * changes here, nor these by changes there. */
#define VLM_XLA_VISION_CONTRACT_VERSION 1
#define VLM_XLA_VISION_EMITTER_VERSION 2 /* 2: graph inputs as arguments (token order, positions, segments) */

typedef struct vlm_stablehlo_vision_options {
  int32_t images_per_call; /* B; 0: 1 (the engine encodes one image per scheduler step) */
} vlm_stablehlo_vision_options;

/* A checkpoint opened for the xla vision module: config, the family's
 * vision description (which points into `config`: do not copy the struct
 * after opening) and the weights (headers validated, tensors mapped). */
typedef struct vlm_xla_vision_encoder {
  vlm_model_config config;
  const vlm_family *family;
  vlm_vision_description description;
  vlm_checkpoint *weights;
} vlm_xla_vision_encoder;

/* UNIMPLEMENTED when the family has no vision path. */
vlm_status vlm_xla_vision_encoder_open(const char *model_dir, vlm_xla_vision_encoder *out_model);
void vlm_xla_vision_encoder_release(vlm_xla_vision_encoder *model);

/* Rows of the outputs per image, and their widths. */
int64_t vlm_xla_vision_tokens_per_image(const vlm_xla_vision_encoder *model);
int64_t vlm_xla_vision_projected_width(const vlm_xla_vision_encoder *model);
int64_t vlm_xla_vision_features_width(const vlm_xla_vision_encoder *model);

/* Emits the module (NUL-terminated, free()) and its emit-time compatibility
 * key. Every weight is looked up through the checkpoint layer (name, dtype,
 * shape) while emitting; an op the emitter cannot lower is refused with
 * UNIMPLEMENTED naming the node and the op. */
vlm_status vlm_stablehlo_emit_vision_encoder(const vlm_xla_vision_encoder *model,
                                             const vlm_stablehlo_vision_options *options, char **out_module,
                                             vlm_xla_key *out_key);

/* The artifact directory for `model` and `options` under `cache_dir` (NULL:
 * vlm_xla_default_cache_dir): an existing artifact whose key matches, else
 * (when compile_if_missing) compiled now with iree-compile, progress on
 * `progress` (may be NULL); else FAILED_PRECONDITION/NOT_FOUND saying to run
 * `vlm compile`. Needs iree-compile, not the runtime. */
vlm_status vlm_xla_vision_prepare_artifact(const vlm_xla_vision_encoder *model,
                                           const vlm_stablehlo_vision_options *options, vlm_xla_target target,
                                           const char *cache_dir, bool compile_if_missing, FILE *progress,
                                           char *out_artifact_dir, size_t size);

#endif
