/* libFuzzer target: base64_decode and data: URLs. Whatever base64_decode
 * accepts must re-encode to the same text (it accepts only canonical
 * encodings, padding optional), and media_source_fetch on "data:" + input
 * must accept or refuse without crashing. The policy allows neither files
 * nor remote media, and the input is always behind "data:", so nothing
 * here touches the file system or the network. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/media_source.h"

#define FUZZ_MAX_BYTES 4096

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Standard base64 without padding. */
static char *encode(const uint8_t *bytes, size_t length, size_t *out_length) {
  char *text = malloc(length / 3 * 4 + 5);
  if (!text) abort();
  size_t written = 0;
  for (size_t i = 0; i < length; i += 3) {
    uint32_t group = (uint32_t)bytes[i] << 16;
    if (i + 1 < length) group |= (uint32_t)bytes[i + 1] << 8;
    if (i + 2 < length) group |= bytes[i + 2];
    size_t digits = length - i >= 3 ? 4 : length - i + 1;
    for (size_t d = 0; d < digits; d++) text[written++] = alphabet[(group >> (18 - 6 * d)) & 63];
  }
  *out_length = written;
  return text;
}

static void check_base64(const uint8_t *data, size_t size) {
  uint8_t *bytes = NULL;
  size_t length = 0;
  if (!base64_decode((const char *)data, size, FUZZ_MAX_BYTES, &bytes, &length)) {
    if (bytes || length) abort();
    return;
  }
  if (length > FUZZ_MAX_BYTES) abort();
  size_t unpadded = size;
  while (unpadded > 0 && data[unpadded - 1] == '=') unpadded--;
  size_t encoded_length = 0;
  char *encoded = encode(bytes, length, &encoded_length);
  if (encoded_length != unpadded || memcmp(encoded, data, unpadded) != 0) abort();
  free(encoded);
  free(bytes);
}

static void check_data_url(const uint8_t *data, size_t size) {
  char *url = malloc(size + 6);
  if (!url) abort();
  memcpy(url, "data:", 5);
  memcpy(url + 5, data, size);
  url[size + 5] = '\0';
  media_policy policy = {.max_bytes = FUZZ_MAX_BYTES};
  uint8_t *bytes = NULL;
  size_t length = 0;
  openai_error error;
  if (media_source_fetch(&policy, url, "messages[0].content[0].image_url.url", NULL, &bytes,
                         &length, &error)) {
    if (!bytes || length == 0 || length > FUZZ_MAX_BYTES) abort();
    free(bytes);
  } else {
    if (bytes || !error.message || error.http_status != 400) abort();
    openai_error_release(&error);
  }
  free(url);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_base64(data, size);
  check_data_url(data, size);
  return 0;
}
