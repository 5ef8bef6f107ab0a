/* Which stages of a golden case vlm can compute today. A stage named in a
 * golden manifest but absent here is reported as "not implemented yet".
 * Later issues add one line each (and the function in its own file):
 *   processor.pixel_values, input_ids, position_ids, attention_mask,
 *   token_type_ids, prefill_mask,
 *   vision_encoder, vision_features, projector, input_embeddings,
 *   prefill_logits, kv, greedy_tokens, text. */
#include <string.h>

#include "validate/compare.h"
#include "validate/stages.h"

typedef struct stage_entry {
  const char *name;
  vlm_stage_function function;
} stage_entry;

static const stage_entry stages[] = {
    {"checkpoint", vlm_stage_checkpoint},
    {"processor.pixel_values", vlm_stage_processor_tensor},
    {"processor.image_grid_thw", vlm_stage_processor_tensor},
    {"processor_pil.pixel_values", vlm_stage_processor_pil_tensor},
    {"processor_pil.image_grid_thw", vlm_stage_processor_pil_tensor},
    {"processor.num_crops", vlm_stage_processor_tensor},
    {"processor.image_pixel_values", vlm_stage_processor_tensor},
    {"processor.image_attention_mask", vlm_stage_processor_tensor},
    {"processor.image_sizes", vlm_stage_processor_tensor},
    {"processor.num_img_tokens", vlm_stage_processor_tensor},
    {"processor_pil.num_crops", vlm_stage_processor_pil_tensor},
    {"input_ids", vlm_stage_input_ids},
    {"attention_mask", vlm_stage_attention_mask},
    {"position_ids", vlm_stage_position_ids},
    {"mm_token_type_ids", vlm_stage_mm_token_type_ids},
    {"token_type_ids", vlm_stage_mm_token_type_ids},
    {"prefill_mask", vlm_stage_prefill_mask},
    {"rope_deltas", vlm_stage_rope_deltas},
    {"refusal", vlm_stage_refusal},
    {"text", vlm_stage_text},
    {"vision_window_index", vlm_stage_encoder_input},
    {"vision_position_ids", vlm_stage_encoder_input},
    {"vision_embeddings", vlm_stage_vision_encoder},
    {"vision_encoder", vlm_stage_vision_encoder},
    {"deepstack_features", vlm_stage_projector},
    {"vision_features", vlm_stage_vision_features},
    {"projector", vlm_stage_projector},
    {"input_embeddings", vlm_stage_media_input_embeddings},
    {"processor.audio_input_features", vlm_stage_audio_processor_tensor},
    {"processor.audio_embed_sizes", vlm_stage_audio_processor_tensor},
    {"audio_encoder", vlm_stage_audio_encoder},
    {"audio_projector", vlm_stage_audio_encoder},
    {"audio_projector_vision_speech", vlm_stage_audio_encoder},
    {"prefill_logits", vlm_stage_prefill_logits},
    {"kv", vlm_stage_kv},
    {"greedy_tokens", vlm_stage_greedy_tokens},
};

vlm_stage_function vlm_stage_function_find(const char *stage_name) {
  for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++)
    if (strcmp(stages[i].name, stage_name) == 0) return stages[i].function;
  return NULL;
}
