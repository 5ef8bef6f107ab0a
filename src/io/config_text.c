/* Text decoders: the typed fields, and the values Transformers derives in
 * each class's __post_init__ (head_dim, num_key_value_heads, layer_types,
 * sliding_window) or in its modeling code (attention biases and scale), as
 * the class's record (vlm_text_rules, io/config_record.h) says. */
#include <math.h>
#include <string.h>

#include "core/status.h"
#include "io/config_record.h"

/* ---------------------------------------------------------------------- */
/* Sizes                                                                   */
/* ---------------------------------------------------------------------- */

static vlm_status read_intermediate_sizes(const vlm_config_section *section,
                                          const vlm_text_rules *rules, vlm_text_config *out) {
  int64_t *sizes = vlm_config_storage_allocate(
      section->storage, (size_t)out->num_hidden_layers * sizeof(int64_t), _Alignof(int64_t));
  if (!sizes) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory reading a config");
  const vlm_json_value *value = vlm_config_get(section, "intermediate_size");
  if (rules->per_layer_intermediate_size && value && value->type == VLM_JSON_ARRAY) {
    /* Gemma3nTextConfig.__post_init__: one size per layer, or one for all. */
    if (value->as.array.count != (size_t)out->num_hidden_layers)
      return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, "intermediate_size",
                              "lists %zu sizes for %lld layers", value->as.array.count,
                              (long long)out->num_hidden_layers);
    for (size_t i = 0; i < value->as.array.count; i++) {
      if (!vlm_json_get_int(&value->as.array.items[i], &sizes[i]) || sizes[i] < 1 ||
          sizes[i] > VLM_CONFIG_MAX_DIMENSION)
        return vlm_config_type_error(section, "intermediate_size",
                                     "a positive integer or a list of them", value);
    }
  } else {
    VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "intermediate_size", 1,
                                            VLM_CONFIG_MAX_DIMENSION, &sizes[0]));
    for (int64_t i = 1; i < out->num_hidden_layers; i++) sizes[i] = sizes[0];
  }
  out->intermediate_size = sizes[0];
  out->layer_intermediate_sizes = sizes;
  return VLM_OK;
}

static vlm_status read_head_dim(const vlm_config_section *section, const vlm_text_rules *rules,
                                vlm_text_config *out) {
  int64_t head_dim = 0;
  if (rules->head_dim == VLM_HEAD_DIM_ROPE_DIMS) {
    VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "qk_rope_head_dim", 2, VLM_CONFIG_MAX_HEADS, &head_dim));
    out->head_dim = head_dim;
    return VLM_OK;
  }
  if (rules->head_dim == VLM_HEAD_DIM_FIELD_OR_DERIVED)
    VLM_RETURN_IF_ERROR(
        vlm_config_read_int_or(section, "head_dim", 1, VLM_CONFIG_MAX_HEADS, 0, &head_dim));
  if (head_dim == 0) {
    if (out->hidden_size % out->num_attention_heads != 0)
      return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, "hidden_size",
                              "(%lld) is not a multiple of num_attention_heads (%lld), so "
                              "head_dim cannot be derived",
                              (long long)out->hidden_size, (long long)out->num_attention_heads);
    head_dim = out->hidden_size / out->num_attention_heads;
  }
  out->head_dim = head_dim;
  return VLM_OK;
}

static vlm_status read_heads(const vlm_config_section *section, const vlm_text_rules *rules,
                             vlm_text_config *out) {
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "num_attention_heads", 1,
                                          VLM_CONFIG_MAX_HEADS, &out->num_attention_heads));
  /* num_key_value_heads=None means multi-head attention (every class's
   * __post_init__ copies num_attention_heads). */
  VLM_RETURN_IF_ERROR(vlm_config_read_int_or(section, "num_key_value_heads", 1,
                                             VLM_CONFIG_MAX_HEADS, out->num_attention_heads,
                                             &out->num_key_value_heads));
  if (out->num_attention_heads % out->num_key_value_heads != 0)
    return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, "num_attention_heads",
                            "(%lld) is not a multiple of num_key_value_heads (%lld)",
                            (long long)out->num_attention_heads,
                            (long long)out->num_key_value_heads);
  return read_head_dim(section, rules, out);
}

static vlm_status read_sizes(const vlm_config_section *section, const vlm_text_rules *rules,
                             vlm_text_config *out) {
  VLM_RETURN_IF_ERROR(
      vlm_config_read_int(section, "vocab_size", 1, VLM_CONFIG_MAX_VOCAB_SIZE, &out->vocab_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "hidden_size", 1, VLM_CONFIG_MAX_DIMENSION,
                                          &out->hidden_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "num_hidden_layers", 1,
                                          VLM_CONFIG_MAX_LAYERS, &out->num_hidden_layers));
  VLM_RETURN_IF_ERROR(read_intermediate_sizes(section, rules, out));
  VLM_RETURN_IF_ERROR(read_heads(section, rules, out));
  return vlm_config_read_int(section, "max_position_embeddings", 1, VLM_CONFIG_MAX_POSITIONS,
                             &out->max_position_embeddings);
}

/* ---------------------------------------------------------------------- */
/* Layer types                                                             */
/* ---------------------------------------------------------------------- */

static vlm_status parse_layer_type(const vlm_config_section *section, const vlm_json_value *item,
                                   size_t index, vlm_layer_attention *out) {
  /* "attention" is the legacy spelling remap_legacy_layer_types renames. */
  if (vlm_json_string_equals(item, "full_attention") || vlm_json_string_equals(item, "attention")) {
    *out = VLM_LAYER_ATTENTION_FULL;
  } else if (vlm_json_string_equals(item, "sliding_attention")) {
    *out = VLM_LAYER_ATTENTION_SLIDING;
  } else if (item->type == VLM_JSON_STRING) {
    return vlm_config_error(section, VLM_STATUS_UNIMPLEMENTED, "layer_types",
                            "[%zu] is \"%.64s\"; only full_attention and sliding_attention "
                            "are supported",
                            index, item->as.string.chars);
  } else {
    return vlm_config_type_error(section, "layer_types", "a list of layer type names", item);
  }
  return VLM_OK;
}

/* True when the file gave layer_types and they were parsed into `kinds`. */
static vlm_status read_explicit_layer_types(const vlm_config_section *section,
                                            const vlm_text_config *text,
                                            vlm_layer_attention *kinds, bool *out_found) {
  *out_found = false;
  const vlm_json_value *value = vlm_config_get(section, "layer_types");
  if (!value) return VLM_OK;
  if (value->type != VLM_JSON_ARRAY)
    return vlm_config_type_error(section, "layer_types", "a list of layer type names", value);
  if (value->as.array.count != (size_t)text->num_hidden_layers)
    return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, "layer_types",
                            "lists %zu layers but num_hidden_layers is %lld",
                            value->as.array.count, (long long)text->num_hidden_layers);
  for (size_t i = 0; i < value->as.array.count; i++)
    VLM_RETURN_IF_ERROR(parse_layer_type(section, &value->as.array.items[i], i, &kinds[i]));
  *out_found = true;
  return VLM_OK;
}

static vlm_status read_window(const vlm_config_section *section, int64_t *out) {
  return vlm_config_read_int_or(section, "sliding_window", 1, VLM_CONFIG_MAX_POSITIONS, 0, out);
}

/* Qwen2Config.__post_init__: with a window, the layers from
 * max_window_layers on slide. */
static vlm_status derive_max_window_layers(const vlm_config_section *section, vlm_text_config *text,
                                      vlm_layer_attention *kinds) {
  int64_t max_window_layers = 0;
  VLM_RETURN_IF_ERROR(vlm_config_read_int_or(section, "max_window_layers", 0,
                                             VLM_CONFIG_MAX_LAYERS, 0, &max_window_layers));
  for (int64_t i = 0; i < text->num_hidden_layers; i++)
    kinds[i] = text->sliding_window && i >= max_window_layers ? VLM_LAYER_ATTENTION_SLIDING
                                                              : VLM_LAYER_ATTENTION_FULL;
  return VLM_OK;
}

/* Gemma3TextConfig.__post_init__: layer i is full when (i + 1) is a multiple
 * of the period: the record's, or the sliding_window_pattern kwarg (6 when
 * absent) for 0. */
static vlm_status derive_periodic_layers(const vlm_config_section *section, int64_t pattern,
                                      vlm_text_config *text, vlm_layer_attention *kinds) {
  if (pattern == 0)
    VLM_RETURN_IF_ERROR(vlm_config_read_int_or(section, "sliding_window_pattern", 1,
                                               VLM_CONFIG_MAX_LAYERS, 6, &pattern));
  for (int64_t i = 0; i < text->num_hidden_layers; i++)
    kinds[i] = (i + 1) % pattern ? VLM_LAYER_ATTENTION_SLIDING : VLM_LAYER_ATTENTION_FULL;
  return VLM_OK;
}

static vlm_status derive_layer_types(const vlm_config_section *section,
                                     const vlm_text_rules *rules, vlm_text_config *text,
                                     vlm_layer_attention *kinds) {
  switch (rules->layers) {
    case VLM_LAYERS_MAX_WINDOW_LAYERS:
      return derive_max_window_layers(section, text, kinds);
    case VLM_LAYERS_PERIODIC_FULL:
      return derive_periodic_layers(section, rules->full_layer_period, text, kinds);
    case VLM_LAYERS_ALL_SLIDING_WHEN_WINDOW:
      for (int64_t i = 0; i < text->num_hidden_layers; i++)
        kinds[i] = text->sliding_window ? VLM_LAYER_ATTENTION_SLIDING : VLM_LAYER_ATTENTION_FULL;
      return VLM_OK;
    case VLM_LAYERS_ALL_FULL:
      break;
  }
  for (int64_t i = 0; i < text->num_hidden_layers; i++) kinds[i] = VLM_LAYER_ATTENTION_FULL;
  return VLM_OK;
}

static vlm_status read_sliding_window(const vlm_config_section *section,
                                     const vlm_text_rules *rules, vlm_text_config *text) {
  if (rules->layers == VLM_LAYERS_ALL_FULL) return VLM_OK;
  if (rules->layers == VLM_LAYERS_MAX_WINDOW_LAYERS) {
    /* Qwen2Config.__post_init__: sliding_window = sliding_window if
     * use_sliding_window else None. */
    bool use_sliding_window = false;
    VLM_RETURN_IF_ERROR(
        vlm_config_read_bool_or(section, "use_sliding_window", false, &use_sliding_window));
    return use_sliding_window ? read_window(section, &text->sliding_window) : VLM_OK;
  }
  VLM_RETURN_IF_ERROR(read_window(section, &text->sliding_window));
  bool bidirectional = false;
  VLM_RETURN_IF_ERROR(
      vlm_config_read_bool_or(section, "use_bidirectional_attention", false, &bidirectional));
  /* Gemma3TextConfig.__post_init__ halves the window for bidirectional
   * attention ("exclusive bounds" for flash attention). */
  if (bidirectional && text->sliding_window)
    text->sliding_window = text->sliding_window / 2 + 1;
  return VLM_OK;
}

static vlm_status read_layer_types(const vlm_config_section *section, const vlm_text_rules *rules,
                                   vlm_text_config *text) {
  vlm_layer_attention *kinds = vlm_config_storage_allocate(
      section->storage, (size_t)text->num_hidden_layers * sizeof(*kinds), _Alignof(vlm_layer_attention));
  if (!kinds) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory reading a config");
  VLM_RETURN_IF_ERROR(read_sliding_window(section, rules, text));
  bool explicit_types = false;
  /* Mistral ignores layer_types (MistralConfig warns and keeps one window
   * for every layer), and so do the families without sliding layers. */
  if (rules->layers != VLM_LAYERS_ALL_FULL && rules->layers != VLM_LAYERS_ALL_SLIDING_WHEN_WINDOW)
    VLM_RETURN_IF_ERROR(read_explicit_layer_types(section, text, kinds, &explicit_types));
  if (!explicit_types) VLM_RETURN_IF_ERROR(derive_layer_types(section, rules, text, kinds));
  for (int64_t i = 0; i < text->num_hidden_layers; i++)
    if (kinds[i] == VLM_LAYER_ATTENTION_SLIDING && !text->sliding_window)
      return vlm_config_error(section, VLM_STATUS_INVALID_ARGUMENT, "layer_types",
                              "[%lld] is sliding_attention but sliding_window is unset",
                              (long long)i);
  text->layer_types = kinds;
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Attention details                                                       */
/* ---------------------------------------------------------------------- */

static vlm_status read_biases(const vlm_config_section *section, const vlm_text_rules *rules,
                              const vlm_config_class *config_class, vlm_text_config *text) {
  bool field = false;
  if (rules->bias == VLM_BIAS_FIELD_ALL || rules->bias == VLM_BIAS_FIELD_QKV)
    VLM_RETURN_IF_ERROR(vlm_config_read_bool_or(section, "attention_bias", false, &field));
  text->attention_bias = rules->bias == VLM_BIAS_QKV_ALWAYS || field;
  text->attention_output_bias = rules->bias == VLM_BIAS_FIELD_ALL && field;
  text->mlp_bias = false;
  if (vlm_config_class_has_field(config_class, "mlp_bias"))
    VLM_RETURN_IF_ERROR(vlm_config_read_bool_or(section, "mlp_bias", false, &text->mlp_bias));
  return VLM_OK;
}

static vlm_status read_attention_scale(const vlm_config_section *section,
                                       const vlm_text_rules *rules, vlm_text_config *text) {
  text->attention_scale = 1.0 / sqrt((double)text->head_dim);
  if (rules->scale == VLM_SCALE_ONE) text->attention_scale = 1.0;
  if (rules->scale != VLM_SCALE_QUERY_PRE_ATTN_SCALAR) return VLM_OK;
  VLM_RETURN_IF_ERROR(vlm_config_read_double(section, "query_pre_attn_scalar", 1e-6, 1e9,
                                             &text->query_pre_attn_scalar));
  text->attention_scale = 1.0 / sqrt(text->query_pre_attn_scalar);
  return VLM_OK;
}

static vlm_status read_softcapping(const vlm_config_section *section, vlm_text_config *text) {
  VLM_RETURN_IF_ERROR(vlm_config_read_double_or(section, "final_logit_softcapping", 0, 1e9, 0,
                                                &text->final_logit_softcapping));
  return vlm_config_read_double_or(section, "attn_logit_softcapping", 0, 1e9, 0,
                                   &text->attn_logit_softcapping);
}

static vlm_status read_tokens(const vlm_config_section *section, const vlm_text_rules *rules,
                              vlm_text_config *text) {
  VLM_RETURN_IF_ERROR(vlm_config_read_token_id(section, "bos_token_id", &text->bos_token_id));
  VLM_RETURN_IF_ERROR(vlm_config_read_token_id(section, "pad_token_id", &text->pad_token_id));
  VLM_RETURN_IF_ERROR(vlm_config_read_token_ids(section, "eos_token_id", &text->eos_token_ids));
  /* The class's fallback (Phi4MultimodalConfig.__post_init__). */
  if (text->eos_token_ids.count == 0) text->eos_token_ids = rules->default_eos_token_ids;
  return VLM_OK;
}

static vlm_status read_names(const vlm_config_section *section,
                             const vlm_config_class *config_class, bool tie_fallback,
                             vlm_text_config *text) {
  text->model_type = config_class->model_type;
  /* Gemma names the MLP activation hidden_activation. */
  const char *activation_key =
      vlm_config_class_has_field(config_class, "hidden_activation") ? "hidden_activation"
                                                                    : "hidden_act";
  VLM_RETURN_IF_ERROR(vlm_config_read_string_or(section, activation_key, NULL, &text->hidden_act));
  if (!text->hidden_act)
    return vlm_config_type_error(section, activation_key, "an activation name", NULL);
  VLM_RETURN_IF_ERROR(
      vlm_config_read_double(section, "rms_norm_eps", 1e-30, 1.0, &text->rms_norm_eps));
  VLM_RETURN_IF_ERROR(vlm_config_read_bool_or(section, "tie_word_embeddings", tie_fallback,
                                              &text->tie_word_embeddings));
  return vlm_config_read_dtype(section, &text->dtype);
}

vlm_status vlm_text_config_read(const vlm_config_section *section,
                                const vlm_config_class *config_class, bool tie_fallback,
                                vlm_text_config *out) {
  memset(out, 0, sizeof(*out));
  const vlm_config_record *record = vlm_config_record_find(config_class->model_type);
  const vlm_text_rules *rules = record ? record->text : NULL;
  if (!rules) {
    char names[1024];
    return VLM_ERROR(UNIMPLEMENTED, "%s: %s\"%s\" is not a supported text model (supported: %s)",
                     section->source_name, section->key_prefix, config_class->model_type,
                     vlm_config_record_names(vlm_config_record_is_text, names, sizeof(names)));
  }
  out->section = section->object;
  VLM_RETURN_IF_ERROR(read_names(section, config_class, tie_fallback, out));
  VLM_RETURN_IF_ERROR(read_sizes(section, rules, out));
  VLM_RETURN_IF_ERROR(read_biases(section, rules, config_class, out));
  VLM_RETURN_IF_ERROR(read_attention_scale(section, rules, out));
  VLM_RETURN_IF_ERROR(read_softcapping(section, out));
  VLM_RETURN_IF_ERROR(read_tokens(section, rules, out));
  VLM_RETURN_IF_ERROR(read_layer_types(section, rules, out));
  return vlm_rope_config_read(section, config_class, &rules->rope, out);
}
