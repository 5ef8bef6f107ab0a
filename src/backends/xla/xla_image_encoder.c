/* The xla backend behind the engine's image-encoder table
 * (src/engine/image_encoder.h): the vision module of
 * stablehlo_vision.h, one image per call, compiled on first use. */
#include <stdlib.h>

#include "backends/xla/stablehlo_vision.h"
#include "backends/xla/xla_vision_runtime.h"
#include "core/status.h"
#include "engine/image_encoder.h"
#include "vlm/xla.h"

typedef struct xla_image_encoder {
  vlm_xla_vision_encoder model; /* not moved after opening: its description points into it */
  bool model_open;
  vlm_stablehlo_vision_options options;
  vlm_xla_vision_runtime *runtime;
} xla_image_encoder;

static int64_t xla_tokens_per_image(void *self) {
  return vlm_xla_vision_tokens_per_image(&((xla_image_encoder *)self)->model);
}
static int64_t xla_output_width(void *self) {
  return vlm_xla_vision_projected_width(&((xla_image_encoder *)self)->model);
}
static vlm_status xla_encode(void *self, const vlm_pixel_values *image, float *out_features) {
  return vlm_xla_vision_encode(((xla_image_encoder *)self)->runtime, image, 1, out_features, NULL);
}
static void xla_release(void *self) {
  xla_image_encoder *encoder = self;
  if (!encoder) return;
  vlm_xla_vision_runtime_release(encoder->runtime);
  if (encoder->model_open) vlm_xla_vision_encoder_release(&encoder->model);
  free(encoder);
}

static const vlm_image_encoder_operations xla_operations = {"xla", xla_tokens_per_image, xla_output_width,
                                                            xla_encode, xla_release};

vlm_status vlm_xla_open_image_encoder(const char *model_dir, const vlm_xla_decoder_options *options,
                                      vlm_image_encoder **out_encoder) {
  *out_encoder = NULL;
  vlm_xla_decoder_options defaults = {0};
  if (!options) options = &defaults;
  vlm_xla_target target = VLM_XLA_TARGET_LLVM_CPU;
  if (options->target) VLM_RETURN_IF_ERROR(vlm_xla_target_from_name(options->target, &target));
  xla_image_encoder *encoder = calloc(1, sizeof(*encoder));
  vlm_image_encoder *handle = calloc(1, sizeof(*handle));
  if (!encoder || !handle) {
    free(encoder);
    free(handle);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  encoder->options.images_per_call = 1;
  vlm_status status = vlm_xla_vision_encoder_open(model_dir, &encoder->model);
  encoder->model_open = status == VLM_OK;
  char artifact_dir[VLM_XLA_PATH_LENGTH];
  if (!status && options->progress)
    fprintf(options->progress, "vlm: preparing the vision encoder for the xla backend (%s)\n",
            vlm_xla_target_name(target));
  if (!status)
    status = vlm_xla_vision_prepare_artifact(&encoder->model, &encoder->options, target, options->cache_dir,
                                             options->compile_if_missing, options->progress, artifact_dir,
                                             sizeof(artifact_dir));
  vlm_xla_runtime_options runtime_options = {.target = target};
  if (!status)
    status = vlm_xla_vision_runtime_open(&encoder->model, &encoder->options, options->cache_dir, artifact_dir,
                                         &runtime_options, &encoder->runtime);
  if (status) {
    xla_release(encoder);
    free(handle);
    return status;
  }
  handle->operations = &xla_operations;
  handle->self = encoder;
  *out_encoder = handle;
  return VLM_OK;
}
