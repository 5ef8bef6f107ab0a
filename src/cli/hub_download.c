/* See hub_download.h. Each file goes as huggingface_hub's hf_hub_download
 * does it: a HEAD of resolve/<commit>/<file> (not following redirects) for
 * X-Repo-Commit, the etag (X-Linked-Etag, the LFS sha256, else ETag) and
 * the size (X-Linked-Size, else Content-Length); then a GET that follows
 * the redirect to the LFS host into blobs/<etag>.incomplete, resumed with
 * a Range when a previous try left one; the size and, for LFS files, the
 * sha256 checked before the blob is renamed into place; then the
 * snapshot's relative symlink and refs/<revision>. The token goes only to
 * the endpoint's host: libcurl does not resend a custom Authorization
 * header to the host a redirect names. */
#include "cli/hub_download.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/sha256.h"
#include "core/status.h"

#define MAX_LISTING_BYTES ((size_t)64 << 20)

typedef struct hub_client {
  char endpoint[1024];
  char authorization[4200]; /* "Authorization: Bearer TOKEN" or "" */
  const cli_pull_options *options;
} hub_client;

static double now_seconds(void) {
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return (double)time.tv_sec + (double)time.tv_nsec * 1e-9;
}

/* HF_TOKEN, else the file `hf auth login` writes (HF_TOKEN_PATH, else the
 * Hugging Face home's token). */
static void read_token(char *out, size_t size) {
  out[0] = '\0';
  const char *token = getenv("HF_TOKEN");
  if (token && *token) {
    snprintf(out, size, "%s", token);
    return;
  }
  char path[VLM_HUB_PATH_MAX + 16], home[VLM_HUB_PATH_MAX];
  const char *token_path = getenv("HF_TOKEN_PATH");
  if (token_path && *token_path) {
    snprintf(path, sizeof(path), "%s", token_path);
  } else {
    vlm_status status = vlm_hub_home_dir(home, sizeof(home));
    if (status) {
      vlm_status_free(status);
      return;
    }
    snprintf(path, sizeof(path), "%s/token", home);
  }
  FILE *file = fopen(path, "r");
  if (!file) return;
  if (!fgets(out, (int)size, file)) out[0] = '\0';
  fclose(file);
  out[strcspn(out, "\r\n \t")] = '\0';
}

static vlm_status client_init(hub_client *client, const cli_pull_options *options) {
  memset(client, 0, sizeof(*client));
  client->options = options;
  const char *endpoint = getenv("HF_ENDPOINT");
  if (!endpoint || !*endpoint) endpoint = "https://huggingface.co";
  if (strncmp(endpoint, "https://", 8) && strncmp(endpoint, "http://", 7))
    return VLM_ERROR(INVALID_ARGUMENT, "HF_ENDPOINT '%s' is not an http(s) URL", endpoint);
  if (strlen(endpoint) >= sizeof(client->endpoint))
    return VLM_ERROR(INVALID_ARGUMENT, "HF_ENDPOINT is too long");
  snprintf(client->endpoint, sizeof(client->endpoint), "%s", endpoint);
  size_t length = strlen(client->endpoint);
  while (length && client->endpoint[length - 1] == '/') client->endpoint[--length] = '\0';
  char token[4096];
  read_token(token, sizeof(token));
  for (const char *c = token; *c; c++)
    if ((unsigned char)*c < 0x21 || (unsigned char)*c > 0x7e)
      return VLM_ERROR(INVALID_ARGUMENT, "HF_TOKEN holds characters a token cannot have");
  if (token[0]) snprintf(client->authorization, sizeof(client->authorization), "Authorization: Bearer %s", token);
  return VLM_OK;
}

/* A URL path segment or path, percent-encoded except for '/' when
 * `keep_slash` (file names in resolve/), as huggingface_hub quotes them. */
static void url_quote(const char *text, bool keep_slash, char *out, size_t size) {
  size_t used = 0;
  for (const unsigned char *c = (const unsigned char *)text; *c && used + 4 < size; c++) {
    if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || strchr("-._~", *c) ||
        (keep_slash && *c == '/'))
      out[used++] = (char)*c;
    else used += (size_t)snprintf(out + used, size - used, "%%%02X", *c);
  }
  out[used] = '\0';
}

/* ---- one request ------------------------------------------------------ */

typedef struct transfer {
  vlm_hub_file_headers headers;
  long status;
  /* The body: into memory (a listing) or appended to a file. */
  char *memory;
  size_t memory_length;
  FILE *file;
  int64_t file_offset; /* bytes the file had before this request */
  bool refused_body;    /* over MAX_LISTING_BYTES, or a write failed */
  bool overran;         /* the file's body went past its expected size */
  int64_t written;      /* body bytes of this request */
  /* Progress. */
  const char *label;
  int64_t expected;
  double start, last_print;
  const cli_pull_options *options;
  CURL *curl;
} transfer;

static size_t on_header(char *data, size_t size, size_t count, void *user) {
  transfer *t = user;
  size_t length = size * count;
  if (length >= 5 && !strncmp(data, "HTTP/", 5)) vlm_hub_file_headers_init(&t->headers); /* each response anew */
  else vlm_hub_header_line(data, length, &t->headers);
  return length;
}

static size_t on_body(char *data, size_t size, size_t count, void *user) {
  transfer *t = user;
  size_t length = size * count;
  if (t->file) {
    long code = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &code);
    if (code != 200 && code != 206) return length; /* an error's body is not the file */
    if (code == 200 && t->file_offset > 0 && t->written == 0) {
      /* The server ignored the Range: the whole file comes, from byte 0. */
      if (fflush(t->file) || ftruncate(fileno(t->file), 0) || fseek(t->file, 0, SEEK_SET)) {
        t->refused_body = true;
        return 0;
      }
      t->file_offset = 0;
    }
    t->written += (int64_t)length;
    if (t->expected >= 0 && t->file_offset + t->written > t->expected) { /* more than the hub said: stop */
      t->overran = true;
      return 0;
    }
    if (fwrite(data, 1, length, t->file) != length) {
      t->refused_body = true;
      return 0;
    }
    return length;
  }
  if (t->memory_length + length > MAX_LISTING_BYTES) {
    t->refused_body = true;
    return 0;
  }
  char *grown = realloc(t->memory, t->memory_length + length + 1);
  if (!grown) {
    t->refused_body = true;
    return 0;
  }
  t->memory = grown;
  memcpy(t->memory + t->memory_length, data, length);
  t->memory_length += length;
  t->memory[t->memory_length] = '\0';
  return length;
}

static void format_bytes(double bytes, char *out, size_t size) {
  if (bytes >= 1073741824.0) snprintf(out, size, "%.2f GiB", bytes / 1073741824.0);
  else if (bytes >= 1048576.0) snprintf(out, size, "%.1f MiB", bytes / 1048576.0);
  else if (bytes >= 1024.0) snprintf(out, size, "%.1f KiB", bytes / 1024.0);
  else snprintf(out, size, "%.0f B", bytes);
}

/* The bar: "  FILE [=====>    ] 12.0 MiB / 40.0 MiB  3.1 MiB/s  ETA 9s". */
static void print_progress(transfer *t, int64_t done, bool final) {
  double now = now_seconds(), elapsed = now - t->start;
  double rate = elapsed > 0 ? (double)(done - t->file_offset) / elapsed : 0;
  char have[32], total[32], speed[32], eta[32] = "";
  format_bytes((double)done, have, sizeof(have));
  format_bytes((double)(t->expected > 0 ? t->expected : done), total, sizeof(total));
  format_bytes(rate, speed, sizeof(speed));
  if (!final && rate > 0 && t->expected > done) snprintf(eta, sizeof(eta), "  ETA %.0fs", (double)(t->expected - done) / rate);
  char bar[31];
  int filled = t->expected > 0 ? (int)(30.0 * (double)done / (double)t->expected) : 30;
  if (filled > 30) filled = 30;
  for (int i = 0; i < 30; i++) bar[i] = i < filled ? '=' : ' ';
  bar[30] = '\0';
  fprintf(stderr, "\r  %-40.40s [%s] %s / %s  %s/s%s\033[K", t->label, bar, have, total, speed, eta);
  if (final) fputc('\n', stderr);
  fflush(stderr);
}

static int on_progress(void *user, curl_off_t download_total, curl_off_t download_now, curl_off_t upload_total,
                       curl_off_t upload_now) {
  (void)download_total, (void)upload_total, (void)upload_now;
  transfer *t = user;
  if (!t->label || !t->options || t->options->quiet) return 0;
  double now = now_seconds();
  if (t->last_print == 0) t->last_print = now;
  int64_t done = t->file_offset + (int64_t)download_now;
  if (t->options->progress) {
    if (now - t->last_print < 0.2) return 0;
    t->last_print = now;
    print_progress(t, done, false);
    return 0;
  }
  /* Off a terminal (a log): a line every 30 s of a long transfer. */
  if (now - t->last_print < 30) return 0;
  t->last_print = now;
  double rate = (double)(done - t->file_offset) / (now - t->start);
  char have[32], total[32], speed[32];
  format_bytes((double)done, have, sizeof(have));
  format_bytes((double)t->expected, total, sizeof(total));
  format_bytes(rate, speed, sizeof(speed));
  fprintf(stderr, "vlm: %s: %s of %s, %s/s, ETA %.0f s\n", t->label, have, total, speed,
          rate > 0 && t->expected > done ? (double)(t->expected - done) / rate : 0.0);
  return 0;
}

/* One request to `url`: HEAD (`head`, no redirects followed) or GET
 * (redirects followed; a Range from t->file_offset when writing a file). */
static vlm_status perform(const hub_client *client, const char *url, bool head, bool authorize, transfer *t) {
  CURL *curl = curl_easy_init();
  if (!curl) return VLM_ERROR(RESOURCE_EXHAUSTED, "libcurl could not start a transfer");
  struct curl_slist *headers = NULL;
  headers = curl_slist_append(headers, "User-Agent: vlm/" VLM_VERSION_STRING);
  if (authorize && client->authorization[0]) headers = curl_slist_append(headers, client->authorization);
  char range[64];
  vlm_hub_file_headers_init(&t->headers);
  t->curl = curl;
  curl_easy_setopt(curl, CURLOPT_URL, url);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, t);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, t);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 30L);
  /* A stalled transfer fails (and resumes on the next try) rather than
   * hanging: under 1 KiB/s for a minute. */
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  if (head) {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else {
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
    if (t->file && t->file_offset > 0) {
      snprintf(range, sizeof(range), "%lld-", (long long)t->file_offset);
      curl_easy_setopt(curl, CURLOPT_RANGE, range);
    }
    if (t->label) {
      curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
      curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
      curl_easy_setopt(curl, CURLOPT_XFERINFODATA, t);
    }
  }
  t->start = now_seconds();
  CURLcode code = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &t->status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (code == CURLE_WRITE_ERROR && t->overran)
    return VLM_ERROR(DATA_LOSS, "%s: the hub sent more than the %lld bytes it announced", url, (long long)t->expected);
  if (code == CURLE_WRITE_ERROR && t->refused_body)
    return t->file ? VLM_ERROR(IO, "writing the download failed: %s", strerror(errno))
                   : VLM_ERROR(OUT_OF_RANGE, "%s: the answer is over %zu MiB", url, MAX_LISTING_BYTES >> 20);
  if (code != CURLE_OK)
    return VLM_ERROR(UNAVAILABLE, "%s: %s (run vlm pull again to resume)", url, curl_easy_strerror(code));
  return VLM_OK;
}

/* The refusal for an HTTP error, saying what to do. */
static vlm_status http_error(const hub_client *client, const vlm_hub_id *id, const char *url, const transfer *t) {
  const vlm_hub_file_headers *h = &t->headers;
  char hub_says[400] = "";
  if (h->error_message[0]) snprintf(hub_says, sizeof(hub_says), " (the hub says: %s)", h->error_message);
  bool gated = !strcmp(h->error_code, "GatedRepo");
  if (t->status == 401 && gated)
    return VLM_ERROR(FAILED_PRECONDITION,
                     "%s is a gated model (401)%s: accept its license at %s/%s while logged in, then set HF_TOKEN to "
                     "a token of that account (%s/settings/tokens)", id->repo, hub_says, client->endpoint, id->repo,
                     client->endpoint);
  if (t->status == 401)
    return VLM_ERROR(FAILED_PRECONDITION,
                     "%s: the hub answered 401 Unauthorized%s: the model is private, gated or does not exist; %s",
                     id->repo, hub_says,
                     client->authorization[0] ? "check the id, and that HF_TOKEN is valid and has access to it"
                                              : "check the id, or set HF_TOKEN to a token with access to it");
  if (t->status == 403)
    return VLM_ERROR(FAILED_PRECONDITION,
                     "%s: access refused (403 Forbidden)%s: the model is gated; accept its license at %s/%s with "
                     "the account HF_TOKEN belongs to, or use a token with read access to it", id->repo, hub_says,
                     client->endpoint, id->repo);
  if (t->status == 404)
    return VLM_ERROR(NOT_FOUND, "%s: not found on the hub (404, %s)%s: check the model id and the revision (%s)",
                     id->repo, url, hub_says, id->revision);
  return VLM_ERROR(UNAVAILABLE, "%s: the hub answered HTTP %ld%s", url, t->status, hub_says);
}

/* ---- the cache ---------------------------------------------------------- */

static vlm_status make_dirs(const char *path) {
  char buffer[VLM_HUB_PATH_MAX + 1100];
  snprintf(buffer, sizeof(buffer), "%s", path);
  for (char *c = buffer + 1; *c; c++) {
    if (*c != '/') continue;
    *c = '\0';
    if (mkdir(buffer, 0755) && errno != EEXIST) return VLM_ERROR(IO, "%s: %s", buffer, strerror(errno));
    *c = '/';
  }
  if (mkdir(buffer, 0755) && errno != EEXIST) return VLM_ERROR(IO, "%s: %s", buffer, strerror(errno));
  return VLM_OK;
}

static vlm_status file_sha256(const char *path, char out_hex[65]) {
  FILE *file = fopen(path, "rb");
  if (!file) return VLM_ERROR(IO, "%s: %s", path, strerror(errno));
  vlm_sha256 hash;
  vlm_sha256_init(&hash);
  static char buffer[1 << 16];
  size_t length;
  while ((length = fread(buffer, 1, sizeof(buffer), file)) > 0) vlm_sha256_update(&hash, buffer, length);
  bool failed = ferror(file);
  fclose(file);
  if (failed) return VLM_ERROR(IO, "%s: read failed", path);
  vlm_sha256_finish_hex(&hash, out_hex);
  return VLM_OK;
}

static int64_t file_size(const char *path) {
  struct stat info;
  return stat(path, &info) == 0 && S_ISREG(info.st_mode) ? (int64_t)info.st_size : -1;
}

/* snapshots/<commit>/NAME -> ../../blobs/<etag>, one more ../ per folder. */
static vlm_status link_snapshot(const char *repo_dir, const char *commit, const char *name, const char *etag) {
  char path[VLM_HUB_PATH_MAX + 1200], target[4200] = "../../";
  snprintf(path, sizeof(path), "%s/snapshots/%s/%s", repo_dir, commit, name);
  char *slash = strrchr(path, '/');
  *slash = '\0';
  VLM_RETURN_IF_ERROR(make_dirs(path));
  *slash = '/';
  for (const char *c = name; *c; c++)
    if (*c == '/') strcat(target, "../");
  strcat(target, "blobs/");
  strcat(target, etag);
  char existing[4200];
  ssize_t length = readlink(path, existing, sizeof(existing) - 1);
  if (length >= 0) {
    existing[length] = '\0';
    if (!strcmp(existing, target)) return VLM_OK;
  }
  unlink(path);
  if (symlink(target, path)) return VLM_ERROR(IO, "%s: %s", path, strerror(errno));
  return VLM_OK;
}

static vlm_status write_ref(const char *repo_dir, const char *revision, const char *commit) {
  char path[VLM_HUB_PATH_MAX + 400], temporary[VLM_HUB_PATH_MAX + 420];
  snprintf(path, sizeof(path), "%s/refs/%s", repo_dir, revision);
  char *slash = strrchr(path, '/');
  *slash = '\0';
  VLM_RETURN_IF_ERROR(make_dirs(path));
  *slash = '/';
  snprintf(temporary, sizeof(temporary), "%s.vlm-%ld", path, (long)getpid());
  FILE *file = fopen(temporary, "w");
  if (!file) return VLM_ERROR(IO, "%s: %s", temporary, strerror(errno));
  bool failed = fputs(commit, file) < 0;
  failed |= fclose(file) != 0;
  if (failed || rename(temporary, path)) {
    unlink(temporary);
    return VLM_ERROR(IO, "%s: could not write the ref", path);
  }
  return VLM_OK;
}

static vlm_status lock_blob(const char *repo_dir, const char *etag, int *out_fd) {
  char path[VLM_HUB_PATH_MAX + 400];
  const char *slash = strrchr(repo_dir, '/');
  if (!slash) return VLM_ERROR(INTERNAL, "%s: no cache directory", repo_dir);
  snprintf(path, sizeof(path), "%.*s/.locks/%s", (int)(slash - repo_dir), repo_dir, slash + 1);
  VLM_RETURN_IF_ERROR(make_dirs(path));
  size_t length = strlen(path);
  snprintf(path + length, sizeof(path) - length, "/%s.lock", etag);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return VLM_ERROR(IO, "%s: %s", path, strerror(errno));
  if (flock(fd, LOCK_EX)) {
    close(fd);
    return VLM_ERROR(IO, "%s: %s", path, strerror(errno));
  }
  *out_fd = fd;
  return VLM_OK;
}

static vlm_status download_blob(const hub_client *client, const vlm_hub_id *id, const char *url,
                                const vlm_hub_file *file, const char *blob, const char *partial, int64_t expected,
                                const char *expected_sha);

/* One file into blobs/ and the snapshot. */
static vlm_status pull_file(const hub_client *client, const vlm_hub_id *id, const char *repo_dir,
                            const vlm_hub_listing *listing, const vlm_hub_file *file) {
  /* The endpoint (< 1024), the id (< 200), the commit (40) and the quoted
   * name (< 3200): url holds them all. */
  char quoted[3200], url[sizeof(client->endpoint) + VLM_HUB_ID_MAX + sizeof(listing->commit) + sizeof(quoted) + 16];
  url_quote(file->name, true, quoted, sizeof(quoted));
  snprintf(url, sizeof(url), "%s/%s/resolve/%s/%s", client->endpoint, id->repo, listing->commit, quoted);
  transfer head = {.options = client->options};
  VLM_RETURN_IF_ERROR(perform(client, url, true, true, &head));
  /* A relative redirect is the hub's own (a renamed repository): follow it
   * for the metadata, as huggingface_hub does; an absolute one is the LFS
   * host's, whose headers are not the file's metadata. */
  for (int hops = 0; hops < 5 && head.status >= 300 && head.status < 400 && head.headers.location[0] == '/'; hops++) {
    const char *host = strstr(client->endpoint, "://");
    const char *path = host ? strchr(host + 3, '/') : NULL;
    int origin = path ? (int)(path - client->endpoint) : (int)strlen(client->endpoint);
    snprintf(url, sizeof(url), "%.*s%s", origin, client->endpoint, head.headers.location);
    VLM_RETURN_IF_ERROR(perform(client, url, true, true, &head));
  }
  if (head.status >= 400) return http_error(client, id, url, &head);
  if (head.status >= 300 && !head.headers.location[0])
    return VLM_ERROR(DATA_LOSS, "%s: a redirect (%ld) without a Location", url, head.status);
  const char *etag = head.headers.etag;
  if (!vlm_hub_etag_valid(etag))
    return VLM_ERROR(DATA_LOSS, "%s: the hub sent no usable ETag (X-Linked-Etag or ETag)", url);
  if (head.headers.commit[0] && strcmp(head.headers.commit, listing->commit))
    return VLM_ERROR(DATA_LOSS, "%s: X-Repo-Commit %s differs from the listing's commit %s", url,
                     head.headers.commit, listing->commit);
  /* The LFS sha256: the listing's, else the linked etag (which is it). */
  char expected_sha[65] = "";
  if (file->lfs_sha256[0]) snprintf(expected_sha, sizeof(expected_sha), "%s", file->lfs_sha256);
  else if (head.headers.linked_etag && strlen(etag) == 64) memcpy(expected_sha, etag, 65);
  if (expected_sha[0] && head.headers.linked_etag && strcmp(expected_sha, etag))
    return VLM_ERROR(DATA_LOSS, "%s: the listing's sha256 %s differs from X-Linked-Etag %s", url, expected_sha, etag);
  int64_t expected = head.headers.size >= 0 ? head.headers.size : file->size;
  if (file->size >= 0 && head.headers.size >= 0 && file->size != head.headers.size)
    return VLM_ERROR(DATA_LOSS, "%s: the listing says %lld bytes, the hub's headers %lld", url,
                     (long long)file->size, (long long)head.headers.size);

  char blob[VLM_HUB_PATH_MAX + 300], partial[VLM_HUB_PATH_MAX + 320];
  snprintf(blob, sizeof(blob), "%s/blobs/%s", repo_dir, etag);
  snprintf(partial, sizeof(partial), "%s.incomplete", blob);
  int64_t have = file_size(blob);
  if (have >= 0 && (expected < 0 || have == expected)) { /* already there (either tool's) */
    if (!client->options->quiet && !client->options->progress) fprintf(stderr, "vlm: have %s\n", file->name);
    return link_snapshot(repo_dir, listing->commit, file->name, etag);
  }
  char folder[VLM_HUB_PATH_MAX + 10];
  snprintf(folder, sizeof(folder), "%s/blobs", repo_dir);
  VLM_RETURN_IF_ERROR(make_dirs(folder));
  /* One writer per blob, vlm or huggingface_hub (whose filelock takes the
   * same flock on CACHE/.locks/models--ORG--NAME/<etag>.lock). */
  int lock = -1;
  VLM_RETURN_IF_ERROR(lock_blob(repo_dir, etag, &lock));
  vlm_status locked = download_blob(client, id, url, file, blob, partial, expected, expected_sha);
  close(lock);
  VLM_RETURN_IF_ERROR(locked);
  return link_snapshot(repo_dir, listing->commit, file->name, etag);
}

static vlm_status download_blob(const hub_client *client, const vlm_hub_id *id, const char *url,
                                const vlm_hub_file *file, const char *blob, const char *partial, int64_t expected,
                                const char *expected_sha) {
  if (file_size(blob) >= 0 && (expected < 0 || file_size(blob) == expected)) return VLM_OK; /* another writer's */
  int64_t offset = file_size(partial);
  if (offset < 0 || (expected >= 0 && offset > expected)) offset = 0;
  transfer get = {.options = client->options, .label = file->name, .expected = expected, .file_offset = offset};
  get.file = fopen(partial, offset > 0 ? "ab" : "wb");
  if (!get.file) return VLM_ERROR(IO, "%s: %s", partial, strerror(errno));
  if (offset > 0 && !client->options->quiet)
    fprintf(stderr, "vlm: resuming %s at %lld bytes\n", file->name, (long long)offset);
  vlm_status status = offset == expected ? VLM_OK : perform(client, url, false, true, &get);
  if (get.file && fclose(get.file) && !status) status = VLM_ERROR(IO, "%s: %s", partial, strerror(errno));
  if (!status && offset != expected && get.status != 200 && get.status != 206)
    status = get.status == 416 ? VLM_ERROR(DATA_LOSS, "%s: the partial download does not fit the file (416)", url)
                               : http_error(client, id, url, &get);
  if (status) {
    if (get.status == 416 || get.overran) unlink(partial);
    if (client->options->progress && !client->options->quiet) fputc('\n', stderr);
    return status;
  }
  int64_t got = file_size(partial);
  if (expected >= 0 && got != expected) {
    if (got > expected) unlink(partial);
    return VLM_ERROR(DATA_LOSS, "%s: got %lld bytes of %lld (run vlm pull again to resume)", file->name,
                     (long long)got, (long long)expected);
  }
  if (expected_sha[0]) {
    char actual[65];
    VLM_RETURN_IF_ERROR(file_sha256(partial, actual));
    if (strcmp(actual, expected_sha)) {
      unlink(partial); /* a corrupt file is not resumed */
      return VLM_ERROR(DATA_LOSS, "%s: sha256 %s differs from the hub's %s: the download is corrupt and was "
                       "removed; run vlm pull again", file->name, actual, expected_sha);
    }
  }
  if (rename(partial, blob)) return VLM_ERROR(IO, "%s: %s", blob, strerror(errno));
  if (!client->options->quiet) {
    if (client->options->progress) {
      transfer done = get;
      print_progress(&done, got, true);
    } else {
      char bytes[32];
      format_bytes((double)got, bytes, sizeof(bytes));
      fprintf(stderr, "vlm: pulled %s (%s in %.1f s)\n", file->name, bytes, now_seconds() - get.start);
    }
  }
  return VLM_OK;
}

static vlm_status check_listing(const vlm_hub_id *id, const vlm_hub_listing *listing) {
  if (!listing->has_safetensors && listing->has_pytorch_bin)
    return VLM_ERROR(UNIMPLEMENTED,
                     "%s (revision %s) has only pytorch_model*.bin weights (PyTorch pickles, which vlm does not "
                     "load): vlm reads *.safetensors; look for a revision with safetensors weights (the hub's "
                     "\"Adding safetensors\" pull request: vlm pull %s@refs/pr/N)", id->repo, id->revision, id->repo);
  if (!listing->has_safetensors && listing->has_gguf)
    return VLM_ERROR(UNIMPLEMENTED,
                     "%s holds GGUF files, which vlm does not load: vlm reads Hugging Face *.safetensors "
                     "checkpoints; pull the original model's repository", id->repo);
  if (!listing->has_safetensors)
    return VLM_ERROR(UNIMPLEMENTED, "%s (revision %s) has no *.safetensors weights for vlm to run", id->repo,
                     id->revision);
  if (!listing->has_tokenizer_json && listing->has_tokenizer_model)
    return VLM_ERROR(UNIMPLEMENTED,
                     "%s has a SentencePiece tokenizer.model but no tokenizer.json: vlm reads only tokenizer.json; "
                     "write one with Transformers (AutoTokenizer.from_pretrained(DIR).save_pretrained(DIR)) and give "
                     "the directory", id->repo);
  return VLM_OK;
}

vlm_status cli_hub_pull(const vlm_hub_id *id, const cli_pull_options *options, char *out, size_t size) {
  if (vlm_hub_offline())
    return VLM_ERROR(FAILED_PRECONDITION, "HF_HUB_OFFLINE is set: downloading %s needs the network; unset it to pull",
                     id->repo);
  hub_client client;
  VLM_RETURN_IF_ERROR(client_init(&client, options));
  char repo_dir[VLM_HUB_PATH_MAX];
  VLM_RETURN_IF_ERROR(vlm_hub_repo_dir(id, repo_dir, sizeof(repo_dir)));
  static bool curl_ready = false;
  if (!curl_ready) {
    if (curl_global_init(CURL_GLOBAL_DEFAULT)) return VLM_ERROR(INTERNAL, "libcurl did not initialize");
    curl_ready = true;
  }
  char revision[3 * VLM_HUB_ID_MAX], url[2048];
  url_quote(id->revision, false, revision, sizeof(revision));
  snprintf(url, sizeof(url), "%s/api/models/%s/revision/%s?blobs=true", client.endpoint, id->repo, revision);
  transfer info = {.options = options};
  vlm_status status = perform(&client, url, false, true, &info);
  if (!status && info.status != 200) status = http_error(&client, id, url, &info);
  vlm_hub_listing listing;
  if (!status) status = vlm_hub_listing_parse(info.memory ? info.memory : "", info.memory_length, &listing);
  free(info.memory);
  VLM_RETURN_IF_ERROR(status);
  status = check_listing(id, &listing);
  /* The hub lists a gated model's files to anyone but serves them only to
   * an account that accepted its license: say so before fetching any. */
  if (!status && listing.gated[0] && strcmp(listing.gated, "false") && !client.authorization[0])
    status = VLM_ERROR(FAILED_PRECONDITION,
                       "%s is a gated model: accept its license at %s/%s while logged in, then set HF_TOKEN to a "
                       "token of that account (%s/settings/tokens)", id->repo, client.endpoint, id->repo,
                       client.endpoint);
  int64_t total = 0;
  for (size_t i = 0; i < listing.file_count; i++) total += listing.files[i].size > 0 ? listing.files[i].size : 0;
  if (!status && !options->quiet) {
    char bytes[32];
    format_bytes((double)total, bytes, sizeof(bytes));
    fprintf(stderr, "vlm: pulling %s at %s (commit %.12s): %zu files, %s\n", id->repo, id->revision, listing.commit,
            listing.file_count, bytes);
  }
  for (size_t i = 0; !status && i < listing.file_count; i++)
    status = pull_file(&client, id, repo_dir, &listing, &listing.files[i]);
  /* huggingface_hub writes a ref only for a revision that is not the commit. */
  if (!status && strcmp(id->revision, listing.commit)) status = write_ref(repo_dir, id->revision, listing.commit);
  if (!status) {
    int written = snprintf(out, size, "%s/snapshots/%s", repo_dir, listing.commit);
    if (written < 0 || (size_t)written >= size) status = VLM_ERROR(OUT_OF_RANGE, "the snapshot path is too long");
  }
  vlm_hub_listing_release(&listing);
  return status;
}

vlm_status cli_model_dir(const char *model, unsigned needs, bool download, char *out, size_t size) {
  vlm_status status = vlm_hub_model_dir(model, needs, out, size);
  vlm_hub_id id;
  if (!download || vlm_status_code_of(status) != VLM_STATUS_NOT_FOUND || !vlm_hub_id_parse(model, &id)) return status;
  struct stat info;
  if (stat(model, &info) == 0) return status;
  vlm_status_free(status);
  cli_pull_options options = {.progress = isatty(STDERR_FILENO) == 1};
  VLM_RETURN_IF_ERROR(cli_hub_pull(&id, &options, out, size));
  return vlm_hub_check_model_dir(out, needs);
}
