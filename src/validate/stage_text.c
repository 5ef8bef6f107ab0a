/* The text stages of a golden case: input_ids (chat template + tokenizer),
 * attention_mask and position_ids (what the decoder is given for a single
 * unpadded sequence), and text (detokenization of the greedy tokens). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/json.h"
#include "engine/vision_model.h"
#include "validate/compare.h"
#include "validate/stages.h"
#include "vlm/chat_template.h"
#include "vlm/tokenizer.h"

static const char *manifest_string(const vlm_compare_context *context, const char *key) {
  return vlm_json_get_string(vlm_json_object_get(context->golden->manifest.root, key));
}

/* Expands each image placeholder to the family's token count, as the
 * processor does before the model sees the prompt. */
static vlm_status expand_placeholders(const vlm_compare_context *context, int images,
                                      vlm_token_ids *ids) {
  vlm_vision_model_options options = {.allocator = context->allocator};
  vlm_vision_model *vision = NULL;
  VLM_RETURN_IF_ERROR(vlm_vision_model_open(context->model_directory, &options, &vision));
  int32_t *expanded = NULL;
  int64_t expanded_count = 0;
  vlm_status status = vlm_vision_model_expand_placeholders(vision, ids->ids, (int64_t)ids->count,
                                                           images, &expanded, &expanded_count);
  vlm_vision_model_release(vision);
  if (status) return status;
  vlm_token_ids_release(ids);
  ids->ids = expanded;
  ids->count = ids->capacity = (size_t)expanded_count;
  return VLM_OK;
}

/* Renders the manifest's messages with the model's template and checks the
 * result is the golden prompt byte for byte. */
static vlm_status check_template(const vlm_compare_context *context, const char *prompt,
                                 vlm_stage_result *result) {
  const vlm_json_value *messages = vlm_json_object_get(context->golden->manifest.root, "messages");
  if (!messages || messages->type != VLM_JSON_ARRAY) return VLM_OK;
  vlm_chat_template *chat_template = NULL;
  VLM_RETURN_IF_ERROR(vlm_chat_template_load(context->model_directory, &chat_template));
  vlm_string_builder json = {0};
  vlm_sb_append_json_value(&json, messages);
  char *messages_text = vlm_sb_finish(&json);
  char *rendered = NULL;
  size_t length = 0;
  vlm_chat_template_options options = {.add_generation_prompt = true};
  vlm_status status = messages_text ? vlm_chat_template_render(chat_template, messages_text,
                                                               strlen(messages_text), &options,
                                                               &rendered, &length)
                                    : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (!status && (length != strlen(prompt) || memcmp(rendered, prompt, length) != 0)) {
    result->outcome = VLM_STAGE_DIVERGED;
    snprintf(result->detail, sizeof(result->detail), "chat template rendered %zu bytes that differ "
             "from the golden prompt (%zu bytes)", length, strlen(prompt));
  }
  free(rendered);
  free(messages_text);
  vlm_chat_template_release(chat_template);
  return status;
}

/* The golden prompt's ids by vlm's tokenizer (NULL result when the case
 * needs the image path). */
static vlm_status tokenize_prompt(const vlm_compare_context *context, vlm_token_ids *ids,
                                  vlm_stage_result *result) {
  memset(ids, 0, sizeof(*ids));
  const char *prompt = manifest_string(context, "prompt");
  if (!prompt) return VLM_ERROR(DATA_LOSS, "the golden manifest has no \"prompt\"");
  /* What the engine does (not the manifest's record of what the oracle
   * did): a chat prompt follows the family's flow, a raw one gets the
   * tokenizer's special tokens. */
  const vlm_json_value *messages = vlm_json_object_get(context->golden->manifest.root, "messages");
  bool chat = messages && messages->type == VLM_JSON_ARRAY;
  vlm_prompt_flow flow = VLM_PROMPT_FLOW_TOKENIZER;
  if (chat) VLM_RETURN_IF_ERROR(vlm_model_prompt_flow(context->model_directory, &flow));
  vlm_tokenizer *tokenizer = NULL;
  VLM_RETURN_IF_ERROR(vlm_tokenizer_create(context->model_directory, NULL, &tokenizer));
  vlm_status status = chat ? vlm_tokenizer_encode_chat(tokenizer, prompt, strlen(prompt), flow, ids)
                           : vlm_tokenizer_encode(tokenizer, prompt, strlen(prompt), true, ids);
  vlm_tokenizer_release(tokenizer);
  int images = vlm_golden_image_count(context->golden);
  if (!status && images > 0) status = expand_placeholders(context, images, ids);
  if (!status) status = check_template(context, prompt, result);
  return status;
}

/* What a sequence stage compares for a single unpadded sequence: the ids,
 * the attention mask (all ones) or the positions (0..T-1). */
typedef enum sequence_kind {
  SEQUENCE_IDS,
  SEQUENCE_MASK,
  SEQUENCE_POSITIONS,
} sequence_kind;

/* Tokenizes the golden prompt and compares one view of it with the golden
 * tensor, keeping a chat-template finding (recorded while tokenizing) as the
 * stage's first problem. */
static vlm_status sequence_stage(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                 vlm_stage_result *result, sequence_kind kind) {
  vlm_token_ids ids;
  VLM_RETURN_IF_ERROR(tokenize_prompt(context, &ids, result));
  double *actual = malloc((ids.count + 1) * sizeof(double));
  vlm_status status = actual ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; actual && i < ids.count; i++)
    actual[i] = kind == SEQUENCE_IDS ? (double)ids.ids[i] : kind == SEQUENCE_POSITIONS ? (double)i : 1.0;
  vlm_stage_outcome before = result->outcome;
  char detail[VLM_STAGE_DETAIL_BYTES];
  memcpy(detail, result->detail, sizeof(detail));
  if (!status) status = vlm_compare_with_golden_tensor(context, stage, actual, (int64_t)ids.count, result);
  if (before == VLM_STAGE_DIVERGED) {
    result->outcome = before;
    memcpy(result->detail, detail, sizeof(detail));
  }
  free(actual);
  vlm_token_ids_release(&ids);
  return status;
}

vlm_status vlm_stage_input_ids(const vlm_compare_context *context, const vlm_golden_stage *stage,
                               vlm_stage_result *result) {
  return sequence_stage(context, stage, result, SEQUENCE_IDS);
}

vlm_status vlm_stage_attention_mask(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                    vlm_stage_result *result) {
  return sequence_stage(context, stage, result, SEQUENCE_MASK);
}

vlm_status vlm_stage_position_ids(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                  vlm_stage_result *result) {
  return sequence_stage(context, stage, result, SEQUENCE_POSITIONS);
}

/* The golden greedy tokens decoded by vlm's tokenizer. */
vlm_status vlm_stage_text(const vlm_compare_context *context, const vlm_golden_stage *stage,
                          vlm_stage_result *result) {
  const vlm_golden_case *golden = context->golden;
  const vlm_json_value *greedy = NULL;
  for (size_t i = 0; i < golden->stage_count && !greedy; i++)
    if (strcmp(golden->stages[i].name, "greedy_tokens") == 0)
      greedy = vlm_json_object_get(golden->stages[i].spec, "tokens");
  const char *expected = vlm_json_get_string(vlm_json_object_get(stage->spec, "text"));
  if (!greedy || greedy->type != VLM_JSON_ARRAY || !expected)
    return VLM_ERROR(DATA_LOSS, "stage text needs \"text\" and a greedy_tokens stage");
  bool skip_special = true;
  vlm_json_get_bool(vlm_json_object_get(stage->spec, "skip_special_tokens"), &skip_special);
  int32_t *tokens = malloc((greedy->as.array.count + 1) * sizeof(int32_t));
  if (!tokens) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; i < greedy->as.array.count; i++) {
    int64_t token = 0;
    vlm_json_get_int(&greedy->as.array.items[i], &token);
    tokens[i] = (int32_t)token;
  }
  vlm_tokenizer *tokenizer = NULL;
  char *text = NULL;
  size_t length = 0;
  vlm_status status = vlm_tokenizer_create(context->model_directory, NULL, &tokenizer);
  if (!status) status = vlm_tokenizer_decode(tokenizer, tokens, greedy->as.array.count, skip_special,
                                             &text, &length);
  if (!status) {
    size_t expected_length = vlm_json_object_get(stage->spec, "text")->as.string.length;
    result->compared = 1;
    if (length != expected_length || memcmp(text, expected, length) != 0) {
      result->outcome = VLM_STAGE_DIVERGED;
      result->mismatched = 1;
      snprintf(result->detail, sizeof(result->detail), "decoded %zu bytes, the golden text has %zu",
               length, expected_length);
    } else {
      snprintf(result->detail, sizeof(result->detail), "%zu bytes identical", length);
    }
  }
  free(text);
  free(tokens);
  vlm_tokenizer_release(tokenizer);
  return status;
}
