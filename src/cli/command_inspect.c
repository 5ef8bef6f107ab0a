/* vlm inspect: validate a checkpoint directory and describe it. */
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/hub_download.h"
#include "engine/module_support.h"
#include "models/model.h"
#include "io/json.h"

/* ---------------------------------------------------------------------- */

static void print_usage(FILE *out) {
  fprintf(out,
          "usage: vlm inspect --model DIR [--json]\n"
          "\n"
          "Loads and validates a Hugging Face checkpoint directory (config.json,\n"
          "generation_config.json, preprocessor/processor configs, every safetensors\n"
          "header, and tokenizer.json and the chat template when present, as vlm run\n"
          "loads them) and reports architecture, modalities, dtypes, parameters and bytes\n"
          "per component, and missing, unexpected or mis-shaped tensors, then which\n"
          "backend (cpu, xla) can run each module: token_prefill, embeddings_prefill,\n"
          "decode, and the vision encoder for models with images.\n"
          "\n"
          "  --model DIR   the checkpoint directory (or a cached model id ORG/NAME[@REV])\n"
          "  --json        print the report as JSON\n"
          "\n"
          "Exit status: 0 when the checkpoint is complete, 1 when it is malformed or\n"
          "incomplete, or its tokenizer or chat template does not load (the reason is\n"
          "printed on stderr), 2 for a usage error.\n");
}

/* The report, then which backend can run each module (SPEC 1.4): a table
 * in text, a "modules" member in JSON. */
static void print_report(const char *report, bool as_json, const vlm_module_support *modules, int count) {
  if (!modules) {
    fputs(report, stdout);
    return;
  }
  vlm_string_builder out = {0};
  size_t length = strlen(report);
  if (as_json) {
    while (length && (report[length - 1] == '\n' || report[length - 1] == '}')) {
      bool brace = report[length - 1] == '}';
      length--;
      if (brace) break;
    }
    vlm_sb_append(&out, report, length);
    vlm_sb_append_literal(&out, ",\"modules\":[");
    for (int i = 0; i < count; i++) {
      vlm_sb_appendf(&out, "%s{\"module\":\"%s\",\"cpu\":%s,\"xla\":%s,\"cpu_reason\":", i ? "," : "",
                     modules[i].module, modules[i].cpu ? "true" : "false", modules[i].xla ? "true" : "false");
      if (modules[i].cpu) vlm_sb_append_literal(&out, "null");
      else vlm_sb_append_json_string(&out, modules[i].cpu_reason, strlen(modules[i].cpu_reason));
      vlm_sb_append_literal(&out, ",\"xla_reason\":");
      if (modules[i].xla) vlm_sb_append_literal(&out, "null");
      else vlm_sb_append_json_string(&out, modules[i].xla_reason, strlen(modules[i].xla_reason));
      vlm_sb_append_literal(&out, "}");
    }
    vlm_sb_append_literal(&out, "]}\n");
  } else {
    vlm_sb_append(&out, report, length);
    vlm_sb_appendf(&out, "%-20s %-5s %s\n", "module", "cpu", "xla");
    for (int i = 0; i < count; i++)
      vlm_sb_appendf(&out, "%-20s %-5s %s%s%s\n", modules[i].module, modules[i].cpu ? "yes" : "no",
                     modules[i].xla ? "yes" : "no", modules[i].xla ? "" : ": ",
                     modules[i].xla ? "" : modules[i].xla_reason);
  }
  char *text = vlm_sb_finish(&out);
  fputs(text ? text : report, stdout);
  free(text);
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
  char resolved[VLM_HUB_PATH_MAX];
  vlm_status status = cli_model_dir(model_dir, VLM_HUB_NEEDS_WEIGHTS, false, resolved, sizeof(resolved));
  if (status) return cli_report_status(status);
  model_dir = resolved;
  vlm_model *model = NULL; /* opened once: the report and the module table read it */
  status = vlm_model_open(model_dir, NULL, &model);
  if (!status) status = vlm_model_inspect_opened(model, &inspect_options, &report);
  if (status) {
    vlm_model_release(model);
    return cli_report_status(status);
  }
  vlm_module_support modules[VLM_MODULE_COUNT];
  int module_count = 0;
  bool with_modules = vlm_model_report_can_load(report);
  if (with_modules) {
    vlm_status support = vlm_module_support_check(model, modules, &module_count);
    with_modules = support == VLM_OK;
    vlm_status_free(support);
  }
  vlm_model_release(model);
  print_report(vlm_model_report_text(report, as_json), as_json, with_modules ? modules : NULL, module_count);
  int exit_code = 0;
  if (!vlm_model_report_can_load(report)) {
    fprintf(stderr, "vlm: error: %s: %s\n", model_dir, vlm_model_report_problem(report));
    exit_code = 1;
  }
  vlm_model_report_release(report);
  return exit_code;
}

