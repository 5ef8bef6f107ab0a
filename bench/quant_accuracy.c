/* vlm-quant-accuracy: how far quantized weights move a model's next-token
 * distributions, measured, not assumed (issue 19).
 *
 *   vlm-quant-accuracy --model REF [--candidate DIR] [--quantize q8|q4]
 *                      [--threads N] [--greedy N] GOLDEN_CASE_DIR...
 *
 * The reference is REF as stored (bf16, f16 or f32); the candidate is DIR
 * (a GPTQ/AWQ checkpoint of the same weights), or REF itself, each opened
 * with --quantize when given. For the input_ids of every golden case given
 * (tests/goldens/<family>/<case>: the golden prompts, tokenized as
 * Transformers did) whose ids fit the vocabulary, both prefill the prompt
 * and the tool compares the distributions at every position:
 *   kl        KL(reference || candidate) in nats, from softmax in double;
 *   top1      whether their argmax (the greedy token) agrees;
 * then both decode --greedy tokens (default 16) on their own and the tool
 * counts the tokens produced before their first difference. The reference's
 * mean entropy is printed beside them: a tiny random model's distributions
 * are nearly flat (entropy near log(vocab)), so a small KL there says less
 * than the same KL on a peaked distribution. JSON on stdout.
 *
 *   vlm-quant-accuracy --model REF [--quantize ...] --llama-base FILE
 *                      [--write-llama-base OUT]
 *
 * compares instead on the tokens and positions of a llama.cpp perplexity
 * --kl-divergence-base FILE (bench/llama_kld_file.h): each chunk is
 * prefilled, and at the positions llama.cpp scores (the second half of the
 * chunk) the file's distribution is the third party, so that one reference
 * ranks both engines: KL(file || reference) and KL(file || candidate) by
 * llama.cpp's formula (terms below log-probability -16 dropped) sit beside
 * what llama-perplexity --kl-divergence prints for llama.cpp's own
 * quantizations against the same file, with the perplexity of each.
 * --write-llama-base OUT writes the reference's distributions in that
 * format on the same tokens, so that llama.cpp can measure its Q8_0/Q4_0
 * against vlm's reference (bench/llama_cpp_kl.sh runs both ways). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/text_model.h"
#include "core/status.h"
#include "core/tensor.h"
#include "core/thread_pool.h"
#include "llama_kld_file.h"
#include "models/model.h"
#include "validate/compare.h"
#include "validate/golden.h"

typedef struct side {
  vlm_model *opened;
  vlm_text_model *model;
} side;

typedef struct totals {
  double kl_sum, kl_max, entropy_sum;
  int64_t positions, agreeing, cases;
  int64_t greedy_steps, greedy_same;
} totals;

/* Against a llama.cpp base file: its distribution (base) against each side. */
typedef struct base_totals {
  double kl_reference, kl_candidate, nll_base, nll_reference, nll_candidate;
  int64_t top1_reference, top1_candidate, positions;
} base_totals;

static vlm_status open_side(const char *dir, const char *quantize, vlm_thread_pool *pool, int64_t capacity,
                            side *out) {
  vlm_model_options options = {.quantize = quantize};
  VLM_RETURN_IF_ERROR(vlm_model_open(dir, &options, &out->opened));
  vlm_text_model_options model_options = {.slot_count = 1, .capacity = capacity, .prefill_chunk = capacity,
                                          .pool = pool};
  return vlm_text_model_open(out->opened, &model_options, &out->model);
}

static void close_side(side *s) {
  vlm_text_model_release(s->model);
  vlm_model_release(s->opened);
}

/* log-softmax in double. */
static void log_softmax(const float *logits, int64_t vocab, double *out) {
  double top = -INFINITY, sum = 0;
  for (int64_t i = 0; i < vocab; i++) top = logits[i] > top ? logits[i] : top;
  for (int64_t i = 0; i < vocab; i++) sum += exp((double)logits[i] - top);
  double log_sum = log(sum) + top;
  for (int64_t i = 0; i < vocab; i++) out[i] = (double)logits[i] - log_sum;
}

static int64_t argmax(const float *logits, int64_t vocab) {
  int64_t best = 0;
  for (int64_t i = 1; i < vocab; i++)
    if (logits[i] > logits[best]) best = i;
  return best;
}

static void compare_rows(const float *a, const float *b, int64_t vocab, double *scratch, totals *t) {
  double *pa = scratch, *pb = scratch + vocab;
  log_softmax(a, vocab, pa);
  log_softmax(b, vocab, pb);
  double kl = 0, entropy = 0;
  for (int64_t i = 0; i < vocab; i++) {
    double p = exp(pa[i]);
    kl += p * (pa[i] - pb[i]);
    entropy -= p * pa[i];
  }
  t->kl_sum += kl;
  t->kl_max = kl > t->kl_max ? kl : t->kl_max;
  t->entropy_sum += entropy;
  t->positions++;
  t->agreeing += argmax(a, vocab) == argmax(b, vocab);
}

static int64_t argmax_double(const double *values, int64_t count) {
  int64_t best = 0;
  for (int64_t i = 1; i < count; i++)
    if (values[i] > values[best]) best = i;
  return best;
}

/* KL(base || logits) as llama-perplexity --kl-divergence sums it: the base
 * terms at or below log-probability -16 dropped. Also -log p(next). */
static double kl_from_base(const double *base, const float *logits, int64_t vocab, int32_t next, double *scratch,
                           double *nll) {
  log_softmax(logits, vocab, scratch);
  double kl = 0;
  for (int64_t i = 0; i < vocab; i++)
    if (base[i] > -16) kl += exp(base[i]) * (base[i] - scratch[i]);
  *nll = -scratch[next];
  return kl;
}

static void compare_with_base(const double *base, const float *a, const float *b, int64_t vocab, int32_t next,
                              double *scratch, base_totals *t) {
  double nll_a, nll_b;
  t->kl_reference += kl_from_base(base, a, vocab, next, scratch, &nll_a);
  t->kl_candidate += kl_from_base(base, b, vocab, next, scratch, &nll_b);
  t->nll_reference += nll_a;
  t->nll_candidate += nll_b;
  t->nll_base -= base[next];
  int64_t top = argmax_double(base, vocab);
  t->top1_reference += top == argmax(a, vocab);
  t->top1_candidate += top == argmax(b, vocab);
  t->positions++;
}

/* Both sides greedy from the prompt already prefilled, `steps` tokens. */
static vlm_status greedy(side *ref, side *cand, const float *ref_last, const float *cand_last, int64_t length,
                         int64_t vocab, int steps, totals *t) {
  float *a = malloc((size_t)vocab * sizeof(float)), *b = malloc((size_t)vocab * sizeof(float));
  if (!a || !b) {
    free(a), free(b);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  int32_t token_a = (int32_t)argmax(ref_last, vocab), token_b = (int32_t)argmax(cand_last, vocab);
  vlm_status status = VLM_OK;
  bool same = true;
  int32_t slot = 0;
  for (int step = 0; step < steps && !status; step++) {
    same = same && token_a == token_b;
    t->greedy_steps++;
    t->greedy_same += same;
    int64_t position = length + step;
    status = vlm_text_model_decode(ref->model, 1, &token_a, &position, NULL, &slot, a);
    if (!status) status = vlm_text_model_decode(cand->model, 1, &token_b, &position, NULL, &slot, b);
    token_a = (int32_t)argmax(a, vocab);
    token_b = (int32_t)argmax(b, vocab);
  }
  free(a), free(b);
  return status;
}

static vlm_status run_case(const char *case_dir, side *ref, side *cand, int steps, int64_t capacity, totals *t) {
  vlm_golden_case golden;
  VLM_RETURN_IF_ERROR(vlm_golden_case_open(case_dir, NULL, &golden));
  vlm_tensor ids;
  vlm_status status = vlm_golden_case_tensor(&golden, "input_ids", &ids);
  int64_t count = status ? 0 : vlm_tensor_element_count(&ids);
  int64_t vocab = vlm_text_model_vocab_size(ref->model);
  int32_t *tokens = malloc((size_t)(count ? count : 1) * sizeof(int32_t));
  bool fits = tokens && count > 0 && count + steps <= capacity;
  for (int64_t i = 0; fits && i < count; i++) {
    double value = 0;
    fits = vlm_tensor_value_as_double(&ids, i, &value) && value >= 0 && value < (double)vocab;
    if (fits) tokens[i] = (int32_t)value;
  }
  if (!status && !fits) {
    fprintf(stderr, "vlm-quant-accuracy: %s: skipped (ids outside the vocabulary or too long)\n", case_dir);
  } else if (!status) {
    float *a = malloc((size_t)(count * vocab) * sizeof(float)), *b = malloc((size_t)(count * vocab) * sizeof(float));
    double *scratch = malloc((size_t)(2 * vocab) * sizeof(double));
    status = a && b && scratch ? VLM_OK : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    vlm_prefill_logits la = {a + (count - 1) * vocab, a}, lb = {b + (count - 1) * vocab, b};
    if (!status) status = vlm_text_model_clear_slot(ref->model, 0);
    if (!status) status = vlm_text_model_clear_slot(cand->model, 0);
    if (!status) status = vlm_text_model_token_prefill(ref->model, 0, tokens, count, NULL, &la);
    if (!status) status = vlm_text_model_token_prefill(cand->model, 0, tokens, count, NULL, &lb);
    for (int64_t p = 0; !status && p < count; p++) compare_rows(a + p * vocab, b + p * vocab, vocab, scratch, t);
    if (!status) status = greedy(ref, cand, la.last_row, lb.last_row, count, vocab, steps, t);
    if (!status) t->cases++;
    free(a), free(b), free(scratch);
  }
  free(tokens);
  vlm_golden_case_close(&golden);
  return status ? vlm_status_annotate(status, "%s", case_dir) : VLM_OK;
}

/* One chunk of a llama.cpp base file: prefill it on both sides and compare
 * at the positions llama.cpp scored (and, with `out`, write the reference's). */
static vlm_status run_base_chunk(llama_kld_file *file, int32_t chunk, side *ref, side *cand, FILE *out, float *a,
                                 float *b, double *base, double *scratch, totals *t, base_totals *bt) {
  int64_t vocab = file->n_vocab, n_ctx = file->n_ctx;
  const int32_t *tokens = file->tokens + (int64_t)chunk * n_ctx;
  vlm_prefill_logits la = {a + (n_ctx - 1) * vocab, a}, lb = {b + (n_ctx - 1) * vocab, b};
  VLM_RETURN_IF_ERROR(vlm_text_model_clear_slot(ref->model, 0));
  VLM_RETURN_IF_ERROR(vlm_text_model_clear_slot(cand->model, 0));
  VLM_RETURN_IF_ERROR(vlm_text_model_token_prefill(ref->model, 0, tokens, n_ctx, NULL, &la));
  VLM_RETURN_IF_ERROR(vlm_text_model_token_prefill(cand->model, 0, tokens, n_ctx, NULL, &lb));
  for (int64_t p = llama_kld_first(file); p < n_ctx - 1; p++) {
    VLM_RETURN_IF_ERROR(llama_kld_read_row(file, base));
    compare_rows(a + p * vocab, b + p * vocab, vocab, scratch, t);
    compare_with_base(base, a + p * vocab, b + p * vocab, vocab, tokens[p + 1], scratch, bt);
    if (out) VLM_RETURN_IF_ERROR(llama_kld_write_row(out, a + p * vocab, (int32_t)vocab));
  }
  t->cases++;
  return VLM_OK;
}

static vlm_status run_base_file(const char *path, const char *write_path, side *ref, side *cand, int64_t capacity,
                                totals *t, base_totals *bt) {
  llama_kld_file file;
  VLM_RETURN_IF_ERROR(llama_kld_open(path, vlm_text_model_vocab_size(ref->model), &file));
  int64_t vocab = file.n_vocab, n_ctx = file.n_ctx;
  FILE *out = NULL;
  vlm_status status = n_ctx <= capacity ? VLM_OK : VLM_ERROR(OUT_OF_RANGE, "n_ctx %lld over %lld", (long long)n_ctx,
                                                               (long long)capacity);
  if (!status && write_path) status = llama_kld_create(write_path, &file, &out);
  float *a = malloc((size_t)(n_ctx * vocab) * sizeof(float)), *b = malloc((size_t)(n_ctx * vocab) * sizeof(float));
  double *base = malloc((size_t)vocab * sizeof(double)), *scratch = malloc((size_t)(2 * vocab) * sizeof(double));
  if (!status && !(a && b && base && scratch)) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int32_t c = 0; !status && c < file.n_chunk; c++)
    status = run_base_chunk(&file, c, ref, cand, out, a, b, base, scratch, t, bt);
  if (out && fclose(out) != 0 && !status) status = VLM_ERROR(IO, "cannot write '%s'", write_path);
  free(a), free(b), free(base), free(scratch);
  llama_kld_close(&file);
  return status ? vlm_status_annotate(status, "%s", path) : VLM_OK;
}

static void print_base_totals(const char *path, const base_totals *bt) {
  double n = (double)bt->positions;
  printf(",\"llama_base\":{\"file\":\"%s\",\"positions\":%lld,\"kl_base_reference\":%.6g,"
         "\"kl_base_candidate\":%.6g,\"top1_base_reference\":%.6f,\"top1_base_candidate\":%.6f,"
         "\"ppl_base\":%.6g,\"ppl_reference\":%.6g,\"ppl_candidate\":%.6g}",
         path, (long long)bt->positions, bt->kl_reference / n, bt->kl_candidate / n, (double)bt->top1_reference / n,
         (double)bt->top1_candidate / n, exp(bt->nll_base / n), exp(bt->nll_reference / n),
         exp(bt->nll_candidate / n));
}

int main(int argc, char **argv) {
  const char *model_dir = NULL, *candidate_dir = NULL, *quantize = NULL, *base_path = NULL, *write_path = NULL;
  int threads = 0, steps = 16, first_case = argc;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) model_dir = argv[++i];
    else if (strcmp(argv[i], "--candidate") == 0 && i + 1 < argc) candidate_dir = argv[++i];
    else if (strcmp(argv[i], "--quantize") == 0 && i + 1 < argc) quantize = argv[++i];
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--greedy") == 0 && i + 1 < argc) steps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--llama-base") == 0 && i + 1 < argc) base_path = argv[++i];
    else if (strcmp(argv[i], "--write-llama-base") == 0 && i + 1 < argc) write_path = argv[++i];
    else if (argv[i][0] == '-') {
      fprintf(stderr, "vlm-quant-accuracy: unknown or incomplete option '%s'\n", argv[i]);
      return 2;
    } else {
      first_case = i;
      break;
    }
  }
  bool cases = first_case < argc;
  if (!model_dir || cases == (base_path != NULL) || (write_path && !base_path) || steps < 0 || steps > 4096) {
    fprintf(stderr, "usage: vlm-quant-accuracy --model REF [--candidate DIR] [--quantize q8|q4] [--threads N]\n"
                    "                          ([--greedy N] GOLDEN_CASE_DIR... |\n"
                    "                           --llama-base FILE [--write-llama-base OUT])\n");
    return 2;
  }
  vlm_thread_pool *pool = NULL;
  vlm_status status = vlm_thread_pool_create(threads, NULL, &pool);
  const int64_t capacity = 4096;
  side ref = {0}, cand = {0};
  if (!status) status = open_side(model_dir, NULL, pool, capacity, &ref);
  if (!status) status = open_side(candidate_dir ? candidate_dir : model_dir, quantize, pool, capacity, &cand);
  if (!status && vlm_text_model_vocab_size(ref.model) != vlm_text_model_vocab_size(cand.model))
    status = VLM_ERROR(INVALID_ARGUMENT, "the two models have different vocabularies");
  totals t = {0};
  base_totals bt = {0};
  for (int i = first_case; !status && i < argc; i++) status = run_case(argv[i], &ref, &cand, steps, capacity, &t);
  if (!status && base_path) status = run_base_file(base_path, write_path, &ref, &cand, capacity, &t, &bt);
  if (!status && t.positions == 0) status = VLM_ERROR(INVALID_ARGUMENT, "nothing to compare: no golden case fit the model");
  if (!status) {
    int64_t vocab = vlm_text_model_vocab_size(ref.model);
    printf("{\"reference\":\"%s\",\"candidate\":\"%s\",\"quantize\":\"%s\",\"cases\":%lld,\"positions\":%lld,"
           "\"mean_kl\":%.6g,\"max_kl\":%.6g,\"top1_agreement\":%.6f,\"reference_mean_entropy\":%.6g,"
           "\"log_vocab\":%.6g",
           model_dir, candidate_dir ? candidate_dir : model_dir, quantize ? quantize : "none", (long long)t.cases,
           (long long)t.positions, t.kl_sum / (double)t.positions, t.kl_max,
           (double)t.agreeing / (double)t.positions, t.entropy_sum / (double)t.positions, log((double)vocab));
    if (t.greedy_steps)  /* golden cases only: a base file's chunks have no continuation to compare */
      printf(",\"greedy_tokens\":%lld,\"greedy_same_before_divergence\":%.6f", (long long)t.greedy_steps,
             (double)t.greedy_same / (double)t.greedy_steps);
    if (base_path) print_base_totals(base_path, &bt);
    printf("}\n");
  }
  close_side(&cand);
  close_side(&ref);
  vlm_thread_pool_release(pool);
  if (status) {
    fprintf(stderr, "vlm-quant-accuracy: %s\n", vlm_status_message(status));
    vlm_status_free(status);
    return 1;
  }
  return 0;
}
