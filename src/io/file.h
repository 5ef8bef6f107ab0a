/* Files: bounded whole-file reads and read-only memory maps. */
#ifndef VLM_IO_FILE_H
#define VLM_IO_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vlm.h"

/* Reads a regular file of at most `max_bytes` into a malloc'd, NUL-terminated
 * buffer (the caller frees it). Refuses directories and oversized files
 * before reading. */
vlm_status vlm_file_read_all(const char *path, size_t max_bytes, char **out_data,
                             size_t *out_length);

/* A read-only, private memory map of a whole file. Pages are faulted in on
 * first touch, so mapping a 1 GB checkpoint costs (almost) no resident
 * memory until tensors are read. */
typedef struct vlm_file_map {
  const uint8_t *data;
  size_t size;
  int descriptor;
} vlm_file_map;

vlm_status vlm_file_map_open(const char *path, vlm_file_map *out_map);
void vlm_file_map_close(vlm_file_map *map);

/* True when the name exists, even as a link that cannot be followed
 * (opening it then fails with the reason). */
bool vlm_path_exists(const char *path);
/* Joins directory and file name into a malloc'd string. */
char *vlm_path_join(const char *directory, const char *name);

#endif
