/* Models by Hugging Face id: the local hub cache huggingface_hub writes
 * (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub), laid out
 * as models--ORG--NAME/{blobs,refs,snapshots/<commit>}, and the hub's HTTP
 * answers (the model-info JSON and a resolve request's headers) that
 * `vlm pull` reads. Only the filesystem and parsing live here: fetching is
 * the command's (src/cli/hub_download.c, libcurl); the library never goes
 * to the network. */
#ifndef VLM_IO_HUB_H
#define VLM_IO_HUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vlm.h"

#define VLM_HUB_ID_MAX 200
#define VLM_HUB_PATH_MAX 4096

typedef struct vlm_hub_id {
  char repo[VLM_HUB_ID_MAX];     /* ORG/NAME */
  char revision[VLM_HUB_ID_MAX]; /* a branch, tag or commit; "main" when none was given */
  bool revision_given;
} vlm_hub_id;

/* Parses ORG/NAME[@REVISION] as huggingface_hub validates repo ids: two
 * parts of [A-Za-z0-9._-], neither starting or ending with '.' or '-', no
 * "--" or "..", at most 96 characters; a revision of [A-Za-z0-9._/-]
 * without "..". False (and nothing written) for anything else. */
bool vlm_hub_id_parse(const char *text, vlm_hub_id *out);

/* Hugging Face's home as huggingface_hub finds it: HF_HOME, else
 * $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface (~ expanded). */
vlm_status vlm_hub_home_dir(char *out, size_t size);
/* The cache directory: HF_HUB_CACHE (or the legacy HUGGINGFACE_HUB_CACHE),
 * else the home's hub/. */
vlm_status vlm_hub_cache_dir(char *out, size_t size);
/* CACHE/models--ORG--NAME. */
vlm_status vlm_hub_repo_dir(const vlm_hub_id *id, char *out, size_t size);
/* True when HF_HUB_OFFLINE is set to a true value (1, true, yes, on). */
bool vlm_hub_offline(void);

/* The snapshot directory of `id` in the cache: the revision as a commit
 * (snapshots/<commit>) or through refs/<revision>. NOT_FOUND, saying to
 * `vlm pull ID` or add --download, when it is not there. */
vlm_status vlm_hub_cache_find(const vlm_hub_id *id, char *out, size_t size);

/* What the caller will read of a model directory, for the checks below. */
enum {
  VLM_HUB_NEEDS_WEIGHTS = 1,   /* *.safetensors: a .gguf or pytorch_model.bin only is refused */
  VLM_HUB_NEEDS_TOKENIZER = 2, /* tokenizer.json: tokenizer.model only, or a packed test model, is refused */
};

/* What --model names, as a directory to open: an existing path wins (and
 * is checked: a file, a .gguf, pytorch_model.bin only, tokenizer.model
 * without tokenizer.json, a packed test model are refused with what to do,
 * as far as `needs` (VLM_HUB_NEEDS_*) reads them); else an ORG/NAME[@REV]
 * is found in the cache. */
vlm_status vlm_hub_model_dir(const char *model, unsigned needs, char *out, size_t size);
/* The directory checks alone (above), on an existing path. */
vlm_status vlm_hub_check_model_dir(const char *dir, unsigned needs);

/* ---- the hub's answers ------------------------------------------------ */

#define VLM_HUB_MAX_FILES 4096

typedef struct vlm_hub_file {
  char *name;          /* the repository path, e.g. "model-00001-of-00002.safetensors" */
  int64_t size;        /* -1 when the listing did not say */
  char lfs_sha256[65]; /* "" for a file kept in git (not LFS) */
} vlm_hub_file;

typedef struct vlm_hub_listing {
  char commit[41];     /* the revision's commit ("sha") */
  vlm_hub_file *files; /* the ones vlm needs (vlm_hub_wanted_file) */
  size_t file_count;
  /* What the repository has that vlm cannot use, to refuse by name. */
  bool has_safetensors, has_pytorch_bin, has_gguf, has_tokenizer_json, has_tokenizer_model;
  char gated[16]; /* "", "auto" or "manual" */
} vlm_hub_listing;

/* Parses GET /api/models/ORG/NAME/revision/REV[?blobs=true]: "sha", the
 * "siblings" (rfilename, size, lfs.sha256) and "gated". Refuses an answer
 * without a 40-hex sha, a file name that is absolute or climbs ("..") or
 * more than VLM_HUB_MAX_FILES files. */
vlm_status vlm_hub_listing_parse(const char *json, size_t length, vlm_hub_listing *out);
void vlm_hub_listing_release(vlm_hub_listing *listing);
/* Whether vlm needs a repository file: configs (*.json), tokenizer files,
 * chat templates (*.jinja) and weights (*.safetensors), adapters' in
 * subfolders alike. */
bool vlm_hub_wanted_file(const char *name);
/* A safe relative repository path (no "..", no leading '/', no '\\'). */
bool vlm_hub_safe_path(const char *name);

/* A resolve request's headers, as huggingface_hub reads them. */
typedef struct vlm_hub_file_headers {
  char commit[41];     /* X-Repo-Commit */
  char etag[129];      /* X-Linked-Etag, else ETag; quotes and W/ removed */
  int64_t size;        /* X-Linked-Size, else Content-Length; -1 when neither */
  char location[2048]; /* Location (a redirect) */
  char error_code[64]; /* X-Error-Code (GatedRepo, RepoNotFound, ...) */
  char error_message[256]; /* X-Error-Message */
  bool linked_etag, linked_size; /* X-Linked-* seen: they win over ETag, Content-Length */
} vlm_hub_file_headers;

void vlm_hub_file_headers_init(vlm_hub_file_headers *headers);
/* Takes one "Name: value\r\n" header line into `headers` (others ignored);
 * false for a line that is not a header (a status line, the blank end). */
bool vlm_hub_header_line(const char *line, size_t length, vlm_hub_file_headers *headers);
/* Whether an etag may name a blob file (hex or [A-Za-z0-9._-], 1-128). */
bool vlm_hub_etag_valid(const char *etag);

#endif
