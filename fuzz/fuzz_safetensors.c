/* libFuzzer target: a safetensors file image (length prefix, header, data)
 * is validated or refused; when accepted, every tensor's bytes must lie
 * inside the buffer, which we check by touching them. */
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
    if (entry->data < data || entry->data + (entry->data_end - entry->data_begin) > data + size)
      abort();
    if (entry->data_end > entry->data_begin) {
      sink ^= entry->data[0];
      sink ^= entry->data[entry->data_end - entry->data_begin - 1];
    }
  }
  (void)sink;
  vlm_json_document_release(&file.header);
  return 0;
}
