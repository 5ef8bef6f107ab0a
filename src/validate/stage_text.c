/* The text stages of a golden case: input_ids (chat template + tokenizer),
 * attention_mask and position_ids (what the decoder is given for a single
 * unpadded sequence), the multimodal token types and the prefill masks the
 * family's attention blocks give (Gemma 3's bidirectional images), and
 * text (detokenization of the greedy tokens). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "engine/prompt.h"
#include "io/json.h"
#include "models/model.h"
#include "models/modules.h"
#include "validate/compare.h"
#include "validate/golden_media.h"
#include "validate/stages.h"
#include "vlm/chat_template.h"
#include "vlm/tokenizer.h"

static const char *manifest_string(const vlm_compare_context *context, const char *key) {
  return vlm_json_get_string(vlm_json_object_get(context->golden->manifest.root, key));
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

/* The golden prompt (rendered) as the engine builds it: its image
 * placeholders expanded as the family's processor does, tokenized, with
 * its positions. The images are the golden's own processor outputs. What
 * the engine does, not the manifest's record of what the oracle did: a
 * chat prompt follows the family's flow, a raw one gets the tokenizer's
 * special tokens. */
static vlm_status build_prompt_status(const vlm_compare_context *context, engine_prompt *prompt,
                                      vlm_status *out_build) {
  memset(prompt, 0, sizeof(*prompt));
  *out_build = VLM_OK;
  const char *text = manifest_string(context, "prompt");
  if (!text) return VLM_ERROR(DATA_LOSS, "the golden manifest has no \"prompt\"");
  if (!context->model) return VLM_ERROR(FAILED_PRECONDITION, "%s does not open", context->model_directory);
  const vlm_json_value *messages = vlm_json_object_get(context->golden->manifest.root, "messages");
  vlm_media_item *items = NULL;
  int item_count = 0;
  vlm_tokenizer *tokenizer = NULL;
  vlm_status status = vlm_golden_media_items(context, &items, &item_count);
  if (!status) status = vlm_tokenizer_create(context->model_directory, NULL, &tokenizer);
  engine_prompt_source source = {.raw_prompt = text, .items = items, .item_count = item_count,
                                 .raw_prompt_is_rendered_chat = messages && messages->type == VLM_JSON_ARRAY};
  if (!status) *out_build = engine_prompt_build(context->model, tokenizer, NULL, &source, prompt);
  vlm_tokenizer_release(tokenizer);
  vlm_golden_media_items_release(items, item_count);
  return status;
}

static vlm_status build_prompt(const vlm_compare_context *context, engine_prompt *prompt, vlm_stage_result *result) {
  vlm_status build = VLM_OK;
  VLM_RETURN_IF_ERROR(build_prompt_status(context, prompt, &build));
  VLM_RETURN_IF_ERROR(build);
  return check_template(context, manifest_string(context, "prompt"), result);
}

/* refusal: Transformers refused the request (its error is the stage's
 * "error"); vlm must refuse it too, as a bad request, before any compute. */
vlm_status vlm_stage_refusal(const vlm_compare_context *context, const vlm_golden_stage *stage,
                             vlm_stage_result *result) {
  engine_prompt prompt;
  vlm_status build = VLM_OK;
  VLM_RETURN_IF_ERROR(build_prompt_status(context, &prompt, &build));
  engine_prompt_release(&prompt);
  const char *theirs = vlm_json_get_string(vlm_json_object_get(stage->spec, "error"));
  result->compared = 1;
  if (build && vlm_status_code_of(build) == VLM_STATUS_INVALID_ARGUMENT) {
    result->outcome = VLM_STAGE_MATCH;
    snprintf(result->detail, sizeof(result->detail), "refused: %s", vlm_status_message(build));
  } else {
    result->outcome = VLM_STAGE_DIVERGED;
    result->mismatched = 1;
    snprintf(result->detail, sizeof(result->detail), "vlm %s; Transformers: %s",
             build ? vlm_status_message(build) : "accepted the request", theirs ? theirs : "(refused)");
  }
  vlm_status_free(build);
  return VLM_OK;
}

/* What a sequence stage compares for a single unpadded sequence: the ids,
 * the attention mask (all ones) or the positions (0..T-1). */
typedef enum sequence_kind {
  SEQUENCE_IDS,
  SEQUENCE_MASK,
  SEQUENCE_POSITIONS,
  SEQUENCE_TOKEN_TYPES, /* mm_token_type_ids: 1 on image rows */
  SEQUENCE_DELTA,       /* rope_deltas: [1], decode position - cache length */
} sequence_kind;

/* Tokenizes the golden prompt and compares one view of it with the golden
 * tensor, keeping a chat-template finding (recorded while tokenizing) as the
 * stage's first problem. */
static vlm_status sequence_stage(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                 vlm_stage_result *result, sequence_kind kind) {
  engine_prompt prompt;
  VLM_RETURN_IF_ERROR(build_prompt(context, &prompt, result));
  /* Positions: the family's (M-RoPE: [3, T], axis-major as Transformers'
   * [3, batch, T]) or consecutive. */
  int64_t count = kind == SEQUENCE_DELTA ? 1 : prompt.count;
  int64_t axes = kind == SEQUENCE_POSITIONS && prompt.positions ? prompt.position_axes : 1;
  double *actual = malloc((size_t)(axes * count + 1) * sizeof(double));
  vlm_status status = actual ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; actual && i < axes * count; i++)
    actual[i] = kind == SEQUENCE_IDS ? (double)prompt.ids[i]
                : kind == SEQUENCE_POSITIONS ? (prompt.positions ? (double)prompt.positions[i] : (double)i)
                : kind == SEQUENCE_TOKEN_TYPES
                    ? ((prompt.feature_rows && prompt.feature_rows[i]) ||
                               (prompt.attention_blocks && prompt.attention_blocks[i] >= 0)
                           ? 1.0
                           : 0.0)
                : kind == SEQUENCE_DELTA ? (double)prompt.position_delta
                                           : 1.0;
  vlm_stage_outcome before = result->outcome;
  char detail[VLM_STAGE_DETAIL_BYTES];
  memcpy(detail, result->detail, sizeof(detail));
  if (!status) status = vlm_compare_with_golden_tensor(context, stage, actual, axes * count, result);
  if (before == VLM_STAGE_DIVERGED) {
    result->outcome = before;
    memcpy(result->detail, detail, sizeof(detail));
  }
  free(actual);
  engine_prompt_release(&prompt);
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

vlm_status vlm_stage_mm_token_type_ids(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                       vlm_stage_result *result) {
  return sequence_stage(context, stage, result, SEQUENCE_TOKEN_TYPES);
}

vlm_status vlm_stage_rope_deltas(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                 vlm_stage_result *result) {
  return sequence_stage(context, stage, result, SEQUENCE_DELTA);
}

/* prefill_mask: which keys each row of the prompt sees in prefill, per
 * layer kind (the stage's "kinds": full_attention, sliding_attention),
 * [kinds, T, T] booleans as Transformers' create_masks_for_vision_model
 * makes them; vlm's: the bias of its attention blocks (engine/scheduler.c)
 * with the sliding window the attention applies on top. */
vlm_status vlm_stage_prefill_mask(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                  vlm_stage_result *result) {
  const vlm_json_value *kinds = vlm_json_object_get(stage->spec, "kinds");
  if (!kinds || kinds->type != VLM_JSON_ARRAY || kinds->as.array.count == 0)
    return VLM_ERROR(DATA_LOSS, "stage prefill_mask has no \"kinds\" list");
  engine_prompt prompt;
  VLM_RETURN_IF_ERROR(build_prompt(context, &prompt, result));
  int64_t count = prompt.count, layers = (int64_t)kinds->as.array.count;
  int64_t window = context->model->config.text.sliding_window;
  double *actual = malloc((size_t)(layers * count * count + 1) * sizeof(double));
  float *bias = malloc((size_t)(count * count + 1) * sizeof(float));
  vlm_status status = actual && bias ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (!status && prompt.attention_blocks) vlm_attention_blocks_bias(prompt.attention_blocks, count, 0, count, bias);
  for (int64_t layer = 0; !status && layer < layers; layer++) {
    const char *kind = vlm_json_get_string(vlm_json_array_get(kinds, (size_t)layer));
    bool sliding = kind && strcmp(kind, "sliding_attention") == 0;
    if (!kind || (!sliding && strcmp(kind, "full_attention") != 0)) {
      status = VLM_ERROR(DATA_LOSS, "prefill_mask: unknown layer kind '%s'", kind ? kind : "?");
      break;
    }
    for (int64_t q = 0; q < count; q++)
      for (int64_t k = 0; k < count; k++) {
        bool seen = prompt.attention_blocks ? bias[q * count + k] == 0.0f : k <= q;
        if (sliding && window > 0 && k <= q - window) seen = false;
        actual[(layer * count + q) * count + k] = seen ? 1.0 : 0.0;
      }
  }
  if (!status) status = vlm_compare_with_golden_tensor(context, stage, actual, layers * count * count, result);
  if (!status && !result->detail[0])
    snprintf(result->detail, sizeof(result->detail), "%lld rows, %s", (long long)count,
             prompt.attention_blocks ? "bidirectional blocks" : "causal");
  free(actual);
  free(bias);
  engine_prompt_release(&prompt);
  return status;
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
