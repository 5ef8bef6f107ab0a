/* See image_encoder.h. */
#include "engine/image_encoder.h"

#include <stdlib.h>

void vlm_image_encoder_release(vlm_image_encoder *encoder) {
  if (!encoder) return;
  encoder->operations->release(encoder->self);
  free(encoder);
}
