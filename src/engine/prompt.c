/* See prompt.h. */
#include "engine/prompt.h"

#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/json.h"
#include "models/modules.h"

void engine_prompt_release(engine_prompt *prompt) {
  free(prompt->ids);
  free(prompt->positions);
  free(prompt->feature_rows);
  free(prompt->attention_blocks);
  free(prompt->attention_reach);
  memset(prompt, 0, sizeof(*prompt));
}

static vlm_prompt_flow prompt_flow(const vlm_model *model) {
  return model->family ? model->family->prompt_flow : VLM_PROMPT_FLOW_TOKENIZER;
}

static vlm_status render(const vlm_chat_template *chat_template, const vlm_model *model,
                         const engine_prompt_source *source, char **out_text, size_t *out_length) {
  if (!source->messages_json) {
    *out_text = strdup(source->raw_prompt);
    *out_length = *out_text ? strlen(*out_text) : 0;
    return *out_text ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  if (!chat_template)
    return VLM_ERROR(FAILED_PRECONDITION,
                     "%s has no chat template (tokenizer_config.json, chat_template.json or "
                     "chat_template.jinja); send a raw prompt (/v1/completions) instead",
                     model->directory);
  /* A multimodal model's messages reach its template as content parts, as
   * `transformers serve` hands them to the processor. */
  vlm_chat_template_options options = {.add_generation_prompt = true,
                                       .string_content_as_parts = prompt_flow(model) == VLM_PROMPT_FLOW_PROCESSOR};
  return vlm_chat_template_render(chat_template, source->messages_json, strlen(source->messages_json), &options,
                                  out_text, out_length);
}

static const char *token_text(void *context, int64_t id) {
  return id >= 0 && id <= INT32_MAX ? vlm_tokenizer_id_to_token(context, (int32_t)id) : NULL;
}

static int64_t count_occurrences(const char *text, const char *pattern) {
  int64_t count = 0;
  size_t length = strlen(pattern);
  for (const char *at = text; length && (at = strstr(at, pattern)) != NULL; at += length) count++;
  return count;
}

/* Each placeholder in the text becomes the family's expansion of the
 * item in its place, as the processor replaces its image token. */
static vlm_status expand(const vlm_model *model, const vlm_tokenizer *tokenizer, const engine_prompt_source *source,
                         const char *text, char **out_text, size_t *out_length) {
  const vlm_family_image *path = model->family->image;
  int64_t placeholder_id = path->placeholder_token(&model->config);
  const char *placeholder = token_text((void *)tokenizer, placeholder_id);
  if (!placeholder || !placeholder[0])
    return VLM_ERROR(FAILED_PRECONDITION, "%s: the tokenizer has no image placeholder token (id %lld)",
                     model->directory, (long long)placeholder_id);
  int64_t found = count_occurrences(text, placeholder);
  if (found != source->item_count)
    return VLM_ERROR(INVALID_ARGUMENT, "the prompt has %lld image placeholder(s) (%s) but the request has %d image(s)",
                     (long long)found, placeholder, source->item_count);
  vlm_string_builder out = {0};
  size_t length = strlen(placeholder);
  const char *at = text;
  vlm_status status = VLM_OK;
  for (int i = 0; i < source->item_count && !status; i++) {
    const char *next = strstr(at, placeholder);
    vlm_sb_append(&out, at, (size_t)(next - at));
    status = path->expand(&model->config, &source->items[i], placeholder, token_text, (void *)tokenizer, &out);
    at = next + length;
  }
  vlm_sb_append(&out, at, strlen(at));
  *out_length = out.length;
  *out_text = vlm_sb_finish(&out);
  if (status) {
    free(*out_text);
    *out_text = NULL;
    return status;
  }
  return *out_text ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory expanding the prompt");
}

/* Rows that take features: the feature (or placeholder) tokens, in order;
 * their count must be the items' feature rows (Transformers'
 * get_placeholder_mask check). */
static vlm_status place_features(const vlm_model *model, const engine_prompt_source *source, engine_prompt *prompt) {
  const vlm_family_image *path = model->family->image;
  int64_t placeholder_id = path->feature_token ? path->feature_token(&model->config)
                                               : path->placeholder_token(&model->config);
  int64_t expected = 0;
  for (int i = 0; i < source->item_count; i++) expected += source->items[i].token_count;
  prompt->feature_rows = calloc((size_t)(prompt->count ? prompt->count : 1), 1);
  if (!prompt->feature_rows) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t r = 0; r < prompt->count; r++)
    if (prompt->ids[r] == placeholder_id) {
      prompt->feature_rows[r] = 1;
      prompt->feature_row_count++;
    }
  if (prompt->feature_row_count != expected)
    return VLM_ERROR(INVALID_ARGUMENT,
                     "image features and image tokens do not match: the prompt has %lld image tokens, the images "
                     "%lld feature rows",
                     (long long)prompt->feature_row_count, (long long)expected);
  prompt->media_tokens[VLM_MEDIA_IMAGE] = prompt->feature_row_count;
  return VLM_OK;
}

static vlm_status compute_positions(const vlm_model *model, const engine_prompt_source *source, engine_prompt *prompt) {
  if (!model->family || !model->family->positions) return VLM_OK;
  prompt->position_axes = 3;
  prompt->positions = malloc((size_t)(3 * (prompt->count ? prompt->count : 1)) * sizeof(int64_t));
  const vlm_media_item *items[64];
  if (source->item_count > 64) return VLM_ERROR(OUT_OF_RANGE, "more than 64 media items in one request");
  for (int i = 0; i < source->item_count; i++) items[i] = &source->items[i];
  if (!prompt->positions) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  return model->family->positions(&model->config, prompt->ids, prompt->count, items, source->item_count,
                                  prompt->positions, &prompt->position_delta);
}

/* The family's bidirectional blocks, kept only when some row has one. */
static vlm_status compute_attention_blocks(const vlm_model *model, engine_prompt *prompt) {
  if (!model->family || !model->family->attention_blocks) return VLM_OK;
  prompt->attention_blocks = malloc((size_t)(prompt->count ? prompt->count : 1) * sizeof(int32_t));
  if (!prompt->attention_blocks) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  bool any = false;
  VLM_RETURN_IF_ERROR(model->family->attention_blocks(&model->config, prompt->ids, prompt->count,
                                                      prompt->attention_blocks, &any));
  if (!any) {
    free(prompt->attention_blocks);
    prompt->attention_blocks = NULL;
    return VLM_OK;
  }
  prompt->attention_reach = malloc((size_t)prompt->count * sizeof(int64_t));
  if (!prompt->attention_reach) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_attention_blocks_reach(prompt->attention_blocks, prompt->count, prompt->attention_reach);
  return VLM_OK;
}

vlm_status engine_prompt_build(const vlm_model *model, const vlm_tokenizer *tokenizer,
                               const vlm_chat_template *chat_template, const engine_prompt_source *source,
                               engine_prompt *out) {
  memset(out, 0, sizeof(*out));
  if (!source->messages_json == !source->raw_prompt)
    return VLM_ERROR(INVALID_ARGUMENT, "a request needs exactly one of chat messages or a raw prompt");
  char *rendered = NULL;
  size_t rendered_length = 0;
  VLM_RETURN_IF_ERROR(render(chat_template, model, source, &rendered, &rendered_length));
  vlm_status status = VLM_OK;
  if (source->item_count > 0) {
    char *expanded = NULL;
    status = expand(model, tokenizer, source, rendered, &expanded, &rendered_length);
    free(rendered);
    rendered = expanded;
  }
  /* A raw prompt gets BOS etc.; a rendered template gets them as the
   * family's Transformers flow adds them: never through the tokenizer, and
   * through the processor unless the prompt starts with bos_token. */
  vlm_token_ids ids = {0};
  bool chat = source->messages_json || source->raw_prompt_is_rendered_chat;
  if (!status)
    status = chat ? vlm_tokenizer_encode_chat(tokenizer, rendered, rendered_length, prompt_flow(model), &ids)
                  : vlm_tokenizer_encode(tokenizer, rendered, rendered_length, true, &ids);
  free(rendered);
  if (status) return status;
  out->ids = ids.ids;
  out->count = (int64_t)ids.count;
  out->position_axes = 1;
  if (!status && source->item_count > 0) status = place_features(model, source, out);
  if (!status) status = compute_positions(model, source, out);
  if (!status) status = compute_attention_blocks(model, out);
  if (status) engine_prompt_release(out);
  return status;
}
