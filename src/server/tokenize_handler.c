/* POST /tokenize and POST /detokenize, in vLLM's shapes:
 *
 *   /tokenize   {"prompt": S, "add_special_tokens": true}  or
 *               {"messages": [...], "add_generation_prompt", "continue_final_message",
 *                "chat_template_kwargs", "add_special_tokens": false}
 *               -> {"count", "max_model_len", "tokens": [...], "token_strs": null}
 *   /detokenize {"tokens": [...]} -> {"prompt": S}
 *
 * The ids are exactly those /v1/completions and /v1/chat/completions feed
 * the model (vlm_engine_tokenize runs the submit path's prompt code), and
 * messages are validated and converted by the same parser as a chat
 * request. What we cannot do is refused by name: images or audio in the
 * messages, add_special_tokens other than each form's default (the
 * completions prompt gets the tokenizer's special tokens, the chat prompt
 * gets what the family's flow adds), return_token_strs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/json.h"
#include "server/openai_request_internal.h"
#include "server/responses.h"
#include "server/server_internal.h"

#define DETOKENIZE_MAX_IDS (1 << 20)

static enum MHD_Result respond_error(vlm_server *server, struct MHD_Connection *connection, http_request *http,
                                     openai_error *error) {
  enum MHD_Result result = server_respond_error(server, connection, http, error);
  openai_error_release(error);
  return result;
}

static bool check_model(const vlm_server *server, const vlm_json_value *body, openai_error *error) {
  const vlm_json_value *model = vlm_json_object_get(body, "model");
  if (openai_is_absent(model)) return true;
  const char *name = NULL;
  if (!openai_read_plain_string(model, "model", error, &name)) return false;
  if (strcmp(name, server->model_id) == 0) return true;
  openai_error_set(error, 404, "invalid_request_error", "model", "model_not_found",
                   "The model '%s' does not exist; this server serves '%s'.", name, server->model_id);
  return false;
}

/* A boolean field that may only take its default here. */
static bool check_default_flag(const vlm_json_value *body, const char *name, bool expected, const char *why,
                               openai_error *error) {
  const vlm_json_value *value = vlm_json_object_get(body, name);
  if (openai_is_absent(value)) return true;
  if (value->type != VLM_JSON_BOOL) return openai_fail_type(error, name, "a boolean", value);
  if (value->as.boolean == expected) return true;
  return openai_fail_unsupported(error, name, why);
}

/* The body without this endpoint's own fields, for the chat request parser. */
static char *chat_fields_only(const vlm_json_value *body) {
  vlm_string_builder builder = {0};
  vlm_sb_append_literal(&builder, "{");
  bool first = true;
  for (size_t i = 0; i < body->as.object.count; i++) {
    const vlm_json_member *member = &body->as.object.members[i];
    if (openai_key_is(member, "add_special_tokens") || openai_key_is(member, "return_token_strs")) continue;
    if (!first) vlm_sb_append_literal(&builder, ",");
    first = false;
    vlm_sb_append_json_string(&builder, member->key, member->key_length);
    vlm_sb_append_literal(&builder, ":");
    vlm_sb_append_json_value(&builder, &member->value);
  }
  vlm_sb_append_literal(&builder, "}");
  return vlm_sb_finish(&builder);
}

/* The chat fields /tokenize takes (vLLM's TokenizeChatRequest, less the
 * ones we do not have); any other is refused as in a chat request. */
static bool check_chat_keys(const vlm_json_value *body, openai_error *error) {
  static const char *const allowed[] = {"model", "messages", "add_generation_prompt", "continue_final_message",
                                        "chat_template_kwargs", "add_special_tokens", "return_token_strs"};
  for (size_t i = 0; i < body->as.object.count; i++) {
    const vlm_json_member *member = &body->as.object.members[i];
    bool known = false;
    for (size_t k = 0; k < sizeof(allowed) / sizeof(allowed[0]) && !known; k++)
      known = openai_key_is(member, allowed[k]);
    if (known) continue;
    openai_error_set(error, 400, "invalid_request_error", member->key, NULL,
                     "Unrecognized request argument supplied: %.100s", member->key);
    return false;
  }
  return true;
}

static void status_to_error(vlm_status status, const char *param, openai_error *error) {
  vlm_status_code code = vlm_status_code_of(status);
  const char *message = vlm_status_message(status);
  if (code == VLM_STATUS_OUT_OF_RANGE)
    openai_error_set(error, 400, "invalid_request_error", param, "context_length_exceeded", "%s", message);
  else if (code == VLM_STATUS_INVALID_ARGUMENT || code == VLM_STATUS_UNIMPLEMENTED ||
           code == VLM_STATUS_FAILED_PRECONDITION || code == VLM_STATUS_NOT_FOUND)
    openai_error_set(error, 400, "invalid_request_error", param, NULL, "%s", message);
  else
    openai_error_set(error, 500, "server_error", NULL, NULL, "%s", message);
  vlm_status_free(status);
}

/* Fills *options from the body (chat or prompt); *request holds what the
 * options point into. */
static bool parse_tokenize(vlm_server *server, const vlm_json_value *body, openai_request *request,
                           vlm_engine_request_options *options, openai_error *error) {
  bool chat = vlm_json_object_get(body, "messages") != NULL;
  if (!check_default_flag(body, "return_token_strs", false, "is not supported by this server", error) ||
      !check_default_flag(body, "add_special_tokens", !chat,
                          chat ? "must be false for messages: the prompt gets the special tokens the model's "
                                 "chat flow adds, as the chat endpoint feeds it"
                               : "must be true for a prompt: the prompt gets the tokenizer's special tokens, as "
                                 "/v1/completions feeds it",
                          error))
    return false;
  if (chat) {
    if (!server->info.has_chat_template) {
      openai_error_set(error, 400, "invalid_request_error", "messages", NULL,
                       "The model '%s' has no chat template; send a prompt instead.", server->model_id);
      return false;
    }
    if (!check_chat_keys(body, error)) return false;
    char *fields = chat_fields_only(body);
    if (!fields) return openai_fail_out_of_memory(error);
    openai_parse_options parse = {.content_format = server->content_format};
    bool parsed = openai_request_parse(OPENAI_CHAT_COMPLETIONS, fields, strlen(fields), &parse, request, error);
    free(fields);
    if (!parsed) return false;
    if (request->media_count) {
      openai_error_set(error, 400, "invalid_request_error", request->media[0].param, "unsupported_content",
                       "%s: /tokenize does not take image or audio parts (their token count depends on "
                       "the decoded media).",
                       request->media[0].param);
      return false;
    }
    options->messages_json = request->messages_json;
    options->chat_template_kwargs_json = request->chat_template_kwargs_json;
    options->no_generation_prompt = request->no_generation_prompt;
    options->continue_final_message = request->continue_final_message;
    return true;
  }
  for (size_t i = 0; i < body->as.object.count; i++) {
    const vlm_json_member *member = &body->as.object.members[i];
    if (openai_key_is(member, "model") || openai_key_is(member, "prompt") ||
        openai_key_is(member, "add_special_tokens") || openai_key_is(member, "return_token_strs"))
      continue;
    openai_error_set(error, 400, "invalid_request_error", member->key, NULL,
                     "Unrecognized request argument supplied: %.100s", member->key);
    return false;
  }
  if (!openai_copy_plain_string(openai_or_null(vlm_json_object_get(body, "prompt")), "prompt", error,
                                &request->prompt))
    return false;
  options->raw_prompt = request->prompt;
  return true;
}

static char *tokenize_response(const int32_t *ids, int64_t count, int64_t capacity) {
  vlm_string_builder builder = {0};
  vlm_sb_appendf(&builder, "{\"count\":%lld,\"max_model_len\":%lld,\"tokens\":[", (long long)count,
                 (long long)capacity);
  for (int64_t i = 0; i < count; i++) vlm_sb_appendf(&builder, i ? ",%d" : "%d", ids[i]);
  vlm_sb_append_literal(&builder, "],\"token_strs\":null}");
  return vlm_sb_finish(&builder);
}

static enum MHD_Result handle_tokenize(vlm_server *server, struct MHD_Connection *connection, http_request *http,
                                       const vlm_json_value *body) {
  openai_error error = {0};
  openai_request request;
  memset(&request, 0, sizeof(request));
  vlm_engine_request_options options = {.sampling = vlm_engine_default_sampling(server->engine)};
  if (!parse_tokenize(server, body, &request, &options, &error)) {
    openai_request_release(&request);
    return respond_error(server, connection, http, &error);
  }
  int32_t *ids = NULL;
  int64_t count = 0;
  vlm_status status = vlm_engine_tokenize(server->engine, &options, &ids, &count);
  const char *param = options.messages_json ? "messages" : "prompt";
  openai_request_release(&request);
  if (status) {
    status_to_error(status, param, &error);
    return respond_error(server, connection, http, &error);
  }
  http->prompt_tokens = count;
  char *response = tokenize_response(ids, count, server->info.capacity);
  free(ids);
  return server_respond(server, connection, http, 200, "application/json", response);
}

static enum MHD_Result handle_detokenize(vlm_server *server, struct MHD_Connection *connection, http_request *http,
                                         const vlm_json_value *body) {
  openai_error error = {0};
  for (size_t i = 0; i < body->as.object.count; i++) {
    const vlm_json_member *member = &body->as.object.members[i];
    if (openai_key_is(member, "model") || openai_key_is(member, "tokens")) continue;
    openai_error_set(&error, 400, "invalid_request_error", member->key, NULL,
                     "Unrecognized request argument supplied: %.100s", member->key);
    return respond_error(server, connection, http, &error);
  }
  const vlm_json_value *tokens = openai_or_null(vlm_json_object_get(body, "tokens"));
  if (tokens->type != VLM_JSON_ARRAY) {
    openai_fail_type(&error, "tokens", "an array of integers", tokens);
    return respond_error(server, connection, http, &error);
  }
  size_t count = tokens->as.array.count;
  if (count > DETOKENIZE_MAX_IDS) {
    openai_fail_invalid_value(&error, "tokens", "at most %d ids are accepted, got %zu", DETOKENIZE_MAX_IDS, count);
    return respond_error(server, connection, http, &error);
  }
  int32_t *ids = malloc((count ? count : 1) * sizeof(int32_t));
  if (!ids) return server_respond(server, connection, http, 500, "application/json", NULL);
  for (size_t i = 0; i < count; i++) {
    int64_t id = 0;
    char param[OPENAI_PARAM_CAPACITY];
    openai_build_param(param, "tokens[%zu]", i);
    if (!vlm_json_get_int(&tokens->as.array.items[i], &id) || id < 0 || id >= server->info.vocab_size) {
      if (!vlm_json_get_int(&tokens->as.array.items[i], &id))
        openai_fail_type(&error, param, "an integer", &tokens->as.array.items[i]);
      else
        openai_fail_invalid_value(&error, param, "token id %lld is outside the vocabulary of %lld tokens",
                                  (long long)id, (long long)server->info.vocab_size);
      free(ids);
      return respond_error(server, connection, http, &error);
    }
    ids[i] = (int32_t)id;
  }
  char *text = NULL;
  size_t length = 0;
  vlm_status status = vlm_engine_detokenize(server->engine, ids, count, &text, &length);
  free(ids);
  if (status) {
    status_to_error(status, "tokens", &error);
    return respond_error(server, connection, http, &error);
  }
  vlm_string_builder builder = {0};
  vlm_sb_append_literal(&builder, "{\"prompt\":");
  response_append_text(&builder, text, length);
  vlm_sb_append_literal(&builder, "}");
  free(text);
  return server_respond(server, connection, http, 200, "application/json", vlm_sb_finish(&builder));
}

enum MHD_Result tokenize_handle(vlm_server *server, struct MHD_Connection *connection, http_request *http,
                                bool detokenize) {
  openai_error error = {0};
  vlm_json_document document;
  vlm_json_limits limits = {.max_depth = 32, .max_input_bytes = SIZE_MAX};
  vlm_status status = vlm_json_parse(http->body ? http->body : "", http->length, &limits, NULL, "request body",
                                     &document);
  if (status) {
    openai_error_set(&error, 400, "invalid_request_error", NULL, NULL, "The request body is not valid JSON: %s",
                     vlm_status_message(status));
    vlm_status_free(status);
    return respond_error(server, connection, http, &error);
  }
  enum MHD_Result result;
  if (document.root->type != VLM_JSON_OBJECT) {
    openai_error_set(&error, 400, "invalid_request_error", NULL, NULL, "The request body must be a JSON object.");
    result = respond_error(server, connection, http, &error);
  } else if (!check_model(server, document.root, &error)) {
    result = respond_error(server, connection, http, &error);
  } else {
    result = detokenize ? handle_detokenize(server, connection, http, document.root)
                        : handle_tokenize(server, connection, http, document.root);
  }
  vlm_json_document_release(&document);
  return result;
}
