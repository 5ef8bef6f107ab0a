/* libFuzzer target: config.json, generation_config.json and processor
 * configs are untrusted input. The first byte picks the parser; the rest is
 * the file. Any input must be parsed or refused without a crash or leak. */
#include <stdint.h>
#include <stdlib.h>

#include "io/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const char *text = (const char *)data + 1;
  size_t length = size - 1;
  vlm_status status = VLM_OK;
  switch (data[0] % 4) {
    case 0: {
      vlm_model_config config;
      status = vlm_model_config_parse(text, length, "config.json", NULL, &config);
      if (!status) vlm_model_config_release(&config);
      break;
    }
    case 1: {
      vlm_generation_config config;
      status = vlm_generation_config_parse(text, length, "generation_config.json", NULL, &config);
      if (!status) vlm_generation_config_release(&config);
      break;
    }
    case 2: {
      vlm_processor_config config;
      status = vlm_processor_config_parse(text, length, NULL, 0, NULL, &config);
      if (!status) vlm_processor_config_release(&config);
      break;
    }
    default: {
      vlm_processor_config config;
      status = vlm_processor_config_parse(NULL, 0, text, length, NULL, &config);
      if (!status) vlm_processor_config_release(&config);
      break;
    }
  }
  vlm_status_free(status);
  return 0;
}
