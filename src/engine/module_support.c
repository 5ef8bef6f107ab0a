/* See module_support.h. */
#include "engine/module_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu_graph.h"
#include "backends/xla/stablehlo_emitter.h"
#include "backends/xla/stablehlo_encoder.h"
#include "core/status.h"
#include "models/decoder.h"
#include "models/family.h"

typedef vlm_status (*support_fn)(const vlm_graph *graph);

static void record(vlm_status status, bool *out, char *reason, size_t size) {
  *out = status == VLM_OK;
  snprintf(reason, size, "%s", status ? vlm_status_message(status) : "");
  vlm_status_free(status);
}

/* The decoder graph of one contract at a small geometry. */
static vlm_status decoder_graph(const vlm_model *model, const char *module, vlm_graph *graph) {
  VLM_RETURN_IF_ERROR(vlm_model_require_family(model, "the text decoder"));
  if (!model->family->describe_decoder)
    return VLM_ERROR(UNIMPLEMENTED, "model_type '%s' has no decoder graph yet", model->config.model_type);
  vlm_decoder_description description;
  vlm_family_describe_decoder(model->family, &model->config, &description);
  const int32_t rows[2] = {0, 1};
  bool prefill = strcmp(module, "decode") != 0;
  vlm_decoder_step step = {.row_count = 2, .with_features = strcmp(module, "embeddings_prefill") == 0,
                           .logit_rows = rows + (prefill ? 1 : 0), .logit_row_count = prefill ? 1 : 2};
  graph->ropes[0] = NULL;
  return vlm_build_decoder_graph(&description, &step, graph);
}

static void check_module(const vlm_model *model, vlm_module_support *entry) {
  vlm_graph graph;
  vlm_graph_init(&graph);
  vlm_status built;
  vlm_xla_encoder_function encoder;
  bool is_audio = strcmp(entry->module, "audio_encoder") == 0;
  bool is_encoder = is_audio || strcmp(entry->module, "image_encoder") == 0;
  if (is_audio) {
    /* The smallest length bucket's graph has every op of any clip's (a
     * bucket's adds the row masks to those of a clip's own length). */
    const vlm_family_audio *audio = model->family->audio;
    int64_t frames = 16;
    built = audio && audio->encoder_bucket ? audio->encoder_bucket(&model->config, 1, &frames) : VLM_OK;
    if (!built) {
      built = vlm_xla_encoder_function_build_kind(model, VLM_MEDIA_AUDIO, frames, &encoder);
      if (built) vlm_xla_encoder_function_release(&encoder);
    }
  } else if (is_encoder) {
    int64_t buckets[VLM_XLA_MAX_ENCODER_BUCKETS], fixed = -1;
    int count = vlm_xla_encoder_buckets(model, buckets, VLM_XLA_MAX_ENCODER_BUCKETS, &fixed);
    int64_t rows = count ? buckets[0] : fixed;
    built = rows > 0 ? vlm_xla_encoder_function_build(model, rows, &encoder)
                     : VLM_ERROR(UNIMPLEMENTED, "the family's encoder has no row buckets");
    if (built && rows > 0) vlm_xla_encoder_function_release(&encoder);
  } else {
    built = decoder_graph(model, entry->module, &graph);
  }
  const vlm_graph *subject = is_encoder ? &encoder.graph : &graph;
  /* What --backend xla refuses before it builds a graph (quantized
   * weights, dynamic RoPE) is refused here by the same check. */
  vlm_status xla_gate = is_encoder || built ? VLM_OK : vlm_xla_text_decoder_check(model);
  if (built) {
    char reason[256];
    snprintf(reason, sizeof(reason), "%s", vlm_status_message(built));
    record(built, &entry->cpu, entry->cpu_reason, sizeof(entry->cpu_reason));
    entry->xla = false;
    snprintf(entry->xla_reason, sizeof(entry->xla_reason), "%s", reason);
  } else {
    record(vlm_cpu_graph_check(subject), &entry->cpu, entry->cpu_reason, sizeof(entry->cpu_reason));
    record(xla_gate ? xla_gate : vlm_stablehlo_check_graph(subject), &entry->xla, entry->xla_reason,
           sizeof(entry->xla_reason));
    if (is_encoder) vlm_xla_encoder_function_release(&encoder);
  }
  vlm_graph_release(&graph);
}

vlm_status vlm_module_support_check(const vlm_model *model, vlm_module_support *out, int *out_count) {
  memset(out, 0, VLM_MODULE_COUNT * sizeof(*out));
  *out_count = 0;
  static const char *const modules[] = {"token_prefill", "embeddings_prefill", "decode", "image_encoder",
                                        "audio_encoder"};
  for (int i = 0; i < VLM_MODULE_COUNT; i++) {
    if ((i == 3 && !model->config.has_vision) || (i == 4 && !model->config.has_audio)) continue;
    vlm_module_support *entry = &out[(*out_count)++];
    entry->module = modules[i];
    bool missing = (i == 3 && !(model->family && model->family->image)) ||
                   (i == 4 && !(model->family && model->family->audio));
    if (missing) {
      snprintf(entry->cpu_reason, sizeof(entry->cpu_reason), "no %s path for this family yet", i == 3 ? "image" : "audio");
      snprintf(entry->xla_reason, sizeof(entry->xla_reason), "no %s path for this family yet", i == 3 ? "image" : "audio");
      continue;
    }
    check_module(model, entry);
  }
  return VLM_OK;
}
