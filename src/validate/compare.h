/* Stage-by-stage comparison of vlm against a golden case from Transformers.
 *
 * A golden case lists stages in pipeline order (checkpoint, processor
 * outputs, ids, encoder, projector, embeddings, logits, KV, greedy tokens,
 * text). For each one this module looks up the function that computes the
 * same stage with vlm's own code (the table in stages.c; a stage without an
 * entry is reported as "not implemented yet", never passed), compares with
 * the stage's tolerance, and names the first stage that diverges. Because
 * stages run in pipeline order, the first divergent stage is where a bug
 * entered; later ones only inherit it.
 *
 * The interface is shaped like the public API (opaque report, text and JSON
 * renderings) so it can move into include/vlm.h unchanged. */
#ifndef VLM_VALIDATE_COMPARE_H
#define VLM_VALIDATE_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"
#include "validate/golden.h"
#include "vlm.h"

typedef enum vlm_stage_outcome {
  VLM_STAGE_MATCH = 0,
  VLM_STAGE_DIVERGED,          /* values outside the tolerance */
  VLM_STAGE_FAILED,            /* vlm could not compute the stage (an error) */
  VLM_STAGE_NOT_IMPLEMENTED,   /* no vlm code for this stage yet */
  /* The chosen backend computes the stage only inside a compiled module
   * (xla: the tower's hidden states, the merge of the embeddings), so it
   * has no value of its own to compare: never a match. */
  VLM_STAGE_NOT_ON_BACKEND,
} vlm_stage_outcome;

const char *vlm_stage_outcome_name(vlm_stage_outcome outcome);

#define VLM_STAGE_DETAIL_BYTES 512

typedef struct vlm_stage_result {
  const char *name;
  const char *dtype;
  vlm_tolerance tolerance;
  vlm_stage_outcome outcome;
  double max_abs;        /* largest |actual - expected| seen; 0 when not compared */
  double max_rel;        /* largest |actual - expected| / |expected| over expected != 0 */
  int64_t compared;      /* elements (or tensors) compared */
  int64_t mismatched;    /* of those, how many were outside the tolerance */
  char detail[VLM_STAGE_DETAIL_BYTES]; /* the first problem, or a summary */
} vlm_stage_result;

/* A backend other than cpu for the stages that are module boundaries: the
 * caller opens its modules (the engine's tables, src/models/modules.h), so
 * validate never links a backend's runtime (xla embeds CPython). A stage
 * computed through these never falls back to the cpu backend. */
struct vlm_model;
typedef struct vlm_text_decoder vlm_text_decoder;
typedef struct vlm_media_encoder vlm_media_encoder;
typedef struct vlm_compare_backend {
  const char *name;  /* "xla" */
  void *user;
  /* One slot of at least `capacity` positions; prefill_chunk 0: the backend's default. */
  vlm_status (*open_text_decoder)(void *user, struct vlm_model *model, int64_t capacity, int64_t prefill_chunk,
                                  vlm_text_decoder **out_decoder);
  /* kind: a vlm_media_kind. */
  vlm_status (*open_media_encoder)(void *user, struct vlm_model *model, int kind, vlm_media_encoder **out_encoder);
} vlm_compare_backend;

/* The modules opened on that backend, shared by the stages (stage_modules.c). */
typedef struct vlm_compare_modules vlm_compare_modules;

/* What a stage function gets: the golden case and the opened model. */
typedef struct vlm_compare_context {
  const char *model_directory;
  struct vlm_model *model;          /* opened once for every stage */
  const vlm_golden_case *golden;
  const vlm_allocator *allocator;
  int thread_count;
  const vlm_compare_backend *backend;  /* NULL: the cpu reference path */
  vlm_compare_modules *modules;        /* with backend */
} vlm_compare_context;

/* Computes `stage` with vlm's code and fills result->outcome, max_abs,
 * max_rel, compared, mismatched and detail. Returning an error marks the
 * stage FAILED with the error's message; it does not stop the comparison. */
typedef vlm_status (*vlm_stage_function)(const vlm_compare_context *context,
                                         const vlm_golden_stage *stage,
                                         vlm_stage_result *result);

/* The vlm side of a stage on the cpu reference path (backend NULL), or on
 * a module backend: the same function for a host stage (processor, ids,
 * positions: backend-independent), the backend's for a module boundary
 * (encoder outputs, logits, KV, greedy tokens). NULL when it does not exist
 * yet; *inside_module (may be NULL) tells a stage the backend computes only
 * inside a compiled module apart (stages.c). */
vlm_stage_function vlm_stage_function_find(const char *stage_name, const vlm_compare_backend *backend,
                                           bool *inside_module);

/* Element-wise comparison of `count` values, both converted to double.
 * Updates the result's max_abs, max_rel, compared and mismatched, and on the
 * first mismatch writes "<label>[index]: expected X, got Y" into detail. */
void vlm_compare_values(const double *expected, const double *actual, int64_t count,
                        const char *label, vlm_stage_result *result);
/* Reads element `index` of a contiguous float or integer tensor as double;
 * false for dtypes that are neither. */
/* Compares `count` values vlm computed with the stage's golden tensor
 * (stage->tensor), via vlm_compare_values; a count that differs from the
 * golden's is a divergence. */
vlm_status vlm_compare_with_golden_tensor(const vlm_compare_context *context,
                                          const vlm_golden_stage *stage, const double *actual,
                                          int64_t count, vlm_stage_result *result);
/* The golden prompt's token ids ("input_ids" widened to int32; malloc'd). */
vlm_status vlm_golden_token_ids(const vlm_golden_case *golden, int32_t **out_ids,
                                int64_t *out_count);
/* How many images the case's prompt holds (its manifest "images"). */
int vlm_golden_image_count(const vlm_golden_case *golden);

typedef struct vlm_compare_options {
  const vlm_allocator *allocator;  /* NULL: system allocator */
  const char *model_directory;     /* NULL: the manifest's "model" */
  int thread_count;                /* <= 0: one per core */
  const vlm_compare_backend *backend;  /* NULL: cpu */
} vlm_compare_options;

typedef struct vlm_comparison_report vlm_comparison_report;

/* Opens the golden case at case_dir and runs every stage. Fails only when the
 * case itself cannot be read; stage problems are in the report. */
vlm_status vlm_compare_run(const char *case_dir, const vlm_compare_options *options,
                           vlm_comparison_report **out_report);
size_t vlm_comparison_report_stage_count(const vlm_comparison_report *report);
const vlm_stage_result *vlm_comparison_report_stage(const vlm_comparison_report *report,
                                                    size_t index);
/* The first stage that DIVERGED or FAILED, or NULL when none did. */
const vlm_stage_result *vlm_comparison_report_first_divergent(
    const vlm_comparison_report *report);
/* A table (or JSON when as_json); owned by the report. */
const char *vlm_comparison_report_text(vlm_comparison_report *report, bool as_json);
void vlm_comparison_report_release(vlm_comparison_report *report);

#endif
