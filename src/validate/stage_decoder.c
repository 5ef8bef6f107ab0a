/* The text-decoder stages of a golden case: input_embeddings, prefill_logits,
 * kv and greedy_tokens. The prompt comes from the golden's own input_ids
 * (tokenization has stages of its own). When the golden holds the merged
 * input_embeddings (image cases), the decoder is driven through
 * embeddings_prefill with them, so the decoder is proven independently of
 * the vision path; text-only cases go through token_prefill. A family with
 * bidirectional attention blocks (Gemma 3's images) gets the additive bias
 * the engine builds from vlm's blocks of those ids, and a case may ask for
 * the prefill in chunks of "vlm_prefill_chunk" rows (Transformers ran it
 * whole; vlm must give the same, chunked). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/thread_pool.h"
#include "backends/cpu/text_model.h"
#include "models/decoder.h"
#include "models/family.h"
#include "models/model.h"
#include "models/modules.h"
#include "validate/compare.h"
#include "validate/golden_prompt.h"
#include "validate/stages.h"

typedef struct decoder_run {
  vlm_thread_pool *pool;
  vlm_text_model *model;
  vlm_golden_prompt prompt;
  float *logits;          /* [T, vocab] */
} decoder_run;

static void decoder_run_release(decoder_run *run) {
  vlm_text_model_release(run->model);
  vlm_thread_pool_release(run->pool);
  vlm_golden_prompt_release(&run->prompt);
  free(run->logits);
}

/* Opens the model and prefills the golden prompt, keeping every row's logits. */
static vlm_status prefill_golden_prompt(const vlm_compare_context *context, int64_t extra_capacity,
                                        decoder_run *run) {
  memset(run, 0, sizeof(*run));
  VLM_RETURN_IF_ERROR(vlm_golden_prompt_load(context, &run->prompt));
  const vlm_golden_prompt *prompt = &run->prompt;
  VLM_RETURN_IF_ERROR(vlm_thread_pool_create(context->thread_count, context->allocator, &run->pool));
  vlm_text_model_options options = {.slot_count = 1, .capacity = prompt->token_count + extra_capacity,
                                    .prefill_chunk = vlm_golden_prefill_chunk(context), .pool = run->pool,
                                    .allocator = context->allocator};
  VLM_RETURN_IF_ERROR(vlm_text_model_open(context->model, &options, &run->model));
  VLM_RETURN_IF_ERROR(vlm_text_model_begin_request(run->model, 0, prompt->adapter, prompt->token_count));
  int64_t vocab = vlm_text_model_vocab_size(run->model);
  run->logits = malloc((size_t)(prompt->token_count * vocab) * sizeof(float));
  if (!run->logits) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_prefill_logits out = {.all_rows = run->logits};
  vlm_prefill_input input;
  vlm_side_input side;
  if (prompt->embeddings || prompt->bias) {
    vlm_golden_prompt_input(prompt, &input, &side);
    return vlm_text_model_embeddings_prefill(run->model, 0, &input, &out);
  }
  vlm_positions positions = {.values = prompt->positions, .axes = 3};
  return vlm_text_model_token_prefill(run->model, 0, prompt->tokens, prompt->token_count,
                                      prompt->positions ? &positions : NULL, &out);
}

/* The factor the family's decoder applies to gathered embeddings. */
static double embedding_scale(const vlm_model_config *config) {
  const vlm_family *family = vlm_family_find(config->model_type);
  if (!family || !family->describe_decoder) return 1.0;
  vlm_decoder_description description;
  memset(&description, 0, sizeof(description));
  vlm_family_describe_decoder(family, config, &description);
  return description.embedding_scale ? description.embedding_scale : 1.0;
}

/* The stage's "positions" list as int64 values. */
static int64_t stage_positions(const vlm_golden_stage *stage, int64_t *out, int64_t capacity) {
  const vlm_json_value *positions = vlm_json_object_get(stage->spec, "positions");
  int64_t count = 0;
  for (size_t i = 0; positions && i < positions->as.array.count && count < capacity; i++)
    if (vlm_json_get_int(&positions->as.array.items[i], &out[count])) count++;
  return count;
}

/* The columns a golden stores: every id, or (real vocabularies) the
 * stage's "vocab_ids" sample, checked against the model's vocabulary. */
static vlm_status logits_columns(const vlm_golden_stage *stage, int64_t vocab, int64_t **out_ids,
                                 int64_t *out_count) {
  *out_ids = NULL;
  *out_count = vocab;
  const vlm_json_value *ids = vlm_json_object_get(stage->spec, "vocab_ids");
  if (!ids) return VLM_OK;
  int64_t golden_vocab = -1;
  if (ids->type != VLM_JSON_ARRAY ||
      !vlm_json_get_int(vlm_json_object_get(stage->spec, "vocab_size"), &golden_vocab))
    return VLM_ERROR(DATA_LOSS, "prefill_logits: \"vocab_ids\" needs an array and \"vocab_size\"");
  if (golden_vocab != vocab)
    return VLM_ERROR(DATA_LOSS, "prefill_logits: the golden's vocabulary has %lld ids, the model %lld",
                     (long long)golden_vocab, (long long)vocab);
  *out_count = (int64_t)ids->as.array.count;
  *out_ids = malloc((size_t)(*out_count + 1) * sizeof(int64_t));
  if (!*out_ids) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t i = 0; i < *out_count; i++)
    if (!vlm_json_get_int(&ids->as.array.items[i], &(*out_ids)[i]) || (*out_ids)[i] < 0 ||
        (*out_ids)[i] >= vocab) {
      free(*out_ids);
      *out_ids = NULL;
      return VLM_ERROR(DATA_LOSS, "prefill_logits: vocab_ids[%lld] is not an id below %lld",
                       (long long)i, (long long)vocab);
    }
  return VLM_OK;
}

vlm_status vlm_stage_prefill_logits(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                    vlm_stage_result *result) {
  decoder_run run;
  vlm_status status = prefill_golden_prompt(context, 0, &run);
  int64_t positions[64], count = stage_positions(stage, positions, 64);
  int64_t vocab = run.model ? vlm_text_model_vocab_size(run.model) : 0;
  int64_t *columns = NULL, width = vocab;
  if (!status) status = logits_columns(stage, vocab, &columns, &width);
  double *actual = status ? NULL : malloc((size_t)(count * width + 1) * sizeof(double));
  if (!status && !actual) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t p = 0; !status && p < count; p++) {
    if (positions[p] < 0 || positions[p] >= run.prompt.token_count) {
      status = VLM_ERROR(DATA_LOSS, "golden position %lld is outside the prompt", (long long)positions[p]);
      break;
    }
    const float *row = run.logits + positions[p] * vocab;
    for (int64_t v = 0; v < width; v++) actual[p * width + v] = row[columns ? columns[v] : v];
  }
  free(columns);
  if (!status) status = vlm_compare_with_golden_tensor(context, stage, actual, count * width, result);
  if (!status && run.prompt.embeddings && !result->detail[0])
    snprintf(result->detail, sizeof(result->detail), "decoder fed the golden input_embeddings");
  free(actual);
  decoder_run_release(&run);
  return status;
}

/* Golden layout: per layer that stores its own KV, keys (after RoPE) then
 * values, each [kv_head, position, width / kv_heads] (a latent layer: one
 * head); vlm's cache packs them [position, width] per layer and half, as
 * the family's KV layout says (vlm_kv_layout_to_golden). */
vlm_status vlm_stage_kv(const vlm_compare_context *context, const vlm_golden_stage *stage,
                        vlm_stage_result *result) {
  decoder_run run;
  vlm_status status = prefill_golden_prompt(context, 0, &run);
  int64_t positions[64], count = stage_positions(stage, positions, 64);
  double *actual = NULL;
  float *packed = NULL;
  if (!status) {
    vlm_kv_cache *cache = vlm_text_model_cache(run.model);
    const vlm_kv_layout *layout = vlm_kv_cache_layout(cache);
    int64_t length = vlm_kv_cache_length(cache, 0), token = vlm_kv_layout_token_values(layout);
    for (int64_t p = 0; !status && p < count; p++)
      if (positions[p] < 0 || positions[p] >= length)
        status = VLM_ERROR(DATA_LOSS, "golden position %lld is outside the prompt", (long long)positions[p]);
    actual = malloc((size_t)(token * count + 1) * sizeof(double));
    packed = malloc((size_t)(token * length + 1) * sizeof(float));
    if (!status && (!actual || !packed)) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    if (!status) status = vlm_kv_cache_read(cache, 0, 0, length, packed);
    int64_t written = 0;
    if (!status)
      written = vlm_kv_layout_to_golden(layout, vlm_text_model_config(run.model)->text.num_key_value_heads, packed,
                                        length, positions, count, actual);
    if (!status) status = vlm_compare_with_golden_tensor(context, stage, actual, written, result);
  }
  free(actual);
  free(packed);
  decoder_run_release(&run);
  return status;
}

static int32_t argmax(const float *values, int64_t count) {
  int64_t best = 0;
  for (int64_t i = 1; i < count; i++)
    if (values[i] > values[best]) best = i;
  return (int32_t)best;
}

/* Greedy continuation of the golden prompt, token for token. */
vlm_status vlm_stage_greedy_tokens(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                   vlm_stage_result *result) {
  const vlm_json_value *expected = vlm_json_object_get(stage->spec, "tokens");
  if (!expected || expected->type != VLM_JSON_ARRAY)
    return VLM_ERROR(DATA_LOSS, "stage greedy_tokens has no \"tokens\" list");
  int64_t wanted = (int64_t)expected->as.array.count;
  decoder_run run;
  vlm_status status = prefill_golden_prompt(context, wanted, &run);
  if (!status) {
    int64_t vocab = vlm_text_model_vocab_size(run.model);
    float *logits = malloc((size_t)vocab * sizeof(float));
    int32_t token = argmax(run.logits + (run.prompt.token_count - 1) * vocab, vocab);
    result->outcome = VLM_STAGE_MATCH;
    for (int64_t i = 0; logits && i < wanted && !status; i++) {
      int64_t golden_token = -1;
      vlm_json_get_int(&expected->as.array.items[i], &golden_token);
      result->compared++;
      if (token != golden_token) {
        result->mismatched++;
        if (result->outcome == VLM_STAGE_MATCH)
          snprintf(result->detail, sizeof(result->detail), "token %lld: vlm %d, golden %lld",
                   (long long)i, token, (long long)golden_token);
        result->outcome = VLM_STAGE_DIVERGED;
        break; /* later tokens follow a different prefix */
      }
      if (i + 1 == wanted) break;
      int64_t position = vlm_text_model_slot_length(run.model, 0);
      int32_t slot = 0;
      status = vlm_text_model_decode(run.model, 1, &token, &position, run.prompt.positions ? &run.prompt.position_delta : NULL,
                                     &slot, logits);
      token = argmax(logits, vocab);
    }
    if (!logits) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    if (!status && result->outcome == VLM_STAGE_MATCH)
      snprintf(result->detail, sizeof(result->detail), "%lld tokens identical", (long long)wanted);
    free(logits);
  }
  decoder_run_release(&run);
  return status;
}

/* Embeddings gathered from the token table; for prompts with image
 * placeholders the merged embeddings need the vision path. */
vlm_status vlm_stage_input_embeddings(const vlm_compare_context *context,
                                      const vlm_golden_stage *stage, vlm_stage_result *result) {
  decoder_run run;
  memset(&run, 0, sizeof(run));
  vlm_status status = vlm_golden_token_ids(context->golden, &run.prompt.tokens, &run.prompt.token_count);
  vlm_text_model_options options = {.slot_count = 1, .capacity = 1, .allocator = context->allocator};
  if (!status && !context->model) status = VLM_ERROR(FAILED_PRECONDITION, "%s does not open", context->model_directory);
  if (!status) status = vlm_text_model_open(context->model, &options, &run.model);
  double *actual = NULL;
  if (!status) {
    const vlm_model_config *config = vlm_text_model_config(run.model);
    int64_t hidden = config->text.hidden_size;
    for (int64_t i = 0; i < run.prompt.token_count; i++)
      if (config->image_token_id >= 0 && run.prompt.tokens[i] == config->image_token_id) {
        result->outcome = VLM_STAGE_NOT_IMPLEMENTED;
        snprintf(result->detail, sizeof(result->detail),
                 "the prompt has image placeholders: merging needs the vision path");
        decoder_run_release(&run);
        return VLM_OK;
      }
    vlm_tensor table;
    status = vlm_text_model_embedding_table(run.model, &table);
    if (!status && table.dtype != VLM_DTYPE_F32 && table.dtype != VLM_DTYPE_BF16 &&
        table.dtype != VLM_DTYPE_F16)
      status = VLM_ERROR(UNIMPLEMENTED, "input_embeddings: the stage reads f32, bf16 and f16 tables, got %s",
                         vlm_dtype_name(table.dtype));
    actual = status ? NULL : malloc((size_t)(run.prompt.token_count * hidden + 1) * sizeof(double));
    /* A gather is exact: round to the dtype Transformers ran in, as its
     * bf16 table holds the rounded values; families that scale the
     * embeddings (Gemma: sqrt(hidden)) do it inside embed_tokens, whose
     * output the golden holds, in that dtype. */
    bool bfloat16 = stage->dtype && strcmp(stage->dtype, "bfloat16") == 0;
    float scale = (float)embedding_scale(config);
    if (bfloat16) scale = vlm_bf16_to_f32(vlm_f32_to_bf16(scale));
    for (int64_t i = 0; actual && i < run.prompt.token_count; i++)
      for (int64_t h = 0; h < hidden; h++) {
        int64_t index = run.prompt.tokens[i] * hidden + h;
        float value = table.dtype == VLM_DTYPE_F32  ? ((const float *)table.data)[index]
                      : table.dtype == VLM_DTYPE_BF16 ? vlm_bf16_to_f32(((const uint16_t *)table.data)[index])
                                                      : vlm_f16_to_f32(((const uint16_t *)table.data)[index]);
        if (bfloat16) value = vlm_bf16_to_f32(vlm_f32_to_bf16(value));
        if (scale != 1.0f) value *= scale;
        actual[i * hidden + h] = bfloat16 ? vlm_bf16_to_f32(vlm_f32_to_bf16(value)) : value;
      }
    if (!status && !actual) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    if (!status) status = vlm_compare_with_golden_tensor(context, stage, actual, run.prompt.token_count * hidden, result);
  }
  free(actual);
  decoder_run_release(&run);
  return status;
}
