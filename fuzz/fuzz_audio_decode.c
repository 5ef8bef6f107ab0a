/* libFuzzer target: audio bytes are untrusted input (WAV, FLAC, Ogg Vorbis,
 * MP3, or anything else), and so is what libsndfile makes of them. Any
 * input must decode or be refused with an error, without a crash, leak or
 * unbounded allocation: the duration limit keeps decoded clips short so the
 * fuzzer explores parsers, not memory. The last byte picks the output rate,
 * so the resampler runs on whatever decodes. The header read
 * (vlm_audio_read_header, what the engine budgets memory by) must bound
 * every decode: a clip it admits never decodes to more samples than it
 * said, and a clip it refuses never decodes. No leak is suppressed: the one
 * libsndfile 1.2.0 has on malformed Ogg Vorbis headers is kept from it by
 * src/media/audio_ogg.c. */
#include <stdint.h>
#include <stdlib.h>

#include "vlm/audio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const int rates[4] = {16000, 8000, 22050, 44100};
  vlm_audio_decode_options options = {.limits = {.max_encoded_bytes = 1 << 20, .max_seconds = 5},
                                      .sample_rate = rates[size > 0 ? data[size - 1] & 3 : 0]};
  vlm_audio_header header;
  vlm_status header_status = vlm_audio_read_header(data, size, "fuzz", &options, &header);
  vlm_audio audio;
  vlm_status status = vlm_audio_decode_memory(data, size, "fuzz", &options, &audio);
  if (!status && (header_status || audio.count > header.max_samples)) abort();
  vlm_status_free(header_status);
  if (!status) {
    /* Touch every sample so the sanitizers see the whole buffer. */
    volatile float sink = 0;
    for (int64_t i = 0; i < audio.count; i++) sink += audio.samples[i];
    (void)sink;
    vlm_audio_release(&audio);
  }
  vlm_status_free(status);
  return 0;
}
