/* The engine's view of a text decoder: the module contracts of SPEC 3.1 as
 * the scheduler uses them, behind a table of functions, so the same
 * scheduler drives the cpu backend (src/engine/text_model.c, through
 * text_decoder_cpu.c) and the xla backend (src/backends/xla, in the
 * vlm_xla library). A backend keeps each slot's length itself: prefill
 * appends at it, decode continues it, clear_slot resets it to 0. */
#ifndef VLM_ENGINE_TEXT_DECODER_H
#define VLM_ENGINE_TEXT_DECODER_H

#include <stdint.h>

#include "vlm.h"

typedef struct vlm_text_decoder vlm_text_decoder; /* also in vlm/engine.h */

typedef struct vlm_text_decoder_operations {
  const char *backend; /* "cpu", "xla" */
  int64_t (*capacity)(void *self);
  int64_t (*vocab_size)(void *self);
  int64_t (*hidden_size)(void *self);
  int32_t (*slot_count)(void *self);
  uint64_t (*kv_bytes)(void *self);
  int64_t (*slot_length)(void *self, int32_t slot);
  vlm_status (*clear_slot)(void *self, int32_t slot);
  /* Appends `count` rows to the slot (positions continue its length);
   * last_logits: [vocab] of the last row. */
  vlm_status (*token_prefill)(void *self, int32_t slot, const int32_t *tokens, int64_t count,
                              float *last_logits);
  vlm_status (*embeddings_prefill)(void *self, int32_t slot, const float *embeddings, int64_t count,
                                   float *last_logits);
  /* Row b continues slot slots[b] at position positions[b]; logits
   * [batch, vocab] in batch order. Slots are distinct. */
  vlm_status (*decode)(void *self, int64_t batch, const int32_t *tokens, const int64_t *positions,
                       const int32_t *slots, float *logits);
  void (*release)(void *self);
} vlm_text_decoder_operations;

struct vlm_text_decoder {
  const vlm_text_decoder_operations *operations;
  void *self;
};

/* The cpu backend's decoder (text_model.c) with `options`' geometry. */
struct vlm_text_model_options;
vlm_status vlm_text_decoder_open_cpu(const char *model_dir, const struct vlm_text_model_options *options,
                                     vlm_text_decoder **out_decoder);
/* Releases the backend's decoder (NULL: nothing). */
void vlm_text_decoder_release(vlm_text_decoder *decoder);

#endif
