/* Phi-4-multimodal's decoder on the xla backend (IREE, llvm-cpu) against
 * the cpu backend, through the engine's decoder tables: four requests on
 * four slots at once with the three adapter modes (base, vision, speech),
 * a prompt past the LongRoPE switch prefilled in 16-row chunks that end
 * below it, and a generation crossing the switch (the cache reset): every
 * step's logits within the goldens' float32 tolerance of the cpu backend's
 * and the same greedy tokens, batched and each request alone.
 *
 * Needs the pinned IREE venv and a build with python-3.11-embed (else
 * SKIP(no-venv-xla) / SKIP(no-xla-runtime)); one module compiles (~1 min). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#ifndef VLM_HAVE_XLA_RUNTIME

static void xla_phi4_skips_without_python(void) {
  test_skip("no-xla-runtime", "built without python-3.11-embed (Debian's libpython3.11-dev, "
            "scripts/install-dependencies.sh); xla execution not tested");
}
TEST_MAIN(TEST(xla_phi4_skips_without_python))

#else

#include "backends/cpu/cpu_modules.h"
#include "models/model.h"
#include "models/modules.h"
#include "test_xla_support.h"
#include "vlm/xla.h"

#define MODEL_DIR VLM_SOURCE_DIR "/tests/models/phi4_multimodal"
#define SLOTS 4
#define STEPS 6
#define VOCAB 151936
#define LOGITS_ABS 1e-3 /* the float32 goldens' logits tolerance */
#define LOGITS_REL 1e-4

typedef struct request {
  int32_t adapter;
  int64_t prompt_length;
  int32_t seed;
} request;

/* Base, vision, speech and vision again: 45 rows past the 40-token
 * switch; 37 rows + 6 steps crossing it. */
static const request requests[SLOTS] = {{-1, 12, 1}, {0, 45, 2}, {1, 20, 3}, {0, 37, 4}};

static void make_prompt(int32_t *out, int64_t length, int32_t seed) {
  for (int64_t i = 0; i < length; i++) out[i] = (int32_t)((seed * 7919 + i * 104729) % 151000);
}

static int32_t argmax(const float *logits) {
  int32_t best = 0;
  for (int32_t v = 1; v < VOCAB; v++)
    if (logits[v] > logits[best]) best = v;
  return best;
}

/* The requests of `mask` on their slots, prefilled one after the other and
 * decoded together; greedy on the cpu tokens when `follow` is given (so
 * both backends feed the same ids). out: [SLOTS][STEPS + 1][VOCAB]. */
static void run(vlm_text_decoder *decoder, unsigned mask, const int32_t *follow, float *out, int32_t *tokens_out) {
  const vlm_text_decoder_operations *ops = decoder->operations;
  size_t per = (size_t)(STEPS + 1) * VOCAB;
  for (int i = 0; i < SLOTS; i++) {
    CHECK_OK(ops->clear_slot(decoder->self, i));
    if (!(mask & (1u << i))) continue;
    int32_t prompt[64];
    make_prompt(prompt, requests[i].prompt_length, requests[i].seed);
    CHECK_OK(ops->begin_request(decoder->self, i, requests[i].adapter, requests[i].prompt_length));
    /* 16-row pieces, as the scheduler's chunks. */
    for (int64_t first = 0; first < requests[i].prompt_length; first += 16) {
      int64_t rows = requests[i].prompt_length - first < 16 ? requests[i].prompt_length - first : 16;
      CHECK_OK(ops->token_prefill(decoder->self, i, prompt + first, rows, out + i * per));
    }
  }
  float *batch_logits = malloc((size_t)SLOTS * VOCAB * sizeof(float));
  for (int step = 1; step <= STEPS && batch_logits; step++) {
    int32_t tokens[SLOTS], slots[SLOTS];
    int64_t positions[SLOTS], batch = 0;
    for (int i = 0; i < SLOTS; i++) {
      if (!(mask & (1u << i))) continue;
      int32_t token = follow ? follow[i * STEPS + step - 1] : argmax(out + i * per + (size_t)(step - 1) * VOCAB);
      if (tokens_out) tokens_out[i * STEPS + step - 1] = token;
      tokens[batch] = token;
      slots[batch] = i;
      positions[batch++] = ops->slot_length(decoder->self, i);
    }
    CHECK_OK(ops->decode(decoder->self, batch, tokens, positions, slots, batch_logits));
    for (int64_t b = 0; b < batch; b++)
      memcpy(out + slots[b] * per + (size_t)step * VOCAB, batch_logits + b * VOCAB, VOCAB * sizeof(float));
  }
  free(batch_logits);
}

static bool close_enough(const float *got, const float *want, size_t count, const char *what) {
  double worst = 0;
  for (size_t i = 0; i < count; i++) {
    double excess = fabs((double)got[i] - want[i]) - (LOGITS_ABS + LOGITS_REL * fabs((double)want[i]));
    if (excess > worst) worst = excess;
  }
  if (worst > 0) printf("  %s: logits off by %g beyond the tolerance\n", what, worst);
  return worst == 0;
}

static void three_adapter_modes_match_the_cpu_backend(void) {
  if (!environment_ready()) return;
  vlm_model *model = NULL;
  CHECK_OK(vlm_model_open(MODEL_DIR, NULL, &model));
  if (!model) return;
  char cache[600];
  snprintf(cache, sizeof(cache), "%s/cache", test_temp_dir());
  vlm_xla_decoder_options options = {.slot_count = SLOTS, .capacity = 96, .prefill_chunk = 16,
                                     .cache_dir = cache, .compile_if_missing = true};
  vlm_text_model_options cpu_options = {.slot_count = SLOTS, .capacity = 96};
  vlm_text_decoder *xla = NULL, *cpu = NULL;
  double started = seconds_now();
  CHECK_OK(vlm_xla_open_text_decoder(model, &options, &xla));
  printf("  compiled and opened in %.1f s\n", seconds_now() - started);
  CHECK_OK(vlm_text_decoder_open_cpu(model, &cpu_options, &cpu));
  size_t per = (size_t)(STEPS + 1) * VOCAB;
  float *want = malloc(SLOTS * per * sizeof(float)), *got = malloc(SLOTS * per * sizeof(float));
  int32_t tokens[SLOTS * STEPS], xla_tokens[SLOTS * STEPS];
  if (xla && cpu && want && got) {
    run(cpu, 0xf, NULL, want, tokens);
    /* Batched on xla, fed the cpu's greedy tokens; then its own greedy. */
    run(xla, 0xf, tokens, got, NULL);
    for (int i = 0; i < SLOTS; i++) {
      char what[64];
      snprintf(what, sizeof(what), "slot %d (adapter %d), batched", i, requests[i].adapter);
      CHECK(close_enough(got + i * per, want + i * per, per, what));
    }
    run(xla, 0xf, NULL, got, xla_tokens);
    CHECK(memcmp(tokens, xla_tokens, sizeof(tokens)) == 0);
    /* Each alone on xla: the same greedy tokens and logits as batched. */
    for (int i = 0; i < SLOTS; i++) {
      float *alone = malloc(SLOTS * per * sizeof(float));
      int32_t alone_tokens[SLOTS * STEPS];
      if (!alone) break;
      run(xla, 1u << i, NULL, alone, alone_tokens);
      CHECK(memcmp(alone_tokens + i * STEPS, tokens + i * STEPS, STEPS * sizeof(int32_t)) == 0);
      char what[64];
      snprintf(what, sizeof(what), "slot %d alone", i);
      CHECK(close_enough(alone + i * per, want + i * per, per, what));
      free(alone);
    }
  }
  free(want);
  free(got);
  vlm_text_decoder_release(xla);
  vlm_text_decoder_release(cpu);
  vlm_model_release(model);
}

TEST_MAIN(TEST(three_adapter_modes_match_the_cpu_backend))

#endif
