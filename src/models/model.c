/* See include/vlm/model.h and src/models/model.h. */
#include "models/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "core/status.h"
#include "io/hub.h"
#include "io/json.h"
#include "media/audio_processors.h"
#include "models/decoder.h"
#include "media/image_processors.h"
#include "media/media_item.h"
#include "vlm/audio.h"

vlm_status vlm_model_config_load_runnable(const char *model_dir, const vlm_allocator *allocator,
                                          vlm_model_config *out) {
  vlm_status status = vlm_model_config_load(model_dir, allocator, out);
  if (vlm_status_code_of(status) != VLM_STATUS_UNIMPLEMENTED) return status;
  /* The config reader refused something: when it is the model_type, say
   * which ones run instead of which configs io can read. */
  char path[4096];
  snprintf(path, sizeof(path), "%s/config.json", model_dir);
  vlm_json_document document;
  vlm_status read = vlm_json_parse_file(path, 1 << 24, NULL, &document);
  const char *model_type = read ? NULL : vlm_json_get_string(vlm_json_object_get(document.root, "model_type"));
  if (model_type && !vlm_family_runs(vlm_family_find(model_type)) && strlen(model_type) < 128) {
    vlm_status_free(status);
    status = VLM_ERROR(UNIMPLEMENTED, "%s: model_type \"%s\" is not supported (supported: %s)", path, model_type,
                       vlm_family_supported_list());
  }
  if (!read) vlm_json_document_release(&document);
  vlm_status_free(read);
  return status;
}

static vlm_status open_parts(vlm_model *model, const char *model_dir, const vlm_model_options *model_options) {
  VLM_RETURN_IF_ERROR(vlm_model_config_load_runnable(model_dir, model->allocator, &model->config));
  if (model_options && model_options->dtype) {
    vlm_dtype dtype = vlm_dtype_from_torch_name(model_options->dtype);
    if (dtype != VLM_DTYPE_F32 && dtype != VLM_DTYPE_BF16 && dtype != VLM_DTYPE_F16)
      return VLM_ERROR(INVALID_ARGUMENT, "dtype '%s' is not one of float32, bfloat16, float16",
                       model_options->dtype);
    model->config.dtype = dtype;
  }
  VLM_RETURN_IF_ERROR(vlm_quantization_config_parse(model->config.root_section, "config.json", &model->hub_quantization));
  const char *quantize = model_options ? model_options->quantize : NULL;
  if (quantize && strcmp(quantize, "q8") == 0) model->quantize = VLM_WEIGHT_QUANTIZATION_Q8;
  else if (quantize && strcmp(quantize, "q4") == 0) model->quantize = VLM_WEIGHT_QUANTIZATION_Q4;
  else if (quantize && strcmp(quantize, "none") != 0)
    return VLM_ERROR(INVALID_ARGUMENT, "quantize '%s' is not one of q8, q4, none", quantize);
  if (model->quantize && model->hub_quantization.method)
    return VLM_ERROR(INVALID_ARGUMENT, "%s: the checkpoint is quantized already (config.json's quantization_config); "
                     "it cannot be quantized again to %s", model_dir, quantize);
  VLM_RETURN_IF_ERROR(vlm_generation_config_load(model_dir, model->allocator, &model->generation));
  const char *processor_kwargs = model_options ? model_options->processor_kwargs : NULL;
  vlm_status status = vlm_processor_config_load_with(model_dir, processor_kwargs, model->allocator, &model->processor);
  if (vlm_status_code_of(status) == VLM_STATUS_NOT_FOUND && !processor_kwargs) {
    vlm_status_free(status); /* text-only models have none */
    status = VLM_OK;
  } else {
    model->has_processor = status == VLM_OK;
  }
  VLM_RETURN_IF_ERROR(status);
  status = vlm_feature_extractor_config_load(model_dir, model->allocator, &model->feature_extractor);
  if (vlm_status_code_of(status) == VLM_STATUS_NOT_FOUND) {
    vlm_status_free(status); /* models without audio have none */
    status = VLM_OK;
  } else {
    model->has_feature_extractor = status == VLM_OK;
  }
  VLM_RETURN_IF_ERROR(status);
  model->family = vlm_family_find(model->config.model_type);
  vlm_manifest_init(&model->manifest);
  vlm_checkpoint_options options = {.allocator = model->allocator};
  if (model->family) {
    VLM_RETURN_IF_ERROR(model->family->declare_tensors(&model->config, &model->manifest));
    if (model->manifest.out_of_memory) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory declaring tensors");
    options.renames = model->family->renames;
    options.rename_count = model->family->rename_count;
  }
  vlm_checkpoint_extra_file adapter_files[VLM_DECODER_MAX_ADAPTERS];
  char adapter_paths[VLM_DECODER_MAX_ADAPTERS][256];
  VLM_RETURN_IF_ERROR(vlm_model_find_adapters(model, model_dir, adapter_files, adapter_paths,
                                              &options.extra_file_count));
  options.extra_files = adapter_files;
  VLM_RETURN_IF_ERROR(vlm_checkpoint_open(model_dir, &options, &model->weights));
  return vlm_model_count_adapter_modules(model);
}

vlm_status vlm_model_open(const char *model_or_id, const vlm_model_options *options, vlm_model **out_model) {
  *out_model = NULL;
  if (!model_or_id) return VLM_ERROR(INVALID_ARGUMENT, "no model directory given");
  /* A directory, checked for what vlm cannot run, or a model id from the
   * local Hugging Face cache (io/hub.h; fetching is the command's). */
  char resolved[VLM_HUB_PATH_MAX];
  VLM_RETURN_IF_ERROR(vlm_hub_model_dir(model_or_id, VLM_HUB_NEEDS_WEIGHTS, resolved, sizeof(resolved)));
  const char *model_dir = resolved;
  vlm_model *model = calloc(1, sizeof(*model));
  if (!model) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  atomic_init(&model->references, 1);
  model->allocator = options ? options->allocator : NULL;
  model->directory = strdup(model_dir);
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  vlm_status status =
      model->directory ? open_parts(model, model_dir, options) : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (status) {
    vlm_model_release(model);
    return status;
  }
  clock_gettime(CLOCK_MONOTONIC, &end);
  /* The weights are mapped, not read: the pages come in as each part of
   * the model first runs (the text decoder's when it is packed). */
  VLM_LOG_INFOF("model %s: %s, %zu tensors in %zu file(s), %.1f MiB of weights mapped, in %.2f s", model_dir,
                model->config.model_type ? model->config.model_type : "?", vlm_checkpoint_tensor_count(model->weights),
                vlm_checkpoint_shard_count(model->weights),
                (double)vlm_checkpoint_total_bytes(model->weights) / 1048576.0,
                (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9);
  *out_model = model;
  return VLM_OK;
}

vlm_model *vlm_model_retain(vlm_model *model) {
  if (model) atomic_fetch_add(&model->references, 1);
  return model;
}

void vlm_model_release(vlm_model *model) {
  if (!model || atomic_fetch_sub(&model->references, 1) != 1) return;
  vlm_checkpoint_release(model->weights);
  vlm_manifest_release(&model->manifest);
  vlm_processor_config_release(&model->processor);
  vlm_feature_extractor_config_release(&model->feature_extractor);
  vlm_generation_config_release(&model->generation);
  vlm_model_config_release(&model->config);
  free(model->directory);
  free(model);
}

const char *vlm_model_directory(const vlm_model *model) { return model->directory; }
bool vlm_model_is_quantized(const vlm_model *model) {
  return model->quantize != VLM_WEIGHT_QUANTIZATION_NONE || model->hub_quantization.method != VLM_QUANT_METHOD_NONE;
}
const char *vlm_model_type(const vlm_model *model) { return model->config.model_type; }

vlm_status vlm_model_require_family(const vlm_model *model, const char *what) {
  if (model->family) return VLM_OK;
  return VLM_ERROR(UNIMPLEMENTED, "%s: %s of model_type '%s' is not supported (supported: %s)", model->directory,
                   what, model->config.model_type, vlm_family_supported_list());
}

vlm_status vlm_model_image_item(const vlm_model *model, const vlm_image *image, const vlm_allocator *allocator,
                                vlm_media_item *out_item) {
  return vlm_model_image_item_with(model, image, VLM_IMAGE_BACKEND_TORCHVISION, allocator, out_item);
}

vlm_status vlm_model_image_item_with(const vlm_model *model, const vlm_image *image, int backend,
                                     const vlm_allocator *allocator, vlm_media_item *out_item) {
  memset(out_item, 0, sizeof(*out_item));
  if (!model->family || !model->family->image || !model->has_processor)
    return VLM_ERROR(UNIMPLEMENTED, "%s: model_type '%s' has no image path with a processor config",
                     model->directory, model->config.model_type);
  const vlm_image_processor_class *processor = NULL;
  vlm_status status = vlm_image_processor_find(&model->processor, &processor);
  if (status) return vlm_status_annotate(status, "%s", model->directory);
  out_item->kind = VLM_MEDIA_IMAGE;
  out_item->processor = processor->name;
  out_item->source_width = image->width;
  out_item->source_height = image->height;
  status = processor->preprocess(&model->processor, image, (vlm_image_backend)backend, allocator, out_item);
  if (!status)
    status = model->family->image->token_count(&model->config, &model->processor, out_item->grid,
                                               &out_item->token_count);
  if (status) vlm_media_item_release(out_item);
  return status;
}

vlm_status vlm_model_image_tokens(const vlm_model *model, int64_t width, int64_t height, int64_t *out_tokens) {
  *out_tokens = 0;
  if (!model->family || !model->family->image || !model->has_processor)
    return VLM_ERROR(UNIMPLEMENTED, "%s: model_type '%s' has no image path with a processor config",
                     model->directory, model->config.model_type);
  if (width <= 0 || height <= 0)
    return VLM_ERROR(INVALID_ARGUMENT, "an image of %lldx%lld pixels", (long long)width, (long long)height);
  const vlm_image_processor_class *processor = NULL;
  VLM_RETURN_IF_ERROR(vlm_status_annotate(vlm_image_processor_find(&model->processor, &processor), "%s",
                                          model->directory));
  int64_t grid[3] = {0, 0, 0};
  VLM_RETURN_IF_ERROR(processor->grid(&model->processor, width, height, grid));
  return model->family->image->token_count(&model->config, &model->processor, grid, out_tokens);
}

vlm_status vlm_model_audio_sample_rate(const vlm_model *model, int *out_rate) {
  *out_rate = 0;
  if (!model->family || !model->family->audio)
    return VLM_ERROR(UNIMPLEMENTED, "model_type '%s' takes no audio input (vlm has no audio encoder for it)",
                     model->config.model_type);
  if (!model->has_feature_extractor)
    return VLM_ERROR(UNIMPLEMENTED, "%s has no feature extractor config (preprocessor_config.json or "
                     "processor_config.json's audio_processor): its audio cannot be processed", model->directory);
  const vlm_audio_processor_class *processor = NULL;
  VLM_RETURN_IF_ERROR(vlm_status_annotate(vlm_audio_processor_find(&model->feature_extractor, &processor), "%s",
                                          model->directory));
  *out_rate = (int)model->feature_extractor.sampling_rate;
  return VLM_OK;
}

vlm_status vlm_model_audio_item(const vlm_model *model, const vlm_audio *audio, const vlm_allocator *allocator,
                                vlm_media_item *out_item) {
  memset(out_item, 0, sizeof(*out_item));
  int rate = 0;
  VLM_RETURN_IF_ERROR(vlm_model_audio_sample_rate(model, &rate));
  if (audio->sample_rate != rate)
    return VLM_ERROR(INVALID_ARGUMENT, "the audio is at %d Hz; %s takes %d Hz", audio->sample_rate,
                     model->feature_extractor.feature_extractor_type, rate);
  const vlm_audio_processor_class *processor = NULL;
  VLM_RETURN_IF_ERROR(vlm_audio_processor_find(&model->feature_extractor, &processor));
  out_item->kind = VLM_MEDIA_AUDIO;
  out_item->processor = processor->name;
  out_item->source_sample_rate = audio->source_sample_rate;
  out_item->source_channels = audio->source_channels;
  out_item->source_seconds = (double)audio->source_frames / audio->source_sample_rate;
  vlm_status status = processor->preprocess(&model->feature_extractor, audio->samples, audio->count, allocator, out_item);
  if (!status)
    status = model->family->audio->token_count(&model->config, &model->feature_extractor, out_item,
                                               &out_item->token_count);
  if (status) vlm_media_item_release(out_item);
  return status;
}

static vlm_status audio_processor(const vlm_model *model, const vlm_audio_processor_class **out) {
  int rate = 0;
  VLM_RETURN_IF_ERROR(vlm_model_audio_sample_rate(model, &rate));
  VLM_RETURN_IF_ERROR(vlm_audio_processor_find(&model->feature_extractor, out));
  if (!(*out)->tokens_for_samples)
    return VLM_ERROR(UNIMPLEMENTED, "%s cannot count a clip's tokens before decoding it", (*out)->name);
  return VLM_OK;
}

vlm_status vlm_model_audio_tokens(const vlm_model *model, int64_t samples, int64_t *out_tokens) {
  *out_tokens = 0;
  const vlm_audio_processor_class *processor = NULL;
  VLM_RETURN_IF_ERROR(audio_processor(model, &processor));
  *out_tokens = samples > 0 ? processor->tokens_for_samples(&model->feature_extractor, samples) : 0;
  return VLM_OK;
}

/* tokens_for_samples is non-decreasing: the last count within max_tokens
 * by doubling, then bisection (some 80 calls of integer arithmetic). */
vlm_status vlm_model_audio_max_samples(const vlm_model *model, int64_t max_tokens, int64_t *out_samples) {
  *out_samples = 0;
  const vlm_audio_processor_class *processor = NULL;
  VLM_RETURN_IF_ERROR(audio_processor(model, &processor));
  const vlm_feature_extractor_config *config = &model->feature_extractor;
  const int64_t ceiling = INT64_C(1) << 50;
  int64_t low = 0, high = 1; /* tokens(low) <= max_tokens */
  while (high < ceiling && processor->tokens_for_samples(config, high) <= max_tokens) low = high, high *= 2;
  if (high >= ceiling) {
    *out_samples = ceiling;
    return VLM_OK;
  }
  while (high - low > 1) {
    int64_t middle = low + (high - low) / 2;
    if (processor->tokens_for_samples(config, middle) <= max_tokens) low = middle;
    else high = middle;
  }
  *out_samples = low;
  return VLM_OK;
}

int64_t vlm_model_feature_width(const vlm_model *model) {
  if (!model->family || !model->family->describe_decoder) return model->config.text.hidden_size;
  vlm_decoder_description description;
  memset(&description, 0, sizeof(description));
  vlm_family_describe_decoder(model->family, &model->config, &description);
  return vlm_decoder_feature_width(&description);
}
