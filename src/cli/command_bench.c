/* vlm bench: prefill and decode throughput as JSON (progress on stderr). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench_compare.h"
#include "cli/commands.h"
#include "cli/hub_download.h"
#include "models/modules.h"
#include "vlm/benchmark.h"
#include "vlm/engine.h"

#define MAX_LIST 16

static void print_usage(FILE *out) {
  fprintf(out,
          "usage: vlm bench --model DIR [--prefill N,N...] [--decode-batch B,B...]\n"
          "                 [--steps N] [--decode-context N] [--repetitions N] [--image PATH]\n"
          "                 [--audio PATH]\n"
          "                 [--backend cpu|xla]\n"
          "                 [--compare VLM | --compare-backend cpu|xla] [--rounds N]\n"
          "                 [--quantize q8|q4]\n"
          "\n"
          "Measures the text decoder on --backend (cpu, the default, or xla): prefill tokens/s for each prompt\n"
          "length (default 128,512) and decode tokens/s for each batch size (default 1,8)\n"
          "with each slot holding --decode-context tokens (default 16) before the timed\n"
          "--steps (default 32),\n"
          "each as the best of N repetitions (default 3), next to the machine's read\n"
          "bandwidth and FMA peak measured in the same run; prints a JSON report on stdout\n"
          "(progress on stderr). Use the global --threads to set the thread count.\n"
          "DIR may also be a model id ORG/NAME[@REVISION] in the local Hugging Face cache\n"
          "(see vlm pull).\n"
          "--quantize q8|q4 quantizes the decoder's linear weights at load (as vlm run);\n"
          "decode's bandwidth bound is then over the quantized bytes (weight_bytes).\n"
          "With --image it also times that image's decode + image processor and its\n"
          "encode (vision tower + projector) on the same backend (on xla the first call\n"
          "compiles or loads the encoder: reported apart). On xla the decoder is compiled\n"
          "for the geometry the run needs (slots: the largest batch; capacity and prefill\n"
          "chunk: the longest sequence), or taken from the cache; \"modules\" lists each\n"
          "compiled module with its compile and load seconds (compile 0 when cached).\n"
          "With --audio it times that clip's decode + feature extractor and its encode\n"
          "(speech encoder + projector) the same way, for models with an audio path.\n"
          "Every rate is also given as a fraction of its bound, on the wall clock and in\n"
          "the pool threads' CPU time (on a shared machine, wall time counts waiting).\n"
          "\n"
          "--compare VLM runs this benchmark with this executable (side a) and with\n"
          "another build's vlm (side b), alternately, --rounds times (default 3), as\n"
          "child processes with the same options; --compare-backend runs side b with\n"
          "that --backend. The report holds every run and, per metric, both medians\n"
          "and b/a (peak RSS included).\n"
          "A benchmark-sized random checkpoint can be written with\n"
          "  vlm-make-tiny-model --config bench/configs/qwen2-0.5b.json --dtype bf16 DIR\n");
}

/* Parses "128,512" into at most MAX_LIST positive numbers. */
static int parse_list(const char *text, int64_t *values) {
  int count = 0;
  const char *cursor = text;
  while (*cursor && count < MAX_LIST) {
    char *end = NULL;
    errno = 0;
    long long value = strtoll(cursor, &end, 10);
    if (errno || end == cursor || value < 1 || value > 1000000) return -1;
    values[count++] = value;
    if (*end == ',') cursor = end + 1;
    else if (*end == '\0') return count;
    else return -1;
  }
  return *cursor ? -1 : count;
}

/* The text decoder of --backend for the geometry the benchmark asks. */
typedef struct bench_backend {
  const char *name;
  int thread_count;
} bench_backend;

static vlm_status open_decoder(void *context, vlm_model *model, int32_t slots, int64_t capacity, int64_t chunk,
                               vlm_text_decoder **out_decoder) {
  const bench_backend *backend = context;
  return cli_open_text_decoder(backend->name, model, slots, capacity, chunk, backend->thread_count, out_decoder);
}

static void print_progress(void *context, const char *line) {
  (void)context;
  fprintf(stderr, "vlm bench: %s\n", line);
}

int command_bench(int argc, char **argv, const global_options *options) {
  vlm_benchmark_options bench = {.thread_count = options->thread_count, .progress = print_progress};
  const char *backend = NULL;
  bench_compare_options compare = {.rounds = 3, .thread_count = options->thread_count};
  bool comparing = false, rounds_given = false;
  char *forwarded[64];
  int forwarded_count = 0;
  int64_t lengths[MAX_LIST], batch_values[MAX_LIST];
  int32_t batches[MAX_LIST];
  for (int i = 0; i < argc; i++) {
    const char *argument = argv[i];
    bool has_value = i + 1 < argc;
    if (cli_is_help(argument)) {
      print_usage(stdout);
      return 0;
    }
    if (strcmp(argument, "--compare") == 0 && has_value) {
      compare.other_executable = argv[++i];
      comparing = true;
      continue;
    }
    if (strcmp(argument, "--compare-backend") == 0 && has_value) {
      compare.other_backend = argv[++i];
      comparing = true;
      continue;
    }
    if (strcmp(argument, "--rounds") == 0 && has_value) {
      long long rounds;
      if (!cli_parse_integer(argv[++i], 1, BENCH_COMPARE_MAX_ROUNDS, &rounds))
        return cli_usage_error("bench: --rounds needs a number in 1..%d", BENCH_COMPARE_MAX_ROUNDS);
      compare.rounds = (int)rounds;
      rounds_given = true;
      continue;
    }
    if (forwarded_count + 2 > 64) return cli_usage_error("bench: too many options");
    forwarded[forwarded_count++] = argv[i];
    if (strcmp(argument, "--model") == 0 && has_value) {
      bench.model_dir = argv[++i];
      forwarded[forwarded_count++] = argv[i];
    } else if (strcmp(argument, "--image") == 0 && has_value) {
      bench.image_path = argv[++i];
      forwarded[forwarded_count++] = argv[i];
    } else if (strcmp(argument, "--audio") == 0 && has_value) {
      bench.audio_path = argv[++i];
    } else if (strcmp(argument, "--quantize") == 0 && has_value) {
      bench.quantize = argv[++i];
      forwarded[forwarded_count++] = argv[i];
    } else if (strcmp(argument, "--backend") == 0 && has_value) {
      backend = argv[++i];
      forwarded[forwarded_count++] = argv[i];
    } else if (strcmp(argument, "--prefill") == 0 && has_value) {
      bench.prefill_length_count = parse_list(argv[++i], lengths);
      forwarded[forwarded_count++] = argv[i];
      if (bench.prefill_length_count < 1) return cli_usage_error("bench: --prefill needs lengths like 128,512");
      bench.prefill_lengths = lengths;
    } else if (strcmp(argument, "--decode-batch") == 0 && has_value) {
      bench.decode_batch_count = parse_list(argv[++i], batch_values);
      forwarded[forwarded_count++] = argv[i];
      if (bench.decode_batch_count < 1) return cli_usage_error("bench: --decode-batch needs sizes like 1,8");
      for (int b = 0; b < bench.decode_batch_count; b++) batches[b] = (int32_t)batch_values[b];
      bench.decode_batches = batches;
    } else if (strcmp(argument, "--decode-context") == 0 && has_value) {
      int64_t value[MAX_LIST];
      if (parse_list(argv[++i], value) != 1) return cli_usage_error("bench: --decode-context needs a positive number");
      forwarded[forwarded_count++] = argv[i];
      bench.decode_context = value[0];
    } else if ((strcmp(argument, "--steps") == 0 || strcmp(argument, "--repetitions") == 0) && has_value) {
      int64_t value[MAX_LIST];
      if (parse_list(argv[++i], value) != 1) return cli_usage_error("bench: %s needs a positive number", argument);
      forwarded[forwarded_count++] = argv[i];
      if (argument[2] == 's') bench.decode_steps = value[0];
      else bench.repetitions = (int)value[0];
    } else {
      return cli_usage_error("bench: unknown or incomplete option '%s' (see vlm bench --help)", argument);
    }
  }
  if (!bench.model_dir) return cli_usage_error("bench: --model DIR is required (see vlm bench --help)");
  char model_dir[VLM_HUB_PATH_MAX];
  vlm_status resolved = cli_model_dir(bench.model_dir, VLM_HUB_NEEDS_WEIGHTS, false, model_dir, sizeof(model_dir));
  if (resolved) return cli_report_status(resolved);
  bench.model_dir = model_dir;
  if (rounds_given && !comparing) return cli_usage_error("bench: --rounds applies to --compare and --compare-backend");
  if (comparing) {
    compare.arguments = forwarded;
    compare.argument_count = forwarded_count;
    return bench_compare_run(&compare);
  }
  vlm_status status = VLM_OK;
  bench_backend chosen = {backend, options->thread_count};
  if (backend && strcmp(backend, "cpu") != 0 && strcmp(backend, "xla") != 0)
    return cli_usage_error("bench: unknown backend '%s' (cpu or xla)", backend);
  if (backend && strcmp(backend, "cpu") != 0) {
    bench.open_text_decoder = open_decoder;
    bench.open_context = &chosen;
  }
  if (backend && strcmp(backend, "cpu") != 0 && (bench.image_path || bench.audio_path)) {
    vlm_model *model = NULL;
    status = vlm_model_open(bench.model_dir, NULL, &model);
    if (!status && bench.image_path)
      status = cli_open_image_encoder(backend, model, options->thread_count, &bench.image_encoder);
    if (!status && bench.image_path && !bench.image_encoder)
      status = vlm_status_make(VLM_STATUS_UNIMPLEMENTED, "bench: the %s backend cannot run this model's image encoder",
                               backend);
    if (!status && bench.audio_path) status = cli_open_audio_encoder(backend, model, options->thread_count, &bench.audio_encoder);
    if (!status && bench.audio_path && !bench.audio_encoder)
      status = vlm_status_make(VLM_STATUS_UNIMPLEMENTED, "bench: the %s backend cannot run this model's audio encoder",
                               backend);
    vlm_model_release(model);
    if (status) return cli_report_status(status);
  }
  char *json = NULL;
  status = vlm_benchmark_run(&bench, &json);
  if (status) return cli_report_status(status);
  fputs(json, stdout);
  free(json);
  return 0;
}
