/* The text decoder behind its module contracts, on a tiny random Llama
 * written by vlm-make-tiny-model: logits against an independent float64
 * reference written here, token vs embeddings prefill parity, batch
 * invariance (chunking, batching, threads), and every refusal. */
#include <math.h>
#include <stdlib.h>

#include "core/thread_pool.h"
#include "backends/cpu/text_model.h"
#include "models/model.h"
#include "io/checkpoint.h"
#include "test.h"
#include "test_kernels_support.h"

static const char *model_dir(void) {
  static char dir[512];
  if (!dir[0]) {
    snprintf(dir, sizeof(dir), "%s/tiny-llama", test_temp_dir());
    char command[1024];
    snprintf(command, sizeof(command), "'%s' --text-only '%s' >/dev/null", VLM_MAKE_TINY_MODEL, dir);
    if (system(command) != 0) {
      fprintf(stderr, "cannot run %s\n", command);
      exit(2);
    }
  }
  return dir;
}

/* vlm_model_options.quantize of the models open_model opens (NULL: as stored). */
static const char *quantize;

static vlm_text_model *open_model(int32_t slots, int64_t chunk, vlm_thread_pool *pool) {
  vlm_text_model_options options = {.slot_count = slots, .capacity = 64, .prefill_chunk = chunk,
                                     .pool = pool};
  vlm_text_model *model = NULL;
  vlm_model *opened = NULL;
  vlm_model_options model_options = {.quantize = quantize};
  CHECK_OK(vlm_model_open(model_dir(), &model_options, &opened));
  if (opened) CHECK_OK(vlm_text_model_open(opened, &options, &model));
  vlm_model_release(opened); /* the text model holds its own reference */
  return model;
}

static const int32_t prompt[] = {1, 17, 200, 45, 45, 3, 99, 128, 7, 255, 64, 12, 33};
#define PROMPT_LENGTH ((int64_t)(sizeof(prompt) / sizeof(prompt[0])))

/* ---------------------------------------------------------------------- */
/* An independent float64 Llama forward pass (no kernels, no graph).       */
/* ---------------------------------------------------------------------- */

static const float *tensor(const vlm_checkpoint *weights, const char *name) {
  const vlm_tensor_info *info = vlm_checkpoint_find(weights, name);
  if (!info) {
    fprintf(stderr, "missing %s\n", name);
    exit(2);
  }
  return (const float *)info->data;
}

static void reference_rms_norm(const double *x, const float *weight, int64_t width, double *out) {
  double squares = 0;
  for (int64_t i = 0; i < width; i++) squares += x[i] * x[i];
  double scale = 1.0 / sqrt(squares / (double)width + 1e-5);
  for (int64_t i = 0; i < width; i++) out[i] = x[i] * scale * weight[i];
}

static void reference_linear(const double *x, const float *weight, int64_t out_count,
                             int64_t in_count, double *out) {
  for (int64_t o = 0; o < out_count; o++) {
    double sum = 0;
    for (int64_t k = 0; k < in_count; k++) sum += x[k] * weight[o * in_count + k];
    out[o] = sum;
  }
}

static void reference_rope(double *head, int64_t head_dim, int64_t position) {
  int64_t half = head_dim / 2;
  for (int64_t i = 0; i < half; i++) {
    double angle = (double)position * pow(10000.0, -(double)(2 * i) / (double)head_dim);
    double a = head[i], b = head[i + half];
    head[i] = a * cos(angle) - b * sin(angle);
    head[i + half] = b * cos(angle) + a * sin(angle);
  }
}

/* Logits of the last position for `tokens`, tiny Llama geometry. */
static void reference_logits(const vlm_checkpoint *weights, const int32_t *tokens, int64_t count,
                             double *logits) {
  enum { H = 128, I = 256, HEADS = 2, KV = 1, D = 64, V = 256, LAYERS = 2 };
  double (*x)[H] = calloc((size_t)count, sizeof(*x));
  double (*keys)[KV * D] = calloc((size_t)count, sizeof(*keys));
  double (*values)[KV * D] = calloc((size_t)count, sizeof(*values));
  const float *embed = tensor(weights, "model.embed_tokens.weight");
  for (int64_t t = 0; t < count; t++)
    for (int h = 0; h < H; h++) x[t][h] = embed[tokens[t] * H + h];
  char name[128];
  for (int layer = 0; layer < LAYERS; layer++) {
#define W(suffix) (snprintf(name, sizeof(name), "model.layers.%d." suffix, layer), tensor(weights, name))
    double (*queries)[HEADS * D] = calloc((size_t)count, sizeof(*queries));
    for (int64_t t = 0; t < count; t++) {
      double normed[H];
      reference_rms_norm(x[t], W("input_layernorm.weight"), H, normed);
      reference_linear(normed, W("self_attn.q_proj.weight"), HEADS * D, H, queries[t]);
      reference_linear(normed, W("self_attn.k_proj.weight"), KV * D, H, keys[t]);
      reference_linear(normed, W("self_attn.v_proj.weight"), KV * D, H, values[t]);
      for (int head = 0; head < HEADS; head++) reference_rope(queries[t] + head * D, D, t);
      for (int head = 0; head < KV; head++) reference_rope(keys[t] + head * D, D, t);
    }
    for (int64_t t = 0; t < count; t++) {
      double attended[HEADS * D] = {0};
      for (int head = 0; head < HEADS; head++) {
        int kv = head / (HEADS / KV);
        double scores[64], maximum = -INFINITY, total = 0;
        for (int64_t j = 0; j <= t; j++) {
          double dot = 0;
          for (int d = 0; d < D; d++) dot += queries[t][head * D + d] * keys[j][kv * D + d];
          scores[j] = dot / sqrt((double)D);
          if (scores[j] > maximum) maximum = scores[j];
        }
        for (int64_t j = 0; j <= t; j++) total += scores[j] = exp(scores[j] - maximum);
        for (int64_t j = 0; j <= t; j++)
          for (int d = 0; d < D; d++) attended[head * D + d] += scores[j] / total * values[j][kv * D + d];
      }
      double projected[H], normed[H], gate[I], up[I], down[H];
      reference_linear(attended, W("self_attn.o_proj.weight"), H, HEADS * D, projected);
      for (int h = 0; h < H; h++) x[t][h] += projected[h];
      reference_rms_norm(x[t], W("post_attention_layernorm.weight"), H, normed);
      reference_linear(normed, W("mlp.gate_proj.weight"), I, H, gate);
      reference_linear(normed, W("mlp.up_proj.weight"), I, H, up);
      for (int i = 0; i < I; i++) gate[i] = gate[i] / (1 + exp(-gate[i])) * up[i];
      reference_linear(gate, W("mlp.down_proj.weight"), H, I, down);
      /* x[t] is updated after every query used it: keys/values are cached. */
      for (int h = 0; h < H; h++) x[t][h] += down[h];
    }
#undef W
    free(queries);
  }
  double normed[H];
  reference_rms_norm(x[count - 1], tensor(weights, "model.norm.weight"), H, normed);
  reference_linear(normed, embed, V, H, logits); /* tied head */
  free(x);
  free(keys);
  free(values);
}

/* ---------------------------------------------------------------------- */

static void prefill_logits_match_a_float64_reference(void) {
  vlm_text_model *model = open_model(1, 512, NULL);
  if (!model) return;
  float logits[256];
  vlm_prefill_logits out = {.last_row = logits};
  CHECK_OK(vlm_text_model_token_prefill(model, 0, prompt, PROMPT_LENGTH, NULL, &out));
  double expected[256];
  reference_logits(vlm_text_model_weights(model), prompt, PROMPT_LENGTH, expected);
  double worst = 0;
  for (int i = 0; i < 256; i++) worst = fmax(worst, fabs(logits[i] - expected[i]));
  CHECK(worst < 5e-6); /* ~30x the f32 rounding seen; a 1% RoPE theta error gives 7e-5 */
  double largest = 0;
  for (int i = 0; i < 256; i++) largest = fmax(largest, fabs(expected[i]));
  printf("  max abs logit error vs float64 reference: %.3g (largest logit %.3g)\n", worst, largest);
  if (worst >= 5e-6) fprintf(stderr, "  max abs error %g\n", worst);
  CHECK_INT_EQ(vlm_text_model_slot_length(model, 0), PROMPT_LENGTH);
  vlm_text_model_release(model);
}

/* Prefill the prompt with `chunk`, then decode 4 greedy steps; returns the
 * concatenated logits (prefill last row + 4 decode rows). */
static float *run_request(vlm_text_model *model, int32_t slot) {
  float *logits = malloc(5 * 256 * sizeof(float));
  vlm_prefill_logits out = {.last_row = logits};
  CHECK_OK(vlm_text_model_token_prefill(model, slot, prompt, PROMPT_LENGTH, NULL, &out));
  for (int step = 0; step < 4; step++) {
    int32_t token = (int32_t)(17 * step + 5);
    int64_t position = vlm_text_model_slot_length(model, slot);
    CHECK_OK(vlm_text_model_decode(model, 1, &token, &position, NULL, &slot, logits + (step + 1) * 256));
  }
  return logits;
}

static void logits_do_not_depend_on_chunking_threads_or_batch(void) {
  vlm_text_model *reference_model = open_model(1, 512, NULL);
  if (!reference_model) return;
  float *reference = run_request(reference_model, 0);
  vlm_text_model_release(reference_model);
  const int64_t chunks[] = {1, 7, 64};
  for (int c = 0; c < 3; c++) {
    vlm_text_model *model = open_model(1, chunks[c], NULL);
    float *logits = run_request(model, 0);
    CHECK(memcmp(logits, reference, 5 * 256 * sizeof(float)) == 0);
    free(logits);
    vlm_text_model_release(model);
  }
  vlm_thread_pool *pool = NULL;
  CHECK_OK(vlm_thread_pool_create(2, NULL, &pool));
  vlm_text_model *threaded = open_model(1, 5, pool);
  float *logits = run_request(threaded, 0);
  CHECK(memcmp(logits, reference, 5 * 256 * sizeof(float)) == 0);
  free(logits);
  vlm_text_model_release(threaded);

  /* Batched decode: slot 5 runs the request while the seven other slots of
   * a batch of 8 carry prompts of other lengths in the same decode steps,
   * in shuffled order. */
  vlm_text_model *model = open_model(8, 4, pool);
  float scratch[256], *batch_logits = malloc(8 * 256 * sizeof(float));
  vlm_prefill_logits out = {.last_row = scratch};
  int32_t other[32];
  for (int i = 0; i < 32; i++) other[i] = (int32_t)((i * 37 + 11) % 256);
  const int32_t target = 5;
  for (int32_t slot = 0; slot < 8; slot++) {
    if (slot == target) continue;
    CHECK_OK(vlm_text_model_token_prefill(model, slot, other + slot, 1 + 2 * slot, NULL, &out));
  }
  CHECK_OK(vlm_text_model_token_prefill(model, target, prompt, PROMPT_LENGTH, NULL, &out));
  CHECK(memcmp(scratch, reference, 256 * sizeof(float)) == 0);
  for (int step = 0; step < 4; step++) {
    int32_t slots[8] = {3, 7, 0, 5, 1, 6, 2, 4};
    int32_t tokens[8];
    int64_t positions[8];
    int target_row = 3;
    for (int b = 0; b < 8; b++) {
      tokens[b] = slots[b] == target ? (int32_t)(17 * step + 5) : (int32_t)(100 + b * 13 + step);
      positions[b] = vlm_text_model_slot_length(model, slots[b]);
    }
    CHECK_OK(vlm_text_model_decode(model, 8, tokens, positions, NULL, slots, batch_logits));
    CHECK(memcmp(batch_logits + target_row * 256, reference + (step + 1) * 256, 256 * sizeof(float)) == 0);
  }
  free(batch_logits);
  vlm_text_model_release(model);
  vlm_thread_pool_release(pool);
  free(reference);
}

/* The same with quantized weights (q8, q4), on every kernel path this CPU
 * runs: prefill chunks, threads and batched decode give the bits of the
 * one-chunk single-threaded run (the fused decode tiles and the dequantized
 * GEMM chunks agree), and every path gives the portable path's logits. */
static void quantized_logits_do_not_depend_on_chunking_threads_batch_or_path(void) {
  static const char *formats[] = {"q8", "q4"};
  vlm_text_model *plain = open_model(1, 512, NULL);
  float *stored = plain ? run_request(plain, 0) : NULL;
  vlm_text_model_release(plain);
  for (int f = 0; f < 2; f++) {
    quantize = formats[f];
    float *portable = NULL;
    for (int path = 0; path < CPU_KERNEL_PATH_COUNT; path++) {
      if (!test_force_kernel_path((cpu_kernel_path)path)) continue;
      logits_do_not_depend_on_chunking_threads_or_batch();
      vlm_text_model *model = open_model(1, 3, NULL);
      float *logits = model ? run_request(model, 0) : NULL;
      vlm_text_model_release(model);
      if (path == CPU_KERNEL_PATH_PORTABLE) {
        portable = logits;
        /* quantized for real: not the stored weights' logits */
        CHECK(portable && stored && memcmp(portable, stored, 5 * 256 * sizeof(float)) != 0);
        continue;
      }
      if (!logits || !portable || memcmp(logits, portable, 5 * 256 * sizeof(float)) != 0) {
        fprintf(stderr, "  %s on %s differs from portable\n", formats[f], cpu_kernel_path_name((cpu_kernel_path)path));
        CHECK(false);
      }
      free(logits);
    }
    cpu_kernel_path_force(CPU_KERNEL_PATH_COUNT);
    free(portable);
  }
  quantize = NULL;
  free(stored);
}

static void embeddings_prefill_matches_token_prefill(void) {
  vlm_text_model *model = open_model(2, 5, NULL);
  if (!model) return;
  float by_tokens[PROMPT_LENGTH * 256], by_embeddings[PROMPT_LENGTH * 256];
  vlm_prefill_logits out = {.all_rows = by_tokens};
  CHECK_OK(vlm_text_model_token_prefill(model, 0, prompt, PROMPT_LENGTH, NULL, &out));
  /* Gather the embeddings from the same table. */
  const float *table = tensor(vlm_text_model_weights(model), "model.embed_tokens.weight");
  float *embeddings = malloc(PROMPT_LENGTH * 128 * sizeof(float));
  for (int64_t t = 0; t < PROMPT_LENGTH; t++)
    memcpy(embeddings + t * 128, table + prompt[t] * 128, 128 * sizeof(float));
  /* Every row a feature row: the embeddings passed in whole. */
  int32_t mask[PROMPT_LENGTH];
  for (int64_t t = 0; t < PROMPT_LENGTH; t++) mask[t] = 1;
  vlm_prefill_input input = {.row_count = PROMPT_LENGTH, .tokens = prompt, .features = embeddings,
                             .feature_mask = mask, .position_axes = 1};
  out.all_rows = by_embeddings;
  CHECK_OK(vlm_text_model_embeddings_prefill(model, 1, &input, &out));
  CHECK(memcmp(by_tokens, by_embeddings, sizeof(by_tokens)) == 0);
  vlm_kv_cache *cache = vlm_text_model_cache(model);
  for (int layer = 0; layer < 2; layer++) {
    CHECK(memcmp(vlm_kv_cache_keys(cache, 0, layer), vlm_kv_cache_keys(cache, 1, layer),
                 PROMPT_LENGTH * 64 * sizeof(float)) == 0);
    CHECK(memcmp(vlm_kv_cache_values(cache, 0, layer), vlm_kv_cache_values(cache, 1, layer),
                 PROMPT_LENGTH * 64 * sizeof(float)) == 0);
  }
  /* An explicit causal bias gives the same result as the implicit mask. */
  CHECK_OK(vlm_text_model_clear_slot(model, 1));
  float *bias = malloc(PROMPT_LENGTH * PROMPT_LENGTH * sizeof(float));
  for (int64_t r = 0; r < PROMPT_LENGTH; r++)
    for (int64_t k = 0; k < PROMPT_LENGTH; k++) bias[r * PROMPT_LENGTH + k] = k <= r ? 0.0f : -INFINITY;
  input.bias = bias;
  input.bias_key_count = PROMPT_LENGTH;
  CHECK_OK(vlm_text_model_embeddings_prefill(model, 1, &input, &out));
  CHECK(memcmp(by_tokens, by_embeddings, sizeof(by_tokens)) == 0);
  free(bias);
  free(embeddings);
  vlm_text_model_release(model);
}

static void contracts_refuse_bad_inputs(void) {
  vlm_text_model *model = open_model(2, 4, NULL);
  if (!model) return;
  float logits[256];
  vlm_prefill_logits out = {.last_row = logits};
  int32_t long_prompt[70] = {0};
  CHECK_ERROR(vlm_text_model_token_prefill(model, 0, long_prompt, 70, NULL, &out),
              VLM_STATUS_OUT_OF_RANGE, "context length exceeded: slot 0 holds 0 positions and 70 more");
  const int32_t bad_token[1] = {256};
  CHECK_ERROR(vlm_text_model_token_prefill(model, 0, bad_token, 1, NULL, &out),
              VLM_STATUS_INVALID_ARGUMENT, "outside the vocabulary of 256");
  CHECK_ERROR(vlm_text_model_token_prefill(model, 2, prompt, 3, NULL, &out),
              VLM_STATUS_INVALID_ARGUMENT, "slot 2 is outside 0..1");
  int64_t three_axes[9] = {0, 1, 2, 0, 1, 2, 0, 1, 2};
  vlm_positions positions = {three_axes, 3};
  CHECK_ERROR(vlm_text_model_token_prefill(model, 0, prompt, 3, &positions, &out),
              VLM_STATUS_INVALID_ARGUMENT, "3-axis positions given to a model with 1-axis RoPE");
  float embeddings[8 * 128] = {0};
  int32_t ones[8] = {1, 1, 1, 1, 1, 1, 1, 1}, zeros[8] = {0};
  vlm_side_input side = {.name = "deepstack_features"};
  vlm_prefill_input input = {.row_count = 2, .tokens = prompt, .features = embeddings, .feature_mask = ones,
                             .position_axes = 1, .side_inputs = &side, .side_input_count = 1};
  CHECK_ERROR(vlm_text_model_embeddings_prefill(model, 0, &input, &out), VLM_STATUS_INVALID_ARGUMENT,
              "takes no side input 'deepstack_features'");
  float bias[2 * 3] = {0};
  input = (vlm_prefill_input){.row_count = 2, .tokens = prompt, .features = embeddings, .feature_mask = ones,
                              .position_axes = 1, .bias = bias, .bias_key_count = 3};
  CHECK_ERROR(vlm_text_model_embeddings_prefill(model, 0, &input, &out), VLM_STATUS_INVALID_ARGUMENT,
              "the bias must be [2, 2]");
  const int32_t one_bad[2] = {3, 256};
  input = (vlm_prefill_input){.row_count = 2, .tokens = one_bad, .features = embeddings, .feature_mask = zeros,
                              .position_axes = 1};
  CHECK_ERROR(vlm_text_model_embeddings_prefill(model, 0, &input, &out), VLM_STATUS_INVALID_ARGUMENT,
              "outside the vocabulary of 256");
  input = (vlm_prefill_input){.row_count = 2, .tokens = prompt, .features = embeddings, .position_axes = 1};
  CHECK_ERROR(vlm_text_model_embeddings_prefill(model, 0, &input, &out), VLM_STATUS_INVALID_ARGUMENT,
              "features and their mask come together");
  CHECK_INT_EQ(vlm_text_model_slot_length(model, 0), 0); /* nothing half-written */
  int32_t tokens[2] = {1, 2}, slots[2] = {1, 1};
  int64_t decode_positions[2] = {0, 0};
  CHECK_ERROR(vlm_text_model_decode(model, 2, tokens, decode_positions, NULL, slots, logits),
              VLM_STATUS_INVALID_ARGUMENT, "slot 1 appears twice");
  int64_t deltas[1] = {3};
  CHECK_ERROR(vlm_text_model_decode(model, 1, tokens, decode_positions, deltas, slots, logits),
              VLM_STATUS_INVALID_ARGUMENT, "M-RoPE deltas given to a model with 1-axis RoPE");
  CHECK_ERROR(vlm_text_model_decode(model, 3, tokens, decode_positions, NULL, slots, logits),
              VLM_STATUS_INVALID_ARGUMENT, "batch of 3 rows, expected 1..2");
  vlm_text_model_release(model);
}

/* The "layer_features" side input (models/modules.h): required with
 * features when the decoder has layer features, [L, T, hidden] exactly,
 * refused without features, for a decoder without any, or under another
 * name, or twice. */
static void layer_features_are_checked(void) {
  vlm_text_decoder_shape with = {.vocab_size = 16, .hidden_size = 4, .capacity = 8, .position_axes = 3,
                                 .layer_feature_count = 2};
  vlm_text_decoder_shape without = with;
  without.layer_feature_count = 0;
  int32_t tokens[3] = {1, 2, 3}, mask[3] = {0, 1, 0};
  float features[3 * 4] = {0}, layers[2 * 3 * 4] = {0};
  vlm_side_input side = {VLM_SIDE_INPUT_LAYER_FEATURES, layers, 3, {2, 3, 4}};
  vlm_prefill_input input = {.row_count = 3, .tokens = tokens, .features = features, .feature_mask = mask,
                             .position_axes = 3, .side_inputs = &side, .side_input_count = 1};
  CHECK_OK(vlm_prefill_input_check(&with, 0, &input));
  CHECK(vlm_prefill_input_side(&input, VLM_SIDE_INPUT_LAYER_FEATURES) == &side);
  CHECK_ERROR(vlm_prefill_input_check(&without, 0, &input), VLM_STATUS_INVALID_ARGUMENT,
              "this model takes no side input 'layer_features'");
  side.shape[1] = 2;
  CHECK_ERROR(vlm_prefill_input_check(&with, 0, &input), VLM_STATUS_INVALID_ARGUMENT,
              "side input 'layer_features' must be f32 [2, 3, 4]");
  side.shape[1] = 3;
  side.rank = 2;
  CHECK_ERROR(vlm_prefill_input_check(&with, 0, &input), VLM_STATUS_INVALID_ARGUMENT, "must be f32 [2, 3, 4]");
  side.rank = 3;
  vlm_side_input twice[2] = {side, side};
  input.side_inputs = twice;
  input.side_input_count = 2;
  CHECK_ERROR(vlm_prefill_input_check(&with, 0, &input), VLM_STATUS_INVALID_ARGUMENT, "unexpected side input");
  vlm_side_input other = {"per_layer_inputs", layers, 3, {2, 3, 4}};
  input.side_inputs = &other;
  input.side_input_count = 1;
  CHECK_ERROR(vlm_prefill_input_check(&with, 0, &input), VLM_STATUS_INVALID_ARGUMENT,
              "unexpected side input 'per_layer_inputs'");
  input.side_inputs = NULL;
  input.side_input_count = 0;
  CHECK_ERROR(vlm_prefill_input_check(&with, 0, &input), VLM_STATUS_INVALID_ARGUMENT,
              "the side input 'layer_features' is missing");
  /* No features (a text-only prompt of an M-RoPE model): none wanted. */
  input.features = NULL;
  input.feature_mask = NULL;
  CHECK_OK(vlm_prefill_input_check(&with, 0, &input));
  input.side_inputs = &side;
  input.side_input_count = 1;
  CHECK_ERROR(vlm_prefill_input_check(&with, 0, &input), VLM_STATUS_INVALID_ARGUMENT, "without features");
}

TEST_MAIN(TEST(prefill_logits_match_a_float64_reference), TEST(layer_features_are_checked),
          TEST(logits_do_not_depend_on_chunking_threads_or_batch),
          TEST(quantized_logits_do_not_depend_on_chunking_threads_batch_or_path),
          TEST(embeddings_prefill_matches_token_prefill), TEST(contracts_refuse_bad_inputs))
