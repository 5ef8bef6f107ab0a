#include "models/decoder.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/status.h"

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

int64_t vlm_decoder_feature_width(const vlm_decoder_description *description) {
  return description->text->hidden_size * (1 + (int64_t)description->layer_features.count);
}

vlm_status vlm_build_described_decoder(const vlm_decoder_description *description, const vlm_decoder_step *step,
                                       vlm_graph *graph) {
  vlm_decoder_blocks blocks;
  VLM_RETURN_IF_ERROR(vlm_decoder_blocks_begin(description, step, graph, &blocks));
  const vlm_text_config *text = description->text;
  int32_t hidden = vlm_block_embed_tokens(&blocks);
  vlm_decoder_blocks_lora_inputs(&blocks);
  int32_t layer_features = -1;
  size_t layer_feature_count = description->layer_features.count;
  if (step->with_features && layer_feature_count > 0)
    layer_features = vlm_graph_input(graph, VLM_DTYPE_F32, 3,
                                     VLM_SHAPE((int64_t)layer_feature_count, step->row_count, text->hidden_size),
                                     "layer_features");
  for (int32_t layer = 0; layer < text->num_hidden_layers; layer++) {
    hidden = vlm_block_llama_decoder_layer(&blocks, hidden, layer);
    hidden = vlm_block_add_layer_features(&blocks, layer_features, hidden, layer);
  }
  VLM_RETURN_IF_ERROR(vlm_decoder_blocks_check_adapters(&blocks));
  return vlm_block_causal_lm_head(&blocks, hidden);
}

vlm_status vlm_build_decoder_graph(const vlm_decoder_description *description, const vlm_decoder_step *step,
                                   vlm_graph *graph) {
  if (description->build) return description->build(description, step, graph);
  return vlm_build_described_decoder(description, step, graph);
}
