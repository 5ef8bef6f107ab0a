/* Chat messages (POST /v1/chat/completions) converted to Transformers'
 * chat format for the model's template; see openai_request.h.
 *
 * Content parts become {"type":"text","text":...} and {"type":"image"}
 * in order, each image part's URL kept in request->media; inside
 * messages, unknown keys are refused (OpenAI validates messages with
 * additionalProperties: false). Content is handed over in the shape the
 * template reads (openai_content_format), as vLLM does. */
#include <stdlib.h>
#include <string.h>

#include "server/openai_request_internal.h"


typedef struct message_builder {
  openai_request *request;
  vlm_string_builder json;
  size_t media_capacity;
  openai_error *error;
  openai_content_format content_format;
} message_builder;

static bool check_allowed_keys(const vlm_json_value *object, const char *const *allowed,
                               const char *param, openai_error *error) {
  for (size_t i = 0; i < object->as.object.count; i++) {
    const vlm_json_member *member = &object->as.object.members[i];
    const char *key = member->key;
    bool known = false;
    for (size_t j = 0; allowed[j] && !known; j++) known = openai_key_is(member, allowed[j]);
    if (known) continue;
    char field[OPENAI_PARAM_CAPACITY];
    openai_build_param(field, "%s.%.60s", param, key);
    openai_error_set(error, 400, "invalid_request_error", field, NULL,
                     "Unrecognized argument '%.60s' in '%s'", key, param);
    return false;
  }
  return true;
}

static bool add_media(message_builder *builder, openai_media *media) {
  openai_request *request = builder->request;
  if (request->media_count == builder->media_capacity) {
    size_t capacity = builder->media_capacity ? builder->media_capacity * 2 : 4;
    openai_media *grown = realloc(request->media, capacity * sizeof(*grown));
    if (!grown) return false;
    request->media = grown;
    builder->media_capacity = capacity;
  }
  request->media[request->media_count++] = *media;
  return true;
}

void openai_media_release(openai_media *media) {
  free(media->url);
  free(media->audio_data);
  free(media->audio_format);
  free(media->param);
}

static bool parse_text_part(message_builder *builder, const vlm_json_value *part,
                            const char *param) {
  static const char *const allowed[] = {"type", "text", NULL};
  if (!check_allowed_keys(part, allowed, param, builder->error)) return false;
  char text_param[OPENAI_PARAM_CAPACITY];
  openai_build_param(text_param, "%s.text", param);
  const vlm_json_value *text = openai_or_null(vlm_json_object_get(part, "text"));
  if (text->type != VLM_JSON_STRING) return openai_fail_type(builder->error, text_param, "a string", text);
  vlm_sb_append_literal(&builder->json, "{\"type\":\"text\",\"text\":");
  vlm_sb_append_json_string(&builder->json, text->as.string.chars, text->as.string.length);
  vlm_sb_append_literal(&builder->json, "}");
  return true;
}

static bool parse_image_part(message_builder *builder, const vlm_json_value *part,
                             const char *param) {
  static const char *const allowed[] = {"type", "image_url", NULL};
  static const char *const allowed_inner[] = {"url", "detail", NULL};
  openai_error *error = builder->error;
  if (!check_allowed_keys(part, allowed, param, error)) return false;
  char field[OPENAI_PARAM_CAPACITY];
  openai_build_param(field, "%s.image_url", param);
  const vlm_json_value *image_url = openai_or_null(vlm_json_object_get(part, "image_url"));
  if (image_url->type != VLM_JSON_OBJECT) return openai_fail_type(error, field, "an object", image_url);
  if (!check_allowed_keys(image_url, allowed_inner, field, error)) return false;
  /* detail only sets OpenAI's own resizing; the model's image processor
   * decides the resolution here, so any valid value means the same. */
  const vlm_json_value *detail = vlm_json_object_get(image_url, "detail");
  if (!openai_is_absent(detail) && !vlm_json_string_equals(detail, "auto") &&
      !vlm_json_string_equals(detail, "low") && !vlm_json_string_equals(detail, "high")) {
    openai_build_param(field, "%s.image_url.detail", param);
    return detail->type == VLM_JSON_STRING
               ? openai_fail_invalid_value(error, field, "must be \"auto\", \"low\" or \"high\"")
               : openai_fail_type(error, field, "a string", detail);
  }
  openai_build_param(field, "%s.image_url.url", param);
  openai_media media = {.kind = OPENAI_MEDIA_IMAGE};
  if (!openai_copy_plain_string(openai_or_null(vlm_json_object_get(image_url, "url")), field, error, &media.url))
    return false;
  if (media.url[0] == '\0') {
    free(media.url);
    return openai_fail_invalid_value(error, field, "must not be empty");
  }
  media.param = openai_copy_string(field);
  if (!media.param || !add_media(builder, &media)) {
    openai_media_release(&media);
    return openai_fail_out_of_memory(error);
  }
  vlm_sb_append_literal(&builder->json, "{\"type\":\"image\"}");
  return true;
}

/* The audio containers the media stage decodes (SPEC 2.1). */
static bool is_known_audio_format(const vlm_json_value *format) {
  static const char *const formats[] = {"wav", "mp3", "flac", "ogg", NULL};
  for (size_t i = 0; formats[i]; i++)
    if (vlm_json_string_equals(format, formats[i])) return true;
  return false;
}

static bool parse_audio_part(message_builder *builder, const vlm_json_value *part,
                             const char *param) {
  static const char *const allowed[] = {"type", "input_audio", NULL};
  static const char *const allowed_inner[] = {"data", "format", NULL};
  openai_error *error = builder->error;
  if (!check_allowed_keys(part, allowed, param, error)) return false;
  char field[OPENAI_PARAM_CAPACITY];
  openai_build_param(field, "%s.input_audio", param);
  const vlm_json_value *audio = openai_or_null(vlm_json_object_get(part, "input_audio"));
  if (audio->type != VLM_JSON_OBJECT) return openai_fail_type(error, field, "an object", audio);
  if (!check_allowed_keys(audio, allowed_inner, field, error)) return false;
  openai_build_param(field, "%s.input_audio.format", param);
  const vlm_json_value *format = openai_or_null(vlm_json_object_get(audio, "format"));
  if (format->type != VLM_JSON_STRING) return openai_fail_type(error, field, "a string", format);
  if (!is_known_audio_format(format))
    return openai_fail_invalid_value(error, field, "must be \"wav\", \"mp3\", \"flac\" or \"ogg\"");
  openai_build_param(field, "%s.input_audio.data", param);
  openai_media media = {.kind = OPENAI_MEDIA_AUDIO};
  if (!openai_copy_plain_string(openai_or_null(vlm_json_object_get(audio, "data")), field, error,
                         &media.audio_data))
    return false;
  if (media.audio_data[0] == '\0') {
    free(media.audio_data);
    return openai_fail_invalid_value(error, field, "must not be empty");
  }
  media.audio_format = openai_copy_string(format->as.string.chars);
  media.param = openai_copy_string(field);
  if (!media.audio_format || !media.param || !add_media(builder, &media)) {
    openai_media_release(&media);
    return openai_fail_out_of_memory(error);
  }
  vlm_sb_append_literal(&builder->json, "{\"type\":\"audio\"}");
  return true;
}

/* {"type": "audio_url", "audio_url": {"url": ...}}, as vLLM takes audio by
 * URL (data:audio/...;base64, and file:// / http(s) under the policy). */
static bool parse_audio_url_part(message_builder *builder, const vlm_json_value *part, const char *param) {
  static const char *const allowed[] = {"type", "audio_url", NULL};
  static const char *const allowed_inner[] = {"url", NULL};
  openai_error *error = builder->error;
  if (!check_allowed_keys(part, allowed, param, error)) return false;
  char field[OPENAI_PARAM_CAPACITY];
  openai_build_param(field, "%s.audio_url", param);
  const vlm_json_value *audio_url = openai_or_null(vlm_json_object_get(part, "audio_url"));
  if (audio_url->type != VLM_JSON_OBJECT) return openai_fail_type(error, field, "an object", audio_url);
  if (!check_allowed_keys(audio_url, allowed_inner, field, error)) return false;
  openai_build_param(field, "%s.audio_url.url", param);
  openai_media media = {.kind = OPENAI_MEDIA_AUDIO};
  if (!openai_copy_plain_string(openai_or_null(vlm_json_object_get(audio_url, "url")), field, error, &media.url))
    return false;
  if (media.url[0] == '\0') {
    free(media.url);
    return openai_fail_invalid_value(error, field, "must not be empty");
  }
  media.param = openai_copy_string(field);
  if (!media.param || !add_media(builder, &media)) {
    openai_media_release(&media);
    return openai_fail_out_of_memory(error);
  }
  vlm_sb_append_literal(&builder->json, "{\"type\":\"audio\"}");
  return true;
}

static bool parse_content_part(message_builder *builder, const vlm_json_value *part,
                               const char *param, bool allows_media) {
  openai_error *error = builder->error;
  if (part->type != VLM_JSON_OBJECT) return openai_fail_type(error, param, "an object", part);
  char type_param[OPENAI_PARAM_CAPACITY];
  openai_build_param(type_param, "%s.type", param);
  const vlm_json_value *type = openai_or_null(vlm_json_object_get(part, "type"));
  if (type->type != VLM_JSON_STRING) return openai_fail_type(error, type_param, "a string", type);
  if (vlm_json_string_equals(type, "text")) return parse_text_part(builder, part, param);
  bool is_image = vlm_json_string_equals(type, "image_url");
  bool is_audio = vlm_json_string_equals(type, "input_audio");
  bool is_audio_url = vlm_json_string_equals(type, "audio_url");
  if ((is_image || is_audio || is_audio_url) && !allows_media)
    return openai_fail_invalid_value(error, type_param, "'%s' parts are only allowed in user messages",
                              type->as.string.chars);
  if (is_image) return parse_image_part(builder, part, param);
  if (is_audio) return parse_audio_part(builder, part, param);
  if (is_audio_url) return parse_audio_url_part(builder, part, param);
  return openai_fail_invalid_value(error, type_param,
                            "unsupported content part type '%.60s' (supported: text, "
                            "image_url, input_audio, audio_url)",
                            type->as.string.chars);
}

/* vLLM's "string" content format: the text parts joined with newlines. */
static void append_joined_text(vlm_string_builder *json, const vlm_json_value *content) {
  vlm_string_builder joined = {0};
  for (size_t i = 0; i < content->as.array.count; i++) {
    const vlm_json_value *text = vlm_json_object_get(&content->as.array.items[i], "text");
    if (i) vlm_sb_append_literal(&joined, "\n");
    vlm_sb_append(&joined, text->as.string.chars, text->as.string.length);
  }
  if (joined.failed) json->failed = true;
  vlm_sb_append_json_string(json, joined.data ? joined.data : "", joined.length);
  vlm_sb_release(&joined);
}

static bool parse_content(message_builder *builder, const vlm_json_value *content,
                          const char *message_param, bool allows_media) {
  char param[OPENAI_PARAM_CAPACITY];
  openai_build_param(param, "%s.content", message_param);
  if (content->type == VLM_JSON_STRING) {
    /* A template that loops over parts would drop a plain string. */
    bool as_part = builder->content_format == OPENAI_CONTENT_PARTS;
    if (as_part) vlm_sb_append_literal(&builder->json, "[{\"type\":\"text\",\"text\":");
    vlm_sb_append_json_string(&builder->json, content->as.string.chars, content->as.string.length);
    if (as_part) vlm_sb_append_literal(&builder->json, "}]");
    return true;
  }
  if (content->type != VLM_JSON_ARRAY)
    return openai_fail_type(builder->error, param, "a string or an array of content parts", content);
  if (content->as.array.count == 0)
    return openai_fail_invalid_value(builder->error, param, "must not be an empty array");
  size_t start = builder->json.length;
  size_t media_before = builder->request->media_count;
  vlm_sb_append_literal(&builder->json, "[");
  for (size_t i = 0; i < content->as.array.count; i++) {
    char part_param[OPENAI_PARAM_CAPACITY];
    openai_build_param(part_param, "%s[%zu]", param, i);
    if (i) vlm_sb_append_literal(&builder->json, ",");
    if (!parse_content_part(builder, &content->as.array.items[i], part_param, allows_media))
      return false;
  }
  vlm_sb_append_literal(&builder->json, "]");
  /* A template that prints content as a string would print the list's
   * repr. Parts with media stay parts: the engine's prompt builder gives
   * such a template the model's placeholders and the text as one string
   * (vlm_chat_template_options.image_placeholder). */
  if (builder->content_format == OPENAI_CONTENT_STRING &&
      builder->request->media_count == media_before && !builder->json.failed) {
    builder->json.length = start; /* every part was text (validated above) */
    append_joined_text(&builder->json, content);
  }
  return true;
}

static const char *const allowed_message_keys[] = {
    "role", "content", "name", "tool_call_id", "tool_calls", "function_call", "refusal", "audio",
    NULL};

/* Assistant fields that replay tool use or audio: we produce neither, so
 * a history that holds them cannot be rendered faithfully. */
static bool check_assistant_extras(const vlm_json_value *message, const char *param,
                                   openai_error *error) {
  static const char *const refused[] = {"function_call", "refusal", "audio", NULL};
  for (size_t i = 0; refused[i]; i++) {
    const vlm_json_value *value = vlm_json_object_get(message, refused[i]);
    if (openai_is_absent(value)) continue;
    if (value->type == VLM_JSON_ARRAY && value->as.array.count == 0) continue;
    char field[OPENAI_PARAM_CAPACITY];
    openai_build_param(field, "%s.%s", param, refused[i]);
    return openai_fail_unsupported(error, field, "is not supported by this server");
  }
  return true;
}

/* Which roles may carry which extra keys. */
static bool check_message_keys(const vlm_json_value *message, const char *role, const char *param,
                               openai_error *error) {
  if (!check_allowed_keys(message, allowed_message_keys, param, error)) return false;
  if (strcmp(role, "tool") != 0 && vlm_json_object_get(message, "tool_call_id")) {
    char field[OPENAI_PARAM_CAPACITY];
    openai_build_param(field, "%s.tool_call_id", param);
    openai_error_set(error, 400, "invalid_request_error", field, NULL,
                     "Unrecognized argument 'tool_call_id' in '%s' (only tool messages have it)",
                     param);
    return false;
  }
  if (strcmp(role, "assistant") == 0) return check_assistant_extras(message, param, error);
  const char *only_for_assistant[] = {"tool_calls", "function_call", "refusal", "audio"};
  for (size_t i = 0; i < 4; i++) {
    if (!vlm_json_object_get(message, only_for_assistant[i])) continue;
    char field[OPENAI_PARAM_CAPACITY];
    openai_build_param(field, "%s.%s", param, only_for_assistant[i]);
    openai_error_set(error, 400, "invalid_request_error", field, NULL,
                     "Unrecognized argument '%s' in '%s' (only assistant messages have it)",
                     only_for_assistant[i], param);
    return false;
  }
  return true;
}

/* Appends ,"key":"value" for an optional string field of the message. */
static bool append_optional_string(message_builder *builder, const vlm_json_value *message,
                                   const char *key, const char *param) {
  const vlm_json_value *value = vlm_json_object_get(message, key);
  if (openai_is_absent(value)) return true;
  char field[OPENAI_PARAM_CAPACITY];
  openai_build_param(field, "%s.%s", param, key);
  const char *text = NULL;
  if (!openai_read_plain_string(value, field, builder->error, &text)) return false;
  vlm_sb_appendf(&builder->json, ",\"%s\":", key);
  vlm_sb_append_json_string(&builder->json, text, value->as.string.length);
  return true;
}

static const char *known_role(const vlm_json_value *role) {
  static const char *const roles[] = {"system", "developer", "user", "assistant", "tool", NULL};
  for (size_t i = 0; roles[i]; i++)
    if (vlm_json_string_equals(role, roles[i])) return roles[i];
  return NULL;
}

static bool parse_message(message_builder *builder, const vlm_json_value *message, size_t index) {
  openai_error *error = builder->error;
  char param[OPENAI_PARAM_CAPACITY];
  openai_build_param(param, "messages[%zu]", index);
  if (message->type != VLM_JSON_OBJECT) return openai_fail_type(error, param, "an object", message);
  char field[OPENAI_PARAM_CAPACITY];
  openai_build_param(field, "%s.role", param);
  const vlm_json_value *role_value = openai_or_null(vlm_json_object_get(message, "role"));
  if (role_value->type != VLM_JSON_STRING) return openai_fail_type(error, field, "a string", role_value);
  const char *role = known_role(role_value);
  if (!role)
    return openai_fail_invalid_value(error, field,
                              "must be one of system, developer, user, assistant, tool");
  if (!check_message_keys(message, role, param, error)) return false;
  openai_build_param(field, "%s.content", param);
  const vlm_json_value *content = openai_or_null(vlm_json_object_get(message, "content"));
  /* An assistant message that only calls tools has no content. */
  static const vlm_json_value empty_text = {.type = VLM_JSON_STRING, .as.string = {"", 0}};
  if (content->type == VLM_JSON_NULL && strcmp(role, "assistant") == 0 &&
      !openai_is_absent(vlm_json_object_get(message, "tool_calls")))
    content = &empty_text;
  if (content->type == VLM_JSON_NULL)
    return openai_fail_type(error, field, "a string or an array of content parts", content);
  /* Chat templates know "system", not OpenAI's newer "developer" (the same
   * role for newer OpenAI models), so it is rendered as system. */
  const char *template_role = strcmp(role, "developer") == 0 ? "system" : role;
  vlm_sb_appendf(&builder->json, "{\"role\":\"%s\",\"content\":", template_role);
  if (!parse_content(builder, content, param, strcmp(role, "user") == 0)) return false;
  if (!append_optional_string(builder, message, "name", param)) return false;
  if (!append_optional_string(builder, message, "tool_call_id", param)) return false;
  if (!openai_append_tool_calls(&builder->json, message, param, error)) return false;
  vlm_sb_append_literal(&builder->json, "}");
  return true;
}

bool openai_parse_messages(const vlm_json_value *body, openai_content_format content_format,
                           openai_request *request, openai_error *error) {
  const vlm_json_value *messages = openai_or_null(vlm_json_object_get(body, "messages"));
  if (messages->type != VLM_JSON_ARRAY)
    return openai_fail_type(error, "messages", "an array of messages", messages);
  if (messages->as.array.count == 0)
    return openai_fail_invalid_value(error, "messages", "must contain at least one message");
  message_builder builder = {.request = request, .error = error, .content_format = content_format};
  vlm_sb_append_literal(&builder.json, "[");
  for (size_t i = 0; i < messages->as.array.count; i++) {
    if (i) vlm_sb_append_literal(&builder.json, ",");
    if (!parse_message(&builder, &messages->as.array.items[i], i)) {
      vlm_sb_release(&builder.json);
      return false;
    }
  }
  vlm_sb_append_literal(&builder.json, "]");
  request->messages_json = vlm_sb_finish(&builder.json);
  return request->messages_json ? true : openai_fail_out_of_memory(error);
}

