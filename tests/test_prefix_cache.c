/* The prefix and encoder caches: what makes reuse exact (the cpu KV of a
 * position is the same bits however the rows before it were prefilled or
 * decoded), the caches' keys (a different token, image or position is a
 * miss), LRU eviction under a budget that is never exceeded, and the engine
 * end to end: a two-turn image conversation on the tiny LLaVA re-encodes
 * nothing and prefills only the new turn, with the same tokens as an
 * engine without caches. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/text_model.h"
#include "engine/encoder_cache.h"
#include "engine/prefix_cache.h"
#include "media/media_item.h"
#include "models/model.h"
#include "test.h"
#include "validate/golden.h"
#include "vlm/engine.h"

#define TEXT_MODEL VLM_SOURCE_DIR "/tests/models/qwen2"
#define IMAGE_MODEL VLM_SOURCE_DIR "/tests/models/llava"
#define ONE_IMAGE VLM_SOURCE_DIR "/tests/goldens/llava/one_image"

/* ---------------------------------------------------------------------- */
/* The cpu KV is reusable: bit-identical however it was computed           */
/* ---------------------------------------------------------------------- */

static vlm_text_model *open_text_model(int64_t chunk) {
  vlm_text_model_options options = {.slot_count = 2, .capacity = 96, .prefill_chunk = chunk};
  vlm_model *opened = NULL;
  vlm_text_model *model = NULL;
  CHECK_OK(vlm_model_open(TEXT_MODEL, NULL, &opened));
  if (opened) CHECK_OK(vlm_text_model_open(opened, &options, &model));
  vlm_model_release(opened);
  return model;
}

#define SEQUENCE 40
static void sequence(int32_t *tokens) {
  for (int i = 0; i < SEQUENCE; i++) tokens[i] = (int32_t)((i * 37 + 11) % 200 + 3);
}

/* Slot 0's KV of the whole sequence, prefilled in chunks of `chunk` and
 * then, from `decode_from` on, decoded one token at a time. */
static void *kv_of(int64_t chunk, int64_t decode_from, float *last_logits) {
  vlm_text_model *model = open_text_model(chunk);
  if (!model) return NULL;
  int32_t tokens[SEQUENCE];
  sequence(tokens);
  int64_t vocab = vlm_text_model_vocab_size(model);
  float *logits = malloc((size_t)vocab * sizeof(float));
  vlm_prefill_logits out = {.last_row = logits};
  CHECK_OK(vlm_text_model_token_prefill(model, 0, tokens, decode_from, NULL, &out));
  for (int64_t i = decode_from; i < SEQUENCE; i++) {
    int32_t slot = 0;
    int64_t position = i;
    CHECK_OK(vlm_text_model_decode(model, 1, &tokens[i], &position, NULL, &slot, logits));
  }
  vlm_kv_cache *cache = vlm_text_model_cache(model);
  size_t bytes = (size_t)vlm_kv_cache_position_bytes(cache) * SEQUENCE;
  void *kv = malloc(bytes);
  CHECK_OK(vlm_kv_cache_read(cache, 0, 0, SEQUENCE, kv));
  if (last_logits) memcpy(last_logits, logits, (size_t)vocab * sizeof(float));
  free(logits);
  vlm_text_model_release(model);
  return kv;
}

static void cpu_kv_is_the_same_however_computed(void) {
  vlm_text_model *probe = open_text_model(512);
  if (!probe) return;
  size_t bytes = (size_t)vlm_kv_cache_position_bytes(vlm_text_model_cache(probe)) * SEQUENCE;
  int64_t vocab = vlm_text_model_vocab_size(probe);
  vlm_text_model_release(probe);
  void *reference = kv_of(512, SEQUENCE, NULL);
  const int64_t chunks[] = {1, 3, 16};
  for (int c = 0; c < 3; c++) {
    void *kv = kv_of(chunks[c], SEQUENCE, NULL);
    CHECK(kv && reference && memcmp(kv, reference, bytes) == 0);
    free(kv);
  }
  void *decoded = kv_of(7, 17, NULL); /* the tail of the sequence decoded */
  CHECK(decoded && reference && memcmp(decoded, reference, bytes) == 0);
  free(decoded);

  /* A slot given the first 32 positions' KV by write_kv, then prefilled
   * with the rest, holds what a whole prefill gives, and the same logits. */
  float *expected = malloc((size_t)vocab * sizeof(float)), *logits = malloc((size_t)vocab * sizeof(float));
  free(kv_of(512, SEQUENCE, expected));
  vlm_text_model *model = open_text_model(5);
  int32_t tokens[SEQUENCE];
  sequence(tokens);
  vlm_kv_cache *cache = vlm_text_model_cache(model);
  /* The layout is per layer and half, [count, row]: the first 32
   * positions of each section of the 40-position reference. */
  const vlm_kv_cache_shape *shape = vlm_kv_cache_get_shape(cache);
  size_t row = (size_t)shape->kv_head_count * (size_t)shape->head_dim * sizeof(float);
  char *head = malloc(bytes);
  for (int section = 0; section < 2 * shape->layer_count; section++)
    memcpy(head + (size_t)section * 32 * row, (char *)reference + (size_t)section * SEQUENCE * row, 32 * row);
  CHECK_OK(vlm_kv_cache_write(cache, 1, 0, 32, head));
  free(head);
  CHECK_INT_EQ(vlm_text_model_slot_length(model, 1), 32);
  vlm_prefill_logits out = {.last_row = logits};
  CHECK_OK(vlm_text_model_token_prefill(model, 1, tokens + 32, SEQUENCE - 32, NULL, &out));
  CHECK(memcmp(logits, expected, (size_t)vocab * sizeof(float)) == 0);
  void *restored = malloc(bytes);
  CHECK_OK(vlm_kv_cache_read(cache, 1, 0, SEQUENCE, restored));
  CHECK(memcmp(restored, reference, bytes) == 0);
  /* Refusals: a write not at the slot's length, a read past it, a bad slot. */
  CHECK_ERROR(vlm_kv_cache_write(cache, 1, 0, 4, reference), VLM_STATUS_INVALID_ARGUMENT, "length is 40");
  CHECK_ERROR(vlm_kv_cache_read(cache, 1, 30, 20, restored), VLM_STATUS_OUT_OF_RANGE, "outside [0, 40)");
  CHECK_ERROR(vlm_kv_cache_read(cache, 2, 0, 1, restored), VLM_STATUS_INVALID_ARGUMENT, "slot 2");
  CHECK_ERROR(vlm_kv_cache_write(cache, 1, 40, 60, reference), VLM_STATUS_OUT_OF_RANGE, "outside [0, 96)");
  free(restored);
  free(expected);
  free(logits);
  free(reference);
  vlm_text_model_release(model);
}

/* ---------------------------------------------------------------------- */
/* The prefix cache's keys, LRU and budget                                 */
/* ---------------------------------------------------------------------- */

#define BLOCK 4
#define POSITION_BYTES 8

/* Keys of a text sequence: token t_i = base + i. */
static void text_keys(prefix_key *keys, int64_t count, int32_t base) {
  memset(keys, 0, (size_t)count * sizeof(*keys));
  for (int64_t i = 0; i < count; i++) {
    keys[i].token = base + (int32_t)i;
    keys[i].media_row = -1;
  }
}

/* The "KV" of position i of a sequence: its token, in every byte. */
typedef struct fake_kv {
  const prefix_key *keys;
  int reads;
} fake_kv;

static vlm_status read_fake(void *context, int64_t first, int64_t count, void *out) {
  fake_kv *kv = context;
  kv->reads++;
  for (int64_t i = 0; i < count; i++) memset((char *)out + i * POSITION_BYTES, kv->keys[first + i].token & 0xff, 8);
  return VLM_OK;
}

static prefix_cache *open_cache(uint64_t blocks) {
  /* The budget of `blocks` blocks: probe one block's bytes first. */
  prefix_cache_options options = {.budget_bytes = 1 << 20, .block_positions = BLOCK, .position_bytes = POSITION_BYTES};
  prefix_cache *probe = NULL;
  CHECK_OK(prefix_cache_create(&options, &probe));
  prefix_key keys[BLOCK];
  text_keys(keys, BLOCK, 0);
  fake_kv kv = {keys, 0};
  int64_t stored = 0;
  CHECK_OK(prefix_cache_store(probe, keys, BLOCK, read_fake, &kv, &stored));
  prefix_cache_stats stats;
  prefix_cache_get_stats(probe, &stats);
  prefix_cache_release(probe);
  options.budget_bytes = stats.bytes_used * blocks;
  prefix_cache *cache = NULL;
  CHECK_OK(prefix_cache_create(&options, &cache));
  return cache;
}

static int64_t store(prefix_cache *cache, const prefix_key *keys, int64_t count) {
  fake_kv kv = {keys, 0};
  int64_t stored = 0;
  CHECK_OK(prefix_cache_store(cache, keys, count, read_fake, &kv, &stored));
  prefix_cache_stats stats;
  prefix_cache_get_stats(cache, &stats);
  CHECK(stats.bytes_used <= stats.budget_bytes);
  return stored;
}

static int64_t match(prefix_cache *cache, const prefix_key *keys, int64_t count) {
  const prefix_block *blocks[64];
  int64_t matched = prefix_cache_match(cache, keys, count, count, blocks);
  /* Each block's KV is the one stored for those positions. */
  for (int64_t b = 0; b < matched; b++)
    for (int64_t i = 0; i < BLOCK; i++)
      CHECK_INT_EQ(((const unsigned char *)prefix_block_kv(blocks[b]))[i * POSITION_BYTES],
                   keys[b * BLOCK + i].token & 0xff);
  return matched;
}

static void prefix_keys_decide_a_hit(void) {
  prefix_cache *cache = open_cache(64);
  if (!cache) return;
  prefix_key a[14];
  text_keys(a, 14, 10);
  CHECK_INT_EQ(store(cache, a, 14), 3); /* full blocks only: 12 of 14 positions */
  CHECK_INT_EQ(match(cache, a, 14), 3);
  CHECK_INT_EQ(match(cache, a, 11), 2); /* at most the positions asked for */
  CHECK_INT_EQ(store(cache, a, 14), 0); /* already there */
  prefix_key b[14];
  memcpy(b, a, sizeof(a));
  b[6].token = 99; /* differs in block 1: only block 0 is shared */
  CHECK_INT_EQ(match(cache, b, 14), 1);
  CHECK_INT_EQ(store(cache, b, 14), 2); /* its own blocks 1 and 2 under the shared block 0 */
  CHECK_INT_EQ(match(cache, b, 14), 3);
  CHECK_INT_EQ(match(cache, a, 14), 3);
  /* A block only matches after the same prefix: a's block 1 moved to the
   * front is not a's block 1. */
  CHECK_INT_EQ(match(cache, a + 4, 8), 0);

  /* Media rows: the same placeholder ids with another image's digest (or
   * another row of the item, or another M-RoPE position) are a miss. */
  prefix_key image[8];
  text_keys(image, 8, 500);
  for (int i = 2; i < 8; i++) {
    image[i].token = 7; /* the placeholder id */
    image[i].media_row = i - 2;
    memset(image[i].media, 0xab, 32);
    image[i].position[0] = image[i].position[1] = 2;
    image[i].position[2] = i;
  }
  CHECK_INT_EQ(store(cache, image, 8), 2);
  CHECK_INT_EQ(match(cache, image, 8), 2);
  prefix_key other[8];
  memcpy(other, image, sizeof(image));
  other[5].media[31] ^= 1;
  CHECK_INT_EQ(match(cache, other, 8), 1);
  memcpy(other, image, sizeof(image));
  other[6].media_row = 0;
  CHECK_INT_EQ(match(cache, other, 8), 1);
  memcpy(other, image, sizeof(image));
  other[7].position[1] = 3;
  CHECK_INT_EQ(match(cache, other, 8), 1);
  /* Another KV variant (the decoder's: a LoRA adapter, another RoPE factor
   * set) on the same tokens shares nothing. */
  for (int variant = 0; variant < 3; variant++) {
    memcpy(other, image, sizeof(image));
    for (int i = 0; i < 8; i++) other[i].variant[variant] = 1;
    CHECK_INT_EQ(match(cache, other, 8), 0);
  }
  prefix_cache_release(cache);
}

static void prefix_lru_within_budget(void) {
  prefix_cache *cache = open_cache(5);
  if (!cache) return;
  prefix_key a[12], b[12], c[8];
  text_keys(a, 12, 100);
  text_keys(b, 12, 200);
  text_keys(c, 8, 300);
  CHECK_INT_EQ(store(cache, a, 12), 3);
  /* The budget holds 5 blocks: b's third evicts the least recently used
   * leaf, a's last block (a's first two have children: never first). */
  CHECK_INT_EQ(store(cache, b, 12), 3);
  prefix_cache_stats stats;
  prefix_cache_get_stats(cache, &stats);
  CHECK_INT_EQ(stats.blocks, 5);
  CHECK_INT_EQ(stats.evictions, 1);
  CHECK(stats.bytes_used == stats.budget_bytes);
  CHECK_INT_EQ(match(cache, a, 12), 2); /* a is now the most recent */
  /* c evicts the least recently used leaves: b's last block, then b's second. */
  CHECK_INT_EQ(store(cache, c, 8), 2);
  prefix_cache_get_stats(cache, &stats);
  CHECK_INT_EQ(stats.evictions, 3);
  CHECK_INT_EQ(stats.blocks, 5);
  CHECK(stats.bytes_used <= stats.budget_bytes);
  CHECK_INT_EQ(match(cache, b, 12), 1);
  CHECK_INT_EQ(match(cache, a, 12), 2);
  CHECK_INT_EQ(match(cache, c, 8), 2);
  /* A chain longer than the budget stores what fits, never beyond it,
   * and keeps its own earlier blocks while it grows. */
  prefix_key d[40];
  text_keys(d, 40, 400);
  CHECK_INT_EQ(store(cache, d, 40), 5);
  CHECK_INT_EQ(match(cache, d, 40), 5);
  prefix_cache_get_stats(cache, &stats);
  CHECK(stats.bytes_used <= stats.budget_bytes);
  CHECK_INT_EQ(stats.evictions, 8);
  prefix_cache_release(cache);
  /* A budget below one block keeps nothing. */
  prefix_cache_options options = {.budget_bytes = 16, .block_positions = BLOCK, .position_bytes = POSITION_BYTES};
  CHECK_OK(prefix_cache_create(&options, &cache));
  CHECK_INT_EQ(store(cache, a, 12), 0);
  prefix_cache_release(cache);
  options.budget_bytes = 0;
  CHECK_ERROR(prefix_cache_create(&options, &cache), VLM_STATUS_INVALID_ARGUMENT, "budget");
}

/* ---------------------------------------------------------------------- */
/* The encoder cache                                                       */
/* ---------------------------------------------------------------------- */

static void encoder_cache_by_digest_within_budget(void) {
  const int64_t rows = 6, width = 4;
  float features[3][24], out[24];
  uint8_t digests[3][32];
  for (int k = 0; k < 3; k++) {
    for (int i = 0; i < 24; i++) features[k][i] = (float)(k * 100 + i);
    memset(digests[k], k + 1, 32);
  }
  encoder_cache *cache = NULL;
  CHECK_OK(encoder_cache_create(1 << 20, &cache));
  CHECK(!encoder_cache_lookup(cache, digests[0], rows, width, out));
  CHECK_OK(encoder_cache_store(cache, digests[0], rows, width, features[0]));
  encoder_cache_stats stats;
  encoder_cache_get_stats(cache, &stats);
  uint64_t entry = stats.bytes_used;
  encoder_cache_release(cache);

  CHECK_OK(encoder_cache_create(2 * entry, &cache)); /* room for two */
  for (int k = 0; k < 2; k++) CHECK_OK(encoder_cache_store(cache, digests[k], rows, width, features[k]));
  CHECK(encoder_cache_lookup(cache, digests[0], rows, width, out)); /* 0 is now the most recent */
  CHECK(memcmp(out, features[0], sizeof(out)) == 0);
  uint8_t other[32];
  memcpy(other, digests[0], 32);
  other[0] ^= 0x80; /* another image */
  CHECK(!encoder_cache_lookup(cache, other, rows, width, out));
  CHECK(!encoder_cache_lookup(cache, digests[0], rows + 1, width, out)); /* another shape */
  CHECK_OK(encoder_cache_store(cache, digests[2], rows, width, features[2])); /* evicts 1 */
  CHECK(!encoder_cache_lookup(cache, digests[1], rows, width, out));
  CHECK(encoder_cache_lookup(cache, digests[2], rows, width, out));
  CHECK(memcmp(out, features[2], sizeof(out)) == 0);
  encoder_cache_get_stats(cache, &stats);
  CHECK_INT_EQ(stats.entries, 2);
  CHECK_INT_EQ(stats.evictions, 1);
  CHECK_INT_EQ(stats.hits, 2);
  CHECK_INT_EQ(stats.misses, 3);
  CHECK(stats.bytes_used <= stats.budget_bytes);
  /* An item larger than the whole budget is not kept (nothing evicted). */
  float big[240] = {0};
  CHECK_OK(encoder_cache_store(cache, other, 60, 4, big));
  encoder_cache_get_stats(cache, &stats);
  CHECK_INT_EQ(stats.entries, 2);
  CHECK(stats.bytes_used <= stats.budget_bytes);
  encoder_cache_release(cache);
}

static void media_digest_is_the_content(void) {
  vlm_media_item items[3];
  memset(items, 0, sizeof(items));
  for (int k = 0; k < 3; k++) {
    void *data = NULL;
    CHECK_OK(vlm_tensor_list_add(&items[k].tensors, "pixel_values", VLM_DTYPE_F32, 1, (const int64_t[]){8}, &data));
    if (data) for (int i = 0; i < 8; i++) ((float *)data)[i] = (float)i;
    items[k].kind = VLM_MEDIA_IMAGE;
    items[k].token_count = 4;
  }
  ((float *)items[2].tensors.items[0].data)[5] = 0.5f; /* same shape and token count, other pixels */
  uint8_t digests[3][32];
  for (int k = 0; k < 3; k++) vlm_media_item_digest(&items[k], digests[k]);
  CHECK(memcmp(digests[0], digests[1], 32) == 0);
  CHECK(memcmp(digests[0], digests[2], 32) != 0);
  items[1].grid[1] = 3;
  vlm_media_item_digest(&items[1], digests[1]);
  CHECK(memcmp(digests[0], digests[1], 32) != 0);
  for (int k = 0; k < 3; k++) vlm_media_item_release(&items[k]);
}

/* ---------------------------------------------------------------------- */
/* The engine: a two-turn image conversation                               */
/* ---------------------------------------------------------------------- */

#define MAX_TOKENS 48

typedef struct collected {
  pthread_mutex_t mutex;
  pthread_cond_t signal;
  bool finished;
  vlm_status_code code;
  int32_t tokens[MAX_TOKENS];
  int64_t token_count;
  char text[4096];
  vlm_engine_usage usage;
} collected;

static void on_event(void *context, const vlm_engine_event *event) {
  collected *c = context;
  pthread_mutex_lock(&c->mutex);
  if (event->kind == VLM_ENGINE_EVENT_TOKEN) {
    if (event->token >= 0 && c->token_count < MAX_TOKENS) c->tokens[c->token_count++] = event->token;
  } else {
    c->finished = true;
    c->code = vlm_status_code_of(event->status);
    snprintf(c->text, sizeof(c->text), "%.*s", (int)event->full_text_length, event->full_text);
    c->usage = event->usage;
    pthread_cond_broadcast(&c->signal);
  }
  pthread_mutex_unlock(&c->mutex);
}

static vlm_engine *open_engine(int32_t slots, uint64_t prefix_bytes, uint64_t encoder_bytes) {
  vlm_engine_options options = {.thread_count = 2, .slot_count = slots, .capacity = 1024, .prefill_chunk = 64,
                                .decoding_prefill_chunk = 24, .prefix_cache_bytes = prefix_bytes,
                                .encoder_cache_bytes = encoder_bytes};
  vlm_engine *engine = NULL;
  vlm_model *opened = NULL;
  CHECK_OK(vlm_model_open(IMAGE_MODEL, NULL, &opened));
  if (opened) CHECK_OK(vlm_engine_open(opened, &options, &engine));
  vlm_model_release(opened);
  return engine;
}

/* The golden's pixel values as an image; `variant` != 0 changes one pixel
 * (another image with the same placeholder count). */
static void golden_image(const vlm_golden_case *golden, int variant, vlm_loaded_image *out) {
  vlm_tensor pixels;
  memset(out, 0, sizeof(*out));
  CHECK_OK(vlm_golden_case_tensor(golden, "processor.pixel_values", &pixels));
  vlm_media_item *item = calloc(1, sizeof(*item));
  float *data = NULL;
  CHECK_OK(vlm_tensor_list_add(&item->tensors, "pixel_values", VLM_DTYPE_F32, 3, pixels.shape + 1, (void **)&data));
  size_t count = (size_t)(pixels.shape[1] * pixels.shape[2] * pixels.shape[3]);
  if (data) memcpy(data, pixels.data, count * sizeof(float));
  if (data && variant) data[count / 2 + (size_t)variant] += 0.25f;
  item->kind = VLM_MEDIA_IMAGE;
  item->grid[0] = 1, item->grid[1] = pixels.shape[2], item->grid[2] = pixels.shape[3];
  item->token_count = (pixels.shape[2] / 14) * (pixels.shape[3] / 14);
  *out = (vlm_loaded_image){item, item->token_count, 0};
}

/* Runs one request to its end. */
static void run(vlm_engine *engine, const vlm_golden_case *golden, const char *messages, int image_count,
                int variant, int64_t max_tokens, collected *out) {
  memset(out, 0, sizeof(*out));
  pthread_mutex_init(&out->mutex, NULL);
  pthread_cond_init(&out->signal, NULL);
  vlm_loaded_image images[2];
  for (int i = 0; i < image_count; i++) golden_image(golden, variant, &images[i]);
  vlm_engine_request_options options = {.messages_json = messages, .images = images, .image_count = image_count,
                                        .max_tokens = max_tokens, .sampling = vlm_engine_default_sampling(engine)};
  options.sampling.temperature = 0;
  vlm_engine_request *request = NULL;
  CHECK_OK(vlm_engine_submit(engine, &options, on_event, out, &request));
  pthread_mutex_lock(&out->mutex);
  while (request && !out->finished) pthread_cond_wait(&out->signal, &out->mutex);
  pthread_mutex_unlock(&out->mutex);
  vlm_engine_request_release(request);
  pthread_mutex_destroy(&out->mutex);
  pthread_cond_destroy(&out->signal);
}

static bool same(const collected *a, const collected *b) {
  return a->code == VLM_STATUS_OK && b->code == VLM_STATUS_OK && a->token_count == b->token_count &&
         !memcmp(a->tokens, b->tokens, (size_t)a->token_count * sizeof(int32_t)) && !strcmp(a->text, b->text);
}

/* JSON string content: the reply with quotes, backslashes and controls escaped. */
static void json_escape(const char *text, char *out, size_t size) {
  size_t n = 0;
  for (const unsigned char *c = (const unsigned char *)text; *c && n + 8 < size; c++) {
    if (*c == '"' || *c == '\\') n += (size_t)snprintf(out + n, size - n, "\\%c", *c);
    else if (*c < 0x20) n += (size_t)snprintf(out + n, size - n, "\\u%04x", *c);
    else out[n++] = (char)*c;
  }
  out[n] = '\0';
}

static void two_turn_image_conversation_reuses_everything(void) {
  vlm_golden_case golden;
  CHECK_OK(vlm_golden_case_open(ONE_IMAGE, NULL, &golden));
  vlm_engine *cached = open_engine(2, 64 << 20, 16 << 20);
  vlm_engine *plain = open_engine(2, 0, 0);
  if (!cached || !plain) return;
  const char *turn1 =
      "[{\"role\":\"user\",\"content\":[{\"type\":\"image\"},{\"type\":\"text\",\"text\":\"What is this?\"}]}]";
  collected first, first_plain;
  run(cached, &golden, turn1, 1, 0, 12, &first);
  run(plain, &golden, turn1, 1, 0, 12, &first_plain);
  CHECK(same(&first, &first_plain));
  CHECK_INT_EQ(first.usage.prompt_cached_tokens, 0);
  vlm_engine_metrics before;
  vlm_engine_get_metrics(cached, &before);
  CHECK_INT_EQ(before.media_items_encoded, 1);
  CHECK(before.prefix_cache_blocks > 0);

  char reply[2048], turn2[4096];
  json_escape(first.text, reply, sizeof(reply));
  snprintf(turn2, sizeof(turn2),
           "[{\"role\":\"user\",\"content\":[{\"type\":\"image\"},{\"type\":\"text\",\"text\":\"What is this?\"}]},"
           "{\"role\":\"assistant\",\"content\":\"%s\"},"
           "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Tell me more.\"}]}]",
           reply);
  collected second, second_plain;
  run(cached, &golden, turn2, 1, 0, 16, &second);
  run(plain, &golden, turn2, 1, 0, 16, &second_plain);
  CHECK(same(&second, &second_plain));
  CHECK_INT_EQ(second_plain.usage.prompt_cached_tokens, 0);
  vlm_engine_metrics after;
  vlm_engine_get_metrics(cached, &after);
  /* Nothing re-encoded: the image lies inside the reused prefix. */
  CHECK_INT_EQ(after.media_items_encoded, 1);
  CHECK_INT_EQ(after.prefix_cache_hits, 1);
  /* Only the new turn prefilled: at most the prompt's growth plus one
   * block of the first prompt's tail. */
  int64_t prefilled = second.usage.prompt_tokens - second.usage.prompt_cached_tokens;
  int64_t growth = second.usage.prompt_tokens - first.usage.prompt_tokens;
  printf("  turn 1: %lld prompt positions; turn 2: %lld, %lld cached, %lld prefilled\n",
         (long long)first.usage.prompt_tokens, (long long)second.usage.prompt_tokens,
         (long long)second.usage.prompt_cached_tokens, (long long)prefilled);
  CHECK(second.usage.prompt_cached_tokens > 576);
  CHECK(prefilled > 0 && prefilled <= growth + 16);
  CHECK_INT_EQ((int64_t)(after.prefix_cache_cached_tokens - before.prefix_cache_cached_tokens),
               second.usage.prompt_cached_tokens);
  CHECK(after.prefix_cache_bytes_used <= after.prefix_cache_budget_bytes);

  /* The same conversation with another image of the same size: the text
   * before the image still matches, the image does not; its encode is a
   * miss, and the output is the plain engine's. */
  collected third, third_plain;
  run(cached, &golden, turn2, 1, 3, 10, &third);
  run(plain, &golden, turn2, 1, 3, 10, &third_plain);
  CHECK(same(&third, &third_plain));
  CHECK(third.usage.prompt_cached_tokens < 576);
  vlm_engine_get_metrics(cached, &after);
  CHECK_INT_EQ(after.media_items_encoded, 2);
  CHECK_INT_EQ(after.encoder_cache_misses, 2);

  /* The first image again in a new conversation: the prefix up to the
   * image is text the cache has; the image's features come from the encoder
   * cache if its rows are not all reused. Outputs still equal. */
  const char *fresh =
      "[{\"role\":\"user\",\"content\":[{\"type\":\"image\"},{\"type\":\"text\",\"text\":\"Colors?\"}]}]";
  collected fourth, fourth_plain;
  run(cached, &golden, fresh, 1, 0, 10, &fourth);
  run(plain, &golden, fresh, 1, 0, 10, &fourth_plain);
  CHECK(same(&fourth, &fourth_plain));
  vlm_engine_get_metrics(cached, &after);
  CHECK_INT_EQ(after.media_items_encoded, 2);
  vlm_engine_info info;
  vlm_engine_get_info(cached, &info);
  CHECK_INT_EQ(info.prefix_cache_block, 16);
  CHECK(info.prefix_cache_bytes == 64 << 20);
  vlm_engine_get_info(plain, &info);
  CHECK_INT_EQ(info.prefix_cache_bytes, 0);
  vlm_engine_release(cached);
  vlm_engine_release(plain);
  vlm_golden_case_close(&golden);
}

TEST_MAIN(TEST(cpu_kv_is_the_same_however_computed), TEST(prefix_keys_decide_a_hit), TEST(prefix_lru_within_budget),
          TEST(encoder_cache_by_digest_within_budget), TEST(media_digest_is_the_content),
          TEST(two_turn_image_conversation_reuses_everything))
