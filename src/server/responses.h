/* The JSON the completion endpoints answer with, in OpenAI's shapes:
 * chat.completion / chat.completion.chunk for /v1/chat/completions,
 * text_completion for /v1/completions, as whole objects or as server-sent
 * events ("data: {...}\n\n", ending with "data: [DONE]\n\n"). */
#ifndef VLM_SERVER_RESPONSES_H
#define VLM_SERVER_RESPONSES_H

#include <stdbool.h>
#include <stdint.h>

#include "io/json.h"
#include "server/openai_request.h"
#include "server/reasoning.h"
#include "server/request_events.h"
#include "server/tool_calls.h"

/* What every object and chunk of one answer repeats. */
typedef struct response_header {
  openai_endpoint endpoint;
  char id[48];                  /* "chatcmpl-..." or "cmpl-...", random */
  int64_t created;              /* unix seconds */
  const char *model;            /* borrowed */
  /* echo: the text the answer starts with (borrowed; NULL: none). The
   * whole answer's text begins with it; a stream sends it as the first
   * content chunk (response_append_echo_chunk), as vLLM does. */
  const char *echo_text;
  /* Chat: the reasoning parser (reasoning.h) and the end of the prompt it
   * starts from (borrowed); REASONING_OFF: the text is all content. */
  reasoning_kind reasoning;
  const char *prompt_tail;
  /* The "index" of the choice the streamed chunks carry (prompt * n +
   * choice; 0 for a single answer). */
  int32_t choice_index;
  /* parallel_tool_calls false: only the first parsed call is answered */
  bool single_tool_call;
} response_header;

void response_header_init(response_header *header, openai_endpoint endpoint, const char *model);

/* The whole answer of a finished request (events->finished, status OK);
 * NULL if out of memory. */
char *response_completion(const response_header *header, const request_events *events,
                          bool with_logprobs);

/* The same with the output parsed for tool calls in `tools`' format (after
 * the reasoning split, with a reasoning parser): content is the text
 * outside the calls, null when empty and there are calls or reasoning;
 * finish_reason "tool_calls" when there are calls. NULL tools: as
 * response_completion. */
char *response_completion_tools(const response_header *header, const request_events *events, bool with_logprobs,
                                const tool_format *tools);
/* The whole answer of several choices (n > 1 or a prompt list), all
 * finished with status OK: events[i] is choice i (prompt i / n); usage
 * counts each prompt once and the completion tokens of every choice. NULL
 * if out of memory. */
char *response_completion_choices(const response_header *header, const request_events *const *events, size_t count,
                                  int32_t n, bool with_logprobs);
/* The usage of such an answer (as above). */
vlm_engine_usage response_sum_usage(const request_events *const *events, size_t count, int32_t n);

/* Streaming events, appended to `out`. */
void response_append_role_chunk(vlm_string_builder *out, const response_header *header);
void response_append_token_chunk(vlm_string_builder *out, const response_header *header,
                                 const event_token *token, bool with_logprobs);
/* A chat chunk with a delta of reasoning_content and/or content (either
 * may be empty: left out), and the token's logprobs. Nothing when both
 * are empty and there are no logprobs to send. */
void response_append_split_chunk(vlm_string_builder *out, const response_header *header, const event_token *token,
                                 const vlm_string_builder *reasoning, const vlm_string_builder *content,
                                 bool with_logprobs);
/* header->echo_text as a content chunk (nothing without one). */
void response_append_echo_chunk(vlm_string_builder *out, const response_header *header);
/* The last chunk with a choice: its finish_reason, and the request's
 * "timings" as llama-server reports them (see response_append_timings). */
void response_append_finish_chunk(vlm_string_builder *out, const response_header *header,
                                  const char *finish_reason, const request_events *events);
/* llama-server's prompt_progress chunk (return_progress): an empty
 * assistant delta and {"total", "cache", "processed", "time_ms"}. */
void response_append_progress_chunk(vlm_string_builder *out, const response_header *header,
                                    const vlm_engine_progress *progress);
/* ,"timings":{...}: llama-server's fields (prompt_n and prompt_ms: the
 * positions prefilled, not from the cache, and the encoders' and prefill's
 * time; predicted_n and predicted_ms: the completion tokens and the decode
 * steps' time; per token and per second of each; cache_n), and vlm's own
 * queue_ms, encode_ms and first_token_ms (submitted to first token). */
void response_append_timings(vlm_string_builder *out, const request_events *events);
void response_append_usage_chunk(vlm_string_builder *out, const response_header *header,
                                 const vlm_engine_usage *usage);
/* Each call as OpenAI streams it: a delta with its index, id, type and
 * name (arguments ""), then one with its arguments. */
void response_append_tool_call_chunks(vlm_string_builder *out, const response_header *header,
                                      const tool_calls_result *tools);
void response_append_error_event(vlm_string_builder *out, const openai_error *error);
void response_append_done(vlm_string_builder *out);

/* A JSON string of `length` bytes of model output: invalid UTF-8 (a token
 * may end inside a character) becomes U+FFFD so the JSON stays valid. */
void response_append_text(vlm_string_builder *out, const char *text, size_t length);

#endif
