/* Golden cases written by the oracle harness (tools/oracle): one directory
 * per case holding manifest.json (stages in pipeline order, each with its
 * dtype, tolerance and expected values or the name of a golden tensor) and
 * tensors.safetensors (the golden tensors, when the case has any).
 *
 * The manifest format is described in tools/oracle/README.md; this reader
 * checks its shape strictly so that a truncated or hand-edited golden is
 * refused with the case and the key named, never half-read. */
#ifndef VLM_VALIDATE_GOLDEN_H
#define VLM_VALIDATE_GOLDEN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/tensor.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "vlm.h"

#define VLM_GOLDEN_FORMAT "vlm-golden/1"
#define VLM_GOLDEN_MAX_MANIFEST_BYTES (64u << 20)

/* An element matches when |actual - expected| <= max_abs + max_rel * |expected|
 * (numpy.allclose). Both 0 means bit-exact. */
typedef struct vlm_tolerance {
  double max_abs;
  double max_rel;
} vlm_tolerance;

typedef struct vlm_golden_stage {
  const char *name;            /* "checkpoint", "prefill_logits", ... */
  const char *dtype;           /* the dtype Transformers ran in ("float32", "bfloat16") */
  const char *tensor;          /* golden tensor name, or NULL */
  vlm_tolerance tolerance;
  const vlm_json_value *spec;  /* the whole stage object, for stage-specific keys */
} vlm_golden_stage;

typedef struct vlm_golden_case {
  char *directory;
  char *model_directory;       /* the manifest's "model", resolved against directory; or NULL */
  const char *case_name;
  const char *dtype;
  vlm_json_document manifest;
  bool has_tensors;
  vlm_safetensors_file tensors;
  vlm_golden_stage *stages;
  size_t stage_count;
  const vlm_allocator *allocator;
} vlm_golden_case;

/* Reads case_dir/manifest.json and maps case_dir/tensors.safetensors when the
 * manifest names it. */
vlm_status vlm_golden_case_open(const char *case_dir, const vlm_allocator *allocator,
                                vlm_golden_case *out_case);
void vlm_golden_case_close(vlm_golden_case *golden);

/* Borrows a golden tensor's bytes; errors name the case and the tensor. */
vlm_status vlm_golden_case_tensor(const vlm_golden_case *golden, const char *name,
                                  vlm_tensor *out_view);

#endif
