/* See module_support.h. */
#include "engine/module_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/xla/stablehlo_emitter.h"
#include "backends/xla/stablehlo_vision.h"
#include "core/status.h"
#include "models/family.h"

/* The emit the xla backend would run, at a small geometry (what it can
 * lower does not depend on capacity or slots). */
static void check_xla_decoder(const char *model_dir, bool *out_supported, char *reason, size_t size) {
  vlm_xla_text_decoder model;
  vlm_status status = vlm_xla_text_decoder_open(model_dir, &model);
  if (!status) {
    vlm_stablehlo_options geometry = {.slot_count = 1, .capacity = 16, .prefill_chunk = 8};
    char *module = NULL;
    vlm_xla_key key;
    status = vlm_stablehlo_emit_text_decoder(&model, &geometry, &module, &key);
    free(module);
    vlm_xla_text_decoder_release(&model);
  }
  *out_supported = status == VLM_OK;
  snprintf(reason, size, "%s", status ? vlm_status_message(status) : "");
  vlm_status_free(status);
}

/* The emit the xla backend runs for the vision module. */
static void check_xla_vision(const char *model_dir, bool *out_supported, char *reason, size_t size) {
  vlm_xla_vision_encoder *model = calloc(1, sizeof(*model)); /* not moved once open */
  vlm_status status = model ? vlm_xla_vision_encoder_open(model_dir, model)
                            : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (!status) {
    vlm_stablehlo_vision_options options = {.images_per_call = 1};
    char *module = NULL;
    vlm_xla_key key;
    status = vlm_stablehlo_emit_vision_encoder(model, &options, &module, &key);
    free(module);
    vlm_xla_vision_encoder_release(model);
  }
  free(model);
  *out_supported = status == VLM_OK;
  snprintf(reason, size, "%s", status ? vlm_status_message(status) : "");
  vlm_status_free(status);
}

vlm_status vlm_module_support_check(const char *model_dir, vlm_module_support *out, int *out_count) {
  memset(out, 0, VLM_MODULE_COUNT * sizeof(*out));
  *out_count = 0;
  vlm_model_config config;
  VLM_RETURN_IF_ERROR(vlm_model_config_load(model_dir, NULL, &config));
  const vlm_family *family = vlm_family_find(config.model_type);
  bool cpu_text = family && family->describe_decoder;
  bool xla_text = false;
  char reason[256] = "";
  if (cpu_text) check_xla_decoder(model_dir, &xla_text, reason, sizeof(reason));
  else snprintf(reason, sizeof(reason), "model_type '%s' has no decoder graph yet", config.model_type);
  static const char *const text_modules[] = {"token_prefill", "embeddings_prefill", "decode"};
  for (int i = 0; i < 3; i++) {
    vlm_module_support *entry = &out[(*out_count)++];
    entry->module = text_modules[i];
    entry->cpu = cpu_text;
    entry->xla = xla_text;
    snprintf(entry->xla_reason, sizeof(entry->xla_reason), "%s", reason);
  }
  if (config.has_vision) {
    vlm_module_support *entry = &out[(*out_count)++];
    entry->module = "vision_encoder";
    entry->cpu = family && family->describe_vision;
    if (entry->cpu) check_xla_vision(model_dir, &entry->xla, entry->xla_reason, sizeof(entry->xla_reason));
    else snprintf(entry->xla_reason, sizeof(entry->xla_reason), "no vision graph for this family yet");
  }
  vlm_model_config_release(&config);
  return VLM_OK;
}
