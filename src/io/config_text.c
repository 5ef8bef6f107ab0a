/* Text decoders: the typed fields, and the values Transformers derives in
 * each class's __post_init__ (head_dim, num_key_value_heads, layer_types,
 * sliding_window) or in its modeling code (attention biases and scale). */
#include <math.h>
#include <string.h>

#include "core/status.h"
#include "io/config_families.h"
#include "io/config_rope.h"

/* How a family's modeling code sizes the heads. */
typedef enum head_dim_rule {
  /* config.head_dim when set, else hidden_size // num_attention_heads
   * (LlamaConfig.__post_init__; getattr(config, "head_dim", ...) in Qwen2). */
  HEAD_DIM_FIELD_OR_DERIVED,
  /* Qwen2VLTextAttention: hidden_size // num_heads, config.head_dim ignored. */
  HEAD_DIM_ALWAYS_DERIVED,
} head_dim_rule;

/* Where the attention projections' biases come from. */
typedef enum bias_rule {
  BIAS_FIELD_ALL,  /* attention_bias on q, k, v and o (Llama, Qwen3, Gemma) */
  BIAS_FIELD_QKV,  /* attention_bias on q, k, v; o never (Molmo2) */
  BIAS_QKV_ALWAYS, /* Qwen2Attention: bias=True on q, k, v, False on o */
  BIAS_NONE,       /* Mistral, Phi-4: bias=False everywhere */
} bias_rule;

/* Which layers use a sliding window. */
typedef enum layer_rule {
  LAYERS_ALL_FULL,
  LAYERS_ALL_SLIDING_WHEN_WINDOW, /* Mistral/Phi-4: sliding_window applies to every layer */
  LAYERS_QWEN2,                   /* use_sliding_window + max_window_layers */
  LAYERS_GEMMA3,                  /* every sliding_window_pattern-th layer is full */
  LAYERS_GEMMA3N,                 /* every 5th layer is full */
} layer_rule;

/* The multiplier of q.k in the attention softmax. */
typedef enum scale_rule {
  SCALE_HEAD_DIM,              /* head_dim ** -0.5 */
  SCALE_QUERY_PRE_ATTN_SCALAR, /* Gemma3Attention: query_pre_attn_scalar ** -0.5 */
  SCALE_ONE,                   /* Gemma3nAttention: 1.0 (q and k are RMS-normed) */
} scale_rule;

typedef struct text_family {
  const char *model_type;
  head_dim_rule head_dim;
  bias_rule bias;
  vlm_rope_style rope;
  layer_rule layers;
  scale_rule scale;
  bool per_layer_intermediate_size; /* Gemma3nTextConfig: int or one per layer */
} text_family;

static const text_family text_families[] = {
    {"llama", HEAD_DIM_FIELD_OR_DERIVED, BIAS_FIELD_ALL, VLM_ROPE_STYLE_STANDARD,
     LAYERS_ALL_FULL, SCALE_HEAD_DIM, false},
    {"mistral", HEAD_DIM_FIELD_OR_DERIVED, BIAS_NONE, VLM_ROPE_STYLE_STANDARD,
     LAYERS_ALL_SLIDING_WHEN_WINDOW, SCALE_HEAD_DIM, false},
    {"qwen2", HEAD_DIM_FIELD_OR_DERIVED, BIAS_QKV_ALWAYS, VLM_ROPE_STYLE_STANDARD, LAYERS_QWEN2,
     SCALE_HEAD_DIM, false},
    {"qwen3", HEAD_DIM_FIELD_OR_DERIVED, BIAS_FIELD_ALL, VLM_ROPE_STYLE_STANDARD, LAYERS_QWEN2,
     SCALE_HEAD_DIM, false},
    {"qwen2_vl_text", HEAD_DIM_ALWAYS_DERIVED, BIAS_QKV_ALWAYS, VLM_ROPE_STYLE_QWEN2_VL,
     LAYERS_QWEN2, SCALE_HEAD_DIM, false},
    {"qwen2_5_vl_text", HEAD_DIM_ALWAYS_DERIVED, BIAS_QKV_ALWAYS, VLM_ROPE_STYLE_QWEN2_VL,
     LAYERS_QWEN2, SCALE_HEAD_DIM, false},
    {"qwen3_vl_text", HEAD_DIM_FIELD_OR_DERIVED, BIAS_FIELD_ALL, VLM_ROPE_STYLE_QWEN3_VL,
     LAYERS_ALL_FULL, SCALE_HEAD_DIM, false},
    {"qwen3_vl_moe_text", HEAD_DIM_FIELD_OR_DERIVED, BIAS_FIELD_ALL, VLM_ROPE_STYLE_QWEN3_VL,
     LAYERS_ALL_FULL, SCALE_HEAD_DIM, false},
    {"gemma3_text", HEAD_DIM_FIELD_OR_DERIVED, BIAS_FIELD_ALL, VLM_ROPE_STYLE_GEMMA,
     LAYERS_GEMMA3, SCALE_QUERY_PRE_ATTN_SCALAR, false},
    {"gemma3n_text", HEAD_DIM_FIELD_OR_DERIVED, BIAS_FIELD_ALL, VLM_ROPE_STYLE_GEMMA,
     LAYERS_GEMMA3N, SCALE_ONE, true},
    {"phi4_multimodal", HEAD_DIM_FIELD_OR_DERIVED, BIAS_NONE, VLM_ROPE_STYLE_PHI4,
     LAYERS_ALL_SLIDING_WHEN_WINDOW, SCALE_HEAD_DIM, false},
    {"molmo2_text", HEAD_DIM_FIELD_OR_DERIVED, BIAS_FIELD_QKV, VLM_ROPE_STYLE_STANDARD,
     LAYERS_ALL_FULL, SCALE_HEAD_DIM, false},
};

#define FAMILY_COUNT (sizeof(text_families) / sizeof(text_families[0]))

static const text_family *find_family(const char *model_type) {
  for (size_t i = 0; model_type && i < FAMILY_COUNT; i++)
    if (strcmp(text_families[i].model_type, model_type) == 0) return &text_families[i];
  return NULL;
}

bool vlm_config_is_text_model_type(const char *model_type) {
  return find_family(model_type) != NULL;
}

const char *vlm_config_text_model_types(void) {
  return "llama, mistral, qwen2, qwen3, qwen2_vl_text, qwen2_5_vl_text, qwen3_vl_text, "
         "qwen3_vl_moe_text, gemma3_text, gemma3n_text, phi4_multimodal, molmo2_text";
}

/* ---------------------------------------------------------------------- */
/* Sizes                                                                   */
/* ---------------------------------------------------------------------- */

static vlm_status read_intermediate_sizes(const vlm_config_section *section,
                                          const text_family *family, vlm_text_config *out) {
  int64_t *sizes = vlm_config_storage_allocate(
      section->storage, (size_t)out->num_hidden_layers * sizeof(int64_t), _Alignof(int64_t));
  if (!sizes) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory reading a config");
  const vlm_json_value *value = vlm_config_get(section, "intermediate_size");
  if (family->per_layer_intermediate_size && value && value->type == VLM_JSON_ARRAY) {
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

static vlm_status read_head_dim(const vlm_config_section *section, const text_family *family,
                                vlm_text_config *out) {
  int64_t head_dim = 0;
  if (family->head_dim == HEAD_DIM_FIELD_OR_DERIVED)
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

static vlm_status read_heads(const vlm_config_section *section, const text_family *family,
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
  return read_head_dim(section, family, out);
}

static vlm_status read_sizes(const vlm_config_section *section, const text_family *family,
                             vlm_text_config *out) {
  VLM_RETURN_IF_ERROR(
      vlm_config_read_int(section, "vocab_size", 1, VLM_CONFIG_MAX_VOCAB_SIZE, &out->vocab_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "hidden_size", 1, VLM_CONFIG_MAX_DIMENSION,
                                          &out->hidden_size));
  VLM_RETURN_IF_ERROR(vlm_config_read_int(section, "num_hidden_layers", 1,
                                          VLM_CONFIG_MAX_LAYERS, &out->num_hidden_layers));
  VLM_RETURN_IF_ERROR(read_intermediate_sizes(section, family, out));
  VLM_RETURN_IF_ERROR(read_heads(section, family, out));
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
static vlm_status derive_qwen2_layers(const vlm_config_section *section, vlm_text_config *text,
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
 * of sliding_window_pattern (a bare kwarg, 6 when absent); Gemma 3n's
 * pattern is fixed at 5. */
static vlm_status derive_gemma_layers(const vlm_config_section *section, int64_t pattern,
                                      vlm_text_config *text, vlm_layer_attention *kinds) {
  if (pattern == 0)
    VLM_RETURN_IF_ERROR(vlm_config_read_int_or(section, "sliding_window_pattern", 1,
                                               VLM_CONFIG_MAX_LAYERS, 6, &pattern));
  for (int64_t i = 0; i < text->num_hidden_layers; i++)
    kinds[i] = (i + 1) % pattern ? VLM_LAYER_ATTENTION_SLIDING : VLM_LAYER_ATTENTION_FULL;
  return VLM_OK;
}

static vlm_status derive_layer_types(const vlm_config_section *section,
                                     const text_family *family, vlm_text_config *text,
                                     vlm_layer_attention *kinds) {
  switch (family->layers) {
    case LAYERS_QWEN2:
      return derive_qwen2_layers(section, text, kinds);
    case LAYERS_GEMMA3:
      return derive_gemma_layers(section, 0, text, kinds);
    case LAYERS_GEMMA3N:
      return derive_gemma_layers(section, 5, text, kinds);
    case LAYERS_ALL_SLIDING_WHEN_WINDOW:
      for (int64_t i = 0; i < text->num_hidden_layers; i++)
        kinds[i] = text->sliding_window ? VLM_LAYER_ATTENTION_SLIDING : VLM_LAYER_ATTENTION_FULL;
      return VLM_OK;
    case LAYERS_ALL_FULL:
      break;
  }
  for (int64_t i = 0; i < text->num_hidden_layers; i++) kinds[i] = VLM_LAYER_ATTENTION_FULL;
  return VLM_OK;
}

static vlm_status read_family_window(const vlm_config_section *section,
                                     const text_family *family, vlm_text_config *text) {
  if (family->layers == LAYERS_ALL_FULL) return VLM_OK;
  if (family->layers == LAYERS_QWEN2) {
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

static vlm_status read_layer_types(const vlm_config_section *section, const text_family *family,
                                   vlm_text_config *text) {
  vlm_layer_attention *kinds = vlm_config_storage_allocate(
      section->storage, (size_t)text->num_hidden_layers * sizeof(*kinds), _Alignof(vlm_layer_attention));
  if (!kinds) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory reading a config");
  VLM_RETURN_IF_ERROR(read_family_window(section, family, text));
  bool explicit_types = false;
  /* Mistral ignores layer_types (MistralConfig warns and keeps one window
   * for every layer), and so do the families without sliding layers. */
  if (family->layers != LAYERS_ALL_FULL && family->layers != LAYERS_ALL_SLIDING_WHEN_WINDOW)
    VLM_RETURN_IF_ERROR(read_explicit_layer_types(section, text, kinds, &explicit_types));
  if (!explicit_types) VLM_RETURN_IF_ERROR(derive_layer_types(section, family, text, kinds));
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

static vlm_status read_biases(const vlm_config_section *section, const text_family *family,
                              const vlm_config_class *config_class, vlm_text_config *text) {
  bool field = false;
  if (family->bias == BIAS_FIELD_ALL || family->bias == BIAS_FIELD_QKV)
    VLM_RETURN_IF_ERROR(vlm_config_read_bool_or(section, "attention_bias", false, &field));
  text->attention_bias = family->bias == BIAS_QKV_ALWAYS || field;
  text->attention_output_bias = family->bias == BIAS_FIELD_ALL && field;
  text->mlp_bias = false;
  if (vlm_config_class_has_field(config_class, "mlp_bias"))
    VLM_RETURN_IF_ERROR(vlm_config_read_bool_or(section, "mlp_bias", false, &text->mlp_bias));
  return VLM_OK;
}

static vlm_status read_attention_scale(const vlm_config_section *section,
                                       const text_family *family, vlm_text_config *text) {
  text->attention_scale = 1.0 / sqrt((double)text->head_dim);
  if (family->scale == SCALE_ONE) text->attention_scale = 1.0;
  if (family->scale != SCALE_QUERY_PRE_ATTN_SCALAR) return VLM_OK;
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

static vlm_status read_tokens(const vlm_config_section *section, const text_family *family,
                              vlm_text_config *text) {
  VLM_RETURN_IF_ERROR(vlm_config_read_token_id(section, "bos_token_id", &text->bos_token_id));
  VLM_RETURN_IF_ERROR(vlm_config_read_token_id(section, "pad_token_id", &text->pad_token_id));
  VLM_RETURN_IF_ERROR(vlm_config_read_token_ids(section, "eos_token_id", &text->eos_token_ids));
  /* Phi4MultimodalConfig.__post_init__: eos_token_id or [199999, 200020]. */
  if (family->rope == VLM_ROPE_STYLE_PHI4 && text->eos_token_ids.count == 0)
    text->eos_token_ids = (vlm_token_id_list){{199999, 200020}, 2};
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
  const text_family *family = find_family(config_class->model_type);
  if (!family)
    return VLM_ERROR(UNIMPLEMENTED, "%s: %s\"%s\" is not a supported text model (supported: %s)",
                     section->source_name, section->key_prefix, config_class->model_type,
                     vlm_config_text_model_types());
  out->section = section->object;
  VLM_RETURN_IF_ERROR(read_names(section, config_class, tie_fallback, out));
  VLM_RETURN_IF_ERROR(read_sizes(section, family, out));
  VLM_RETURN_IF_ERROR(read_biases(section, family, config_class, out));
  VLM_RETURN_IF_ERROR(read_attention_scale(section, family, out));
  VLM_RETURN_IF_ERROR(read_softcapping(section, out));
  VLM_RETURN_IF_ERROR(read_tokens(section, family, out));
  VLM_RETURN_IF_ERROR(read_layer_types(section, family, out));
  return vlm_rope_config_read(section, config_class, family->rope, out);
}
