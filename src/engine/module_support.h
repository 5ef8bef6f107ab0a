/* Which backend can run each module of a model (SPEC 1.4): the three text
 * contracts and, for families with images, the vision encoder + projector.
 * The cpu answer is whether the family's graph is wired; the xla answer is
 * whether the emitter can lower the model's decoder graph, found by the
 * same emit that `vlm compile` and `--backend xla` run, so inspect and
 * admission cannot disagree. */
#ifndef VLM_ENGINE_MODULE_SUPPORT_H
#define VLM_ENGINE_MODULE_SUPPORT_H

#include <stdbool.h>

#include "vlm.h"

#define VLM_MODULE_COUNT 4

typedef struct vlm_module_support {
  const char *module;       /* "token_prefill", "embeddings_prefill", "decode", "vision_encoder" */
  bool cpu, xla;
  char xla_reason[256];     /* why not, when !xla */
} vlm_module_support;

/* Fills out[VLM_MODULE_COUNT]; *out_count modules apply to the model. */
vlm_status vlm_module_support_check(const char *model_dir, vlm_module_support *out, int *out_count);

#endif
