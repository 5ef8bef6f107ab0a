/* `vlm pull` and --download: a model fetched from the Hugging Face hub's
 * HTTP API with libcurl into the cache huggingface_hub shares (see
 * src/io/hub.h for the layout and the parsing). */
#ifndef VLM_CLI_HUB_DOWNLOAD_H
#define VLM_CLI_HUB_DOWNLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "io/hub.h"
#include "vlm.h"

typedef struct cli_pull_options {
  bool quiet;    /* no progress, no per-file lines */
  bool progress; /* bars (a terminal) rather than plain lines */
} cli_pull_options;

/* Downloads what vlm needs of `id` (HF_ENDPOINT, HF_TOKEN) into the cache
 * and writes its snapshot directory into out. */
vlm_status cli_hub_pull(const vlm_hub_id *id, const cli_pull_options *options, char *out, size_t size);

/* What --model names, as a directory: vlm_hub_model_dir (`needs`:
 * VLM_HUB_NEEDS_*), and with `download` an id not in the cache is pulled
 * first. */
vlm_status cli_model_dir(const char *model, unsigned needs, bool download, char *out, size_t size);

#endif
