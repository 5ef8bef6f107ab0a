/* One request from text to text, for `vlm run`: a client of the serving
 * engine (include/vlm/engine.h) with one slot, so the CLI and the server
 * share one request path -- template, tokenizer, placeholders, admission,
 * prefill, decode, sampling, stop strings -- and give the same tokens. */
#include "vlm/generate.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/status.h"
#include "io/json.h"
#include "models/modules.h"
#include "vlm/engine.h"

struct vlm_generator {
  vlm_engine *engine;
  vlm_audio_limits audio_limits;
};

vlm_status vlm_generator_open(vlm_model *model, const vlm_generator_options *options,
                              vlm_generator **out_generator) {
  *out_generator = NULL;
  vlm_generator_options defaults = {0};
  if (!options) options = &defaults;
  vlm_generator *generator = calloc(1, sizeof(*generator));
  if (!generator) {
    vlm_text_decoder_release(options->text_decoder);
    vlm_media_encoder_release(options->image_encoder);
    vlm_media_encoder_release(options->audio_encoder);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  vlm_engine_options engine_options = {.thread_count = options->thread_count, .slot_count = 1,
                                       .capacity = options->capacity,
                                       .prefill_chunk = options->prefill_chunk,
                                       .allocator = options->allocator,
                                       .text_decoder = options->text_decoder,
                                       .image_encoder = options->image_encoder,
                                       .audio_encoder = options->audio_encoder};
  generator->audio_limits = (vlm_audio_limits){.max_seconds = options->max_audio_seconds};
  vlm_status status = vlm_engine_open(model, &engine_options, &generator->engine);
  if (status) {
    free(generator);
    return status;
  }
  *out_generator = generator;
  return VLM_OK;
}

void vlm_generator_release(vlm_generator *generator) {
  if (!generator) return;
  vlm_engine_release(generator->engine);
  free(generator);
}

vlm_sampling_params vlm_generator_default_sampling(const vlm_generator *generator) {
  return vlm_engine_default_sampling(generator->engine);
}

vlm_status vlm_generator_load_image(vlm_generator *generator, const char *path,
                                    vlm_loaded_image *out_image) {
  return vlm_engine_load_image_file(generator->engine, path, NULL, out_image);
}

vlm_status vlm_generator_image_tokens(vlm_generator *generator, const char *path, int64_t *out_tokens) {
  *out_tokens = 0;
  vlm_engine_image_header header;
  VLM_RETURN_IF_ERROR(vlm_engine_read_image_header_file(generator->engine, path, &header));
  *out_tokens = header.tokens;
  return VLM_OK;
}

vlm_status vlm_generator_load_audio(vlm_generator *generator, const char *path, vlm_loaded_audio *out_audio) {
  return vlm_engine_load_audio_file(generator->engine, path, &generator->audio_limits, NULL, out_audio);
}

/* ---------------------------------------------------------------------- */

/* The request as chat messages in Transformers' format: an optional system
 * message, then the user's, with one image part per image and then one
 * audio part per clip before the text (as the oracle's messages; the
 * template decides where they render -- LLaVA's puts every image before
 * the text). */
static char *build_messages(const vlm_generation_request *request) {
  vlm_string_builder messages = {0};
  vlm_sb_append_literal(&messages, "[");
  if (request->system_prompt) {
    vlm_sb_append_literal(&messages, "{\"role\":\"system\",\"content\":");
    vlm_sb_append_json_string(&messages, request->system_prompt, strlen(request->system_prompt));
    vlm_sb_append_literal(&messages, "},");
  }
  vlm_sb_append_literal(&messages, "{\"role\":\"user\",\"content\":");
  if (request->image_count > 0 || request->audio_count > 0) {
    vlm_sb_append_literal(&messages, "[");
    for (int i = 0; i < request->image_count; i++) vlm_sb_append_literal(&messages, "{\"type\":\"image\"},");
    for (int i = 0; i < request->audio_count; i++) vlm_sb_append_literal(&messages, "{\"type\":\"audio\"},");
    vlm_sb_append_literal(&messages, "{\"type\":\"text\",\"text\":");
    vlm_sb_append_json_string(&messages, request->prompt, strlen(request->prompt));
    vlm_sb_append_literal(&messages, "}]");
  } else {
    vlm_sb_append_json_string(&messages, request->prompt, strlen(request->prompt));
  }
  vlm_sb_append_literal(&messages, "}]");
  return vlm_sb_finish(&messages);
}

/* media_given: the images and clips are loaded (vlm_generate), or only
 * counted (vlm_generator_check). */
static vlm_status check_request(const vlm_generation_request *request, bool media_given) {
  if (!request->prompt) return VLM_ERROR(INVALID_ARGUMENT, "the request has no prompt");
  if (request->image_count < 0 || (request->image_count > 0 && !request->images && !media_given))
    return VLM_ERROR(INVALID_ARGUMENT, "the request names %d image(s) but gives none",
                     request->image_count);
  if (request->audio_count < 0 || (request->audio_count > 0 && !request->audio && !media_given))
    return VLM_ERROR(INVALID_ARGUMENT, "the request names %d audio clip(s) but gives none", request->audio_count);
  return VLM_OK;
}

/* The engine calls back on its scheduler thread; vlm_generate waits. */
typedef struct generation_wait {
  pthread_mutex_t mutex;
  pthread_cond_t finished_signal;
  bool finished;
  const vlm_generation_request *request;
  vlm_generation_result *result;
  vlm_status status;
} generation_wait;

static void record_finish(generation_wait *wait, const vlm_engine_event *event) {
  vlm_generation_result *result = wait->result;
  if (event->status) {
    wait->status = vlm_status_make(vlm_status_code_of(event->status), "%s", vlm_status_message(event->status));
    return;
  }
  result->text = malloc(event->full_text_length + 1);
  result->tokens = malloc((size_t)(event->usage.completion_tokens + 1) * sizeof(int32_t));
  if (!result->text || !result->tokens) {
    wait->status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  memcpy(result->text, event->full_text, event->full_text_length);
  result->text[event->full_text_length] = '\0';
  if (event->usage.completion_tokens)
    memcpy(result->tokens, event->completion_token_ids, (size_t)event->usage.completion_tokens * sizeof(int32_t));
  result->completion_tokens = event->usage.completion_tokens;
  result->prompt_tokens = event->usage.prompt_tokens;
  result->finish_reason = strcmp(event->finish_reason, "stop") == 0 ? "stop" : "length";
  result->preprocess_seconds = event->timings.preprocess_seconds;
  result->encode_seconds = event->timings.encode_seconds;
  result->prefill_seconds = event->timings.prefill_seconds;
  result->decode_seconds = event->timings.decode_seconds;
}

static void on_event(void *context, const vlm_engine_event *event) {
  generation_wait *wait = context;
  if (event->kind == VLM_ENGINE_EVENT_PROGRESS) {
    char line[256];
    vlm_engine_progress_describe(&event->progress, line, sizeof(line));
    VLM_LOG_INFOF("prefill: %s", line);
    return;
  }
  if (event->kind == VLM_ENGINE_EVENT_TOKEN) {
    if (event->text_length && wait->request->on_text)
      wait->request->on_text(wait->request->on_text_context, event->text, event->text_length);
    return;
  }
  record_finish(wait, event);
  pthread_mutex_lock(&wait->mutex);
  wait->finished = true;
  pthread_cond_signal(&wait->finished_signal);
  pthread_mutex_unlock(&wait->mutex);
}

vlm_status vlm_generate(vlm_generator *generator, const vlm_generation_request *request,
                        vlm_generation_result *out_result) {
  memset(out_result, 0, sizeof(*out_result));
  vlm_status checked = check_request(request, false);
  char *messages = checked || request->raw_prompt ? NULL : build_messages(request);
  if (!checked && !request->raw_prompt && !messages) checked = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (checked) { /* the images and clips are ours to free whatever happens */
    for (int i = 0; request->images && i < request->image_count; i++) vlm_loaded_image_release(&request->images[i]);
    for (int i = 0; request->audio && i < request->audio_count; i++) vlm_loaded_audio_release(&request->audio[i]);
    return checked;
  }
  vlm_engine_request_options options = {.messages_json = messages,
                                        .raw_prompt = request->raw_prompt ? request->prompt : NULL,
                                        .images = request->images, .image_count = request->image_count,
                                        .audio = request->audio, .audio_count = request->audio_count,
                                        .max_tokens = request->max_tokens, .sampling = request->sampling,
                                        .stop = request->stop, .stop_count = request->stop_count,
                                        .grammar = request->grammar,
                                        /* a line per prefill chunk at info level */
                                        .progress = vlm_log_get_level() <= VLM_LOG_INFO};
  generation_wait wait = {.request = request, .result = out_result};
  pthread_mutex_init(&wait.mutex, NULL);
  pthread_cond_init(&wait.finished_signal, NULL);
  vlm_engine_request *handle = NULL;
  vlm_status status = vlm_engine_submit(generator->engine, &options, on_event, &wait, &handle);
  free(messages);
  if (!status) {
    pthread_mutex_lock(&wait.mutex);
    while (!wait.finished) pthread_cond_wait(&wait.finished_signal, &wait.mutex);
    pthread_mutex_unlock(&wait.mutex);
    vlm_engine_request_release(handle);
    status = wait.status;
  }
  pthread_mutex_destroy(&wait.mutex);
  pthread_cond_destroy(&wait.finished_signal);
  if (status) vlm_generation_result_release(out_result);
  return status;
}

vlm_status vlm_generator_check(vlm_generator *generator, const vlm_generation_request *request,
                               const int64_t *image_tokens) {
  VLM_RETURN_IF_ERROR(check_request(request, true));
  char *messages = request->raw_prompt ? NULL : build_messages(request);
  if (!request->raw_prompt && !messages) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_engine_request_options options = {.messages_json = messages,
                                        .raw_prompt = request->raw_prompt ? request->prompt : NULL,
                                        .image_count = request->image_count,
                                        .audio_count = request->audio_count,
                                        .max_tokens = request->max_tokens, .sampling = request->sampling,
                                        .stop = request->stop, .stop_count = request->stop_count};
  vlm_status status = vlm_engine_check_admission(generator->engine, &options, image_tokens);
  free(messages);
  return status;
}

void vlm_generation_result_release(vlm_generation_result *result) {
  free(result->text);
  free(result->tokens);
  memset(result, 0, sizeof(*result));
}
