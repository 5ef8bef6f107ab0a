/* The vlm side of each golden stage (one file per stage, listed in stages.c). */
#ifndef VLM_VALIDATE_STAGES_H
#define VLM_VALIDATE_STAGES_H

#include "validate/compare.h"

/* stage_checkpoint.c: weights through vlm's checkpoint table vs Transformers' state_dict. */
vlm_status vlm_stage_checkpoint(const vlm_compare_context *context,
                                const vlm_golden_stage *stage, vlm_stage_result *result);

#endif
