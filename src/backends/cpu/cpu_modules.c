/* The cpu backend behind the engine's text-decoder table
 * (src/models/modules.h): a thin adapter over text_model.c's module
 * contracts. (The media encoder's table is in cpu_encoder.c.) */
#include "backends/cpu/cpu_modules.h"

#include <stdlib.h>

#include "core/status.h"

static void cpu_shape(void *self, vlm_text_decoder_shape *out) { vlm_text_model_shape(self, out); }
static int32_t cpu_slot_count(void *self) {
  return vlm_kv_cache_get_shape(vlm_text_model_cache(self))->slot_count;
}
static uint64_t cpu_kv_bytes(void *self) { return vlm_kv_cache_bytes(vlm_text_model_cache(self)); }
static int64_t cpu_slot_length(void *self, int32_t slot) { return vlm_text_model_slot_length(self, slot); }
static vlm_status cpu_clear_slot(void *self, int32_t slot) { return vlm_text_model_clear_slot(self, slot); }
static vlm_status cpu_begin_request(void *self, int32_t slot, int32_t adapter, int64_t prompt_length) {
  return vlm_text_model_begin_request(self, slot, adapter, prompt_length);
}

static void cpu_kv_variant(void *self, int32_t slot, int64_t out[VLM_KV_VARIANT_VALUES]) {
  vlm_text_model_kv_variant(self, slot, out);
}

static vlm_status cpu_token_prefill(void *self, int32_t slot, const int32_t *tokens, int64_t count,
                                    float *last_logits) {
  vlm_prefill_logits out = {.last_row = last_logits};
  return vlm_text_model_token_prefill(self, slot, tokens, count, NULL, &out);
}

static vlm_status cpu_embeddings_prefill(void *self, int32_t slot, const vlm_prefill_input *input,
                                         float *last_logits) {
  vlm_prefill_logits out = {.last_row = last_logits};
  return vlm_text_model_embeddings_prefill(self, slot, input, &out);
}

/* positions are RoPE positions (the slot's M-RoPE delta included), the
 * same on every axis. */
static vlm_status cpu_decode(void *self, int64_t batch, const int32_t *tokens, const int64_t *positions,
                             const int32_t *slots, float *logits) {
  return vlm_text_model_decode(self, batch, tokens, positions, NULL, slots, logits);
}

/* The cpu kernels reduce in a fixed order per row (SPEC 3.5), so a
 * position's KV is the same bits however the rows before it were chunked
 * or decoded (tests/test_prefix_cache.c checks it): it may be reused. */
static uint64_t cpu_kv_position_bytes(void *self) {
  return vlm_kv_cache_position_bytes(vlm_text_model_cache(self));
}
static vlm_status cpu_read_kv(void *self, int32_t slot, int64_t first, int64_t count, void *out) {
  return vlm_kv_cache_read(vlm_text_model_cache(self), slot, first, count, out);
}
static vlm_status cpu_write_kv(void *self, int32_t slot, int64_t first, int64_t count, const void *in) {
  return vlm_kv_cache_write(vlm_text_model_cache(self), slot, first, count, in);
}

static void cpu_release(void *self) { vlm_text_model_release(self); }

static const vlm_text_decoder_operations cpu_operations = {
    .backend = "cpu", .shape = cpu_shape, .slot_count = cpu_slot_count, .kv_bytes = cpu_kv_bytes,
    .slot_length = cpu_slot_length, .clear_slot = cpu_clear_slot, .begin_request = cpu_begin_request,
    .kv_variant = cpu_kv_variant,
    .token_prefill = cpu_token_prefill, .embeddings_prefill = cpu_embeddings_prefill, .decode = cpu_decode,
    .kv_position_bytes = cpu_kv_position_bytes, .read_kv = cpu_read_kv, .write_kv = cpu_write_kv,
    .release = cpu_release};

vlm_status vlm_text_decoder_open_cpu(vlm_model *model, const vlm_text_model_options *options,
                                     vlm_text_decoder **out_decoder) {
  *out_decoder = NULL;
  vlm_text_decoder *decoder = calloc(1, sizeof(*decoder));
  if (!decoder) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_text_model *text_model = NULL;
  vlm_status status = vlm_text_model_open(model, options, &text_model);
  if (status) {
    free(decoder);
    return status;
  }
  decoder->operations = &cpu_operations;
  decoder->self = text_model;
  *out_decoder = decoder;
  return VLM_OK;
}
