/* Executing a compiled vision-module artifact (stablehlo_vision.h) through
 * IREE's runtime, on the same embedded interpreter as the text module
 * (xla_runtime.h; part of the vlm_xla library).
 *
 * Opening re-emits the module, which looks every weight up through our
 * checkpoint layer (name, dtype, shape: IREE checks byte ranges only), adds
 * this runtime's release and the target to the key, refuses an artifact
 * whose stored key differs (naming the field), loads it with its
 * parameters from the checkpoint's shards, and checks the key hash the
 * artifact itself carries. Stateless: calls are independent. One thread at
 * a time (the calls hold Python's GIL). */
#ifndef VLM_BACKENDS_XLA_XLA_VISION_RUNTIME_H
#define VLM_BACKENDS_XLA_XLA_VISION_RUNTIME_H

#include <stdint.h>

#include "backends/xla/stablehlo_vision.h"
#include "backends/xla/xla_runtime.h"
#include "vlm.h"
#include "vlm/generate.h"

typedef struct vlm_xla_vision_runtime vlm_xla_vision_runtime;

/* Loads `artifact_dir` (NULL: the directory the key names under
 * `cache_dir`; NULL cache_dir: vlm_xla_default_cache_dir) for `model`
 * compiled with `options`. The model must outlive the runtime. */
vlm_status vlm_xla_vision_runtime_open(const vlm_xla_vision_encoder *model,
                                       const vlm_stablehlo_vision_options *options, const char *cache_dir,
                                       const char *artifact_dir, const vlm_xla_runtime_options *runtime_options,
                                       vlm_xla_vision_runtime **out_runtime);
void vlm_xla_vision_runtime_release(vlm_xla_vision_runtime *runtime);

/* Encodes `image_count` images (each [channels, height, width] of the
 * tower's size, as vlm_vision_model_encode takes them), images_per_call at
 * a time (a partial last call is padded with zero images, whose rows are
 * dropped). out_projected [image_count * tokens_per_image, text hidden]:
 * what replaces the image placeholders; out_features (NULL: not wanted)
 * [image_count * tokens_per_image, vision hidden * feature layers]: the
 * selected features before the projector. */
vlm_status vlm_xla_vision_encode(vlm_xla_vision_runtime *runtime, const vlm_pixel_values *images, int image_count,
                                 float *out_projected, float *out_features);

#endif
