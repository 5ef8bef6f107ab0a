/* POST /v1/chat/completions and POST /v1/completions, on the connection's
 * own thread:
 *
 *   parse and validate (openai_request.h), chat content in the shape the
 *   model's template reads -> refuse parts of a modality the model has no
 *   path for, by name -> fetch each image's bytes
 *   (media_source.h) and read each image's and clip's header -> admission
 *   with their token counts from their headers (vlm_engine_check_admission_room),
 *   so a request that cannot fit decodes nothing, and a clip whose header
 *   understates its length stops decoding at the room left -> decode and preprocess
 *   them here (vlm_engine_load_image_memory; never on the scheduler
 *   thread) -> the
 *   model's default sampling overlaid with what the client set ->
 *   vlm_engine_submit -> answer.
 *
 * While images are fetched and decoded the connection guard watches the
 * request (connection_guard.h): a client that leaves, or the request's
 * --request-timeout, sets the cancel flag the fetch and the decoders poll.
 * A non-streaming answer is waited for here, polling the client and the
 * deadline; a streaming one is produced by libmicrohttpd's content reader,
 * which blocks on the request's events between chunks. Either way a client
 * that goes away cancels the request, freeing its slot, and a deadline
 * cancels it with vlm_engine_cancel (request_events.h). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/status.h"
#include "server/request_events.h"
#include "server/responses.h"
#include "server/server_internal.h"

/* A choice of the answer after the first (n > 1 or a prompt list; choice
 * 0 is the completion's own events): its queue and its stream's state. */
typedef struct extra_choice {
  request_events events;
  size_t tokens_sent;
  bool finish_sent;
  bool splitting;
  reasoning_split split;
} extra_choice;

/* Routes one engine request's events (its n choices) to the queues of
 * choices [first, first + n) of the answer. */
typedef struct choice_router {
  request_events *events[OPENAI_MAX_CHOICES];
  int32_t n;
} choice_router;

/* One answer in progress: created after the request parsed, freed when its
 * response is (streaming) or when the answer was queued (otherwise). */
typedef struct completion {
  vlm_server *server;
  struct MHD_Connection *connection;
  /* The HTTP request: valid until libmicrohttpd's completion notification,
   * which comes before a streaming response is freed, so free_stream and
   * completion_destroy never touch it. */
  http_request *http;
  request_watch watch;          /* the guard's view while images are fetched and decoded */
  response_header header;
  bool stream, include_usage, logprobs, return_progress;
  request_events events;
  /* Streaming: SSE bytes not yet handed to libmicrohttpd. */
  vlm_string_builder pending;
  size_t pending_offset;
  size_t tokens_sent;
  bool done;                    /* the last event is in `pending` */
  bool client_gone;
  const tool_format *tool_format; /* parse tool calls from the output; NULL: no */
  tool_stream tools;            /* streaming: content vs held tool calls */
  char *echo_text;              /* the request's, owned (header.echo_text) */
  /* Chat with a reasoning parser: the stream's split (reasoning.h) and the
   * prompt's end it starts from (owned; header.prompt_tail). */
  bool splitting;
  reasoning_split split;
  char *prompt_tail;
  /* Several choices (prompts x n; 1 otherwise): choice 0 is `events`
   * above, choice i > 0 extra[i - 1]; one router per prompt. */
  size_t choice_count;
  int32_t n;
  extra_choice *extra;
  choice_router *routers;
  size_t router_count;
  bool finish_sent;             /* choice 0's finish chunk (several choices) */
} completion;

static request_events *choice_events(completion *answer, size_t choice) {
  return choice ? &answer->extra[choice - 1].events : &answer->events;
}

/* The queues for choices 1.. and a router per prompt (several choices). */
static bool create_choices(completion *answer, const openai_request *request) {
  answer->n = request->n > 1 ? request->n : 1;
  answer->router_count = 1 + request->more_prompt_count;
  answer->choice_count = answer->router_count * (size_t)answer->n;
  if (answer->choice_count == 1) return true;
  answer->extra = calloc(answer->choice_count - 1, sizeof(*answer->extra));
  answer->routers = calloc(answer->router_count, sizeof(*answer->routers));
  if (!answer->extra || !answer->routers) {
    free(answer->extra);
    answer->extra = NULL;
    answer->choice_count = 1;
    return false;
  }
  for (size_t i = 1; i < answer->choice_count; i++) {
    request_events *events = &answer->extra[i - 1].events;
    request_events_init(events);
    snprintf(events->log_id, sizeof(events->log_id), "%s", answer->events.log_id);
    events->deadline = answer->events.deadline;
  }
  for (size_t p = 0; p < answer->router_count; p++) {
    answer->routers[p].n = answer->n;
    for (int32_t i = 0; i < answer->n; i++) answer->routers[p].events[i] = choice_events(answer, p * (size_t)answer->n + (size_t)i);
  }
  return true;
}

/* Before any queue is freed: the borrowed handles are forgotten, then the
 * owners' requests released (after which no callback runs for them). */
static void destroy_choices(completion *answer) {
  if (!answer->extra) {
    free(answer->routers);
    return;
  }
  for (size_t i = 1; i < answer->choice_count; i++)
    if (answer->extra[i - 1].events.request_borrowed) answer->extra[i - 1].events.request = NULL;
  for (size_t i = 1; i < answer->choice_count; i++) request_events_release_request(&answer->extra[i - 1].events);
  request_events_release_request(&answer->events);
  for (size_t i = 1; i < answer->choice_count; i++) {
    extra_choice *choice = &answer->extra[i - 1];
    request_events_destroy(&choice->events);
    if (choice->splitting) reasoning_split_release(&choice->split);
  }
  free(answer->extra);
  free(answer->routers);
}

/* The vlm_engine_event_callback of a request with n choices. */
static void choice_router_callback(void *context, const vlm_engine_event *event) {
  choice_router *router = context;
  if (event->choice < 0 || event->choice >= router->n) return;
  request_events_callback(router->events[event->choice], event);
}

static void completion_destroy(completion *answer);

static completion *completion_create(vlm_server *server, struct MHD_Connection *connection,
                                     http_request *http, const openai_request *request) {
  completion *answer = calloc(1, sizeof(*answer));
  if (!answer) return NULL;
  answer->server = server;
  answer->connection = connection;
  answer->http = http;
  response_header_init(&answer->header, request->endpoint, server->model_id);
  if (request->echo_text && !(answer->echo_text = strdup(request->echo_text))) {
    free(answer);
    return NULL;
  }
  answer->header.echo_text = answer->echo_text;
  answer->stream = request->stream;
  answer->include_usage = request->include_usage;
  answer->logprobs = request->logprobs;
  answer->return_progress = request->return_progress;
  answer->tool_format = request->tool_format;
  answer->header.single_tool_call = request->single_tool_call;
  if (answer->tool_format) tool_stream_init(&answer->tools, answer->tool_format);
  request_events_init(&answer->events);
  answer->events.wake_on_progress = request->return_progress;
  snprintf(answer->events.log_id, sizeof(answer->events.log_id), "%s", http->id);
  answer->events.deadline = http->deadline;
  answer->watch.cancel = &answer->events.cancel;
  answer->watch.deadline = http->deadline;
  atomic_init(&answer->watch.timed_out, false);
  atomic_init(&answer->watch.client_gone, false);
  atomic_fetch_add(&server->active_requests, 1);
  if (!create_choices(answer, request)) {
    completion_destroy(answer);
    return NULL;
  }
  return answer;
}

static void completion_destroy(completion *answer) {
  destroy_choices(answer);
  if (answer->tool_format) tool_stream_release(&answer->tools);
  request_events_destroy(&answer->events); /* cancels the request if it still runs */
  vlm_sb_release(&answer->pending);
  free(answer->echo_text);
  free(answer->prompt_tail);
  if (answer->splitting) reasoning_split_release(&answer->split);
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

/* Which call a status came from: the same code means different things
 * from each. */
typedef enum failure_stage {
  STAGE_IMAGE,   /* vlm_engine_load_image_memory / _audio_memory: decoding and preprocessing */
  STAGE_SUBMIT,  /* vlm_engine_submit: template, tokenizer, admission */
} failure_stage;

static void set_cancelled(vlm_server *server, const char *message, openai_error *error) {
  if (atomic_load(&server->shutting_down))
    openai_error_set(error, 503, "server_error", NULL, "server_shutting_down",
                     "The request was cancelled: the server is shutting down.");
  else
    openai_error_set(error, 500, "server_error", NULL, NULL, "The request was cancelled: %s", message);
}

/* The HTTP answer for a status from the engine. `param` names the field
 * for client errors.
 *   image stage: a limit (OUT_OF_RANGE: pixels, encoded bytes) or bad data
 *     is the image's fault, 400 naming the part; out of memory, or the
 *     engine's image memory budget staying full (RESOURCE_EXHAUSTED), is
 *     transient, 503.
 *   submit stage: OUT_OF_RANGE is the capacity check, 400
 *     context_length_exceeded; RESOURCE_EXHAUSTED is the queue bound (or
 *     memory), transient, 429; a template's own limits arrive as
 *     INVALID_ARGUMENT (vlm_chat_template_render) and are 400. */
static void error_from_status(vlm_server *server, failure_stage stage, vlm_status status,
                              const char *param, openai_error *error) {
  const char *message = vlm_status_message(status);
  vlm_status_code code = vlm_status_code_of(status);
  if (code == VLM_STATUS_CANCELLED) {
    set_cancelled(server, message, error);
    return;
  }
  if (code == VLM_STATUS_UNAVAILABLE) { /* the engine stopped admitting requests: it is draining */
    openai_error_set(error, 503, "server_error", NULL, "server_shutting_down", "%s", message);
    return;
  }
  if (code == VLM_STATUS_OUT_OF_RANGE && stage == STAGE_SUBMIT) {
    openai_error_set(error, 400, "invalid_request_error", param, "context_length_exceeded", "%s", message);
    return;
  }
  if (code == VLM_STATUS_RESOURCE_EXHAUSTED) {
    if (stage == STAGE_SUBMIT)
      openai_error_set(error, 429, "requests", NULL, "rate_limit_exceeded",
                       "The server is busy (%s); retry later.", message);
    else
      openai_error_set(error, 503, "server_error", NULL, "server_busy", "The server is busy (%s); retry later.",
                       message);
    return;
  }
  switch (code) {
    case VLM_STATUS_OUT_OF_RANGE: /* image stage */
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

static void set_timed_out(vlm_server *server, http_request *http, openai_error *error) {
  http->timed_out = true;
  atomic_fetch_add(&server->requests_timed_out, 1);
  openai_error_set(error, 504, "server_error", NULL, "request_timeout",
                   "The request took longer than the server's limit of %g s (vlm serve "
                   "--request-timeout) and was cancelled.",
                   server->options.request_timeout_seconds);
}

static enum MHD_Result respond_status(vlm_server *server, struct MHD_Connection *connection,
                                      http_request *http, failure_stage stage, vlm_status status,
                                      const char *param) {
  openai_error error = {0};
  error_from_status(server, stage, status, param, &error);
  vlm_status_free(status);
  enum MHD_Result result = server_respond_error(server, connection, http, &error);
  openai_error_release(&error);
  return result;
}

static enum MHD_Result respond_and_release_error(vlm_server *server, struct MHD_Connection *connection,
                                                 http_request *http, openai_error *error) {
  enum MHD_Result result = server_respond_error(server, connection, http, error);
  openai_error_release(error);
  return result;
}

/* ------------------------------------------------------------------------ */
/* Preparing a request                                                       */
/* ------------------------------------------------------------------------ */

/* logit_bias and stop_token_ids name ids of this model's vocabulary. */
static bool check_token_ids(const vlm_engine_info *info, const openai_request *request, openai_error *error) {
  for (size_t i = 0; i < request->logit_bias_count; i++) {
    if (request->logit_bias[i].token < info->vocab_size) continue;
    char param[64];
    snprintf(param, sizeof(param), "logit_bias.%d", request->logit_bias[i].token);
    openai_error_set(error, 400, "invalid_request_error", param, NULL,
                     "Invalid value for '%s': token id %d is outside the vocabulary of %lld tokens.", param,
                     request->logit_bias[i].token, (long long)info->vocab_size);
    return false;
  }
  for (size_t i = 0; i < request->stop_token_id_count; i++) {
    if (request->stop_token_ids[i] < info->vocab_size) continue;
    char param[64];
    snprintf(param, sizeof(param), "stop_token_ids[%zu]", i);
    openai_error_set(error, 400, "invalid_request_error", param, NULL,
                     "Invalid value for '%s': token id %d is outside the vocabulary of %lld tokens.", param,
                     request->stop_token_ids[i], (long long)info->vocab_size);
    return false;
  }
  return true;
}

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
  if (request->n > 1 && request->tool_format) { /* tool-call parsing is per answer (one stream of calls) */
    openai_error_set(error, 400, "invalid_request_error", "n", NULL,
                     "n > 1 together with tools is not supported by this server; send one request per choice.");
    return false;
  }
  if (request->n > info->slot_count) {
    openai_error_set(error, 400, "invalid_request_error", "n", NULL,
                     "n is %d but the server runs %d slot(s) (vlm serve --parallel); each choice needs a slot.",
                     request->n, info->slot_count);
    return false;
  }
  if (!check_token_ids(info, request, error)) return false;
  for (int64_t i = 0; i < request->prompt_id_count; i++) {
    if (request->prompt_ids[i] < info->vocab_size) continue;
    char param[64];
    snprintf(param, sizeof(param), "prompt[%lld]", (long long)i);
    openai_error_set(error, 400, "invalid_request_error", param, NULL,
                     "Invalid value for '%s': token id %d is outside the vocabulary of %lld tokens.", param,
                     request->prompt_ids[i], (long long)info->vocab_size);
    return false;
  }
  /* A template that prints content as one string gets a message with
   * media parts as the model's placeholders before its text (the engine's
   * prompt builder, as vLLM's "string" content format). */
  return true;
}

/* input_audio.format names the container; the bytes must be one. */
static bool check_audio_format(const openai_media *media, const uint8_t *bytes, size_t length, openai_error *error) {
  if (!media->audio_format) return true; /* audio_url: the data URL's type was checked */
  vlm_audio_format sniffed = vlm_audio_format_sniff(bytes, length);
  static const struct {
    const char *name;
    vlm_audio_format format;
  } formats[] = {{"wav", VLM_AUDIO_FORMAT_WAV}, {"flac", VLM_AUDIO_FORMAT_FLAC},
                 {"ogg", VLM_AUDIO_FORMAT_OGG_VORBIS}, {"mp3", VLM_AUDIO_FORMAT_MP3}};
  for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
    if (strcmp(media->audio_format, formats[i].name) == 0 && (sniffed == formats[i].format || !sniffed))
      return true; /* unknown bytes: the decoder names what they are */
  openai_error_set(error, 400, "invalid_request_error", media->param, NULL,
                   "%s: input_audio.format is '%s' but the data is %s audio.", media->param, media->audio_format,
                   vlm_audio_format_name(sniffed));
  return false;
}

/* The encoded bytes of one audio part: input_audio's base64, or the
 * audio_url under the server's media policy. */
static bool fetch_audio(vlm_server *server, const openai_media *media, const atomic_bool *cancel, uint8_t **bytes,
                        size_t *length, openai_error *error) {
  bool fetched = media->audio_data
                     ? media_source_decode_base64(&server->media, media->audio_data, media->param, bytes, length, error)
                     : media_source_fetch_audio(&server->media, media->url, media->param, cancel, bytes, length, error);
  if (fetched && !check_audio_format(media, *bytes, *length, error)) {
    free(*bytes);
    *bytes = NULL;
    return false;
  }
  return fetched;
}

/* A media part fetched but not decoded yet: admission counts an image
 * from its header first. */
typedef struct fetched_media {
  const openai_media *media;
  uint8_t *bytes;
  size_t length;
  int64_t tokens;  /* a clip's positions by its header */
  uint64_t reserve_bytes; /* its share of the media budget, by its header */
} fetched_media;

static vlm_audio_limits audio_limits(const vlm_server *server) {
  return (vlm_audio_limits){.max_encoded_bytes = server->media.max_bytes,
                            .max_seconds = server->options.max_audio_seconds};
}

/* Fetches every part's bytes (in request order) and reads each image's
 * and clip's header: limits and token count, nothing decoded (a clip's
 * count from the duration its header states; fetched[i].tokens). On
 * failure answers nothing: fills *error or *out_status. */
static bool fetch_media(vlm_server *server, const openai_request *request, const atomic_bool *cancel,
                        fetched_media *fetched, int64_t *image_tokens, int *out_image_count,
                        int64_t *audio_tokens, openai_error *error, vlm_status *out_status, const char **out_param) {
  *out_image_count = 0;
  int clips = 0;
  vlm_audio_limits limits = audio_limits(server);
  for (size_t i = 0; i < request->media_count; i++) {
    const openai_media *media = &request->media[i];
    bool image = media->kind == OPENAI_MEDIA_IMAGE;
    fetched[i].media = media;
    if (image ? !media_source_fetch(&server->media, media->url, media->param, cancel, &fetched[i].bytes,
                                    &fetched[i].length, error)
              : !fetch_audio(server, media, cancel, &fetched[i].bytes, &fetched[i].length, error))
      return false;
    if (!image) {
      vlm_engine_audio_header header;
      vlm_status status = vlm_engine_read_audio_header(server->engine, fetched[i].bytes, fetched[i].length,
                                                       media->param, &limits, &header);
      if (status) {
        *out_status = status;
        *out_param = media->param;
        return false;
      }
      fetched[i].tokens = audio_tokens[clips++] = header.tokens;
      fetched[i].reserve_bytes = header.reserve_bytes;
      continue;
    }
    vlm_engine_image_header header;
    vlm_status status = vlm_engine_read_image_header(server->engine, fetched[i].bytes, fetched[i].length,
                                                     media->param, &header);
    if (status) {
      *out_status = status;
      *out_param = media->param;
      return false;
    }
    image_tokens[(*out_image_count)++] = header.tokens;
    fetched[i].reserve_bytes = header.reserve_bytes;
  }
  return true;
}

/* Decodes and preprocesses the fetched parts, images into `images` and
 * clips into `audio` (each kind in placeholder order), once the request
 * passed admission. On failure answers nothing: fills *out_status. */
/* `room`: the positions admission left beyond the headers' counts; a clip
 * may take its header's count plus what the clips before it left of that
 * (its decode stops there). */
static bool load_media(vlm_server *server, const fetched_media *fetched, size_t count, int64_t room,
                       const atomic_bool *cancel, vlm_loaded_image *images, int *out_image_count,
                       vlm_loaded_audio *audio, int *out_audio_count, vlm_status *out_status,
                       const char **out_param) {
  *out_image_count = *out_audio_count = 0;
  vlm_audio_limits limits = audio_limits(server);
  /* The whole request's share of the media budget at once: a request
   * never holds part of it while it waits for more. */
  uint64_t total = 0;
  for (size_t i = 0; i < count; i++)
    total = __builtin_add_overflow(total, fetched[i].reserve_bytes, &total) ? UINT64_MAX : total;
  vlm_media_reservation reservation;
  *out_status = vlm_engine_reserve_media(server->engine, total, cancel, "the request's media", &reservation);
  if (*out_status) {
    *out_param = NULL;
    return false;
  }
  bool ok = true;
  for (size_t i = 0; ok && i < count; i++) {
    const openai_media *media = fetched[i].media;
    bool image = media->kind == OPENAI_MEDIA_IMAGE;
    vlm_status status =
        image ? vlm_engine_load_image_memory_from(server->engine, fetched[i].bytes, fetched[i].length, media->param,
                                                  cancel, &reservation, &images[*out_image_count])
              : vlm_engine_load_audio_memory_within(server->engine, fetched[i].bytes, fetched[i].length,
                                                    media->param, &limits, fetched[i].tokens + room, cancel,
                                                    &reservation, &audio[*out_audio_count]);
    if (status) {
      *out_status = status;
      *out_param = media->param;
      ok = false;
      break;
    }
    if (image) {
      (*out_image_count)++;
    } else {
      int64_t over = audio[*out_audio_count].token_count - fetched[i].tokens;
      if (over > 0) room = over < room ? room - over : 0;
      (*out_audio_count)++;
    }
  }
  vlm_engine_release_media(server->engine, &reservation);
  return ok;
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

/* Whether any choice's wait hit the deadline (it cancels every choice). */
static bool any_timed_out(completion *answer) {
  for (size_t i = 0; i < answer->choice_count; i++)
    if (choice_events(answer, i)->timed_out) return true;
  return false;
}

static openai_error choice_error(completion *answer, const request_events *events) {
  openai_error error = {0};
  if (events->out_of_memory)
    openai_error_set(&error, 500, "server_error", NULL, NULL, "The server ran out of memory.");
  else if (events->finish_code == VLM_STATUS_CANCELLED && any_timed_out(answer))
    set_timed_out(answer->server, answer->http, &error);
  else if (events->finish_code == VLM_STATUS_CANCELLED)
    set_cancelled(answer->server, events->finish_message ? events->finish_message : "cancelled", &error);
  else
    openai_error_set(&error, 500, "server_error", NULL, NULL, "The model failed: %s",
                     events->finish_message ? events->finish_message : vlm_status_code_name(events->finish_code));
  return error;
}

static openai_error finish_error(completion *answer) { return choice_error(answer, &answer->events); }

/* The answer's usage: each prompt once, every choice's completion. */
static vlm_engine_usage answer_usage(completion *answer) {
  const request_events *events[OPENAI_MAX_ANSWER_CHOICES];
  size_t count = answer->choice_count <= OPENAI_MAX_ANSWER_CHOICES ? answer->choice_count : 1;
  for (size_t i = 0; i < count; i++) events[i] = choice_events(answer, i);
  return response_sum_usage(events, count, answer->n);
}

static void record_usage(completion *answer) {
  vlm_engine_usage usage = answer_usage(answer);
  answer->http->prompt_tokens = usage.prompt_tokens;
  answer->http->completion_tokens = usage.completion_tokens;
}

static bool choice_failed(const request_events *events) {
  return events->finish_code != VLM_STATUS_OK || events->out_of_memory;
}

/* The whole answer of several choices: waits for each in turn (they run
 * together), then one object with every choice, or the first failure. */
static enum MHD_Result answer_whole_choices(completion *answer) {
  vlm_server *server = answer->server;
  const request_events *events[OPENAI_MAX_ANSWER_CHOICES];
  const request_events *failed = NULL;
  for (size_t i = 0; i < answer->choice_count; i++) {
    request_events *choice = choice_events(answer, i);
    if (request_events_wait(choice, SIZE_MAX, answer->connection) == WAIT_CLIENT_GONE) {
      note_client_gone(answer);
      completion_destroy(answer);
      return MHD_NO; /* closes the connection; every choice is cancelled */
    }
    events[i] = choice;
    if (!failed && choice_failed(choice)) failed = choice;
  }
  record_usage(answer);
  enum MHD_Result result;
  if (!failed) {
    result = server_respond(server, answer->connection, answer->http, 200, "application/json",
                            response_completion_choices(&answer->header, events, answer->choice_count, answer->n,
                                                        answer->logprobs));
  } else {
    openai_error error = choice_error(answer, failed);
    result = respond_and_release_error(server, answer->connection, answer->http, &error);
  }
  completion_destroy(answer);
  return result;
}

static enum MHD_Result answer_whole(completion *answer) {
  if (answer->choice_count > 1) return answer_whole_choices(answer);
  vlm_server *server = answer->server;
  if (request_events_wait(&answer->events, SIZE_MAX, answer->connection) == WAIT_CLIENT_GONE) {
    note_client_gone(answer);
    completion_destroy(answer);
    return MHD_NO; /* closes the connection */
  }
  record_usage(answer);
  enum MHD_Result result;
  if (answer->events.finish_code == VLM_STATUS_OK && !answer->events.out_of_memory) {
    char *body = response_completion_tools(&answer->header, &answer->events, answer->logprobs, answer->tool_format);
    result = server_respond(server, answer->connection, answer->http, 200, "application/json", body);
  } else {
    openai_error error = finish_error(answer);
    result = respond_and_release_error(server, answer->connection, answer->http, &error);
  }
  completion_destroy(answer);
  return result;
}

/* One token's text through the stream's reasoning split (NULL: the end
 * of the completion, flushing what was held back). */
static void append_split_token(completion *answer, reasoning_split *split, const event_token *token) {
  vlm_string_builder reasoning = {0}, content = {0};
  if (token)
    reasoning_split_push(split, token->text, token->text_length, &reasoning, &content);
  else
    reasoning_split_finish(split, &reasoning, &content);
  response_append_split_chunk(&answer->pending, &answer->header, token, &reasoning, &content, answer->logprobs);
  if (reasoning.failed || content.failed) answer->pending.failed = true;
  vlm_sb_release(&reasoning);
  vlm_sb_release(&content);
}

/* One token's text through the reasoning split (with a reasoning parser),
 * then the content part through the tool-call stream: reasoning streams
 * as it comes, content only where it cannot be part of a call (vLLM's
 * order: the tool parser reads what the reasoning parser calls content).
 * NULL token: the end of the completion. */
static void append_tools_token(completion *answer, const event_token *token) {
  vlm_string_builder reasoning = {0}, raw = {0}, content = {0};
  if (answer->splitting) {
    if (token)
      reasoning_split_push(&answer->split, token->text, token->text_length, &reasoning, &raw);
    else
      reasoning_split_finish(&answer->split, &reasoning, &raw);
  } else if (token) {
    vlm_sb_append(&raw, token->text, token->text_length);
  }
  if (raw.length) tool_stream_push(&answer->tools, raw.data, raw.length, &content);
  response_append_split_chunk(&answer->pending, &answer->header, token, &reasoning, &content, answer->logprobs);
  if (reasoning.failed || raw.failed || content.failed) answer->pending.failed = true;
  vlm_sb_release(&reasoning);
  vlm_sb_release(&raw);
  vlm_sb_release(&content);
}

/* The end of a stream parsed for tool calls: what the reasoning split
 * held, the held content that is not a call, and the calls' chunks.
 * Whether there were calls. */
static bool finish_tools_stream(completion *answer) {
  append_tools_token(answer, NULL);
  vlm_string_builder content = {0};
  tool_calls_result calls = {0};
  if (!tool_stream_finish(&answer->tools, &content, &calls)) answer->pending.failed = true;
  if (answer->header.single_tool_call) tool_calls_keep_first(&calls, 1);
  if (content.length) {
    event_token piece = {.text = content.data, .text_length = content.length, .token = -1};
    response_append_token_chunk(&answer->pending, &answer->header, &piece, false);
  }
  response_append_tool_call_chunks(&answer->pending, &answer->header, &calls);
  bool any = calls.count > 0;
  tool_calls_result_release(&calls);
  vlm_sb_release(&content);
  return any;
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
  /* The latest progress only: chunks that came while the reader was busy
   * are outdated by it. */
  if (events->wake_on_progress && events->progress_count > events->progress_seen) {
    events->progress_seen = events->progress_count;
    response_append_progress_chunk(&answer->pending, &answer->header, &events->progress);
  }
  for (; answer->tokens_sent < events->token_count; answer->tokens_sent++) {
    const event_token *token = &events->tokens[answer->tokens_sent];
    if (answer->tool_format) {
      append_tools_token(answer, token);
      continue;
    }
    if (answer->splitting)
      append_split_token(answer, &answer->split, token);
    else if (token->text_length || (answer->logprobs && token->has_logprob))
      response_append_token_chunk(&answer->pending, &answer->header, token, answer->logprobs);
  }
  bool finished = events->finished;
  pthread_mutex_unlock(&events->mutex);
  if (!finished) return true;
  record_usage(answer);
  if (events->finish_code == VLM_STATUS_OK && !events->out_of_memory) {
    const char *finish_reason = events->finish_reason;
    if (answer->tool_format) {
      if (finish_tools_stream(answer) && strcmp(finish_reason, "stop") == 0) finish_reason = "tool_calls";
    } else if (answer->splitting) {
      append_split_token(answer, &answer->split, NULL); /* what the parser held back */
    }
    response_append_finish_chunk(&answer->pending, &answer->header, finish_reason, events);
    if (answer->include_usage) response_append_usage_chunk(&answer->pending, &answer->header, &events->usage);
    response_append_done(&answer->pending);
  } else {
    /* Headers (200) are gone already: report in the stream, then close. */
    openai_error error = finish_error(answer);
    vlm_log(error.http_status >= 500 && error.http_status != 503 ? VLM_LOG_WARN : VLM_LOG_INFO,
            "serve: request %s: the stream ends with an error event, %d %s: %.240s", events->log_id,
            error.http_status, error.code ? error.code : error.type, error.message ? error.message : "");
    response_append_error_event(&answer->pending, &error);
    openai_error_release(&error);
  }
  answer->done = true;
  return true;
}

/* A choice's stream state: choice 0's lives in the completion. */
typedef struct choice_stream {
  request_events *events;
  size_t *tokens_sent;
  bool *finish_sent;
  bool splitting;
  reasoning_split *split;
} choice_stream;

static choice_stream stream_of(completion *answer, size_t choice) {
  if (!choice)
    return (choice_stream){&answer->events, &answer->tokens_sent, &answer->finish_sent, answer->splitting,
                           &answer->split};
  extra_choice *extra = &answer->extra[choice - 1];
  return (choice_stream){&extra->events, &extra->tokens_sent, &extra->finish_sent, extra->splitting, &extra->split};
}

/* The new tokens of one choice as chunks with its index, and its finish
 * chunk once it finished. False when it failed: the stream then ends
 * with its error event. Under the choice's queue lock. */
static bool produce_choice(completion *answer, size_t choice) {
  choice_stream stream = stream_of(answer, choice);
  request_events *events = stream.events;
  answer->header.choice_index = (int32_t)choice;
  pthread_mutex_lock(&events->mutex);
  if (!choice && events->wake_on_progress && events->progress_count > events->progress_seen) {
    events->progress_seen = events->progress_count;
    response_append_progress_chunk(&answer->pending, &answer->header, &events->progress);
  }
  for (; *stream.tokens_sent < events->token_count; (*stream.tokens_sent)++) {
    const event_token *token = &events->tokens[*stream.tokens_sent];
    if (stream.splitting)
      append_split_token(answer, stream.split, token);
    else if (token->text_length || (answer->logprobs && token->has_logprob))
      response_append_token_chunk(&answer->pending, &answer->header, token, answer->logprobs);
  }
  bool finished = events->finished;
  pthread_mutex_unlock(&events->mutex);
  if (!finished || *stream.finish_sent) return true;
  if (choice_failed(events)) return false;
  if (stream.splitting) append_split_token(answer, stream.split, NULL);
  response_append_finish_chunk(&answer->pending, &answer->header, events->finish_reason, events);
  *stream.finish_sent = true;
  return true;
}

/* produce_events for several choices: waits on the first choice still
 * running (they decode in one batch, so any news comes with its next
 * token), then turns every choice's news into chunks; after the last
 * finish, the summed usage and [DONE]. */
static bool produce_choices_events(completion *answer) {
  size_t waiting = 0;
  while (waiting < answer->choice_count && *stream_of(answer, waiting).finish_sent) waiting++;
  if (waiting < answer->choice_count) {
    choice_stream stream = stream_of(answer, waiting);
    if (request_events_wait(stream.events, *stream.tokens_sent, answer->connection) == WAIT_CLIENT_GONE) {
      note_client_gone(answer);
      return false;
    }
  }
  bool all_sent = true;
  for (size_t i = 0; i < answer->choice_count; i++) {
    if (!produce_choice(answer, i)) {
      record_usage(answer);
      openai_error error = choice_error(answer, choice_events(answer, i));
      vlm_log(VLM_LOG_INFO, "serve: request %s: choice %zu ends the stream with an error event, %d: %.240s",
              answer->events.log_id, i, error.http_status, error.message ? error.message : "");
      response_append_error_event(&answer->pending, &error);
      openai_error_release(&error);
      answer->done = true;
      return true;
    }
    all_sent = all_sent && *stream_of(answer, i).finish_sent;
  }
  answer->header.choice_index = 0;
  if (!all_sent) return true;
  record_usage(answer);
  if (answer->include_usage) {
    vlm_engine_usage usage = answer_usage(answer);
    response_append_usage_chunk(&answer->pending, &answer->header, &usage);
  }
  response_append_done(&answer->pending);
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
    bool produced = answer->choice_count > 1 ? produce_choices_events(answer) : produce_events(answer);
    if (!produced) return MHD_CONTENT_READER_END_WITH_ERROR;
  }
}

/* Runs once libmicrohttpd is done with the response: sent, failed, or the
 * connection closed (after the completion notification: answer->http is
 * gone). A stream that did not reach its end lost its client. */
static void free_stream(void *context) {
  completion *answer = context;
  if (!answer->done || answer->pending_offset < answer->pending.length) note_client_gone(answer);
  completion_destroy(answer);
}

static enum MHD_Result answer_stream(completion *answer) {
  for (size_t i = 0; i < answer->choice_count; i++) { /* each choice's first chunks, sent at once */
    answer->header.choice_index = (int32_t)i;
    if (answer->header.endpoint == OPENAI_CHAT_COMPLETIONS)
      response_append_role_chunk(&answer->pending, &answer->header);
    response_append_echo_chunk(&answer->pending, &answer->header);
  }
  answer->header.choice_index = 0;
  answer->http->stream = true;
  struct MHD_Response *response =
      MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, read_stream, answer, free_stream);
  if (!response) {
    completion_destroy(answer);
    return MHD_NO;
  }
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
  MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
  MHD_add_response_header(response, "X-Accel-Buffering", "no"); /* proxies: do not buffer */
  enum MHD_Result result = server_queue_response(answer->server, answer->connection, answer->http,
                                                 MHD_HTTP_OK, response);
  MHD_destroy_response(response); /* libmicrohttpd keeps its reference; free_stream frees `answer` */
  return result;
}

static vlm_engine_request_options request_options(const vlm_server *server, const openai_request *request,
                                                  vlm_loaded_image *images, int image_count, vlm_loaded_audio *audio,
                                                  int audio_count) {
  vlm_engine_request_options options = {
      .messages_json = request->endpoint == OPENAI_CHAT_COMPLETIONS ? request->messages_json : NULL,
      .raw_prompt = request->endpoint == OPENAI_COMPLETIONS ? request->prompt : NULL,
      .prompt_ids = request->prompt_ids,
      .prompt_id_count = request->prompt_id_count,
      .images = images,
      .image_count = image_count,
      .audio = audio,
      .audio_count = audio_count,
      .max_tokens = request->max_tokens,
      .sampling = merge_sampling(server, request),
      .logprobs = request->logprobs,
      .stop = (const char *const *)request->stop,
      .stop_count = request->stop_count,
      .grammar = request->grammar,
      /* for the stream's prompt_progress, and the log's line per chunk */
      .progress = request->return_progress || vlm_log_get_level() <= VLM_LOG_INFO,
      .chat_template_kwargs_json = request->chat_template_kwargs_json,
      .no_generation_prompt = request->no_generation_prompt,
      .continue_final_message = request->continue_final_message,
      .min_tokens = request->min_tokens,
      .ignore_eos = request->ignore_eos,
      .stop_token_ids = request->stop_token_ids,
      .stop_token_id_count = request->stop_token_id_count,
      .keep_special_tokens = request->keep_special_tokens,
      .logit_bias = request->logit_bias,
      .logit_bias_count = request->logit_bias_count,
      .n = request->n,
  };
  return options;
}

/* Chat answers with a reasoning parser start from how the prompt ends
 * (a template may open the thinking block itself). */
static vlm_status start_reasoning_split(const vlm_server *server, const openai_request *request, completion *answer) {
  if (server->reasoning == REASONING_OFF || request->endpoint != OPENAI_CHAT_COMPLETIONS) return VLM_OK;
  VLM_RETURN_IF_ERROR(vlm_engine_request_prompt_tail(answer->events.request, 4, &answer->prompt_tail));
  answer->header.reasoning = server->reasoning;
  answer->header.prompt_tail = answer->prompt_tail;
  reasoning_split_init(&answer->split, server->reasoning, answer->prompt_tail);
  answer->splitting = true;
  for (size_t i = 1; i < answer->choice_count; i++) { /* chat has one prompt: every choice starts there */
    reasoning_split_init(&answer->extra[i - 1].split, server->reasoning, answer->prompt_tail);
    answer->extra[i - 1].splitting = true;
  }
  return VLM_OK;
}

/* Several choices: one engine request per prompt with its n choices,
 * each routed to its choices' queues; the first choice's queue owns the
 * handle, the others borrow it (to cancel). `options` is prompt 0's. */
static vlm_status submit_choices(vlm_server *server, const openai_request *request, completion *answer,
                                 vlm_engine_request_options *options) {
  for (size_t p = 0; p < answer->router_count; p++) {
    if (p) {
      const openai_prompt *prompt = &request->more_prompts[p - 1];
      options->raw_prompt = prompt->text;
      options->prompt_ids = prompt->ids;
      options->prompt_id_count = prompt->id_count;
    }
    size_t first = p * (size_t)answer->n;
    request_events *owner = choice_events(answer, first);
    VLM_RETURN_IF_ERROR(vlm_engine_submit(server->engine, options, choice_router_callback, &answer->routers[p],
                                          &owner->request));
    for (int32_t i = 1; i < answer->n; i++) {
      request_events *borrower = choice_events(answer, first + (size_t)i);
      borrower->request = owner->request;
      borrower->request_borrowed = true;
    }
  }
  return VLM_OK;
}

/* Submits the prepared request; images and clips pass to the engine
 * either way. */
static enum MHD_Result submit_and_answer(vlm_server *server, struct MHD_Connection *connection,
                                         const openai_request *request, completion *answer,
                                         vlm_loaded_image *images, int image_count, vlm_loaded_audio *audio,
                                         int audio_count) {
  vlm_engine_request_options options = request_options(server, request, images, image_count, audio, audio_count);
  vlm_status status = answer->choice_count > 1
                          ? submit_choices(server, request, answer, &options)
                          : vlm_engine_submit(server->engine, &options, request_events_callback, &answer->events,
                                              &answer->events.request);
  if (!status) status = start_reasoning_split(server, request, answer);
  if (status) {
    http_request *http = answer->http;
    completion_destroy(answer);
    const char *param = request->endpoint == OPENAI_CHAT_COMPLETIONS ? "messages" : "prompt";
    return respond_status(server, connection, http, STAGE_SUBMIT, status, param);
  }
  return answer->stream ? answer_stream(answer) : answer_whole(answer);
}

/* Fetches the parts, admits the request with the images' token counts
 * from their headers (so one that cannot fit decodes nothing), then
 * decodes them, under the guard's watch: a client that leaves, or the
 * request's deadline, sets the cancel flag that the fetch and the decoders
 * poll. Answers nothing; false with *error, or *status and its *stage. */
static bool prepare_media(vlm_server *server, const openai_request *request, completion *answer,
                          vlm_loaded_image *images, int *image_count, vlm_loaded_audio *audio, int *audio_count,
                          openai_error *error, vlm_status *status, failure_stage *stage, const char **param) {
  *image_count = *audio_count = 0;
  size_t count = request->media_count;
  if (!count) return true;
  fetched_media *fetched = calloc(count, sizeof(*fetched));
  int64_t *tokens = calloc(count, sizeof(*tokens)), *clip_tokens = calloc(count, sizeof(*clip_tokens));
  if (!fetched || !tokens || !clip_tokens) {
    free(fetched), free(tokens), free(clip_tokens);
    *status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    return false;
  }
  guarded_connection *guarded = answer->http->guarded;
  guarded_connection_watch(guarded, &answer->watch);
  const atomic_bool *cancel = &answer->events.cancel;
  int header_count = 0;
  *stage = STAGE_IMAGE;
  bool ok = fetch_media(server, request, cancel, fetched, tokens, &header_count, clip_tokens, error, status, param);
  int64_t room = 0;
  if (ok) {
    int clips = (int)count - header_count;
    vlm_engine_request_options check = request_options(server, request, NULL, header_count, NULL, clips);
    check.audio_tokens = clip_tokens;
    *status = vlm_engine_check_admission_room(server->engine, &check, tokens, &room);
    if (*status) {
      *stage = STAGE_SUBMIT;
      *param = request->endpoint == OPENAI_CHAT_COMPLETIONS ? "messages" : "prompt";
      ok = false;
    }
  }
  if (ok)
    ok = load_media(server, fetched, count, room, cancel, images, image_count, audio, audio_count, status, param);
  guarded_connection_watch(guarded, NULL);
  for (size_t i = 0; i < count; i++) free(fetched[i].bytes);
  free(fetched), free(tokens), free(clip_tokens);
  return ok;
}

/* Prepares one parsed request and answers it. */
static enum MHD_Result handle_request(vlm_server *server, struct MHD_Connection *connection,
                                      http_request *http, openai_request *request) {
  openai_error error = {0};
  if (!check_request(server, request, &error))
    return respond_and_release_error(server, connection, http, &error);
  if (request->echo_prompt_ids) {
    /* echo of a token prompt: its text */
    char *text = NULL;
    size_t length = 0;
    vlm_status status = vlm_engine_detokenize(server->engine, request->prompt_ids, (size_t)request->prompt_id_count,
                                              &text, &length);
    if (status) return respond_status(server, connection, http, STAGE_SUBMIT, status, "prompt");
    free(request->echo_text);
    request->echo_text = text;
  }
  completion *answer = completion_create(server, connection, http, request);
  vlm_loaded_image *images = request->media_count ? calloc(request->media_count, sizeof(*images)) : NULL;
  vlm_loaded_audio *audio = request->media_count ? calloc(request->media_count, sizeof(*audio)) : NULL;
  if (!answer || (request->media_count && (!images || !audio))) {
    if (answer) completion_destroy(answer);
    free(images);
    free(audio);
    return server_respond(server, connection, http, 500, "application/json", NULL);
  }
  int image_count = 0, audio_count = 0;
  vlm_status status = VLM_OK;
  failure_stage stage = STAGE_IMAGE;
  const char *param = NULL;
  if (!prepare_media(server, request, answer, images, &image_count, audio, &audio_count, &error, &status, &stage,
                     &param)) {
    for (int i = 0; i < image_count; i++) vlm_loaded_image_release(&images[i]);
    for (int i = 0; i < audio_count; i++) vlm_loaded_audio_release(&audio[i]);
    free(images);
    free(audio);
    bool gone = atomic_load(&answer->watch.client_gone), timed_out = atomic_load(&answer->watch.timed_out);
    if (gone) note_client_gone(answer);
    completion_destroy(answer);
    if (gone) {
      vlm_status_free(status);
      openai_error_release(&error);
      return MHD_NO; /* nobody to answer: close */
    }
    if (timed_out) {
      vlm_status_free(status);
      openai_error_release(&error);
      set_timed_out(server, http, &error);
      return respond_and_release_error(server, connection, http, &error);
    }
    if (status) return respond_status(server, connection, http, stage, status, param);
    return respond_and_release_error(server, connection, http, &error);
  }
  enum MHD_Result result =
      submit_and_answer(server, connection, request, answer, images, image_count, audio, audio_count);
  free(images); /* their entries went to the engine */
  free(audio);
  return result;
}

/* vLLM's warning for the fields it ignored (vlm serve --accept-unknown-fields). */
static void log_ignored_fields(const http_request *http, const openai_request *request) {
  if (!request->ignored_field_count) return;
  char names[1024];
  size_t used = 0;
  names[0] = '\0';
  for (size_t i = 0; i < request->ignored_field_count && used < sizeof(names); i++)
    used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "", request->ignored_fields[i]);
  vlm_log(VLM_LOG_WARN, "serve: request %s: the following fields were present in the request but ignored: %s%s",
          http->id, names, request->ignored_field_count >= OPENAI_MAX_IGNORED_FIELDS ? ", ..." : "");
}

enum MHD_Result chat_handle(vlm_server *server, struct MHD_Connection *connection,
                            http_request *http, openai_endpoint endpoint) {
  openai_request request;
  memset(&request, 0, sizeof(request));
  openai_error error = {0};
  openai_parse_options options = {.content_format = server->content_format,
                                  .accept_unknown_fields = server->options.accept_unknown_fields,
                                  .tool_format = server->tool_format};
  if (!openai_request_parse(endpoint, http->body ? http->body : "", http->length, &options, &request,
                            &error)) {
    openai_request_release(&request);
    return respond_and_release_error(server, connection, http, &error);
  }
  log_ignored_fields(http, &request);
  enum MHD_Result result = handle_request(server, connection, http, &request);
  openai_request_release(&request);
  return result;
}
