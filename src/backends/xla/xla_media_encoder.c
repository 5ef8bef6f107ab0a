/* The xla backend behind the engine's media-encoder table
 * (src/models/modules.h): a family's encoder graph per encoder-row bucket
 * (stablehlo_encoder.h), each bucket's artifact found or compiled on first
 * use and run through the graph runtime with the inputs the family
 * prepares on the host, exactly as for the cpu backend. An audio path maps
 * a clip's length to its bucket (vlm_family_audio.encoder_bucket; without
 * one, each length is its own), each bucket's function compiled on first
 * use (cached on disk by its key), the most recent
 * VLM_XLA_MAX_ENCODER_BUCKETS kept open. */
#include <stdlib.h>
#include <string.h>

#include "backends/xla/stablehlo_encoder.h"
#include "backends/xla/xla_graph_runtime.h"
#include "backends/xla/xla_layout.h"
#include "core/log.h"
#include "core/status.h"
#include "core/tensor_list.h"
#include "models/modules.h"
#include "vlm/xla.h"

typedef struct encoder_bucket {
  int64_t rows;
  vlm_xla_encoder_function function;
  bool built;
  vlm_xla_graph_runtime *runtime; /* NULL until the first item that needs it */
  vlm_module_report report;       /* filled when it opens */
} encoder_bucket;

typedef struct xla_encoder {
  vlm_model *model;
  vlm_media_kind kind;
  bool lazy;                      /* audio: buckets made as lengths come, not listed */
  int next_evicted;               /* lazy: the bucket replaced next once all are used */
  vlm_xla_target target;
  char cache_dir[VLM_XLA_PATH_LENGTH];
  bool has_cache_dir, compile_if_missing;
  FILE *progress;
  int thread_count;               /* local-task workers (xla_thread_count) */
  /* The tower's weights laid out once, for every bucket (made by the first
   * bucket opened; released after them). */
  vlm_xla_layout *layout;
  bool fixed;                     /* one bucket of the tower's fixed rows */
  int bucket_count;
  encoder_bucket buckets[VLM_XLA_MAX_ENCODER_BUCKETS];
  int64_t output_width;
} xla_encoder;

static int64_t xla_output_width(void *self) { return ((xla_encoder *)self)->output_width; }

static vlm_status open_bucket(xla_encoder *encoder, encoder_bucket *bucket) {
  if (bucket->runtime) return VLM_OK;
  if (!bucket->built) {
    VLM_RETURN_IF_ERROR(
        vlm_xla_encoder_function_build_kind(encoder->model, encoder->kind, bucket->rows, &bucket->function));
    bucket->built = true;
  }
  char artifact[VLM_XLA_PATH_LENGTH];
  vlm_xla_key key;
  bool compiled = false;
  double started = xla_seconds_now();
  VLM_RETURN_IF_ERROR(vlm_xla_encoder_prepare_artifact(encoder->model, &bucket->function, encoder->target,
                                                       encoder->has_cache_dir ? encoder->cache_dir : NULL,
                                                       encoder->compile_if_missing, encoder->progress, artifact,
                                                       sizeof(artifact), &key, &compiled));
  double prepared = xla_seconds_now();
  if (!encoder->layout) {
    char *module = NULL;
    vlm_xla_key emitted;
    VLM_RETURN_IF_ERROR(vlm_stablehlo_emit_encoder(encoder->model, &bucket->function, &module, &emitted));
    vlm_status status = vlm_xla_layout_create(encoder->model->weights, module, &encoder->layout);
    free(module);
    VLM_RETURN_IF_ERROR(status);
  }
  vlm_xla_runtime_options options = {.target = encoder->target, .thread_count = encoder->thread_count,
                                     .layout = encoder->layout};
  VLM_RETURN_IF_ERROR(vlm_xla_graph_runtime_open(&bucket->function.function, 1, encoder->model->weights, &key,
                                                 artifact, &options, &bucket->runtime));
  vlm_module_report *report = &bucket->report;
  snprintf(report->name, sizeof(report->name), "media_encoder[rows=%lld]", (long long)bucket->rows);
  report->cached = !compiled;
  report->weight_bytes = encoder->layout->bytes; /* shared by every bucket */
  report->compile_seconds = compiled ? prepared - started : 0;
  report->load_seconds = xla_seconds_now() - prepared;
  VLM_LOG_INFOF("xla: %s %s in %.1f s, loaded in %.2f s", report->name, compiled ? "compiled" : "from the cache",
                compiled ? report->compile_seconds : prepared - started, report->load_seconds);
  return VLM_OK;
}

static int xla_module_reports(void *self, vlm_module_report *out, int max) {
  xla_encoder *encoder = self;
  int count = 0;
  for (int i = 0; i < encoder->bucket_count; i++)
    if (encoder->buckets[i].runtime) {
      if (count < max) out[count] = encoder->buckets[i].report;
      count++;
    }
  return count;
}

static void release_bucket(encoder_bucket *bucket) {
  vlm_xla_graph_runtime_release(bucket->runtime);
  if (bucket->built) vlm_xla_encoder_function_release(&bucket->function);
  memset(bucket, 0, sizeof(*bucket));
}

/* lazy: the bucket of these rows, or a new one (replacing the oldest). */
static encoder_bucket *lazy_bucket(xla_encoder *encoder, int64_t rows) {
  for (int i = 0; i < encoder->bucket_count; i++)
    if (encoder->buckets[i].rows == rows) return &encoder->buckets[i];
  encoder_bucket *bucket;
  if (encoder->bucket_count < VLM_XLA_MAX_ENCODER_BUCKETS) {
    bucket = &encoder->buckets[encoder->bucket_count++];
  } else {
    bucket = &encoder->buckets[encoder->next_evicted];
    encoder->next_evicted = (encoder->next_evicted + 1) % VLM_XLA_MAX_ENCODER_BUCKETS;
    release_bucket(bucket);
  }
  bucket->rows = rows;
  return bucket;
}

static vlm_status choose_bucket(xla_encoder *encoder, int64_t rows, encoder_bucket **out) {
  if (encoder->lazy) {
    const vlm_family_audio *audio = encoder->model->family->audio;
    int64_t bucket = rows;
    if (audio->encoder_bucket) VLM_RETURN_IF_ERROR(audio->encoder_bucket(&encoder->model->config, rows, &bucket));
    if (bucket < rows)
      return VLM_ERROR(INTERNAL, "xla: the audio bucket of %lld rows is %lld", (long long)rows, (long long)bucket);
    *out = lazy_bucket(encoder, bucket);
    return VLM_OK;
  }
  for (int i = 0; i < encoder->bucket_count; i++)
    if (encoder->buckets[i].rows >= rows) {
      *out = &encoder->buckets[i];
      return VLM_OK;
    }
  return VLM_ERROR(OUT_OF_RANGE, "xla: an image of %lld encoder rows exceeds the largest compiled bucket (%lld)",
                   (long long)rows, (long long)encoder->buckets[encoder->bucket_count - 1].rows);
}

static vlm_status xla_encode(void *self, const vlm_media_item *item, float *out_features) {
  xla_encoder *encoder = self;
  const vlm_family *family = encoder->model->family;
  if (!item || item->kind != encoder->kind)
    return VLM_ERROR(INVALID_ARGUMENT, "xla: the %s encoder was given another kind of item",
                     vlm_media_kind_name(encoder->kind));
  bool audio = encoder->kind == VLM_MEDIA_AUDIO;
  int64_t rows = 0;
  VLM_RETURN_IF_ERROR(audio ? family->audio->encoder_rows(&encoder->model->config, item, &rows)
                            : family->image->encoder_rows(&encoder->model->config, item, &rows));
  encoder_bucket *bucket = NULL;
  VLM_RETURN_IF_ERROR(choose_bucket(encoder, rows, &bucket));
  VLM_RETURN_IF_ERROR(open_bucket(encoder, bucket));
  const vlm_node *output = &bucket->function.graph.nodes[bucket->function.nodes.output];
  if (output->shape[0] < item->token_count || output->shape[1] != encoder->output_width)
    return VLM_ERROR(INTERNAL, "xla: the encoder's %lld output rows cannot hold the item's %lld tokens",
                     (long long)output->shape[0], (long long)item->token_count);
  vlm_tensor_list inputs = {0};
  vlm_status status = audio ? family->audio->encoder_inputs(&encoder->model->config, item, bucket->rows, &inputs)
                            : family->image->encoder_inputs(&encoder->model->config, item, bucket->rows, &inputs);
  float *all_rows = NULL;
  if (!status) {
    all_rows = malloc((size_t)(output->shape[0] * output->shape[1]) * sizeof(float));
    if (!all_rows) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  float *outputs[VLM_XLA_GRAPH_MAX_OUTPUTS] = {all_rows}; /* the stage outputs are not wanted here */
  if (!status) status = vlm_xla_graph_call(bucket->runtime, 0, &inputs, outputs);
  if (!status) memcpy(out_features, all_rows, (size_t)(item->token_count * encoder->output_width) * sizeof(float));
  free(all_rows);
  vlm_tensor_list_release(&inputs);
  return status;
}

static void xla_release(void *self) {
  xla_encoder *encoder = self;
  if (!encoder) return;
  for (int i = 0; i < encoder->bucket_count; i++) release_bucket(&encoder->buckets[i]);
  vlm_xla_layout_release(encoder->layout); /* after every bucket's session */
  vlm_model_release(encoder->model);
  free(encoder);
}

static const vlm_media_encoder_operations xla_operations = {
    .backend = "xla", .kind = VLM_MEDIA_IMAGE, .output_width = xla_output_width, .encode = xla_encode,
    .module_reports = xla_module_reports, .release = xla_release};
static const vlm_media_encoder_operations xla_audio_operations = {
    .backend = "xla", .kind = VLM_MEDIA_AUDIO, .output_width = xla_output_width, .encode = xla_encode,
    .module_reports = xla_module_reports, .release = xla_release};

static vlm_status new_encoder(vlm_model *model, vlm_media_kind kind, const vlm_xla_decoder_options *options,
                              xla_encoder **out_encoder, vlm_media_encoder **out_handle) {
  vlm_xla_target target = VLM_XLA_TARGET_LLVM_CPU;
  if (options->target) VLM_RETURN_IF_ERROR(vlm_xla_target_from_name(options->target, &target));
  xla_encoder *encoder = calloc(1, sizeof(*encoder));
  vlm_media_encoder *handle = calloc(1, sizeof(*handle));
  if (!encoder || !handle) {
    free(encoder);
    free(handle);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  encoder->model = vlm_model_retain(model);
  encoder->kind = kind;
  encoder->target = target;
  encoder->compile_if_missing = options->compile_if_missing;
  encoder->progress = options->progress;
  encoder->thread_count = xla_thread_count(options->thread_count);
  encoder->output_width = vlm_model_feature_width(model);
  if (options->cache_dir) {
    snprintf(encoder->cache_dir, sizeof(encoder->cache_dir), "%s", options->cache_dir);
    encoder->has_cache_dir = true;
  }
  *out_encoder = encoder;
  *out_handle = handle;
  return VLM_OK;
}

vlm_status vlm_xla_open_audio_encoder(vlm_model *model, const vlm_xla_decoder_options *options,
                                      vlm_media_encoder **out_encoder) {
  *out_encoder = NULL;
  vlm_xla_decoder_options defaults = {0};
  if (!options) options = &defaults;
  VLM_RETURN_IF_ERROR(vlm_model_require_family(model, "the audio encoder"));
  if (!model->family->audio)
    return VLM_ERROR(UNIMPLEMENTED, "%s: model_type '%s' has no audio path in vlm", model->directory,
                     model->config.model_type);
  xla_encoder *encoder = NULL;
  vlm_media_encoder *handle = NULL;
  VLM_RETURN_IF_ERROR(new_encoder(model, VLM_MEDIA_AUDIO, options, &encoder, &handle));
  encoder->lazy = true;
  /* The emitter refuses what it cannot lower before any request: the
   * smallest bucket's graph has every op a longer one has. */
  int64_t rows = 1;
  vlm_status status = VLM_OK;
  if (model->family->audio->encoder_bucket) status = model->family->audio->encoder_bucket(&model->config, 1, &rows);
  vlm_xla_encoder_function function = {0};
  if (!status) status = vlm_xla_encoder_function_build_kind(model, VLM_MEDIA_AUDIO, rows, &function);
  char *module = NULL;
  vlm_xla_key key;
  if (!status) status = vlm_stablehlo_emit_encoder(model, &function, &module, &key);
  free(module);
  vlm_xla_encoder_function_release(&function);
  if (status) {
    xla_release(encoder);
    free(handle);
    return status;
  }
  handle->operations = &xla_audio_operations;
  handle->self = encoder;
  *out_encoder = handle;
  return VLM_OK;
}

vlm_status vlm_xla_open_image_encoder(vlm_model *model, const vlm_xla_decoder_options *options,
                                      vlm_media_encoder **out_encoder) {
  *out_encoder = NULL;
  vlm_xla_decoder_options defaults = {0};
  if (!options) options = &defaults;
  vlm_xla_target target = VLM_XLA_TARGET_LLVM_CPU;
  if (options->target) VLM_RETURN_IF_ERROR(vlm_xla_target_from_name(options->target, &target));
  VLM_RETURN_IF_ERROR(vlm_model_require_family(model, "the image encoder"));
  if (!model->family->image)
    return VLM_ERROR(UNIMPLEMENTED, "%s: model_type '%s' has no image path in vlm", model->directory,
                     model->config.model_type);
  xla_encoder *encoder = calloc(1, sizeof(*encoder));
  vlm_media_encoder *handle = calloc(1, sizeof(*handle));
  if (!encoder || !handle) {
    free(encoder);
    free(handle);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  encoder->model = vlm_model_retain(model);
  encoder->target = target;
  encoder->compile_if_missing = options->compile_if_missing;
  encoder->progress = options->progress;
  encoder->thread_count = xla_thread_count(options->thread_count);
  encoder->output_width = vlm_model_feature_width(model);
  if (options->cache_dir) {
    snprintf(encoder->cache_dir, sizeof(encoder->cache_dir), "%s", options->cache_dir);
    encoder->has_cache_dir = true;
  }
  int64_t rows[VLM_XLA_MAX_ENCODER_BUCKETS], fixed = -1;
  int count = vlm_xla_encoder_buckets(model, rows, VLM_XLA_MAX_ENCODER_BUCKETS, &fixed);
  if (count == 0 && fixed > 0) rows[count++] = fixed;
  encoder->bucket_count = count;
  for (int i = 0; i < count; i++) encoder->buckets[i].rows = rows[i];
  vlm_status status = count ? VLM_OK : VLM_ERROR(UNIMPLEMENTED, "xla: the %s image encoder has no row buckets",
                                                  model->config.model_type);
  /* The smallest bucket now: the emitter refuses what it cannot lower
   * before any request (naming the op), and a fixed tower is ready. */
  if (!status) status = open_bucket(encoder, &encoder->buckets[0]);
  if (status) {
    xla_release(encoder);
    free(handle);
    return status;
  }
  handle->operations = &xla_operations;
  handle->self = encoder;
  *out_encoder = handle;
  return VLM_OK;
}
