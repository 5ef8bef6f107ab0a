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
  free(prompt->item_order);
  memset(prompt, 0, sizeof(*prompt));
}

static vlm_prompt_flow prompt_flow(const vlm_model *model) {
  return model->family ? model->family->prompt_flow : VLM_PROMPT_FLOW_TOKENIZER;
}

static const char *token_text(void *context, int64_t id) {
  return id >= 0 && id <= INT32_MAX ? vlm_tokenizer_id_to_token(context, (int32_t)id) : NULL;
}

/* The text one media part of `kind` stands for under a template that reads
 * content as a string: the family's, else its placeholder token's (the
 * processor's image_token / audio_token); NULL: the model takes none. */
static const char *content_placeholder(const vlm_model *model, const vlm_tokenizer *tokenizer, vlm_media_kind kind) {
  const vlm_family *family = model->family;
  const vlm_family_image *image = family && kind == VLM_MEDIA_IMAGE ? family->image : NULL;
  const vlm_family_audio *audio = family && kind == VLM_MEDIA_AUDIO ? family->audio : NULL;
  if (image && image->content_placeholder) return image->content_placeholder(&model->config);
  if (audio && audio->content_placeholder) return audio->content_placeholder(&model->config);
  if (image) return token_text((void *)tokenizer, image->placeholder_token(&model->config));
  if (audio) return token_text((void *)tokenizer, audio->placeholder_token(&model->config));
  return NULL;
}

static vlm_status render(const vlm_chat_template *chat_template, const vlm_model *model,
                         const vlm_tokenizer *tokenizer, const engine_prompt_source *source, char **out_text,
                         size_t *out_length) {
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
   * `transformers serve` hands them to the processor -- unless the template
   * reads content only as a string (vLLM's "string" format, e.g.
   * Phi-4-multimodal's '<|user|>' + message['content'] + '<|end|>'), where
   * parts could only fail to render: such a template gets a message with
   * media as one string, the family's placeholders before its text, as
   * vLLM's "string" content format makes it. */
  bool parts = prompt_flow(model) == VLM_PROMPT_FLOW_PROCESSOR &&
               vlm_chat_template_content_format(chat_template) == VLM_CHAT_CONTENT_OPENAI;
  vlm_chat_template_options options = {.add_generation_prompt = !source->no_generation_prompt,
                                       .continue_final_message = source->continue_final_message,
                                       .extra_variables_json = source->chat_template_kwargs_json,
                                       .string_content_as_parts = parts,
                                       .max_prompt_bytes = source->max_prompt_bytes,
                                       .prompt_limit_reached = source->prompt_limit_reached,
                                       .image_placeholder = content_placeholder(model, tokenizer, VLM_MEDIA_IMAGE),
                                       .audio_placeholder = content_placeholder(model, tokenizer, VLM_MEDIA_AUDIO)};
  return vlm_chat_template_render(chat_template, source->messages_json, strlen(source->messages_json), &options,
                                  out_text, out_length);
}

static int64_t count_occurrences(const char *text, const char *pattern) {
  int64_t count = 0;
  size_t length = strlen(pattern);
  for (const char *at = text; length && (at = strstr(at, pattern)) != NULL; at += length) count++;
  return count;
}

/* One media kind's placeholder: its token, its text, and the family's
 * expansion of an item in its place. */
typedef vlm_status (*expand_fn)(const vlm_model_config *config, const vlm_media_item *item, const char *placeholder,
                                vlm_token_text_fn token_text, void *context, vlm_string_builder *out);
typedef struct placeholder_kind {
  vlm_media_kind kind;
  int64_t id;
  const char *text;
  expand_fn expand;
  int items;          /* of this kind in the request */
  int next;           /* the next of them to place */
} placeholder_kind;

/* The kinds the request has items of, with the family's path for each. */
static vlm_status collect_kinds(const vlm_model *model, const vlm_tokenizer *tokenizer,
                                const engine_prompt_source *source, placeholder_kind kinds[2], int *out_count) {
  *out_count = 0;
  for (int k = 0; k < 2; k++) {
    vlm_media_kind kind = k == 0 ? VLM_MEDIA_IMAGE : VLM_MEDIA_AUDIO;
    int items = 0;
    for (int i = 0; i < source->item_count; i++) items += source->items[i].kind == kind;
    if (!items) continue;
    const vlm_family_image *image = kind == VLM_MEDIA_IMAGE && model->family ? model->family->image : NULL;
    const vlm_family_audio *audio = kind == VLM_MEDIA_AUDIO && model->family ? model->family->audio : NULL;
    if (!image && !audio)
      return VLM_ERROR(UNIMPLEMENTED, "model_type '%s' takes no %s input", model->config.model_type,
                       vlm_media_kind_name(kind));
    int64_t id = image ? image->placeholder_token(&model->config) : audio->placeholder_token(&model->config);
    const char *text = token_text((void *)tokenizer, id);
    if (!text || !text[0])
      return VLM_ERROR(FAILED_PRECONDITION, "%s: the tokenizer has no %s placeholder token (id %lld)",
                       model->directory, vlm_media_kind_name(kind), (long long)id);
    kinds[(*out_count)++] = (placeholder_kind){kind, id, text, image ? image->expand : audio->expand, items, 0};
  }
  for (int i = 0; i < source->item_count; i++)
    if (source->items[i].kind != VLM_MEDIA_IMAGE && source->items[i].kind != VLM_MEDIA_AUDIO)
      return VLM_ERROR(UNIMPLEMENTED, "%s items are not supported", vlm_media_kind_name(source->items[i].kind));
  return VLM_OK;
}

/* The index of the item of `kind` numbered `ordinal` among its kind. */
static int item_of_kind(const engine_prompt_source *source, vlm_media_kind kind, int ordinal) {
  for (int i = 0; i < source->item_count; i++)
    if (source->items[i].kind == kind && ordinal-- == 0) return i;
  return -1;
}

/* Each placeholder in the text becomes the family's expansion of the next
 * item of its kind, as the processor replaces its image (audio) tokens in
 * order; out_order records the items in the order they were placed. */
static vlm_status expand(const vlm_model *model, const vlm_tokenizer *tokenizer, const engine_prompt_source *source,
                         const char *text, char **out_text, size_t *out_length, int *out_order) {
  placeholder_kind kinds[2];
  int kind_count = 0;
  VLM_RETURN_IF_ERROR(collect_kinds(model, tokenizer, source, kinds, &kind_count));
  for (int k = 0; k < kind_count; k++) {
    int64_t found = count_occurrences(text, kinds[k].text);
    if (found != kinds[k].items)
      return VLM_ERROR(INVALID_ARGUMENT, "the prompt has %lld %s placeholder(s) (%s) but the request has %d %s(s)",
                       (long long)found, vlm_media_kind_name(kinds[k].kind), kinds[k].text, kinds[k].items,
                       kinds[k].kind == VLM_MEDIA_IMAGE ? "image" : "audio clip");
  }
  vlm_string_builder out = {0};
  const char *at = text;
  vlm_status status = VLM_OK;
  for (int placed = 0; placed < source->item_count && !status; placed++) {
    const char *next = NULL;
    placeholder_kind *chosen = NULL;
    for (int k = 0; k < kind_count; k++) {
      const char *candidate = kinds[k].next < kinds[k].items ? strstr(at, kinds[k].text) : NULL;
      if (candidate && (!next || candidate < next)) next = candidate, chosen = &kinds[k];
    }
    if (!chosen) {
      status = VLM_ERROR(INTERNAL, "placeholder %d of the prompt is missing", placed);
      break;
    }
    int index = item_of_kind(source, chosen->kind, chosen->next++);
    out_order[placed] = index;
    vlm_sb_append(&out, at, (size_t)(next - at));
    status = chosen->expand(&model->config, &source->items[index], chosen->text, token_text, (void *)tokenizer, &out);
    at = next + strlen(chosen->text);
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

/* Rows that take features: the feature tokens of every kind (the
 * placeholder's own unless the family names another: Gemma 3 expands
 * <start_of_image> into soft tokens), in order; each kind's count must be
 * its items' feature rows (Transformers' get_placeholder_mask check). */
static vlm_status place_features(const vlm_model *model, const engine_prompt_source *source, engine_prompt *prompt) {
  prompt->feature_rows = calloc((size_t)(prompt->count ? prompt->count : 1), 1);
  if (!prompt->feature_rows) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int k = 0; k < 2; k++) {
    vlm_media_kind kind = k == 0 ? VLM_MEDIA_IMAGE : VLM_MEDIA_AUDIO;
    int64_t expected = 0;
    int items = 0;
    for (int i = 0; i < source->item_count; i++)
      if (source->items[i].kind == kind) expected += source->items[i].token_count, items++;
    if (!items) continue;
    const vlm_family_image *image = model->family->image;
    int64_t id = kind == VLM_MEDIA_IMAGE ? (image->feature_token ? image->feature_token(&model->config)
                                                                 : image->placeholder_token(&model->config))
                                         : model->family->audio->placeholder_token(&model->config);
    int64_t rows = 0;
    for (int64_t r = 0; r < prompt->count; r++)
      if (prompt->ids[r] == id) {
        prompt->feature_rows[r] = 1;
        rows++;
      }
    if (rows != expected)
      return VLM_ERROR(INVALID_ARGUMENT,
                       "%s features and %s tokens do not match: the prompt has %lld %s tokens, the items %lld "
                       "feature rows",
                       vlm_media_kind_name(kind), vlm_media_kind_name(kind), (long long)rows,
                       vlm_media_kind_name(kind), (long long)expected);
    prompt->media_tokens[kind] = rows;
    prompt->feature_row_count += rows;
  }
  return VLM_OK;
}

static vlm_status compute_positions(const vlm_model *model, const engine_prompt_source *source, engine_prompt *prompt) {
  if (!model->family || !model->family->positions) return VLM_OK;
  prompt->position_axes = 3;
  prompt->positions = malloc((size_t)(3 * (prompt->count ? prompt->count : 1)) * sizeof(int64_t));
  const vlm_media_item *items[64];
  if (source->item_count > 64) return VLM_ERROR(OUT_OF_RANGE, "more than 64 media items in one request");
  for (int i = 0; i < source->item_count; i++) items[i] = &source->items[prompt->item_order[i]];
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

/* A prompt given as ids: copied as they are (the caller checked them
 * against the vocabulary), positions as for any text. */
static vlm_status build_from_ids(const vlm_model *model, const engine_prompt_source *source, engine_prompt *out) {
  if (source->messages_json || source->raw_prompt || source->item_count)
    return VLM_ERROR(INVALID_ARGUMENT, "a prompt of token ids takes no messages, text or media");
  if (source->prompt_id_count <= 0) return VLM_ERROR(INVALID_ARGUMENT, "the prompt has no token ids");
  out->ids = malloc((size_t)source->prompt_id_count * sizeof(int32_t));
  if (!out->ids) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  memcpy(out->ids, source->prompt_ids, (size_t)source->prompt_id_count * sizeof(int32_t));
  out->count = source->prompt_id_count;
  out->position_axes = 1;
  vlm_status status = source->ids_only ? VLM_OK : compute_positions(model, source, out);
  if (!status && !source->ids_only) status = compute_attention_blocks(model, out);
  if (status) engine_prompt_release(out);
  return status;
}

vlm_status engine_prompt_build(const vlm_model *model, const vlm_tokenizer *tokenizer,
                               const vlm_chat_template *chat_template, const engine_prompt_source *source,
                               engine_prompt *out) {
  memset(out, 0, sizeof(*out));
  if (source->prompt_ids) return build_from_ids(model, source, out);
  if (!source->messages_json == !source->raw_prompt)
    return VLM_ERROR(INVALID_ARGUMENT, "a request needs exactly one of chat messages or a raw prompt");
  char *rendered = NULL;
  size_t rendered_length = 0;
  VLM_RETURN_IF_ERROR(render(chat_template, model, tokenizer, source, &rendered, &rendered_length));
  vlm_status status = VLM_OK;
  int *order = NULL;
  if (source->item_count > 0) {
    char *expanded = NULL;
    order = malloc((size_t)source->item_count * sizeof(int));
    status = order ? expand(model, tokenizer, source, rendered, &expanded, &rendered_length, order)
                   : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    free(rendered);
    rendered = expanded;
  }
  /* A raw prompt gets BOS etc.; a rendered template gets them as the
   * family's Transformers flow adds them: never through the tokenizer, and
   * through the processor unless the prompt starts with bos_token. */
  vlm_token_ids ids = {0};
  bool chat = source->messages_json || source->raw_prompt_is_rendered_chat;
  bool over = false;
  if (!status)
    status = chat ? vlm_tokenizer_encode_chat_bounded(tokenizer, rendered, rendered_length, prompt_flow(model),
                                                      source->max_ids, &ids, &over)
                  : vlm_tokenizer_encode_bounded(tokenizer, rendered, rendered_length, true, source->max_ids, &ids,
                                                 &over);
  free(rendered);
  if (!status && over) {
    vlm_token_ids_release(&ids);
    if (source->token_limit_reached) *source->token_limit_reached = true;
    status = VLM_ERROR(OUT_OF_RANGE, "the prompt has more than %zu tokens", source->max_ids);
  }
  if (status) {
    free(order);
    return status;
  }
  out->item_order = order;
  out->ids = ids.ids;
  out->count = (int64_t)ids.count;
  out->position_axes = 1;
  if (!status && source->item_count > 0) status = place_features(model, source, out);
  if (!status && !source->ids_only) status = compute_positions(model, source, out);
  /* Blocks are runs of expanded rows: an unexpanded (ids_only) prompt has
   * none yet; the engine checks them against the backend once expanded. */
  if (!status && !source->ids_only) status = compute_attention_blocks(model, out);
  if (status) engine_prompt_release(out);
  return status;
}
