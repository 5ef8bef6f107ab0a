/* Internals of the tokenizer (include/vlm/tokenizer.h), shared by its files:
 *
 *   tokenizer_tables.c      hash tables (vocabulary, merges, added-token trie),
 *                           UTF-8 helpers
 *   tokenizer_regex.c       Oniguruma patterns (the engine `tokenizers` uses)
 *   tokenizer_load.c        tokenizer.json / tokenizer_config.json -> structs
 *   tokenizer_normalize.c   normalizers
 *   tokenizer_pretokenize.c pre-tokenizers
 *   tokenizer_model.c       BPE and WordPiece models
 *   tokenizer_encode.c      the encode pipeline and post-processing
 *   tokenizer_decode.c      decoders and vlm_tokenizer_decode
 *   detokenizer.c           streaming decode and stop strings
 *
 * Every step mirrors the corresponding Rust type in huggingface/tokenizers;
 * comments note where its behaviour is surprising. */
#ifndef VLM_TEXT_TOKENIZER_INTERNAL_H
#define VLM_TEXT_TOKENIZER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"
#include "io/json.h"
#include "vlm.h"
#include "vlm/tokenizer.h"

/* ---- UTF-8 ------------------------------------------------------------- */

/* Decodes one code point of valid UTF-8 at text[0] (length > 0); returns its
 * byte length. */
size_t utf8_decode(const char *text, size_t length, uint32_t *out_codepoint);
/* Writes the UTF-8 of `codepoint` to out (4 bytes room); returns the length. */
size_t utf8_encode(uint32_t codepoint, char *out);
/* Length of the valid UTF-8 sequence starting at text[0], or 0 if invalid
 * (Python/Rust rules: no overlongs, no surrogates, max U+10FFFF). On 0,
 * *out_invalid_length is the maximal invalid subpart to replace. */
size_t utf8_valid_sequence(const unsigned char *text, size_t length,
                           size_t *out_invalid_length);
/* Rust's char::is_whitespace (the Unicode White_Space property). */
bool unicode_is_whitespace(uint32_t codepoint);
bool unicode_is_alphanumeric(uint32_t codepoint);
bool unicode_is_numeric(uint32_t codepoint);

/* A growable byte buffer (malloc-backed). */
typedef struct byte_buffer {
  char *data;
  size_t length;
  size_t capacity;
} byte_buffer;
bool byte_buffer_append(byte_buffer *buffer, const char *data, size_t length);
void byte_buffer_release(byte_buffer *buffer);

/* Replaces invalid UTF-8 with U+FFFD. Returns NULL when `text` was already
 * valid (nothing allocated), else a malloc'd copy. */
char *utf8_sanitize(const char *text, size_t length, size_t *out_length);

/* ---- Hash tables -------------------------------------------------------- */

/* String -> id. Strings live in the tokenizer's arena. */
typedef struct string_table {
  const char **strings; /* by slot */
  uint32_t *lengths;
  int32_t *ids;
  size_t slot_count;    /* power of two */
  size_t used;
} string_table;

vlm_status string_table_init(string_table *table, size_t expected);
/* Inserts or overwrites (Hugging Face's maps keep the last entry). */
vlm_status string_table_put(string_table *table, const char *string, size_t length,
                            int32_t id);
int32_t string_table_get(const string_table *table, const char *string, size_t length);
void string_table_release(string_table *table);

/* uint64 key -> two uint32 values (merges: pair -> rank, new id; trie
 * edges: node/byte -> child). */
typedef struct pair_table {
  uint64_t *keys; /* key + 1; 0 marks an empty slot */
  uint32_t *first;
  uint32_t *second;
  size_t slot_count;
  size_t used;
} pair_table;

vlm_status pair_table_init(pair_table *table, size_t expected);
vlm_status pair_table_put(pair_table *table, uint64_t key, uint32_t first, uint32_t second);
bool pair_table_get(const pair_table *table, uint64_t key, uint32_t *first, uint32_t *second);
void pair_table_release(pair_table *table);

/* A byte trie for leftmost-longest matching of added tokens. */
typedef struct token_trie {
  pair_table edges;          /* (node << 8 | byte) -> child */
  int32_t *terminal;         /* node -> added-token index, or -1 */
  size_t node_count;
  size_t node_capacity;
  bool first_byte[256];      /* quick reject */
} token_trie;

vlm_status token_trie_init(token_trie *trie);
vlm_status token_trie_insert(token_trie *trie, const char *text, size_t length,
                             int32_t value);
/* Longest entry that is a prefix of text; returns its length (0 = none). */
size_t token_trie_longest(const token_trie *trie, const char *text, size_t length,
                          int32_t *out_value);
void token_trie_release(token_trie *trie);

/* ---- Regular expressions ---------------------------------------------- */

typedef struct tokenizer_regex tokenizer_regex;

vlm_status tokenizer_regex_compile(const char *pattern, size_t length,
                                   tokenizer_regex **out_regex);
void tokenizer_regex_release(tokenizer_regex *regex);

typedef struct match_range {
  size_t start;
  size_t end;
} match_range;

typedef struct match_list {
  match_range *items;
  size_t count;
  size_t capacity;
} match_list;

/* All non-overlapping matches, left to right (Rust onig's find_iter). */
vlm_status tokenizer_regex_find_all(const tokenizer_regex *regex, const char *text,
                                    size_t length, match_list *out);
/* The same resumably: the next `max` matches (0: all the rest) into `out`
 * (cleared first), from where `cursor` (zeroed to start) left off. */
typedef struct regex_cursor {
  size_t position, last_match_end;
  bool have_last, done;
} regex_cursor;
vlm_status tokenizer_regex_find_some(const tokenizer_regex *regex, const char *text, size_t length,
                                     regex_cursor *cursor, size_t max, match_list *out);
/* All non-overlapping occurrences of a literal (str::match_indices). */
vlm_status literal_find_all(const char *needle, size_t needle_length, const char *text,
                            size_t length, match_list *out);
void match_list_release(match_list *list);

/* ---- Pipeline components -------------------------------------------- */

typedef struct text_pattern {
  const char *literal;       /* String pattern, or NULL */
  size_t literal_length;
  tokenizer_regex *regex;    /* Regex pattern, or NULL */
} text_pattern;

typedef enum normalizer_kind {
  NORMALIZER_SEQUENCE,
  NORMALIZER_NFC,
  NORMALIZER_NFD,
  NORMALIZER_NFKC,
  NORMALIZER_NFKD,
  NORMALIZER_LOWERCASE,
  NORMALIZER_PREPEND,
  NORMALIZER_REPLACE,
  NORMALIZER_STRIP,
  NORMALIZER_STRIP_ACCENTS,
} normalizer_kind;

typedef struct tokenizer_normalizer tokenizer_normalizer;
struct tokenizer_normalizer {
  normalizer_kind kind;
  tokenizer_normalizer *children;
  size_t child_count;
  text_pattern pattern;      /* Replace */
  const char *content;       /* Replace: replacement; Prepend: prefix */
  size_t content_length;
  bool strip_left, strip_right;
};

typedef enum split_behavior {
  SPLIT_REMOVED,
  SPLIT_ISOLATED,
  SPLIT_MERGED_WITH_PREVIOUS,
  SPLIT_MERGED_WITH_NEXT,
  SPLIT_CONTIGUOUS,
} split_behavior;

typedef enum prepend_scheme { PREPEND_ALWAYS, PREPEND_FIRST, PREPEND_NEVER } prepend_scheme;

typedef enum pre_tokenizer_kind {
  PRE_TOKENIZER_SEQUENCE,
  PRE_TOKENIZER_SPLIT,
  PRE_TOKENIZER_BYTE_LEVEL,
  PRE_TOKENIZER_METASPACE,
  PRE_TOKENIZER_DIGITS,
  PRE_TOKENIZER_WHITESPACE,
  PRE_TOKENIZER_WHITESPACE_SPLIT,
} pre_tokenizer_kind;

typedef struct tokenizer_pre_tokenizer tokenizer_pre_tokenizer;
struct tokenizer_pre_tokenizer {
  pre_tokenizer_kind kind;
  tokenizer_pre_tokenizer *children;
  size_t child_count;
  text_pattern pattern;      /* Split; ByteLevel/Whitespace: built-in regex */
  split_behavior behavior;
  bool invert;
  bool add_prefix_space;     /* ByteLevel */
  bool use_regex;            /* ByteLevel */
  char replacement[5];       /* Metaspace, UTF-8 */
  size_t replacement_length;
  prepend_scheme prepend;    /* Metaspace */
  bool split;                /* Metaspace */
  bool individual_digits;    /* Digits */
};

typedef enum decoder_kind {
  DECODER_SEQUENCE,
  DECODER_BYTE_LEVEL,
  DECODER_METASPACE,
  DECODER_BYTE_FALLBACK,
  DECODER_FUSE,
  DECODER_STRIP,
  DECODER_REPLACE,
  DECODER_WORDPIECE,
} decoder_kind;

typedef struct tokenizer_decoder tokenizer_decoder;
struct tokenizer_decoder {
  decoder_kind kind;
  tokenizer_decoder *children;
  size_t child_count;
  text_pattern pattern;      /* Replace */
  const char *content;       /* Replace: replacement; WordPiece: prefix */
  size_t content_length;
  uint32_t strip_char;       /* Strip */
  size_t strip_start, strip_stop;
  char replacement[5];       /* Metaspace */
  size_t replacement_length;
  prepend_scheme prepend;
  bool cleanup;              /* WordPiece */
};

typedef enum model_kind { MODEL_BPE, MODEL_WORDPIECE } model_kind;

typedef struct tokenizer_model {
  model_kind kind;
  string_table vocabulary;
  pair_table merges;         /* (left id << 32 | right id) -> rank, new id */
  int32_t unknown_id;        /* -1: none */
  bool fuse_unknown;
  bool byte_fallback;
  bool ignore_merges;
  const char *continuing_prefix; /* "" when none */
  size_t continuing_prefix_length;
  const char *end_of_word_suffix;
  size_t end_of_word_suffix_length;
  int32_t byte_fallback_ids[256]; /* "<0xXX>" ids, -1 when absent */
  size_t max_input_chars_per_word; /* WordPiece */
} tokenizer_model;

typedef struct added_token {
  const char *content;
  size_t length;
  int32_t id;
  bool single_word, lstrip, rstrip, normalized, special;
} added_token;

/* One element of a post-processor template: a run of special ids, or the
 * sequence itself (ids == NULL). */
typedef struct template_item {
  const int32_t *ids;
  size_t count;
} template_item;

struct vlm_tokenizer {
  const vlm_allocator *allocator;
  vlm_arena arena;                 /* every string and array below */
  tokenizer_model model;
  tokenizer_normalizer *normalizer;       /* NULL: none */
  tokenizer_pre_tokenizer *pre_tokenizer; /* NULL: none */
  tokenizer_decoder *decoder;             /* NULL: join with spaces */
  template_item *template_items;          /* post-processor, single sequence */
  size_t template_count;
  bool has_template;
  added_token *added;
  size_t added_count;
  token_trie raw_trie;             /* added tokens with normalized = false */
  token_trie normalized_trie;      /* the others, after normalization */
  bool has_raw_trie, has_normalized_trie;
  string_table added_by_content;   /* content -> id */
  /* id -> token string, for decode (added tokens override the model's). */
  const char **id_strings;
  uint32_t *id_lengths;
  bool *id_special;
  size_t id_count;
  vlm_special_token_ids special_ids;
  size_t max_bytes_per_token;      /* tokenizer_bound.c; 0: no bound */
  /* With a bound, the longest token string in the model's own alphabet
   * (at least 4, one unknown character): a piece of n such bytes gives at
   * least ceil(n / it) tokens, so a bounded encode can stop before the
   * model runs on a piece that alone cannot fit. 0 without a bound. */
  size_t longest_token_bytes;
  /* tokenizer_config.json's bos_token string (NULL: none), which the
   * processor flow looks for at the start of a rendered prompt. */
  const char *bos_token;
  size_t bos_token_length;
};

/* At most how many input bytes one token stands for, 0 when the pipeline
 * can drop text (tokenizer_bound.c). */
size_t tokenizer_compute_bytes_per_token(const vlm_tokenizer *tokenizer);

/* Loader (tokenizer_load.c). */
vlm_status tokenizer_load(vlm_tokenizer *tokenizer, const vlm_json_value *root,
                          const vlm_json_value *config, const vlm_tokenizer_options *options);

/* Components built from JSON, shared by the loader's override path. */
vlm_status text_pattern_from_json(vlm_tokenizer *tokenizer, const vlm_json_value *value,
                                  text_pattern *out);
void text_pattern_release(text_pattern *pattern);
void normalizer_release(tokenizer_normalizer *normalizer);
void pre_tokenizer_release(tokenizer_pre_tokenizer *pre_tokenizer);
void decoder_release(tokenizer_decoder *decoder);

/* Pieces of text flowing through the pipeline. Text lives in the input, in
 * the per-call arena, or in the tokenizer. */
typedef struct text_piece {
  const char *text;
  size_t length;
  int32_t token_id;   /* >= 0: an added token, already final */
  bool at_start;      /* begins at offset 0 of the original text */
} text_piece;

typedef struct piece_list {
  text_piece *items;
  size_t count;
  size_t capacity;
} piece_list;

bool piece_list_push(piece_list *list, const char *text, size_t length, int32_t token_id,
                     bool at_start);
void piece_list_release(piece_list *list);

/* Normalizes one string into `out` (replacing its contents). Sets
 * *dropped_start (when given) if text at the very start was removed, so the
 * result no longer begins at the original's first character (Metaspace's
 * prepend_scheme "first" looks at original offsets). */
vlm_status normalizer_apply(const tokenizer_normalizer *normalizer, const char *text,
                            size_t length, byte_buffer *out, bool *dropped_start);
/* Replaces `pieces` by their pre-tokenized pieces. New text goes to `arena`. */
/* Pre-tokenizing one long piece a batch at a time, for a caller that may
 * stop early: possible when the first pre-tokenizer (of a Sequence, or the
 * only one) isolates regex matches (Split with behavior Isolated and no
 * invert, or ByteLevel with its regex and no prefix space), since then
 * each match and each gap between matches is a piece of its own, and the
 * later ones map each piece on its own. Each call appends the final
 * pieces of the next `max_matches` matches' stretch of text; `done` once
 * the piece is used up. */
typedef struct pre_tokenizer_stream {
  const tokenizer_pre_tokenizer *first;
  const tokenizer_pre_tokenizer *rest; /* the Sequence's later children */
  size_t rest_count;
  text_piece piece;
  regex_cursor cursor;
  size_t previous_end;
  bool done;
} pre_tokenizer_stream;
bool pre_tokenizer_stream_start(const tokenizer_pre_tokenizer *pre_tokenizer, const text_piece *piece,
                                pre_tokenizer_stream *out);
vlm_status pre_tokenizer_stream_next(pre_tokenizer_stream *stream, size_t max_matches, vlm_arena *arena,
                                     piece_list *out);
vlm_status pre_tokenizer_apply(const tokenizer_pre_tokenizer *pre_tokenizer,
                               piece_list *pieces, vlm_arena *arena);
/* Tokenizes one pre-token with the model, appending ids. */
vlm_status model_tokenize(const tokenizer_model *model, const char *text, size_t length,
                          vlm_token_ids *out);
bool token_ids_push(vlm_token_ids *ids, int32_t id);

/* The byte <-> character map of GPT-2's byte-level BPE. */
const char *byte_level_char(uint8_t byte, size_t *out_length);
/* The byte a mapped character stands for, or -1. */
int byte_level_byte(uint32_t codepoint);

#endif
