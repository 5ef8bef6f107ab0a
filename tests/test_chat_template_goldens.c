/* Conformance: every case in tests/goldens/chat_template/<name>.json must
 * render byte-identically to what Transformers' apply_chat_template gave
 * (tools/oracle/make_chat_template_goldens.py), or fail with the same
 * message when the template raises. Real templates live in the shared
 * fixtures (SKIP(no-fixtures) when absent); family templates are stored
 * next to the goldens. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/file.h"
#include "io/json.h"
#include "test.h"
#include "vlm/chat_template.h"

#define GOLDENS VLM_SOURCE_DIR "/tests/goldens/chat_template"

static char *to_json(const vlm_json_value *value) {
  if (!value || value->type == VLM_JSON_NULL) return NULL;
  vlm_string_builder builder = {0};
  vlm_sb_append_json_value(&builder, value);
  return vlm_sb_finish(&builder);
}

/* Loads the template a golden file names; false (reported) when it cannot. */
static bool load_template(const vlm_json_value *root, vlm_chat_template **out, vlm_status *out_status) {
  const char *source = vlm_json_get_string(vlm_json_object_get(root, "template"));
  *out_status = VLM_OK;
  CHECK(source != NULL);
  if (!source) return false;
  if (!strncmp(source, "fixture:", 8)) {
    const char *fixtures = test_require_fixtures();
    if (!fixtures) return false;
    char directory[4096];
    snprintf(directory, sizeof(directory), "%s/tokenizers/%s", fixtures, source + 8);
    *out_status = vlm_chat_template_load(directory, out);
    return true;
  }
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", GOLDENS, source);
  char *text = NULL;
  size_t length = 0;
  *out_status = vlm_file_read_all(path, 1 << 22, &text, &length);
  if (*out_status != VLM_OK) return true;
  *out_status = vlm_chat_template_create(text, length,
                                         vlm_json_get_string(vlm_json_object_get(root, "bos_token")),
                                         vlm_json_get_string(vlm_json_object_get(root, "eos_token")),
                                         source, out);
  free(text);
  return true;
}

static bool check_case(const vlm_chat_template *chat_template, const vlm_json_value *item,
                       const char *golden_name) {
  const char *name = vlm_json_get_string(vlm_json_object_get(item, "name"));
  char *messages = to_json(vlm_json_object_get(item, "messages"));
  char *tools = to_json(vlm_json_object_get(item, "tools"));
  char *extra = to_json(vlm_json_object_get(item, "extra"));
  bool generation = false;
  vlm_json_get_bool(vlm_json_object_get(item, "add_generation_prompt"), &generation);
  bool continuing = false; /* Transformers' continue_final_message argument */
  vlm_json_get_bool(vlm_json_object_get(item, "continue_final_message"), &continuing);
  vlm_chat_template_options options = {.add_generation_prompt = generation, .tools_json = tools,
                                       .continue_final_message = continuing,
                                       .extra_variables_json = extra, .fixed_time = 1735689600 + 86400 * 45};
  char *prompt = NULL;
  size_t length = 0;
  vlm_status status = vlm_chat_template_render(chat_template, messages, strlen(messages), &options,
                                               &prompt, &length);
  const vlm_json_value *expected = vlm_json_object_get(item, "expected");
  const char *expected_error = vlm_json_get_string(vlm_json_object_get(item, "error"));
  bool passed;
  if (expected) {
    passed = status == VLM_OK && length == expected->as.string.length &&
             memcmp(prompt, expected->as.string.chars, length) == 0;
    if (!passed) {
      fprintf(stderr, "  %s/%s: ", golden_name, name);
      if (status) fprintf(stderr, "failed: %s\n", vlm_status_message(status));
      else fprintf(stderr, "rendered\n---\n%.*s\n--- expected\n%s\n---\n", (int)length, prompt,
                   expected->as.string.chars);
    }
  } else {
    passed = status != VLM_OK && expected_error && strstr(vlm_status_message(status), expected_error);
    if (!passed)
      fprintf(stderr, "  %s/%s: expected error \"%s\", got %s\n", golden_name, name,
              expected_error ? expected_error : "?", status ? vlm_status_message(status) : "success");
  }
  vlm_status_free(status);
  free(prompt);
  free(messages);
  free(tools);
  free(extra);
  return passed;
}

static void check_golden_file(const char *name) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s.json", GOLDENS, name);
  if (!vlm_path_exists(path)) { /* every name listed has goldens in the tree */
    fprintf(stderr, "  %s: %s is missing\n", test_current, path);
    test_failures++;
    return;
  }
  vlm_json_document document;
  CHECK_OK(vlm_json_parse_file(path, 1 << 24, NULL, &document));
  if (!document.root) return;
  vlm_chat_template *chat_template = NULL;
  vlm_status status;
  if (!load_template(document.root, &chat_template, &status)) {
    vlm_json_document_release(&document);
    return;
  }
  const char *load_error = vlm_json_get_string(vlm_json_object_get(document.root, "load_error"));
  if (load_error) {
    CHECK(status != VLM_OK && strstr(vlm_status_message(status), load_error));
    printf("  %s: load fails as expected (%s)\n", name, status ? vlm_status_message(status) : "loaded!");
    vlm_status_free(status);
    vlm_json_document_release(&document);
    return;
  }
  CHECK_OK(status);
  if (!chat_template) {
    vlm_json_document_release(&document);
    return;
  }
  const vlm_json_value *cases = vlm_json_object_get(document.root, "cases");
  size_t passed = 0, count = cases ? cases->as.array.count : 0;
  for (size_t i = 0; i < count; i++)
    if (check_case(chat_template, &cases->as.array.items[i], name)) passed++;
  printf("  %s: %zu/%zu cases byte-identical\n", name, passed, count);
  CHECK_INT_EQ(passed, count);
  vlm_chat_template_release(chat_template);
  vlm_json_document_release(&document);
}

static void real_templates_match_transformers(void) {
  static const char *const names[] = {"qwen3", "gemma3", "llama3", "deepseek_v3", "llama2"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) check_golden_file(names[i]);
}

static void family_templates_match_transformers(void) {
  static const char *const names[] = {"llava", "qwen2_vl", "qwen2_5_vl", "qwen3_vl_thinking", "gemma3n",
                                      "phi4_multimodal"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) check_golden_file(names[i]);
}

/* What `transformers serve` hands a multimodal model's processor: a string
 * content becomes one text part. LLaVA's template renders a plain string as
 * an empty message (Transformers' apply_chat_template does the same), and the
 * text once it is a part. */
static void string_content_as_parts(void) {
  vlm_chat_template *chat_template = NULL;
  CHECK_OK(vlm_chat_template_load(VLM_SOURCE_DIR "/tests/models/llava", &chat_template));
  if (!chat_template) return;
  static const char messages[] = "[{\"role\": \"user\", \"content\": \"Hello there!\"}]";
  static const char parts[] = "[{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"Hello there!\"}]}]";
  for (int as_parts = 0; as_parts < 2; as_parts++) {
    vlm_chat_template_options options = {.add_generation_prompt = true, .string_content_as_parts = as_parts};
    char *prompt = NULL;
    CHECK_OK(vlm_chat_template_render(chat_template, messages, strlen(messages), &options, &prompt, NULL));
    CHECK_STR_EQ(prompt ? prompt : "", as_parts ? "USER: Hello there! ASSISTANT:" : "USER: ASSISTANT:");
    free(prompt);
    /* Content that is already a list is left as it is. */
    CHECK_OK(vlm_chat_template_render(chat_template, parts, strlen(parts), &options, &prompt, NULL));
    CHECK_STR_EQ(prompt ? prompt : "", "USER: Hello there! ASSISTANT:");
    free(prompt);
  }
  vlm_chat_template_release(chat_template);
}

TEST_MAIN(TEST(real_templates_match_transformers), TEST(family_templates_match_transformers),
          TEST(string_content_as_parts))
