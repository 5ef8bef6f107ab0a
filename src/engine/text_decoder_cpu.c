/* The cpu backend behind the engine's text-decoder table: a thin adapter
 * over text_model.c's module contracts. */
#include <stdlib.h>

#include "core/status.h"
#include "engine/text_decoder.h"
#include "engine/text_model.h"

static int64_t cpu_capacity(void *self) { return vlm_text_model_capacity(self); }
static int64_t cpu_vocab_size(void *self) { return vlm_text_model_vocab_size(self); }
static int64_t cpu_hidden_size(void *self) { return vlm_text_model_config(self)->text.hidden_size; }
static int32_t cpu_slot_count(void *self) {
  return vlm_kv_cache_get_shape(vlm_text_model_cache(self))->slot_count;
}
static uint64_t cpu_kv_bytes(void *self) { return vlm_kv_cache_bytes(vlm_text_model_cache(self)); }
static int64_t cpu_slot_length(void *self, int32_t slot) { return vlm_text_model_slot_length(self, slot); }
static vlm_status cpu_clear_slot(void *self, int32_t slot) { return vlm_text_model_clear_slot(self, slot); }

static vlm_status cpu_token_prefill(void *self, int32_t slot, const int32_t *tokens, int64_t count,
                                    float *last_logits) {
  vlm_prefill_logits out = {.last_row = last_logits};
  return vlm_text_model_token_prefill(self, slot, tokens, count, NULL, &out);
}

static vlm_status cpu_embeddings_prefill(void *self, int32_t slot, const float *embeddings, int64_t count,
                                         float *last_logits) {
  vlm_prefill_logits out = {.last_row = last_logits};
  vlm_embeddings_prefill_input input = {.embeddings = embeddings, .row_count = count};
  return vlm_text_model_embeddings_prefill(self, slot, &input, &out);
}

static vlm_status cpu_decode(void *self, int64_t batch, const int32_t *tokens, const int64_t *positions,
                             const int32_t *slots, float *logits) {
  return vlm_text_model_decode(self, batch, tokens, positions, NULL, slots, logits);
}

static void cpu_release(void *self) { vlm_text_model_release(self); }

static const vlm_text_decoder_operations cpu_operations = {
    "cpu",           cpu_capacity,          cpu_vocab_size,    cpu_hidden_size, cpu_slot_count,
    cpu_kv_bytes,    cpu_slot_length,       cpu_clear_slot,    cpu_token_prefill,
    cpu_embeddings_prefill, cpu_decode,     cpu_release};

vlm_status vlm_text_decoder_open_cpu(const char *model_dir, const vlm_text_model_options *options,
                                     vlm_text_decoder **out_decoder) {
  *out_decoder = NULL;
  vlm_text_decoder *decoder = calloc(1, sizeof(*decoder));
  if (!decoder) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_text_model *model = NULL;
  vlm_status status = vlm_text_model_open(model_dir, options, &model);
  if (status) {
    free(decoder);
    return status;
  }
  decoder->operations = &cpu_operations;
  decoder->self = model;
  *out_decoder = decoder;
  return VLM_OK;
}

void vlm_text_decoder_release(vlm_text_decoder *decoder) {
  if (!decoder) return;
  decoder->operations->release(decoder->self);
  free(decoder);
}
