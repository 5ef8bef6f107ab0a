/* libFuzzer target: the JSON Schema compiler (text/grammar_schema.h)
 * accepts or refuses any JSON without crashing, within its bounds, and
 * every grammar it produces parses; the same in its Python mode (the
 * pythonic tool format's keyword arguments). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/grammar.h"
#include "text/grammar_schema.h"

/* The schema as a pythonic call's keyword arguments. */
static void python_kwargs(const uint8_t *data, size_t size) {
  vlm_json_document document = {0};
  vlm_json_limits limits = {.max_depth = 128, .max_input_bytes = 1u << 20};
  vlm_status status = vlm_json_parse((const char *)data, size, &limits, NULL, "schema", &document);
  if (status) {
    vlm_status_free(status);
    return;
  }
  vlm_schema_compiler *compiler = NULL;
  if (vlm_schema_compiler_create(&compiler)) abort();
  vlm_schema_compiler_set_python(compiler);
  const char *rule = NULL;
  char *text = NULL;
  status = vlm_schema_compiler_add_kwargs(compiler, document.root, &rule);
  if (!status) {
    char root[160];
    snprintf(root, sizeof(root), "\"[f(\" %s \")]\"", rule);
    status = vlm_schema_compiler_finish(compiler, root, &text);
  }
  if (!status) {
    vlm_grammar *grammar = NULL;
    vlm_status parsed = vlm_grammar_parse(text, strlen(text), &grammar);
    /* only the grammar's own bounds may refuse it */
    if (parsed && vlm_status_code_of(parsed) != VLM_STATUS_INVALID_ARGUMENT &&
        vlm_status_code_of(parsed) != VLM_STATUS_RESOURCE_EXHAUSTED)
      abort();
    vlm_status_free(parsed);
    vlm_grammar_release(grammar);
  }
  vlm_status_free(status);
  free(text);
  vlm_schema_compiler_release(compiler);
  vlm_json_document_release(&document);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  python_kwargs(data, size);
  char *text = NULL;
  vlm_status status = vlm_json_schema_text_to_grammar((const char *)data, size, &text);
  if (status) {
    vlm_status_free(status);
    return 0;
  }
  vlm_grammar *grammar = NULL;
  status = vlm_grammar_parse(text, strlen(text), &grammar);
  if (status) abort(); /* the compiler checked it parses */
  vlm_grammar_matcher *matcher = NULL;
  vlm_status created = vlm_grammar_matcher_create(grammar, &matcher); /* a bound may refuse it */
  bool created_ok = created == VLM_OK;
  vlm_status_free(created);
  if (created_ok) {
    vlm_grammar_matcher_accept_bytes(matcher, "{\"a\": 1}", 8, &status);
    vlm_status_free(status);
    vlm_grammar_matcher_release(matcher);
  }
  vlm_grammar_release(grammar);
  free(text);
  return 0;
}
