/* The general attention-block contracts (src/models/modules.h) and Gemma 3's
 * use of them: which rows form blocks, the bias they give, where a prefill
 * step may end around them, and that the cpu text model gives bitwise the
 * same logits and KV whether a block falls inside one prefill chunk or
 * straddles several (it stretches the chunk); also Gemma's embedding scale
 * rounded to the dtype the model runs in. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/text_model.h"
#include "models/decoder.h"
#include "models/family.h"
#include "models/model.h"
#include "models/modules.h"
#include "test.h"

/* Rows 3..8 one block, rows 10..11 another, the rest causal. */
static const int32_t blocks[13] = {-1, -1, -1, 0, 0, 0, 0, 0, 0, -1, 1, 1, -1};
#define ROWS 13

static void bias_and_reach_of_blocks(void) {
  int64_t reach[ROWS];
  vlm_attention_blocks_reach(blocks, ROWS, reach);
  const int64_t expected_reach[ROWS] = {0, 1, 2, 8, 8, 8, 8, 8, 8, 9, 11, 11, 12};
  for (int r = 0; r < ROWS; r++) CHECK_INT_EQ(reach[r], expected_reach[r]);
  /* Rows [4, 13) with rows [0, 4) in the slot: keys 0..12. */
  float bias[9 * ROWS];
  vlm_attention_blocks_bias(blocks, ROWS, 4, 9, bias);
  for (int i = 0; i < 9; i++)
    for (int k = 0; k < ROWS; k++) {
      int row = 4 + i;
      bool seen = k <= row || (blocks[row] >= 0 && blocks[k] == blocks[row]);
      CHECK(bias[i * ROWS + k] == (seen ? 0.0f : -INFINITY));
    }
  /* The same reach read back from a whole prompt's bias. */
  float whole[ROWS * ROWS];
  int64_t from_bias[ROWS];
  vlm_attention_blocks_bias(blocks, ROWS, 0, ROWS, whole);
  vlm_prefill_bias_reach(whole, ROWS, ROWS, 0, from_bias);
  for (int r = 0; r < ROWS; r++) CHECK_INT_EQ(from_bias[r], expected_reach[r]);
}

static void chunks_end_before_or_after_a_block(void) {
  int64_t reach[ROWS];
  vlm_attention_blocks_reach(blocks, ROWS, reach);
  CHECK_INT_EQ(vlm_prefill_chunk_end(reach, ROWS, 0, 4), 3);   /* not inside the block at 3 */
  CHECK_INT_EQ(vlm_prefill_chunk_end(reach, ROWS, 3, 4), 9);   /* the block whole, past the chunk */
  CHECK_INT_EQ(vlm_prefill_chunk_end(reach, ROWS, 9, 2), 10);  /* 11 would split the block at 10 */
  CHECK_INT_EQ(vlm_prefill_chunk_end(reach, ROWS, 9, 3), 12);
  CHECK_INT_EQ(vlm_prefill_chunk_end(reach, ROWS, 0, 0), ROWS); /* no limit */
  CHECK_INT_EQ(vlm_prefill_chunk_end(reach, ROWS, 0, 100), ROWS);
}

static vlm_model *open_gemma3(const char *dtype) {
  char path[512];
  snprintf(path, sizeof(path), "%s/tests/models/gemma3", VLM_SOURCE_DIR);
  vlm_model_options options = {.dtype = dtype};
  vlm_model *model = NULL;
  CHECK_OK(vlm_model_open(path, &options, &model));
  return model;
}

/* Gemma3Processor's token_type_ids: each run of soft tokens is a block. */
static void gemma3_blocks_are_runs_of_soft_tokens(void) {
  vlm_model *model = open_gemma3(NULL);
  if (!model) return;
  int32_t soft = (int32_t)model->config.image_token_id, boi = (int32_t)model->config.boi_token_id;
  const int32_t ids[10] = {2, boi, soft, soft, 108, boi, soft, soft, soft, 108};
  int32_t out[10];
  bool any = false;
  CHECK_OK(model->family->attention_blocks(&model->config, ids, 10, out, &any));
  const int32_t expected[10] = {-1, -1, 0, 0, -1, -1, 1, 1, 1, -1};
  CHECK(any);
  for (int i = 0; i < 10; i++) CHECK_INT_EQ(out[i], expected[i]);
  CHECK_OK(model->family->attention_blocks(&model->config, ids, 2, out, &any));
  CHECK(!any);
  vlm_model_release(model);
}

/* embed_scale.to(weight dtype): sqrt(3072) = 55.4256 is 55.5 in bfloat16
 * (gemma-3-4b), float32's own rounding in float32. */
static void gemma3_embedding_scale_is_rounded_to_the_dtype(void) {
  const char *dtypes[2] = {"bfloat16", "float32"};
  const double expected[2] = {55.5, (double)(float)sqrt(3072.0)};
  for (int i = 0; i < 2; i++) {
    vlm_model *model = open_gemma3(dtypes[i]);
    if (!model) return;
    vlm_model_config config = model->config;
    config.text.hidden_size = 3072;
    vlm_decoder_description description;
    model->family->describe_decoder(&config, &description);
    CHECK(description.embedding_scale == expected[i]);
    vlm_model_release(model);
  }
}

/* A prefill of the tiny Gemma 3 decoder with the blocks' bias, in chunks
 * of 4 rows (the first block starts inside one) and in one step: logits
 * and KV bitwise equal; and not those of a causal prefill. */
static float *prefill(vlm_model *model, int64_t chunk, const float *bias, float **out_keys) {
  vlm_text_model_options options = {.slot_count = 1, .capacity = 32, .prefill_chunk = chunk};
  vlm_text_model *text = NULL;
  CHECK_OK(vlm_text_model_open(model, &options, &text));
  if (!text) return NULL;
  int64_t vocab = vlm_text_model_vocab_size(text);
  float *logits = malloc((size_t)(ROWS * vocab) * sizeof(float));
  vlm_prefill_logits out = {.all_rows = logits};
  const int32_t tokens[ROWS] = {2, 105, 2364, 107, 30, 77, 1000, 20, 9, 108, 5000, 7, 1};
  vlm_prefill_input input = {.row_count = ROWS, .tokens = tokens, .position_axes = 1, .bias = bias,
                             .bias_key_count = bias ? ROWS : 0};
  CHECK_OK(vlm_text_model_embeddings_prefill(text, 0, &input, &out));
  vlm_kv_cache *cache = vlm_text_model_cache(text);
  int64_t key_floats = ROWS * (int64_t)model->config.text.num_key_value_heads * model->config.text.head_dim;
  *out_keys = malloc((size_t)(2 * key_floats) * sizeof(float));
  for (int layer = 0; layer < 2; layer++)
    memcpy(*out_keys + layer * key_floats, vlm_kv_cache_keys(cache, 0, layer), (size_t)key_floats * sizeof(float));
  vlm_text_model_release(text);
  return logits;
}

static void a_block_across_chunks_equals_one_step(void) {
  vlm_model *model = open_gemma3(NULL);
  if (!model) return;
  float bias[ROWS * ROWS];
  vlm_attention_blocks_bias(blocks, ROWS, 0, ROWS, bias);
  float *keys_whole = NULL, *keys_chunked = NULL, *keys_causal = NULL;
  float *whole = prefill(model, 512, bias, &keys_whole);
  float *chunked = prefill(model, 4, bias, &keys_chunked);
  float *causal = prefill(model, 512, NULL, &keys_causal);
  int64_t vocab = model->config.text.vocab_size;
  int64_t key_floats = ROWS * (int64_t)model->config.text.num_key_value_heads * model->config.text.head_dim;
  if (whole && chunked && causal) {
    CHECK(memcmp(whole, chunked, (size_t)(ROWS * vocab) * sizeof(float)) == 0);
    CHECK(memcmp(keys_whole, keys_chunked, (size_t)(2 * key_floats) * sizeof(float)) == 0);
    /* Row 3 sees row 8 through the block: its logits are not causal ones. */
    CHECK(memcmp(whole + 3 * vocab, causal + 3 * vocab, (size_t)vocab * sizeof(float)) != 0);
    CHECK(memcmp(whole, causal, (size_t)(3 * vocab) * sizeof(float)) == 0); /* rows before it are */
  }
  free(whole), free(chunked), free(causal);
  free(keys_whole), free(keys_chunked), free(keys_causal);
  vlm_model_release(model);
}

TEST_MAIN(TEST(bias_and_reach_of_blocks), TEST(chunks_end_before_or_after_a_block),
          TEST(gemma3_blocks_are_runs_of_soft_tokens), TEST(gemma3_embedding_scale_is_rounded_to_the_dtype),
          TEST(a_block_across_chunks_equals_one_step))
