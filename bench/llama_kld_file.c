#include "llama_kld_file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char magic[8] = {'_', 'l', 'o', 'g', 'i', 't', 's', '_'};

/* uint16 units of a row: the float scale and minimum, then the vocabulary
 * rounded up to an even count. */
static int64_t row_units(int32_t n_vocab) { return 4 + 2 * (((int64_t)n_vocab + 1) / 2); }

vlm_status llama_kld_open(const char *path, int64_t model_vocab, llama_kld_file *out) {
  memset(out, 0, sizeof(*out));
  out->file = fopen(path, "rb");
  if (!out->file) return VLM_ERROR(NOT_FOUND, "cannot open '%s'", path);
  char check[8];
  uint32_t n_ctx = 0;
  if (fread(check, 1, 8, out->file) != 8 || memcmp(check, magic, 8) != 0 ||
      fread(&n_ctx, sizeof(n_ctx), 1, out->file) != 1 || fread(&out->n_vocab, 4, 1, out->file) != 1 ||
      fread(&out->n_chunk, 4, 1, out->file) != 1) {
    llama_kld_close(out);
    return VLM_ERROR(INVALID_ARGUMENT, "'%s' is not a llama.cpp --kl-divergence-base file", path);
  }
  out->n_ctx = (int32_t)n_ctx;
  if (n_ctx < 4 || n_ctx > 65536 || out->n_chunk < 1 || out->n_chunk > 4096 || out->n_vocab != model_vocab) {
    vlm_status status = VLM_ERROR(INVALID_ARGUMENT, "'%s': n_ctx %u, %d chunks, vocabulary %d (the model's: %lld)",
                                  path, n_ctx, out->n_chunk, out->n_vocab, (long long)model_vocab);
    llama_kld_close(out);
    return status;
  }
  size_t count = (size_t)out->n_chunk * n_ctx;
  out->row_units = row_units(out->n_vocab);
  out->tokens = malloc(count * sizeof(int32_t));
  out->row = malloc((size_t)out->row_units * sizeof(uint16_t));
  if (!out->tokens || !out->row) {
    llama_kld_close(out);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  if (fread(out->tokens, sizeof(int32_t), count, out->file) != count) {
    llama_kld_close(out);
    return VLM_ERROR(DATA_LOSS, "'%s': truncated tokens", path);
  }
  for (size_t i = 0; i < count; i++)
    if (out->tokens[i] < 0 || out->tokens[i] >= out->n_vocab) {
      llama_kld_close(out);
      return VLM_ERROR(INVALID_ARGUMENT, "'%s': token %zu outside the vocabulary", path, i);
    }
  return VLM_OK;
}

vlm_status llama_kld_read_row(llama_kld_file *f, double *log_probs) {
  if (fread(f->row, sizeof(uint16_t), (size_t)f->row_units, f->file) != (size_t)f->row_units)
    return VLM_ERROR(DATA_LOSS, "truncated log-probabilities");
  float scale, min_log_prob;
  memcpy(&scale, f->row, 4);
  memcpy(&min_log_prob, f->row + 2, 4);
  for (int32_t i = 0; i < f->n_vocab; i++) log_probs[i] = scale * f->row[4 + i] + min_log_prob;
  return VLM_OK;
}

void llama_kld_close(llama_kld_file *f) {
  if (f->file) fclose(f->file);
  free(f->tokens);
  free(f->row);
  memset(f, 0, sizeof(*f));
}

vlm_status llama_kld_create(const char *path, const llama_kld_file *like, FILE **out) {
  FILE *file = fopen(path, "wb");
  if (!file) return VLM_ERROR(IO, "cannot create '%s'", path);
  uint32_t n_ctx = (uint32_t)like->n_ctx;
  size_t count = (size_t)like->n_chunk * n_ctx;
  if (fwrite(magic, 1, 8, file) != 8 || fwrite(&n_ctx, 4, 1, file) != 1 || fwrite(&like->n_vocab, 4, 1, file) != 1 ||
      fwrite(&like->n_chunk, 4, 1, file) != 1 || fwrite(like->tokens, sizeof(int32_t), count, file) != count) {
    fclose(file);
    return VLM_ERROR(IO, "cannot write '%s'", path);
  }
  *out = file;
  return VLM_OK;
}

/* As llama.cpp's log_softmax(n_vocab, logits, log_prob, tok) that writes the
 * base file: float arithmetic, range clamped to 16 below the top. */
vlm_status llama_kld_write_row(FILE *file, const float *logits, int32_t n_vocab) {
  int64_t units = row_units(n_vocab);
  uint16_t *row = calloc((size_t)units, sizeof(uint16_t));
  if (!row) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  float max_logit = logits[0], min_logit = logits[0];
  for (int32_t i = 1; i < n_vocab; i++) {
    max_logit = fmaxf(max_logit, logits[i]);
    min_logit = fminf(min_logit, logits[i]);
  }
  min_logit = fmaxf(min_logit, max_logit - 16);
  double sum_exp = 0;
  for (int32_t i = 0; i < n_vocab; i++) sum_exp += expf(logits[i] - max_logit);
  float log_sum_exp = (float)log(sum_exp);
  float min_log_prob = min_logit - max_logit - log_sum_exp;
  float scale = (max_logit - min_logit) / 65535.f;
  memcpy(row, &scale, 4);
  memcpy(row + 2, &min_log_prob, 4);
  if (scale != 0) {
    float inv_scale = 1 / scale;
    for (int32_t i = 0; i < n_vocab; i++)
      row[4 + i] = logits[i] > min_logit ? (uint16_t)lrintf(inv_scale * (logits[i] - min_logit)) : 0;
  }
  vlm_status status = fwrite(row, sizeof(uint16_t), (size_t)units, file) == (size_t)units
                          ? VLM_OK
                          : VLM_ERROR(IO, "cannot write log-probabilities");
  free(row);
  return status;
}
