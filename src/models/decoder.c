#include "models/decoder.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/status.h"

typedef struct decoder_builder {
  const vlm_decoder_description *description;
  const vlm_text_config *text;
  vlm_graph *graph;
  vlm_activation activation;
} decoder_builder;

/* A weight node for `prefix + suffix` with the shape the config implies;
 * the dtype is bound from the checkpoint at execution. */
static int32_t weight(decoder_builder *builder, const char *prefix, const char *suffix, int rank,
                      const int64_t *shape) {
  char name[2 * VLM_GRAPH_NAME_LENGTH]; /* the graph refuses names too long */
  snprintf(name, sizeof(name), "%s%s", prefix, suffix);
  return vlm_graph_weight(builder->graph, name, VLM_DTYPE_INVALID, rank, shape);
}

static int32_t projection(decoder_builder *builder, int32_t x, const char *layer_prefix,
                          const char *module, int64_t out, int64_t in, bool bias) {
  char name[2 * VLM_GRAPH_NAME_LENGTH];
  snprintf(name, sizeof(name), "%s%s.weight", layer_prefix, module);
  int32_t weight_node = vlm_graph_weight(builder->graph, name, VLM_DTYPE_INVALID, 2, VLM_SHAPE(out, in));
  int32_t bias_node = -1;
  if (bias) {
    snprintf(name, sizeof(name), "%s%s.bias", layer_prefix, module);
    bias_node = vlm_graph_weight(builder->graph, name, VLM_DTYPE_INVALID, 1, VLM_SHAPE(out));
  }
  return vlm_graph_linear(builder->graph, x, weight_node, bias_node, "%s%s", layer_prefix, module);
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
  int64_t rows = vlm_graph_node(graph, hidden)->shape[0];
  int64_t heads = text->num_attention_heads, kv_heads = text->num_key_value_heads;
  int64_t head_dim = text->head_dim, width = text->hidden_size;
  int32_t q = projection(builder, hidden, layer_prefix, "self_attn.q_proj", heads * head_dim, width,
                         text->attention_bias);
  int32_t k = projection(builder, hidden, layer_prefix, "self_attn.k_proj", kv_heads * head_dim,
                         width, text->attention_bias);
  int32_t v = projection(builder, hidden, layer_prefix, "self_attn.v_proj", kv_heads * head_dim,
                         width, text->attention_bias);
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
  int32_t gate = projection(builder, hidden, layer_prefix, "mlp.gate_proj", inner, width, text->mlp_bias);
  int32_t up = projection(builder, hidden, layer_prefix, "mlp.up_proj", inner, width, text->mlp_bias);
  int32_t gated = vlm_graph_gated(builder->graph, gate, up, builder->activation, "%smlp.act_times_up",
                                  layer_prefix);
  return projection(builder, gated, layer_prefix, "mlp.down_proj", width, inner, text->mlp_bias);
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
  int32_t mlp = mlp_block(builder, hidden, layer_prefix, layer);
  if (sandwich) mlp = norm(builder, mlp, layer_prefix, "post_feedforward_layernorm", width);
  /* The layer's output: what Transformers' decoder layer module returns. */
  return vlm_graph_add(graph, residual, mlp, "%slayers.%d", description->prefix, layer);
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
  decoder_builder builder = {description, text, graph, VLM_ACTIVATION_SILU};
  if (!vlm_activation_from_name(text->hidden_act, &builder.activation))
    return VLM_ERROR(UNIMPLEMENTED, "text decoder: activation '%s' is not supported",
                     text->hidden_act);
  if (step->row_count <= 0 || step->logit_row_count < 0)
    return VLM_ERROR(INVALID_ARGUMENT, "text decoder: a step needs at least one row");
  graph->ropes[0] = &text->rope;
  graph->ropes[1] = text->has_sliding_rope ? &text->sliding_rope : &text->rope;
  graph->rope_count = 2;
  int32_t hidden = embed(&builder, step);
  for (int32_t layer = 0; layer < text->num_hidden_layers; layer++)
    hidden = decoder_layer(&builder, hidden, layer);
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
