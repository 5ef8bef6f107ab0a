/* The request fields vLLM and llama-server clients add to OpenAI's, and
 * OpenAI's logit_bias and echo, parsed into openai_request (see
 * openai_request.h). Each does what vLLM's ChatCompletionRequest /
 * CompletionRequest makes of it:
 *
 *   chat_template_kwargs   (chat) an object of extra chat-template
 *                          variables, e.g. {"enable_thinking": false}
 *   add_generation_prompt  (chat) default true
 *   continue_final_message (chat) default false; true needs
 *                          add_generation_prompt false (vLLM's 400 otherwise)
 *   echo                   chat: the reply starts with the final message's
 *                          content when that message is the assistant's;
 *                          completions: the text starts with the prompt
 *   min_tokens             0..max_tokens: no stop token or stop string before
 *   ignore_eos             the model's EOS ids do not stop
 *   stop_token_ids         up to 64 ids that stop (not in the text)
 *   skip_special_tokens    default true
 *   spaces_between_special_tokens  default true; vLLM applies it only to slow
 *                          (Python) tokenizers: with a tokenizer.json it has no
 *                          effect there either, so it is accepted as a boolean
 *   logit_bias             {"token id": -100..100}, at most 1024 entries
 *
 * Token ids are checked against the model's vocabulary by the handler
 * (chat_handler.c), which knows it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server/openai_request.h"
#include "server/openai_request_internal.h"

static bool read_flag(const vlm_json_value *body, const char *name, bool *out, bool *given, openai_error *error) {
  const vlm_json_value *value = vlm_json_object_get(body, name);
  if (given) *given = false;
  if (openai_is_absent(value)) return true;
  if (value->type != VLM_JSON_BOOL) return openai_fail_type(error, name, "a boolean", value);
  *out = value->as.boolean;
  if (given) *given = true;
  return true;
}

static bool parse_template_kwargs(const vlm_json_value *body, openai_request *request, openai_error *error) {
  const vlm_json_value *kwargs = vlm_json_object_get(body, "chat_template_kwargs");
  if (openai_is_absent(kwargs)) return true;
  if (kwargs->type != VLM_JSON_OBJECT) return openai_fail_type(error, "chat_template_kwargs", "an object", kwargs);
  /* The renderer sets these itself (Transformers raises on them too). */
  static const char *const reserved[] = {"messages", "tools", "documents", "add_generation_prompt"};
  for (size_t i = 0; i < kwargs->as.object.count; i++) {
    const vlm_json_member *member = &kwargs->as.object.members[i];
    char param[OPENAI_PARAM_CAPACITY];
    openai_build_param(param, "chat_template_kwargs.%.100s", member->key);
    if (strlen(member->key) != member->key_length)
      return openai_fail_invalid_value(error, "chat_template_kwargs", "keys must not contain the NUL character");
    for (size_t r = 0; r < sizeof(reserved) / sizeof(reserved[0]); r++)
      if (openai_key_is(member, reserved[r]))
        return openai_fail_invalid_value(error, param, "is set by the server (use the request's own field)");
  }
  vlm_string_builder builder = {0};
  vlm_sb_append_json_value(&builder, kwargs);
  request->chat_template_kwargs_json = vlm_sb_finish(&builder);
  return request->chat_template_kwargs_json ? true : openai_fail_out_of_memory(error);
}

/* The final message's text when it is the assistant's (vLLM's echo for
 * chat: a string, or its text parts joined with newlines). */
static bool chat_echo_text(const vlm_json_value *body, openai_request *request, openai_error *error) {
  const vlm_json_value *messages = vlm_json_object_get(body, "messages");
  if (!messages || messages->type != VLM_JSON_ARRAY || messages->as.array.count == 0) return true;
  const vlm_json_value *last = &messages->as.array.items[messages->as.array.count - 1];
  if (!vlm_json_string_equals(vlm_json_object_get(last, "role"), "assistant")) return true;
  const vlm_json_value *content = vlm_json_object_get(last, "content");
  vlm_string_builder builder = {0};
  if (content && content->type == VLM_JSON_STRING) {
    vlm_sb_append(&builder, content->as.string.chars, content->as.string.length);
  } else if (content && content->type == VLM_JSON_ARRAY) {
    for (size_t i = 0; i < content->as.array.count; i++) {
      const vlm_json_value *text = vlm_json_object_get(&content->as.array.items[i], "text");
      if (!text || text->type != VLM_JSON_STRING) continue;
      if (builder.length) vlm_sb_append_literal(&builder, "\n");
      vlm_sb_append(&builder, text->as.string.chars, text->as.string.length);
    }
  }
  if (builder.failed) {
    vlm_sb_release(&builder);
    return openai_fail_out_of_memory(error);
  }
  request->echo_text = builder.length ? vlm_sb_finish(&builder) : openai_copy_string("");
  vlm_sb_release(&builder);
  return request->echo_text ? true : openai_fail_out_of_memory(error);
}

static bool parse_echo(const vlm_json_value *body, openai_request *request, openai_error *error) {
  bool echo = false;
  if (!read_flag(body, "echo", &echo, NULL, error)) return false;
  if (!echo) return true;
  if (request->endpoint == OPENAI_CHAT_COMPLETIONS) return chat_echo_text(body, request, error);
  /* vLLM echoes the prompt's logprobs too, which needs the prompt's logits:
   * not computed here, so refused rather than answered without them. */
  if (request->logprobs)
    return openai_fail_unsupported(error, "echo", "with logprobs (prompt logprobs) is not supported by this server");
  if (request->more_prompt_count)
    return openai_fail_unsupported(error, "echo", "with a list of prompts is not supported by this server");
  request->echo_prompt_ids = request->prompt_ids != NULL; /* decoded by the handler, which has the tokenizer */
  request->echo_text = openai_copy_string(request->prompt ? request->prompt : "");
  return request->echo_text ? true : openai_fail_out_of_memory(error);
}

static bool parse_template_controls(const vlm_json_value *body, openai_request *request, openai_error *error) {
  bool generation = true, continuing = false;
  if (!read_flag(body, "add_generation_prompt", &generation, NULL, error) ||
      !read_flag(body, "continue_final_message", &continuing, NULL, error))
    return false;
  if (generation && continuing)
    return openai_fail_invalid_value(error, "continue_final_message",
                                     "cannot be true together with add_generation_prompt (set it to false)");
  request->no_generation_prompt = !generation;
  request->continue_final_message = continuing;
  return true;
}

static bool parse_min_tokens(const vlm_json_value *body, openai_request *request, openai_error *error) {
  const vlm_json_value *value = vlm_json_object_get(body, "min_tokens");
  if (openai_is_absent(value)) return true;
  int64_t tokens = 0;
  if (!vlm_json_get_int(value, &tokens)) return openai_fail_type(error, "min_tokens", "an integer", value);
  if (tokens < 0 || tokens > OPENAI_MAX_TOKENS_LIMIT)
    return openai_fail_invalid_value(error, "min_tokens", "must be between 0 and %d, got %lld",
                                     OPENAI_MAX_TOKENS_LIMIT, (long long)tokens);
  /* vLLM: min_tokens must not exceed max_tokens (checked once both are read). */
  if (request->max_tokens && tokens > request->max_tokens)
    return openai_fail_invalid_value(error, "min_tokens", "must be less than or equal to max_tokens=%lld, got %lld",
                                     (long long)request->max_tokens, (long long)tokens);
  request->min_tokens = tokens;
  return true;
}

static bool parse_stop_token_ids(const vlm_json_value *body, openai_request *request, openai_error *error) {
  const vlm_json_value *ids = vlm_json_object_get(body, "stop_token_ids");
  if (openai_is_absent(ids)) return true;
  if (ids->type != VLM_JSON_ARRAY) return openai_fail_type(error, "stop_token_ids", "an array of integers", ids);
  if (ids->as.array.count > OPENAI_MAX_STOP_TOKEN_IDS)
    return openai_fail_invalid_value(error, "stop_token_ids", "at most %d ids are allowed, got %zu",
                                     OPENAI_MAX_STOP_TOKEN_IDS, ids->as.array.count);
  if (!ids->as.array.count) return true;
  request->stop_token_ids = calloc(ids->as.array.count, sizeof(int32_t));
  if (!request->stop_token_ids) return openai_fail_out_of_memory(error);
  for (size_t i = 0; i < ids->as.array.count; i++) {
    char param[OPENAI_PARAM_CAPACITY];
    openai_build_param(param, "stop_token_ids[%zu]", i);
    int64_t id = 0;
    if (!vlm_json_get_int(&ids->as.array.items[i], &id))
      return openai_fail_type(error, param, "an integer", &ids->as.array.items[i]);
    if (id < 0 || id > INT32_MAX)
      return openai_fail_invalid_value(error, param, "must be a token id (0 or more), got %lld", (long long)id);
    request->stop_token_ids[request->stop_token_id_count++] = (int32_t)id;
  }
  return true;
}

/* OpenAI: keys are token ids as strings, values -100..100. */
static bool parse_logit_bias(const vlm_json_value *body, openai_request *request, openai_error *error) {
  const vlm_json_value *bias = vlm_json_object_get(body, "logit_bias");
  if (openai_is_absent(bias)) return true;
  if (bias->type != VLM_JSON_OBJECT) return openai_fail_type(error, "logit_bias", "an object", bias);
  size_t count = bias->as.object.count;
  if (count > OPENAI_MAX_LOGIT_BIAS)
    return openai_fail_invalid_value(error, "logit_bias", "at most %d entries are allowed, got %zu",
                                     OPENAI_MAX_LOGIT_BIAS, count);
  if (!count) return true;
  request->logit_bias = calloc(count, sizeof(*request->logit_bias));
  if (!request->logit_bias) return openai_fail_out_of_memory(error);
  for (size_t i = 0; i < count; i++) {
    const vlm_json_member *member = &bias->as.object.members[i];
    char param[OPENAI_PARAM_CAPACITY];
    openai_build_param(param, "logit_bias.%.100s", member->key);
    /* Decimal digits only, as OpenAI's token-id keys are ("+1", " 1",
     * "1e3" are not ids). */
    bool digits = member->key_length > 0 && member->key_length <= 10;
    int64_t id = 0;
    for (size_t c = 0; digits && c < member->key_length; c++) {
      digits = member->key[c] >= '0' && member->key[c] <= '9';
      id = id * 10 + (member->key[c] - '0');
    }
    if (!digits || id > INT32_MAX)
      return openai_fail_invalid_value(error, param, "keys must be token ids (decimal integers as strings)");
    const vlm_json_value *value = &member->value;
    if (value->type != VLM_JSON_NUMBER) return openai_fail_type(error, param, "a number", value);
    double number = value->as.number.value;
    if (!(number >= -100.0 && number <= 100.0))
      return openai_fail_invalid_value(error, param, "must be between -100 and 100, got %g", number);
    for (size_t j = 0; j < i; j++)
      if (request->logit_bias[j].token == id)
        return openai_fail_invalid_value(error, param, "names token id %lld a second time", (long long)id);
    request->logit_bias[i] = (vlm_logit_bias){.token = (int32_t)id, .bias = (float)number};
    request->logit_bias_count++;
  }
  return true;
}

static bool parse_special_tokens(const vlm_json_value *body, openai_request *request, openai_error *error) {
  bool skip = true, spaces = true;
  if (!read_flag(body, "skip_special_tokens", &skip, NULL, error) ||
      !read_flag(body, "spaces_between_special_tokens", &spaces, NULL, error))
    return false;
  request->keep_special_tokens = !skip;
  return true;
}

bool openai_parse_extensions(const vlm_json_value *body, openai_request *request, openai_error *error) {
  bool chat = request->endpoint == OPENAI_CHAT_COMPLETIONS;
  if (chat && !(parse_template_kwargs(body, request, error) && parse_template_controls(body, request, error)))
    return false;
  return parse_echo(body, request, error) && parse_min_tokens(body, request, error) &&
         read_flag(body, "ignore_eos", &request->ignore_eos, NULL, error) &&
         parse_stop_token_ids(body, request, error) && parse_logit_bias(body, request, error) &&
         parse_special_tokens(body, request, error);
}

void openai_extensions_release(openai_request *request) {
  free(request->chat_template_kwargs_json);
  free(request->echo_text);
  free(request->stop_token_ids);
  free(request->logit_bias);
  for (size_t i = 0; i < request->ignored_field_count; i++) free(request->ignored_fields[i]);
  free(request->ignored_fields);
}
