#include "engine/sampling.h"
#include "test.h"

static vlm_sampler *make(vlm_sampling_params params, int32_t vocab) {
  vlm_sampler *sampler = NULL;
  CHECK_OK(vlm_sampler_create(&params, vocab, NULL, &sampler));
  return sampler;
}

static int32_t draw(vlm_sampler *sampler, const float *logits) {
  vlm_sample_result result;
  CHECK_OK(vlm_sampler_sample(sampler, logits, &result));
  return result.token;
}

static void greedy_takes_the_first_maximum(void) {
  vlm_sampler *sampler = make(vlm_sampling_params_greedy(), 5);
  const float logits[5] = {0.5f, 2.0f, -1.0f, 2.0f, NAN};
  CHECK_INT_EQ(draw(sampler, logits), 1);
  vlm_sampler_release(sampler);
}

static void refuses_bad_parameters(void) {
  vlm_sampling_params params = vlm_sampling_params_greedy();
  params.top_p = 0;
  vlm_sampler *sampler = NULL;
  CHECK_ERROR(vlm_sampler_create(&params, 4, NULL, &sampler), VLM_STATUS_INVALID_ARGUMENT,
              "top_p must be in (0, 1]");
  params = vlm_sampling_params_greedy();
  params.temperature = -1;
  CHECK_ERROR(vlm_sampling_params_validate(&params), VLM_STATUS_INVALID_ARGUMENT, "temperature");
  params = vlm_sampling_params_greedy();
  params.top_logprobs = 21;
  CHECK_ERROR(vlm_sampling_params_validate(&params), VLM_STATUS_INVALID_ARGUMENT, "top_logprobs");
  params = vlm_sampling_params_greedy();
  CHECK_ERROR(vlm_sampler_create(&params, 0, NULL, &sampler), VLM_STATUS_INVALID_ARGUMENT,
              "vocab_size");
  sampler = make(params, 4);
  const int32_t bad[1] = {4};
  CHECK_ERROR(vlm_sampler_add_prompt(sampler, bad, 1), VLM_STATUS_OUT_OF_RANGE, "outside the vocabulary");
  vlm_sampler_release(sampler);
}

static const float three_way[3] = {-0.6931472f, -1.2039728f, -1.6094379f}; /* .5 .3 .2 */

static void counts(vlm_sampling_params params, int draws, int *histogram) {
  vlm_sampler *sampler = make(params, 3);
  for (int i = 0; i < draws; i++) histogram[draw(sampler, three_way)]++;
  vlm_sampler_release(sampler);
}

static void samples_follow_the_distribution(void) {
  vlm_sampling_params params = vlm_sampling_params_greedy();
  params.temperature = 1.0f;
  vlm_sampler *sampler = make(params, 3);
  int histogram[3] = {0};
  const int draws = 20000;
  for (int i = 0; i < draws; i++) histogram[draw(sampler, three_way)]++;
  CHECK_NEAR(histogram[0] / (double)draws, 0.5, 0.02);
  CHECK_NEAR(histogram[1] / (double)draws, 0.3, 0.02);
  CHECK_NEAR(histogram[2] / (double)draws, 0.2, 0.02);
  vlm_sampler_release(sampler);
}

static void same_seed_same_tokens(void) {
  vlm_sampling_params params = vlm_sampling_params_greedy();
  params.temperature = 1.0f;
  params.seed = 42;
  vlm_sampler *first = make(params, 3), *second = make(params, 3);
  params.seed = 43;
  vlm_sampler *other = make(params, 3);
  int differences = 0;
  for (int i = 0; i < 200; i++) {
    int32_t token = draw(first, three_way);
    CHECK_INT_EQ(draw(second, three_way), token);
    differences += draw(other, three_way) != token;
  }
  CHECK(differences > 0);
  vlm_sampler_reset(first);
  vlm_sampler_reset(second);
  for (int i = 0; i < 50; i++) CHECK_INT_EQ(draw(first, three_way), draw(second, three_way));
  vlm_sampler_release(first);
  vlm_sampler_release(second);
  vlm_sampler_release(other);
}

static void filters_cut_the_tail(void) {
  vlm_sampling_params params = vlm_sampling_params_greedy();
  params.temperature = 1.0f;
  params.top_p = 0.6f; /* .5 kept (nothing before), .3 kept (.5 < .6), .2 dropped */
  int histogram[3] = {0};
  counts(params, 3000, histogram);
  CHECK(histogram[0] > 0 && histogram[1] > 0 && histogram[2] == 0);
  params.top_p = 1.0f;
  params.min_p = 0.5f; /* floor .25: .2 dropped */
  memset(histogram, 0, sizeof(histogram));
  counts(params, 3000, histogram);
  CHECK(histogram[0] > 0 && histogram[1] > 0 && histogram[2] == 0);
  params.min_p = 0.0f;
  params.top_k = 1;
  memset(histogram, 0, sizeof(histogram));
  counts(params, 500, histogram);
  CHECK_INT_EQ(histogram[0], 500);
}

static void top_k_keeps_ties(void) {
  vlm_sampling_params params = vlm_sampling_params_greedy();
  params.temperature = 1.0f;
  params.top_k = 1;
  const float logits[4] = {1.0f, 1.0f, 1.0f, 0.0f};
  vlm_sampler *sampler = make(params, 4);
  int histogram[4] = {0};
  for (int i = 0; i < 600; i++) histogram[draw(sampler, logits)]++;
  CHECK(histogram[0] > 0 && histogram[1] > 0 && histogram[2] > 0 && histogram[3] == 0);
  vlm_sampler_release(sampler);
}

static void never_draws_masked_tokens(void) {
  vlm_sampling_params params = vlm_sampling_params_greedy();
  params.temperature = 2.0f;
  const float logits[4] = {-INFINITY, 0.0f, -INFINITY, 0.0f};
  vlm_sampler *sampler = make(params, 4);
  for (int i = 0; i < 300; i++) {
    int32_t token = draw(sampler, logits);
    CHECK(token == 1 || token == 3);
  }
  vlm_sampler_release(sampler);
}

static void penalties_change_the_choice(void) {
  const float logits[3] = {2.0f, 1.5f, -1.0f};
  vlm_sampling_params params = vlm_sampling_params_greedy();
  params.repetition_penalty = 2.0f; /* 2.0 -> 1.0 once token 0 was seen */
  vlm_sampler *sampler = make(params, 3);
  const int32_t prompt[1] = {0};
  CHECK_OK(vlm_sampler_add_prompt(sampler, prompt, 1));
  CHECK_INT_EQ(draw(sampler, logits), 1);
  vlm_sampler_reset(sampler);
  CHECK_INT_EQ(draw(sampler, logits), 0); /* history forgotten */
  vlm_sampler_release(sampler);

  params = vlm_sampling_params_greedy();
  params.frequency_penalty = 0.4f; /* token 0: 2.0, 1.6, 1.2 ... */
  sampler = make(params, 3);
  CHECK_INT_EQ(draw(sampler, logits), 0);
  CHECK_INT_EQ(draw(sampler, logits), 0); /* 1.6 > 1.5 */
  CHECK_INT_EQ(draw(sampler, logits), 1); /* 1.2 < 1.5 */
  vlm_sampler_release(sampler);

  params = vlm_sampling_params_greedy();
  params.presence_penalty = 1.0f; /* prompt tokens do not count */
  sampler = make(params, 3);
  CHECK_OK(vlm_sampler_add_prompt(sampler, prompt, 1));
  CHECK_INT_EQ(draw(sampler, logits), 0);
  CHECK_INT_EQ(draw(sampler, logits), 1);
  vlm_sampler_release(sampler);
}

static void reports_log_probabilities(void) {
  vlm_sampling_params params = vlm_sampling_params_greedy();
  params.top_logprobs = 2;
  params.repetition_penalty = 3.0f; /* penalties must not leak into logprobs */
  vlm_sampler *sampler = make(params, 3);
  const int32_t prompt[1] = {0};
  CHECK_OK(vlm_sampler_add_prompt(sampler, prompt, 1));
  vlm_sample_result result;
  CHECK_OK(vlm_sampler_sample(sampler, three_way, &result));
  CHECK_INT_EQ(result.token, 1);
  CHECK_NEAR(result.logprob, log(0.3), 1e-6);
  CHECK_INT_EQ(result.top_count, 2);
  CHECK_INT_EQ(result.top[0].token, 0);
  CHECK_NEAR(result.top[0].logprob, log(0.5), 1e-6);
  CHECK_INT_EQ(result.top[1].token, 1);
  /* Turned off, the same token is chosen and no log-probability reported. */
  vlm_sampler_reset(sampler);
  CHECK_OK(vlm_sampler_add_prompt(sampler, prompt, 1));
  vlm_sampler_set_logprobs(sampler, false);
  CHECK_OK(vlm_sampler_sample(sampler, three_way, &result));
  CHECK_INT_EQ(result.token, 1);
  CHECK_INT_EQ(result.top_count, 0);
  CHECK(result.logprob == 0.0f);
  vlm_sampler_release(sampler);
}

/* OpenAI's logit_bias: added before the choice; logprobs stay the model's. */
static void logit_bias_moves_the_choice(void) {
  vlm_sampler *sampler = make(vlm_sampling_params_greedy(), 4);
  const float logits[4] = {3.0f, 1.0f, 0.0f, -2.0f};
  const vlm_logit_bias bias[2] = {{3, 100.0f}, {0, -100.0f}};
  CHECK_OK(vlm_sampler_set_logit_bias(sampler, bias, 2));
  vlm_sample_result result;
  CHECK_OK(vlm_sampler_sample(sampler, logits, &result));
  CHECK_INT_EQ(result.token, 3);
  /* log-softmax of the raw logits: token 3 is the least likely there. */
  CHECK(result.logprob < -5.0f);
  const vlm_logit_bias out_of_range[1] = {{4, 1.0f}};
  CHECK_ERROR(vlm_sampler_set_logit_bias(sampler, out_of_range, 1), VLM_STATUS_OUT_OF_RANGE, "outside");
  const vlm_logit_bias too_big[1] = {{1, 101.0f}};
  CHECK_ERROR(vlm_sampler_set_logit_bias(sampler, too_big, 1), VLM_STATUS_INVALID_ARGUMENT, "-100 and 100");
  vlm_sampler_release(sampler);
  /* Sampling too: -100 on the favourite removes it in practice. */
  vlm_sampling_params params = vlm_sampling_params_greedy();
  params.temperature = 1.0f;
  params.seed = 7;
  sampler = make(params, 4);
  const vlm_logit_bias ban[1] = {{0, -100.0f}};
  CHECK_OK(vlm_sampler_set_logit_bias(sampler, ban, 1));
  for (int i = 0; i < 200; i++) CHECK(draw(sampler, logits) != 0);
  vlm_sampler_release(sampler);
}

/* vLLM's min_tokens: the stop ids are masked until that many were sampled
 * (again after a reset). */
static void min_tokens_hold_back_stop_tokens(void) {
  vlm_sampler *sampler = make(vlm_sampling_params_greedy(), 4);
  const float logits[4] = {0.0f, 5.0f, 1.0f, 0.5f};
  const int32_t stops[2] = {1, 99};
  CHECK_OK(vlm_sampler_set_min_tokens(sampler, stops, 2, 2));
  CHECK_INT_EQ(draw(sampler, logits), 2);
  CHECK_INT_EQ(draw(sampler, logits), 2);
  CHECK_INT_EQ(draw(sampler, logits), 1);
  vlm_sampler_reset(sampler);
  CHECK_INT_EQ(draw(sampler, logits), 2);
  vlm_sampler_release(sampler);
}

TEST_MAIN(TEST(greedy_takes_the_first_maximum), TEST(refuses_bad_parameters),
          TEST(samples_follow_the_distribution), TEST(same_seed_same_tokens),
          TEST(filters_cut_the_tail), TEST(top_k_keeps_ties), TEST(never_draws_masked_tokens),
          TEST(penalties_change_the_choice), TEST(reports_log_probabilities),
          TEST(logit_bias_moves_the_choice), TEST(min_tokens_hold_back_stop_tokens))
