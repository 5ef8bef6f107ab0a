/* libFuzzer target: the Hugging Face hub's answers that `vlm pull` reads
 * (src/io/hub.c) are untrusted input: the model-info JSON (its file list
 * names paths vlm writes under the cache), a resolve request's header lines
 * (the etag names a blob file), and a model id. Any input must give a
 * refusal or a listing whose every path is safe, without a crash or leak. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/hub.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vlm_hub_listing listing;
  vlm_status status = vlm_hub_listing_parse((const char *)data, size, &listing);
  if (!status) {
    if (strlen(listing.commit) != 40) abort();
    for (size_t i = 0; i < listing.file_count; i++)
      if (!vlm_hub_safe_path(listing.files[i].name) || !vlm_hub_wanted_file(listing.files[i].name)) abort();
    vlm_hub_listing_release(&listing);
  }
  vlm_status_free(status);

  /* The same bytes as header lines. */
  vlm_hub_file_headers headers;
  vlm_hub_file_headers_init(&headers);
  size_t start = 0;
  for (size_t i = 0; i <= size; i++) {
    if (i == size || data[i] == '\n') {
      vlm_hub_header_line((const char *)data + start, i - start, &headers);
      start = i + 1;
    }
  }
  if (headers.commit[0] && strlen(headers.commit) != 40) abort();
  if (vlm_hub_etag_valid(headers.etag) && (strchr(headers.etag, '/') || !strcmp(headers.etag, ".."))) abort();

  /* The first line as a model id. */
  char text[512];
  size_t length = 0;
  while (length < size && length < sizeof(text) - 1 && data[length] != '\n' && data[length]) length++;
  memcpy(text, data, length);
  text[length] = '\0';
  vlm_hub_id id;
  if (vlm_hub_id_parse(text, &id) && (strstr(id.repo, "..") || strstr(id.revision, "..") || id.repo[0] == '/'))
    abort();
  return 0;
}
