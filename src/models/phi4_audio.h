/* Phi-4-multimodal's speech path (Transformers 5.23
 * Phi4MultimodalAudioEmbedding): the conformer encoder
 * (Phi4MultimodalAudioModel: mean/variance norm, NeMo conv subsampling,
 * relative attention bias, conformer blocks) and its two projections, as
 * the family's vlm_family_audio (models/family.h). */
#ifndef VLM_MODELS_PHI4_AUDIO_H
#define VLM_MODELS_PHI4_AUDIO_H

#include "models/family.h"

/* The speech encoder's and projections' tensors (model.embed_tokens_extend.audio_embed.*). */
vlm_status vlm_phi4_declare_audio_tensors(const vlm_model_config *config, vlm_tensor_manifest *manifest);

extern const vlm_family_audio vlm_phi4_audio_path;

/* The additive attention mask Transformers' encoder gives every block of
 * `length` rows ([length, length]): its boolean streaming mask
 * (adaptive_enc_mask over chunks of chunk_size with left_chunk chunks of
 * left context; chunk_size <= 0 means one chunk) added to the relative
 * bias as 1.0 where true and 0.0 where false, not as a mask (the quirk
 * Phi4MultimodalAudioModel.forward has: hs_mask.unsqueeze(1) +
 * relative_attention_bias), so every row attends to every key. Exposed for
 * tests. */
void vlm_phi4_audio_chunk_mask(int64_t length, int64_t chunk_size, int64_t left_chunk, float *out);

#endif
