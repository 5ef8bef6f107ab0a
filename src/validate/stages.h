/* The vlm side of each golden stage (one file per stage, listed in stages.c). */
#ifndef VLM_VALIDATE_STAGES_H
#define VLM_VALIDATE_STAGES_H

#include "validate/compare.h"

/* stage_checkpoint.c: weights through vlm's checkpoint table vs Transformers' state_dict. */
vlm_status vlm_stage_checkpoint(const vlm_compare_context *context,
                                const vlm_golden_stage *stage, vlm_stage_result *result);

/* stage_decoder.c: the text decoder on the golden prompt. */
vlm_status vlm_stage_input_embeddings(const vlm_compare_context *context,
                                      const vlm_golden_stage *stage, vlm_stage_result *result);
vlm_status vlm_stage_prefill_logits(const vlm_compare_context *context,
                                    const vlm_golden_stage *stage, vlm_stage_result *result);
vlm_status vlm_stage_kv(const vlm_compare_context *context, const vlm_golden_stage *stage,
                        vlm_stage_result *result);
vlm_status vlm_stage_greedy_tokens(const vlm_compare_context *context,
                                   const vlm_golden_stage *stage, vlm_stage_result *result);

/* stage_text.c: prompt to ids, and greedy tokens back to text. */
vlm_status vlm_stage_input_ids(const vlm_compare_context *context, const vlm_golden_stage *stage,
                               vlm_stage_result *result);
vlm_status vlm_stage_attention_mask(const vlm_compare_context *context,
                                    const vlm_golden_stage *stage, vlm_stage_result *result);
vlm_status vlm_stage_position_ids(const vlm_compare_context *context,
                                  const vlm_golden_stage *stage, vlm_stage_result *result);
/* mm_token_type_ids (0 text, 1 image) and rope_deltas (M-RoPE: decode
 * position minus cache length) of the built prompt; refusal: vlm refuses
 * the request Transformers refuses. */
/* The prefill mask per layer kind (Gemma 3's bidirectional images). */
vlm_status vlm_stage_prefill_mask(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                  vlm_stage_result *result);
vlm_status vlm_stage_mm_token_type_ids(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                       vlm_stage_result *result);
vlm_status vlm_stage_rope_deltas(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                 vlm_stage_result *result);
vlm_status vlm_stage_refusal(const vlm_compare_context *context, const vlm_golden_stage *stage,
                             vlm_stage_result *result);
vlm_status vlm_stage_text(const vlm_compare_context *context, const vlm_golden_stage *stage,
                          vlm_stage_result *result);

/* stage_vision.c: the vision tower, features and projector on the golden
 * pixel values, and input_embeddings (merged for image cases). */
vlm_status vlm_stage_vision_encoder(const vlm_compare_context *context,
                                    const vlm_golden_stage *stage, vlm_stage_result *result);
vlm_status vlm_stage_vision_features(const vlm_compare_context *context,
                                     const vlm_golden_stage *stage, vlm_stage_result *result);
vlm_status vlm_stage_projector(const vlm_compare_context *context, const vlm_golden_stage *stage,
                               vlm_stage_result *result);
/* An integer input the family's encoder graph takes (its "encoder_input"),
 * over every golden image: e.g. Qwen2.5-VL's window order. */
vlm_status vlm_stage_encoder_input(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                   vlm_stage_result *result);
vlm_status vlm_stage_merged_input_embeddings(const vlm_compare_context *context,
                                             const vlm_golden_stage *stage,
                                             vlm_stage_result *result);

/* stage_processor.c: the model's image processor (default and Pil
 * backends) on the fixture images: processor[_pil].<tensor>. */
vlm_status vlm_stage_processor_tensor(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                      vlm_stage_result *result);
vlm_status vlm_stage_processor_pil_tensor(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                          vlm_stage_result *result);

/* stage_audio.c: the feature extractor on the fixture clip
 * (processor.audio_*), the audio encoder graph's stages (audio_encoder,
 * audio_projector) on the golden features, and input_embeddings of every
 * case (cases with audio merge both kinds; others go to
 * vlm_stage_merged_input_embeddings). */
vlm_status vlm_stage_audio_processor_tensor(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                            vlm_stage_result *result);
vlm_status vlm_stage_audio_encoder(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                   vlm_stage_result *result);
vlm_status vlm_stage_media_input_embeddings(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                            vlm_stage_result *result);

/* stage_modules.c: the module-boundary stages on a backend other than cpu
 * (vlm_compare_backend), through the backend's modules: each image's and
 * clip's encoder output, the prefill logits, every layer's KV, greedy
 * decoding and its text. */
vlm_status vlm_module_stage_image_features(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                           vlm_stage_result *result);
vlm_status vlm_module_stage_audio_features(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                           vlm_stage_result *result);
vlm_status vlm_module_stage_prefill_logits(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                           vlm_stage_result *result);
vlm_status vlm_module_stage_kv(const vlm_compare_context *context, const vlm_golden_stage *stage,
                               vlm_stage_result *result);
vlm_status vlm_module_stage_greedy_tokens(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                          vlm_stage_result *result);
vlm_status vlm_module_stage_text(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                 vlm_stage_result *result);
/* The modules a comparison opens as its stages need them (NULL: out of
 * memory); released before the model they hold. */
vlm_compare_modules *vlm_compare_modules_create(void);
void vlm_compare_modules_release(vlm_compare_modules *modules);

#endif
