/* libFuzzer target: the JSON Schema compiler (text/grammar_schema.h)
 * accepts or refuses any JSON without crashing, within its bounds, and
 * every grammar it produces parses. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/grammar.h"
#include "text/grammar_schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
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
