/* See hub.h. The cache layout is huggingface_hub's (file_download.py):
 *   CACHE/models--ORG--NAME/refs/<revision>        the commit, one line
 *   CACHE/models--ORG--NAME/snapshots/<commit>/F   -> ../../blobs/<etag>
 *   CACHE/models--ORG--NAME/blobs/<etag>[.incomplete]
 * so a model either tool downloaded is the other's too. */
#include "io/hub.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/status.h"
#include "io/json.h"

static bool repo_part_valid(const char *part, size_t length) {
  if (length == 0) return false;
  for (size_t i = 0; i < length; i++)
    if (!isalnum((unsigned char)part[i]) && part[i] != '.' && part[i] != '_' && part[i] != '-') return false;
  /* \b in huggingface_hub's regex: a word character at both ends. */
  if (!(isalnum((unsigned char)part[0]) || part[0] == '_')) return false;
  if (!(isalnum((unsigned char)part[length - 1]) || part[length - 1] == '_')) return false;
  return true;
}

bool vlm_hub_id_parse(const char *text, vlm_hub_id *out) {
  if (!text) return false;
  const char *at = strchr(text, '@');
  size_t repo_length = at ? (size_t)(at - text) : strlen(text);
  if (repo_length == 0 || repo_length > 96) return false;
  const char *slash = memchr(text, '/', repo_length);
  if (!slash || memchr(slash + 1, '/', repo_length - (size_t)(slash - text) - 1)) return false;
  size_t org_length = (size_t)(slash - text), name_length = repo_length - org_length - 1;
  if (!repo_part_valid(text, org_length) || !repo_part_valid(slash + 1, name_length)) return false;
  for (size_t i = 0; i + 1 < repo_length; i++)
    if ((text[i] == '-' && text[i + 1] == '-') || (text[i] == '.' && text[i + 1] == '.')) return false;
  vlm_hub_id id = {0};
  memcpy(id.repo, text, repo_length);
  if (at) {
    const char *revision = at + 1;
    size_t length = strlen(revision);
    if (length == 0 || length >= sizeof(id.revision) || strstr(revision, "..") || revision[0] == '/' ||
        revision[length - 1] == '/')
      return false;
    for (size_t i = 0; i < length; i++)
      if (!isalnum((unsigned char)revision[i]) && !strchr("._-/", revision[i])) return false;
    memcpy(id.revision, revision, length + 1);
    id.revision_given = true;
  } else {
    strcpy(id.revision, "main");
  }
  *out = id;
  return true;
}

static bool env_true(const char *name) {
  const char *value = getenv(name);
  if (!value) return false;
  return !strcasecmp(value, "1") || !strcasecmp(value, "true") || !strcasecmp(value, "yes") ||
         !strcasecmp(value, "on");
}

bool vlm_hub_offline(void) { return env_true("HF_HUB_OFFLINE"); }

/* A path from the environment with a leading ~ expanded (os.path.expanduser). */
static int expand_home(const char *path, const char *suffix, char *out, size_t size) {
  const char *user = getenv("HOME");
  if (path[0] == '~' && (path[1] == '/' || path[1] == '\0') && user && *user)
    return snprintf(out, size, "%s%s%s", user, path + 1, suffix);
  return snprintf(out, size, "%s%s", path, suffix);
}

/* As huggingface_hub's constants: HF_HOME, else $XDG_CACHE_HOME/huggingface,
 * else ~/.cache/huggingface. */
vlm_status vlm_hub_home_dir(char *out, size_t size) {
  const char *home = getenv("HF_HOME"), *xdg = getenv("XDG_CACHE_HOME");
  int written;
  if (home && *home) written = expand_home(home, "", out, size);
  else if (xdg && *xdg) written = expand_home(xdg, "/huggingface", out, size);
  else if (getenv("HOME") && *getenv("HOME")) written = expand_home("~", "/.cache/huggingface", out, size);
  else return VLM_ERROR(NOT_FOUND, "no Hugging Face cache: set HF_HUB_CACHE or HF_HOME (HOME is not set)");
  if (written < 0 || (size_t)written >= size) return VLM_ERROR(OUT_OF_RANGE, "the Hugging Face home path is too long");
  return VLM_OK;
}

vlm_status vlm_hub_cache_dir(char *out, size_t size) {
  const char *cache = getenv("HF_HUB_CACHE"), *legacy = getenv("HUGGINGFACE_HUB_CACHE");
  if (!(cache && *cache)) cache = legacy;
  int written;
  if (cache && *cache) {
    written = expand_home(cache, "", out, size);
  } else {
    char home[VLM_HUB_PATH_MAX];
    VLM_RETURN_IF_ERROR(vlm_hub_home_dir(home, sizeof(home)));
    written = snprintf(out, size, "%s/hub", home);
  }
  if (written < 0 || (size_t)written >= size) return VLM_ERROR(OUT_OF_RANGE, "the Hugging Face cache path is too long");
  return VLM_OK;
}

vlm_status vlm_hub_repo_dir(const vlm_hub_id *id, char *out, size_t size) {
  char cache[VLM_HUB_PATH_MAX];
  VLM_RETURN_IF_ERROR(vlm_hub_cache_dir(cache, sizeof(cache)));
  char folder[2 * VLM_HUB_ID_MAX] = "models--";
  size_t used = strlen(folder);
  for (const char *c = id->repo; *c && used + 3 < sizeof(folder); c++) {
    if (*c == '/') {
      folder[used++] = '-';
      folder[used++] = '-';
    } else {
      folder[used++] = *c;
    }
  }
  folder[used] = '\0';
  int written = snprintf(out, size, "%s/%s", cache, folder);
  if (written < 0 || (size_t)written >= size) return VLM_ERROR(OUT_OF_RANGE, "the Hugging Face cache path is too long");
  return VLM_OK;
}

static bool is_directory(const char *path) {
  struct stat info;
  return stat(path, &info) == 0 && S_ISDIR(info.st_mode);
}

static bool exists(const char *path) {
  struct stat info;
  return stat(path, &info) == 0;
}

static bool is_commit(const char *text) {
  if (strlen(text) != 40) return false;
  for (int i = 0; i < 40; i++)
    if (!isxdigit((unsigned char)text[i])) return false;
  return true;
}

static void id_text(const vlm_hub_id *id, char *out, size_t size) {
  snprintf(out, size, "%s%s%s", id->repo, id->revision_given ? "@" : "", id->revision_given ? id->revision : "");
}

vlm_status vlm_hub_cache_find(const vlm_hub_id *id, char *out, size_t size) {
  char repo[VLM_HUB_PATH_MAX], path[VLM_HUB_PATH_MAX + 512], name[2 * VLM_HUB_ID_MAX + 2];
  VLM_RETURN_IF_ERROR(vlm_hub_repo_dir(id, repo, sizeof(repo)));
  id_text(id, name, sizeof(name));
  char commit[64] = "";
  if (is_commit(id->revision)) {
    memcpy(commit, id->revision, 41);
  } else {
    snprintf(path, sizeof(path), "%s/refs/%s", repo, id->revision);
    FILE *file = fopen(path, "r");
    if (file) {
      if (!fgets(commit, sizeof(commit), file)) commit[0] = '\0';
      fclose(file);
      commit[strcspn(commit, "\r\n \t")] = '\0';
      if (!is_commit(commit))
        return VLM_ERROR(DATA_LOSS, "%s: not a commit hash (a damaged Hugging Face cache entry: `vlm pull %s` again)",
                         path, name);
    }
  }
  if (commit[0]) {
    snprintf(path, sizeof(path), "%s/snapshots/%s", repo, commit);
    if (is_directory(path)) {
      int written = snprintf(out, size, "%s", path);
      if (written < 0 || (size_t)written >= size) return VLM_ERROR(OUT_OF_RANGE, "%s: path too long", path);
      return VLM_OK;
    }
  }
  return VLM_ERROR(NOT_FOUND,
                   "model %s is not in the Hugging Face cache (%s, revision %s), nor is it a directory here: "
                   "download it with `vlm pull %s` or add --download%s",
                   name, repo, id->revision, name, vlm_hub_offline() ? " (with HF_HUB_OFFLINE unset)" : "");
}

static bool ends_with(const char *text, const char *suffix) {
  size_t length = strlen(text), suffix_length = strlen(suffix);
  return length >= suffix_length && strcasecmp(text + length - suffix_length, suffix) == 0;
}

vlm_status vlm_hub_check_model_dir(const char *dir, unsigned needs) {
  char path[VLM_HUB_PATH_MAX + 64];
  if (!is_directory(dir)) {
    if (ends_with(dir, ".gguf"))
      return VLM_ERROR(UNIMPLEMENTED,
                       "%s is a GGUF file: vlm runs Hugging Face checkpoints (a directory with config.json, "
                       "tokenizer.json and *.safetensors), not GGUF; give the original model's directory or its "
                       "id (vlm pull ORG/NAME)", dir);
    return VLM_ERROR(INVALID_ARGUMENT,
                     "%s is a file, not a directory: --model takes the checkpoint directory (the one holding "
                     "config.json, tokenizer.json and *.safetensors) or a model id ORG/NAME", dir);
  }
  snprintf(path, sizeof(path), "%s/tokenizer.json", dir);
  bool has_tokenizer = exists(path) || !(needs & VLM_HUB_NEEDS_TOKENIZER);
  snprintf(path, sizeof(path), "%s/tokenizer.json.patch", dir);
  if (!has_tokenizer && exists(path))
    return VLM_ERROR(FAILED_PRECONDITION,
                     "%s is a packed test model (tokenizer.json.patch instead of tokenizer.json): unpack it with "
                     "`tools/oracle/tokenizer_files.py unpack %s OUT_DIR` and give OUT_DIR", dir, dir);
  snprintf(path, sizeof(path), "%s/tokenizer.model", dir);
  if (!has_tokenizer && exists(path))
    return VLM_ERROR(UNIMPLEMENTED,
                     "%s has a SentencePiece tokenizer.model but no tokenizer.json: vlm reads only tokenizer.json "
                     "(the fast tokenizer); write one with Transformers: "
                     "AutoTokenizer.from_pretrained(DIR).save_pretrained(DIR)", dir);
  if (!(needs & VLM_HUB_NEEDS_WEIGHTS)) return VLM_OK;
  DIR *listing = opendir(dir);
  if (!listing) return VLM_OK; /* the checkpoint reader says why */
  bool safetensors = false, pytorch = false, gguf = false;
  char gguf_name[256] = "";
  for (struct dirent *entry; (entry = readdir(listing));) {
    const char *name = entry->d_name;
    if (ends_with(name, ".safetensors") || ends_with(name, ".safetensors.index.json")) safetensors = true;
    else if (ends_with(name, ".bin") && (!strncmp(name, "pytorch_model", 13) || !strncmp(name, "model", 5)))
      pytorch = true;
    else if (ends_with(name, ".gguf") && !gguf) {
      gguf = true;
      snprintf(gguf_name, sizeof(gguf_name), "%s", name);
    }
  }
  closedir(listing);
  if (safetensors) return VLM_OK;
  if (pytorch)
    return VLM_ERROR(UNIMPLEMENTED,
                     "%s has only pytorch_model*.bin weights (PyTorch pickles, which vlm does not load): vlm reads "
                     "*.safetensors; convert with Transformers (from_pretrained(DIR).save_pretrained(DIR, "
                     "safe_serialization=True)) or use a revision of the model with safetensors weights", dir);
  if (gguf)
    return VLM_ERROR(UNIMPLEMENTED,
                     "%s holds GGUF weights (%s), which vlm does not load: vlm reads Hugging Face *.safetensors "
                     "checkpoints; use the original model's repository (vlm pull ORG/NAME)", dir, gguf_name);
  return VLM_OK; /* no weights at all: the checkpoint reader names what is missing */
}

vlm_status vlm_hub_model_dir(const char *model, unsigned needs, char *out, size_t size) {
  if (!model || !*model) return VLM_ERROR(INVALID_ARGUMENT, "no model given");
  vlm_hub_id id;
  if (exists(model) || !vlm_hub_id_parse(model, &id)) {
    /* A path that does not exist and is no id: the readers say what is
     * missing under it. */
    if (exists(model)) VLM_RETURN_IF_ERROR(vlm_hub_check_model_dir(model, needs));
    int written = snprintf(out, size, "%s", model);
    if (written < 0 || (size_t)written >= size) return VLM_ERROR(OUT_OF_RANGE, "model path too long");
    return VLM_OK;
  }
  VLM_RETURN_IF_ERROR(vlm_hub_cache_find(&id, out, size));
  return vlm_hub_check_model_dir(out, needs);
}

/* ---- the hub's answers ------------------------------------------------ */

bool vlm_hub_safe_path(const char *name) {
  if (!name || !*name || name[0] == '/' || strchr(name, '\\') || strlen(name) > 1024) return false;
  const char *part = name;
  for (;;) {
    const char *end = strchr(part, '/');
    size_t length = end ? (size_t)(end - part) : strlen(part);
    if (length == 0 || (length == 1 && part[0] == '.') || (length == 2 && part[0] == '.' && part[1] == '.'))
      return false;
    for (size_t i = 0; i < length; i++)
      if ((unsigned char)part[i] < 0x20) return false;
    if (!end) return true;
    part = end + 1;
  }
}

bool vlm_hub_wanted_file(const char *name) {
  const char *base = strrchr(name, '/');
  base = base ? base + 1 : name;
  return ends_with(name, ".json") || ends_with(name, ".safetensors") || ends_with(name, ".jinja") ||
         strcmp(base, "tokenizer.json.patch") == 0;
}

void vlm_hub_listing_release(vlm_hub_listing *listing) {
  for (size_t i = 0; i < listing->file_count; i++) free(listing->files[i].name);
  free(listing->files);
  memset(listing, 0, sizeof(*listing));
}

static bool is_hex(const char *text, size_t length) {
  for (size_t i = 0; i < length; i++)
    if (!isxdigit((unsigned char)text[i])) return false;
  return true;
}

static vlm_status take_sibling(const vlm_json_value *sibling, vlm_hub_listing *out) {
  const char *name = vlm_json_get_string(vlm_json_object_get(sibling, "rfilename"));
  if (!name) return VLM_ERROR(DATA_LOSS, "the hub's file list has an entry without rfilename");
  if (!vlm_hub_safe_path(name)) return VLM_ERROR(DATA_LOSS, "the hub's file list names an unsafe path");
  const char *base = strrchr(name, '/');
  base = base ? base + 1 : name;
  if (ends_with(name, ".safetensors")) out->has_safetensors = true;
  if (ends_with(name, ".bin") && !strncmp(base, "pytorch_model", 13)) out->has_pytorch_bin = true;
  if (ends_with(name, ".gguf")) out->has_gguf = true;
  if (!strcmp(name, "tokenizer.json")) out->has_tokenizer_json = true;
  if (!strcmp(name, "tokenizer.model")) out->has_tokenizer_model = true;
  if (!vlm_hub_wanted_file(name)) return VLM_OK;
  if (out->file_count >= VLM_HUB_MAX_FILES)
    return VLM_ERROR(OUT_OF_RANGE, "the hub lists more than %d files", VLM_HUB_MAX_FILES);
  vlm_hub_file file = {.size = -1};
  int64_t size;
  if (vlm_json_get_int(vlm_json_object_get(sibling, "size"), &size) && size >= 0) file.size = size;
  const vlm_json_value *lfs = vlm_json_object_get(sibling, "lfs");
  if (lfs && lfs->type == VLM_JSON_OBJECT) {
    const char *sha = vlm_json_get_string(vlm_json_object_get(lfs, "sha256"));
    if (!sha || strlen(sha) != 64 || !is_hex(sha, 64))
      return VLM_ERROR(DATA_LOSS, "the hub's entry for %s has no valid lfs.sha256", name);
    memcpy(file.lfs_sha256, sha, 65);
    for (int i = 0; i < 64; i++) file.lfs_sha256[i] = (char)tolower((unsigned char)file.lfs_sha256[i]);
    if (vlm_json_get_int(vlm_json_object_get(lfs, "size"), &size) && size >= 0) file.size = size;
  }
  if (!(file.name = strdup(name))) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  out->files[out->file_count++] = file;
  return VLM_OK;
}

/* Mistral-style repositories ship their weights twice: Transformers'
 * model*.safetensors and the original consolidated*.safetensors, which
 * Transformers does not read; fetch the latter only when it is all there is. */
static void drop_consolidated(vlm_hub_listing *listing) {
  bool other = false;
  for (size_t i = 0; i < listing->file_count; i++) {
    const char *name = listing->files[i].name;
    if (!strchr(name, '/') && ends_with(name, ".safetensors") && strncmp(name, "consolidated", 12)) other = true;
  }
  if (!other) return;
  size_t kept = 0;
  for (size_t i = 0; i < listing->file_count; i++) {
    const char *name = listing->files[i].name;
    if (!strchr(name, '/') && !strncmp(name, "consolidated", 12) && ends_with(name, ".safetensors"))
      free(listing->files[i].name);
    else
      listing->files[kept++] = listing->files[i];
  }
  listing->file_count = kept;
}

vlm_status vlm_hub_listing_parse(const char *json, size_t length, vlm_hub_listing *out) {
  memset(out, 0, sizeof(*out));
  vlm_json_limits limits = {.max_depth = 32, .max_input_bytes = 1 << 26};
  vlm_json_document document;
  VLM_RETURN_IF_ERROR(vlm_json_parse(json, length, &limits, NULL, "the hub's model info", &document));
  vlm_status status = VLM_OK;
  const vlm_json_value *root = document.root;
  const char *sha = vlm_json_get_string(vlm_json_object_get(root, "sha"));
  const vlm_json_value *siblings = vlm_json_object_get(root, "siblings");
  if (!root || root->type != VLM_JSON_OBJECT) {
    status = VLM_ERROR(DATA_LOSS, "the hub's model info is not a JSON object");
  } else if (!sha || !is_commit(sha)) {
    status = VLM_ERROR(DATA_LOSS, "the hub's model info has no commit (\"sha\")");
  } else if (!siblings || siblings->type != VLM_JSON_ARRAY) {
    status = VLM_ERROR(DATA_LOSS, "the hub's model info has no file list (\"siblings\")");
  } else if (siblings->as.array.count > VLM_HUB_MAX_FILES) {
    status = VLM_ERROR(OUT_OF_RANGE, "the hub lists more than %d files", VLM_HUB_MAX_FILES);
  } else {
    memcpy(out->commit, sha, 41);
    for (int i = 0; i < 40; i++) out->commit[i] = (char)tolower((unsigned char)out->commit[i]);
    const vlm_json_value *gated = vlm_json_object_get(root, "gated");
    const char *gated_text = vlm_json_get_string(gated);
    if (gated_text) snprintf(out->gated, sizeof(out->gated), "%.15s", gated_text);
    size_t count = siblings->as.array.count;
    out->files = calloc(count ? count : 1, sizeof(*out->files));
    if (!out->files) status = VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
    for (size_t i = 0; !status && i < count; i++) status = take_sibling(&siblings->as.array.items[i], out);
    if (!status) drop_consolidated(out);
    for (size_t i = 0; !status && i < out->file_count; i++)
      for (size_t j = 0; j < i; j++)
        if (!strcmp(out->files[i].name, out->files[j].name)) {
          status = VLM_ERROR(DATA_LOSS, "the hub's file list names %s twice", out->files[i].name);
          break;
        }
  }
  vlm_json_document_release(&document);
  if (status) vlm_hub_listing_release(out);
  return status;
}

void vlm_hub_file_headers_init(vlm_hub_file_headers *headers) {
  memset(headers, 0, sizeof(*headers));
  headers->size = -1;
}

bool vlm_hub_etag_valid(const char *etag) {
  size_t length = strlen(etag);
  if (length == 0 || length > 128 || etag[0] == '.') return false;
  for (size_t i = 0; i < length; i++)
    if (!isalnum((unsigned char)etag[i]) && !strchr("._-", etag[i])) return false;
  return true;
}

/* Copies the value, without surrounding spaces, into out (truncated). */
static void take_value(const char *value, size_t length, char *out, size_t size) {
  while (length && (*value == ' ' || *value == '\t')) value++, length--;
  while (length && (value[length - 1] == ' ' || value[length - 1] == '\t')) length--;
  if (length >= size) length = size - 1;
  memcpy(out, value, length);
  out[length] = '\0';
}

static void take_etag(const char *value, size_t length, char *out, size_t size) {
  char raw[256];
  take_value(value, length, raw, sizeof(raw));
  const char *etag = raw;
  if (!strncmp(etag, "W/", 2)) etag += 2; /* huggingface_hub's _normalize_etag */
  size_t etag_length = strlen(etag);
  if (etag_length >= 2 && etag[0] == '"' && etag[etag_length - 1] == '"') etag++, etag_length -= 2;
  if (etag_length >= size) etag_length = size - 1;
  memcpy(out, etag, etag_length);
  out[etag_length] = '\0';
}

static bool parse_size(const char *value, size_t length, int64_t *out) {
  char text[32];
  take_value(value, length, text, sizeof(text));
  if (!text[0]) return false;
  int64_t size = 0;
  for (const char *c = text; *c; c++) {
    if (!isdigit((unsigned char)*c) || size > (INT64_MAX - 9) / 10) return false;
    size = size * 10 + (*c - '0');
  }
  *out = size;
  return true;
}

bool vlm_hub_header_line(const char *line, size_t length, vlm_hub_file_headers *headers) {
  while (length && (line[length - 1] == '\n' || line[length - 1] == '\r')) length--;
  const char *colon = memchr(line, ':', length);
  if (!colon || colon == line) return false;
  size_t name_length = (size_t)(colon - line);
  const char *value = colon + 1;
  size_t value_length = length - name_length - 1;
#define HEADER_IS(text) (name_length == strlen(text) && strncasecmp(line, text, name_length) == 0)
  int64_t size;
  if (HEADER_IS("X-Repo-Commit")) {
    char commit[64];
    take_value(value, value_length, commit, sizeof(commit));
    if (is_commit(commit))
      for (int i = 0; i < 41; i++) headers->commit[i] = (char)tolower((unsigned char)commit[i]);
  } else if (HEADER_IS("X-Linked-Etag")) {
    take_etag(value, value_length, headers->etag, sizeof(headers->etag));
    headers->linked_etag = true;
  } else if (HEADER_IS("ETag")) {
    /* X-Linked-Etag (the LFS file's sha256) wins over the pointer's. */
    if (!headers->linked_etag) take_etag(value, value_length, headers->etag, sizeof(headers->etag));
  } else if (HEADER_IS("X-Linked-Size")) {
    if (parse_size(value, value_length, &size)) headers->size = size, headers->linked_size = true;
  } else if (HEADER_IS("Content-Length")) {
    if (!headers->linked_size && parse_size(value, value_length, &size)) headers->size = size;
  } else if (HEADER_IS("Location")) {
    take_value(value, value_length, headers->location, sizeof(headers->location));
  } else if (HEADER_IS("X-Error-Code")) {
    take_value(value, value_length, headers->error_code, sizeof(headers->error_code));
  } else if (HEADER_IS("X-Error-Message")) {
    take_value(value, value_length, headers->error_message, sizeof(headers->error_message));
  }
#undef HEADER_IS
  return true;
}
