/* Audio decode front end: sniffing, limits, libsndfile over the caller's
 * bytes, the downmix and the resampler (audio_resample.c). What the
 * samples are, and where vlm refuses more than the reference does, is in
 * include/vlm/audio.h; tests/test_audio.c checks every fixture against the
 * goldens of tools/oracle/media_goldens_audio.py. */
#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "io/file.h"
#include "media/audio_ogg.h"
#include "media/audio_resample.h"
#include "vlm/audio.h"

#define BLOCK_FRAMES 4096

/* ------------------------------------------------------------------------ */
/* Sniffing                                                                  */
/* ------------------------------------------------------------------------ */

static bool starts_with(const uint8_t *data, size_t size, const char *magic, size_t length) {
  return size >= length && memcmp(data, magic, length) == 0;
}

static bool contains(const uint8_t *data, size_t size, const char *needle, size_t length) {
  for (size_t i = 0; i + length <= size; i++)
    if (memcmp(data + i, needle, length) == 0) return true;
  return false;
}

/* An MPEG audio frame header (sync, a valid version, layer I-III). */
static bool is_mpeg_frame(const uint8_t *data, size_t size) {
  return size >= 4 && data[0] == 0xFF && (data[1] & 0xE0) == 0xE0 && (data[1] & 0x18) != 0x08 &&
         (data[1] & 0x06) != 0 && (data[2] & 0xF0) != 0xF0;
}

vlm_audio_format vlm_audio_format_sniff(const uint8_t *data, size_t size) {
  if (size >= 12 && memcmp(data, "RIFF", 4) == 0 && memcmp(data + 8, "WAVE", 4) == 0) return VLM_AUDIO_FORMAT_WAV;
  if (starts_with(data, size, "fLaC", 4)) return VLM_AUDIO_FORMAT_FLAC;
  /* The first Ogg page holds the codec's identification header. */
  if (starts_with(data, size, "OggS", 4) && contains(data, size < 128 ? size : 128, "\x01vorbis", 7))
    return VLM_AUDIO_FORMAT_OGG_VORBIS;
  if (starts_with(data, size, "ID3", 3) || is_mpeg_frame(data, size)) return VLM_AUDIO_FORMAT_MP3;
  return VLM_AUDIO_FORMAT_UNKNOWN;
}

const char *vlm_audio_format_name(vlm_audio_format format) {
  switch (format) {
    case VLM_AUDIO_FORMAT_WAV: return "WAV";
    case VLM_AUDIO_FORMAT_FLAC: return "FLAC";
    case VLM_AUDIO_FORMAT_OGG_VORBIS: return "Ogg Vorbis";
    case VLM_AUDIO_FORMAT_MP3: return "MP3";
    default: return "unknown";
  }
}

/* Audio vlm does not read, named, so the refusal says why. */
static const char *describe_other_audio(const uint8_t *data, size_t size) {
  if (starts_with(data, size, "OggS", 4)) {
    size_t head = size < 128 ? size : 128;
    if (contains(data, head, "OpusHead", 8)) return "Ogg Opus audio";
    if (contains(data, head, "\x7f" "FLAC", 5)) return "Ogg FLAC audio";
    if (contains(data, head, "theora", 6)) return "Ogg Theora video";
    return "an Ogg stream of another codec";
  }
  if (starts_with(data, size, "RF64", 4)) return "RF64 (64-bit WAV) audio";
  if (size >= 12 && memcmp(data, "FORM", 4) == 0 && (memcmp(data + 8, "AIFF", 4) == 0 || memcmp(data + 8, "AIFC", 4) == 0))
    return "AIFF audio";
  if (starts_with(data, size, ".snd", 4)) return "Sun/NeXT AU audio";
  if (starts_with(data, size, "caff", 4)) return "CAF audio";
  if (starts_with(data, size, "wvpk", 4)) return "WavPack audio";
  if (size >= 2 && data[0] == 0xFF && (data[1] & 0xF6) == 0xF0) return "AAC (ADTS) audio";
  if (size >= 12 && memcmp(data + 4, "ftyp", 4) == 0) return "MP4/M4A";
  if (starts_with(data, size, "\x1a\x45\xdf\xa3", 4)) return "Matroska/WebM";
  return NULL;
}

static const char *describe_non_audio(const uint8_t *data, size_t size) {
  if (size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) return "a JPEG image";
  if (starts_with(data, size, "\x89PNG\r\n\x1a\n", 8)) return "a PNG image";
  if (starts_with(data, size, "GIF8", 4)) return "a GIF image";
  if (size >= 12 && memcmp(data, "RIFF", 4) == 0 && memcmp(data + 8, "WEBP", 4) == 0) return "a WebP image";
  if (size >= 12 && memcmp(data, "RIFF", 4) == 0 && memcmp(data + 8, "AVI ", 4) == 0) return "AVI video";
  if (starts_with(data, size, "%PDF", 4)) return "a PDF document";
  size_t printable = 0, checked = size < 64 ? size : 64;
  for (size_t i = 0; i < checked; i++)
    if ((data[i] >= 0x20 && data[i] < 0x7F) || data[i] == '\n' || data[i] == '\r' || data[i] == '\t') printable++;
  if (checked > 0 && printable == checked) return "text";
  return NULL;
}

static vlm_status refuse_format(const uint8_t *data, size_t size) {
  static const char expected[] = "expected WAV, FLAC, Ogg Vorbis or MP3";
  if (size == 0) return VLM_ERROR(INVALID_ARGUMENT, "not audio: the data is empty");
  const char *what = describe_other_audio(data, size);
  if (what) return VLM_ERROR(UNIMPLEMENTED, "%s is not supported (%s)", what, expected);
  what = describe_non_audio(data, size);
  if (what) return VLM_ERROR(INVALID_ARGUMENT, "not audio: the data is %s (%s)", what, expected);
  char hex[3 * 8 + 1] = {0};
  size_t shown = size < 8 ? size : 8, length = 0;
  for (size_t i = 0; i < shown; i++) length += (size_t)snprintf(hex + length, sizeof(hex) - length, i ? " %02x" : "%02x", data[i]);
  return VLM_ERROR(INVALID_ARGUMENT, "not audio: unrecognized leading bytes %s (%s)", hex, expected);
}

/* ------------------------------------------------------------------------ */
/* WAV: a data chunk that runs past the end                                  */
/* ------------------------------------------------------------------------ */

static uint32_t read_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* libsndfile shortens a WAV whose data chunk declares more bytes than the
 * file holds and reads what is there (so does the reference); a clip cut
 * off in transit must not pass as a shorter one. Streaming writers that
 * cannot know the length put 0 or 0xFFFFFFFF there: those are read as
 * what they hold. */
static vlm_status check_wav_data_chunk(const uint8_t *data, size_t size) {
  size_t offset = 12;
  while (offset + 8 <= size) {
    uint32_t chunk = read_le32(data + offset + 4);
    if (memcmp(data + offset, "data", 4) == 0) {
      size_t available = size - offset - 8;
      if (chunk != 0 && chunk != UINT32_MAX && chunk > available)
        return VLM_ERROR(DATA_LOSS, "truncated: the WAV data chunk declares %u bytes but %zu are present", chunk,
                         available);
      return VLM_OK;
    }
    size_t advance = 8 + (size_t)chunk + (chunk & 1); /* chunks are word-aligned */
    if (advance > size - offset) return VLM_OK;   /* libsndfile reports it */
    offset += advance;
  }
  return VLM_OK;
}

/* ------------------------------------------------------------------------ */
/* libsndfile over a memory buffer                                           */
/* ------------------------------------------------------------------------ */

typedef struct memory_file {
  const uint8_t *data;
  sf_count_t size, position;
} memory_file;

static sf_count_t memory_length(void *context) { return ((memory_file *)context)->size; }

static sf_count_t memory_seek(sf_count_t offset, int whence, void *context) {
  memory_file *file = context;
  sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? file->position : file->size;
  sf_count_t target = base + offset;
  if (target < 0 || target > file->size) return -1;
  file->position = target;
  return target;
}

static sf_count_t memory_read(void *destination, sf_count_t count, void *context) {
  memory_file *file = context;
  sf_count_t left = file->size - file->position;
  if (count > left) count = left;
  if (count <= 0) return 0;
  memcpy(destination, file->data + file->position, (size_t)count);
  file->position += count;
  return count;
}

static sf_count_t memory_write(const void *source, sf_count_t count, void *context) {
  (void)source, (void)count, (void)context;
  return 0;
}

static sf_count_t memory_tell(void *context) { return ((memory_file *)context)->position; }

static bool container_matches(vlm_audio_format format, int sf_format) {
  int major = sf_format & SF_FORMAT_TYPEMASK;
  switch (format) {
    case VLM_AUDIO_FORMAT_WAV: return major == SF_FORMAT_WAV || major == SF_FORMAT_WAVEX;
    case VLM_AUDIO_FORMAT_FLAC: return major == SF_FORMAT_FLAC;
    case VLM_AUDIO_FORMAT_OGG_VORBIS: return major == SF_FORMAT_OGG && (sf_format & SF_FORMAT_SUBMASK) == SF_FORMAT_VORBIS;
    case VLM_AUDIO_FORMAT_MP3: return major == SF_FORMAT_MPEG;
    default: return false;
  }
}

/* ------------------------------------------------------------------------ */
/* Decoding                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct decode_job {
  vlm_audio_limits limits; /* resolved: no zero members */
  int sample_rate;
  const atomic_bool *cancel;
  const vlm_allocator *allocator;
} decode_job;

static bool cancelled(const decode_job *job) {
  return job->cancel && atomic_load_explicit(job->cancel, memory_order_relaxed);
}

/* The header's claims against the limits, before any sample buffer. */
static vlm_status check_header(const decode_job *job, const SF_INFO *info, int64_t *out_max_frames) {
  if (info->channels < 1 || info->channels > job->limits.max_channels)
    return VLM_ERROR(OUT_OF_RANGE, "%d channels: the limit is %d", info->channels, job->limits.max_channels);
  if (info->samplerate < 1 || info->samplerate > job->limits.max_sample_rate)
    return VLM_ERROR(OUT_OF_RANGE, "sample rate %d Hz: the limit is %d Hz", info->samplerate,
                     job->limits.max_sample_rate);
  double max_frames = floor(job->limits.max_seconds * info->samplerate);
  *out_max_frames = (int64_t)max_frames;
  if (info->frames != SF_COUNT_MAX && info->frames > *out_max_frames)
    return VLM_ERROR(OUT_OF_RANGE, "%.1f seconds (%lld frames at %d Hz): the limit is %g seconds",
                     (double)info->frames / info->samplerate, (long long)info->frames, info->samplerate,
                     job->limits.max_seconds);
  return VLM_OK;
}

/* The most frames a decode of this file can produce: a WAV's header count
 * is exact (libsndfile reads the data chunk, which check_wav_data_chunk
 * has held to the bytes present, and read_samples refuses more), while
 * FLAC, Vorbis and MP3 counts are the encoder's claim or libsndfile's
 * estimate, so only the duration limit bounds those. */
static int64_t frame_bound(vlm_audio_format format, const SF_INFO *info, int64_t max_frames) {
  if (format == VLM_AUDIO_FORMAT_WAV && info->frames >= 0 && info->frames != SF_COUNT_MAX &&
      info->frames < max_frames)
    return info->frames;
  return max_frames;
}

typedef struct mono_buffer {
  float *samples;
  int64_t count, capacity;
} mono_buffer;

static vlm_status mono_reserve(const decode_job *job, mono_buffer *buffer, int64_t needed, int64_t max_frames) {
  if (needed <= buffer->capacity) return VLM_OK;
  int64_t capacity = buffer->capacity ? buffer->capacity * 2 : BLOCK_FRAMES;
  if (capacity < needed) capacity = needed;
  if (capacity > max_frames + BLOCK_FRAMES) capacity = max_frames + BLOCK_FRAMES;
  float *grown = vlm_allocate(job->allocator, (size_t)capacity * sizeof(float), VLM_DEFAULT_ALIGNMENT);
  if (!grown) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory for %lld audio frames", (long long)capacity);
  if (buffer->count) memcpy(grown, buffer->samples, (size_t)buffer->count * sizeof(float));
  vlm_release(job->allocator, buffer->samples);
  buffer->samples = grown;
  buffer->capacity = capacity;
  return VLM_OK;
}

/* waveform.mean(axis=0) in float32: numpy's reduction starts from the first
 * channel and adds the others in order, then divides by the count. */
static vlm_status downmix_block(const float *block, sf_count_t frames, int channels, mono_buffer *mono) {
  float *out = mono->samples + mono->count;
  for (sf_count_t i = 0; i < frames; i++) {
    const float *frame = block + i * channels;
    float sum = frame[0];
    for (int c = 1; c < channels; c++) sum += frame[c];
    out[i] = channels > 1 ? sum / (float)channels : sum;
    /* A float WAV can hold NaN or infinity; no feature survives one. */
    if (!isfinite(out[i]))
      return VLM_ERROR(DATA_LOSS, "frame %lld is not a finite number", (long long)(mono->count + i));
  }
  mono->count += frames;
  return VLM_OK;
}

static vlm_status read_samples(const decode_job *job, SNDFILE *file, const SF_INFO *info, int64_t max_frames,
                               int64_t frame_limit, mono_buffer *mono) {
  float *block = malloc((size_t)BLOCK_FRAMES * (size_t)info->channels * sizeof(float));
  if (!block) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  /* The header's length sizes the first buffer only up to 4 MiB: a lying
   * header costs no more than what actually decodes. */
  int64_t first = info->frames != SF_COUNT_MAX && info->frames < max_frames ? info->frames : max_frames;
  if (first > (INT64_C(1) << 20)) first = INT64_C(1) << 20;
  vlm_status status = mono_reserve(job, mono, first < BLOCK_FRAMES ? BLOCK_FRAMES : first, max_frames);
  while (!status) {
    if (cancelled(job)) {
      status = VLM_ERROR(CANCELLED, "decoding cancelled");
      break;
    }
    sf_count_t got = sf_readf_float(file, block, BLOCK_FRAMES);
    if (got <= 0) break;
    if (mono->count + got > max_frames) {
      status = VLM_ERROR(OUT_OF_RANGE, "longer than the limit of %g seconds at %d Hz", job->limits.max_seconds,
                         info->samplerate);
      break;
    }
    if (mono->count + got > frame_limit) {
      status = VLM_ERROR(DATA_LOSS, "decodes past the %lld frames its header declares", (long long)frame_limit);
      break;
    }
    status = mono_reserve(job, mono, mono->count + got, max_frames);
    if (!status) status = downmix_block(block, got, info->channels, mono);
  }
  free(block);
  if (!status && sf_error(file) != SF_ERR_NO_ERROR)
    status = VLM_ERROR(DATA_LOSS, "corrupt audio data after %lld frames: %s", (long long)mono->count,
                       sf_strerror(file));
  if (!status && info->frames != SF_COUNT_MAX && mono->count < info->frames)
    status = VLM_ERROR(DATA_LOSS, "truncated: the header declares %lld frames but only %lld decode",
                       (long long)info->frames, (long long)mono->count);
  if (!status && mono->count == 0) status = VLM_ERROR(INVALID_ARGUMENT, "the audio is empty (no samples)");
  return status;
}

/* libsndfile over `memory` (which must outlive *out_file), the container
 * it reads held to the sniffed one, and the header against the limits
 * (check_header); on error nothing is left open. */
static vlm_status open_sound(const decode_job *job, memory_file *memory, vlm_audio_format format, SF_INFO *info,
                             int64_t *out_max_frames, SNDFILE **out_file) {
  *out_file = NULL;
  SF_VIRTUAL_IO io = {memory_length, memory_seek, memory_read, memory_write, memory_tell};
  memset(info, 0, sizeof(*info));
  SNDFILE *file = sf_open_virtual(&io, SFM_READ, info, memory);
  if (!file) return VLM_ERROR(DATA_LOSS, "cannot decode the %s data: %s", vlm_audio_format_name(format), sf_strerror(NULL));
  vlm_status status = VLM_OK;
  if (!container_matches(format, info->format))
    status = VLM_ERROR(DATA_LOSS, "the data starts like %s but libsndfile reads another format (0x%x)",
                       vlm_audio_format_name(format), (unsigned)info->format);
  if (!status) status = check_header(job, info, out_max_frames);
  if (status) sf_close(file);
  else *out_file = file;
  return status;
}

static vlm_status decode_samples(const decode_job *job, const uint8_t *data, size_t size, vlm_audio_format format,
                                 mono_buffer *mono, SF_INFO *info) {
  memory_file memory = {data, (sf_count_t)size, 0};
  int64_t max_frames = 0;
  SNDFILE *file = NULL;
  VLM_RETURN_IF_ERROR(open_sound(job, &memory, format, info, &max_frames, &file));
  vlm_status status = read_samples(job, file, info, max_frames, frame_bound(format, info, max_frames), mono);
  sf_close(file);
  return status;
}

/* The encoded size against its limit. */
static vlm_status check_size(const decode_job *job, size_t size) {
  if (size > job->limits.max_encoded_bytes)
    return VLM_ERROR(OUT_OF_RANGE, "%zu encoded bytes exceed the limit of %zu bytes", size,
                     job->limits.max_encoded_bytes);
  return VLM_OK;
}

/* The container from the bytes (and a WAV cut short, or Ogg Vorbis headers
 * libsndfile would leak on refusing: audio_ogg.c), before libsndfile sees
 * them. */
static vlm_status sniff_container(const uint8_t *data, size_t size, vlm_audio_format *out_format) {
  *out_format = vlm_audio_format_sniff(data, size);
  if (*out_format == VLM_AUDIO_FORMAT_UNKNOWN) return refuse_format(data, size);
  if (*out_format == VLM_AUDIO_FORMAT_WAV) return check_wav_data_chunk(data, size);
  if (*out_format == VLM_AUDIO_FORMAT_OGG_VORBIS) return vlm_ogg_vorbis_check_headers(data, size);
  return VLM_OK;
}

static vlm_status decode_memory(const decode_job *job, const uint8_t *data, size_t size, vlm_audio *out) {
  VLM_RETURN_IF_ERROR(check_size(job, size));
  if (cancelled(job)) return VLM_ERROR(CANCELLED, "decoding cancelled");
  vlm_audio_format format;
  VLM_RETURN_IF_ERROR(sniff_container(data, size, &format));
  mono_buffer mono = {0};
  SF_INFO info;
  vlm_status status = decode_samples(job, data, size, format, &mono, &info);
  if (!status && info.samplerate != job->sample_rate) {
    float *resampled = NULL;
    int64_t count = 0;
    status = vlm_audio_resample(mono.samples, mono.count, info.samplerate, job->sample_rate, job->cancel,
                                job->allocator, &resampled, &count);
    if (!status) {
      out->source_frames = mono.count;
      vlm_release(job->allocator, mono.samples);
      mono = (mono_buffer){resampled, count, count};
    }
  } else if (!status) {
    out->source_frames = mono.count;
  }
  if (status) {
    vlm_release(job->allocator, mono.samples);
    return status;
  }
  out->samples = mono.samples;
  out->count = mono.count;
  out->sample_rate = job->sample_rate;
  out->source_sample_rate = info.samplerate;
  out->source_channels = info.channels;
  out->format = format;
  out->allocator = job->allocator;
  return VLM_OK;
}

/* What decode_memory holds at its peak for at most `frames` frames: the
 * mono buffer while it doubles (old and new copies, each up to the bound
 * plus a block), the interleaved block, and the resampled copy beside the
 * mono samples. */
static uint64_t decode_peak_bytes(int64_t frames, int channels, int in_rate, int out_rate) {
  uint64_t mono = ((uint64_t)frames + BLOCK_FRAMES) * sizeof(float);
  uint64_t block = (uint64_t)BLOCK_FRAMES * (uint64_t)channels * sizeof(float);
  uint64_t resampled = in_rate == out_rate ? 0
                       : ((uint64_t)vlm_audio_resampled_length(frames, in_rate, out_rate) + 1) * sizeof(float);
  return 2 * mono + block + resampled;
}

static vlm_status read_header(const decode_job *job, const uint8_t *data, size_t size, vlm_audio_header *out) {
  VLM_RETURN_IF_ERROR(check_size(job, size));
  vlm_audio_format format;
  VLM_RETURN_IF_ERROR(sniff_container(data, size, &format));
  memory_file memory = {data, (sf_count_t)size, 0};
  SF_INFO info;
  int64_t max_frames = 0;
  SNDFILE *file = NULL;
  VLM_RETURN_IF_ERROR(open_sound(job, &memory, format, &info, &max_frames, &file));
  sf_close(file);
  int64_t bound = frame_bound(format, &info, max_frames);
  int64_t stated = info.frames >= 0 && info.frames != SF_COUNT_MAX && info.frames < bound ? (int64_t)info.frames : bound;
  *out = (vlm_audio_header){
      .format = format,
      .sample_rate = info.samplerate,
      .channels = info.channels,
      .frames = info.frames == SF_COUNT_MAX || info.frames < 0 ? -1 : (int64_t)info.frames,
      .max_frames = bound,
      .max_samples = info.samplerate == job->sample_rate
                         ? bound : vlm_audio_resampled_length(bound, info.samplerate, job->sample_rate),
      .decode_bytes = decode_peak_bytes(bound, info.channels, info.samplerate, job->sample_rate),
      .stated_samples = info.samplerate == job->sample_rate
                            ? stated : vlm_audio_resampled_length(stated, info.samplerate, job->sample_rate),
      .stated_decode_bytes = decode_peak_bytes(stated, info.channels, info.samplerate, job->sample_rate),
  };
  return VLM_OK;
}

static decode_job resolve_job(const vlm_audio_decode_options *options) {
  decode_job job = {0};
  const vlm_audio_limits *limits = options ? &options->limits : &job.limits;
  job.limits.max_encoded_bytes = limits->max_encoded_bytes ? limits->max_encoded_bytes : VLM_AUDIO_DEFAULT_MAX_ENCODED_BYTES;
  job.limits.max_seconds = limits->max_seconds > 0 ? limits->max_seconds : VLM_AUDIO_DEFAULT_MAX_SECONDS;
  job.limits.max_channels = limits->max_channels > 0 ? limits->max_channels : VLM_AUDIO_DEFAULT_MAX_CHANNELS;
  job.limits.max_sample_rate = limits->max_sample_rate > 0 ? limits->max_sample_rate : VLM_AUDIO_DEFAULT_MAX_SAMPLE_RATE;
  job.sample_rate = options && options->sample_rate > 0 ? options->sample_rate : 16000;
  job.cancel = options ? options->cancel : NULL;
  job.allocator = options ? options->allocator : NULL;
  return job;
}

/* The caller's arguments, checked as both entry points need them. */
static vlm_status prepare_job(const uint8_t *data, size_t size, const char *label,
                              const vlm_audio_decode_options *options, decode_job *out_job) {
  /* Filled before any return, so a caller's job is never read unset
   * (GCC 12 -O3 cannot see that an error return stops the caller). */
  *out_job = resolve_job(options);
  if (!data && size) return VLM_ERROR(INVALID_ARGUMENT, "%s: no data", label);
  if (!(out_job->limits.max_seconds <= 1e7) || out_job->sample_rate > out_job->limits.max_sample_rate * 16)
    return VLM_ERROR(INVALID_ARGUMENT, "%s: bad audio limits (%g seconds, output %d Hz)", label,
                     out_job->limits.max_seconds, out_job->sample_rate);
  return VLM_OK;
}

vlm_status vlm_audio_decode_memory(const uint8_t *data, size_t size, const char *name,
                                   const vlm_audio_decode_options *options, vlm_audio *out) {
  memset(out, 0, sizeof(*out));
  const char *label = name ? name : "audio";
  decode_job job;
  VLM_RETURN_IF_ERROR(prepare_job(data, size, label, options, &job));
  vlm_status status = decode_memory(&job, data ? data : (const uint8_t *)"", size, out);
  if (status) memset(out, 0, sizeof(*out));
  return vlm_status_annotate(status, "%s", label);
}

vlm_status vlm_audio_read_header(const uint8_t *data, size_t size, const char *name,
                                 const vlm_audio_decode_options *options, vlm_audio_header *out) {
  memset(out, 0, sizeof(*out));
  const char *label = name ? name : "audio";
  decode_job job;
  VLM_RETURN_IF_ERROR(prepare_job(data, size, label, options, &job));
  vlm_status status = read_header(&job, data ? data : (const uint8_t *)"", size, out);
  if (status) memset(out, 0, sizeof(*out));
  return vlm_status_annotate(status, "%s", label);
}

vlm_status vlm_audio_decode_file(const char *path, const vlm_audio_decode_options *options, vlm_audio *out) {
  memset(out, 0, sizeof(*out));
  const char *slash = strrchr(path, '/');
  const char *name = slash ? slash + 1 : path;
  size_t limit = options && options->limits.max_encoded_bytes ? options->limits.max_encoded_bytes
                                                              : VLM_AUDIO_DEFAULT_MAX_ENCODED_BYTES;
  char *data = NULL;
  size_t size = 0;
  /* vlm_file_read_all refuses an oversized file from its size, unread. */
  VLM_RETURN_IF_ERROR(vlm_file_read_all(path, limit, &data, &size));
  vlm_status status = vlm_audio_decode_memory((const uint8_t *)data, size, name, options, out);
  free(data);
  return status;
}

void vlm_audio_release(vlm_audio *audio) {
  if (!audio) return;
  if (audio->samples) vlm_release(audio->allocator, audio->samples);
  memset(audio, 0, sizeof(*audio));
}
