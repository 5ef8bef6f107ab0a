/* The file llama.cpp's perplexity tool writes with --kl-divergence-base and
 * reads with --kl-divergence, read and written here so that vlm's and
 * llama.cpp's next-token distributions can be compared on the same tokens
 * and positions (bench/quant_accuracy.c; issue 19's "KL against Q4_0").
 * Only the format is shared: no llama.cpp code.
 *
 * Layout (llama.cpp 0c1e57098, tools/perplexity/perplexity.cpp):
 *   "_logits_"  uint32 n_ctx  int32 n_vocab  int32 n_chunk
 *   int32 tokens[n_chunk * n_ctx]
 *   per chunk, per position p in [n_ctx/2, n_ctx - 1) (the logits at p,
 *   which predict token p + 1): float scale, float min_log_prob, then
 *   2*((n_vocab+1)/2) uint16 q, log p[i] = scale * q[i] + min_log_prob.
 *   The log-probabilities are clamped 16 below the largest. */
#ifndef VLM_BENCH_LLAMA_KLD_FILE_H
#define VLM_BENCH_LLAMA_KLD_FILE_H

#include <stdint.h>
#include <stdio.h>

#include "core/status.h"

typedef struct llama_kld_file {
  FILE *file;
  int32_t n_ctx, n_vocab, n_chunk;
  int32_t *tokens;  /* n_chunk * n_ctx */
  uint16_t *row;    /* one row: 4 + 2*((n_vocab+1)/2) uint16 */
  int64_t row_units;
} llama_kld_file;

/* The first scored position of a chunk, and how many are scored. */
static inline int64_t llama_kld_first(const llama_kld_file *f) { return f->n_ctx / 2; }
static inline int64_t llama_kld_rows(const llama_kld_file *f) { return f->n_ctx - 1 - f->n_ctx / 2; }

/* Reads the header and the tokens; the rows follow, chunk by chunk, through
 * llama_kld_read_row. */
vlm_status llama_kld_open(const char *path, int64_t model_vocab, llama_kld_file *out);
/* The next row, widened: log_probs[n_vocab]. */
vlm_status llama_kld_read_row(llama_kld_file *f, double *log_probs);
void llama_kld_close(llama_kld_file *f);

/* Writes a file with the same tokens as `like` (header now, rows through
 * llama_kld_write_row), so llama.cpp can measure against vlm's reference. */
vlm_status llama_kld_create(const char *path, const llama_kld_file *like, FILE **out);
/* One row from logits, quantized exactly as llama.cpp does. */
vlm_status llama_kld_write_row(FILE *file, const float *logits, int32_t n_vocab);

#endif
