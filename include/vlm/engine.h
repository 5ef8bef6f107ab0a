/* The serving engine: one model, N slots, continuous batching.
 *
 * A request is prepared on the caller's thread (chat template, tokenizer,
 * placeholder expansion, admission against capacity and the queue bound;
 * images are decoded and preprocessed there too, with
 * vlm_engine_load_image*), then handed to the engine's scheduler thread,
 * which owns the slots, the KV cache and every call into the compute
 * backend. Between two decode steps the scheduler admits waiting requests
 * into free slots and runs at most one prefill chunk, so a new prompt never
 * stalls running streams for longer than one chunk (plus, for a request
 * with images, its vision encode).
 *
 * Events reach the caller through a callback, on the scheduler thread, in
 * order: zero or more VLM_ENGINE_EVENT_PROGRESS while the prompt is
 * processed (only when the request asked for them), zero or more
 * VLM_ENGINE_EVENT_TOKEN, then exactly one VLM_ENGINE_EVENT_FINISH (also
 * after cancellation or an error). The
 * callback must not block for long (it holds up every stream) and must not
 * call back into the engine except vlm_engine_cancel.
 *
 * Per-slot state (KV, sampler, detokenizer, embeddings) is cleared when a
 * request finishes, fails or is cancelled (SPEC 3.6); with greedy sampling
 * a request's output does not depend on what it was batched with (3.5). */
#ifndef VLM_ENGINE_H
#define VLM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vlm.h"
#include "vlm/audio.h"    /* vlm_audio_limits */
#include "vlm/generate.h" /* vlm_sampling_params, vlm_loaded_image, vlm_loaded_audio */
#include "vlm/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vlm_engine vlm_engine;
typedef struct vlm_engine_request vlm_engine_request;
/* A text decoder on some backend (opaque; the xla backend's comes from
 * include/vlm/xla.h). */
typedef struct vlm_text_decoder vlm_text_decoder;
/* A media encoder (a family's vision tower + projector) on some backend
 * (opaque; the xla backend's comes from include/vlm/xla.h). */
typedef struct vlm_media_encoder vlm_media_encoder;

typedef struct vlm_engine_options {
  int thread_count;        /* compute threads; <= 0: one per core */
  int32_t slot_count;      /* --parallel; default 1 */
  int64_t capacity;        /* positions per slot; 0: min(max_position_embeddings, 4096) */
  int64_t prefill_chunk;   /* rows per prefill step; 0: 512 */
  /* Rows per prefill step while other requests are decoding; 0:
   * min(prefill_chunk, 128). A prefill step holds every running stream up
   * for its duration, so it is kept short while anyone is streaming. */
  int64_t decoding_prefill_chunk;
  int32_t queue_limit;     /* requests waiting for a slot; 0: 64. Over it: RESOURCE_EXHAUSTED */
  const vlm_allocator *allocator;
  /* NULL: the cpu backend, opened with the options above. Otherwise a
   * decoder opened for the same model with slot_count slots (its own
   * capacity and chunk apply); the engine takes it over, also when
   * vlm_engine_open fails. */
  vlm_text_decoder *text_decoder;
  /* NULL: images are encoded on the cpu backend. Otherwise an encoder
   * opened for the same model; taken over like text_decoder. */
  vlm_media_encoder *image_encoder;
  /* NULL: audio clips are encoded on the cpu backend. Otherwise an audio
   * encoder opened for the same model; taken over like text_decoder. */
  vlm_media_encoder *audio_encoder;
  /* The prefix cache's budget in bytes (KV of finished requests reused by
   * later ones that start the same way; 0: off). Backends that cannot hand
   * their KV out (xla) leave it off and the engine logs why. */
  uint64_t prefix_cache_bytes;
  /* The encoder cache's budget in bytes (media features by content; 0: off). */
  uint64_t encoder_cache_bytes;
  /* Bytes that image and audio decoding and preprocessing
   * (vlm_engine_load_image_*, vlm_engine_load_audio_*) may hold at once
   * across all callers, reserved from each item's header before it is
   * decoded (an image: the raster, the codec's buffers and the rotated
   * copy; a clip: vlm_audio_header.decode_bytes plus its features); 0:
   * 2 GiB. A caller over the budget waits, polling its cancel flag, up to
   * media_wait_seconds (0: 10 s), then fails with RESOURCE_EXHAUSTED
   * ("busy, retry later"); an item larger than the whole budget waits
   * until it is the only one. */
  uint64_t media_memory_budget;
  double media_wait_seconds;
  /* The rendered chat prompt (or raw prompt) in bytes; over it a request
   * is refused with OUT_OF_RANGE before it is tokenized. 0: no limit but
   * the capacity's own, capacity x vlm_tokenizer_max_bytes_per_token (a
   * prompt that long cannot fit), or capacity x 64 bytes for a tokenizer
   * without that bound. */
  size_t max_prompt_bytes;
} vlm_engine_options;

/* Opens the engine on `model` (retained): tokenizer, chat template, the
 * text decoder, and the scheduler thread. */
vlm_status vlm_engine_open(vlm_model *model, const vlm_engine_options *options,
                           vlm_engine **out_engine);
/* Cancels whatever is queued or running (each gets its FINISH event), stops
 * the scheduler thread and frees everything. */
void vlm_engine_release(vlm_engine *engine);

/* What the model is and can take (for /v1/models and admission). */
typedef struct vlm_engine_info {
  const char *model_dir;
  const char *model_type;     /* config.json's model_type */
  const char *backend;        /* the text decoder's: "cpu" or "xla" */
  /* Where images are encoded: "cpu" or "xla" (with the xla text decoder,
   * "cpu" is an explicit, reported host fallback), or NULL without a
   * vision path. */
  const char *vision_backend;
  bool accepts_images;        /* the family has a vision path */
  bool accepts_audio;         /* the family has an audio path (none yet) and a feature extractor */
  bool has_chat_template;
  int32_t slot_count;
  int64_t capacity;           /* positions per slot */
  int64_t prefill_chunk;
  int64_t decoding_prefill_chunk;
  int32_t queue_limit;
  int64_t vocab_size;
  uint64_t prefix_cache_bytes;   /* the budget in force; 0: off */
  int64_t prefix_cache_block;    /* positions per cached block (0: off) */
  uint64_t encoder_cache_bytes;  /* 0: off */
  uint64_t media_memory_budget;  /* the budget in force (vlm_engine_options.media_memory_budget) */
} vlm_engine_info;
void vlm_engine_get_info(const vlm_engine *engine, vlm_engine_info *out_info);

/* The sampling generation_config.json asks for (greedy when it does not
 * sample). */
vlm_sampling_params vlm_engine_default_sampling(const vlm_engine *engine);
/* generation_config's max_new_tokens, else 256. */
int64_t vlm_engine_default_max_tokens(const vlm_engine *engine);

/* Decodes and preprocesses an image as the model's image processor does.
 * Thread-safe; call it from the caller's (worker) thread. `cancel` may be
 * NULL or a flag polled during decoding. Errors name `name` (a path, or
 * e.g. "messages[0].content[1]"). A model without a vision path gets
 * UNIMPLEMENTED. */
vlm_status vlm_engine_load_image_file(vlm_engine *engine, const char *path, const void *cancel,
                                      vlm_loaded_image *out_image);
vlm_status vlm_engine_load_image_memory(vlm_engine *engine, const uint8_t *data, size_t size,
                                        const char *name, const void *cancel,
                                        vlm_loaded_image *out_image);

/* An image's header, read without decoding its pixels. */
typedef struct vlm_engine_image_header {
  int64_t width, height;    /* as stored */
  int64_t tokens;           /* prompt positions it takes (vlm_engine_image_tokens) */
  uint64_t decode_bytes;    /* what decoding it will hold at most */
  uint64_t reserve_bytes;   /* what loading it reserves in the media budget */
} vlm_engine_image_header;

/* A request's share of the media memory budget
 * (vlm_engine_options.media_memory_budget), reserved at once for all its
 * images and clips (the sum of their headers' reserve_bytes) before the
 * first is decoded, so a request never holds part of the budget while it
 * waits for more. Loading an item (the _from / _within variants) takes its
 * share out of it; the item's tensors stay charged until the item is
 * released (the request done, refused or cancelled), and
 * vlm_engine_release_media gives back what the loads did not take. An
 * amount over the whole budget waits until nothing else is in flight.
 * RESOURCE_EXHAUSTED after media_wait_seconds; CANCELLED when `cancel`
 * (NULL or an atomic_bool) is set while waiting. */
typedef struct vlm_media_reservation {
  uint64_t bytes;           /* reserved and not yet taken */
} vlm_media_reservation;
vlm_status vlm_engine_reserve_media(vlm_engine *engine, uint64_t bytes, const void *cancel, const char *name,
                                    vlm_media_reservation *out_reservation);
void vlm_engine_release_media(vlm_engine *engine, vlm_media_reservation *reservation);
/* Bytes of the budget in use now: reservations, decodes in progress, and
 * the tensors of items not yet released (/metrics). */
uint64_t vlm_engine_media_bytes_in_use(vlm_engine *engine);
/* vlm_engine_load_image_memory, its budget taken out of `from` (NULL:
 * reserved for it alone). */
vlm_status vlm_engine_load_image_memory_from(vlm_engine *engine, const uint8_t *data, size_t size,
                                             const char *name, const void *cancel, vlm_media_reservation *from,
                                             vlm_loaded_image *out_image);

/* Reads just the header (microseconds, a few KiB), checked against the
 * decode limits like vlm_engine_load_image_*: for admission before any
 * image is decoded (vlm_engine_check_admission). Errors name `name` (the
 * file's base name for the _file variant). UNIMPLEMENTED without a vision
 * path. */
vlm_status vlm_engine_read_image_header(vlm_engine *engine, const uint8_t *data, size_t size,
                                        const char *name, vlm_engine_image_header *out_header);
vlm_status vlm_engine_read_image_header_file(vlm_engine *engine, const char *path,
                                             vlm_engine_image_header *out_header);
/* The prompt positions an image of width x height takes once its
 * placeholder is expanded: a constant for the families whose processor
 * resizes every image to one size (LLaVA: image_seq_length), a function of
 * the size for those that keep it (Qwen2-VL). */
vlm_status vlm_engine_image_tokens(vlm_engine *engine, int64_t width, int64_t height,
                                   int64_t *out_tokens);

/* Decodes an audio clip (WAV, FLAC, Ogg Vorbis, MP3; include/vlm/audio.h)
 * at the rate of the model's feature extractor and runs the extractor, as
 * Transformers' load_audio + AutoFeatureExtractor do. Thread-safe; call it
 * from the caller's thread. `limits` may be NULL (vlm/audio.h's defaults).
 * A model without an audio path gets UNIMPLEMENTED before any decoding. */
vlm_status vlm_engine_load_audio_file(vlm_engine *engine, const char *path, const vlm_audio_limits *limits,
                                      const void *cancel, vlm_loaded_audio *out_audio);
vlm_status vlm_engine_load_audio_memory(vlm_engine *engine, const uint8_t *data, size_t size, const char *name,
                                        const vlm_audio_limits *limits, const void *cancel,
                                        vlm_loaded_audio *out_audio);

/* An audio clip's header, read without decoding a sample (libsndfile's
 * open: WAV's data chunk, FLAC's STREAMINFO, the last Ogg page's granule
 * position, MP3's Xing/VBRI header or mpg123's frame estimate), checked
 * against the decode limits like vlm_engine_load_audio_*. */
typedef struct vlm_engine_audio_header {
  int sample_rate, channels;   /* of the file */
  double seconds;              /* the duration the header states; -1: none */
  /* Prompt positions the stated duration takes (the extractor's count for
   * that many samples at the model's rate); 1 when no length is stated
   * (tokens_stated false): decoding is then bounded by the capacity left. */
  int64_t tokens;
  bool tokens_stated;
  uint64_t decode_bytes;       /* what decoding it will hold at most */
  uint64_t reserve_bytes;      /* what loading it reserves: the stated length's decode and features */
} vlm_engine_audio_header;
/* For admission before any clip is decoded (vlm_engine_check_admission
 * with audio_tokens). UNIMPLEMENTED without an audio path. */
vlm_status vlm_engine_read_audio_header(vlm_engine *engine, const uint8_t *data, size_t size, const char *name,
                                        const vlm_audio_limits *limits, vlm_engine_audio_header *out_header);
/* vlm_engine_load_audio_memory (its budget out of `from`, as
 * vlm_engine_load_image_memory_from) for a clip that may take at most
 * `max_tokens` positions (its header's count plus the room admission
 * left, vlm_engine_check_admission_room): decoding stops with OUT_OF_RANGE
 * ("context length exceeded") once the samples pass that many tokens,
 * whatever the header said. */
vlm_status vlm_engine_load_audio_memory_within(vlm_engine *engine, const uint8_t *data, size_t size,
                                               const char *name, const vlm_audio_limits *limits, int64_t max_tokens,
                                               const void *cancel, vlm_media_reservation *from,
                                               vlm_loaded_audio *out_audio);

typedef struct vlm_engine_request_options {
  /* Exactly one of the two. messages_json: a JSON array of chat messages in
   * Transformers' format ({"role", "content"} with content a string or a
   * list of {"type":"text","text"} / {"type":"image"} / {"type":"audio"} parts), rendered
   * with the model's chat template and a generation prompt.
   * raw_prompt: the whole model input, tokenized with the tokenizer's
   * special tokens (BOS...), as /v1/completions gives it. */
  const char *messages_json;
  const char *raw_prompt;
  /* Images in the order of their placeholders. Ownership passes to the
   * engine on every return of vlm_engine_submit, success or error: the
   * caller's array entries are zeroed. */
  vlm_loaded_image *images;
  int image_count;
  /* Audio clips in the order of their placeholders ({"type":"audio"}
   * parts); taken over like the images. */
  vlm_loaded_audio *audio;
  int audio_count;
  /* Admission only (vlm_engine_check_admission, before decoding): each
   * clip's positions from its header (vlm_engine_audio_header.tokens);
   * NULL: 1 each. */
  const int64_t *audio_tokens;
  int64_t max_tokens;           /* 0: vlm_engine_default_max_tokens */
  vlm_sampling_params sampling;
  bool logprobs;                /* report each token's logprob (+ top alternatives) */
  const char *const *stop;      /* stop strings, copied; not part of the output; */
  size_t stop_count;            /* at most 16, each at most 1024 bytes */
  /* Deliver VLM_ENGINE_EVENT_PROGRESS: when the request has its slot (and
   * the prefix cache's share), after each media item is encoded and after
   * each prefill chunk, the last with processed == prompt tokens. Off by
   * default, so a callback written for TOKEN and FINISH sees only those. */
  bool progress;
  /* Constrained decoding: a GBNF grammar (src/text/grammar.h) the
   * completion must match; every token that cannot continue it is masked
   * and the end of the output is allowed only where it is complete.
   * Parsed at submit (INVALID_ARGUMENT / RESOURCE_EXHAUSTED naming what is
   * wrong); NULL: none. */
  const char *grammar;
  /* The controls vLLM's chat and sampling parameters add (zero: off, the
   * defaults above). Chat only: chat_template_kwargs_json is a JSON object
   * of extra template variables (vLLM's chat_template_kwargs, e.g.
   * {"enable_thinking": false}); no_generation_prompt renders without the
   * assistant header (add_generation_prompt=false); continue_final_message
   * leaves the last message open for the model to continue, as
   * Transformers' apply_chat_template(continue_final_message=True) does
   * (it needs no_generation_prompt). */
  const char *chat_template_kwargs_json;
  bool no_generation_prompt;
  bool continue_final_message;
  /* The stop tokens (the model's EOS ids and stop_token_ids) cannot be
   * sampled, and stop strings are not matched, before min_tokens tokens. */
  int64_t min_tokens;
  /* The model's EOS ids do not end the completion (they are generated as
   * tokens; stop_token_ids still do). */
  bool ignore_eos;
  /* Further ids that end the completion (at most 64, not in the output). */
  const int32_t *stop_token_ids;
  size_t stop_token_id_count;
  /* Special tokens are decoded into the text (skip_special_tokens=false). */
  bool keep_special_tokens;
  /* Instead of messages_json / raw_prompt: the prompt as token ids, fed
   * as given (/v1/completions' token prompts; ids inside the vocabulary,
   * no media). */
  const int32_t *prompt_ids;
  int64_t prompt_id_count;
  /* OpenAI's logit_bias (at most 1024 entries, copied). */
  const vlm_logit_bias *logit_bias;
  size_t logit_bias_count;
  /* OpenAI's n: independent completions of the one prompt (0 or 1: one).
   * The prompt is prefilled once, in the first choice's slot; its KV and
   * last logits row are then copied into the other choices' slots, so the
   * request takes n slots at once (n over the slot count, or over
   * VLM_ENGINE_MAX_CHOICES, is INVALID_ARGUMENT; a backend that cannot
   * copy KV between slots, xla, is UNIMPLEMENTED for n > 1). Choice i
   * samples with seed + i, so choice 0 is exactly the n = 1 completion and
   * a seeded request is reproducible. Each choice gets its own TOKEN
   * events and its own FINISH (event.choice); the request is done after
   * the n-th FINISH, and cancelling it cancels every choice. */
  int32_t n;
} vlm_engine_request_options;

#define VLM_ENGINE_MAX_CHOICES 16

typedef enum vlm_engine_event_kind {
  VLM_ENGINE_EVENT_TOKEN,
  VLM_ENGINE_EVENT_FINISH,
  VLM_ENGINE_EVENT_PROGRESS,
} vlm_engine_event_kind;

/* How far the prompt is (PROGRESS events). A client's share of the work
 * left is (prompt_tokens - processed_tokens) of the (prompt_tokens -
 * cached_tokens) it had to prefill, plus the media items not yet encoded
 * (an image can take as long as many chunks). */
typedef struct vlm_engine_progress {
  int64_t prompt_tokens;        /* every prompt position, placeholders expanded */
  int64_t cached_tokens;        /* of which copied from the prefix cache */
  int64_t processed_tokens;     /* of which in the KV now (the cached ones included) */
  int32_t media_items;          /* the request's images and clips */
  int32_t media_items_encoded;  /* of which encoded, or skipped with the cached prefix */
  double seconds;               /* since the request got its slot */
} vlm_engine_progress;

typedef struct vlm_engine_usage {
  int64_t prompt_tokens;        /* every prompt position, placeholders expanded */
  int64_t prompt_image_tokens;  /* of which image positions */
  int64_t prompt_audio_tokens;  /* ... audio positions */
  int64_t prompt_video_tokens;  /* ... video positions */
  int64_t prompt_cached_tokens; /* of which taken from the prefix cache, not prefilled */
  int64_t completion_tokens;
} vlm_engine_usage;

typedef struct vlm_engine_timings {
  double preprocess_seconds;    /* template, tokenizer, images (caller's thread) */
  double queue_seconds;         /* submitted -> slot assigned */
  double encode_seconds;        /* vision encoder + projector + merge */
  double prefill_seconds;
  double decode_seconds;
  double first_token_seconds;   /* submitted -> first token sampled */
} vlm_engine_timings;

typedef struct vlm_engine_token_logprob {
  int32_t token;
  float logprob;
  const char *text;             /* the token's own text (may be partial UTF-8) */
  size_t text_length;
} vlm_engine_token_logprob;

typedef struct vlm_engine_event {
  vlm_engine_event_kind kind;
  int32_t choice;               /* which of the request's n choices (0 with n = 1; PROGRESS: 0) */
  /* TOKEN: new completion text (valid UTF-8, may be empty while a stop
   * string or a multi-byte character is pending) and the sampled token;
   * token -1 (no logprob) carries text held back until the end. */
  const char *text;
  size_t text_length;
  int32_t token;
  bool has_logprob;             /* when the request asked for logprobs */
  vlm_engine_token_logprob logprob;
  const vlm_engine_token_logprob *top_logprobs; /* most likely first */
  int32_t top_logprob_count;
  /* FINISH */
  vlm_status status;            /* VLM_OK, or why it failed (CANCELLED when cancelled); borrowed */
  const char *finish_reason;    /* "stop" | "length" on success */
  const char *full_text;        /* the whole completion, as decoded at once */
  size_t full_text_length;
  const int32_t *completion_token_ids; /* usage.completion_tokens of them */
  vlm_engine_usage usage;
  vlm_engine_timings timings;
  /* PROGRESS */
  vlm_engine_progress progress;
} vlm_engine_event;

typedef void (*vlm_engine_event_callback)(void *context, const vlm_engine_event *event);

/* One line for a log: "1024/2720 prompt tokens (38%), 1/1 media items
 * encoded, 20.1 s, 51 tokens/s, about 33 s left" (the estimate from the
 * rate of the positions prefilled so far). Truncated to `capacity`. */
void vlm_engine_progress_describe(const vlm_engine_progress *progress, char *buffer, size_t capacity);

/* Prepares and queues a request. Errors (before any compute, cheapest
 * first, as vlm_engine_check_admission lists them): bad options (stop
 * strings: at most 16 of at most 1024 bytes), images or audio for a model
 * without that modality (UNIMPLEMENTED), max_tokens plus the images over
 * capacity, a prompt too long in bytes to fit (OUT_OF_RANGE, "context
 * length exceeded ..." or "the prompt is over the limit of N bytes"), the
 * prompt does not render or tokenize, image placeholders do not match the
 * images, prompt + max_tokens over capacity (OUT_OF_RANGE), the queue is
 * full (RESOURCE_EXHAUSTED), the engine is shutting down (UNAVAILABLE). On success the callback will be called, and
 * *out_request is a handle the caller must release with
 * vlm_engine_request_release (after the FINISH event, or at any time to
 * cancel and forget it). */
vlm_status vlm_engine_submit(vlm_engine *engine, const vlm_engine_request_options *options,
                             vlm_engine_event_callback callback, void *context,
                             vlm_engine_request **out_request);
/* What vlm_engine_submit refuses before decoding: call it with the
 * request's options and each image's token count (from
 * vlm_engine_read_image_header; options->images is not read and may be
 * NULL, options->image_count must be the number of images) before decoding
 * any image. It refuses, cheapest first, a full queue or a draining
 * engine, max_tokens plus the images over the capacity, a prompt whose
 * bytes cannot fit what is left (vlm_engine_options.max_prompt_bytes),
 * then renders and tokenizes the prompt and refuses it when its
 * placeholders do not match the images or prompt + images + max_tokens is
 * over the capacity. A request that passes may still be refused by
 * submit (the queue may fill in between). */
vlm_status vlm_engine_check_admission(vlm_engine *engine, const vlm_engine_request_options *options,
                                      const int64_t *image_tokens);
/* The same, and on success the positions the capacity leaves beyond the
 * prompt, its media and max_tokens (what a clip may take over its
 * header's count: vlm_engine_load_audio_memory_within). */
vlm_status vlm_engine_check_admission_room(vlm_engine *engine, const vlm_engine_request_options *options,
                                           const int64_t *image_tokens, int64_t *out_room);

/* Asks the scheduler to stop the request (thread-safe, idempotent): it
 * frees its slot and gets FINISH with a CANCELLED status, unless it had
 * already finished. */
void vlm_engine_cancel(vlm_engine_request *request);
/* Drops the caller's reference; cancels the request if it has not
 * finished. No callback runs for it after this returns. */
void vlm_engine_request_release(vlm_engine_request *request);
/* The prompt ids vlm_engine_submit would feed the model for `options`
 * (chat template with its controls, content format, tokenization in the
 * family's flow), without submitting anything: POST /tokenize. Requests
 * with images or audio are UNIMPLEMENTED (their placeholders expand only
 * once the media are decoded). *out_ids is malloc'd. */
vlm_status vlm_engine_tokenize(vlm_engine *engine, const vlm_engine_request_options *options, int32_t **out_ids,
                               int64_t *out_count);
/* The text of `count` ids (special tokens kept), as Transformers'
 * tokenizer.decode: POST /detokenize. Ids outside the vocabulary are
 * INVALID_ARGUMENT. *out_text is malloc'd. */
vlm_status vlm_engine_detokenize(vlm_engine *engine, const int32_t *ids, size_t count, char **out_text,
                                 size_t *out_length);
/* The same prompt ids without an engine (vlm tokenize --chat --ids): the
 * model opened (config and headers only), its tokenizer and template. One
 * code path with vlm_engine_tokenize, so the two always agree. Media parts
 * stay one placeholder id each. */
vlm_status vlm_chat_prompt_ids(vlm_model *model, const vlm_engine_request_options *options, int32_t **out_ids,
                               int64_t *out_count);

/* The text of the submitted prompt's last `count` tokens (special tokens
 * included), for callers that look at how the prompt ends (a reasoning
 * parser: does the template open a thinking block?). *out_text is
 * malloc'd. Call between a successful submit and the release. */
vlm_status vlm_engine_request_prompt_tail(const vlm_engine_request *request, int count, char **out_text);

/* Stops admitting requests (submit fails with UNAVAILABLE) and waits up
 * to `timeout_seconds` for queued and running ones to finish; the rest
 * are cancelled. For graceful shutdown. */
void vlm_engine_drain(vlm_engine *engine, double timeout_seconds);

/* Counters and histograms for /metrics. Histograms have cumulative
 * Prometheus semantics: bucket_counts[i] counts observations <= bounds[i]. */
#define VLM_ENGINE_HISTOGRAM_BUCKETS 12
typedef struct vlm_engine_histogram {
  double bounds[VLM_ENGINE_HISTOGRAM_BUCKETS];
  uint64_t bucket_counts[VLM_ENGINE_HISTOGRAM_BUCKETS];
  uint64_t count;
  double sum;
} vlm_engine_histogram;

typedef struct vlm_engine_metrics {
  uint64_t requests_finished_stop;
  uint64_t requests_finished_length;
  uint64_t requests_cancelled;
  uint64_t requests_failed;
  uint64_t requests_rejected;        /* refused by submit */
  int64_t queue_depth;               /* waiting for a slot */
  int32_t active_slots;
  int32_t slot_count;
  uint64_t prompt_tokens_total;
  /* Prompt positions computed by prefill (not taken from the prefix cache
   * nor copied from another choice's slot). */
  uint64_t prefill_tokens_total;
  uint64_t completion_tokens_total;
  uint64_t image_count_total;
  double preprocess_seconds_total;
  double encode_seconds_total;
  int64_t kv_positions_used;         /* over all slots */
  int64_t kv_positions_capacity;
  uint64_t kv_bytes;
  /* The prefix cache (all zero when off): requests looked up and those
   * that reused at least one block, their prompt positions and those taken
   * from the cache, blocks evicted, and its bytes. */
  uint64_t prefix_cache_queries;
  uint64_t prefix_cache_hits;
  uint64_t prefix_cache_query_tokens;
  uint64_t prefix_cache_cached_tokens;
  uint64_t prefix_cache_evictions;
  int64_t prefix_cache_blocks;
  int64_t prefix_cache_block_positions; /* positions per block */
  int64_t prefix_cache_block_capacity;  /* blocks the budget holds */
  uint64_t prefix_cache_bytes_used;
  uint64_t prefix_cache_budget_bytes;
  /* Media items run through an encoder (cache misses and uncached runs;
   * items inside a reused prefix are not encoded at all). */
  uint64_t media_items_encoded;
  /* The encoder cache (all zero when off). */
  uint64_t encoder_cache_hits;
  uint64_t encoder_cache_misses;
  uint64_t encoder_cache_evictions;
  int64_t encoder_cache_entries;
  uint64_t encoder_cache_bytes_used;
  uint64_t encoder_cache_budget_bytes;
  vlm_engine_histogram time_to_first_token;  /* seconds */
  vlm_engine_histogram inter_token_latency;  /* seconds */
} vlm_engine_metrics;
void vlm_engine_get_metrics(vlm_engine *engine, vlm_engine_metrics *out_metrics);

#ifdef __cplusplus
}
#endif

#endif
