/* vlm-audio-bench: audio decode + Phi4MultimodalFeatureExtractor time per
 * second of audio, for bench/audio_bench.py (which times Transformers on
 * the same files in the same run). Not a test: speed is measured, never
 * asserted.
 *
 *   vlm-audio-bench CONFIG_DIR REPEATS FILE...
 *
 * CONFIG_DIR holds the feature extractor's preprocessor_config.json or
 * processor_config.json. Prints one JSON object per file: the clip's
 * seconds and the best (smallest) decode and features time of REPEATS
 * runs, single-threaded. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "io/feature_extractor_config.h"
#include "media/audio_features_phi4.h"
#include "vlm/audio.h"

static double now(void) {
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return (double)time.tv_sec + (double)time.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: vlm-audio-bench CONFIG_DIR REPEATS FILE...\n");
    return 2;
  }
  vlm_feature_extractor_config config;
  vlm_status status = vlm_feature_extractor_config_load(argv[1], NULL, &config);
  int repeats = atoi(argv[2]);
  for (int f = 3; !status && f < argc; f++) {
    double best_decode = 1e30, best_features = 1e30, seconds = 0;
    int64_t frames = 0;
    for (int r = 0; !status && r < (repeats > 0 ? repeats : 1); r++) {
      vlm_audio_decode_options options = {.sample_rate = (int)config.sampling_rate};
      vlm_audio audio;
      double start = now();
      status = vlm_audio_decode_file(argv[f], &options, &audio);
      double decoded = now();
      if (status) break;
      vlm_tensor features;
      status = vlm_phi4_audio_features(&config, audio.samples, audio.count, NULL, &features);
      double done = now();
      if (!status) {
        frames = features.shape[0];
        vlm_tensor_release(&features);
      }
      seconds = (double)audio.count / audio.sample_rate;
      vlm_audio_release(&audio);
      if (decoded - start < best_decode) best_decode = decoded - start;
      if (done - decoded < best_features) best_features = done - decoded;
    }
    if (!status)
      printf("{\"file\":\"%s\",\"audio_seconds\":%.6f,\"frames\":%lld,\"decode_seconds\":%.6f,"
             "\"features_seconds\":%.6f}\n",
             argv[f], seconds, (long long)frames, best_decode, best_features);
  }
  vlm_feature_extractor_config_release(&config);
  if (status) {
    fprintf(stderr, "vlm-audio-bench: %s\n", vlm_status_message(status));
    vlm_status_free(status);
    return 1;
  }
  return 0;
}
