/* JSON builders for the completion endpoints' answers and for /v1/models
 * (see responses.h). */
#include "server/responses.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "server/server_internal.h"

void response_header_init(response_header *header, openai_endpoint endpoint, const char *model) {
  memset(header, 0, sizeof(*header));
  header->endpoint = endpoint;
  header->created = (int64_t)time(NULL);
  header->model = model;
  /* Ids only need to be unique; 96 random bits are plenty. If getrandom
   * fails, the time and an address still make collisions unlikely. */
  uint32_t random[3] = {(uint32_t)header->created, (uint32_t)(uintptr_t)header, 0};
  if (getrandom(random, sizeof(random), 0) != (ssize_t)sizeof(random)) random[2] = (uint32_t)clock();
  snprintf(header->id, sizeof(header->id), "%s-%08x%08x%08x",
           endpoint == OPENAI_CHAT_COMPLETIONS ? "chatcmpl" : "cmpl", random[0], random[1], random[2]);
}

/* ------------------------------------------------------------------------ */
/* Strings and numbers                                                       */
/* ------------------------------------------------------------------------ */

/* Length of the well-formed UTF-8 sequence at `bytes`, or 0 (RFC 3629's
 * table: no overlongs, no surrogates, nothing past U+10FFFF). */
static size_t utf8_sequence_length(const unsigned char *bytes, size_t remaining) {
  unsigned char c = bytes[0];
  if (c < 0x80) return 1;
  size_t length;
  unsigned char low = 0x80, high = 0xbf; /* bounds of the second byte */
  if (c >= 0xc2 && c <= 0xdf) length = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    length = 3;
    if (c == 0xe0) low = 0xa0;
    if (c == 0xed) high = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    length = 4;
    if (c == 0xf0) low = 0x90;
    if (c == 0xf4) high = 0x8f;
  } else return 0;
  if (remaining < length || bytes[1] < low || bytes[1] > high) return 0;
  for (size_t i = 2; i < length; i++)
    if (bytes[i] < 0x80 || bytes[i] > 0xbf) return 0;
  return length;
}

void response_append_text(vlm_string_builder *out, const char *text, size_t length) {
  const unsigned char *bytes = (const unsigned char *)text;
  vlm_sb_append_literal(out, "\"");
  size_t run_start = 0, i = 0;
  while (i < length) {
    unsigned char c = bytes[i];
    size_t sequence = utf8_sequence_length(bytes + i, length - i);
    if (sequence > 1 || (sequence == 1 && c >= 0x20 && c != '"' && c != '\\')) {
      i += sequence;
      continue;
    }
    vlm_sb_append(out, text + run_start, i - run_start);
    if (sequence == 0) vlm_sb_append_literal(out, "\\ufffd");
    else if (c == '"') vlm_sb_append_literal(out, "\\\"");
    else if (c == '\\') vlm_sb_append_literal(out, "\\\\");
    else if (c == '\n') vlm_sb_append_literal(out, "\\n");
    else if (c == '\r') vlm_sb_append_literal(out, "\\r");
    else if (c == '\t') vlm_sb_append_literal(out, "\\t");
    else vlm_sb_appendf(out, "\\u%04x", c);
    i++;
    run_start = i;
  }
  vlm_sb_append(out, text + run_start, length - run_start);
  vlm_sb_append_literal(out, "\"");
}

static void append_string(vlm_string_builder *out, const char *text) {
  response_append_text(out, text, strlen(text));
}

/* JSON has no infinities; a masked-out alternative gets OpenAI's floor. */
static void append_logprob_value(vlm_string_builder *out, float logprob) {
  double value = isfinite(logprob) ? (double)logprob : -9999.0;
  vlm_sb_appendf(out, "%.9g", value);
}

/* ------------------------------------------------------------------------ */
/* Pieces                                                                    */
/* ------------------------------------------------------------------------ */

static void append_usage(vlm_string_builder *out, const vlm_engine_usage *usage) {
  long long prompt = (long long)usage->prompt_tokens;
  long long image = (long long)usage->prompt_image_tokens;
  long long audio = (long long)usage->prompt_audio_tokens;
  long long completion = (long long)usage->completion_tokens;
  long long cached = (long long)usage->prompt_cached_tokens; /* from the prefix cache */
  vlm_sb_appendf(out,
                 "{\"prompt_tokens\":%lld,\"completion_tokens\":%lld,\"total_tokens\":%lld,"
                 "\"prompt_tokens_details\":{\"cached_tokens\":%lld,\"audio_tokens\":%lld,"
                 "\"image_tokens\":%lld,\"text_tokens\":%lld}}",
                 prompt, completion, prompt + completion, cached, audio, image, prompt - image - audio);
}

static void append_object_start(vlm_string_builder *out, const response_header *header,
                                const char *object) {
  vlm_sb_appendf(out, "{\"id\":\"%s\",\"object\":\"%s\",\"created\":%lld,\"model\":", header->id,
                 object, (long long)header->created);
  append_string(out, header->model ? header->model : "");
  vlm_sb_append_literal(out, ",\"system_fingerprint\":\"vlm-" VLM_VERSION_STRING "\"");
}

static void append_byte_array(vlm_string_builder *out, const char *text, size_t length) {
  vlm_sb_append_literal(out, "[");
  for (size_t i = 0; i < length; i++) vlm_sb_appendf(out, "%s%u", i ? "," : "", (unsigned char)text[i]);
  vlm_sb_append_literal(out, "]");
}

/* One entry of chat logprobs' "content": token, logprob, bytes, top_logprobs. */
static void append_chat_logprob(vlm_string_builder *out, const event_token *token) {
  vlm_sb_append_literal(out, "{\"token\":");
  response_append_text(out, token->logprob.text, token->logprob.text_length);
  vlm_sb_append_literal(out, ",\"logprob\":");
  append_logprob_value(out, token->logprob.logprob);
  vlm_sb_append_literal(out, ",\"bytes\":");
  append_byte_array(out, token->logprob.text, token->logprob.text_length);
  vlm_sb_append_literal(out, ",\"top_logprobs\":[");
  for (int32_t i = 0; i < token->top_logprob_count; i++) {
    const event_logprob *top = &token->top_logprobs[i];
    if (i) vlm_sb_append_literal(out, ",");
    vlm_sb_append_literal(out, "{\"token\":");
    response_append_text(out, top->text, top->text_length);
    vlm_sb_append_literal(out, ",\"logprob\":");
    append_logprob_value(out, top->logprob);
    vlm_sb_append_literal(out, ",\"bytes\":");
    append_byte_array(out, top->text, top->text_length);
    vlm_sb_append_literal(out, "}");
  }
  vlm_sb_append_literal(out, "]}");
}

static void append_chat_logprobs(vlm_string_builder *out, const event_token *tokens, size_t count) {
  vlm_sb_append_literal(out, "{\"content\":[");
  bool first = true;
  for (size_t i = 0; i < count; i++) {
    if (!tokens[i].has_logprob) continue;
    if (!first) vlm_sb_append_literal(out, ",");
    first = false;
    append_chat_logprob(out, &tokens[i]);
  }
  vlm_sb_append_literal(out, "],\"refusal\":null}");
}

/* The legacy completions shape: parallel arrays, top alternatives as
 * {token: logprob} maps, and each token's offset in the completion. */
static void append_completion_logprobs(vlm_string_builder *out, const event_token *tokens,
                                       size_t count, size_t first_offset) {
  vlm_sb_append_literal(out, "{\"tokens\":[");
  for (size_t i = 0, n = 0; i < count; i++)
    if (tokens[i].has_logprob) {
      if (n++) vlm_sb_append_literal(out, ",");
      response_append_text(out, tokens[i].logprob.text, tokens[i].logprob.text_length);
    }
  vlm_sb_append_literal(out, "],\"token_logprobs\":[");
  for (size_t i = 0, n = 0; i < count; i++)
    if (tokens[i].has_logprob) {
      if (n++) vlm_sb_append_literal(out, ",");
      append_logprob_value(out, tokens[i].logprob.logprob);
    }
  vlm_sb_append_literal(out, "],\"top_logprobs\":[");
  for (size_t i = 0, n = 0; i < count; i++)
    if (tokens[i].has_logprob) {
      if (n++) vlm_sb_append_literal(out, ",");
      vlm_sb_append_literal(out, "{");
      for (int32_t k = 0; k < tokens[i].top_logprob_count; k++) {
        if (k) vlm_sb_append_literal(out, ",");
        response_append_text(out, tokens[i].top_logprobs[k].text, tokens[i].top_logprobs[k].text_length);
        vlm_sb_append_literal(out, ":");
        append_logprob_value(out, tokens[i].top_logprobs[k].logprob);
      }
      vlm_sb_append_literal(out, "}");
    }
  vlm_sb_append_literal(out, "],\"text_offset\":[");
  size_t offset = first_offset;
  for (size_t i = 0, n = 0; i < count; i++)
    if (tokens[i].has_logprob) {
      vlm_sb_appendf(out, "%s%zu", n++ ? "," : "", offset);
      offset += tokens[i].logprob.text_length;
    }
  vlm_sb_append_literal(out, "]}");
}

static bool any_logprob(const event_token *tokens, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (tokens[i].has_logprob) return true;
  return false;
}

/* ------------------------------------------------------------------------ */
/* Whole answers                                                             */
/* ------------------------------------------------------------------------ */

/* The completion text: the engine's whole-text decode when it gave one
 * (it can differ from the concatenated deltas only in how partial
 * characters were held back), else the deltas. */
/* The completion's raw text (no echo). */
static void gather_text(const request_events *events, vlm_string_builder *out) {
  if (events->full_text) {
    vlm_sb_append(out, events->full_text, events->full_text_length);
    return;
  }
  for (size_t i = 0; i < events->token_count; i++)
    vlm_sb_append(out, events->tokens[i].text, events->tokens[i].text_length);
}

static void append_text_or_null(vlm_string_builder *out, const vlm_string_builder *text) {
  if (text->length) response_append_text(out, text->data, text->length);
  else vlm_sb_append_literal(out, "null");
  if (text->failed) out->failed = true;
}

/* "content" and "reasoning_content" of a chat message, split as the
 * server's reasoning parser does (echo, if any, starts the content). */
static void append_split_message(vlm_string_builder *out, const response_header *header,
                                 const request_events *events) {
  vlm_string_builder text = {0}, reasoning = {0}, content = {0};
  gather_text(events, &text);
  if (header->echo_text) vlm_sb_append(&content, header->echo_text, strlen(header->echo_text));
  reasoning_split split;
  reasoning_split_init(&split, header->reasoning, header->prompt_tail);
  reasoning_split_push(&split, text.data ? text.data : "", text.length, &reasoning, &content);
  reasoning_split_finish(&split, &reasoning, &content);
  bool thought = split.thought;
  reasoning_split_release(&split);
  vlm_sb_append_literal(out, "\"content\":");
  if (thought) append_text_or_null(out, &content);
  else response_append_text(out, content.data ? content.data : "", content.length);
  vlm_sb_append_literal(out, ",\"reasoning_content\":");
  if (thought) response_append_text(out, reasoning.data ? reasoning.data : "", reasoning.length);
  else vlm_sb_append_literal(out, "null");
  if (text.failed) out->failed = true;
  vlm_sb_release(&text);
  vlm_sb_release(&reasoning);
  vlm_sb_release(&content);
}

static void append_completion_text(vlm_string_builder *out, const response_header *header,
                                   const request_events *events) {
  vlm_string_builder joined = {0};
  if (header->echo_text) vlm_sb_append(&joined, header->echo_text, strlen(header->echo_text));
  if (events->full_text) {
    vlm_sb_append(&joined, events->full_text, events->full_text_length);
    response_append_text(out, joined.data ? joined.data : "", joined.length);
    if (joined.failed) out->failed = true;
    vlm_sb_release(&joined);
    return;
  }
  for (size_t i = 0; i < events->token_count; i++)
    vlm_sb_append(&joined, events->tokens[i].text, events->tokens[i].text_length);
  response_append_text(out, joined.data ? joined.data : "", joined.length);
  if (joined.failed) out->failed = true;
  vlm_sb_release(&joined);
}

/* One element of "choices" (its index, message or text, logprobs and
 * finish_reason); `tools` as in response_completion_tools. */
static bool append_tools_message(vlm_string_builder *out, const response_header *header,
                                 const request_events *events, const tool_format *format, bool *out_calls);

static void append_choice(vlm_string_builder *out, const response_header *header, const request_events *events,
                          size_t index, bool with_logprobs, const tool_format *tools) {
  bool calls = false;
  bool chat = header->endpoint == OPENAI_CHAT_COMPLETIONS;
  bool logprobs = with_logprobs && any_logprob(events->tokens, events->token_count);
  vlm_sb_appendf(out, "{\"index\":%zu,", index);
  if (chat) {
    vlm_sb_append_literal(out, "\"message\":{\"role\":\"assistant\",");
    if (tools) {
      if (!append_tools_message(out, header, events, tools, &calls)) out->failed = true;
    } else if (header->reasoning != REASONING_OFF) {
      append_split_message(out, header, events);
    } else {
      vlm_sb_append_literal(out, "\"content\":");
      append_completion_text(out, header, events);
    }
    vlm_sb_append_literal(out, ",\"refusal\":null},\"logprobs\":");
    if (logprobs) append_chat_logprobs(out, events->tokens, events->token_count);
    else vlm_sb_append_literal(out, "null");
  } else {
    vlm_sb_append_literal(out, "\"text\":");
    append_completion_text(out, header, events);
    vlm_sb_append_literal(out, ",\"logprobs\":");
    if (logprobs) append_completion_logprobs(out, events->tokens, events->token_count, 0);
    else vlm_sb_append_literal(out, "null");
  }
  vlm_sb_append_literal(out, ",\"finish_reason\":");
  append_string(out, calls && strcmp(events->finish_reason, "stop") == 0 ? "tool_calls" : events->finish_reason);
  vlm_sb_append_literal(out, "}");
}

vlm_engine_usage response_sum_usage(const request_events *const *events, size_t count, int32_t n) {
  vlm_engine_usage sum = {0};
  for (size_t i = 0; i < count; i++) {
    const vlm_engine_usage *usage = &events[i]->usage;
    if (n <= 1 || i % (size_t)n == 0) { /* each prompt once: its choices share its prefill */
      sum.prompt_tokens += usage->prompt_tokens;
      sum.prompt_image_tokens += usage->prompt_image_tokens;
      sum.prompt_audio_tokens += usage->prompt_audio_tokens;
      sum.prompt_video_tokens += usage->prompt_video_tokens;
      sum.prompt_cached_tokens += usage->prompt_cached_tokens;
    }
    sum.completion_tokens += usage->completion_tokens;
  }
  return sum;
}

static char *completion_object(const response_header *header, const request_events *const *events, size_t count,
                               int32_t n, bool with_logprobs, const tool_format *tools) {
  vlm_string_builder out = {0};
  bool chat = header->endpoint == OPENAI_CHAT_COMPLETIONS;
  append_object_start(&out, header, chat ? "chat.completion" : "text_completion");
  vlm_sb_append_literal(&out, ",\"choices\":[");
  for (size_t i = 0; i < count; i++) {
    if (i) vlm_sb_append_literal(&out, ",");
    append_choice(&out, header, events[i], i, with_logprobs, tools);
  }
  vlm_sb_append_literal(&out, "],\"usage\":");
  vlm_engine_usage usage = response_sum_usage(events, count, n);
  append_usage(&out, &usage);
  response_append_timings(&out, events[0]);
  vlm_sb_append_literal(&out, "}");
  return vlm_sb_finish(&out);
}

char *response_completion_choices(const response_header *header, const request_events *const *events, size_t count,
                                  int32_t n, bool with_logprobs) {
  return completion_object(header, events, count, n, with_logprobs, NULL);
}

/* A chat message whose output is parsed for tool calls, after the
 * reasoning split when the server has a reasoning parser (as vLLM composes
 * them: the tool parser reads the content part only). *out_calls: it has
 * calls. False when out of memory. */
static bool append_tools_message(vlm_string_builder *out, const response_header *header,
                                 const request_events *events, const tool_format *format, bool *out_calls) {
  vlm_string_builder text = {0}, reasoning = {0}, raw = {0}, content = {0};
  gather_text(events, &text);
  bool thought = false;
  if (header->reasoning != REASONING_OFF) {
    reasoning_split split;
    reasoning_split_init(&split, header->reasoning, header->prompt_tail);
    reasoning_split_push(&split, text.data ? text.data : "", text.length, &reasoning, &raw);
    reasoning_split_finish(&split, &reasoning, &raw);
    thought = split.thought;
    reasoning_split_release(&split);
  } else {
    vlm_sb_append(&raw, text.data ? text.data : "", text.length);
  }
  tool_calls_result calls;
  bool ok = !text.failed && !raw.failed && !reasoning.failed &&
            tool_calls_parse(format, raw.data ? raw.data : "", raw.length, &calls);
  if (ok) {
    if (header->single_tool_call) tool_calls_keep_first(&calls, 1);
    if (header->echo_text) vlm_sb_append(&content, header->echo_text, strlen(header->echo_text));
    vlm_sb_append(&content, calls.content, calls.content_length);
    vlm_sb_append_literal(out, "\"content\":");
    if (!content.length && (thought || calls.count)) vlm_sb_append_literal(out, "null");
    else response_append_text(out, content.data ? content.data : "", content.length);
    if (header->reasoning != REASONING_OFF) {
      vlm_sb_append_literal(out, ",\"reasoning_content\":");
      if (thought) response_append_text(out, reasoning.data ? reasoning.data : "", reasoning.length);
      else vlm_sb_append_literal(out, "null");
    }
    if (calls.count) tool_calls_append_message_json(out, &calls, header->id + 9 /* past "chatcmpl-" */);
    *out_calls = calls.count > 0;
    tool_calls_result_release(&calls);
  }
  vlm_sb_release(&text);
  vlm_sb_release(&reasoning);
  vlm_sb_release(&raw);
  vlm_sb_release(&content);
  return ok;
}

char *response_completion_tools(const response_header *header, const request_events *events, bool with_logprobs,
                                const tool_format *tools) {
  return completion_object(header, &events, 1, 1, with_logprobs, tools);
}

char *response_completion(const response_header *header, const request_events *events,
                          bool with_logprobs) {
  return response_completion_choices(header, &events, 1, 1, with_logprobs);
}

/* n per ms as llama-server gives them; 0 where no time passed (JSON has no
 * infinity). */
static void append_rates(vlm_string_builder *out, const char *prefix, long long count, double milliseconds) {
  vlm_sb_appendf(out, "\"%s_n\":%lld,\"%s_ms\":%.3f,\"%s_per_token_ms\":%.3f,\"%s_per_second\":%.3f", prefix,
                 count, prefix, milliseconds, prefix, count > 0 ? milliseconds / (double)count : 0.0, prefix,
                 milliseconds > 0 ? (double)count * 1000.0 / milliseconds : 0.0);
}

void response_append_timings(vlm_string_builder *out, const request_events *events) {
  const vlm_engine_usage *usage = &events->usage;
  const vlm_engine_timings *timings = &events->timings;
  vlm_sb_appendf(out, ",\"timings\":{\"cache_n\":%lld,", (long long)usage->prompt_cached_tokens);
  append_rates(out, "prompt", (long long)(usage->prompt_tokens - usage->prompt_cached_tokens),
               (timings->encode_seconds + timings->prefill_seconds) * 1000.0);
  vlm_sb_append_literal(out, ",");
  append_rates(out, "predicted", (long long)usage->completion_tokens, timings->decode_seconds * 1000.0);
  vlm_sb_appendf(out, ",\"queue_ms\":%.3f,\"encode_ms\":%.3f,\"first_token_ms\":%.3f}",
                 timings->queue_seconds * 1000.0, timings->encode_seconds * 1000.0,
                 timings->first_token_seconds * 1000.0);
}

/* ------------------------------------------------------------------------ */
/* Streaming                                                                 */
/* ------------------------------------------------------------------------ */

static void append_chunk_start(vlm_string_builder *out, const response_header *header) {
  vlm_sb_append_literal(out, "data: ");
  append_object_start(out, header, header->endpoint == OPENAI_CHAT_COMPLETIONS
                                       ? "chat.completion.chunk" : "text_completion");
}

void response_append_role_chunk(vlm_string_builder *out, const response_header *header) {
  append_chunk_start(out, header);
  vlm_sb_appendf(out, ",\"choices\":[{\"index\":%d,\"delta\":{\"role\":\"assistant\","
                             "\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n", (int)header->choice_index);
}

void response_append_token_chunk(vlm_string_builder *out, const response_header *header,
                                 const event_token *token, bool with_logprobs) {
  bool logprobs = with_logprobs && token->has_logprob;
  append_chunk_start(out, header);
  if (header->endpoint == OPENAI_CHAT_COMPLETIONS) {
    vlm_sb_appendf(out, ",\"choices\":[{\"index\":%d,\"delta\":{\"content\":", (int)header->choice_index);
    response_append_text(out, token->text, token->text_length);
    vlm_sb_append_literal(out, "},\"logprobs\":");
    if (logprobs) append_chat_logprobs(out, token, 1);
    else vlm_sb_append_literal(out, "null");
  } else {
    vlm_sb_appendf(out, ",\"choices\":[{\"index\":%d,\"text\":", (int)header->choice_index);
    response_append_text(out, token->text, token->text_length);
    vlm_sb_append_literal(out, ",\"logprobs\":");
    if (logprobs) append_completion_logprobs(out, token, 1, 0);
    else vlm_sb_append_literal(out, "null");
  }
  vlm_sb_append_literal(out, ",\"finish_reason\":null}]}\n\n");
}

void response_append_split_chunk(vlm_string_builder *out, const response_header *header, const event_token *token,
                                 const vlm_string_builder *reasoning, const vlm_string_builder *content,
                                 bool with_logprobs) {
  bool logprobs = with_logprobs && token && token->has_logprob;
  if (!reasoning->length && !content->length && !logprobs) return;
  append_chunk_start(out, header);
  vlm_sb_appendf(out, ",\"choices\":[{\"index\":%d,\"delta\":{", (int)header->choice_index);
  if (reasoning->length) {
    vlm_sb_append_literal(out, "\"reasoning_content\":");
    response_append_text(out, reasoning->data, reasoning->length);
  }
  if (content->length || !reasoning->length) {
    if (reasoning->length) vlm_sb_append_literal(out, ",");
    vlm_sb_append_literal(out, "\"content\":");
    response_append_text(out, content->data ? content->data : "", content->length);
  }
  vlm_sb_append_literal(out, "},\"logprobs\":");
  if (logprobs) append_chat_logprobs(out, token, 1);
  else vlm_sb_append_literal(out, "null");
  vlm_sb_append_literal(out, ",\"finish_reason\":null}]}\n\n");
}

void response_append_echo_chunk(vlm_string_builder *out, const response_header *header) {
  if (!header->echo_text || !header->echo_text[0]) return;
  event_token token = {.text = (char *)header->echo_text, .text_length = strlen(header->echo_text), .token = -1};
  response_append_token_chunk(out, header, &token, false);
}

void response_append_finish_chunk(vlm_string_builder *out, const response_header *header,
                                  const char *finish_reason, const request_events *events) {
  append_chunk_start(out, header);
  if (header->endpoint == OPENAI_CHAT_COMPLETIONS)
    vlm_sb_appendf(out, ",\"choices\":[{\"index\":%d,\"delta\":{},", (int)header->choice_index);
  else
    vlm_sb_appendf(out, ",\"choices\":[{\"index\":%d,\"text\":\"\",", (int)header->choice_index);
  vlm_sb_append_literal(out, "\"logprobs\":null,\"finish_reason\":");
  append_string(out, finish_reason);
  vlm_sb_append_literal(out, "}]");
  response_append_timings(out, events);
  vlm_sb_append_literal(out, "}\n\n");
}

void response_append_tool_call_chunks(vlm_string_builder *out, const response_header *header,
                                      const tool_calls_result *tools) {
  for (size_t i = 0; i < tools->count; i++) {
    append_chunk_start(out, header);
    vlm_sb_appendf(out, ",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%zu,"
                        "\"id\":\"call_%s_%zu\",\"type\":\"function\",\"function\":{\"name\":",
                   i, header->id + 9, i);
    append_string(out, tools->calls[i].name);
    vlm_sb_append_literal(out, ",\"arguments\":\"\"}}]},\"logprobs\":null,\"finish_reason\":null}]}\n\n");
    append_chunk_start(out, header);
    vlm_sb_appendf(out, ",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%zu,"
                        "\"function\":{\"arguments\":", i);
    append_string(out, tools->calls[i].arguments);
    vlm_sb_append_literal(out, "}}]},\"logprobs\":null,\"finish_reason\":null}]}\n\n");
  }
}

void response_append_progress_chunk(vlm_string_builder *out, const response_header *header,
                                    const vlm_engine_progress *progress) {
  append_chunk_start(out, header);
  if (header->endpoint == OPENAI_CHAT_COMPLETIONS)
    vlm_sb_appendf(out, ",\"choices\":[{\"index\":%d,\"delta\":{\"role\":\"assistant\",\"content\":null},", (int)header->choice_index);
  else
    vlm_sb_appendf(out, ",\"choices\":[{\"index\":%d,\"text\":\"\",", (int)header->choice_index);
  vlm_sb_appendf(out,
                 "\"logprobs\":null,\"finish_reason\":null}],\"prompt_progress\":{\"total\":%lld,\"cache\":%lld,"
                 "\"processed\":%lld,\"time_ms\":%lld}}\n\n",
                 (long long)progress->prompt_tokens, (long long)progress->cached_tokens,
                 (long long)progress->processed_tokens, (long long)(progress->seconds * 1000.0));
}

void response_append_usage_chunk(vlm_string_builder *out, const response_header *header,
                                 const vlm_engine_usage *usage) {
  append_chunk_start(out, header);
  vlm_sb_append_literal(out, ",\"choices\":[],\"usage\":");
  append_usage(out, usage);
  vlm_sb_append_literal(out, "}\n\n");
}

void response_append_error_event(vlm_string_builder *out, const openai_error *error) {
  char *json = openai_error_to_json(error);
  vlm_sb_append_literal(out, "data: ");
  if (json) vlm_sb_append(out, json, strlen(json));
  else vlm_sb_append_literal(out, "{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\","
                                  "\"param\":null,\"code\":null}}");
  vlm_sb_append_literal(out, "\n\n");
  free(json);
}

void response_append_done(vlm_string_builder *out) {
  vlm_sb_append_literal(out, "data: [DONE]\n\n");
}

/* ------------------------------------------------------------------------ */
/* GET /v1/models                                                            */
/* ------------------------------------------------------------------------ */

/* OpenAI's list of model objects, each with what vlm can tell about it:
 * the input modalities it accepts (a part of another modality is refused
 * with 400), positions per slot, slots, queue bound and backend. */
char *response_models(const vlm_server *server) {
  const vlm_engine_info *info = &server->info;
  vlm_string_builder out = {0};
  vlm_sb_append_literal(&out, "{\"object\":\"list\",\"data\":[{\"id\":");
  append_string(&out, server->model_id);
  vlm_sb_appendf(&out, ",\"object\":\"model\",\"created\":%lld,\"owned_by\":\"vlm\",",
                 (long long)server->started_at);
  vlm_sb_append_literal(&out, "\"capabilities\":{\"modalities\":{\"input\":[\"text\"");
  if (info->accepts_images) vlm_sb_append_literal(&out, ",\"image\"");
  if (info->accepts_audio) vlm_sb_append_literal(&out, ",\"audio\"");
  vlm_sb_append_literal(&out, "],\"output\":[\"text\"]},\"model_type\":");
  append_string(&out, info->model_type ? info->model_type : "");
  vlm_sb_appendf(&out,
                 ",\"chat_template\":%s,\"endpoints\":[%s\"/v1/completions\"],"
                 "\"capacity\":%lld,\"prefill_chunk\":%lld,\"slots\":%d,\"queue_limit\":%d,"
                 "\"vocab_size\":%lld,\"backend\":\"%s\",\"vision_backend\":%s%s%s}}]}",
                 info->has_chat_template ? "true" : "false",
                 info->has_chat_template ? "\"/v1/chat/completions\"," : "",
                 (long long)info->capacity, (long long)info->prefill_chunk, (int)info->slot_count,
                 (int)info->queue_limit, (long long)info->vocab_size, info->backend,
                 info->vision_backend ? "\"" : "", info->vision_backend ? info->vision_backend : "null",
                 info->vision_backend ? "\"" : "");
  return vlm_sb_finish(&out);
}
