/* The engine's view of an image encoder (vision tower + projector) on a
 * backend other than the cpu one: pixel values of one image in, the
 * projected rows that replace its placeholders out. Without one the engine
 * uses the cpu vision model (vision_model.c); placeholder expansion and
 * merging stay there either way (they are cheap host work). */
#ifndef VLM_ENGINE_IMAGE_ENCODER_H
#define VLM_ENGINE_IMAGE_ENCODER_H

#include <stdint.h>

#include "vlm.h"
#include "vlm/generate.h" /* vlm_pixel_values */

typedef struct vlm_image_encoder vlm_image_encoder; /* also in vlm/engine.h */

typedef struct vlm_image_encoder_operations {
  const char *backend; /* "xla" */
  int64_t (*tokens_per_image)(void *self);
  int64_t (*output_width)(void *self);
  /* out_features: [tokens_per_image, output_width]. */
  vlm_status (*encode)(void *self, const vlm_pixel_values *image, float *out_features);
  void (*release)(void *self);
} vlm_image_encoder_operations;

struct vlm_image_encoder {
  const vlm_image_encoder_operations *operations;
  void *self;
};

/* NULL: nothing. */
void vlm_image_encoder_release(vlm_image_encoder *encoder);

#endif
