/* libFuzzer target: a LoRA adapter's adapter_config.json (PEFT) is
 * untrusted input of a model directory (src/models/adapters.c). Any input
 * must give a finite scale or a refusal, without a crash or leak. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "models/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double scale = NAN;
  vlm_status status = vlm_adapter_config_parse((const char *)data, size, "adapter_config.json", &scale);
  if (!status && !isfinite(scale)) abort();
  vlm_status_free(status);
  return 0;
}
