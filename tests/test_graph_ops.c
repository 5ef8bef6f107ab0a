/* Operator contracts (SPEC 5.4): each general graph op as a one-op graph,
 * run by the cpu backend and, where the pinned IREE is present, by the xla
 * backend (all cases as functions of one stateless graph module), against
 * a float64 reference computed here. Tolerances are float32's: 1e-6
 * absolute for data movement (which must be exact), and |got - want| <=
 * 2e-6 + 2e-5 |want| for arithmetic (attention, RoPE).
 *
 * Ops: concat (rows and columns), slice, row_select, scale_rows (by an
 * input and by a computed value), gather from a computed table, transpose,
 * average_pool (a 2x2 kernel whose grid leaves a remainder, and a 3x3 one:
 * a divisor that is not a power of two), segment_attention (three segments
 * of different lengths; with a key mask; causal within segments, alone,
 * mixed with bidirectional rows and with a key mask), RoPE at
 * positions of its own: axial 2D (vision towers) and 3-axis M-RoPE, plain
 * and interleaved (Qwen2-VL, Qwen3-VL), moe (top-k routing renormalised or
 * not, both expert layouts, rows choosing different experts; on the cpu
 * also a row's result alone equals it in a batch, bit for bit); conv2d
 * (strided and padded, grouped, depthwise, a causal conv1d with a channel
 * multiplier over two batch items), permute, add and mul broadcasting a
 * suffix of the shape, and biased_attention (two blocks, per-head bias with
 * a -inf entry); the decoder's feature merge block in both modes
 * (replace the marked rows, add to them); tanh, softplus (past its
 * threshold too), clamp (two-sided, one-sided), row mean and std (both
 * corrections), matmul of two activations (plain and batched), and
 * cross attention (other rows, other widths; grouped and one latent head). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu_graph.h"
#include "core/alloc.h"
#include "core/thread_pool.h"
#include "graph/graph.h"
#include "core/tensor_list.h"
#include "io/config.h"
#include "models/blocks.h"
#include "models/decoder.h"
#include "test.h"

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define MAX_CASES 64

typedef struct op_case {
  char name[32];
  vlm_graph graph;
  vlm_tensor_list inputs;
  vlm_rope_config rope;       /* for the RoPE cases (the graph points here) */
  vlm_rope_config ropes[VLM_GRAPH_MAX_ROPES]; /* for the per-layer choice among several */
  double *expected;           /* the output node's elements, float64 */
  size_t count;
  bool exact;                 /* data movement: equal to the input values */
} op_case;

static op_case cases[MAX_CASES];
static int case_count;

/* Deterministic values in [-1, 1). */
static float value_at(uint64_t seed, size_t index) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + index * 0xBF58476D1CE4E5B9ULL + 1;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 29;
  return (float)((double)(x >> 40) / (double)(1ULL << 23) - 1.0);
}

static float *add_f32(op_case *c, const char *name, int rank, const int64_t *shape, uint64_t seed) {
  void *data = NULL;
  CHECK_OK(vlm_tensor_list_add(&c->inputs, name, VLM_DTYPE_F32, rank, shape, &data));
  float *values = data;
  size_t count = data ? vlm_named_tensor_bytes(vlm_tensor_list_find(&c->inputs, name)) / sizeof(float) : 0;
  for (size_t i = 0; i < count; i++) values[i] = value_at(seed, i);
  return values;
}

static int32_t *add_i32(op_case *c, const char *name, int rank, const int64_t *shape, const int32_t *values) {
  void *data = NULL;
  CHECK_OK(vlm_tensor_list_add(&c->inputs, name, VLM_DTYPE_I32, rank, shape, &data));
  size_t count = data ? vlm_named_tensor_bytes(vlm_tensor_list_find(&c->inputs, name)) / sizeof(int32_t) : 0;
  if (data) memcpy(data, values, count * sizeof(int32_t));
  return data;
}

static op_case *new_case(const char *name, size_t count, bool exact) {
  op_case *c = &cases[case_count++];
  snprintf(c->name, sizeof(c->name), "%s", name);
  vlm_graph_init(&c->graph);
  c->expected = calloc(count, sizeof(double));
  c->count = count;
  c->exact = exact;
  return c;
}

/* ---------------------------------------------------------------------- */

static void build_concat_rows(void) {
  op_case *c = new_case("concat_rows", 7 * 4, true);
  float *a = add_f32(c, "a", 2, SHAPE(2, 4), 1), *b = add_f32(c, "b", 2, SHAPE(5, 4), 2);
  int32_t na = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 2, SHAPE(2, 4), "a");
  int32_t nb = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 2, SHAPE(5, 4), "b");
  c->graph.output = vlm_graph_concat(&c->graph, (int32_t[]){na, nb}, 2, 0, "joined");
  for (int i = 0; i < 8; i++) c->expected[i] = a[i];
  for (int i = 0; i < 20; i++) c->expected[8 + i] = b[i];
}

static void build_concat_columns(void) {
  op_case *c = new_case("concat_columns", 3 * 7, true);
  float *a = add_f32(c, "a", 2, SHAPE(3, 2), 3), *b = add_f32(c, "b", 2, SHAPE(3, 5), 4);
  int32_t na = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 2, SHAPE(3, 2), "a");
  int32_t nb = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 2, SHAPE(3, 5), "b");
  c->graph.output = vlm_graph_concat(&c->graph, (int32_t[]){na, nb}, 2, 1, "joined");
  for (int r = 0; r < 3; r++) {
    for (int i = 0; i < 2; i++) c->expected[r * 7 + i] = a[r * 2 + i];
    for (int i = 0; i < 5; i++) c->expected[r * 7 + 2 + i] = b[r * 5 + i];
  }
}

static void build_slice(void) {
  op_case *c = new_case("slice_columns", 4 * 3, true);
  float *x = add_f32(c, "x", 2, SHAPE(4, 9), 14);
  int32_t nx = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 2, SHAPE(4, 9), "x");
  c->graph.output = vlm_graph_slice(&c->graph, nx, 1, 3, 3, "k"); /* the middle third of a fused qkv */
  for (int r = 0; r < 4; r++)
    for (int i = 0; i < 3; i++) c->expected[r * 3 + i] = x[r * 9 + 3 + i];
}

static void build_row_select(void) {
  op_case *c = new_case("row_select", 5 * 3, true);
  float *a = add_f32(c, "a", 2, SHAPE(5, 3), 5), *b = add_f32(c, "b", 2, SHAPE(5, 3), 6);
  const int32_t mask[5] = {0, 1, 1, 0, 7};
  add_i32(c, "mask", 1, SHAPE(5), mask);
  int32_t nm = vlm_graph_input(&c->graph, VLM_DTYPE_I32, 1, SHAPE(5), "mask");
  int32_t na = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 2, SHAPE(5, 3), "a");
  int32_t nb = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 2, SHAPE(5, 3), "b");
  c->graph.output = vlm_graph_row_select(&c->graph, nm, na, nb, "merged");
  for (int r = 0; r < 5; r++)
    for (int i = 0; i < 3; i++) c->expected[r * 3 + i] = mask[r] ? a[r * 3 + i] : b[r * 3 + i];
}

/* The decoder's feature merge block (models/blocks.h) in both modes:
 * replace the marked rows (masked_scatter) or add to them (Molmo). */
static void build_feature_merge(const char *name, vlm_feature_merge merge) {
  enum { ROWS = 6, WIDTH = 4 };
  op_case *c = new_case(name, ROWS * WIDTH, merge == VLM_FEATURE_MERGE_REPLACE);
  static vlm_text_config text = {.hidden_size = WIDTH};
  static vlm_decoder_description descriptions[2];
  static vlm_decoder_step steps[2];
  vlm_decoder_description *description = &descriptions[merge == VLM_FEATURE_MERGE_ADD];
  vlm_decoder_step *step = &steps[merge == VLM_FEATURE_MERGE_ADD];
  *description = (vlm_decoder_description){.text = &text, .prefix = "model.", .merge = merge};
  *step = (vlm_decoder_step){.row_count = ROWS, .with_features = true};
  float *embedded = add_f32(c, "embedded", 2, SHAPE(ROWS, WIDTH), 40);
  float *features = add_f32(c, "features", 2, SHAPE(ROWS, WIDTH), 41);
  const int32_t mask[ROWS] = {0, 1, 1, 0, 3, 0};
  add_i32(c, "feature_mask", 1, SHAPE(ROWS), mask);
  vlm_decoder_blocks blocks = {.description = description, .step = step, .text = &text, .graph = &c->graph};
  int32_t ne = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 2, SHAPE(ROWS, WIDTH), "embedded");
  c->graph.output = vlm_block_merge_features(&blocks, ne);
  for (int r = 0; r < ROWS; r++)
    for (int i = 0; i < WIDTH; i++) {
      double e = embedded[r * WIDTH + i], f = features[r * WIDTH + i];
      c->expected[r * WIDTH + i] = !mask[r] ? e : merge == VLM_FEATURE_MERGE_ADD ? e + f : f;
    }
}

/* tanh, softplus (both sides of torch's threshold 20) and clamp (two
 * sides; one side open). */
static void build_unary(const char *name, vlm_unary kind, double low, double high) {
  enum { ROWS = 4, WIDTH = 6 };
  op_case *c = new_case(name, ROWS * WIDTH, kind == VLM_UNARY_CLAMP);
  float *x = add_f32(c, "x", 2, SHAPE(ROWS, WIDTH), 50 + (uint64_t)kind);
  for (int i = 0; i < ROWS * WIDTH; i++) x[i] *= 30.0f; /* [-30, 30): past softplus's threshold */
  int32_t nx = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 2, SHAPE(ROWS, WIDTH), "x");
  c->graph.output = kind == VLM_UNARY_TANH       ? vlm_graph_tanh(&c->graph, nx, "y")
                    : kind == VLM_UNARY_SOFTPLUS ? vlm_graph_softplus(&c->graph, nx, "y")
                                                 : vlm_graph_clamp(&c->graph, nx, low, high, "y");
  for (int i = 0; i < ROWS * WIDTH; i++) {
    double v = x[i];
    c->expected[i] = kind == VLM_UNARY_TANH       ? tanh(v)
                     : kind == VLM_UNARY_SOFTPLUS ? (v > 20.0 ? v : log1p(exp(v)))
                                                  : (v < low ? low : v > high ? high : v);
  }
}

/* Each row's mean, std (Bessel's and the population's), repeated; 3-d. */
static void build_row_moment(const char *name, bool std, int32_t correction) {
  enum { A = 2, B = 3, WIDTH = 7 };
  op_case *c = new_case(name, A * B * WIDTH, false);
  float *x = add_f32(c, "x", 3, SHAPE(A, B, WIDTH), 60 + (uint64_t)correction);
  for (int i = 0; i < A * B * WIDTH; i++) x[i] = 3.0f + 2.0f * x[i]; /* a mean far from 0 */
  int32_t nx = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 3, SHAPE(A, B, WIDTH), "x");
  c->graph.output = std ? vlm_graph_row_std(&c->graph, nx, correction, "y") : vlm_graph_row_mean(&c->graph, nx, "y");
  for (int r = 0; r < A * B; r++) {
    double sum = 0, squares = 0;
    for (int i = 0; i < WIDTH; i++) sum += x[r * WIDTH + i];
    double mean = sum / WIDTH;
    for (int i = 0; i < WIDTH; i++) squares += (x[r * WIDTH + i] - mean) * (x[r * WIDTH + i] - mean);
    double value = std ? sqrt(squares / (WIDTH - correction)) : mean;
    for (int i = 0; i < WIDTH; i++) c->expected[r * WIDTH + i] = value;
  }
}

/* a x b of two activations: [m, k] x [k, n], and batched. */
static void build_matmul(const char *name, int64_t batch) {
  enum { M = 3, K = 5, N = 4 };
  op_case *c = new_case(name, (size_t)(batch * M * N), false);
  int rank = batch > 1 ? 3 : 2;
  const int64_t *a_shape = batch > 1 ? SHAPE(batch, M, K) : SHAPE(M, K);
  const int64_t *b_shape = batch > 1 ? SHAPE(batch, K, N) : SHAPE(K, N);
  float *a = add_f32(c, "a", rank, a_shape, 70), *b = add_f32(c, "b", rank, b_shape, 71);
  int32_t na = vlm_graph_input(&c->graph, VLM_DTYPE_F32, rank, a_shape, "a");
  int32_t nb = vlm_graph_input(&c->graph, VLM_DTYPE_F32, rank, b_shape, "b");
  c->graph.output = vlm_graph_matmul(&c->graph, na, nb, "ab");
  for (int64_t p = 0; p < batch; p++)
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double sum = 0;
        for (int t = 0; t < K; t++) sum += (double)a[(p * M + i) * K + t] * b[(p * K + t) * N + j];
        c->expected[(p * M + i) * N + j] = sum;
      }
}

/* Queries over other rows' keys and values of other widths, grouped heads. */
static void build_cross_attention(const char *name, int64_t rq, int64_t rk, int64_t heads, int64_t kv_heads,
                                  int64_t dk, int64_t dv, uint64_t seed) {
  op_case *c = new_case(name, (size_t)(rq * heads * dv), false);
  float *q = add_f32(c, "q", 3, SHAPE(rq, heads, dk), seed), *k = add_f32(c, "k", 3, SHAPE(rk, kv_heads, dk), seed + 1);
  float *v = add_f32(c, "v", 3, SHAPE(rk, kv_heads, dv), seed + 2);
  int32_t nq = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 3, SHAPE(rq, heads, dk), "q");
  int32_t nk = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 3, SHAPE(rk, kv_heads, dk), "k");
  int32_t nv = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 3, SHAPE(rk, kv_heads, dv), "v");
  double scale = 1.5 / sqrt((double)dk);
  c->graph.output = vlm_graph_cross_attention(&c->graph, nq, nk, nv, scale, "attended");
  double scores[16];
  for (int64_t i = 0; i < rq; i++)
    for (int64_t h = 0; h < heads; h++) {
      int64_t kv = h / (heads / kv_heads);
      double maximum = -INFINITY, total = 0;
      for (int64_t j = 0; j < rk; j++) {
        double dot = 0;
        for (int64_t d = 0; d < dk; d++) dot += (double)q[(i * heads + h) * dk + d] * k[(j * kv_heads + kv) * dk + d];
        scores[j] = dot * scale;
        if (scores[j] > maximum) maximum = scores[j];
      }
      for (int64_t j = 0; j < rk; j++) total += (scores[j] = exp(scores[j] - maximum));
      for (int64_t d = 0; d < dv; d++) {
        double sum = 0;
        for (int64_t j = 0; j < rk; j++) sum += scores[j] * v[(j * kv_heads + kv) * dv + d];
        c->expected[(i * heads + h) * dv + d] = sum / total;
      }
    }
}

/* x[r] * s[r]: by an input [rows] and by a computed one; 3-d x too. */
static void build_scale_rows(void) {
  op_case *c = new_case("scale_rows", 5 * 3 * 2, false);
  float *x = add_f32(c, "x", 3, SHAPE(5, 3, 2), 15), *s = add_f32(c, "s", 1, SHAPE(5), 16);
  int32_t nx = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 3, SHAPE(5, 3, 2), "x");
  int32_t ns = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 1, SHAPE(5), "s");
  c->graph.output = vlm_graph_scale_rows(&c->graph, nx, ns, "scaled");
  for (int r = 0; r < 5; r++)
    for (int i = 0; i < 6; i++) c->expected[r * 6 + i] = (double)x[r * 6 + i] * s[r];
  c = new_case("scale_rows_computed", 4 * 3, false);
  float *y = add_f32(c, "y", 2, SHAPE(4, 3), 17), *t = add_f32(c, "t", 1, SHAPE(4), 18);
  int32_t ny = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 2, SHAPE(4, 3), "y");
  int32_t nt = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 1, SHAPE(4), "t");
  int32_t halved = vlm_graph_scale(&c->graph, nt, 0.5, "halved");
  c->graph.output = vlm_graph_scale_rows(&c->graph, ny, halved, "scaled");
  for (int r = 0; r < 4; r++)
    for (int i = 0; i < 3; i++) c->expected[r * 3 + i] = (double)y[r * 3 + i] * (0.5 * t[r]);
}

static void build_gather_computed(void) {
  op_case *c = new_case("gather_computed", 6 * 4, true);
  float *table = add_f32(c, "table", 2, SHAPE(3, 4), 7);
  const int32_t ids[6] = {2, 0, 0, 1, 2, 2};
  add_i32(c, "ids", 1, SHAPE(6), ids);
  int32_t nt = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 2, SHAPE(3, 4), "table");
  int32_t ni = vlm_graph_input(&c->graph, VLM_DTYPE_I32, 1, SHAPE(6), "ids");
  int32_t doubled = vlm_graph_scale(&c->graph, nt, 2.0, "doubled"); /* a computed table */
  c->graph.output = vlm_graph_gather(&c->graph, doubled, ni, "rows");
  for (int r = 0; r < 6; r++)
    for (int i = 0; i < 4; i++) c->expected[r * 4 + i] = 2.0 * table[ids[r] * 4 + i];
}

static void build_transpose(void) {
  op_case *c = new_case("transpose", 3 * 5, true);
  float *x = add_f32(c, "x", 2, SHAPE(3, 5), 15);
  int32_t nx = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 2, SHAPE(3, 5), "x");
  c->graph.output = vlm_graph_transpose(&c->graph, nx, "flipped");
  for (int r = 0; r < 3; r++)
    for (int i = 0; i < 5; i++) c->expected[i * 3 + r] = x[r * 5 + i];
}

/* `images` grids of height x width rows of `channels` values, pooled over
 * kernel x kernel windows, in float64. */
static void build_average_pool(const char *name, int64_t images, int64_t height, int64_t width, int64_t kernel,
                               uint64_t seed) {
  enum { CHANNELS = 3 };
  int64_t out_height = height / kernel, out_width = width / kernel;
  op_case *c = new_case(name, (size_t)(images * out_height * out_width * CHANNELS), false);
  float *x = add_f32(c, "x", 2, SHAPE(images * height * width, CHANNELS), seed);
  int32_t nx = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 2, SHAPE(images * height * width, CHANNELS), "x");
  c->graph.output = vlm_graph_average_pool(&c->graph, nx, images, height, width, kernel, "pooled");
  for (int64_t image = 0; image < images; image++)
    for (int64_t oy = 0; oy < out_height; oy++)
      for (int64_t ox = 0; ox < out_width; ox++)
        for (int64_t ch = 0; ch < CHANNELS; ch++) {
          double sum = 0;
          for (int64_t ky = 0; ky < kernel; ky++)
            for (int64_t kx = 0; kx < kernel; kx++)
              sum += x[((image * height + oy * kernel + ky) * width + ox * kernel + kx) * CHANNELS + ch];
          c->expected[((image * out_height + oy) * out_width + ox) * CHANNELS + ch] = sum / (double)(kernel * kernel);
        }
}

/* Softmax(q.k * scale) v within each segment, in float64; a causal row
 * (causal flags given and its flag not 0) over the keys of its segment up
 * to itself; with a key mask, over the unmasked ones among the keys it may
 * see (all of them where it may see no unmasked one: graph.h). */
static void build_segment_attention(const char *name, const int32_t *key_mask, const int32_t *causal) {
  enum { ROWS = 9, HEADS = 2, DIM = 4 };
  op_case *c = new_case(name, ROWS * HEADS * DIM, false);
  float *q = add_f32(c, "q", 3, SHAPE(ROWS, HEADS, DIM), 8);
  float *k = add_f32(c, "k", 3, SHAPE(ROWS, HEADS, DIM), 9);
  float *v = add_f32(c, "v", 3, SHAPE(ROWS, HEADS, DIM), 10);
  const int32_t segments[ROWS] = {0, 0, 0, 0, 5, 5, 2, 2, 2};
  add_i32(c, "segments", 1, SHAPE(ROWS), segments);
  int32_t nq = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 3, SHAPE(ROWS, HEADS, DIM), "q");
  int32_t nk = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 3, SHAPE(ROWS, HEADS, DIM), "k");
  int32_t nv = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 3, SHAPE(ROWS, HEADS, DIM), "v");
  int32_t ns = vlm_graph_input(&c->graph, VLM_DTYPE_I32, 1, SHAPE(ROWS), "segments");
  double scale = 0.5;
  int32_t nm = -1, nc = -1;
  if (key_mask) {
    add_i32(c, "key_mask", 1, SHAPE(ROWS), key_mask);
    nm = vlm_graph_input(&c->graph, VLM_DTYPE_I32, 1, SHAPE(ROWS), "key_mask");
  }
  if (causal) {
    add_i32(c, "causal", 1, SHAPE(ROWS), causal);
    nc = vlm_graph_input(&c->graph, VLM_DTYPE_I32, 1, SHAPE(ROWS), "causal");
    c->graph.output = vlm_graph_segment_attention_causal(&c->graph, nq, nk, nv, ns, nm, nc, scale, "attended");
  } else if (key_mask) {
    c->graph.output = vlm_graph_segment_attention_masked(&c->graph, nq, nk, nv, ns, nm, scale, "attended");
  } else {
    c->graph.output = vlm_graph_segment_attention(&c->graph, nq, nk, nv, ns, scale, "attended");
  }
  for (int r = 0; r < ROWS; r++)
    for (int h = 0; h < HEADS; h++) {
      bool any_unmasked = false, seen[ROWS];
      for (int j = 0; j < ROWS; j++) {
        seen[j] = segments[j] == segments[r] && (!causal || !causal[r] || j <= r);
        any_unmasked |= seen[j] && (!key_mask || key_mask[j]);
      }
      double scores[ROWS], largest = -INFINITY, sum = 0;
      for (int j = 0; j < ROWS; j++) {
        scores[j] = -INFINITY;
        if (!seen[j] || (any_unmasked && key_mask && !key_mask[j])) continue;
        double dot = 0;
        for (int d = 0; d < DIM; d++) dot += (double)q[(r * HEADS + h) * DIM + d] * k[(j * HEADS + h) * DIM + d];
        scores[j] = dot * scale;
        if (scores[j] > largest) largest = scores[j];
      }
      for (int j = 0; j < ROWS; j++) sum += scores[j] == -INFINITY ? 0 : exp(scores[j] - largest);
      for (int d = 0; d < DIM; d++) {
        double out = 0;
        for (int j = 0; j < ROWS; j++)
          if (scores[j] != -INFINITY) out += exp(scores[j] - largest) / sum * v[(j * HEADS + h) * DIM + d];
        c->expected[(r * HEADS + h) * DIM + d] = out;
      }
    }
}

/* x rotated by rotate_half with angle position(axis of frequency i) *
 * inverse frequency i, the frequencies computed here in float64 from the
 * same formula (default RoPE; axial: per axis over dim / axes). */
static void rope_reference(const vlm_rope_config *rope, const float *x, int64_t rows, int64_t heads, int64_t dim,
                           const int32_t *positions, int axes, double *out) {
  int64_t half = rope->rotary_dimension / 2;
  double inverse[64];
  int axis_of[64];
  for (int64_t i = 0; i < half; i++) {
    if (rope->axial_axes > 1) {
      int64_t part = rope->rotary_dimension / rope->axial_axes, per_axis = half / rope->axial_axes;
      inverse[i] = 1.0 / pow(rope->theta, (double)(2 * (i % per_axis)) / (double)part);
      axis_of[i] = (int)(i / per_axis);
    } else {
      inverse[i] = 1.0 / pow(rope->theta, (double)(2 * i) / (double)rope->rotary_dimension);
      axis_of[i] = 0;
      if (rope->mrope_section_count && !rope->mrope_interleaved) {
        int64_t start = 0;
        for (size_t s = 0; s < rope->mrope_section_count; s++) {
          if (i >= start && i < start + rope->mrope_section[s]) axis_of[i] = (int)(s % 3);
          start += rope->mrope_section[s];
        }
      } else if (rope->mrope_interleaved) {
        if (i % 3 == 1 && i < 3 * rope->mrope_section[1]) axis_of[i] = 1;
        if (i % 3 == 2 && i < 3 * rope->mrope_section[2]) axis_of[i] = 2;
      }
    }
  }
  for (int64_t r = 0; r < rows; r++)
    for (int64_t h = 0; h < heads; h++) {
      const float *row = x + (r * heads + h) * dim;
      double *target = out + (r * heads + h) * dim;
      for (int64_t i = 0; i < half; i++) {
        int axis = axis_of[i] < axes ? axis_of[i] : 0;
        double angle = positions[axis * rows + r] * inverse[i];
        target[i] = row[i] * cos(angle) - row[i + half] * sin(angle);
        target[i + half] = row[i + half] * cos(angle) + row[i] * sin(angle);
      }
      for (int64_t i = 2 * half; i < dim; i++) target[i] = row[i];
    }
}

static void build_rope_case(const char *name, vlm_rope_config rope, int axes, uint64_t seed) {
  enum { ROWS = 6, HEADS = 2, DIM = 16 };
  op_case *c = new_case(name, ROWS * HEADS * DIM, false);
  c->rope = rope;
  float *x = add_f32(c, "x", 3, SHAPE(ROWS, HEADS, DIM), seed);
  int32_t positions[3 * ROWS];
  for (int a = 0; a < axes; a++)
    for (int r = 0; r < ROWS; r++) positions[a * ROWS + r] = (int32_t)(a == 0 ? 3 + r : (r * (a + 1)) % 5 + 7 * a);
  add_i32(c, "positions", 2, SHAPE(axes, ROWS), positions);
  c->graph.ropes[0] = &c->rope;
  c->graph.rope_count = 1;
  int32_t nx = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 3, SHAPE(ROWS, HEADS, DIM), "x");
  int32_t np = vlm_graph_input(&c->graph, VLM_DTYPE_I32, 2, SHAPE(axes, ROWS), "positions");
  c->graph.output = vlm_graph_rope_at(&c->graph, nx, np, 0, "rotated");
  rope_reference(&c->rope, x, ROWS, HEADS, DIM, positions, axes, c->expected);
}

/* A graph with VLM_GRAPH_MAX_ROPES tables, each rope node choosing one
 * (a decoder's per-layer RoPE choice): thetas and partial rotary differ;
 * the four results side by side. */
static void build_rope_tables(void) {
  enum { ROWS = 5, HEADS = 2, DIM = 8, TABLES = VLM_GRAPH_MAX_ROPES };
  op_case *c = new_case("rope_per_layer_tables", ROWS * TABLES * HEADS * DIM, false);
  float *x = add_f32(c, "x", 3, SHAPE(ROWS, HEADS, DIM), 80);
  int32_t positions[ROWS] = {0, 3, 4, 9, 17};
  add_i32(c, "positions", 2, SHAPE(1, ROWS), positions);
  int32_t nx = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 3, SHAPE(ROWS, HEADS, DIM), "x");
  int32_t np = vlm_graph_input(&c->graph, VLM_DTYPE_I32, 2, SHAPE(1, ROWS), "positions");
  int32_t rotated[TABLES];
  double *each = calloc(ROWS * HEADS * DIM, sizeof(double));
  for (int t = 0; t < TABLES; t++) {
    c->ropes[t] = (vlm_rope_config){.type = VLM_ROPE_DEFAULT, .theta = t == 1 ? 1000000 : t == 3 ? 500 : 10000,
                                    .factor = 1, .rotary_dimension = t == 2 ? DIM / 2 : DIM};
    c->graph.ropes[t] = &c->ropes[t];
    rotated[t] = vlm_graph_rope_at(&c->graph, nx, np, t, "rotated_%d", t);
    rope_reference(&c->ropes[t], x, ROWS, HEADS, DIM, positions, 1, each);
    for (int r = 0; r < ROWS; r++)
      for (int i = 0; i < HEADS * DIM; i++)
        c->expected[(r * TABLES + t) * HEADS * DIM + i] = each ? each[r * HEADS * DIM + i] : 0;
  }
  free(each);
  c->graph.rope_count = TABLES;
  c->graph.output = vlm_graph_concat(&c->graph, rotated, TABLES, 1, "side_by_side");
}

/* ---- moe ---------------------------------------------------------------- */

typedef struct moe_shape {
  int64_t rows, hidden, experts, inner;
  int32_t top_k;
  bool normalize, transposed;
  vlm_activation activation;
} moe_shape;

static double activate_reference(vlm_activation activation, double x) {
  if (activation == VLM_ACTIVATION_GELU_TANH)
    return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  return x / (1.0 + exp(-x));
}

/* Element (o, i) of expert e of a [E, out, in] tensor, or of a [E, in, out] one. */
static double expert_at(const float *w, const moe_shape *m, int64_t e, int64_t out, int64_t in, int64_t o,
                        int64_t i) {
  return m->transposed ? w[(e * in + i) * out + o] : w[(e * out + o) * in + i];
}

/* Inputs x, logits, gate_up, down; logits scaled so that probabilities
 * spread out and the k-th choice is clear of the next. Returns the node. */
static int32_t build_moe_graph(op_case *c, const moe_shape *m, uint64_t seed, float **x, float **logits,
                               float **gate_up, float **down) {
  int64_t E = m->experts, H = m->hidden, I = m->inner;
  *x = add_f32(c, "x", 2, SHAPE(m->rows, H), seed);
  *logits = add_f32(c, "logits", 2, SHAPE(m->rows, E), seed + 1);
  for (int64_t i = 0; i < m->rows * E; i++) (*logits)[i] *= 4.0f;
  const int64_t *gate_up_shape = m->transposed ? SHAPE(E, H, 2 * I) : SHAPE(E, 2 * I, H);
  const int64_t *down_shape = m->transposed ? SHAPE(E, I, H) : SHAPE(E, H, I);
  *gate_up = add_f32(c, "gate_up", 3, gate_up_shape, seed + 2);
  *down = add_f32(c, "down", 3, down_shape, seed + 3);
  vlm_graph *g = &c->graph;
  int32_t nx = vlm_graph_input(g, VLM_DTYPE_F32, 2, SHAPE(m->rows, H), "x");
  int32_t nl = vlm_graph_input(g, VLM_DTYPE_F32, 2, SHAPE(m->rows, E), "logits");
  int32_t ng = vlm_graph_input(g, VLM_DTYPE_F32, 3, gate_up_shape, "gate_up");
  int32_t nd = vlm_graph_input(g, VLM_DTYPE_F32, 3, down_shape, "down");
  vlm_moe_options options = {.top_k = m->top_k, .normalize = m->normalize, .activation = m->activation,
                             .gate_up_transposed = m->transposed, .down_transposed = m->transposed};
  return vlm_graph_moe(g, nx, nl, ng, nd, &options, "mlp");
}

/* The float64 reference of graph.h's formula; returns how many rows chose
 * another expert set than row 0. */
static int moe_reference(const moe_shape *m, const float *x, const float *logits, const float *gate_up,
                         const float *down, double *out) {
  int64_t E = m->experts, H = m->hidden, I = m->inner;
  int differing = 0, first_set[16] = {0};
  for (int64_t r = 0; r < m->rows; r++) {
    double p[16], maximum = -INFINITY, sum = 0;
    for (int64_t e = 0; e < E; e++) maximum = fmax(maximum, logits[r * E + e]);
    for (int64_t e = 0; e < E; e++) sum += p[e] = exp(logits[r * E + e] - maximum);
    for (int64_t e = 0; e < E; e++) p[e] /= sum;
    int chosen[8];
    double weights[8], total = 0;
    bool taken[16] = {false};
    for (int j = 0; j <= m->top_k && j < E; j++) {
      int best = -1;
      for (int64_t e = 0; e < E; e++)
        if (!taken[e] && (best < 0 || p[e] > p[best])) best = (int)e;
      if (j == m->top_k) { /* the first expert left out is clearly behind */
        CHECK(p[chosen[j - 1]] - p[best] > 1e-4);
        break;
      }
      taken[best] = true;
      chosen[j] = best;
      total += weights[j] = p[best];
    }
    int set[16] = {0};
    for (int j = 0; j < m->top_k; j++) set[chosen[j]] = 1;
    if (r == 0) memcpy(first_set, set, sizeof(set));
    else if (memcmp(first_set, set, sizeof(set)) != 0) differing++;
    for (int64_t h = 0; h < H; h++) out[r * H + h] = 0;
    for (int j = 0; j < m->top_k; j++) {
      int e = chosen[j];
      double w = m->normalize ? weights[j] / total : weights[j];
      double gated[64];
      for (int64_t i = 0; i < I; i++) {
        double g = 0, u = 0;
        for (int64_t k = 0; k < H; k++) {
          g += expert_at(gate_up, m, e, 2 * I, H, i, k) * x[r * H + k];
          u += expert_at(gate_up, m, e, 2 * I, H, I + i, k) * x[r * H + k];
        }
        gated[i] = activate_reference(m->activation, g) * u;
      }
      for (int64_t h = 0; h < H; h++) {
        double y = 0;
        for (int64_t i = 0; i < I; i++) y += expert_at(down, m, e, H, I, h, i) * gated[i];
        out[r * H + h] += y * w;
      }
    }
  }
  return differing;
}

static void build_moe_case(const char *name, const moe_shape *m, uint64_t seed) {
  op_case *c = new_case(name, (size_t)(m->rows * m->hidden), false);
  float *x, *logits, *gate_up, *down;
  c->graph.output = build_moe_graph(c, m, seed, &x, &logits, &gate_up, &down);
  /* Different rows route to different experts. */
  CHECK(moe_reference(m, x, logits, gate_up, down, c->expected) > 0);
}

/* torch's Conv2d on channels-last x, in float64. */
static void build_conv2d(const char *name, const int64_t x_shape[4], const int64_t w_shape[4], bool bias,
                         const int64_t stride[2], const int64_t padding[4], int64_t groups, uint64_t seed) {
  int64_t out_h = (x_shape[1] + padding[0] + padding[1] - w_shape[2]) / stride[0] + 1;
  int64_t out_w = (x_shape[2] + padding[2] + padding[3] - w_shape[3]) / stride[1] + 1;
  int64_t out_c = w_shape[0], in_c = x_shape[3], in_group = in_c / groups, out_group = out_c / groups;
  op_case *c = new_case(name, (size_t)(x_shape[0] * out_h * out_w * out_c), false);
  float *x = add_f32(c, "x", 4, x_shape, seed);
  float *w = add_f32(c, "w", 4, w_shape, seed + 1);
  float *b = bias ? add_f32(c, "b", 1, SHAPE(out_c), seed + 2) : NULL;
  int32_t nx = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 4, x_shape, "x");
  int32_t nw = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 4, w_shape, "w");
  int32_t nb = bias ? vlm_graph_input(&c->graph, VLM_DTYPE_F32, 1, SHAPE(out_c), "b") : -1;
  c->graph.output = vlm_graph_conv2d(&c->graph, nx, nw, nb, stride, padding, groups, "convolved");
  for (int64_t n = 0; n < x_shape[0]; n++)
    for (int64_t oy = 0; oy < out_h; oy++)
      for (int64_t ox = 0; ox < out_w; ox++)
        for (int64_t o = 0; o < out_c; o++) {
          double sum = b ? b[o] : 0.0;
          int64_t g = o / out_group;
          for (int64_t ci = 0; ci < in_group; ci++)
            for (int64_t ky = 0; ky < w_shape[2]; ky++)
              for (int64_t kx = 0; kx < w_shape[3]; kx++) {
                int64_t iy = oy * stride[0] + ky - padding[0], ix = ox * stride[1] + kx - padding[2];
                if (iy < 0 || iy >= x_shape[1] || ix < 0 || ix >= x_shape[2]) continue;
                sum += (double)x[((n * x_shape[1] + iy) * x_shape[2] + ix) * in_c + g * in_group + ci] *
                       w[((o * in_group + ci) * w_shape[2] + ky) * w_shape[3] + kx];
              }
          c->expected[((n * out_h + oy) * out_w + ox) * out_c + o] = sum;
        }
}

static void build_convolutions(void) {
  build_conv2d("conv2d_strided", SHAPE(2, 7, 6, 3), SHAPE(4, 3, 3, 3), true, SHAPE(2, 2), SHAPE(1, 1, 1, 1), 1, 20);
  build_conv2d("conv2d_depthwise", SHAPE(1, 5, 4, 4), SHAPE(4, 1, 3, 3), true, SHAPE(2, 1), SHAPE(1, 1, 0, 2), 4,
               23);
  build_conv2d("conv2d_grouped", SHAPE(1, 4, 4, 4), SHAPE(6, 2, 2, 2), true, SHAPE(1, 1), SHAPE(0, 1, 1, 0), 2, 26);
  /* A causal depthwise Conv1d with 2 outputs per channel over [batch,
   * time, 1, channels]. */
  build_conv2d("conv2d_causal_1d", SHAPE(2, 6, 1, 3), SHAPE(6, 1, 3, 1), false, SHAPE(1, 1), SHAPE(2, 0, 0, 0), 3,
               29);
  /* The per-channel convs xla lowers as tap sums (stablehlo_lower_encoder.c):
   * one input channel (Phi-4's first subsampling conv, as one matmul of the
   * windows) and depthwise with one output per channel, causal. */
  build_conv2d("conv2d_one_channel", SHAPE(2, 7, 5, 1), SHAPE(4, 1, 3, 3), true, SHAPE(2, 2), SHAPE(1, 1, 1, 1), 1,
               32);
  build_conv2d("conv2d_causal_depthwise", SHAPE(2, 6, 1, 3), SHAPE(3, 1, 3, 1), false, SHAPE(1, 1),
               SHAPE(2, 0, 0, 0), 3, 35);
}

static void build_permute(void) {
  op_case *c = new_case("permute", 2 * 3 * 4 * 5, true);
  float *x = add_f32(c, "x", 4, SHAPE(2, 3, 4, 5), 32);
  int32_t nx = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 4, SHAPE(2, 3, 4, 5), "x");
  c->graph.output = vlm_graph_permute(&c->graph, nx, (const int32_t[]){0, 2, 3, 1}, "permuted");
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 3; b++)
      for (int d = 0; d < 4; d++)
        for (int e = 0; e < 5; e++) c->expected[((a * 4 + d) * 5 + e) * 3 + b] = x[((a * 3 + b) * 4 + d) * 5 + e];
}

/* a [3, 4, 5] + b [4, 5]; a [6, 4] * b [4]. */
static void build_broadcasts(void) {
  op_case *c = new_case("add_suffix", 3 * 4 * 5, false);
  float *a = add_f32(c, "a", 3, SHAPE(3, 4, 5), 33), *b = add_f32(c, "b", 2, SHAPE(4, 5), 34);
  int32_t na = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 3, SHAPE(3, 4, 5), "a");
  int32_t nb = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 2, SHAPE(4, 5), "b");
  c->graph.output = vlm_graph_add(&c->graph, na, nb, "sum");
  for (int i = 0; i < 60; i++) c->expected[i] = (double)a[i] + b[i % 20];
  c = new_case("mul_suffix", 6 * 4, false);
  a = add_f32(c, "a", 2, SHAPE(6, 4), 35);
  b = add_f32(c, "b", 1, SHAPE(4), 36);
  na = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 2, SHAPE(6, 4), "a");
  nb = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 1, SHAPE(4), "b");
  c->graph.output = vlm_graph_mul(&c->graph, na, nb, "product");
  for (int i = 0; i < 24; i++) c->expected[i] = (double)a[i] * b[i % 4];
}

/* Softmax(q.k * scale + bias[h]) v within each block of 4 rows; the bias
 * a computed value (the input * 2) with one -inf key. */
static void build_biased_attention(void) {
  enum { ROWS = 8, BLOCK = 4, HEADS = 2, DIM = 3 };
  op_case *c = new_case("biased_attention", ROWS * HEADS * DIM, false);
  float *q = add_f32(c, "q", 3, SHAPE(ROWS, HEADS, DIM), 37);
  float *k = add_f32(c, "k", 3, SHAPE(ROWS, HEADS, DIM), 38);
  float *v = add_f32(c, "v", 3, SHAPE(ROWS, HEADS, DIM), 39);
  float *bias = add_f32(c, "bias", 3, SHAPE(HEADS, BLOCK, BLOCK), 40);
  bias[(1 * BLOCK + 2) * BLOCK + 0] = -INFINITY;
  int32_t nq = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 3, SHAPE(ROWS, HEADS, DIM), "q");
  int32_t nk = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 3, SHAPE(ROWS, HEADS, DIM), "k");
  int32_t nv = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 3, SHAPE(ROWS, HEADS, DIM), "v");
  int32_t nb = vlm_graph_input(&c->graph, VLM_DTYPE_F32, 3, SHAPE(HEADS, BLOCK, BLOCK), "bias");
  int32_t doubled = vlm_graph_scale(&c->graph, nb, 2.0, "doubled");
  double scale = 0.7;
  c->graph.output = vlm_graph_biased_attention(&c->graph, nq, nk, nv, doubled, scale, "attended");
  for (int r = 0; r < ROWS; r++)
    for (int h = 0; h < HEADS; h++) {
      int first = r / BLOCK * BLOCK;
      double scores[BLOCK], largest = -INFINITY, sum = 0;
      for (int j = 0; j < BLOCK; j++) {
        double dot = 0;
        for (int d = 0; d < DIM; d++)
          dot += (double)q[(r * HEADS + h) * DIM + d] * k[((first + j) * HEADS + h) * DIM + d];
        scores[j] = dot * scale + 2.0 * bias[(h * BLOCK + r % BLOCK) * BLOCK + j];
        if (scores[j] > largest) largest = scores[j];
      }
      for (int j = 0; j < BLOCK; j++) sum += exp(scores[j] - largest);
      for (int d = 0; d < DIM; d++) {
        double out = 0;
        for (int j = 0; j < BLOCK; j++) out += exp(scores[j] - largest) / sum * v[((first + j) * HEADS + h) * DIM + d];
        c->expected[(r * HEADS + h) * DIM + d] = out;
      }
    }
}

static void build_cases(void) {
  if (case_count) return;
  build_concat_rows();
  build_concat_columns();
  build_slice();
  build_row_select();
  build_feature_merge("feature_merge_replace", VLM_FEATURE_MERGE_REPLACE);
  build_feature_merge("feature_merge_add", VLM_FEATURE_MERGE_ADD);
  build_unary("tanh", VLM_UNARY_TANH, 0, 0);
  build_unary("softplus", VLM_UNARY_SOFTPLUS, 0, 0);
  build_unary("clamp", VLM_UNARY_CLAMP, -7.5, 12.25);
  build_unary("clamp_one_sided", VLM_UNARY_CLAMP, -INFINITY, 3.0);
  build_row_moment("row_mean", false, 0);
  build_row_moment("row_std", true, 1);
  build_row_moment("row_std_population", true, 0);
  build_matmul("matmul", 1);
  build_matmul("matmul_batched", 3);
  build_cross_attention("cross_attention_grouped", 3, 5, 4, 2, 6, 3, 90);
  /* MLA's absorbed form: one latent head for every head, dk = rank + rope, dv = rank. */
  build_cross_attention("cross_attention_latent", 2, 7, 3, 1, 7, 4, 93);
  build_scale_rows();
  build_gather_computed();
  build_transpose();
  build_average_pool("average_pool_2x2", 2, 5, 4, 2, 16);
  build_average_pool("average_pool_3x3", 1, 6, 9, 3, 17);
  build_segment_attention("segment_attention", NULL, NULL);
  /* Masked keys in two segments (a padded crop's patches: Phi-4's NaViT
   * mask), segment 5 masking all of its keys. */
  build_segment_attention("segment_attention_key_mask", (const int32_t[]){1, 0, 1, 0, 0, 0, 1, 1, 0}, NULL);
  /* Causal within each segment (Phi-4's unpadded crops under sdpa): every
   * row causal, no mask (cpu: the causal path of every segment). */
  build_segment_attention("segment_attention_causal", NULL, (const int32_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1});
  /* Flags off: as without them; and a segment mixing causal and not
   * (cpu: the bias path), the others all causal or all not. */
  build_segment_attention("segment_attention_causal_off", NULL, (const int32_t[]){0, 0, 0, 0, 0, 0, 0, 0, 0});
  build_segment_attention("segment_attention_causal_mixed", NULL, (const int32_t[]){1, 1, 1, 1, 0, 0, 1, 0, 1});
  /* Causal with a key mask: segment 0's row 1 sees only unmasked row 0,
   * segment 2's row 6 is masked itself, its row 8 sees the masked 6 and
   * 8 and the unmasked 7; segment 5 masks everything (ignored); a causal
   * row whose visible keys are all masked (row 0 of a segment starting
   * masked: {0, 1, 1} as the third segment) ignores the mask. */
  build_segment_attention("segment_attention_causal_masked", (const int32_t[]){1, 0, 1, 0, 0, 0, 0, 1, 0},
                          (const int32_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1});
  build_segment_attention("segment_attention_mixed_masked", (const int32_t[]){1, 0, 1, 0, 0, 1, 0, 1, 1},
                          (const int32_t[]){0, 0, 0, 0, 1, 1, 1, 1, 0});
  build_convolutions();
  build_permute();
  build_broadcasts();
  build_biased_attention();
  build_rope_tables();
  build_rope_case("rope_axial_2d", (vlm_rope_config){.type = VLM_ROPE_DEFAULT, .theta = 10000, .factor = 1,
                                                      .rotary_dimension = 16, .axial_axes = 2}, 2, 11);
  build_rope_case("rope_mrope", (vlm_rope_config){.type = VLM_ROPE_DEFAULT, .theta = 10000, .factor = 1,
                                                   .rotary_dimension = 16, .mrope_section = {2, 3, 3},
                                                   .mrope_section_count = 3}, 3, 12);
  build_rope_case("rope_mrope_interleaved",
                  (vlm_rope_config){.type = VLM_ROPE_DEFAULT, .theta = 10000, .factor = 1, .rotary_dimension = 16,
                                    .mrope_section = {4, 2, 2}, .mrope_section_count = 3, .mrope_interleaved = true},
                  3, 13);
  /* Qwen3-VL-MoE's: SiLU, renormalised, Transformers 5.23's layout. */
  build_moe_case("moe_normalized", &(moe_shape){.rows = 7, .hidden = 6, .experts = 5, .inner = 3, .top_k = 2,
                                                .normalize = true, .activation = VLM_ACTIVATION_SILU}, 21);
  /* The hub's [in, out] layout, unnormalised, another activation. */
  build_moe_case("moe_transposed", &(moe_shape){.rows = 6, .hidden = 5, .experts = 6, .inner = 4, .top_k = 3,
                                                .transposed = true, .activation = VLM_ACTIVATION_GELU_TANH}, 31);
  /* Few rows (rows * k <= experts): the xla lowering gathers the chosen
   * experts instead of running all of them. */
  build_moe_case("moe_few_rows", &(moe_shape){.rows = 3, .hidden = 5, .experts = 6, .inner = 2, .top_k = 2,
                                              .normalize = true, .transposed = true,
                                              .activation = VLM_ACTIVATION_SILU}, 51);
  build_moe_case("moe_few_rows_canonical", &(moe_shape){.rows = 2, .hidden = 4, .experts = 8, .inner = 3,
                                                        .top_k = 4, .normalize = true,
                                                        .activation = VLM_ACTIVATION_SILU}, 61);
  for (int i = 0; i < case_count; i++) CHECK_OK(vlm_graph_take_error(&cases[i].graph));
}

/* Worst |got - want| / allowed over a case; <= 1 passes. */
static double worst_error(const op_case *c, const float *got) {
  double worst = 0;
  for (size_t i = 0; i < c->count; i++) {
    double allowed = c->exact ? 1e-6 : 2e-6 + 2e-5 * fabs(c->expected[i]);
    double error = fabs((double)got[i] - c->expected[i]) / allowed;
    if (!(error <= worst)) worst = error; /* NaN counts as the worst */
  }
  return worst;
}

static void ops_match_float64_on_the_cpu_backend(void) {
  build_cases();
  for (int i = 0; i < case_count; i++) {
    op_case *c = &cases[i];
    float *got = calloc(c->count, sizeof(float));
    vlm_cpu_graph_run run = {.graph = &c->graph, .inputs = &c->inputs};
    CHECK_OK(vlm_cpu_graph_execute(&run, got));
    double worst = worst_error(c, got);
    if (!(worst <= 1.0)) fprintf(stderr, "  cpu %s: error %.3g of the tolerance\n", c->name, worst);
    CHECK(worst <= 1.0);
    free(got);
  }
}

/* A segment that comes back after another is refused (graph.h). */
static void cpu_refuses_segments_that_are_not_runs(void) {
  op_case c = {0};
  vlm_graph_init(&c.graph);
  float *q = add_f32(&c, "q", 3, SHAPE(3, 1, 2), 1);
  (void)q;
  const int32_t segments[3] = {0, 1, 0};
  add_i32(&c, "segments", 1, SHAPE(3), segments);
  int32_t nq = vlm_graph_input(&c.graph, VLM_DTYPE_F32, 3, SHAPE(3, 1, 2), "q");
  int32_t ns = vlm_graph_input(&c.graph, VLM_DTYPE_I32, 1, SHAPE(3), "segments");
  c.graph.output = vlm_graph_segment_attention(&c.graph, nq, nq, nq, ns, 1.0, "attended");
  float out[6];
  vlm_cpu_graph_run run = {.graph = &c.graph, .inputs = &c.inputs};
  CHECK_ERROR(vlm_cpu_graph_execute(&run, out), VLM_STATUS_INVALID_ARGUMENT, "segment 0 is not one run of rows");
  vlm_graph_release(&c.graph);
  vlm_tensor_list_release(&c.inputs);
}

/* Batch invariance: each row of a moe step computed alone gives the bits
 * it gets among the others (which share its experts: 8 rows x 2 over 4
 * experts), on both layouts. */
static void cpu_moe_rows_alone_equal_rows_in_a_batch(void) {
  for (int layout = 0; layout < 2; layout++) {
    moe_shape m = {.rows = 8, .hidden = 70, .experts = 4, .inner = 67, .top_k = 2, .normalize = true,
                   .transposed = layout == 1, .activation = VLM_ACTIVATION_SILU};
    op_case batch = {0};
    vlm_graph_init(&batch.graph);
    float *x, *logits, *gate_up, *down;
    batch.graph.output = build_moe_graph(&batch, &m, 41 + (uint64_t)layout, &x, &logits, &gate_up, &down);
    CHECK_OK(vlm_graph_take_error(&batch.graph));
    float *together = calloc((size_t)(m.rows * m.hidden), sizeof(float));
    vlm_cpu_graph_run run = {.graph = &batch.graph, .inputs = &batch.inputs};
    CHECK_OK(vlm_cpu_graph_execute(&run, together));
    for (int64_t r = 0; r < m.rows; r++) {
      op_case alone = {0};
      vlm_graph_init(&alone.graph);
      moe_shape one = m;
      one.rows = 1;
      float *x1, *l1, *g1, *d1;
      alone.graph.output = build_moe_graph(&alone, &one, 41 + (uint64_t)layout, &x1, &l1, &g1, &d1);
      memcpy(x1, x + r * m.hidden, (size_t)m.hidden * sizeof(float));
      memcpy(l1, logits + r * m.experts, (size_t)m.experts * sizeof(float));
      float *row = calloc((size_t)m.hidden, sizeof(float));
      vlm_cpu_graph_run single = {.graph = &alone.graph, .inputs = &alone.inputs};
      CHECK_OK(vlm_cpu_graph_execute(&single, row));
      CHECK(memcmp(row, together + r * m.hidden, (size_t)m.hidden * sizeof(float)) == 0);
      free(row);
      vlm_graph_release(&alone.graph);
      vlm_tensor_list_release(&alone.inputs);
    }
    free(together);
    vlm_graph_release(&batch.graph);
    vlm_tensor_list_release(&batch.inputs);
  }
}

/* Norms and element-wise nodes of prefill-sized tensors run on the pool
 * (cpu_graph.c): split by rows or elements, each result is the bits of the
 * single-threaded run, for 2 and 3 threads (uneven ranges). 45 rows of
 * 1001: more than one range's worth of rows and elements, ranges that end
 * inside a row and inside an exp block. */
static void cpu_norms_and_elementwise_do_not_depend_on_threads(void) {
  const int64_t rows = 45, width = 1001;
  op_case c = {0};
  vlm_graph_init(&c.graph);
  add_f32(&c, "x", 2, SHAPE(rows, width), 51);
  add_f32(&c, "g", 2, SHAPE(rows, width), 52);
  add_f32(&c, "w", 1, SHAPE(width), 53);
  vlm_graph *g = &c.graph;
  int32_t x = vlm_graph_input(g, VLM_DTYPE_F32, 2, SHAPE(rows, width), "x");
  int32_t up = vlm_graph_input(g, VLM_DTYPE_F32, 2, SHAPE(rows, width), "g");
  int32_t w = vlm_graph_input(g, VLM_DTYPE_F32, 1, SHAPE(width), "w");
  int32_t n = vlm_graph_rms_norm(g, x, w, 1e-6, 1.0, "rms");
  n = vlm_graph_layer_norm(g, n, w, w, 1e-5, "layer");
  n = vlm_graph_gated(g, n, up, VLM_ACTIVATION_SILU, "swiglu");
  n = vlm_graph_add(g, n, x, "residual");
  n = vlm_graph_mul(g, n, up, "product");
  n = vlm_graph_scale(g, n, 0.37, "scaled");
  n = vlm_graph_activation(g, n, VLM_ACTIVATION_QUICK_GELU, "quick_gelu");
  g->output = vlm_graph_activation(g, n, VLM_ACTIVATION_GELU, "gelu");
  CHECK_OK(vlm_graph_take_error(g));
  size_t count = (size_t)(rows * width);
  float *alone = calloc(count, sizeof(float)), *threaded = calloc(count, sizeof(float));
  vlm_cpu_graph_run run = {.graph = g, .inputs = &c.inputs};
  CHECK_OK(vlm_cpu_graph_execute(&run, alone));
  for (int threads = 2; threads <= 3; threads++) {
    vlm_thread_pool *pool = NULL;
    CHECK_OK(vlm_thread_pool_create(threads, NULL, &pool));
    run.pool = pool;
    memset(threaded, 0, count * sizeof(float));
    CHECK_OK(vlm_cpu_graph_execute(&run, threaded));
    CHECK(memcmp(alone, threaded, count * sizeof(float)) == 0);
    vlm_thread_pool_release(pool);
  }
  free(alone), free(threaded);
  vlm_graph_release(&c.graph);
  vlm_tensor_list_release(&c.inputs);
}

/* The builder refuses what the op cannot compute. */
static void moe_refuses_bad_shapes(void) {
  vlm_graph g;
  vlm_graph_init(&g);
  int32_t x = vlm_graph_input(&g, VLM_DTYPE_F32, 2, SHAPE(3, 4), "x");
  int32_t logits = vlm_graph_input(&g, VLM_DTYPE_F32, 2, SHAPE(3, 5), "logits");
  int32_t gate_up = vlm_graph_input(&g, VLM_DTYPE_F32, 3, SHAPE(5, 6, 4), "gate_up");
  int32_t down = vlm_graph_input(&g, VLM_DTYPE_F32, 3, SHAPE(5, 4, 3), "down");
  vlm_moe_options options = {.top_k = 6, .normalize = true};
  CHECK(vlm_graph_moe(&g, x, logits, gate_up, down, &options, "mlp") < 0);
  CHECK_ERROR(vlm_graph_take_error(&g), VLM_STATUS_INVALID_ARGUMENT, "top_k");
  options.top_k = 2;
  options.gate_up_transposed = true; /* [5, 6, 4] read as [E, hidden 6, 2I 4] */
  CHECK(vlm_graph_moe(&g, x, logits, gate_up, down, &options, "mlp") < 0);
  CHECK_ERROR(vlm_graph_take_error(&g), VLM_STATUS_INVALID_ARGUMENT, "gate_up [experts, 2I, hidden]");
  options.gate_up_transposed = false;
  CHECK(vlm_graph_moe(&g, x, logits, gate_up, down, &options, "mlp") >= 0);
  vlm_graph_release(&g);
}

#ifdef VLM_HAVE_XLA_RUNTIME
#include "backends/xla/stablehlo_graph.h"
#include "backends/xla/xla_graph_runtime.h"
#include "test_xla_support.h"

static void ops_match_float64_on_the_xla_backend(void) {
  build_cases();
  if (!environment_ready()) return;
  vlm_stablehlo_graph_function functions[MAX_CASES];
  for (int i = 0; i < case_count; i++)
    functions[i] = (vlm_stablehlo_graph_function){cases[i].name, &cases[i].graph, {cases[i].graph.output}, 1};
  vlm_xla_key key = {0};
  CHECK_OK(vlm_xla_key_set(&key, "module", "graph_op_tests"));
  char *module = NULL;
  CHECK_OK(vlm_stablehlo_emit_graph_module("vlm_graph_op_tests", "", functions, case_count, NULL, &key, &module));
  if (!module) return;
  vlm_iree_compiler compiler;
  vlm_xla_key compile_key;
  char cache[600], artifact[VLM_XLA_PATH_LENGTH];
  snprintf(cache, sizeof(cache), "%s/cache", test_temp_dir());
  vlm_xla_runtime_options options = {0};
  CHECK_OK(vlm_iree_compiler_find(&compiler));
  CHECK_OK(vlm_xla_graph_runtime_key(&key, &options, &compile_key));
  double started = seconds_now();
  CHECK_OK(vlm_xla_compile(&compiler, module, &compile_key, VLM_XLA_TARGET_LLVM_CPU, cache, NULL, artifact,
                           sizeof(artifact)));
  printf("  %d op functions compiled (llvm-cpu) in %.1f s\n", case_count, seconds_now() - started);
  free(module);
  vlm_xla_graph_runtime *runtime = NULL;
  CHECK_OK(vlm_xla_graph_runtime_open(functions, case_count, NULL, &key, artifact, &options, &runtime));
  for (int i = 0; runtime && i < case_count; i++) {
    op_case *c = &cases[i];
    float *got = calloc(c->count, sizeof(float));
    float *outputs[VLM_XLA_GRAPH_MAX_OUTPUTS] = {got};
    CHECK_OK(vlm_xla_graph_call(runtime, i, &c->inputs, outputs));
    double worst = worst_error(c, got);
    printf("  xla %s: %.3g of the tolerance\n", c->name, worst);
    CHECK(worst <= 1.0);
    free(got);
  }
  vlm_xla_graph_runtime_release(runtime);
}
#else
static void ops_match_float64_on_the_xla_backend(void) {
  test_skip("no-xla-runtime", "built without python-3.11-embed (Debian's libpython3.11-dev); xla ops not tested");
}
#endif

static void release_cases(void) {
  for (int i = 0; i < case_count; i++) {
    vlm_graph_release(&cases[i].graph);
    vlm_tensor_list_release(&cases[i].inputs);
    free(cases[i].expected);
  }
  case_count = 0;
}

TEST_MAIN(TEST(ops_match_float64_on_the_cpu_backend), TEST(cpu_refuses_segments_that_are_not_runs),
          TEST(cpu_moe_rows_alone_equal_rows_in_a_batch), TEST(cpu_norms_and_elementwise_do_not_depend_on_threads),
          TEST(moe_refuses_bad_shapes),
          TEST(ops_match_float64_on_the_xla_backend), TEST(release_cases))
