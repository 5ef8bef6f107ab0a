/* libFuzzer target: config.json, generation_config.json and processor
 * configs are untrusted input. The first byte picks the parser; the rest is
 * the file. Any input must be parsed or refused without a crash or leak.
 * A processor config that parses also sizes a few images (Qwen2-VL's
 * smart_resize takes its bounds from the config and its sizes from
 * untrusted images): computed or refused, never overflowed. A config.json
 * that parses also has its quantization_config read (GPTQ, AWQ). */
#include <stdint.h>
#include <stdlib.h>

#include "io/config.h"
#include "io/quantization_config.h"
#include "media/image_processor_qwen2_vl.h"

static void size_images(const vlm_processor_config *config, const uint8_t *data, size_t size) {
  int64_t sizes[][2] = {{1, 1}, {4001, 20}, {20, 4000}, {1, 200}, {65535, 65535},
                        {INT64_C(1) << 26, 1}, {0, 0}};
  /* The last one from the input's last bytes. */
  if (size >= 4) {
    sizes[6][0] = 1 + (data[size - 1] | data[size - 2] << 8);
    sizes[6][1] = 1 + (data[size - 3] | data[size - 4] << 8);
  }
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    int64_t grid[3];
    vlm_status_free(vlm_qwen2_vl_image_grid(config, sizes[i][0], sizes[i][1], grid));
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const char *text = (const char *)data + 1;
  size_t length = size - 1;
  vlm_status status = VLM_OK;
  switch (data[0] % 4) {
    case 0: {
      vlm_model_config config;
      status = vlm_model_config_parse(text, length, "config.json", NULL, &config);
      if (!status) {
        vlm_quantization_config quantization; /* GPTQ/AWQ settings, read at model open */
        vlm_status_free(vlm_quantization_config_parse(config.root_section, "config.json", &quantization));
        vlm_model_config_release(&config);
      }
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
      if (!status) size_images(&config, data, size);
      if (!status) vlm_processor_config_release(&config);
      break;
    }
    default: {
      vlm_processor_config config;
      status = vlm_processor_config_parse(NULL, 0, text, length, NULL, &config);
      if (!status) size_images(&config, data, size);
      if (!status) vlm_processor_config_release(&config);
      break;
    }
  }
  vlm_status_free(status);
  return 0;
}
