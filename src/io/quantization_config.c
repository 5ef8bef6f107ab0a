/* See quantization_config.h. Field names and defaults: Transformers 5.23's
 * GPTQConfig and AwqConfig (src/transformers/utils/quantization_config.py). */
#include "io/quantization_config.h"

#include <string.h>

#include "core/status.h"

static vlm_status get_int(const vlm_json_value *object, const char *key, int64_t fallback, const char *source,
                          int64_t *out) {
  const vlm_json_value *value = vlm_json_object_get(object, key);
  *out = fallback;
  if (!value || value->type == VLM_JSON_NULL) return VLM_OK;
  if (!vlm_json_get_int(value, out))
    return VLM_ERROR(INVALID_ARGUMENT, "%s: quantization_config.%s must be an integer", source, key);
  return VLM_OK;
}

static vlm_status get_bool(const vlm_json_value *object, const char *key, bool fallback, const char *source,
                           bool *out) {
  const vlm_json_value *value = vlm_json_object_get(object, key);
  *out = fallback;
  if (!value || value->type == VLM_JSON_NULL) return VLM_OK;
  if (!vlm_json_get_bool(value, out))
    return VLM_ERROR(INVALID_ARGUMENT, "%s: quantization_config.%s must be true or false", source, key);
  return VLM_OK;
}

static const char *get_string(const vlm_json_value *object, const char *key) {
  return vlm_json_get_string(vlm_json_object_get(object, key));
}

static vlm_status parse_common(const vlm_json_value *q, const char *source, vlm_quantization_config *out) {
  int64_t bits = 0, group = 0;
  VLM_RETURN_IF_ERROR(get_int(q, "bits", 4, source, &bits));
  if (bits != 4)
    return VLM_ERROR(UNIMPLEMENTED, "%s: quantization_config: %lld-bit weights (vlm loads 4-bit GPTQ and AWQ)", source,
                     (long long)bits);
  VLM_RETURN_IF_ERROR(get_int(q, "group_size", 128, source, &group));
  if (group != -1 && (group < 1 || group > (1 << 20)))
    return VLM_ERROR(INVALID_ARGUMENT, "%s: quantization_config.group_size %lld", source, (long long)group);
  out->bits = (int)bits;
  out->group_size = group;
  return VLM_OK;
}

static vlm_status parse_unconverted(const vlm_json_value *q, const char *source, vlm_quantization_config *out) {
  const vlm_json_value *list = vlm_json_object_get(q, "modules_to_not_convert");
  if (!list || list->type == VLM_JSON_NULL) return VLM_OK;
  if (list->type != VLM_JSON_ARRAY)
    return VLM_ERROR(INVALID_ARGUMENT, "%s: quantization_config.modules_to_not_convert must be a list", source);
  for (size_t i = 0; i < list->as.array.count; i++) {
    const char *name = vlm_json_get_string(vlm_json_array_get(list, i));
    if (!name) return VLM_ERROR(INVALID_ARGUMENT, "%s: quantization_config.modules_to_not_convert holds a non-string", source);
    if (out->unconverted_count == 32)
      return VLM_ERROR(UNIMPLEMENTED, "%s: quantization_config.modules_to_not_convert: more than 32 entries", source);
    out->unconverted[out->unconverted_count++] = name;
  }
  return VLM_OK;
}

vlm_status vlm_quantization_config_parse(const vlm_json_value *root, const char *source,
                                         vlm_quantization_config *out) {
  memset(out, 0, sizeof(*out));
  const vlm_json_value *q = root ? vlm_json_object_get(root, "quantization_config") : NULL;
  if (!q || q->type == VLM_JSON_NULL) return VLM_OK;
  if (q->type != VLM_JSON_OBJECT) return VLM_ERROR(INVALID_ARGUMENT, "%s: quantization_config must be an object", source);
  const char *method = get_string(q, "quant_method");
  if (!method) return VLM_ERROR(INVALID_ARGUMENT, "%s: quantization_config has no quant_method", source);
  if (strcmp(method, "gptq") == 0) {
    out->method = VLM_QUANT_METHOD_GPTQ;
    VLM_RETURN_IF_ERROR(parse_common(q, source, out));
    VLM_RETURN_IF_ERROR(get_bool(q, "sym", true, source, &out->sym));
    VLM_RETURN_IF_ERROR(get_bool(q, "desc_act", false, source, &out->desc_act));
    /* GPTQModel writes "format", optimum "checkpoint_format". */
    const char *format = get_string(q, "checkpoint_format");
    if (!format) format = get_string(q, "format");
    if (!format || strcmp(format, "gptq") == 0) out->zeros_minus_one = true;
    else if (strcmp(format, "gptq_v2") != 0)
      return VLM_ERROR(UNIMPLEMENTED, "%s: quantization_config: GPTQ checkpoint format '%s' (vlm loads gptq and gptq_v2)",
                       source, format);
    return parse_unconverted(q, source, out);
  }
  if (strcmp(method, "awq") == 0) {
    out->method = VLM_QUANT_METHOD_AWQ;
    VLM_RETURN_IF_ERROR(parse_common(q, source, out));
    bool zero_point = true;
    VLM_RETURN_IF_ERROR(get_bool(q, "zero_point", true, source, &zero_point));
    if (!zero_point)
      return VLM_ERROR(UNIMPLEMENTED, "%s: quantization_config: AWQ without zero points (vlm loads zero_point true)", source);
    const char *version = get_string(q, "version");
    if (version && strcmp(version, "gemm") != 0 && strcmp(version, "GEMM") != 0)
      return VLM_ERROR(UNIMPLEMENTED, "%s: quantization_config: AWQ version '%s' (vlm loads the GEMM layout)", source,
                       version);
    return parse_unconverted(q, source, out);
  }
  return VLM_ERROR(UNIMPLEMENTED, "%s: quantization_config.quant_method '%s' (vlm loads gptq and awq)", source, method);
}
