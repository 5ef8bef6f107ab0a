/* See modules.h. */
#include "models/modules.h"

#include <stdlib.h>

#include "core/status.h"

void vlm_text_decoder_release(vlm_text_decoder *decoder) {
  if (!decoder) return;
  decoder->operations->release(decoder->self);
  free(decoder);
}

void vlm_media_encoder_release(vlm_media_encoder *encoder) {
  if (!encoder) return;
  encoder->operations->release(encoder->self);
  free(encoder);
}

static vlm_status check_positions(const vlm_text_decoder_shape *shape, const vlm_prefill_input *input) {
  if (!input->positions) return VLM_OK;
  if (input->position_axes != shape->position_axes)
    return VLM_ERROR(INVALID_ARGUMENT, "%d-axis positions given to a model with %s", input->position_axes,
                     shape->position_axes == 3 ? "3-axis M-RoPE" : "1-axis RoPE");
  for (int64_t i = 0; i < input->row_count * input->position_axes; i++)
    if (input->positions[i] < 0)
      return VLM_ERROR(INVALID_ARGUMENT, "position %lld (axis %lld) is negative", (long long)(i % input->row_count),
                       (long long)(i / input->row_count));
  return VLM_OK;
}

vlm_status vlm_prefill_input_check(const vlm_text_decoder_shape *shape, int64_t slot_length,
                                   const vlm_prefill_input *input) {
  if (!input || input->row_count <= 0) return VLM_ERROR(INVALID_ARGUMENT, "a prefill needs at least one row");
  if (slot_length + input->row_count > shape->capacity)
    return VLM_ERROR(OUT_OF_RANGE,
                     "context length exceeded: the slot holds %lld positions and %lld more would exceed its "
                     "capacity of %lld",
                     (long long)slot_length, (long long)input->row_count, (long long)shape->capacity);
  if (!input->tokens) return VLM_ERROR(INVALID_ARGUMENT, "prefill: tokens are missing");
  if (!input->features != !input->feature_mask)
    return VLM_ERROR(INVALID_ARGUMENT, "prefill: features and their mask come together");
  for (int64_t i = 0; i < input->row_count; i++) {
    bool feature_row = input->feature_mask && input->feature_mask[i];
    if (!feature_row && (input->tokens[i] < 0 || input->tokens[i] >= shape->vocab_size))
      return VLM_ERROR(INVALID_ARGUMENT, "token %lld (id %d) is outside the vocabulary of %lld", (long long)i,
                       input->tokens[i], (long long)shape->vocab_size);
  }
  VLM_RETURN_IF_ERROR(check_positions(shape, input));
  if (input->bias && input->bias_key_count != slot_length + input->row_count)
    return VLM_ERROR(INVALID_ARGUMENT,
                     "prefill: the bias must be [%lld, %lld] (rows x cached+new keys), got %lld keys per row",
                     (long long)input->row_count, (long long)(slot_length + input->row_count),
                     (long long)input->bias_key_count);
  if (input->side_input_count > 0)
    return VLM_ERROR(INVALID_ARGUMENT, "prefill: this model takes no side inputs, got '%s'",
                     input->side_inputs && input->side_inputs[0].name ? input->side_inputs[0].name : "?");
  return VLM_OK;
}
