/* See audio_features_phi4.h. Built with -ffp-contract=off (CMakeLists.txt):
 * torch rounds every product and sum on its own, so must we. */
#include "media/audio_features_phi4.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"

int64_t vlm_phi4_audio_frames(const vlm_feature_extractor_config *config, int64_t count) {
  if (count < config->win_length) return 0;
  return (count - config->win_length) / config->hop_length + 1;
}

static int64_t ceil_divide(int64_t value, int64_t divisor) {
  /* integer + (remainder > 0), with Python's floor division (value >= 0 here) */
  return value / divisor + (value % divisor > 0);
}

int64_t vlm_phi4_audio_embed_size(const vlm_feature_extractor_config *config, int64_t frames) {
  int64_t compressed = ceil_divide(frames * config->audio_feat_stride, config->audio_compression_rate);
  return ceil_divide(compressed, config->audio_downsample_rate);
}

void vlm_phi4_audio_window(const vlm_feature_extractor_config *config, double *out_window) {
  /* torch: arange(N).mul_(M_PI * 2. / (N - 1)).cos_().mul_(-0.46).add_(0.54) */
  int64_t length = config->win_length;
  double step = M_PI * 2. / (double)(length - 1);
  for (int64_t n = 0; n < length; n++) out_window[n] = cos((double)n * step) * -0.46 + 0.54;
}

/* hertz_to_mel(freq, "kaldi"): 1127.0 * np.log(1.0 + (freq / 700.0)). */
static double kaldi_mel(double hertz) { return 1127.0 * log(1.0 + hertz / 700.0); }

vlm_status vlm_phi4_audio_mel_filters(const vlm_feature_extractor_config *config, float *out_filters) {
  int64_t bins = config->n_fft / 2 + 1, filters = config->feature_size;
  double *centers = malloc((size_t)(filters + 2) * sizeof(double));
  if (!centers) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  /* np.linspace(mel_min, mel_max, filters + 2): i * step + start, the last
   * one exactly mel_max. */
  double mel_min = kaldi_mel(config->mel_min_frequency), mel_max = kaldi_mel(config->mel_max_frequency);
  double step = (mel_max - mel_min) / (double)(filters + 1);
  for (int64_t i = 0; i < filters + 2; i++) centers[i] = (double)i * step + mel_min;
  centers[filters + 1] = mel_max;
  /* fft_bin_width = sampling_rate / ((bins - 1) * 2), Python true division */
  double bin_width = (double)config->sampling_rate / (double)((bins - 1) * 2);
  for (int64_t j = 0; j < bins; j++) {
    double bin_mel = kaldi_mel(bin_width * (double)j);
    for (int64_t m = 0; m < filters; m++) {
      /* _create_triangular_filter_bank: slopes = filter_freqs - fft_freqs */
      double down = -(centers[m] - bin_mel) / (centers[m + 1] - centers[m]);
      double up = (centers[m + 2] - bin_mel) / (centers[m + 2] - centers[m + 1]);
      double value = down <= up ? down : up;
      /* np.maximum(np.zeros(1), value) keeps value when it is a zero: the
       * first bin at a filter's start (down = -0.0) stays -0.0. */
      out_filters[j * filters + m] = (float)(value > 0 || value == 0 ? value : 0.0);
    }
  }
  free(centers);
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* The real FFT, in float64                                                */
/* ---------------------------------------------------------------------- */

typedef struct spectrum_plan {
  int64_t size;          /* n_fft */
  bool radix2;
  double *cosines, *sines; /* [size]: cos/sin(2 pi k / size) */
  int64_t *bit_reverse;  /* [size] when radix2 */
  double *real, *imaginary; /* [size] work */
} spectrum_plan;

static void plan_release(spectrum_plan *plan) {
  free(plan->cosines);
  free(plan->sines);
  free(plan->bit_reverse);
  free(plan->real);
  free(plan->imaginary);
  memset(plan, 0, sizeof(*plan));
}

static vlm_status plan_create(int64_t size, spectrum_plan *plan) {
  memset(plan, 0, sizeof(*plan));
  plan->size = size;
  plan->radix2 = (size & (size - 1)) == 0;
  plan->cosines = malloc((size_t)size * sizeof(double));
  plan->sines = malloc((size_t)size * sizeof(double));
  plan->real = malloc((size_t)size * sizeof(double));
  plan->imaginary = malloc((size_t)size * sizeof(double));
  plan->bit_reverse = plan->radix2 ? malloc((size_t)size * sizeof(int64_t)) : NULL;
  if (!plan->cosines || !plan->sines || !plan->real || !plan->imaginary || (plan->radix2 && !plan->bit_reverse)) {
    plan_release(plan);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  for (int64_t k = 0; k < size; k++) {
    double angle = 2.0 * M_PI * (double)k / (double)size;
    plan->cosines[k] = cos(angle);
    plan->sines[k] = sin(angle);
  }
  if (plan->radix2) {
    int bits = 0;
    while ((INT64_C(1) << bits) < size) bits++;
    for (int64_t k = 0; k < size; k++) {
      int64_t reversed = 0;
      for (int b = 0; b < bits; b++) reversed |= ((k >> b) & 1) << (bits - 1 - b);
      plan->bit_reverse[k] = reversed;
    }
  }
  return VLM_OK;
}

/* X[j] = sum_k x[k] e^{-2 pi i jk/n} for j <= n/2, of the real `input`
 * (`length` <= n values, zero beyond), into plan->real/imaginary[0..n/2]. */
static void real_spectrum(spectrum_plan *plan, const double *input, int64_t length) {
  int64_t n = plan->size;
  double *re = plan->real, *im = plan->imaginary;
  if (!plan->radix2) {
    for (int64_t j = 0; j <= n / 2; j++) {
      double sum_re = 0, sum_im = 0;
      for (int64_t k = 0; k < length; k++) {
        int64_t index = (j * k) % n;
        sum_re += input[k] * plan->cosines[index];
        sum_im -= input[k] * plan->sines[index];
      }
      re[j] = sum_re, im[j] = sum_im;
    }
    return;
  }
  for (int64_t k = 0; k < n; k++) {
    int64_t source = plan->bit_reverse[k];
    re[k] = source < length ? input[source] : 0.0;
    im[k] = 0.0;
  }
  for (int64_t half = 1; half < n; half *= 2) {
    int64_t stride = n / (2 * half);
    for (int64_t start = 0; start < n; start += 2 * half)
      for (int64_t k = 0; k < half; k++) {
        double w_re = plan->cosines[k * stride], w_im = -plan->sines[k * stride];
        int64_t a = start + k, b = a + half;
        double t_re = re[b] * w_re - im[b] * w_im, t_im = re[b] * w_im + im[b] * w_re;
        re[b] = re[a] - t_re, im[b] = im[a] - t_im;
        re[a] += t_re, im[a] += t_im;
      }
  }
}

/* ---------------------------------------------------------------------- */
/* Features                                                                */
/* ---------------------------------------------------------------------- */

/* Each filter's nonzero bins [first, last): adding the zeros of a dense
 * matmul changes no float64 sum, so skipping them is exact. */
typedef struct mel_band {
  int64_t first, last;
} mel_band;

typedef struct extractor {
  const vlm_feature_extractor_config *config;
  double *window;     /* [win] */
  float *filters;     /* [bins, filters] */
  mel_band *bands;    /* [filters] */
  double *frame;      /* [win] windowed */
  float *power;       /* [bins] */
  spectrum_plan plan;
} extractor;

static void extractor_release(extractor *state) {
  free(state->window);
  free(state->filters);
  free(state->bands);
  free(state->frame);
  free(state->power);
  plan_release(&state->plan);
}

static vlm_status extractor_create(const vlm_feature_extractor_config *config, extractor *state) {
  memset(state, 0, sizeof(*state));
  state->config = config;
  int64_t bins = config->n_fft / 2 + 1, filters = config->feature_size;
  state->window = malloc((size_t)config->win_length * sizeof(double));
  state->frame = malloc((size_t)config->win_length * sizeof(double));
  state->filters = malloc((size_t)(bins * filters) * sizeof(float));
  state->bands = malloc((size_t)filters * sizeof(mel_band));
  state->power = malloc((size_t)bins * sizeof(float));
  vlm_status status = state->window && state->frame && state->filters && state->bands && state->power
                          ? VLM_OK
                          : VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  if (!status) status = plan_create(config->n_fft, &state->plan);
  if (!status) status = vlm_phi4_audio_mel_filters(config, state->filters);
  if (status) {
    extractor_release(state);
    return status;
  }
  vlm_phi4_audio_window(config, state->window);
  for (int64_t m = 0; m < filters; m++) {
    mel_band band = {bins, 0};
    for (int64_t j = 0; j < bins; j++)
      if (state->filters[j * filters + m] != 0.0f) {
        if (band.first > j) band.first = j;
        band.last = j + 1;
      }
    if (band.first > band.last) band.first = band.last = 0;
    state->bands[m] = band;
  }
  return VLM_OK;
}

static void extract_frame(extractor *state, const float *samples, float *out) {
  const vlm_feature_extractor_config *config = state->config;
  int64_t win = config->win_length, bins = config->n_fft / 2 + 1, filters = config->feature_size;
  float preemphasis = (float)config->preemphasis; /* a Python float times a float32 tensor */
  for (int64_t k = 0; k < win; k++) {
    float previous = samples[k > 0 ? k - 1 : 0];
    float emphasized = samples[k] - preemphasis * previous;
    state->frame[k] = state->window[k] * (double)(emphasized * 32768.0f);
  }
  real_spectrum(&state->plan, state->frame, win);
  for (int64_t j = 0; j < bins; j++) {
    float re = (float)state->plan.real[j], im = (float)state->plan.imaginary[j]; /* .to(complex64) */
    float magnitude = (float)hypot((double)re, (double)im);
    state->power[j] = magnitude * magnitude;
  }
  for (int64_t m = 0; m < filters; m++) {
    double sum = 0;
    for (int64_t j = state->bands[m].first; j < state->bands[m].last; j++)
      sum += (double)state->power[j] * (double)state->filters[j * filters + m];
    float mel = (float)sum;
    out[m] = (float)log((double)(mel < 1.0f ? 1.0f : mel));
  }
}

vlm_status vlm_phi4_audio_features(const vlm_feature_extractor_config *config, const float *samples, int64_t count,
                                   const vlm_allocator *allocator, vlm_tensor *out_features) {
  memset(out_features, 0, sizeof(*out_features));
  int64_t frames = vlm_phi4_audio_frames(config, count);
  if (frames <= 0)
    return VLM_ERROR(INVALID_ARGUMENT,
                     "the audio is too short: %lld samples at %lld Hz, %s needs at least one window of %lld",
                     (long long)count, (long long)config->sampling_rate, config->feature_extractor_type,
                     (long long)config->win_length);
  extractor state;
  VLM_RETURN_IF_ERROR(extractor_create(config, &state));
  int64_t shape[2] = {frames, config->feature_size};
  vlm_status status = vlm_tensor_create(allocator, VLM_DTYPE_F32, 2, shape, out_features);
  float *features = status ? NULL : out_features->data;
  for (int64_t f = 0; f < frames && !status; f++)
    extract_frame(&state, samples + f * config->hop_length, features + f * config->feature_size);
  extractor_release(&state);
  return status;
}
