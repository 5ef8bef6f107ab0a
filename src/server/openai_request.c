/* OpenAI request bodies parsed into plain structs; see openai_request.h.
 *
 * Every top-level field a client may send falls in exactly one class, so
 * nothing a client asks for is silently dropped:
 *
 *   used      messages (chat), prompt (completions), model, stream,
 *             stream_options {include_usage; include_obfuscation ignored},
 *             max_tokens, max_completion_tokens (chat), temperature, top_p,
 *             presence_penalty, frequency_penalty, seed, stop, n (must be 1),
 *             logprobs, top_logprobs (chat), and the vLLM extensions top_k,
 *             min_p, repetition_penalty.
 *   ignored   user, metadata, store, service_tier, parallel_tool_calls,
 *             prompt_cache_key, prompt_cache_retention, safety_identifier:
 *             bookkeeping that cannot change the generated text (OpenAI
 *             accepts them on every model).
 *   refused   unless null or the value that asks for nothing we lack:
 *             chat:        tools, functions, audio, prediction,
 *                          reasoning_effort, verbosity, web_search_options
 *                          (always refused when non-null); tool_choice and
 *                          function_call (accepted only as "none");
 *                          response_format (only {"type":"text"});
 *                          logit_bias (only {}); modalities (only ["text"]);
 *             completions: suffix (always refused when non-null), echo (only
 *                          false), best_of (only 1), logit_bias (only {}).
 *   unknown   anything else is refused with OpenAI's own wording
 *             ("Unrecognized request argument supplied: X"), as OpenAI does.
 *
 * null means "not given" for every optional field, as in OpenAI's and
 * vLLM's schemas. Inside messages, unknown keys are refused too (OpenAI
 * validates messages with additionalProperties: false). */
#include "server/openai_request.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sampling.h"
#include "io/json.h"

/* Longest field path we build ("messages[123].content[45].image_url.url"). */
#define PARAM_CAPACITY 160
/* JSON nesting a valid request ever needs is small (body, messages,
 * message, content, part, image_url); the cap keeps hostile input cheap. */
#define REQUEST_MAX_DEPTH 32
#define MAX_STOP_STRINGS 4
#define MAX_COMPLETIONS_LOGPROBS 5

/* ---------------------------------------------------------------------- */
/* Errors.                                                                */
/* ---------------------------------------------------------------------- */

static char *copy_string(const char *text) {
  if (!text) return NULL;
  size_t length = strlen(text);
  char *copy = malloc(length + 1);
  if (copy) memcpy(copy, text, length + 1);
  return copy;
}

void openai_error_set(openai_error *error, int http_status, const char *type, const char *param,
                      const char *code, const char *format, ...) {
  error->http_status = http_status;
  error->type = type;
  error->code = code;
  error->param = copy_string(param);
  va_list arguments;
  va_start(arguments, format);
  va_list measuring;
  va_copy(measuring, arguments);
  int length = vsnprintf(NULL, 0, format, measuring);
  va_end(measuring);
  error->message = length >= 0 ? malloc((size_t)length + 1) : NULL;
  if (error->message) vsnprintf(error->message, (size_t)length + 1, format, arguments);
  va_end(arguments);
}

void openai_error_release(openai_error *error) {
  if (!error) return;
  free(error->message);
  free(error->param);
  memset(error, 0, sizeof(*error));
}

/* Length of the valid UTF-8 sequence at `text`, or 0 when it is not one
 * (stray continuation byte, truncated, overlong, surrogate, > U+10FFFF). */
static size_t utf8_sequence_length(const unsigned char *text, size_t remaining) {
  unsigned char lead = text[0];
  if (lead < 0x80) return 1;
  size_t length;
  uint32_t code, minimum;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, code = lead & 0x1F, minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, code = lead & 0x0F, minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, code = lead & 0x07, minimum = 0x10000;
  } else {
    return 0;
  }
  if (remaining < length) return 0;
  for (size_t i = 1; i < length; i++) {
    if ((text[i] & 0xC0) != 0x80) return 0;
    code = code << 6 | (text[i] & 0x3F);
  }
  if (code < minimum || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

/* Messages quote client text (JSON reader errors, field names cut to a
 * byte count), which may not be valid UTF-8; the error body must be, so
 * each invalid byte becomes U+FFFD. */
static void append_string_or_null(vlm_string_builder *builder, const char *text) {
  if (!text) {
    vlm_sb_append_literal(builder, "null");
    return;
  }
  vlm_string_builder clean = {0};
  const unsigned char *bytes = (const unsigned char *)text;
  size_t length = strlen(text);
  for (size_t i = 0; i < length;) {
    size_t sequence = utf8_sequence_length(bytes + i, length - i);
    if (sequence) {
      vlm_sb_append(&clean, text + i, sequence);
      i += sequence;
    } else {
      vlm_sb_append_literal(&clean, "\xEF\xBF\xBD");
      i++;
    }
  }
  char *valid = vlm_sb_finish(&clean);
  if (!valid) {
    builder->failed = true;
    return;
  }
  vlm_sb_append_json_string(builder, valid, strlen(valid));
  free(valid);
}

char *openai_error_to_json(const openai_error *error) {
  vlm_string_builder builder = {0};
  vlm_sb_append_literal(&builder, "{\"error\":{\"message\":");
  /* A message lost to a failed allocation still yields a valid object. */
  append_string_or_null(&builder, error->message ? error->message : "internal error");
  vlm_sb_append_literal(&builder, ",\"type\":");
  append_string_or_null(&builder, error->type ? error->type : "server_error");
  vlm_sb_append_literal(&builder, ",\"param\":");
  append_string_or_null(&builder, error->param);
  vlm_sb_append_literal(&builder, ",\"code\":");
  append_string_or_null(&builder, error->code);
  vlm_sb_append_literal(&builder, "}}");
  return vlm_sb_finish(&builder);
}

/* Every helper below returns false after filling *error, so callers can
 * write `if (!step(...)) return false;`. */
static bool fail_invalid_value(openai_error *error, const char *param, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static bool fail_invalid_value(openai_error *error, const char *param, const char *format, ...) {
  char detail[512];
  va_list arguments;
  va_start(arguments, format);
  vsnprintf(detail, sizeof(detail), format, arguments);
  va_end(arguments);
  openai_error_set(error, 400, "invalid_request_error", param, NULL,
                   "Invalid value for '%s': %s", param, detail);
  return false;
}

static const char *json_kind_phrase(const vlm_json_value *value) {
  switch (value->type) {
    case VLM_JSON_NULL: return "null";
    case VLM_JSON_BOOL: return "a boolean";
    case VLM_JSON_NUMBER: return value->as.number.is_integer ? "an integer" : "a decimal";
    case VLM_JSON_STRING: return "a string";
    case VLM_JSON_ARRAY: return "an array";
    case VLM_JSON_OBJECT: return "an object";
  }
  return "a value";
}

/* OpenAI's own wording for a type mismatch. */
static bool fail_type(openai_error *error, const char *param, const char *expected,
                      const vlm_json_value *value) {
  openai_error_set(error, 400, "invalid_request_error", param, "invalid_type",
                   "Invalid type for '%s': expected %s, but got %s instead.", param, expected,
                   json_kind_phrase(value));
  return false;
}

static bool fail_unsupported(openai_error *error, const char *param, const char *why) {
  openai_error_set(error, 400, "invalid_request_error", param, "unsupported_parameter",
                   "Unsupported parameter: '%s' %s.", param, why);
  return false;
}

static bool fail_out_of_memory(openai_error *error) {
  openai_error_set(error, 500, "server_error", NULL, NULL, "out of memory");
  return false;
}

/* Builds a field path such as "messages[1].content[0].image_url.url"
 * into a PARAM_CAPACITY buffer (cut short, never overflowed). */
static void build_param(char *out, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void build_param(char *out, const char *format, ...) {
  va_list arguments;
  va_start(arguments, format);
  vsnprintf(out, PARAM_CAPACITY, format, arguments);
  va_end(arguments);
}

/* ---------------------------------------------------------------------- */
/* Typed field readers. A missing field or null reads as "not given".      */
/* ---------------------------------------------------------------------- */

static bool is_absent(const vlm_json_value *value) {
  return !value || value->type == VLM_JSON_NULL;
}

/* A string without embedded NUL (we hand strings on as C strings, and a
 * NUL would silently cut them short). */
static bool read_plain_string(const vlm_json_value *value, const char *param,
                              openai_error *error, const char **out_text) {
  if (!value || value->type != VLM_JSON_STRING) return fail_type(error, param, "a string", value);
  if (memchr(value->as.string.chars, '\0', value->as.string.length))
    return fail_invalid_value(error, param, "must not contain the NUL character");
  *out_text = value->as.string.chars;
  return true;
}

static bool copy_plain_string(const vlm_json_value *value, const char *param, openai_error *error,
                              char **out_copy) {
  const char *text = NULL;
  if (!read_plain_string(value, param, error, &text)) return false;
  *out_copy = copy_string(text);
  return *out_copy ? true : fail_out_of_memory(error);
}

static bool read_bool(const vlm_json_value *value, const char *param, openai_error *error,
                      bool *out) {
  if (value->type != VLM_JSON_BOOL) return fail_type(error, param, "a boolean", value);
  *out = value->as.boolean;
  return true;
}

static bool read_integer(const vlm_json_value *value, const char *param, openai_error *error,
                         int64_t *out) {
  if (!vlm_json_get_int(value, out)) return fail_type(error, param, "an integer", value);
  return true;
}

static bool read_integer_in_range(const vlm_json_value *value, const char *param, int64_t minimum,
                                  int64_t maximum, openai_error *error, int64_t *out) {
  if (!read_integer(value, param, error, out)) return false;
  if (*out < minimum || *out > maximum)
    return fail_invalid_value(error, param, "must be between %lld and %lld, got %lld",
                              (long long)minimum, (long long)maximum, (long long)*out);
  return true;
}

static bool read_number(const vlm_json_value *value, const char *param, openai_error *error,
                        double *out) {
  if (value->type != VLM_JSON_NUMBER) return fail_type(error, param, "a number", value);
  *out = value->as.number.value;
  return true;
}

/* [minimum, maximum], or (minimum, maximum] when minimum_exclusive.
 * Written so that NaN fails every comparison and is refused. */
static bool read_number_in_range(const vlm_json_value *value, const char *param, double minimum,
                                 bool minimum_exclusive, double maximum, openai_error *error,
                                 float *out) {
  double number = 0;
  if (!read_number(value, param, error, &number)) return false;
  bool above_minimum = minimum_exclusive ? number > minimum : number >= minimum;
  if (!(above_minimum && number <= maximum))
    return fail_invalid_value(error, param, "must be %s %g and at most %g, got %g",
                              minimum_exclusive ? "greater than" : "at least", minimum, maximum,
                              number);
  *out = (float)number;
  return true;
}

/* ---------------------------------------------------------------------- */
/* The top-level field table.                                              */
/* ---------------------------------------------------------------------- */

enum { FOR_CHAT = 1, FOR_COMPLETIONS = 2, FOR_BOTH = 3 };

typedef enum field_class {
  FIELD_USED,     /* read by a parser below */
  FIELD_IGNORED,  /* cannot change the output */
  FIELD_REFUSED,  /* would change the output in a way we do not implement */
} field_class;

typedef struct field_rule {
  const char *name;
  int endpoints;
  field_class handling;
  /* FIELD_REFUSED only: true for the values that ask for nothing we lack
   * (NULL: every non-null value is refused). */
  bool (*is_harmless)(const vlm_json_value *value);
} field_rule;

static bool is_string_none(const vlm_json_value *value) {
  return vlm_json_string_equals(value, "none");
}

static bool is_text_response_format(const vlm_json_value *value) {
  return value->type == VLM_JSON_OBJECT && value->as.object.count == 1 &&
         vlm_json_string_equals(vlm_json_object_get(value, "type"), "text");
}

static bool is_empty_object(const vlm_json_value *value) {
  return value->type == VLM_JSON_OBJECT && value->as.object.count == 0;
}

static bool is_text_only_modalities(const vlm_json_value *value) {
  if (value->type != VLM_JSON_ARRAY || value->as.array.count == 0) return false;
  for (size_t i = 0; i < value->as.array.count; i++)
    if (!vlm_json_string_equals(&value->as.array.items[i], "text")) return false;
  return true;
}

static bool is_false(const vlm_json_value *value) {
  return value->type == VLM_JSON_BOOL && !value->as.boolean;
}

static bool is_integer_one(const vlm_json_value *value) {
  int64_t number = 0;
  return vlm_json_get_int(value, &number) && number == 1;
}

static const field_rule field_rules[] = {
    {"messages", FOR_CHAT, FIELD_USED, NULL},
    {"prompt", FOR_COMPLETIONS, FIELD_USED, NULL},
    {"model", FOR_BOTH, FIELD_USED, NULL},
    {"stream", FOR_BOTH, FIELD_USED, NULL},
    {"stream_options", FOR_BOTH, FIELD_USED, NULL},
    {"max_tokens", FOR_BOTH, FIELD_USED, NULL},
    {"max_completion_tokens", FOR_CHAT, FIELD_USED, NULL},
    {"temperature", FOR_BOTH, FIELD_USED, NULL},
    {"top_p", FOR_BOTH, FIELD_USED, NULL},
    {"top_k", FOR_BOTH, FIELD_USED, NULL},
    {"min_p", FOR_BOTH, FIELD_USED, NULL},
    {"presence_penalty", FOR_BOTH, FIELD_USED, NULL},
    {"frequency_penalty", FOR_BOTH, FIELD_USED, NULL},
    {"repetition_penalty", FOR_BOTH, FIELD_USED, NULL},
    {"seed", FOR_BOTH, FIELD_USED, NULL},
    {"stop", FOR_BOTH, FIELD_USED, NULL},
    {"n", FOR_BOTH, FIELD_USED, NULL},
    {"logprobs", FOR_BOTH, FIELD_USED, NULL},
    {"top_logprobs", FOR_CHAT, FIELD_USED, NULL},

    {"user", FOR_BOTH, FIELD_IGNORED, NULL},
    {"metadata", FOR_CHAT, FIELD_IGNORED, NULL},
    {"store", FOR_CHAT, FIELD_IGNORED, NULL},
    {"service_tier", FOR_CHAT, FIELD_IGNORED, NULL},
    {"parallel_tool_calls", FOR_CHAT, FIELD_IGNORED, NULL},
    {"prompt_cache_key", FOR_CHAT, FIELD_IGNORED, NULL},
    {"prompt_cache_retention", FOR_CHAT, FIELD_IGNORED, NULL},
    {"safety_identifier", FOR_CHAT, FIELD_IGNORED, NULL},

    {"tools", FOR_CHAT, FIELD_REFUSED, NULL},
    {"tool_choice", FOR_CHAT, FIELD_REFUSED, is_string_none},
    {"functions", FOR_CHAT, FIELD_REFUSED, NULL},
    {"function_call", FOR_CHAT, FIELD_REFUSED, is_string_none},
    {"response_format", FOR_CHAT, FIELD_REFUSED, is_text_response_format},
    {"logit_bias", FOR_BOTH, FIELD_REFUSED, is_empty_object},
    {"audio", FOR_CHAT, FIELD_REFUSED, NULL},
    {"modalities", FOR_CHAT, FIELD_REFUSED, is_text_only_modalities},
    {"prediction", FOR_CHAT, FIELD_REFUSED, NULL},
    {"reasoning_effort", FOR_CHAT, FIELD_REFUSED, NULL},
    {"verbosity", FOR_CHAT, FIELD_REFUSED, NULL},
    {"web_search_options", FOR_CHAT, FIELD_REFUSED, NULL},
    {"suffix", FOR_COMPLETIONS, FIELD_REFUSED, NULL},
    {"echo", FOR_COMPLETIONS, FIELD_REFUSED, is_false},
    {"best_of", FOR_COMPLETIONS, FIELD_REFUSED, is_integer_one},
};

static const field_rule *find_field_rule(const char *name, int endpoint_bit) {
  for (size_t i = 0; i < sizeof(field_rules) / sizeof(field_rules[0]); i++)
    if ((field_rules[i].endpoints & endpoint_bit) && strcmp(field_rules[i].name, name) == 0)
      return &field_rules[i];
  return NULL;
}

/* Refuses unknown fields and refused fields with non-harmless values. */
static bool check_top_level_fields(const vlm_json_value *body, openai_endpoint endpoint,
                                   openai_error *error) {
  int endpoint_bit = endpoint == OPENAI_CHAT_COMPLETIONS ? FOR_CHAT : FOR_COMPLETIONS;
  for (size_t i = 0; i < body->as.object.count; i++) {
    const vlm_json_member *member = &body->as.object.members[i];
    bool plain_key = strlen(member->key) == member->key_length;
    const field_rule *rule = plain_key ? find_field_rule(member->key, endpoint_bit) : NULL;
    if (!rule) {
      /* The key is client text: print it bounded and as-is (it is JSON-escaped later). */
      openai_error_set(error, 400, "invalid_request_error", member->key, NULL,
                       "Unrecognized request argument supplied: %.100s", member->key);
      return false;
    }
    if (rule->handling != FIELD_REFUSED || is_absent(&member->value)) continue;
    if (rule->is_harmless && rule->is_harmless(&member->value)) continue;
    return fail_unsupported(error, rule->name, "is not supported by this server");
  }
  return true;
}

/* ---------------------------------------------------------------------- */
/* Sampling and output-control fields.                                    */
/* ---------------------------------------------------------------------- */

static bool parse_max_tokens(const vlm_json_value *body, openai_request *request,
                             openai_error *error) {
  /* max_completion_tokens replaces the deprecated max_tokens; when both
   * are given the newer one wins (vLLM's rule), but both must be valid. */
  static const char *const names[] = {"max_tokens", "max_completion_tokens"};
  for (size_t i = 0; i < 2; i++) {
    const vlm_json_value *value = vlm_json_object_get(body, names[i]);
    if (is_absent(value)) continue;
    int64_t tokens = 0;
    if (!read_integer(value, names[i], error, &tokens)) return false;
    if (tokens < 1)
      return fail_invalid_value(error, names[i], "must be at least 1, got %lld", (long long)tokens);
    request->max_tokens = tokens;
  }
  return true;
}

typedef struct float_field {
  const char *name;
  double minimum;
  bool minimum_exclusive;
  double maximum;
  size_t value_offset; /* into vlm_sampling_params */
  size_t flag_offset;  /* into openai_request */
} float_field;

#define SAMPLING_FIELD(member) offsetof(vlm_sampling_params, member)
#define REQUEST_FLAG(member) offsetof(openai_request, member)

static const float_field float_fields[] = {
    {"temperature", 0.0, false, 2.0, SAMPLING_FIELD(temperature), REQUEST_FLAG(has_temperature)},
    {"top_p", 0.0, true, 1.0, SAMPLING_FIELD(top_p), REQUEST_FLAG(has_top_p)},
    {"min_p", 0.0, false, 1.0, SAMPLING_FIELD(min_p), REQUEST_FLAG(has_min_p)},
    {"presence_penalty", -2.0, false, 2.0, SAMPLING_FIELD(presence_penalty),
     REQUEST_FLAG(has_presence_penalty)},
    {"frequency_penalty", -2.0, false, 2.0, SAMPLING_FIELD(frequency_penalty),
     REQUEST_FLAG(has_frequency_penalty)},
    /* vLLM has no upper bound; ours keeps it finite. */
    {"repetition_penalty", 0.0, true, 1e6, SAMPLING_FIELD(repetition_penalty),
     REQUEST_FLAG(has_repetition_penalty)},
};

static bool parse_float_fields(const vlm_json_value *body, openai_request *request,
                               openai_error *error) {
  for (size_t i = 0; i < sizeof(float_fields) / sizeof(float_fields[0]); i++) {
    const float_field *field = &float_fields[i];
    const vlm_json_value *value = vlm_json_object_get(body, field->name);
    if (is_absent(value)) continue;
    float *target = (float *)((char *)&request->sampling + field->value_offset);
    if (!read_number_in_range(value, field->name, field->minimum, field->minimum_exclusive,
                              field->maximum, error, target))
      return false;
    *(bool *)((char *)request + field->flag_offset) = true;
  }
  return true;
}

static bool parse_top_k_and_seed(const vlm_json_value *body, openai_request *request,
                                 openai_error *error) {
  const vlm_json_value *top_k = vlm_json_object_get(body, "top_k");
  if (!is_absent(top_k)) {
    int64_t value = 0;
    if (!read_integer_in_range(top_k, "top_k", -1, INT32_MAX, error, &value)) return false;
    /* vLLM: -1 (and 0) turn top-k off; the client's "off" still overrides
     * a model default, so the flag is set either way. */
    request->sampling.top_k = value < 0 ? 0 : (int32_t)value;
    request->has_top_k = true;
  }
  const vlm_json_value *seed = vlm_json_object_get(body, "seed");
  if (!is_absent(seed)) {
    int64_t value = 0;
    if (!read_integer(seed, "seed", error, &value)) return false;
    request->sampling.seed = (uint64_t)value;
    request->has_seed = true;
  }
  return true;
}

static bool parse_n(const vlm_json_value *body, openai_error *error) {
  const vlm_json_value *value = vlm_json_object_get(body, "n");
  if (is_absent(value)) return true;
  int64_t count = 0;
  if (!read_integer(value, "n", error, &count)) return false;
  if (count != 1)
    return fail_invalid_value(error, "n", "only n=1 is supported, got %lld", (long long)count);
  return true;
}

static bool parse_chat_logprobs(const vlm_json_value *body, openai_request *request,
                                openai_error *error) {
  const vlm_json_value *logprobs = vlm_json_object_get(body, "logprobs");
  if (!is_absent(logprobs) && !read_bool(logprobs, "logprobs", error, &request->logprobs))
    return false;
  const vlm_json_value *top = vlm_json_object_get(body, "top_logprobs");
  if (is_absent(top)) return true;
  int64_t count = 0;
  if (!read_integer_in_range(top, "top_logprobs", 0, VLM_MAX_TOP_LOGPROBS, error, &count))
    return false;
  if (!request->logprobs)
    return fail_invalid_value(error, "top_logprobs", "requires logprobs to be true");
  request->top_logprobs = (int32_t)count;
  request->sampling.top_logprobs = (int32_t)count;
  return true;
}

/* The legacy endpoint's logprobs is an integer: how many alternatives to
 * report per token (0..5); N > 0 turns log-probabilities on. */
static bool parse_completions_logprobs(const vlm_json_value *body, openai_request *request,
                                       openai_error *error) {
  const vlm_json_value *logprobs = vlm_json_object_get(body, "logprobs");
  if (is_absent(logprobs)) return true;
  int64_t count = 0;
  if (!read_integer_in_range(logprobs, "logprobs", 0, MAX_COMPLETIONS_LOGPROBS, error, &count))
    return false;
  request->logprobs = count > 0;
  request->top_logprobs = (int32_t)count;
  request->sampling.top_logprobs = (int32_t)count;
  return true;
}

static bool add_stop_string(const vlm_json_value *value, const char *param,
                            openai_request *request, openai_error *error) {
  const char *text = NULL;
  if (!read_plain_string(value, param, error, &text)) return false;
  /* An empty stop string would end every completion before it starts. */
  if (text[0] == '\0') return fail_invalid_value(error, param, "must not be empty");
  char *copy = copy_string(text);
  if (!copy) return fail_out_of_memory(error);
  request->stop[request->stop_count++] = copy;
  return true;
}

static bool parse_stop(const vlm_json_value *body, openai_request *request, openai_error *error) {
  const vlm_json_value *stop = vlm_json_object_get(body, "stop");
  if (is_absent(stop)) return true;
  if (stop->type != VLM_JSON_STRING && stop->type != VLM_JSON_ARRAY)
    return fail_type(error, "stop", "a string or an array of strings", stop);
  size_t count = stop->type == VLM_JSON_STRING ? 1 : stop->as.array.count;
  if (count > MAX_STOP_STRINGS)
    return fail_invalid_value(error, "stop", "at most %d stop strings are allowed, got %zu",
                              MAX_STOP_STRINGS, count);
  if (count == 0) return true;
  request->stop = calloc(count, sizeof(char *));
  if (!request->stop) return fail_out_of_memory(error);
  if (stop->type == VLM_JSON_STRING) return add_stop_string(stop, "stop", request, error);
  for (size_t i = 0; i < count; i++) {
    char param[PARAM_CAPACITY];
    build_param(param, "stop[%zu]", i);
    if (!add_stop_string(&stop->as.array.items[i], param, request, error)) return false;
  }
  return true;
}

static bool parse_stream(const vlm_json_value *body, openai_request *request,
                         openai_error *error) {
  const vlm_json_value *stream = vlm_json_object_get(body, "stream");
  if (!is_absent(stream) && !read_bool(stream, "stream", error, &request->stream)) return false;
  const vlm_json_value *options = vlm_json_object_get(body, "stream_options");
  if (is_absent(options)) return true;
  /* OpenAI and vLLM both refuse stream_options without streaming. */
  if (!request->stream)
    return fail_invalid_value(error, "stream_options", "is only allowed when stream is true");
  if (options->type != VLM_JSON_OBJECT)
    return fail_type(error, "stream_options", "an object", options);
  for (size_t i = 0; i < options->as.object.count; i++) {
    const vlm_json_member *member = &options->as.object.members[i];
    char param[PARAM_CAPACITY];
    build_param(param, "stream_options.%.100s", member->key);
    bool flag = false;
    if (strcmp(member->key, "include_usage") == 0) {
      if (!is_absent(&member->value) && !read_bool(&member->value, param, error, &flag))
        return false;
      request->include_usage = flag;
    } else if (strcmp(member->key, "include_obfuscation") == 0) {
      /* Padding against side channels; harmless to ignore. */
      if (!is_absent(&member->value) && !read_bool(&member->value, param, error, &flag))
        return false;
    } else {
      openai_error_set(error, 400, "invalid_request_error", param, NULL,
                       "Unrecognized request argument supplied: %s", param);
      return false;
    }
  }
  return true;
}

static bool parse_model(const vlm_json_value *body, openai_request *request,
                        openai_error *error) {
  const vlm_json_value *model = vlm_json_object_get(body, "model");
  if (is_absent(model)) return true;
  return copy_plain_string(model, "model", error, &request->model);
}

/* ---------------------------------------------------------------------- */
/* Chat messages -> Transformers chat format.                             */
/* ---------------------------------------------------------------------- */

typedef struct message_builder {
  openai_request *request;
  vlm_string_builder json;
  size_t media_capacity;
  openai_error *error;
} message_builder;

static bool check_allowed_keys(const vlm_json_value *object, const char *const *allowed,
                               const char *param, openai_error *error) {
  for (size_t i = 0; i < object->as.object.count; i++) {
    const char *key = object->as.object.members[i].key;
    bool known = false;
    for (size_t j = 0; allowed[j] && !known; j++) known = strcmp(allowed[j], key) == 0;
    if (known) continue;
    char field[PARAM_CAPACITY];
    build_param(field, "%s.%.60s", param, key);
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

static void release_media(openai_media *media) {
  free(media->url);
  free(media->audio_data);
  free(media->audio_format);
  free(media->param);
}

static const vlm_json_value null_value = {.type = VLM_JSON_NULL};

static const vlm_json_value *or_null(const vlm_json_value *value) {
  return value ? value : &null_value;
}

static bool parse_text_part(message_builder *builder, const vlm_json_value *part,
                            const char *param) {
  static const char *const allowed[] = {"type", "text", NULL};
  if (!check_allowed_keys(part, allowed, param, builder->error)) return false;
  char text_param[PARAM_CAPACITY];
  build_param(text_param, "%s.text", param);
  const vlm_json_value *text = or_null(vlm_json_object_get(part, "text"));
  if (text->type != VLM_JSON_STRING) return fail_type(builder->error, text_param, "a string", text);
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
  char field[PARAM_CAPACITY];
  build_param(field, "%s.image_url", param);
  const vlm_json_value *image_url = or_null(vlm_json_object_get(part, "image_url"));
  if (image_url->type != VLM_JSON_OBJECT) return fail_type(error, field, "an object", image_url);
  if (!check_allowed_keys(image_url, allowed_inner, field, error)) return false;
  /* detail only sets OpenAI's own resizing; the model's image processor
   * decides the resolution here, so any valid value means the same. */
  const vlm_json_value *detail = vlm_json_object_get(image_url, "detail");
  if (!is_absent(detail) && !vlm_json_string_equals(detail, "auto") &&
      !vlm_json_string_equals(detail, "low") && !vlm_json_string_equals(detail, "high")) {
    build_param(field, "%s.image_url.detail", param);
    return detail->type == VLM_JSON_STRING
               ? fail_invalid_value(error, field, "must be \"auto\", \"low\" or \"high\"")
               : fail_type(error, field, "a string", detail);
  }
  build_param(field, "%s.image_url.url", param);
  openai_media media = {.kind = OPENAI_MEDIA_IMAGE};
  if (!copy_plain_string(or_null(vlm_json_object_get(image_url, "url")), field, error, &media.url))
    return false;
  if (media.url[0] == '\0') {
    free(media.url);
    return fail_invalid_value(error, field, "must not be empty");
  }
  media.param = copy_string(field);
  if (!media.param || !add_media(builder, &media)) {
    release_media(&media);
    return fail_out_of_memory(error);
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
  char field[PARAM_CAPACITY];
  build_param(field, "%s.input_audio", param);
  const vlm_json_value *audio = or_null(vlm_json_object_get(part, "input_audio"));
  if (audio->type != VLM_JSON_OBJECT) return fail_type(error, field, "an object", audio);
  if (!check_allowed_keys(audio, allowed_inner, field, error)) return false;
  build_param(field, "%s.input_audio.format", param);
  const vlm_json_value *format = or_null(vlm_json_object_get(audio, "format"));
  if (format->type != VLM_JSON_STRING) return fail_type(error, field, "a string", format);
  if (!is_known_audio_format(format))
    return fail_invalid_value(error, field, "must be \"wav\", \"mp3\", \"flac\" or \"ogg\"");
  build_param(field, "%s.input_audio.data", param);
  openai_media media = {.kind = OPENAI_MEDIA_AUDIO};
  if (!copy_plain_string(or_null(vlm_json_object_get(audio, "data")), field, error,
                         &media.audio_data))
    return false;
  if (media.audio_data[0] == '\0') {
    free(media.audio_data);
    return fail_invalid_value(error, field, "must not be empty");
  }
  media.audio_format = copy_string(format->as.string.chars);
  media.param = copy_string(field);
  if (!media.audio_format || !media.param || !add_media(builder, &media)) {
    release_media(&media);
    return fail_out_of_memory(error);
  }
  vlm_sb_append_literal(&builder->json, "{\"type\":\"audio\"}");
  return true;
}

static bool parse_content_part(message_builder *builder, const vlm_json_value *part,
                               const char *param, bool allows_media) {
  openai_error *error = builder->error;
  if (part->type != VLM_JSON_OBJECT) return fail_type(error, param, "an object", part);
  char type_param[PARAM_CAPACITY];
  build_param(type_param, "%s.type", param);
  const vlm_json_value *type = or_null(vlm_json_object_get(part, "type"));
  if (type->type != VLM_JSON_STRING) return fail_type(error, type_param, "a string", type);
  if (vlm_json_string_equals(type, "text")) return parse_text_part(builder, part, param);
  bool is_image = vlm_json_string_equals(type, "image_url");
  bool is_audio = vlm_json_string_equals(type, "input_audio");
  if ((is_image || is_audio) && !allows_media)
    return fail_invalid_value(error, type_param, "'%s' parts are only allowed in user messages",
                              type->as.string.chars);
  if (is_image) return parse_image_part(builder, part, param);
  if (is_audio) return parse_audio_part(builder, part, param);
  return fail_invalid_value(error, type_param,
                            "unsupported content part type '%.60s' (supported: text, "
                            "image_url, input_audio)",
                            type->as.string.chars);
}

static bool parse_content(message_builder *builder, const vlm_json_value *content,
                          const char *message_param, bool allows_media) {
  char param[PARAM_CAPACITY];
  build_param(param, "%s.content", message_param);
  if (content->type == VLM_JSON_STRING) {
    vlm_sb_append_json_string(&builder->json, content->as.string.chars, content->as.string.length);
    return true;
  }
  if (content->type != VLM_JSON_ARRAY)
    return fail_type(builder->error, param, "a string or an array of content parts", content);
  if (content->as.array.count == 0)
    return fail_invalid_value(builder->error, param, "must not be an empty array");
  vlm_sb_append_literal(&builder->json, "[");
  for (size_t i = 0; i < content->as.array.count; i++) {
    char part_param[PARAM_CAPACITY];
    build_param(part_param, "%s[%zu]", param, i);
    if (i) vlm_sb_append_literal(&builder->json, ",");
    if (!parse_content_part(builder, &content->as.array.items[i], part_param, allows_media))
      return false;
  }
  vlm_sb_append_literal(&builder->json, "]");
  return true;
}

static const char *const allowed_message_keys[] = {
    "role", "content", "name", "tool_call_id", "tool_calls", "function_call", "refusal", "audio",
    NULL};

/* Assistant fields that replay tool use or audio: we produce neither, so
 * a history that holds them cannot be rendered faithfully. */
static bool check_assistant_extras(const vlm_json_value *message, const char *param,
                                   openai_error *error) {
  static const char *const refused[] = {"tool_calls", "function_call", "refusal", "audio", NULL};
  for (size_t i = 0; refused[i]; i++) {
    const vlm_json_value *value = vlm_json_object_get(message, refused[i]);
    if (is_absent(value)) continue;
    if (value->type == VLM_JSON_ARRAY && value->as.array.count == 0) continue;
    char field[PARAM_CAPACITY];
    build_param(field, "%s.%s", param, refused[i]);
    return fail_unsupported(error, field, "is not supported by this server");
  }
  return true;
}

/* Which roles may carry which extra keys. */
static bool check_message_keys(const vlm_json_value *message, const char *role, const char *param,
                               openai_error *error) {
  if (!check_allowed_keys(message, allowed_message_keys, param, error)) return false;
  if (strcmp(role, "tool") != 0 && vlm_json_object_get(message, "tool_call_id")) {
    char field[PARAM_CAPACITY];
    build_param(field, "%s.tool_call_id", param);
    openai_error_set(error, 400, "invalid_request_error", field, NULL,
                     "Unrecognized argument 'tool_call_id' in '%s' (only tool messages have it)",
                     param);
    return false;
  }
  if (strcmp(role, "assistant") == 0) return check_assistant_extras(message, param, error);
  const char *only_for_assistant[] = {"tool_calls", "function_call", "refusal", "audio"};
  for (size_t i = 0; i < 4; i++) {
    if (!vlm_json_object_get(message, only_for_assistant[i])) continue;
    char field[PARAM_CAPACITY];
    build_param(field, "%s.%s", param, only_for_assistant[i]);
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
  if (is_absent(value)) return true;
  char field[PARAM_CAPACITY];
  build_param(field, "%s.%s", param, key);
  const char *text = NULL;
  if (!read_plain_string(value, field, builder->error, &text)) return false;
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
  char param[PARAM_CAPACITY];
  build_param(param, "messages[%zu]", index);
  if (message->type != VLM_JSON_OBJECT) return fail_type(error, param, "an object", message);
  char field[PARAM_CAPACITY];
  build_param(field, "%s.role", param);
  const vlm_json_value *role_value = or_null(vlm_json_object_get(message, "role"));
  if (role_value->type != VLM_JSON_STRING) return fail_type(error, field, "a string", role_value);
  const char *role = known_role(role_value);
  if (!role)
    return fail_invalid_value(error, field,
                              "must be one of system, developer, user, assistant, tool");
  if (!check_message_keys(message, role, param, error)) return false;
  build_param(field, "%s.content", param);
  const vlm_json_value *content = or_null(vlm_json_object_get(message, "content"));
  if (content->type == VLM_JSON_NULL)
    return fail_type(error, field, "a string or an array of content parts", content);
  /* Chat templates know "system", not OpenAI's newer "developer" (the same
   * role for newer OpenAI models), so it is rendered as system. */
  const char *template_role = strcmp(role, "developer") == 0 ? "system" : role;
  vlm_sb_appendf(&builder->json, "{\"role\":\"%s\",\"content\":", template_role);
  if (!parse_content(builder, content, param, strcmp(role, "user") == 0)) return false;
  if (!append_optional_string(builder, message, "name", param)) return false;
  if (!append_optional_string(builder, message, "tool_call_id", param)) return false;
  vlm_sb_append_literal(&builder->json, "}");
  return true;
}

static bool parse_messages(const vlm_json_value *body, openai_request *request,
                           openai_error *error) {
  const vlm_json_value *messages = or_null(vlm_json_object_get(body, "messages"));
  if (messages->type != VLM_JSON_ARRAY)
    return fail_type(error, "messages", "an array of messages", messages);
  if (messages->as.array.count == 0)
    return fail_invalid_value(error, "messages", "must contain at least one message");
  message_builder builder = {.request = request, .error = error};
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
  return request->messages_json ? true : fail_out_of_memory(error);
}

/* ---------------------------------------------------------------------- */
/* Completions prompt.                                                    */
/* ---------------------------------------------------------------------- */

static bool parse_prompt(const vlm_json_value *body, openai_request *request,
                         openai_error *error) {
  const vlm_json_value *prompt = or_null(vlm_json_object_get(body, "prompt"));
  /* OpenAI also takes a batch of prompts or token ids; we serve one text
   * prompt per request, so say so instead of answering only the first. */
  if (prompt->type == VLM_JSON_ARRAY) {
    if (prompt->as.array.count != 1)
      return fail_invalid_value(error, "prompt",
                                "only a single prompt string is supported (got an array of %zu)",
                                prompt->as.array.count);
    prompt = &prompt->as.array.items[0];
    if (prompt->type != VLM_JSON_STRING)
      return fail_invalid_value(error, "prompt",
                                "only a text prompt is supported (token id prompts are not)");
  }
  if (prompt->type != VLM_JSON_STRING) return fail_type(error, "prompt", "a string", prompt);
  return copy_plain_string(prompt, "prompt", error, &request->prompt);
}

/* ---------------------------------------------------------------------- */
/* Entry points.                                                          */
/* ---------------------------------------------------------------------- */

static bool parse_body(const vlm_json_value *body, openai_endpoint endpoint,
                       openai_request *request, openai_error *error) {
  if (body->type != VLM_JSON_OBJECT) {
    openai_error_set(error, 400, "invalid_request_error", NULL, NULL,
                     "The request body must be a JSON object, got %s.", json_kind_phrase(body));
    return false;
  }
  bool is_chat = endpoint == OPENAI_CHAT_COMPLETIONS;
  return check_top_level_fields(body, endpoint, error) &&
         (is_chat ? parse_messages(body, request, error) : parse_prompt(body, request, error)) &&
         parse_model(body, request, error) && parse_stream(body, request, error) &&
         parse_max_tokens(body, request, error) && parse_float_fields(body, request, error) &&
         parse_top_k_and_seed(body, request, error) && parse_n(body, error) &&
         (is_chat ? parse_chat_logprobs(body, request, error)
                  : parse_completions_logprobs(body, request, error)) &&
         parse_stop(body, request, error);
}

bool openai_request_parse(openai_endpoint endpoint, const char *body, size_t length,
                          openai_request *out_request, openai_error *error) {
  memset(out_request, 0, sizeof(*out_request));
  out_request->endpoint = endpoint;
  out_request->sampling = vlm_sampling_params_greedy();
  vlm_json_document document;
  vlm_json_limits limits = {.max_depth = REQUEST_MAX_DEPTH, .max_input_bytes = SIZE_MAX};
  vlm_status status = vlm_json_parse(body, length, &limits, NULL, "request body", &document);
  if (status) {
    bool out_of_memory = vlm_status_code_of(status) == VLM_STATUS_RESOURCE_EXHAUSTED &&
                         strstr(vlm_status_message(status), "out of memory");
    if (out_of_memory)
      fail_out_of_memory(error);
    else
      openai_error_set(error, 400, "invalid_request_error", NULL, NULL,
                       "The request body is not valid JSON: %s", vlm_status_message(status));
    vlm_status_free(status);
    return false;
  }
  bool parsed = parse_body(document.root, endpoint, out_request, error);
  vlm_json_document_release(&document);
  if (!parsed) openai_request_release(out_request);
  return parsed;
}

void openai_request_release(openai_request *request) {
  if (!request) return;
  free(request->model);
  free(request->messages_json);
  free(request->prompt);
  for (size_t i = 0; i < request->media_count; i++) release_media(&request->media[i]);
  free(request->media);
  for (size_t i = 0; i < request->stop_count; i++) free(request->stop[i]);
  free(request->stop);
  memset(request, 0, sizeof(*request));
}
