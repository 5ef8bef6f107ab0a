/* vlm bench --compare: two builds or two encoder backends, alternately. */
#ifndef VLM_CLI_BENCH_COMPARE_H
#define VLM_CLI_BENCH_COMPARE_H

#define BENCH_COMPARE_MAX_ROUNDS 32

typedef struct bench_compare_options {
  const char *other_executable; /* side b's vlm, or NULL: this one */
  const char *other_backend;    /* side b's --backend, or NULL: the command line's */
  int rounds;                   /* 1..BENCH_COMPARE_MAX_ROUNDS */
  int thread_count;             /* passed as --threads when > 0 */
  char **arguments;             /* bench's own options, without the compare ones */
  int argument_count;
} bench_compare_options;

/* Runs both sides `rounds` times, a then b, and prints a JSON report of
 * every run and the per-metric medians with b/a. Returns the exit code. */
int bench_compare_run(const bench_compare_options *options);

#endif
