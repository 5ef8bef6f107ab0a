/* libFuzzer target: the header rules of server/http_policy.h, which read
 * client bytes before anything else does (Content-Type and its charset,
 * Content-Encoding, header names and values, Host and Origin, request
 * IDs), and the hidden-NUL check over a buffer shaped as libmicrohttpd
 * leaves it (the input, then its line end's two NULs). Every rule must
 * decide without reading past its input; a few invariants are checked:
 * a name with a space is never a token, a value with a control byte is
 * never clean, a charset rule accepts only what the JSON rule accepts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/http_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 3);
  if (!text) abort();
  memcpy(text, data, size);
  text[size] = text[size + 1] = text[size + 2] = '\0';
  size_t length = strlen(text); /* a C string stops at the first NUL, as libmicrohttpd's do */

  bool json = http_content_type_is_json(text);
  bool charset = http_content_type_charset_ok(text);
  (void)json;
  (void)charset;
  (void)http_content_encoding_ok(text);
  if (http_header_name_ok(text, length) && memchr(text, ' ', length)) abort();
  bool clean = http_header_value_ok(text, length);
  for (size_t i = 0; clean && i < length; i++)
    if ((unsigned char)text[i] < 0x20 && text[i] != '\t') abort();
  /* A value followed by its line end (2 NULs) is whole exactly when the
   * input had no NUL inside; the rest of it then shows past the cut. */
  bool whole = http_header_value_is_whole(text, length, text + size + 2, 2);
  if (whole != (length == size)) abort();

  http_host_policy loopback = {.bound_to_loopback = true};
  (void)http_host_allowed(&loopback, text);
  (void)http_origin_allowed(&loopback, text);
  char id[HTTP_REQUEST_ID_MAX + 1];
  http_request_id_choose(text, id);
  if (!http_request_id_is_acceptable(id)) abort();
  free(text);
  return 0;
}
