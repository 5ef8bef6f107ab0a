/* Qwen3-VL-MoE (qwen3_vl_moe): Qwen3-VL's tower, processor, placeholders,
 * M-RoPE positions and DeepStack (qwen3_vl.c), and a Qwen3 decoder whose
 * MLPs are sparse mixtures of experts. Transformers 5.23.0's
 * Qwen3VLMoeForConditionalGeneration (modeling_qwen3_vl_moe.py):
 *
 *   layer l is sparse unless l is in mlp_only_layers or num_experts is 0
 *   or (l + 1) % decoder_sparse_step != 0; a dense layer keeps the gated
 *   MLP of intermediate_size
 *   router      Qwen3VLMoeTextTopKRouter: logits = x W^T ([num_experts,
 *               hidden], no bias), softmax in float32, top num_experts_per_tok,
 *               always divided by their sum (the class removes
 *               norm_topk_prob: a config's value is ignored)
 *   experts     Qwen3VLMoeTextExperts: gate_up_proj [E, 2I, hidden] and
 *               down_proj [E, hidden, I] (I = moe_intermediate_size), run
 *               by the grouped_mm experts implementation (5.23's default):
 *               each token's k weighted outputs summed in the router's order
 *
 * The hub's checkpoints store the experts [E, hidden, 2I] / [E, I, hidden];
 * Transformers 5.23 transposes a tensor on load when its shape is not the
 * module's (conversion_mapping "qwen3_vl_moe": Transpose(1, 2,
 * check_dims=True)) and saves the module's layout, so both layouts occur.
 * The decoder graph picks each tensor's by its shape and refuses one that
 * fits both (models/decoder.h). */
#include <stdlib.h>

#include "core/status.h"
#include "io/json.h"
#include "models/decoder.h"
#include "models/qwen_vl.h"

/* The MoE fields of the text config (Qwen3VLMoeTextConfig; the merged
 * section holds the class defaults under the file's values). */
static vlm_status read_experts(const vlm_text_config *text, vlm_decoder_experts *out) {
  *out = (vlm_decoder_experts){.normalize_top_k = true};
  /* Qwen3VLMoeTextConfig.attribute_map: num_experts is stored as
   * num_local_experts (what save_pretrained writes; the hub's "num_experts"
   * lands there too), the class default under its field name. */
  const char *keys[] = {"num_local_experts", "num_experts_per_tok", "moe_intermediate_size", "decoder_sparse_step"};
  if (!vlm_json_object_get(text->section, keys[0])) keys[0] = "num_experts";
  int64_t values[4];
  for (int i = 0; i < 4; i++)
    if (!vlm_json_get_int(vlm_json_object_get(text->section, keys[i]), &values[i]))
      return VLM_ERROR(INVALID_ARGUMENT, "config.json: text_config.%s is not an integer", keys[i]);
  out->count = values[0];
  out->top_k = values[1];
  out->intermediate_size = values[2];
  out->sparse_step = values[3];
  if (out->count < 0 || out->count > 4096 || out->sparse_step < 1 || out->sparse_step > 1 << 20)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: text_config has %lld experts every %lld layers",
                     (long long)out->count, (long long)out->sparse_step);
  if (out->count > 0 && (out->top_k < 1 || out->top_k > out->count || out->intermediate_size < 1 ||
                         out->intermediate_size > 1 << 24))
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: text_config chooses %lld of %lld experts of %lld",
                     (long long)out->top_k, (long long)out->count, (long long)out->intermediate_size);
  const vlm_json_value *dense = vlm_json_object_get(text->section, "mlp_only_layers");
  if (dense && dense->type == VLM_JSON_NULL) return VLM_OK;
  if (!dense || dense->type != VLM_JSON_ARRAY)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json: text_config.mlp_only_layers is not a list");
  if (dense->as.array.count > VLM_CONFIG_MAX_INDEXES)
    return VLM_ERROR(UNIMPLEMENTED, "config.json: %zu mlp_only_layers (at most %d)", dense->as.array.count,
                     VLM_CONFIG_MAX_INDEXES);
  for (size_t i = 0; i < dense->as.array.count; i++) {
    int64_t layer = 0;
    if (!vlm_json_get_int(&dense->as.array.items[i], &layer))
      return VLM_ERROR(INVALID_ARGUMENT, "config.json: text_config.mlp_only_layers[%zu] is not an integer", i);
    out->dense_layers.values[out->dense_layers.count++] = layer;
  }
  return VLM_OK;
}

static vlm_status declare_tensors(const vlm_model_config *config, vlm_tensor_manifest *manifest) {
  vlm_decoder_description description;
  VLM_RETURN_IF_ERROR(read_experts(&config->text, &description.experts));
  description.text = &config->text;
  int64_t layers = config->text.num_hidden_layers;
  bool *sparse = calloc((size_t)(layers > 0 ? layers : 1), sizeof(bool));
  if (!sparse) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t layer = 0; layer < layers; layer++) sparse[layer] = vlm_decoder_layer_is_sparse(&description, layer);
  vlm_decoder_layout layout = {.qk_norm = true, .sparse_layers = sparse, .experts = description.experts.count,
                               .expert_intermediate_size = description.experts.intermediate_size};
  vlm_declare_text_decoder(manifest, &config->text, config->tie_word_embeddings, "model.language_model.", &layout);
  free(sparse);
  vlm_qwen3_vl_declare_vision(&config->vision, manifest);
  return VLM_OK;
}

/* Qwen3-VL's description (DeepStack layer features, q/k norms) with the
 * experts (validated when the model was opened: declare_tensors). */
static void describe_decoder(const vlm_model_config *config, vlm_decoder_description *out) {
  vlm_qwen3_vl_describe_decoder(config, out);
  vlm_decoder_experts experts;
  vlm_status status = read_experts(&config->text, &experts);
  if (!status) out->experts = experts;
  vlm_status_free(status);
}

static const vlm_family_layout layouts[] = {
    {"Transformers 5.23 experts", "qwen3_vl_moe", false},
    {"hub experts", "qwen3_vl_moe_hub", false},
};

const vlm_family vlm_family_qwen3_vl_moe = {
    .model_type = "qwen3_vl_moe",
    .display_name = "Qwen3-VL-MoE",
    .layouts = layouts, .layout_count = 2,
    .has_vision = true,
    .prompt_flow = VLM_PROMPT_FLOW_PROCESSOR,
    .declare_tensors = declare_tensors,
    .describe_decoder = describe_decoder,
    .image = &vlm_qwen3_vl_image,
    .positions = vlm_qwen_vl_positions,
};
