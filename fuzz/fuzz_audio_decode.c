/* libFuzzer target: audio bytes are untrusted input (WAV, FLAC, Ogg Vorbis,
 * MP3, or anything else), and so is what libsndfile makes of them. Any
 * input must decode or be refused with an error, without a crash, leak or
 * unbounded allocation: the duration limit keeps decoded clips short so the
 * fuzzer explores parsers, not memory. The last byte picks the output rate,
 * so the resampler runs on whatever decodes. The header read
 * (vlm_audio_read_header, what the engine budgets memory by) must bound
 * every decode: a clip it admits never decodes to more samples than it
 * said, and a clip it refuses never decodes. */
#include <stdint.h>
#include <stdlib.h>

#include "vlm/audio.h"

/* Debian 12's libsndfile 1.2.0 leaks libvorbis's vorbis_info (~6 KB) when
 * an Ogg Vorbis header fails to parse (its vorbis open error path does not
 * clear it). That is the library's, not vlm's, and the fuzzer finds it in
 * seconds; it stays suppressed here, by that one frame, so every other
 * leak still fails the run. docs/SECURITY.md names it. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:vorbis_info_init\n"; }

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
