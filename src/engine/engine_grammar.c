/* Constrained decoding in the engine: a request's grammar is parsed at
 * submit (the caller's thread, bounded by text/grammar.h's limits), the
 * vocabulary's token trie is built once, with the first such request, and
 * each slot running a grammar has a matcher behind its sampler's
 * constraint (engine/sampling.h).
 *
 * The request's stop controls under a grammar, so that a constrained
 * output always parses:
 *   - the model's EOS ids are allowed only where the grammar is complete
 *     (the token index's end tokens), and end the output there;
 *   - stop_token_ids likewise: allowed exactly where the grammar is
 *     complete (even a text token whose bytes would continue it), masked
 *     elsewhere; sampled, they end the output (not in the text);
 *   - ignore_eos masks the EOS ids everywhere (unless they are also
 *     stop_token_ids): the output then ends where the grammar admits
 *     nothing more, at a stop_token_id, or at max_tokens. */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/status.h"
#include "engine/engine_internal.h"
#include "text/grammar.h"

typedef struct engine_constraint {
  vlm_grammar_matcher *matcher;
  const vlm_token_index *index;
  const vlm_engine_request *request; /* stop_token_ids, ignore_eos */
  const int32_t *eos;                /* the engine's stop tokens */
  int eos_count;
} engine_constraint;

static bool is_request_stop(const engine_constraint *c, int32_t token) {
  for (size_t i = 0; i < c->request->stop_token_id_count; i++)
    if (c->request->stop_token_ids[i] == token) return true;
  return false;
}

static bool is_ignored_eos(const engine_constraint *c, int32_t token) {
  if (!c->request->ignore_eos) return false;
  for (int i = 0; i < c->eos_count; i++)
    if (c->eos[i] == token) return !is_request_stop(c, token);
  return false;
}

static vlm_status ensure_token_index(vlm_engine *engine, const vlm_token_index **out_index) {
  pthread_mutex_lock(&engine->grammar_mutex);
  vlm_status status = VLM_OK;
  if (!engine->token_index) {
    double start = engine_now_seconds();
    status = vlm_token_index_create(engine->tokenizer, (int32_t)engine->vocab_size, engine->stop_tokens,
                                    engine->stop_token_count,
                                    &engine->token_index);
    if (!status)
      vlm_log(VLM_LOG_INFO, "constrained decoding: token trie of %lld tokens built in %.0f ms",
              (long long)engine->vocab_size, (engine_now_seconds() - start) * 1000);
  }
  *out_index = engine->token_index;
  pthread_mutex_unlock(&engine->grammar_mutex);
  return status;
}

vlm_status engine_grammar_prepare(vlm_engine *engine, const char *grammar_text, vlm_engine_request *request) {
  const vlm_token_index *index = NULL;
  VLM_RETURN_IF_ERROR(vlm_grammar_parse(grammar_text, strlen(grammar_text), &request->grammar));
  return ensure_token_index(engine, &index);
}

static bool constraint_allows(void *context, int32_t token) {
  engine_constraint *c = context;
  if (is_request_stop(c, token)) return vlm_grammar_matcher_is_complete(c->matcher);
  if (is_ignored_eos(c, token)) return false;
  return vlm_grammar_matcher_allows_token(c->matcher, c->index, token);
}

static void set_bit(uint32_t *bits, int32_t token, bool on) {
  if (on) bits[token >> 5] |= 1u << (token & 31);
  else bits[token >> 5] &= ~(1u << (token & 31));
}

/* Tokens past the tokenizer's vocabulary (padding rows of the model's
 * embedding) are never allowed. */
static vlm_status constraint_fill(void *context, uint32_t *bits) {
  engine_constraint *c = context;
  VLM_RETURN_IF_ERROR(vlm_grammar_matcher_fill_mask(c->matcher, c->index, bits));
  int32_t vocab = vlm_token_index_vocab_size(c->index);
  if (c->request->ignore_eos)
    for (int i = 0; i < c->eos_count; i++)
      if (c->eos[i] >= 0 && c->eos[i] < vocab && is_ignored_eos(c, c->eos[i])) set_bit(bits, c->eos[i], false);
  bool complete = c->request->stop_token_id_count && vlm_grammar_matcher_is_complete(c->matcher);
  for (size_t i = 0; i < c->request->stop_token_id_count; i++)
    if (c->request->stop_token_ids[i] < vocab) set_bit(bits, c->request->stop_token_ids[i], complete);
  return VLM_OK;
}

static vlm_status constraint_accept(void *context, int32_t token) {
  engine_constraint *c = context;
  if (is_request_stop(c, token)) /* it ends the output: nothing to advance */
    return vlm_grammar_matcher_is_complete(c->matcher)
               ? VLM_OK
               : VLM_ERROR(INVALID_ARGUMENT, "grammar: stop token %d before the grammar is complete", token);
  return vlm_grammar_matcher_accept_token(c->matcher, c->index, token);
}

vlm_status engine_grammar_attach(vlm_engine *engine, engine_slot *slot) {
  engine_constraint *c = calloc(1, sizeof(*c));
  if (!c) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  slot->constraint = c;
  c->index = engine->token_index;
  c->request = slot->request;
  c->eos = engine->stop_tokens;
  c->eos_count = engine->stop_token_count;
  VLM_RETURN_IF_ERROR(vlm_grammar_matcher_create(slot->request->grammar, &c->matcher));
  vlm_token_constraint constraint = {c, constraint_allows, constraint_fill, constraint_accept};
  return vlm_sampler_set_constraint(slot->sampler, &constraint);
}

bool engine_grammar_finished(const engine_slot *slot) {
  return slot->constraint && slot->constraint->matcher && vlm_grammar_matcher_is_finished(slot->constraint->matcher);
}

void engine_grammar_detach(engine_slot *slot) {
  if (!slot->constraint) return;
  vlm_grammar_matcher_release(slot->constraint->matcher);
  free(slot->constraint);
  slot->constraint = NULL;
}

void engine_grammar_release(vlm_engine *engine) {
  vlm_token_index_release(engine->token_index);
  engine->token_index = NULL;
}
