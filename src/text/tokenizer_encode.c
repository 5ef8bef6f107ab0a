/* The tokenizer object and its encode pipeline, in `tokenizers`' order:
 *
 *   1. split out added tokens that match the raw text (normalized = false),
 *   2. normalize the rest, piece by piece, and split out the added tokens
 *      that match normalized text,
 *   3. pre-tokenize, 4. run the model on every pre-token,
 *   5. post-process (the template adds BOS/EOS when asked to). */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "io/file.h"
#include "text/tokenizer_internal.h"

/* tokenizer.json files reach ~35 MB (Gemma 3); leave headroom. */
#define MAX_TOKENIZER_JSON_BYTES ((size_t)512 << 20)
#define MAX_CONFIG_JSON_BYTES ((size_t)64 << 20)

static vlm_status out_of_memory(void) {
  return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory tokenizing text");
}

/* ---- Lifetime ------------------------------------------------------------ */

void vlm_tokenizer_release(vlm_tokenizer *tokenizer) {
  if (!tokenizer) return;
  normalizer_release(tokenizer->normalizer);
  pre_tokenizer_release(tokenizer->pre_tokenizer);
  decoder_release(tokenizer->decoder);
  string_table_release(&tokenizer->model.vocabulary);
  pair_table_release(&tokenizer->model.merges);
  string_table_release(&tokenizer->added_by_content);
  if (tokenizer->has_raw_trie) token_trie_release(&tokenizer->raw_trie);
  if (tokenizer->has_normalized_trie) token_trie_release(&tokenizer->normalized_trie);
  vlm_arena_reset(&tokenizer->arena);
  vlm_release(tokenizer->allocator, tokenizer);
}

vlm_status vlm_tokenizer_create_from_json(const char *tokenizer_json,
                                          size_t tokenizer_json_length,
                                          const char *config_json, size_t config_json_length,
                                          const char *source_name,
                                          const vlm_tokenizer_options *options,
                                          vlm_tokenizer **out_tokenizer) {
  *out_tokenizer = NULL;
  const vlm_allocator *allocator = options && options->allocator ? options->allocator
                                                                 : vlm_allocator_system();
  vlm_tokenizer_options defaults = {0};
  if (!options) options = &defaults;
  if (!source_name) source_name = "tokenizer.json";
  vlm_json_document document, config = {0};
  VLM_RETURN_IF_ERROR(vlm_json_parse(tokenizer_json, tokenizer_json_length, NULL, allocator,
                                     source_name, &document));
  if (config_json) {
    vlm_status status = vlm_json_parse(config_json, config_json_length, NULL, allocator,
                                       "tokenizer_config.json", &config);
    if (status) {
      vlm_json_document_release(&document);
      return status;
    }
  }
  vlm_tokenizer *tokenizer = vlm_allocate_zeroed(allocator, sizeof(*tokenizer), 16);
  vlm_status status = VLM_OK;
  if (!tokenizer) {
    status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a tokenizer");
  } else {
    tokenizer->allocator = allocator;
    vlm_arena_init(&tokenizer->arena, allocator, (size_t)1 << 20);
    tokenizer->special_ids = (vlm_special_token_ids){-1, -1, -1, -1};
    status = tokenizer_load(tokenizer, document.root, config_json ? config.root : NULL, options);
    status = vlm_status_annotate(status, "%s", source_name);
    if (!status) tokenizer->max_bytes_per_token = tokenizer_compute_bytes_per_token(tokenizer);
    if (!status && tokenizer->max_bytes_per_token) {
      size_t longest = 4;
      for (size_t id = 0; id < tokenizer->id_count; id++)
        if (tokenizer->id_lengths[id] > longest) longest = tokenizer->id_lengths[id];
      tokenizer->longest_token_bytes = longest;
    }
  }
  vlm_json_document_release(&document);
  if (config_json) vlm_json_document_release(&config);
  if (status) {
    vlm_tokenizer_release(tokenizer);
    return status;
  }
  *out_tokenizer = tokenizer;
  return VLM_OK;
}

/* DIR/config.json, when there is one: AutoTokenizer's class choice reads its
 * model_type and tokenizer_class. */
static vlm_status read_model_config(const char *model_dir, const vlm_allocator *allocator,
                                    vlm_json_document *out, bool *present) {
  *present = false;
  char *path = vlm_path_join(model_dir, "config.json");
  if (!path) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_status status = VLM_OK;
  if (vlm_path_exists(path)) {
    status = vlm_json_parse_file(path, MAX_CONFIG_JSON_BYTES, allocator, out);
    *present = status == VLM_OK;
    if (*present && out->root->type != VLM_JSON_OBJECT) {
      vlm_json_document_release(out);
      *present = false;
      status = VLM_ERROR(INVALID_ARGUMENT, "%s: expected a JSON object", path);
    }
  }
  free(path);
  return status;
}

vlm_status vlm_tokenizer_create(const char *model_dir, const vlm_tokenizer_options *options,
                                vlm_tokenizer **out_tokenizer) {
  *out_tokenizer = NULL;
  char *path = vlm_path_join(model_dir, "tokenizer.json");
  char *config_path = vlm_path_join(model_dir, "tokenizer_config.json");
  char *text = NULL, *config_text = NULL;
  size_t length = 0, config_length = 0;
  vlm_status status = VLM_OK;
  if (!path || !config_path) {
    status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  } else if (!vlm_path_exists(path)) {
    status = VLM_ERROR(NOT_FOUND, "%s: no tokenizer.json (only the tokenizers-library format "
                       "is supported)", model_dir);
  } else {
    status = vlm_file_read_all(path, MAX_TOKENIZER_JSON_BYTES, &text, &length);
    if (!status && vlm_path_exists(config_path))
      status = vlm_file_read_all(config_path, MAX_CONFIG_JSON_BYTES, &config_text, &config_length);
  }
  vlm_tokenizer_options with_model = options ? *options : (vlm_tokenizer_options){0};
  vlm_json_document model_config = {0};
  bool have_model_config = false;
  if (!status && !with_model.model_type) {
    status = read_model_config(model_dir, with_model.allocator, &model_config, &have_model_config);
    if (have_model_config) {
      with_model.model_type = vlm_json_get_string(vlm_json_object_get(model_config.root, "model_type"));
      with_model.model_tokenizer_class =
          vlm_json_get_string(vlm_json_object_get(model_config.root, "tokenizer_class"));
    }
  }
  if (!status)
    status = vlm_tokenizer_create_from_json(text, length, config_text, config_length, path,
                                            &with_model, out_tokenizer);
  if (have_model_config) vlm_json_document_release(&model_config);
  free(text);
  free(config_text);
  free(path);
  free(config_path);
  return status;
}

/* ---- Vocabulary queries -------------------------------------------------- */

size_t vlm_tokenizer_vocab_size(const vlm_tokenizer *tokenizer) { return tokenizer->id_count; }

const char *vlm_tokenizer_id_to_token(const vlm_tokenizer *tokenizer, int32_t id) {
  if (id < 0 || (size_t)id >= tokenizer->id_count) return NULL;
  return tokenizer->id_strings[id];
}

int32_t vlm_tokenizer_token_to_id(const vlm_tokenizer *tokenizer, const char *token,
                                  size_t length) {
  int32_t id = string_table_get(&tokenizer->added_by_content, token, length);
  return id >= 0 ? id : string_table_get(&tokenizer->model.vocabulary, token, length);
}

size_t vlm_tokenizer_max_bytes_per_token(const vlm_tokenizer *tokenizer) {
  return tokenizer->max_bytes_per_token;
}

bool vlm_tokenizer_is_special(const vlm_tokenizer *tokenizer, int32_t id) {
  return id >= 0 && (size_t)id < tokenizer->id_count && tokenizer->id_special[id];
}

vlm_special_token_ids vlm_tokenizer_special_ids(const vlm_tokenizer *tokenizer) {
  return tokenizer->special_ids;
}

/* ---- Added tokens -------------------------------------------------------- */

static bool ends_with_word(const char *text, size_t length) {
  if (!length) return false;
  size_t back = length - 1;
  while (back > 0 && ((unsigned char)text[back] & 0xC0) == 0x80) back--;
  uint32_t codepoint;
  utf8_decode(text + back, length - back, &codepoint);
  return unicode_is_alphanumeric(codepoint);
}

static bool starts_with_word(const char *text, size_t length) {
  if (!length) return false;
  uint32_t codepoint;
  utf8_decode(text, length, &codepoint);
  return unicode_is_alphanumeric(codepoint);
}

static size_t skip_whitespace_forward(const char *text, size_t position, size_t length) {
  while (position < length) {
    uint32_t codepoint;
    size_t width = utf8_decode(text + position, length - position, &codepoint);
    if (!unicode_is_whitespace(codepoint)) break;
    position += width;
  }
  return position;
}

static size_t skip_whitespace_backward(const char *text, size_t position) {
  while (position > 0) {
    size_t back = position - 1;
    while (back > 0 && ((unsigned char)text[back] & 0xC0) == 0x80) back--;
    uint32_t codepoint;
    utf8_decode(text + back, position - back, &codepoint);
    if (!unicode_is_whitespace(codepoint)) break;
    position = back;
  }
  return position;
}

/* AddedVocabulary::find_matches: leftmost-longest matches; a single_word
 * token must not touch letters or digits (the skipped match still consumes
 * its text, as the Aho-Corasick iterator does); lstrip/rstrip swallow the
 * whitespace around the token into it. */
static bool split_added(const vlm_tokenizer *tokenizer, const token_trie *trie,
                        const text_piece *piece, piece_list *out) {
  const char *text = piece->text;
  size_t length = piece->length, start_offset = 0, position = 0;
  while (position < length) {
    /* Most bytes start no added token: skipped here, without a call. */
    while (position < length && !trie->first_byte[(unsigned char)text[position]]) position++;
    if (position == length) break;
    int32_t index = -1;
    size_t matched = token_trie_longest(trie, text + position, length - position, &index);
    if (!matched) {
      position++;
      continue;
    }
    const added_token *token = &tokenizer->added[index];
    size_t start = position, stop = position + matched;
    position = stop;
    if (token->single_word && (ends_with_word(text, start) ||
                               starts_with_word(text + stop, length - stop)))
      continue;
    if (token->lstrip) {
      size_t stripped = skip_whitespace_backward(text, start);
      start = stripped > start_offset ? stripped : start_offset;
    }
    if (token->rstrip) stop = skip_whitespace_forward(text, stop, length);
    if (start < start_offset) start = start_offset; /* never overlap the previous piece */
    if (start_offset < start &&
        !piece_list_push(out, text + start_offset, start - start_offset, -1,
                         piece->at_start && start_offset == 0))
      return false;
    if (!piece_list_push(out, text + start, stop - start, token->id, false)) return false;
    start_offset = stop;
    position = stop > position ? stop : position;
  }
  if (start_offset < length &&
      !piece_list_push(out, text + start_offset, length - start_offset, -1,
                       piece->at_start && start_offset == 0))
    return false;
  return true;
}

/* Step 2 for one piece of the raw text between added tokens: the
 * normalizer, then the added tokens of the normalized text, appended to
 * `out`. */
static vlm_status normalize_piece(const vlm_tokenizer *tokenizer, text_piece piece, vlm_arena *arena,
                                  byte_buffer *normalized, piece_list *out) {
  if (piece.token_id < 0 && tokenizer->normalizer) {
    bool dropped_start = false;
    normalized->length = 0;
    VLM_RETURN_IF_ERROR(normalizer_apply(tokenizer->normalizer, piece.text, piece.length, normalized,
                                         &dropped_start));
    if (dropped_start) piece.at_start = false;
    char *copy = vlm_arena_strndup(arena, normalized->data ? normalized->data : "", normalized->length);
    if (!copy) return out_of_memory();
    piece.text = copy;
    piece.length = normalized->length;
  }
  if (piece.token_id >= 0) {
    if (!piece_list_push(out, piece.text, piece.length, piece.token_id, false)) return out_of_memory();
  } else if (piece.length && !split_added(tokenizer, &tokenizer->normalized_trie, &piece, out)) {
    return out_of_memory();
  }
  return VLM_OK;
}

/* Pieces this long get the alphabet bound below before the model runs. */
#define ALPHABET_BOUND_BYTES 4096

/* A lower bound on the ids the BPE model makes of a long piece, by the
 * piece's alphabet: every id it makes is a vocabulary token that occurs in
 * the piece (merges concatenate token strings), a byte-fallback token for
 * one byte, or an unknown token for one character (at most 4 bytes; a fused
 * unknown has no bound, nor do prefixed or suffixed subwords). So each id
 * covers at most the longest vocabulary token made only of bytes the piece
 * uses: 4 MiB of 'a' are at least 4 MiB / 8 ids on a Qwen vocabulary, where
 * the longest token overall (256 bytes) proved nothing. One pass over the
 * piece and one over the vocabulary, which rejects most tokens at their
 * first byte. 0: no bound. */
static size_t alphabet_lower_bound(const tokenizer_model *model, const char *text, size_t length) {
  if (model->kind != MODEL_BPE || model->continuing_prefix_length || model->end_of_word_suffix_length ||
      (model->fuse_unknown && model->unknown_id >= 0))
    return 0;
  bool used[256] = {false};
  for (size_t i = 0; i < length; i++) used[(unsigned char)text[i]] = true;
  size_t widest = model->unknown_id >= 0 ? 4 : 1;
  const string_table *vocabulary = &model->vocabulary;
  for (size_t slot = 0; slot < vocabulary->slot_count; slot++) {
    const char *token = vocabulary->strings[slot];
    size_t token_length = vocabulary->lengths[slot], j = 0;
    if (!token || token_length <= widest) continue;
    while (j < token_length && used[(unsigned char)token[j]]) j++;
    if (j == token_length) widest = token_length;
  }
  return (length + widest - 1) / widest;
}

/* Steps 2-4 (normalizer, pre-tokenizer, model) for one raw piece, its ids
 * appended to `body`. Each raw piece goes through them on its own in
 * `tokenizers` too (the added tokens split the text first), so the ids
 * of the pieces so far are the first ids of the whole text's. */
static vlm_status tokenize_pieces(const vlm_tokenizer *tokenizer, const piece_list *pieces, size_t max_ids,
                                  vlm_token_ids *body, bool *over) {
  for (size_t i = 0; i < pieces->count; i++) {
    const text_piece *piece = &pieces->items[i];
    if (piece->token_id >= 0) {
      if (!token_ids_push(body, piece->token_id)) return out_of_memory();
    } else if (max_ids && tokenizer->longest_token_bytes &&
               body->count + (piece->length + tokenizer->longest_token_bytes - 1) / tokenizer->longest_token_bytes >
                   max_ids) {
      /* The model's tokens each cover at most longest_token_bytes of the
       * piece (merges of its characters, an unknown character, a byte):
       * this piece alone takes the ids past the limit, unmodelled. */
      *over = true;
      return VLM_OK;
    } else if (max_ids && tokenizer->longest_token_bytes && piece->length >= ALPHABET_BOUND_BYTES &&
               body->count + piece->length > max_ids && /* else even 1 byte per id fits: skip the scan */
               body->count + alphabet_lower_bound(&tokenizer->model, piece->text, piece->length) > max_ids) {
      *over = true; /* the piece's own alphabet proves it cannot fit */
      return VLM_OK;
    } else {
      VLM_RETURN_IF_ERROR(model_tokenize(&tokenizer->model, piece->text, piece->length, body));
    }
    if (max_ids && body->count > max_ids) break; /* the rest only adds ids */
  }
  return VLM_OK;
}

/* Pieces this long are pre-tokenized a batch of matches at a time when the
 * ids are bounded, so a text that cannot fit is not split in full either. */
#define STREAMED_PIECE_BYTES 4096
#define STREAM_BATCH_MATCHES 256

/* One piece of the normalized text through the pre-tokenizer and the
 * model. The pre-tokenizer maps each piece on its own, so this is exactly
 * pre_tokenizer_apply over the list, piece by piece. */
static vlm_status encode_normalized_piece(const vlm_tokenizer *tokenizer, const text_piece *piece, vlm_arena *arena,
                                          size_t max_ids, vlm_token_ids *body, bool *over) {
  pre_tokenizer_stream stream;
  vlm_status status = VLM_OK;
  if (max_ids && piece->length >= STREAMED_PIECE_BYTES &&
      pre_tokenizer_stream_start(tokenizer->pre_tokenizer, piece, &stream)) {
    while (!status && !stream.done && body->count <= max_ids && !*over) {
      piece_list batch = {0};
      status = pre_tokenizer_stream_next(&stream, STREAM_BATCH_MATCHES, arena, &batch);
      if (!status) status = tokenize_pieces(tokenizer, &batch, max_ids, body, over);
      piece_list_release(&batch);
    }
    return status;
  }
  piece_list pieces = {0};
  if (!piece_list_push(&pieces, piece->text, piece->length, piece->token_id, piece->at_start)) return out_of_memory();
  if (tokenizer->pre_tokenizer && piece->token_id < 0)
    status = pre_tokenizer_apply(tokenizer->pre_tokenizer, &pieces, arena);
  if (!status) status = tokenize_pieces(tokenizer, &pieces, max_ids, body, over);
  piece_list_release(&pieces);
  return status;
}

static vlm_status encode_raw_piece(const vlm_tokenizer *tokenizer, const text_piece *raw, vlm_arena *arena,
                                   byte_buffer *normalized, size_t max_ids, vlm_token_ids *body, bool *over) {
  piece_list pieces = {0};
  vlm_status status = normalize_piece(tokenizer, *raw, arena, normalized, &pieces);
  for (size_t i = 0; !status && i < pieces.count && !*over && !(max_ids && body->count > max_ids); i++)
    status = encode_normalized_piece(tokenizer, &pieces.items[i], arena, max_ids, body, over);
  piece_list_release(&pieces);
  return status;
}

/* The pipeline, stopping once the body has more than max_ids ids (0: no
 * limit): every later stage only appends ids, and the post-processor only
 * adds its own, so the whole text has more too (*out_over). */
static vlm_status encode_valid(const vlm_tokenizer *tokenizer, const char *text, size_t length,
                               bool add_special_tokens, size_t max_ids, vlm_token_ids *out, bool *out_over) {
  vlm_arena arena;
  /* Blocks sized for a piece, not the whole text: an early stop leaves
   * most of a long text untouched. */
  vlm_arena_init(&arena, NULL, (length < (1u << 20) ? length : (1u << 20)) * 4 + 4096);
  piece_list raw = {0};
  text_piece whole = {text, length, -1, true};
  vlm_status status = split_added(tokenizer, &tokenizer->raw_trie, &whole, &raw) ? VLM_OK : out_of_memory();
  byte_buffer normalized = {0};
  vlm_token_ids body = {0};
  for (size_t i = 0; !status && i < raw.count && !*out_over; i++) {
    status = encode_raw_piece(tokenizer, &raw.items[i], &arena, &normalized, max_ids, &body, out_over);
    if (max_ids && body.count > max_ids) *out_over = true;
  }
  byte_buffer_release(&normalized);
  piece_list_release(&raw);
  if (!status && add_special_tokens && tokenizer->has_template) {
    for (size_t i = 0; !status && i < tokenizer->template_count; i++) {
      const template_item *item = &tokenizer->template_items[i];
      const int32_t *ids = item->ids ? item->ids : body.ids;
      size_t count = item->ids ? item->count : body.count;
      for (size_t j = 0; j < count && !status; j++)
        if (!token_ids_push(out, ids[j])) status = out_of_memory();
    }
  } else {
    for (size_t j = 0; !status && j < body.count; j++)
      if (!token_ids_push(out, body.ids[j])) status = out_of_memory();
  }
  vlm_token_ids_release(&body);
  vlm_arena_reset(&arena);
  return status;
}

vlm_status vlm_tokenizer_encode_bounded(const vlm_tokenizer *tokenizer, const char *text, size_t length,
                                        bool add_special_tokens, size_t max_ids, vlm_token_ids *out,
                                        bool *out_over) {
  bool over = false;
  if (!out_over) out_over = &over;
  *out_over = false;
  if (!tokenizer || (!text && length))
    return VLM_ERROR(INVALID_ARGUMENT, "vlm_tokenizer_encode: no tokenizer or text");
  if (!text) text = "";
  size_t sanitized_length = 0;
  char *sanitized = utf8_sanitize(text, length, &sanitized_length);
  vlm_status status = encode_valid(tokenizer, sanitized ? sanitized : text, sanitized ? sanitized_length : length,
                                   add_special_tokens, max_ids, out, out_over);
  free(sanitized);
  return status;
}

vlm_status vlm_tokenizer_encode(const vlm_tokenizer *tokenizer, const char *text, size_t length,
                                bool add_special_tokens, vlm_token_ids *out) {
  return vlm_tokenizer_encode_bounded(tokenizer, text, length, add_special_tokens, 0, out, NULL);
}

/* processing_utils.py ProcessorMixin.apply_chat_template: the processor call
 * adds special tokens unless the rendered prompt starts with bos_token (a
 * plain string prefix test on the text, before any tokenization). */
bool vlm_tokenizer_chat_adds_special_tokens(const vlm_tokenizer *tokenizer, const char *text,
                                            size_t length, vlm_prompt_flow flow) {
  if (!tokenizer || flow != VLM_PROMPT_FLOW_PROCESSOR) return false;
  if (!text) length = 0;
  const char *bos = tokenizer->bos_token;
  size_t bos_length = tokenizer->bos_token_length;
  return !(bos && length >= bos_length && memcmp(text, bos, bos_length) == 0);
}

vlm_status vlm_tokenizer_encode_chat(const vlm_tokenizer *tokenizer, const char *text,
                                     size_t length, vlm_prompt_flow flow, vlm_token_ids *out) {
  return vlm_tokenizer_encode_chat_bounded(tokenizer, text, length, flow, 0, out, NULL);
}

vlm_status vlm_tokenizer_encode_chat_bounded(const vlm_tokenizer *tokenizer, const char *text, size_t length,
                                             vlm_prompt_flow flow, size_t max_ids, vlm_token_ids *out,
                                             bool *out_over) {
  if (out_over) *out_over = false;
  if (!tokenizer || (!text && length))
    return VLM_ERROR(INVALID_ARGUMENT, "vlm_tokenizer_encode_chat: no tokenizer or text");
  if (!text) text = "";
  return vlm_tokenizer_encode_bounded(tokenizer, text, length,
                                      vlm_tokenizer_chat_adds_special_tokens(tokenizer, text, length, flow),
                                      max_ids, out, out_over);
}
