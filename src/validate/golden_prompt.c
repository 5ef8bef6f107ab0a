#include "validate/golden_prompt.h"

#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/json.h"
#include "models/decoder.h"
#include "models/family.h"
#include "models/model.h"

int64_t vlm_golden_prefill_chunk(const vlm_compare_context *context) {
  int64_t chunk = 0;
  vlm_json_get_int(vlm_json_object_get(context->golden->manifest.root, "vlm_prefill_chunk"), &chunk);
  return chunk > 0 ? chunk : 0;
}

void vlm_golden_prompt_release(vlm_golden_prompt *prompt) {
  free(prompt->tokens);
  free(prompt->positions);
  free(prompt->bias);
  free(prompt->embeddings);
  free(prompt->feature_mask);
  free(prompt->layer_features);
  memset(prompt, 0, sizeof(*prompt));
}

/* The golden's input_ids and, for an M-RoPE family, the position_ids
 * Transformers computed (the decoder is proven on them; the position_ids
 * stage proves vlm's own). */
static vlm_status read_input_ids(const vlm_compare_context *context, vlm_golden_prompt *prompt) {
  VLM_RETURN_IF_ERROR(vlm_golden_token_ids(context->golden, &prompt->tokens, &prompt->token_count));
  vlm_tensor positions;
  vlm_status lookup = vlm_golden_case_tensor(context->golden, "position_ids", &positions);
  if (lookup || positions.rank != 3 || positions.shape[0] != 3) {
    vlm_status_free(lookup);
    return VLM_OK;
  }
  if (positions.shape[2] != prompt->token_count)
    return VLM_ERROR(DATA_LOSS, "position_ids cover %lld rows, input_ids %lld", (long long)positions.shape[2],
                     (long long)prompt->token_count);
  prompt->positions = malloc((size_t)(3 * prompt->token_count + 1) * sizeof(int64_t));
  if (!prompt->positions) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  int64_t largest = -1;
  for (int64_t i = 0; i < 3 * prompt->token_count; i++) {
    double value = 0;
    vlm_tensor_value_as_double(&positions, i, &value);
    prompt->positions[i] = (int64_t)value;
    if (prompt->positions[i] > largest) largest = prompt->positions[i];
  }
  prompt->position_delta = largest + 1 - prompt->token_count;
  return VLM_OK;
}

/* The prefill bias of the golden prompt from the family's blocks. */
static vlm_status blocks_bias(const vlm_compare_context *context, vlm_golden_prompt *prompt) {
  const vlm_family *family = context->model->family;
  if (!family || !family->attention_blocks) return VLM_OK;
  int64_t count = prompt->token_count;
  int32_t *blocks = malloc((size_t)(count + 1) * sizeof(int32_t));
  if (!blocks) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  bool any = false;
  vlm_status status = family->attention_blocks(&context->model->config, prompt->tokens, count, blocks, &any);
  if (!status && any) {
    prompt->bias = malloc((size_t)(count * count) * sizeof(float));
    if (!prompt->bias) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    else vlm_attention_blocks_bias(blocks, count, 0, count, prompt->bias);
  }
  free(blocks);
  return status;
}

/* The case's LoRA adapter (manifest "adapter": the subfolder the oracle
 * applied, null for the base model). An adapter the model did not load
 * fails the case rather than running the base model. */
static vlm_status find_adapter(const vlm_compare_context *context, vlm_golden_prompt *prompt) {
  const char *name = vlm_json_get_string(vlm_json_object_get(context->golden->manifest.root, "adapter"));
  prompt->adapter = -1;
  if (!name) return VLM_OK;
  const vlm_model *model = context->model;
  for (int k = 0; k < model->adapter_count; k++)
    if (strcmp(model->adapters[k].name, name) == 0) {
      if (model->adapters[k].module_count == 0)
        return VLM_ERROR(NOT_FOUND, "the golden's adapter '%s' is not in the model directory", name);
      prompt->adapter = k;
      return VLM_OK;
    }
  return VLM_ERROR(INVALID_ARGUMENT, "the golden's adapter '%s' is not one the model's family has", name);
}

/* A decoder with layer features (Qwen3-VL's DeepStack) takes them with the
 * golden's embeddings: the golden's "deepstack_features" [image tokens, L *
 * hidden] (as Transformers computed them) go to the image-token rows of an
 * [L, T, hidden] side input, zero elsewhere. */
static vlm_status golden_layer_features(const vlm_compare_context *context, vlm_golden_prompt *prompt) {
  int64_t layers = prompt->layer_count, width = prompt->hidden, count = prompt->token_count;
  if (layers == 0) return VLM_OK;
  vlm_tensor golden;
  VLM_RETURN_IF_ERROR(vlm_status_annotate(vlm_golden_case_tensor(context->golden, "deepstack_features", &golden),
                                          "the decoder adds %lld layer features", (long long)layers));
  if (golden.rank != 2 || golden.shape[1] != layers * width)
    return VLM_ERROR(DATA_LOSS, "deepstack_features must be [image tokens, %lld]", (long long)(layers * width));
  float *values = calloc((size_t)(layers * count * width), sizeof(float));
  if (!values) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  int64_t image_token = context->model->config.image_token_id, next = 0;
  for (int64_t r = 0; r < count; r++) {
    if (prompt->tokens[r] != image_token) continue;
    for (int64_t j = 0; next < golden.shape[0] && j < layers * width; j++) {
      double value = 0;
      vlm_tensor_value_as_double(&golden, next * layers * width + j, &value);
      values[((j / width) * count + r) * width + j % width] = (float)value;
    }
    next++;
  }
  if (next != golden.shape[0]) {
    free(values);
    return VLM_ERROR(DATA_LOSS, "deepstack_features has %lld rows for %lld image tokens", (long long)golden.shape[0],
                     (long long)next);
  }
  prompt->layer_features = values;
  return VLM_OK;
}

/* Rows of an image or audio placeholder take the golden's merged rows: the
 * whole float32 input_embeddings become the features. */
static vlm_status golden_embeddings(const vlm_compare_context *context, vlm_golden_prompt *prompt) {
  const vlm_model_config *config = &context->model->config;
  bool media = false;
  for (int64_t i = 0; i < prompt->token_count; i++)
    if ((config->image_token_id >= 0 && prompt->tokens[i] == config->image_token_id) ||
        (config->audio_token_id >= 0 && prompt->tokens[i] == config->audio_token_id))
      media = true;
  vlm_tensor embeddings;
  vlm_status lookup = vlm_golden_case_tensor(context->golden, "input_embeddings", &embeddings);
  if (lookup || !media || embeddings.dtype != VLM_DTYPE_F32) {
    vlm_status_free(lookup);
    return VLM_OK;
  }
  int64_t count = prompt->token_count, hidden = config->text.hidden_size;
  if (vlm_tensor_element_count(&embeddings) != count * hidden)
    return VLM_ERROR(DATA_LOSS, "input_embeddings holds %lld values, not %lld rows of %lld",
                     (long long)vlm_tensor_element_count(&embeddings), (long long)count, (long long)hidden);
  vlm_decoder_description description;
  memset(&description, 0, sizeof(description));
  vlm_family_describe_decoder(context->model->family, config, &description);
  prompt->hidden = hidden;
  prompt->layer_count = description.layer_features.count;
  prompt->embeddings = malloc((size_t)(count * hidden) * sizeof(float));
  prompt->feature_mask = malloc((size_t)count * sizeof(int32_t));
  if (!prompt->embeddings || !prompt->feature_mask) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  memcpy(prompt->embeddings, embeddings.data, (size_t)(count * hidden) * sizeof(float));
  for (int64_t i = 0; i < count; i++) prompt->feature_mask[i] = 1;
  return golden_layer_features(context, prompt);
}

vlm_status vlm_golden_prompt_load(const vlm_compare_context *context, vlm_golden_prompt *out) {
  memset(out, 0, sizeof(*out));
  out->adapter = -1;
  if (!context->model) return VLM_ERROR(FAILED_PRECONDITION, "%s does not open", context->model_directory);
  vlm_status status = read_input_ids(context, out);
  if (!status) status = blocks_bias(context, out);
  if (!status) status = find_adapter(context, out);
  if (!status) status = golden_embeddings(context, out);
  if (status) vlm_golden_prompt_release(out);
  return status;
}

vlm_status vlm_golden_prompt_prefix(const vlm_golden_prompt *prompt, int64_t rows, vlm_golden_prompt *out) {
  memset(out, 0, sizeof(*out));
  if (rows <= 0 || rows > prompt->token_count)
    return VLM_ERROR(INVALID_ARGUMENT, "a prefix of %lld rows of a %lld-row prompt", (long long)rows,
                     (long long)prompt->token_count);
  int64_t count = prompt->token_count, hidden = prompt->hidden, layers = prompt->layer_count;
  *out = (vlm_golden_prompt){.token_count = rows, .position_delta = prompt->position_delta,
                             .adapter = prompt->adapter, .layer_count = layers, .hidden = hidden};
  bool ok = (out->tokens = malloc((size_t)rows * sizeof(int32_t))) != NULL;
  if (ok) memcpy(out->tokens, prompt->tokens, (size_t)rows * sizeof(int32_t));
  if (ok && prompt->positions && (ok = (out->positions = malloc((size_t)(3 * rows) * sizeof(int64_t))) != NULL))
    for (int a = 0; a < 3; a++) memcpy(out->positions + a * rows, prompt->positions + a * count, (size_t)rows * sizeof(int64_t));
  if (ok && prompt->bias && (ok = (out->bias = malloc((size_t)(rows * rows) * sizeof(float))) != NULL))
    for (int64_t r = 0; r < rows; r++) memcpy(out->bias + r * rows, prompt->bias + r * count, (size_t)rows * sizeof(float));
  if (ok && prompt->embeddings) {
    out->embeddings = malloc((size_t)(rows * hidden) * sizeof(float));
    out->feature_mask = malloc((size_t)rows * sizeof(int32_t));
    ok = out->embeddings && out->feature_mask;
    if (ok) {
      memcpy(out->embeddings, prompt->embeddings, (size_t)(rows * hidden) * sizeof(float));
      memcpy(out->feature_mask, prompt->feature_mask, (size_t)rows * sizeof(int32_t));
    }
  }
  if (ok && prompt->layer_features &&
      (ok = (out->layer_features = malloc((size_t)(layers * rows * hidden) * sizeof(float))) != NULL))
    for (int64_t j = 0; j < layers; j++)
      memcpy(out->layer_features + j * rows * hidden, prompt->layer_features + j * count * hidden,
             (size_t)(rows * hidden) * sizeof(float));
  if (ok) return VLM_OK;
  vlm_golden_prompt_release(out);
  return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
}

void vlm_golden_prompt_input(const vlm_golden_prompt *prompt, vlm_prefill_input *out_input, vlm_side_input *side) {
  int64_t count = prompt->token_count;
  *out_input = (vlm_prefill_input){.row_count = count, .tokens = prompt->tokens, .features = prompt->embeddings,
                                   .feature_mask = prompt->embeddings ? prompt->feature_mask : NULL,
                                   .positions = prompt->positions, .position_axes = prompt->positions ? 3 : 1,
                                   .bias = prompt->bias, .bias_key_count = prompt->bias ? count : 0};
  if (prompt->layer_features) {
    *side = (vlm_side_input){.name = VLM_SIDE_INPUT_LAYER_FEATURES, .values = prompt->layer_features, .rank = 3,
                             .shape = {prompt->layer_count, count, prompt->hidden}};
    out_input->side_inputs = side;
    out_input->side_input_count = 1;
  }
}
