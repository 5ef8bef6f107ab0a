/* vlm inspect: validate a checkpoint directory and describe it. */
#include <string.h>

#include "cli/commands.h"

/* ---------------------------------------------------------------------- */

static void print_usage(FILE *out) {
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

int command_inspect(int argc, char **argv, const global_options *options) {
  const char *model_dir = NULL;
  bool as_json = false;
  for (int i = 0; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      print_usage(stdout);
      return 0;
    } else if (strcmp(argv[i], "--model") == 0) {
      if (i + 1 >= argc) return cli_usage_error("inspect: --model needs a directory");
      model_dir = argv[++i];
    } else if (strcmp(argv[i], "--json") == 0) {
      as_json = true;
    } else {
      return cli_usage_error("inspect: unknown option '%s' (see vlm inspect --help)", argv[i]);
    }
  }
  if (!model_dir) return cli_usage_error("inspect: --model DIR is required (see vlm inspect --help)");
  vlm_inspect_options inspect_options = {.thread_count = options->thread_count};
  vlm_model_report *report = NULL;
  vlm_status status = vlm_model_inspect(model_dir, &inspect_options, &report);
  if (status) return cli_report_status(status);
  fputs(vlm_model_report_text(report, as_json), stdout);
  int exit_code = 0;
  if (!vlm_model_report_can_load(report)) {
    fprintf(stderr, "vlm: error: %s: %s\n", model_dir, vlm_model_report_problem(report));
    exit_code = 1;
  }
  vlm_model_report_release(report);
  return exit_code;
}

