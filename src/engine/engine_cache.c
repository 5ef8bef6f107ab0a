/* The engine's use of its caches (prefix_cache.h, encoder_cache.h), on
 * the scheduler thread: which positions of a slot are keys, what a hit
 * skips (prefill rows, and the encodes of items wholly inside the reused
 * prefix), and the metrics. A cache failure never fails a request: it is
 * logged and the request computes what it would have reused. */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/status.h"
#include "engine/engine_internal.h"

vlm_status engine_caches_open(vlm_engine *engine, const vlm_engine_options *options) {
  const vlm_text_decoder_operations *decoder = engine->decoder->operations;
  if (options->prefix_cache_bytes) {
    if (!decoder->kv_position_bytes || !decoder->read_kv || !decoder->write_kv) {
      vlm_log(VLM_LOG_WARN,
              "prefix cache off: the %s text decoder does not hand its KV out (its KV is not known to be "
              "bit-identical however a prompt is split, so reusing it could change outputs)",
              decoder->backend);
    } else {
      prefix_cache_options cache_options = {.budget_bytes = options->prefix_cache_bytes,
                                            .position_bytes = decoder->kv_position_bytes(engine->decoder->self)};
      VLM_RETURN_IF_ERROR(prefix_cache_create(&cache_options, &engine->prefix_cache));
      prefix_cache_stats stats;
      prefix_cache_get_stats(engine->prefix_cache, &stats);
      engine->metrics.prefix_cache_budget_bytes = options->prefix_cache_bytes;
      engine->metrics.prefix_cache_block_positions = prefix_cache_block_positions(engine->prefix_cache);
      engine->metrics.prefix_cache_block_capacity = stats.block_capacity;
    }
  }
  if (options->encoder_cache_bytes) {
    VLM_RETURN_IF_ERROR(encoder_cache_create(options->encoder_cache_bytes, &engine->encoder_cache));
    engine->metrics.encoder_cache_budget_bytes = options->encoder_cache_bytes;
  }
  return VLM_OK;
}

void engine_caches_release(vlm_engine *engine) {
  prefix_cache_release(engine->prefix_cache);
  encoder_cache_release(engine->encoder_cache);
  engine->prefix_cache = NULL;
  engine->encoder_cache = NULL;
}

/* ---------------------------------------------------------------------- */
/* Prefix cache                                                            */
/* ---------------------------------------------------------------------- */

/* Keys of the slot's positions [0, count): the prompt's, then the fed
 * completion tokens' (decoded at RoPE position length + delta on every
 * axis). Returns NULL when out of memory. */
_Static_assert(sizeof(((prefix_key *)0)->variant) == sizeof(((engine_slot *)0)->kv_variant),
               "a prefix key holds the decoder's whole KV variant");

static prefix_key *slot_keys(const engine_slot *slot, int64_t count) {
  const vlm_engine_request *request = slot->request;
  const engine_prompt *prompt = &request->prompt;
  prefix_key *keys = calloc((size_t)(count ? count : 1), sizeof(*keys));
  if (!keys) return NULL;
  int item = 0;
  int64_t item_row = 0; /* the next feature row's index within items[item] */
  for (int64_t r = 0; r < count; r++) {
    prefix_key *key = &keys[r];
    key->media_row = -1;
    memcpy(key->variant, slot->kv_variant, sizeof(key->variant));
    if (r < prompt->count) {
      key->token = prompt->ids[r];
      if (prompt->feature_rows && prompt->feature_rows[r]) {
        while (item < request->item_count && item_row >= request->items[item].token_count) item++, item_row = 0;
        if (item < request->item_count) {
          memcpy(key->media, request->items[item].content_digest, sizeof(key->media));
          key->media_row = (int32_t)item_row++;
        }
      }
      for (int axis = 0; prompt->positions && axis < prompt->position_axes && axis < 3; axis++)
        key->position[axis] = prompt->positions[axis * prompt->count + r];
    } else {
      key->token = slot->completion[r - prompt->count];
      for (int axis = 0; prompt->positions && axis < prompt->position_axes && axis < 3; axis++)
        key->position[axis] = r + prompt->position_delta;
    }
  }
  return keys;
}

static void copy_prefix_stats(vlm_engine *engine) {
  prefix_cache_stats stats;
  prefix_cache_get_stats(engine->prefix_cache, &stats);
  engine->metrics.prefix_cache_blocks = stats.blocks;
  engine->metrics.prefix_cache_bytes_used = stats.bytes_used;
  engine->metrics.prefix_cache_evictions = stats.evictions;
}

/* Feature rows of prompt positions [0, rows). */
static int64_t feature_rows_before(const engine_prompt *prompt, int64_t rows) {
  int64_t count = 0;
  for (int64_t r = 0; prompt->feature_rows && r < rows; r++) count += prompt->feature_rows[r];
  return count;
}

/* Copies the matched blocks into the slot; false (the slot cleared) if
 * the backend refused. */
static bool write_blocks(vlm_engine *engine, engine_slot *slot, const prefix_block **blocks, int64_t count) {
  int64_t size = prefix_cache_block_positions(engine->prefix_cache);
  for (int64_t b = 0; b < count; b++) {
    vlm_status status = engine->decoder->operations->write_kv(engine->decoder->self, slot->index, b * size, size,
                                                              prefix_block_kv(blocks[b]));
    if (status) {
      vlm_log(VLM_LOG_WARN, "prefix cache: %s; the prompt is prefilled instead", vlm_status_message(status));
      vlm_status_free(status);
      vlm_status_free(engine_decoder_clear_slot(engine, slot->index));
      return false;
    }
  }
  return true;
}

/* The most of `matched` blocks a reuse may take without splitting an
 * attention block (a run of rows that see each other both ways): the
 * reused rows must end before the block that holds their last row, else
 * the rest of that block would be prefilled as a step that starts inside
 * it. The cached KV of a block's first rows was computed seeing the whole
 * block (a prefill step never ends inside one), so splitting would be
 * exact too, but only while the stored request's later block rows equal
 * this one's; stopping at the block's start needs no such argument. */
static int64_t blocks_before_attention_block(const engine_prompt *prompt, int64_t matched, int64_t size) {
  const int32_t *blocks = prompt->attention_blocks;
  int64_t rows = matched * size;
  while (blocks && rows > 0 && rows < prompt->count && blocks[rows - 1] >= 0 && blocks[rows] == blocks[rows - 1]) {
    int64_t start = rows - 1;
    while (start > 0 && blocks[start - 1] == blocks[rows]) start--;
    rows = start / size * size;
  }
  return rows / size;
}

void engine_prefix_reuse(vlm_engine *engine, engine_slot *slot) {
  if (!engine->prefix_cache) return;
  const vlm_engine_request *request = slot->request;
  const engine_prompt *prompt = &request->prompt;
  int64_t size = prefix_cache_block_positions(engine->prefix_cache);
  /* The last prompt row is always prefilled: its logits give the first token. */
  int64_t most = prompt->count - 1;
  prefix_key *keys = most >= size ? slot_keys(slot, most) : NULL;
  const prefix_block **blocks = keys ? malloc((size_t)(most / size) * sizeof(*blocks)) : NULL;
  int64_t matched = blocks ? prefix_cache_match(engine->prefix_cache, keys, most, most, blocks) : 0;
  matched = blocks_before_attention_block(prompt, matched, size);
  if (matched && !write_blocks(engine, slot, blocks, matched)) matched = 0;
  free(keys);
  free(blocks);
  int64_t rows = matched * size;
  if (rows) {
    slot->prefilled_rows = slot->cached_rows = rows;
    slot->features_used = feature_rows_before(prompt, rows);
    /* Items whose rows all lie in the reused prefix need no encode; their
     * part of slot->features is never read. */
    int64_t covered = 0;
    while (slot->items_encoded < request->item_count &&
           covered + request->items[slot->items_encoded].token_count <= slot->features_used)
      covered += request->items[slot->items_encoded++].token_count;
  }
  pthread_mutex_lock(&engine->mutex);
  engine->metrics.prefix_cache_queries++;
  engine->metrics.prefix_cache_query_tokens += (uint64_t)prompt->count;
  if (rows) engine->metrics.prefix_cache_hits++;
  engine->metrics.prefix_cache_cached_tokens += (uint64_t)rows;
  copy_prefix_stats(engine);
  pthread_mutex_unlock(&engine->mutex);
}

typedef struct read_context {
  vlm_engine *engine;
  int32_t slot;
} read_context;

static vlm_status read_slot_kv(void *context, int64_t first, int64_t count, void *out) {
  read_context *read = context;
  return read->engine->decoder->operations->read_kv(read->engine->decoder->self, read->slot, first, count, out);
}

void engine_prefix_keep(vlm_engine *engine, engine_slot *slot) {
  if (!engine->prefix_cache || !slot->request || !slot->started) return;
  int64_t length = engine_decoder_slot_length(engine, slot->index);
  int64_t fed_completion = length - slot->request->prompt.count;
  /* Only what the slot's KV is known to hold: the prompt rows prefilled,
   * then the completion tokens decoded after them. */
  if (length <= 0 || (fed_completion > 0 && fed_completion > slot->completion_count)) return;
  if (length < prefix_cache_block_positions(engine->prefix_cache)) return;
  prefix_key *keys = slot_keys(slot, length);
  if (!keys) return;
  read_context context = {engine, slot->index};
  int64_t stored = 0;
  vlm_status status = prefix_cache_store(engine->prefix_cache, keys, length, read_slot_kv, &context, &stored);
  free(keys);
  if (status) {
    vlm_log(VLM_LOG_WARN, "prefix cache: keeping a finished request's KV: %s", vlm_status_message(status));
    vlm_status_free(status);
  }
  pthread_mutex_lock(&engine->mutex);
  copy_prefix_stats(engine);
  pthread_mutex_unlock(&engine->mutex);
}

/* ---------------------------------------------------------------------- */
/* Encoder cache                                                           */
/* ---------------------------------------------------------------------- */

static void copy_encoder_stats(vlm_engine *engine) {
  encoder_cache_stats stats;
  encoder_cache_get_stats(engine->encoder_cache, &stats);
  engine->metrics.encoder_cache_hits = stats.hits;
  engine->metrics.encoder_cache_misses = stats.misses;
  engine->metrics.encoder_cache_evictions = stats.evictions;
  engine->metrics.encoder_cache_entries = stats.entries;
  engine->metrics.encoder_cache_bytes_used = stats.bytes_used;
}

bool engine_encoder_reuse(vlm_engine *engine, const vlm_media_item *item, float *out_features) {
  if (!engine->encoder_cache) return false;
  bool hit = encoder_cache_lookup(engine->encoder_cache, item->content_digest, item->token_count,
                                  engine_feature_width(engine), out_features);
  pthread_mutex_lock(&engine->mutex);
  copy_encoder_stats(engine);
  pthread_mutex_unlock(&engine->mutex);
  return hit;
}

void engine_encoder_keep(vlm_engine *engine, const vlm_media_item *item, const float *features) {
  if (!engine->encoder_cache) return;
  vlm_status status = encoder_cache_store(engine->encoder_cache, item->content_digest, item->token_count,
                                          engine_feature_width(engine), features);
  if (status) {
    vlm_log(VLM_LOG_WARN, "encoder cache: %s", vlm_status_message(status));
    vlm_status_free(status);
  }
  pthread_mutex_lock(&engine->mutex);
  copy_encoder_stats(engine);
  pthread_mutex_unlock(&engine->mutex);
}
