/* Audio decoding's front end (include/vlm/audio.h) on bytes made here:
 * sample conversion and downmix, limits refused before decoding, the
 * refusals (empty, not audio, unsupported containers, truncated, corrupt,
 * non-finite), cancellation; and the feature extractor's config
 * (src/io/feature_extractor_config.h) and registry. The fixtures and the
 * goldens are in test_audio_goldens.c. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "io/config.h"
#include "io/feature_extractor_config.h"
#include "io/file.h"
#include "media/audio_processors.h"
#include "media/media_item.h"
#include "test.h"
#include "vlm/audio.h"

/* A canonical PCM (format 1) or float (3) WAV; data_size_override != 0
 * writes that size into the data chunk header instead of the real one. */
typedef struct wav_spec {
  int channels, rate, bits, format;
  const void *samples;
  size_t sample_bytes;
  uint32_t data_size_override;
} wav_spec;

static void put32(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24); }
static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }

static uint8_t *make_wav(const wav_spec *spec, size_t *out_size) {
  size_t size = 44 + spec->sample_bytes;
  uint8_t *wav = calloc(1, size);
  memcpy(wav, "RIFF", 4), put32(wav + 4, (uint32_t)(size - 8)), memcpy(wav + 8, "WAVEfmt ", 8);
  put32(wav + 16, 16), put16(wav + 20, (uint32_t)spec->format), put16(wav + 22, (uint32_t)spec->channels);
  put32(wav + 24, (uint32_t)spec->rate);
  uint32_t block = (uint32_t)(spec->channels * spec->bits / 8);
  put32(wav + 28, (uint32_t)spec->rate * block), put16(wav + 32, block), put16(wav + 34, (uint32_t)spec->bits);
  memcpy(wav + 36, "data", 4);
  put32(wav + 40, spec->data_size_override ? spec->data_size_override : (uint32_t)spec->sample_bytes);
  if (spec->sample_bytes) memcpy(wav + 44, spec->samples, spec->sample_bytes);
  *out_size = size;
  return wav;
}

static vlm_status decode_wav(const wav_spec *spec, const vlm_audio_decode_options *options, vlm_audio *out) {
  size_t size = 0;
  uint8_t *wav = make_wav(spec, &size);
  vlm_status status = vlm_audio_decode_memory(wav, size, "clip.wav", options, out);
  free(wav);
  return status;
}

static void test_pcm_is_normalized_and_downmixed_as_soundfile_and_numpy(void) {
  const int16_t mono[4] = {0, 16384, -32768, 32767};
  vlm_audio audio;
  CHECK_OK(decode_wav(&(wav_spec){1, 16000, 16, 1, mono, sizeof(mono), 0}, NULL, &audio));
  CHECK_INT_EQ(audio.count, 4);
  CHECK(audio.samples[0] == 0.0f && audio.samples[1] == 0.5f && audio.samples[2] == -1.0f);
  CHECK(audio.samples[3] == 32767.0f / 32768.0f);
  CHECK(audio.format == VLM_AUDIO_FORMAT_WAV && audio.sample_rate == 16000 && audio.source_channels == 1);
  vlm_audio_release(&audio);
  /* Stereo: the float32 mean of the channels. */
  const int16_t stereo[4] = {16384, 0, -32768, 16384};
  CHECK_OK(decode_wav(&(wav_spec){2, 16000, 16, 1, stereo, sizeof(stereo), 0}, NULL, &audio));
  CHECK_INT_EQ(audio.count, 2);
  CHECK(audio.samples[0] == 0.25f && audio.samples[1] == -0.25f);
  CHECK_INT_EQ(audio.source_channels, 2);
  vlm_audio_release(&audio);
  /* Unsigned 8-bit is centred on 128. */
  const uint8_t unsigned8[3] = {128, 192, 0};
  CHECK_OK(decode_wav(&(wav_spec){1, 16000, 8, 1, unsigned8, sizeof(unsigned8), 0}, NULL, &audio));
  CHECK(audio.count == 3 && audio.samples[0] == 0.0f && audio.samples[1] == 0.5f && audio.samples[2] == -1.0f);
  vlm_audio_release(&audio);
}

static void test_resampling_keeps_transformers_length(void) {
  int16_t samples[1001];
  for (int i = 0; i < 1001; i++) samples[i] = (int16_t)(8000 * sin(i * 0.05));
  vlm_audio audio;
  vlm_audio_decode_options options = {.sample_rate = 8000};
  CHECK_OK(decode_wav(&(wav_spec){1, 16000, 16, 1, samples, sizeof(samples), 0}, &options, &audio));
  CHECK_INT_EQ(audio.count, 501); /* ceil(1001 * 8000 / 16000) */
  CHECK_INT_EQ(audio.sample_rate, 8000);
  CHECK_INT_EQ(audio.source_sample_rate, 16000);
  CHECK_INT_EQ(audio.source_frames, 1001);
  /* A low tone survives halving the rate (away from the edges). */
  CHECK_NEAR(audio.samples[250], samples[500] / 32768.0, 2e-3);
  vlm_audio_release(&audio);
}

static void test_limits_are_checked_before_decoding(void) {
  int16_t samples[64] = {0};
  vlm_audio audio;
  CHECK_ERROR(decode_wav(&(wav_spec){9, 16000, 16, 1, samples, 9 * 2 * 4, 0}, NULL, &audio), VLM_STATUS_OUT_OF_RANGE,
              "clip.wav: 9 channels: the limit is 8");
  CHECK(audio.samples == NULL && audio.count == 0);
  CHECK_ERROR(decode_wav(&(wav_spec){1, 384000, 16, 1, samples, sizeof(samples), 0}, NULL, &audio),
              VLM_STATUS_OUT_OF_RANGE, "sample rate 384000 Hz: the limit is 192000 Hz");
  vlm_audio_decode_options options = {.limits = {.max_seconds = 0.001}};
  CHECK_ERROR(decode_wav(&(wav_spec){1, 16000, 16, 1, samples, sizeof(samples), 0}, &options, &audio),
              VLM_STATUS_OUT_OF_RANGE, "seconds (64 frames at 16000 Hz): the limit is 0.001 seconds");
  options = (vlm_audio_decode_options){.limits = {.max_encoded_bytes = 100}};
  CHECK_ERROR(decode_wav(&(wav_spec){1, 16000, 16, 1, samples, sizeof(samples), 0}, &options, &audio),
              VLM_STATUS_OUT_OF_RANGE, "172 encoded bytes exceed the limit of 100 bytes");
  options = (vlm_audio_decode_options){.limits = {.max_channels = 1}};
  CHECK_ERROR(decode_wav(&(wav_spec){2, 16000, 16, 1, samples, sizeof(samples), 0}, &options, &audio),
              VLM_STATUS_OUT_OF_RANGE, "2 channels: the limit is 1");
}

/* A FLAC whose STREAMINFO claims ten hours, and no audio frames: refused
 * from the header, before a sample buffer exists. */
static void test_a_header_claiming_hours_is_refused_unread(void) {
  uint8_t flac[4 + 4 + 34] = {'f', 'L', 'a', 'C', 0x80, 0, 0, 34};
  uint8_t *info = flac + 8;
  info[0] = 0x10, info[1] = 0x00, info[2] = 0x10, info[3] = 0x00; /* block sizes 4096 */
  /* sample rate 16000 (20 bits), channels 1 (3 bits: 0), bits 16 (5 bits: 15), samples 576000000 (36 bits) */
  uint64_t total = 576000000ull, packed = ((uint64_t)16000 << 44) | ((uint64_t)0 << 41) | ((uint64_t)15 << 36) | total;
  for (int i = 0; i < 8; i++) info[10 + i] = (uint8_t)(packed >> (56 - 8 * i));
  vlm_audio audio;
  CHECK_ERROR(vlm_audio_decode_memory(flac, sizeof(flac), "long.flac", NULL, &audio), VLM_STATUS_OUT_OF_RANGE,
              "long.flac: 36000.0 seconds (576000000 frames at 16000 Hz): the limit is 600 seconds");
}

/* The header bombs of fuzz/corpus/audio_decode: headers claiming 65535
 * channels, a 2 GHz rate, a 4 GiB data chunk, 2^36 frames, 655 kHz x 8
 * channels of 32-bit samples. Each is refused from its header (or as
 * truncated) before a sample buffer sized by it exists: the process's
 * peak RSS barely moves. */
static void test_header_bombs_are_refused_without_their_memory(void) {
  static const struct {
    const char *name;
    vlm_status_code code;
    const char *message;
  } bombs[] = {
      {"bomb_wav_channels_65535.wav", VLM_STATUS_DATA_LOSS, "cannot decode the WAV data"},
      {"bomb_wav_rate_2000000000.wav", VLM_STATUS_OUT_OF_RANGE, "sample rate 2000000000 Hz: the limit is 192000 Hz"},
      {"bomb_wav_data_4294967294.wav", VLM_STATUS_DATA_LOSS, "declares 4294967294 bytes"},
      {"bomb_flac_hours.flac", VLM_STATUS_OUT_OF_RANGE, "the limit is 600 seconds"},
      {"bomb_flac_rate_655350_8ch.flac", VLM_STATUS_OUT_OF_RANGE, "sample rate 655350 Hz: the limit is 192000 Hz"},
  };
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  long before = usage.ru_maxrss;
  for (size_t i = 0; i < sizeof(bombs) / sizeof(bombs[0]); i++) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/fuzz/corpus/audio_decode/%s", VLM_SOURCE_DIR, bombs[i].name);
    vlm_audio audio;
    fprintf(stderr, "  %s\n", bombs[i].name);
    CHECK_ERROR(vlm_audio_decode_file(path, NULL, &audio), bombs[i].code, bombs[i].message);
    vlm_audio_release(&audio);
  }
  getrusage(RUSAGE_SELF, &usage);
  printf("  audio header bombs: peak RSS +%ld KiB\n", usage.ru_maxrss - before);
  CHECK(usage.ru_maxrss - before < 16 * 1024);
}

/* The header alone: the same refusals as a decode, and a bound on what
 * the decode will hold that the decode keeps to (the media memory budget
 * reserves it before decoding). */
static void test_the_header_bounds_the_decode(void) {
  int16_t samples[1001] = {0};
  size_t size = 0;
  uint8_t *wav = make_wav(&(wav_spec){2, 32000, 16, 1, samples, sizeof(samples), 0}, &size);
  vlm_audio_header header;
  CHECK_OK(vlm_audio_read_header(wav, size, "clip.wav", NULL, &header));
  CHECK(header.format == VLM_AUDIO_FORMAT_WAV && header.channels == 2 && header.sample_rate == 32000);
  CHECK_INT_EQ(header.frames, 500);
  CHECK_INT_EQ(header.max_frames, 500); /* a WAV's count is exact */
  CHECK_INT_EQ(header.max_samples, 250);
  /* mono twice while it grows, the interleaved block, the resampled copy */
  CHECK_INT_EQ(header.decode_bytes, 2 * (500 + 4096) * 4 + 4096 * 2 * 4 + (250 + 1) * 4);
  vlm_audio audio;
  CHECK_OK(vlm_audio_decode_memory(wav, size, "clip.wav", NULL, &audio));
  CHECK_INT_EQ(audio.count, header.max_samples);
  vlm_audio_release(&audio);
  free(wav);
  /* Refused as the decode refuses them, without decoding. */
  wav = make_wav(&(wav_spec){9, 16000, 16, 1, samples, 9 * 2 * 4, 0}, &size);
  CHECK_ERROR(vlm_audio_read_header(wav, size, "clip.wav", NULL, &header), VLM_STATUS_OUT_OF_RANGE,
              "clip.wav: 9 channels: the limit is 8");
  CHECK_INT_EQ(header.decode_bytes, 0);
  free(wav);
  CHECK_ERROR(vlm_audio_read_header((const uint8_t *)"hello", 5, "x", NULL, &header), VLM_STATUS_INVALID_ARGUMENT,
              "x: not audio");
  /* A compressed file's count is a claim: the duration limit bounds it. */
  const char *fixtures = test_require_fixtures();
  if (!fixtures) return;
  char path[1024];
  snprintf(path, sizeof(path), "%s/media/audio/speech_quick_fox.mp3", fixtures);
  char *data = NULL;
  size_t data_size = 0;
  CHECK_OK(vlm_file_read_all(path, 1 << 24, &data, &data_size));
  vlm_audio_decode_options options = {.limits = {.max_seconds = 30}};
  CHECK_OK(vlm_audio_read_header((const uint8_t *)data, data_size, "fox.mp3", &options, &header));
  CHECK(header.format == VLM_AUDIO_FORMAT_MP3);
  CHECK_INT_EQ(header.max_frames, 30 * (int64_t)header.sample_rate);
  CHECK_OK(vlm_audio_decode_memory((const uint8_t *)data, data_size, "fox.mp3", &options, &audio));
  CHECK(audio.count <= header.max_samples);
  vlm_audio_release(&audio);
  free(data);
}

static void test_bad_bytes_are_refused_by_name(void) {
  vlm_audio audio;
  CHECK_ERROR(vlm_audio_decode_memory(NULL, 0, "empty.wav", NULL, &audio), VLM_STATUS_INVALID_ARGUMENT,
              "empty.wav: not audio: the data is empty");
  const char text[] = "this is not a sound file at all";
  CHECK_ERROR(vlm_audio_decode_memory((const uint8_t *)text, sizeof(text) - 1, "a.mp3", NULL, &audio),
              VLM_STATUS_INVALID_ARGUMENT, "a.mp3: not audio: the data is text (expected WAV, FLAC, Ogg Vorbis or MP3)");
  const uint8_t png[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  CHECK_ERROR(vlm_audio_decode_memory(png, sizeof(png), "x", NULL, &audio), VLM_STATUS_INVALID_ARGUMENT,
              "not audio: the data is a PNG image");
  const uint8_t binary[8] = {0x00, 0x01, 0x02, 0x03, 0xfe, 0x05, 0x06, 0x07};
  CHECK_ERROR(vlm_audio_decode_memory(binary, sizeof(binary), "x", NULL, &audio), VLM_STATUS_INVALID_ARGUMENT,
              "unrecognized leading bytes 00 01 02 03 fe 05 06 07");
  uint8_t opus[64] = {'O', 'g', 'g', 'S', 0};
  memcpy(opus + 28, "OpusHead", 8);
  CHECK_ERROR(vlm_audio_decode_memory(opus, sizeof(opus), "x.ogg", NULL, &audio), VLM_STATUS_UNIMPLEMENTED,
              "Ogg Opus audio is not supported");
  uint8_t aiff[16] = {'F', 'O', 'R', 'M', 0, 0, 0, 8, 'A', 'I', 'F', 'F'};
  CHECK_ERROR(vlm_audio_decode_memory(aiff, sizeof(aiff), "x", NULL, &audio), VLM_STATUS_UNIMPLEMENTED,
              "AIFF audio is not supported");
  /* Starts like a WAV, is not one. */
  uint8_t broken[20] = {'R', 'I', 'F', 'F', 12, 0, 0, 0, 'W', 'A', 'V', 'E', 'f', 'm', 't', ' ', 0xff, 0xff, 0, 0};
  CHECK_ERROR(vlm_audio_decode_memory(broken, sizeof(broken), "b.wav", NULL, &audio), VLM_STATUS_DATA_LOSS,
              "b.wav: cannot decode the WAV data");
  CHECK(audio.samples == NULL);
  CHECK_ERROR(vlm_audio_decode_file("/nonexistent/clip.wav", NULL, &audio), VLM_STATUS_NOT_FOUND, "clip.wav");
}

static void test_truncated_empty_and_non_finite_audio_are_refused(void) {
  int16_t samples[100] = {0};
  vlm_audio audio;
  /* The data chunk says 400 bytes, 200 follow. */
  CHECK_ERROR(decode_wav(&(wav_spec){1, 16000, 16, 1, samples, 200, 400}, NULL, &audio), VLM_STATUS_DATA_LOSS,
              "clip.wav: truncated: the WAV data chunk declares 400 bytes but 200 are present");
  /* A streaming writer's "unknown length" is read as what is there. */
  CHECK_OK(decode_wav(&(wav_spec){1, 16000, 16, 1, samples, 200, UINT32_MAX}, NULL, &audio));
  CHECK_INT_EQ(audio.count, 100);
  vlm_audio_release(&audio);
  CHECK_ERROR(decode_wav(&(wav_spec){1, 16000, 16, 1, samples, 0, 0}, NULL, &audio), VLM_STATUS_INVALID_ARGUMENT,
              "clip.wav: the audio is empty");
  float floats[4] = {0.5f, NAN, 0.25f, 0};
  CHECK_ERROR(decode_wav(&(wav_spec){1, 16000, 32, 3, floats, sizeof(floats), 0}, NULL, &audio), VLM_STATUS_DATA_LOSS,
              "clip.wav: frame 1 is not a finite number");
  floats[1] = -0.75f;
  CHECK_OK(decode_wav(&(wav_spec){1, 16000, 32, 3, floats, sizeof(floats), 0}, NULL, &audio));
  CHECK(audio.count == 4 && audio.samples[1] == -0.75f);
  vlm_audio_release(&audio);
}

static void test_a_cancelled_decode_stops(void) {
  int16_t samples[16000] = {0};
  atomic_bool cancel;
  atomic_init(&cancel, true);
  vlm_audio_decode_options options = {.cancel = &cancel};
  vlm_audio audio;
  CHECK_ERROR(decode_wav(&(wav_spec){1, 22050, 16, 1, samples, sizeof(samples), 0}, &options, &audio),
              VLM_STATUS_CANCELLED, "cancelled");
}

static void test_the_long_fixture_is_over_the_default_limit(void) {
  const char *fixtures = test_require_fixtures();
  if (!fixtures) return;
  char path[1024];
  snprintf(path, sizeof(path), "%s/media/audio/long_silence_15min_16k.flac", fixtures);
  vlm_audio audio;
  CHECK_ERROR(vlm_audio_decode_file(path, NULL, &audio), VLM_STATUS_OUT_OF_RANGE,
              "long_silence_15min_16k.flac: 900.0 seconds (14400000 frames at 16000 Hz): the limit is 600 seconds");
}

/* Ogg pages rewritten with their CRC (framing spec: polynomial 0x04c11db7,
 * not reflected, initial 0, over the page with its CRC field zeroed). */
static void ogg_set_crc(uint8_t *page, size_t page_size) {
  memset(page + 22, 0, 4);
  uint32_t crc = 0;
  for (size_t i = 0; i < page_size; i++) {
    crc ^= (uint32_t)page[i] << 24;
    for (int bit = 0; bit < 8; bit++) crc = crc & 0x80000000u ? crc << 1 ^ 0x04c11db7u : crc << 1;
  }
  put32(page + 22, crc);
}

static size_t ogg_page_size(const uint8_t *page) {
  size_t segments = page[26], body = 0;
  for (size_t i = 0; i < segments; i++) body += page[27 + i];
  return 27 + segments + body;
}

typedef enum { OGG_CUT, OGG_FIRST_PAGE_EOS, OGG_SECOND_PAGE_OTHER_STREAM, OGG_SECOND_PAGE_SKIPPED_SEQUENCE,
               OGG_BAD_IDENTIFICATION, OGG_BAD_SETUP, OGG_FIRST_PAGE_EXTRA_PACKET } ogg_damage;

/* speech_quick_fox.ogg (its first page holds the identification header,
 * its second the comment and setup headers) damaged one way. */
static vlm_status decode_damaged_ogg(const uint8_t *clip, size_t clip_size, ogg_damage damage, size_t cut) {
  uint8_t *data = malloc(clip_size + 64);
  CHECK(data != NULL);
  memcpy(data, clip, clip_size);
  size_t size = clip_size, first = ogg_page_size(data), second = ogg_page_size(data + first);
  uint8_t *page2 = data + first;
  switch (damage) {
    case OGG_CUT: size = cut; break;
    case OGG_FIRST_PAGE_EOS: data[5] |= 4, ogg_set_crc(data, first); break;
    case OGG_SECOND_PAGE_OTHER_STREAM: page2[14] ^= 1, ogg_set_crc(page2, second); break;
    case OGG_SECOND_PAGE_SKIPPED_SEQUENCE: page2[18] += 1, ogg_set_crc(page2, second); break;
    case OGG_BAD_IDENTIFICATION: data[28 + 1 + 6 + 4] = 0, ogg_set_crc(data, first); break; /* 0 channels */
    case OGG_BAD_SETUP: { /* the setup packet's codebook sync pattern */
      uint8_t *setup = NULL;
      for (size_t i = first; i + 7 < first + second; i++)
        if (memcmp(data + i, "\x05vorbis", 7) == 0) setup = data + i;
      CHECK(setup != NULL);
      setup[8] ^= 0xff;
      ogg_set_crc(page2, second);
      break;
    }
    case OGG_FIRST_PAGE_EXTRA_PACKET: { /* a second, 1-byte packet after the identification header */
      CHECK(data[26] == 1);
      size_t packet = data[27];
      memmove(data + first + 2, data + first, clip_size - first); /* the pages after it */
      memmove(data + 29, data + 28, packet);
      data[26] = 2, data[27] = (uint8_t)packet, data[28] = 1;
      data[29 + packet] = 0;
      size = clip_size + 2;
      ogg_set_crc(data, first + 2);
      break;
    }
  }
  vlm_audio audio;
  vlm_status status = vlm_audio_decode_memory(data, size, "fox.ogg", NULL, &audio);
  if (!status) vlm_audio_release(&audio);
  free(data);
  return status;
}

/* libsndfile 1.2.0 leaks ~6 KB of libvorbis state on each of these when it
 * reads them itself (LeakSanitizer names vorbis_info_init): audio_ogg.c
 * refuses them first. The clip itself still decodes. */
static void test_damaged_ogg_vorbis_headers_are_refused_before_libsndfile(void) {
  const char *fixtures = test_require_fixtures();
  if (!fixtures) return;
  char path[1024];
  snprintf(path, sizeof(path), "%s/media/audio/speech_quick_fox.ogg", fixtures);
  char *clip = NULL;
  size_t size = 0;
  CHECK_OK(vlm_file_read_all(path, 1 << 24, &clip, &size));
  const uint8_t *bytes = (const uint8_t *)clip;
  size_t first = ogg_page_size(bytes), second = ogg_page_size(bytes + first);
  CHECK_OK(decode_damaged_ogg(bytes, size, OGG_CUT, size));
  const char *ends = "the data ends before the Vorbis comment and setup headers";
  CHECK_ERROR(decode_damaged_ogg(bytes, size, OGG_CUT, first), VLM_STATUS_DATA_LOSS, ends);
  CHECK_ERROR(decode_damaged_ogg(bytes, size, OGG_CUT, first + second / 2), VLM_STATUS_DATA_LOSS, ends);
  CHECK_ERROR(decode_damaged_ogg(bytes, size, OGG_FIRST_PAGE_EOS, 0), VLM_STATUS_DATA_LOSS,
              "the Ogg stream ends before its Vorbis comment and setup headers");
  CHECK_ERROR(decode_damaged_ogg(bytes, size, OGG_SECOND_PAGE_OTHER_STREAM, 0), VLM_STATUS_DATA_LOSS,
              "a Vorbis header is missing data (a hole in the Ogg stream)");
  CHECK_ERROR(decode_damaged_ogg(bytes, size, OGG_SECOND_PAGE_SKIPPED_SEQUENCE, 0), VLM_STATUS_DATA_LOSS,
              "a Vorbis header is missing data (a hole in the Ogg stream)");
  CHECK_ERROR(decode_damaged_ogg(bytes, size, OGG_BAD_IDENTIFICATION, 0), VLM_STATUS_DATA_LOSS,
              "fox.ogg: cannot decode the Ogg Vorbis data: the Vorbis identification header is corrupt");
  CHECK_ERROR(decode_damaged_ogg(bytes, size, OGG_BAD_SETUP, 0), VLM_STATUS_DATA_LOSS,
              "the Vorbis setup header is corrupt");
  CHECK_ERROR(decode_damaged_ogg(bytes, size, OGG_FIRST_PAGE_EXTRA_PACKET, 0), VLM_STATUS_DATA_LOSS,
              "the first Ogg page holds more than the Vorbis identification header");
  vlm_audio_header header;
  CHECK_ERROR(vlm_audio_read_header(bytes, first, "fox.ogg", NULL, &header), VLM_STATUS_DATA_LOSS, ends);
  free(clip);
}

/* ---------------------------------------------------------------------- */
/* The feature extractor's config and the registry                         */
/* ---------------------------------------------------------------------- */

static vlm_status parse(const char *preprocessor, const char *processor, vlm_feature_extractor_config *out) {
  return vlm_feature_extractor_config_parse(preprocessor, preprocessor ? strlen(preprocessor) : 0, processor,
                                            processor ? strlen(processor) : 0, NULL, out);
}

static void test_feature_extractor_config_is_found_where_transformers_looks(void) {
  vlm_feature_extractor_config config;
  CHECK_OK(parse("{\"feature_extractor_type\": \"Phi4MultimodalFeatureExtractor\", \"hop_length\": 80}", NULL, &config));
  CHECK(config.supported);
  CHECK_INT_EQ(config.hop_length, 80);
  CHECK_INT_EQ(config.n_fft, 512); /* the class default */
  CHECK_STR_EQ(config.source, "preprocessor_config.json");
  const vlm_audio_processor_class *processor = NULL;
  CHECK_OK(vlm_audio_processor_find(&config, &processor));
  CHECK(processor && strcmp(processor->name, "Phi4MultimodalFeatureExtractor") == 0);
  vlm_feature_extractor_config_release(&config);
  /* A nested "feature_extractor" wins over "audio_processor" and the file. */
  CHECK_OK(parse("{\"feature_extractor_type\": \"Phi4MultimodalFeatureExtractor\", \"hop_length\": 80}",
                 "{\"audio_processor\": {\"feature_extractor_type\": \"Phi4MultimodalFeatureExtractor\", "
                 "\"hop_length\": 120}, \"feature_extractor\": {\"feature_extractor_type\": "
                 "\"Phi4MultimodalFeatureExtractor\", \"hop_length\": 100}}",
                 &config));
  CHECK_INT_EQ(config.hop_length, 100);
  CHECK_STR_EQ(config.source, "processor_config.json (feature_extractor)");
  vlm_feature_extractor_config_release(&config);
  /* Image models have none. */
  CHECK_ERROR(parse("{\"image_processor_type\": \"CLIPImageProcessor\"}", NULL, &config), VLM_STATUS_NOT_FOUND,
              "no feature extractor");
  CHECK_ERROR(parse("{\"feature_extractor_type\": \"CLIPFeatureExtractor\"}", NULL, &config), VLM_STATUS_NOT_FOUND,
              "no feature extractor");
  CHECK_ERROR(parse(NULL, "{\"image_processor\": {}}", &config), VLM_STATUS_NOT_FOUND, "no feature extractor");
  /* ... and an audio model's preprocessor_config.json has no image processor. */
  vlm_processor_config image;
  const char *audio_only = "{\"feature_extractor_type\": \"Phi4MultimodalFeatureExtractor\"}";
  CHECK_ERROR(vlm_processor_config_parse(audio_only, strlen(audio_only), NULL, 0, NULL, &image), VLM_STATUS_NOT_FOUND,
              "names the feature extractor Phi4MultimodalFeatureExtractor");
}

static void test_feature_extractor_config_refuses_what_cannot_be_computed(void) {
  vlm_feature_extractor_config config;
  CHECK_ERROR(parse("{\"feature_extractor_type\": \"Phi4MultimodalFeatureExtractor\", \"hop_length\": null}", NULL,
                    &config),
              VLM_STATUS_INVALID_ARGUMENT, "hop_length");
  CHECK_ERROR(parse("{\"feature_extractor_type\": \"Phi4MultimodalFeatureExtractor\", \"win_length\": 600}", NULL,
                    &config),
              VLM_STATUS_INVALID_ARGUMENT, "win_length (600) must not exceed n_fft (512)");
  CHECK_ERROR(parse("{\"feature_extractor_type\": \"Phi4MultimodalFeatureExtractor\", \"mel_min_frequency\": 9000}",
                    NULL, &config),
              VLM_STATUS_INVALID_ARGUMENT, "must not exceed mel_max_frequency");
  CHECK_ERROR(parse(NULL, "{\"audio_processor\": 3}", &config), VLM_STATUS_INVALID_ARGUMENT, "audio_processor");
  /* A class vlm does not know loads, and is refused by the registry. */
  CHECK_OK(parse("{\"feature_extractor_type\": \"WhisperFeatureExtractor\", \"n_fft\": 400}", NULL, &config));
  CHECK(!config.supported);
  const vlm_audio_processor_class *processor = NULL;
  CHECK_ERROR(vlm_audio_processor_find(&config, &processor), VLM_STATUS_UNIMPLEMENTED,
              "feature extractor 'WhisperFeatureExtractor' is not supported yet (supported: "
              "Phi4MultimodalFeatureExtractor)");
  vlm_feature_extractor_config_release(&config);
}

static void test_the_registry_makes_an_audio_item(void) {
  vlm_feature_extractor_config config;
  CHECK_OK(parse("{\"feature_extractor_type\": \"Phi4MultimodalFeatureExtractor\"}", NULL, &config));
  const vlm_audio_processor_class *processor = NULL;
  CHECK_OK(vlm_audio_processor_find(&config, &processor));
  float samples[16000];
  for (int i = 0; i < 16000; i++) samples[i] = (float)(0.3 * sin(i * 0.1));
  vlm_media_item item = {.kind = VLM_MEDIA_AUDIO};
  CHECK_OK(processor->preprocess(&config, samples, 16000, NULL, &item));
  const vlm_named_tensor *features = vlm_media_item_tensor(&item, "audio_input_features");
  const vlm_named_tensor *sizes = vlm_media_item_tensor(&item, "audio_embed_sizes");
  CHECK(features && features->rank == 2 && features->shape[0] == 98 && features->shape[1] == 80);
  CHECK(sizes && sizes->dtype == VLM_DTYPE_I32 && ((const int32_t *)sizes->data)[0] == 13);
  CHECK(item.grid[0] == 1 && item.grid[1] == 98 && item.grid[2] == 80);
  vlm_media_item_release(&item);
  vlm_media_item short_item = {.kind = VLM_MEDIA_AUDIO};
  CHECK_ERROR(processor->preprocess(&config, samples, 399, NULL, &short_item), VLM_STATUS_INVALID_ARGUMENT,
              "the audio is too short: 399 samples at 16000 Hz, Phi4MultimodalFeatureExtractor needs at least one "
              "window of 400");
  vlm_media_item_release(&short_item);
  vlm_feature_extractor_config_release(&config);
}

TEST_MAIN(TEST(test_pcm_is_normalized_and_downmixed_as_soundfile_and_numpy),
          TEST(test_resampling_keeps_transformers_length), TEST(test_limits_are_checked_before_decoding),
          TEST(test_a_header_claiming_hours_is_refused_unread),
          TEST(test_header_bombs_are_refused_without_their_memory), TEST(test_the_header_bounds_the_decode),
          TEST(test_bad_bytes_are_refused_by_name),
          TEST(test_truncated_empty_and_non_finite_audio_are_refused), TEST(test_a_cancelled_decode_stops),
          TEST(test_the_long_fixture_is_over_the_default_limit),
          TEST(test_damaged_ogg_vorbis_headers_are_refused_before_libsndfile),
          TEST(test_feature_extractor_config_is_found_where_transformers_looks),
          TEST(test_feature_extractor_config_refuses_what_cannot_be_computed),
          TEST(test_the_registry_makes_an_audio_item))
