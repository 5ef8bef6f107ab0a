/* Sample-rate conversion as transformers 5.23.0's soundfile backend does it
 * (see include/vlm/audio.h): libsoxr, quality HQ, fed exactly as
 * python-soxr 1.1.0's soxr.resample feeds it, then padded or cut to
 * ceil(count * out_rate / in_rate). The chunking is part of the contract:
 * it decides where libsoxr's blocks start, and so the rounding. */
#ifndef VLM_MEDIA_AUDIO_RESAMPLE_H
#define VLM_MEDIA_AUDIO_RESAMPLE_H

#include <stdatomic.h>
#include <stdint.h>

#include "vlm.h"

/* The output length Transformers keeps: ceil(count * out_rate / in_rate). */
int64_t vlm_audio_resampled_length(int64_t count, int in_rate, int out_rate);

/* Resamples `count` mono samples from in_rate to out_rate into a new
 * buffer of vlm_audio_resampled_length samples (allocated with
 * `allocator`). `cancel` (may be NULL) is polled between chunks. */
vlm_status vlm_audio_resample(const float *samples, int64_t count, int in_rate, int out_rate,
                              const atomic_bool *cancel, const vlm_allocator *allocator, float **out_samples,
                              int64_t *out_count);

#endif
