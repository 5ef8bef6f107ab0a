/* libFuzzer target: image bytes are untrusted input (JPEG, PNG, WebP, GIF,
 * or anything else). Any input must decode or be refused with an error,
 * without a crash, leak or unbounded allocation: the pixel limit keeps
 * decoded images small so the fuzzer explores parsers, not memory. */
#include <stdint.h>
#include <stdlib.h>

#include "vlm/media.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vlm_image_decode_options options = {.limits = {.max_encoded_bytes = 1 << 20,
                                                 .max_decoded_pixels = 1 << 20}};
  options.alpha = size > 0 && (data[size - 1] & 1) ? VLM_ALPHA_DISCARD : VLM_ALPHA_COMPOSITE_WHITE;
  vlm_image image;
  vlm_status status = vlm_image_decode_memory(data, size, "fuzz", &options, &image);
  if (!status) {
    /* Touch every pixel so the sanitizers see the whole buffer. */
    volatile uint8_t sink = 0;
    for (int64_t i = 0; i < image.width * image.height * 3; i++) sink ^= image.pixels[i];
    (void)sink;
    vlm_image_release(&image);
  }
  vlm_status_free(status);
  return 0;
}
