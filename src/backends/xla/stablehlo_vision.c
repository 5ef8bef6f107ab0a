/* The vision module (stablehlo_vision.h): the vision graph for B images,
 * built by the same builder the cpu backend uses, lowered node by node
 * (stablehlo_lower.c, stablehlo_lower_encoder.c) into one `encode`
 * function, plus `compatibility` and the module attributes. */
#include "backends/xla/stablehlo_vision.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/xla/stablehlo_internal.h"
#include "core/status.h"

/* ---------------------------------------------------------------------- */
/* Opening a model                                                         */
/* ---------------------------------------------------------------------- */

vlm_status vlm_xla_vision_encoder_open(const char *model_dir, vlm_xla_vision_encoder *out_model) {
  memset(out_model, 0, sizeof(*out_model));
  VLM_RETURN_IF_ERROR(vlm_model_config_load(model_dir, NULL, &out_model->config));
  vlm_status status = VLM_OK;
  out_model->family = vlm_family_find(out_model->config.model_type);
  if (!out_model->family || !out_model->family->describe_vision)
    status = VLM_ERROR(UNIMPLEMENTED, "%s: model_type '%s' has no vision path in vlm", model_dir,
                       out_model->config.model_type);
  if (!status) status = out_model->family->describe_vision(&out_model->config, &out_model->description);
  if (!status) {
    vlm_checkpoint_options options = {.renames = out_model->family->renames,
                                      .rename_count = out_model->family->rename_count};
    status = vlm_checkpoint_open(model_dir, &options, &out_model->weights);
  }
  if (status) vlm_xla_vision_encoder_release(out_model);
  return status;
}

void vlm_xla_vision_encoder_release(vlm_xla_vision_encoder *model) {
  vlm_checkpoint_release(model->weights);
  if (model->config.model_type) vlm_model_config_release(&model->config);
  memset(model, 0, sizeof(*model));
}

int64_t vlm_xla_vision_tokens_per_image(const vlm_xla_vision_encoder *model) {
  return vlm_vision_tokens_per_image(&model->description);
}

int64_t vlm_xla_vision_projected_width(const vlm_xla_vision_encoder *model) {
  return model->description.text_hidden_size;
}

int64_t vlm_xla_vision_features_width(const vlm_xla_vision_encoder *model) {
  return model->description.vision->hidden_size * model->description.feature_layer_count;
}

/* ---------------------------------------------------------------------- */
/* The compatibility key                                                   */
/* ---------------------------------------------------------------------- */

/* Everything of the vision config and description that shapes the graph. */
static uint64_t config_hash(const vlm_xla_vision_encoder *model) {
  const vlm_vision_description *description = &model->description;
  const vlm_vision_config *vision = description->vision;
  vlm_string_builder out = {0};
  vlm_sb_appendf(&out, "%s|%lld|%lld|%lld|%lld|%lld|%lldx%lld|%lld|%s|%.17g|%s|%s|", model->config.model_type,
                 (long long)vision->hidden_size, (long long)vision->intermediate_size,
                 (long long)vision->num_hidden_layers, (long long)vision->num_attention_heads,
                 (long long)vision->num_channels, (long long)vision->image_height, (long long)vision->image_width,
                 (long long)vision->patch_size, vision->hidden_act ? vision->hidden_act : "",
                 vision->layer_norm_eps, description->tower_prefix, description->projector_prefix);
  for (int i = 0; i < description->feature_layer_count; i++)
    vlm_sb_appendf(&out, "f%lld,", (long long)description->feature_layers[i]);
  vlm_sb_appendf(&out, "|%d|%d|%d|%lld", description->keep_class_token, (int)description->projector_activation,
                 description->projector_bias, (long long)description->text_hidden_size);
  char *signature = vlm_sb_finish(&out);
  uint64_t hash = signature ? vlm_fnv1a64(signature, strlen(signature), VLM_FNV1A64_SEED) : 0;
  free(signature);
  return hash;
}

static vlm_status build_key(const vlm_xla_vision_encoder *model, const vlm_stablehlo_vision_options *options,
                            const xla_weight_list *weights, vlm_xla_key *key) {
  const vlm_vision_description *description = &model->description;
  const vlm_vision_config *vision = description->vision;
  memset(key, 0, sizeof(*key));
  uint64_t weights_hash;
  char weight_dtypes[32], layers[96] = "";
  xla_weights_signature(model->weights, weights, &weights_hash, weight_dtypes, sizeof(weight_dtypes));
  for (int i = 0; i < description->feature_layer_count; i++) {
    size_t used = strlen(layers);
    snprintf(layers + used, sizeof(layers) - used, "%s%lld", i ? "," : "", (long long)description->feature_layers[i]);
  }
  int64_t tokens = vlm_xla_vision_tokens_per_image(model);
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "contract_version", "%d", VLM_XLA_VISION_CONTRACT_VERSION));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "emitter_version", "%d", VLM_XLA_VISION_EMITTER_VERSION));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "module", "vision_encoder"));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "model_type", "%s", model->config.model_type));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "config_hash", "%016llx", (unsigned long long)config_hash(model)));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "weights_signature", "%016llx", (unsigned long long)weights_hash));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "dtype", "compute=f32,weights=%s", weight_dtypes));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "image_size", "%lldx%lldx%lld", (long long)vision->num_channels,
                                      (long long)vision->image_height, (long long)vision->image_width));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "patch_size", "%lld", (long long)vision->patch_size));
  /* Indices into hidden_states (0 = embeddings), already non-negative. */
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "feature_layers", "%s", layers));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "select_strategy", "%s", description->keep_class_token ? "full" : "default"));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "images_per_call", "%d", options->images_per_call));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "outputs", "projected=f32[%lld,%lld],features=f32[%lld,%lld]",
                                      (long long)(options->images_per_call * tokens),
                                      (long long)vlm_xla_vision_projected_width(model),
                                      (long long)(options->images_per_call * tokens),
                                      (long long)vlm_xla_vision_features_width(model)));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "input_layout", "patches[channel,row,column],token_order,position_ids,segments"));
  VLM_RETURN_IF_ERROR(vlm_xla_key_set(key, "side_inputs", "none"));
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* encode                                                                  */
/* ---------------------------------------------------------------------- */

#define MAX_GRAPH_INPUTS 8

static const char *element_name(vlm_dtype dtype) { return dtype == VLM_DTYPE_I32 ? "i32" : "f32"; }

/* encode(<one argument per graph input, in graph order>) -> (projected,
 * features). Arguments are named %input0, %input1, ... (node names have
 * dots); vlm_xla_vision_runtime binds them in the same order. */
static vlm_status lower_encode(xla_emitter *e, const vlm_vision_graph_nodes *nodes) {
  const vlm_graph *graph = e->graph;
  VLM_RETURN_IF_ERROR(vlm_stablehlo_check_graph(graph));
  const char *names[MAX_GRAPH_INPUTS];
  xla_value arguments[MAX_GRAPH_INPUTS];
  int count = 0;
  for (int32_t i = 0; i < graph->count; i++) {
    const vlm_node *node = &graph->nodes[i];
    if (node->op != VLM_OP_INPUT) continue;
    if (count == MAX_GRAPH_INPUTS) return VLM_ERROR(UNIMPLEMENTED, "xla emitter: more than %d graph inputs", count);
    char argument[16];
    snprintf(argument, sizeof(argument), "input%d", count);
    names[count] = node->name;
    arguments[count++] = xla_argument(argument, element_name(node->dtype), node->rank, node->shape);
  }
  e->input_names = names;
  e->input_values = arguments;
  e->input_count = count;
  e->nodes = calloc((size_t)graph->count, sizeof(*e->nodes));
  e->nodes_f32 = calloc((size_t)graph->count, sizeof(*e->nodes_f32));
  vlm_status status = e->nodes && e->nodes_f32 ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (!status) {
    const vlm_node *projected = &graph->nodes[nodes->projector], *features = &graph->nodes[nodes->features];
    xla_value results[2] = {xla_make_value("f32", projected->rank, projected->shape),
                            xla_make_value("f32", features->rank, features->shape)};
    char type[160], projected_type[160], features_type[160];
    xla_type_text(&results[0], projected_type, sizeof(projected_type));
    xla_type_text(&results[1], features_type, sizeof(features_type));
    vlm_sb_appendf(e->out, "  func.func @encode(");
    for (int i = 0; i < count; i++) {
      xla_type_text(&arguments[i], type, sizeof(type));
      vlm_sb_appendf(e->out, "%s%s: %s", i ? ", " : "", arguments[i].name, type);
    }
    vlm_sb_appendf(e->out, ") -> (%s, %s) {\n", projected_type, features_type);
    for (int32_t i = 0; !status && i < graph->count; i++) status = xla_lower_node(e, i);
    if (!status)
      vlm_sb_appendf(e->out, "    return %s, %s : %s, %s\n  }\n\n", e->nodes[nodes->projector].name,
                     e->nodes[nodes->features].name, projected_type, features_type);
  }
  free(e->nodes);
  free(e->nodes_f32);
  e->nodes = e->nodes_f32 = NULL;
  e->input_count = 0;
  return status;
}

static vlm_status emit_encode(const vlm_xla_vision_encoder *model, const vlm_stablehlo_vision_options *options,
                              vlm_string_builder *functions, xla_weight_list *weights) {
  vlm_graph graph;
  vlm_graph_init(&graph);
  vlm_vision_graph_nodes nodes;
  vlm_status status = vlm_build_vision_graph(&model->description, options->images_per_call, &graph, &nodes);
  if (!status) {
    /* No text config and no decoder options: the vision ops never read them. */
    xla_emitter e = {.out = functions, .kind = XLA_GRAPH_FUNCTION, .graph = &graph, .weights = model->weights,
                     .declared = weights, .rows = graph.nodes[nodes.projector].shape[0]};
    status = lower_encode(&e, &nodes);
  }
  vlm_graph_release(&graph);
  return status;
}

vlm_status vlm_stablehlo_emit_vision_encoder(const vlm_xla_vision_encoder *model,
                                             const vlm_stablehlo_vision_options *options, char **out_module,
                                             vlm_xla_key *out_key) {
  *out_module = NULL;
  vlm_stablehlo_vision_options resolved = options ? *options : (vlm_stablehlo_vision_options){0};
  if (resolved.images_per_call == 0) resolved.images_per_call = 1;
  if (resolved.images_per_call < 0 || resolved.images_per_call > 64)
    return VLM_ERROR(INVALID_ARGUMENT, "xla emitter: %d images per call (1..64)", resolved.images_per_call);
  xla_weight_list weights = {.items = calloc(XLA_MAX_WEIGHTS, sizeof(xla_weight))};
  vlm_string_builder functions = {0}, module = {0};
  vlm_status status = weights.items ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (!status) status = emit_encode(model, &resolved, &functions, &weights);
  vlm_xla_key key;
  if (!status) status = build_key(model, &resolved, &weights, &key);
  if (!status) {
    xla_emit_compatibility(&functions, VLM_XLA_VISION_CONTRACT_VERSION, VLM_XLA_VISION_EMITTER_VERSION,
                           vlm_xla_key_hash(&key));
    xla_emit_module_header(&module, "vlm_vision_encoder",
                           "// vlm vision encoder: StableHLO emitted from the shared vision graph\n"
                           "// (src/backends/xla/stablehlo_vision.h describes the function and layout).\n",
                           VLM_XLA_VISION_CONTRACT_VERSION, VLM_XLA_VISION_EMITTER_VERSION, &key, model->weights,
                           &weights);
    vlm_sb_appendf(&module, "\n");
    char *text = vlm_sb_finish(&functions);
    if (text) vlm_sb_append(&module, text, strlen(text));
    else module.failed = true;
    free(text);
    vlm_sb_appendf(&module, "}\n");
    *out_module = vlm_sb_finish(&module);
    if (!*out_module) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory emitting the vision module");
  }
  vlm_sb_release(&functions);
  vlm_sb_release(&module);
  free(weights.items);
  if (!status && out_key) *out_key = key;
  return status;
}

/* ---------------------------------------------------------------------- */
/* Finding or compiling the artifact                                       */
/* ---------------------------------------------------------------------- */

vlm_status vlm_xla_vision_prepare_artifact(const vlm_xla_vision_encoder *model,
                                           const vlm_stablehlo_vision_options *options, vlm_xla_target target,
                                           const char *cache_dir, bool compile_if_missing, FILE *progress,
                                           char *out_artifact_dir, size_t size) {
  char default_cache[VLM_XLA_PATH_LENGTH];
  if (!cache_dir) {
    vlm_xla_default_cache_dir(default_cache, sizeof(default_cache));
    cache_dir = default_cache;
  }
  char *module = NULL;
  vlm_xla_key key;
  vlm_iree_compiler compiler;
  VLM_RETURN_IF_ERROR(vlm_stablehlo_emit_vision_encoder(model, options, &module, &key));
  vlm_status status = vlm_iree_compiler_find(&compiler);
  if (!status) status = vlm_xla_key_add_target(&key, compiler.version, target);
  if (!status) {
    vlm_xla_artifact_dir(cache_dir, &key, out_artifact_dir, size);
    vlm_status check = vlm_xla_artifact_check(out_artifact_dir, &key);
    if (check && !compile_if_missing) {
      status = vlm_status_annotate(check, "no usable xla artifact for the %s vision encoder (%s images per call); "
                                   "run `vlm compile --model DIR --backend xla` first",
                                   model->config.model_type, vlm_xla_key_get(&key, "images_per_call"));
    } else if (check) {
      vlm_status_free(check);
      if (progress)
        fprintf(progress, "vlm: compiling the vision encoder for the xla backend (%s, %s image(s) per call); "
                "cached for next time\n", vlm_xla_target_name(target), vlm_xla_key_get(&key, "images_per_call"));
      status = vlm_xla_compile(&compiler, module, &key, target, cache_dir, progress, out_artifact_dir, size);
    }
  }
  free(module);
  return status;
}
