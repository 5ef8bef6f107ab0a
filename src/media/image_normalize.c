/* Rescale + normalize tables (see image_normalize.h for the arithmetic of
 * each backend and why it differs). */
#include "media/image_normalize.h"

static float normalize_value(const vlm_processor_config *config, vlm_image_backend backend,
                             int channel, int value) {
  float x = (float)value;
  if (backend == VLM_IMAGE_BACKEND_TORCHVISION && config->do_rescale && config->do_normalize) {
    float inverse_factor = (float)(1.0 / config->rescale_factor);
    float mean = (float)config->image_mean[channel] * inverse_factor;
    float std = (float)config->image_std[channel] * inverse_factor;
    return (x - mean) / std;
  }
  if (config->do_rescale) {
    x = backend == VLM_IMAGE_BACKEND_PIL ? (float)((double)value * config->rescale_factor)
                                         : x * (float)config->rescale_factor;
  }
  if (config->do_normalize) {
    float mean = (float)config->image_mean[channel], std = (float)config->image_std[channel];
    x = (x - mean) / std;
  }
  return x;
}

void vlm_image_normalize_tables(const vlm_processor_config *config, vlm_image_backend backend,
                                float tables[3][256]) {
  for (int channel = 0; channel < 3; channel++)
    for (int value = 0; value < 256; value++)
      tables[channel][value] = normalize_value(config, backend, channel, value);
}
