/* Which backend can run each module of a model (SPEC 1.4): the three text
 * contracts and, for families with images, the image encoder (tower +
 * projector). One predicate for every answer: build the module's graph
 * (at a small geometry: what a backend supports does not depend on it)
 * and ask the backend whether it supports every node. `vlm inspect`,
 * `/v1/models` and the engine's choice of encoder backend all read this,
 * so they cannot disagree. */
#ifndef VLM_ENGINE_MODULE_SUPPORT_H
#define VLM_ENGINE_MODULE_SUPPORT_H

#include <stdbool.h>

#include "models/model.h"
#include "vlm.h"

#define VLM_MODULE_COUNT 5

typedef struct vlm_module_support {
  const char *module;       /* "token_prefill", "embeddings_prefill", "decode", "image_encoder" */
  bool cpu, xla;
  char cpu_reason[256];     /* why not, when !cpu */
  char xla_reason[256];     /* why not, when !xla */
} vlm_module_support;

/* Fills out[VLM_MODULE_COUNT]; *out_count modules apply to the model. */
vlm_status vlm_module_support_check(const vlm_model *model, vlm_module_support *out, int *out_count);

#endif
