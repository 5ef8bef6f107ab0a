/* libFuzzer target: the OpenAI request parser must accept or refuse any
 * body without crashing or leaking. The first byte picks the endpoint
 * (bit 0; 0: chat completions, 1: completions) and the content format
 * (bits 1-2: as given, string, parts); the rest is the body.
 * Whatever it accepts must be self-consistent (messages_json is valid
 * JSON, every media item names its field), and every refusal must be a
 * well-formed OpenAI error. Accepted chat messages are then rendered as
 * the engine renders them for a template that prints content as a string
 * (Phi-4-multimodal's, with media placeholders: vLLM's string content
 * format, text/chat_content.c): a prompt or a request error, never
 * another failure. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/json.h"
#include "server/openai_request.h"
#include "vlm/chat_template.h"

/* Phi-4-multimodal's template (tests/models/phi4_multimodal). */
static const char string_template[] =
    "{% for message in messages %}{{ '<|' + message['role'] + '|>' + message['content'] + '<|end|>' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}";

static void render_as_string(const char *messages_json) {
  static vlm_chat_template *chat_template;
  if (!chat_template && vlm_chat_template_create(string_template, strlen(string_template), NULL, NULL, "fuzz",
                                                 &chat_template))
    abort();
  vlm_chat_template_options options = {.add_generation_prompt = true, .max_output_bytes = 1 << 20,
                                       .image_placeholder = "<|image|>", .audio_placeholder = "<|audio|>"};
  char *prompt = NULL;
  size_t length = 0;
  vlm_status status =
      vlm_chat_template_render(chat_template, messages_json, strlen(messages_json), &options, &prompt, &length);
  if (status) {
    /* a list the template cannot print, or too many placeholders */
    if (vlm_status_code_of(status) != VLM_STATUS_INVALID_ARGUMENT &&
        vlm_status_code_of(status) != VLM_STATUS_RESOURCE_EXHAUSTED)
      abort();
    vlm_status_free(status);
  } else if (!prompt || strlen(prompt) > length) {
    abort();
  }
  free(prompt);
}

static void require_valid_json(const char *text) {
  if (!text) abort();
  vlm_json_document document;
  vlm_status status = vlm_json_parse(text, strlen(text), NULL, NULL, "fuzz-output", &document);
  if (status) abort(); /* our own output must parse */
  vlm_json_document_release(&document);
}

static void check_accepted(const openai_request *request) {
  if (request->endpoint == OPENAI_CHAT_COMPLETIONS) {
    require_valid_json(request->messages_json);
    if (request->prompt) abort();
  } else if (!request->prompt || request->messages_json || request->media_count) {
    abort();
  }
  for (size_t i = 0; i < request->media_count; i++) {
    const openai_media *media = &request->media[i];
    if (!media->param) abort();
    if (media->kind == OPENAI_MEDIA_IMAGE && (!media->url || !media->url[0])) abort();
    if (media->kind == OPENAI_MEDIA_AUDIO && (!media->audio_data || !media->audio_format)) abort();
  }
  if (request->stop_count > OPENAI_MAX_STOP_STRINGS || (request->stop_count && !request->stop)) abort();
  for (size_t i = 0; i < request->stop_count; i++)
    if (!request->stop[i][0] || strlen(request->stop[i]) > OPENAI_MAX_STOP_BYTES) abort();
  if (request->max_tokens < 0 || request->max_tokens > OPENAI_MAX_TOKENS_LIMIT) abort();
  if (request->top_logprobs < 0 || request->top_logprobs > 20) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  openai_endpoint endpoint = (data[0] & 1) ? OPENAI_COMPLETIONS : OPENAI_CHAT_COMPLETIONS;
  static const openai_content_format formats[] = {OPENAI_CONTENT_AS_GIVEN, OPENAI_CONTENT_STRING,
                                                  OPENAI_CONTENT_PARTS, OPENAI_CONTENT_AS_GIVEN};
  openai_parse_options options = {.content_format = formats[(data[0] >> 1) & 3]};
  openai_request request;
  openai_error error = {0};
  if (openai_request_parse(endpoint, (const char *)data + 1, size - 1, &options, &request, &error)) {
    check_accepted(&request);
    if (request.messages_json && options.content_format == OPENAI_CONTENT_STRING)
      render_as_string(request.messages_json);
    openai_request_release(&request);
    return 0;
  }
  if (!error.message || !error.type || (error.http_status != 400 && error.http_status != 500))
    abort();
  char *json = openai_error_to_json(&error);
  require_valid_json(json);
  free(json);
  openai_error_release(&error);
  return 0;
}
