/* Per-token cost of constrained decoding (text/grammar.h behind the
 * sampler, engine/sampling.h) on a real vocabulary, against unconstrained
 * greedy sampling of the same logits. Prints one JSON line.
 *
 *   masked    random logits: the greedy choice is almost never allowed, so
 *             every step computes the mask (trie walk or cache) and
 *             re-picks: the worst case
 *   agreeing  the tokens of the masked run replayed with their logit
 *             boosted (a model that already follows the schema): the
 *             sampler's first check allows them, no mask
 * Usage: grammar_bench TOKENIZER_DIR VOCAB [STEPS] [SCHEMA.json] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/sampling.h"
#include "text/grammar.h"
#include "text/grammar_schema.h"
#include "vlm/tokenizer.h"

static const char *const NESTED =
    "{\"type\":\"object\",\"properties\":{"
    "\"id\":{\"type\":\"string\",\"format\":\"uuid\"},"
    "\"name\":{\"type\":\"string\",\"maxLength\":40},"
    "\"age\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":150},"
    "\"address\":{\"type\":\"object\",\"properties\":{\"street\":{\"type\":\"string\",\"maxLength\":60},"
    "\"city\":{\"type\":\"string\",\"maxLength\":30},\"zip\":{\"type\":\"string\",\"pattern\":\"^[0-9]{5}$\"}},"
    "\"required\":[\"street\",\"city\",\"zip\"],\"additionalProperties\":false},"
    "\"tags\":{\"type\":\"array\",\"items\":{\"enum\":[\"admin\",\"user\",\"guest\"]},\"maxItems\":4},"
    "\"scores\":{\"type\":\"array\",\"items\":{\"type\":\"number\",\"minimum\":0,\"maximum\":100},\"maxItems\":5},"
    "\"friends\":{\"type\":\"array\",\"maxItems\":3,\"items\":{\"type\":\"object\",\"properties\":{"
    "\"name\":{\"type\":\"string\",\"maxLength\":20},\"since\":{\"type\":\"string\",\"format\":\"date\"}},"
    "\"required\":[\"name\",\"since\"],\"additionalProperties\":false}}},"
    "\"required\":[\"id\",\"name\",\"age\",\"address\",\"tags\",\"scores\",\"friends\"],\"additionalProperties\":false}";

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct bench_constraint {
  vlm_grammar_matcher *matcher;
  const vlm_token_index *index;
  const vlm_grammar *grammar;
  int restarts;
} bench_constraint;

static bool allows(void *context, int32_t token) {
  bench_constraint *c = context;
  return vlm_grammar_matcher_allows_token(c->matcher, c->index, token);
}
static vlm_status fill(void *context, uint32_t *bits) {
  bench_constraint *c = context;
  return vlm_grammar_matcher_fill_mask(c->matcher, c->index, bits);
}
static vlm_status accept(void *context, int32_t token) {
  bench_constraint *c = context;
  return vlm_grammar_matcher_accept_token(c->matcher, c->index, token);
}

static uint64_t state = 88172645463325252ull;
static float random_float(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (float)(state >> 40) / (float)(1 << 24) * 8.0f - 4.0f;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: grammar_bench TOKENIZER_DIR VOCAB [STEPS] [SCHEMA.json]\n");
    return 2;
  }
  int32_t vocab = atoi(argv[2]);
  int steps = argc > 3 ? atoi(argv[3]) : 2000;
  vlm_tokenizer *tokenizer = NULL;
  vlm_status status = vlm_tokenizer_create(argv[1], NULL, &tokenizer);
  if (status) {
    fprintf(stderr, "%s\n", vlm_status_message(status));
    return 1;
  }
  int32_t eos = vlm_tokenizer_special_ids(tokenizer).eos;
  double start = now_seconds();
  vlm_token_index *index = NULL;
  status = vlm_token_index_create(tokenizer, vocab, &eos, 1, &index);
  double index_seconds = now_seconds() - start;
  char *schema = NULL;
  size_t schema_length = 0;
  if (argc > 4) {
    FILE *file = fopen(argv[4], "rb");
    if (!file) return 1;
    schema = malloc(1 << 20);
    schema_length = fread(schema, 1, (1 << 20) - 1, file);
    fclose(file);
  }
  char *text = NULL;
  start = now_seconds();
  if (!status)
    status = vlm_json_schema_text_to_grammar(schema ? schema : NESTED, schema ? schema_length : strlen(NESTED), &text);
  vlm_grammar *grammar = NULL;
  if (!status) status = vlm_grammar_parse(text, strlen(text), &grammar);
  double compile_seconds = now_seconds() - start;
  if (status) {
    fprintf(stderr, "%s\n", vlm_status_message(status));
    return 1;
  }
  float *logits = malloc((size_t)vocab * sizeof(float));
  int32_t *tokens = malloc((size_t)steps * sizeof(int32_t));
  vlm_sampling_params params = vlm_sampling_params_greedy();
  vlm_sampler *plain = NULL, *constrained = NULL;
  vlm_sampler_create(&params, vocab, NULL, &plain);
  vlm_sampler_create(&params, vocab, NULL, &constrained);
  vlm_sampler_set_logprobs(plain, false);
  vlm_sampler_set_logprobs(constrained, false);
  bench_constraint c = {.index = index, .grammar = grammar};
  vlm_grammar_matcher_create(grammar, &c.matcher);
  vlm_token_constraint constraint = {&c, allows, fill, accept};
  vlm_sampler_set_constraint(constrained, &constraint);
  double plain_seconds = 0, masked_seconds = 0, agreeing_seconds = 0;
  int outputs = 1;
  for (int i = 0; i < steps; i++) {
    for (int32_t t = 0; t < vocab; t++) logits[t] = random_float();
    vlm_sample_result result;
    double t0 = now_seconds();
    vlm_sampler_sample(plain, logits, &result);
    double t1 = now_seconds();
    status = vlm_sampler_sample(constrained, logits, &result);
    double t2 = now_seconds();
    if (status) {
      fprintf(stderr, "step %d: %s\n", i, vlm_status_message(status));
      return 1;
    }
    plain_seconds += t1 - t0;
    masked_seconds += t2 - t1;
    tokens[i] = result.token;
    if (result.token == eos || vlm_grammar_matcher_is_finished(c.matcher)) { /* a whole output: start another */
      vlm_grammar_matcher_release(c.matcher);
      vlm_grammar_matcher_create(grammar, &c.matcher);
      outputs++;
    }
  }
  vlm_grammar_stats stats = vlm_grammar_matcher_stats(c.matcher);
  /* agreeing: replay */
  vlm_grammar_matcher_release(c.matcher);
  vlm_grammar_matcher_create(grammar, &c.matcher);
  vlm_sampler_reset(constrained);
  for (int i = 0; i < steps; i++) {
    for (int32_t t = 0; t < vocab; t++) logits[t] = random_float();
    logits[tokens[i]] = 100.0f;
    vlm_sample_result result;
    double t1 = now_seconds();
    vlm_sampler_sample(constrained, logits, &result);
    agreeing_seconds += now_seconds() - t1;
    if (result.token == eos || vlm_grammar_matcher_is_finished(c.matcher)) {
      vlm_grammar_matcher_release(c.matcher);
      vlm_grammar_matcher_create(grammar, &c.matcher);
    }
  }
  printf("{\"vocab\":%d,\"steps\":%d,\"outputs\":%d,\"index_build_ms\":%.1f,\"schema_compile_ms\":%.2f,"
         "\"grammar_rules\":%d,\"unconstrained_us_per_token\":%.2f,\"masked_us_per_token\":%.2f,"
         "\"agreeing_us_per_token\":%.2f,\"last_output_masks_computed\":%lld,\"last_output_cache_hits\":%lld,"
         "\"last_output_trie_nodes_visited\":%lld}\n",
         vocab, steps, outputs, index_seconds * 1e3, compile_seconds * 1e3, vlm_grammar_rule_count(grammar),
         plain_seconds / steps * 1e6, masked_seconds / steps * 1e6, agreeing_seconds / steps * 1e6,
         (long long)stats.masks_computed, (long long)stats.mask_cache_hits, (long long)stats.trie_nodes_visited);
  vlm_grammar_matcher_release(c.matcher);
  vlm_sampler_release(plain);
  vlm_sampler_release(constrained);
  vlm_grammar_release(grammar);
  vlm_token_index_release(index);
  vlm_tokenizer_release(tokenizer);
  free(text);
  free(schema);
  free(logits);
  free(tokens);
  return 0;
}
