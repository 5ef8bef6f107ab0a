/* Safetensors files: a little-endian u64 header length N, N bytes of JSON
 * header, then the tensor bytes. We memory-map the file and validate the
 * header as strictly as the reference implementation (the Rust `safetensors`
 * crate) does: known dtypes, shape x dtype size equal to the byte range,
 * ranges contiguous, non-overlapping and covering the data area exactly, and
 * a sane header length. Anything else is refused with the file name and the
 * problem, before any tensor byte is read. */
#ifndef VLM_IO_SAFETENSORS_H
#define VLM_IO_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"
#include "io/file.h"
#include "io/json.h"
#include "vlm.h"

/* The Rust crate's limit; a larger header is hostile, not a model. */
#define VLM_SAFETENSORS_MAX_HEADER_BYTES ((uint64_t)100 * 1000 * 1000)

typedef struct vlm_safetensors_entry {
  const char *name;      /* as written in the header */
  vlm_dtype dtype;
  int rank;
  int64_t shape[VLM_MAX_DIMS];
  uint64_t data_begin;   /* relative to the data area */
  uint64_t data_end;
  const uint8_t *data;   /* inside the mapping, or in aligned_copy (see below) */
} vlm_safetensors_entry;

typedef struct vlm_safetensors_file {
  char *path;
  vlm_file_map map;
  uint64_t header_bytes;
  const uint8_t *data_area;
  uint64_t data_area_bytes;
  vlm_safetensors_entry *entries; /* in header order */
  size_t entry_count;
  const char *format;             /* __metadata__.format, or NULL */
  vlm_json_document header;       /* owns names and metadata */
  /* Tensors whose bytes in the file are not aligned to their element size
   * (a header whose length is not a multiple of 8, which readers must
   * accept) are copied here once, so every entry's data can be read
   * through a pointer of its element type. NULL for well-formed files. */
  uint8_t *aligned_copy;
  uint64_t aligned_copy_bytes;
  const vlm_allocator *allocator;
} vlm_safetensors_file;

/* Validates a header already in memory (no file needed): used by the file
 * loader and by the fuzz target. `data_area_bytes` is what follows the
 * header. On success the document owns every string the entries point to. */
vlm_status vlm_safetensors_parse_header(const char *header_text, size_t header_length,
                                        uint64_t data_area_bytes,
                                        const vlm_allocator *allocator,
                                        const char *source_name,
                                        vlm_json_document *out_header,
                                        vlm_safetensors_entry **out_entries,
                                        size_t *out_entry_count,
                                        const char **out_format);

/* Parses a whole file image (8-byte length + header + data). Entries point
 * into `bytes` (or into aligned_copy); release the result with
 * vlm_safetensors_release_parsed before freeing `bytes`. */
vlm_status vlm_safetensors_parse_buffer(const uint8_t *bytes, size_t length,
                                        const vlm_allocator *allocator,
                                        const char *source_name,
                                        vlm_safetensors_file *out_file);
/* Frees what parsing made (header, aligned copies), not the bytes. */
void vlm_safetensors_release_parsed(vlm_safetensors_file *file);

vlm_status vlm_safetensors_open(const char *path, const vlm_allocator *allocator,
                                vlm_safetensors_file *out_file);
void vlm_safetensors_close(vlm_safetensors_file *file);

/* Writing, for tests, tools and intermediate dumps. Tensors are written in
 * the order given, 8-byte aligned data area (header padded with spaces as the
 * reference writer does). */
typedef struct vlm_safetensors_write_entry {
  const char *name;
  vlm_dtype dtype;
  int rank;
  const int64_t *shape;
  const void *data; /* element count x dtype size bytes */
} vlm_safetensors_write_entry;

vlm_status vlm_safetensors_write(const char *path,
                                 const vlm_safetensors_write_entry *entries,
                                 size_t entry_count, const char *format);

#endif
