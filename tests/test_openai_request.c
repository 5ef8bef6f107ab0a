#include "server/openai_request.h"

#include "engine/sampling.h"
#include "server/tool_calls.h"
#include "test.h"
#include "vlm/chat_template.h"

static bool parse(openai_endpoint endpoint, const char *body, openai_request *request,
                  openai_error *error) {
  memset(error, 0, sizeof(*error));
  return openai_request_parse(endpoint, body, strlen(body), NULL, request, error);
}

/* Asserts that `body` is refused with 400 invalid_request_error, `param`
 * (NULL: none) and a message containing `fragment`. */
static void check_refused_at(int line, openai_endpoint endpoint, const char *body,
                             const char *param, const char *fragment) {
  openai_request request;
  openai_error error;
  if (parse(endpoint, body, &request, &error)) {
    fprintf(stderr, "  line %d: %s: accepted %s\n", line, test_current, body);
    test_failures++;
    openai_request_release(&request);
    return;
  }
  bool param_matches = param ? error.param && strcmp(error.param, param) == 0 : !error.param;
  if (error.http_status != 400 || strcmp(error.type, "invalid_request_error") != 0 ||
      !param_matches || !error.message || !strstr(error.message, fragment)) {
    fprintf(stderr, "  line %d: %s: %s gave %d %s param=%s \"%s\", expected param=%s with \"%s\"\n",
            line, test_current, body, error.http_status, error.type,
            error.param ? error.param : "(null)", error.message ? error.message : "(null)",
            param ? param : "(null)", fragment);
    test_failures++;
  }
  /* Whatever was refused leaves nothing allocated in the request. */
  CHECK(request.messages_json == NULL && request.media == NULL && request.stop == NULL);
  openai_error_release(&error);
}

#define CHECK_REFUSED(endpoint, body, param, fragment) \
  check_refused_at(__LINE__, (endpoint), (body), (param), (fragment))
#define CHAT OPENAI_CHAT_COMPLETIONS
#define COMPLETIONS OPENAI_COMPLETIONS
#define HELLO "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"

static void check_accepted_at(int line, openai_endpoint endpoint, const char *body) {
  openai_request request;
  openai_error error;
  if (!parse(endpoint, body, &request, &error)) {
    fprintf(stderr, "  line %d: %s: refused %s: %s\n", line, test_current, body,
            error.message ? error.message : "(null)");
    test_failures++;
    openai_error_release(&error);
    return;
  }
  openai_request_release(&request);
}

#define CHECK_ACCEPTED(endpoint, body) check_accepted_at(__LINE__, (endpoint), (body))

static void chat_with_text_and_image_parts(void) {
  const char *body =
      "{\"model\":\"tiny\",\"messages\":["
      "{\"role\":\"system\",\"content\":\"Be brief.\"},"
      "{\"role\":\"user\",\"content\":["
      "{\"type\":\"text\",\"text\":\"What is \\\"this\\\"?\"},"
      "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,AAAA\",\"detail\":\"low\"}},"
      "{\"type\":\"text\",\"text\":\"and\"},"
      "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://example.com/b.jpg\"}}]}],"
      "\"max_tokens\":16,\"temperature\":0.5,\"stream\":true,"
      "\"stream_options\":{\"include_usage\":true},\"stop\":[\"\\n\\n\",\"END\"],\"seed\":42,"
      "\"top_k\":-1,\"logprobs\":true,\"top_logprobs\":3,\"user\":\"someone\"}";
  openai_request request;
  openai_error error;
  CHECK(parse(CHAT, body, &request, &error));
  CHECK_STR_EQ(request.messages_json,
               "[{\"role\":\"system\",\"content\":\"Be brief.\"},"
               "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"What is \\\"this\\\"?\"},"
               "{\"type\":\"image\"},{\"type\":\"text\",\"text\":\"and\"},{\"type\":\"image\"}]}]");
  CHECK_INT_EQ(request.endpoint, CHAT);
  CHECK_STR_EQ(request.model, "tiny");
  CHECK_INT_EQ(request.media_count, 2);
  if (request.media_count == 2) {
    CHECK_INT_EQ(request.media[0].kind, OPENAI_MEDIA_IMAGE);
    CHECK_STR_EQ(request.media[0].url, "data:image/png;base64,AAAA");
    CHECK_STR_EQ(request.media[0].param, "messages[1].content[1].image_url.url");
    CHECK_STR_EQ(request.media[1].url, "https://example.com/b.jpg");
    CHECK_STR_EQ(request.media[1].param, "messages[1].content[3].image_url.url");
  }
  CHECK(request.stream && request.include_usage);
  CHECK_INT_EQ(request.max_tokens, 16);
  CHECK(request.has_temperature && request.sampling.temperature == 0.5f);
  CHECK(request.has_top_k && request.sampling.top_k == 0); /* -1: off, but given */
  CHECK(request.has_seed && request.sampling.seed == 42);
  CHECK(!request.has_top_p && request.sampling.top_p == 1.0f);
  CHECK(!request.has_min_p && !request.has_repetition_penalty);
  CHECK(request.logprobs);
  CHECK_INT_EQ(request.top_logprobs, 3);
  CHECK_INT_EQ(request.sampling.top_logprobs, 3);
  CHECK_INT_EQ(request.stop_count, 2);
  if (request.stop_count == 2) {
    CHECK_STR_EQ(request.stop[0], "\n\n");
    CHECK_STR_EQ(request.stop[1], "END");
  }
  CHECK(request.prompt == NULL);
  openai_request_release(&request);
}

static void string_content_and_roles(void) {
  const char *body =
      "{\"messages\":["
      "{\"role\":\"developer\",\"content\":[{\"type\":\"text\",\"text\":\"rules\"}]},"
      "{\"role\":\"user\",\"content\":\"caf\\u00e9\",\"name\":\"ann\"},"
      "{\"role\":\"assistant\",\"content\":\"ok\",\"tool_calls\":[]},"
      "{\"role\":\"tool\",\"content\":\"42\",\"tool_call_id\":\"call_1\"}]}";
  openai_request request;
  openai_error error;
  CHECK(parse(CHAT, body, &request, &error));
  /* developer renders as system; string content stays a string. */
  CHECK_STR_EQ(request.messages_json,
               "[{\"role\":\"system\",\"content\":[{\"type\":\"text\",\"text\":\"rules\"}]},"
               "{\"role\":\"user\",\"content\":\"caf\xc3\xa9\",\"name\":\"ann\"},"
               "{\"role\":\"assistant\",\"content\":\"ok\"},"
               "{\"role\":\"tool\",\"content\":\"42\",\"tool_call_id\":\"call_1\"}]");
  CHECK_INT_EQ(request.media_count, 0);
  CHECK(request.model == NULL);
  openai_request_release(&request);
}

static void defaults_leave_sampling_greedy(void) {
  openai_request request;
  openai_error error;
  CHECK(parse(CHAT, "{" HELLO ",\"temperature\":null,\"stop\":null,\"model\":null}", &request,
              &error));
  vlm_sampling_params greedy = vlm_sampling_params_greedy();
  CHECK(request.sampling.temperature == greedy.temperature && request.sampling.top_k == greedy.top_k &&
        request.sampling.top_p == greedy.top_p && request.sampling.min_p == greedy.min_p &&
        request.sampling.repetition_penalty == greedy.repetition_penalty &&
        request.sampling.presence_penalty == greedy.presence_penalty &&
        request.sampling.frequency_penalty == greedy.frequency_penalty &&
        request.sampling.seed == greedy.seed && request.sampling.top_logprobs == 0);
  CHECK(!request.has_temperature && !request.has_top_p && !request.has_top_k && !request.has_seed);
  CHECK(!request.has_min_p && !request.has_repetition_penalty && !request.has_presence_penalty &&
        !request.has_frequency_penalty);
  CHECK(!request.stream && !request.include_usage && !request.logprobs);
  CHECK_INT_EQ(request.max_tokens, 0);
  CHECK_INT_EQ(request.stop_count, 0);
  openai_request_release(&request);
}

static void every_sampling_field_is_stored(void) {
  openai_request request;
  openai_error error;
  CHECK(parse(CHAT,
              "{" HELLO ",\"max_tokens\":5,\"max_completion_tokens\":7,\"top_p\":0.9,"
              "\"top_k\":40,\"min_p\":0.05,\"presence_penalty\":-1.5,\"frequency_penalty\":2,"
              "\"repetition_penalty\":1.1,\"seed\":-1,\"n\":1,\"stop\":\"###\"}",
              &request, &error));
  CHECK_INT_EQ(request.max_tokens, 7); /* max_completion_tokens wins */
  CHECK(request.has_top_p && request.sampling.top_p == 0.9f);
  CHECK(request.has_top_k && request.sampling.top_k == 40);
  CHECK(request.has_min_p && request.sampling.min_p == 0.05f);
  CHECK(request.has_presence_penalty && request.sampling.presence_penalty == -1.5f);
  CHECK(request.has_frequency_penalty && request.sampling.frequency_penalty == 2.0f);
  CHECK(request.has_repetition_penalty && request.sampling.repetition_penalty == 1.1f);
  CHECK(request.has_seed && request.sampling.seed == UINT64_MAX);
  CHECK(!request.has_temperature && request.sampling.temperature == 0.0f);
  CHECK_INT_EQ(request.stop_count, 1);
  if (request.stop_count == 1) CHECK_STR_EQ(request.stop[0], "###");
  CHECK_OK(vlm_sampling_params_validate(&request.sampling));
  openai_request_release(&request);
}

static void audio_parts_are_kept_as_media(void) {
  openai_request request;
  openai_error error;
  CHECK(parse(CHAT,
              "{\"messages\":[{\"role\":\"user\",\"content\":["
              "{\"type\":\"input_audio\",\"input_audio\":{\"data\":\"UklGRg==\",\"format\":\"wav\"}},"
              "{\"type\":\"image_url\",\"image_url\":{\"url\":\"file:///m/a.png\"}},"
              "{\"type\":\"text\",\"text\":\"transcribe\"}]}]}",
              &request, &error));
  CHECK_STR_EQ(request.messages_json,
               "[{\"role\":\"user\",\"content\":[{\"type\":\"audio\"},{\"type\":\"image\"},"
               "{\"type\":\"text\",\"text\":\"transcribe\"}]}]");
  CHECK_INT_EQ(request.media_count, 2);
  if (request.media_count == 2) {
    CHECK_INT_EQ(request.media[0].kind, OPENAI_MEDIA_AUDIO);
    CHECK(request.media[0].url == NULL);
    CHECK_STR_EQ(request.media[0].audio_data, "UklGRg==");
    CHECK_STR_EQ(request.media[0].audio_format, "wav");
    CHECK_STR_EQ(request.media[0].param, "messages[0].content[0].input_audio.data");
    CHECK_INT_EQ(request.media[1].kind, OPENAI_MEDIA_IMAGE);
    CHECK_STR_EQ(request.media[1].param, "messages[0].content[1].image_url.url");
  }
  openai_request_release(&request);
  /* audio_url parts: a URL, like image_url's. */
  CHECK(parse(CHAT,
              "{\"messages\":[{\"role\":\"user\",\"content\":["
              "{\"type\":\"text\",\"text\":\"hear\"},"
              "{\"type\":\"audio_url\",\"audio_url\":{\"url\":\"data:audio/wav;base64,UklGRg==\"}}]}]}",
              &request, &error));
  CHECK_STR_EQ(request.messages_json,
               "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hear\"},{\"type\":\"audio\"}]}]");
  CHECK_INT_EQ(request.media_count, 1);
  if (request.media_count == 1) {
    CHECK_INT_EQ(request.media[0].kind, OPENAI_MEDIA_AUDIO);
    CHECK_STR_EQ(request.media[0].url, "data:audio/wav;base64,UklGRg==");
    CHECK(request.media[0].audio_data == NULL && request.media[0].audio_format == NULL);
    CHECK_STR_EQ(request.media[0].param, "messages[0].content[1].audio_url.url");
  }
  openai_request_release(&request);
  static const char *const refused[][2] = {
      {"{\"type\":\"audio_url\",\"audio_url\":\"data:audio/wav;base64,UklGRg==\"}", "messages[0].content[0].audio_url"},
      {"{\"type\":\"audio_url\",\"audio_url\":{\"url\":\"\"}}", "messages[0].content[0].audio_url.url"},
      {"{\"type\":\"audio_url\",\"audio_url\":{\"url\":\"x\",\"detail\":\"low\"}}", "messages[0].content[0].audio_url"},
      {"{\"type\":\"audio_url\"}", "messages[0].content[0].audio_url"},
  };
  for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
    char body[512];
    snprintf(body, sizeof(body), "{\"messages\":[{\"role\":\"user\",\"content\":[%s]}]}", refused[i][0]);
    CHECK(!parse(CHAT, body, &request, &error));
    CHECK(error.param && strncmp(error.param, refused[i][1], strlen(refused[i][1])) == 0);
    if (error.param && strncmp(error.param, refused[i][1], strlen(refused[i][1])) != 0)
      fprintf(stderr, "  case %zu: param %s\n", i, error.param);
    openai_error_release(&error);
    openai_request_release(&request);
  }
}

static void refuses_fields_that_would_change_the_output(void) {
  static const struct {
    openai_endpoint endpoint;
    const char *fields;
    const char *param;
  } cases[] = {
      {CHAT, "\"functions\":[{\"name\":\"f\"}]", "functions"},
      {CHAT, "\"function_call\":\"auto\"", "function_call"},
      {CHAT, "\"audio\":{\"voice\":\"alloy\",\"format\":\"wav\"}", "audio"},
      {CHAT, "\"modalities\":[\"text\",\"audio\"]", "modalities"},
      {CHAT, "\"modalities\":[]", "modalities"},
      {CHAT, "\"prediction\":{\"type\":\"content\",\"content\":\"x\"}", "prediction"},
      {CHAT, "\"reasoning_effort\":\"low\"", "reasoning_effort"},
      {CHAT, "\"verbosity\":\"low\"", "verbosity"},
      {CHAT, "\"web_search_options\":{}", "web_search_options"},
      {COMPLETIONS, "\"suffix\":\"end\"", "suffix"},
      {COMPLETIONS, "\"best_of\":2", "best_of"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char body[512];
    snprintf(body, sizeof(body), "{%s,%s}",
             cases[i].endpoint == CHAT ? HELLO : "\"prompt\":\"p\"", cases[i].fields);
    CHECK_REFUSED(cases[i].endpoint, body, cases[i].param, "is not supported");
  }
}

static void accepts_harmless_values_and_ignored_fields(void) {
  CHECK_ACCEPTED(CHAT, "{" HELLO ",\"tool_choice\":\"none\",\"function_call\":\"none\","
                       "\"response_format\":{\"type\":\"text\"},\"logit_bias\":{},"
                       "\"modalities\":[\"text\"],\"tools\":null,\"audio\":null,\"n\":1}");
  CHECK_ACCEPTED(CHAT, "{" HELLO ",\"user\":\"u\",\"metadata\":{\"k\":\"v\"},\"store\":false,"
                       "\"service_tier\":\"auto\",\"parallel_tool_calls\":true,"
                       "\"prompt_cache_key\":\"k\",\"prompt_cache_retention\":\"24h\","
                       "\"safety_identifier\":\"s\"}");
  CHECK_ACCEPTED(COMPLETIONS, "{\"prompt\":\"p\",\"echo\":false,\"best_of\":1,\"suffix\":null,"
                              "\"logit_bias\":{},\"user\":\"u\",\"n\":1}");
  CHECK_ACCEPTED(CHAT, "{" HELLO ",\"stream\":true,\"stream_options\":{\"include_obfuscation\":false}}");
}

static void refuses_unknown_fields(void) {
  CHECK_REFUSED(CHAT, "{" HELLO ",\"temprature\":1}", "temprature",
                "Unrecognized request argument supplied: temprature");
  /* Fields of the other endpoint are unknown here. */
  CHECK_REFUSED(CHAT, "{" HELLO ",\"prompt\":\"p\"}", "prompt", "Unrecognized");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"suffix\":\"x\"}", "suffix", "Unrecognized");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":\"p\"," HELLO "}", "messages", "Unrecognized");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":\"p\",\"max_completion_tokens\":3}",
                "max_completion_tokens", "Unrecognized");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":\"p\",\"top_logprobs\":3}", "top_logprobs",
                "Unrecognized");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"stream\":true,\"stream_options\":{\"x\":1}}",
                "stream_options.x", "Unrecognized");
  CHECK_REFUSED(CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\",\"foo\":1}]}",
                "messages[0].foo", "Unrecognized argument 'foo'");
  CHECK_REFUSED(CHAT,
                "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\","
                "\"cache_control\":{}}]}]}",
                "messages[0].content[0].cache_control", "Unrecognized");
  CHECK_REFUSED(CHAT,
                "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\",\"tool_call_id\":\"c\"}]}",
                "messages[0].tool_call_id", "only tool messages");
  CHECK_REFUSED(CHAT,
                "{\"messages\":[{\"role\":\"assistant\",\"content\":\"x\",\"tool_call_id\":\"c\"}]}",
                "messages[0].tool_call_id", "only tool messages");
}

static void refuses_wrong_types_and_ranges(void) {
  static const struct {
    const char *fields;
    const char *param;
    const char *fragment;
  } cases[] = {
      {"\"temperature\":2.5", "temperature", "Invalid value for 'temperature'"},
      {"\"temperature\":-0.1", "temperature", "at least 0"},
      {"\"temperature\":\"hot\"", "temperature", "expected a number, but got a string"},
      {"\"temperature\":NaN", "temperature", "Invalid value"},
      {"\"top_p\":0", "top_p", "greater than 0"},
      {"\"top_p\":1.5", "top_p", "at most 1"},
      {"\"top_k\":-2", "top_k", "between -1 and"},
      {"\"top_k\":1.5", "top_k", "expected an integer, but got a decimal"},
      {"\"min_p\":1.5", "min_p", "at most 1"},
      {"\"presence_penalty\":3", "presence_penalty", "at most 2"},
      {"\"frequency_penalty\":-2.5", "frequency_penalty", "at least -2"},
      {"\"repetition_penalty\":0", "repetition_penalty", "greater than 0"},
      {"\"repetition_penalty\":Infinity", "repetition_penalty", "Invalid value"},
      {"\"seed\":1.5", "seed", "expected an integer"},
      {"\"seed\":\"1\"", "seed", "expected an integer"},
      {"\"max_tokens\":0", "max_tokens", "between 1 and 2147483647"},
      {"\"max_tokens\":2.5", "max_tokens", "expected an integer"},
      {"\"max_completion_tokens\":-1", "max_completion_tokens", "between 1 and"},
      {"\"n\":0", "n", "between 1 and 16"},
      {"\"n\":17", "n", "between 1 and 16"},
      {"\"n\":\"1\"", "n", "expected an integer"},
      {"\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"]", "stop", "at most 4"},
      {"\"stop\":[\"a\",1]", "stop[1]", "expected a string"},
      {"\"stop\":\"\"", "stop", "must not be empty"},
      {"\"stop\":7", "stop", "expected a string or an array of strings"},
      {"\"stop\":\"a\\u0000b\"", "stop", "NUL"},
      {"\"logprobs\":1", "logprobs", "expected a boolean"},
      {"\"top_logprobs\":21", "top_logprobs", "between 0 and 20"},
      {"\"top_logprobs\":2", "top_logprobs", "requires logprobs"},
      {"\"logprobs\":false,\"top_logprobs\":2", "top_logprobs", "requires logprobs"},
      {"\"stream\":\"true\"", "stream", "expected a boolean"},
      {"\"stream_options\":{\"include_usage\":true}", "stream_options", "only allowed when stream"},
      {"\"stream\":true,\"stream_options\":{\"include_usage\":1}", "stream_options.include_usage",
       "expected a boolean"},
      {"\"stream\":true,\"stream_options\":[]", "stream_options", "expected an object"},
      {"\"return_progress\":true", "return_progress", "only allowed when stream"},
      {"\"stream\":true,\"return_progress\":1", "return_progress", "expected a boolean"},
      {"\"model\":5", "model", "expected a string"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char body[512];
    snprintf(body, sizeof(body), "{" HELLO ",%s}", cases[i].fields);
    CHECK_REFUSED(CHAT, body, cases[i].param, cases[i].fragment);
  }
}

/* Issue 13: max_tokens = 2^63-1 reached the engine, whose capacity sum
 * wrapped and whose slot buffer of (max_tokens + 1) * 4 bytes wrapped to
 * 0: a SIGSEGV from one request. Every integer field has a range. */
static void numeric_fields_have_ranges(void) {
  CHECK_REFUSED(CHAT, "{" HELLO ",\"max_tokens\":9223372036854775807}", "max_tokens",
                "between 1 and 2147483647");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"max_completion_tokens\":9223372036854775807}",
                "max_completion_tokens", "between 1 and 2147483647");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"stream\":true,\"max_tokens\":9223372036854775807}", "max_tokens",
                "between 1 and 2147483647");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":\"Hi\",\"max_tokens\":9223372036854775807}", "max_tokens",
                "between 1 and 2147483647");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":\"Hi\",\"max_tokens\":2147483648}", "max_tokens",
                "got 2147483648");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":\"Hi\",\"max_tokens\":99999999999999999999}", "max_tokens",
                "beyond the 64-bit range");
  CHECK_ACCEPTED(COMPLETIONS, "{\"prompt\":\"Hi\",\"max_tokens\":2147483647}");
  /* 2^64-1 is an integer, not "a decimal". */
  CHECK_REFUSED(CHAT, "{" HELLO ",\"seed\":18446744073709551615}", "seed",
                "must be between -9223372036854775808 and 9223372036854775807, got an integer beyond");
  CHECK_ACCEPTED(CHAT, "{" HELLO ",\"seed\":-9223372036854775808}");
  CHECK_ACCEPTED(CHAT, "{" HELLO ",\"seed\":9223372036854775807}");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"n\":18446744073709551615}", "n", "beyond the 64-bit range");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"top_k\":9223372036854775807}", "top_k", "between -1 and 2147483647");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"logprobs\":true,\"top_logprobs\":-1}", "top_logprobs", "between 0 and 20");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":\"Hi\",\"logprobs\":6}", "logprobs", "between 0 and 5");
}

/* A double that passes the range but is 0 or subnormal as the engine's
 * float failed there, blamed on 'messages' (a repetition_penalty of
 * 1e-50 "must be positive"). */
static void float_fields_are_checked_as_floats(void) {
  static const char *const fields[] = {"repetition_penalty", "top_p", "temperature", "min_p",
                                       "presence_penalty", "frequency_penalty"};
  for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
    char body[256];
    snprintf(body, sizeof(body), "{" HELLO ",\"%s\":1e-50}", fields[i]);
    CHECK_REFUSED(CHAT, body, fields[i], "must be 0 or at least");
    snprintf(body, sizeof(body), "{" HELLO ",\"%s\":1e-40}", fields[i]);
    CHECK_REFUSED(CHAT, body, fields[i], "must be 0 or at least");
  }
  CHECK_ACCEPTED(CHAT, "{" HELLO ",\"repetition_penalty\":1e-30,\"temperature\":0}");
}

/* A key with a NUL compared equal to a known one under strcmp, so it
 * passed the unknown-key check and was then never read. */
static void keys_with_nul_are_unknown(void) {
  CHECK_REFUSED(CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\",\"role\\u0000x\":\"system\"}]}",
                "messages[0].role", "Unrecognized argument");
  CHECK_REFUSED(CHAT,
                "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\","
                "\"text\\u0000\":\"b\"}]}]}",
                "messages[0].content[0].text", "Unrecognized argument");
  CHECK_REFUSED(CHAT,
                "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":"
                "{\"url\":\"data:image/png;base64,AAAA\",\"url\\u0000\":\"x\"}}]}]}",
                "messages[0].content[0].image_url.url", "Unrecognized argument");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"stream\":true,\"stream_options\":{\"include_usage\\u0000\":true}}",
                "stream_options.include_usage", "Unrecognized");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"model\\u0000\":\"x\"}", "model", "Unrecognized request argument");
}

static void stop_strings_are_bounded(void) {
  char body[4096];
  char stop[OPENAI_MAX_STOP_BYTES + 2];
  memset(stop, 'x', sizeof(stop) - 1);
  stop[sizeof(stop) - 1] = '\0';
  snprintf(body, sizeof(body), "{" HELLO ",\"stop\":[\"a\",\"%s\"]}", stop);
  CHECK_REFUSED(CHAT, body, "stop[1]", "at most 1024 bytes");
  stop[OPENAI_MAX_STOP_BYTES] = '\0';
  snprintf(body, sizeof(body), "{" HELLO ",\"stop\":\"%s\"}", stop);
  CHECK_ACCEPTED(CHAT, body);
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":\"p\",\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}", "stop", "at most 4");
}

static char *messages_in_format(openai_content_format format, const char *body) {
  openai_parse_options options = {.content_format = format};
  openai_request request;
  openai_error error = {0};
  if (!openai_request_parse(CHAT, body, strlen(body), &options, &request, &error)) {
    fprintf(stderr, "  %s: refused %s: %s\n", test_current, body, error.message);
    openai_error_release(&error);
    test_failures++;
    return NULL;
  }
  char *messages = request.messages_json;
  request.messages_json = NULL;
  openai_request_release(&request);
  return messages;
}

/* vLLM's content formats: a template that loops over parts gets string
 * content as one text part (LLaVA's dropped it); a template that prints
 * content gets text parts joined with "\n". */
static void content_reaches_the_template_in_its_format(void) {
  const char *text_body =
      "{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hi\"}]}";
  const char *parts_body =
      "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
      "{\"type\":\"text\",\"text\":\"b\\u0000c\"}]}]}";
  const char *image_body =
      "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
      "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,AAAA\"}}]}]}";
  char *messages = messages_in_format(OPENAI_CONTENT_PARTS, text_body);
  CHECK_STR_EQ(messages, "[{\"role\":\"system\",\"content\":[{\"type\":\"text\",\"text\":\"Be brief.\"}]},"
                         "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hi\"}]}]");
  free(messages);
  messages = messages_in_format(OPENAI_CONTENT_STRING, text_body);
  CHECK_STR_EQ(messages, "[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Hi\"}]");
  free(messages);
  messages = messages_in_format(OPENAI_CONTENT_STRING, parts_body);
  CHECK_STR_EQ(messages, "[{\"role\":\"user\",\"content\":\"a\\nb\\u0000c\"}]");
  free(messages);
  messages = messages_in_format(OPENAI_CONTENT_PARTS, parts_body);
  CHECK_STR_EQ(messages, "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
                         "{\"type\":\"text\",\"text\":\"b\\u0000c\"}]}]");
  free(messages);
  /* Media parts stay parts (the handler refuses them for a string template). */
  messages = messages_in_format(OPENAI_CONTENT_STRING, image_body);
  CHECK_STR_EQ(messages, "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"image\"}]}]");
  free(messages);
}

/* Issue 13, item 5, end to end through LLaVA's real template: OpenAI's
 * usual "content": "text" rendered as "USER: ASSISTANT:" (a 200 whose
 * model never saw the words). In the template's own format it arrives. */
static void string_content_reaches_llavas_prompt(void) {
  vlm_chat_template *llava = NULL;
  CHECK_OK(vlm_chat_template_load(VLM_SOURCE_DIR "/tests/models/llava", &llava));
  if (!llava) return;
  CHECK_INT_EQ(vlm_chat_template_content_format(llava), VLM_CHAT_CONTENT_OPENAI);
  const char *body = "{\"messages\":[{\"role\":\"user\",\"content\":\"What is the capital of France?\"}]}";
  vlm_chat_template_options options = {.add_generation_prompt = true};
  for (int as_given = 0; as_given < 2; as_given++) {
    openai_parse_options parse_options = {.content_format = as_given ? OPENAI_CONTENT_AS_GIVEN : OPENAI_CONTENT_PARTS};
    openai_request request;
    openai_error error = {0};
    CHECK(openai_request_parse(CHAT, body, strlen(body), &parse_options, &request, &error));
    char *prompt = NULL;
    CHECK_OK(vlm_chat_template_render(llava, request.messages_json, strlen(request.messages_json), &options,
                                      &prompt, NULL));
    /* As given, the template drops the string (what Transformers does too). */
    CHECK_STR_EQ(prompt, as_given ? "USER: ASSISTANT:" : "USER: What is the capital of France? ASSISTANT:");
    free(prompt);
    openai_request_release(&request);
  }
  vlm_chat_template_release(llava);
}

static void refuses_malformed_messages(void) {
  static const struct {
    const char *messages;
    const char *param;
    const char *fragment;
  } cases[] = {
      {"{}", "messages", "expected an array"},
      {"[]", "messages", "at least one message"},
      {"[\"hi\"]", "messages[0]", "expected an object"},
      {"[{\"content\":\"hi\"}]", "messages[0].role", "expected a string, but got null"},
      {"[{\"role\":\"robot\",\"content\":\"hi\"}]", "messages[0].role", "must be one of"},
      {"[{\"role\":\"function\",\"content\":\"hi\"}]", "messages[0].role", "must be one of"},
      {"[{\"role\":\"user\"}]", "messages[0].content", "expected a string or an array"},
      {"[{\"role\":\"user\",\"content\":null}]", "messages[0].content", "but got null"},
      {"[{\"role\":\"user\",\"content\":[]}]", "messages[0].content", "empty array"},
      {"[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":null,"
       "\"tool_calls\":[{\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"f\","
       "\"arguments\":\"{x\"}}]}]",
       "messages[1].tool_calls[0].function.arguments", "is not valid JSON"},
      {"[{\"role\":\"assistant\",\"content\":null}]", "messages[0].content", "but got null"},
      {"[{\"role\":\"assistant\",\"content\":\"x\",\"function_call\":{\"name\":\"f\"}}]",
       "messages[0].function_call", "is not supported"},
      {"[{\"role\":\"assistant\",\"content\":\"x\",\"refusal\":\"no\"}]", "messages[0].refusal",
       "is not supported"},
      {"[{\"role\":\"user\",\"content\":\"x\",\"tool_calls\":[]}]", "messages[0].tool_calls",
       "only assistant messages"},
      {"[{\"role\":\"system\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:,\"}}]}]",
       "messages[0].content[0].type", "only allowed in user messages"},
      {"[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":5}}]}]",
       "messages[0].content[0].image_url.url", "expected a string, but got an integer"},
      {"[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{}}]}]",
       "messages[0].content[0].image_url.url", "expected a string"},
      {"[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":\"\"}}]}]",
       "messages[0].content[0].image_url.url", "must not be empty"},
      {"[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":\"http://x/a.png\"}]}]",
       "messages[0].content[0].image_url", "expected an object"},
      {"[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:,\","
       "\"detail\":\"medium\"}}]}]",
       "messages[0].content[0].image_url.detail", "must be \"auto\""},
      {"[{\"role\":\"user\",\"content\":[{\"type\":\"file\",\"file\":{}}]}]",
       "messages[0].content[0].type", "unsupported content part type 'file'"},
      {"[{\"role\":\"user\",\"content\":[{\"text\":\"a\"}]}]", "messages[0].content[0].type",
       "expected a string"},
      {"[{\"role\":\"user\",\"content\":[{\"type\":\"text\"}]}]", "messages[0].content[0].text",
       "expected a string"},
      {"[{\"role\":\"user\",\"content\":[\"a\"]}]", "messages[0].content[0]", "expected an object"},
      {"[{\"role\":\"user\",\"content\":[{\"type\":\"input_audio\",\"input_audio\":{\"data\":\"AA==\","
       "\"format\":\"aac\"}}]}]",
       "messages[0].content[0].input_audio.format", "must be \"wav\""},
      {"[{\"role\":\"user\",\"content\":[{\"type\":\"input_audio\",\"input_audio\":{\"format\":\"wav\"}}]}]",
       "messages[0].content[0].input_audio.data", "expected a string"},
      {"[{\"role\":\"user\",\"content\":\"a\",\"name\":3}]", "messages[0].name", "expected a string"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char body[512];
    snprintf(body, sizeof(body), "{\"messages\":%s}", cases[i].messages);
    CHECK_REFUSED(CHAT, body, cases[i].param, cases[i].fragment);
  }
}

static void completions_prompt_forms(void) {
  openai_request request;
  openai_error error;
  CHECK(parse(COMPLETIONS, "{\"model\":\"m\",\"prompt\":\"Once upon\",\"max_tokens\":3,"
                           "\"logprobs\":2}",
              &request, &error));
  CHECK_INT_EQ(request.endpoint, COMPLETIONS);
  CHECK_STR_EQ(request.prompt, "Once upon");
  CHECK(request.messages_json == NULL && request.media_count == 0);
  CHECK(request.logprobs);
  CHECK_INT_EQ(request.top_logprobs, 2);
  CHECK_INT_EQ(request.max_tokens, 3);
  openai_request_release(&request);

  CHECK(parse(COMPLETIONS, "{\"prompt\":[\"only one\"],\"logprobs\":0}", &request, &error));
  CHECK_STR_EQ(request.prompt, "only one");
  CHECK(!request.logprobs);
  openai_request_release(&request);

  CHECK_ACCEPTED(COMPLETIONS, "{\"prompt\":\"\"}");
  /* A list of prompts: the first in prompt / prompt_ids, the others in
   * more_prompts, strings and id arrays mixed. */
  CHECK(parse(COMPLETIONS, "{\"prompt\":[\"a\",[4,5],\"c\"]}", &request, &error));
  CHECK_STR_EQ(request.prompt, "a");
  CHECK_INT_EQ(request.more_prompt_count, 2);
  if (request.more_prompt_count == 2) {
    CHECK(request.more_prompts[0].id_count == 2 && request.more_prompts[0].ids[1] == 5);
    CHECK_STR_EQ(request.more_prompts[1].text, "c");
  }
  openai_request_release(&request);
  CHECK(parse(COMPLETIONS, "{\"prompt\":[[1],[2]]}", &request, &error));
  CHECK(request.prompt_id_count == 1 && request.more_prompt_count == 1 && request.more_prompts[0].ids[0] == 2);
  openai_request_release(&request);
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":[]}", "prompt", "empty list");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":[\"a\",7]}", "prompt[1]", "strings or arrays of token ids");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":[\"a\",[1,-2]]}", "prompt[1][1]", "token ids");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":[\"a\",\"b\"],\"echo\":true}", "echo", "list of prompts");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":[1,\"a\"]}", "prompt[1]", "token ids");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":[1,-2]}", "prompt[1]", "token ids");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":[{}]}", "prompt", "array of token ids");
  /* A token prompt: ids as given, alone or as the only prompt of a list. */
  CHECK(parse(COMPLETIONS, "{\"prompt\":[5,0,7]}", &request, &error));
  CHECK(!request.prompt && request.prompt_id_count == 3 && request.prompt_ids[2] == 7);
  openai_request_release(&request);
  CHECK(parse(COMPLETIONS, "{\"prompt\":[[9]],\"echo\":true}", &request, &error));
  CHECK(request.prompt_id_count == 1 && request.prompt_ids[0] == 9 && request.echo_prompt_ids);
  openai_request_release(&request);
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":5}", "prompt", "expected a string");
  CHECK_REFUSED(COMPLETIONS, "{\"model\":\"m\"}", "prompt", "expected a string, but got null");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":\"a\\u0000b\"}", "prompt", "NUL");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":\"p\",\"logprobs\":6}", "logprobs", "between 0 and 5");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":\"p\",\"logprobs\":true}", "logprobs",
                "expected an integer");
  CHECK(parse(COMPLETIONS, "{\"prompt\":\"p\",\"n\":3}", &request, &error));
  CHECK_INT_EQ(request.n, 3);
  openai_request_release(&request);
  /* prompts x n is bounded (each choice is a slot's work). */
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":[\"a\",\"b\",\"c\",\"d\",\"e\"],\"n\":16}", "n", "over the limit of 64");
}

static void refuses_bodies_that_are_not_json_objects(void) {
  CHECK_REFUSED(CHAT, "", NULL, "not valid JSON");
  CHECK_REFUSED(CHAT, "{\"messages\":", NULL, "not valid JSON");
  CHECK_REFUSED(CHAT, "[1]", NULL, "must be a JSON object");
  CHECK_REFUSED(COMPLETIONS, "\"prompt\"", NULL, "must be a JSON object");
  /* Nesting deeper than any valid request is refused before we look at it. */
  char deep[256];
  size_t length = 0;
  length += (size_t)snprintf(deep, sizeof(deep), "{\"metadata\":");
  for (int i = 0; i < 40; i++) deep[length++] = '[';
  for (int i = 0; i < 40; i++) deep[length++] = ']';
  deep[length++] = '}';
  deep[length] = '\0';
  CHECK_REFUSED(CHAT, deep, NULL, "not valid JSON");
}

static void error_object_serialises_as_openai_does(void) {
  openai_error error;
  openai_error_set(&error, 400, "invalid_request_error", "messages[0].content", NULL,
                   "bad \"%s\"\n", "quote");
  char *json = openai_error_to_json(&error);
  CHECK_STR_EQ(json, "{\"error\":{\"message\":\"bad \\\"quote\\\"\\n\",\"type\":"
                     "\"invalid_request_error\",\"param\":\"messages[0].content\",\"code\":null}}");
  free(json);
  openai_error_release(&error);
  CHECK(error.message == NULL && error.param == NULL);
  openai_error_set(&error, 401, "authentication_error", NULL, "invalid_api_key", "no key");
  json = openai_error_to_json(&error);
  CHECK_STR_EQ(json, "{\"error\":{\"message\":\"no key\",\"type\":\"authentication_error\","
                     "\"param\":null,\"code\":\"invalid_api_key\"}}");
  CHECK_INT_EQ(error.http_status, 401);
  free(json);
  openai_error_release(&error);
  openai_error_release(NULL);
  /* Client bytes quoted in a message may be invalid UTF-8 (a JSON syntax
   * error quotes the input; a key cut at 100 bytes may split a
   * character); the error body stays valid UTF-8. */
  openai_error_set(&error, 400, "invalid_request_error", "k\xC3", NULL, "bad \xFF\xC3\xA9 byte");
  json = openai_error_to_json(&error);
  CHECK_STR_EQ(json, "{\"error\":{\"message\":\"bad \xEF\xBF\xBD\xC3\xA9 byte\",\"type\":"
                     "\"invalid_request_error\",\"param\":\"k\xEF\xBF\xBD\",\"code\":null}}");
  free(json);
  openai_error_release(&error);
  openai_request request;
  CHECK(!parse(CHAT, "{\"a\xD0\":1}", &request, &error));
  json = openai_error_to_json(&error);
  CHECK(json && strstr(json, "not valid JSON"));
  free(json);
  openai_error_release(&error);
}

/* llama-server's return_progress: prompt_progress chunks, in a stream. */
static void return_progress_asks_for_progress_in_a_stream(void) {
  const char *bodies[][2] = {{"{" HELLO ",\"stream\":true,\"return_progress\":true}", "1"},
                             {"{\"prompt\":\"hi\",\"stream\":true,\"return_progress\":true}", "1"},
                             {"{" HELLO ",\"return_progress\":false}", "0"},
                             {"{" HELLO ",\"return_progress\":null}", "0"}};
  for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
    openai_request request;
    openai_error error;
    openai_endpoint endpoint = strstr(bodies[i][0], "prompt") ? COMPLETIONS : CHAT;
    CHECK(parse(endpoint, bodies[i][0], &request, &error));
    CHECK_INT_EQ(request.return_progress, bodies[i][1][0] == '1');
    openai_request_release(&request);
    openai_error_release(&error);
  }
}

/* response_format, tools and tool_choice (openai_structured.c). */
static void parses_structured_outputs_and_tools(void) {
  openai_request request;
  openai_error error;
  CHECK(parse(CHAT, "{" HELLO ",\"response_format\":{\"type\":\"json_object\"}}", &request, &error));
  CHECK(request.grammar && strstr(request.grammar, "root ::= object"));
  openai_request_release(&request);
  CHECK(parse(CHAT, "{" HELLO ",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"n\","
                    "\"strict\":true,\"schema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}}}}}}",
              &request, &error));
  CHECK(request.grammar && strstr(request.grammar, "\\\"a\\\""));
  openai_request_release(&request);
  CHECK_REFUSED(CHAT, "{" HELLO ",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{}}}",
                "response_format.json_schema.name", "expected a string");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"response_format\":{\"type\":\"text\",\"extra\":1}}", "response_format.extra",
                "Unrecognized argument");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"n\","
                      "\"schema\":{\"type\":\"string\",\"format\":\"hostname\"}}}}",
                "response_format.json_schema.schema", "'format' 'hostname'");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"tool_choice\":{\"type\":\"function\"}}", "tool_choice", "must be");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"tool_choice\":\"required\"}", "tool_choice", "needs tools");
  const char *tools = "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":"
                      "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"boolean\"}},\"required\":[\"x\"]}}}]";
  char body[1024];
  snprintf(body, sizeof(body), "{" HELLO ",%s}", tools);
  CHECK(parse(CHAT, body, &request, &error));
  CHECK(request.grammar == NULL && request.tool_format == NULL); /* no parser given: auto parses nothing */
  CHECK(strncmp(request.messages_json, "{\"messages\":[", 13) == 0 && strstr(request.messages_json, "\"tools\":[{"));
  openai_request_release(&request);
  snprintf(body, sizeof(body), "{" HELLO ",%s,\"tool_choice\":\"required\"}", tools);
  CHECK_REFUSED(CHAT, body, "tool_choice", "--tool-call-parser");
  openai_parse_options options = {.tool_format = tool_format_by_name("hermes")};
  snprintf(body, sizeof(body), "{" HELLO ",%s,\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"f\"}}}",
           tools);
  memset(&error, 0, sizeof(error));
  CHECK(openai_request_parse(CHAT, body, strlen(body), &options, &request, &error));
  CHECK(request.grammar && strstr(request.grammar, "<tool_call>") && request.tool_format == options.tool_format);
  openai_request_release(&request);
  snprintf(body, sizeof(body), "{" HELLO ",%s,\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"g\"}}}",
           tools);
  memset(&error, 0, sizeof(error));
  CHECK(!openai_request_parse(CHAT, body, strlen(body), &options, &request, &error));
  CHECK(error.message && strstr(error.message, "not in tools"));
  openai_error_release(&error);
  /* history: the call's arguments string becomes an object for the template */
  CHECK(parse(CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":null,"
                    "\"tool_calls\":[{\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"f\","
                    "\"arguments\":\"{\\\"x\\\": true}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"c\",\"content\":\"1\"}]}",
              &request, &error));
  CHECK(request.messages_json && strstr(request.messages_json, "\"arguments\":{\"x\":true}"));
  openai_request_release(&request);
}

/* vLLM's extension fields, logit_bias and echo (openai_extensions.c). */
static void extension_fields_are_stored(void) {
  openai_request request;
  openai_error error;
  CHECK(parse(CHAT,
              "{" HELLO ",\"chat_template_kwargs\":{\"enable_thinking\":false,\"x\":[1]},"
              "\"add_generation_prompt\":false,\"continue_final_message\":true,\"min_tokens\":2,"
              "\"max_tokens\":5,\"ignore_eos\":true,\"stop_token_ids\":[7,9],\"skip_special_tokens\":false,"
              "\"spaces_between_special_tokens\":false,\"logit_bias\":{\"3\":100,\"12\":-100.0,\"0\":0.5}}",
              &request, &error));
  CHECK_STR_EQ(request.chat_template_kwargs_json, "{\"enable_thinking\":false,\"x\":[1]}");
  CHECK(request.no_generation_prompt && request.continue_final_message && request.ignore_eos);
  CHECK(request.keep_special_tokens);
  CHECK_INT_EQ(request.min_tokens, 2);
  CHECK_INT_EQ(request.stop_token_id_count, 2);
  CHECK_INT_EQ(request.stop_token_ids[1], 9);
  CHECK_INT_EQ(request.logit_bias_count, 3);
  CHECK_INT_EQ(request.logit_bias[1].token, 12);
  CHECK_NEAR(request.logit_bias[1].bias, -100.0, 0);
  CHECK_NEAR(request.logit_bias[2].bias, 0.5, 0);
  CHECK(!request.echo_text);
  openai_request_release(&request);
  /* Defaults: generation prompt on, special tokens skipped, nothing else. */
  CHECK(parse(CHAT, "{" HELLO "}", &request, &error));
  CHECK(!request.no_generation_prompt && !request.continue_final_message && !request.keep_special_tokens);
  CHECK(!request.chat_template_kwargs_json && !request.logit_bias_count && !request.stop_token_id_count);
  openai_request_release(&request);
}

static void echo_starts_the_answer(void) {
  openai_request request;
  openai_error error;
  CHECK(parse(COMPLETIONS, "{\"prompt\":\"Once upon\",\"echo\":true}", &request, &error));
  CHECK_STR_EQ(request.echo_text, "Once upon");
  openai_request_release(&request);
  /* Chat: the final message's content when it is the assistant's. */
  CHECK(parse(CHAT,
              "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\","
              "\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":\"b\"}]}],"
              "\"echo\":true,\"add_generation_prompt\":false,\"continue_final_message\":true}",
              &request, &error));
  CHECK_STR_EQ(request.echo_text, "a\nb");
  openai_request_release(&request);
  /* The final message is the user's: nothing to echo (vLLM's ""). */
  CHECK(parse(CHAT, "{" HELLO ",\"echo\":true}", &request, &error));
  CHECK(!request.echo_text);
  openai_request_release(&request);
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":\"p\",\"echo\":true,\"logprobs\":1}", "echo", "prompt logprobs");
}

static void extension_fields_are_validated(void) {
  CHECK_REFUSED(CHAT, "{" HELLO ",\"chat_template_kwargs\":[1]}", "chat_template_kwargs", "expected an object");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"chat_template_kwargs\":{\"messages\":[]}}", "chat_template_kwargs.messages",
                "set by the server");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"continue_final_message\":true}", "continue_final_message",
                "add_generation_prompt");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"add_generation_prompt\":1}", "add_generation_prompt", "expected a boolean");
  CHECK_REFUSED(COMPLETIONS, "{\"prompt\":\"p\",\"chat_template_kwargs\":{}}", "chat_template_kwargs",
                "Unrecognized");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"min_tokens\":-1}", "min_tokens", "between 0");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"min_tokens\":4,\"max_tokens\":3}", "min_tokens", "max_tokens=3");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"ignore_eos\":\"yes\"}", "ignore_eos", "expected a boolean");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"stop_token_ids\":[1,\"2\"]}", "stop_token_ids[1]", "expected an integer");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"stop_token_ids\":[-3]}", "stop_token_ids[0]", "token id");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"logit_bias\":{\"5\":101}}", "logit_bias.5", "between -100 and 100");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"logit_bias\":{\"5\":\"1\"}}", "logit_bias.5", "expected a number");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"logit_bias\":{\"a\":1}}", "logit_bias.a", "token ids");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"logit_bias\":{\"-1\":1}}", "logit_bias.-1", "token ids");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"logit_bias\":{\"99999999999\":1}}", "logit_bias.99999999999", "token ids");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"logit_bias\":{\"1\":1,\"01\":2}}", "logit_bias.01", "second time");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"logit_bias\":[]}", "logit_bias", "expected an object");
  CHECK_REFUSED(CHAT, "{" HELLO ",\"skip_special_tokens\":0}", "skip_special_tokens", "expected a boolean");
  CHECK_ACCEPTED(CHAT, "{" HELLO ",\"logit_bias\":{},\"stop_token_ids\":[],\"chat_template_kwargs\":null,"
                       "\"echo\":false,\"min_tokens\":0,\"ignore_eos\":null}");
}

/* vlm serve --accept-unknown-fields: vLLM's ignore-and-log. */
static void unknown_fields_can_be_accepted(void) {
  openai_request request;
  openai_error error = {0};
  openai_parse_options options = {.accept_unknown_fields = true};
  const char *body = "{" HELLO ",\"temprature\":1,\"guided_foo\":{}}";
  CHECK(openai_request_parse(CHAT, body, strlen(body), &options, &request, &error));
  CHECK_INT_EQ(request.ignored_field_count, 2);
  CHECK_STR_EQ(request.ignored_fields[0], "temprature");
  openai_request_release(&request);
  /* Known-but-refused fields stay refused. */
  body = "{" HELLO ",\"temprature\":1,\"functions\":[{\"name\":\"f\"}]}";
  CHECK(!openai_request_parse(CHAT, body, strlen(body), &options, &request, &error));
  CHECK_STR_EQ(error.param, "functions");
  openai_error_release(&error);
  openai_request_release(&request);
}

TEST_MAIN(TEST(parses_structured_outputs_and_tools), TEST(chat_with_text_and_image_parts), TEST(string_content_and_roles),
          TEST(defaults_leave_sampling_greedy), TEST(every_sampling_field_is_stored),
          TEST(audio_parts_are_kept_as_media), TEST(refuses_fields_that_would_change_the_output),
          TEST(accepts_harmless_values_and_ignored_fields), TEST(refuses_unknown_fields),
          TEST(refuses_wrong_types_and_ranges), TEST(refuses_malformed_messages),
          TEST(completions_prompt_forms), TEST(refuses_bodies_that_are_not_json_objects),
          TEST(error_object_serialises_as_openai_does), TEST(numeric_fields_have_ranges),
          TEST(float_fields_are_checked_as_floats), TEST(keys_with_nul_are_unknown),
          TEST(stop_strings_are_bounded), TEST(content_reaches_the_template_in_its_format),
          TEST(string_content_reaches_llavas_prompt), TEST(return_progress_asks_for_progress_in_a_stream),
          TEST(extension_fields_are_stored), TEST(echo_starts_the_answer),
          TEST(extension_fields_are_validated), TEST(unknown_fields_can_be_accepted))
