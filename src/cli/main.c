/* The vlm command. A thin client of include/vlm.h: it parses arguments,
 * calls the library, prints results, and maps failures to a one-line message
 * and a non-zero exit code. Subcommands are listed here only once they work. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vlm.h"

typedef struct global_options {
  int thread_count; /* 0: one per core */
} global_options;

typedef int (*command_function)(int argc, char **argv, const global_options *options);

typedef struct command {
  const char *name;
  const char *summary;
  command_function run;
} command;

static int run_inspect(int argc, char **argv, const global_options *options);

static const command commands[] = {
    {"inspect", "validate a checkpoint directory and describe what it holds", run_inspect},
};

static void print_usage(FILE *out) {
  fprintf(out,
          "usage: vlm [--threads N] [--log-level LEVEL] <command> [options]\n"
          "\n"
          "Inference engine for vision- and audio-language models (version %s).\n"
          "\n"
          "commands:\n",
          VLM_VERSION_STRING);
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(out,
          "\n"
          "global options:\n"
          "  --threads N         worker threads (default: one per available core, %d here)\n"
          "  --log-level LEVEL   debug, info, warn (default) or error; also $VLM_LOG\n"
          "  --version           print the version and exit\n"
          "  -h, --help          print this help; `vlm <command> --help` for a command\n",
          vlm_cpu_count());
}

static int fail(const char *format, const char *detail) {
  fprintf(stderr, "vlm: ");
  fprintf(stderr, format, detail);
  fprintf(stderr, "\n");
  return 2;
}

static int report_status(vlm_status status) {
  fprintf(stderr, "vlm: error: %s\n", vlm_status_message(status));
  vlm_status_free(status);
  return 1;
}

static bool parse_positive_int(const char *text, int *out) {
  char *end = NULL;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno || !end || *end || end == text || value < 1 || value > 1024) return false;
  *out = (int)value;
  return true;
}

/* ---------------------------------------------------------------------- */
/* vlm inspect                                                             */
/* ---------------------------------------------------------------------- */

static void print_inspect_usage(FILE *out) {
  fprintf(out,
          "usage: vlm inspect --model DIR [--json]\n"
          "\n"
          "Loads and validates a Hugging Face checkpoint directory (config.json,\n"
          "generation_config.json, preprocessor/processor configs, every safetensors\n"
          "header) and reports architecture, modalities, dtypes, parameters and bytes\n"
          "per component, and missing, unexpected or mis-shaped tensors.\n"
          "\n"
          "  --model DIR   the checkpoint directory\n"
          "  --json        print the report as JSON\n"
          "\n"
          "Exit status: 0 when the checkpoint is complete, 1 when it is malformed or\n"
          "incomplete (the reason is printed on stderr), 2 for a usage error.\n");
}

static int run_inspect(int argc, char **argv, const global_options *options) {
  const char *model_dir = NULL;
  bool as_json = false;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      print_inspect_usage(stdout);
      return 0;
    } else if (strcmp(argv[i], "--model") == 0) {
      if (i + 1 >= argc) return fail("inspect: --model needs a directory%s", "");
      model_dir = argv[++i];
    } else if (strcmp(argv[i], "--json") == 0) {
      as_json = true;
    } else {
      return fail("inspect: unknown option '%s' (see vlm inspect --help)", argv[i]);
    }
  }
  if (!model_dir) return fail("inspect: --model DIR is required (see vlm inspect --help)%s", "");
  vlm_inspect_options inspect_options = {.thread_count = options->thread_count};
  vlm_model_report *report = NULL;
  vlm_status status = vlm_model_inspect(model_dir, &inspect_options, &report);
  if (status) return report_status(status);
  fputs(vlm_model_report_text(report, as_json), stdout);
  int exit_code = 0;
  if (!vlm_model_report_can_load(report)) {
    fprintf(stderr, "vlm: error: %s: %s\n", model_dir, vlm_model_report_problem(report));
    exit_code = 1;
  }
  vlm_model_report_release(report);
  return exit_code;
}

/* ---------------------------------------------------------------------- */

int main(int argc, char **argv) {
  global_options options = {0};
  int index = 1;
  for (; index < argc && argv[index][0] == '-'; index++) {
    const char *argument = argv[index];
    if (strcmp(argument, "--help") == 0 || strcmp(argument, "-h") == 0) {
      print_usage(stdout);
      return 0;
    } else if (strcmp(argument, "--version") == 0) {
      printf("vlm %s\n", VLM_VERSION_STRING);
      return 0;
    } else if (strcmp(argument, "--threads") == 0) {
      if (index + 1 >= argc || !parse_positive_int(argv[index + 1], &options.thread_count))
        return fail("--threads needs a whole number from 1 to 1024%s", "");
      index++;
    } else if (strcmp(argument, "--log-level") == 0) {
      vlm_log_level level;
      if (index + 1 >= argc || !vlm_log_level_parse(argv[index + 1], &level))
        return fail("--log-level needs one of debug, info, warn, error, off%s", "");
      vlm_log_set_level(level);
      index++;
    } else {
      return fail("unknown option '%s' (see vlm --help)", argument);
    }
  }
  if (index >= argc) {
    print_usage(stderr);
    return 2;
  }
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    if (strcmp(argv[index], commands[i].name) == 0)
      return commands[i].run(argc - index - 1, argv + index + 1, &options);
  return fail("unknown command '%s' (see vlm --help)", argv[index]);
}
