/* libFuzzer target: the JSON reader must accept or refuse any byte string
 * without crashing, and whatever it accepts must serialise and re-parse to
 * the same text (the writer and reader agree). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vlm_json_document document;
  vlm_json_limits limits = {.max_depth = 64};
  vlm_status status =
      vlm_json_parse((const char *)data, size, &limits, NULL, "fuzz", &document);
  if (status) {
    vlm_status_free(status);
    return 0;
  }
  vlm_string_builder first = {0};
  vlm_sb_append_json_value(&first, document.root);
  char *text = vlm_sb_finish(&first);
  vlm_json_document again;
  status = vlm_json_parse(text, strlen(text), &limits, NULL, "fuzz-reparse", &again);
  if (status) abort(); /* our own output must parse */
  vlm_string_builder second = {0};
  vlm_sb_append_json_value(&second, again.root);
  char *text_again = vlm_sb_finish(&second);
  if (strcmp(text, text_again) != 0) abort();
  free(text);
  free(text_again);
  vlm_json_document_release(&again);
  vlm_json_document_release(&document);
  return 0;
}
