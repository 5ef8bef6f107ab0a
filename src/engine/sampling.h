/* Choosing the next token from a row of logits.
 *
 * Order of operations, following Transformers' generate() (logits
 * processors, then warpers) with the OpenAI penalties inserted where vLLM
 * puts them:
 *   1. repetition penalty (HF): for every token seen in prompt or output,
 *      logit / penalty if positive, logit * penalty if negative;
 *   2. presence and frequency penalties (OpenAI): for every token generated
 *      so far, logit -= presence + frequency * count;
 *   3. greedy when temperature == 0: the highest logit, lowest id on ties
 *      (torch.argmax's rule); otherwise
 *   4. temperature, 5. top-k (ties with the k-th value are kept, as HF
 *      keeps them), 6. top-p (smallest set whose probability exceeds p,
 *      at least one token), 7. min-p (drop tokens below min_p x the top
 *      probability), then one draw from the renormalised distribution with
 *      a seeded generator: the same seed and inputs give the same tokens.
 *
 * Log-probabilities reported to clients are those of the model's own
 * distribution (log-softmax of the raw logits, before penalties,
 * temperature and filtering), which is what OpenAI's `logprobs` means. */
#ifndef VLM_ENGINE_SAMPLING_H
#define VLM_ENGINE_SAMPLING_H

#include <stdbool.h>
#include <stdint.h>

#include "vlm.h"
#include "vlm/generate.h" /* vlm_sampling_params */

#define VLM_MAX_TOP_LOGPROBS 20

/* Greedy decoding with every filter off. */
vlm_sampling_params vlm_sampling_params_greedy(void);
/* Refuses out-of-range values with a message naming the parameter. */
vlm_status vlm_sampling_params_validate(const vlm_sampling_params *params);

typedef struct vlm_token_logprob {
  int32_t token;
  float logprob;
} vlm_token_logprob;

typedef struct vlm_sample_result {
  int32_t token;
  float logprob;                                   /* of `token` */
  int32_t top_count;                               /* <= params.top_logprobs */
  vlm_token_logprob top[VLM_MAX_TOP_LOGPROBS];     /* most likely first */
} vlm_sample_result;

typedef struct vlm_sampler vlm_sampler;

vlm_status vlm_sampler_create(const vlm_sampling_params *params, int32_t vocab_size,
                              const vlm_allocator *allocator, vlm_sampler **out_sampler);
/* Whether results carry logprob and top alternatives (default: yes). The
 * log-softmax over the whole vocabulary is a few percent of a batched
 * decode step, so callers that never report it turn it off; the token
 * chosen is the same either way. */
void vlm_sampler_set_logprobs(vlm_sampler *sampler, bool wanted);
/* Records prompt tokens (they count for the repetition penalty only). */
vlm_status vlm_sampler_add_prompt(vlm_sampler *sampler, const int32_t *tokens, int64_t count);
/* Picks the next token from `logits` (vocab_size floats, left unchanged)
 * and records it as generated. */
vlm_status vlm_sampler_sample(vlm_sampler *sampler, const float *logits,
                              vlm_sample_result *out_result);
/* Constrained decoding: which tokens may come next. The sampler masks
 * every other token before it chooses (greedy: it first tries the
 * unconstrained choice, which is kept when allowed, so a grammar never
 * changes a token it allows anyway) and reports the chosen token to
 * `accept`. Log-probabilities stay those of the model's distribution. */
typedef struct vlm_token_constraint {
  void *context;
  bool (*allows)(void *context, int32_t token);
  vlm_status (*fill_mask)(void *context, uint32_t *bits); /* (vocab+31)/32 words */
  vlm_status (*accept)(void *context, int32_t token);
} vlm_token_constraint;
/* NULL or a constraint with no fill_mask: none. Copied; context borrowed. */
vlm_status vlm_sampler_set_constraint(vlm_sampler *sampler, const vlm_token_constraint *constraint);
/* OpenAI's logit_bias (copied): each entry's bias is added to its token's
 * logit before everything else (penalties, greedy or the filters), as
 * vLLM's logit-bias processor does; logprobs stay the model's own. Ids
 * outside the vocabulary, and |bias| > 100, are INVALID_ARGUMENT. */
vlm_status vlm_sampler_set_logit_bias(vlm_sampler *sampler, const vlm_logit_bias *entries, size_t count);
/* vLLM's min_tokens: `tokens` (the stop tokens: EOS and stop_token_ids)
 * cannot be sampled while fewer than `min_tokens` tokens were sampled
 * since creation or the last reset (copied; ids outside the vocabulary
 * are ignored, as they can never be sampled anyway). */
vlm_status vlm_sampler_set_min_tokens(vlm_sampler *sampler, const int32_t *tokens, size_t count, int64_t min_tokens);
/* Forgets prompt and output history and re-seeds, for slot reuse. */
void vlm_sampler_reset(vlm_sampler *sampler);
void vlm_sampler_release(vlm_sampler *sampler);

#endif
