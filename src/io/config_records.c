/* The registry of config records (io/config_record.h): every family file
 * of src/io/configs, one line each. Lookups walk it; it is small. */
#include <stdio.h>
#include <string.h>

#include "io/config_record.h"
#include "io/configs/configs.h"

static const vlm_config_family *const families[] = {
    &vlm_config_family_llama,
    &vlm_config_family_mistral,
    &vlm_config_family_qwen2,
    &vlm_config_family_qwen3,
    &vlm_config_family_clip,
    &vlm_config_family_siglip,
    &vlm_config_family_llava,
    &vlm_config_family_qwen2_vl,
    &vlm_config_family_qwen2_5_vl,
    &vlm_config_family_qwen3_vl,
    &vlm_config_family_qwen3_vl_moe,
    &vlm_config_family_gemma3,
    &vlm_config_family_gemma3n,
    &vlm_config_family_phi4_multimodal,
    &vlm_config_family_molmo2,
    &vlm_config_family_youtu,
};

size_t vlm_config_record_count(void) {
  size_t count = 0;
  for (size_t f = 0; f < VLM_COUNT_OF(families); f++) count += families[f]->config_count;
  return count;
}

const vlm_config_record *vlm_config_record_at(size_t index) {
  for (size_t f = 0; f < VLM_COUNT_OF(families); f++) {
    if (index < families[f]->config_count) return &families[f]->configs[index];
    index -= families[f]->config_count;
  }
  return NULL;
}

const vlm_config_record *vlm_config_record_find(const char *model_type) {
  for (size_t f = 0; model_type && f < VLM_COUNT_OF(families); f++)
    for (size_t i = 0; i < families[f]->config_count; i++)
      if (strcmp(families[f]->configs[i].model_type, model_type) == 0) return &families[f]->configs[i];
  return NULL;
}

static const vlm_class_defaults *family_classes(const vlm_config_family *family, vlm_class_kind kind,
                                                size_t *out_count) {
  switch (kind) {
    case VLM_CLASS_IMAGE_PROCESSOR: *out_count = family->image_processor_count; return family->image_processors;
    case VLM_CLASS_PROCESSOR: *out_count = family->processor_count; return family->processors;
    case VLM_CLASS_FEATURE_EXTRACTOR: *out_count = family->feature_extractor_count; return family->feature_extractors;
  }
  *out_count = 0;
  return NULL;
}

size_t vlm_class_defaults_count(vlm_class_kind kind) {
  size_t count = 0, each = 0;
  for (size_t f = 0; f < VLM_COUNT_OF(families); f++) {
    family_classes(families[f], kind, &each);
    count += each;
  }
  return count;
}

const vlm_class_defaults *vlm_class_defaults_at(vlm_class_kind kind, size_t index) {
  size_t each = 0;
  for (size_t f = 0; f < VLM_COUNT_OF(families); f++) {
    const vlm_class_defaults *classes = family_classes(families[f], kind, &each);
    if (index < each) return &classes[index];
    index -= each;
  }
  return NULL;
}

const char *vlm_class_defaults_find(vlm_class_kind kind, const char *class_name) {
  size_t each = 0;
  for (size_t f = 0; class_name && f < VLM_COUNT_OF(families); f++) {
    const vlm_class_defaults *classes = family_classes(families[f], kind, &each);
    for (size_t i = 0; i < each; i++)
      if (strcmp(classes[i].class_name, class_name) == 0) return classes[i].defaults;
  }
  return NULL;
}

bool vlm_config_record_is_text(const vlm_config_record *record) { return record->text != NULL; }
bool vlm_config_record_is_vision(const vlm_config_record *record) { return record->read_vision != NULL; }
bool vlm_config_record_is_audio(const vlm_config_record *record) { return record->read_audio != NULL; }
bool vlm_config_record_is_model(const vlm_config_record *record) {
  return record->composite || record->text != NULL;
}

/* Appends ", name" (or "name" first) to buffer, truncating to fit. */
static void append_name(char *buffer, size_t size, size_t *used, const char *name) {
  if (*used >= size) return;
  int written = snprintf(buffer + *used, size - *used, "%s%s", *used ? ", " : "", name);
  if (written > 0) *used += (size_t)written;
  if (*used >= size) *used = size - 1;
}

const char *vlm_config_record_names(vlm_config_record_filter filter, char *buffer, size_t size) {
  size_t used = 0;
  if (size) buffer[0] = '\0';
  for (size_t i = 0; i < vlm_config_record_count(); i++) {
    const vlm_config_record *record = vlm_config_record_at(i);
    if (!filter || filter(record)) append_name(buffer, size, &used, record->model_type);
  }
  if (!used) snprintf(buffer, size, "none");
  return buffer;
}

const char *vlm_class_defaults_names(vlm_class_kind kind, char *buffer, size_t size) {
  size_t used = 0;
  if (size) buffer[0] = '\0';
  for (size_t i = 0; i < vlm_class_defaults_count(kind); i++)
    append_name(buffer, size, &used, vlm_class_defaults_at(kind, i)->class_name);
  if (!used) snprintf(buffer, size, "none");
  return buffer;
}

/* The lookups config.h and feature_extractor_config.h declare. */
const char *vlm_config_defaults_json(const char *model_type) {
  const vlm_config_record *record = vlm_config_record_find(model_type);
  return record ? record->defaults : NULL;
}

const char *vlm_image_processor_defaults_json(const char *class_name) {
  return vlm_class_defaults_find(VLM_CLASS_IMAGE_PROCESSOR, class_name);
}

const char *vlm_processor_defaults_json(const char *class_name) {
  return vlm_class_defaults_find(VLM_CLASS_PROCESSOR, class_name);
}
