/* generation_config.json. Transformers 5's GenerationConfig leaves unset
 * values None and generate() fills them from
 * _get_default_generation_params; we resolve them the same way up front. */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/config.h"
#include "io/config_reader.h"

/* transformers 5.23.0 GenerationConfig._get_default_generation_params(): what
 * generate() uses for a value neither generation_config.json nor the caller
 * sets (GenerationConfig() itself leaves them all None). */
static const char generation_defaults[] =
    "{\"class\": \"GenerationConfig\","
    "\"fields\": {\"max_length\": 20,\"max_new_tokens\": null,\"do_sample\": false,"
    "\"temperature\": 1.0,\"top_k\": 50,\"top_p\": 1.0,\"min_p\": null,"
    "\"repetition_penalty\": 1.0,\"bos_token_id\": null,\"eos_token_id\": null,"
    "\"pad_token_id\": null}}";

const char *vlm_generation_defaults_json(void) { return generation_defaults; }

static vlm_status read_sampling(const vlm_config_section *section, vlm_generation_config *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_bool_or(section, "do_sample", false, &out->do_sample));
  VLM_RETURN_IF_ERROR(
      vlm_config_read_double(section, "temperature", 0.0, 1e6, &out->temperature));
  VLM_RETURN_IF_ERROR(vlm_config_read_int_or(section, "top_k", 0, INT64_C(1) << 31, 0, &out->top_k));
  VLM_RETURN_IF_ERROR(vlm_config_read_double(section, "top_p", 0.0, 1.0, &out->top_p));
  VLM_RETURN_IF_ERROR(vlm_config_read_double_or(section, "min_p", 0.0, 1.0, 0.0, &out->min_p));
  /* Transformers' RepetitionPenaltyLogitsProcessor refuses a non-positive
   * penalty. */
  VLM_RETURN_IF_ERROR(vlm_config_read_double(section, "repetition_penalty", 1e-6, 1e6,
                                             &out->repetition_penalty));
  /* GenerationConfig.validate: max_new_tokens must be greater than 0. */
  VLM_RETURN_IF_ERROR(vlm_config_read_int_or(section, "max_new_tokens", 1,
                                             VLM_CONFIG_MAX_POSITIONS, 0, &out->max_new_tokens));
  return vlm_config_read_int(section, "max_length", 0, VLM_CONFIG_MAX_POSITIONS, &out->max_length);
}

static vlm_status non_null_members(vlm_config_storage *storage, const vlm_json_value *object,
                                   const vlm_json_value **out) {
  *out = NULL;
  if (!object) return VLM_OK;
  size_t count = object->as.object.count;
  vlm_json_member *members = malloc((count ? count : 1) * sizeof(*members));
  if (!members) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory reading a config");
  size_t kept = 0;
  for (size_t i = 0; i < count; i++)
    if (object->as.object.members[i].value.type != VLM_JSON_NULL)
      members[kept++] = object->as.object.members[i];
  vlm_status status = vlm_config_object_create(storage, members, kept, out);
  free(members);
  return status;
}

static vlm_status read_generation(vlm_config_storage *storage, const char *text, size_t length,
                                  const char *source_name, vlm_generation_config *out) {
  vlm_config_class defaults;
  VLM_RETURN_IF_ERROR(vlm_config_class_parse(storage, vlm_generation_defaults_json(), &defaults));
  const vlm_json_value *file_root = NULL;
  if (text) {
    VLM_RETURN_IF_ERROR(vlm_config_storage_parse(storage, text, length, source_name, &file_root));
    if (file_root->type != VLM_JSON_OBJECT)
      return VLM_ERROR(INVALID_ARGUMENT, "%s: the top level must be a JSON object", source_name);
  }
  /* A None in the file leaves the generate() default in place, as Python's
   * "is None" checks do: drop nulls before the overlay. */
  const vlm_json_value *file_values = NULL;
  VLM_RETURN_IF_ERROR(non_null_members(storage, file_root, &file_values));
  vlm_config_section section;
  VLM_RETURN_IF_ERROR(vlm_config_section_merge(storage, &defaults, NULL, file_values,
                                               source_name, "", &section));
  out->file_present = text != NULL;
  out->section = section.object;
  VLM_RETURN_IF_ERROR(vlm_config_read_token_id(&section, "bos_token_id", &out->bos_token_id));
  VLM_RETURN_IF_ERROR(vlm_config_read_token_id(&section, "pad_token_id", &out->pad_token_id));
  VLM_RETURN_IF_ERROR(vlm_config_read_token_ids(&section, "eos_token_id", &out->eos_token_ids));
  return read_sampling(&section, out);
}

vlm_status vlm_generation_config_parse(const char *text, size_t length, const char *source_name,
                                       const vlm_allocator *allocator,
                                       vlm_generation_config *out) {
  memset(out, 0, sizeof(*out));
  VLM_RETURN_IF_ERROR(vlm_config_storage_create(allocator, &out->storage));
  const char *name = vlm_config_storage_copy_string(
      out->storage, source_name ? source_name : "generation_config.json");
  vlm_status status = name ? read_generation(out->storage, text, length, name, out)
                           : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory reading a config");
  if (status) vlm_generation_config_release(out);
  return status;
}

vlm_status vlm_generation_config_load(const char *model_dir, const vlm_allocator *allocator,
                                      vlm_generation_config *out) {
  memset(out, 0, sizeof(*out));
  char *text = NULL, *path = NULL;
  size_t length = 0;
  vlm_status status =
      vlm_config_read_file(model_dir, "generation_config.json", true, &text, &length, &path);
  if (!status) status = vlm_generation_config_parse(text, length, path, allocator, out);
  free(text);
  free(path);
  return status;
}

void vlm_generation_config_release(vlm_generation_config *config) {
  if (!config) return;
  vlm_config_storage_release(config->storage);
  memset(config, 0, sizeof(*config));
}
