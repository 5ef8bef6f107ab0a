/* Scaled dot-product attention of a chunk of queries against a KV cache, on
 * the micro-kernel of cpu_gemm.c.
 *
 * Each (query, head) pair gets the same operations whatever else is in the
 * call: its score against key j is one fma chain over the head dimension
 * (the dot-product contract), then * scale, soft-cap, + bias, a softmax
 * with sequential sums over the visible keys, then each output element is
 * one fma chain over the visible keys in increasing position. So the
 * output of a query is the same bits whether it came alone (decode),
 * inside a prefill chunk of any size, on any thread or path.
 *
 * To run those chains many at a time, the keys of each KV head are first
 * copied transposed into panels of 64 keys ([d][64]: a panel is the
 * "weights" of a linear layer with head_dim inputs), so the scores of a
 * tile of rows against 64 keys are one kernel call; the weighted sum reads
 * the values as weights with head_dim outputs. A tile's rows are either
 * consecutive queries of one head (prefill, encoders) or the query heads
 * sharing one KV head for one query (decode, grouped-query attention). */
#include "backends/cpu/cpu_internal.h"

#include <math.h>
#include <string.h>

#include "backends/cpu/cpu_kernels.h"
#include "core/alloc.h"

/* Queries from which values are copied head-major: each head's rows are
 * then contiguous instead of kv_heads x head_dim apart (a page apart in a
 * vision tower), for every query's pass over them. */
#define HEAD_MAJOR_MIN_QUERIES 16

/* Where every query sees every key (an encoder's segment), tiles of one
 * head go through the keys together, a block of them at a time: each panel
 * of keys and each chunk of values is then read from L3 once per block
 * and from L1 by every tile, instead of once per tile (a Qwen2-VL-2B image
 * of 6256 patches has 2 MiB of keys and 2 MiB of values per head). A
 * block's scores, about BLOCK_SCORE_BYTES, stay in L2 between the three
 * passes (scores, softmax, weighted sums); at most BLOCK_MAX_TILES tiles. */
#ifndef BLOCK_SCORE_BYTES
#define BLOCK_SCORE_BYTES (512 << 10)
#endif
#ifndef BLOCK_MAX_TILES
#define BLOCK_MAX_TILES 8
#endif
/* Keys per chunk of a block's weighted sums: 128 value rows of head_dim 80
 * are 40 KiB, in L1 while every tile of the block reads them. */
#ifndef VALUE_CHUNK
#define VALUE_CHUNK 128
#endif

typedef struct attention_job {
  const cpu_attention_shape *shape;
  const float *query, *key_cache;
  float *output;
  cpu_gemm_kernel kernel;
  /* Transposed keys: panel p of KV head h at keys_t + (h * panel_count +
   * p) * d * 64, key first_key + 64p + c in column c. */
  float *keys_t;
  int64_t first_key, panel_count;
  /* Value row j of KV head h: values + h * head_stride + j * position_stride. */
  const float *values;
  int64_t head_stride, position_stride;
  /* Per worker: CPU_GEMM_TILE_ROWS rows of scores then probabilities,
   * scores_stride apart (column j - first_key). */
  float *scores;
  int64_t scores_stride;
  bool query_tiles;    /* rows are queries of one head (else heads of one query) */
  int64_t tiles;       /* tiles per head (query_tiles) or per KV head of a query */
  int64_t block_tiles; /* query tiles per work item: > 1 only where every query sees every key */
} attention_job;

static int64_t tile_count(int64_t count) { return (count + CPU_GEMM_TILE_ROWS - 1) / CPU_GEMM_TILE_ROWS; }

/* The first row and the row count of tile i of `count` rows cut evenly. */
static void tile_span(int64_t count, int64_t tiles, int64_t i, int64_t *first, int *rows) {
  int64_t base = count / tiles, extra = count % tiles;
  *first = i * base + (i < extra ? i : extra);
  *rows = (int)(base + (i < extra ? 1 : 0));
}

/* Visible key positions [*first, *last] for query t. */
static void visible_keys(const cpu_attention_shape *shape, int64_t t, int64_t *first, int64_t *last) {
  int64_t position = shape->past_count + t;
  *last = shape->causal ? position : shape->past_count + shape->query_count - 1;
  *first = 0;
  if (shape->sliding_window > 0 && position - shape->sliding_window + 1 > 0)
    *first = position - shape->sliding_window + 1;
}

/* ---- Transposed keys ------------------------------------------------------ */

typedef struct transpose_job {
  const attention_job *attention;
  int64_t key_count;
} transpose_job;

/* Items are (KV head, panel). */
static void transpose_worker(void *context, int64_t begin, int64_t end, int worker) {
  (void)worker;
  const transpose_job *job = context;
  const attention_job *a = job->attention;
  int64_t d = a->shape->head_dim, stride = a->shape->kv_head_count * d;
  for (int64_t item = begin; item < end; item++) {
    int64_t h = item / a->panel_count, p = item % a->panel_count;
    float *panel = a->keys_t + item * d * CPU_PANEL;
    int64_t first = a->first_key + p * CPU_PANEL;
    int64_t count = job->key_count - first < CPU_PANEL ? job->key_count - first : CPU_PANEL;
    for (int64_t c = 0; c < count; c++) {
      const float *key = a->key_cache + (first + c) * stride + h * d;
      for (int64_t i = 0; i < d; i++) panel[i * CPU_PANEL + c] = key[i];
    }
    for (int64_t c = count; c < CPU_PANEL; c++)
      for (int64_t i = 0; i < d; i++) panel[i * CPU_PANEL + c] = 0.0f;
  }
}

/* ---- One tile of rows -------------------------------------------------------- */

typedef struct tile_rows {
  int count;
  int64_t query[CPU_GEMM_TILE_ROWS], head[CPU_GEMM_TILE_ROWS];
  int64_t first[CPU_GEMM_TILE_ROWS], last[CPU_GEMM_TILE_ROWS];
  int64_t kv_head;
  const float *q;       /* row 0's query; rows x_stride apart */
  float *out;           /* row 0's output; rows x_stride apart */
  int64_t x_stride;
} tile_rows;

/* scores[r][j] for the panels covering the rows' keys. */
static void tile_scores(const attention_job *a, const tile_rows *rows, float *scores) {
  int64_t d = a->shape->head_dim;
  int64_t low = rows->first[0], high = rows->last[0];
  for (int r = 1; r < rows->count; r++) {
    if (rows->first[r] < low) low = rows->first[r];
    if (rows->last[r] > high) high = rows->last[r];
  }
  int64_t p_begin = (low - a->first_key) / CPU_PANEL, p_end = (high - a->first_key) / CPU_PANEL + 1;
  for (int64_t p = p_begin; p < p_end; p++) {
    cpu_gemm_tile tile = {rows->q, rows->x_stride,
                          a->keys_t + (rows->kv_head * a->panel_count + p) * d * CPU_PANEL, CPU_PANEL, d,
                          CPU_PANEL, scores + p * CPU_PANEL, a->scores_stride, false, NULL};
    a->kernel(&tile, rows->count);
  }
}

/* The probabilities of one (query, head) from its scores against keys
 * [first, first + count): scale, soft-cap, + bias (the head's, when the
 * bias has one per head), softmax, in place. */
static void softmax_scores(const cpu_attention_shape *shape, int64_t head, int64_t query, int64_t first, float *row,
                           int64_t count) {
  const float *bias = shape->bias ? shape->bias + head * shape->bias_head_stride + query * shape->bias_stride + first
                                  : NULL;
  float scale = shape->scale;
  if (shape->soft_cap > 0.0f) { /* scale, cap, then the plain softmax */
    for (int64_t j = 0; j < count; j++) row[j] *= scale;
    cpu_soft_cap(row, count, shape->soft_cap);
    scale = 1.0f;
  }
  cpu_scaled_softmax(row, scale, bias, count, row);
}

static void row_softmax(const attention_job *a, const tile_rows *rows, int r, float *scores) {
  float *row = scores + r * a->scores_stride + (rows->first[r] - a->first_key);
  softmax_scores(a->shape, rows->head[r], rows->query[r], rows->first[r], row, rows->last[r] - rows->first[r] + 1);
}

/* The weighted sums' output columns go through the kernel in groups of at
 * most CPU_PANEL, as even as whole vectors allow: head_dim 80 as 48 + 32
 * (18 and 12 accumulators a tile) rather than 64 + 16, whose 6 chains of
 * one vector cannot cover the fma latency. Which columns run together
 * never changes a chain. */
static int value_columns(int64_t d, int64_t c0) {
  int64_t groups = (d + CPU_PANEL - 1) / CPU_PANEL;
  int64_t even = ((d + groups - 1) / groups + 15) / 16 * 16;
  return (int)(d - c0 < even ? d - c0 : even);
}

/* out[rows r0.. r0 + n) columns [c0, c0 + cols) += p[j] v_j over keys
 * [j0, j1] (inclusive), continuing each row's chain. */
static void weighted_sum(const attention_job *a, const tile_rows *rows, const float *probabilities, int r0, int n,
                         int64_t j0, int64_t j1, int64_t c0, int cols) {
  if (j1 < j0) return;
  cpu_gemm_tile tile = {probabilities + r0 * a->scores_stride + (j0 - a->first_key), a->scores_stride,
                        a->values + rows->kv_head * a->head_stride + j0 * a->position_stride + c0,
                        a->position_stride, j1 - j0 + 1, cols, rows->out + r0 * rows->x_stride + c0,
                        rows->x_stride, true, NULL};
  a->kernel(&tile, n);
}

/* Each row's chain runs over exactly its own keys in increasing order: the
 * keys every row sees go through one tile call; a row's keys before and
 * after that common range through calls of that row alone. */
static void tile_weighted_sums(const attention_job *a, const tile_rows *rows, const float *probabilities) {
  int64_t d = a->shape->head_dim;
  int64_t common_first = rows->first[0], common_last = rows->last[0];
  for (int r = 0; r < rows->count; r++) {
    memset(rows->out + r * rows->x_stride, 0, (size_t)d * sizeof(float));
    if (rows->first[r] > common_first) common_first = rows->first[r];
    if (rows->last[r] < common_last) common_last = rows->last[r];
  }
  bool shared = common_first <= common_last;
  for (int64_t c0 = 0, cols; c0 < d; c0 += cols) {
    cols = value_columns(d, c0);
    for (int r = 0; r < rows->count; r++) {
      int64_t before = rows->last[r] < common_first ? rows->last[r] : common_first - 1;
      weighted_sum(a, rows, probabilities, r, 1, rows->first[r], before, c0, cols);
    }
    if (shared) weighted_sum(a, rows, probabilities, 0, rows->count, common_first, common_last, c0, cols);
    for (int r = 0; r < rows->count; r++) {
      int64_t after = shared ? common_last + 1 : common_first;
      if (after < rows->first[r]) after = rows->first[r];
      weighted_sum(a, rows, probabilities, r, 1, after, rows->last[r], c0, cols);
    }
  }
}

static void attend_tile(const attention_job *a, tile_rows *rows, float *scores) {
  for (int r = 0; r < rows->count; r++)
    visible_keys(a->shape, rows->query[r], &rows->first[r], &rows->last[r]);
  tile_scores(a, rows, scores);
  for (int r = 0; r < rows->count; r++) row_softmax(a, rows, r, scores);
  tile_weighted_sums(a, rows, scores);
}

/* Tiles that all see the same keys (block_tiles > 1): the same chains as
 * attend_tile, with the key panels and value chunks outermost, so that a
 * panel or chunk serves every tile of the block from L1. Each row's
 * weighted sum still runs over its keys in increasing order, resumed
 * through its output between chunks (a float stored and reloaded is the
 * same float). */
static void attend_block(const attention_job *a, tile_rows *tiles, int count, float *scores) {
  int64_t d = a->shape->head_dim, stride = a->scores_stride;
  for (int b = 0; b < count; b++)
    for (int r = 0; r < tiles[b].count; r++)
      visible_keys(a->shape, tiles[b].query[r], &tiles[b].first[r], &tiles[b].last[r]);
  int64_t first = tiles[0].first[0], last = tiles[0].last[0];
  for (int64_t p = 0; p < a->panel_count; p++)
    for (int b = 0; b < count; b++) {
      cpu_gemm_tile tile = {tiles[b].q, tiles[b].x_stride,
                            a->keys_t + (tiles[b].kv_head * a->panel_count + p) * d * CPU_PANEL, CPU_PANEL, d,
                            CPU_PANEL, scores + b * CPU_GEMM_TILE_ROWS * stride + p * CPU_PANEL, stride, false,
                            NULL};
      a->kernel(&tile, tiles[b].count);
    }
  for (int b = 0; b < count; b++)
    for (int r = 0; r < tiles[b].count; r++) {
      row_softmax(a, &tiles[b], r, scores + b * CPU_GEMM_TILE_ROWS * stride);
      memset(tiles[b].out + r * tiles[b].x_stride, 0, (size_t)d * sizeof(float));
    }
  for (int64_t j0 = first; j0 <= last; j0 += VALUE_CHUNK) {
    int64_t j1 = j0 + VALUE_CHUNK - 1 < last ? j0 + VALUE_CHUNK - 1 : last;
    for (int64_t c0 = 0, cols; c0 < d; c0 += cols) {
      cols = value_columns(d, c0);
      for (int b = 0; b < count; b++)
        weighted_sum(a, &tiles[b], scores + b * CPU_GEMM_TILE_ROWS * stride, 0, tiles[b].count, j0, j1, c0, cols);
    }
  }
}

/* Query tile i of head h (query_tiles). */
static void query_tile(const attention_job *a, int64_t h, int64_t i, tile_rows *rows) {
  const cpu_attention_shape *shape = a->shape;
  int64_t d = shape->head_dim, heads = shape->head_count, first;
  tile_span(shape->query_count, a->tiles, i, &first, &rows->count);
  for (int r = 0; r < rows->count; r++) rows->query[r] = first + r, rows->head[r] = h;
  rows->kv_head = h / (heads / shape->kv_head_count);
  rows->x_stride = heads * d;
  rows->q = a->query + (first * heads + h) * d;
  rows->out = a->output + (first * heads + h) * d;
}

static void attention_worker(void *context, int64_t begin, int64_t end, int worker) {
  const attention_job *a = context;
  const cpu_attention_shape *shape = a->shape;
  float *scores = a->scores + worker * a->block_tiles * CPU_GEMM_TILE_ROWS * a->scores_stride;
  int64_t d = shape->head_dim, heads = shape->head_count, group = heads / shape->kv_head_count;
  for (int64_t item = begin; item < end; item++) {
    if (a->query_tiles) { /* head-major: a head's keys stay in cache across its queries */
      int64_t blocks = (a->tiles + a->block_tiles - 1) / a->block_tiles;
      int64_t h = item / blocks, i0 = item % blocks * a->block_tiles;
      tile_rows tiles[BLOCK_MAX_TILES] = {{0}};
      int count = (int)(a->tiles - i0 < a->block_tiles ? a->tiles - i0 : a->block_tiles);
      for (int b = 0; b < count; b++) query_tile(a, h, i0 + b, &tiles[b]);
      if (a->block_tiles > 1) attend_block(a, tiles, count, scores);
      else attend_tile(a, &tiles[0], scores);
      continue;
    }
    tile_rows rows;
    int64_t first;
    int64_t per_query = shape->kv_head_count * a->tiles;
    int64_t t = item / per_query, kv_head = item % per_query / a->tiles;
    tile_span(group, a->tiles, item % a->tiles, &first, &rows.count);
    for (int r = 0; r < rows.count; r++) rows.query[r] = t, rows.head[r] = kv_head * group + first + r;
    rows.kv_head = kv_head;
    rows.x_stride = d;
    rows.q = a->query + (t * heads + rows.head[0]) * d;
    rows.out = a->output + (t * heads + rows.head[0]) * d;
    attend_tile(a, &rows, scores);
  }
}

static vlm_status check_shape(const cpu_attention_shape *shape) {
  if (shape->query_count <= 0 || shape->past_count < 0 || shape->head_dim <= 0 ||
      shape->kv_head_count <= 0 || shape->head_count <= 0 ||
      shape->head_count % shape->kv_head_count != 0)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT,
                           "attention: bad shape (queries %lld, past %lld, heads "
                           "%lld, kv heads %lld, head_dim %lld)",
                           (long long)shape->query_count, (long long)shape->past_count,
                           (long long)shape->head_count, (long long)shape->kv_head_count,
                           (long long)shape->head_dim);
  if (shape->bias && shape->bias_stride < shape->past_count + shape->query_count)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT,
                           "attention: bias stride %lld is shorter than the %lld keys",
                           (long long)shape->bias_stride,
                           (long long)(shape->past_count + shape->query_count));
  if (shape->sliding_window < 0 || !(shape->soft_cap >= 0.0f))
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT,
                           "attention: negative sliding window or soft cap");
  return VLM_OK;
}

/* Values head-major (see HEAD_MAJOR_MIN_QUERIES), or NULL without memory
 * (then the cache's own layout: same results). */
static float *head_major_values(const cpu_attention_shape *shape, const float *value_cache, int64_t key_count) {
  int64_t d = shape->head_dim, kv_heads = shape->kv_head_count;
  float *values = vlm_allocate(NULL, (size_t)(key_count * kv_heads * d) * sizeof(float), VLM_DEFAULT_ALIGNMENT);
  if (!values) return NULL;
  for (int64_t h = 0; h < kv_heads; h++)
    for (int64_t p = 0; p < key_count; p++)
      memcpy(values + (h * key_count + p) * d, value_cache + (p * kv_heads + h) * d, (size_t)d * sizeof(float));
  return values;
}

vlm_status cpu_attention(vlm_thread_pool *pool, const cpu_attention_shape *shape,
                         const float *query, const float *key_cache,
                         const float *value_cache, float *output) {
  if (!shape || !query || !key_cache || !value_cache || !output)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "attention: missing pointer");
  vlm_status status = check_shape(shape);
  if (status) return status;
  int64_t d = shape->head_dim, kv_heads = shape->kv_head_count, heads = shape->head_count;
  int64_t group = heads / kv_heads, key_count = shape->past_count + shape->query_count;
  int64_t first_key, unused;
  visible_keys(shape, 0, &first_key, &unused); /* later queries never see earlier keys */
  int64_t panels = (key_count - first_key + CPU_PANEL - 1) / CPU_PANEL;
  int workers = vlm_thread_pool_size(pool);
  attention_job a = {shape, query, key_cache, output, cpu_gemm_select(VLM_DTYPE_F32), NULL, first_key, panels,
                     value_cache, d, kv_heads * d, NULL, panels * CPU_PANEL, shape->query_count >= group, 0};
  a.tiles = a.query_tiles ? tile_count(shape->query_count) : tile_count(group);
  a.block_tiles = 1;
  if (a.query_tiles && !shape->causal && shape->sliding_window == 0) {
    a.block_tiles = BLOCK_SCORE_BYTES / (CPU_GEMM_TILE_ROWS * a.scores_stride * (int64_t)sizeof(float));
    a.block_tiles = a.block_tiles < 1 ? 1 : a.block_tiles > BLOCK_MAX_TILES ? BLOCK_MAX_TILES : a.block_tiles;
  }
  a.keys_t = vlm_allocate(NULL, (size_t)(kv_heads * panels * d * CPU_PANEL) * sizeof(float), VLM_DEFAULT_ALIGNMENT);
  a.scores = vlm_allocate(NULL, (size_t)(workers * a.block_tiles * CPU_GEMM_TILE_ROWS * a.scores_stride) * sizeof(float),
                          VLM_DEFAULT_ALIGNMENT);
  float *copy = NULL;
  if (shape->query_count >= HEAD_MAJOR_MIN_QUERIES && kv_heads > 1) {
    copy = head_major_values(shape, value_cache, key_count);
    if (copy) a.values = copy, a.head_stride = key_count * d, a.position_stride = d;
  }
  if (!a.keys_t || !a.scores) {
    vlm_release(NULL, a.keys_t);
    vlm_release(NULL, a.scores);
    vlm_release(NULL, copy);
    return vlm_status_make(VLM_STATUS_RESOURCE_EXHAUSTED, "attention: no memory for %lld keys",
                           (long long)key_count);
  }
  transpose_job transpose = {&a, key_count};
  vlm_thread_pool_parallel_for(pool, kv_heads * panels, 4096 / (d * CPU_PANEL) + 1, transpose_worker, &transpose);
  int64_t items = a.query_tiles ? heads * ((a.tiles + a.block_tiles - 1) / a.block_tiles)
                                : shape->query_count * kv_heads * a.tiles;
  vlm_thread_pool_parallel_for(pool, items, 1, attention_worker, &a);
  vlm_release(NULL, copy);
  vlm_release(NULL, a.keys_t);
  vlm_release(NULL, a.scores);
  return VLM_OK;
}

/* ---- Decode rows, batched ------------------------------------------------------ */

/* Heads of one KV head's group per item (the columns of the score tiles:
 * 16 f32 lanes); a larger group is several items. */
#define DECODE_HEADS 16
/* Keys per score tile: 8 rows x one vector of heads is 8 independent
 * chains, enough to cover the fma latency. */
#define DECODE_KEY_ROWS CPU_GEMM_MAX_ROWS

typedef struct decode_job {
  const cpu_attention_row *rows;
  const int64_t *item_start;  /* first item of each row */
  int64_t row_count;
  cpu_gemm_kernel kernel;
  /* Per worker: q transposed [d][DECODE_HEADS], then the scores of the
   * item's keys [keys][DECODE_HEADS], then its probabilities
   * [DECODE_HEADS][keys]. */
  float *scratch;
  int64_t scratch_floats, key_stride;
} decode_job;

/* Item `item` of row `row`: KV head h, heads [h * group + c0, + count). */
static void decode_item(const decode_job *job, const cpu_attention_row *row, int64_t item, float *scratch) {
  const cpu_attention_shape *shape = &row->shape;
  int64_t d = shape->head_dim, kv_heads = shape->kv_head_count, group = shape->head_count / kv_heads;
  int64_t per_kv = (group + DECODE_HEADS - 1) / DECODE_HEADS;
  int64_t h = item / per_kv, c0 = item % per_kv * DECODE_HEADS;
  int count = (int)(group - c0 < DECODE_HEADS ? group - c0 : DECODE_HEADS);
  int64_t first, last;
  visible_keys(shape, 0, &first, &last);
  int64_t keys = last - first + 1, stride = job->key_stride;
  float *q_t = scratch, *scores = q_t + d * DECODE_HEADS, *probabilities = scores + stride * DECODE_HEADS;
  const float *q = row->query + (h * group + c0) * d;
  for (int c = 0; c < count; c++)
    for (int64_t k = 0; k < d; k++) q_t[k * DECODE_HEADS + c] = q[c * d + k];
  /* Score of key j for head c: the chain fma(key[k], q[k], acc) over k
   * from +0, which is fma(q[k], key[k], acc): the bits of cpu_attention's
   * tiles of heads against transposed keys, without transposing the keys
   * (the query is the small side here). */
  for (int64_t j = 0; j < keys; j += DECODE_KEY_ROWS) {
    int rows = (int)(keys - j < DECODE_KEY_ROWS ? keys - j : DECODE_KEY_ROWS);
    cpu_gemm_tile tile = {row->key_cache + ((first + j) * kv_heads + h) * d, kv_heads * d, q_t, DECODE_HEADS, d,
                          count, scores + j * DECODE_HEADS, DECODE_HEADS, false, NULL, NULL};
    job->kernel(&tile, rows);
  }
  for (int c = 0; c < count; c++) {
    float *p = probabilities + c * stride;
    for (int64_t j = 0; j < keys; j++) p[j] = scores[j * DECODE_HEADS + c];
    softmax_scores(shape, h * group + c0 + c, 0, first, p, keys);
  }
  /* Weighted sums: every head sees the same keys, so each column group is
   * one chain per element over [first, last] from +0, as in attend_tile. */
  float *out = row->output + (h * group + c0) * d;
  memset(out, 0, (size_t)(count * d) * sizeof(float));
  for (int r0 = 0; r0 < count; r0 += CPU_GEMM_TILE_ROWS) {
    int n = count - r0 < CPU_GEMM_TILE_ROWS ? count - r0 : CPU_GEMM_TILE_ROWS;
    for (int64_t c = 0, cols; c < d; c += cols) {
      cols = value_columns(d, c);
      cpu_gemm_tile tile = {probabilities + r0 * stride, stride, row->value_cache + (first * kv_heads + h) * d + c,
                            kv_heads * d, keys, (int)cols, out + r0 * d + c, d, true, NULL, NULL};
      job->kernel(&tile, n);
    }
  }
}

static void decode_worker(void *context, int64_t begin, int64_t end, int worker) {
  const decode_job *job = context;
  float *scratch = job->scratch + worker * job->scratch_floats;
  int64_t row = 0;
  for (int64_t item = begin; item < end; item++) {
    while (item >= job->item_start[row + 1]) row++;
    decode_item(job, &job->rows[row], item - job->item_start[row], scratch);
  }
}

vlm_status cpu_attention_decode(vlm_thread_pool *pool, const cpu_attention_row *rows, int64_t row_count) {
  if (row_count <= 0 || !rows) return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "attention: no decode rows");
  int64_t most_keys = 0, most_d = 0, items = 0;
  int64_t *item_start = vlm_allocate(NULL, (size_t)(row_count + 1) * sizeof(int64_t), VLM_DEFAULT_ALIGNMENT);
  if (!item_start) return vlm_status_make(VLM_STATUS_RESOURCE_EXHAUSTED, "attention: out of memory");
  for (int64_t r = 0; r < row_count; r++) {
    const cpu_attention_row *row = &rows[r];
    vlm_status status = check_shape(&row->shape);
    if (!status && row->shape.query_count != 1)
      status = vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "attention: a decode row has %lld queries",
                               (long long)row->shape.query_count);
    if (!status && (!row->query || !row->key_cache || !row->value_cache || !row->output))
      status = vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "attention: missing pointer");
    if (status) {
      vlm_release(NULL, item_start);
      return status;
    }
    int64_t first, last, group = row->shape.head_count / row->shape.kv_head_count;
    visible_keys(&row->shape, 0, &first, &last);
    if (last - first + 1 > most_keys) most_keys = last - first + 1;
    if (row->shape.head_dim > most_d) most_d = row->shape.head_dim;
    item_start[r] = items;
    items += row->shape.kv_head_count * ((group + DECODE_HEADS - 1) / DECODE_HEADS);
  }
  item_start[row_count] = items;
  int workers = vlm_thread_pool_size(pool);
  /* Rows of scores padded to whole cache lines (16 floats). */
  int64_t stride = (most_keys + 15) / 16 * 16;
  int64_t floats = (most_d + 2 * stride) * DECODE_HEADS;
  decode_job job = {rows, item_start, row_count, cpu_gemm_select(VLM_DTYPE_F32), NULL, floats, stride};
  job.scratch = vlm_allocate(NULL, (size_t)(workers * floats) * sizeof(float), VLM_DEFAULT_ALIGNMENT);
  if (!job.scratch) {
    vlm_release(NULL, item_start);
    return vlm_status_make(VLM_STATUS_RESOURCE_EXHAUSTED, "attention: no memory for %lld keys", (long long)most_keys);
  }
  vlm_thread_pool_parallel_for(pool, items, 1, decode_worker, &job);
  vlm_release(NULL, job.scratch);
  vlm_release(NULL, item_start);
  return VLM_OK;
}
