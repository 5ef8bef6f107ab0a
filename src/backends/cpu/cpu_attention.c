/* Scaled dot-product attention of a chunk of queries against a KV cache.
 *
 * Work is split over (query, head) pairs only. Each pair runs the same code
 * whatever else is in the call: scores over the visible keys in increasing
 * position (contract dot products), softmax with sequential sums, then the
 * weighted sum of values, one fma per element in increasing position. So the
 * output of a query is the same bits whether it came alone (decode), inside
 * a prefill chunk of any size, or on any thread. */
#include "backends/cpu/cpu_internal.h"

#include <math.h>
#include <string.h>

#include "backends/cpu/cpu_kernels.h"
#include "core/alloc.h"

/* Queries from which attention works on a head-major copy of keys/values. */
#define HEAD_MAJOR_MIN_QUERIES 16

typedef struct attention_job {
  const cpu_attention_shape *shape;
  const float *query, *key_cache, *value_cache;
  /* Where key/value row p of KV head h is: cache + h * head_stride + p *
   * position_stride (the cache's own layout, or a head-major copy). */
  int64_t head_stride, position_stride;
  float *output;
  float *scores;          /* one row of past + T scores per worker */
  int64_t scores_stride;
} attention_job;

/* Visible key positions [*first, *last] for query t. */
static void visible_keys(const cpu_attention_shape *shape, int64_t t,
                         int64_t *first, int64_t *last) {
  int64_t position = shape->past_count + t;
  *last = shape->causal ? position : shape->past_count + shape->query_count - 1;
  *first = 0;
  if (shape->sliding_window > 0 && position - shape->sliding_window + 1 > 0)
    *first = position - shape->sliding_window + 1;
}

static void attend_one(const attention_job *job, int64_t t, int64_t h, float *scores) {
  const cpu_attention_shape *shape = job->shape;
  int64_t d = shape->head_dim;
  int64_t kv_head = h / (shape->head_count / shape->kv_head_count);
  int64_t kv_stride = job->position_stride;
  const float *q = job->query + (t * shape->head_count + h) * d;
  float *out = job->output + (t * shape->head_count + h) * d;
  int64_t first, last;
  visible_keys(shape, t, &first, &last);
  int64_t count = last - first + 1;
  int64_t head_offset = kv_head * job->head_stride;
  cpu_dot_rows(q, job->key_cache + head_offset + first * kv_stride, kv_stride, count, d, scores);
  for (int64_t j = 0; j < count; j++) {
    float score = scores[j] * shape->scale;
    if (shape->soft_cap > 0.0f) score = shape->soft_cap * tanhf(score / shape->soft_cap);
    scores[j] = score;
  }
  const float *bias = shape->bias ? shape->bias + t * shape->bias_stride + first : NULL;
  cpu_softmax(scores, bias, count, scores);
  cpu_weighted_sum(out, scores, job->value_cache + head_offset + first * kv_stride, kv_stride, count, d);
}

static void attention_worker(void *context, int64_t begin, int64_t end,
                             int worker_index) {
  const attention_job *job = context;
  float *scores = job->scores + worker_index * job->scores_stride;
  /* Head-major: a run of pairs is every query of one head, so that head's
   * keys and values stay in L2 across its queries (query-major order cycled
   * through every head's, several MiB for a vision tower, from L3 each
   * time). Pairs are independent: the order changes no result. */
  int64_t queries = job->shape->query_count;
  for (int64_t pair = begin; pair < end; pair++)
    attend_one(job, pair % queries, pair / queries, scores);
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

vlm_status cpu_attention(vlm_thread_pool *pool, const cpu_attention_shape *shape,
                         const float *query, const float *key_cache,
                         const float *value_cache, float *output) {
  if (!shape || !query || !key_cache || !value_cache || !output)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "attention: missing pointer");
  vlm_status status = check_shape(shape);
  if (status) return status;
  int worker_count = vlm_thread_pool_size(pool);
  int64_t key_count = shape->past_count + shape->query_count;
  /* Rows padded to a cache line so workers never share one. */
  int64_t stride = (key_count + 15) / 16 * 16;
  float *scores = vlm_allocate(NULL, (size_t)(stride * worker_count) * sizeof(float),
                               VLM_DEFAULT_ALIGNMENT);
  if (!scores)
    return vlm_status_make(VLM_STATUS_RESOURCE_EXHAUSTED,
                           "attention: no memory for %lld scores", (long long)key_count);
  int64_t d = shape->head_dim, kv_heads = shape->kv_head_count;
  attention_job job = {shape, query, key_cache, value_cache, d, kv_heads * d, output, scores, stride};
  /* Many queries (prefill, encoders): each reads all of its head's keys and
   * values, which the cache interleaves with the other heads' (rows
   * kv_heads * head_dim apart: a page apart for a vision tower). A
   * head-major copy makes each head's rows contiguous for every query's
   * pass; copying is one pass over keys and values, small next to the
   * queries' passes. The arithmetic is the same. */
  float *copy = NULL;
  if (shape->query_count >= HEAD_MAJOR_MIN_QUERIES && kv_heads > 1) {
    copy = vlm_allocate(NULL, (size_t)(2 * key_count * kv_heads * d) * sizeof(float), VLM_DEFAULT_ALIGNMENT);
    if (copy) {
      float *keys = copy, *values = copy + key_count * kv_heads * d;
      for (int64_t h = 0; h < kv_heads; h++)
        for (int64_t p = 0; p < key_count; p++) {
          memcpy(keys + (h * key_count + p) * d, key_cache + (p * kv_heads + h) * d, (size_t)d * sizeof(float));
          memcpy(values + (h * key_count + p) * d, value_cache + (p * kv_heads + h) * d, (size_t)d * sizeof(float));
        }
      job.key_cache = keys;
      job.value_cache = values;
      job.head_stride = key_count * d;
      job.position_stride = d;
    } /* no memory for the copy: the cache's own layout, same results */
  }
  int64_t pairs = shape->query_count * shape->head_count;
  vlm_thread_pool_parallel_for(pool, pairs, 1, attention_worker, &job);
  vlm_release(NULL, copy);
  vlm_release(NULL, scores);
  return VLM_OK;
}
