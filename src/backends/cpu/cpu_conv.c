/* 2D convolution (channels last) and dimension permutation: the encoder
 * ops of a conv-subsampling front end and a conformer's depthwise
 * convolution (graph.h: conv2d, permute).
 *
 * The convolution is direct: the front ends it serves (Phi-4's NeMo
 * subsampling: a 1-channel 3x3 conv, then depthwise 3x3 ones; a depthwise
 * conv1d per conformer block) have few taps per output, and their 1x1
 * convolutions are linears in the graph. Each output is one float chain
 * over (input channel of its group, ky, kx) in that order, then + bias, so
 * it is the same bits whatever the thread split. The weights are first
 * copied into [group][ci][ky][kx][co of group] so the innermost loop runs
 * over contiguous output channels (a depthwise conv: over the channels). */
#include "backends/cpu/cpu_internal.h"

#include <string.h>

#include "backends/cpu/cpu_kernels.h"
#include "core/alloc.h"

typedef struct conv_job {
  const cpu_conv2d_shape *shape;
  const float *x, *bias;
  const float *weight_t; /* [group][ci][ky][kx][co of group] */
  float *out;
} conv_job;

/* Items are output rows (batch, oy). */
static void conv_worker(void *context, int64_t begin, int64_t end, int worker) {
  (void)worker;
  const conv_job *job = context;
  const cpu_conv2d_shape *s = job->shape;
  int64_t in_group = s->in_channels / s->groups, out_group = s->out_channels / s->groups;
  bool depthwise = in_group == 1 && out_group == 1;
  for (int64_t item = begin; item < end; item++) {
    int64_t n = item / s->out_height, oy = item % s->out_height;
    for (int64_t ox = 0; ox < s->out_width; ox++) {
      float *target = job->out + ((n * s->out_height + oy) * s->out_width + ox) * s->out_channels;
      memset(target, 0, (size_t)s->out_channels * sizeof(float));
      for (int64_t g = 0; g < s->groups && !depthwise; g++)
        for (int64_t ci = 0; ci < in_group; ci++)
          for (int64_t ky = 0; ky < s->kernel_h; ky++) {
            int64_t iy = oy * s->stride[0] + ky - s->padding[0];
            if (iy < 0 || iy >= s->height) continue;
            for (int64_t kx = 0; kx < s->kernel_w; kx++) {
              int64_t ix = ox * s->stride[1] + kx - s->padding[2];
              if (ix < 0 || ix >= s->width) continue;
              float value = job->x[((n * s->height + iy) * s->width + ix) * s->in_channels + g * in_group + ci];
              const float *w = job->weight_t + (((g * in_group + ci) * s->kernel_h + ky) * s->kernel_w + kx) * out_group;
              float *o = target + g * out_group;
              for (int64_t co = 0; co < out_group; co++) o[co] += value * w[co];
            }
          }
      /* Depthwise: channel c reads input channel c only; the same chain
       * per channel as above (one input channel, ky, kx), run over the
       * channels at once. */
      for (int64_t ky = 0; ky < s->kernel_h && depthwise; ky++) {
        int64_t iy = oy * s->stride[0] + ky - s->padding[0];
        if (iy < 0 || iy >= s->height) continue;
        for (int64_t kx = 0; kx < s->kernel_w; kx++) {
          int64_t ix = ox * s->stride[1] + kx - s->padding[2];
          if (ix < 0 || ix >= s->width) continue;
          const float *value = job->x + ((n * s->height + iy) * s->width + ix) * s->in_channels;
          const float *w = job->weight_t + (ky * s->kernel_w + kx) * s->out_channels;
          for (int64_t c = 0; c < s->out_channels; c++) target[c] += value[c] * w[c];
        }
      }
      if (job->bias)
        for (int64_t c = 0; c < s->out_channels; c++) target[c] += job->bias[c];
    }
  }
}

vlm_status cpu_conv2d(vlm_thread_pool *pool, const cpu_conv2d_shape *shape, const float *x, const float *weight,
                      const float *bias, float *out) {
  const cpu_conv2d_shape *s = shape;
  if (s->groups < 1 || s->in_channels % s->groups || s->out_channels % s->groups)
    return vlm_status_make(VLM_STATUS_INVALID_ARGUMENT, "conv2d: groups do not divide the channels");
  int64_t in_group = s->in_channels / s->groups, out_group = s->out_channels / s->groups;
  int64_t taps = s->kernel_h * s->kernel_w;
  float *weight_t = vlm_allocate(NULL, (size_t)(s->out_channels * in_group * taps) * sizeof(float) + 1,
                                 VLM_DEFAULT_ALIGNMENT);
  if (!weight_t) return vlm_status_make(VLM_STATUS_RESOURCE_EXHAUSTED, "conv2d: out of memory");
  bool depthwise = in_group == 1 && out_group == 1;
  for (int64_t o = 0; o < s->out_channels; o++) {
    int64_t g = o / out_group, co = o % out_group;
    for (int64_t ci = 0; ci < in_group; ci++)
      for (int64_t t = 0; t < taps; t++) {
        float value = weight[(o * in_group + ci) * taps + t];
        if (depthwise) weight_t[t * s->out_channels + o] = value;
        else weight_t[((g * in_group + ci) * taps + t) * out_group + co] = value;
      }
  }
  conv_job job = {s, x, bias, weight_t, out};
  int64_t rows = s->batch * s->out_height;
  int64_t per_row = s->out_width * s->out_channels * in_group * taps;
  vlm_thread_pool_parallel_for(pool, rows, per_row > 0 ? 65536 / per_row + 1 : 1, conv_worker, &job);
  vlm_release(NULL, weight_t);
  return VLM_OK;
}

void cpu_permute(const float *x, int rank, const int64_t *shape, const int32_t *axes, float *out) {
  int64_t in_strides[8], out_shape[8], count = 1;
  for (int d = rank - 1; d >= 0; d--) {
    in_strides[d] = count;
    count *= shape[d];
  }
  for (int d = 0; d < rank; d++) out_shape[d] = shape[axes[d]];
  int64_t index[8] = {0};
  for (int64_t i = 0; i < count; i++) {
    int64_t source = 0;
    for (int d = 0; d < rank; d++) source += index[d] * in_strides[axes[d]];
    out[i] = x[source];
    for (int d = rank - 1; d >= 0; d--) {
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
}
