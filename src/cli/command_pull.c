/* vlm pull: a model by Hugging Face id into the local hub cache, the one
 * huggingface_hub writes and reads (src/cli/hub_download.c). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/hub_download.h"

static void print_usage(FILE *out) {
  fprintf(out,
          "usage: vlm pull ORG/NAME[@REVISION] [options]\n"
          "\n"
          "Downloads what vlm needs of a model on the Hugging Face hub (configs, tokenizer\n"
          "files, chat templates, *.safetensors weights and their index, adapters) into the\n"
          "local hub cache, the layout huggingface_hub writes (blobs/, snapshots/<commit>/,\n"
          "refs/), so `vlm run --model ORG/NAME` and huggingface_hub both find it. REVISION\n"
          "is a branch, tag or commit (default main). A partial download resumes; LFS files\n"
          "are checked against the hub's sha256. Prints the snapshot directory.\n"
          "\n"
          "  --quiet                no progress on stderr\n"
          "  --progress             progress bars even when stderr is not a terminal\n"
          "\n"
          "environment:\n"
          "  HF_ENDPOINT            the hub (default https://huggingface.co)\n"
          "  HF_TOKEN               a token for private and gated models (else the file\n"
          "                         `hf auth login` writes: HF_TOKEN_PATH, HF_HOME/token)\n"
          "  HF_HUB_CACHE, HF_HOME  the cache: HF_HUB_CACHE, else HF_HOME/hub, else\n"
          "                         ~/.cache/huggingface/hub\n"
          "  HF_HUB_OFFLINE=1       refuse to download (models by id come from the cache)\n"
          "\n"
          "Exit status: 0 on success, 1 on any failure (one line on stderr), 2 for usage.\n");
}

int command_pull(int argc, char **argv, const global_options *options) {
  (void)options;
  const char *model = NULL;
  cli_pull_options pull = {.progress = isatty(STDERR_FILENO) == 1};
  for (int i = 0; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      print_usage(stdout);
      return 0;
    } else if (strcmp(argv[i], "--quiet") == 0) {
      pull.quiet = true;
    } else if (strcmp(argv[i], "--progress") == 0) {
      pull.progress = true;
    } else if (argv[i][0] == '-') {
      return cli_usage_error("pull: unknown option '%s' (see vlm pull --help)", argv[i]);
    } else if (model) {
      return cli_usage_error("pull: one model id at a time ('%s' and '%s')", model, argv[i]);
    } else {
      model = argv[i];
    }
  }
  if (!model) return cli_usage_error("pull: a model id ORG/NAME[@REVISION] is required (see vlm pull --help)");
  vlm_hub_id id;
  if (!vlm_hub_id_parse(model, &id))
    return cli_usage_error("pull: '%s' is not a model id ORG/NAME[@REVISION] (a local directory needs no pull)",
                           model);
  char snapshot[VLM_HUB_PATH_MAX];
  vlm_status status = cli_hub_pull(&id, &pull, snapshot, sizeof(snapshot));
  if (status) return cli_report_status(status);
  status = vlm_hub_check_model_dir(snapshot, VLM_HUB_NEEDS_WEIGHTS | VLM_HUB_NEEDS_TOKENIZER);
  if (status) return cli_report_status(status);
  printf("%s\n", snapshot);
  return 0;
}
