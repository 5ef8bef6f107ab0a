/* What engine.c (the public API, request preparation, admission) and
 * scheduler.c (the scheduler thread: slots, prefill chunks, batched decode,
 * sampling, events) share. Not a public header. */
#ifndef VLM_ENGINE_ENGINE_INTERNAL_H
#define VLM_ENGINE_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/thread_pool.h"
#include "engine/encoder_cache.h"
#include "engine/prefix_cache.h"
#include "engine/prompt.h"
#include "engine/sampling.h"
#include "io/config.h"
#include "io/json.h"
#include "media/media_item.h"
#include "models/model.h"
#include "models/modules.h"
#include "vlm/chat_template.h"
#include "vlm/engine.h"
#include "vlm/tokenizer.h"

#define ENGINE_MAX_STOP_TOKENS 16
#define ENGINE_MAX_STOP_STRINGS 16   /* a request's stop strings */
#define ENGINE_MAX_STOP_BYTES 1024   /* each; as the server's OPENAI_MAX_STOP_BYTES */
#define ENGINE_MAX_STOP_TOKEN_IDS 64 /* a request's stop_token_ids */
#define ENGINE_MAX_LOGIT_BIAS 1024   /* a request's logit_bias entries */

struct vlm_engine_request {
  vlm_engine *engine;
  vlm_engine_event_callback callback;
  void *context;
  atomic_bool cancel_requested;
  /* Guards the fields below and every callback: release waits for a
   * callback in progress, and no callback starts after it. */
  pthread_mutex_t callback_mutex;
  bool caller_released;
  bool engine_done;               /* FINISH delivered (or suppressed) */
  /* Prepared by submit, read-only afterwards. */
  engine_prompt prompt;           /* expanded ids, positions, where features go */
  vlm_media_item *items;          /* in the order of their placeholders */
  int item_count;
  int64_t max_tokens;
  vlm_sampling_params sampling;
  bool logprobs;
  bool progress;                  /* deliver PROGRESS events */
  char **stop;
  size_t stop_count;
  struct vlm_grammar *grammar;    /* constrained decoding (engine_grammar.c); NULL: none */
  /* vLLM's output controls (vlm_engine_request_options), copied. */
  int64_t min_tokens;
  bool ignore_eos;
  bool keep_special_tokens;
  int32_t *stop_token_ids;
  size_t stop_token_id_count;
  vlm_logit_bias *logit_bias;
  size_t logit_bias_count;
  int32_t choice_count;           /* n: slots taken at admission, one per choice */
  int32_t choices_left;           /* FINISH events still to deliver (scheduler thread) */
  double submit_time;
  double preprocess_seconds;
  vlm_engine_request *next_in_queue;
};

typedef enum slot_phase {
  SLOT_FREE = 0,
  SLOT_PREFILL,
  SLOT_DECODE,
  SLOT_AWAIT_FORK, /* a later choice: waits for choice 0's prefill, then gets a copy of its KV */
} slot_phase;

/* One slot of the KV cache and what the request in it needs between steps. */
typedef struct engine_slot {
  int32_t index;
  slot_phase phase;
  vlm_engine_request *request;
  int32_t choice;                 /* which of the request's choices */
  uint64_t admission_order;       /* prefill goes oldest first */
  bool started;                   /* sampler etc. created */
  double started_at;              /* engine_now_seconds() when it started (progress) */
  int items_encoded;
  float *features;                /* [feature rows of every item, feature width], filled item by item */
  int64_t features_used;          /* feature rows already fed to prefill */
  int64_t prefilled_rows;
  int64_t cached_rows;            /* of prefilled_rows, copied from the prefix cache */
  int64_t kv_variant[VLM_KV_VARIANT_VALUES]; /* the decoder's, from begin_request (prefix cache keys) */
  vlm_sampler *sampler;
  vlm_detokenizer *detokenizer;
  vlm_stop_matcher *stop_matcher;
  struct engine_constraint *constraint; /* the request's grammar matcher (engine_grammar.c) */
  int32_t *completion;            /* [max_tokens] */
  int64_t completion_count;
  int32_t pending_token;          /* sampled, to be fed by the next decode */
  vlm_string_builder streamed;    /* text given to the client so far */
  vlm_engine_timings timings;
  double last_token_time;
  int64_t kv_positions_reported; /* this slot's share of metrics.kv_positions_used */
} engine_slot;

struct vlm_engine {
  vlm_model *model;                   /* retained; config, family, weights */
  const vlm_model_config *config;     /* &model->config */
  const vlm_allocator *allocator;
  vlm_thread_pool *pool;
  vlm_text_decoder *decoder;          /* the backend running the text decoder */
  vlm_text_decoder_shape decoder_shape;
  vlm_tokenizer *tokenizer;
  vlm_chat_template *chat_template;   /* NULL: raw prompts only */
  int32_t stop_tokens[ENGINE_MAX_STOP_TOKENS];
  int stop_token_count;
  bool accepts_images;                /* the family has an image path */
  bool accepts_audio;                 /* the family has an audio path and a feature extractor */
  int64_t vocab_size;
  int64_t prefill_chunk;
  int64_t decoding_prefill_chunk; /* while another slot decodes */
  int32_t queue_limit;

  /* The image encoder: given at open, or the cpu backend's, opened with
   * the first image (text-only use never builds it). load_image runs on
   * callers' threads, hence its own lock. */
  pthread_mutex_t vision_mutex;
  /* The vocabulary's token trie for constrained decoding, built with the
   * first request that has a grammar (engine_grammar.c). */
  pthread_mutex_t grammar_mutex;
  struct vlm_token_index *token_index;
  vlm_media_encoder *image_encoder;
  vlm_media_encoder *audio_encoder;   /* under vision_mutex too; built with the first clip */

  /* Image and audio decoding across callers (engine_media_memory.c): bytes
   * reserved from headers, within media_memory_budget, under media_mutex. */
  pthread_mutex_t media_mutex;
  pthread_cond_t media_released;
  uint64_t media_memory_budget;
  double media_wait_seconds;
  uint64_t media_bytes_in_flight;
  uint64_t media_bytes_peak;
  size_t max_prompt_bytes;            /* 0: only the capacity bound */

  /* Scheduling state, under `mutex`. */
  pthread_mutex_t mutex;
  pthread_cond_t wake;                /* work arrived, or stop */
  pthread_cond_t changed;             /* a request finished (drain waits on it) */
  pthread_t thread;
  bool thread_started;
  bool stopping;
  bool draining;
  vlm_engine_request *queue_head, *queue_tail;
  int64_t queue_length;
  int32_t active_slots;
  vlm_engine_metrics metrics;

  /* Scheduler-thread only. */
  engine_slot *slots;
  int32_t slot_count;
  uint64_t next_admission;
  float *logits;                      /* [slot_count, vocab] */
  /* One prefill chunk's feature rows, mask, positions and attention bias
   * (scheduler only). A chunk holding a whole bidirectional block may be
   * longer than prefill_chunk: the buffers grow to chunk_capacity rows. */
  int64_t chunk_capacity;
  float *chunk_features;              /* [chunk_capacity, hidden] */
  /* The decoder's layer features ([L, chunk_capacity, hidden]; NULL when L
   * is 0): an encoder row is its feature then L layer features
   * (engine_feature_width values), split into the two inputs per chunk. */
  float *chunk_layer_features;
  int32_t *chunk_mask, *chunk_tokens; /* [chunk_capacity] */
  int64_t *chunk_positions;           /* [3, chunk_capacity] */
  float *chunk_bias;                  /* [rows, past + rows] of the last chunk with a block */
  size_t chunk_bias_floats;
  /* The caches (NULL: off); scheduler thread only, their numbers copied
   * into `metrics` under `mutex`. */
  prefix_cache *prefix_cache;
  encoder_cache *encoder_cache;
};

double engine_now_seconds(void);
/* Values per encoder output row (see chunk_layer_features). */
static inline int64_t engine_feature_width(const vlm_engine *engine) {
  return engine->decoder_shape.hidden_size * (1 + (int64_t)engine->decoder_shape.layer_feature_count);
}

vlm_status engine_refuse_images(const vlm_engine *engine, int image_count);
/* Opens the vision side and the processor config on first use. */
vlm_status engine_ensure_vision(vlm_engine *engine, int image_count);
/* The media memory budget (engine_media_memory.c): waits until `bytes` fit
 * (an item over the whole budget: until nothing else is reserved), polling
 * `cancel`, up to media_wait_seconds; *out_reserved is what to give back. */
vlm_status engine_reserve_media_memory(vlm_engine *engine, uint64_t bytes, const void *cancel, const char *name,
                                       uint64_t *out_reserved);
void engine_release_media_memory(vlm_engine *engine, uint64_t reserved);
/* engine_reserve_media_memory, or `bytes` out of the caller's reservation
 * (taken in full at once: see engine_media_memory.c). */
vlm_status engine_take_media_memory(vlm_engine *engine, vlm_media_reservation *from, uint64_t bytes,
                                    const void *cancel, const char *name, uint64_t *out_reserved);
/* The reservation becomes the item's charge (its tensors' bytes), given
 * back by vlm_media_item_release. */
void engine_charge_media_item(vlm_engine *engine, struct vlm_media_item *item, uint64_t reserved);
/* The most media bytes ever reserved at once (tests). */
uint64_t engine_media_bytes_peak(vlm_engine *engine);

static inline int64_t engine_decoder_capacity(const vlm_engine *engine) {
  return engine->decoder_shape.capacity;
}
static inline int64_t engine_decoder_slot_length(const vlm_engine *engine, int32_t slot) {
  return engine->decoder->operations->slot_length(engine->decoder->self, slot);
}
static inline vlm_status engine_decoder_clear_slot(vlm_engine *engine, int32_t slot) {
  return engine->decoder->operations->clear_slot(engine->decoder->self, slot);
}
/* The prefix cache's side of a slot (engine_cache.c): copies the longest
 * cached prefix of the slot's prompt into its KV when it starts, and keeps
 * its KV when it finishes. Failures only cost the reuse. */
void engine_prefix_reuse(vlm_engine *engine, engine_slot *slot);
void engine_prefix_keep(vlm_engine *engine, engine_slot *slot);
/* Features of the slot's next media item from the encoder cache (true),
 * or false; engine_encoder_keep stores what the encoder computed. */
bool engine_encoder_reuse(vlm_engine *engine, const vlm_media_item *item, float *out_features);
void engine_encoder_keep(vlm_engine *engine, const vlm_media_item *item, const float *features);
/* The caches per the options (a backend without read_kv gets none, logged). */
vlm_status engine_caches_open(vlm_engine *engine, const vlm_engine_options *options);
void engine_caches_release(vlm_engine *engine);
/* The scheduler thread's body. */
void *engine_scheduler_main(void *engine);
/* Frees a request once both the caller and the engine are done with it. */
void engine_request_free(vlm_engine_request *request);
/* Delivers an event under the request's callback lock unless the caller
 * has let go of it. */
void engine_request_deliver(vlm_engine_request *request, const vlm_engine_event *event);
/* Marks the engine's side done; frees the request when the caller is too. */
void engine_request_engine_done(vlm_engine_request *request);
void engine_histogram_observe(vlm_engine_histogram *histogram, double value);

/* Constrained decoding (engine_grammar.c). */
vlm_status engine_grammar_prepare(vlm_engine *engine, const char *grammar_text, vlm_engine_request *request);
vlm_status engine_grammar_attach(vlm_engine *engine, engine_slot *slot);
bool engine_grammar_finished(const engine_slot *slot);
void engine_grammar_detach(engine_slot *slot);
void engine_grammar_release(vlm_engine *engine);

#endif
