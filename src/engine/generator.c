/* One request from text to text: chat template, tokenizer, prefill, decode
 * with sampling, streaming detokenization and stop strings. The server's
 * scheduler will drive the same pieces slot by slot; this is the
 * single-request path behind `vlm run`. */
#include "vlm/generate.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "engine/sampling.h"
#include "engine/text_model.h"
#include "engine/vision_model.h"
#include "media/image_processor_clip.h"
#include "vlm/media.h"
#include "io/config.h"
#include "io/json.h"
#include "vlm/chat_template.h"
#include "vlm/tokenizer.h"

#define DEFAULT_MAX_TOKENS 256
#define MAX_STOP_TOKENS 16

struct vlm_generator {
  char *model_dir;
  vlm_thread_pool *pool;
  vlm_text_model *model;
  vlm_vision_model *vision;         /* opened by the first request with images */
  vlm_processor_config processor;   /* loaded with the first image */
  bool processor_loaded;
  const vlm_allocator *allocator;
  vlm_tokenizer *tokenizer;
  vlm_chat_template *chat_template; /* NULL when the model has none */
  vlm_generation_config generation;
  int32_t stop_tokens[MAX_STOP_TOKENS];
  int stop_token_count;
};

static double now_seconds(void) {
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return (double)time.tv_sec + (double)time.tv_nsec * 1e-9;
}

/* generate() stops on generation_config's eos ids, which default to the
 * model config's. */
static void collect_stop_tokens(vlm_generator *generator) {
  const vlm_token_id_list *ids = &generator->generation.eos_token_ids;
  if (!ids->count) ids = &vlm_text_model_config(generator->model)->text.eos_token_ids;
  for (size_t i = 0; i < ids->count && generator->stop_token_count < MAX_STOP_TOKENS; i++)
    generator->stop_tokens[generator->stop_token_count++] = (int32_t)ids->ids[i];
}

vlm_status vlm_generator_open(const char *model_dir, const vlm_generator_options *options,
                              vlm_generator **out_generator) {
  *out_generator = NULL;
  vlm_generator_options defaults = {0};
  if (!options) options = &defaults;
  vlm_generator *generator = calloc(1, sizeof(*generator));
  if (!generator) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  generator->model_dir = strdup(model_dir);
  generator->allocator = options->allocator;
  vlm_status status = vlm_thread_pool_create(options->thread_count, options->allocator, &generator->pool);
  vlm_text_model_options model_options = {.slot_count = 1, .capacity = options->capacity,
                                          .prefill_chunk = options->prefill_chunk,
                                          .pool = generator->pool, .allocator = options->allocator};
  if (!status) status = vlm_text_model_open(model_dir, &model_options, &generator->model);
  if (!status) status = vlm_generation_config_load(model_dir, options->allocator, &generator->generation);
  vlm_tokenizer_options tokenizer_options = {.allocator = options->allocator};
  if (!status) status = vlm_tokenizer_create(model_dir, &tokenizer_options, &generator->tokenizer);
  if (!status) {
    status = vlm_chat_template_load(model_dir, &generator->chat_template);
    if (vlm_status_code_of(status) == VLM_STATUS_NOT_FOUND) { /* raw prompts only */
      vlm_status_free(status);
      status = VLM_OK;
      generator->chat_template = NULL;
    }
  }
  if (status) {
    vlm_generator_release(generator);
    return status;
  }
  collect_stop_tokens(generator);
  *out_generator = generator;
  return VLM_OK;
}

void vlm_generator_release(vlm_generator *generator) {
  if (!generator) return;
  vlm_chat_template_release(generator->chat_template);
  vlm_tokenizer_release(generator->tokenizer);
  vlm_generation_config_release(&generator->generation);
  vlm_text_model_release(generator->model);
  vlm_vision_model_release(generator->vision);
  if (generator->processor_loaded) vlm_processor_config_release(&generator->processor);
  vlm_thread_pool_release(generator->pool);
  free(generator->model_dir);
  free(generator);
}

static vlm_status ensure_vision(vlm_generator *generator, int image_count);

vlm_status vlm_generator_load_image(vlm_generator *generator, const char *path,
                                    vlm_loaded_image *out_image) {
  memset(out_image, 0, sizeof(*out_image));
  double start = now_seconds();
  VLM_RETURN_IF_ERROR(ensure_vision(generator, 1));
  if (!generator->processor_loaded) {
    VLM_RETURN_IF_ERROR(vlm_processor_config_load(generator->model_dir, generator->allocator,
                                                  &generator->processor));
    generator->processor_loaded = true;
  }
  const char *type = generator->processor.image_processor_type;
  if (!type || strcmp(type, "CLIPImageProcessor") != 0)
    return VLM_ERROR(UNIMPLEMENTED, "%s: image processor '%s' is not supported yet",
                     generator->model_dir, type ? type : "(none)");
  vlm_image_decode_options decode_options = {.allocator = generator->allocator};
  vlm_image image;
  VLM_RETURN_IF_ERROR(vlm_image_decode_file(path, &decode_options, &image));
  vlm_tensor pixels;
  vlm_status status = vlm_clip_preprocess(&generator->processor, &image, VLM_CLIP_TORCHVISION,
                                          generator->allocator, &pixels);
  vlm_image_release(&image);
  if (status) return vlm_status_annotate(status, "%s", path);
  out_image->owned_values = pixels.data;
  out_image->allocator = generator->allocator;
  out_image->pixel_values = (vlm_pixel_values){pixels.data, pixels.shape[0], pixels.shape[1],
                                               pixels.shape[2]};
  out_image->preprocess_seconds = now_seconds() - start;
  return VLM_OK;
}

void vlm_loaded_image_release(vlm_loaded_image *image) {
  if (!image) return;
  vlm_release(image->allocator, image->owned_values);
  memset(image, 0, sizeof(*image));
}

vlm_sampling_params vlm_generator_default_sampling(const vlm_generator *generator) {
  vlm_sampling_params params = vlm_sampling_params_greedy();
  const vlm_generation_config *generation = &generator->generation;
  if (generation->do_sample) {
    params.temperature = (float)generation->temperature;
    params.top_k = (int32_t)generation->top_k;
    params.top_p = (float)generation->top_p;
    params.min_p = (float)generation->min_p;
  }
  params.repetition_penalty = (float)generation->repetition_penalty;
  return params;
}

/* ---------------------------------------------------------------------- */

static vlm_status render_prompt(const vlm_generator *generator, const vlm_generation_request *request,
                                char **out_text, size_t *out_length, bool *out_templated) {
  *out_templated = false;
  if (request->raw_prompt) {
    *out_text = strdup(request->prompt);
    *out_length = strlen(request->prompt);
    return *out_text ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  if (!generator->chat_template)
    return VLM_ERROR(FAILED_PRECONDITION,
                     "%s has no chat template (tokenizer_config.json, chat_template.json or "
                     "chat_template.jinja); pass the whole prompt as raw text instead",
                     generator->model_dir);
  vlm_string_builder messages = {0};
  vlm_sb_append_literal(&messages, "[");
  if (request->system_prompt) {
    vlm_sb_append_literal(&messages, "{\"role\":\"system\",\"content\":");
    vlm_sb_append_json_string(&messages, request->system_prompt, strlen(request->system_prompt));
    vlm_sb_append_literal(&messages, "},");
  }
  vlm_sb_append_literal(&messages, "{\"role\":\"user\",\"content\":");
  if (request->image_count > 0) {
    /* Image parts first, as the oracle's messages: the template decides
     * where they render (LLaVA's puts every image before the text). */
    vlm_sb_append_literal(&messages, "[");
    for (int i = 0; i < request->image_count; i++) vlm_sb_append_literal(&messages, "{\"type\":\"image\"},");
    vlm_sb_append_literal(&messages, "{\"type\":\"text\",\"text\":");
    vlm_sb_append_json_string(&messages, request->prompt, strlen(request->prompt));
    vlm_sb_append_literal(&messages, "}]");
  } else {
    vlm_sb_append_json_string(&messages, request->prompt, strlen(request->prompt));
  }
  vlm_sb_append_literal(&messages, "}]");
  char *json = vlm_sb_finish(&messages);
  if (!json) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  vlm_chat_template_options options = {.add_generation_prompt = true};
  vlm_status status = vlm_chat_template_render(generator->chat_template, json, strlen(json), &options,
                                               out_text, out_length);
  free(json);
  *out_templated = status == VLM_OK;
  return status;
}

static bool is_stop_token(const vlm_generator *generator, int32_t token) {
  for (int i = 0; i < generator->stop_token_count; i++)
    if (generator->stop_tokens[i] == token) return true;
  return false;
}

typedef struct decode_state {
  vlm_generation_result *result;
  const vlm_generation_request *request;
  vlm_string_builder text;
  vlm_detokenizer *detokenizer;
  vlm_stop_matcher *stop;
  int64_t capacity_tokens;
} decode_state;

/* Passes new text through the stop-string matcher to the caller. Returns
 * true when a stop string completed. */
static bool emit(decode_state *state, const char *text, size_t length) {
  const char *released = text;
  size_t released_length = length;
  bool stopped = false;
  if (state->stop) stopped = vlm_stop_matcher_push(state->stop, text, length, &released, &released_length);
  if (released_length) {
    vlm_sb_append(&state->text, released, released_length);
    if (state->request->on_text)
      state->request->on_text(state->request->on_text_context, released, released_length);
  }
  return stopped;
}

static vlm_status decode_loop(vlm_generator *generator, decode_state *state, float *logits,
                              vlm_sampler *sampler, int64_t max_tokens) {
  vlm_generation_result *result = state->result;
  result->finish_reason = "length";
  for (int64_t step = 0; step < max_tokens; step++) {
    vlm_sample_result sample;
    VLM_RETURN_IF_ERROR(vlm_sampler_sample(sampler, logits, &sample));
    if (is_stop_token(generator, sample.token)) {
      result->finish_reason = "stop";
      break;
    }
    result->tokens[result->completion_tokens++] = sample.token;
    const char *piece = NULL;
    size_t piece_length = 0;
    VLM_RETURN_IF_ERROR(vlm_detokenizer_push(state->detokenizer, sample.token, &piece, &piece_length));
    if (emit(state, piece, piece_length)) {
      result->finish_reason = "stop";
      break;
    }
    if (step + 1 == max_tokens) break;
    if (vlm_text_model_slot_length(generator->model, 0) >= vlm_text_model_capacity(generator->model))
      break; /* context full: finish with "length" */
    int64_t position = vlm_text_model_slot_length(generator->model, 0);
    int32_t slot = 0;
    VLM_RETURN_IF_ERROR(vlm_text_model_decode(generator->model, 1, &sample.token, &position, NULL,
                                              &slot, logits));
  }
  return VLM_OK;
}

static vlm_status check_request(const vlm_generation_request *request) {
  if (!request->prompt) return VLM_ERROR(INVALID_ARGUMENT, "the request has no prompt");
  if (request->image_count < 0 || (request->image_count > 0 && !request->images))
    return VLM_ERROR(INVALID_ARGUMENT, "the request names %d image(s) but gives no pixel values",
                     request->image_count);
  if (request->audio_count > 0)
    return VLM_ERROR(UNIMPLEMENTED, "audio input is not supported yet; the request has %d clip(s)",
                     request->audio_count);
  if (request->max_tokens < 0) return VLM_ERROR(INVALID_ARGUMENT, "max_tokens must not be negative");
  return vlm_sampling_params_validate(&request->sampling);
}

/* ---------------------------------------------------------------------- */
/* Images                                                                  */
/* ---------------------------------------------------------------------- */

/* The vision side loads on first use, so text-only use never maps or
 * validates vision weights; a family without a vision path is refused
 * here by name. */
static vlm_status ensure_vision(vlm_generator *generator, int image_count) {
  if (generator->vision) return VLM_OK;
  vlm_vision_model_options options = {.pool = generator->pool, .allocator = generator->allocator};
  vlm_status status = vlm_vision_model_open(generator->model_dir, &options, &generator->vision);
  if (vlm_status_code_of(status) == VLM_STATUS_UNIMPLEMENTED) {
    vlm_status_free(status);
    return VLM_ERROR(UNIMPLEMENTED, "model_type '%s' takes no image input; the request has %d image(s)",
                     vlm_text_model_config(generator->model)->model_type, image_count);
  }
  return status;
}

/* Replaces each image placeholder of `ids` by the family's token count
 * (in place of the caller's ids), refusing a count that differs from the
 * request's images. */
static vlm_status expand_image_placeholders(vlm_generator *generator, const vlm_generation_request *request,
                                            vlm_token_ids *ids) {
  int32_t *expanded = NULL;
  int64_t count = 0;
  VLM_RETURN_IF_ERROR(vlm_vision_model_expand_placeholders(generator->vision, ids->ids, (int64_t)ids->count,
                                                           request->image_count, &expanded, &count));
  vlm_token_ids_release(ids);
  ids->ids = expanded;
  ids->count = ids->capacity = (size_t)count;
  return VLM_OK;
}

/* Vision encoder + projector, merge into the token embeddings, then the
 * decoder's embeddings_prefill. */
static vlm_status prefill_with_images(vlm_generator *generator, const vlm_generation_request *request,
                                      const int32_t *ids, int64_t count, const vlm_prefill_logits *out,
                                      double *out_encode_seconds) {
  double start = now_seconds();
  int64_t width = vlm_vision_model_output_width(generator->vision);
  int64_t rows = request->image_count * vlm_vision_model_tokens_per_image(generator->vision);
  float *features = malloc((size_t)(rows * width) * sizeof(float));
  float *embeddings = malloc((size_t)(count * width) * sizeof(float));
  vlm_status status = features && embeddings ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (!status) status = vlm_vision_model_encode(generator->vision, request->images, request->image_count, features);
  if (!status) status = vlm_vision_model_merge(generator->vision, ids, count, features, rows, embeddings);
  free(features);
  *out_encode_seconds = now_seconds() - start;
  vlm_embeddings_prefill_input input = {.embeddings = embeddings, .row_count = count};
  if (!status) status = vlm_text_model_embeddings_prefill(generator->model, 0, &input, out);
  free(embeddings);
  return status;
}

vlm_status vlm_generate(vlm_generator *generator, const vlm_generation_request *request,
                        vlm_generation_result *out_result) {
  memset(out_result, 0, sizeof(*out_result));
  VLM_RETURN_IF_ERROR(check_request(request));
  /* Before rendering: a family without a vision path is refused by name. */
  if (request->image_count > 0) VLM_RETURN_IF_ERROR(ensure_vision(generator, request->image_count));
  double start = now_seconds();
  char *prompt = NULL;
  size_t prompt_length = 0;
  bool templated = false;
  VLM_RETURN_IF_ERROR(render_prompt(generator, request, &prompt, &prompt_length, &templated));
  /* A rendered template already holds its special tokens (as
   * apply_chat_template(tokenize=True) does); a raw prompt gets BOS etc. */
  vlm_token_ids ids = {0};
  vlm_status status = vlm_tokenizer_encode(generator->tokenizer, prompt, prompt_length, !templated, &ids);
  free(prompt);
  if (!status && request->image_count > 0) status = expand_image_placeholders(generator, request, &ids);
  if (status) {
    vlm_token_ids_release(&ids);
    return status;
  }
  int64_t max_tokens = request->max_tokens ? request->max_tokens
                       : generator->generation.max_new_tokens ? generator->generation.max_new_tokens
                                                              : DEFAULT_MAX_TOKENS;
  int64_t room = vlm_text_model_capacity(generator->model) - (int64_t)ids.count;
  if ((int64_t)ids.count + max_tokens > vlm_text_model_capacity(generator->model)) {
    status = VLM_ERROR(OUT_OF_RANGE,
                       "context length exceeded: the prompt has %zu tokens and max_tokens is %lld, "
                       "over the capacity of %lld (%lld tokens left for the completion)",
                       ids.count, (long long)max_tokens,
                       (long long)vlm_text_model_capacity(generator->model), (long long)(room > 0 ? room : 0));
    vlm_token_ids_release(&ids);
    return status;
  }
  int64_t vocab = vlm_text_model_vocab_size(generator->model);
  decode_state state = {.result = out_result, .request = request};
  float *logits = malloc((size_t)vocab * sizeof(float));
  out_result->tokens = malloc((size_t)(max_tokens + 1) * sizeof(int32_t));
  vlm_sampler *sampler = NULL;
  status = logits && out_result->tokens ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (!status) status = vlm_sampler_create(&request->sampling, (int32_t)vocab, NULL, &sampler);
  if (!status) status = vlm_sampler_add_prompt(sampler, ids.ids, (int64_t)ids.count);
  if (!status) status = vlm_detokenizer_create(generator->tokenizer, true, &state.detokenizer);
  if (!status && request->stop_count)
    status = vlm_stop_matcher_create(request->stop, request->stop_count, &state.stop);
  out_result->prompt_tokens = (int64_t)ids.count;
  out_result->preprocess_seconds = now_seconds() - start;
  if (!status) {
    vlm_text_model_clear_slot(generator->model, 0);
    vlm_prefill_logits out = {.last_row = logits};
    start = now_seconds();
    status = request->image_count > 0
                 ? prefill_with_images(generator, request, ids.ids, (int64_t)ids.count, &out,
                                       &out_result->encode_seconds)
                 : vlm_text_model_token_prefill(generator->model, 0, ids.ids, (int64_t)ids.count, NULL, &out);
    out_result->prefill_seconds = now_seconds() - start - out_result->encode_seconds;
  }
  if (!status) {
    start = now_seconds();
    status = decode_loop(generator, &state, logits, sampler, max_tokens);
    const char *tail = NULL;
    size_t tail_length = 0;
    if (!status && strcmp(out_result->finish_reason, "stop") != 0 &&
        !vlm_detokenizer_finish(state.detokenizer, &tail, &tail_length))
      emit(&state, tail, tail_length);
    if (!status && state.stop && strcmp(out_result->finish_reason, "stop") != 0) {
      vlm_stop_matcher_finish(state.stop, &tail, &tail_length);
      if (tail_length) {
        vlm_sb_append(&state.text, tail, tail_length);
        if (request->on_text) request->on_text(request->on_text_context, tail, tail_length);
      }
    }
    out_result->decode_seconds = now_seconds() - start;
  }
  vlm_text_model_clear_slot(generator->model, 0);
  bool stopped_by_string = state.stop && vlm_stop_matcher_matched(state.stop) >= 0;
  vlm_stop_matcher_release(state.stop);
  vlm_detokenizer_release(state.detokenizer);
  vlm_sampler_release(sampler);
  vlm_token_ids_release(&ids);
  free(logits);
  out_result->text = vlm_sb_finish(&state.text);
  /* Without a stop string the result is the whole completion decoded at
   * once, exactly as Transformers' batch_decode gives it; the stream is the
   * same text except where invalid byte sequences were repaired later. */
  if (!status && out_result->text && !stopped_by_string) {
    char *exact = NULL;
    size_t exact_length = 0;
    status = vlm_tokenizer_decode(generator->tokenizer, out_result->tokens,
                                  (size_t)out_result->completion_tokens, true, &exact, &exact_length);
    if (!status) {
      free(out_result->text);
      out_result->text = exact;
    }
  }
  if (!status && !out_result->text) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (status) vlm_generation_result_release(out_result);
  return status;
}

void vlm_generation_result_release(vlm_generation_result *result) {
  free(result->text);
  free(result->tokens);
  memset(result, 0, sizeof(*result));
}
