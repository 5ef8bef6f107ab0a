/* Youtu-LLM (YoutuForCausalLM, Transformers 5.23 models/youtu): the
 * DeepSeek-V2 style multi-head latent attention decoder that Youtu-VL's
 * language model is.
 *
 * YoutuAttention: the query through a LoRA (q_a_proj, q_a_layernorm,
 * q_b_proj; or one q_proj without q_lora_rank), split per head into
 * qk_nope_head_dim values without position and qk_rope_head_dim with; the
 * key/value compressed by kv_a_proj_with_mqa into kv_lora_rank latent
 * values (kv_a_layernorm) plus one rope key shared by every head; the
 * rope parts rotated by the interleaved RoPE (pairs (x0, x1), (x2, x3),
 * ... written even-indices first, then odd); kv_b_proj expanding the
 * latent into each head's nope key and value; scaling
 * (nope + rope)^-0.5. The rest is Llama's (RMSNorm, SwiGLU).
 *
 * The cache holds what Transformers' holds: the normed latent and the
 * rotated rope key, one vector of kv_lora_rank + qk_rope_head_dim values a
 * token a layer (the latent KV layout). Attention runs in the absorbed
 * form, prefill and decode alike: kv_b_proj's key half is folded into the
 * query (q_nope W_UK, a query in the latent space), the scores are that
 * query against the cached latent plus the rope query against the rope
 * key, the softmax-weighted latent goes through the value half W_UV. It
 * is Transformers' expand-then-attend reassociated, so the logits agree
 * within float rounding (the goldens check it). VLM_MLA_EXPANDED=1 in the
 * environment selects Transformers' expanded form instead, for every step
 * (kv_b_proj on each token's latent, standard attention, a cache of
 * expanded K and V): the baseline the absorbed form is measured against,
 * and a second proof against the same goldens. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "models/decoder.h"
#include "models/kv_layout.h"
#include "models/nn.h"

/* The attention's sizes (YoutuConfig fields the text config does not hold). */
typedef struct youtu_sizes {
  int64_t heads, q_lora_rank; /* 0: no q LoRA (q_proj) */
  int64_t kv_lora_rank, rope, nope, value;
  bool interleave, bias;
  double scaling;
} youtu_sizes;

static vlm_status read_int(const vlm_json_value *section, const char *key, bool nullable, int64_t *out) {
  const vlm_json_value *value = section ? vlm_json_object_get(section, key) : NULL;
  if (nullable && (!value || value->type == VLM_JSON_NULL)) {
    *out = 0;
    return VLM_OK;
  }
  if (!value || value->type != VLM_JSON_NUMBER || !value->as.number.is_integer || value->as.number.integer < 1 ||
      value->as.number.integer > 1 << 20)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: youtu needs %s, a positive integer", key);
  *out = value->as.number.integer;
  return VLM_OK;
}

static vlm_status read_sizes(const vlm_model_config *config, youtu_sizes *out) {
  const vlm_text_config *text = &config->text;
  const vlm_json_value *section = text->section;
  *out = (youtu_sizes){.heads = text->num_attention_heads, .interleave = true, .bias = false};
  VLM_RETURN_IF_ERROR(read_int(section, "q_lora_rank", true, &out->q_lora_rank));
  VLM_RETURN_IF_ERROR(read_int(section, "kv_lora_rank", false, &out->kv_lora_rank));
  VLM_RETURN_IF_ERROR(read_int(section, "qk_rope_head_dim", false, &out->rope));
  VLM_RETURN_IF_ERROR(read_int(section, "qk_nope_head_dim", false, &out->nope));
  VLM_RETURN_IF_ERROR(read_int(section, "v_head_dim", false, &out->value));
  const vlm_json_value *interleave = section ? vlm_json_object_get(section, "rope_interleave") : NULL;
  if (interleave && interleave->type == VLM_JSON_BOOL) out->interleave = interleave->as.boolean;
  const vlm_json_value *bias = section ? vlm_json_object_get(section, "attention_bias") : NULL;
  if (bias && bias->type == VLM_JSON_BOOL) out->bias = bias->as.boolean;
  if (out->rope % 2 != 0 || text->rope.rotary_dimension != out->rope)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: youtu's qk_rope_head_dim (%lld) must be even and all rotated",
                     (long long)out->rope);
  /* yarn_apply_mscale: only a non-default rope type with mscale_all_dim
   * changes the scaling; vlm does not read those parameters yet. */
  if (text->rope.type != VLM_ROPE_DEFAULT)
    return VLM_ERROR(UNIMPLEMENTED, "config.json: youtu with a rope_type other than 'default' is not supported yet");
  out->scaling = 1.0 / sqrt((double)(out->nope + out->rope));
  return VLM_OK;
}

static void declare_layer(vlm_tensor_manifest *manifest, const vlm_text_config *text, const youtu_sizes *sizes,
                          int64_t layer) {
  const vlm_component decoder = VLM_COMPONENT_TEXT_DECODER;
  int64_t hidden = text->hidden_size, heads = sizes->heads, qk = sizes->nope + sizes->rope;
  char name[256];
#define LAYER(suffix) (snprintf(name, sizeof(name), "model.layers.%lld." suffix, (long long)layer), name)
  vlm_manifest_add(manifest, decoder, 1, VLM_SHAPE(hidden), "%s.weight", LAYER("input_layernorm"));
  if (sizes->q_lora_rank) {
    vlm_nn_declare_linear(manifest, decoder, LAYER("self_attn.q_a_proj"), sizes->q_lora_rank, hidden, sizes->bias);
    vlm_manifest_add(manifest, decoder, 1, VLM_SHAPE(sizes->q_lora_rank), "%s.weight",
                     LAYER("self_attn.q_a_layernorm"));
    vlm_nn_declare_linear(manifest, decoder, LAYER("self_attn.q_b_proj"), heads * qk, sizes->q_lora_rank, false);
  } else {
    vlm_nn_declare_linear(manifest, decoder, LAYER("self_attn.q_proj"), heads * qk, hidden, false);
  }
  vlm_nn_declare_linear(manifest, decoder, LAYER("self_attn.kv_a_proj_with_mqa"), sizes->kv_lora_rank + sizes->rope,
                        hidden, sizes->bias);
  vlm_manifest_add(manifest, decoder, 1, VLM_SHAPE(sizes->kv_lora_rank), "%s.weight",
                   LAYER("self_attn.kv_a_layernorm"));
  vlm_nn_declare_linear(manifest, decoder, LAYER("self_attn.kv_b_proj"), heads * (sizes->nope + sizes->value),
                        sizes->kv_lora_rank, false);
  vlm_nn_declare_linear(manifest, decoder, LAYER("self_attn.o_proj"), hidden, heads * sizes->value, sizes->bias);
  vlm_manifest_add(manifest, decoder, 1, VLM_SHAPE(hidden), "%s.weight", LAYER("post_attention_layernorm"));
  vlm_nn_declare_linear(manifest, decoder, LAYER("mlp.gate_proj"), text->intermediate_size, hidden, false);
  vlm_nn_declare_linear(manifest, decoder, LAYER("mlp.up_proj"), text->intermediate_size, hidden, false);
  vlm_nn_declare_linear(manifest, decoder, LAYER("mlp.down_proj"), hidden, text->intermediate_size, false);
#undef LAYER
}

static vlm_status declare_tensors(const vlm_model_config *config, vlm_tensor_manifest *manifest) {
  const vlm_text_config *text = &config->text;
  youtu_sizes sizes;
  VLM_RETURN_IF_ERROR(read_sizes(config, &sizes));
  vlm_manifest_add(manifest, VLM_COMPONENT_EMBEDDINGS, 2, VLM_SHAPE(text->vocab_size, text->hidden_size),
                   "model.embed_tokens.weight");
  for (int64_t layer = 0; layer < text->num_hidden_layers; layer++) declare_layer(manifest, text, &sizes, layer);
  vlm_manifest_add(manifest, VLM_COMPONENT_TEXT_DECODER, 1, VLM_SHAPE(text->hidden_size), "model.norm.weight");
  vlm_manifest_add(manifest, VLM_COMPONENT_EMBEDDINGS, 2, VLM_SHAPE(text->vocab_size, text->hidden_size),
                   "lm_head.weight");
  if (config->tie_word_embeddings) vlm_manifest_mark_optional(manifest);
  return VLM_OK;
}

static void describe(const vlm_model_config *config, vlm_decoder_description *out) {
  *out = (vlm_decoder_description){.text = &config->text, .tie_word_embeddings = config->tie_word_embeddings,
                                   .prefix = "model.", .embedding_scale = 1.0};
}

/* VLM_MLA_EXPANDED=1: the expanded form (see the top of the file). */
static bool expanded_form(void) {
  const char *form = getenv("VLM_MLA_EXPANDED");
  return form && strcmp(form, "1") == 0;
}

/* The latent layout: kv_lora_rank + qk_rope_head_dim values a token a
 * layer (the expanded form: heads K and V of max(nope + rope, value)). */
static vlm_status kv_layout(const vlm_model_config *config, vlm_kv_layout *out) {
  youtu_sizes sizes;
  VLM_RETURN_IF_ERROR(read_sizes(config, &sizes));
  if (expanded_form()) {
    int64_t qk = sizes.nope + sizes.rope;
    return vlm_kv_layout_standard(config->text.num_hidden_layers, sizes.heads, qk > sizes.value ? qk : sizes.value,
                                  out);
  }
  VLM_RETURN_IF_ERROR(vlm_kv_layout_standard(config->text.num_hidden_layers, 1, 1, out));
  for (int32_t l = 0; l < out->layer_count; l++)
    out->layers[l] = (vlm_kv_layer){.key_width = sizes.kv_lora_rank + sizes.rope, .source = -1, .latent = true};
  return VLM_OK;
}

/* ---- The decoder graph ------------------------------------------------ */

/* apply_rotary_pos_emb_interleave on x [rows, heads, rope]: the pairs
 * (x0, x1), (x2, x3), ... gathered even-indices first, then rotate_half's
 * RoPE (Transformers' form, bit-identical to rotating the pairs). */
static int32_t interleaved_rope(vlm_decoder_blocks *blocks, int32_t x, int64_t rows, int64_t heads, int64_t rope,
                                bool interleave, const char *layer_prefix, const char *name) {
  vlm_graph *graph = blocks->graph;
  if (interleave) {
    x = vlm_graph_reshape(graph, x, 4, VLM_SHAPE(rows, heads, rope / 2, 2), "%sself_attn.%s_pairs", layer_prefix,
                          name);
    x = vlm_graph_permute(graph, x, (const int32_t[]){0, 1, 3, 2}, "%sself_attn.%s_deinterleaved", layer_prefix,
                          name);
    x = vlm_graph_reshape(graph, x, 3, VLM_SHAPE(rows, heads, rope), "%sself_attn.%s_even_odd", layer_prefix, name);
  }
  char node[VLM_GRAPH_NAME_LENGTH];
  snprintf(node, sizeof(node), "%sself_attn.%s_rope", layer_prefix, name);
  return vlm_block_rope(blocks, x, 0, node);
}

/* kv_b_proj.weight [heads * (nope + value), rank] as f32 [heads, nope +
 * value, rank] (an activation, for the absorbed products). */
static int32_t kv_b_heads(vlm_decoder_blocks *blocks, const youtu_sizes *sizes, const char *layer_prefix) {
  vlm_graph *graph = blocks->graph;
  int64_t per_head = sizes->nope + sizes->value;
  int32_t weight = vlm_block_weight(blocks, layer_prefix, "self_attn.kv_b_proj.weight", 2,
                                    VLM_SHAPE(sizes->heads * per_head, sizes->kv_lora_rank));
  int32_t values = vlm_graph_scale(graph, weight, 1.0, "%sself_attn.kv_b_proj.f32", layer_prefix);
  return vlm_graph_reshape(graph, values, 3, VLM_SHAPE(sizes->heads, per_head, sizes->kv_lora_rank),
                           "%sself_attn.kv_b_heads", layer_prefix);
}

/* The absorbed attention: query_nope [rows, heads, nope], query_rope and
 * the latent [rows, 1, rank + rope] (normed latent, rotated rope key);
 * returns [rows, heads * value] before o_proj. */
static int32_t absorbed_attention(vlm_decoder_blocks *blocks, const youtu_sizes *sizes, int32_t query_nope,
                                  int32_t query_rope, int32_t latent, int64_t rows, const char *layer_prefix,
                                  int32_t layer) {
  vlm_graph *graph = blocks->graph;
  int64_t heads = sizes->heads, rank = sizes->kv_lora_rank;
  int32_t kv_b = kv_b_heads(blocks, sizes, layer_prefix);
  int32_t w_uk = vlm_graph_slice(graph, kv_b, 1, 0, sizes->nope, "%sself_attn.w_uk", layer_prefix);
  int32_t w_uv = vlm_graph_slice(graph, kv_b, 1, sizes->nope, sizes->value, "%sself_attn.w_uv", layer_prefix);
  /* q_nope W_UK per head: [heads, rows, nope] x [heads, nope, rank]. */
  int32_t q = vlm_graph_permute(graph, query_nope, (const int32_t[]){1, 0, 2}, "%sself_attn.q_nope_by_head",
                                layer_prefix);
  q = vlm_graph_matmul(graph, q, w_uk, "%sself_attn.q_absorbed_by_head", layer_prefix);
  q = vlm_graph_permute(graph, q, (const int32_t[]){1, 0, 2}, "%sself_attn.q_absorbed", layer_prefix);
  int32_t query = vlm_graph_concat(graph, (const int32_t[]){q, query_rope}, 2, 2, "%sself_attn.q_latent",
                                   layer_prefix);
  int32_t attended = vlm_graph_attention(graph, query, latent, latent, layer, sizes->scaling, 0, 0,
                                         "%sself_attn.attention", layer_prefix);
  attended = vlm_graph_reshape(graph, attended, 3, VLM_SHAPE(rows, heads, rank + sizes->rope),
                               "%sself_attn.attention_heads", layer_prefix);
  attended = vlm_graph_slice(graph, attended, 2, 0, rank, "%sself_attn.attention_latent", layer_prefix);
  /* The weighted latent through W_UV: [heads, rows, rank] x [heads, rank, value]. */
  attended = vlm_graph_permute(graph, attended, (const int32_t[]){1, 0, 2}, "%sself_attn.attention_by_head",
                               layer_prefix);
  int32_t w_uv_t = vlm_graph_permute(graph, w_uv, (const int32_t[]){0, 2, 1}, "%sself_attn.w_uv_t", layer_prefix);
  attended = vlm_graph_matmul(graph, attended, w_uv_t, "%sself_attn.values_by_head", layer_prefix);
  attended = vlm_graph_permute(graph, attended, (const int32_t[]){1, 0, 2}, "%sself_attn.values", layer_prefix);
  return vlm_graph_reshape(graph, attended, 2, VLM_SHAPE(rows, heads * sizes->value), "%sself_attn.attn_output",
                           layer_prefix);
}

/* Zeros [rows, heads, width] out of x [rows, heads, >= width] (clamped to
 * 0: exact whatever x holds). */
static int32_t zeros_like_part(vlm_graph *graph, int32_t x, int64_t width, const char *layer_prefix,
                               const char *name) {
  int32_t part = vlm_graph_slice(graph, x, 2, 0, width, "%sself_attn.%s_part", layer_prefix, name);
  return vlm_graph_clamp(graph, part, 0.0, 0.0, "%sself_attn.%s_zeros", layer_prefix, name);
}

/* x [rows, heads, width] padded with zeros to `to` values a head. */
static int32_t pad_heads(vlm_graph *graph, int32_t x, int64_t width, int64_t to, int32_t source,
                         const char *layer_prefix, const char *name) {
  if (width == to) return x;
  int32_t zeros = zeros_like_part(graph, source, to - width, layer_prefix, name);
  return vlm_graph_concat(graph, (const int32_t[]){x, zeros}, 2, 2, "%sself_attn.%s_padded", layer_prefix, name);
}

/* The expanded form, Transformers' own: expand_kv (kv_b_proj on the
 * normed latent gives each head's nope key and value; the rope key
 * repeated over the heads), then standard cached attention. Its cache is
 * the expanded K and V (each head padded to max(nope + rope, value) so K
 * and V share a width; zeros change no score and are sliced off). */
static int32_t expanded_attention(vlm_decoder_blocks *blocks, const youtu_sizes *sizes, int32_t query_nope,
                                  int32_t query_rope, int32_t kv_normed, int32_t key_rope, int64_t rows,
                                  const char *layer_prefix, int32_t layer) {
  vlm_graph *graph = blocks->graph;
  int64_t heads = sizes->heads, per_head = sizes->nope + sizes->value, qk = sizes->nope + sizes->rope;
  int64_t width = qk > sizes->value ? qk : sizes->value;
  int32_t kv = vlm_block_linear(blocks, kv_normed, layer_prefix, "self_attn.kv_b_proj", heads * per_head,
                                sizes->kv_lora_rank, false);
  kv = vlm_graph_reshape(graph, kv, 3, VLM_SHAPE(rows, heads, per_head), "%sself_attn.kv_heads", layer_prefix);
  int32_t key_nope = vlm_graph_slice(graph, kv, 2, 0, sizes->nope, "%sself_attn.k_nope", layer_prefix);
  int32_t value = vlm_graph_slice(graph, kv, 2, sizes->nope, sizes->value, "%sself_attn.value_states", layer_prefix);
  /* k_rot.expand over the heads: concatenations of at most
   * VLM_GRAPH_MAX_INPUTS copies at a time. */
  int32_t key_rope_heads = key_rope;
  for (int64_t have = 1; have < heads;) {
    int32_t parts[VLM_GRAPH_MAX_INPUTS];
    int count = 0;
    parts[count++] = key_rope_heads;
    int64_t next = have;
    while (count < VLM_GRAPH_MAX_INPUTS && next + 1 <= heads) {
      parts[count++] = key_rope;
      next++;
    }
    key_rope_heads = vlm_graph_concat(graph, parts, count, 1, "%sself_attn.k_rope_heads_%lld", layer_prefix,
                                      (long long)next);
    have = next;
  }
  int32_t key = vlm_graph_concat(graph, (const int32_t[]){key_nope, key_rope_heads}, 2, 2,
                                 "%sself_attn.key_states", layer_prefix);
  int32_t query = vlm_graph_concat(graph, (const int32_t[]){query_nope, query_rope}, 2, 2,
                                   "%sself_attn.query_states", layer_prefix);
  query = pad_heads(graph, query, qk, width, value, layer_prefix, "query");
  key = pad_heads(graph, key, qk, width, value, layer_prefix, "key");
  value = pad_heads(graph, value, sizes->value, width, key, layer_prefix, "value");
  int32_t attended = vlm_graph_attention(graph, query, key, value, layer, sizes->scaling, 0, 0,
                                         "%sself_attn.attention", layer_prefix);
  if (width == sizes->value) return attended;
  attended = vlm_graph_reshape(graph, attended, 3, VLM_SHAPE(rows, heads, width), "%sself_attn.attention_heads",
                               layer_prefix);
  attended = vlm_graph_slice(graph, attended, 2, 0, sizes->value, "%sself_attn.attention_values", layer_prefix);
  return vlm_graph_reshape(graph, attended, 2, VLM_SHAPE(rows, heads * sizes->value), "%sself_attn.attn_output",
                           layer_prefix);
}

/* YoutuAttention.forward. */
static int32_t youtu_attention(vlm_decoder_blocks *blocks, const youtu_sizes *sizes, int32_t hidden,
                               const char *layer_prefix, int32_t layer, bool expanded) {
  vlm_graph *graph = blocks->graph;
  const vlm_node *input = vlm_graph_node(graph, hidden);
  if (!input) return -1;
  int64_t rows = input->shape[0], width = blocks->text->hidden_size, heads = sizes->heads;
  int64_t qk = sizes->nope + sizes->rope, rank = sizes->kv_lora_rank;
  int32_t q;
  if (sizes->q_lora_rank) {
    q = vlm_block_linear(blocks, hidden, layer_prefix, "self_attn.q_a_proj", sizes->q_lora_rank, width, sizes->bias);
    q = vlm_block_rms_norm(blocks, q, layer_prefix, "self_attn.q_a_layernorm", sizes->q_lora_rank);
    q = vlm_block_linear(blocks, q, layer_prefix, "self_attn.q_b_proj", heads * qk, sizes->q_lora_rank, false);
  } else {
    q = vlm_block_linear(blocks, hidden, layer_prefix, "self_attn.q_proj", heads * qk, width, false);
  }
  q = vlm_graph_reshape(graph, q, 3, VLM_SHAPE(rows, heads, qk), "%sself_attn.q_heads", layer_prefix);
  int32_t q_pass = vlm_graph_slice(graph, q, 2, 0, sizes->nope, "%sself_attn.q_pass", layer_prefix);
  int32_t q_rot = vlm_graph_slice(graph, q, 2, sizes->nope, sizes->rope, "%sself_attn.q_rot", layer_prefix);

  int32_t compressed = vlm_block_linear(blocks, hidden, layer_prefix, "self_attn.kv_a_proj_with_mqa",
                                        rank + sizes->rope, width, sizes->bias);
  int32_t kv_nope = vlm_graph_slice(graph, compressed, 1, 0, rank, "%sself_attn.kv_nope", layer_prefix);
  int32_t k_rot = vlm_graph_slice(graph, compressed, 1, rank, sizes->rope, "%sself_attn.k_rot", layer_prefix);
  kv_nope = vlm_block_rms_norm(blocks, kv_nope, layer_prefix, "self_attn.kv_a_layernorm", rank);
  k_rot = vlm_graph_reshape(graph, k_rot, 3, VLM_SHAPE(rows, 1, sizes->rope), "%sself_attn.k_rot_head", layer_prefix);

  q_rot = interleaved_rope(blocks, q_rot, rows, heads, sizes->rope, sizes->interleave, layer_prefix, "q");
  k_rot = interleaved_rope(blocks, k_rot, rows, 1, sizes->rope, sizes->interleave, layer_prefix, "k");
  /* What the cache holds: the normed latent, then the rotated rope key. */
  int32_t latent = vlm_graph_concat(
      graph,
      (const int32_t[]){kv_nope, vlm_graph_reshape(graph, k_rot, 2, VLM_SHAPE(rows, sizes->rope), "%sself_attn.k_rope",
                                                   layer_prefix)},
      2, 1, "%sself_attn.latent_rows", layer_prefix);
  latent = vlm_graph_reshape(graph, latent, 3, VLM_SHAPE(rows, 1, rank + sizes->rope), "%sself_attn.latent",
                             layer_prefix);
  int32_t attended = expanded ? expanded_attention(blocks, sizes, q_pass, q_rot, kv_nope, k_rot, rows, layer_prefix,
                                                   layer)
                              : absorbed_attention(blocks, sizes, q_pass, q_rot, latent, rows, layer_prefix, layer);
  return vlm_block_linear(blocks, attended, layer_prefix, "self_attn.o_proj", width, heads * sizes->value,
                          sizes->bias);
}

/* YoutuDecoderLayer.forward. */
static int32_t youtu_decoder_layer(vlm_decoder_blocks *blocks, const youtu_sizes *sizes, int32_t residual,
                                   int32_t layer, bool expanded) {
  int64_t width = blocks->text->hidden_size;
  char layer_prefix[VLM_GRAPH_NAME_LENGTH];
  snprintf(layer_prefix, sizeof(layer_prefix), "model.layers.%d.", layer);
  int32_t hidden = vlm_block_rms_norm(blocks, residual, layer_prefix, "input_layernorm", width);
  hidden = youtu_attention(blocks, sizes, hidden, layer_prefix, layer, expanded);
  residual = vlm_graph_add(blocks->graph, residual, hidden, "%sresidual_attention", layer_prefix);
  hidden = vlm_block_rms_norm(blocks, residual, layer_prefix, "post_attention_layernorm", width);
  hidden = vlm_block_llama_mlp(blocks, hidden, layer_prefix, layer);
  return vlm_graph_add(blocks->graph, residual, hidden, "model.layers.%d", layer);
}

/* YoutuForCausalLM.forward. */
static vlm_status build_decoder(const vlm_decoder_description *description, const vlm_decoder_step *step,
                                vlm_graph *graph) {
  youtu_sizes sizes;
  vlm_model_config config = {.text = *description->text, .tie_word_embeddings = description->tie_word_embeddings};
  VLM_RETURN_IF_ERROR(read_sizes(&config, &sizes));
  vlm_decoder_blocks blocks;
  VLM_RETURN_IF_ERROR(vlm_decoder_blocks_begin(description, step, graph, &blocks));
  bool expanded = expanded_form();
  int32_t hidden = vlm_block_embed_tokens(&blocks);
  vlm_decoder_blocks_lora_inputs(&blocks);
  for (int32_t layer = 0; layer < description->text->num_hidden_layers; layer++)
    hidden = youtu_decoder_layer(&blocks, &sizes, hidden, layer, expanded);
  VLM_RETURN_IF_ERROR(vlm_decoder_blocks_check_adapters(&blocks));
  return vlm_block_causal_lm_head(&blocks, hidden);
}

static const vlm_family_layout layouts[] = {
    {"Transformers 5.23", "youtu", false},
};

const vlm_family vlm_family_youtu = {
    .model_type = "youtu", .display_name = "Youtu-LLM",
    .layouts = layouts, .layout_count = 1,
    .declare_tensors = declare_tensors,
    .describe_decoder = describe,
    .build_decoder = build_decoder,
    .kv_layout = kv_layout,
    /* The xla state holds one K/V width for every layer, not a latent. */
    .cpu_only = true,
};
