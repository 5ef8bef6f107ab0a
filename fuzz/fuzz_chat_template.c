/* libFuzzer target: any byte string as a chat template must be refused at
 * load or render to completion (or a clean error) within the render limits,
 * on a fixed multimodal conversation with tools; never crash, hang or leak.
 * Inputs starting with 0xff are expanded first (repeat mode, below). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/json.h"
#include "text/jinja.h"

static const char variables_json[] =
    "{\"bos_token\": \"<s>\", \"eos_token\": \"</s>\", \"add_generation_prompt\": true,"
    " \"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"},"
    " {\"role\": \"user\", \"content\": [{\"type\": \"image\"}, {\"type\": \"text\", \"text\": \"What is it?\"}]},"
    " {\"role\": \"assistant\", \"content\": \"<think>\\nhm\\n</think>\\n\\nA cat.\","
    "  \"tool_calls\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": {\"x\": 1.5}}}]},"
    " {\"role\": \"tool\", \"content\": \"42\"},"
    " {\"role\": \"user\", \"content\": [{\"type\": \"audio\"}, {\"type\": \"video\"}]}],"
    " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"type\": \"object\"}}}],"
    " \"documents\": null}";

/* Repeat mode: an input "\xff" COUNT_HI COUNT_LO PREFIX "\0" UNIT "\0"
 * SUFFIX is the template PREFIX + UNIT x COUNT + SUFFIX. Hostile templates
 * are long chains (`{{ m` + `.x` x 30000 + ` }}`): far past the fuzzer's
 * usual input length, but a few bytes in this form. */
static char *expand(const uint8_t *data, size_t size, size_t *out_length) {
  if (size < 3 || data[0] != 0xff) return NULL;
  size_t count = (size_t)data[1] << 8 | data[2];
  const uint8_t *prefix = data + 3, *end = data + size;
  const uint8_t *unit = memchr(prefix, 0, (size_t)(end - prefix));
  if (!unit) return NULL;
  unit++;
  const uint8_t *suffix = memchr(unit, 0, (size_t)(end - unit));
  if (!suffix) return NULL;
  suffix++;
  size_t prefix_length = (size_t)(unit - 1 - prefix), unit_length = (size_t)(suffix - 1 - unit);
  size_t suffix_length = (size_t)(end - suffix);
  size_t length = prefix_length + unit_length * count + suffix_length;
  if (length > (2u << 20)) return NULL;
  char *text = malloc(length + 1), *p = text;
  if (!text) abort();
  memcpy(p, prefix, prefix_length), p += prefix_length;
  for (size_t i = 0; i < count; i++) memcpy(p, unit, unit_length), p += unit_length;
  memcpy(p, suffix, suffix_length);
  *out_length = length;
  return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static vlm_json_document variables;
  static int initialised;
  if (!initialised) {
    if (vlm_json_parse(variables_json, strlen(variables_json), NULL, NULL, "variables", &variables)) abort();
    initialised = 1;
  }
  size_t expanded_length = 0;
  char *expanded = expand(data, size, &expanded_length);
  if (expanded) data = (const uint8_t *)expanded, size = expanded_length;
  jinja_template *template_ = NULL;
  vlm_status status = jinja_template_parse((const char *)data, size, "fuzz", &template_);
  free(expanded);
  if (status) {
    vlm_status_free(status);
    return 0;
  }
  jinja_render_options options;
  jinja_render_options_init(&options);
  options.max_steps = 200000;
  options.max_output_bytes = 1 << 20;
  options.max_memory_bytes = 32 << 20;
  options.max_call_depth = 32;
  options.fixed_time = 0;
  char *text = NULL;
  size_t length = 0;
  status = jinja_template_render(template_, variables.root, &options, &text, &length);
  if (status) vlm_status_free(status);
  else if (!text || strlen(text) > length) abort(); /* the length covers the text */
  free(text);
  jinja_template_release(template_);
  return 0;
}
