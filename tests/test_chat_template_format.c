/* vlm_chat_template_content_format: which content shape a template reads,
 * as vLLM's resolve_chat_template_content_format("auto") decides it; and
 * the codes vlm_chat_template_render fails with. */
#include "core/status.h"
#include "test.h"
#include "vlm/chat_template.h"

static vlm_chat_content_format format_of(const char *text) {
  vlm_chat_template *chat_template = NULL;
  vlm_status status = vlm_chat_template_create(text, strlen(text), NULL, NULL, "test", &chat_template);
  if (status) {
    fprintf(stderr, "  %s: cannot parse %s: %s\n", test_current, text, vlm_status_message(status));
    vlm_status_free(status);
    test_failures++;
    return VLM_CHAT_CONTENT_STRING;
  }
  vlm_chat_content_format format = vlm_chat_template_content_format(chat_template);
  vlm_chat_template_release(chat_template);
  return format;
}

static vlm_chat_content_format format_of_model(const char *model) {
  vlm_chat_template *chat_template = NULL;
  char directory[512];
  snprintf(directory, sizeof(directory), "%s/tests/models/%s", VLM_SOURCE_DIR, model);
  CHECK_OK(vlm_chat_template_load(directory, &chat_template));
  if (!chat_template) return VLM_CHAT_CONTENT_STRING;
  vlm_chat_content_format format = vlm_chat_template_content_format(chat_template);
  vlm_chat_template_release(chat_template);
  return format;
}

static void the_tiny_models_templates(void) {
  /* LLaVA loops over message['content'] | selectattr(...): parts. */
  CHECK_INT_EQ(format_of_model("llava"), VLM_CHAT_CONTENT_OPENAI);
  /* Qwen2 prints message['content']; Llama-2 sets content = message['content']
   * (a string use, not a loop) in a loop over loop_messages = messages[1:]. */
  CHECK_INT_EQ(format_of_model("qwen2"), VLM_CHAT_CONTENT_STRING);
  CHECK_INT_EQ(format_of_model("llama"), VLM_CHAT_CONTENT_STRING);
}

/* Qwen3-VL loops over a macro's parameter and passes it message.content
 * (render_content(message.content, True)): parts, as Transformers hands them
 * (vLLM's walk would say string). The same macro called with something else,
 * or looping over another parameter, stays a string. */
static void content_passed_to_a_looping_macro_is_parts(void) {
  CHECK_INT_EQ(format_of_model("qwen3_vl"), VLM_CHAT_CONTENT_OPENAI);
  CHECK_INT_EQ(format_of("{% macro r(c, x) %}{% for i in c %}{{ i.text }}{% endfor %}{% endmacro %}"
                         "{% for m in messages %}{{ r(m.content, 1) }}{% endfor %}"),
               VLM_CHAT_CONTENT_OPENAI);
  CHECK_INT_EQ(format_of("{% macro r(c, x) %}{% for i in c %}{{ i.text }}{% endfor %}{% endmacro %}"
                         "{% for m in messages %}{% set t = r(x=2, c=m['content']) %}{{ t }}{% endfor %}"),
               VLM_CHAT_CONTENT_OPENAI);
  CHECK_INT_EQ(format_of("{% macro r(c, x) %}{% for i in c %}{{ i }}{% endfor %}{% endmacro %}"
                         "{% for m in messages %}{{ r([1, 2], m.content) }}{% endfor %}"),
               VLM_CHAT_CONTENT_STRING);
  CHECK_INT_EQ(format_of("{% macro r(c) %}{{ c }}{% endmacro %}{% for m in messages %}{{ r(m.content) }}{% endfor %}"),
               VLM_CHAT_CONTENT_STRING);
}

static void loops_over_content_are_parts(void) {
  CHECK_INT_EQ(format_of("{% for m in messages %}{% for p in m['content'] %}{{ p.text }}{% endfor %}{% endfor %}"),
               VLM_CHAT_CONTENT_OPENAI);
  CHECK_INT_EQ(format_of("{% for m in messages %}{% for p in m.content %}{{ p.text }}{% endfor %}{% endfor %}"),
               VLM_CHAT_CONTENT_OPENAI);
  /* Through a slice, a filter and a test, on either side. */
  CHECK_INT_EQ(format_of("{% for m in messages[1:] %}{% for p in m.content[1:] | reverse %}{% endfor %}{% endfor %}"),
               VLM_CHAT_CONTENT_OPENAI);
  /* Qwen2-VL's shape: a string branch and a loop branch. */
  CHECK_INT_EQ(format_of("{% for message in messages %}{% if message['content'] is string %}{{ message['content'] }}"
                         "{% else %}{% for content in message['content'] %}{{ content['text'] }}{% endfor %}"
                         "{% endif %}{% endfor %}"),
               VLM_CHAT_CONTENT_OPENAI);
  /* The conversation through assignments, breadth first. */
  CHECK_INT_EQ(format_of("{% set a = messages %}{% set b = a | list %}{% for m in b %}"
                         "{% for p in m['content'] %}{% endfor %}{% endfor %}"),
               VLM_CHAT_CONTENT_OPENAI);
  /* Inside a macro and a generation block, and in a loop's else branch. */
  CHECK_INT_EQ(format_of("{% macro f() %}{% for m in messages %}{% for p in m.content %}{% endfor %}{% endfor %}"
                         "{% endmacro %}{{ f() }}"),
               VLM_CHAT_CONTENT_OPENAI);
  CHECK_INT_EQ(format_of("{% for m in messages %}{% generation %}{% for p in m.content %}{% endfor %}"
                         "{% endgeneration %}{% endfor %}"),
               VLM_CHAT_CONTENT_OPENAI);
}

static void everything_else_is_a_string(void) {
  CHECK_INT_EQ(format_of("{% for m in messages %}{{ m['content'] }}{% endfor %}"), VLM_CHAT_CONTENT_STRING);
  CHECK_INT_EQ(format_of("Hello"), VLM_CHAT_CONTENT_STRING);
  /* A loop over content that is not a message's. */
  CHECK_INT_EQ(format_of("{% for p in messages[0]['content'] %}{% endfor %}"), VLM_CHAT_CONTENT_STRING);
  CHECK_INT_EQ(format_of("{% for m in other %}{% for p in m.content %}{% endfor %}{% endfor %}"),
               VLM_CHAT_CONTENT_STRING);
  CHECK_INT_EQ(format_of("{% for m in messages %}{% for p in m.parts %}{% endfor %}{% endfor %}"),
               VLM_CHAT_CONTENT_STRING);
  /* vLLM's walk asserts single-name targets and falls back to "string". */
  CHECK_INT_EQ(format_of("{% set ns = namespace(x=1) %}{% set ns.m = messages %}{% for m in messages %}"
                         "{% for p in m.content %}{% endfor %}{% endfor %}"),
               VLM_CHAT_CONTENT_STRING);
  CHECK_INT_EQ(format_of("{% for i, m in messages %}{% endfor %}{% for m in messages %}"
                         "{% for p in m.content %}{% endfor %}{% endfor %}"),
               VLM_CHAT_CONTENT_STRING);
  /* Assignments that feed each other terminate (vLLM's walk would not). */
  CHECK_INT_EQ(format_of("{% set a = b %}{% set b = a %}{% set a = messages %}{% for m in b %}{% endfor %}"),
               VLM_CHAT_CONTENT_STRING);
}

static vlm_status render_text(const char *text, const char *messages, size_t max_output_bytes) {
  vlm_chat_template *chat_template = NULL;
  VLM_RETURN_IF_ERROR(vlm_chat_template_create(text, strlen(text), NULL, NULL, "t", &chat_template));
  vlm_chat_template_options options = {.max_output_bytes = max_output_bytes};
  char *prompt = NULL;
  vlm_status status = vlm_chat_template_render(chat_template, messages, strlen(messages), &options, &prompt, NULL);
  free(prompt);
  vlm_chat_template_release(chat_template);
  return status;
}

/* The renderer's bounds and overflows depend only on the conversation and
 * the template: a request error, never "busy" or "context length". */
static void render_limits_are_request_errors(void) {
  const char *messages = "[{\"role\":\"user\",\"content\":\"hi\"}]";
  CHECK_ERROR(render_text("{% for i in range(100) %}xx{% endfor %}", messages, 10), VLM_STATUS_INVALID_ARGUMENT, "output limit");
  CHECK_ERROR(render_text("{{ range(1000000) | list }}", messages, 0), VLM_STATUS_INVALID_ARGUMENT,
              "Range too big");
  CHECK_ERROR(render_text("{{ 999999999999999999 * 999999999999999999 }}", messages, 0), VLM_STATUS_INVALID_ARGUMENT,
              "overflow");
  CHECK_ERROR(render_text("{{ raise_exception('no') }}", messages, 0), VLM_STATUS_INVALID_ARGUMENT, "no");
}

/* Phi-4-multimodal's template (tests/models/phi4_multimodal): content
 * printed as a string. */
#define PHI4_TEMPLATE                                                                                  \
  "{% for message in messages %}{{ '<|' + message['role'] + '|>' + message['content'] + '<|end|>' }}" \
  "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"

/* Renders `messages` with media placeholders <I> and <A>; *out is the
 * prompt (free it) or NULL on failure. */
static vlm_status render_with_placeholders(const char *text, const char *messages, const char *image,
                                           const char *audio, char **out) {
  *out = NULL;
  vlm_chat_template *chat_template = NULL;
  VLM_RETURN_IF_ERROR(vlm_chat_template_create(text, strlen(text), NULL, NULL, "t", &chat_template));
  vlm_chat_template_options options = {.add_generation_prompt = true, .image_placeholder = image,
                                       .audio_placeholder = audio};
  vlm_status status = vlm_chat_template_render(chat_template, messages, strlen(messages), &options, out, NULL);
  vlm_chat_template_release(chat_template);
  return status;
}

static void check_rendered(const char *text, const char *messages, const char *expected) {
  char *prompt = NULL;
  CHECK_OK(render_with_placeholders(text, messages, "<I>", "<A>", &prompt));
  if (prompt) CHECK_STR_EQ(prompt, expected);
  free(prompt);
}

#define USER(parts) "[{\"role\":\"user\",\"content\":[" parts "]}]"
#define IMAGE "{\"type\":\"image\"}"
#define AUDIO "{\"type\":\"audio\"}"
#define TEXT(t) "{\"type\":\"text\",\"text\":\"" t "\"}"

/* vLLM's "string" content format with media (chat_utils.py
 * _get_full_multimodal_text_prompt): each placeholder the text lacks on a
 * line of its own, the kinds in the order they first appear, then the text
 * parts joined with newlines; placeholders already in the text stay. */
static void media_parts_become_placeholders_before_the_text(void) {
  check_rendered(PHI4_TEMPLATE, USER(IMAGE "," TEXT("What is it?")), "<|user|><I>\nWhat is it?<|end|><|assistant|>");
  /* image_url parts as the OpenAI client sends them, and every part order. */
  check_rendered(PHI4_TEMPLATE, USER(TEXT("What is it?") ",{\"type\":\"image_url\",\"image_url\":{\"url\":\"x\"}}"),
                 "<|user|><I>\nWhat is it?<|end|><|assistant|>");
  check_rendered(PHI4_TEMPLATE, USER(TEXT("a") "," IMAGE "," TEXT("b")), "<|user|><I>\na\nb<|end|><|assistant|>");
  /* The text already holds the placeholder: it stays where it is (the
   * oracle's image cases write it so). */
  check_rendered(PHI4_TEMPLATE, USER(IMAGE "," TEXT("<I>What is it?")), "<|user|><I>What is it?<|end|><|assistant|>");
  check_rendered(PHI4_TEMPLATE, USER(IMAGE "," IMAGE "," TEXT("Compare <I> with that.")),
                 "<|user|><I>\nCompare <I> with that.<|end|><|assistant|>");
  /* Kinds in the order they first appear, all of a kind together. */
  check_rendered(PHI4_TEMPLATE, USER(AUDIO "," IMAGE "," TEXT("t") "," IMAGE "," AUDIO),
                 "<|user|><A>\n<A>\n<I>\n<I>\nt<|end|><|assistant|>");
  check_rendered(PHI4_TEMPLATE,
                 USER(IMAGE "," IMAGE "," AUDIO ",{\"type\":\"input_audio\",\"input_audio\":{}}," TEXT("t")),
                 "<|user|><I>\n<I>\n<A>\n<A>\nt<|end|><|assistant|>");
  /* No text: no trailing newline; an empty text part is text. */
  check_rendered(PHI4_TEMPLATE, USER(IMAGE), "<|user|><I><|end|><|assistant|>");
  check_rendered(PHI4_TEMPLATE, USER(IMAGE "," TEXT("") "," TEXT("")), "<|user|><I>\n\n<|end|><|assistant|>");
  /* Other messages as given, strings included. */
  check_rendered(PHI4_TEMPLATE,
                 "[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":[" IMAGE "," TEXT("Hi")
                 "]},{\"role\":\"assistant\",\"content\":\"A cat.\"},{\"role\":\"user\",\"content\":[" AUDIO "]}]",
                 "<|system|>Be brief.<|end|><|user|><I>\nHi<|end|><|assistant|>A cat.<|end|><|user|><A><|end|>"
                 "<|assistant|>");
}

static void media_placeholders_are_checked_and_scoped(void) {
  char *prompt = NULL;
  /* More placeholders in the text than parts of the kind: vLLM's error. */
  CHECK_ERROR(render_with_placeholders(PHI4_TEMPLATE, USER(IMAGE "," TEXT("<I><I>")), "<I>", "<A>", &prompt),
              VLM_STATUS_INVALID_ARGUMENT, "messages[0]: Found more '<I>' placeholders in input prompt");
  CHECK_ERROR(render_with_placeholders(PHI4_TEMPLATE, USER(AUDIO "," IMAGE "," TEXT("<A><I><A>")), "<I>", "<A>",
                                       &prompt),
              VLM_STATUS_INVALID_ARGUMENT, "Found more '<A>' placeholders");
  /* Only the kinds the message has parts of are counted (the prompt
   * builder then checks the whole prompt against the request's items). */
  check_rendered(PHI4_TEMPLATE, USER(IMAGE "," TEXT("<A>")), "<|user|><I>\n<A><|end|><|assistant|>");
  /* Lists without media, with a kind that has no placeholder, or with
   * other parts are left as given: the template prints them as it would. */
  CHECK_ERROR(render_with_placeholders(PHI4_TEMPLATE, USER(AUDIO "," TEXT("t")), "<I>", NULL, &prompt),
              VLM_STATUS_INVALID_ARGUMENT, "concatenate");
  CHECK_ERROR(render_with_placeholders(PHI4_TEMPLATE, USER(IMAGE "," TEXT("t")), NULL, NULL, &prompt),
              VLM_STATUS_INVALID_ARGUMENT, "concatenate");
  CHECK_ERROR(render_with_placeholders(PHI4_TEMPLATE, USER(IMAGE ",{\"type\":\"video\"}"), "<I>", "<A>", &prompt),
              VLM_STATUS_INVALID_ARGUMENT, "concatenate");
  CHECK_ERROR(render_with_placeholders(PHI4_TEMPLATE, USER(TEXT("t")), "<I>", "<A>", &prompt),
              VLM_STATUS_INVALID_ARGUMENT, "concatenate");
  /* A template that loops over parts gets parts, whatever the placeholders. */
  const char *parts = "{% for m in messages %}{% for p in m['content'] %}[{{ p['type'] }}]{% endfor %}{% endfor %}";
  CHECK_OK(render_with_placeholders(parts, USER(IMAGE "," TEXT("t")), "<I>", "<A>", &prompt));
  if (prompt) CHECK_STR_EQ(prompt, "[image][text]");
  free(prompt);
}

TEST_MAIN(TEST(the_tiny_models_templates), TEST(loops_over_content_are_parts),
          TEST(content_passed_to_a_looping_macro_is_parts),
          TEST(everything_else_is_a_string), TEST(render_limits_are_request_errors),
          TEST(media_parts_become_placeholders_before_the_text), TEST(media_placeholders_are_checked_and_scoped))
