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
vlm_status vlm_stage_merged_input_embeddings(const vlm_compare_context *context,
                                             const vlm_golden_stage *stage,
                                             vlm_stage_result *result);

/* stage_processor.c: the CLIP image processors on the fixture images. */
vlm_status vlm_stage_processor_pixel_values(const vlm_compare_context *context,
                                            const vlm_golden_stage *stage,
                                            vlm_stage_result *result);
vlm_status vlm_stage_processor_pil_pixel_values(const vlm_compare_context *context,
                                                const vlm_golden_stage *stage,
                                                vlm_stage_result *result);

#endif
