#include "engine/sampling.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"

struct vlm_sampler {
  vlm_sampling_params params;
  const vlm_allocator *allocator;
  int32_t vocab_size;
  uint64_t rng[4];          /* xoshiro256** state */
  uint8_t *in_prompt;       /* vocab_size flags */
  int32_t *output_count;    /* vocab_size counts */
  int32_t *touched;         /* distinct ids seen, for cheap penalties/reset */
  int32_t touched_count;
  float *work;              /* vocab_size adjusted logits */
  int32_t *order;           /* vocab_size candidate ids */
  bool skip_logprobs;       /* nobody reads them: skip the log-softmax */
  vlm_token_constraint constraint; /* fill_mask NULL: none */
  uint32_t *allowed;        /* (vocab+31)/32 words, with a constraint */
  vlm_logit_bias *bias;     /* logit_bias entries (sampling_controls below) */
  size_t bias_count;
  int32_t *held_back;       /* min_tokens: ids masked while sampled < min_tokens */
  size_t held_back_count;
  int64_t min_tokens;
  int64_t sampled;          /* tokens sampled since creation or reset */
};

static void apply_controls(const vlm_sampler *sampler, float *values);

vlm_sampling_params vlm_sampling_params_greedy(void) {
  vlm_sampling_params params = {0};
  params.top_p = 1.0f;
  params.repetition_penalty = 1.0f;
  return params;
}

vlm_status vlm_sampling_params_validate(const vlm_sampling_params *params) {
  if (!(params->temperature >= 0.0f) || params->temperature > 100.0f)
    return VLM_ERROR(INVALID_ARGUMENT, "temperature must be between 0 and 100, got %g",
                     params->temperature);
  if (params->top_k < 0)
    return VLM_ERROR(INVALID_ARGUMENT, "top_k must be 0 (off) or positive, got %d", params->top_k);
  if (!(params->top_p > 0.0f && params->top_p <= 1.0f))
    return VLM_ERROR(INVALID_ARGUMENT, "top_p must be in (0, 1], got %g", params->top_p);
  if (!(params->min_p >= 0.0f && params->min_p <= 1.0f))
    return VLM_ERROR(INVALID_ARGUMENT, "min_p must be in [0, 1], got %g", params->min_p);
  if (!(params->repetition_penalty > 0.0f) || !isfinite(params->repetition_penalty))
    return VLM_ERROR(INVALID_ARGUMENT, "repetition_penalty must be positive, got %g",
                     params->repetition_penalty);
  if (!(fabsf(params->presence_penalty) <= 2.0f))
    return VLM_ERROR(INVALID_ARGUMENT, "presence_penalty must be between -2 and 2, got %g",
                     params->presence_penalty);
  if (!(fabsf(params->frequency_penalty) <= 2.0f))
    return VLM_ERROR(INVALID_ARGUMENT, "frequency_penalty must be between -2 and 2, got %g",
                     params->frequency_penalty);
  if (params->top_logprobs < 0 || params->top_logprobs > VLM_MAX_TOP_LOGPROBS)
    return VLM_ERROR(INVALID_ARGUMENT, "top_logprobs must be between 0 and %d, got %d",
                     VLM_MAX_TOP_LOGPROBS, params->top_logprobs);
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Seeded random numbers: splitmix64 expands the seed into xoshiro256**.   */
/* ---------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t rotate_left(uint64_t value, int bits) {
  return (value << bits) | (value >> (64 - bits));
}

static uint64_t next_random(uint64_t state[4]) {
  uint64_t result = rotate_left(state[1] * 5, 7) * 9;
  uint64_t shifted = state[1] << 17;
  state[2] ^= state[0];
  state[3] ^= state[1];
  state[1] ^= state[2];
  state[0] ^= state[3];
  state[2] ^= shifted;
  state[3] = rotate_left(state[3], 45);
  return result;
}

/* Uniform in [0, 1) with 53 random bits. */
static double next_uniform(uint64_t state[4]) {
  return (double)(next_random(state) >> 11) * (1.0 / 9007199254740992.0);
}

static void seed_generator(vlm_sampler *sampler) {
  uint64_t seed = sampler->params.seed;
  for (int i = 0; i < 4; i++) sampler->rng[i] = splitmix64(&seed);
}

/* ---------------------------------------------------------------------- */

vlm_status vlm_sampler_create(const vlm_sampling_params *params, int32_t vocab_size,
                              const vlm_allocator *allocator, vlm_sampler **out_sampler) {
  *out_sampler = NULL;
  VLM_RETURN_IF_ERROR(vlm_sampling_params_validate(params));
  if (vocab_size <= 0)
    return VLM_ERROR(INVALID_ARGUMENT, "sampler: vocab_size must be positive, got %d", vocab_size);
  vlm_sampler *sampler = vlm_allocate_zeroed(allocator, sizeof(*sampler), VLM_DEFAULT_ALIGNMENT);
  if (!sampler) return VLM_ERROR(RESOURCE_EXHAUSTED, "sampler: out of memory");
  sampler->params = *params;
  sampler->allocator = allocator;
  sampler->vocab_size = vocab_size;
  size_t count = (size_t)vocab_size;
  sampler->in_prompt = vlm_allocate_zeroed(allocator, count, VLM_DEFAULT_ALIGNMENT);
  sampler->output_count = vlm_allocate_zeroed(allocator, count * sizeof(int32_t), VLM_DEFAULT_ALIGNMENT);
  sampler->touched = vlm_allocate(allocator, count * sizeof(int32_t), VLM_DEFAULT_ALIGNMENT);
  sampler->work = vlm_allocate(allocator, count * sizeof(float), VLM_DEFAULT_ALIGNMENT);
  sampler->order = vlm_allocate(allocator, count * sizeof(int32_t), VLM_DEFAULT_ALIGNMENT);
  if (!sampler->in_prompt || !sampler->output_count || !sampler->touched || !sampler->work ||
      !sampler->order) {
    vlm_sampler_release(sampler);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "sampler: out of memory for a %d-token vocabulary",
                     vocab_size);
  }
  seed_generator(sampler);
  *out_sampler = sampler;
  return VLM_OK;
}

static void touch(vlm_sampler *sampler, int32_t token) {
  if (!sampler->in_prompt[token] && !sampler->output_count[token])
    sampler->touched[sampler->touched_count++] = token;
}

static vlm_status check_token(const vlm_sampler *sampler, int32_t token) {
  if (token < 0 || token >= sampler->vocab_size)
    return VLM_ERROR(OUT_OF_RANGE, "token id %d is outside the vocabulary (size %d)", token,
                     sampler->vocab_size);
  return VLM_OK;
}

vlm_status vlm_sampler_add_prompt(vlm_sampler *sampler, const int32_t *tokens, int64_t count) {
  for (int64_t i = 0; i < count; i++) VLM_RETURN_IF_ERROR(check_token(sampler, tokens[i]));
  for (int64_t i = 0; i < count; i++) {
    touch(sampler, tokens[i]);
    sampler->in_prompt[tokens[i]] = 1;
  }
  return VLM_OK;
}

void vlm_sampler_reset(vlm_sampler *sampler) {
  for (int32_t i = 0; i < sampler->touched_count; i++) {
    sampler->in_prompt[sampler->touched[i]] = 0;
    sampler->output_count[sampler->touched[i]] = 0;
  }
  sampler->touched_count = 0;
  sampler->sampled = 0;
  seed_generator(sampler);
}

void vlm_sampler_release(vlm_sampler *sampler) {
  if (!sampler) return;
  const vlm_allocator *allocator = sampler->allocator;
  vlm_release(allocator, sampler->in_prompt);
  vlm_release(allocator, sampler->output_count);
  vlm_release(allocator, sampler->touched);
  vlm_release(allocator, sampler->work);
  vlm_release(allocator, sampler->order);
  free(sampler->allowed);
  free(sampler->bias);
  free(sampler->held_back);
  vlm_release(allocator, sampler);
}

/* ---------------------------------------------------------------------- */
/* Steps                                                                   */
/* ---------------------------------------------------------------------- */

static void apply_penalties(vlm_sampler *sampler, float *logits) {
  const vlm_sampling_params *params = &sampler->params;
  for (int32_t i = 0; i < sampler->touched_count; i++) {
    int32_t token = sampler->touched[i];
    float value = logits[token];
    if (params->repetition_penalty != 1.0f)
      value = value < 0 ? value * params->repetition_penalty : value / params->repetition_penalty;
    int32_t count = sampler->output_count[token];
    if (count > 0) value -= params->presence_penalty + params->frequency_penalty * (float)count;
    logits[token] = value;
  }
}

/* Highest value, lowest index on ties (NaN never wins). */
static int32_t argmax(const float *values, int32_t count) {
  int32_t best = 0;
  for (int32_t i = 1; i < count; i++)
    if (values[i] > values[best] || (values[best] != values[best] && values[i] == values[i]))
      best = i;
  return best;
}

/* Orders ids by value descending, then id ascending: a total order, so the
 * result does not depend on the sort algorithm. */
static int compare_descending(const void *a, const void *b, void *context) {
  const float *values = context;
  int32_t left = *(const int32_t *)a, right = *(const int32_t *)b;
  float left_value = values[left], right_value = values[right];
  if (left_value != right_value) return left_value > right_value ? -1 : 1;
  return (left > right) - (left < right);
}

/* Moves the ids of the `keep` largest values (ties at the boundary
 * included) to the front of order[0..count) and returns how many there are;
 * sorts them by value descending, id ascending. */
static int32_t select_and_sort(const float *values, int32_t *order, int32_t count, int32_t keep) {
  int32_t kept = count;
  if (keep > 0 && keep < count) {
    /* The k-th largest value, by a copy sorted descending; then every id
     * with a value >= it survives (HF keeps ties). */
    qsort_r(order, (size_t)count, sizeof(*order), compare_descending, (void *)values);
    float threshold = values[order[keep - 1]];
    kept = keep;
    while (kept < count && values[order[kept]] >= threshold) kept++;
    return kept;
  }
  qsort_r(order, (size_t)kept, sizeof(*order), compare_descending, (void *)values);
  return kept;
}

/* Softmax over order[0..count) of values/temperature, written to probs. */
static void softmax_over(const float *values, const int32_t *order, int32_t count,
                         double temperature, double *probs) {
  double maximum = values[order[0]] / temperature, total = 0;
  for (int32_t i = 0; i < count; i++) {
    probs[i] = exp(values[order[i]] / temperature - maximum);
    total += probs[i];
  }
  for (int32_t i = 0; i < count; i++) probs[i] /= total;
}

static int32_t sample_from_filtered(vlm_sampler *sampler, const float *values) {
  const vlm_sampling_params *params = &sampler->params;
  int32_t count = 0;
  for (int32_t i = 0; i < sampler->vocab_size; i++)
    if (values[i] > -INFINITY) sampler->order[count++] = i; /* -inf and NaN never drawn */
  if (count == 0) return argmax(values, sampler->vocab_size);
  count = select_and_sort(values, sampler->order, count, params->top_k);
  double *probs = malloc((size_t)count * sizeof(double));
  if (!probs) return sampler->order[0];
  softmax_over(values, sampler->order, count, params->temperature, probs);
  int32_t kept = count;
  if (params->top_p < 1.0f) { /* keep while the mass before a token is < top_p */
    double before = 0;
    for (kept = 0; kept < count && (kept == 0 || before < params->top_p); kept++) before += probs[kept];
  }
  if (params->min_p > 0.0f) {
    double floor_probability = params->min_p * probs[0];
    int32_t above = 1;
    while (above < kept && probs[above] >= floor_probability) above++;
    kept = above;
  }
  double total = 0;
  for (int32_t i = 0; i < kept; i++) total += probs[i];
  double target = next_uniform(sampler->rng) * total, running = 0;
  int32_t chosen = sampler->order[kept - 1];
  for (int32_t i = 0; i < kept; i++) {
    running += probs[i];
    if (target < running) {
      chosen = sampler->order[i];
      break;
    }
  }
  free(probs);
  return chosen;
}

/* Log-softmax of the raw logits for the chosen token and the top ones. */
static void fill_logprobs(vlm_sampler *sampler, const float *logits, vlm_sample_result *result) {
  int32_t vocab = sampler->vocab_size;
  float maximum = logits[argmax(logits, vocab)];
  double total = 0;
  for (int32_t i = 0; i < vocab; i++) total += exp((double)logits[i] - maximum);
  double log_total = log(total) + maximum;
  result->logprob = (float)(logits[result->token] - log_total);
  int32_t wanted = sampler->params.top_logprobs;
  result->top_count = 0;
  /* Insertion into a small sorted array: wanted <= 20. */
  for (int32_t i = 0; i < vocab && wanted > 0; i++) {
    int32_t position = result->top_count;
    while (position > 0 && logits[result->top[position - 1].token] < logits[i]) position--;
    if (position >= wanted) continue;
    int32_t last = result->top_count < wanted ? result->top_count : wanted - 1;
    memmove(&result->top[position + 1], &result->top[position],
            (size_t)(last - position) * sizeof(result->top[0]));
    result->top[position].token = i;
    if (result->top_count < wanted) result->top_count++;
  }
  for (int32_t i = 0; i < result->top_count; i++)
    result->top[i].logprob = (float)(logits[result->top[i].token] - log_total);
}

void vlm_sampler_set_logprobs(vlm_sampler *sampler, bool wanted) { sampler->skip_logprobs = !wanted; }

vlm_status vlm_sampler_set_constraint(vlm_sampler *sampler, const vlm_token_constraint *constraint) {
  memset(&sampler->constraint, 0, sizeof(sampler->constraint));
  if (!constraint || !constraint->fill_mask) return VLM_OK;
  if (!sampler->allowed) {
    sampler->allowed = calloc(((size_t)sampler->vocab_size + 31) / 32, sizeof(uint32_t)); /* words past the tokenizer stay 0 */
    if (!sampler->allowed) return VLM_ERROR(RESOURCE_EXHAUSTED, "sampler: out of memory for a token mask");
  }
  sampler->constraint = *constraint;
  return VLM_OK;
}

/* Sets every token the constraint does not allow to -inf; false when it
 * allows none. */
static vlm_status apply_constraint(vlm_sampler *sampler, float *values) {
  VLM_RETURN_IF_ERROR(sampler->constraint.fill_mask(sampler->constraint.context, sampler->allowed));
  bool any = false;
  for (int32_t word = 0; word * 32 < sampler->vocab_size; word++) {
    uint32_t bits = sampler->allowed[word];
    int32_t base = word * 32, end = base + 32 < sampler->vocab_size ? base + 32 : sampler->vocab_size;
    if (bits == UINT32_MAX && end - base == 32) {
      any = true;
      continue;
    }
    for (int32_t i = base; i < end; i++)
      if (!((bits >> (i - base)) & 1u)) values[i] = -INFINITY;
      else any = true;
  }
  if (!any) return VLM_ERROR(FAILED_PRECONDITION, "the output's grammar allows no further token");
  return VLM_OK;
}

static vlm_status choose_constrained(vlm_sampler *sampler, float *values, int32_t *out_token) {
  bool greedy = sampler->params.temperature == 0.0f;
  if (greedy) {
    int32_t token = argmax(values, sampler->vocab_size);
    if (sampler->constraint.allows && sampler->constraint.allows(sampler->constraint.context, token)) {
      *out_token = token;
      return VLM_OK;
    }
  }
  if (greedy) { /* the best allowed token, visiting only the mask's set bits */
    VLM_RETURN_IF_ERROR(sampler->constraint.fill_mask(sampler->constraint.context, sampler->allowed));
    int32_t best = -1;
    for (int32_t word = 0; word * 32 < sampler->vocab_size; word++)
      for (uint32_t bits = sampler->allowed[word]; bits; bits &= bits - 1) {
        int32_t i = word * 32 + __builtin_ctz(bits);
        if (i >= sampler->vocab_size) break;
        if (best < 0 || values[i] > values[best] || (values[best] != values[best] && values[i] == values[i])) best = i;
      }
    if (best < 0) return VLM_ERROR(FAILED_PRECONDITION, "the output's grammar allows no further token");
    *out_token = best;
    return VLM_OK;
  }
  VLM_RETURN_IF_ERROR(apply_constraint(sampler, values));
  int32_t token = sample_from_filtered(sampler, values);
  if (!((sampler->allowed[token >> 5] >> (token & 31)) & 1u)) { /* only NaN logits were allowed */
    int32_t first = 0;
    while (!((sampler->allowed[first >> 5] >> (first & 31)) & 1u)) first++;
    token = first;
  }
  *out_token = token;
  return VLM_OK;
}

vlm_status vlm_sampler_sample(vlm_sampler *sampler, const float *logits,
                              vlm_sample_result *out_result) {
  memset(out_result, 0, sizeof(*out_result));
  float *values = sampler->work;
  memcpy(values, logits, (size_t)sampler->vocab_size * sizeof(float));
  apply_controls(sampler, values);
  apply_penalties(sampler, values);
  int32_t token = 0;
  if (sampler->constraint.fill_mask) {
    VLM_RETURN_IF_ERROR(choose_constrained(sampler, values, &token));
    VLM_RETURN_IF_ERROR(sampler->constraint.accept(sampler->constraint.context, token));
  } else {
    token = sampler->params.temperature == 0.0f ? argmax(values, sampler->vocab_size)
                                                : sample_from_filtered(sampler, values);
  }
  out_result->token = token;
  if (!sampler->skip_logprobs) fill_logprobs(sampler, logits, out_result);
  touch(sampler, token);
  sampler->output_count[token]++;
  sampler->sampled++;
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Request controls: logit_bias and min_tokens.                            */
/* ---------------------------------------------------------------------- */

static void apply_controls(const vlm_sampler *sampler, float *values) {
  for (size_t i = 0; i < sampler->bias_count; i++) values[sampler->bias[i].token] += sampler->bias[i].bias;
  if (sampler->sampled >= sampler->min_tokens) return;
  for (size_t i = 0; i < sampler->held_back_count; i++) values[sampler->held_back[i]] = -INFINITY;
}

vlm_status vlm_sampler_set_logit_bias(vlm_sampler *sampler, const vlm_logit_bias *entries, size_t count) {
  for (size_t i = 0; i < count; i++) {
    VLM_RETURN_IF_ERROR(check_token(sampler, entries[i].token));
    if (!(fabsf(entries[i].bias) <= 100.0f))
      return VLM_ERROR(INVALID_ARGUMENT, "logit_bias for token %d must be between -100 and 100, got %g",
                       entries[i].token, entries[i].bias);
  }
  vlm_logit_bias *copy = count ? malloc(count * sizeof(*copy)) : NULL;
  if (count && !copy) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (count) memcpy(copy, entries, count * sizeof(*copy));
  free(sampler->bias);
  sampler->bias = copy;
  sampler->bias_count = count;
  return VLM_OK;
}

vlm_status vlm_sampler_set_min_tokens(vlm_sampler *sampler, const int32_t *tokens, size_t count, int64_t min_tokens) {
  int32_t *copy = count ? malloc(count * sizeof(*copy)) : NULL;
  if (count && !copy) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  size_t kept = 0;
  for (size_t i = 0; i < count; i++)
    if (tokens[i] >= 0 && tokens[i] < sampler->vocab_size) copy[kept++] = tokens[i];
  free(sampler->held_back);
  sampler->held_back = copy;
  sampler->held_back_count = kept;
  sampler->min_tokens = min_tokens;
  return VLM_OK;
}
