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

TEST_MAIN(TEST(the_tiny_models_templates), TEST(loops_over_content_are_parts),
          TEST(content_passed_to_a_looping_macro_is_parts),
          TEST(everything_else_is_a_string), TEST(render_limits_are_request_errors))
