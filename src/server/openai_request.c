/* OpenAI request bodies parsed into plain structs; see openai_request.h.
 *
 * Every top-level field a client may send falls in exactly one class, so
 * nothing a client asks for is silently dropped:
 *
 *   used      messages (chat), prompt (completions), model, stream,
 *             stream_options {include_usage; include_obfuscation ignored},
 *             max_tokens, max_completion_tokens (chat), temperature, top_p,
 *             presence_penalty, frequency_penalty, seed, stop, n (1..16),
 *             logprobs, top_logprobs (chat), the vLLM extensions top_k,
 *             min_p, repetition_penalty, and llama-server's return_progress
 *             (streams only); chat: tools, tool_choice, response_format
 *             (openai_structured.c).
 *             (streams only); logit_bias, echo and vLLM's
 *             chat_template_kwargs, add_generation_prompt,
 *             continue_final_message, min_tokens, ignore_eos,
 *             stop_token_ids, skip_special_tokens,
 *             spaces_between_special_tokens (openai_extensions.c).
 *   ignored   user, metadata, store, service_tier,
 *             prompt_cache_key, prompt_cache_retention, safety_identifier:
 *             bookkeeping that cannot change the generated text (OpenAI
 *             accepts them on every model); accepted only with their
 *             OpenAI types (user a string, metadata an object of at most
 *             16 strings, store a boolean, service_tier one of its names...),
 *             so a client's mistake is not silently swallowed.
 *   refused   unless null or the value that asks for nothing we lack:
 *             chat:        functions, audio, prediction,
 *                          reasoning_effort, verbosity, web_search_options
 *                          (always refused when non-null); function_call
 *                          (accepted only as "none");
 *                          modalities (only ["text"]);
 *             completions: suffix (always refused when non-null),
 *                          best_of (only 1).
 *   unknown   anything else is refused with OpenAI's own wording
 *             ("Unrecognized request argument supplied: X"), as OpenAI does,
 *             or, with accept_unknown_fields (vlm serve
 *             --accept-unknown-fields), ignored and logged as vLLM does.
 *
 * null means "not given" for every optional field, as in OpenAI's and
 * vLLM's schemas. Inside messages, unknown keys are refused too (OpenAI
 * validates messages with additionalProperties: false). */
#include "server/openai_request.h"
#include "server/openai_request_internal.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sampling.h"
#include "io/json.h"

/* JSON nesting a valid request ever needs is small (body, messages,
 * message, content, part, image_url); the cap keeps hostile input cheap. */
#define REQUEST_MAX_DEPTH 32
#define MAX_COMPLETIONS_LOGPROBS 5

/* ---------------------------------------------------------------------- */
/* Errors.                                                                */
/* ---------------------------------------------------------------------- */

char *openai_copy_string(const char *text) {
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
  error->param = openai_copy_string(param);
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

bool openai_fail_invalid_value(openai_error *error, const char *param, const char *format, ...) {
  char detail[512];
  va_list arguments;
  va_start(arguments, format);
  vsnprintf(detail, sizeof(detail), format, arguments);
  va_end(arguments);
  openai_error_set(error, 400, "invalid_request_error", param, NULL,
                   "Invalid value for '%s': %s", param, detail);
  return false;
}

/* A number written as an integer but outside int64 (the JSON reader then
 * keeps only its double): 2^64-1 is still an integer to the client, so it
 * gets a range error, not "expected an integer, but got a decimal". */
static bool is_integer_beyond_64_bits(const vlm_json_value *value) {
  if (value->type != VLM_JSON_NUMBER || value->as.number.is_integer) return false;
  double number = value->as.number.value;
  return isfinite(number) && number == floor(number) && fabs(number) >= 9223372036854775808.0;
}

static const char *json_kind_phrase(const vlm_json_value *value) {
  switch (value->type) {
    case VLM_JSON_NULL: return "null";
    case VLM_JSON_BOOL: return "a boolean";
    case VLM_JSON_NUMBER:
      return value->as.number.is_integer || is_integer_beyond_64_bits(value) ? "an integer" : "a decimal";
    case VLM_JSON_STRING: return "a string";
    case VLM_JSON_ARRAY: return "an array";
    case VLM_JSON_OBJECT: return "an object";
  }
  return "a value";
}

/* OpenAI's own wording for a type mismatch. */
bool openai_fail_type(openai_error *error, const char *param, const char *expected,
                      const vlm_json_value *value) {
  openai_error_set(error, 400, "invalid_request_error", param, "invalid_type",
                   "Invalid type for '%s': expected %s, but got %s instead.", param, expected,
                   json_kind_phrase(value));
  return false;
}

bool openai_fail_unsupported(openai_error *error, const char *param, const char *why) {
  openai_error_set(error, 400, "invalid_request_error", param, "unsupported_parameter",
                   "Unsupported parameter: '%s' %s.", param, why);
  return false;
}

bool openai_fail_out_of_memory(openai_error *error) {
  openai_error_set(error, 500, "server_error", NULL, NULL, "out of memory");
  return false;
}

void openai_build_param(char *out, const char *format, ...) {
  va_list arguments;
  va_start(arguments, format);
  vsnprintf(out, OPENAI_PARAM_CAPACITY, format, arguments);
  va_end(arguments);
}

/* ---------------------------------------------------------------------- */
/* Typed field readers. A missing field or null reads as "not given".      */
/* ---------------------------------------------------------------------- */

/* A key equals `name` byte for byte: "role\u0000x" is not "role" (strcmp
 * would stop at the NUL and let the key pass as known while lookups, which
 * compare lengths, never read it). */
bool openai_key_is(const vlm_json_member *member, const char *name) {
  size_t length = strlen(name);
  return member->key_length == length && memcmp(member->key, name, length) == 0;
}

static const vlm_json_value null_value = {.type = VLM_JSON_NULL};

const vlm_json_value *openai_or_null(const vlm_json_value *value) {
  return value ? value : &null_value;
}

bool openai_is_absent(const vlm_json_value *value) {
  return !value || value->type == VLM_JSON_NULL;
}

/* A string without embedded NUL (we hand strings on as C strings, and a
 * NUL would silently cut them short). */
bool openai_read_plain_string(const vlm_json_value *value, const char *param,
                              openai_error *error, const char **out_text) {
  if (!value || value->type != VLM_JSON_STRING) return openai_fail_type(error, param, "a string", value);
  if (memchr(value->as.string.chars, '\0', value->as.string.length))
    return openai_fail_invalid_value(error, param, "must not contain the NUL character");
  *out_text = value->as.string.chars;
  return true;
}

bool openai_copy_plain_string(const vlm_json_value *value, const char *param, openai_error *error,
                              char **out_copy) {
  const char *text = NULL;
  if (!openai_read_plain_string(value, param, error, &text)) return false;
  *out_copy = openai_copy_string(text);
  return *out_copy ? true : openai_fail_out_of_memory(error);
}

static bool read_bool(const vlm_json_value *value, const char *param, openai_error *error,
                      bool *out) {
  if (value->type != VLM_JSON_BOOL) return openai_fail_type(error, param, "a boolean", value);
  *out = value->as.boolean;
  return true;
}

/* Every integer field has a range; out of it, or beyond 64 bits, is a 400
 * naming the field. */
static bool read_integer_in_range(const vlm_json_value *value, const char *param, int64_t minimum,
                                  int64_t maximum, openai_error *error, int64_t *out) {
  if (is_integer_beyond_64_bits(value))
    return openai_fail_invalid_value(error, param, "must be between %lld and %lld, got an integer beyond "
                              "the 64-bit range", (long long)minimum, (long long)maximum);
  if (!vlm_json_get_int(value, out)) return openai_fail_type(error, param, "an integer", value);
  if (*out < minimum || *out > maximum)
    return openai_fail_invalid_value(error, param, "must be between %lld and %lld, got %lld",
                              (long long)minimum, (long long)maximum, (long long)*out);
  return true;
}

static bool read_number(const vlm_json_value *value, const char *param, openai_error *error,
                        double *out) {
  if (value->type != VLM_JSON_NUMBER) return openai_fail_type(error, param, "a number", value);
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
    return openai_fail_invalid_value(error, param, "must be %s %g and at most %g, got %g",
                              minimum_exclusive ? "greater than" : "at least", minimum, maximum,
                              number);
  /* The engine samples in float: a value that would round to 0 or to a
   * subnormal passes the range above and then fails, or divides by next
   * to nothing, there (and a refusal there blames 'messages'). */
  if (number != 0.0 && fabs(number) < (double)FLT_MIN)
    return openai_fail_invalid_value(error, param, "must be 0 or at least %g in magnitude, got %g",
                              (double)FLT_MIN, number);
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
  /* FIELD_REFUSED: true for the values that ask for nothing we lack
   * (NULL: every non-null value is refused). FIELD_IGNORED: checks the
   * value has the field's OpenAI type (ignored fields are accepted only as
   * OpenAI would accept them, never as anything at all). */
  bool (*is_harmless)(const vlm_json_value *value);
  bool (*check_type)(const vlm_json_value *value, const char *name, openai_error *error);
} field_rule;

/* ---- OpenAI's types for the fields accepted and ignored ---------------- */

static bool ignored_string(const vlm_json_value *value, const char *name, openai_error *error) {
  return value->type == VLM_JSON_STRING || openai_fail_type(error, name, "a string", value);
}

static bool ignored_boolean(const vlm_json_value *value, const char *name, openai_error *error) {
  return value->type == VLM_JSON_BOOL || openai_fail_type(error, name, "a boolean", value);
}

static bool ignored_string_of(const vlm_json_value *value, const char *name, openai_error *error,
                              const char *const *allowed, const char *listed) {
  if (!ignored_string(value, name, error)) return false;
  for (size_t i = 0; allowed[i]; i++)
    if (vlm_json_string_equals(value, allowed[i])) return true;
  return openai_fail_invalid_value(error, name, "expected one of %s", listed);
}

static bool ignored_service_tier(const vlm_json_value *value, const char *name, openai_error *error) {
  static const char *const tiers[] = {"auto", "default", "flex", "scale", "priority", NULL};
  return ignored_string_of(value, name, error, tiers, "'auto', 'default', 'flex', 'scale', 'priority'");
}

static bool ignored_cache_retention(const vlm_json_value *value, const char *name, openai_error *error) {
  static const char *const retentions[] = {"in-memory", "24h", NULL};
  return ignored_string_of(value, name, error, retentions, "'in-memory', '24h'");
}

/* OpenAI's metadata: at most 16 pairs, keys of at most 64 characters,
 * values strings of at most 512. */
#define METADATA_MAX_PAIRS 16
#define METADATA_MAX_KEY 64
#define METADATA_MAX_VALUE 512

static bool ignored_metadata(const vlm_json_value *value, const char *name, openai_error *error) {
  if (value->type != VLM_JSON_OBJECT) return openai_fail_type(error, name, "an object", value);
  if (value->as.object.count > METADATA_MAX_PAIRS)
    return openai_fail_invalid_value(error, name, "at most %d key-value pairs, got %zu", METADATA_MAX_PAIRS,
                                     value->as.object.count);
  for (size_t i = 0; i < value->as.object.count; i++) {
    const vlm_json_member *member = &value->as.object.members[i];
    if (member->key_length > METADATA_MAX_KEY)
      return openai_fail_invalid_value(error, name, "keys of at most %d characters, got one of %zu",
                                       METADATA_MAX_KEY, member->key_length);
    if (member->value.type != VLM_JSON_STRING)
      return openai_fail_type(error, "metadata.*", "a string", &member->value);
    if (member->value.as.string.length > METADATA_MAX_VALUE)
      return openai_fail_invalid_value(error, name, "values of at most %d characters, got one of %zu",
                                       METADATA_MAX_VALUE, member->value.as.string.length);
  }
  return true;
}

static bool is_string_none(const vlm_json_value *value) {
  return vlm_json_string_equals(value, "none");
}

static bool is_text_only_modalities(const vlm_json_value *value) {
  if (value->type != VLM_JSON_ARRAY || value->as.array.count == 0) return false;
  for (size_t i = 0; i < value->as.array.count; i++)
    if (!vlm_json_string_equals(&value->as.array.items[i], "text")) return false;
  return true;
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
    {"return_progress", FOR_BOTH, FIELD_USED, NULL},
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
    /* openai_extensions.c */
    {"logit_bias", FOR_BOTH, FIELD_USED, NULL},
    {"echo", FOR_BOTH, FIELD_USED, NULL},
    {"chat_template_kwargs", FOR_CHAT, FIELD_USED, NULL},
    {"add_generation_prompt", FOR_CHAT, FIELD_USED, NULL},
    {"continue_final_message", FOR_CHAT, FIELD_USED, NULL},
    {"min_tokens", FOR_BOTH, FIELD_USED, NULL},
    {"ignore_eos", FOR_BOTH, FIELD_USED, NULL},
    {"stop_token_ids", FOR_BOTH, FIELD_USED, NULL},
    {"skip_special_tokens", FOR_BOTH, FIELD_USED, NULL},
    {"spaces_between_special_tokens", FOR_BOTH, FIELD_USED, NULL},

    {"user", FOR_BOTH, FIELD_IGNORED, NULL, ignored_string},
    {"metadata", FOR_CHAT, FIELD_IGNORED, NULL, ignored_metadata},
    {"store", FOR_CHAT, FIELD_IGNORED, NULL, ignored_boolean},
    {"service_tier", FOR_CHAT, FIELD_IGNORED, NULL, ignored_service_tier},
    {"parallel_tool_calls", FOR_CHAT, FIELD_USED, NULL},
    {"prompt_cache_key", FOR_CHAT, FIELD_IGNORED, NULL, ignored_string},
    {"prompt_cache_retention", FOR_CHAT, FIELD_IGNORED, NULL, ignored_cache_retention},
    {"safety_identifier", FOR_CHAT, FIELD_IGNORED, NULL, ignored_string},

    {"tools", FOR_CHAT, FIELD_USED, NULL},
    {"tool_choice", FOR_CHAT, FIELD_USED, NULL},
    {"response_format", FOR_CHAT, FIELD_USED, NULL},
    {"functions", FOR_CHAT, FIELD_REFUSED, NULL},
    {"function_call", FOR_CHAT, FIELD_REFUSED, is_string_none},
    {"audio", FOR_CHAT, FIELD_REFUSED, NULL},
    {"modalities", FOR_CHAT, FIELD_REFUSED, is_text_only_modalities},
    {"prediction", FOR_CHAT, FIELD_REFUSED, NULL},
    {"reasoning_effort", FOR_CHAT, FIELD_REFUSED, NULL},
    {"verbosity", FOR_CHAT, FIELD_REFUSED, NULL},
    {"web_search_options", FOR_CHAT, FIELD_REFUSED, NULL},
    {"suffix", FOR_COMPLETIONS, FIELD_REFUSED, NULL},
    {"best_of", FOR_COMPLETIONS, FIELD_REFUSED, is_integer_one},
};

static const field_rule *find_field_rule(const char *name, int endpoint_bit) {
  for (size_t i = 0; i < sizeof(field_rules) / sizeof(field_rules[0]); i++)
    if ((field_rules[i].endpoints & endpoint_bit) && strcmp(field_rules[i].name, name) == 0)
      return &field_rules[i];
  return NULL;
}

/* Refuses unknown fields and refused fields with non-harmless values. */
static bool note_ignored_field(const vlm_json_member *member, openai_request *request, openai_error *error) {
  if (!request->ignored_fields) {
    request->ignored_fields = calloc(OPENAI_MAX_IGNORED_FIELDS, sizeof(char *));
    if (!request->ignored_fields) return openai_fail_out_of_memory(error);
  }
  if (request->ignored_field_count >= OPENAI_MAX_IGNORED_FIELDS) return true;
  char name[101];
  snprintf(name, sizeof(name), "%.100s", member->key);
  char *copy = openai_copy_string(name);
  if (!copy) return openai_fail_out_of_memory(error);
  request->ignored_fields[request->ignored_field_count++] = copy;
  return true;
}

static bool check_top_level_fields(const vlm_json_value *body, openai_endpoint endpoint, bool accept_unknown,
                                   openai_request *request, openai_error *error) {
  int endpoint_bit = endpoint == OPENAI_CHAT_COMPLETIONS ? FOR_CHAT : FOR_COMPLETIONS;
  for (size_t i = 0; i < body->as.object.count; i++) {
    const vlm_json_member *member = &body->as.object.members[i];
    bool plain_key = strlen(member->key) == member->key_length;
    const field_rule *rule = plain_key ? find_field_rule(member->key, endpoint_bit) : NULL;
    if (!rule && accept_unknown) {
      if (!note_ignored_field(member, request, error)) return false;
      continue;
    }
    if (!rule) {
      /* The key is client text: print it bounded and as-is (it is JSON-escaped later). */
      openai_error_set(error, 400, "invalid_request_error", member->key, NULL,
                       "Unrecognized request argument supplied: %.100s", member->key);
      return false;
    }
    if (rule->handling == FIELD_USED || openai_is_absent(&member->value)) continue;
    if (rule->handling == FIELD_IGNORED) {
      if (rule->check_type && !rule->check_type(&member->value, rule->name, error)) return false;
      continue;
    }
    if (rule->is_harmless && rule->is_harmless(&member->value)) continue;
    return openai_fail_unsupported(error, rule->name, "is not supported by this server");
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
    if (openai_is_absent(value)) continue;
    int64_t tokens = 0;
    if (!read_integer_in_range(value, names[i], 1, OPENAI_MAX_TOKENS_LIMIT, error, &tokens))
      return false;
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
    if (openai_is_absent(value)) continue;
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
  if (!openai_is_absent(top_k)) {
    int64_t value = 0;
    if (!read_integer_in_range(top_k, "top_k", -1, INT32_MAX, error, &value)) return false;
    /* vLLM: -1 (and 0) turn top-k off; the client's "off" still overrides
     * a model default, so the flag is set either way. */
    request->sampling.top_k = value < 0 ? 0 : (int32_t)value;
    request->has_top_k = true;
  }
  const vlm_json_value *seed = vlm_json_object_get(body, "seed");
  if (!openai_is_absent(seed)) {
    /* vLLM's range (a torch.long); the sampler takes the bits as they are. */
    int64_t value = 0;
    if (!read_integer_in_range(seed, "seed", INT64_MIN, INT64_MAX, error, &value)) return false;
    request->sampling.seed = (uint64_t)value;
    request->has_seed = true;
  }
  return true;
}

/* n: choices per prompt; the engine needs a slot for each (checked by
 * the handler against --parallel). */
static bool parse_n(const vlm_json_value *body, openai_request *request, openai_error *error) {
  request->n = 1;
  const vlm_json_value *value = vlm_json_object_get(body, "n");
  if (openai_is_absent(value)) return true;
  int64_t count = 0;
  if (!read_integer_in_range(value, "n", 1, OPENAI_MAX_CHOICES, error, &count)) return false;
  request->n = (int32_t)count;
  size_t prompts = 1 + request->more_prompt_count;
  if (prompts * (size_t)count > OPENAI_MAX_ANSWER_CHOICES)
    return openai_fail_invalid_value(error, "n", "%zu prompts x n=%lld is over the limit of %d choices per request",
                                     prompts, (long long)count, OPENAI_MAX_ANSWER_CHOICES);
  return true;
}

static bool parse_chat_logprobs(const vlm_json_value *body, openai_request *request,
                                openai_error *error) {
  const vlm_json_value *logprobs = vlm_json_object_get(body, "logprobs");
  if (!openai_is_absent(logprobs) && !read_bool(logprobs, "logprobs", error, &request->logprobs))
    return false;
  const vlm_json_value *top = vlm_json_object_get(body, "top_logprobs");
  if (openai_is_absent(top)) return true;
  int64_t count = 0;
  if (!read_integer_in_range(top, "top_logprobs", 0, VLM_MAX_TOP_LOGPROBS, error, &count))
    return false;
  if (!request->logprobs)
    return openai_fail_invalid_value(error, "top_logprobs", "requires logprobs to be true");
  request->top_logprobs = (int32_t)count;
  request->sampling.top_logprobs = (int32_t)count;
  return true;
}

/* The legacy endpoint's logprobs is an integer: how many alternatives to
 * report per token (0..5); N > 0 turns log-probabilities on. */
static bool parse_completions_logprobs(const vlm_json_value *body, openai_request *request,
                                       openai_error *error) {
  const vlm_json_value *logprobs = vlm_json_object_get(body, "logprobs");
  if (openai_is_absent(logprobs)) return true;
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
  if (!openai_read_plain_string(value, param, error, &text)) return false;
  /* An empty stop string would end every completion before it starts. */
  if (text[0] == '\0') return openai_fail_invalid_value(error, param, "must not be empty");
  /* The engine holds back up to the longest stop string's length of text
   * and matches every string after each token: bounded here. */
  if (value->as.string.length > OPENAI_MAX_STOP_BYTES)
    return openai_fail_invalid_value(error, param, "must be at most %d bytes long, got %zu",
                              OPENAI_MAX_STOP_BYTES, value->as.string.length);
  char *copy = openai_copy_string(text);
  if (!copy) return openai_fail_out_of_memory(error);
  request->stop[request->stop_count++] = copy;
  return true;
}

static bool parse_stop(const vlm_json_value *body, openai_request *request, openai_error *error) {
  const vlm_json_value *stop = vlm_json_object_get(body, "stop");
  if (openai_is_absent(stop)) return true;
  if (stop->type != VLM_JSON_STRING && stop->type != VLM_JSON_ARRAY)
    return openai_fail_type(error, "stop", "a string or an array of strings", stop);
  size_t count = stop->type == VLM_JSON_STRING ? 1 : stop->as.array.count;
  if (count > OPENAI_MAX_STOP_STRINGS)
    return openai_fail_invalid_value(error, "stop", "at most %d stop strings are allowed, got %zu",
                              OPENAI_MAX_STOP_STRINGS, count);
  if (count == 0) return true;
  request->stop = calloc(count, sizeof(char *));
  if (!request->stop) return openai_fail_out_of_memory(error);
  if (stop->type == VLM_JSON_STRING) return add_stop_string(stop, "stop", request, error);
  for (size_t i = 0; i < count; i++) {
    char param[OPENAI_PARAM_CAPACITY];
    openai_build_param(param, "stop[%zu]", i);
    if (!add_stop_string(&stop->as.array.items[i], param, request, error)) return false;
  }
  return true;
}

static bool parse_stream(const vlm_json_value *body, openai_request *request,
                         openai_error *error) {
  const vlm_json_value *stream = vlm_json_object_get(body, "stream");
  if (!openai_is_absent(stream) && !read_bool(stream, "stream", error, &request->stream)) return false;
  /* Progress chunks exist only in a stream: asked for without one, it
   * would be accepted and ignored. */
  const vlm_json_value *progress = vlm_json_object_get(body, "return_progress");
  if (!openai_is_absent(progress) && !read_bool(progress, "return_progress", error, &request->return_progress))
    return false;
  if (request->return_progress && !request->stream)
    return openai_fail_invalid_value(error, "return_progress", "is only allowed when stream is true");
  const vlm_json_value *options = vlm_json_object_get(body, "stream_options");
  if (openai_is_absent(options)) return true;
  /* OpenAI and vLLM both refuse stream_options without streaming. */
  if (!request->stream)
    return openai_fail_invalid_value(error, "stream_options", "is only allowed when stream is true");
  if (options->type != VLM_JSON_OBJECT)
    return openai_fail_type(error, "stream_options", "an object", options);
  for (size_t i = 0; i < options->as.object.count; i++) {
    const vlm_json_member *member = &options->as.object.members[i];
    char param[OPENAI_PARAM_CAPACITY];
    openai_build_param(param, "stream_options.%.100s", member->key);
    bool flag = false;
    if (openai_key_is(member, "include_usage")) {
      if (!openai_is_absent(&member->value) && !read_bool(&member->value, param, error, &flag))
        return false;
      request->include_usage = flag;
    } else if (openai_key_is(member, "include_obfuscation")) {
      /* Padding against side channels; harmless to ignore. */
      if (!openai_is_absent(&member->value) && !read_bool(&member->value, param, error, &flag))
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
  if (openai_is_absent(model)) return true;
  return openai_copy_plain_string(model, "model", error, &request->model);
}

/* ---------------------------------------------------------------------- */
/* Completions prompt.                                                    */
/* ---------------------------------------------------------------------- */

/* A token prompt: an array of ids (bounded by the body's size; checked
 * against the vocabulary by the engine). */
static bool read_ids_into(const vlm_json_value *array, const char *param_prefix, int32_t **out_ids,
                          int64_t *out_count, openai_error *error) {
  size_t count = array->as.array.count;
  *out_ids = malloc(count * sizeof(int32_t));
  if (!*out_ids) return openai_fail_out_of_memory(error);
  for (size_t i = 0; i < count; i++) {
    int64_t id = 0;
    if (!vlm_json_get_int(&array->as.array.items[i], &id) || id < 0 || id > INT32_MAX) {
      char param[OPENAI_PARAM_CAPACITY];
      openai_build_param(param, "%s[%zu]", param_prefix, i);
      return openai_fail_invalid_value(error, param, "a token prompt holds token ids (integers from 0)");
    }
    (*out_ids)[i] = (int32_t)id;
  }
  *out_count = (int64_t)count;
  return true;
}

static bool read_prompt_ids(const vlm_json_value *array, openai_request *request, openai_error *error) {
  return read_ids_into(array, "prompt", &request->prompt_ids, &request->prompt_id_count, error);
}

static bool is_id_array(const vlm_json_value *value) {
  return value->type == VLM_JSON_ARRAY && value->as.array.count > 0 &&
         value->as.array.items[0].type == VLM_JSON_NUMBER;
}

/* One entry of a prompt list into `text` or `ids`. */
static bool read_list_prompt(const vlm_json_value *item, size_t index, char **text, int32_t **ids,
                             int64_t *id_count, openai_error *error) {
  char param[OPENAI_PARAM_CAPACITY];
  openai_build_param(param, "prompt[%zu]", index);
  if (is_id_array(item)) return read_ids_into(item, param, ids, id_count, error);
  if (item->type != VLM_JSON_STRING)
    return openai_fail_invalid_value(error, param, "a prompt list holds strings or arrays of token ids");
  return openai_copy_plain_string(item, param, error, text);
}

/* A list of prompts (at most OPENAI_MAX_PROMPTS): the first into
 * request->prompt / prompt_ids, the others into more_prompts. */
static bool parse_prompt_list(const vlm_json_value *list, openai_request *request, openai_error *error) {
  size_t count = list->as.array.count;
  if (count > OPENAI_MAX_PROMPTS)
    return openai_fail_invalid_value(error, "prompt", "a list of %zu prompts is over the limit of %d", count,
                                     OPENAI_MAX_PROMPTS);
  if (!read_list_prompt(&list->as.array.items[0], 0, &request->prompt, &request->prompt_ids,
                        &request->prompt_id_count, error))
    return false;
  request->more_prompts = calloc(count - 1, sizeof(*request->more_prompts));
  if (!request->more_prompts) return openai_fail_out_of_memory(error);
  for (size_t i = 1; i < count; i++) {
    openai_prompt *more = &request->more_prompts[i - 1];
    request->more_prompt_count = i;
    if (!read_list_prompt(&list->as.array.items[i], i, &more->text, &more->ids, &more->id_count, error))
      return false;
  }
  return true;
}

static bool parse_prompt(const vlm_json_value *body, openai_request *request,
                         openai_error *error) {
  const vlm_json_value *prompt = openai_or_null(vlm_json_object_get(body, "prompt"));
  /* OpenAI's forms: a string, an array of strings, an array of ids, an
   * array of id arrays (a list of prompts, parse_prompt_list). */
  if (is_id_array(prompt)) return read_prompt_ids(prompt, request, error);
  if (prompt->type == VLM_JSON_ARRAY) {
    if (prompt->as.array.count > 1) return parse_prompt_list(prompt, request, error);
    if (prompt->as.array.count == 0)
      return openai_fail_invalid_value(error, "prompt", "must not be an empty list");
    prompt = &prompt->as.array.items[0];
    if (is_id_array(prompt)) return read_prompt_ids(prompt, request, error);
    if (prompt->type != VLM_JSON_STRING)
      return openai_fail_invalid_value(error, "prompt", "must be a string or an array of token ids");
  }
  if (prompt->type != VLM_JSON_STRING) return openai_fail_type(error, "prompt", "a string", prompt);
  return openai_copy_plain_string(prompt, "prompt", error, &request->prompt);
}

/* ---------------------------------------------------------------------- */
/* Entry points.                                                          */
/* ---------------------------------------------------------------------- */

static bool parse_body(const vlm_json_value *body, openai_endpoint endpoint,
                       const openai_parse_options *options, openai_request *request,
                       openai_error *error) {
  openai_content_format content_format = options ? options->content_format : OPENAI_CONTENT_AS_GIVEN;
  bool accept_unknown = options && options->accept_unknown_fields;
  if (body->type != VLM_JSON_OBJECT) {
    openai_error_set(error, 400, "invalid_request_error", NULL, NULL,
                     "The request body must be a JSON object, got %s.", json_kind_phrase(body));
    return false;
  }
  bool is_chat = endpoint == OPENAI_CHAT_COMPLETIONS;
  return check_top_level_fields(body, endpoint, accept_unknown, request, error) &&
         (is_chat ? openai_parse_messages(body, content_format, request, error) &&
                        openai_parse_structured(body, options, request, error)
                  : parse_prompt(body, request, error)) &&
         parse_model(body, request, error) && parse_stream(body, request, error) &&
         parse_max_tokens(body, request, error) && parse_float_fields(body, request, error) &&
         parse_top_k_and_seed(body, request, error) && parse_n(body, request, error) &&
         (is_chat ? parse_chat_logprobs(body, request, error)
                  : parse_completions_logprobs(body, request, error)) &&
         parse_stop(body, request, error) && openai_parse_extensions(body, request, error);
}

bool openai_request_parse(openai_endpoint endpoint, const char *body, size_t length,
                          const openai_parse_options *options, openai_request *out_request,
                          openai_error *error) {
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
      openai_fail_out_of_memory(error);
    else
      openai_error_set(error, 400, "invalid_request_error", NULL, NULL,
                       "The request body is not valid JSON: %s", vlm_status_message(status));
    vlm_status_free(status);
    return false;
  }
  bool parsed = parse_body(document.root, endpoint, options, out_request, error);
  vlm_json_document_release(&document);
  if (!parsed) openai_request_release(out_request);
  return parsed;
}

void openai_request_release(openai_request *request) {
  if (!request) return;
  free(request->model);
  free(request->messages_json);
  free(request->prompt);
  free(request->prompt_ids);
  for (size_t i = 0; i < request->more_prompt_count; i++) {
    free(request->more_prompts[i].text);
    free(request->more_prompts[i].ids);
  }
  free(request->more_prompts);
  for (size_t i = 0; i < request->media_count; i++) openai_media_release(&request->media[i]);
  free(request->media);
  for (size_t i = 0; i < request->stop_count; i++) free(request->stop[i]);
  free(request->stop);
  free(request->grammar);
  openai_extensions_release(request);
  memset(request, 0, sizeof(*request));
}
