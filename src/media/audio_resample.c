/* See audio_resample.h. */
#include "media/audio_resample.h"

#include <math.h>
#include <soxr.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"

int64_t vlm_audio_resampled_length(int64_t count, int in_rate, int out_rate) {
  /* math.ceil(n * sr / src) in Python: the exact product (below 2^53 for
   * any clip the limits let through), one correctly rounded division. */
  return (int64_t)ceil((double)count * (double)out_rate / (double)in_rate);
}

vlm_status vlm_audio_resample(const float *samples, int64_t count, int in_rate, int out_rate,
                              const atomic_bool *cancel, const vlm_allocator *allocator, float **out_samples,
                              int64_t *out_count) {
  *out_samples = NULL;
  *out_count = 0;
  if (in_rate <= 0 || out_rate <= 0 || count < 0)
    return VLM_ERROR(INVALID_ARGUMENT, "cannot resample %lld samples from %d Hz to %d Hz", (long long)count, in_rate,
                     out_rate);
  double in = in_rate, out = out_rate;
  /* python-soxr's csoxr_split_ch: size_t olen = ilen * out / in + 1 and
   * size_t div_len = max(1000., 48000 * in / out), both truncated. */
  size_t input_length = (size_t)count;
  size_t buffer_length = (size_t)((double)input_length * out / in + 1);
  double chunk = 48000 * in / out;
  size_t chunk_length = (size_t)(chunk > 1000. ? chunk : 1000.);
  int64_t kept = vlm_audio_resampled_length(count, in_rate, out_rate);
  size_t allocated = buffer_length > (size_t)kept ? buffer_length : (size_t)kept;
  float *buffer = vlm_allocate_zeroed(allocator, (allocated ? allocated : 1) * sizeof(float), VLM_DEFAULT_ALIGNMENT);
  if (!buffer) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory resampling %lld samples", (long long)count);

  soxr_error_t error = NULL;
  soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_S, SOXR_FLOAT32_S);
  soxr_quality_spec_t quality = soxr_quality_spec(SOXR_HQ, 0);
  soxr_t resampler = soxr_create(in, out, 1, &error, &io, &quality, NULL);
  if (error) {
    vlm_release(allocator, buffer);
    return VLM_ERROR(INTERNAL, "libsoxr: cannot resample %d Hz to %d Hz: %s", in_rate, out_rate, error);
  }
  size_t position = 0, done = 0;
  vlm_status status = VLM_OK;
  for (size_t index = 0; index < input_length && !error; index += chunk_length) {
    if (cancel && atomic_load_explicit(cancel, memory_order_relaxed)) {
      status = VLM_ERROR(CANCELLED, "decoding cancelled");
      break;
    }
    const float *input = samples + index;
    float *output = buffer + position;
    size_t length = input_length - index < chunk_length ? input_length - index : chunk_length;
    error = soxr_process(resampler, &input, length, NULL, &output, buffer_length - position, &done);
    position += done;
  }
  if (!status && !error) { /* flush */
    float *output = buffer + position;
    error = soxr_process(resampler, NULL, 0, NULL, &output, buffer_length - position, &done);
    position += done;
  }
  soxr_delete(resampler);
  if (!status && error) status = VLM_ERROR(INTERNAL, "libsoxr: %s", error);
  if (status) {
    vlm_release(allocator, buffer);
    return status;
  }
  /* np.pad(y, (0, max(0, kept - len(y))))[:kept]: the buffer is zeroed past
   * what libsoxr wrote. */
  *out_samples = buffer;
  *out_count = kept;
  return VLM_OK;
}
