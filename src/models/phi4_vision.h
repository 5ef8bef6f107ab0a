/* Phi-4-multimodal's image path (phi4_vision.c): the tensors of
 * model.embed_tokens_extend.image_embed and the vlm_family_image that
 * phi4_multimodal.c's family record points at. */
#ifndef VLM_MODELS_PHI4_VISION_H
#define VLM_MODELS_PHI4_VISION_H

#include "models/family.h"

/* Declares the SigLIP tower (its unused pooling head and post_layernorm
 * included: they are in every checkpoint), the separators and the
 * projector. */
void vlm_phi4_declare_vision(const vlm_model_config *config, vlm_tensor_manifest *manifest);

extern const vlm_family_image vlm_phi4_image_path;

#endif
