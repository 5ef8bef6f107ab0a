#include "models/decoder.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/status.h"

typedef struct decoder_builder {
  const vlm_decoder_description *description;
  const vlm_decoder_step *step;
  const vlm_text_config *text;
  vlm_graph *graph;
  vlm_activation activation;
  int32_t lora_masks[VLM_DECODER_MAX_ADAPTERS];   /* input nodes; -1: adapter unused this step */
  int64_t lora_applied[VLM_DECODER_MAX_ADAPTERS]; /* projections it was applied to */
} decoder_builder;

/* A weight node for `prefix + suffix` with the shape the config implies;
 * the dtype is bound from the checkpoint at execution. */
static int32_t weight(decoder_builder *builder, const char *prefix, const char *suffix, int rank,
                      const int64_t *shape) {
  char name[2 * VLM_GRAPH_NAME_LENGTH]; /* the graph refuses names too long */
  snprintf(name, sizeof(name), "%s%s", prefix, suffix);
  return vlm_graph_weight(builder->graph, name, VLM_DTYPE_INVALID, rank, shape);
}

/* Adapter k's low-rank update of `base` = x W^T on the rows whose slots use
 * it: base + lora_B(lora_A(x)) * scale there, base elsewhere (a row select
 * by the adapter's mask), as PEFT's LoRA Linear adds it. */
static int32_t lora(decoder_builder *builder, int32_t x, int32_t base, const char *module_name, int k,
                    int64_t out, int64_t in) {
  const vlm_decoder_adapter *adapter = &builder->description->adapters[k];
  char name[2 * VLM_GRAPH_NAME_LENGTH];
  snprintf(name, sizeof(name), "%s%s.lora_A.weight", adapter->prefix, module_name);
  const vlm_tensor_info *a_info = vlm_checkpoint_find(builder->description->adapter_weights, name);
  if (!a_info) return base;
  builder->lora_applied[k]++;
  int64_t rank = a_info->rank == 2 ? a_info->shape[0] : 0;
  vlm_graph *graph = builder->graph;
  int32_t a = vlm_graph_weight(graph, name, VLM_DTYPE_INVALID, 2, VLM_SHAPE(rank, in));
  snprintf(name, sizeof(name), "%s%s.lora_B.weight", adapter->prefix, module_name);
  int32_t b = vlm_graph_weight(graph, name, VLM_DTYPE_INVALID, 2, VLM_SHAPE(out, rank));
  int32_t down = vlm_graph_linear(graph, x, a, -1, "%s.lora.%s.A", module_name, adapter->name);
  int32_t up = vlm_graph_linear(graph, down, b, -1, "%s.lora.%s.B", module_name, adapter->name);
  int32_t scaled = vlm_graph_scale(graph, up, adapter->scale, "%s.lora.%s.scaled", module_name, adapter->name);
  int32_t sum = vlm_graph_add(graph, base, scaled, "%s.lora.%s.sum", module_name, adapter->name);
  return vlm_graph_row_select(graph, builder->lora_masks[k], sum, base, "%s.lora.%s", module_name,
                              adapter->name);
}

static int32_t projection(decoder_builder *builder, int32_t x, const char *layer_prefix,
                          const char *module, int64_t out, int64_t in, bool bias) {
  char name[2 * VLM_GRAPH_NAME_LENGTH], module_name[VLM_GRAPH_NAME_LENGTH];
  snprintf(module_name, sizeof(module_name), "%s%s", layer_prefix, module);
  snprintf(name, sizeof(name), "%s.weight", module_name);
  int32_t weight_node = vlm_graph_weight(builder->graph, name, VLM_DTYPE_INVALID, 2, VLM_SHAPE(out, in));
  int32_t bias_node = -1;
  if (bias) {
    snprintf(name, sizeof(name), "%s.bias", module_name);
    bias_node = vlm_graph_weight(builder->graph, name, VLM_DTYPE_INVALID, 1, VLM_SHAPE(out));
  }
  int32_t result = vlm_graph_linear(builder->graph, x, weight_node, bias_node, "%s", module_name);
  for (int k = 0; k < builder->description->adapter_count; k++)
    if (builder->lora_masks[k] >= 0) result = lora(builder, x, result, module_name, k, out, in);
  return result;
}

static int32_t norm(decoder_builder *builder, int32_t x, const char *layer_prefix,
                    const char *module, int64_t size) {
  char suffix[VLM_GRAPH_NAME_LENGTH];
  snprintf(suffix, sizeof(suffix), "%s.weight", module);
  int32_t weight_node = weight(builder, layer_prefix, suffix, 1, VLM_SHAPE(size));
  return vlm_graph_rms_norm(builder->graph, x, weight_node, builder->text->rms_norm_eps,
                            builder->description->norm_weight_offset, "%s%s", layer_prefix, module);
}

/* q/k/v projections, QK-norm and RoPE, attention, output projection. */
static int32_t attention_block(decoder_builder *builder, int32_t hidden, const char *layer_prefix,
                               int32_t layer) {
  const vlm_text_config *text = builder->text;
  vlm_graph *graph = builder->graph;
  const vlm_node *input = vlm_graph_node(graph, hidden);
  if (!input) return -1; /* an earlier builder failed: the graph holds its error */
  int64_t rows = input->shape[0];
  int64_t heads = text->num_attention_heads, kv_heads = text->num_key_value_heads;
  int64_t head_dim = text->head_dim, width = text->hidden_size;
  int32_t q, k, v;
  if (builder->description->layout.fused_qkv) {
    int64_t query = heads * head_dim, key_value = kv_heads * head_dim;
    int32_t qkv = projection(builder, hidden, layer_prefix, "self_attn.qkv_proj", query + 2 * key_value, width,
                             text->attention_bias);
    q = vlm_graph_slice(graph, qkv, 1, 0, query, "%sself_attn.q", layer_prefix);
    k = vlm_graph_slice(graph, qkv, 1, query, key_value, "%sself_attn.k", layer_prefix);
    v = vlm_graph_slice(graph, qkv, 1, query + key_value, key_value, "%sself_attn.v", layer_prefix);
  } else {
    q = projection(builder, hidden, layer_prefix, "self_attn.q_proj", heads * head_dim, width,
                   text->attention_bias);
    k = projection(builder, hidden, layer_prefix, "self_attn.k_proj", kv_heads * head_dim, width,
                   text->attention_bias);
    v = projection(builder, hidden, layer_prefix, "self_attn.v_proj", kv_heads * head_dim, width,
                   text->attention_bias);
  }
  q = vlm_graph_reshape(graph, q, 3, VLM_SHAPE(rows, heads, head_dim), "%sself_attn.q_heads", layer_prefix);
  k = vlm_graph_reshape(graph, k, 3, VLM_SHAPE(rows, kv_heads, head_dim), "%sself_attn.k_heads", layer_prefix);
  v = vlm_graph_reshape(graph, v, 3, VLM_SHAPE(rows, kv_heads, head_dim), "%sself_attn.v_heads", layer_prefix);
  if (builder->description->layout.qk_norm) {
    q = norm(builder, q, layer_prefix, "self_attn.q_norm", head_dim);
    k = norm(builder, k, layer_prefix, "self_attn.k_norm", head_dim);
  }
  bool sliding = text->layer_types && text->layer_types[layer] == VLM_LAYER_ATTENTION_SLIDING;
  int32_t rope_index = sliding && text->has_sliding_rope ? 1 : 0;
  q = vlm_graph_rope(graph, q, rope_index, "%sself_attn.q_rope", layer_prefix);
  k = vlm_graph_rope(graph, k, rope_index, "%sself_attn.k_rope", layer_prefix);
  int32_t attended = vlm_graph_attention(graph, q, k, v, layer, text->attention_scale,
                                         sliding ? text->sliding_window : 0,
                                         text->attn_logit_softcapping, "%sself_attn.attention",
                                         layer_prefix);
  return projection(builder, attended, layer_prefix, "self_attn.o_proj", width, heads * head_dim,
                    text->attention_output_bias);
}

static int32_t mlp_block(decoder_builder *builder, int32_t hidden, const char *layer_prefix,
                         int32_t layer) {
  const vlm_text_config *text = builder->text;
  int64_t width = text->hidden_size;
  int64_t inner = text->layer_intermediate_sizes ? text->layer_intermediate_sizes[layer]
                                                 : text->intermediate_size;
  int32_t gate, up;
  if (builder->description->layout.fused_gate_up) {
    /* chunk(2): the first half is the gate. */
    int32_t gate_up = projection(builder, hidden, layer_prefix, "mlp.gate_up_proj", 2 * inner, width,
                                 text->mlp_bias);
    gate = vlm_graph_slice(builder->graph, gate_up, 1, 0, inner, "%smlp.gate", layer_prefix);
    up = vlm_graph_slice(builder->graph, gate_up, 1, inner, inner, "%smlp.up", layer_prefix);
  } else {
    gate = projection(builder, hidden, layer_prefix, "mlp.gate_proj", inner, width, text->mlp_bias);
    up = projection(builder, hidden, layer_prefix, "mlp.up_proj", inner, width, text->mlp_bias);
  }
  int32_t gated = vlm_graph_gated(builder->graph, gate, up, builder->activation, "%smlp.act_times_up",
                                  layer_prefix);
  return projection(builder, gated, layer_prefix, "mlp.down_proj", width, inner, text->mlp_bias);
}

bool vlm_decoder_layer_is_sparse(const vlm_decoder_description *description, int64_t layer) {
  const vlm_decoder_experts *experts = &description->experts;
  if (experts->count <= 0 || experts->sparse_step <= 0 || (layer + 1) % experts->sparse_step != 0) return false;
  for (size_t i = 0; i < experts->dense_layers.count; i++)
    if (experts->dense_layers.values[i] == layer) return false;
  return true;
}

/* Whether `name` is stored [E, b, a] (the transpose of the canonical
 * [E, a, b]), by its shape in the checkpoint. */
static vlm_status expert_tensor_layout(const vlm_checkpoint *weights, const char *name, int64_t experts, int64_t a,
                                       int64_t b, bool *out_transposed) {
  *out_transposed = false;
  const vlm_tensor_info *info = weights ? vlm_checkpoint_find(weights, name) : NULL;
  if (!info) return VLM_OK; /* binding reports a missing tensor */
  bool canonical = info->rank == 3 && info->shape[0] == experts && info->shape[1] == a && info->shape[2] == b;
  bool transposed = info->rank == 3 && info->shape[0] == experts && info->shape[1] == b && info->shape[2] == a;
  if (canonical && transposed)
    return VLM_ERROR(INVALID_ARGUMENT,
                     "tensor '%s': its shape [%lld, %lld, %lld] fits both expert layouts ([E, out, in] as "
                     "Transformers 5.23 saves it, [E, in, out] as the hub's checkpoints), so which one it is "
                     "cannot be told from the checkpoint", name, (long long)experts, (long long)a, (long long)b);
  if (!canonical && !transposed)
    return VLM_ERROR(INVALID_ARGUMENT, "tensor '%s' has neither expert layout: expected [%lld, %lld, %lld] or "
                     "[%lld, %lld, %lld]", name, (long long)experts, (long long)a, (long long)b,
                     (long long)experts, (long long)b, (long long)a);
  *out_transposed = transposed;
  return VLM_OK;
}

vlm_status vlm_decoder_expert_layout(const vlm_decoder_description *description, const vlm_checkpoint *weights,
                                     int64_t layer, bool *out_gate_up_transposed, bool *out_down_transposed) {
  const vlm_decoder_experts *experts = &description->experts;
  int64_t hidden = description->text->hidden_size, inner = experts->intermediate_size;
  char name[2 * VLM_GRAPH_NAME_LENGTH];
  snprintf(name, sizeof(name), "%slayers.%lld.mlp.experts.gate_up_proj", description->prefix, (long long)layer);
  VLM_RETURN_IF_ERROR(expert_tensor_layout(weights, name, experts->count, 2 * inner, hidden, out_gate_up_transposed));
  snprintf(name, sizeof(name), "%slayers.%lld.mlp.experts.down_proj", description->prefix, (long long)layer);
  return expert_tensor_layout(weights, name, experts->count, hidden, inner, out_down_transposed);
}

/* The router's logits, then the moe op over the layer's experts. */
static int32_t moe_block(decoder_builder *builder, int32_t hidden, const char *layer_prefix, int32_t layer) {
  const vlm_decoder_description *description = builder->description;
  const vlm_decoder_experts *experts = &description->experts;
  vlm_graph *graph = builder->graph;
  int64_t width = builder->text->hidden_size, inner = experts->intermediate_size, count = experts->count;
  vlm_moe_options options = {.top_k = (int32_t)experts->top_k, .normalize = experts->normalize_top_k,
                             .activation = builder->activation};
  vlm_status status = vlm_decoder_expert_layout(description, description->weights, layer,
                                                &options.gate_up_transposed, &options.down_transposed);
  if (status) {
    if (!graph->error) graph->error = status;
    else vlm_status_free(status);
    return -1;
  }
  int32_t logits = projection(builder, hidden, layer_prefix, "mlp.gate", count, width, false);
  int32_t gate_up = weight(builder, layer_prefix, "mlp.experts.gate_up_proj", 3,
                           options.gate_up_transposed ? VLM_SHAPE(count, width, 2 * inner)
                                                      : VLM_SHAPE(count, 2 * inner, width));
  int32_t down = weight(builder, layer_prefix, "mlp.experts.down_proj", 3,
                        options.down_transposed ? VLM_SHAPE(count, inner, width) : VLM_SHAPE(count, width, inner));
  return vlm_graph_moe(graph, hidden, logits, gate_up, down, &options, "%smlp", layer_prefix);
}

static int32_t decoder_layer(decoder_builder *builder, int32_t residual, int32_t layer) {
  const vlm_decoder_description *description = builder->description;
  vlm_graph *graph = builder->graph;
  int64_t width = builder->text->hidden_size;
  char layer_prefix[VLM_GRAPH_NAME_LENGTH];
  snprintf(layer_prefix, sizeof(layer_prefix), "%slayers.%d.", description->prefix, layer);
  bool sandwich = description->layout.sandwich_norms;
  int32_t hidden = norm(builder, residual, layer_prefix, "input_layernorm", width);
  int32_t attended = attention_block(builder, hidden, layer_prefix, layer);
  if (sandwich) attended = norm(builder, attended, layer_prefix, "post_attention_layernorm", width);
  residual = vlm_graph_add(graph, residual, attended, "%sresidual_attention", layer_prefix);
  hidden = norm(builder, residual, layer_prefix,
                sandwich ? "pre_feedforward_layernorm" : "post_attention_layernorm", width);
  int32_t mlp = vlm_decoder_layer_is_sparse(description, layer) ? moe_block(builder, hidden, layer_prefix, layer)
                                                                 : mlp_block(builder, hidden, layer_prefix, layer);
  if (sandwich) mlp = norm(builder, mlp, layer_prefix, "post_feedforward_layernorm", width);
  /* The layer's output: what Transformers' decoder layer module returns. */
  return vlm_graph_add(graph, residual, mlp, "%slayers.%d", description->prefix, layer);
}

int64_t vlm_decoder_feature_width(const vlm_decoder_description *description) {
  return description->text->hidden_size * (1 + (int64_t)description->layer_features.count);
}

/* hidden + layer_features[j] after the layers the description lists
 * (rows without media carry zeros: x + 0 is x). */
static int32_t add_layer_features(decoder_builder *builder, const vlm_decoder_step *step, int32_t features,
                                  int32_t hidden, int32_t layer) {
  const vlm_decoder_description *description = builder->description;
  if (features < 0) return hidden;
  int64_t rows = step->row_count, width = builder->text->hidden_size;
  for (size_t j = 0; j < description->layer_features.count; j++) {
    if (description->layer_features.values[j] != layer) continue;
    int32_t feature = vlm_graph_slice(builder->graph, features, 0, (int64_t)j, 1, "%slayers.%d.layer_feature",
                                      description->prefix, layer);
    feature = vlm_graph_reshape(builder->graph, feature, 2, VLM_SHAPE(rows, width), "%slayers.%d.layer_feature_rows",
                                description->prefix, layer);
    hidden = vlm_graph_add(builder->graph, hidden, feature, "%slayers.%d.layer_features_added", description->prefix,
                           layer);
  }
  return hidden;
}

static int32_t embed(decoder_builder *builder, const vlm_decoder_step *step) {
  const vlm_text_config *text = builder->text;
  vlm_graph *graph = builder->graph;
  const char *prefix = builder->description->prefix;
  int32_t tokens = vlm_graph_input(graph, VLM_DTYPE_I32, 1, VLM_SHAPE(step->row_count), "tokens");
  int32_t table = weight(builder, prefix, "embed_tokens.weight", 2,
                         VLM_SHAPE(text->vocab_size, text->hidden_size));
  int32_t embedded = vlm_graph_gather(graph, table, tokens, "%sembed_tokens", prefix);
  if (builder->description->embedding_scale != 1.0)
    embedded = vlm_graph_scale(graph, embedded, builder->description->embedding_scale,
                               "%sembed_tokens_scaled", prefix);
  if (!step->with_features) return embedded;
  /* Encoder features replace their placeholder rows (masked_scatter),
   * unscaled: Transformers scales the token embeddings before the merge. */
  int32_t features = vlm_graph_input(graph, VLM_DTYPE_F32, 2, VLM_SHAPE(step->row_count, text->hidden_size),
                                     "features");
  int32_t mask = vlm_graph_input(graph, VLM_DTYPE_I32, 1, VLM_SHAPE(step->row_count), "feature_mask");
  return vlm_graph_row_select(graph, mask, features, embedded, "%sembed_tokens_merged", prefix);
}

vlm_status vlm_build_decoder_graph(const vlm_decoder_description *description,
                                   const vlm_decoder_step *step, vlm_graph *graph) {
  const vlm_text_config *text = description->text;
  decoder_builder builder = {.description = description, .step = step, .text = text, .graph = graph,
                             .activation = VLM_ACTIVATION_SILU};
  if (description->adapter_count > VLM_DECODER_MAX_ADAPTERS ||
      (description->adapter_count > 0 && !description->adapter_weights))
    return VLM_ERROR(INTERNAL, "text decoder: %d adapters without their weights", description->adapter_count);
  for (int k = 0; k < VLM_DECODER_MAX_ADAPTERS; k++) builder.lora_masks[k] = -1;
  if (!vlm_activation_from_name(text->hidden_act, &builder.activation))
    return VLM_ERROR(UNIMPLEMENTED, "text decoder: activation '%s' is not supported",
                     text->hidden_act);
  if (step->row_count <= 0 || step->logit_row_count < 0)
    return VLM_ERROR(INVALID_ARGUMENT, "text decoder: a step needs at least one row");
  graph->ropes[0] = &text->rope;
  graph->ropes[1] = text->has_sliding_rope ? &text->sliding_rope : &text->rope;
  graph->rope_count = 2;
  int32_t hidden = embed(&builder, step);
  for (int k = 0; k < description->adapter_count; k++)
    if (step->adapters_used && step->adapters_used[k])
      builder.lora_masks[k] = vlm_graph_input(graph, VLM_DTYPE_I32, 1, VLM_SHAPE(step->row_count),
                                              k == 0 ? "lora_mask.0" : k == 1 ? "lora_mask.1"
                                              : k == 2 ? "lora_mask.2" : "lora_mask.3");
  int32_t layer_features = -1;
  size_t layer_feature_count = description->layer_features.count;
  if (step->with_features && layer_feature_count > 0)
    layer_features = vlm_graph_input(graph, VLM_DTYPE_F32, 3,
                                     VLM_SHAPE((int64_t)layer_feature_count, step->row_count, text->hidden_size),
                                     "layer_features");
  for (int32_t layer = 0; layer < text->num_hidden_layers; layer++) {
    hidden = decoder_layer(&builder, hidden, layer);
    hidden = add_layer_features(&builder, step, layer_features, hidden, layer);
  }
  /* An adapter tensor the decoder has no projection for would be accepted
   * and ignored: refuse it. */
  for (int k = 0; k < description->adapter_count; k++)
    if (builder.lora_masks[k] >= 0 && builder.lora_applied[k] != description->adapters[k].module_count)
      return VLM_ERROR(INVALID_ARGUMENT,
                       "adapter '%s': %lld of its %lld LoRA modules are projections of this decoder",
                       description->adapters[k].name, (long long)builder.lora_applied[k],
                       (long long)description->adapters[k].module_count);
  if (step->logit_row_count == 0) {
    /* A prefill chunk whose logits nobody reads: fill the KV cache and stop
     * before the norm and the LM head. */
    graph->output = hidden;
    return vlm_graph_take_error(graph);
  }
  hidden = vlm_graph_select_rows(graph, hidden, step->logit_rows, step->logit_row_count,
                                 "%slast_rows", description->prefix);
  hidden = norm(&builder, hidden, description->prefix, "norm", text->hidden_size);
  int32_t head = description->tie_word_embeddings
                     ? weight(&builder, description->prefix, "embed_tokens.weight", 2,
                              VLM_SHAPE(text->vocab_size, text->hidden_size))
                     : weight(&builder, "", "lm_head.weight", 2,
                              VLM_SHAPE(text->vocab_size, text->hidden_size));
  int32_t logits = vlm_graph_linear(graph, hidden, head, -1, "lm_head");
  if (text->final_logit_softcapping > 0)
    logits = vlm_graph_softcap(graph, logits, text->final_logit_softcapping, "logits_softcapped");
  graph->output = logits;
  return vlm_graph_take_error(graph);
}
