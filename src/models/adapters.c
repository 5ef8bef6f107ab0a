/* LoRA adapters of a checkpoint directory: PEFT's adapter_config.json and
 * adapter_model.safetensors in one subfolder per adapter the family names
 * ("vision-lora", "speech-lora" for Phi-4-multimodal). The tensors join the
 * model's checkpoint table as "adapters.<subfolder>.<module>.lora_{A,B}.weight"
 * (PEFT stores them under "base_model.model.", the adapter name left out);
 * the decoder graph applies them unmerged (models/decoder.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/file.h"
#include "io/json.h"
#include "models/model.h"

#define ADAPTER_CONFIG_MAX_BYTES (1024 * 1024)

/* r, lora_alpha and use_rslora give the scale; what this implementation
 * does not compute (DoRA, trained biases, fan_in_fan_out layouts, other
 * PEFT types) is refused rather than ignored. */
vlm_status vlm_adapter_config_parse(const char *text, size_t length, const char *path, double *out_scale) {
  if (length > ADAPTER_CONFIG_MAX_BYTES)
    return VLM_ERROR(OUT_OF_RANGE, "%s: %zu bytes, over the %d accepted", path, length, ADAPTER_CONFIG_MAX_BYTES);
  vlm_json_document document;
  VLM_RETURN_IF_ERROR(vlm_json_parse(text, length, NULL, NULL, path, &document));
  const vlm_json_value *root = document.root;
  int64_t rank = 0;
  double alpha = 0;
  bool rslora = false, dora = false, fan_in_fan_out = false;
  const vlm_json_value *type = vlm_json_object_get(root, "peft_type");
  const vlm_json_value *bias = vlm_json_object_get(root, "bias");
  vlm_status status = VLM_OK;
  if (!vlm_json_get_int(vlm_json_object_get(root, "r"), &rank) || rank <= 0 ||
      !vlm_json_get_double(vlm_json_object_get(root, "lora_alpha"), &alpha) || !isfinite(alpha))
    status = VLM_ERROR(DATA_LOSS, "%s: needs a positive integer \"r\" and a number \"lora_alpha\"", path);
  else if (type && !vlm_json_string_equals(type, "LORA"))
    status = VLM_ERROR(UNIMPLEMENTED, "%s: peft_type '%s' is not supported (LORA only)", path,
                       vlm_json_get_string(type) ? vlm_json_get_string(type) : "?");
  else if (bias && !vlm_json_string_equals(bias, "none"))
    status = VLM_ERROR(UNIMPLEMENTED, "%s: adapters with trained biases (bias '%s') are not supported", path,
                       vlm_json_get_string(bias) ? vlm_json_get_string(bias) : "?");
  if (!status) {
    vlm_json_get_bool(vlm_json_object_get(root, "use_rslora"), &rslora);
    vlm_json_get_bool(vlm_json_object_get(root, "use_dora"), &dora);
    vlm_json_get_bool(vlm_json_object_get(root, "fan_in_fan_out"), &fan_in_fan_out);
    if (dora || fan_in_fan_out)
      status = VLM_ERROR(UNIMPLEMENTED, "%s: %s adapters are not supported", path,
                         dora ? "DoRA" : "fan_in_fan_out");
  }
  if (!status) *out_scale = rslora ? alpha / sqrt((double)rank) : alpha / (double)rank;
  vlm_json_document_release(&document);
  return status;
}

static vlm_status read_adapter_config(const char *path, vlm_decoder_adapter *adapter) {
  char *text = NULL;
  size_t length = 0;
  VLM_RETURN_IF_ERROR(vlm_file_read_all(path, ADAPTER_CONFIG_MAX_BYTES, &text, &length));
  vlm_status status = vlm_adapter_config_parse(text, length, path, &adapter->scale);
  free(text);
  return status;
}

vlm_status vlm_model_find_adapters(vlm_model *model, const char *model_dir, vlm_checkpoint_extra_file *out_files,
                                   char (*out_paths)[256], size_t *out_count) {
  *out_count = 0;
  const vlm_family *family = model->family;
  if (!family || family->adapter_count <= 0) return VLM_OK;
  if (family->adapter_count > VLM_DECODER_MAX_ADAPTERS)
    return VLM_ERROR(INTERNAL, "family %s declares %d adapters", family->model_type, family->adapter_count);
  model->adapter_count = family->adapter_count;
  for (int k = 0; k < family->adapter_count; k++) {
    vlm_decoder_adapter *adapter = &model->adapters[k];
    memset(adapter, 0, sizeof(*adapter));
    snprintf(adapter->name, sizeof(adapter->name), "%s", family->adapters[k]);
    snprintf(adapter->prefix, sizeof(adapter->prefix), "adapters.%s.", family->adapters[k]);
    char relative[256], config_name[256];
    snprintf(relative, sizeof(relative), "%s/adapter_model.safetensors", family->adapters[k]);
    snprintf(config_name, sizeof(config_name), "%s/adapter_config.json", family->adapters[k]);
    char *weights = vlm_path_join(model_dir, relative), *config = vlm_path_join(model_dir, config_name);
    vlm_status status = weights && config ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    bool present = !status && vlm_path_exists(weights);
    if (present) status = read_adapter_config(config, adapter);
    free(weights);
    free(config);
    VLM_RETURN_IF_ERROR(status);
    if (!present) continue;
    snprintf(out_paths[*out_count], 256, "%s", relative);
    out_files[*out_count] = (vlm_checkpoint_extra_file){out_paths[*out_count], "base_model.model.", adapter->prefix};
    (*out_count)++;
  }
  return VLM_OK;
}

static bool ends_with(const char *name, const char *suffix) {
  size_t length = strlen(name), tail = strlen(suffix);
  return length > tail && strcmp(name + length - tail, suffix) == 0;
}

/* Every tensor of an adapter is a LoRA A or B weight with its partner (a
 * file PEFT saved otherwise, e.g. with the adapter name in its keys, would
 * otherwise count no module and run as the base model). */
vlm_status vlm_model_count_adapter_modules(vlm_model *model) {
  size_t count = vlm_checkpoint_tensor_count(model->weights);
  for (size_t i = 0; i < count; i++) {
    const vlm_tensor_info *info = vlm_checkpoint_tensor_at(model->weights, i);
    for (int k = 0; k < model->adapter_count; k++) {
      const char *prefix = model->adapters[k].prefix;
      if (strncmp(info->name, prefix, strlen(prefix)) != 0) continue;
      bool a = ends_with(info->name, ".lora_A.weight"), b = ends_with(info->name, ".lora_B.weight");
      if (!a && !b)
        return VLM_ERROR(UNIMPLEMENTED, "adapter '%s': tensor '%s' is not a LoRA lora_A/lora_B weight",
                         model->adapters[k].name, info->stored_name);
      char partner[512];
      size_t stem = strlen(info->name) - strlen(".lora_A.weight");
      snprintf(partner, sizeof(partner), "%.*s.lora_%c.weight", (int)stem, info->name, a ? 'B' : 'A');
      const vlm_tensor_info *other = vlm_checkpoint_find(model->weights, partner);
      if (!other)
        return VLM_ERROR(DATA_LOSS, "adapter '%s': '%s' has no %s", model->adapters[k].name, info->stored_name,
                         a ? "lora_B" : "lora_A");
      if (a && (info->rank != 2 || other->rank != 2 || other->shape[1] != info->shape[0]))
        return VLM_ERROR(DATA_LOSS, "adapter '%s': '%s' and its lora_B do not share a rank",
                         model->adapters[k].name, info->stored_name);
      if (a) model->adapters[k].module_count++;
    }
  }
  return VLM_OK;
}

void vlm_model_describe_adapters(const vlm_model *model, vlm_decoder_description *description) {
  description->weights = model->weights;
  description->adapter_weights = model->weights;
  description->adapter_count = model->adapter_count;
  memcpy(description->adapters, model->adapters, sizeof(model->adapters));
}
