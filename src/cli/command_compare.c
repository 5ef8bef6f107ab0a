/* vlm compare: run a golden case from the oracle harness (tools/oracle)
 * through vlm, stage by stage, and name the first stage that diverges.
 *
 * The comparison library lives in src/validate (not yet in include/vlm.h:
 * its interface is still growing with each stage the decoder issues add).
 * --backend xla hands it this command's openers of the xla modules
 * (backend.c), so the library itself never links the xla runtime. */
#include <string.h>

#include "cli/commands.h"
#include "cli/hub_download.h"
#include "media/media_item.h"
#include "validate/compare.h"

static void print_usage(FILE *out) {
  fprintf(out,
          "usage: vlm compare --golden CASE_DIR [--model DIR] [--backend cpu|xla] [--json] [--require-all]\n"
          "\n"
          "Runs a golden case written by tools/oracle (Hugging Face Transformers) through\n"
          "vlm and prints, per stage, the max-abs and max-rel error against the stage's\n"
          "tolerance, then the first divergent stage or \"all N stages match\". Stages vlm\n"
          "cannot compute yet are listed as \"not implemented yet\".\n"
          "\n"
          "  --golden CASE_DIR  a case directory (manifest.json + tensors.safetensors)\n"
          "  --model DIR        the checkpoint, or a cached model id ORG/NAME (default: the\n"
          "                     one the manifest names)\n"
          "  --backend NAME     cpu (default): every stage on the cpu reference path;\n"
          "                     xla: every stage that is a module boundary of the xla\n"
          "                     backend through its compiled modules (each image's and\n"
          "                     clip's encoder output, prefill logits, every layer's KV,\n"
          "                     greedy tokens and their text), compiled on first use and\n"
          "                     cached like `vlm run --backend xla`'s. Host stages\n"
          "                     (checkpoint, processor outputs, ids, positions, masks) are\n"
          "                     backend-independent and run as on cpu; stages that exist\n"
          "                     only inside a compiled module (the towers' hidden states,\n"
          "                     the merged input_embeddings) are listed as \"not on this\n"
          "                     backend\", never as matches. Same tolerances as on cpu\n"
          "  --json             print the report as JSON\n"
          "  --require-all      also fail when a stage is not implemented yet; a stage\n"
          "                     that is inside a compiled module of the chosen backend\n"
          "                     does not fail it (every stage the backend can compute\n"
          "                     must be computed and match)\n"
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

/* The comparison's openers of the xla modules (vlm_compare_backend). */
static vlm_status open_xla_decoder(void *user, vlm_model *model, int64_t capacity, int64_t prefill_chunk,
                                   vlm_text_decoder **out) {
  return cli_open_text_decoder("xla", model, 1, capacity, prefill_chunk, *(const int *)user, out);
}

static vlm_status open_xla_encoder(void *user, vlm_model *model, int kind, vlm_media_encoder **out) {
  if (kind == VLM_MEDIA_AUDIO) return cli_open_audio_encoder("xla", model, *(const int *)user, out);
  if (kind == VLM_MEDIA_IMAGE) return cli_open_image_encoder("xla", model, *(const int *)user, out);
  *out = NULL;
  return vlm_status_make(VLM_STATUS_UNIMPLEMENTED, "the xla backend has no %s encoder",
                         vlm_media_kind_name((vlm_media_kind)kind));
}

int command_compare(int argc, char **argv, const global_options *options) {
  const char *golden = NULL, *model = NULL, *backend = "cpu";
  bool as_json = false, require_all = false;
  for (int i = 0; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      print_usage(stdout);
      return 0;
    } else if (strcmp(argv[i], "--golden") == 0 || strcmp(argv[i], "--model") == 0) {
      if (i + 1 >= argc) return cli_usage_error("compare: %s needs a directory", argv[i]);
      *(strcmp(argv[i], "--golden") == 0 ? &golden : &model) = argv[i + 1];
      i++;
    } else if (strcmp(argv[i], "--backend") == 0) {
      if (i + 1 >= argc) return cli_usage_error("compare: --backend needs cpu or xla");
      backend = argv[++i];
      if (strcmp(backend, "cpu") != 0 && strcmp(backend, "xla") != 0)
        return cli_usage_error("compare: unknown backend '%s' (cpu or xla)", backend);
    } else if (strcmp(argv[i], "--json") == 0) {
      as_json = true;
    } else if (strcmp(argv[i], "--require-all") == 0) {
      require_all = true;
    } else {
      return cli_usage_error("compare: unknown option '%s' (see vlm compare --help)", argv[i]);
    }
  }
  if (!golden) return cli_usage_error("compare: --golden CASE_DIR is required (see vlm compare --help)");
  char model_dir[VLM_HUB_PATH_MAX];
  if (model) {
    vlm_status resolved = cli_model_dir(model, VLM_HUB_NEEDS_WEIGHTS, false, model_dir, sizeof(model_dir));
    if (resolved) return cli_report_status(resolved);
    model = model_dir;
  }
  int thread_count = options->thread_count;
  vlm_compare_backend xla = {.name = "xla", .user = &thread_count, .open_text_decoder = open_xla_decoder,
                             .open_media_encoder = open_xla_encoder};
  vlm_compare_options compare_options = {.model_directory = model,
                                         .thread_count = options->thread_count,
                                         .backend = strcmp(backend, "xla") == 0 ? &xla : NULL};
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
