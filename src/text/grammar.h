/* Constrained decoding: a context-free grammar over bytes and the matcher
 * that says which tokens can continue a valid output.
 *
 * Grammar text is GBNF as llama.cpp reads it:
 *
 *   root   ::= "{" ws pair ("," ws pair)* "}"      # comments run to the line's end
 *   pair   ::= [a-z]+ ":" ws value
 *   value  ::= "true" | "false" | [0-9]{1,3} | "\"" [^"\\]* "\""
 *   ws     ::= [ \t\n]*
 *
 * literals "..." and classes [...] / [^...] (escapes \n \t \r \\ \" \] \xHH
 * \uHHHH, code points written as UTF-8), `.` (any character), groups,
 * `*` `+` `?` `{m}` `{m,}` `{m,n}`. `root` is the start rule. Classes are
 * over code points; a negated class may only exclude ASCII characters.
 *
 * Matching follows llama.cpp's grammar sampler: the state is a set of
 * pushdown stacks (positions in rules), advanced one byte at a time. A
 * grammar that could loop without consuming input (left recursion, also
 * through rules that match the empty string) is refused when it is
 * compiled, and every state is bounded (stacks per state, work per step),
 * so a hostile grammar costs bounded time and memory: over a bound the
 * step fails with RESOURCE_EXHAUSTED instead of running on.
 *
 * Tokens: a vlm_token_index holds the vocabulary's decoded bytes in a trie
 * (built once per tokenizer). The mask of the tokens a state allows is one
 * depth-first walk of the trie that prunes a subtree as soon as its prefix
 * is rejected, so a step visits only the prefixes the grammar allows, and
 * masks are cached per state (a JSON string's body is one state however
 * long it grows). */
#ifndef VLM_TEXT_GRAMMAR_H
#define VLM_TEXT_GRAMMAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vlm.h"
#include "vlm/tokenizer.h"

/* Bounds on what a grammar may be (hostile input). */
#define VLM_GRAMMAR_MAX_TEXT_BYTES (4u << 20)  /* grammar source */
#define VLM_GRAMMAR_MAX_ELEMENTS 1000000       /* compiled elements, repetitions expanded */
#define VLM_GRAMMAR_MAX_RULES 200000
#define VLM_GRAMMAR_MAX_REPEAT 10000           /* m and n of {m,n} */
#define VLM_GRAMMAR_MAX_NESTING 200            /* parentheses */
#define VLM_GRAMMAR_MAX_STACKS 512             /* stacks in one state */

typedef struct vlm_grammar vlm_grammar;

/* Parses and checks `text`. Errors (INVALID_ARGUMENT) name the line and
 * what is wrong; over a bound, RESOURCE_EXHAUSTED. */
vlm_status vlm_grammar_parse(const char *text, size_t length, vlm_grammar **out_grammar);
void vlm_grammar_release(vlm_grammar *grammar);
int32_t vlm_grammar_rule_count(const vlm_grammar *grammar);

/* ---- byte-level matching ---------------------------------------------- */

typedef struct vlm_grammar_matcher vlm_grammar_matcher;

/* The matcher borrows `grammar` (keep it alive). */
vlm_status vlm_grammar_matcher_create(const vlm_grammar *grammar, vlm_grammar_matcher **out_matcher);
void vlm_grammar_matcher_release(vlm_grammar_matcher *matcher);
/* Feeds bytes. False (state unchanged) when they cannot continue a valid
 * output; *out_status is set when a bound was hit. */
bool vlm_grammar_matcher_accept_bytes(vlm_grammar_matcher *matcher, const char *bytes, size_t length,
                                      vlm_status *out_status);
/* Whether what was fed so far is a complete sentence of the grammar. */
bool vlm_grammar_matcher_is_complete(const vlm_grammar_matcher *matcher);
/* Whether nothing more can follow (complete and no continuation). */
bool vlm_grammar_matcher_is_finished(const vlm_grammar_matcher *matcher);

/* ---- tokens ------------------------------------------------------------ */

typedef struct vlm_token_index vlm_token_index;

/* The trie of every token's bytes as it decodes mid-text (special tokens
 * left out: they decode to nothing in a completion), and the end tokens
 * (`end_tokens`: allowed only where the grammar is complete). */
/* Token ids from `vocab_limit` on (a tokenizer's ids past the model's
 * embedding rows) are left out; <= 0: no limit. */
vlm_status vlm_token_index_create(const vlm_tokenizer *tokenizer, int32_t vocab_limit, const int32_t *end_tokens,
                                  int32_t end_token_count, vlm_token_index **out_index);
/* From explicit byte strings (tests, benches): token i is tokens[i] of
 * lengths[i] bytes; NULL entries are never allowed. */
vlm_status vlm_token_index_create_from_bytes(const char *const *tokens, const size_t *lengths,
                                             int32_t count, const int32_t *end_tokens,
                                             int32_t end_token_count, vlm_token_index **out_index);
void vlm_token_index_release(vlm_token_index *index);
int32_t vlm_token_index_vocab_size(const vlm_token_index *index);

/* Fills `bits` (one bit per token, (vocab+31)/32 words) with the tokens
 * the current state allows: those whose bytes continue it, and the end
 * tokens when it is complete. Cached per state. */
vlm_status vlm_grammar_matcher_fill_mask(vlm_grammar_matcher *matcher, const vlm_token_index *index,
                                         uint32_t *bits);
/* Whether `token` is allowed now (cheaper than a mask: only its bytes). */
bool vlm_grammar_matcher_allows_token(vlm_grammar_matcher *matcher, const vlm_token_index *index,
                                      int32_t token);
/* Advances by the token's bytes; an end token is accepted when complete.
 * INVALID_ARGUMENT when the token is not allowed. */
vlm_status vlm_grammar_matcher_accept_token(vlm_grammar_matcher *matcher, const vlm_token_index *index,
                                            int32_t token);

/* Counters for benches and tests. */
typedef struct vlm_grammar_stats {
  int64_t masks_computed;
  int64_t mask_cache_hits;
  int64_t trie_nodes_visited;
} vlm_grammar_stats;
vlm_grammar_stats vlm_grammar_matcher_stats(const vlm_grammar_matcher *matcher);

#endif
