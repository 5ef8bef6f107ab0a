/* Audio decoding (SPEC 2.1): WAV, FLAC, Ogg Vorbis and MP3 into owned mono
 * float32 samples at the rate a feature extractor wants, with limits
 * checked before anything large is allocated and a cancellation flag
 * polled between blocks.
 *
 * What the samples are: transformers 5.23.0 `load_audio(x, sampling_rate,
 * backend="soundfile")` (audio_utils._load_audio_soundfile), the path
 * `librosa.load` also takes:
 *   - decoded by libsndfile (Debian's; the PyPI soundfile 0.14.0 wheel
 *     bundles libsndfile 1.2.2) as float32, normalized as sf_readf_float
 *     does (PCM / 2^(bits-1), unsigned 8-bit centred first);
 *   - several channels averaged in float32 (numpy's waveform.mean(axis=0):
 *     a sequential sum from the first channel, then / channels);
 *   - resampled, when the file's rate differs, by libsoxr at quality HQ as
 *     python-soxr 1.1.0's soxr.resample does it (float32 split-channel I/O,
 *     input fed in chunks of max(1000, 48000 * in / out) samples into an
 *     output buffer of in_samples * out / in + 1, then flushed), then padded
 *     with zeros or cut to ceil(in_samples * out / in).
 * tests/goldens/media_audio holds the reference for every fixture: WAV,
 * FLAC and MP3 decode bit-exactly; Ogg Vorbis differs by at most ~2e-7
 * (the wheel's libvorbis build, not the method; docs in
 * tools/oracle/README.md).
 *
 * Where vlm refuses what the reference accepts (fail closed): a file that
 * ends before the length its header declares (libsndfile silently returns
 * what is there), containers other than the four above (libsndfile reads
 * AIFF, AU, CAF, ...; Ogg Opus too), and anything over the limits.
 *
 * A worker API with no global state: any number of decodes may run at
 * once, each on its caller's thread (the server's connection threads,
 * never the scheduler's). */
#ifndef VLM_AUDIO_H
#define VLM_AUDIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdatomic.h>
#endif

#include "vlm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VLM_AUDIO_DEFAULT_MAX_ENCODED_BYTES ((size_t)20 << 20) /* 20 MiB */
#define VLM_AUDIO_DEFAULT_MAX_SECONDS 600.0                    /* 10 minutes */
#define VLM_AUDIO_DEFAULT_MAX_CHANNELS 8
#define VLM_AUDIO_DEFAULT_MAX_SAMPLE_RATE 192000

typedef struct vlm_audio_limits {
  size_t max_encoded_bytes; /* size of the file or buffer */
  double max_seconds;       /* duration, from the header before decoding and as decoded */
  int max_channels;
  int max_sample_rate;      /* of the file (Hz) */
} vlm_audio_limits;

typedef struct vlm_audio_decode_options {
  vlm_audio_limits limits;       /* zero members: the defaults above */
  int sample_rate;               /* output rate; 0: 16000 */
#ifndef __cplusplus
  const atomic_bool *cancel;     /* NULL or a flag another thread may set */
#else
  const void *cancel;
#endif
  const vlm_allocator *allocator; /* NULL: system allocator */
} vlm_audio_decode_options;

typedef enum vlm_audio_format {
  VLM_AUDIO_FORMAT_UNKNOWN = 0,
  VLM_AUDIO_FORMAT_WAV,
  VLM_AUDIO_FORMAT_FLAC,
  VLM_AUDIO_FORMAT_OGG_VORBIS,
  VLM_AUDIO_FORMAT_MP3,
} vlm_audio_format;

/* Owned mono float32 samples. */
typedef struct vlm_audio {
  float *samples;
  int64_t count;
  int sample_rate;            /* of `samples` (the requested rate) */
  int source_sample_rate;     /* of the file */
  int source_channels;
  int64_t source_frames;      /* frames decoded from the file */
  vlm_audio_format format;    /* what the bytes were */
  const vlm_allocator *allocator;
} vlm_audio;

/* The format from the first bytes (never the file name). MPEG audio (an
 * ID3 tag or a frame sync) is reported as MP3. */
vlm_audio_format vlm_audio_format_sniff(const uint8_t *data, size_t size);
const char *vlm_audio_format_name(vlm_audio_format format);

/* Decodes `size` bytes. `name` (e.g. the file name; NULL: "audio")
 * prefixes every error: "clip.wav: truncated: ...". Options may be NULL.
 * Errors: OUT_OF_RANGE for limits, DATA_LOSS for corrupt or truncated data,
 * INVALID_ARGUMENT for bytes that are not audio (an image, text, nothing),
 * UNIMPLEMENTED for audio in a container vlm does not read, CANCELLED when
 * the flag was set. On error *out is zeroed. */
vlm_status vlm_audio_decode_memory(const uint8_t *data, size_t size, const char *name,
                                   const vlm_audio_decode_options *options, vlm_audio *out);
/* What a file's header says, checked against the limits, and the most a
 * decode of it can hold: read before decoding so callers can budget
 * memory across requests (vlm_engine_options.media_memory_budget). */
typedef struct vlm_audio_header {
  vlm_audio_format format;
  int sample_rate;        /* of the file */
  int channels;
  int64_t frames;         /* the header's count; -1: not stated */
  /* The most frames a decode can produce: a WAV's header count (exact; a
   * decode past it fails), otherwise the duration limit at the file's
   * rate (FLAC, Vorbis and MP3 counts are claims, not bounds). */
  int64_t max_frames;
  int64_t max_samples;    /* max_frames at the requested output rate */
  uint64_t decode_bytes;  /* peak bytes decode and resample hold for max_frames */
  /* The same for the frames the header states (max_frames when it states
   * none): what an honest file's decode holds, the budget's charge. */
  int64_t stated_samples;
  uint64_t stated_decode_bytes;
} vlm_audio_header;

/* Checks the size, the container and the header (channels, rate,
 * declared duration) as vlm_audio_decode_memory does, without decoding a
 * sample; the same errors. */
vlm_status vlm_audio_read_header(const uint8_t *data, size_t size, const char *name,
                                 const vlm_audio_decode_options *options, vlm_audio_header *out);
/* Reads the file (refusing it before reading when it exceeds
 * max_encoded_bytes) and decodes it; errors name the file's base name. */
vlm_status vlm_audio_decode_file(const char *path, const vlm_audio_decode_options *options, vlm_audio *out);
void vlm_audio_release(vlm_audio *audio);

#ifdef __cplusplus
}
#endif

#endif
