/* libFuzzer target: the audio header readers that give a clip's duration
 * before any sample is decoded (vlm_audio_read_header: the sniffer, the WAV
 * data chunk walk, the Ogg Vorbis header check, and libsndfile's open,
 * which reads FLAC's STREAMINFO, the last Ogg page's granule position and
 * MP3's Xing/VBRI header or frame estimate), and the token count admission
 * makes of it (Phi4MultimodalFeatureExtractor's tokens_for_samples). Any
 * input must give a header or an error, without a crash or leak, and a
 * header's claims must be consistent: the stated samples within the
 * decode's bound, their decode within its peak, and a token count that
 * never decreases with the samples. No sample is decoded here, so the
 * duration limit is the real one (600 s): the fuzzer reaches headers that
 * claim hours. The last byte picks the output rate. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "media/audio_processors.h"
#include "vlm/audio.h"

static const vlm_audio_processor_class *phi4_processor(vlm_feature_extractor_config *config) {
  memset(config, 0, sizeof(*config));
  config->feature_extractor_type = "Phi4MultimodalFeatureExtractor";
  config->supported = true;
  config->feature_size = 80, config->sampling_rate = 16000;
  config->hop_length = 160, config->n_fft = 512, config->win_length = 400;
  config->audio_compression_rate = 8, config->audio_downsample_rate = 1, config->audio_feat_stride = 1;
  const vlm_audio_processor_class *processor = NULL;
  vlm_status status = vlm_audio_processor_find(config, &processor);
  if (status) abort();
  return processor;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const int rates[4] = {16000, 8000, 22050, 44100};
  vlm_audio_decode_options options = {.limits = {.max_encoded_bytes = 1 << 20},
                                      .sample_rate = rates[size > 0 ? data[size - 1] & 3 : 0]};
  vlm_audio_header header;
  vlm_status status = vlm_audio_read_header(data, size, "fuzz", &options, &header);
  if (status) {
    vlm_status_free(status);
    return 0;
  }
  if (header.frames < -1 || header.max_frames < 0 || header.stated_samples < 0 ||
      header.stated_samples > header.max_samples || header.stated_decode_bytes > header.decode_bytes ||
      (header.frames >= 0 && header.frames < header.max_frames &&
       header.stated_samples > header.max_samples))
    abort();
  vlm_feature_extractor_config config;
  const vlm_audio_processor_class *processor = phi4_processor(&config);
  int64_t stated = processor->tokens_for_samples(&config, header.stated_samples);
  int64_t most = processor->tokens_for_samples(&config, header.max_samples);
  if (stated < 0 || stated > most) abort();
  return 0;
}
