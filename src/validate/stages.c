/* Which stages of a golden case vlm can compute today. A stage named in a
 * golden manifest but absent here is reported as "not implemented yet".
 * Each stage also says where a module backend (xla) computes it: on the
 * host (backend-independent, the same function), at a module boundary (the
 * backend's modules, stage_modules.c), or only inside a compiled module.
 * Later issues add one line each (and the function in its own file):
 *   processor.pixel_values, input_ids, position_ids, attention_mask,
 *   token_type_ids, prefill_mask,
 *   vision_encoder, vision_features, projector, input_embeddings,
 *   prefill_logits, kv, greedy_tokens, text. */
#include <string.h>

#include "validate/compare.h"
#include "validate/stages.h"

/* Where a stage is computed on a module backend (xla). */
typedef enum stage_place {
  HOST,    /* on the host whatever the backend: the cpu function */
  MODULE,  /* a module boundary: the backend function, through the backend's modules */
  INSIDE,  /* only inside a compiled module: not computed on that backend */
} stage_place;

typedef struct stage_entry {
  const char *name;
  vlm_stage_function function;  /* the cpu reference path */
  stage_place place;
  vlm_stage_function backend;   /* with MODULE */
} stage_entry;

static const stage_entry stages[] = {
    {"checkpoint", vlm_stage_checkpoint, HOST, NULL},
    {"processor.pixel_values", vlm_stage_processor_tensor, HOST, NULL},
    {"processor.image_grid_thw", vlm_stage_processor_tensor, HOST, NULL},
    {"processor_pil.pixel_values", vlm_stage_processor_pil_tensor, HOST, NULL},
    {"processor_pil.image_grid_thw", vlm_stage_processor_pil_tensor, HOST, NULL},
    {"processor.num_crops", vlm_stage_processor_tensor, HOST, NULL},
    {"processor.image_pixel_values", vlm_stage_processor_tensor, HOST, NULL},
    {"processor.image_attention_mask", vlm_stage_processor_tensor, HOST, NULL},
    {"processor.image_sizes", vlm_stage_processor_tensor, HOST, NULL},
    {"processor.num_img_tokens", vlm_stage_processor_tensor, HOST, NULL},
    {"processor_pil.num_crops", vlm_stage_processor_pil_tensor, HOST, NULL},
    {"input_ids", vlm_stage_input_ids, HOST, NULL},
    {"attention_mask", vlm_stage_attention_mask, HOST, NULL},
    {"position_ids", vlm_stage_position_ids, HOST, NULL},
    {"mm_token_type_ids", vlm_stage_mm_token_type_ids, HOST, NULL},
    {"token_type_ids", vlm_stage_mm_token_type_ids, HOST, NULL},
    {"prefill_mask", vlm_stage_prefill_mask, HOST, NULL},
    {"rope_deltas", vlm_stage_rope_deltas, HOST, NULL},
    {"refusal", vlm_stage_refusal, HOST, NULL},
    /* The greedy tokens the backend decoded, through the tokenizer. */
    {"text", vlm_stage_text, MODULE, vlm_module_stage_text},
    /* The encoder graph's integer inputs, built on the host for any backend. */
    {"vision_window_index", vlm_stage_encoder_input, HOST, NULL},
    {"vision_position_ids", vlm_stage_encoder_input, HOST, NULL},
    {"vision_embeddings", vlm_stage_vision_encoder, INSIDE, NULL},
    {"vision_encoder", vlm_stage_vision_encoder, INSIDE, NULL},
    /* The image encoder's output rows: the projected features, then the layer features. */
    {"deepstack_features", vlm_stage_projector, MODULE, vlm_module_stage_image_features},
    {"vision_features", vlm_stage_vision_features, INSIDE, NULL},
    {"projector", vlm_stage_projector, MODULE, vlm_module_stage_image_features},
    /* The merge is a step of the decoder module. */
    {"input_embeddings", vlm_stage_media_input_embeddings, INSIDE, NULL},
    {"processor.audio_input_features", vlm_stage_audio_processor_tensor, HOST, NULL},
    {"processor.audio_embed_sizes", vlm_stage_audio_processor_tensor, HOST, NULL},
    {"audio_encoder", vlm_stage_audio_encoder, INSIDE, NULL},
    {"audio_projector", vlm_stage_audio_encoder, MODULE, vlm_module_stage_audio_features},
    {"audio_projector_vision_speech", vlm_stage_audio_encoder, MODULE, vlm_module_stage_audio_features},
    {"prefill_logits", vlm_stage_prefill_logits, MODULE, vlm_module_stage_prefill_logits},
    {"kv", vlm_stage_kv, MODULE, vlm_module_stage_kv},
    {"greedy_tokens", vlm_stage_greedy_tokens, MODULE, vlm_module_stage_greedy_tokens},
};

vlm_stage_function vlm_stage_function_find(const char *stage_name, const vlm_compare_backend *backend,
                                           bool *inside_module) {
  if (inside_module) *inside_module = false;
  for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
    if (strcmp(stages[i].name, stage_name) != 0) continue;
    if (!backend || stages[i].place == HOST) return stages[i].function;
    if (stages[i].place == INSIDE && inside_module) *inside_module = true;
    return stages[i].backend;
  }
  return NULL;
}
