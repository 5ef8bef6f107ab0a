/* The decoder blocks of blocks.h: each adds the nodes of one Transformers
 * module's forward, named after the module ("model.layers.3.self_attn.q_proj"),
 * so goldens captured with forward hooks compare by name. The described
 * loop (decoder.c) and every family's own decoder are written on these; a
 * change here changes every decoder, which tests/test_decoder_digests.c
 * guards bit for bit. */
#include <stdio.h>

#include "core/status.h"
#include "models/blocks.h"
#include "models/decoder.h"

vlm_status vlm_decoder_blocks_begin(const vlm_decoder_description *description, const vlm_decoder_step *step,
                                    vlm_graph *graph, vlm_decoder_blocks *out) {
  const vlm_text_config *text = description->text;
  *out = (vlm_decoder_blocks){.description = description, .step = step, .text = text, .graph = graph,
                              .activation = VLM_ACTIVATION_SILU};
  if (description->adapter_count > VLM_DECODER_MAX_ADAPTERS ||
      (description->adapter_count > 0 && !description->adapter_weights))
    return VLM_ERROR(INTERNAL, "text decoder: %d adapters without their weights", description->adapter_count);
  for (int k = 0; k < VLM_DECODER_MAX_ADAPTERS; k++) out->lora_masks[k] = -1;
  if (!vlm_activation_from_name(text->hidden_act, &out->activation))
    return VLM_ERROR(UNIMPLEMENTED, "text decoder: activation '%s' is not supported", text->hidden_act);
  if (step->row_count <= 0 || step->logit_row_count < 0)
    return VLM_ERROR(INVALID_ARGUMENT, "text decoder: a step needs at least one row");
  if (description->merge != VLM_FEATURE_MERGE_REPLACE && description->merge != VLM_FEATURE_MERGE_ADD)
    return VLM_ERROR(INTERNAL, "text decoder: unknown feature merge mode %d", (int)description->merge);
  graph->ropes[0] = &text->rope;
  graph->ropes[1] = text->has_sliding_rope ? &text->sliding_rope : &text->rope;
  graph->rope_count = 2;
  return VLM_OK;
}

void vlm_decoder_blocks_lora_inputs(vlm_decoder_blocks *blocks) {
  static const char *const names[VLM_DECODER_MAX_ADAPTERS] = {"lora_mask.0", "lora_mask.1", "lora_mask.2",
                                                              "lora_mask.3"};
  const vlm_decoder_step *step = blocks->step;
  for (int k = 0; k < blocks->description->adapter_count; k++)
    if (step->adapters_used && step->adapters_used[k])
      blocks->lora_masks[k] = vlm_graph_input(blocks->graph, VLM_DTYPE_I32, 1, VLM_SHAPE(step->row_count),
                                              names[k]);
}

vlm_status vlm_decoder_blocks_check_adapters(const vlm_decoder_blocks *blocks) {
  const vlm_decoder_description *description = blocks->description;
  for (int k = 0; k < description->adapter_count; k++)
    if (blocks->lora_masks[k] >= 0 && blocks->lora_applied[k] != description->adapters[k].module_count)
      return VLM_ERROR(INVALID_ARGUMENT,
                       "adapter '%s': %lld of its %lld LoRA modules are projections of this decoder",
                       description->adapters[k].name, (long long)blocks->lora_applied[k],
                       (long long)description->adapters[k].module_count);
  return VLM_OK;
}

int32_t vlm_block_weight(vlm_decoder_blocks *blocks, const char *prefix, const char *suffix, int rank,
                         const int64_t *shape) {
  char name[2 * VLM_GRAPH_NAME_LENGTH]; /* the graph refuses names too long */
  snprintf(name, sizeof(name), "%s%s", prefix, suffix);
  return vlm_graph_weight(blocks->graph, name, VLM_DTYPE_INVALID, rank, shape);
}

int32_t vlm_block_lora(vlm_decoder_blocks *blocks, int32_t x, int32_t base, const char *module_name, int k,
                       int64_t out, int64_t in) {
  const vlm_decoder_adapter *adapter = &blocks->description->adapters[k];
  char name[2 * VLM_GRAPH_NAME_LENGTH];
  snprintf(name, sizeof(name), "%s%s.lora_A.weight", adapter->prefix, module_name);
  const vlm_tensor_info *a_info = vlm_checkpoint_find(blocks->description->adapter_weights, name);
  if (!a_info) return base;
  blocks->lora_applied[k]++;
  int64_t rank = a_info->rank == 2 ? a_info->shape[0] : 0;
  vlm_graph *graph = blocks->graph;
  int32_t a = vlm_graph_weight(graph, name, VLM_DTYPE_INVALID, 2, VLM_SHAPE(rank, in));
  snprintf(name, sizeof(name), "%s%s.lora_B.weight", adapter->prefix, module_name);
  int32_t b = vlm_graph_weight(graph, name, VLM_DTYPE_INVALID, 2, VLM_SHAPE(out, rank));
  int32_t down = vlm_graph_linear(graph, x, a, -1, "%s.lora.%s.A", module_name, adapter->name);
  int32_t up = vlm_graph_linear(graph, down, b, -1, "%s.lora.%s.B", module_name, adapter->name);
  int32_t scaled = vlm_graph_scale(graph, up, adapter->scale, "%s.lora.%s.scaled", module_name, adapter->name);
  int32_t sum = vlm_graph_add(graph, base, scaled, "%s.lora.%s.sum", module_name, adapter->name);
  return vlm_graph_row_select(graph, blocks->lora_masks[k], sum, base, "%s.lora.%s", module_name, adapter->name);
}

int32_t vlm_block_linear(vlm_decoder_blocks *blocks, int32_t x, const char *layer_prefix, const char *module,
                         int64_t out, int64_t in, bool bias) {
  char name[2 * VLM_GRAPH_NAME_LENGTH], module_name[VLM_GRAPH_NAME_LENGTH];
  snprintf(module_name, sizeof(module_name), "%s%s", layer_prefix, module);
  snprintf(name, sizeof(name), "%s.weight", module_name);
  int32_t weight_node = vlm_graph_weight(blocks->graph, name, VLM_DTYPE_INVALID, 2, VLM_SHAPE(out, in));
  int32_t bias_node = -1;
  if (bias) {
    snprintf(name, sizeof(name), "%s.bias", module_name);
    bias_node = vlm_graph_weight(blocks->graph, name, VLM_DTYPE_INVALID, 1, VLM_SHAPE(out));
  }
  int32_t result = vlm_graph_linear(blocks->graph, x, weight_node, bias_node, "%s", module_name);
  for (int k = 0; k < blocks->description->adapter_count; k++)
    if (blocks->lora_masks[k] >= 0) result = vlm_block_lora(blocks, x, result, module_name, k, out, in);
  return result;
}

int32_t vlm_block_rms_norm(vlm_decoder_blocks *blocks, int32_t x, const char *layer_prefix, const char *module,
                           int64_t size) {
  char suffix[VLM_GRAPH_NAME_LENGTH];
  snprintf(suffix, sizeof(suffix), "%s.weight", module);
  int32_t weight_node = vlm_block_weight(blocks, layer_prefix, suffix, 1, VLM_SHAPE(size));
  return vlm_graph_rms_norm(blocks->graph, x, weight_node, blocks->text->rms_norm_eps,
                            blocks->description->norm_weight_offset, "%s%s", layer_prefix, module);
}

static bool layer_is_sliding(const vlm_text_config *text, int32_t layer) {
  return text->layer_types && text->layer_types[layer] == VLM_LAYER_ATTENTION_SLIDING;
}

int32_t vlm_block_layer_rope(const vlm_decoder_blocks *blocks, int32_t layer) {
  return layer_is_sliding(blocks->text, layer) && blocks->text->has_sliding_rope ? 1 : 0;
}

int32_t vlm_block_rope(vlm_decoder_blocks *blocks, int32_t x, int32_t rope_index, const char *name) {
  return vlm_graph_rope(blocks->graph, x, rope_index, "%s", name);
}

int32_t vlm_block_llama_attention(vlm_decoder_blocks *blocks, int32_t hidden, const char *layer_prefix,
                                  int32_t layer) {
  const vlm_text_config *text = blocks->text;
  vlm_graph *graph = blocks->graph;
  const vlm_node *input = vlm_graph_node(graph, hidden);
  if (!input) return -1; /* an earlier block failed: the graph holds its error */
  int64_t rows = input->shape[0];
  int64_t heads = text->num_attention_heads, kv_heads = text->num_key_value_heads;
  int64_t head_dim = text->head_dim, width = text->hidden_size;
  const vlm_decoder_layout *layout = &blocks->description->layout;
  int32_t q, k, v;
  if (layout->fused_qkv) {
    int64_t query = heads * head_dim, key_value = kv_heads * head_dim;
    int32_t qkv = vlm_block_linear(blocks, hidden, layer_prefix, "self_attn.qkv_proj", query + 2 * key_value, width,
                                   text->attention_bias);
    q = vlm_graph_slice(graph, qkv, 1, 0, query, "%sself_attn.q", layer_prefix);
    k = vlm_graph_slice(graph, qkv, 1, query, key_value, "%sself_attn.k", layer_prefix);
    v = vlm_graph_slice(graph, qkv, 1, query + key_value, key_value, "%sself_attn.v", layer_prefix);
  } else {
    q = vlm_block_linear(blocks, hidden, layer_prefix, "self_attn.q_proj", heads * head_dim, width,
                         text->attention_bias);
    k = vlm_block_linear(blocks, hidden, layer_prefix, "self_attn.k_proj", kv_heads * head_dim, width,
                         text->attention_bias);
    v = vlm_block_linear(blocks, hidden, layer_prefix, "self_attn.v_proj", kv_heads * head_dim, width,
                         text->attention_bias);
  }
  q = vlm_graph_reshape(graph, q, 3, VLM_SHAPE(rows, heads, head_dim), "%sself_attn.q_heads", layer_prefix);
  k = vlm_graph_reshape(graph, k, 3, VLM_SHAPE(rows, kv_heads, head_dim), "%sself_attn.k_heads", layer_prefix);
  v = vlm_graph_reshape(graph, v, 3, VLM_SHAPE(rows, kv_heads, head_dim), "%sself_attn.v_heads", layer_prefix);
  if (layout->qk_norm) {
    q = vlm_block_rms_norm(blocks, q, layer_prefix, "self_attn.q_norm", head_dim);
    k = vlm_block_rms_norm(blocks, k, layer_prefix, "self_attn.k_norm", head_dim);
  }
  bool sliding = layer_is_sliding(text, layer);
  int32_t rope_index = vlm_block_layer_rope(blocks, layer);
  char name[VLM_GRAPH_NAME_LENGTH];
  snprintf(name, sizeof(name), "%sself_attn.q_rope", layer_prefix);
  q = vlm_block_rope(blocks, q, rope_index, name);
  snprintf(name, sizeof(name), "%sself_attn.k_rope", layer_prefix);
  k = vlm_block_rope(blocks, k, rope_index, name);
  int32_t attended = vlm_graph_attention(graph, q, k, v, layer, text->attention_scale,
                                         sliding ? text->sliding_window : 0, text->attn_logit_softcapping,
                                         "%sself_attn.attention", layer_prefix);
  return vlm_block_linear(blocks, attended, layer_prefix, "self_attn.o_proj", width, heads * head_dim,
                          text->attention_output_bias);
}

int32_t vlm_block_llama_mlp(vlm_decoder_blocks *blocks, int32_t hidden, const char *layer_prefix, int32_t layer) {
  const vlm_text_config *text = blocks->text;
  int64_t width = text->hidden_size;
  int64_t inner = text->layer_intermediate_sizes ? text->layer_intermediate_sizes[layer] : text->intermediate_size;
  int32_t gate, up;
  if (blocks->description->layout.fused_gate_up) {
    /* chunk(2): the first half is the gate. */
    int32_t gate_up = vlm_block_linear(blocks, hidden, layer_prefix, "mlp.gate_up_proj", 2 * inner, width,
                                       text->mlp_bias);
    gate = vlm_graph_slice(blocks->graph, gate_up, 1, 0, inner, "%smlp.gate", layer_prefix);
    up = vlm_graph_slice(blocks->graph, gate_up, 1, inner, inner, "%smlp.up", layer_prefix);
  } else {
    gate = vlm_block_linear(blocks, hidden, layer_prefix, "mlp.gate_proj", inner, width, text->mlp_bias);
    up = vlm_block_linear(blocks, hidden, layer_prefix, "mlp.up_proj", inner, width, text->mlp_bias);
  }
  int32_t gated = vlm_graph_gated(blocks->graph, gate, up, blocks->activation, "%smlp.act_times_up", layer_prefix);
  return vlm_block_linear(blocks, gated, layer_prefix, "mlp.down_proj", width, inner, text->mlp_bias);
}

int32_t vlm_block_sparse_moe(vlm_decoder_blocks *blocks, int32_t hidden, const char *layer_prefix, int32_t layer) {
  const vlm_decoder_description *description = blocks->description;
  const vlm_decoder_experts *experts = &description->experts;
  vlm_graph *graph = blocks->graph;
  int64_t width = blocks->text->hidden_size, inner = experts->intermediate_size, count = experts->count;
  vlm_moe_options options = {.top_k = (int32_t)experts->top_k, .normalize = experts->normalize_top_k,
                             .activation = blocks->activation};
  vlm_status status = vlm_decoder_expert_layout(description, description->weights, layer,
                                                &options.gate_up_transposed, &options.down_transposed);
  if (status) {
    if (!graph->error) graph->error = status;
    else vlm_status_free(status);
    return -1;
  }
  int32_t logits = vlm_block_linear(blocks, hidden, layer_prefix, "mlp.gate", count, width, false);
  int32_t gate_up = vlm_block_weight(blocks, layer_prefix, "mlp.experts.gate_up_proj", 3,
                                     options.gate_up_transposed ? VLM_SHAPE(count, width, 2 * inner)
                                                                : VLM_SHAPE(count, 2 * inner, width));
  int32_t down = vlm_block_weight(blocks, layer_prefix, "mlp.experts.down_proj", 3,
                                  options.down_transposed ? VLM_SHAPE(count, inner, width)
                                                          : VLM_SHAPE(count, width, inner));
  return vlm_graph_moe(graph, hidden, logits, gate_up, down, &options, "%smlp", layer_prefix);
}

int32_t vlm_block_llama_decoder_layer(vlm_decoder_blocks *blocks, int32_t residual, int32_t layer) {
  const vlm_decoder_description *description = blocks->description;
  vlm_graph *graph = blocks->graph;
  int64_t width = blocks->text->hidden_size;
  char layer_prefix[VLM_GRAPH_NAME_LENGTH];
  snprintf(layer_prefix, sizeof(layer_prefix), "%slayers.%d.", description->prefix, layer);
  bool sandwich = description->layout.sandwich_norms;
  int32_t hidden = vlm_block_rms_norm(blocks, residual, layer_prefix, "input_layernorm", width);
  int32_t attended = vlm_block_llama_attention(blocks, hidden, layer_prefix, layer);
  if (sandwich) attended = vlm_block_rms_norm(blocks, attended, layer_prefix, "post_attention_layernorm", width);
  residual = vlm_graph_add(graph, residual, attended, "%sresidual_attention", layer_prefix);
  hidden = vlm_block_rms_norm(blocks, residual, layer_prefix,
                              sandwich ? "pre_feedforward_layernorm" : "post_attention_layernorm", width);
  int32_t mlp = vlm_decoder_layer_is_sparse(description, layer)
                    ? vlm_block_sparse_moe(blocks, hidden, layer_prefix, layer)
                    : vlm_block_llama_mlp(blocks, hidden, layer_prefix, layer);
  if (sandwich) mlp = vlm_block_rms_norm(blocks, mlp, layer_prefix, "post_feedforward_layernorm", width);
  /* The layer's output: what Transformers' decoder layer module returns. */
  return vlm_graph_add(graph, residual, mlp, "%slayers.%d", description->prefix, layer);
}

int32_t vlm_block_merge_features(vlm_decoder_blocks *blocks, int32_t embedded) {
  const vlm_decoder_step *step = blocks->step;
  vlm_graph *graph = blocks->graph;
  const char *prefix = blocks->description->prefix;
  int32_t features = vlm_graph_input(graph, VLM_DTYPE_F32, 2, VLM_SHAPE(step->row_count, blocks->text->hidden_size),
                                     "features");
  int32_t mask = vlm_graph_input(graph, VLM_DTYPE_I32, 1, VLM_SHAPE(step->row_count), "feature_mask");
  if (blocks->description->merge == VLM_FEATURE_MERGE_ADD) {
    /* Molmo's x[positions] += features: the sum on the marked rows only. */
    int32_t sum = vlm_graph_add(graph, embedded, features, "%sembed_tokens_plus_features", prefix);
    return vlm_graph_row_select(graph, mask, sum, embedded, "%sembed_tokens_merged", prefix);
  }
  /* masked_scatter: the features replace their placeholder rows. */
  return vlm_graph_row_select(graph, mask, features, embedded, "%sembed_tokens_merged", prefix);
}

int32_t vlm_block_embed_tokens(vlm_decoder_blocks *blocks) {
  const vlm_text_config *text = blocks->text;
  const vlm_decoder_step *step = blocks->step;
  vlm_graph *graph = blocks->graph;
  const char *prefix = blocks->description->prefix;
  int32_t tokens = vlm_graph_input(graph, VLM_DTYPE_I32, 1, VLM_SHAPE(step->row_count), "tokens");
  int32_t table = vlm_block_weight(blocks, prefix, "embed_tokens.weight", 2,
                                   VLM_SHAPE(text->vocab_size, text->hidden_size));
  int32_t embedded = vlm_graph_gather(graph, table, tokens, "%sembed_tokens", prefix);
  if (blocks->description->embedding_scale != 1.0)
    embedded = vlm_graph_scale(graph, embedded, blocks->description->embedding_scale, "%sembed_tokens_scaled",
                               prefix);
  if (!step->with_features) return embedded;
  /* Unscaled features: Transformers scales the token embeddings before the
   * merge. */
  return vlm_block_merge_features(blocks, embedded);
}

int32_t vlm_block_add_layer_features(vlm_decoder_blocks *blocks, int32_t features, int32_t hidden, int32_t layer) {
  const vlm_decoder_description *description = blocks->description;
  if (features < 0) return hidden;
  int64_t rows = blocks->step->row_count, width = blocks->text->hidden_size;
  for (size_t j = 0; j < description->layer_features.count; j++) {
    if (description->layer_features.values[j] != layer) continue;
    int32_t feature = vlm_graph_slice(blocks->graph, features, 0, (int64_t)j, 1, "%slayers.%d.layer_feature",
                                      description->prefix, layer);
    feature = vlm_graph_reshape(blocks->graph, feature, 2, VLM_SHAPE(rows, width), "%slayers.%d.layer_feature_rows",
                                description->prefix, layer);
    hidden = vlm_graph_add(blocks->graph, hidden, feature, "%slayers.%d.layer_features_added", description->prefix,
                           layer);
  }
  return hidden;
}

vlm_status vlm_block_causal_lm_head(vlm_decoder_blocks *blocks, int32_t hidden) {
  const vlm_decoder_description *description = blocks->description;
  const vlm_decoder_step *step = blocks->step;
  const vlm_text_config *text = blocks->text;
  vlm_graph *graph = blocks->graph;
  if (step->logit_row_count == 0) {
    /* A prefill chunk whose logits nobody reads: fill the KV cache and stop
     * before the norm and the LM head. */
    graph->output = hidden;
    return vlm_graph_take_error(graph);
  }
  hidden = vlm_graph_select_rows(graph, hidden, step->logit_rows, step->logit_row_count, "%slast_rows",
                                 description->prefix);
  hidden = vlm_block_rms_norm(blocks, hidden, description->prefix, "norm", text->hidden_size);
  int32_t head = description->tie_word_embeddings
                     ? vlm_block_weight(blocks, description->prefix, "embed_tokens.weight", 2,
                                        VLM_SHAPE(text->vocab_size, text->hidden_size))
                     : vlm_block_weight(blocks, "", "lm_head.weight", 2,
                                        VLM_SHAPE(text->vocab_size, text->hidden_size));
  int32_t logits = vlm_graph_linear(graph, hidden, head, -1, "lm_head");
  if (text->final_logit_softcapping > 0)
    logits = vlm_graph_softcap(graph, logits, text->final_logit_softcapping, "logits_softcapped");
  graph->output = logits;
  return vlm_graph_take_error(graph);
}
