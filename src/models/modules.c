/* See modules.h. */
#include "models/modules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* Only "layer_features", once, [L, T, hidden], and only with features for
 * a decoder that has layer features; then it is required. */
static vlm_status check_side_inputs(const vlm_text_decoder_shape *shape, const vlm_prefill_input *input) {
  if (input->side_input_count < 0 || (input->side_input_count > 0 && !input->side_inputs))
    return VLM_ERROR(INVALID_ARGUMENT, "prefill: %d side inputs without their array", input->side_input_count);
  bool wanted = shape->layer_feature_count > 0 && input->features;
  for (int i = 0; i < input->side_input_count; i++) {
    const vlm_side_input *side = &input->side_inputs[i];
    const char *name = side->name ? side->name : "?";
    if (strcmp(name, VLM_SIDE_INPUT_LAYER_FEATURES) != 0 || !wanted || i > 0)
      return VLM_ERROR(INVALID_ARGUMENT, "prefill: %s side input '%s'%s", wanted ? "unexpected" : "this model takes no",
                       name, wanted ? " (the model takes only \"" VLM_SIDE_INPUT_LAYER_FEATURES "\", once)"
                       : shape->layer_feature_count > 0 ? " without features" : "");
    if (!side->values || side->rank != 3 || side->shape[0] != shape->layer_feature_count ||
        side->shape[1] != input->row_count || side->shape[2] != shape->hidden_size)
      return VLM_ERROR(INVALID_ARGUMENT, "prefill: side input '%s' must be f32 [%d, %lld, %lld]", name,
                       shape->layer_feature_count, (long long)input->row_count, (long long)shape->hidden_size);
  }
  if (wanted && input->side_input_count == 0)
    return VLM_ERROR(INVALID_ARGUMENT, "prefill: the model adds %d layer features to feature rows; the side input '"
                     VLM_SIDE_INPUT_LAYER_FEATURES "' is missing", shape->layer_feature_count);
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
  return check_side_inputs(shape, input);
}

const vlm_side_input *vlm_prefill_input_side(const vlm_prefill_input *input, const char *name) {
  for (int i = 0; input->side_inputs && i < input->side_input_count; i++)
    if (input->side_inputs[i].name && strcmp(input->side_inputs[i].name, name) == 0) return &input->side_inputs[i];
  return NULL;
}

int64_t vlm_prefill_chunk_end(const int64_t *reach, int64_t count, int64_t first, int64_t limit) {
  int64_t wanted = limit > 0 && first + limit < count ? first + limit : count;
  /* prefix[e] = max reach over [first, e): [first, e) is closed when it is below e. */
  int64_t furthest = -1, best = -1;
  for (int64_t end = first + 1; end <= count; end++) {
    if (reach[end - 1] > furthest) furthest = reach[end - 1];
    bool closed = furthest < end;
    if (end <= wanted) {
      if (closed) best = end;
      continue;
    }
    if (best > 0) return best;
    if (closed) return end;
  }
  return best > 0 ? best : count;
}

void vlm_prefill_bias_reach(const float *bias, int64_t count, int64_t key_count, int64_t past, int64_t *reach) {
  for (int64_t r = 0; r < count; r++) {
    int64_t last = past + r;
    for (int64_t k = key_count - 1; k > last; k--)
      if (bias[r * key_count + k] != -INFINITY) {
        last = k;
        break;
      }
    reach[r] = last - past;
  }
}

void vlm_attention_blocks_reach(const int32_t *blocks, int64_t count, int64_t *reach) {
  /* The last row of each block id, then each row's. */
  for (int64_t r = 0; r < count; r++) reach[r] = r;
  for (int64_t r = count - 1; r >= 0; r--) {
    if (blocks[r] < 0 || reach[r] != r) continue;
    for (int64_t k = r - 1; k >= 0; k--)
      if (blocks[k] == blocks[r] && reach[k] == k) reach[k] = r;
  }
}

void vlm_attention_blocks_bias(const int32_t *blocks, int64_t count, int64_t first, int64_t rows, float *out) {
  int64_t keys = first + rows;
  for (int64_t i = 0; i < rows; i++) {
    int64_t row = first + i;
    int32_t block = row < count ? blocks[row] : -1;
    for (int64_t k = 0; k < keys; k++)
      out[i * keys + k] = k <= row || (block >= 0 && k < count && blocks[k] == block) ? 0.0f : -INFINITY;
  }
}
