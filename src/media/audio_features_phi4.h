/* Phi4MultimodalFeatureExtractor (transformers 5.23.0,
 * models/phi4_multimodal/feature_extraction_phi4_multimodal.py) for one
 * clip: the log-mel spectrogram `_torch_extract_fbank_features` computes
 * and the audio token count `_compute_audio_embed_size` gives.
 *
 * Step by step, in the precision torch computes each in:
 *   frames      waveform.unfold(-1, win_length, hop_length): frame f holds
 *               samples [f*hop, f*hop + win); (L - win) // hop + 1 frames
 *   pre-emph.   float32: (x[k] - p * x[k-1]) * 32768, x[-1] := x[0]
 *               (roll by one, then frames_prev[..., 0] = frames_prev[..., 1])
 *   window      float64 torch.hamming_window(win, periodic=False):
 *               0.54 - 0.46 cos(2 pi n / (win - 1)), times the float32 frame
 *   rfft        float64, zero-padded to n_fft, then cast to complex64
 *   power       float32 |S| (rounded), squared in float32
 *   mel         float32 matmul with mel_filter_bank(n_fft/2 + 1 bins,
 *               feature_size filters, kaldi scale 1127 ln(1 + f/700),
 *               triangularized in mel space, float64 cast to float32)
 *   log         log(clamp(mel, min=1.0)) in float32
 * vlm accumulates the matmul in float64 and rounds once, and uses libm's
 * cos/log where torch uses Sleef and MKL; tests/test_audio.c states and
 * checks the tolerance against the oracle's features. */
#ifndef VLM_MEDIA_AUDIO_FEATURES_PHI4_H
#define VLM_MEDIA_AUDIO_FEATURES_PHI4_H

#include <stdint.h>

#include "core/tensor.h"
#include "io/feature_extractor_config.h"

/* Frames of a clip of `count` samples (0 when shorter than one window). */
int64_t vlm_phi4_audio_frames(const vlm_feature_extractor_config *config, int64_t count);
/* audio_embed_sizes for `frames` frames: ceil(ceil(frames * feat_stride /
 * compression_rate) / downsample_rate). */
int64_t vlm_phi4_audio_embed_size(const vlm_feature_extractor_config *config, int64_t frames);

/* The float64 window [win_length] and the float32 filter bank
 * [n_fft/2 + 1, feature_size] (row-major, as self.mel_filters), into
 * caller buffers; for tests. */
void vlm_phi4_audio_window(const vlm_feature_extractor_config *config, double *out_window);
vlm_status vlm_phi4_audio_mel_filters(const vlm_feature_extractor_config *config, float *out_filters);

/* audio_input_features[0] for one clip: F32 [frames, feature_size] into a
 * new tensor. A clip shorter than one window is refused (torch's unfold
 * refuses it too). */
vlm_status vlm_phi4_audio_features(const vlm_feature_extractor_config *config, const float *samples, int64_t count,
                                   const vlm_allocator *allocator, vlm_tensor *out_features);

#endif
