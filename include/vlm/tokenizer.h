/*
 * Text tokenization, as Hugging Face does it.
 *
 * A tokenizer is built from a model directory's tokenizer.json (the
 * `tokenizers` library's file: normalizer, pre-tokenizer, model, post-processor,
 * decoder, added tokens) and tokenizer_config.json (bos/eos tokens, the
 * tokenizer class). By default it reproduces what Transformers'
 * `AutoTokenizer.from_pretrained(dir)` does, which for a few tokenizer classes
 * (Llama's SentencePiece-style tokenizers) differs from tokenizer.json alone;
 * `tokenizers_library_semantics` selects the plain `tokenizers.Tokenizer`
 * behaviour instead.
 *
 * Text in is bytes: invalid UTF-8 is replaced with U+FFFD per maximal invalid
 * subsequence before tokenizing (what Python's bytes.decode("utf-8",
 * errors="replace") does, i.e. what a server that receives bytes hands to
 * Hugging Face). Text out is always valid UTF-8.
 *
 * A tokenizer is immutable after creation and safe to use from many threads.
 */
#ifndef VLM_TOKENIZER_H
#define VLM_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vlm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vlm_tokenizer vlm_tokenizer;

typedef struct vlm_tokenizer_options {
  const vlm_allocator *allocator; /* NULL: system allocator */
  /* false (default): as Transformers' AutoTokenizer; true: as
   * tokenizers.Tokenizer.from_file("tokenizer.json"). */
  bool tokenizers_library_semantics;
  /* config.json's model_type and tokenizer_class (NULL: none). AutoTokenizer
   * picks the tokenizer class from them too: e.g. a LLaVA or Mistral
   * checkpoint whose tokenizer_config.json names LlamaTokenizer is loaded as
   * the generic TokenizersBackend, keeping tokenizer.json's pipeline.
   * vlm_tokenizer_create reads them from DIR/config.json when model_type is
   * NULL. */
  const char *model_type;
  const char *model_tokenizer_class;
} vlm_tokenizer_options;

/* Loads DIR/tokenizer.json, and (if present) DIR/tokenizer_config.json and
 * DIR/config.json's model_type and tokenizer_class. */
vlm_status vlm_tokenizer_create(const char *model_dir,
                                const vlm_tokenizer_options *options,
                                vlm_tokenizer **out_tokenizer);
/* The same from memory; `config_json` may be NULL. `source_name` prefixes
 * error messages. */
vlm_status vlm_tokenizer_create_from_json(const char *tokenizer_json,
                                          size_t tokenizer_json_length,
                                          const char *config_json,
                                          size_t config_json_length,
                                          const char *source_name,
                                          const vlm_tokenizer_options *options,
                                          vlm_tokenizer **out_tokenizer);
void vlm_tokenizer_release(vlm_tokenizer *tokenizer);

/* A growable array of token ids; release with vlm_token_ids_release. */
typedef struct vlm_token_ids {
  int32_t *ids;
  size_t count;
  size_t capacity;
} vlm_token_ids;

void vlm_token_ids_release(vlm_token_ids *ids);

/* Tokenizes `length` bytes of text. With `add_special_tokens` the
 * post-processor adds what the model expects (e.g. BOS); special tokens
 * written in the text are always recognised. The ids are appended to `out`
 * (zero-initialise it first). */
vlm_status vlm_tokenizer_encode(const vlm_tokenizer *tokenizer, const char *text,
                                size_t length, bool add_special_tokens,
                                vlm_token_ids *out);

/* vlm_tokenizer_encode that stops as soon as the text is known to give
 * more than `max_ids` ids (0: no limit): then *out_over (may be NULL) is
 * set and `out` holds only the first ids (a prefix of what
 * vlm_tokenizer_encode gives). Exact: every stage after the added-token
 * split only appends ids, and a pre-tokenized piece of n bytes gives at
 * least n / (the longest token's bytes) ids, so a text that gives at most
 * max_ids ids is tokenized in full, as by vlm_tokenizer_encode, and one
 * that gives more costs the work up to the piece that crossed the limit
 * (a capacity check that need not tokenize a prompt which cannot fit). */
vlm_status vlm_tokenizer_encode_bounded(const vlm_tokenizer *tokenizer, const char *text, size_t length,
                                        bool add_special_tokens, size_t max_ids, vlm_token_ids *out,
                                        bool *out_over);

/* Which Transformers object turns a model's rendered chat prompt into ids.
 * Text-only models follow the tokenizer (`tokenizer.apply_chat_template(...,
 * tokenize=True)`: no special tokens, the template writes them);
 * multimodal models follow their processor (`processor.apply_chat_template(
 * ..., tokenize=True)` or `processor(text=rendered)`), which adds the
 * tokenizer's special tokens (e.g. BOS from the post-processor) unless the
 * rendered prompt already starts with bos_token (processing_utils.py,
 * transformers 5.23). The model's family declares its flow
 * (vlm_model_prompt_flow). */
typedef enum vlm_prompt_flow {
  VLM_PROMPT_FLOW_TOKENIZER = 0,
  VLM_PROMPT_FLOW_PROCESSOR,
} vlm_prompt_flow;

/* The flow of the model in DIR, from config.json's model_type: what its
 * family declares. Fails for a model_type vlm has no family for. */
vlm_status vlm_model_prompt_flow(const char *model_dir, vlm_prompt_flow *out_flow);

/* Whether `flow` adds special tokens to this rendered prompt. */
bool vlm_tokenizer_chat_adds_special_tokens(const vlm_tokenizer *tokenizer, const char *text,
                                            size_t length, vlm_prompt_flow flow);
/* Tokenizes a rendered chat prompt as `flow` does (vlm_tokenizer_encode
 * with add_special_tokens from the rule above). */
vlm_status vlm_tokenizer_encode_chat(const vlm_tokenizer *tokenizer, const char *text,
                                     size_t length, vlm_prompt_flow flow,
                                     vlm_token_ids *out);
/* The same, stopping past max_ids as vlm_tokenizer_encode_bounded. */
vlm_status vlm_tokenizer_encode_chat_bounded(const vlm_tokenizer *tokenizer, const char *text, size_t length,
                                             vlm_prompt_flow flow, size_t max_ids, vlm_token_ids *out,
                                             bool *out_over);

/* Turns ids back into text (valid UTF-8, NUL-terminated, malloc'd: free()
 * it). Unknown ids are skipped, as Hugging Face skips them. */
vlm_status vlm_tokenizer_decode(const vlm_tokenizer *tokenizer, const int32_t *ids,
                                size_t count, bool skip_special_tokens,
                                char **out_text, size_t *out_length);

/* One token's bytes as it decodes in the middle of a text (partial UTF-8
 * kept as bytes, nothing stripped): what constrained decoding matches.
 * OUT_OF_RANGE for an unknown id or over `capacity` bytes. */
vlm_status vlm_tokenizer_token_bytes(const vlm_tokenizer *tokenizer, int32_t id, char *buffer,
                                     size_t capacity, size_t *out_length);

/* Vocabulary. */
size_t vlm_tokenizer_vocab_size(const vlm_tokenizer *tokenizer); /* max id + 1 */
/* The token's string as stored (byte-level tokens in their mapped form), or
 * NULL for an unknown id. */
const char *vlm_tokenizer_id_to_token(const vlm_tokenizer *tokenizer, int32_t id);
/* -1 when the string is not a token. */
int32_t vlm_tokenizer_token_to_id(const vlm_tokenizer *tokenizer, const char *token,
                                  size_t length);
bool vlm_tokenizer_is_special(const vlm_tokenizer *tokenizer, int32_t id);

/* At most how many bytes of input text one token stands for, or 0 when
 * this tokenizer has no such bound (it can drop text: WordPiece, fused
 * unknown tokens, Strip normalizers, whitespace-dropping pre-tokenizers,
 * added tokens that swallow whitespace). With a bound B, n bytes of text
 * give at least ceil(n / B) tokens, so a caller can refuse a text that
 * cannot fit a context before tokenizing it. Conservative: real text
 * averages far fewer bytes per token. */
size_t vlm_tokenizer_max_bytes_per_token(const vlm_tokenizer *tokenizer);

/* Ids of the tokens named in tokenizer_config.json; -1 when absent. */
typedef struct vlm_special_token_ids {
  int32_t bos;
  int32_t eos;
  int32_t pad;
  int32_t unk;
} vlm_special_token_ids;
vlm_special_token_ids vlm_tokenizer_special_ids(const vlm_tokenizer *tokenizer);

/* ---------------------------------------------------------------------- */
/* Streaming detokenization                                                */
/* ---------------------------------------------------------------------- */

/* Turns generated ids into text one id at a time. Text is released only at
 * complete UTF-8 characters, so a character whose bytes are spread over
 * several tokens arrives whole; the concatenation of everything pushed and
 * finished equals vlm_tokenizer_decode of all the ids (like Hugging Face's
 * tokenizers.decoders.DecodeStream). */
typedef struct vlm_detokenizer vlm_detokenizer;

vlm_status vlm_detokenizer_create(const vlm_tokenizer *tokenizer,
                                  bool skip_special_tokens,
                                  vlm_detokenizer **out_detokenizer);
/* Adds one id; *out_text (length *out_length, possibly 0) is the new text,
 * valid until the next call. */
vlm_status vlm_detokenizer_push(vlm_detokenizer *detokenizer, int32_t id,
                                const char **out_text, size_t *out_length);
/* Releases whatever is still held back (an incomplete character at the end
 * becomes U+FFFD, as in the full decode). */
vlm_status vlm_detokenizer_finish(vlm_detokenizer *detokenizer,
                                  const char **out_text, size_t *out_length);
void vlm_detokenizer_release(vlm_detokenizer *detokenizer);

/* Stop strings across token boundaries: text goes in piece by piece, and
 * what comes out is the text with everything from the first stop string on
 * removed. Text that might still be the start of a stop string is held back
 * until the next piece decides. */
typedef struct vlm_stop_matcher vlm_stop_matcher;

vlm_status vlm_stop_matcher_create(const char *const *stop_strings, size_t count,
                                   vlm_stop_matcher **out_matcher);
/* Feeds text; *out_text and *out_length give the text that is safe to emit now
 * (valid until the next call). Returns true once a stop string was found;
 * after that further input is ignored. */
bool vlm_stop_matcher_push(vlm_stop_matcher *matcher, const char *text,
                           size_t length, const char **out_text,
                           size_t *out_length);
/* End of generation: releases the held-back text (no stop string matched). */
void vlm_stop_matcher_finish(vlm_stop_matcher *matcher, const char **out_text,
                             size_t *out_length);
/* Index of the stop string that matched, or -1. */
int vlm_stop_matcher_matched(const vlm_stop_matcher *matcher);
void vlm_stop_matcher_release(vlm_stop_matcher *matcher);

#ifdef __cplusplus
}
#endif

#endif /* VLM_TOKENIZER_H */
