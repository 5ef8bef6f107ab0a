/* The encoder stages of a golden case: vision_encoder (the tower's
 * selected hidden state), vision_features (after the select strategy),
 * projector (what replaces the placeholders), as the family's encoder graph
 * names them (vlm_encoder_nodes), and the merged input_embeddings as the
 * decoder graph computes them. The encoder is fed the golden's own
 * processor outputs (golden_media.c), so these stages prove the model half
 * independently of the image processor (whose stages are processor.*). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_encoder.h"
#include "backends/cpu/text_model.h"
#include "core/status.h"
#include "core/tensor_list.h"
#include "core/thread_pool.h"
#include "io/json.h"
#include "models/decoder.h"
#include "validate/compare.h"
#include "validate/golden_media.h"
#include "validate/stages.h"

/* What one encoder stage captured over every image, as double. */
typedef struct captured_stage {
  const char *stage;
  double *values;
  int64_t count, capacity;
} captured_stage;

typedef struct encoder_run {
  vlm_thread_pool *pool;
  vlm_cpu_encoder *encoder;
  vlm_media_item *items;
  int item_count;
  captured_stage captured;      /* the stage being compared */
  int64_t tokens_this_item;     /* rows the output stage keeps per image */
  float *features;              /* [every item's tokens, the encoder's output width] */
  int64_t feature_width;
  int64_t feature_rows;
} encoder_run;

static void encoder_run_release(encoder_run *run) {
  vlm_cpu_encoder_release(run->encoder);
  vlm_thread_pool_release(run->pool);
  vlm_golden_media_items_release(run->items, run->item_count);
  free(run->captured.values);
  free(run->features);
}

static bool append(captured_stage *captured, const float *values, int64_t count) {
  if (captured->count + count > captured->capacity) {
    int64_t capacity = (captured->count + count) * 2;
    double *grown = realloc(captured->values, (size_t)capacity * sizeof(double));
    if (!grown) return false;
    captured->values = grown;
    captured->capacity = capacity;
  }
  for (int64_t i = 0; i < count; i++) captured->values[captured->count + i] = values[i];
  captured->count += count;
  return true;
}

/* The node of the stage being compared, from this image's graph. */
static void capture(void *context, const vlm_node *node, const float *values) {
  encoder_run *run = context;
  const vlm_encoder_nodes *nodes = vlm_cpu_encoder_last_nodes(run->encoder);
  for (int i = 0; i < nodes->stage_count; i++) {
    if (strcmp(nodes->stages[i].stage, run->captured.stage) != 0) continue;
    if (strcmp(node->name, vlm_cpu_encoder_node_name(run->encoder, nodes->stages[i].node)) != 0) continue;
    int64_t count = 1;
    for (int d = 0; d < node->rank; d++) count *= node->shape[d];
    /* Padding rows (a bucketed graph) are not the image's: keep the rows
     * the output keeps. */
    if (nodes->stages[i].node == nodes->output && node->rank == 2)
      count = run->tokens_this_item * node->shape[1];
    append(&run->captured, values, count);
  }
}

/* Encodes every golden image on the cpu backend, capturing `stage`. */
static vlm_status encode_golden_images(const vlm_compare_context *context, const char *stage, encoder_run *run) {
  memset(run, 0, sizeof(*run));
  run->captured.stage = stage;
  VLM_RETURN_IF_ERROR(vlm_golden_media_items(context, &run->items, &run->item_count));
  if (!run->item_count) return VLM_ERROR(NOT_FOUND, "the case has no images");
  VLM_RETURN_IF_ERROR(vlm_thread_pool_create(context->thread_count, context->allocator, &run->pool));
  vlm_cpu_encoder_options options = {.pool = run->pool};
  VLM_RETURN_IF_ERROR(vlm_cpu_encoder_open(context->model, VLM_MEDIA_IMAGE, &options, &run->encoder));
  int64_t width = vlm_cpu_encoder_output_width(run->encoder);
  run->feature_width = width;
  /* Image items only (a case's audio clips follow its images). */
  for (int i = 0; i < run->item_count; i++)
    run->feature_rows += run->items[i].kind == VLM_MEDIA_IMAGE ? run->items[i].token_count : 0;
  run->features = malloc((size_t)(run->feature_rows * width) * sizeof(float));
  if (!run->features) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_encoder_trace trace = {.node_observer = capture, .node_context = run};
  vlm_cpu_encoder_set_trace(run->encoder, &trace);
  vlm_status status = VLM_OK;
  int64_t offset = 0;
  for (int i = 0; !status && i < run->item_count; i++) {
    if (run->items[i].kind != VLM_MEDIA_IMAGE) continue;
    run->tokens_this_item = run->items[i].token_count;
    int64_t before = run->captured.count;
    status = vlm_cpu_encoder_encode(run->encoder, &run->items[i], run->features + offset * width);
    offset += run->items[i].token_count;
    if (!status && run->captured.count == before)
      status = VLM_ERROR(NOT_FOUND, "the encoder graph has no '%s' stage", stage);
  }
  vlm_cpu_encoder_set_trace(run->encoder, NULL);
  return status;
}

/* Transformers ran a bfloat16 case in bfloat16: its outputs are rounded. */
static void round_like_golden(const vlm_compare_context *context, double *values, int64_t count) {
  if (!context->golden->dtype || strcmp(context->golden->dtype, "bfloat16") != 0) return;
  for (int64_t i = 0; i < count; i++) values[i] = vlm_bf16_to_f32(vlm_f32_to_bf16((float)values[i]));
}

static vlm_status compare_stage(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                vlm_stage_result *result) {
  encoder_run run;
  vlm_status status = encode_golden_images(context, stage->name, &run);
  if (!status) {
    round_like_golden(context, run.captured.values, run.captured.count);
    status = vlm_compare_with_golden_tensor(context, stage, run.captured.values, run.captured.count, result);
  }
  encoder_run_release(&run);
  return status;
}

vlm_status vlm_stage_vision_encoder(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                    vlm_stage_result *result) {
  return compare_stage(context, stage, result);
}

vlm_status vlm_stage_vision_features(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                     vlm_stage_result *result) {
  return compare_stage(context, stage, result);
}

vlm_status vlm_stage_projector(const vlm_compare_context *context, const vlm_golden_stage *stage,
                               vlm_stage_result *result) {
  return compare_stage(context, stage, result);
}

/* An integer input of the family's encoder graph that Transformers also
 * computes (Qwen2.5-VL's window order): the stage's "encoder_input" names
 * it; each golden image's inputs are built at the image's own rows (no
 * padding) and appended in image order. */
vlm_status vlm_stage_encoder_input(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                   vlm_stage_result *result) {
  const char *name = vlm_json_get_string(vlm_json_object_get(stage->spec, "encoder_input"));
  if (!name) return VLM_ERROR(DATA_LOSS, "stage %s names no \"encoder_input\"", stage->name);
  vlm_media_item *items = NULL;
  int item_count = 0;
  VLM_RETURN_IF_ERROR(vlm_golden_media_items(context, &items, &item_count));
  const vlm_family_image *path = context->model->family->image;
  const vlm_model_config *config = &context->model->config;
  captured_stage captured = {.stage = stage->name};
  vlm_status status = item_count ? VLM_OK : VLM_ERROR(NOT_FOUND, "the case has no images");
  for (int i = 0; !status && i < item_count; i++) {
    if (items[i].kind != VLM_MEDIA_IMAGE) continue;
    int64_t rows = 0;
    vlm_tensor_list inputs = {0};
    status = path->encoder_rows(config, &items[i], &rows);
    if (!status) status = path->encoder_inputs(config, &items[i], rows, &inputs);
    const vlm_named_tensor *tensor = status ? NULL : vlm_tensor_list_find(&inputs, name);
    if (!status && (!tensor || tensor->dtype != VLM_DTYPE_I32))
      status = VLM_ERROR(NOT_FOUND, "the encoder has no i32 input '%s'", name);
    int64_t count = 1;
    for (int d = 0; tensor && d < tensor->rank; d++) count *= tensor->shape[d];
    for (int64_t k = 0; !status && k < count; k++) {
      float value = (float)((const int32_t *)tensor->data)[k];
      if (!append(&captured, &value, 1)) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    }
    vlm_tensor_list_release(&inputs);
  }
  if (!status) status = vlm_compare_with_golden_tensor(context, stage, captured.values, captured.count, result);
  if (!status && !result->detail[0])
    snprintf(result->detail, sizeof(result->detail), "encoder input '%s' of %d image(s)", name, item_count);
  free(captured.values);
  vlm_golden_media_items_release(items, item_count);
  return status;
}

/* ---------------------------------------------------------------------- */
/* Merged embeddings                                                       */
/* ---------------------------------------------------------------------- */

typedef struct merged_capture {
  const char *name;       /* "<prefix>embed_tokens_merged" */
  double *values;
  int64_t count;
} merged_capture;

static void capture_merged(void *context, const vlm_node *node, const float *values) {
  merged_capture *merged = context;
  if (merged->values || strcmp(node->name, merged->name) != 0) return;
  merged->count = node->shape[0] * node->shape[1];
  merged->values = malloc((size_t)merged->count * sizeof(double));
  for (int64_t i = 0; merged->values && i < merged->count; i++) merged->values[i] = values[i];
}

/* input_embeddings: text-only cases are plain token embeddings
 * (stage_decoder.c); image cases are the decoder graph's merge of the
 * projected features of the golden processor outputs into the golden
 * (already expanded) input_ids, captured from an embeddings_prefill. */
vlm_status vlm_stage_merged_input_embeddings(const vlm_compare_context *context,
                                             const vlm_golden_stage *stage, vlm_stage_result *result) {
  if (vlm_golden_image_count(context->golden) == 0) return vlm_stage_input_embeddings(context, stage, result);
  int32_t *ids = NULL;
  int64_t count = 0;
  encoder_run run;
  memset(&run, 0, sizeof(run));
  vlm_status status = vlm_golden_token_ids(context->golden, &ids, &count);
  if (!status) status = encode_golden_images(context, "projector", &run);
  vlm_text_model *text = NULL;
  vlm_text_model_options options = {.slot_count = 1, .capacity = count, .prefill_chunk = count, .pool = run.pool,
                                    .allocator = context->allocator};
  if (!status) status = vlm_text_model_open(context->model, &options, &text);
  const vlm_model_config *config = &context->model->config;
  const vlm_family_image *path = context->model->family->image;
  int64_t placeholder = path->feature_token ? path->feature_token(config) : path->placeholder_token(config);
  int64_t width = config->text.hidden_size, vocab = config->text.vocab_size;
  /* An encoder row beyond the hidden width holds the layer features. */
  int64_t layers = status ? 0 : run.feature_width / width - 1;
  float *features = status ? NULL : calloc((size_t)(count * width), sizeof(float));
  float *layer_features = status || !layers ? NULL : calloc((size_t)(layers * count * width), sizeof(float));
  if (!status && layers && !layer_features) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  int32_t *mask = status ? NULL : calloc((size_t)count, sizeof(int32_t));
  float *logits = status ? NULL : malloc((size_t)vocab * sizeof(float));
  if (!status && (!features || !mask || !logits)) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  int64_t next = 0;
  for (int64_t r = 0; !status && r < count; r++) {
    if (ids[r] != placeholder) continue;
    if (next == run.feature_rows) {
      status = VLM_ERROR(INVALID_ARGUMENT, "the prompt has more image tokens than the images' %lld feature rows",
                         (long long)run.feature_rows);
      break;
    }
    mask[r] = 1;
    const float *row = run.features + (next++) * run.feature_width;
    memcpy(features + r * width, row, (size_t)width * sizeof(float));
    for (int64_t j = 0; j < layers; j++)
      memcpy(layer_features + (j * count + r) * width, row + (1 + j) * width, (size_t)width * sizeof(float));
  }
  if (!status && next != run.feature_rows)
    status = VLM_ERROR(INVALID_ARGUMENT, "image features and image tokens do not match: %lld tokens, %lld feature rows",
                       (long long)next, (long long)run.feature_rows);
  char name[VLM_GRAPH_NAME_LENGTH];
  vlm_decoder_description description;
  vlm_family_describe_decoder(context->model->family, config, &description);
  snprintf(name, sizeof(name), "%sembed_tokens_merged", description.prefix);
  merged_capture merged = {.name = name};
  if (!status) {
    vlm_text_model_set_observer(text, capture_merged, &merged);
    vlm_side_input side = {.name = VLM_SIDE_INPUT_LAYER_FEATURES, .values = layer_features, .rank = 3,
                           .shape = {layers, count, width}};
    vlm_prefill_input input = {.row_count = count, .tokens = ids, .features = features, .feature_mask = mask,
                               .position_axes = 1, .side_inputs = layers ? &side : NULL,
                               .side_input_count = layers ? 1 : 0};
    vlm_prefill_logits out = {.last_row = logits};
    status = vlm_text_model_embeddings_prefill(text, 0, &input, &out);
    if (!status && !merged.values) status = VLM_ERROR(INTERNAL, "the decoder graph has no node %s", name);
  }
  if (!status) {
    round_like_golden(context, merged.values, merged.count);
    status = vlm_compare_with_golden_tensor(context, stage, merged.values, merged.count, result);
  }
  if (!status && !result->detail[0])
    snprintf(result->detail, sizeof(result->detail), "%d image(s) merged by the decoder graph", run.item_count);
  free(merged.values);
  free(features);
  free(layer_features);
  free(mask);
  free(logits);
  free(ids);
  vlm_text_model_release(text);
  encoder_run_release(&run);
  return status;
}
