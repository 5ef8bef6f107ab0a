/* The scheduler thread: continuous batching over the engine's slots.
 *
 * One iteration:
 *   1. admit queued requests into free slots (first come, first served),
 *      and retire cancelled ones;
 *   2. run at most ONE prefill chunk, for the oldest slot still in prefill
 *      (when it starts, the longest prefix the prefix cache has is copied in
 *      and its media items there are skipped, engine_cache.c; then its
 *      vision encode, when it has images left) -- this bounds how long
 *      a new prompt can hold up running streams; while any slot is decoding
 *      the chunk is the shorter decoding_prefill_chunk;
 *   3. run one batched decode step for every slot that has a token to feed,
 *      then sample each slot's next token and deliver its events.
 * Every call into the text model, the vision model and the sampler happens
 * on this thread; callers only touch the queue (under engine->mutex). */
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/status.h"
#include "engine/engine_internal.h"

/* ---------------------------------------------------------------------- */
/* Slot lifecycle                                                          */
/* ---------------------------------------------------------------------- */

/* Prompt positions of the expanded sequence, by modality. */
static vlm_engine_usage request_usage(const vlm_engine_request *request) {
  const engine_prompt *prompt = &request->prompt;
  return (vlm_engine_usage){.prompt_tokens = prompt->count,
                            .prompt_image_tokens = prompt->media_tokens[VLM_MEDIA_IMAGE],
                            .prompt_audio_tokens = prompt->media_tokens[VLM_MEDIA_AUDIO],
                            .prompt_video_tokens = prompt->media_tokens[VLM_MEDIA_VIDEO]};
}

/* The request's adapter, as the family chooses it from the kinds of media
 * the request carries, and its prompt length, on the decoder's slot. */
static vlm_status begin_on_decoder(vlm_engine *engine, engine_slot *slot) {
  const vlm_engine_request *request = slot->request;
  const vlm_family *family = engine->model->family;
  int32_t adapter = -1;
  if (family && family->adapter_for) {
    bool image = false, audio = false;
    for (int i = 0; i < request->item_count; i++) {
      image = image || request->items[i].kind == VLM_MEDIA_IMAGE;
      audio = audio || request->items[i].kind == VLM_MEDIA_AUDIO;
    }
    adapter = family->adapter_for(image, audio);
    /* An adapter the directory lacks: the base model, as Transformers runs
     * without it loaded. */
    if (adapter >= 0 && (adapter >= engine->model->adapter_count || !engine->model->adapters[adapter].module_count))
      adapter = -1;
  }
  const vlm_text_decoder_operations *decoder = engine->decoder->operations;
  memset(slot->kv_variant, 0, sizeof(slot->kv_variant));
  if (!decoder->begin_request)
    return adapter < 0 ? VLM_OK
                       : VLM_ERROR(UNIMPLEMENTED, "the %s text decoder does not apply LoRA adapters", decoder->backend);
  VLM_RETURN_IF_ERROR(decoder->begin_request(engine->decoder->self, slot->index, adapter, request->prompt.count));
  if (decoder->kv_variant) decoder->kv_variant(engine->decoder->self, slot->index, slot->kv_variant);
  return VLM_OK;
}

/* logit_bias, and min_tokens over every id that could end the completion
 * (vLLM masks all of them, the EOS ids even with ignore_eos). */
static vlm_status start_controls(vlm_engine *engine, engine_slot *slot) {
  const vlm_engine_request *request = slot->request;
  if (request->logit_bias_count)
    VLM_RETURN_IF_ERROR(vlm_sampler_set_logit_bias(slot->sampler, request->logit_bias, request->logit_bias_count));
  if (request->min_tokens <= 0) return VLM_OK;
  int32_t ids[ENGINE_MAX_STOP_TOKENS + ENGINE_MAX_STOP_TOKEN_IDS];
  size_t count = 0;
  for (int i = 0; i < engine->stop_token_count; i++) ids[count++] = engine->stop_tokens[i];
  for (size_t i = 0; i < request->stop_token_id_count; i++) ids[count++] = request->stop_token_ids[i];
  return vlm_sampler_set_min_tokens(slot->sampler, ids, count, request->min_tokens);
}

static vlm_status slot_start(vlm_engine *engine, engine_slot *slot) {
  vlm_engine_request *request = slot->request;
  /* Admission bounded max_tokens by the capacity; checked again here
   * because a wrapped size would be a buffer overrun, not an error. */
  size_t bytes = 0;
  if (request->max_tokens >= INT64_MAX || !vlm_array_bytes(request->max_tokens + 1, sizeof(int32_t), &bytes))
    return VLM_ERROR(INTERNAL, "max_tokens %lld cannot be allocated", (long long)request->max_tokens);
  slot->completion = malloc(bytes);
  if (!slot->completion) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  /* Choice i samples with seed + i (vLLM's parallel sampling): choice 0
   * is the n = 1 completion, and every choice is reproducible. */
  vlm_sampling_params sampling = request->sampling;
  sampling.seed += (uint64_t)slot->choice;
  VLM_RETURN_IF_ERROR(vlm_sampler_create(&sampling, (int32_t)engine->vocab_size, NULL, &slot->sampler));
  vlm_sampler_set_logprobs(slot->sampler, request->logprobs);
  VLM_RETURN_IF_ERROR(vlm_sampler_add_prompt(slot->sampler, request->prompt.ids, request->prompt.count));
  VLM_RETURN_IF_ERROR(start_controls(engine, slot));
  VLM_RETURN_IF_ERROR(vlm_detokenizer_create(engine->tokenizer, !request->keep_special_tokens, &slot->detokenizer));
  if (request->stop_count)
    VLM_RETURN_IF_ERROR(vlm_stop_matcher_create((const char *const *)request->stop, request->stop_count,
                                                &slot->stop_matcher));
  if (request->grammar) VLM_RETURN_IF_ERROR(engine_grammar_attach(engine, slot));
  VLM_RETURN_IF_ERROR(engine_decoder_clear_slot(engine, slot->index));
  return begin_on_decoder(engine, slot);
}

/* Frees what the request left in the slot besides its KV (SPEC 3.6;
 * slot_finish clears the KV first). */
static void slot_clear(engine_slot *slot) {
  vlm_sampler_release(slot->sampler);
  vlm_detokenizer_release(slot->detokenizer);
  vlm_stop_matcher_release(slot->stop_matcher);
  engine_grammar_detach(slot);
  vlm_sb_release(&slot->streamed);
  free(slot->features);
  free(slot->completion);
  int32_t index = slot->index;
  memset(slot, 0, sizeof(*slot));
  slot->index = index;
}

static void count_outcome(vlm_engine *engine, const vlm_engine_event *event) {
  vlm_engine_metrics *metrics = &engine->metrics;
  vlm_status_code code = vlm_status_code_of(event->status);
  if (code == VLM_STATUS_CANCELLED) metrics->requests_cancelled++;
  else if (code != VLM_STATUS_OK) metrics->requests_failed++;
  else if (strcmp(event->finish_reason, "stop") == 0) metrics->requests_finished_stop++;
  else metrics->requests_finished_length++;
  metrics->completion_tokens_total += (uint64_t)event->usage.completion_tokens;
}

/* The whole completion decoded at once, exactly as Transformers'
 * batch_decode gives it -- unless a stop string cut it, in which case the
 * streamed text (which ends before the stop string) is the answer. */
static char *final_text(vlm_engine *engine, engine_slot *slot, bool stopped_by_string, size_t *out_length) {
  if (!stopped_by_string) {
    char *exact = NULL;
    if (!vlm_tokenizer_decode(engine->tokenizer, slot->completion, (size_t)slot->completion_count,
                              !slot->request->keep_special_tokens, &exact,
                              out_length))
      return exact;
  }
  *out_length = slot->streamed.length;
  char *copy = malloc(slot->streamed.length + 1);
  if (copy) {
    if (slot->streamed.length) memcpy(copy, slot->streamed.data, slot->streamed.length);
    copy[slot->streamed.length] = '\0';
  }
  return copy;
}

/* Delivers FINISH, frees the slot and lets go of the request. `status` is
 * consumed. The counters and the KV are settled before the event goes out,
 * so a client that reads /metrics after its response sees its slot free. */
static void fail_waiting_choices(vlm_engine *engine, const vlm_engine_request *request, vlm_status status);

static void slot_finish(vlm_engine *engine, engine_slot *slot, vlm_status status, const char *finish_reason) {
  vlm_engine_request *request = slot->request;
  /* Choice 0 failing (or cancelled) before its prefill was copied leaves
   * the other choices nothing to start from: they end with it. */
  if (slot->choice == 0 && slot->phase == SLOT_PREFILL && request->choice_count > 1) fail_waiting_choices(engine, request, status);
  bool stopped_by_string = slot->stop_matcher && vlm_stop_matcher_matched(slot->stop_matcher) >= 0;
  vlm_engine_event event = {.kind = VLM_ENGINE_EVENT_FINISH, .choice = slot->choice, .status = status,
                            .finish_reason = finish_reason};
  char *text = status ? NULL : final_text(engine, slot, stopped_by_string, &event.full_text_length);
  if (!status && !text) status = event.status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  event.full_text = text ? text : "";
  event.completion_token_ids = slot->completion;
  event.usage = request_usage(request);
  event.usage.prompt_cached_tokens = slot->cached_rows;
  event.usage.completion_tokens = slot->completion_count;
  event.timings = slot->timings;
  event.timings.preprocess_seconds = request->preprocess_seconds;
  if (!status || vlm_status_code_of(status) == VLM_STATUS_CANCELLED) engine_prefix_keep(engine, slot);
  vlm_status_free(engine_decoder_clear_slot(engine, slot->index));
  pthread_mutex_lock(&engine->mutex);
  count_outcome(engine, &event);
  engine->active_slots--;
  engine->metrics.active_slots = engine->active_slots;
  for (int i = 0; i < request->item_count; i++)
    if (request->items[i].kind == VLM_MEDIA_IMAGE) engine->metrics.image_count_total++;
  engine->metrics.kv_positions_used -= slot->kv_positions_reported;
  pthread_mutex_unlock(&engine->mutex);
  engine_request_deliver(request, &event);
  free(text);
  pthread_mutex_lock(&engine->mutex);
  slot_clear(slot); /* under the lock: drain reads slot->request */
  pthread_cond_broadcast(&engine->changed);
  pthread_mutex_unlock(&engine->mutex);
  vlm_status_free(status);
  if (--request->choices_left == 0) engine_request_engine_done(request);
}

/* Ends the request's choices still waiting for choice 0's prefill, each
 * with a copy of `status` (not consumed). */
static void fail_waiting_choices(vlm_engine *engine, const vlm_engine_request *request, vlm_status status) {
  for (int32_t i = 0; i < engine->slot_count; i++) {
    engine_slot *other = &engine->slots[i];
    if (other->request != request || other->phase != SLOT_AWAIT_FORK) continue;
    vlm_status copy = status ? vlm_status_make(vlm_status_code_of(status), "%s", vlm_status_message(status))
                             : VLM_ERROR(INTERNAL, "the first choice ended before its prompt was prefilled");
    slot_finish(engine, other, copy, NULL);
  }
}

/* A queued request that never got a slot (cancelled or shutting down). */
static void finish_unadmitted(vlm_engine_request *request, vlm_status status) {
  vlm_engine_event event = {.kind = VLM_ENGINE_EVENT_FINISH, .status = status, .full_text = ""};
  event.usage = request_usage(request);
  event.timings.preprocess_seconds = request->preprocess_seconds;
  for (int32_t choice = 0; choice < request->choice_count; choice++) {
    event.choice = choice;
    engine_request_deliver(request, &event);
  }
  vlm_status_free(status);
  engine_request_engine_done(request);
}

/* ---------------------------------------------------------------------- */
/* Admission                                                               */
/* ---------------------------------------------------------------------- */

static engine_slot *free_slot(vlm_engine *engine) {
  for (int32_t i = 0; i < engine->slot_count; i++)
    if (engine->slots[i].phase == SLOT_FREE) return &engine->slots[i];
  return NULL;
}

static int32_t free_slot_count(const vlm_engine *engine) {
  int32_t count = 0;
  for (int32_t i = 0; i < engine->slot_count; i++) count += engine->slots[i].phase == SLOT_FREE;
  return count;
}

/* The request's choices after the first: slots that wait for its prefill. */
static void admit_later_choices(vlm_engine *engine, vlm_engine_request *request, double now) {
  for (int32_t choice = 1; choice < request->choice_count; choice++) {
    engine_slot *slot = free_slot(engine);
    slot->request = request;
    slot->choice = choice;
    slot->phase = SLOT_AWAIT_FORK;
    slot->admission_order = engine->next_admission++;
    slot->timings.queue_seconds = now - request->submit_time;
    engine->active_slots++;
  }
}

/* Under engine->mutex. Moves queued requests into free slots; returns the
 * queued requests that were cancelled (to be finished outside the lock). */
static vlm_engine_request *admit_locked(vlm_engine *engine, double now) {
  vlm_engine_request *cancelled = NULL, **cancelled_tail = &cancelled;
  vlm_engine_request **link = &engine->queue_head;
  engine->queue_tail = NULL;
  /* First come, first served: once a request with n choices does not fit
   * the free slots, nothing behind it overtakes it (it would starve). */
  bool blocked = false;
  while (*link) {
    vlm_engine_request *request = *link;
    bool cancel = atomic_load(&request->cancel_requested) || engine->stopping;
    blocked = blocked || (!cancel && free_slot_count(engine) < request->choice_count);
    engine_slot *slot = cancel || blocked ? NULL : free_slot(engine);
    if (!cancel && !slot) {
      engine->queue_tail = request;
      link = &request->next_in_queue;
      continue;
    }
    *link = request->next_in_queue;
    request->next_in_queue = NULL;
    engine->queue_length--;
    if (cancel) {
      *cancelled_tail = request;
      cancelled_tail = &request->next_in_queue;
      continue;
    }
    slot->request = request;
    slot->phase = SLOT_PREFILL;
    slot->admission_order = engine->next_admission++;
    slot->timings.queue_seconds = now - request->submit_time;
    engine->active_slots++;
    engine->metrics.prompt_tokens_total += (uint64_t)request->prompt.count;
    engine->metrics.preprocess_seconds_total += request->preprocess_seconds;
    admit_later_choices(engine, request, now);
  }
  engine->metrics.queue_depth = engine->queue_length;
  engine->metrics.active_slots = engine->active_slots;
  return cancelled;
}

/* KV positions in use, as the slots' lengths after this iteration. */
static void update_kv_metrics(vlm_engine *engine) {
  int64_t change = 0;
  for (int32_t i = 0; i < engine->slot_count; i++) {
    engine_slot *slot = &engine->slots[i];
    if (slot->phase == SLOT_FREE) continue;
    int64_t length = engine_decoder_slot_length(engine, i);
    change += length - slot->kv_positions_reported;
    slot->kv_positions_reported = length;
  }
  pthread_mutex_lock(&engine->mutex);
  engine->metrics.kv_positions_used += change;
  pthread_mutex_unlock(&engine->mutex);
}

/* ---------------------------------------------------------------------- */
/* Tokens                                                                  */
/* ---------------------------------------------------------------------- */

/* vLLM's check_stop: the model's EOS ids unless ignore_eos, and the
 * request's stop_token_ids. */
static bool is_stop_token(const vlm_engine *engine, const vlm_engine_request *request, int32_t token) {
  for (size_t i = 0; i < request->stop_token_id_count; i++)
    if (request->stop_token_ids[i] == token) return true;
  if (request->ignore_eos) return false;
  for (int i = 0; i < engine->stop_token_count; i++)
    if (engine->stop_tokens[i] == token) return true;
  return false;
}

/* Text of one token for logprobs; owned by the caller. */
static char *token_text(const vlm_engine *engine, int32_t token, size_t *out_length) {
  char *text = NULL;
  if (vlm_tokenizer_decode(engine->tokenizer, &token, 1, false, &text, out_length)) {
    *out_length = 0;
    return NULL;
  }
  return text;
}

static void deliver_token(vlm_engine *engine, engine_slot *slot, const vlm_sample_result *sample,
                          const char *text, size_t length) {
  vlm_engine_event event = {.kind = VLM_ENGINE_EVENT_TOKEN, .choice = slot->choice, .text = text,
                            .text_length = length, .token = sample ? sample->token : -1};
  vlm_engine_token_logprob top[VLM_MAX_TOP_LOGPROBS];
  char *texts[VLM_MAX_TOP_LOGPROBS + 1] = {0};
  if (sample && slot->request->logprobs) {
    event.has_logprob = true;
    event.logprob = (vlm_engine_token_logprob){sample->token, sample->logprob, NULL, 0};
    texts[0] = token_text(engine, sample->token, &event.logprob.text_length);
    event.logprob.text = texts[0] ? texts[0] : "";
    for (int32_t i = 0; i < sample->top_count; i++) {
      top[i] = (vlm_engine_token_logprob){sample->top[i].token, sample->top[i].logprob, NULL, 0};
      texts[i + 1] = token_text(engine, sample->top[i].token, &top[i].text_length);
      top[i].text = texts[i + 1] ? texts[i + 1] : "";
    }
    event.top_logprobs = top;
    event.top_logprob_count = sample->top_count;
  }
  if (length) vlm_sb_append(&slot->streamed, text, length);
  engine_request_deliver(slot->request, &event);
  for (int i = 0; i <= VLM_MAX_TOP_LOGPROBS; i++) free(texts[i]);
}

/* Passes new text through the stop-string matcher; returns true when a
 * stop string completed. */
static bool emit_text(vlm_engine *engine, engine_slot *slot, const vlm_sample_result *sample, const char *text,
                      size_t length) {
  const char *released = text;
  size_t released_length = length;
  bool stopped = false;
  /* vLLM checks stop strings only once min_tokens are out: text before
   * that passes the matcher by (and can start no match). */
  if (slot->stop_matcher && slot->completion_count > slot->request->min_tokens)
    stopped = vlm_stop_matcher_push(slot->stop_matcher, text, length, &released, &released_length);
  deliver_token(engine, slot, sample, released, released_length);
  return stopped;
}

/* Text held back by the detokenizer or the stop matcher, at the end of a
 * completion that no stop string cut. */
static void flush_text(vlm_engine *engine, engine_slot *slot) {
  const char *tail = NULL;
  size_t tail_length = 0;
  if (!vlm_detokenizer_finish(slot->detokenizer, &tail, &tail_length) && tail_length) {
    const char *released = tail;
    size_t released_length = tail_length;
    if (slot->stop_matcher) vlm_stop_matcher_push(slot->stop_matcher, tail, tail_length, &released, &released_length);
    if (released_length) deliver_token(engine, slot, NULL, released, released_length);
  }
  if (slot->stop_matcher && vlm_stop_matcher_matched(slot->stop_matcher) < 0) {
    vlm_stop_matcher_finish(slot->stop_matcher, &tail, &tail_length);
    if (tail_length) deliver_token(engine, slot, NULL, tail, tail_length);
  }
}

static void observe_token_time(vlm_engine *engine, engine_slot *slot) {
  double now = engine_now_seconds();
  pthread_mutex_lock(&engine->mutex);
  if (slot->completion_count == 0) {
    slot->timings.first_token_seconds = now - slot->request->submit_time;
    engine_histogram_observe(&engine->metrics.time_to_first_token, slot->timings.first_token_seconds);
  } else {
    engine_histogram_observe(&engine->metrics.inter_token_latency, now - slot->last_token_time);
  }
  pthread_mutex_unlock(&engine->mutex);
  slot->last_token_time = now;
}

/* Samples from the slot's logits row and either finishes the request or
 * leaves the token pending for the next decode step. */
static void take_token(vlm_engine *engine, engine_slot *slot, const float *logits) {
  vlm_sample_result sample;
  vlm_status status = vlm_sampler_sample(slot->sampler, logits, &sample);
  if (status) {
    slot_finish(engine, slot, status, NULL);
    return;
  }
  observe_token_time(engine, slot);
  if (is_stop_token(engine, slot->request, sample.token)) {
    flush_text(engine, slot); /* what the detokenizer held (a byte run) is the stream's too */
    slot_finish(engine, slot, VLM_OK, "stop");
    return;
  }
  slot->completion[slot->completion_count++] = sample.token;
  const char *piece = NULL;
  size_t piece_length = 0;
  status = vlm_detokenizer_push(slot->detokenizer, sample.token, &piece, &piece_length);
  if (status) {
    slot_finish(engine, slot, status, NULL);
    return;
  }
  if (emit_text(engine, slot, &sample, piece, piece_length)) {
    slot_finish(engine, slot, VLM_OK, "stop");
    return;
  }
  if (engine_grammar_finished(slot)) { /* the grammar admits nothing more: the output is whole */
    flush_text(engine, slot);
    slot_finish(engine, slot, VLM_OK, "stop");
    return;
  }
  bool full = engine_decoder_slot_length(engine, slot->index) >= engine_decoder_capacity(engine);
  if (slot->completion_count >= slot->request->max_tokens || full) {
    flush_text(engine, slot);
    slot_finish(engine, slot, VLM_OK, "length");
    return;
  }
  slot->pending_token = sample.token;
  slot->phase = SLOT_DECODE;
}

/* ---------------------------------------------------------------------- */
/* Compute steps                                                           */
/* ---------------------------------------------------------------------- */

static float *slot_logits(vlm_engine *engine, const engine_slot *slot) {
  return engine->logits + (size_t)slot->index * (size_t)engine->vocab_size;
}

/* The encoder for the slot's next media item, its features appended to
 * the slot's. One item per scheduler iteration, so a request with several
 * images holds running streams up for one image's encode at a time. */
static vlm_status encode_next_item(vlm_engine *engine, engine_slot *slot) {
  vlm_engine_request *request = slot->request;
  double start = engine_now_seconds();
  int64_t width = engine_feature_width(engine), offset = 0;
  /* Feature rows come from the items' token counts (processor output, and
   * at admission from the images' headers): the product is checked. */
  size_t feature_bytes = 0;
  if (!vlm_matrix_bytes(request->prompt.feature_row_count ? request->prompt.feature_row_count : 1, width,
                        sizeof(float), &feature_bytes))
    return VLM_ERROR(OUT_OF_RANGE, "%lld feature rows of width %lld cannot be allocated",
                     (long long)request->prompt.feature_row_count, (long long)width);
  if (!slot->features) slot->features = malloc(feature_bytes);
  if (!slot->features) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for the encoder's features");
  for (int i = 0; i < slot->items_encoded; i++) offset += request->items[i].token_count;
  const vlm_media_item *item = &request->items[slot->items_encoded];
  float *features = slot->features + offset * width;
  if (engine_encoder_reuse(engine, item, features)) {
    slot->items_encoded++;
    return VLM_OK;
  }
  const vlm_media_encoder *encoder = item->kind == VLM_MEDIA_AUDIO ? engine->audio_encoder : engine->image_encoder;
  vlm_status status = !encoder || encoder->operations->kind != item->kind
                          ? VLM_ERROR(UNIMPLEMENTED, "no encoder for %s items", vlm_media_kind_name(item->kind))
                          : encoder->operations->encode(encoder->self, item, features);
  if (!status) {
    slot->items_encoded++;
    engine_encoder_keep(engine, item, features);
  }
  double elapsed = engine_now_seconds() - start;
  slot->timings.encode_seconds += elapsed;
  pthread_mutex_lock(&engine->mutex);
  engine->metrics.encode_seconds_total += elapsed;
  if (!status) engine->metrics.media_items_encoded++;
  pthread_mutex_unlock(&engine->mutex);
  return status;
}

/* The chunk buffers hold `rows` (a chunk stretched over a bidirectional
 * block may be longer than prefill_chunk). */
static vlm_status ensure_chunk_capacity(vlm_engine *engine, int64_t rows) {
  if (rows <= engine->chunk_capacity) return VLM_OK;
  size_t count = (size_t)rows, hidden = (size_t)engine->decoder_shape.hidden_size;
  float *features = realloc(engine->chunk_features, count * hidden * sizeof(float));
  if (features) engine->chunk_features = features;
  int32_t *mask = realloc(engine->chunk_mask, count * sizeof(int32_t));
  if (mask) engine->chunk_mask = mask;
  int32_t *tokens = realloc(engine->chunk_tokens, count * sizeof(int32_t));
  if (tokens) engine->chunk_tokens = tokens;
  int64_t *positions = realloc(engine->chunk_positions, 3 * count * sizeof(int64_t));
  if (positions) engine->chunk_positions = positions;
  size_t layers = (size_t)engine->decoder_shape.layer_feature_count;
  float *layer_features = engine->chunk_layer_features;
  if (layers) layer_features = realloc(engine->chunk_layer_features, layers * count * hidden * sizeof(float));
  if (layer_features) engine->chunk_layer_features = layer_features;
  if (!features || !mask || !tokens || !positions || (layers && !layer_features))
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a prefill chunk of %lld rows", (long long)rows);
  engine->chunk_capacity = rows;
  return VLM_OK;
}

/* The chunk's additive bias when one of its rows is in a bidirectional
 * block (else NULL: causal); [rows, first + rows], the slot holding the
 * prompt's rows [0, first). */
static vlm_status chunk_bias(vlm_engine *engine, const engine_prompt *prompt, int64_t first, int64_t rows,
                             const float **out) {
  *out = NULL;
  bool any = false;
  for (int64_t r = first; prompt->attention_blocks && r < first + rows && !any; r++) any = prompt->attention_blocks[r] >= 0;
  if (!any) return VLM_OK;
  size_t floats = (size_t)rows * (size_t)(first + rows);
  if (floats > engine->chunk_bias_floats) {
    float *grown = realloc(engine->chunk_bias, floats * sizeof(float));
    if (!grown) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for a prefill chunk's attention bias");
    engine->chunk_bias = grown;
    engine->chunk_bias_floats = floats;
  }
  vlm_attention_blocks_bias(prompt->attention_blocks, prompt->count, first, rows, engine->chunk_bias);
  *out = engine->chunk_bias;
  return VLM_OK;
}

/* One prefill chunk of a request with media: its tokens, its feature rows
 * (the next ones in order) under a mask, its slice of the positions, and
 * the attention bias of its bidirectional blocks. */
static vlm_status prefill_with_features(vlm_engine *engine, engine_slot *slot, int64_t rows) {
  const engine_prompt *prompt = &slot->request->prompt;
  int64_t first = slot->prefilled_rows, hidden = engine->decoder_shape.hidden_size;
  int64_t width = engine_feature_width(engine), layers = engine->decoder_shape.layer_feature_count;
  VLM_RETURN_IF_ERROR(ensure_chunk_capacity(engine, rows));
  if (layers) memset(engine->chunk_layer_features, 0, (size_t)(layers * rows * hidden) * sizeof(float));
  for (int64_t r = 0; r < rows; r++) {
    bool feature = prompt->feature_rows && prompt->feature_rows[first + r];
    engine->chunk_tokens[r] = prompt->ids[first + r];
    engine->chunk_mask[r] = feature;
    if (!feature) continue;
    const float *row = slot->features + (slot->features_used++) * width;
    memcpy(engine->chunk_features + r * hidden, row, (size_t)hidden * sizeof(float));
    for (int64_t j = 0; j < layers; j++)
      memcpy(engine->chunk_layer_features + (j * rows + r) * hidden, row + (1 + j) * hidden,
             (size_t)hidden * sizeof(float));
  }
  vlm_prefill_input input = {.row_count = rows, .tokens = engine->chunk_tokens,
                             .features = prompt->feature_rows ? engine->chunk_features : NULL,
                             .feature_mask = prompt->feature_rows ? engine->chunk_mask : NULL,
                             .position_axes = prompt->position_axes};
  vlm_side_input layer_features = {.name = VLM_SIDE_INPUT_LAYER_FEATURES, .values = engine->chunk_layer_features,
                                   .rank = 3, .shape = {layers, rows, hidden}};
  if (layers && input.features) {
    input.side_inputs = &layer_features;
    input.side_input_count = 1;
  }
  if (prompt->positions) {
    for (int axis = 0; axis < prompt->position_axes; axis++)
      memcpy(engine->chunk_positions + axis * rows, prompt->positions + axis * prompt->count + first,
             (size_t)rows * sizeof(int64_t));
    input.positions = engine->chunk_positions;
  }
  int64_t length = engine_decoder_slot_length(engine, slot->index);
  if (length != first)
    return VLM_ERROR(INTERNAL, "the slot holds %lld rows, the prompt's prefill is at %lld", (long long)length,
                     (long long)first);
  VLM_RETURN_IF_ERROR(chunk_bias(engine, prompt, first, rows, &input.bias));
  if (input.bias) input.bias_key_count = first + rows;
  VLM_RETURN_IF_ERROR(vlm_prefill_input_check(&engine->decoder_shape, length, &input));
  return engine->decoder->operations->embeddings_prefill(engine->decoder->self, slot->index, &input,
                                                         slot_logits(engine, slot));
}

static engine_slot *oldest_in_prefill(vlm_engine *engine) {
  engine_slot *oldest = NULL;
  for (int32_t i = 0; i < engine->slot_count; i++) {
    engine_slot *slot = &engine->slots[i];
    if (slot->phase == SLOT_PREFILL && (!oldest || slot->admission_order < oldest->admission_order))
      oldest = slot;
  }
  return oldest;
}

static bool any_slot_decoding(const vlm_engine *engine) {
  for (int32_t i = 0; i < engine->slot_count; i++)
    if (engine->slots[i].phase == SLOT_DECODE) return true;
  return false;
}

/* Where the slot's prompt is, to a request that asked (a PROGRESS event). */
static void deliver_progress(engine_slot *slot) {
  vlm_engine_request *request = slot->request;
  if (!request->progress) return;
  vlm_engine_event event = {.kind = VLM_ENGINE_EVENT_PROGRESS};
  event.progress = (vlm_engine_progress){.prompt_tokens = request->prompt.count,
                                         .cached_tokens = slot->cached_rows,
                                         .processed_tokens = slot->prefilled_rows,
                                         .media_items = request->item_count,
                                         .media_items_encoded = slot->items_encoded,
                                         .seconds = engine_now_seconds() - slot->started_at};
  engine_request_deliver(request, &event);
}

/* Copies positions [0, count) of slot `from`'s KV to the (cleared, begun)
 * slot `to`, a bounded piece at a time. */
static vlm_status copy_kv(vlm_engine *engine, int32_t from, int32_t to, int64_t count) {
  const vlm_text_decoder_operations *decoder = engine->decoder->operations;
  uint64_t position_bytes = decoder->kv_position_bytes(engine->decoder->self);
  int64_t piece = position_bytes ? (int64_t)((64u << 20) / position_bytes) : 0;
  if (piece < 1) piece = 1;
  if (piece > count) piece = count;
  void *buffer = malloc((size_t)position_bytes * (size_t)(piece ? piece : 1));
  if (!buffer) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory copying a prompt's KV to another choice");
  vlm_status status = VLM_OK;
  for (int64_t first = 0; first < count && !status; first += piece) {
    int64_t rows = count - first < piece ? count - first : piece;
    status = decoder->read_kv(engine->decoder->self, from, first, rows, buffer);
    if (!status) status = decoder->write_kv(engine->decoder->self, to, first, rows, buffer);
  }
  free(buffer);
  return status;
}

/* Choice 0's prompt is in its slot: every other choice of the request
 * starts from a copy of that KV and of its last logits row, so the prompt
 * is prefilled once for all n (and each choice then samples on its own). */
static void fork_choices(vlm_engine *engine, engine_slot *first) {
  vlm_engine_request *request = first->request;
  double now = engine_now_seconds();
  for (int32_t i = 0; i < engine->slot_count; i++) {
    engine_slot *slot = &engine->slots[i];
    if (slot->request != request || slot->phase != SLOT_AWAIT_FORK) continue;
    slot->phase = SLOT_PREFILL;
    slot->started_at = now;
    slot->started = true;
    vlm_status status = slot_start(engine, slot);
    if (!status) status = copy_kv(engine, first->index, slot->index, request->prompt.count);
    if (status) {
      slot_finish(engine, slot, status, NULL);
      continue;
    }
    slot->items_encoded = request->item_count;
    slot->prefilled_rows = request->prompt.count;
    slot->cached_rows = first->cached_rows;
    slot->timings.encode_seconds = first->timings.encode_seconds;
    slot->timings.prefill_seconds = first->timings.prefill_seconds + (engine_now_seconds() - now);
    float *logits = slot_logits(engine, slot);
    memcpy(logits, slot_logits(engine, first), (size_t)engine->vocab_size * sizeof(float));
    take_token(engine, slot, logits);
  }
}

/* One chunk of the oldest prompt; samples its first token when the prompt
 * is complete. */
static void prefill_step(vlm_engine *engine) {
  engine_slot *slot = oldest_in_prefill(engine);
  if (!slot) return;
  vlm_engine_request *request = slot->request;
  vlm_status status = VLM_OK;
  if (!slot->started) {
    slot->started_at = engine_now_seconds();
    status = slot_start(engine, slot);
    slot->started = true;
    if (!status) {
      engine_prefix_reuse(engine, slot);
      deliver_progress(slot);
    }
  }
  if (!status && slot->items_encoded < request->item_count) {
    status = encode_next_item(engine, slot);
    if (!status) {
      deliver_progress(slot);
      return; /* this iteration's share of the slot's work */
    }
  }
  if (status) {
    slot_finish(engine, slot, status, NULL);
    return;
  }
  const engine_prompt *prompt = &request->prompt;
  int64_t rows = prompt->count - slot->prefilled_rows;
  int64_t chunk = any_slot_decoding(engine) ? engine->decoding_prefill_chunk : engine->prefill_chunk;
  if (rows > chunk) rows = chunk;
  /* A chunk never ends inside a bidirectional block: it ends before the
   * block, or holds all of a block longer than the chunk. */
  if (prompt->attention_reach)
    rows = vlm_prefill_chunk_end(prompt->attention_reach, prompt->count, slot->prefilled_rows, chunk) -
           slot->prefilled_rows;
  const vlm_text_decoder_operations *decoder = engine->decoder->operations;
  double start = engine_now_seconds();
  if (prompt->feature_rows || prompt->positions || prompt->attention_blocks)
    status = prefill_with_features(engine, slot, rows);
  else
    status = decoder->token_prefill(engine->decoder->self, slot->index, prompt->ids + slot->prefilled_rows, rows,
                                    slot_logits(engine, slot));
  slot->timings.prefill_seconds += engine_now_seconds() - start;
  if (status) {
    slot_finish(engine, slot, status, NULL);
    return;
  }
  slot->prefilled_rows += rows;
  pthread_mutex_lock(&engine->mutex);
  engine->metrics.prefill_tokens_total += (uint64_t)rows;
  pthread_mutex_unlock(&engine->mutex);
  deliver_progress(slot);
  if (slot->prefilled_rows != prompt->count) return;
  if (request->choice_count > 1) fork_choices(engine, slot);
  take_token(engine, slot, slot_logits(engine, slot));
}

/* One batched decode step over every slot with a pending token. The rows
 * of engine->logits are packed in batch order, so each slot's logits are
 * copied to its own row afterwards. */
static void decode_step(vlm_engine *engine) {
  int32_t tokens[engine->slot_count], slots[engine->slot_count];
  int64_t positions[engine->slot_count];
  engine_slot *members[engine->slot_count];
  int64_t batch = 0;
  for (int32_t i = 0; i < engine->slot_count; i++) {
    engine_slot *slot = &engine->slots[i];
    if (slot->phase != SLOT_DECODE) continue;
    tokens[batch] = slot->pending_token;
    /* The KV goes to the slot's length; RoPE continues after the prompt's
     * last position (M-RoPE: the slot's delta). */
    positions[batch] = engine_decoder_slot_length(engine, i) + slot->request->prompt.position_delta;
    slots[batch] = i;
    members[batch++] = slot;
  }
  if (!batch) return;
  double start = engine_now_seconds();
  vlm_status status = engine->decoder->operations->decode(engine->decoder->self, batch, tokens, positions, slots,
                                                          engine->logits);
  double elapsed = engine_now_seconds() - start;
  if (status) { /* a decode error is not one request's fault: fail the batch */
    for (int64_t b = 0; b < batch; b++)
      slot_finish(engine, members[b], b + 1 < batch ? vlm_status_make(vlm_status_code_of(status), "%s",
                                                                      vlm_status_message(status))
                                                    : status,
                  NULL);
    return;
  }
  /* Row b goes to slot slots[b]; slots[b] >= b, so moving from the last row
   * down never overwrites a row still to be moved. */
  for (int64_t b = batch - 1; b >= 0; b--)
    if (slots[b] != b)
      memcpy(engine->logits + (size_t)slots[b] * (size_t)engine->vocab_size,
             engine->logits + (size_t)b * (size_t)engine->vocab_size, (size_t)engine->vocab_size * sizeof(float));
  for (int64_t b = 0; b < batch; b++) {
    members[b]->timings.decode_seconds += elapsed;
    take_token(engine, members[b], slot_logits(engine, members[b]));
  }
}

/* ---------------------------------------------------------------------- */
/* The loop                                                                */
/* ---------------------------------------------------------------------- */

static bool has_active_slots(const vlm_engine *engine) { return engine->active_slots > 0; }

static void retire_cancelled_slots(vlm_engine *engine) {
  for (int32_t i = 0; i < engine->slot_count; i++) {
    engine_slot *slot = &engine->slots[i];
    if (slot->phase != SLOT_FREE && atomic_load(&slot->request->cancel_requested))
      slot_finish(engine, slot, VLM_ERROR(CANCELLED, "the request was cancelled"), NULL);
  }
}

void *engine_scheduler_main(void *argument) {
  vlm_engine *engine = argument;
  for (;;) {
    pthread_mutex_lock(&engine->mutex);
    while (!engine->stopping && !engine->queue_head && !has_active_slots(engine))
      pthread_cond_wait(&engine->wake, &engine->mutex);
    bool stopping = engine->stopping;
    vlm_engine_request *cancelled = admit_locked(engine, engine_now_seconds());
    pthread_cond_broadcast(&engine->changed);
    pthread_mutex_unlock(&engine->mutex);
    while (cancelled) {
      vlm_engine_request *next = cancelled->next_in_queue;
      finish_unadmitted(cancelled, stopping ? VLM_ERROR(CANCELLED, "the engine is shutting down")
                                            : VLM_ERROR(CANCELLED, "the request was cancelled"));
      cancelled = next;
    }
    if (stopping) {
      for (int32_t i = 0; i < engine->slot_count; i++)
        if (engine->slots[i].request) atomic_store(&engine->slots[i].request->cancel_requested, true);
    }
    retire_cancelled_slots(engine);
    if (stopping) break;
    prefill_step(engine);
    decode_step(engine);
    update_kv_metrics(engine);
  }
  return NULL;
}
