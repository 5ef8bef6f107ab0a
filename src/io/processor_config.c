/* preprocessor_config.json and processor_config.json.
 *
 * Transformers 5 loads the image processor from processor_config.json's
 * nested "image_processor" when there is one and from
 * preprocessor_config.json otherwise (never a mix), with the class's
 * attributes as defaults; a null in the file means "the class default"
 * (_set_attributes skips None). Processor-level values (image_seq_length,
 * num_additional_image_tokens, ...) come from processor_config.json's top
 * level, with the processor class's __init__ defaults.
 *
 * What the image processor then runs with is what the processor's
 * _merge_kwargs hands it: the processor class's `images_kwargs` attribute
 * (Gemma3Processor: do_pan_and_scan False, ...) over the image processor's
 * own settings, and the caller's keyword arguments (processor(images,
 * text, do_pan_and_scan=True)) over both. So a do_pan_and_scan saved in the
 * image processor's config is overridden by the processor's default, as in
 * Transformers; only call kwargs turn it on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/config.h"
#include "io/config_reader.h"
#include "io/config_record.h"
#include "io/feature_extractor_config.h"

static vlm_status out_of_memory(void) {
  return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory reading a config");
}

/* ---------------------------------------------------------------------- */
/* Size dicts (image_processing_utils.get_size_dict)                       */
/* ---------------------------------------------------------------------- */

typedef struct size_keys {
  int64_t values[8];
  unsigned present; /* bit i set when values[i] was given */
} size_keys;

static const char *const size_key_names[8] = {"height",        "width",        "shortest_edge",
                                              "longest_edge",  "max_height",   "max_width",
                                              "min_pixels",    "max_pixels"};
enum { HEIGHT = 1, WIDTH = 2, SHORTEST = 4, LONGEST = 8, MAX_HEIGHT = 16, MAX_WIDTH = 32,
       MIN_PIXELS = 64, MAX_PIXELS = 128 };

/* VALID_SIZE_DICT_KEYS: the key sets a size dict may have, exactly. */
static const struct {
  unsigned keys;
  vlm_image_size_kind kind;
} valid_size_sets[] = {
    {HEIGHT | WIDTH, VLM_IMAGE_SIZE_HEIGHT_WIDTH},
    {SHORTEST, VLM_IMAGE_SIZE_SHORTEST_EDGE},
    {SHORTEST | LONGEST, VLM_IMAGE_SIZE_SHORTEST_LONGEST_EDGE},
    {LONGEST, VLM_IMAGE_SIZE_LONGEST_EDGE},
    {MAX_HEIGHT | MAX_WIDTH, VLM_IMAGE_SIZE_MAX_HEIGHT_WIDTH},
    {MIN_PIXELS | MAX_PIXELS, VLM_IMAGE_SIZE_MIN_MAX_PIXELS},
};

static const int64_t max_size_value = INT64_C(1) << 40; /* pixel counts can be large */

static vlm_status read_size_keys(const vlm_config_section *section, const char *key,
                                 bool default_to_square, size_keys *out) {
  memset(out, 0, sizeof(*out));
  const vlm_json_value *value = vlm_config_get(section, key);
  int64_t integer = 0;
  if (vlm_json_get_int(value, &integer) && integer > 0 && integer <= max_size_value) {
    /* convert_to_size_dict: an int is a square, or the shortest edge. */
    unsigned keys = default_to_square ? HEIGHT | WIDTH : SHORTEST;
    for (int i = 0; i < 8; i++)
      if (keys & (1u << i)) out->values[i] = integer;
    out->present = keys;
    return VLM_OK;
  }
  if (value && value->type == VLM_JSON_ARRAY && value->as.array.count == 2 &&
      vlm_json_get_int(&value->as.array.items[0], &out->values[0]) &&
      vlm_json_get_int(&value->as.array.items[1], &out->values[1]) && out->values[0] > 0 &&
      out->values[1] > 0 && out->values[0] <= max_size_value && out->values[1] <= max_size_value) {
    out->present = HEIGHT | WIDTH; /* (height, width) order */
    return VLM_OK;
  }
  if (!value || value->type != VLM_JSON_OBJECT)
    return vlm_config_type_error(section, key, "a size dict, an integer or [height, width]", value);
  for (size_t m = 0; m < value->as.object.count; m++) {
    const vlm_json_member *member = &value->as.object.members[m];
    int index = -1;
    for (int i = 0; i < 8; i++)
      if (strcmp(member->key, size_key_names[i]) == 0) index = i;
    if (index < 0 || !vlm_json_get_int(&member->value, &out->values[index]) ||
        out->values[index] <= 0 || out->values[index] > max_size_value)
      return vlm_config_type_error(section, key,
                                   "a size dict of positive integers (height/width, "
                                   "shortest_edge/longest_edge, max_height/max_width or "
                                   "min_pixels/max_pixels)",
                                   value);
    out->present |= 1u << index;
  }
  return VLM_OK;
}

static vlm_status classify_size(const vlm_config_section *section, const char *key,
                                const size_keys *keys, vlm_image_size *out) {
  memset(out, 0, sizeof(*out));
  for (size_t i = 0; i < sizeof(valid_size_sets) / sizeof(valid_size_sets[0]); i++)
    if (valid_size_sets[i].keys == keys->present) out->kind = valid_size_sets[i].kind;
  if (out->kind == VLM_IMAGE_SIZE_NONE)
    return vlm_config_type_error(section, key, "one of the size key sets Transformers accepts",
                                 vlm_config_get(section, key));
  out->height = keys->values[0];
  out->width = keys->values[1];
  out->shortest_edge = keys->values[2];
  out->longest_edge = keys->values[3];
  out->max_height = keys->values[4];
  out->max_width = keys->values[5];
  out->min_pixels = keys->values[6];
  out->max_pixels = keys->values[7];
  return VLM_OK;
}

static vlm_status read_size(const vlm_config_section *section, const char *key,
                            bool default_to_square, vlm_image_size *out) {
  memset(out, 0, sizeof(*out));
  if (!vlm_config_get(section, key)) return VLM_OK;
  size_keys keys;
  VLM_RETURN_IF_ERROR(read_size_keys(section, key, default_to_square, &keys));
  return classify_size(section, key, &keys, out);
}

/* A class with min_pixels / max_pixels fields (Qwen2VLImageProcessor's
 * __init__): the file's `size` (or the class's), whose shortest_edge /
 * longest_edge a top-level min_pixels / max_pixels replace (dropping a
 * legacy size.min_pixels / max_pixels), must be a valid size dict. As in
 * Transformers, a size without shortest_edge and longest_edge still loads
 * (min_pixels / max_pixels stay 0) and the processor refuses the first
 * image, and min_pixels above max_pixels is accepted (smart_resize then
 * honours max_pixels when the rounded size exceeds it, min_pixels
 * otherwise). */
static vlm_status read_pixel_bounded_size(const vlm_config_section *section, vlm_processor_config *out) {
  size_keys keys;
  VLM_RETURN_IF_ERROR(read_size_keys(section, "size", false, &keys));
  int64_t min_pixels = 0, max_pixels = 0;
  VLM_RETURN_IF_ERROR(vlm_config_read_int_or(section, "min_pixels", 1, max_size_value, 0, &min_pixels));
  VLM_RETURN_IF_ERROR(vlm_config_read_int_or(section, "max_pixels", 1, max_size_value, 0, &max_pixels));
  const vlm_json_value *size = vlm_config_get(section, "size");
  if ((min_pixels || max_pixels) && size && size->type != VLM_JSON_OBJECT)
    /* size["shortest_edge"] = min_pixels on an int or a list: a TypeError. */
    return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, "size",
                            "must be a dict when min_pixels or max_pixels is given "
                            "(Qwen2VLImageProcessor sets its keys)");
  if (min_pixels) {
    keys.values[2] = min_pixels;
    keys.present = (keys.present | SHORTEST) & ~(unsigned)MIN_PIXELS;
  }
  if (max_pixels) {
    keys.values[3] = max_pixels;
    keys.present = (keys.present | LONGEST) & ~(unsigned)MAX_PIXELS;
  }
  VLM_RETURN_IF_ERROR(classify_size(section, "size", &keys, &out->size));
  if (out->size.kind == VLM_IMAGE_SIZE_SHORTEST_LONGEST_EDGE) {
    out->min_pixels = out->size.shortest_edge;
    out->max_pixels = out->size.longest_edge;
  }
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Image processor                                                         */
/* ---------------------------------------------------------------------- */

static vlm_status read_channel_triple(const vlm_config_section *section, const char *key,
                                      double *out) {
  const vlm_json_value *value = vlm_config_get(section, key);
  double number = 0;
  if (vlm_json_get_double(value, &number)) {
    /* A single float applies to every channel. */
    out[0] = out[1] = out[2] = number;
    return VLM_OK;
  }
  if (!value || value->type != VLM_JSON_ARRAY || value->as.array.count != 3)
    return vlm_config_type_error(section, key, "a number or a list of 3 numbers", value);
  for (size_t i = 0; i < 3; i++)
    if (!vlm_json_get_double(&value->as.array.items[i], &out[i]))
      return vlm_config_type_error(section, key, "a number or a list of 3 numbers", value);
  return VLM_OK;
}

static vlm_status read_normalization(const vlm_config_section *section, vlm_processor_config *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_bool_or(section, "do_rescale", false, &out->do_rescale));
  VLM_RETURN_IF_ERROR(
      vlm_config_read_double(section, "rescale_factor", 1e-12, 1e6, &out->rescale_factor));
  VLM_RETURN_IF_ERROR(vlm_config_read_bool_or(section, "do_normalize", false, &out->do_normalize));
  VLM_RETURN_IF_ERROR(read_channel_triple(section, "image_mean", out->image_mean));
  VLM_RETURN_IF_ERROR(read_channel_triple(section, "image_std", out->image_std));
  for (int i = 0; i < 3; i++)
    if (!(out->image_std[i] > 0))
      return vlm_config_type_error(section, "image_std", "positive numbers",
                                   vlm_config_get(section, "image_std"));
  return vlm_config_read_bool_or(section, "do_convert_rgb", false, &out->do_convert_rgb);
}

static vlm_status read_geometry(const vlm_config_section *section, const vlm_config_class *defaults,
                                vlm_processor_config *out) {
  bool default_to_square = true;
  VLM_RETURN_IF_ERROR(vlm_config_read_bool_or(section, "do_resize", false, &out->do_resize));
  VLM_RETURN_IF_ERROR(
      vlm_config_read_bool_or(section, "default_to_square", true, &default_to_square));
  if (vlm_config_class_has_field(defaults, "min_pixels") && vlm_config_class_has_field(defaults, "max_pixels"))
    VLM_RETURN_IF_ERROR(read_pixel_bounded_size(section, out));
  else
    VLM_RETURN_IF_ERROR(read_size(section, "size", default_to_square, &out->size));
  /* PIL's resampling enum: NEAREST 0 ... HAMMING 5. */
  VLM_RETURN_IF_ERROR(vlm_config_read_int_or(section, "resample", 0, 5, 3, &out->resample));
  VLM_RETURN_IF_ERROR(
      vlm_config_read_bool_or(section, "do_center_crop", false, &out->do_center_crop));
  /* _standardize_kwargs: crop_size always defaults to square. */
  VLM_RETURN_IF_ERROR(read_size(section, "crop_size", true, &out->crop_size));
  if (out->do_center_crop && out->crop_size.kind != VLM_IMAGE_SIZE_HEIGHT_WIDTH)
    return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, "crop_size",
                            "must give height and width when do_center_crop is set");
  VLM_RETURN_IF_ERROR(vlm_config_read_int_or(section, "patch_size", 1, 1024, 0, &out->patch_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_int_or(section, "merge_size", 1, 64, 0, &out->merge_size));
  return vlm_config_read_int_or(section, "temporal_patch_size", 1, 64, 0,
                                &out->temporal_patch_size);
}

/* The class name without the backend suffix: Transformers 5 resolves
 * "CLIPImageProcessorFast" and "CLIPImageProcessorPil" to the same class
 * (the defaults are shared), and maps a legacy XFeatureExtractor to
 * XImageProcessor. */
static vlm_status normalize_class_name(vlm_config_storage *storage, const char *name,
                                       const char **out) {
  char buffer[VLM_CONFIG_MAX_STRING_LENGTH + 32];
  snprintf(buffer, sizeof(buffer), "%s", name);
  size_t length = strlen(buffer);
  static const char *const suffixes[] = {"Fast", "Pil"};
  for (size_t i = 0; i < 2; i++) {
    size_t suffix = strlen(suffixes[i]);
    if (length > suffix && strcmp(buffer + length - suffix, suffixes[i]) == 0)
      buffer[length -= suffix] = '\0';
  }
  const char legacy[] = "FeatureExtractor";
  size_t legacy_length = sizeof(legacy) - 1;
  if (length > legacy_length && strcmp(buffer + length - legacy_length, legacy) == 0)
    snprintf(buffer + length - legacy_length, sizeof(buffer) - (length - legacy_length),
             "ImageProcessor");
  *out = vlm_config_storage_copy_string(storage, buffer);
  return *out ? VLM_OK : out_of_memory();
}

static vlm_status image_processor_class(vlm_config_storage *storage, const vlm_config_section *file,
                                        const char **out_name) {
  const char *key = vlm_config_get(file, "image_processor_type") ? "image_processor_type"
                                                                  : "feature_extractor_type";
  const char *name = NULL;
  VLM_RETURN_IF_ERROR(vlm_config_read_string_or(file, key, NULL, &name));
  if (!name)
    return vlm_config_error(file, VLM_STATUS_INVALID_ARGUMENT, "image_processor_type",
                            "is missing");
  /* An audio model's preprocessor_config.json names its feature extractor
   * (feature_extractor_config.c): that is no image processor. */
  if (strcmp(key, "feature_extractor_type") == 0 && vlm_feature_extractor_defaults_json(name))
    return VLM_ERROR(NOT_FOUND, "no image processor: %s names the feature extractor %s", file->source_name, name);
  VLM_RETURN_IF_ERROR(normalize_class_name(storage, name, out_name));
  if (vlm_image_processor_defaults_json(*out_name)) return VLM_OK;
  char names[1024];
  return vlm_config_error(file, VLM_STATUS_UNIMPLEMENTED, key, "\"%s\" is not supported (supported: %s)", name,
                          vlm_class_defaults_names(VLM_CLASS_IMAGE_PROCESSOR, names, sizeof(names)));
}

/* The object without its null members (null means "class default"). */
static vlm_status without_nulls(vlm_config_storage *storage, const vlm_json_value *object,
                                const vlm_json_value **out) {
  size_t count = object->as.object.count;
  vlm_json_member *members = malloc((count ? count : 1) * sizeof(*members));
  if (!members) return out_of_memory();
  size_t kept = 0;
  for (size_t i = 0; i < count; i++)
    if (object->as.object.members[i].value.type != VLM_JSON_NULL)
      members[kept++] = object->as.object.members[i];
  vlm_status status = vlm_config_object_create(storage, members, kept, out);
  free(members);
  return status;
}

/* Pan-and-scan settings, of a class that has them (Gemma3ImageProcessor).
 * A null crop setting is what the class has; Transformers then fails comparing None once an image
 * is cropped, so with do_pan_and_scan on each must be given. */
static vlm_status read_pan_and_scan(const vlm_config_section *section, vlm_processor_config *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_bool_or(section, "do_pan_and_scan", false, &out->do_pan_and_scan));
  VLM_RETURN_IF_ERROR(vlm_config_read_int_or(section, "pan_and_scan_min_crop_size", 1, 1 << 20, 0,
                                             &out->pan_and_scan_min_crop_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_int_or(section, "pan_and_scan_max_num_crops", 1, 64, 0,
                                             &out->pan_and_scan_max_num_crops));
  VLM_RETURN_IF_ERROR(vlm_config_read_double_or(section, "pan_and_scan_min_ratio_to_activate", 0.0, 1e6, 0.0,
                                                &out->pan_and_scan_min_ratio_to_activate));
  if (out->do_pan_and_scan && (!out->pan_and_scan_min_crop_size || !out->pan_and_scan_max_num_crops ||
                               !(out->pan_and_scan_min_ratio_to_activate > 0)))
    return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, "do_pan_and_scan",
                            "needs pan_and_scan_min_crop_size, pan_and_scan_max_num_crops and "
                            "pan_and_scan_min_ratio_to_activate");
  return VLM_OK;
}

/* Sets each member of `overlay` on the image processor's section; with
 * `known` (the caller's kwargs) every key must be one the class has. */
static vlm_status overlay_image_kwargs(vlm_config_section *section, const vlm_config_class *defaults,
                                       const vlm_json_value *overlay, const char *what, bool known) {
  if (!overlay) return VLM_OK;
  if (overlay->type != VLM_JSON_OBJECT) return VLM_ERROR(INVALID_ARGUMENT, "%s must be a JSON object", what);
  for (size_t i = 0; i < overlay->as.object.count; i++) {
    const vlm_json_member *member = &overlay->as.object.members[i];
    if (known && !vlm_config_class_has_field(defaults, member->key))
      return VLM_ERROR(INVALID_ARGUMENT, "%s: '%s' is not a setting of %s", what, member->key,
                       defaults->class_name);
    if (member->value.type == VLM_JSON_NULL) continue; /* None: the level below's */
    VLM_RETURN_IF_ERROR(vlm_config_section_set(section, member->key, &member->value));
  }
  return VLM_OK;
}

static vlm_status read_image_processor(vlm_config_storage *storage, const vlm_config_section *file,
                                       const vlm_json_value *processor_images_kwargs,
                                       const vlm_json_value *call_kwargs, vlm_processor_config *out) {
  VLM_RETURN_IF_ERROR(image_processor_class(storage, file, &out->image_processor_type));
  vlm_config_class defaults;
  VLM_RETURN_IF_ERROR(vlm_config_class_parse(
      storage, vlm_image_processor_defaults_json(out->image_processor_type), &defaults));
  const vlm_json_value *values = NULL;
  VLM_RETURN_IF_ERROR(without_nulls(storage, file->object, &values));
  vlm_config_section section;
  VLM_RETURN_IF_ERROR(vlm_config_section_merge(storage, &defaults, NULL, values,
                                               file->source_name, file->key_prefix, &section));
  VLM_RETURN_IF_ERROR(overlay_image_kwargs(&section, &defaults, processor_images_kwargs,
                                           "the processor's images_kwargs", false));
  VLM_RETURN_IF_ERROR(overlay_image_kwargs(&section, &defaults, call_kwargs, "processor kwargs", true));
  out->image_processor_section = section.object;
  VLM_RETURN_IF_ERROR(read_geometry(&section, &defaults, out));
  /* Settings only some classes have are read where the class has the field
   * (its defaults table lists it): Gemma3ImageProcessor's pan-and-scan,
   * Phi4MultimodalImageProcessor's dynamic_hd. */
  if (vlm_config_class_has_field(&defaults, "do_pan_and_scan"))
    VLM_RETURN_IF_ERROR(read_pan_and_scan(&section, out));
  if (vlm_config_class_has_field(&defaults, "dynamic_hd"))
    VLM_RETURN_IF_ERROR(vlm_config_read_int_or(&section, "dynamic_hd", 1, 1024, 0, &out->dynamic_hd));
  return read_normalization(&section, out);
}

/* The processor class's images_kwargs (its defaults table), or NULL. */
static vlm_status processor_images_kwargs(vlm_config_storage *storage, const char *processor_class,
                                          const vlm_json_value **out) {
  *out = NULL;
  const char *table = processor_class ? vlm_processor_defaults_json(processor_class) : NULL;
  if (!table) return VLM_OK;
  const vlm_json_value *root = NULL;
  VLM_RETURN_IF_ERROR(vlm_config_storage_parse(storage, table, strlen(table), "processor defaults", &root));
  *out = vlm_json_object_get(root, "images_kwargs");
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Processor                                                               */
/* ---------------------------------------------------------------------- */

static vlm_status read_processor_values(vlm_config_storage *storage,
                                        const vlm_json_value *processor_root,
                                        vlm_processor_config *out) {
  const char *table = vlm_processor_defaults_json(out->processor_class);
  vlm_config_class defaults = {0};
  if (table) {
    VLM_RETURN_IF_ERROR(vlm_config_class_parse(storage, table, &defaults));
  } else {
    /* A processor without processor-level values of its own. */
    defaults.class_name = out->processor_class;
    VLM_RETURN_IF_ERROR(vlm_config_object_create(storage, NULL, 0, &defaults.fields));
  }
  vlm_config_section section;
  VLM_RETURN_IF_ERROR(vlm_config_section_merge(storage, &defaults, NULL, processor_root,
                                               "processor_config.json", "", &section));
  out->processor_section = processor_root ? section.object : NULL;
  VLM_RETURN_IF_ERROR(vlm_config_read_int_or(&section, "image_seq_length", 1, 1 << 20, 0,
                                             &out->image_seq_length));
  VLM_RETURN_IF_ERROR(vlm_config_read_int_or(&section, "num_additional_image_tokens", 0, 1024, 0,
                                             &out->num_additional_image_tokens));
  VLM_RETURN_IF_ERROR(vlm_config_read_string_or(&section, "vision_feature_select_strategy", NULL,
                                                &out->vision_feature_select_strategy));
  return vlm_config_read_int_or(&section, "patch_size", 1, 1024, 0, &out->processor_patch_size);
}

static vlm_status parse_object(vlm_config_storage *storage, const char *text, size_t length,
                               const char *source_name, const vlm_json_value **out) {
  *out = NULL;
  if (!text) return VLM_OK;
  VLM_RETURN_IF_ERROR(vlm_config_storage_parse(storage, text, length, source_name, out));
  if ((*out)->type != VLM_JSON_OBJECT)
    return VLM_ERROR(INVALID_ARGUMENT, "%s: the top level must be a JSON object", source_name);
  return VLM_OK;
}

static vlm_status read_processor(vlm_config_storage *storage, const char *preprocessor_text,
                                 size_t preprocessor_length, const char *processor_text,
                                 size_t processor_length, const char *kwargs_text, size_t kwargs_length,
                                 vlm_processor_config *out) {
  const vlm_json_value *processor_root = NULL, *preprocessor_root = NULL, *call_kwargs = NULL;
  VLM_RETURN_IF_ERROR(parse_object(storage, processor_text, processor_length,
                                   "processor_config.json", &processor_root));
  VLM_RETURN_IF_ERROR(parse_object(storage, kwargs_text, kwargs_length, "processor kwargs", &call_kwargs));
  vlm_config_section processor_file = {processor_root, "processor_config.json", "", storage};
  vlm_config_section image_file = {vlm_config_get(&processor_file, "image_processor"),
                                   "processor_config.json", "image_processor.", storage};
  if (image_file.object && image_file.object->type != VLM_JSON_OBJECT)
    return vlm_config_type_error(&processor_file, "image_processor", "an object", image_file.object);
  if (!image_file.object) {
    VLM_RETURN_IF_ERROR(parse_object(storage, preprocessor_text, preprocessor_length,
                                     "preprocessor_config.json", &preprocessor_root));
    image_file = (vlm_config_section){preprocessor_root, "preprocessor_config.json", "", storage};
  }
  if (!image_file.object)
    return VLM_ERROR(NOT_FOUND, "no image processor: neither preprocessor_config.json nor "
                                "processor_config.json's \"image_processor\" is present");
  VLM_RETURN_IF_ERROR(
      vlm_config_read_string_or(&processor_file, "processor_class", NULL, &out->processor_class));
  if (!out->processor_class)
    VLM_RETURN_IF_ERROR(
        vlm_config_read_string_or(&image_file, "processor_class", NULL, &out->processor_class));
  const vlm_json_value *images_kwargs = NULL;
  VLM_RETURN_IF_ERROR(processor_images_kwargs(storage, out->processor_class, &images_kwargs));
  VLM_RETURN_IF_ERROR(read_image_processor(storage, &image_file, images_kwargs, call_kwargs, out));
  return read_processor_values(storage, processor_root, out);
}

vlm_status vlm_processor_config_parse_with(const char *preprocessor_text, size_t preprocessor_length,
                                           const char *processor_text, size_t processor_length,
                                           const char *kwargs_text, const vlm_allocator *allocator,
                                           vlm_processor_config *out) {
  memset(out, 0, sizeof(*out));
  VLM_RETURN_IF_ERROR(vlm_config_storage_create(allocator, &out->storage));
  vlm_status status = read_processor(out->storage, preprocessor_text, preprocessor_length,
                                     processor_text, processor_length, kwargs_text,
                                     kwargs_text ? strlen(kwargs_text) : 0, out);
  if (status) vlm_processor_config_release(out);
  return status;
}

vlm_status vlm_processor_config_parse(const char *preprocessor_text, size_t preprocessor_length,
                                      const char *processor_text, size_t processor_length,
                                      const vlm_allocator *allocator, vlm_processor_config *out) {
  return vlm_processor_config_parse_with(preprocessor_text, preprocessor_length, processor_text,
                                         processor_length, NULL, allocator, out);
}

vlm_status vlm_processor_config_load(const char *model_dir, const vlm_allocator *allocator,
                                     vlm_processor_config *out) {
  return vlm_processor_config_load_with(model_dir, NULL, allocator, out);
}

vlm_status vlm_processor_config_load_with(const char *model_dir, const char *kwargs_text,
                                          const vlm_allocator *allocator, vlm_processor_config *out) {
  memset(out, 0, sizeof(*out));
  char *preprocessor = NULL, *processor = NULL, *path = NULL;
  size_t preprocessor_length = 0, processor_length = 0;
  vlm_status status = vlm_config_read_file(model_dir, "preprocessor_config.json", true,
                                           &preprocessor, &preprocessor_length, &path);
  free(path);
  path = NULL;
  if (!status)
    status = vlm_config_read_file(model_dir, "processor_config.json", true, &processor,
                                  &processor_length, &path);
  if (!status)
    status = vlm_processor_config_parse_with(preprocessor, preprocessor_length, processor,
                                             processor_length, kwargs_text, allocator, out);
  free(preprocessor);
  free(processor);
  free(path);
  return status;
}

void vlm_processor_config_release(vlm_processor_config *config) {
  if (!config) return;
  vlm_config_storage_release(config->storage);
  memset(config, 0, sizeof(*config));
}
