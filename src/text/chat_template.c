/* Chat templates: finding the model's template, and preparing the variables
 * exactly as Transformers' apply_chat_template does before handing them to
 * Jinja (see jinja.h for the engine). What Transformers 5.23.0 does, and we
 * mirror:
 *   - template_kwargs = {**tokenizer.special_tokens_map, **kwargs}: the
 *     named special tokens that are set, overridden by extra variables;
 *   - message keys whose value is None are dropped;
 *   - reasoning fields are aliased: {"thinking": r, **message,
 *     "reasoning_content": r} where r is the first non-null of
 *     reasoning_content, thinking, reasoning;
 *   - render(messages=..., tools=... or None, documents=None,
 *     add_generation_prompt=..., **template_kwargs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/file.h"
#include "io/json.h"
#include "text/chat_content.h"
#include "text/chat_template_format.h"
#include "text/jinja.h"
#include "vlm/chat_template.h"

#define CONFIG_MAX_BYTES ((size_t)64 << 20)
#define TEMPLATE_MAX_BYTES ((size_t)4 << 20)

static const char *const special_token_names[] = {
    "bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"};
#define SPECIAL_TOKEN_COUNT (sizeof(special_token_names) / sizeof(special_token_names[0]))

struct vlm_chat_template {
  jinja_template *parsed;
  char *text;
  char *source;
  char *special_tokens[SPECIAL_TOKEN_COUNT]; /* NULL when unset */
  vlm_chat_content_format content_format;     /* detected once, at parse time */
};

void vlm_chat_template_release(vlm_chat_template *chat_template) {
  if (!chat_template) return;
  jinja_template_release(chat_template->parsed);
  free(chat_template->text);
  free(chat_template->source);
  for (size_t i = 0; i < SPECIAL_TOKEN_COUNT; i++) free(chat_template->special_tokens[i]);
  free(chat_template);
}

const char *vlm_chat_template_text(const vlm_chat_template *chat_template) {
  return chat_template->text;
}

const char *vlm_chat_template_source(const vlm_chat_template *chat_template) {
  return chat_template->source;
}

vlm_chat_content_format vlm_chat_template_content_format(const vlm_chat_template *chat_template) {
  return chat_template->content_format;
}

static char *copy_text(const char *text, size_t length) {
  char *copy = malloc(length + 1);
  if (!copy) return NULL;
  if (length) memcpy(copy, text, length);
  copy[length] = 0;
  return copy;
}

/* Takes ownership of `text`; parses it and fills in the template. */
static vlm_status finish_template(char *text, size_t length, const char *source,
                                  vlm_chat_template *chat_template) {
  chat_template->text = text;
  chat_template->source = copy_text(source, strlen(source));
  if (!chat_template->source) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  VLM_RETURN_IF_ERROR(jinja_template_parse(text, length, source, &chat_template->parsed));
  chat_template->content_format = chat_template_detect_content_format(chat_template->parsed);
  return VLM_OK;
}

vlm_status vlm_chat_template_create(const char *template_text, size_t length, const char *bos_token,
                                    const char *eos_token, const char *source_name,
                                    vlm_chat_template **out_template) {
  *out_template = NULL;
  vlm_chat_template *chat_template = calloc(1, sizeof(*chat_template));
  char *text = copy_text(template_text, length);
  if (!chat_template || !text) {
    free(chat_template);
    free(text);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  const char *tokens[2] = {bos_token, eos_token};
  for (size_t i = 0; i < 2; i++) {
    if (!tokens[i]) continue;
    chat_template->special_tokens[i] = copy_text(tokens[i], strlen(tokens[i]));
    if (!chat_template->special_tokens[i]) {
      free(text);
      vlm_chat_template_release(chat_template);
      return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    }
  }
  vlm_status status = finish_template(text, length, source_name ? source_name : "chat template",
                                      chat_template);
  if (status != VLM_OK) {
    vlm_chat_template_release(chat_template);
    return status;
  }
  *out_template = chat_template;
  return VLM_OK;
}

/* A special token is a string or an AddedToken object {"content": ...}. */
static vlm_status read_special_tokens(const vlm_json_value *config, const char *path,
                                      vlm_chat_template *chat_template) {
  for (size_t i = 0; i < SPECIAL_TOKEN_COUNT; i++) {
    const vlm_json_value *value = vlm_json_object_get(config, special_token_names[i]);
    if (!value || value->type == VLM_JSON_NULL) continue;
    if (value->type == VLM_JSON_OBJECT) value = vlm_json_object_get(value, "content");
    if (!vlm_json_is_string(value))
      return VLM_ERROR(INVALID_ARGUMENT, "%s: %s must be a string or an object with a string \"content\"",
                       path, special_token_names[i]);
    chat_template->special_tokens[i] = copy_text(value->as.string.chars, value->as.string.length);
    if (!chat_template->special_tokens[i]) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  return VLM_OK;
}

/* tokenizer_config.json's chat_template: a string, or named templates of
 * which Transformers uses "default" when no name is asked for. */
static vlm_status pick_config_template(const vlm_json_value *value, const char *path,
                                       const vlm_json_value **out) {
  *out = NULL;
  if (!value || value->type == VLM_JSON_NULL) return VLM_OK;
  if (value->type == VLM_JSON_STRING) {
    *out = value;
    return VLM_OK;
  }
  if (value->type != VLM_JSON_ARRAY)
    return VLM_ERROR(INVALID_ARGUMENT, "%s: chat_template must be a string or a list of {name, template}", path);
  for (size_t i = 0; i < value->as.array.count; i++) {
    const vlm_json_value *entry = &value->as.array.items[i];
    const vlm_json_value *template_text = vlm_json_object_get(entry, "template");
    if (!vlm_json_is_string(vlm_json_object_get(entry, "name")) || !vlm_json_is_string(template_text))
      return VLM_ERROR(INVALID_ARGUMENT, "%s: chat_template[%zu] must be {\"name\": ..., \"template\": ...}", path, i);
    if (vlm_json_string_equals(vlm_json_object_get(entry, "name"), "default")) *out = template_text;
  }
  if (!*out)
    return VLM_ERROR(INVALID_ARGUMENT, "%s: the model has several chat templates and none is named \"default\"", path);
  return VLM_OK;
}

static vlm_status read_template_file(const char *path, char **out_text, size_t *out_length) {
  return vlm_status_annotate(vlm_file_read_all(path, TEMPLATE_MAX_BYTES, out_text, out_length),
                             "chat template");
}

/* chat_template.json: {"chat_template": "..."}. */
static vlm_status read_template_json(const char *path, char **out_text, size_t *out_length) {
  vlm_json_document document;
  VLM_RETURN_IF_ERROR(vlm_json_parse_file(path, CONFIG_MAX_BYTES, NULL, &document));
  const vlm_json_value *value = vlm_json_object_get(document.root, "chat_template");
  vlm_status status = VLM_OK;
  if (!vlm_json_is_string(value)) {
    status = VLM_ERROR(INVALID_ARGUMENT, "%s: expected a string \"chat_template\"", path);
  } else {
    *out_text = copy_text(value->as.string.chars, value->as.string.length);
    *out_length = value->as.string.length;
    if (!*out_text) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  vlm_json_document_release(&document);
  return status;
}

static vlm_status load_from_directory(const char *model_dir, vlm_chat_template *chat_template) {
  char *config_path = vlm_path_join(model_dir, "tokenizer_config.json");
  char *jinja_path = vlm_path_join(model_dir, "chat_template.jinja");
  char *json_path = vlm_path_join(model_dir, "chat_template.json");
  vlm_status status = VLM_OK;
  vlm_json_document config = {0};
  bool have_config = false;
  char *text = NULL;
  size_t length = 0;
  const char *source = NULL;
  if (!config_path || !jinja_path || !json_path) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (status == VLM_OK && vlm_path_exists(config_path)) {
    status = vlm_json_parse_file(config_path, CONFIG_MAX_BYTES, NULL, &config);
    have_config = status == VLM_OK;
    if (have_config) status = read_special_tokens(config.root, config_path, chat_template);
  }
  /* A separate template file takes precedence over the tokenizer config. */
  if (status == VLM_OK && vlm_path_exists(jinja_path)) {
    status = read_template_file(jinja_path, &text, &length);
    source = jinja_path;
  } else if (status == VLM_OK && vlm_path_exists(json_path)) {
    status = read_template_json(json_path, &text, &length);
    source = json_path;
  } else if (status == VLM_OK && have_config) {
    const vlm_json_value *value = NULL;
    status = pick_config_template(vlm_json_object_get(config.root, "chat_template"), config_path, &value);
    if (status == VLM_OK && value) {
      text = copy_text(value->as.string.chars, value->as.string.length);
      length = value->as.string.length;
      source = config_path;
      if (!text) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    }
  }
  if (status == VLM_OK && !source)
    status = VLM_ERROR(NOT_FOUND,
                       "%s has no chat template (no chat_template.jinja, no chat_template.json and no "
                       "\"chat_template\" in tokenizer_config.json)", model_dir);
  if (status == VLM_OK) {
    status = finish_template(text, length, source, chat_template);
    text = NULL; /* owned by the template now */
  }
  free(text);
  if (have_config) vlm_json_document_release(&config);
  free(config_path);
  free(jinja_path);
  free(json_path);
  return status;
}

vlm_status vlm_chat_template_load(const char *model_dir, vlm_chat_template **out_template) {
  *out_template = NULL;
  vlm_chat_template *chat_template = calloc(1, sizeof(*chat_template));
  if (!chat_template) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_status status = load_from_directory(model_dir, chat_template);
  if (status != VLM_OK) {
    vlm_chat_template_release(chat_template);
    return status;
  }
  *out_template = chat_template;
  return VLM_OK;
}

/* ---- rendering ------------------------------------------------------------ */

/* A growable JSON object built in an arena: the template's variables. */
typedef struct object_builder {
  vlm_arena *arena;
  vlm_json_member *members;
  size_t count;
  size_t capacity;
} object_builder;

static bool object_put(object_builder *builder, const char *key, size_t key_length,
                       vlm_json_value value) {
  for (size_t i = 0; i < builder->count; i++) {
    if (builder->members[i].key_length == key_length && !memcmp(builder->members[i].key, key, key_length)) {
      builder->members[i].value = value; /* Python dicts keep the first position */
      return true;
    }
  }
  if (builder->count == builder->capacity) {
    size_t capacity = builder->capacity ? builder->capacity * 2 : 16;
    vlm_json_member *members = vlm_arena_allocate(builder->arena, capacity * sizeof(*members), 8);
    if (!members) return false;
    if (builder->count) memcpy(members, builder->members, builder->count * sizeof(*members));
    builder->members = members;
    builder->capacity = capacity;
  }
  builder->members[builder->count++] = (vlm_json_member){.key = key, .key_length = key_length, .value = value};
  return true;
}

static vlm_json_value object_value(const object_builder *builder) {
  vlm_json_value value = {.type = VLM_JSON_OBJECT};
  value.as.object.members = builder->members;
  value.as.object.count = builder->count;
  return value;
}

static vlm_json_value string_value(const char *text) {
  vlm_json_value value = {.type = VLM_JSON_STRING};
  value.as.string.chars = text;
  value.as.string.length = strlen(text);
  return value;
}

static const vlm_json_value *first_reasoning(const vlm_json_value *message) {
  static const char *const fields[] = {"reasoning_content", "thinking", "reasoning"};
  for (size_t i = 0; i < 3; i++) {
    const vlm_json_value *value = vlm_json_object_get(message, fields[i]);
    if (value && value->type != VLM_JSON_NULL) return value;
  }
  return NULL;
}

/* OpenAI {"type": "image_url", "image_url": {"url": U}} parts become
 * {"type": "image", "url": U}, as Transformers' processors do. */
static vlm_status convert_image_url_parts(vlm_arena *arena, const vlm_json_value *content,
                                          vlm_json_value *out) {
  *out = *content;
  if (content->type != VLM_JSON_ARRAY) return VLM_OK;
  size_t count = content->as.array.count;
  vlm_json_value *items = vlm_arena_allocate(arena, (count + 1) * sizeof(*items), 8);
  if (!items) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory preparing messages");
  for (size_t i = 0; i < count; i++) {
    const vlm_json_value *part = &content->as.array.items[i];
    const vlm_json_value *image_url = vlm_json_object_get(part, "image_url");
    items[i] = *part;
    if (!vlm_json_string_equals(vlm_json_object_get(part, "type"), "image_url") || !image_url) continue;
    vlm_json_value url = string_value("");
    if (image_url->type == VLM_JSON_OBJECT) {
      const vlm_json_value *inner = vlm_json_object_get(image_url, "url");
      if (inner) url = *inner;
    } else {
      url = *image_url;
    }
    object_builder builder = {.arena = arena};
    if (!object_put(&builder, "type", 4, string_value("image")) || !object_put(&builder, "url", 3, url))
      return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory preparing messages");
    items[i] = object_value(&builder);
  }
  out->as.array.items = items;
  return VLM_OK;
}

/* [{"type": "text", "text": S}] for a string S. */
static vlm_status text_part_list(vlm_arena *arena, const vlm_json_value *text, vlm_json_value *out) {
  vlm_json_value *items = vlm_arena_allocate(arena, sizeof(*items), 8);
  object_builder builder = {.arena = arena};
  if (!items || !object_put(&builder, "type", 4, string_value("text")) ||
      !object_put(&builder, "text", 4, *text))
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory preparing messages");
  items[0] = object_value(&builder);
  *out = (vlm_json_value){.type = VLM_JSON_ARRAY};
  out->as.array.items = items;
  out->as.array.count = 1;
  return VLM_OK;
}

/* One message as Transformers hands it to the template. */
static vlm_status prepare_message(vlm_arena *arena, const vlm_json_value *message, size_t index,
                                  bool string_content_as_parts, const chat_content_placeholders *placeholders,
                                  vlm_json_value *out) {
  if (!message || message->type != VLM_JSON_OBJECT)
    return VLM_ERROR(INVALID_ARGUMENT, "messages[%zu]: chat messages should be objects, got %s", index,
                     vlm_json_type_name(message ? message->type : VLM_JSON_NULL));
  object_builder builder = {.arena = arena};
  const vlm_json_value *reasoning = first_reasoning(message);
  bool ok = true;
  if (reasoning) ok = object_put(&builder, "thinking", 8, *reasoning);
  for (size_t i = 0; i < message->as.object.count && ok; i++) {
    const vlm_json_member *member = &message->as.object.members[i];
    if (member->value.type == VLM_JSON_NULL) continue;
    vlm_json_value value = member->value;
    if (!strcmp(member->key, "content")) {
      bool converted = false;
      VLM_RETURN_IF_ERROR(vlm_status_annotate(
          chat_content_parts_as_string(arena, &member->value, placeholders, &value, &converted), "messages[%zu]",
          index));
      if (converted) {
        /* one string, as the template reads it */
      } else if (string_content_as_parts && value.type == VLM_JSON_STRING) {
        VLM_RETURN_IF_ERROR(text_part_list(arena, &member->value, &value));
      } else {
        VLM_RETURN_IF_ERROR(convert_image_url_parts(arena, &member->value, &value));
      }
    }
    ok = object_put(&builder, member->key, member->key_length, value);
  }
  if (reasoning && ok) ok = object_put(&builder, "reasoning_content", 17, *reasoning);
  if (!ok) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory preparing messages");
  *out = object_value(&builder);
  return VLM_OK;
}

static vlm_status prepare_messages(vlm_arena *arena, const vlm_json_value *messages,
                                   bool string_content_as_parts, const chat_content_placeholders *placeholders,
                                   vlm_json_value *out) {
  if (!messages || messages->type != VLM_JSON_ARRAY)
    return VLM_ERROR(INVALID_ARGUMENT, "messages must be a JSON array of messages (or {\"messages\": [...]})");
  if (messages->as.array.count == 0)
    return VLM_ERROR(INVALID_ARGUMENT, "Cannot apply chat template to an empty conversation. Provide at least one message.");
  vlm_json_value *items = vlm_arena_allocate(arena, messages->as.array.count * sizeof(*items), 8);
  if (!items) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory preparing messages");
  for (size_t i = 0; i < messages->as.array.count; i++)
    VLM_RETURN_IF_ERROR(prepare_message(arena, &messages->as.array.items[i], i, string_content_as_parts,
                                        placeholders, &items[i]));
  *out = (vlm_json_value){.type = VLM_JSON_ARRAY};
  out->as.array.items = items;
  out->as.array.count = messages->as.array.count;
  return VLM_OK;
}

static vlm_status parse_optional(const char *text, const char *name, vlm_json_type expected,
                                 vlm_json_document *document, bool *parsed) {
  *parsed = false;
  if (!text) return VLM_OK;
  VLM_RETURN_IF_ERROR(vlm_json_parse(text, strlen(text), NULL, NULL, name, document));
  *parsed = true;
  if (document->root->type != expected && document->root->type != VLM_JSON_NULL)
    return VLM_ERROR(INVALID_ARGUMENT, "%s must be a JSON %s", name, vlm_json_type_name(expected));
  return VLM_OK;
}

typedef struct render_inputs {
  vlm_json_document messages;
  vlm_json_document tools;
  vlm_json_document extra;
  bool have_messages, have_tools, have_extra;
  vlm_arena arena;
} render_inputs;

static void render_inputs_release(render_inputs *inputs) {
  if (inputs->have_messages) vlm_json_document_release(&inputs->messages);
  if (inputs->have_tools) vlm_json_document_release(&inputs->tools);
  if (inputs->have_extra) vlm_json_document_release(&inputs->extra);
  vlm_arena_reset(&inputs->arena);
}

static vlm_status build_variables(const vlm_chat_template *chat_template, render_inputs *inputs,
                                  const vlm_chat_template_options *options, vlm_json_value *out) {
  const vlm_json_value *root = inputs->messages.root;
  const vlm_json_value *messages = root;
  const vlm_json_value *tools = inputs->have_tools ? inputs->tools.root : NULL;
  if (root->type == VLM_JSON_OBJECT) {
    messages = vlm_json_object_get(root, "messages");
    if (!tools) tools = vlm_json_object_get(root, "tools");
  }
  vlm_json_value prepared;
  /* Media placeholders only for a template that prints content. */
  chat_content_placeholders placeholders = {options->image_placeholder, options->audio_placeholder};
  bool as_string = chat_template->content_format == VLM_CHAT_CONTENT_STRING &&
                   (placeholders.image || placeholders.audio);
  VLM_RETURN_IF_ERROR(prepare_messages(&inputs->arena, messages, options->string_content_as_parts,
                                       as_string ? &placeholders : NULL, &prepared));
  if (tools && tools->type != VLM_JSON_ARRAY && tools->type != VLM_JSON_NULL)
    return VLM_ERROR(INVALID_ARGUMENT, "tools must be a JSON array of tool schemas");
  object_builder builder = {.arena = &inputs->arena};
  bool ok = true;
  for (size_t i = 0; i < SPECIAL_TOKEN_COUNT && ok; i++)
    if (chat_template->special_tokens[i])
      ok = object_put(&builder, special_token_names[i], strlen(special_token_names[i]),
                      string_value(chat_template->special_tokens[i]));
  static const char *const reserved[] = {"messages", "tools", "documents", "add_generation_prompt"};
  if (inputs->have_extra && inputs->extra.root->type == VLM_JSON_OBJECT) {
    const vlm_json_value *extra = inputs->extra.root;
    for (size_t i = 0; i < extra->as.object.count && ok; i++) {
      const vlm_json_member *member = &extra->as.object.members[i];
      for (size_t r = 0; r < 4; r++)
        if (!strcmp(member->key, reserved[r]))
          return VLM_ERROR(INVALID_ARGUMENT, "extra template variable '%s' is set by the renderer itself", member->key);
      ok = object_put(&builder, member->key, member->key_length, member->value);
    }
  }
  vlm_json_value null_value = {.type = VLM_JSON_NULL};
  vlm_json_value generation = {.type = VLM_JSON_BOOL};
  generation.as.boolean = options && options->add_generation_prompt;
  ok = ok && object_put(&builder, "messages", 8, prepared) &&
       object_put(&builder, "tools", 5, tools ? *tools : null_value) &&
       object_put(&builder, "documents", 9, null_value) &&
       object_put(&builder, "add_generation_prompt", 21, generation);
  if (!ok) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory preparing template variables");
  *out = object_value(&builder);
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* continue_final_message, as Transformers' render_jinja_template does it. */
/* ---------------------------------------------------------------------- */

#define CONTINUE_TAG "CONTINUE_FINAL_MESSAGE_TAG "

static vlm_json_value *member_value(vlm_json_value *object, const char *key) {
  if (!object || object->type != VLM_JSON_OBJECT) return NULL;
  for (size_t i = 0; i < object->as.object.count; i++) {
    vlm_json_member *member = &object->as.object.members[i];
    if (member->key_length == strlen(key) && !memcmp(member->key, key, member->key_length)) return &member->value;
  }
  return NULL;
}

/* `text` + the tag, in the arena. */
static bool tagged_string(vlm_arena *arena, const vlm_json_value *text, vlm_json_value *out) {
  size_t length = text->as.string.length, tag = strlen(CONTINUE_TAG);
  char *chars = vlm_arena_allocate(arena, length + tag + 1, 1);
  if (!chars) return false;
  memcpy(chars, text->as.string.chars, length);
  memcpy(chars + length, CONTINUE_TAG, tag + 1);
  *out = (vlm_json_value){.type = VLM_JSON_STRING};
  out->as.string.chars = chars;
  out->as.string.length = length + tag;
  return true;
}

/* Tags the final message's content (a string, or its last part with a
 * "text") and returns the untagged text in *out_final. */
static vlm_status tag_final_message(const vlm_chat_template *chat_template, vlm_arena *arena,
                                    vlm_json_value *variables, vlm_json_value *out_final) {
  vlm_json_value *messages = member_value(variables, "messages");
  if (!messages || messages->type != VLM_JSON_ARRAY || messages->as.array.count == 0)
    return VLM_ERROR(INVALID_ARGUMENT, "continue_final_message is set but the conversation is empty!");
  vlm_json_value *content = member_value(&messages->as.array.items[messages->as.array.count - 1], "content");
  if (!content || content->type == VLM_JSON_NULL)
    return VLM_ERROR(INVALID_ARGUMENT, "continue_final_message is set but the final message has no \"content\" to continue!");
  if (!strstr(chat_template->text, "content"))
    return VLM_ERROR(INVALID_ARGUMENT, "continue_final_message is set to \"content\" but this is not an accepted field in "
                                       "the chat_template");
  if (content->type == VLM_JSON_ARRAY) {
    for (size_t i = content->as.array.count; i-- > 0;) {
      vlm_json_value *part = &content->as.array.items[i];
      vlm_json_value *text = member_value(part, "text");
      if (!text) continue;
      if (text->type != VLM_JSON_STRING)
        return VLM_ERROR(INVALID_ARGUMENT, "continue_final_message: the final message's last text is not a string");
      /* The part may be the caller's document: tag a copy of it. */
      size_t count = part->as.object.count;
      vlm_json_member *members = vlm_arena_allocate(arena, count * sizeof(*members), 8);
      vlm_json_value *items = vlm_arena_allocate(arena, content->as.array.count * sizeof(*items), 8);
      if (!members || !items) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory preparing messages");
      memcpy(members, part->as.object.members, count * sizeof(*members));
      memcpy(items, content->as.array.items, content->as.array.count * sizeof(*items));
      items[i].as.object.members = members;
      content->as.array.items = items;
      text = member_value(&items[i], "text");
      *out_final = *text;
      return tagged_string(arena, out_final, text) ? VLM_OK
                                                   : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory preparing messages");
    }
    return VLM_ERROR(INVALID_ARGUMENT, "continue_final_message is set but we could not find any text to continue in the "
                                       "final message!");
  }
  if (content->type != VLM_JSON_STRING)
    return VLM_ERROR(INVALID_ARGUMENT, "continue_final_message: the final message's content is %s",
                     vlm_json_type_name(content->type));
  *out_final = *content;
  return tagged_string(arena, out_final, content) ? VLM_OK
                                                  : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory preparing messages");
}

/* Python's str.isspace for the ASCII range plus the separators a template
 * might leave (str.strip's set, as far as one byte goes). */
static bool is_python_space(unsigned char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

static bool contains_bytes(const char *haystack, size_t length, const char *needle, size_t needle_length) {
  if (needle_length == 0) return true;
  for (size_t i = 0; i + needle_length <= length; i++)
    if (!memcmp(haystack + i, needle, needle_length)) return true;
  return false;
}

/* Cuts the rendered prompt where the tag starts (Transformers' rindex). */
static vlm_status cut_at_tag(const vlm_json_value *final, char *prompt, size_t *length) {
  const char *text = final->as.string.chars;
  size_t start = 0, end = final->as.string.length;
  while (start < end && is_python_space((unsigned char)text[start])) start++;
  while (end > start && is_python_space((unsigned char)text[end - 1])) end--;
  const char *tag = CONTINUE_TAG;
  size_t tag_length = strlen(tag) - 1; /* tag.strip() */
  if (!contains_bytes(prompt, *length, text + start, end - start) || !contains_bytes(prompt, *length, tag, tag_length))
    return VLM_ERROR(INVALID_ARGUMENT, "continue_final_message is set but the final message does not appear in the chat "
                                       "after applying the chat template! This can happen if the chat template deletes "
                                       "portions of the final message.");
  size_t at = *length - tag_length;
  while (memcmp(prompt + at, tag, tag_length)) at--;
  bool spacing_kept = *length - at >= tag_length + 1 && prompt[at + tag_length] == ' ';
  size_t cut = at;
  if (!spacing_kept)
    while (cut > 0 && is_python_space((unsigned char)prompt[cut - 1])) cut--;
  prompt[cut] = '\0';
  *length = cut;
  return VLM_OK;
}

/* The renderer reports its bounds (output, steps, memory, call depth) as
 * RESOURCE_EXHAUSTED and arithmetic overflow as OUT_OF_RANGE, codes a
 * server reads as "busy, retry later" and "context length exceeded". Both
 * are decided by the conversation and the template alone, so they leave
 * here as what they are to a caller: a request the template cannot render.
 * (A genuine allocation failure inside the renderer reads the same; it
 * cannot be told from the memory bound there.) */
static vlm_status as_request_error(vlm_status status) {
  vlm_status_code code = vlm_status_code_of(status);
  if (code != VLM_STATUS_RESOURCE_EXHAUSTED && code != VLM_STATUS_OUT_OF_RANGE) return status;
  vlm_status remapped = vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "%s", vlm_status_message(status));
  vlm_status_free(status);
  return remapped;
}

vlm_status vlm_chat_template_render(const vlm_chat_template *chat_template, const char *messages_json,
                                    size_t messages_length, const vlm_chat_template_options *options,
                                    char **out_prompt, size_t *out_length) {
  *out_prompt = NULL;
  if (out_length) *out_length = 0;
  render_inputs inputs = {0};
  vlm_arena_init(&inputs.arena, NULL, 16 * 1024);
  vlm_status status = vlm_json_parse(messages_json, messages_length, NULL, NULL, "messages", &inputs.messages);
  inputs.have_messages = status == VLM_OK;
  if (status == VLM_OK)
    status = parse_optional(options ? options->tools_json : NULL, "tools", VLM_JSON_ARRAY, &inputs.tools,
                            &inputs.have_tools);
  if (status == VLM_OK)
    status = parse_optional(options ? options->extra_variables_json : NULL, "extra template variables",
                            VLM_JSON_OBJECT, &inputs.extra, &inputs.have_extra);
  vlm_json_value variables;
  if (status == VLM_OK) status = build_variables(chat_template, &inputs, options, &variables);
  bool continuing = options && options->continue_final_message;
  vlm_json_value final_message = {0};
  if (status == VLM_OK && continuing)
    status = tag_final_message(chat_template, &inputs.arena, &variables, &final_message);
  if (status == VLM_OK) {
    jinja_render_options render_options;
    jinja_render_options_init(&render_options);
    if (options && options->fixed_time > 0) render_options.fixed_time = options->fixed_time;
    if (options && options->max_output_bytes) render_options.max_output_bytes = options->max_output_bytes;
    bool prompt_limit_reached = false;
    if (options && options->max_prompt_bytes) {
      render_options.max_result_bytes = options->max_prompt_bytes;
      render_options.result_limit_reached = &prompt_limit_reached;
    }
    size_t length = 0;
    status = jinja_template_render(chat_template->parsed, &variables, &render_options, out_prompt, &length);
    if (status && prompt_limit_reached) {
      vlm_status_free(status);
      status = VLM_ERROR(OUT_OF_RANGE, "the rendered prompt exceeds %zu bytes", options->max_prompt_bytes);
    }
    if (options && options->prompt_limit_reached) *options->prompt_limit_reached = prompt_limit_reached;
    if (status == VLM_OK && continuing) {
      status = cut_at_tag(&final_message, *out_prompt, &length);
      if (status) {
        free(*out_prompt);
        *out_prompt = NULL;
      }
    }
    if (status == VLM_OK && out_length) *out_length = length;
    status = as_request_error(status);
  }
  render_inputs_release(&inputs);
  return status;
}
