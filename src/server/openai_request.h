/* OpenAI request bodies (POST /v1/chat/completions and /v1/completions)
 * parsed and validated into plain structs, before any model work.
 *
 * Everything the client sends is either used or refused: bookkeeping
 * fields that cannot change the output (user, metadata, ...) are ignored
 * as OpenAI ignores them, unknown fields are refused as OpenAI refuses them
 * (see openai_request.c for the exact lists); a field with the wrong type, a value out
 * of range, n != 1, an unsupported content part type, are errors naming the
 * field in `param` (e.g. "messages[1].content[0].image_url.url").
 *
 * response_format (json_object, json_schema), tools and tool_choice become
 * a grammar for constrained decoding and the tool-call format to parse
 * (openai_structured.c, docs/STRUCTURED_OUTPUTS.md).
 *
 * Chat messages are converted to Transformers' chat format for the model's
 * template: content parts become {"type":"text","text":...} and
 * {"type":"image"} in order, and each image part's URL is kept in
 * `media` in the same order (its bytes are fetched later, by
 * media_source.h, on the worker thread). input_audio ({data, format}) and
 * audio_url ({url}) parts become {"type":"audio"} and media of kind AUDIO
 * in the same order, so the handler decodes them for a model with an
 * audio path and refuses them by name for one without; nothing is
 * dropped. */
#ifndef VLM_SERVER_OPENAI_REQUEST_H
#define VLM_SERVER_OPENAI_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vlm.h"
#include "vlm/generate.h"

/* An error as OpenAI reports it: HTTP status and the error object
 * {"error": {"message", "type", "param", "code"}}. Strings are owned. */
typedef struct openai_error {
  int http_status;      /* 400, 401, 404, 413, 429, 500, 503 ... */
  char *message;
  const char *type;     /* "invalid_request_error", "authentication_error", "server_error" ... */
  char *param;          /* NULL or the offending field */
  const char *code;     /* NULL or e.g. "context_length_exceeded", "invalid_api_key" */
} openai_error;

/* Fills *error (overwriting it: release a previous one first). */
void openai_error_set(openai_error *error, int http_status, const char *type, const char *param,
                      const char *code, const char *format, ...) __attribute__((format(printf, 6, 7)));
void openai_error_release(openai_error *error);
/* The JSON error object; NULL if out of memory. Caller frees. */
char *openai_error_to_json(const openai_error *error);

typedef enum openai_media_kind {
  OPENAI_MEDIA_IMAGE,
  OPENAI_MEDIA_AUDIO,
} openai_media_kind;

typedef struct openai_media {
  openai_media_kind kind;
  char *url;            /* image_url.url or audio_url.url (data:, file://, http(s)://) */
  char *audio_data;     /* input_audio.data (base64); NULL for audio_url */
  char *audio_format;   /* input_audio.format */
  char *param;          /* the field it came from, ready to pass to media_source_fetch:
                           "messages[0].content[1].image_url.url" or
                           "messages[0].content[1].input_audio.data" */
} openai_media;

typedef enum openai_endpoint {
  OPENAI_CHAT_COMPLETIONS,
  OPENAI_COMPLETIONS,
} openai_endpoint;

/* One more prompt of a /v1/completions list: a string or token ids. */
typedef struct openai_prompt {
  char *text;
  int32_t *ids;
  int64_t id_count;
} openai_prompt;

typedef struct openai_request {
  openai_endpoint endpoint;
  char *model;                  /* as given (echoed back); may be NULL */
  char *messages_json;          /* chat: Transformers-format messages array */
  char *prompt;                 /* completions: the prompt string, or */
  int32_t *prompt_ids;          /* completions: a prompt of token ids (not yet checked against the vocabulary) */
  int64_t prompt_id_count;
  /* completions: a list of prompts, the first in prompt / prompt_ids above
   * and the others here, in order (OpenAI's choices are indexed
   * prompt * n + choice). */
  struct openai_prompt *more_prompts;
  size_t more_prompt_count;
  int32_t n;                    /* choices per prompt, 1..OPENAI_MAX_CHOICES */
  openai_media *media;          /* chat: in placeholder order */
  size_t media_count;
  bool stream;
  bool include_usage;           /* stream_options.include_usage */
  bool return_progress;         /* llama-server's: prompt_progress chunks (streams only) */
  int64_t max_tokens;           /* max_completion_tokens or max_tokens; 0: not given */
  bool has_temperature, has_top_p, has_top_k, has_seed;
  bool has_min_p, has_repetition_penalty, has_presence_penalty, has_frequency_penalty;
  vlm_sampling_params sampling; /* only the fields the client gave are meaningful (has_*) */
  bool logprobs;                /* chat: logprobs=true; completions: logprobs=N > 0 */
  int32_t top_logprobs;
  char **stop;                  /* up to OPENAI_MAX_STOP_STRINGS strings */
  size_t stop_count;
  /* Structured outputs and tools (openai_structured.c): the GBNF grammar
   * of response_format or of a forced tool call (NULL: none); the output's
   * tool-call format when calls are to be parsed from it (NULL: not). With
   * tools, messages_json is {"messages": [...], "tools": [...]}. */
  char *grammar;
  const struct tool_format *tool_format;
  /* parallel_tool_calls false: at most one call (a forced one: exactly
   * one; auto: the first the model wrote). */
  bool single_tool_call;
  /* vLLM's extensions and OpenAI's logit_bias and echo (openai_extensions.c). */
  char *chat_template_kwargs_json;  /* chat: a JSON object, or NULL */
  bool no_generation_prompt;        /* add_generation_prompt: false */
  bool continue_final_message;
  char *echo_text;                  /* echo: the text the answer starts with; NULL: no echo */
  bool echo_prompt_ids;             /* echo of a token prompt: the handler decodes it into echo_text */
  int64_t min_tokens;
  bool ignore_eos;
  bool keep_special_tokens;         /* skip_special_tokens: false */
  int32_t *stop_token_ids;
  size_t stop_token_id_count;
  vlm_logit_bias *logit_bias;       /* ids not yet checked against the vocabulary */
  size_t logit_bias_count;
  /* Unknown top-level fields accepted (accept_unknown_fields), to log. */
  char **ignored_fields;
  size_t ignored_field_count;
} openai_request;

/* Bounds every request has, whatever the model (OpenAI's own: at most 4
 * stop strings; ours: their length, and max_tokens within 32 bits, far
 * over any context a slot can have). */
#define OPENAI_MAX_TOKENS_LIMIT INT32_MAX
#define OPENAI_MAX_STOP_STRINGS 4
#define OPENAI_MAX_STOP_BYTES 1024
#define OPENAI_MAX_STOP_TOKEN_IDS 64
#define OPENAI_MAX_LOGIT_BIAS 1024
#define OPENAI_MAX_CHOICES 16         /* n (as VLM_ENGINE_MAX_CHOICES) */
#define OPENAI_MAX_PROMPTS 16         /* a /v1/completions prompt list */
#define OPENAI_MAX_ANSWER_CHOICES 64  /* prompts x n in one answer */
#define OPENAI_MAX_IGNORED_FIELDS 16  /* named in the log; more are counted */

/* How chat content is handed to the model's template, from
 * vlm_chat_template_content_format (vLLM's resolved content format). */
typedef enum openai_content_format {
  OPENAI_CONTENT_AS_GIVEN, /* strings stay strings, parts stay parts */
  OPENAI_CONTENT_STRING,   /* text-only parts become one string, joined with "\n"
                              (parts with media stay parts: the engine makes them the
                              model's placeholders and the text) */
  OPENAI_CONTENT_PARTS,    /* a string becomes [{"type":"text","text":...}] */
} openai_content_format;

typedef struct openai_parse_options {
  openai_content_format content_format;
  const struct tool_format *tool_format; /* the model's (server/tool_calls.h); NULL: unknown */
  /* vLLM's behaviour (vlm serve --accept-unknown-fields): an unknown
   * top-level field is ignored and listed in request->ignored_fields
   * instead of refused with OpenAI's 400. Fields we know and refuse stay
   * refused. */
  bool accept_unknown_fields;
} openai_parse_options;

/* Parses and validates `body`; `options` may be NULL (content as given).
 * On failure fills *error (400 with type "invalid_request_error") and
 * returns false. */
bool openai_request_parse(openai_endpoint endpoint, const char *body, size_t length,
                          const openai_parse_options *options, openai_request *out_request,
                          openai_error *error);
void openai_request_release(openai_request *request);

#endif
