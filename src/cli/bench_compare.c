/* vlm bench --compare: the same benchmark on two sides, alternately, as
 * child processes (`vlm bench` with the same options), so both see the same
 * machine at nearly the same time; medians per metric and their ratio.
 *
 * A side is this executable or another build's, with the image encoder's
 * backend of the command line or another one. On a shared machine one run
 * says little; alternating rounds and taking medians is what makes two
 * builds or backends comparable (docs/KERNELS.md, "Measuring"). */
#include "cli/bench_compare.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/json.h"

#define MAX_ARGUMENTS 64
#define MAX_OUTPUT (16 << 20)

typedef struct side {
  const char *executable;
  const char *backend;   /* NULL: the command line's */
  char *outputs[BENCH_COMPARE_MAX_ROUNDS];
  vlm_json_document documents[BENCH_COMPARE_MAX_ROUNDS];
  int runs;
} side;

/* Runs `executable [--threads N] bench ARGS [--backend B]`, its stdout
 * captured, its stderr (progress) passed through. */
static char *run_side(const side *s, const bench_compare_options *options) {
  const char *arguments[MAX_ARGUMENTS + 8];
  int count = 0;
  char threads[32];
  arguments[count++] = s->executable;
  if (options->thread_count > 0) {
    snprintf(threads, sizeof(threads), "%d", options->thread_count);
    arguments[count++] = "--threads";
    arguments[count++] = threads;
  }
  arguments[count++] = "bench";
  for (int i = 0; i < options->argument_count && count < MAX_ARGUMENTS; i++) arguments[count++] = options->arguments[i];
  if (s->backend) {
    arguments[count++] = "--backend";
    arguments[count++] = s->backend;
  }
  arguments[count] = NULL;
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) return NULL;
  pid_t child = fork();
  if (child < 0) {
    close(pipe_ends[0]);
    close(pipe_ends[1]);
    return NULL;
  }
  if (child == 0) {
    dup2(pipe_ends[1], STDOUT_FILENO);
    close(pipe_ends[0]);
    close(pipe_ends[1]);
    execv(s->executable, (char *const *)arguments);
    fprintf(stderr, "vlm bench: cannot run %s: %s\n", s->executable, strerror(errno));
    _exit(127);
  }
  close(pipe_ends[1]);
  size_t capacity = 1 << 16, length = 0;
  char *output = malloc(capacity);
  ssize_t got;
  while (output && (got = read(pipe_ends[0], output + length, capacity - length - 1)) != 0) {
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    length += (size_t)got;
    if (length + 1 == capacity) {
      char *grown = capacity < MAX_OUTPUT ? realloc(output, capacity * 2) : NULL;
      if (!grown) break;
      output = grown;
      capacity *= 2;
    }
  }
  close(pipe_ends[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!output || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    free(output);
    return NULL;
  }
  output[length] = '\0';
  return output;
}

/* The numbers compared: a path into the report and a name. */
typedef struct metric {
  char name[64];
  const char *array; /* "prefill", "decode", NULL for top level, "image" for the image object */
  int index;
  const char *field;
} metric;

static const vlm_json_value *metric_value(const vlm_json_document *document, const metric *m) {
  if (!m->array) return vlm_json_object_get(document->root, m->field);
  const vlm_json_value *container = vlm_json_object_get(document->root, m->array);
  if (m->index >= 0) container = vlm_json_array_get(container, (size_t)m->index);
  return vlm_json_object_get(container, m->field);
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median of the metric over a side's runs; false when a run lacks it. */
static bool median(const side *s, const metric *m, double *out) {
  double values[BENCH_COMPARE_MAX_ROUNDS];
  for (int r = 0; r < s->runs; r++)
    if (!vlm_json_get_double(metric_value(&s->documents[r], m), &values[r])) return false;
  qsort(values, (size_t)s->runs, sizeof(double), compare_doubles);
  *out = s->runs % 2 ? values[s->runs / 2] : (values[s->runs / 2 - 1] + values[s->runs / 2]) / 2;
  return true;
}

/* The metrics the first run of side a has, in report order. */
static int collect_metrics(const vlm_json_document *document, metric *metrics, int capacity) {
  static const char *top[] = {"fma_peak_gflops", "fma_peak_gflops_cpu_time", "read_bandwidth_gb_per_s",
                              "read_bandwidth_gb_per_s_cpu_time", "load_seconds", "rss_after_load_bytes",
                              "peak_rss_bytes"};
  static const char *prefill[] = {"tokens_per_second", "fraction_of_fma_peak", "fraction_of_fma_peak_cpu_time"};
  static const char *decode[] = {"tokens_per_second", "fraction_of_roofline", "fraction_of_roofline_cpu_time"};
  static const char *image[] = {"encode_seconds", "encode_cpu_seconds", "fraction_of_fma_peak",
                                "fraction_of_fma_peak_cpu_time"};
  int count = 0;
  for (size_t i = 0; i < sizeof(top) / sizeof(top[0]) && count < capacity; i++, count++) {
    metrics[count] = (metric){"", NULL, 0, top[i]};
    snprintf(metrics[count].name, sizeof(metrics[count].name), "%s", top[i]);
  }
  const vlm_json_value *root = document->root;
  static const char *arrays[] = {"prefill", "decode"};
  for (int a = 0; a < 2; a++) {
    const vlm_json_value *array = vlm_json_object_get(root, arrays[a]);
    const char *key = a == 0 ? "tokens" : "batch";
    const char **fields = a == 0 ? prefill : decode;
    for (size_t i = 0; array; i++) {
      const vlm_json_value *entry = vlm_json_array_get(array, i);
      int64_t size = 0;
      if (!entry || !vlm_json_get_int(vlm_json_object_get(entry, key), &size)) break;
      for (int f = 0; f < 3 && count < capacity; f++, count++) {
        metrics[count] = (metric){"", arrays[a], (int)i, fields[f]};
        snprintf(metrics[count].name, sizeof(metrics[count].name), "%s_%lld_%s", arrays[a], (long long)size,
                 fields[f]);
      }
    }
  }
  if (vlm_json_object_get(root, "image"))
    for (size_t f = 0; f < sizeof(image) / sizeof(image[0]) && count < capacity; f++, count++) {
      metrics[count] = (metric){"", "image", -1, image[f]};
      snprintf(metrics[count].name, sizeof(metrics[count].name), "image_%s", image[f]);
    }
  return count;
}

static void append_side(vlm_string_builder *json, const side *s, const char *name) {
  vlm_sb_appendf(json, "\"%s\":{\"executable\":", name);
  vlm_sb_append_json_string(json, s->executable, strlen(s->executable));
  vlm_sb_append_literal(json, ",\"backend\":");
  if (s->backend) vlm_sb_append_json_string(json, s->backend, strlen(s->backend));
  else vlm_sb_append_literal(json, "null");
  vlm_sb_append_literal(json, ",\"runs\":[");
  for (int r = 0; r < s->runs; r++) {
    size_t length = strlen(s->outputs[r]);
    while (length > 0 && (s->outputs[r][length - 1] == '\n' || s->outputs[r][length - 1] == ' ')) length--;
    if (r) vlm_sb_append_literal(json, ",");
    vlm_sb_append(json, s->outputs[r], length);
  }
  vlm_sb_append_literal(json, "]}");
}

int bench_compare_run(const bench_compare_options *options) {
  char self[4096];
  ssize_t self_length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (self_length <= 0) {
    fprintf(stderr, "vlm: error: bench --compare: cannot find this executable (/proc/self/exe)\n");
    return 1;
  }
  self[self_length] = '\0';
  side sides[2] = {{.executable = self}, {.executable = options->other_executable ? options->other_executable : self,
                                          .backend = options->other_backend}};
  int failed = 0;
  for (int round = 0; round < options->rounds && !failed; round++)
    for (int s = 0; s < 2 && !failed; s++) {
      fprintf(stderr, "vlm bench: compare round %d/%d, side %c (%s%s%s)\n", round + 1, options->rounds, 'a' + s,
              sides[s].executable, sides[s].backend ? ", backend " : "", sides[s].backend ? sides[s].backend : "");
      char *output = run_side(&sides[s], options);
      vlm_json_document *document = &sides[s].documents[sides[s].runs];
      vlm_status status = output ? vlm_json_parse(output, strlen(output), NULL, NULL, "the side's report", document)
                                 : vlm_status_make(VLM_STATUS_INTERNAL, "side %c failed (its messages are above)",
                                                   'a' + s);
      if (status) {
        fprintf(stderr, "vlm: error: bench --compare: %s\n", vlm_status_message(status));
        vlm_status_free(status);
        free(output);
        failed = 1;
        break;
      }
      sides[s].outputs[sides[s].runs++] = output;
    }
  if (!failed) {
    metric metrics[96];
    int metric_count = collect_metrics(&sides[0].documents[0], metrics, 96);
    vlm_string_builder json = {0};
    vlm_sb_appendf(&json, "{\"compare\":{\"rounds\":%d,\"median\":{", options->rounds);
    bool first = true;
    for (int m = 0; m < metric_count; m++) {
      double a, b;
      if (!median(&sides[0], &metrics[m], &a) || !median(&sides[1], &metrics[m], &b)) continue;
      vlm_sb_appendf(&json, "%s\"%s\":{\"a\":%.6g,\"b\":%.6g,\"b_over_a\":%.4f}", first ? "" : ",", metrics[m].name,
                     a, b, a != 0 ? b / a : 0.0);
      fprintf(stderr, "vlm bench: median %-42s a %12.4g  b %12.4g  b/a %.3f\n", metrics[m].name, a, b,
              a != 0 ? b / a : 0.0);
      first = false;
    }
    vlm_sb_append_literal(&json, "},");
    append_side(&json, &sides[0], "a");
    vlm_sb_append_literal(&json, ",");
    append_side(&json, &sides[1], "b");
    vlm_sb_append_literal(&json, "}}\n");
    char *text = vlm_sb_finish(&json);
    if (text) fputs(text, stdout);
    else failed = 1;
    free(text);
  }
  for (int s = 0; s < 2; s++)
    for (int r = 0; r < sides[s].runs; r++) {
      vlm_json_document_release(&sides[s].documents[r]);
      free(sides[s].outputs[r]);
    }
  return failed;
}
