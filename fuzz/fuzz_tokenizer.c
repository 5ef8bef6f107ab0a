/* libFuzzer target for the tokenizer.json loader and the encode/decode
 * pipeline. Input: a tokenizer.json, optionally followed by a NUL byte and
 * text to tokenize (otherwise a fixed mixed text is used). Whatever loads
 * must encode, decode and stream without crashing or leaking. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vlm.h"

static const char default_text[] =
    "Hello  world's 123 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80\n\t<s>x</s> \x80\xff end";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *json = (const char *)data;
  const char *separator = memchr(data, 0, size);
  size_t json_length = separator ? (size_t)(separator - json) : size;
  const char *text = separator ? separator + 1 : default_text;
  size_t text_length = separator ? size - json_length - 1 : sizeof(default_text) - 1;
  /* The classes whose pipelines Transformers rebuilds in code, and a model
   * type that makes AutoTokenizer keep the file's (llava). */
  static const struct {
    const char *config, *model_type;
  } classes[] = {
      {"{\"tokenizer_class\": \"LlamaTokenizer\", \"add_bos_token\": true, \"bos_token\": \"<s>\"}", NULL},
      {"{\"tokenizer_class\": \"LlamaTokenizer\", \"bos_token\": \"<s>\"}", "llava"},
      {"{\"tokenizer_class\": \"Qwen2Tokenizer\", \"add_prefix_space\": true}", NULL},
      {"{\"tokenizer_class\": \"GemmaTokenizer\", \"bos_token\": \"<bos>\"}", NULL},
  };
  for (size_t run = 0; run < 1 + sizeof(classes) / sizeof(classes[0]); run++) {
    int semantics = run == 0; /* run 0: tokenizers semantics; then each class */
    const char *config = classes[semantics ? 0 : run - 1].config;
    vlm_tokenizer_options options = {.tokenizers_library_semantics = semantics,
                                     .model_type = semantics ? NULL : classes[run - 1].model_type};
    vlm_tokenizer *tokenizer = NULL;
    vlm_status status = vlm_tokenizer_create_from_json(json, json_length, config, strlen(config), "fuzz.json",
                                                       &options, &tokenizer);
    if (status) {
      vlm_status_free(status);
      continue;
    }
    vlm_token_ids ids = {0};
    status = vlm_tokenizer_encode(tokenizer, text, text_length, true, &ids);
    vlm_status_free(status);
    vlm_token_ids chat = {0};
    vlm_status_free(vlm_tokenizer_encode_chat(tokenizer, text, text_length, VLM_PROMPT_FLOW_PROCESSOR, &chat));
    vlm_token_ids_release(&chat);
    char *decoded = NULL;
    status = vlm_tokenizer_decode(tokenizer, ids.ids, ids.count, run % 2, &decoded, NULL);
    vlm_status_free(status);
    free(decoded);
    vlm_detokenizer *stream = NULL;
    if (!vlm_detokenizer_create(tokenizer, false, &stream)) {
      const char *piece;
      size_t piece_length;
      for (size_t i = 0; i < ids.count; i++)
        vlm_status_free(vlm_detokenizer_push(stream, ids.ids[i], &piece, &piece_length));
      vlm_status_free(vlm_detokenizer_finish(stream, &piece, &piece_length));
      vlm_detokenizer_release(stream);
    }
    vlm_token_ids_release(&ids);
    vlm_tokenizer_release(tokenizer);
  }
  return 0;
}
