/* The audio stages of a golden case:
 *
 *   processor.audio_input_features, processor.audio_embed_sizes: vlm's
 *     decoder and the model's feature extractor (the registry's) on the
 *     fixture clip the manifest names in "audio" (a list of file names is
 *     one clip of those files end to end, as the oracle made it), from
 *     ../shared/fixtures/media/audio (or $VLM_FIXTURES_DIR/media/audio);
 *     missing fixtures FAIL the stage;
 *   audio_encoder, audio_projector: the family's audio encoder graph on
 *     the cpu backend, fed the golden's own processor outputs, as the graph
 *     names them (vlm_encoder_nodes), audio_projector in the speech mode
 *     (no image in the request) even in a case with an image;
 *     audio_projector_vision_speech: the projector stage with the item in
 *     a request that also has an image;
 *   input_embeddings of a case with audio: the decoder graph's merge of
 *     every item's features (images and clips, each kind in its own order)
 *     into the golden input_ids, captured from an embeddings_prefill. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_encoder.h"
#include "backends/cpu/text_model.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "io/file.h"
#include "io/json.h"
#include "media/audio_processors.h"
#include "models/decoder.h"
#include "models/model.h"
#include "validate/compare.h"
#include "validate/golden_media.h"
#include "validate/stages.h"
#include "vlm/audio.h"

/* ---- Processor stages --------------------------------------------------- */

static char *fixture_audio_directory(const vlm_compare_context *context) {
  const char *override = getenv("VLM_FIXTURES_DIR");
  char *base = override ? strdup(override)
                        : vlm_path_join(context->golden->directory, "../../../../../shared/fixtures");
  char *audio = base ? vlm_path_join(base, "media/audio") : NULL;
  free(base);
  return audio;
}

/* Decodes `path` at the model's rate and appends its samples. */
static vlm_status append_samples(const vlm_compare_context *context, const char *path, float **samples,
                                 int64_t *count) {
  int rate = 0;
  VLM_RETURN_IF_ERROR(vlm_model_audio_sample_rate(context->model, &rate));
  vlm_audio_decode_options options = {.sample_rate = rate};
  vlm_audio audio;
  VLM_RETURN_IF_ERROR(vlm_audio_decode_file(path, &options, &audio));
  float *grown = realloc(*samples, (size_t)(*count + audio.count + 1) * sizeof(float));
  if (!grown) {
    vlm_audio_release(&audio);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  memcpy(grown + *count, audio.samples, (size_t)audio.count * sizeof(float));
  *samples = grown;
  *count += audio.count;
  vlm_audio_release(&audio);
  return VLM_OK;
}

/* The clip the manifest's audio[0] names, through the feature extractor. */
static vlm_status process_clip(const vlm_compare_context *context, vlm_media_item *item) {
  const vlm_json_value *entry = vlm_json_array_get(vlm_json_object_get(context->golden->manifest.root, "audio"), 0);
  if (!entry) return VLM_ERROR(DATA_LOSS, "the golden manifest lists no \"audio\"");
  if (!context->model) return VLM_ERROR(FAILED_PRECONDITION, "%s does not open", context->model_directory);
  char *directory = fixture_audio_directory(context);
  if (!directory) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_status status = vlm_path_exists(directory) ? VLM_OK
                                                 : VLM_ERROR(NOT_FOUND, "fixture audio is missing (%s not found; set "
                                                             "VLM_FIXTURES_DIR to ../shared/fixtures)", directory);
  size_t parts = entry->type == VLM_JSON_ARRAY ? entry->as.array.count : 1;
  float *samples = NULL;
  int64_t count = 0;
  for (size_t i = 0; !status && i < parts; i++) {
    const char *name = vlm_json_get_string(entry->type == VLM_JSON_ARRAY ? vlm_json_array_get(entry, i) : entry);
    if (!name || strchr(name, '/')) {
      status = VLM_ERROR(DATA_LOSS, "audio entries must be plain file names");
      break;
    }
    char *path = vlm_path_join(directory, name);
    status = path ? append_samples(context, path, &samples, &count) : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    free(path);
  }
  int rate = 0;
  if (!status) status = vlm_model_audio_sample_rate(context->model, &rate);
  if (!status) {
    vlm_audio audio = {.samples = samples, .count = count, .sample_rate = rate, .source_sample_rate = rate,
                       .source_channels = 1, .source_frames = count};
    status = vlm_model_audio_item(context->model, &audio, NULL, item);
  }
  free(samples);
  free(directory);
  return status;
}

vlm_status vlm_stage_audio_processor_tensor(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                            vlm_stage_result *result) {
  const char *dot = strchr(stage->name, '.');
  const char *name = dot ? dot + 1 : stage->name;
  vlm_media_item item = {0};
  VLM_RETURN_IF_ERROR(process_clip(context, &item));
  const vlm_named_tensor *found = vlm_media_item_tensor(&item, name);
  int64_t count = found ? (int64_t)(vlm_named_tensor_bytes(found) / vlm_dtype_size(found->dtype)) : 0;
  double *values = found ? malloc((size_t)(count ? count : 1) * sizeof(double)) : NULL;
  vlm_status status = !found    ? VLM_ERROR(NOT_FOUND, "the feature extractor returns no %s", name)
                      : !values ? VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory")
                                : VLM_OK;
  for (int64_t i = 0; !status && i < count; i++)
    values[i] = found->dtype == VLM_DTYPE_I32 ? (double)((const int32_t *)found->data)[i]
                                              : (double)((const float *)found->data)[i];
  if (!status) status = vlm_compare_with_golden_tensor(context, stage, values, count, result);
  if (!status && result->outcome == VLM_STAGE_MATCH && !result->detail[0])
    snprintf(result->detail, sizeof(result->detail), "%s, %.2f s of audio", item.processor ? item.processor : "?",
             item.source_seconds);
  free(values);
  vlm_media_item_release(&item);
  return status;
}

/* ---- Encoder stages ------------------------------------------------------ */

typedef struct audio_capture {
  vlm_cpu_encoder *encoder;
  const char *stage;
  int64_t keep_rows; /* of the output node: the item's tokens */
  double *values;
  int64_t count;
} audio_capture;

static void capture(void *context, const vlm_node *node, const float *values) {
  audio_capture *c = context;
  const vlm_encoder_nodes *nodes = vlm_cpu_encoder_last_nodes(c->encoder);
  for (int i = 0; i < nodes->stage_count && !c->values; i++) {
    if (strcmp(nodes->stages[i].stage, c->stage) != 0) continue;
    if (strcmp(node->name, vlm_cpu_encoder_node_name(c->encoder, nodes->stages[i].node)) != 0) continue;
    int64_t count = 1;
    for (int d = 0; d < node->rank; d++) count *= node->shape[d];
    if (nodes->stages[i].node == nodes->output && node->rank == 2) count = c->keep_rows * node->shape[1];
    c->values = malloc((size_t)(count ? count : 1) * sizeof(double));
    for (int64_t k = 0; c->values && k < count; k++) c->values[k] = values[k];
    c->count = c->values ? count : 0;
  }
}

/* Encodes every item of `kind` on the cpu backend into features [their
 * tokens, width] (in item order), capturing `stage` when given. */
static vlm_status encode_kind(const vlm_compare_context *context, vlm_thread_pool *pool, vlm_media_item *items,
                              int item_count, vlm_media_kind kind, audio_capture *capture_into, float **out_features,
                              int64_t *out_rows) {
  *out_features = NULL;
  *out_rows = 0;
  vlm_cpu_encoder *encoder = NULL;
  vlm_cpu_encoder_options options = {.pool = pool};
  int64_t rows = 0;
  for (int i = 0; i < item_count; i++) rows += items[i].kind == kind ? items[i].token_count : 0;
  if (!rows) return VLM_OK;
  VLM_RETURN_IF_ERROR(vlm_cpu_encoder_open(context->model, kind, &options, &encoder));
  int64_t width = vlm_cpu_encoder_output_width(encoder);
  float *features = malloc((size_t)(rows * width) * sizeof(float));
  vlm_status status = features ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (capture_into) {
    capture_into->encoder = encoder;
    vlm_encoder_trace trace = {.node_observer = capture, .node_context = capture_into};
    vlm_cpu_encoder_set_trace(encoder, &trace);
  }
  int64_t offset = 0;
  for (int i = 0; !status && i < item_count; i++) {
    if (items[i].kind != kind) continue;
    if (capture_into) capture_into->keep_rows = items[i].token_count;
    status = vlm_cpu_encoder_encode(encoder, &items[i], features + offset * width);
    offset += items[i].token_count;
  }
  vlm_cpu_encoder_release(encoder);
  if (status) {
    free(features);
    return status;
  }
  *out_features = features;
  *out_rows = rows;
  return VLM_OK;
}

static vlm_status compare_encoder_stage(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                        vlm_stage_result *result) {
  vlm_media_item *items = NULL;
  int item_count = 0;
  VLM_RETURN_IF_ERROR(vlm_golden_media_items(context, &items, &item_count));
  vlm_thread_pool *pool = NULL;
  vlm_status status = vlm_thread_pool_create(context->thread_count, context->allocator, &pool);
  /* Each projector stage names its mode whatever media the case holds:
   * audio_projector the speech one (the clip in a request without an
   * image), audio_projector_vision_speech the one of a request with an
   * image -- so an image + speech case, whose items say "image present",
   * records (and checks) both. */
  bool vision = strcmp(stage->name, "audio_projector_vision_speech") == 0;
  for (int i = 0; i < item_count; i++) {
    if (vision) items[i].request_kinds |= 1u << VLM_MEDIA_IMAGE;
    else items[i].request_kinds &= ~(1u << VLM_MEDIA_IMAGE);
  }
  audio_capture captured = {.stage = vision ? "audio_projector" : stage->name};
  float *features = NULL;
  int64_t rows = 0;
  if (!status) status = encode_kind(context, pool, items, item_count, VLM_MEDIA_AUDIO, &captured, &features, &rows);
  if (!status && !rows) status = VLM_ERROR(NOT_FOUND, "the case has no audio");
  if (!status && !captured.values) status = VLM_ERROR(NOT_FOUND, "the audio encoder graph has no '%s' stage", stage->name);
  if (!status) status = vlm_compare_with_golden_tensor(context, stage, captured.values, captured.count, result);
  free(captured.values);
  free(features);
  vlm_thread_pool_release(pool);
  vlm_golden_media_items_release(items, item_count);
  return status;
}

vlm_status vlm_stage_audio_encoder(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                   vlm_stage_result *result) {
  return compare_encoder_stage(context, stage, result);
}

/* ---- Merged embeddings --------------------------------------------------- */

typedef struct merged_capture {
  const char *name;
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

static int64_t kind_token(const vlm_model *model, vlm_media_kind kind) {
  const vlm_family *family = model->family;
  if (kind == VLM_MEDIA_AUDIO) return family->audio->placeholder_token(&model->config);
  return family->image->feature_token ? family->image->feature_token(&model->config)
                                      : family->image->placeholder_token(&model->config);
}

/* Places each kind's feature rows at its token's rows, in order. */
static vlm_status place_features(const vlm_model *model, const int32_t *ids, int64_t count, vlm_media_kind kind,
                                 const float *rows, int64_t row_count, float *features, int32_t *mask) {
  if (!row_count) return VLM_OK;
  int64_t token = kind_token(model, kind), width = model->config.text.hidden_size, next = 0;
  for (int64_t r = 0; r < count; r++) {
    if (ids[r] != token) continue;
    if (next == row_count)
      return VLM_ERROR(INVALID_ARGUMENT, "the prompt has more %s tokens than the %lld feature rows",
                       vlm_media_kind_name(kind), (long long)row_count);
    mask[r] = 1;
    memcpy(features + r * width, rows + (next++) * width, (size_t)width * sizeof(float));
  }
  if (next != row_count)
    return VLM_ERROR(INVALID_ARGUMENT, "%lld %s tokens for %lld feature rows", (long long)next,
                     vlm_media_kind_name(kind), (long long)row_count);
  return VLM_OK;
}

static vlm_status merged_audio_embeddings(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                          vlm_stage_result *result) {
  const vlm_model *model = context->model;
  int32_t *ids = NULL;
  int64_t count = 0;
  vlm_media_item *items = NULL;
  int item_count = 0;
  vlm_thread_pool *pool = NULL;
  float *image_rows = NULL, *audio_rows = NULL, *features = NULL, *logits = NULL;
  int32_t *mask = NULL;
  int64_t image_count = 0, audio_count = 0, width = model->config.text.hidden_size;
  vlm_text_model *text = NULL;
  merged_capture merged = {0};
  vlm_status status = vlm_golden_token_ids(context->golden, &ids, &count);
  if (!status) status = vlm_golden_media_items(context, &items, &item_count);
  if (!status) status = vlm_thread_pool_create(context->thread_count, context->allocator, &pool);
  if (!status && vlm_model_feature_width(model) != width)
    status = VLM_ERROR(UNIMPLEMENTED, "encoder rows wider than the hidden size (layer features) with audio");
  if (!status) status = encode_kind(context, pool, items, item_count, VLM_MEDIA_IMAGE, NULL, &image_rows, &image_count);
  if (!status) status = encode_kind(context, pool, items, item_count, VLM_MEDIA_AUDIO, NULL, &audio_rows, &audio_count);
  if (!status) {
    features = calloc((size_t)(count * width), sizeof(float));
    mask = calloc((size_t)count, sizeof(int32_t));
    logits = malloc((size_t)model->config.text.vocab_size * sizeof(float));
    if (!features || !mask || !logits) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  if (!status) status = place_features(model, ids, count, VLM_MEDIA_IMAGE, image_rows, image_count, features, mask);
  if (!status) status = place_features(model, ids, count, VLM_MEDIA_AUDIO, audio_rows, audio_count, features, mask);
  vlm_text_model_options options = {.slot_count = 1, .capacity = count, .prefill_chunk = count, .pool = pool,
                                    .allocator = context->allocator};
  if (!status) status = vlm_text_model_open(context->model, &options, &text);
  char name[VLM_GRAPH_NAME_LENGTH];
  vlm_decoder_description description;
  vlm_family_describe_decoder(model->family, &model->config, &description);
  snprintf(name, sizeof(name), "%sembed_tokens_merged", description.prefix);
  merged.name = name;
  if (!status) {
    vlm_text_model_set_observer(text, capture_merged, &merged);
    vlm_prefill_input input = {.row_count = count, .tokens = ids, .features = features, .feature_mask = mask,
                               .position_axes = 1};
    vlm_prefill_logits out = {.last_row = logits};
    status = vlm_text_model_embeddings_prefill(text, 0, &input, &out);
    if (!status && !merged.values) status = VLM_ERROR(INTERNAL, "the decoder graph has no node %s", name);
  }
  if (!status) status = vlm_compare_with_golden_tensor(context, stage, merged.values, merged.count, result);
  if (!status && !result->detail[0])
    snprintf(result->detail, sizeof(result->detail), "%lld image and %lld audio rows merged by the decoder graph",
             (long long)image_count, (long long)audio_count);
  free(merged.values);
  vlm_text_model_release(text);
  free(features);
  free(mask);
  free(logits);
  free(image_rows);
  free(audio_rows);
  free(ids);
  vlm_thread_pool_release(pool);
  vlm_golden_media_items_release(items, item_count);
  return status;
}

vlm_status vlm_stage_media_input_embeddings(const vlm_compare_context *context, const vlm_golden_stage *stage,
                                            vlm_stage_result *result) {
  if (vlm_golden_audio_count(context->golden) == 0) return vlm_stage_merged_input_embeddings(context, stage, result);
  if (!context->model) return VLM_ERROR(FAILED_PRECONDITION, "%s does not open", context->model_directory);
  return merged_audio_embeddings(context, stage, result);
}
