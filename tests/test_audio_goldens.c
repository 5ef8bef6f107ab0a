/* Audio decode and Phi4MultimodalFeatureExtractor against Transformers
 * 5.23.0 (tests/goldens/media_audio, tools/oracle/media_goldens_audio.py)
 * on every file of ../shared/fixtures/media/audio (skipped when absent)
 * and on the oracle's synthetic clips (always).
 *
 * Tolerances, from what was measured when they were set (the test prints
 * each clip's own):
 *   decode     WAV, FLAC, MP3: bit-exact (sha256 of the float32 samples);
 *              Ogg Vorbis: max |diff| <= 1e-6 (measured 1.6e-7 after the
 *              resampler: Debian's libvorbis build vs the wheel's)
 *   features   max |diff| of log-mel values <= 5e-4 from the same samples
 *              (measured 1.9e-6, one float32 ulp of values up to ~25: torch
 *              sums the mel matmul in MKL's order, vlm in float64 and rounds
 *              once); from vlm's own Ogg Vorbis decode <= 0.05 (measured
 *              0.011: the decode's 1e-7 grows where the log takes small mel
 *              energies)
 *   filters    the mel filter bank bit-exact; the window within 1 ulp */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/feature_extractor_config.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "media/audio_features_phi4.h"
#include "test.h"
#include "core/sha256.h"
#include "vlm/audio.h"

#define GOLDENS VLM_SOURCE_DIR "/tests/goldens/media_audio"
#define OGG_TOLERANCE 1e-6
#define FEATURE_TOLERANCE 5e-4
#define END_TO_END_TOLERANCE 0.05

typedef struct goldens {
  vlm_json_document manifest;
  vlm_safetensors_file tensors;
  vlm_feature_extractor_config configs[2];
  const char *config_names[2];
} goldens;

static const char *string_of(const vlm_json_value *object, const char *key) {
  return vlm_json_get_string(vlm_json_object_get(object, key));
}

static int64_t int_of(const vlm_json_value *object, const char *key) {
  int64_t value = -1;
  vlm_json_get_int(vlm_json_object_get(object, key), &value);
  return value;
}

static bool goldens_open(goldens *out) {
  memset(out, 0, sizeof(*out));
  vlm_status status = vlm_json_parse_file(GOLDENS "/manifest.json", 1 << 22, NULL, &out->manifest);
  CHECK_OK(status);
  if (status) return false;
  status = vlm_safetensors_open(GOLDENS "/tensors.safetensors", NULL, &out->tensors);
  CHECK_OK(status);
  out->config_names[0] = "defaults", out->config_names[1] = "custom";
  for (int i = 0; !status && i < 2; i++) {
    char directory[512];
    snprintf(directory, sizeof(directory), GOLDENS "/configs/%s", out->config_names[i]);
    status = vlm_feature_extractor_config_load(directory, NULL, &out->configs[i]);
    CHECK_OK(status);
  }
  return status == VLM_OK;
}

static void goldens_close(goldens *set) {
  for (int i = 0; i < 2; i++) vlm_feature_extractor_config_release(&set->configs[i]);
  vlm_safetensors_close(&set->tensors);
  vlm_json_document_release(&set->manifest);
}

static const vlm_safetensors_entry *find_tensor(const goldens *set, const char *name) {
  for (size_t i = 0; name && i < set->tensors.entry_count; i++)
    if (strcmp(set->tensors.entries[i].name, name) == 0) return &set->tensors.entries[i];
  return NULL;
}

static void sha256_hex(const void *data, size_t length, char out[65]) {
  vlm_sha256 hash;
  vlm_sha256_init(&hash);
  vlm_sha256_update(&hash, data, length);
  vlm_sha256_finish_hex(&hash, out);
}

/* Largest |actual - golden| over a float32 golden tensor; -1 without one,
 * infinity when the sizes differ. */
static double max_difference(const goldens *set, const char *tensor_name, const float *actual, int64_t count) {
  const vlm_safetensors_entry *tensor = find_tensor(set, tensor_name);
  if (!tensor) return -1;
  if (tensor->dtype != VLM_DTYPE_F32 || tensor->data_end - tensor->data_begin != (uint64_t)count * 4) return INFINITY;
  double largest = 0;
  for (int64_t i = 0; i < count; i++) {
    float expected;
    memcpy(&expected, tensor->data + i * 4, 4);
    double difference = fabs((double)actual[i] - (double)expected);
    if (!(difference <= largest)) largest = difference;
  }
  return largest;
}

/* ---------------------------------------------------------------------- */

/* One clip's features under each config against its golden entry. */
static void check_features(const goldens *set, const vlm_json_value *features, const char *name,
                           const float *samples, int64_t count, double tolerance) {
  for (int c = 0; c < 2; c++) {
    const vlm_json_value *entry = vlm_json_object_get(features, set->config_names[c]);
    CHECK(entry != NULL || (c > 0 && strcmp(name, "long_silence_15min_16k.flac") == 0));
    if (!entry) continue;
    const vlm_feature_extractor_config *config = &set->configs[c];
    vlm_tensor values;
    vlm_status status = vlm_phi4_audio_features(config, samples, count, NULL, &values);
    if (vlm_json_object_get(entry, "error")) {
      CHECK_ERROR(status, VLM_STATUS_INVALID_ARGUMENT, "too short");
      continue;
    }
    CHECK_OK(status);
    if (status) continue;
    const vlm_json_value *shape = vlm_json_object_get(entry, "shape");
    int64_t rows = -1, width = -1;
    vlm_json_get_int(vlm_json_array_get(shape, 0), &rows);
    vlm_json_get_int(vlm_json_array_get(shape, 1), &width);
    CHECK_INT_EQ(values.shape[0], rows);
    CHECK_INT_EQ(values.shape[1], width);
    CHECK_INT_EQ(vlm_phi4_audio_embed_size(config, values.shape[0]), int_of(entry, "audio_embed_sizes"));
    int64_t total = values.shape[0] * values.shape[1];
    const float *data = values.data;
    char digest[65];
    sha256_hex(data, (size_t)total * 4, digest);
    const char *tensor = string_of(entry, "tensor");
    double difference = 0;
    if (tensor) {
      difference = max_difference(set, tensor, data, total);
    } else { /* without a full tensor: the range (silence: all one value) */
      double low = NAN, high = NAN, own_low = INFINITY, own_high = -INFINITY;
      vlm_json_get_double(vlm_json_object_get(entry, "min"), &low);
      vlm_json_get_double(vlm_json_object_get(entry, "max"), &high);
      for (int64_t i = 0; i < total; i++) {
        if (data[i] < own_low) own_low = data[i];
        if (data[i] > own_high) own_high = data[i];
      }
      difference = fmax(fabs(own_low - low), fabs(own_high - high));
      if (low == high)
        for (int64_t i = 0; i < total; i++)
          if (fabs(data[i] - low) > difference) difference = fabs(data[i] - low);
    }
    bool exact = strcmp(digest, string_of(entry, "sha256")) == 0;
    printf("  features %-8s %-32s %5lld frames: %s, max |diff| %.3g\n", set->config_names[c], name,
           (long long)values.shape[0], exact ? "bit-exact" : "within tolerance", difference);
    CHECK(difference >= 0 && difference <= tolerance);
    vlm_tensor_release(&values);
  }
}

/* What vlm refuses that Transformers decodes (include/vlm/audio.h). */
static bool check_refused(const char *name, vlm_status status) {
  if (strcmp(name, "truncated.wav") == 0) {
    CHECK_ERROR(status, VLM_STATUS_DATA_LOSS, "truncated.wav: truncated: the WAV data chunk declares");
    return true;
  }
  return false;
}

static void check_file(const goldens *set, const char *fixtures, const vlm_json_value *entry, int *decoded) {
  const char *name = string_of(entry, "file");
  char path[1024];
  snprintf(path, sizeof(path), "%s/media/audio/%s", fixtures, name);
  const vlm_json_value *load = vlm_json_object_get(entry, "load_audio");
  /* The 15-minute clip is over the default limit; the limit is checked in
   * test_audio.c, the samples here. */
  vlm_audio_decode_options options = {.limits = {.max_seconds = 1000}};
  vlm_audio audio;
  vlm_status status = vlm_audio_decode_file(path, &options, &audio);
  if (vlm_json_object_get(load, "error")) {
    printf("  decode %-40s Transformers: %s; vlm: %s\n", name, string_of(vlm_json_object_get(load, "error"), "type"),
           status ? vlm_status_message(status) : "decoded");
    CHECK_ERROR(status, VLM_STATUS_DATA_LOSS, name);
    return;
  }
  if (check_refused(name, status)) {
    printf("  decode %-40s refused (Transformers decodes it)\n", name);
    return;
  }
  CHECK_OK(status);
  if (status) return;
  (*decoded)++;
  CHECK_INT_EQ(audio.count, int_of(load, "length"));
  CHECK_INT_EQ(audio.sample_rate, 16000);
  const vlm_json_value *info = vlm_json_object_get(entry, "info");
  CHECK_INT_EQ(audio.source_sample_rate, int_of(info, "samplerate"));
  CHECK_INT_EQ(audio.source_channels, int_of(info, "channels"));
  CHECK_INT_EQ(audio.source_frames, int_of(info, "frames"));
  char digest[65];
  sha256_hex(audio.samples, (size_t)audio.count * 4, digest);
  bool exact = strcmp(digest, string_of(load, "sha256")) == 0;
  double difference = exact ? 0 : max_difference(set, string_of(load, "tensor"), audio.samples, audio.count);
  printf("  decode %-40s %s %d Hz x%d -> %lld samples: %s, max |diff| %.3g\n", name,
         vlm_audio_format_name(audio.format), audio.source_sample_rate, audio.source_channels,
         (long long)audio.count, exact ? "bit-exact" : "differs", difference);
  if (audio.format == VLM_AUDIO_FORMAT_OGG_VORBIS) CHECK(difference >= 0 && difference <= OGG_TOLERANCE);
  else CHECK(exact);
  const vlm_json_value *features = vlm_json_object_get(entry, "features");
  const vlm_safetensors_entry *reference = find_tensor(set, string_of(load, "tensor"));
  if (exact || !reference) {
    check_features(set, features, name, audio.samples, audio.count, FEATURE_TOLERANCE);
  } else {
    /* The extractor on Transformers' own samples, then end to end: the
     * decode's 1e-7 grows where the log takes small mel energies. */
    float *samples = malloc((size_t)audio.count * 4);
    memcpy(samples, reference->data, (size_t)audio.count * 4);
    check_features(set, features, name, samples, audio.count, FEATURE_TOLERANCE);
    free(samples);
    printf("  (end to end, from vlm's own decode:)\n");
    check_features(set, features, name, audio.samples, audio.count, END_TO_END_TOLERANCE);
  }
  vlm_audio_release(&audio);
}

static void test_fixtures_match_transformers(void) {
  const char *fixtures = test_require_fixtures();
  if (!fixtures) return;
  goldens set;
  if (!goldens_open(&set)) return;
  const vlm_json_value *files = vlm_json_object_get(set.manifest.root, "files");
  int decoded = 0;
  for (size_t i = 0; i < files->as.array.count; i++) check_file(&set, fixtures, &files->as.array.items[i], &decoded);
  CHECK_INT_EQ(files->as.array.count, 15);
  CHECK_INT_EQ(decoded, 13);
  goldens_close(&set);
}

static void test_synthetic_clips_match_transformers(void) {
  goldens set;
  if (!goldens_open(&set)) return;
  const vlm_json_value *clips = vlm_json_object_get(set.manifest.root, "synthetic");
  CHECK(clips && clips->as.array.count == 6);
  for (size_t i = 0; clips && i < clips->as.array.count; i++) {
    const vlm_json_value *clip = &clips->as.array.items[i];
    const vlm_safetensors_entry *tensor = find_tensor(&set, string_of(clip, "tensor"));
    CHECK(tensor != NULL);
    if (!tensor) continue;
    int64_t count = (int64_t)(tensor->data_end - tensor->data_begin) / 4;
    CHECK_INT_EQ(count, int_of(clip, "length"));
    float *samples = malloc((size_t)count * 4 + 4);
    memcpy(samples, tensor->data, (size_t)count * 4);
    check_features(&set, vlm_json_object_get(clip, "features"), string_of(clip, "name"), samples, count,
                   FEATURE_TOLERANCE);
    free(samples);
  }
  goldens_close(&set);
}

/* self.mel_filters and the torch window the extractor multiplies by. */
static void test_filters_and_window_match_transformers(void) {
  goldens set;
  if (!goldens_open(&set)) return;
  for (int c = 0; c < 2; c++) {
    const vlm_feature_extractor_config *config = &set.configs[c];
    int64_t bins = config->n_fft / 2 + 1, count = bins * config->feature_size;
    float *filters = malloc((size_t)count * sizeof(float));
    CHECK_OK(vlm_phi4_audio_mel_filters(config, filters));
    char name[64];
    snprintf(name, sizeof(name), "filters/%s", set.config_names[c]);
    const vlm_safetensors_entry *tensor = find_tensor(&set, name);
    CHECK(tensor && tensor->shape[0] == bins && tensor->shape[1] == config->feature_size);
    if (tensor) CHECK(memcmp(tensor->data, filters, (size_t)count * 4) == 0);
    printf("  filters %-8s [%lld, %lld]: max |diff| %.3g\n", set.config_names[c], (long long)bins,
           (long long)config->feature_size, max_difference(&set, name, filters, count));
    free(filters);
    double *window = malloc((size_t)config->win_length * sizeof(double));
    vlm_phi4_audio_window(config, window);
    snprintf(name, sizeof(name), "window/%s", set.config_names[c]);
    tensor = find_tensor(&set, name);
    CHECK(tensor && tensor->dtype == VLM_DTYPE_F64 && tensor->shape[0] == config->win_length);
    int differing = 0;
    for (int64_t n = 0; tensor && n < config->win_length; n++) {
      double expected;
      memcpy(&expected, tensor->data + n * 8, 8);
      if (expected != window[n]) differing++;
      CHECK(fabs(expected - window[n]) <= 2.3e-16 * fabs(expected) + 1e-300);
    }
    printf("  window  %-8s %lld values: %d differ in the last bit\n", set.config_names[c],
           (long long)config->win_length, differing);
    free(window);
  }
  goldens_close(&set);
}

/* vlm's defaults table against the class's __init__ signature. */
static void test_defaults_match_the_class_signature(void) {
  goldens set;
  if (!goldens_open(&set)) return;
  const vlm_json_value *expected = vlm_json_object_get(set.manifest.root, "init_defaults");
  vlm_json_document table;
  const char *json = vlm_feature_extractor_defaults_json("Phi4MultimodalFeatureExtractor");
  CHECK_OK(vlm_json_parse(json, strlen(json), NULL, NULL, "defaults", &table));
  const vlm_json_value *fields = vlm_json_object_get(table.root, "fields");
  CHECK(expected && fields && expected->as.object.count == fields->as.object.count);
  for (size_t i = 0; expected && i < expected->as.object.count; i++) {
    const vlm_json_member *member = &expected->as.object.members[i];
    double want = NAN, have = NAN;
    vlm_json_get_double(&member->value, &want);
    vlm_json_get_double(vlm_json_object_get(fields, member->key), &have);
    if (want != have) fprintf(stderr, "  %s: vlm %g, Transformers %g\n", member->key, have, want);
    CHECK(want == have);
  }
  vlm_json_document_release(&table);
  /* The configs on disk load to what the oracle's extractor had. */
  CHECK_INT_EQ(set.configs[0].n_fft, 512);
  CHECK_INT_EQ(set.configs[0].feature_size, 80);
  CHECK_STR_EQ(set.configs[0].source, "preprocessor_config.json");
  CHECK_INT_EQ(set.configs[1].n_fft, 400);
  CHECK_INT_EQ(set.configs[1].win_length, 320);
  CHECK_INT_EQ(set.configs[1].hop_length, 100);
  CHECK_INT_EQ(set.configs[1].feature_size, 64);
  CHECK_INT_EQ(set.configs[1].audio_downsample_rate, 2);
  CHECK(set.configs[1].mel_min_frequency == 20 && set.configs[1].mel_max_frequency == 8000);
  CHECK(fabs(set.configs[1].preemphasis - 0.9) < 1e-15);
  CHECK_STR_EQ(set.configs[1].source, "processor_config.json (audio_processor)");
  goldens_close(&set);
}

TEST_MAIN(TEST(test_fixtures_match_transformers), TEST(test_synthetic_clips_match_transformers),
          TEST(test_filters_and_window_match_transformers), TEST(test_defaults_match_the_class_signature))
