/* The xla emitter's view of a checkpoint directory for tests: the model
 * opened (and held by the returned decoder), its text decoder described. */
#ifndef VLM_TESTS_TEST_XLA_MODEL_H
#define VLM_TESTS_TEST_XLA_MODEL_H

#include <string.h>

#include "backends/xla/stablehlo_emitter.h"
#include "models/model.h"

static inline vlm_status open_xla_model(const char *dir, vlm_xla_text_decoder *out) {
  memset(out, 0, sizeof(*out));
  vlm_model *model = NULL;
  vlm_status status = vlm_model_open(dir, NULL, &model);
  if (!status) status = vlm_xla_text_decoder_open(model, out);
  vlm_model_release(model);
  return status;
}

#endif
