/* libFuzzer target: a safetensors file image (length prefix, header, data)
 * is validated or refused; when accepted, every tensor's bytes must lie
 * inside the buffer (or the file's aligned copy of misaligned tensors) and
 * be aligned to its element size, which we check by touching them. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "io/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vlm_safetensors_file file = {0};
  vlm_status status = vlm_safetensors_parse_buffer(data, size, NULL, "fuzz", &file);
  if (status) {
    vlm_status_free(status);
    return 0;
  }
  volatile uint8_t sink = 0;
  for (size_t i = 0; i < file.entry_count; i++) {
    const vlm_safetensors_entry *entry = &file.entries[i];
    const uint8_t *copy = file.aligned_copy;
    size_t bytes = entry->data_end - entry->data_begin;
    bool in_buffer = entry->data >= data && entry->data + bytes <= data + size;
    bool in_copy = copy && entry->data >= copy && entry->data + bytes <= copy + file.aligned_copy_bytes;
    if (!in_buffer && !in_copy) abort();
    size_t element = vlm_dtype_size(entry->dtype);
    if (element > 1 && (uintptr_t)entry->data % element != 0) abort(); /* typed loads need alignment */
    if (entry->data_end > entry->data_begin) {
      sink ^= entry->data[0];
      sink ^= entry->data[entry->data_end - entry->data_begin - 1];
    }
  }
  (void)sink;
  vlm_safetensors_release_parsed(&file);
  return 0;
}
