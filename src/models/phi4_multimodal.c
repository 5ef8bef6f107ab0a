/* Phi-4-multimodal (Transformers' Phi4MultimodalForCausalLM): a Phi-3
 * style decoder (fused qkv_proj and gate_up_proj, partial rotary, LongRoPE)
 * and the PEFT LoRA adapters its checkpoint directory ships, chosen per
 * request by the media it carries. The image path (SigLIP with NaViT
 * position ids over dynamic HD crops, model.embed_tokens_extend.image_embed)
 * is phi4_vision.c's; the speech encoder and its projections are the audio
 * path (phi4_audio.c). */
#include "models/decoder.h"
#include "core/status.h"
#include "models/phi4_audio.h"
#include "models/phi4_vision.h"

static const vlm_decoder_layout phi4_layout = {.fused_qkv = true, .fused_gate_up = true};

static vlm_status declare_tensors(const vlm_model_config *config, vlm_tensor_manifest *manifest) {
  vlm_declare_text_decoder(manifest, &config->text, config->tie_word_embeddings, "model.", &phi4_layout);
  if (config->has_vision) vlm_phi4_declare_vision(config, manifest);
  if (config->has_audio) VLM_RETURN_IF_ERROR(vlm_phi4_declare_audio_tensors(config, manifest));
  return VLM_OK;
}

static void describe_decoder(const vlm_model_config *config, vlm_decoder_description *out) {
  *out = (vlm_decoder_description){.text = &config->text, .tie_word_embeddings = config->tie_word_embeddings,
                                   .prefix = "model.", .layout = phi4_layout, .embedding_scale = 1.0};
  /* Phi4MultimodalForCausalLM.prepare_inputs_for_generation compares the
   * sequence with config.original_max_position_embeddings (4096). */
  if (config->text.rope.type == VLM_ROPE_LONGROPE)
    out->rope_cache_reset_length = config->text.rope.original_max_position_embeddings;
}

/* The original phi4mm remote code's choice (Transformers 5.23 has none of
 * its own): an image, with or without audio, takes the vision adapter,
 * audio alone the speech adapter, text the base model. */
static const char *const phi4_adapters[] = {"vision-lora", "speech-lora"};

static int adapter_for(bool has_image, bool has_audio) {
  if (has_image) return 0;
  if (has_audio) return 1;
  return -1;
}

static const vlm_family_layout layouts[] = {
    {"Transformers 5.23", "phi4_multimodal", false},
};

const vlm_family vlm_family_phi4_multimodal = {
    .model_type = "phi4_multimodal",
    .display_name = "Phi-4-multimodal",
    .layouts = layouts, .layout_count = 1,
    .has_vision = true,
    .has_audio = true,
    .prompt_flow = VLM_PROMPT_FLOW_PROCESSOR,
    .declare_tensors = declare_tensors,
    .describe_decoder = describe_decoder,
    .image = &vlm_phi4_image_path,
    .adapters = phi4_adapters,
    .adapter_count = 2,
    .adapter_for = adapter_for,
    .audio = &vlm_phi4_audio_path,
};
