/* libFuzzer target: the GBNF parser (text/grammar.h) accepts or refuses any
 * byte string without crashing; what it accepts is matched against the
 * input's own bytes and a small vocabulary's masks, within the bounds. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/grammar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vlm_grammar *grammar = NULL;
  vlm_status status = vlm_grammar_parse((const char *)data, size, &grammar);
  if (status) {
    vlm_status_free(status);
    return 0;
  }
  vlm_grammar_matcher *matcher = NULL;
  vlm_status created = vlm_grammar_matcher_create(grammar, &matcher); /* a bound may refuse it */
  bool created_ok = created == VLM_OK;
  vlm_status_free(created);
  if (created_ok) {
    static const char *const tokens[] = {"a", "b", "{", "}", "\"", "ab", " ", "0", "\xC3\xA9", "x"};
    size_t lengths[10];
    for (int i = 0; i < 10; i++) lengths[i] = strlen(tokens[i]);
    const int32_t end = 9;
    vlm_token_index *index = NULL;
    if (!vlm_token_index_create_from_bytes(tokens, lengths, 10, &end, 1, &index)) {
      for (size_t i = 0; i < size && i < 64; i++) {
        uint32_t bits[1];
        vlm_status mask = vlm_grammar_matcher_fill_mask(matcher, index, bits);
        if (mask) {
          vlm_status_free(mask);
          break;
        }
        int32_t token = (int32_t)(data[i] % 10);
        if (((bits[0] >> token) & 1u) != vlm_grammar_matcher_allows_token(matcher, index, token)) abort();
        vlm_status accepted = vlm_grammar_matcher_accept_token(matcher, index, token);
        if (accepted) vlm_status_free(accepted);
      }
      vlm_token_index_release(index);
    }
    vlm_grammar_matcher_release(matcher);
  }
  vlm_grammar_release(grammar);
  return 0;
}
