/* See stablehlo_encoder.h. */
#include "backends/xla/stablehlo_encoder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/status.h"

int vlm_xla_encoder_buckets(const vlm_model *model, int64_t *out_rows, int capacity, int64_t *out_fixed_rows) {
  *out_fixed_rows = -1;
  const vlm_family_image *path = model->family ? model->family->image : NULL;
  if (!path) return 0;
  if (path->encoder_buckets) {
    int count = path->encoder_buckets(&model->config, &model->processor, out_rows, capacity);
    if (count > 0) return count;
  }
  /* A fixed tower answers without an item. */
  vlm_media_item none = {.kind = VLM_MEDIA_IMAGE};
  int64_t rows = 0;
  vlm_status status = path->encoder_rows(&model->config, &none, &rows);
  if (!status) *out_fixed_rows = rows;
  vlm_status_free(status);
  return 0;
}

vlm_status vlm_xla_encoder_function_build(const vlm_model *model, int64_t rows, vlm_xla_encoder_function *out) {
  return vlm_xla_encoder_function_build_kind(model, VLM_MEDIA_IMAGE, rows, out);
}

vlm_status vlm_xla_encoder_function_build_kind(const vlm_model *model, vlm_media_kind kind, int64_t rows,
                                               vlm_xla_encoder_function *out) {
  memset(out, 0, sizeof(*out));
  out->kind = kind;
  vlm_graph_init(&out->graph);
  bool audio = kind == VLM_MEDIA_AUDIO;
  VLM_RETURN_IF_ERROR(vlm_model_require_family(model, audio ? "the audio encoder" : "the image encoder"));
  if (audio ? !model->family->audio : !model->family->image)
    return VLM_ERROR(UNIMPLEMENTED, "%s: model_type '%s' has no %s path in vlm", model->directory,
                     model->config.model_type, vlm_media_kind_name(kind));
  VLM_RETURN_IF_ERROR(audio ? model->family->audio->build_encoder(&model->config, rows, &out->graph, &out->nodes)
                            : model->family->image->build_encoder(&model->config, rows, &out->graph, &out->nodes));
  out->function.name = "encode";
  out->function.graph = &out->graph;
  out->function.outputs[out->function.output_count++] = out->nodes.output;
  for (int i = 0; i < out->nodes.stage_count && out->function.output_count < VLM_XLA_GRAPH_MAX_OUTPUTS; i++)
    if (out->nodes.stages[i].node != out->nodes.output)
      out->function.outputs[out->function.output_count++] = out->nodes.stages[i].node;
  return VLM_OK;
}

void vlm_xla_encoder_function_release(vlm_xla_encoder_function *function) {
  vlm_graph_release(&function->graph);
  memset(function, 0, sizeof(*function));
}

vlm_status vlm_stablehlo_emit_encoder(const vlm_model *model, const vlm_xla_encoder_function *function,
                                      char **out_module, vlm_xla_key *out_key) {
  memset(out_key, 0, sizeof(*out_key));
  int64_t rows = 0;
  for (int32_t i = 0; i < function->graph.count; i++)
    if (function->graph.nodes[i].op == VLM_OP_INPUT && rows == 0) rows = function->graph.nodes[i].shape[0];
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(out_key, "module", "media_encoder"));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(out_key, "kind", "%s", vlm_media_kind_name(function->kind)));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(out_key, "model_type", "%s", model->config.model_type));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(out_key, "encoder_rows", "%lld", (long long)rows));
  return vlm_stablehlo_emit_graph_module("vlm_media_encoder",
                                         "// vlm media encoder: StableHLO emitted from the family's encoder graph\n"
                                         "// (src/backends/xla/stablehlo_encoder.h).\n",
                                         &function->function, 1, model->weights, out_key, out_module);
}

vlm_status vlm_xla_encoder_prepare_artifact(const vlm_model *model, const vlm_xla_encoder_function *function,
                                            vlm_xla_target target, const char *cache_dir, bool compile_if_missing,
                                            FILE *progress, char *out_artifact_dir, size_t size,
                                            vlm_xla_key *out_key, bool *out_compiled) {
  if (out_compiled) *out_compiled = false;
  char default_cache[VLM_XLA_PATH_LENGTH];
  if (!cache_dir) {
    vlm_xla_default_cache_dir(default_cache, sizeof(default_cache));
    cache_dir = default_cache;
  }
  char *module = NULL;
  vlm_xla_key key;
  vlm_iree_compiler compiler;
  VLM_RETURN_IF_ERROR(vlm_stablehlo_emit_encoder(model, function, &module, out_key));
  key = *out_key;
  vlm_status status = vlm_iree_compiler_find(&compiler);
  if (!status) status = vlm_xla_key_add_target(&key, compiler.version, target);
  if (!status) {
    vlm_xla_artifact_dir(cache_dir, &key, out_artifact_dir, size);
    vlm_status check = vlm_xla_artifact_check(out_artifact_dir, &key);
    if (check && !compile_if_missing) {
      status = vlm_status_annotate(check, "no usable xla artifact for the %s %s encoder (%s encoder rows); run "
                                   "`vlm compile --model DIR --backend xla` first",
                                   model->config.model_type, vlm_media_kind_name(function->kind),
                                   vlm_xla_key_get(&key, "encoder_rows"));
    } else if (check) {
      vlm_status_free(check);
      if (progress)
        fprintf(progress, "vlm: compiling the %s encoder for the xla backend (%s, %s encoder rows); cached for "
                "next time\n", vlm_media_kind_name(function->kind), vlm_xla_target_name(target),
                vlm_xla_key_get(&key, "encoder_rows"));
      status = vlm_xla_compile(&compiler, module, &key, target, cache_dir, progress, out_artifact_dir, size);
      if (!status && out_compiled) *out_compiled = true;
    } else {
      VLM_LOG_INFOF("xla: media_encoder module (%s encoder rows) from the cache: %s",
                    vlm_xla_key_get(&key, "encoder_rows"), out_artifact_dir);
    }
  }
  free(module);
  return status;
}
