/* libFuzzer target: any byte string as a chat template must be refused at
 * load or render to completion (or a clean error) within the render limits,
 * on a fixed multimodal conversation with tools; never crash, hang or leak. */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static vlm_json_document variables;
  static int initialised;
  if (!initialised) {
    if (vlm_json_parse(variables_json, strlen(variables_json), NULL, NULL, "variables", &variables)) abort();
    initialised = 1;
  }
  jinja_template *template_ = NULL;
  vlm_status status = jinja_template_parse((const char *)data, size, "fuzz", &template_);
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
