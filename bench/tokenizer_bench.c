/* Tokenizer throughput: loads DIR's tokenizer (timed), then encodes FILE a
 * few times and prints one JSON line with load time and MB/s.
 * Usage: tokenizer_bench DIR FILE [REPEATS] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "vlm.h"

static double now_seconds(void) {
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return (double)time.tv_sec + (double)time.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: tokenizer_bench DIR FILE [REPEATS]\n");
    return 2;
  }
  int repeats = argc > 3 ? atoi(argv[3]) : 3;
  FILE *file = fopen(argv[2], "rb");
  if (!file) return 1;
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  if (!text || fread(text, 1, (size_t)size, file) != (size_t)size) return 1;
  fclose(file);
  double start = now_seconds();
  vlm_tokenizer *tokenizer = NULL;
  vlm_status status = vlm_tokenizer_create(argv[1], NULL, &tokenizer);
  if (status) {
    fprintf(stderr, "%s\n", vlm_status_message(status));
    return 1;
  }
  double load = now_seconds() - start, best = 1e30;
  size_t tokens = 0;
  for (int i = 0; i < repeats; i++) {
    vlm_token_ids ids = {0};
    start = now_seconds();
    status = vlm_tokenizer_encode(tokenizer, text, (size_t)size, true, &ids);
    double elapsed = now_seconds() - start;
    if (status) return 1;
    if (elapsed < best) best = elapsed;
    tokens = ids.count;
    vlm_token_ids_release(&ids);
  }
  printf("{\"engine\": \"vlm\", \"load_ms\": %.0f, \"tokens\": %zu, \"mb_per_s\": %.2f}\n",
         load * 1000, tokens, (double)size / best / 1e6);
  vlm_tokenizer_release(tokenizer);
  free(text);
  return 0;
}
