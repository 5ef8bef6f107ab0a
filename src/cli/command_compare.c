/* vlm compare: run a golden case from the oracle harness (tools/oracle)
 * through vlm, stage by stage, and name the first stage that diverges.
 *
 * The comparison library lives in src/validate (not yet in include/vlm.h:
 * its interface is still growing with each stage the decoder issues add). */
#include <string.h>

#include "cli/commands.h"
#include "validate/compare.h"

static void print_usage(FILE *out) {
  fprintf(out,
          "usage: vlm compare --golden CASE_DIR [--model DIR] [--json] [--require-all]\n"
          "\n"
          "Runs a golden case written by tools/oracle (Hugging Face Transformers) through\n"
          "vlm and prints, per stage, the max-abs and max-rel error against the stage's\n"
          "tolerance, then the first divergent stage or \"all N stages match\". Stages vlm\n"
          "cannot compute yet are listed as \"not implemented yet\".\n"
          "\n"
          "  --golden CASE_DIR  a case directory (manifest.json + tensors.safetensors)\n"
          "  --model DIR        the checkpoint (default: the one the manifest names)\n"
          "  --json             print the report as JSON\n"
          "  --require-all      also fail when a stage is not implemented yet\n"
          "\n"
          "Exit status: 0 when every implemented stage matches, 1 when a stage diverges\n"
          "(or, with --require-all, is not implemented) or the case cannot be read,\n"
          "2 for a usage error.\n");
}

static bool any_not_implemented(const vlm_comparison_report *report) {
  for (size_t i = 0; i < vlm_comparison_report_stage_count(report); i++)
    if (vlm_comparison_report_stage(report, i)->outcome == VLM_STAGE_NOT_IMPLEMENTED)
      return true;
  return false;
}

int command_compare(int argc, char **argv, const global_options *options) {
  const char *golden = NULL, *model = NULL;
  bool as_json = false, require_all = false;
  for (int i = 0; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      print_usage(stdout);
      return 0;
    } else if (strcmp(argv[i], "--golden") == 0 || strcmp(argv[i], "--model") == 0) {
      if (i + 1 >= argc) return cli_usage_error("compare: %s needs a directory", argv[i]);
      *(strcmp(argv[i], "--golden") == 0 ? &golden : &model) = argv[i + 1];
      i++;
    } else if (strcmp(argv[i], "--json") == 0) {
      as_json = true;
    } else if (strcmp(argv[i], "--require-all") == 0) {
      require_all = true;
    } else {
      return cli_usage_error("compare: unknown option '%s' (see vlm compare --help)", argv[i]);
    }
  }
  if (!golden) return cli_usage_error("compare: --golden CASE_DIR is required (see vlm compare --help)");
  vlm_compare_options compare_options = {.model_directory = model,
                                         .thread_count = options->thread_count};
  vlm_comparison_report *report = NULL;
  vlm_status status = vlm_compare_run(golden, &compare_options, &report);
  if (status) return cli_report_status(status);
  fputs(vlm_comparison_report_text(report, as_json), stdout);
  const vlm_stage_result *divergent = vlm_comparison_report_first_divergent(report);
  int exit_code = 0;
  if (divergent) {
    fprintf(stderr, "vlm: error: %s: first divergent stage: %s\n", golden, divergent->name);
    exit_code = 1;
  } else if (require_all && any_not_implemented(report)) {
    fprintf(stderr, "vlm: error: %s: some stages are not implemented yet\n", golden);
    exit_code = 1;
  }
  vlm_comparison_report_release(report);
  return exit_code;
}
