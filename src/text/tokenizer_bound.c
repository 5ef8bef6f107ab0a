/* How many input bytes one token can stand for, at most: the early bound
 * that lets a caller refuse a prompt that cannot fit a context before
 * tokenizing it (a 60 MB text part cost 1.8 GB and 36 s to tokenize only to
 * be refused). If every token covers at most B bytes of the input and no
 * input byte is dropped, a text of n bytes gives at least ceil(n / B)
 * tokens.
 *
 * Walked stage by stage, conservatively:
 *   - added tokens cover their content (lstrip/rstrip ones also swallow any
 *     amount of whitespace: no bound);
 *   - normalizers may shrink the text before the model sees it: Unicode
 *     normalization and lowercasing at most 4x per character (U+1D400
 *     MATHEMATICAL BOLD CAPITAL A, 4 bytes, is NFKC 'A'; the Kelvin sign, 3
 *     bytes, lowercases to 'k'), a literal Replace by its length ratio;
 *     Strip, StripAccents and regex Replace can delete any amount: no bound;
 *   - pre-tokenizers that drop text (Whitespace, WhitespaceSplit, Split
 *     with behavior "Removed"): no bound; the others only add or map;
 *   - BPE: a token covers at most its own string's bytes (byte-level
 *     strings map one input byte to one character), unknown characters
 *     become one unknown token each, or one byte-fallback token per byte;
 *     an unknown character with neither is dropped, and fuse_unk merges any
 *     run of them: no bound, unless byte fallback or the byte-level alphabet
 *     covers every byte. WordPiece maps a whole over-long word to one
 *     unknown token: no bound.
 * No bound is 0: the caller must then rely on a byte limit of its own. */
#include "text/tokenizer_internal.h"

#define NO_BOUND 0

/* The factor by which a normalizer can shrink text, or NO_BOUND. */
static uint64_t normalizer_shrink(const tokenizer_normalizer *normalizer) {
  if (!normalizer) return 1;
  switch (normalizer->kind) {
    case NORMALIZER_SEQUENCE: {
      uint64_t product = 1;
      for (size_t i = 0; i < normalizer->child_count; i++) {
        uint64_t factor = normalizer_shrink(&normalizer->children[i]);
        if (factor == NO_BOUND || product > (1u << 20)) return NO_BOUND;
        product *= factor;
      }
      return product;
    }
    case NORMALIZER_NFC:
    case NORMALIZER_NFD:
    case NORMALIZER_NFKC:
    case NORMALIZER_NFKD:
    case NORMALIZER_LOWERCASE: return 4;
    case NORMALIZER_PREPEND: return 1;
    case NORMALIZER_REPLACE: {
      const text_pattern *pattern = &normalizer->pattern;
      if (!pattern->literal || pattern->literal_length == 0 || normalizer->content_length == 0) return NO_BOUND;
      return (pattern->literal_length + normalizer->content_length - 1) / normalizer->content_length;
    }
    case NORMALIZER_STRIP:
    case NORMALIZER_STRIP_ACCENTS: return NO_BOUND;
  }
  return NO_BOUND;
}

static bool pre_tokenizer_keeps_text(const tokenizer_pre_tokenizer *pre_tokenizer) {
  if (!pre_tokenizer) return true;
  switch (pre_tokenizer->kind) {
    case PRE_TOKENIZER_SEQUENCE:
      for (size_t i = 0; i < pre_tokenizer->child_count; i++)
        if (!pre_tokenizer_keeps_text(&pre_tokenizer->children[i])) return false;
      return true;
    case PRE_TOKENIZER_SPLIT: return pre_tokenizer->behavior != SPLIT_REMOVED;
    case PRE_TOKENIZER_BYTE_LEVEL:
    case PRE_TOKENIZER_METASPACE:
    case PRE_TOKENIZER_DIGITS: return true;
    case PRE_TOKENIZER_WHITESPACE:
    case PRE_TOKENIZER_WHITESPACE_SPLIT: return false;
  }
  return false;
}

static bool has_byte_level(const tokenizer_pre_tokenizer *pre_tokenizer) {
  if (!pre_tokenizer) return false;
  if (pre_tokenizer->kind == PRE_TOKENIZER_BYTE_LEVEL) return true;
  for (size_t i = 0; pre_tokenizer->kind == PRE_TOKENIZER_SEQUENCE && i < pre_tokenizer->child_count; i++)
    if (has_byte_level(&pre_tokenizer->children[i])) return true;
  return false;
}

/* Does every input byte reach a token (byte fallback, or a byte-level
 * vocabulary holding the whole 256-character alphabet)? */
static bool covers_every_byte(const vlm_tokenizer *tokenizer) {
  const tokenizer_model *model = &tokenizer->model;
  bool fallback = model->byte_fallback, alphabet = has_byte_level(tokenizer->pre_tokenizer);
  for (int byte = 0; byte < 256; byte++) {
    if (fallback && model->byte_fallback_ids[byte] < 0) fallback = false;
    if (alphabet) {
      size_t length = 0;
      const char *character = byte_level_char((uint8_t)byte, &length);
      if (string_table_get(&model->vocabulary, character, length) < 0) alphabet = false;
    }
  }
  return fallback || alphabet;
}

size_t tokenizer_compute_bytes_per_token(const vlm_tokenizer *tokenizer) {
  const tokenizer_model *model = &tokenizer->model;
  if (model->kind != MODEL_BPE) return NO_BOUND;
  if (!pre_tokenizer_keeps_text(tokenizer->pre_tokenizer)) return NO_BOUND;
  uint64_t shrink = normalizer_shrink(tokenizer->normalizer);
  if (shrink == NO_BOUND) return NO_BOUND;
  bool every_byte = covers_every_byte(tokenizer);
  if (!every_byte && (model->unknown_id < 0 || model->fuse_unknown)) return NO_BOUND;
  uint64_t longest = 4; /* one unknown character */
  for (size_t i = 0; i < tokenizer->added_count; i++) {
    const added_token *token = &tokenizer->added[i];
    if (token->lstrip || token->rstrip) return NO_BOUND;
    if (token->length > longest) longest = token->length;
  }
  for (size_t id = 0; id < tokenizer->id_count; id++)
    if (tokenizer->id_lengths[id] > longest) longest = tokenizer->id_lengths[id];
  uint64_t bound = longest * shrink;
  return bound > SIZE_MAX ? NO_BOUND : (size_t)bound;
}
