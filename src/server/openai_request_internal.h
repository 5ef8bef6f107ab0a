/* What openai_request.c (the body, its fields, errors) and
 * openai_messages.c (chat messages) share. Every failing helper returns
 * false after filling *error, so callers write `if (!step(...)) return false;`. */
#ifndef VLM_SERVER_OPENAI_REQUEST_INTERNAL_H
#define VLM_SERVER_OPENAI_REQUEST_INTERNAL_H

#include "io/json.h"
#include "server/openai_request.h"

/* Longest field path we build ("messages[123].content[45].image_url.url"). */
#define OPENAI_PARAM_CAPACITY 160

bool openai_fail_invalid_value(openai_error *error, const char *param, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* OpenAI's own wording for a type mismatch. */
bool openai_fail_type(openai_error *error, const char *param, const char *expected,
                      const vlm_json_value *value);
bool openai_fail_unsupported(openai_error *error, const char *param, const char *why);
bool openai_fail_out_of_memory(openai_error *error);

/* Builds a field path such as "messages[1].content[0].image_url.url"
 * into an OPENAI_PARAM_CAPACITY buffer (cut short, never overflowed). */
void openai_build_param(char *out, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* A missing field or null reads as "not given". */
bool openai_is_absent(const vlm_json_value *value);
/* `value`, or a null value for a missing one (so type errors can name it). */
const vlm_json_value *openai_or_null(const vlm_json_value *value);
bool openai_key_is(const vlm_json_member *member, const char *name);
bool openai_read_plain_string(const vlm_json_value *value, const char *param, openai_error *error,
                              const char **out_text);
bool openai_copy_plain_string(const vlm_json_value *value, const char *param, openai_error *error,
                              char **out_copy);
char *openai_copy_string(const char *text);

void openai_media_release(openai_media *media);

/* Chat messages -> request->messages_json (Transformers' chat format) and
 * request->media. */
bool openai_parse_messages(const vlm_json_value *body, openai_content_format content_format,
                           openai_request *request, openai_error *error);

/* response_format, tools and tool_choice (openai_structured.c), after the
 * messages; the assistant tool_calls of one history message. */
bool openai_parse_structured(const vlm_json_value *body, const openai_parse_options *options,
                             openai_request *request, openai_error *error);
bool openai_append_tool_calls(vlm_string_builder *json, const vlm_json_value *message, const char *param,
                              openai_error *error);
/* vLLM's extension fields, logit_bias and echo (openai_extensions.c);
 * after the core fields (echo reads prompt and logprobs, min_tokens
 * max_tokens). */
bool openai_parse_extensions(const vlm_json_value *body, openai_request *request, openai_error *error);
void openai_extensions_release(openai_request *request);

#endif
