#include "validate/compare.h"

#include "models/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/file.h"
#include "validate/stages.h"

struct vlm_comparison_report {
  vlm_golden_case golden;
  char *model_directory;
  char *backend;          /* "cpu", "xla" */
  vlm_stage_result *results;
  size_t result_count;
  char *text;
};

const char *vlm_stage_outcome_name(vlm_stage_outcome outcome) {
  switch (outcome) {
    case VLM_STAGE_MATCH: return "match";
    case VLM_STAGE_DIVERGED: return "diverged";
    case VLM_STAGE_FAILED: return "failed";
    case VLM_STAGE_NOT_IMPLEMENTED: return "not_implemented";
    case VLM_STAGE_NOT_ON_BACKEND: return "not_on_backend";
  }
  return "unknown";
}

void vlm_compare_values(const double *expected, const double *actual, int64_t count,
                        const char *label, vlm_stage_result *result) {
  for (int64_t i = 0; i < count; i++) {
    double difference = fabs(actual[i] - expected[i]);
    /* NaN never matches anything, including NaN: record it as infinite. */
    if (isnan(difference)) difference = INFINITY;
    if (difference > result->max_abs) result->max_abs = difference;
    if (expected[i] != 0 && difference / fabs(expected[i]) > result->max_rel)
      result->max_rel = difference / fabs(expected[i]);
    result->compared++;
    bool within = difference <= result->tolerance.max_abs +
                                    result->tolerance.max_rel * fabs(expected[i]);
    if (within) continue;
    result->outcome = VLM_STAGE_DIVERGED;
    if (result->mismatched++ == 0)
      snprintf(result->detail, sizeof(result->detail), "%s[%lld]: expected %.9g, got %.9g",
               label, (long long)i, expected[i], actual[i]);
  }
}

vlm_status vlm_compare_with_golden_tensor(const vlm_compare_context *context,
                                          const vlm_golden_stage *stage, const double *actual,
                                          int64_t count, vlm_stage_result *result) {
  vlm_tensor expected;
  VLM_RETURN_IF_ERROR(vlm_golden_case_tensor(context->golden, stage->tensor, &expected));
  if (vlm_tensor_element_count(&expected) != count) {
    result->outcome = VLM_STAGE_DIVERGED;
    snprintf(result->detail, sizeof(result->detail), "vlm produced %lld values, the golden has %lld",
             (long long)count, (long long)vlm_tensor_element_count(&expected));
    return VLM_OK;
  }
  double *golden = malloc((size_t)(count ? count : 1) * sizeof(double));
  if (!golden) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; i < count; i++) vlm_tensor_value_as_double(&expected, i, &golden[i]);
  vlm_compare_values(golden, actual, count, stage->name, result);
  free(golden);
  return VLM_OK;
}

vlm_status vlm_golden_token_ids(const vlm_golden_case *golden, int32_t **out_ids,
                                int64_t *out_count) {
  vlm_tensor ids;
  VLM_RETURN_IF_ERROR(vlm_golden_case_tensor(golden, "input_ids", &ids));
  int64_t count = vlm_tensor_element_count(&ids);
  int32_t *values = malloc((size_t)(count ? count : 1) * sizeof(int32_t));
  if (!values) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; i < count; i++) {
    double value = 0;
    vlm_tensor_value_as_double(&ids, i, &value);
    values[i] = (int32_t)value;
  }
  *out_ids = values;
  *out_count = count;
  return VLM_OK;
}

int vlm_golden_image_count(const vlm_golden_case *golden) {
  const vlm_json_value *images = vlm_json_object_get(golden->manifest.root, "images");
  return images && images->type == VLM_JSON_ARRAY ? (int)images->as.array.count : 0;
}

/* ---------------------------------------------------------------------- */

static void run_stage(const vlm_compare_context *context, const vlm_golden_stage *stage,
                      vlm_stage_result *result) {
  memset(result, 0, sizeof(*result));
  result->name = stage->name;
  result->dtype = stage->dtype;
  result->tolerance = stage->tolerance;
  bool inside_module = false;
  vlm_stage_function function = vlm_stage_function_find(stage->name, context->backend, &inside_module);
  if (inside_module) {
    result->outcome = VLM_STAGE_NOT_ON_BACKEND;
    snprintf(result->detail, sizeof(result->detail), "not computed on %s: inside a compiled module",
             context->backend->name);
    return;
  }
  if (!function) {
    result->outcome = VLM_STAGE_NOT_IMPLEMENTED;
    snprintf(result->detail, sizeof(result->detail), "not implemented yet%s%s", context->backend ? " on " : "",
             context->backend ? context->backend->name : "");
    return;
  }
  vlm_status status = function(context, stage, result);
  if (status) {
    result->outcome = VLM_STAGE_FAILED;
    snprintf(result->detail, sizeof(result->detail), "%s", vlm_status_message(status));
    vlm_status_free(status);
  }
}

/* The oracle checks real tokenizers in packed (tools/oracle/tokenizer_files.py):
 * say how to unpack one instead of failing every stage on a missing file. */
static vlm_status check_tokenizer_unpacked(const char *model) {
  static const char *const packed[] = {"tokenizer.json.gz", "tokenizer.json.patch"};
  char *plain = vlm_path_join(model, "tokenizer.json");
  vlm_status status = plain ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; !status && !vlm_path_exists(plain) && i < 2; i++) {
    char *path = vlm_path_join(model, packed[i]);
    if (path && vlm_path_exists(path))
      status = VLM_ERROR(FAILED_PRECONDITION,
                         "%s holds %s, not tokenizer.json: unpack it with `python3 "
                         "tools/oracle/tokenizer_files.py unpack %s OUT` and pass --model OUT",
                         model, packed[i], model);
    free(path);
  }
  free(plain);
  return status;
}

vlm_status vlm_compare_run(const char *case_dir, const vlm_compare_options *options,
                           vlm_comparison_report **out_report) {
  *out_report = NULL;
  vlm_compare_options defaults = {0};
  if (!options) options = &defaults;
  vlm_comparison_report *report = calloc(1, sizeof(*report));
  if (!report) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_status status = vlm_golden_case_open(case_dir, options->allocator, &report->golden);
  if (status) {
    free(report);
    return status;
  }
  const char *model = options->model_directory ? options->model_directory
                                               : report->golden.model_directory;
  if (!model) {
    vlm_comparison_report_release(report);
    return VLM_ERROR(INVALID_ARGUMENT,
                     "golden case %s names no model; pass the model directory", case_dir);
  }
  status = check_tokenizer_unpacked(model);
  if (status) {
    vlm_comparison_report_release(report);
    return status;
  }
  report->model_directory = strdup(model);
  report->results = calloc(report->golden.stage_count, sizeof(report->results[0]));
  if (!report->model_directory || !report->results) {
    vlm_comparison_report_release(report);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  vlm_compare_context context = {
      .model_directory = report->model_directory,
      .golden = &report->golden,
      .allocator = options->allocator,
      .thread_count = options->thread_count,
      .backend = options->backend,
  };
  report->backend = strdup(options->backend ? options->backend->name : "cpu");
  if (options->backend) context.modules = vlm_compare_modules_create();
  if (!report->backend || (options->backend && !context.modules)) {
    vlm_comparison_report_release(report);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  /* The model as Transformers ran the case: in its dtype, with the call's
   * processor kwargs (e.g. pan-and-scan) when the manifest has them. */
  vlm_model_options model_options = {.allocator = options->allocator, .dtype = report->golden.dtype};
  char *processor_kwargs = NULL;
  const vlm_json_value *kwargs = vlm_json_object_get(report->golden.manifest.root, "processor_kwargs");
  if (kwargs) {
    vlm_string_builder text = {0};
    vlm_sb_append_json_value(&text, kwargs);
    processor_kwargs = vlm_sb_finish(&text);
    model_options.processor_kwargs = processor_kwargs;
  }
  vlm_status opened = vlm_model_open(report->model_directory, &model_options, &context.model);
  free(processor_kwargs);
  /* A model that does not open fails each stage that needs it (the
   * checkpoint stage says why); the others still compare. */
  vlm_status_free(opened);
  for (size_t i = 0; i < report->golden.stage_count; i++)
    run_stage(&context, &report->golden.stages[i], &report->results[i]);
  vlm_compare_modules_release(context.modules); /* before the model its modules hold */
  vlm_model_release(context.model);
  report->result_count = report->golden.stage_count;
  *out_report = report;
  return VLM_OK;
}

size_t vlm_comparison_report_stage_count(const vlm_comparison_report *report) {
  return report->result_count;
}

const vlm_stage_result *vlm_comparison_report_stage(const vlm_comparison_report *report,
                                                    size_t index) {
  return index < report->result_count ? &report->results[index] : NULL;
}

const vlm_stage_result *vlm_comparison_report_first_divergent(
    const vlm_comparison_report *report) {
  for (size_t i = 0; i < report->result_count; i++)
    if (report->results[i].outcome == VLM_STAGE_DIVERGED ||
        report->results[i].outcome == VLM_STAGE_FAILED)
      return &report->results[i];
  return NULL;
}

static size_t count_outcome(const vlm_comparison_report *report, vlm_stage_outcome outcome) {
  size_t count = 0;
  for (size_t i = 0; i < report->result_count; i++)
    count += report->results[i].outcome == outcome;
  return count;
}

static void append_text(vlm_comparison_report *report, vlm_string_builder *out) {
  vlm_sb_appendf(out, "golden %s (%s)\nmodel  %s\nbackend %s\n\n", report->golden.directory,
                 report->golden.dtype, report->model_directory, report->backend);
  vlm_sb_appendf(out, "%-28s %-9s %-11s %-11s %-19s %s\n", "stage", "dtype", "max-abs",
                 "max-rel", "tolerance abs/rel", "result");
  for (size_t i = 0; i < report->result_count; i++) {
    const vlm_stage_result *result = &report->results[i];
    char tolerance[32];
    if (result->tolerance.max_abs == 0 && result->tolerance.max_rel == 0)
      snprintf(tolerance, sizeof(tolerance), "exact");
    else
      snprintf(tolerance, sizeof(tolerance), "%.1e/%.1e", result->tolerance.max_abs,
               result->tolerance.max_rel);
    bool compared = result->outcome == VLM_STAGE_MATCH || result->outcome == VLM_STAGE_DIVERGED;
    char max_abs[24] = "-", max_rel[24] = "-";
    if (compared) {
      snprintf(max_abs, sizeof(max_abs), "%.3e", result->max_abs);
      snprintf(max_rel, sizeof(max_rel), "%.3e", result->max_rel);
    }
    const char *outcome = result->outcome == VLM_STAGE_NOT_IMPLEMENTED  ? "not implemented yet"
                          : result->outcome == VLM_STAGE_NOT_ON_BACKEND ? "not on this backend"
                                                                        : vlm_stage_outcome_name(result->outcome);
    vlm_sb_appendf(out, "%-28s %-9s %-11s %-11s %-19s %s", result->name, result->dtype,
                   max_abs, max_rel, tolerance, outcome);
    if (result->detail[0] && strcmp(result->detail, "not implemented yet") != 0)
      vlm_sb_appendf(out, " (%s)", result->detail);
    vlm_sb_append_literal(out, "\n");
  }
  const vlm_stage_result *divergent = vlm_comparison_report_first_divergent(report);
  size_t matched = count_outcome(report, VLM_STAGE_MATCH);
  size_t missing = count_outcome(report, VLM_STAGE_NOT_IMPLEMENTED);
  size_t inside = count_outcome(report, VLM_STAGE_NOT_ON_BACKEND);
  if (divergent)
    vlm_sb_appendf(out, "\nfirst divergent stage: %s: %s\n", divergent->name, divergent->detail);
  else if (inside)
    vlm_sb_appendf(out, "\nall %zu stages match (%zu not implemented yet, %zu inside a compiled module on %s)\n",
                   matched, missing, inside, report->backend);
  else
    vlm_sb_appendf(out, "\nall %zu stages match (%zu not implemented yet)\n", matched, missing);
}

static void append_json_number(vlm_string_builder *out, double value) {
  if (isfinite(value)) vlm_sb_appendf(out, "%.9g", value);
  else vlm_sb_append_literal(out, "null"); /* JSON has no infinity */
}

static void append_json(vlm_comparison_report *report, vlm_string_builder *out) {
  vlm_sb_append_literal(out, "{\"golden\":");
  vlm_sb_append_json_string(out, report->golden.directory, strlen(report->golden.directory));
  vlm_sb_append_literal(out, ",\"model\":");
  vlm_sb_append_json_string(out, report->model_directory, strlen(report->model_directory));
  vlm_sb_append_literal(out, ",\"backend\":");
  vlm_sb_append_json_string(out, report->backend, strlen(report->backend));
  vlm_sb_append_literal(out, ",\"stages\":[");
  for (size_t i = 0; i < report->result_count; i++) {
    const vlm_stage_result *result = &report->results[i];
    if (i) vlm_sb_append_literal(out, ",");
    vlm_sb_append_literal(out, "{\"name\":");
    vlm_sb_append_json_string(out, result->name, strlen(result->name));
    vlm_sb_append_literal(out, ",\"dtype\":");
    vlm_sb_append_json_string(out, result->dtype, strlen(result->dtype));
    vlm_sb_appendf(out, ",\"result\":\"%s\",\"max_abs\":", vlm_stage_outcome_name(result->outcome));
    append_json_number(out, result->max_abs);
    vlm_sb_append_literal(out, ",\"max_rel\":");
    append_json_number(out, result->max_rel);
    vlm_sb_append_literal(out, ",\"tolerance\":{\"max_abs\":");
    append_json_number(out, result->tolerance.max_abs);
    vlm_sb_append_literal(out, ",\"max_rel\":");
    append_json_number(out, result->tolerance.max_rel);
    vlm_sb_appendf(out, "},\"compared\":%lld,\"mismatched\":%lld,\"detail\":",
                   (long long)result->compared, (long long)result->mismatched);
    vlm_sb_append_json_string(out, result->detail, strlen(result->detail));
    vlm_sb_append_literal(out, "}");
  }
  const vlm_stage_result *divergent = vlm_comparison_report_first_divergent(report);
  vlm_sb_append_literal(out, "],\"first_divergent_stage\":");
  if (divergent) vlm_sb_append_json_string(out, divergent->name, strlen(divergent->name));
  else vlm_sb_append_literal(out, "null");
  vlm_sb_appendf(out, ",\"matched\":%zu,\"not_implemented\":%zu,\"not_on_backend\":%zu}\n",
                 count_outcome(report, VLM_STAGE_MATCH), count_outcome(report, VLM_STAGE_NOT_IMPLEMENTED),
                 count_outcome(report, VLM_STAGE_NOT_ON_BACKEND));
}

const char *vlm_comparison_report_text(vlm_comparison_report *report, bool as_json) {
  free(report->text);
  vlm_string_builder out = {0};
  if (as_json) append_json(report, &out);
  else append_text(report, &out);
  report->text = vlm_sb_finish(&out);
  return report->text ? report->text : "out of memory\n";
}

void vlm_comparison_report_release(vlm_comparison_report *report) {
  if (!report) return;
  vlm_golden_case_close(&report->golden);
  free(report->model_directory);
  free(report->backend);
  free(report->results);
  free(report->text);
  free(report);
}
