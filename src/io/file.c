#include "io/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/status.h"

/* Every model file (weights, configs, tokenizer, templates) is opened
 * here. O_NONBLOCK: opening a FIFO for reading otherwise blocks until a
 * writer appears (vlm inspect hung on a FIFO model.safetensors); with it
 * the open returns at once and the type check below refuses anything that
 * is not a regular file. It has no effect on reads of regular files. */
static vlm_status open_regular(const char *path, int *out_descriptor,
                               size_t *out_size) {
  int descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (descriptor < 0)
    return vlm_status_make(errno == ENOENT ? VLM_STATUS_NOT_FOUND : VLM_STATUS_IO,
                           "%s: cannot open: %s", path, strerror(errno));
  struct stat info;
  if (fstat(descriptor, &info) != 0) {
    int error = errno;
    close(descriptor);
    return VLM_ERROR(IO, "%s: cannot stat: %s", path, strerror(error));
  }
  if (!S_ISREG(info.st_mode)) {
    close(descriptor);
    return VLM_ERROR(INVALID_ARGUMENT, "%s: not a regular file (%s)", path,
                     S_ISFIFO(info.st_mode) ? "a FIFO" : S_ISDIR(info.st_mode) ? "a directory"
                     : S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode) ? "a device" : "a socket or special file");
  }
  *out_descriptor = descriptor;
  *out_size = (size_t)info.st_size;
  return VLM_OK;
}

vlm_status vlm_file_read_all(const char *path, size_t max_bytes, char **out_data,
                             size_t *out_length) {
  *out_data = NULL;
  *out_length = 0;
  int descriptor = -1;
  size_t size = 0;
  VLM_RETURN_IF_ERROR(open_regular(path, &descriptor, &size));
  if (size > max_bytes) {
    close(descriptor);
    return VLM_ERROR(OUT_OF_RANGE, "%s: file is %zu bytes, over the limit of %zu",
                     path, size, max_bytes);
  }
  char *data = malloc(size + 1);
  if (!data) {
    close(descriptor);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "%s: out of memory reading %zu bytes",
                     path, size);
  }
  size_t total = 0;
  while (total < size) {
    ssize_t got = read(descriptor, data + total, size - total);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      int error = got < 0 ? errno : 0;
      close(descriptor);
      free(data);
      return VLM_ERROR(IO, "%s: read failed after %zu of %zu bytes%s%s", path,
                       total, size, error ? ": " : "", error ? strerror(error) : "");
    }
    total += (size_t)got;
  }
  close(descriptor);
  data[size] = '\0';
  *out_data = data;
  *out_length = size;
  return VLM_OK;
}

vlm_status vlm_file_map_open(const char *path, vlm_file_map *out_map) {
  memset(out_map, 0, sizeof(*out_map));
  out_map->descriptor = -1;
  int descriptor = -1;
  size_t size = 0;
  VLM_RETURN_IF_ERROR(open_regular(path, &descriptor, &size));
  if (size == 0) {
    close(descriptor);
    return VLM_ERROR(DATA_LOSS, "%s: file is empty", path);
  }
  void *data = mmap(NULL, size, PROT_READ, MAP_PRIVATE, descriptor, 0);
  if (data == MAP_FAILED) {
    int error = errno;
    close(descriptor);
    return VLM_ERROR(IO, "%s: mmap of %zu bytes failed: %s", path, size,
                     strerror(error));
  }
  out_map->data = data;
  out_map->size = size;
  out_map->descriptor = descriptor;
  return VLM_OK;
}

void vlm_file_map_close(vlm_file_map *map) {
  if (map->data) munmap((void *)map->data, map->size);
  if (map->descriptor >= 0) close(map->descriptor);
  map->data = NULL;
  map->size = 0;
  map->descriptor = -1;
}

/* A name that is there but cannot be followed (a symlink loop: ELOOP, a
 * dangling symlink, a file we may not search for: EACCES) exists: the
 * caller then opens it and fails with the reason. Reported absent, a
 * tokenizer.json that loops was taken for none and `vlm inspect` exited 0. */
bool vlm_path_exists(const char *path) {
  struct stat info;
  if (stat(path, &info) == 0) return true;
  if (errno == ELOOP || errno == EACCES) return true;
  return lstat(path, &info) == 0;
}

char *vlm_path_join(const char *directory, const char *name) {
  size_t directory_length = strlen(directory);
  bool needs_slash = directory_length && directory[directory_length - 1] != '/';
  size_t length = directory_length + (needs_slash ? 1 : 0) + strlen(name) + 1;
  char *joined = malloc(length);
  if (!joined) return NULL;
  snprintf(joined, length, "%s%s%s", directory, needs_slash ? "/" : "", name);
  return joined;
}
