#include "validate/golden.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"

static char *join_path(const char *directory, const char *name) {
  size_t length = strlen(directory) + 1 + strlen(name) + 1;
  char *path = malloc(length);
  if (path) snprintf(path, length, "%s/%s", directory, name);
  return path;
}

/* A stage's tolerance: {"max_abs": A, "max_rel": R}; absent means exact. */
static vlm_status read_tolerance(const vlm_json_value *stage, const char *stage_name,
                                 vlm_tolerance *out) {
  out->max_abs = 0;
  out->max_rel = 0;
  const vlm_json_value *tolerance = vlm_json_object_get(stage, "tolerance");
  if (!tolerance) return VLM_OK;
  if (tolerance->type != VLM_JSON_OBJECT ||
      !vlm_json_get_double(vlm_json_object_get(tolerance, "max_abs"), &out->max_abs) ||
      !vlm_json_get_double(vlm_json_object_get(tolerance, "max_rel"), &out->max_rel) ||
      out->max_abs < 0 || out->max_rel < 0)
    return VLM_ERROR(DATA_LOSS,
                     "stage '%s': tolerance must be {\"max_abs\": >= 0, \"max_rel\": >= 0}",
                     stage_name);
  return VLM_OK;
}

static vlm_status read_stage(const vlm_json_value *value, size_t index,
                             const char *default_dtype, vlm_golden_stage *out) {
  if (!value || value->type != VLM_JSON_OBJECT)
    return VLM_ERROR(DATA_LOSS, "stages[%zu] is not an object", index);
  out->spec = value;
  out->name = vlm_json_get_string(vlm_json_object_get(value, "name"));
  if (!out->name || !*out->name)
    return VLM_ERROR(DATA_LOSS, "stages[%zu] has no \"name\"", index);
  out->dtype = vlm_json_get_string(vlm_json_object_get(value, "dtype"));
  if (!out->dtype) out->dtype = default_dtype;
  const vlm_json_value *tensor = vlm_json_object_get(value, "tensor");
  out->tensor = vlm_json_get_string(tensor);
  if (tensor && !out->tensor)
    return VLM_ERROR(DATA_LOSS, "stage '%s': \"tensor\" must be a string", out->name);
  return read_tolerance(value, out->name, &out->tolerance);
}

static vlm_status read_manifest(vlm_golden_case *golden) {
  const vlm_json_value *root = golden->manifest.root;
  if (!root || root->type != VLM_JSON_OBJECT)
    return VLM_ERROR(DATA_LOSS, "the manifest is not a JSON object");
  if (!vlm_json_string_equals(vlm_json_object_get(root, "format"), VLM_GOLDEN_FORMAT))
    return VLM_ERROR(DATA_LOSS, "\"format\" is not \"%s\"", VLM_GOLDEN_FORMAT);
  golden->case_name = vlm_json_get_string(vlm_json_object_get(root, "case"));
  if (!golden->case_name) golden->case_name = golden->directory;
  golden->dtype = vlm_json_get_string(vlm_json_object_get(root, "dtype"));
  if (!golden->dtype) golden->dtype = "float32";
  const char *model = vlm_json_get_string(vlm_json_object_get(root, "model"));
  if (model) {
    golden->model_directory = model[0] == '/' ? strdup(model) : join_path(golden->directory, model);
    if (!golden->model_directory) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  const vlm_json_value *stages = vlm_json_object_get(root, "stages");
  if (!stages || stages->type != VLM_JSON_ARRAY || stages->as.array.count == 0)
    return VLM_ERROR(DATA_LOSS, "\"stages\" must be a non-empty array");
  golden->stage_count = stages->as.array.count;
  golden->stages = calloc(golden->stage_count, sizeof(golden->stages[0]));
  if (!golden->stages) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; i < golden->stage_count; i++)
    VLM_RETURN_IF_ERROR(read_stage(&stages->as.array.items[i], i, golden->dtype,
                                   &golden->stages[i]));
  return VLM_OK;
}

static vlm_status open_tensors(vlm_golden_case *golden) {
  const vlm_json_value *root = golden->manifest.root;
  const char *file = vlm_json_get_string(vlm_json_object_get(root, "tensors"));
  if (!file) return VLM_OK;
  if (strchr(file, '/')) return VLM_ERROR(DATA_LOSS, "\"tensors\" must name a file in the case directory");
  char *path = join_path(golden->directory, file);
  if (!path) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_status status = vlm_safetensors_open(path, golden->allocator, &golden->tensors);
  free(path);
  if (!status) golden->has_tensors = true;
  return status;
}

vlm_status vlm_golden_case_open(const char *case_dir, const vlm_allocator *allocator,
                                vlm_golden_case *out_case) {
  memset(out_case, 0, sizeof(*out_case));
  out_case->allocator = allocator;
  out_case->directory = strdup(case_dir);
  char *manifest_path = join_path(case_dir, "manifest.json");
  if (!out_case->directory || !manifest_path) {
    free(manifest_path);
    vlm_golden_case_close(out_case);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  vlm_status status = vlm_json_parse_file(manifest_path, VLM_GOLDEN_MAX_MANIFEST_BYTES,
                                          allocator, &out_case->manifest);
  if (!status) status = vlm_status_annotate(read_manifest(out_case), "%s: ", manifest_path);
  if (!status) status = open_tensors(out_case);
  free(manifest_path);
  if (status) {
    vlm_golden_case_close(out_case);
    return vlm_status_annotate(status, "golden case %s: ", case_dir);
  }
  return VLM_OK;
}

void vlm_golden_case_close(vlm_golden_case *golden) {
  if (golden->has_tensors) vlm_safetensors_close(&golden->tensors);
  vlm_json_document_release(&golden->manifest);
  free(golden->stages);
  free(golden->model_directory);
  free(golden->directory);
  memset(golden, 0, sizeof(*golden));
}

vlm_status vlm_golden_case_tensor(const vlm_golden_case *golden, const char *name,
                                  vlm_tensor *out_view) {
  if (golden->has_tensors)
    for (size_t i = 0; i < golden->tensors.entry_count; i++) {
      const vlm_safetensors_entry *entry = &golden->tensors.entries[i];
      if (strcmp(entry->name, name) != 0) continue;
      return vlm_tensor_borrow(entry->dtype, entry->rank, entry->shape, (void *)entry->data,
                               out_view);
    }
  return VLM_ERROR(NOT_FOUND, "golden case %s has no tensor '%s'", golden->directory, name);
}
