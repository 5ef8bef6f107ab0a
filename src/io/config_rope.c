/* RoPE parameters, resolved as Transformers 5.23.0 resolves them.
 *
 * Hub checkpoints mostly spell RoPE the v4 way (top-level rope_theta, an
 * optional rope_scaling dict, partial_rotary_factor, Gemma's
 * rope_local_base_freq); files written by Transformers 5 carry one
 * rope_parameters dict (nested per layer type for Gemma). Each class's
 * convert_rope_params_to_dict folds the first into the second; this file
 * does the same fold, then reads the dict by rope_type with the defaults of
 * modeling_rope_utils. */
#include "io/config_rope.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/status.h"

const char *vlm_rope_type_name(vlm_rope_type type) {
  switch (type) {
    case VLM_ROPE_DEFAULT: return "default";
    case VLM_ROPE_LINEAR: return "linear";
    case VLM_ROPE_DYNAMIC: return "dynamic";
    case VLM_ROPE_YARN: return "yarn";
    case VLM_ROPE_LONGROPE: return "longrope";
    case VLM_ROPE_LLAMA3: return "llama3";
  }
  return "unknown";
}

static bool parse_rope_type(const char *name, vlm_rope_type *out) {
  static const vlm_rope_type types[] = {VLM_ROPE_DEFAULT, VLM_ROPE_LINEAR, VLM_ROPE_DYNAMIC,
                                        VLM_ROPE_YARN, VLM_ROPE_LONGROPE, VLM_ROPE_LLAMA3};
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
    if (strcmp(name, vlm_rope_type_name(types[i])) == 0) {
      *out = types[i];
      return true;
    }
  return false;
}

/* One RoPE dict to interpret, with the values its class falls back to. */
typedef struct rope_request {
  vlm_config_section dict;      /* the dict; key_prefix names it for messages */
  double theta_fallback;        /* rope_theta when the dict has none */
  double partial_fallback;      /* partial_rotary_factor when the dict has none */
  bool override_original_max;   /* Phi-4: the top-level field wins */
  int64_t original_max_override;
  const vlm_rope_rules *rules;
} rope_request;

static vlm_status out_of_memory(void) {
  return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory reading a config");
}

/* A section over `object` whose messages read "<prefix><name>.<key>". */
static vlm_status child_section(const vlm_config_section *parent, const vlm_json_value *object,
                                const char *name, vlm_config_section *out) {
  char prefix[160];
  snprintf(prefix, sizeof(prefix), "%s%s.", parent->key_prefix, name);
  *out = *parent;
  out->key_prefix = vlm_config_storage_copy_string(parent->storage, prefix);
  if (!out->key_prefix) return out_of_memory();
  if (object) {
    out->object = object;
    return VLM_OK;
  }
  return vlm_config_object_create(parent->storage, NULL, 0, &out->object);
}

/* The dict behind `key`: an object, or NULL for null/absent/empty. */
static vlm_status rope_dict(const vlm_config_section *section, const char *key,
                            const vlm_json_value **out) {
  const vlm_json_value *value = vlm_config_get(section, key);
  *out = NULL;
  if (!value) return VLM_OK;
  if (value->type != VLM_JSON_OBJECT)
    return vlm_config_type_error(section, key, "an object", value);
  if (value->as.object.count) *out = value;
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Reading one dict                                                        */
/* ---------------------------------------------------------------------- */

/* The class's rename of a legacy type name (Qwen2-VL: "mrope" is plain
 * RoPE, its sections from mrope_section; Phi-4: "su" and "yarn" are
 * longrope), before or after standardize_rope_params as the class does it. */
static const char *alias_type(const vlm_rope_rules *rules, const char *name, bool after_standardize) {
  for (size_t i = 0; i < VLM_ROPE_MAX_ALIASES && rules->aliases[i].legacy; i++)
    if (rules->aliases[i].after_standardize == after_standardize &&
        strcmp(rules->aliases[i].legacy, name) == 0)
      return rules->aliases[i].type;
  return name;
}

static vlm_status read_type_name(const rope_request *request, const char **out_name) {
  /* standardize_rope_params: rope_type, else the legacy "type", else default. */
  const char *key = vlm_config_get(&request->dict, "rope_type") ? "rope_type" : "type";
  VLM_RETURN_IF_ERROR(vlm_config_read_string_or(&request->dict, key, "default", out_name));
  *out_name = alias_type(request->rules, *out_name, false);
  return VLM_OK;
}

/* original_max_position_embeddings for llama3/yarn/longrope
 * (standardize_rope_params): the class's own field when it has one, else the
 * dict's, else max_position_embeddings. */
static vlm_status read_original_max(const rope_request *request, const char *type_name,
                                    const vlm_text_config *text, vlm_rope_config *rope) {
  bool standardized = strcmp(type_name, "llama3") == 0 || strcmp(type_name, "yarn") == 0 ||
                      strcmp(type_name, "longrope") == 0;
  if (standardized && request->override_original_max) {
    rope->original_max_position_embeddings = request->original_max_override;
    return VLM_OK;
  }
  int64_t fallback = standardized ? text->max_position_embeddings : 0;
  return vlm_config_read_int_or(&request->dict, "original_max_position_embeddings", 1,
                                VLM_CONFIG_MAX_POSITIONS, fallback,
                                &rope->original_max_position_embeddings);
}

static vlm_status require_original_max(const rope_request *request, const vlm_rope_config *rope) {
  if (rope->original_max_position_embeddings > 0) return VLM_OK;
  return vlm_config_type_error(&request->dict, "original_max_position_embeddings",
                               "a positive integer", NULL);
}

static vlm_status read_factor_list(const rope_request *request, const char *key,
                                   size_t expected, const double **out) {
  const vlm_json_value *value = vlm_config_get(&request->dict, key);
  if (!value || value->type != VLM_JSON_ARRAY)
    return vlm_config_type_error(&request->dict, key, "a list of numbers", value);
  if (value->as.array.count != expected)
    return vlm_config_error(&request->dict, VLM_STATUS_INVALID_ARGUMENT, key,
                            "has %zu entries; rotary dimension / 2 is %zu",
                            value->as.array.count, expected);
  double *factors = vlm_config_storage_allocate(request->dict.storage,
                                                expected * sizeof(double), _Alignof(double));
  if (!factors) return out_of_memory();
  for (size_t i = 0; i < expected; i++)
    if (!vlm_json_get_double(&value->as.array.items[i], &factors[i]) || !isfinite(factors[i]) ||
        factors[i] <= 0)
      return vlm_config_type_error(&request->dict, key, "a list of positive numbers", value);
  *out = factors;
  return VLM_OK;
}

/* _compute_yarn_parameters' get_mscale. */
static double yarn_mscale(double scale, double mscale) {
  return scale <= 1 ? 1.0 : 0.1 * mscale * log(scale) + 1.0;
}

static vlm_status read_yarn(const rope_request *request, const vlm_text_config *text,
                            vlm_rope_config *rope) {
  const vlm_config_section *dict = &request->dict;
  VLM_RETURN_IF_ERROR(require_original_max(request, rope));
  double implicit = (double)text->max_position_embeddings /
                    (double)rope->original_max_position_embeddings;
  VLM_RETURN_IF_ERROR(vlm_config_read_double_or(dict, "factor", 1e-6, 1e6, implicit, &rope->factor));
  double mscale = 0, mscale_all_dim = 0;
  VLM_RETURN_IF_ERROR(vlm_config_read_double_or(dict, "mscale", 0, 1e6, 0, &mscale));
  VLM_RETURN_IF_ERROR(vlm_config_read_double_or(dict, "mscale_all_dim", 0, 1e6, 0, &mscale_all_dim));
  double computed = mscale && mscale_all_dim
                        ? yarn_mscale(rope->factor, mscale) / yarn_mscale(rope->factor, mscale_all_dim)
                        : yarn_mscale(rope->factor, 1);
  VLM_RETURN_IF_ERROR(vlm_config_read_double_or(dict, "attention_factor", 0, 1e6, computed,
                                                &rope->attention_factor));
  /* `get("beta_fast") or 32`: a 0 also means the default. */
  VLM_RETURN_IF_ERROR(vlm_config_read_double_or(dict, "beta_fast", 0, 1e6, 32, &rope->beta_fast));
  VLM_RETURN_IF_ERROR(vlm_config_read_double_or(dict, "beta_slow", 0, 1e6, 1, &rope->beta_slow));
  if (rope->beta_fast == 0) rope->beta_fast = 32;
  if (rope->beta_slow == 0) rope->beta_slow = 1;
  return vlm_config_read_bool_or(dict, "truncate", true, &rope->truncate);
}

static vlm_status read_longrope(const rope_request *request, const vlm_text_config *text,
                                vlm_rope_config *rope) {
  const vlm_config_section *dict = &request->dict;
  VLM_RETURN_IF_ERROR(require_original_max(request, rope));
  rope->longrope_factor_count = (size_t)rope->rotary_dimension / 2;
  VLM_RETURN_IF_ERROR(
      read_factor_list(request, "short_factor", rope->longrope_factor_count, &rope->short_factor));
  VLM_RETURN_IF_ERROR(
      read_factor_list(request, "long_factor", rope->longrope_factor_count, &rope->long_factor));
  double implicit = (double)text->max_position_embeddings /
                    (double)rope->original_max_position_embeddings;
  VLM_RETURN_IF_ERROR(vlm_config_read_double_or(dict, "factor", 1e-6, 1e6, implicit, &rope->factor));
  /* _compute_longrope_parameters: sqrt(1 + ln(factor) / ln(original)). */
  double computed =
      rope->factor <= 1.0
          ? 1.0
          : sqrt(1 + log(rope->factor) / log((double)rope->original_max_position_embeddings));
  return vlm_config_read_double_or(dict, "attention_factor", 0, 1e6, computed,
                                   &rope->attention_factor);
}

static vlm_status read_scaling(const rope_request *request, const vlm_text_config *text,
                               vlm_rope_config *rope) {
  const vlm_config_section *dict = &request->dict;
  switch (rope->type) {
    case VLM_ROPE_DEFAULT:
      return VLM_OK;
    case VLM_ROPE_LINEAR:
    case VLM_ROPE_DYNAMIC:
      return vlm_config_read_double(dict, "factor", 1e-6, 1e6, &rope->factor);
    case VLM_ROPE_LLAMA3:
      VLM_RETURN_IF_ERROR(require_original_max(request, rope));
      VLM_RETURN_IF_ERROR(vlm_config_read_double(dict, "factor", 1e-6, 1e6, &rope->factor));
      VLM_RETURN_IF_ERROR(
          vlm_config_read_double(dict, "low_freq_factor", 1e-6, 1e6, &rope->low_freq_factor));
      VLM_RETURN_IF_ERROR(
          vlm_config_read_double(dict, "high_freq_factor", 1e-6, 1e6, &rope->high_freq_factor));
      if (rope->high_freq_factor <= rope->low_freq_factor)
        return vlm_config_error(dict, VLM_STATUS_INVALID_ARGUMENT, "high_freq_factor",
                                "must be larger than low_freq_factor");
      return VLM_OK;
    case VLM_ROPE_YARN:
      return read_yarn(request, text, rope);
    case VLM_ROPE_LONGROPE:
      return read_longrope(request, text, rope);
  }
  return VLM_OK;
}

/* M-RoPE sections. The rotary embeddings decide the layout in code and
 * ignore any mrope_interleaved flag: Qwen2VLRotaryEmbedding and Qwen2.5-VL's
 * take contiguous sections, Qwen3VLTextRotaryEmbedding always interleaves
 * them and falls back to [24, 20, 20] (rope_parameters.get). */
static vlm_status read_mrope(const rope_request *request, vlm_rope_config *rope) {
  vlm_index_list sections;
  VLM_RETURN_IF_ERROR(vlm_config_read_index_list(&request->dict, "mrope_section", 1,
                                                 VLM_CONFIG_MAX_HEADS, false, &sections, NULL));
  const vlm_rope_rules *rules = request->rules;
  if (!vlm_config_get(&request->dict, "mrope_section")) {
    sections.count = rules->default_mrope_section_count;
    for (size_t i = 0; i < sections.count; i++) sections.values[i] = rules->default_mrope_section[i];
  }
  if (sections.count > VLM_CONFIG_MAX_MROPE_SECTIONS)
    return vlm_config_error(&request->dict, VLM_STATUS_OUT_OF_RANGE, "mrope_section",
                            "has %zu sections; at most %d are supported", sections.count,
                            VLM_CONFIG_MAX_MROPE_SECTIONS);
  int64_t total = 0;
  for (size_t i = 0; i < sections.count; i++) {
    rope->mrope_section[i] = sections.values[i];
    total += sections.values[i];
  }
  rope->mrope_section_count = sections.count;
  /* The sections split the rotary frequencies (rotary_dimension / 2). */
  if (sections.count && total * 2 != rope->rotary_dimension)
    return vlm_config_error(&request->dict, VLM_STATUS_INVALID_ARGUMENT, "mrope_section",
                            "sums to %lld but the rotary dimension / 2 is %lld",
                            (long long)total, (long long)(rope->rotary_dimension / 2));
  /* The flag is still type-checked when present. */
  VLM_RETURN_IF_ERROR(vlm_config_read_bool_or(&request->dict, "mrope_interleaved", false,
                                              &rope->mrope_interleaved));
  if (rules->mrope_layout == VLM_MROPE_CONTIGUOUS) rope->mrope_interleaved = false;
  if (rules->mrope_layout == VLM_MROPE_INTERLEAVED) rope->mrope_interleaved = true;
  return VLM_OK;
}

static vlm_status read_rope_dict(const rope_request *request, const vlm_text_config *text,
                                 vlm_rope_config *rope) {
  memset(rope, 0, sizeof(*rope));
  rope->factor = 1.0;
  rope->attention_factor = 1.0;
  const char *type_name = NULL;
  VLM_RETURN_IF_ERROR(read_type_name(request, &type_name));
  VLM_RETURN_IF_ERROR(read_original_max(request, type_name, text, rope));
  type_name = alias_type(request->rules, type_name, true);
  if (!parse_rope_type(type_name, &rope->type))
    return vlm_config_error(&request->dict, VLM_STATUS_UNIMPLEMENTED, "rope_type",
                            "\"%.64s\" is not supported (supported: default, linear, dynamic, "
                            "yarn, longrope, llama3)",
                            type_name);
  VLM_RETURN_IF_ERROR(vlm_config_read_double_or(&request->dict, "rope_theta", 1e-6, 1e15,
                                                request->theta_fallback, &rope->theta));
  VLM_RETURN_IF_ERROR(vlm_config_read_double_or(&request->dict, "partial_rotary_factor", 1e-6,
                                                1.0, request->partial_fallback,
                                                &rope->partial_rotary_factor));
  rope->rotary_dimension = (int64_t)((double)text->head_dim * rope->partial_rotary_factor);
  if (rope->rotary_dimension < 2)
    return vlm_config_error(&request->dict, VLM_STATUS_INVALID_ARGUMENT, "partial_rotary_factor",
                            "leaves a rotary dimension of %lld for head_dim %lld",
                            (long long)rope->rotary_dimension, (long long)text->head_dim);
  VLM_RETURN_IF_ERROR(read_mrope(request, rope));
  return read_scaling(request, text, rope);
}

/* ---------------------------------------------------------------------- */
/* The styles                                                              */
/* ---------------------------------------------------------------------- */

/* The class's default_theta; Gemma's is {"global": ..., "local": ...}. */
static double class_theta(const vlm_config_class *config_class, const char *which) {
  double theta = 10000.0; /* RotaryEmbeddingConfigMixin.default_theta */
  const vlm_json_value *value = config_class->default_theta;
  if (value && value->type == VLM_JSON_OBJECT) value = vlm_json_object_get(value, which);
  vlm_json_get_double(value, &theta);
  return theta;
}

/* A top-level legacy key that feeds the dict's defaults. */
static vlm_status legacy_number(const vlm_config_section *section, const char *key,
                                double maximum, double fallback, double *out) {
  return vlm_config_read_double_or(section, key, 1e-6, maximum, fallback, out);
}

static vlm_status base_request(const vlm_config_section *section,
                               const vlm_config_class *config_class, const vlm_rope_rules *rules,
                               rope_request *out) {
  memset(out, 0, sizeof(*out));
  out->rules = rules;
  out->partial_fallback = 1.0;
  /* standardize_rope_params moves the pretraining length into the dict from
   * the class's own field when the class has one (Phi-4). */
  if (vlm_config_class_has_field(config_class, "original_max_position_embeddings")) {
    out->override_original_max = true;
    VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "original_max_position_embeddings", 1,
                                            VLM_CONFIG_MAX_POSITIONS,
                                            &out->original_max_override));
  }
  return VLM_OK;
}

/* RotaryEmbeddingConfigMixin.convert_rope_params_to_dict and the Qwen2-VL /
 * Phi-4 variants: rope_scaling (when non-empty) replaces rope_parameters,
 * then the top-level rope_theta / partial_rotary_factor fill what the dict
 * lacks. */
static vlm_status read_flat_style(const vlm_config_section *section,
                                  const vlm_config_class *config_class, const vlm_rope_rules *rules,
                                  vlm_text_config *text) {
  const vlm_json_value *scaling = NULL, *parameters = NULL;
  VLM_RETURN_IF_ERROR(rope_dict(section, "rope_scaling", &scaling));
  VLM_RETURN_IF_ERROR(rope_dict(section, "rope_parameters", &parameters));
  const char *name = scaling ? "rope_scaling" : "rope_parameters";
  const vlm_json_value *dict = scaling ? scaling : parameters;
  rope_request request;
  VLM_RETURN_IF_ERROR(base_request(section, config_class, rules, &request));
  VLM_RETURN_IF_ERROR(legacy_number(section, "rope_theta", 1e15, class_theta(config_class, "global"),
                                    &request.theta_fallback));
  if (!rules->ignores_partial_rotary_factor)
    VLM_RETURN_IF_ERROR(
        legacy_number(section, "partial_rotary_factor", 1.0, 1.0, &request.partial_fallback));
  /* A dict nested by layer type (a v5 file of a family with layer_types). */
  const vlm_json_value *full = vlm_json_object_get(dict, "full_attention");
  const vlm_json_value *sliding = vlm_json_object_get(dict, "sliding_attention");
  if (full && full->type == VLM_JSON_OBJECT) {
    VLM_RETURN_IF_ERROR(child_section(section, full, "rope_parameters.full_attention", &request.dict));
    VLM_RETURN_IF_ERROR(read_rope_dict(&request, text, &text->rope));
    if (!sliding || sliding->type != VLM_JSON_OBJECT) return VLM_OK;
    VLM_RETURN_IF_ERROR(
        child_section(section, sliding, "rope_parameters.sliding_attention", &request.dict));
    text->has_sliding_rope = true;
    return read_rope_dict(&request, text, &text->sliding_rope);
  }
  VLM_RETURN_IF_ERROR(child_section(section, dict, name, &request.dict));
  return read_rope_dict(&request, text, &text->rope);
}

/* The sub-dict of Gemma's nested rope_parameters, NULL when absent. */
static vlm_status nested_dict(const vlm_config_section *section, const vlm_json_value *parameters,
                              const char *layer_type, const vlm_json_value **out) {
  *out = NULL;
  const vlm_json_value *value = vlm_json_object_get(parameters, layer_type);
  if (!value || value->type == VLM_JSON_NULL) return VLM_OK;
  if (value->type != VLM_JSON_OBJECT) {
    char key[64];
    snprintf(key, sizeof(key), "rope_parameters.%s", layer_type);
    return vlm_config_type_error(section, key, "an object", value);
  }
  *out = value;
  return VLM_OK;
}

/* dict.update(scaling) on Gemma's full-attention dict, which starts as
 * {"rope_type": "default"} when the file has none: so a legacy rope_scaling
 * that says only "type" (not "rope_type") keeps the default type, exactly
 * as in Transformers. */
static vlm_status update_dict(const vlm_config_section *section, const vlm_json_value *dict,
                              const vlm_json_value *scaling, const vlm_json_value **out) {
  static const vlm_json_value default_type = {
      .type = VLM_JSON_STRING, .as.string = {.chars = "default", .length = 7}};
  size_t dict_count = dict ? dict->as.object.count : 1;
  size_t count = dict_count + scaling->as.object.count;
  if (count > VLM_CONFIG_MAX_SECTION_KEYS)
    return vlm_config_error(section, VLM_STATUS_OUT_OF_RANGE, "rope_scaling", "has too many keys");
  vlm_json_member *members = vlm_config_storage_allocate(
      section->storage, count * sizeof(*members), _Alignof(vlm_json_member));
  if (!members) return out_of_memory();
  if (dict)
    memcpy(members, dict->as.object.members, dict_count * sizeof(*members));
  else
    members[0] = (vlm_json_member){"rope_type", 9, default_type};
  memcpy(members + dict_count, scaling->as.object.members,
         scaling->as.object.count * sizeof(*members));
  return vlm_config_object_create(section->storage, members, count, out);
}

/* Gemma3TextConfig.convert_rope_params_to_dict: rope_parameters nested by
 * layer type; a legacy rope_scaling updates the full-attention dict;
 * rope_theta defaults the global theta and rope_local_base_freq the local. */
static vlm_status read_per_layer_type_style(const vlm_config_section *section,
                                            const vlm_config_class *config_class,
                                            const vlm_rope_rules *rules, vlm_text_config *text) {
  const vlm_json_value *parameters = vlm_config_get(section, "rope_parameters");
  if (parameters && parameters->type != VLM_JSON_OBJECT)
    return vlm_config_type_error(section, "rope_parameters", "an object", parameters);
  const vlm_json_value *full = NULL, *sliding = NULL, *scaling = vlm_config_get(section, "rope_scaling");
  VLM_RETURN_IF_ERROR(nested_dict(section, parameters, "full_attention", &full));
  VLM_RETURN_IF_ERROR(nested_dict(section, parameters, "sliding_attention", &sliding));
  if (scaling && scaling->type != VLM_JSON_OBJECT)
    return vlm_config_type_error(section, "rope_scaling", "an object", scaling);
  if (scaling) VLM_RETURN_IF_ERROR(update_dict(section, full, scaling, &full));
  rope_request request;
  VLM_RETURN_IF_ERROR(base_request(section, config_class, rules, &request));
  VLM_RETURN_IF_ERROR(legacy_number(section, "rope_theta", 1e15, class_theta(config_class, "global"),
                                    &request.theta_fallback));
  VLM_RETURN_IF_ERROR(child_section(section, full,
                                    scaling ? "rope_scaling" : "rope_parameters.full_attention",
                                    &request.dict));
  VLM_RETURN_IF_ERROR(read_rope_dict(&request, text, &text->rope));
  VLM_RETURN_IF_ERROR(legacy_number(section, "rope_local_base_freq", 1e15,
                                    class_theta(config_class, "local"), &request.theta_fallback));
  VLM_RETURN_IF_ERROR(
      child_section(section, sliding, "rope_parameters.sliding_attention", &request.dict));
  text->has_sliding_rope = true;
  return read_rope_dict(&request, text, &text->sliding_rope);
}

vlm_status vlm_rope_config_read(const vlm_config_section *section,
                                const vlm_config_class *config_class, const vlm_rope_rules *rules,
                                vlm_text_config *text) {
  if (rules->per_layer_type) return read_per_layer_type_style(section, config_class, rules, text);
  return read_flat_style(section, config_class, rules, text);
}
