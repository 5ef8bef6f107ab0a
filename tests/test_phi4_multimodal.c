/* Phi-4-multimodal's decoder on the checked-in tiny checkpoint
 * (tests/models/phi4_multimodal, its goldens prove each path against
 * Transformers): per-slot LoRA adapters batched together equal each alone,
 * clearing a slot clears its adapter, LongRoPE's factors follow each
 * request (the whole prompt in every prefill chunk, the row's own position
 * in a batched decode) rather than the step, and the adapter files are
 * read and refused as they should be. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/cpu/text_model.h"
#include "core/thread_pool.h"
#include "io/safetensors.h"
#include "models/model.h"
#include "test.h"

#define MODEL_DIR VLM_SOURCE_DIR "/tests/models/phi4_multimodal"
#define SWITCH 40 /* original_max_position_embeddings of the tiny config */
#define STEPS 6

static vlm_text_model *open_model(const char *dir, int32_t slots, int64_t chunk) {
  vlm_text_model_options options = {.slot_count = slots, .capacity = 96, .prefill_chunk = chunk};
  vlm_model *opened = NULL;
  vlm_text_model *model = NULL;
  CHECK_OK(vlm_model_open(dir, NULL, &opened));
  if (opened) CHECK_OK(vlm_text_model_open(opened, &options, &model));
  vlm_model_release(opened);
  return model;
}

/* A prompt of `length` ids (any in the vocabulary will do). */
static void make_prompt(int32_t *out, int64_t length, int32_t seed) {
  for (int64_t i = 0; i < length; i++) out[i] = (int32_t)((seed * 7919 + i * 104729) % 151000);
}

typedef struct request {
  int32_t adapter;
  int64_t prompt_length;
  int32_t seed;
} request;

/* The request alone in slot 0 of a one-slot model: prefill then STEPS greedy
 * decodes, every step's logits into out [STEPS + 1, vocab]. */
static void run_alone(const request *r, int64_t chunk, float *out) {
  vlm_text_model *model = open_model(MODEL_DIR, 1, chunk);
  if (!model) return;
  int64_t vocab = vlm_text_model_vocab_size(model);
  int32_t tokens[96];
  make_prompt(tokens, r->prompt_length, r->seed);
  CHECK_OK(vlm_text_model_begin_request(model, 0, r->adapter, r->prompt_length));
  vlm_prefill_logits logits = {.last_row = out};
  CHECK_OK(vlm_text_model_token_prefill(model, 0, tokens, r->prompt_length, NULL, &logits));
  for (int step = 1; step <= STEPS; step++) {
    const float *last = out + (step - 1) * vocab;
    int32_t best = 0;
    for (int64_t v = 1; v < vocab; v++)
      if (last[v] > last[best]) best = (int32_t)v;
    int64_t position = vlm_text_model_slot_length(model, 0);
    int32_t slot = 0;
    CHECK_OK(vlm_text_model_decode(model, 1, &best, &position, NULL, &slot, out + step * vocab));
  }
  vlm_text_model_release(model);
}

/* Four requests on four slots, decoded in one batch each step. */
static void run_batched(const request *requests, int count, float *out) {
  vlm_text_model *model = open_model(MODEL_DIR, count, 512);
  if (!model) return;
  int64_t vocab = vlm_text_model_vocab_size(model);
  size_t per = (size_t)(STEPS + 1) * (size_t)vocab;
  for (int i = 0; i < count; i++) {
    int32_t tokens[96];
    make_prompt(tokens, requests[i].prompt_length, requests[i].seed);
    CHECK_OK(vlm_text_model_begin_request(model, i, requests[i].adapter, requests[i].prompt_length));
    vlm_prefill_logits logits = {.last_row = out + i * per};
    CHECK_OK(vlm_text_model_token_prefill(model, i, tokens, requests[i].prompt_length, NULL, &logits));
  }
  float *batch_logits = malloc((size_t)count * (size_t)vocab * sizeof(float));
  for (int step = 1; step <= STEPS && batch_logits; step++) {
    int32_t tokens[4], slots[4];
    int64_t positions[4];
    for (int i = 0; i < count; i++) {
      const float *last = out + i * per + (size_t)(step - 1) * (size_t)vocab;
      tokens[i] = 0;
      for (int64_t v = 1; v < vocab; v++)
        if (last[v] > last[tokens[i]]) tokens[i] = (int32_t)v;
      slots[i] = i;
      positions[i] = vlm_text_model_slot_length(model, i);
    }
    CHECK_OK(vlm_text_model_decode(model, count, tokens, positions, NULL, slots, batch_logits));
    for (int i = 0; i < count; i++)
      memcpy(out + i * per + (size_t)step * (size_t)vocab, batch_logits + (size_t)i * (size_t)vocab,
             (size_t)vocab * sizeof(float));
  }
  free(batch_logits);
  vlm_text_model_release(model);
}

/* Base, vision and speech adapters at once, a prompt past the LongRoPE
 * switch beside short ones and one generation crossing it: each slot's
 * logits are bitwise those of the request alone. */
static void three_adapter_modes_batched_equal_each_alone(void) {
  const request requests[4] = {{-1, 12, 1}, {0, 45, 2}, {1, 20, 3}, {0, SWITCH - 3, 4}};
  int64_t vocab = 151936;
  size_t per = (size_t)(STEPS + 1) * (size_t)vocab;
  float *alone = malloc(4 * per * sizeof(float)), *batched = malloc(4 * per * sizeof(float));
  CHECK(alone && batched);
  if (!alone || !batched) return;
  for (int i = 0; i < 4; i++) run_alone(&requests[i], 512, alone + i * per);
  run_batched(requests, 4, batched);
  for (int i = 0; i < 4; i++) CHECK(memcmp(alone + i * per, batched + i * per, per * sizeof(float)) == 0);
  /* The adapters change the logits (else the comparison proves nothing). */
  request base = requests[1];
  base.adapter = -1;
  run_alone(&base, 512, batched);
  CHECK(memcmp(alone + per, batched, (size_t)vocab * sizeof(float)) != 0);
  free(alone);
  free(batched);
}

/* A prompt past the switch, prefilled in chunks that each end below it, has
 * the logits of one prefill: every chunk takes the long factors. */
static void chunked_prefill_past_the_switch_keeps_the_long_factors(void) {
  const request r = {-1, 50, 9};
  int64_t vocab = 151936;
  size_t per = (size_t)(STEPS + 1) * (size_t)vocab;
  float *whole = malloc(per * sizeof(float)), *chunked = malloc(per * sizeof(float));
  CHECK(whole && chunked);
  if (!whole || !chunked) return;
  run_alone(&r, 512, whole);
  run_alone(&r, 16, chunked);
  CHECK(memcmp(whole, chunked, per * sizeof(float)) == 0);
  free(whole);
  free(chunked);
}

/* clear_slot drops the adapter: the next request on the slot is the base
 * model's unless it selects one. */
static void clearing_a_slot_clears_its_adapter(void) {
  vlm_text_model *model = open_model(MODEL_DIR, 1, 512);
  if (!model) return;
  CHECK_INT_EQ(vlm_text_model_adapter_count(model), 2);
  int64_t vocab = vlm_text_model_vocab_size(model);
  float *first = malloc((size_t)vocab * sizeof(float)), *second = malloc((size_t)vocab * sizeof(float));
  int32_t tokens[12];
  make_prompt(tokens, 12, 5);
  vlm_prefill_logits out = {.last_row = first};
  CHECK_OK(vlm_text_model_token_prefill(model, 0, tokens, 12, NULL, &out));
  CHECK_OK(vlm_text_model_clear_slot(model, 0));
  CHECK_OK(vlm_text_model_begin_request(model, 0, 1, 12));
  out.last_row = second;
  CHECK_OK(vlm_text_model_token_prefill(model, 0, tokens, 12, NULL, &out));
  CHECK(memcmp(first, second, (size_t)vocab * sizeof(float)) != 0);
  CHECK_OK(vlm_text_model_clear_slot(model, 0));
  CHECK_OK(vlm_text_model_token_prefill(model, 0, tokens, 12, NULL, &out));
  CHECK(memcmp(first, second, (size_t)vocab * sizeof(float)) == 0);
  CHECK_ERROR(vlm_text_model_begin_request(model, 0, 2, 12), VLM_STATUS_INVALID_ARGUMENT, "outside -1..1");
  free(first);
  free(second);
  vlm_text_model_release(model);
}

/* A scratch model directory: the tiny model's files linked, the speech
 * adapter's config replaced by `adapter_config` (NULL: the speech adapter
 * left out). */
static const char *scratch_model(const char *name, const char *adapter_config) {
  static char dir[400];
  snprintf(dir, sizeof(dir), "%s/%s", test_temp_dir(), name);
  char command[8192];
  snprintf(command, sizeof(command),
           "rm -rf '%s' && mkdir -p '%s/vision-lora' && ln -s '%s'/config.json '%s'/generation_config.json "
           "'%s'/model.safetensors '%s'/ && ln -s '%s'/vision-lora/* '%s/vision-lora/'",
           dir, dir, MODEL_DIR, MODEL_DIR, MODEL_DIR, dir, MODEL_DIR, dir);
  if (system(command) != 0) return NULL;
  if (adapter_config) {
    snprintf(command, sizeof(command), "mkdir -p '%s/speech-lora' && ln -s '%s'/speech-lora/adapter_model.safetensors "
             "'%s/speech-lora/' && printf '%%s' '%s' > '%s/speech-lora/adapter_config.json'",
             dir, MODEL_DIR, dir, adapter_config, dir);
    if (system(command) != 0) return NULL;
  }
  return dir;
}

static void adapter_files_are_read_and_refused_by_name(void) {
  vlm_model *model = NULL;
  CHECK_OK(vlm_model_open(MODEL_DIR, NULL, &model));
  if (model) {
    CHECK_INT_EQ(model->adapter_count, 2);
    CHECK_STR_EQ(model->adapters[0].name, "vision-lora");
    CHECK_NEAR(model->adapters[0].scale, 2.0, 0);  /* alpha 8 / r 4 */
    CHECK_NEAR(model->adapters[1].scale, 3.0, 0);  /* alpha 9 / r 3 */
    CHECK_INT_EQ(model->adapters[0].module_count, 8); /* 4 projections x 2 layers */
    CHECK(vlm_checkpoint_find(model->weights, "adapters.speech-lora.model.layers.1.mlp.down_proj.lora_B.weight"));
    vlm_model_release(model);
  }
  /* Without the speech subfolder: present vision, absent speech (base). */
  const char *dir = scratch_model("phi4-no-speech", NULL);
  CHECK(dir);
  model = NULL;
  CHECK_OK(vlm_model_open(dir, NULL, &model));
  if (model) {
    CHECK_INT_EQ(model->adapters[0].module_count, 8);
    CHECK_INT_EQ(model->adapters[1].module_count, 0);
    vlm_model_release(model);
  }
  struct {
    const char *config, *message;
  } bad[] = {
      {"{\"r\": 3, \"lora_alpha\": 9, \"use_dora\": true}", "DoRA adapters are not supported"},
      {"{\"r\": 3, \"lora_alpha\": 9, \"bias\": \"all\"}", "trained biases"},
      {"{\"r\": 0, \"lora_alpha\": 9}", "positive integer \"r\""},
      {"{\"r\": 3, \"lora_alpha\": 9, \"peft_type\": \"IA3\"}", "peft_type 'IA3'"},
      {"{\"r\": 3", "speech-lora/adapter_config.json"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    dir = scratch_model("phi4-bad-adapter", bad[i].config);
    CHECK(dir);
    model = NULL;
    vlm_status status = vlm_model_open(dir, NULL, &model);
    CHECK(status != VLM_OK);
    if (status) CHECK(strstr(vlm_status_message(status), bad[i].message) != NULL);
    if (status && !strstr(vlm_status_message(status), bad[i].message))
      fprintf(stderr, "  got: %s\n", vlm_status_message(status));
    vlm_status_free(status);
    vlm_model_release(model);
  }
  /* An adapter file whose tensors are not PEFT's (the base checkpoint under
   * the adapter's name) is refused naming the tensor. */
  dir = scratch_model("phi4-not-peft", "{\"r\": 3, \"lora_alpha\": 9}");
  char command[1200];
  snprintf(command, sizeof(command), "ln -sf '%s/model.safetensors' '%s/speech-lora/adapter_model.safetensors'",
           MODEL_DIR, dir);
  CHECK(system(command) == 0);
  model = NULL;
  CHECK_ERROR(vlm_model_open(dir, NULL, &model), VLM_STATUS_DATA_LOSS, "does not start with 'base_model.model.'");
  vlm_model_release(model);
  /* Keys PEFT did not write (the adapter name in them), a lone lora_A, and
   * ranks that disagree: refused, not run as the base model. */
  float zeros[64] = {0};
  struct {
    const char *a_name, *b_name;
    int64_t a_rank, b_rank;
    const char *message;
  } files[] = {
      {"base_model.model.model.layers.0.mlp.down_proj.lora_A.speech.weight", NULL, 3, 3,
       "is not a LoRA lora_A/lora_B weight"},
      {"base_model.model.model.layers.0.mlp.down_proj.lora_A.weight", NULL, 3, 3, "has no lora_B"},
      {"base_model.model.model.layers.0.mlp.down_proj.lora_A.weight",
       "base_model.model.model.layers.0.mlp.down_proj.lora_B.weight", 3, 2, "do not share a rank"},
  };
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    dir = scratch_model("phi4-odd-keys", "{\"r\": 3, \"lora_alpha\": 9}");
    snprintf(command, sizeof(command), "rm '%s/speech-lora/adapter_model.safetensors'", dir);
    CHECK(system(command) == 0);
    char path[600];
    snprintf(path, sizeof(path), "%s/speech-lora/adapter_model.safetensors", dir);
    vlm_safetensors_write_entry entries[2] = {
        {files[i].a_name, VLM_DTYPE_F32, 2, (const int64_t[]){files[i].a_rank, 16}, zeros},
        {files[i].b_name, VLM_DTYPE_F32, 2, (const int64_t[]){2, files[i].b_rank}, zeros}};
    CHECK_OK(vlm_safetensors_write(path, entries, files[i].b_name ? 2 : 1, "pt"));
    model = NULL;
    vlm_status status = vlm_model_open(dir, NULL, &model);
    CHECK(status && strstr(vlm_status_message(status), files[i].message));
    if (status && !strstr(vlm_status_message(status), files[i].message))
      fprintf(stderr, "  got: %s\n", vlm_status_message(status));
    vlm_status_free(status);
    vlm_model_release(model);
  }
  /* rslora: alpha / sqrt(r). */
  dir = scratch_model("phi4-rslora", "{\"r\": 4, \"lora_alpha\": 9, \"use_rslora\": true}");
  model = NULL;
  CHECK_OK(vlm_model_open(dir, NULL, &model));
  if (model) {
    CHECK_NEAR(model->adapters[1].scale, 4.5, 1e-12);
    vlm_model_release(model);
  }
}

TEST_MAIN(TEST(three_adapter_modes_batched_equal_each_alone),
          TEST(chunked_prefill_past_the_switch_keeps_the_long_factors), TEST(clearing_a_slot_clears_its_adapter),
          TEST(adapter_files_are_read_and_refused_by_name))
