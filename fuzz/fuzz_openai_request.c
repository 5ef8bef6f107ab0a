/* libFuzzer target: the OpenAI request parser must accept or refuse any
 * body without crashing or leaking. The first byte picks the endpoint
 * (even: chat completions, odd: completions); the rest is the body.
 * Whatever it accepts must be self-consistent (messages_json is valid
 * JSON, every media item names its field), and every refusal must be a
 * well-formed OpenAI error. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/json.h"
#include "server/openai_request.h"

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
  if (request->stop_count > 4 || (request->stop_count && !request->stop)) abort();
  if (request->max_tokens < 0 || request->top_logprobs < 0 || request->top_logprobs > 20) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  openai_endpoint endpoint = (data[0] & 1) ? OPENAI_COMPLETIONS : OPENAI_CHAT_COMPLETIONS;
  openai_request request;
  openai_error error = {0};
  if (openai_request_parse(endpoint, (const char *)data + 1, size - 1, &request, &error)) {
    check_accepted(&request);
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
