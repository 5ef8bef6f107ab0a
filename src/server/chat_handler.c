/* POST /v1/chat/completions and POST /v1/completions, on the connection's
 * own thread:
 *
 *   parse and validate (openai_request.h) -> refuse parts of a modality the
 *   model lacks, by name -> fetch each image's bytes (media_source.h) ->
 *   decode and preprocess them here (vlm_engine_load_image_memory; never on
 *   the scheduler thread) -> the model's default sampling overlaid with
 *   what the client set -> vlm_engine_submit -> answer.
 *
 * A non-streaming answer is waited for here, polling the client; a
 * streaming one is produced by libmicrohttpd's content reader, which blocks
 * on the request's events between chunks. Either way a client that goes
 * away cancels the request, freeing its slot (request_events.h). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/request_events.h"
#include "server/responses.h"
#include "server/server_internal.h"

/* One answer in progress: created after the request parsed, freed when its
 * response is (streaming) or when the answer was queued (otherwise). */
typedef struct completion {
  vlm_server *server;
  struct MHD_Connection *connection;
  server_route route;
  response_header header;
  bool stream, include_usage, logprobs;
  request_events events;
  /* Streaming: SSE bytes not yet handed to libmicrohttpd. */
  vlm_string_builder pending;
  size_t pending_offset;
  size_t tokens_sent;
  bool done;                    /* the last event is in `pending` */
  bool client_gone;
} completion;

static server_route route_of(const openai_request *request) {
  return request->endpoint == OPENAI_CHAT_COMPLETIONS ? ROUTE_CHAT_COMPLETIONS : ROUTE_COMPLETIONS;
}

static completion *completion_create(vlm_server *server, struct MHD_Connection *connection,
                                     const openai_request *request) {
  completion *answer = calloc(1, sizeof(*answer));
  if (!answer) return NULL;
  answer->server = server;
  answer->connection = connection;
  answer->route = route_of(request);
  response_header_init(&answer->header, request->endpoint, server->model_id);
  answer->stream = request->stream;
  answer->include_usage = request->include_usage;
  answer->logprobs = request->logprobs;
  request_events_init(&answer->events);
  atomic_fetch_add(&server->active_requests, 1);
  return answer;
}

static void completion_destroy(completion *answer) {
  request_events_destroy(&answer->events); /* cancels the request if it still runs */
  vlm_sb_release(&answer->pending);
  bool now_idle = atomic_fetch_sub(&answer->server->active_requests, 1) == 1;
  free(answer);
  /* Image requests free megabytes of pixels and activations, which glibc
   * keeps in its heaps (its mmap threshold grows after the first large
   * free). Handing free pages back whenever the server goes idle keeps a
   * long-running server's RSS at its idle level; it costs one pass over
   * the heaps, and only on the transition to idle. */
  if (now_idle) malloc_trim(0);
}

static void note_client_gone(completion *answer) {
  if (answer->client_gone) return;
  answer->client_gone = true;
  atomic_fetch_add(&answer->server->client_disconnects, 1);
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/* The HTTP answer for a status from the engine. `param` names the field
 * for client errors. */
static void error_from_status(vlm_server *server, vlm_status status, const char *param,
                              openai_error *error) {
  const char *message = vlm_status_message(status);
  switch (vlm_status_code_of(status)) {
    case VLM_STATUS_OUT_OF_RANGE:
      openai_error_set(error, 400, "invalid_request_error", param, "context_length_exceeded", "%s", message);
      return;
    case VLM_STATUS_RESOURCE_EXHAUSTED:
      openai_error_set(error, 429, "requests", NULL, "rate_limit_exceeded",
                       "The server is busy (%s); retry later.", message);
      return;
    case VLM_STATUS_UNAVAILABLE: /* the engine stopped admitting requests: it is draining */
      openai_error_set(error, 503, "server_error", NULL, "server_shutting_down", "%s", message);
      return;
    case VLM_STATUS_CANCELLED:
      if (atomic_load(&server->shutting_down))
        openai_error_set(error, 503, "server_error", NULL, "server_shutting_down",
                         "The request was cancelled: the server is shutting down.");
      else
        openai_error_set(error, 500, "server_error", NULL, NULL, "The request was cancelled: %s", message);
      return;
    case VLM_STATUS_INVALID_ARGUMENT:
    case VLM_STATUS_UNIMPLEMENTED:
    case VLM_STATUS_DATA_LOSS:
    case VLM_STATUS_NOT_FOUND:
    case VLM_STATUS_FAILED_PRECONDITION:
      openai_error_set(error, 400, "invalid_request_error", param, NULL, "%s", message);
      return;
    default:
      openai_error_set(error, 500, "server_error", NULL, NULL, "%s", message);
      return;
  }
}

static enum MHD_Result respond_status(vlm_server *server, struct MHD_Connection *connection,
                                      server_route route, vlm_status status, const char *param) {
  openai_error error = {0};
  error_from_status(server, status, param, &error);
  vlm_status_free(status);
  enum MHD_Result result = server_respond_error(server, connection, route, &error);
  openai_error_release(&error);
  return result;
}

static enum MHD_Result respond_and_release_error(vlm_server *server, struct MHD_Connection *connection,
                                                 server_route route, openai_error *error) {
  enum MHD_Result result = server_respond_error(server, connection, route, error);
  openai_error_release(error);
  return result;
}

/* ------------------------------------------------------------------------ */
/* Preparing a request                                                       */
/* ------------------------------------------------------------------------ */

/* Everything the model cannot take is refused by name, never dropped. */
static bool check_request(const vlm_server *server, const openai_request *request, openai_error *error) {
  const vlm_engine_info *info = &server->info;
  if (request->model && strcmp(request->model, server->model_id) != 0) {
    openai_error_set(error, 404, "invalid_request_error", "model", "model_not_found",
                     "The model '%s' does not exist; this server serves '%s'.", request->model,
                     server->model_id);
    return false;
  }
  if (request->endpoint == OPENAI_CHAT_COMPLETIONS && !info->has_chat_template) {
    openai_error_set(error, 400, "invalid_request_error", "messages", NULL,
                     "The model '%s' has no chat template; send a prompt to /v1/completions.",
                     server->model_id);
    return false;
  }
  if (request->media_count > server->options.max_media_items) {
    openai_error_set(error, 400, "invalid_request_error", "messages", "too_many_media_items",
                     "The request has %zu image/audio parts; this server accepts at most %u per request "
                     "(vlm serve --max-media-items).",
                     request->media_count, server->options.max_media_items);
    return false;
  }
  for (size_t i = 0; i < request->media_count; i++) {
    const openai_media *media = &request->media[i];
    bool image = media->kind == OPENAI_MEDIA_IMAGE;
    if (image ? info->accepts_images : info->accepts_audio) continue;
    openai_error_set(error, 400, "invalid_request_error", media->param, "unsupported_content",
                     "%s: the model '%s' (%s) takes no %s input.", media->param, server->model_id,
                     info->model_type ? info->model_type : "?", image ? "image" : "audio");
    return false;
  }
  return true;
}

/* An image fetched but not decoded yet: admission counts it from its
 * header first. */
typedef struct fetched_image {
  uint8_t *bytes;
  size_t length;
  const char *param;
} fetched_image;

/* Fetches every image (in placeholder order) and reads its header: limits
 * and token count, nothing decoded. On failure answers nothing: fills
 * *error or *out_status. */
static bool fetch_images(vlm_server *server, const openai_request *request, const atomic_bool *cancel,
                         fetched_image *fetched, int64_t *tokens, int *out_count, openai_error *error,
                         vlm_status *out_status, const char **out_param) {
  *out_count = 0;
  for (size_t i = 0; i < request->media_count; i++) {
    const openai_media *media = &request->media[i];
    if (media->kind != OPENAI_MEDIA_IMAGE) continue;
    fetched_image *image = &fetched[*out_count];
    image->param = media->param;
    if (!media_source_fetch(&server->media, media->url, media->param, cancel, &image->bytes, &image->length,
                            error))
      return false;
    (*out_count)++;
    vlm_engine_image_header header;
    vlm_status status = vlm_engine_read_image_header(server->engine, image->bytes, image->length, media->param,
                                                     &header);
    tokens[*out_count - 1] = header.tokens;
    if (status) {
      *out_status = status;
      *out_param = media->param;
      return false;
    }
  }
  return true;
}

/* Decodes and preprocesses the fetched images into `images`, once the
 * request passed admission. */
static bool load_images(vlm_server *server, const fetched_image *fetched, int count, const atomic_bool *cancel,
                        vlm_loaded_image *images, int *out_count, vlm_status *out_status,
                        const char **out_param) {
  for (*out_count = 0; *out_count < count; (*out_count)++) {
    const fetched_image *image = &fetched[*out_count];
    vlm_status status = vlm_engine_load_image_memory(server->engine, image->bytes, image->length, image->param,
                                                     cancel, &images[*out_count]);
    if (status) {
      *out_status = status;
      *out_param = image->param;
      return false;
    }
  }
  return true;
}

static vlm_sampling_params merge_sampling(const vlm_server *server, const openai_request *request) {
  vlm_sampling_params sampling = vlm_engine_default_sampling(server->engine);
  if (request->has_temperature) sampling.temperature = request->sampling.temperature;
  if (request->has_top_p) sampling.top_p = request->sampling.top_p;
  if (request->has_top_k) sampling.top_k = request->sampling.top_k;
  if (request->has_seed) sampling.seed = request->sampling.seed;
  if (request->has_min_p) sampling.min_p = request->sampling.min_p;
  if (request->has_repetition_penalty) sampling.repetition_penalty = request->sampling.repetition_penalty;
  if (request->has_presence_penalty) sampling.presence_penalty = request->sampling.presence_penalty;
  if (request->has_frequency_penalty) sampling.frequency_penalty = request->sampling.frequency_penalty;
  sampling.top_logprobs = request->logprobs ? request->top_logprobs : 0;
  return sampling;
}

/* ------------------------------------------------------------------------ */
/* Answering                                                                 */
/* ------------------------------------------------------------------------ */

static openai_error finish_error(const completion *answer) {
  openai_error error = {0};
  const request_events *events = &answer->events;
  if (events->out_of_memory)
    openai_error_set(&error, 500, "server_error", NULL, NULL, "The server ran out of memory.");
  else if (events->finish_code == VLM_STATUS_CANCELLED && atomic_load(&answer->server->shutting_down))
    openai_error_set(&error, 503, "server_error", NULL, "server_shutting_down",
                     "The request was cancelled: the server is shutting down.");
  else
    openai_error_set(&error, 500, "server_error", NULL, NULL, "The model failed: %s",
                     events->finish_message ? events->finish_message : vlm_status_code_name(events->finish_code));
  return error;
}

static enum MHD_Result answer_whole(completion *answer) {
  vlm_server *server = answer->server;
  if (request_events_wait(&answer->events, SIZE_MAX, answer->connection) == WAIT_CLIENT_GONE) {
    note_client_gone(answer);
    completion_destroy(answer);
    return MHD_NO; /* closes the connection */
  }
  enum MHD_Result result;
  if (answer->events.finish_code == VLM_STATUS_OK && !answer->events.out_of_memory) {
    result = server_respond(server, answer->connection, answer->route, 200, "application/json",
                            response_completion(&answer->header, &answer->events, answer->logprobs));
  } else {
    openai_error error = finish_error(answer);
    result = respond_and_release_error(server, answer->connection, answer->route, &error);
  }
  completion_destroy(answer);
  return result;
}

/* Turns the tokens that arrived since the last call (and the finish, if it
 * came) into SSE events in answer->pending. False when the client left. */
static bool produce_events(completion *answer) {
  request_events *events = &answer->events;
  if (request_events_wait(events, answer->tokens_sent, answer->connection) == WAIT_CLIENT_GONE) {
    note_client_gone(answer);
    return false;
  }
  /* Formatting under the lock keeps it simple; it takes microseconds, and
   * only the scheduler's callback for this one request can wait on it. */
  pthread_mutex_lock(&events->mutex);
  for (; answer->tokens_sent < events->token_count; answer->tokens_sent++) {
    const event_token *token = &events->tokens[answer->tokens_sent];
    if (token->text_length || (answer->logprobs && token->has_logprob))
      response_append_token_chunk(&answer->pending, &answer->header, token, answer->logprobs);
  }
  bool finished = events->finished;
  pthread_mutex_unlock(&events->mutex);
  if (!finished) return true;
  if (events->finish_code == VLM_STATUS_OK && !events->out_of_memory) {
    response_append_finish_chunk(&answer->pending, &answer->header, events->finish_reason);
    if (answer->include_usage) response_append_usage_chunk(&answer->pending, &answer->header, &events->usage);
    response_append_done(&answer->pending);
  } else {
    /* Headers (200) are gone already: report in the stream, then close. */
    openai_error error = finish_error(answer);
    response_append_error_event(&answer->pending, &error);
    openai_error_release(&error);
  }
  answer->done = true;
  return true;
}

static ssize_t read_stream(void *context, uint64_t position, char *buffer, size_t max) {
  (void)position;
  completion *answer = context;
  for (;;) {
    if (answer->pending.failed) return MHD_CONTENT_READER_END_WITH_ERROR;
    if (answer->pending_offset < answer->pending.length) {
      size_t count = answer->pending.length - answer->pending_offset;
      if (count > max) count = max;
      memcpy(buffer, answer->pending.data + answer->pending_offset, count);
      answer->pending_offset += count;
      return (ssize_t)count;
    }
    if (answer->done) return MHD_CONTENT_READER_END_OF_STREAM;
    answer->pending.length = answer->pending_offset = 0;
    if (!produce_events(answer)) return MHD_CONTENT_READER_END_WITH_ERROR;
  }
}

/* Runs once libmicrohttpd is done with the response: sent, failed, or the
 * connection closed. A stream that did not reach its end lost its client. */
static void free_stream(void *context) {
  completion *answer = context;
  if (!answer->done || answer->pending_offset < answer->pending.length) note_client_gone(answer);
  completion_destroy(answer);
}

static enum MHD_Result answer_stream(completion *answer) {
  if (answer->header.endpoint == OPENAI_CHAT_COMPLETIONS)
    response_append_role_chunk(&answer->pending, &answer->header); /* sent at once */
  struct MHD_Response *response =
      MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, read_stream, answer, free_stream);
  if (!response) {
    completion_destroy(answer);
    return MHD_NO;
  }
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
  MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
  MHD_add_response_header(response, "X-Accel-Buffering", "no"); /* proxies: do not buffer */
  enum MHD_Result result = MHD_queue_response(answer->connection, MHD_HTTP_OK, response);
  MHD_destroy_response(response); /* libmicrohttpd keeps its reference; free_stream frees `answer` */
  server_count_response(answer->server, answer->route, MHD_HTTP_OK);
  return result;
}

static vlm_engine_request_options request_options(const vlm_server *server, const openai_request *request,
                                                  vlm_loaded_image *images, int image_count) {
  vlm_engine_request_options options = {
      .messages_json = request->endpoint == OPENAI_CHAT_COMPLETIONS ? request->messages_json : NULL,
      .raw_prompt = request->endpoint == OPENAI_COMPLETIONS ? request->prompt : NULL,
      .images = images,
      .image_count = image_count,
      .max_tokens = request->max_tokens,
      .sampling = merge_sampling(server, request),
      .logprobs = request->logprobs,
      .stop = (const char *const *)request->stop,
      .stop_count = request->stop_count,
  };
  return options;
}

/* Submits the prepared request; images pass to the engine either way. */
static enum MHD_Result submit_and_answer(vlm_server *server, struct MHD_Connection *connection,
                                         const openai_request *request, completion *answer,
                                         vlm_loaded_image *images, int image_count) {
  vlm_engine_request_options options = request_options(server, request, images, image_count);
  vlm_status status = vlm_engine_submit(server->engine, &options, request_events_callback,
                                        &answer->events, &answer->events.request);
  if (status) {
    completion_destroy(answer);
    const char *param = request->endpoint == OPENAI_CHAT_COMPLETIONS ? "messages" : "prompt";
    return respond_status(server, connection, route_of(request), status, param);
  }
  return answer->stream ? answer_stream(answer) : answer_whole(answer);
}

/* Prepares one parsed request and answers it. */
static enum MHD_Result handle_request(vlm_server *server, struct MHD_Connection *connection,
                                      const openai_request *request) {
  server_route route = route_of(request);
  openai_error error = {0};
  if (!check_request(server, request, &error))
    return respond_and_release_error(server, connection, route, &error);
  completion *answer = completion_create(server, connection, request);
  size_t media = request->media_count;
  vlm_loaded_image *images = media ? calloc(media, sizeof(*images)) : NULL;
  fetched_image *fetched = media ? calloc(media, sizeof(*fetched)) : NULL;
  int64_t *tokens = media ? calloc(media, sizeof(*tokens)) : NULL;
  if (!answer || (media && (!images || !fetched || !tokens))) {
    if (answer) completion_destroy(answer);
    free(images), free(fetched), free(tokens);
    return server_respond(server, connection, route, 500, "application/json", NULL);
  }
  /* Admission before decoding: the images count from their headers, so a
   * request that cannot fit decodes nothing (a text-only request is only
   * checked once, by submit). */
  int fetched_count = 0, image_count = 0;
  vlm_status status = VLM_OK;
  const char *param = NULL;
  bool ok = fetch_images(server, request, &answer->events.cancel, fetched, tokens, &fetched_count, &error,
                         &status, &param);
  if (ok && fetched_count > 0) {
    vlm_engine_request_options check = request_options(server, request, NULL, fetched_count);
    status = vlm_engine_check_admission(server->engine, &check, tokens);
    param = request->endpoint == OPENAI_CHAT_COMPLETIONS ? "messages" : "prompt";
    ok = !status && load_images(server, fetched, fetched_count, &answer->events.cancel, images, &image_count,
                                &status, &param);
  }
  for (int i = 0; i < fetched_count; i++) free(fetched[i].bytes);
  free(fetched), free(tokens);
  if (!ok) {
    for (int i = 0; i < image_count; i++) vlm_loaded_image_release(&images[i]);
    free(images);
    completion_destroy(answer);
    if (status) return respond_status(server, connection, route, status, param);
    return respond_and_release_error(server, connection, route, &error);
  }
  enum MHD_Result result = submit_and_answer(server, connection, request, answer, images, image_count);
  free(images); /* its entries went to the engine */
  return result;
}

enum MHD_Result chat_handle(vlm_server *server, struct MHD_Connection *connection,
                            openai_endpoint endpoint, const char *body, size_t length) {
  server_route route = endpoint == OPENAI_CHAT_COMPLETIONS ? ROUTE_CHAT_COMPLETIONS : ROUTE_COMPLETIONS;
  openai_request request;
  memset(&request, 0, sizeof(request));
  openai_error error = {0};
  if (!openai_request_parse(endpoint, body, length, &request, &error)) {
    openai_request_release(&request);
    return respond_and_release_error(server, connection, route, &error);
  }
  enum MHD_Result result = handle_request(server, connection, &request);
  openai_request_release(&request);
  return result;
}
