/* The bitwise guard of the shared decoder: the logits and KV of every
 * checked-in decoder model (tests/models, cpu backend) hashed, against the
 * digests recorded in tests/goldens/decoder_digests.txt.
 *
 * Why digests and not tolerances: the decoder graph is being split into
 * public blocks and family builders (issue 28), and the Llama-family
 * decoders must come out of it bitwise unchanged. The cpu kernel paths are
 * bit-identical by design (cpu_features.h) and logits do not depend on
 * chunking, threads or batch (SPEC 3.5), so one digest per model holds on
 * every machine; a change of any bit fails here naming the model.
 *
 * Each model runs, on 2 slots: a token prefill of 20 rows in chunks of 7
 * (every row's logits), an embeddings prefill with feature rows, an
 * explicit bias with a bidirectional block and (M-RoPE) 3-axis positions,
 * (Qwen3-VL) layer features, then 3 batched greedy decode steps over both
 * slots; the digest covers all logits and both slots' KV.
 *
 * Every kernel path this machine runs is checked against its own recorded
 * digest (portable, avx2, avx512): they are one and the same today, as
 * docs/KERNELS.md promises, and the file keeps them apart so a kernel that
 * breaks that promise fails here too, naming its path.
 *
 * A deliberate numerics change re-records (on a machine with AVX-512) with
 *   VLM_RECORD_DIGESTS=1 build/test_decoder_digests > tests/goldens/decoder_digests.txt
 * and says why in its commit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_features.h"
#include "backends/cpu/text_model.h"
#include "core/sha256.h"
#include "models/model.h"
#include "test.h"

#define PROMPT 20
#define STEPS 3

typedef struct digest_case {
  const char *name;   /* the case's key in the digest file */
  const char *model;  /* tests/models/<model> */
  int adapter;        /* LoRA adapter for both slots (-1: the base model) */
} digest_case;

static const digest_case cases[] = {
    {"llama", "llama", -1},
    {"mistral", "mistral", -1},
    {"qwen2", "qwen2", -1},
    {"qwen2_awq", "qwen2_awq", -1},
    {"qwen2_gptq", "qwen2_gptq", -1},
    {"qwen2_gptq_act", "qwen2_gptq_act", -1},
    {"qwen3", "qwen3", -1},
    {"gemma3_text", "gemma3_text", -1},
    {"gemma3", "gemma3", -1},
    {"llava", "llava", -1},
    {"qwen2_vl", "qwen2_vl", -1},
    {"qwen2_5_vl", "qwen2_5_vl", -1},
    {"qwen3_vl", "qwen3_vl", -1},
    {"qwen3_vl_moe", "qwen3_vl_moe", -1},
    {"qwen3_vl_moe_hub", "qwen3_vl_moe_hub", -1},
    {"phi4_multimodal", "phi4_multimodal", -1},
    {"phi4_multimodal_vision_lora", "phi4_multimodal", 0},
    {"phi4_multimodal_speech_lora", "phi4_multimodal", 1},
};
#define CASE_COUNT (sizeof(cases) / sizeof(cases[0]))

/* A deterministic value in [-1, 1) (xorshift), so features need no file. */
static float next_value(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return (float)((double)(*state >> 11) / 4503599627370496.0 - 1.0);
}

static void hash_slot_kv(vlm_sha256 *hash, vlm_text_model *model, int32_t slot) {
  vlm_kv_cache *cache = vlm_text_model_cache(model);
  int64_t length = vlm_kv_cache_length(cache, slot);
  size_t bytes = (size_t)(length * (int64_t)vlm_kv_cache_position_bytes(cache));
  void *kv = malloc(bytes ? bytes : 1);
  CHECK(kv != NULL);
  if (!kv) return;
  CHECK_OK(vlm_kv_cache_read(cache, slot, 0, length, kv));
  vlm_sha256_update(hash, kv, bytes);
  free(kv);
}

static int32_t argmax(const float *row, int64_t count) {
  int32_t best = 0;
  for (int64_t i = 1; i < count; i++)
    if (row[i] > row[best]) best = (int32_t)i;
  return best;
}

/* Runs the case and writes its digest as 64 hex digits; false on failure. */
static bool run_case(const digest_case *c, char out_hex[65]) {
  char dir[512];
  snprintf(dir, sizeof(dir), "%s/tests/models/%s", VLM_SOURCE_DIR, c->model);
  vlm_model *opened = NULL;
  vlm_model_options model_options = {0};
  vlm_status status = vlm_model_open(dir, &model_options, &opened);
  CHECK_OK(status);
  if (!opened) return false;
  vlm_text_model_options options = {.slot_count = 2, .capacity = 64, .prefill_chunk = 7};
  vlm_text_model *model = NULL;
  CHECK_OK(vlm_text_model_open(opened, &options, &model));
  vlm_model_release(opened);
  if (!model) return false;
  vlm_text_decoder_shape shape;
  vlm_text_model_shape(model, &shape);
  int64_t vocab = shape.vocab_size, hidden = shape.hidden_size;
  int32_t tokens[PROMPT];
  for (int i = 0; i < PROMPT; i++) tokens[i] = (int32_t)((17 + 7919 * (int64_t)i) % vocab);
  float *logits = malloc((size_t)(PROMPT * vocab) * sizeof(float));
  float *features = malloc((size_t)(PROMPT * hidden) * sizeof(float));
  int64_t layer_features = shape.layer_feature_count;
  float *side = layer_features ? malloc((size_t)(layer_features * PROMPT * hidden) * sizeof(float)) : NULL;
  float bias[PROMPT * PROMPT];
  int32_t mask[PROMPT];
  int64_t positions[3 * PROMPT];
  uint64_t state = 0x9e3779b97f4a7c15ull;
  vlm_sha256 hash;
  vlm_sha256_init(&hash);
  int failures_before = test_failures;
  bool ok = false;
  if (!logits || !features || (layer_features && !side)) goto done;
  for (int32_t slot = 0; slot < 2; slot++) CHECK_OK(vlm_text_model_begin_request(model, slot, c->adapter, PROMPT));
  /* Slot 0: token prefill, every row's logits. */
  vlm_prefill_logits all = {.last_row = logits + (PROMPT - 1) * vocab, .all_rows = logits};
  CHECK_OK(vlm_text_model_token_prefill(model, 0, tokens, PROMPT, NULL, &all));
  vlm_sha256_update(&hash, logits, (size_t)(PROMPT * vocab) * sizeof(float));
  /* Slot 1: rows 4..9 features, rows 4..9 one bidirectional block. */
  for (int64_t i = 0; i < PROMPT * hidden; i++) features[i] = next_value(&state);
  for (int64_t i = 0; side && i < layer_features * PROMPT * hidden; i++) side[i] = 0.5f * next_value(&state);
  for (int r = 0; r < PROMPT; r++) mask[r] = r >= 4 && r < 10;
  for (int r = 0; r < PROMPT; r++) {
    for (int k = 0; k < PROMPT; k++)
      bias[r * PROMPT + k] = k <= r || (mask[r] && mask[k]) ? 0.0f : -INFINITY;
  }
  for (int axis = 0; axis < 3; axis++)
    for (int r = 0; r < PROMPT; r++)
      positions[axis * PROMPT + r] = r < 4 ? r : r < 10 ? 4 + (axis == 0 ? 0 : axis == 1 ? (r - 4) / 3 : (r - 4) % 3)
                                                       : r - 4;
  vlm_side_input side_input = {"layer_features", side, 3, {layer_features, PROMPT, hidden}};
  vlm_prefill_input input = {.row_count = PROMPT, .tokens = tokens, .features = features, .feature_mask = mask,
                             .positions = positions, .position_axes = shape.position_axes, .bias = bias,
                             .bias_key_count = PROMPT, .side_inputs = side ? &side_input : NULL,
                             .side_input_count = side ? 1 : 0};
  if (shape.position_axes == 1)
    for (int r = 0; r < PROMPT; r++) positions[r] = r;
  CHECK_OK(vlm_text_model_embeddings_prefill(model, 1, &input, &all));
  vlm_sha256_update(&hash, logits, (size_t)(PROMPT * vocab) * sizeof(float));
  /* Batched greedy decode over both slots. */
  int32_t slots[2] = {0, 1}, next[2] = {argmax(logits, vocab), argmax(logits + (PROMPT - 1) * vocab, vocab)};
  /* Slot 1's last 3-axis position was PROMPT - 5 (its block is a 2x3 grid). */
  int64_t step_positions[2] = {PROMPT, shape.position_axes == 1 ? PROMPT : PROMPT - 4};
  for (int step = 0; step < STEPS; step++) {
    CHECK_OK(vlm_text_model_decode(model, 2, next, step_positions, NULL, slots, logits));
    vlm_sha256_update(&hash, logits, (size_t)(2 * vocab) * sizeof(float));
    for (int b = 0; b < 2; b++) {
      next[b] = argmax(logits + b * vocab, vocab);
      step_positions[b]++;
    }
  }
  hash_slot_kv(&hash, model, 0);
  hash_slot_kv(&hash, model, 1);
  ok = test_failures == failures_before;
done:
  free(logits);
  free(features);
  free(side);
  vlm_text_model_release(model);
  uint8_t digest[32];
  vlm_sha256_finish(&hash, digest);
  for (int i = 0; i < 32; i++) snprintf(out_hex + 2 * i, 3, "%02x", digest[i]);
  return ok;
}

/* The recorded digest of `name`, or NULL. */
static const char *recorded(const char *text, const char *name, char out_hex[65]) {
  size_t length = strlen(name);
  for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    if (line[0] == '#' || strncmp(line, name, length) != 0 || line[length] != ' ') continue;
    if (sscanf(line + length + 1, "%64s", out_hex) == 1 && strlen(out_hex) == 64) return out_hex;
  }
  return NULL;
}

static char *read_digests(void) {
  char path[512];
  snprintf(path, sizeof(path), "%s/tests/goldens/decoder_digests.txt", VLM_SOURCE_DIR);
  FILE *file = fopen(path, "rb");
  if (!file) return NULL;
  char *text = calloc(1, 1 << 16);
  if (text) (void)fread(text, 1, (1 << 16) - 1, file);
  fclose(file);
  return text;
}

static void logits_and_kv_are_bitwise_the_recorded_ones(void) {
  bool record = getenv("VLM_RECORD_DIGESTS") != NULL;
  char *text = record ? NULL : read_digests();
  CHECK(record || text != NULL);
  if (record) {
    printf("# sha256 of every decoder logit and KV value of tests/test_decoder_digests.c (cpu backend),\n"
           "# per kernel path; re-record only for a deliberate numerics change, saying why in the commit.\n");
  }
  int paths_run = 0;
  for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++) {
    if (!cpu_kernel_path_force((cpu_kernel_path)path)) continue; /* the CPU cannot run it */
    paths_run++;
    for (size_t i = 0; i < CASE_COUNT; i++) {
      const char *only = getenv("VLM_DIGEST_CASE"); /* one case (debugging) */
      if (only && strcmp(only, cases[i].name) != 0) continue;
      char actual[65] = {0}, expected[65] = {0}, key[96];
      snprintf(key, sizeof(key), "%s/%s", cases[i].name, cpu_kernel_path_name((cpu_kernel_path)path));
      bool ran = run_case(&cases[i], actual);
      CHECK(ran);
      if (record) {
        printf("%s %s\n", key, actual);
        continue;
      }
      if (!text) continue;
      if (!recorded(text, key, expected)) {
        fprintf(stderr, "%s: no recorded digest (tests/goldens/decoder_digests.txt)\n", key);
        CHECK(false);
      } else if (strcmp(actual, expected) != 0) {
        fprintf(stderr, "%s: logits or KV changed: digest %s, recorded %s\n", key, actual, expected);
        CHECK(false);
      }
    }
  }
  cpu_kernel_path_force(CPU_KERNEL_PATH_COUNT);
  CHECK(paths_run >= 1); /* portable always runs */
  free(text);
}

TEST_MAIN(TEST(logits_and_kv_are_bitwise_the_recorded_ones))
