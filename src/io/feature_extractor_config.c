/* See feature_extractor_config.h. */
#include "io/feature_extractor_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/config_reader.h"
#include "io/config_record.h"

const char *vlm_feature_extractor_defaults_json(const char *class_name) {
  return vlm_class_defaults_find(VLM_CLASS_FEATURE_EXTRACTOR, class_name);
}

/* "CLIPFeatureExtractor" and its kind are legacy names of image
 * processors (processor_config.c maps them to XImageProcessor). */
static bool is_legacy_image_name(const char *name) {
  static const char suffix[] = "FeatureExtractor";
  size_t length = strlen(name), suffix_length = sizeof(suffix) - 1;
  if (length <= suffix_length || length - suffix_length > 200) return false;
  char image_name[256];
  snprintf(image_name, sizeof(image_name), "%.*sImageProcessor", (int)(length - suffix_length), name);
  return vlm_image_processor_defaults_json(image_name) != NULL;
}

/* Phi4MultimodalFeatureExtractor's values; every one must be given (the
 * class passes a null straight on, which Transformers cannot compute
 * with). */
static vlm_status read_values(const vlm_config_section *section, vlm_feature_extractor_config *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "feature_size", 1, 1024, &out->feature_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "sampling_rate", 1000, 192000, &out->sampling_rate));
  VLM_RETURN_IF_ERROR(vlm_config_read_double(section, "padding_value", -1e30, 1e30, &out->padding_value));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "hop_length", 1, 1 << 16, &out->hop_length));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "n_fft", 2, 1 << 16, &out->n_fft));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "win_length", 2, 1 << 16, &out->win_length));
  /* torch.fft.rfft(n=n_fft) would cut a longer window off unnoticed. */
  if (out->win_length > out->n_fft)
    return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, "win_length",
                            "(%lld) must not exceed n_fft (%lld)", (long long)out->win_length, (long long)out->n_fft);
  VLM_RETURN_IF_ERROR(vlm_config_read_double(section, "preemphasis", -10, 10, &out->preemphasis));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "audio_compression_rate", 1, 1 << 16, &out->audio_compression_rate));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "audio_downsample_rate", 1, 1 << 16, &out->audio_downsample_rate));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "audio_feat_stride", 1, 1 << 16, &out->audio_feat_stride));
  VLM_RETURN_IF_ERROR(vlm_config_read_double(section, "mel_min_frequency", 0, 1e6, &out->mel_min_frequency));
  VLM_RETURN_IF_ERROR(vlm_config_read_double(section, "mel_max_frequency", 0, 1e6, &out->mel_max_frequency));
  if (out->mel_min_frequency > out->mel_max_frequency)
    return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, "mel_min_frequency",
                            "(%g) must not exceed mel_max_frequency (%g)", out->mel_min_frequency,
                            out->mel_max_frequency);
  return VLM_OK;
}

static vlm_status read_class(vlm_config_storage *storage, const vlm_config_section *file,
                             vlm_feature_extractor_config *out) {
  const char *defaults = vlm_feature_extractor_defaults_json(out->feature_extractor_type);
  if (!defaults) return VLM_OK; /* unsupported: refused when audio arrives */
  vlm_config_class config_class;
  VLM_RETURN_IF_ERROR(vlm_config_class_parse(storage, defaults, &config_class));
  vlm_config_section section;
  VLM_RETURN_IF_ERROR(vlm_config_section_merge(storage, &config_class, NULL, file->object, file->source_name,
                                               file->key_prefix, &section));
  out->section = section.object;
  out->supported = true;
  return read_values(&section, out);
}

static vlm_status parse_object(vlm_config_storage *storage, const char *text, size_t length, const char *source_name,
                               const vlm_json_value **out) {
  *out = NULL;
  if (!text) return VLM_OK;
  VLM_RETURN_IF_ERROR(vlm_config_storage_parse(storage, text, length, source_name, out));
  if ((*out)->type != VLM_JSON_OBJECT)
    return VLM_ERROR(INVALID_ARGUMENT, "%s: the top level must be a JSON object", source_name);
  return VLM_OK;
}

static vlm_status read_config(vlm_config_storage *storage, const char *preprocessor_text, size_t preprocessor_length,
                              const char *processor_text, size_t processor_length,
                              vlm_feature_extractor_config *out) {
  const vlm_json_value *processor_root = NULL, *preprocessor_root = NULL;
  VLM_RETURN_IF_ERROR(parse_object(storage, processor_text, processor_length, "processor_config.json", &processor_root));
  vlm_config_section processor_file = {processor_root, "processor_config.json", "", storage};
  vlm_config_section file = {0};
  bool nested = false;
  static const char *const nested_keys[] = {"feature_extractor", "audio_processor"};
  for (size_t i = 0; i < 2 && processor_root && !nested; i++) {
    const vlm_json_value *value = vlm_json_object_get(processor_root, nested_keys[i]);
    if (!value) continue;
    if (value->type != VLM_JSON_OBJECT) return vlm_config_type_error(&processor_file, nested_keys[i], "an object", value);
    file = (vlm_config_section){value, "processor_config.json", i ? "audio_processor." : "feature_extractor.", storage};
    out->source = i ? "processor_config.json (audio_processor)" : "processor_config.json (feature_extractor)";
    nested = true;
  }
  if (!nested) {
    VLM_RETURN_IF_ERROR(
        parse_object(storage, preprocessor_text, preprocessor_length, "preprocessor_config.json", &preprocessor_root));
    file = (vlm_config_section){preprocessor_root, "preprocessor_config.json", "", storage};
    out->source = "preprocessor_config.json";
  }
  const char *type = NULL;
  if (file.object) VLM_RETURN_IF_ERROR(vlm_config_read_string_or(&file, "feature_extractor_type", NULL, &type));
  /* A class that is a feature extractor is one, even where the image
   * processor of its name exists too (Phi4MultimodalFeatureExtractor and
   * Phi4MultimodalImageProcessor). */
  if (!type || (!nested && !vlm_feature_extractor_defaults_json(type) && is_legacy_image_name(type)))
    return VLM_ERROR(NOT_FOUND, "no feature extractor: neither processor_config.json's \"feature_extractor\" or "
                                "\"audio_processor\" nor a feature_extractor_type in preprocessor_config.json");
  out->feature_extractor_type = vlm_config_storage_copy_string(storage, type);
  if (!out->feature_extractor_type) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory reading a config");
  return read_class(storage, &file, out);
}

vlm_status vlm_feature_extractor_config_parse(const char *preprocessor_text, size_t preprocessor_length,
                                              const char *processor_text, size_t processor_length,
                                              const vlm_allocator *allocator, vlm_feature_extractor_config *out) {
  memset(out, 0, sizeof(*out));
  VLM_RETURN_IF_ERROR(vlm_config_storage_create(allocator, &out->storage));
  vlm_status status =
      read_config(out->storage, preprocessor_text, preprocessor_length, processor_text, processor_length, out);
  if (status) vlm_feature_extractor_config_release(out);
  return status;
}

vlm_status vlm_feature_extractor_config_load(const char *model_dir, const vlm_allocator *allocator,
                                             vlm_feature_extractor_config *out) {
  memset(out, 0, sizeof(*out));
  char *preprocessor = NULL, *processor = NULL, *path = NULL;
  size_t preprocessor_length = 0, processor_length = 0;
  vlm_status status =
      vlm_config_read_file(model_dir, "preprocessor_config.json", true, &preprocessor, &preprocessor_length, &path);
  free(path);
  path = NULL;
  if (!status) status = vlm_config_read_file(model_dir, "processor_config.json", true, &processor, &processor_length, &path);
  if (!status)
    status = vlm_feature_extractor_config_parse(preprocessor, preprocessor_length, processor, processor_length,
                                                allocator, out);
  free(preprocessor);
  free(processor);
  free(path);
  return status;
}

void vlm_feature_extractor_config_release(vlm_feature_extractor_config *config) {
  if (!config) return;
  vlm_config_storage_release(config->storage);
  memset(config, 0, sizeof(*config));
}
