/* See phi4_audio.h. The encoder graph follows Transformers 5.23's
 * modeling_phi4_multimodal.py module by module (node names are its module
 * paths under "audio."), on the general ops of graph.h:
 *
 *   features [T, 80] -> (x - global_mean) * global_invstd
 *   NemoConvSubsampling: [1, T, 80, 1] conv 3x3/2 -> act, then per further
 *     factor of 2 a depthwise conv 3x3/2 and a 1x1 conv (a linear) -> act;
 *     [1, T', F', C] permuted to [T', C, F'] and flattened -> out linear
 *   longer than 500 rows: zero rows up to a multiple of 500, each 500 a
 *     block (unfold_tensor; the blocks are a batch: attention and the
 *     depthwise conv stay inside one)
 *   relative attention bias: bias_values[bucket(j - i)] per head, + the
 *     streaming mask as 1/0 (the quirk, phi4_audio.h), one [heads, S, S]
 *     for every block and layer
 *   conformer blocks: x + 0.5 ff_in(x); + attn(layer_norm_att); + conv
 *     module (GLU pointwise conv with b1/b2, causal depthwise conv1d,
 *     pointwise conv, act, pointwise conv); + 0.5 ff_out; layer_norm
 *   the padding rows dropped; up_proj -> gelu -> down_proj in both modes
 *   (speech; vision+speech), the item's request choosing per row.
 *
 * The request's media choose the projection as Phi4MultimodalFeatureEmbedding
 * does ("vision" whenever the call has image_pixel_values): the item's
 * request_kinds (media_item.h) say whether the request has an image. */
#include "models/phi4_audio.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/tensor_list.h"
#include "graph/graph.h"
#include "io/json.h"
#include "media/media_item.h"
#include "models/blocks.h"
#include "models/nn.h"

#define PREFIX "model.embed_tokens_extend.audio_embed."
#define ENCODER PREFIX "encoder."
/* Phi4MultimodalAudioModel.forward's max_seq_len: longer inputs are unfolded. */
#define MAX_BLOCK_ROWS 500

typedef struct phi4_audio {
  int64_t hidden, intermediate, blocks, heads, input_size, time_reduction, sampling, channels;
  int64_t final_size, kernel, multiplier, max_distance, buckets, chunk_size, left_chunk, text_hidden;
  bool symmetric;
  vlm_activation activation, conv_activation, glu_activation, nemo_activation;
} phi4_audio;

static vlm_status get_int(const vlm_json_value *section, const char *key, int64_t *out) {
  if (!vlm_json_get_int(vlm_json_object_get(section, key), out))
    return VLM_ERROR(INVALID_ARGUMENT, "config.json audio_config.%s is not an integer", key);
  return VLM_OK;
}

static vlm_status get_activation(const vlm_json_value *section, const char *key, vlm_activation *out) {
  const char *name = vlm_json_get_string(vlm_json_object_get(section, key));
  if (!vlm_activation_from_name(name, out))
    return VLM_ERROR(UNIMPLEMENTED, "config.json audio_config.%s '%s' is not an activation vlm has", key,
                     name ? name : "?");
  return VLM_OK;
}

/* The encoder's geometry from the merged audio_config (Transformers'
 * defaults under the file's values), refusing what Transformers' modules
 * would not run. */
static vlm_status describe(const vlm_model_config *config, phi4_audio *a) {
  memset(a, 0, sizeof(*a));
  const vlm_json_value *s = config->audio_section;
  if (!config->has_audio || !s) return VLM_ERROR(INVALID_ARGUMENT, "config.json has no audio_config");
  int64_t ext_out = 0, dw_out = 0, downsample = 0;
  VLM_RETURN_IF_ERROR(get_int(s, "hidden_size", &a->hidden));
  VLM_RETURN_IF_ERROR(get_int(s, "intermediate_size", &a->intermediate));
  VLM_RETURN_IF_ERROR(get_int(s, "num_blocks", &a->blocks));
  VLM_RETURN_IF_ERROR(get_int(s, "num_attention_heads", &a->heads));
  VLM_RETURN_IF_ERROR(get_int(s, "input_size", &a->input_size));
  VLM_RETURN_IF_ERROR(get_int(s, "time_reduction", &a->time_reduction));
  VLM_RETURN_IF_ERROR(get_int(s, "nemo_conv_channels", &a->channels));
  VLM_RETURN_IF_ERROR(get_int(s, "kernel_size", &a->kernel));
  VLM_RETURN_IF_ERROR(get_int(s, "depthwise_multiplier", &a->multiplier));
  VLM_RETURN_IF_ERROR(get_int(s, "depthwise_separable_out_channel", &dw_out));
  VLM_RETURN_IF_ERROR(get_int(s, "ext_pw_out_channel", &ext_out));
  VLM_RETURN_IF_ERROR(get_int(s, "bias_max_distance", &a->max_distance));
  VLM_RETURN_IF_ERROR(get_int(s, "chunk_size", &a->chunk_size));
  VLM_RETURN_IF_ERROR(get_int(s, "left_chunk", &a->left_chunk));
  VLM_RETURN_IF_ERROR(get_int(s, "downsample_rate", &downsample));
  if (!vlm_json_get_bool(vlm_json_object_get(s, "bias_symmetric"), &a->symmetric))
    return VLM_ERROR(INVALID_ARGUMENT, "config.json audio_config.bias_symmetric is not a boolean");
  VLM_RETURN_IF_ERROR(get_activation(s, "activation", &a->activation));
  VLM_RETURN_IF_ERROR(get_activation(s, "conv_activation", &a->conv_activation));
  VLM_RETURN_IF_ERROR(get_activation(s, "conv_glu_type", &a->glu_activation));
  VLM_RETURN_IF_ERROR(get_activation(s, "nemo_activation", &a->nemo_activation));
  a->text_hidden = config->text.hidden_size;
  for (int64_t r = a->time_reduction; r > 1 && r % 2 == 0; r /= 2) a->sampling++;
  bool sizes = a->hidden > 0 && a->intermediate > 0 && a->blocks >= 0 && a->heads > 0 && a->hidden % a->heads == 0 &&
               a->input_size > 0 && a->channels > 0 && a->kernel > 0 && a->multiplier > 0 && a->max_distance > 0 &&
               a->hidden <= 65536 && a->channels <= 65536 && a->input_size <= 4096 && a->kernel <= 64 &&
               a->multiplier <= 64 && a->blocks <= 1024 && a->heads <= 1024 && a->intermediate <= 1 << 20 &&
               a->max_distance <= 1 << 20;
  if (!sizes) return VLM_ERROR(INVALID_ARGUMENT, "config.json audio_config has sizes out of range");
  if (a->sampling < 1 || (int64_t)1 << a->sampling != a->time_reduction)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json audio_config.time_reduction %lld is not a power of two >= 2",
                     (long long)a->time_reduction);
  /* The conv module's residual and its pointwise convs need these equal
   * (Transformers fails with a shape error otherwise); the up projections
   * read hidden_size * downsample_rate from an encoder that gives
   * hidden_size. */
  if (ext_out != a->hidden || dw_out != a->hidden || downsample != 1)
    return VLM_ERROR(UNIMPLEMENTED, "audio_config: ext_pw_out_channel %lld, depthwise_separable_out_channel %lld "
                     "and downsample_rate %lld: Transformers' modules run only with hidden_size (%lld) channels "
                     "and downsample_rate 1", (long long)ext_out, (long long)dw_out, (long long)downsample,
                     (long long)a->hidden);
  if (a->chunk_size == 0 || a->left_chunk < 0)
    return VLM_ERROR(INVALID_ARGUMENT, "config.json audio_config: chunk_size 0 or a negative left_chunk (Transformers "
                     "fails on them)");
  /* Phi4MultimodalAudioConfig.__post_init__ computes nemo_final_size. */
  a->final_size = a->input_size;
  for (int64_t i = 0; i < a->sampling; i++) a->final_size = (a->final_size - 1) / 2 + 1;
  a->buckets = a->symmetric ? a->max_distance : 2 * a->max_distance;
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Tensors                                                                 */
/* ---------------------------------------------------------------------- */

static void declare_norm(vlm_tensor_manifest *m, int64_t width, const char *format, int64_t layer);

static void declare_mlp(vlm_tensor_manifest *m, const phi4_audio *a, int64_t layer, const char *which) {
  char name[128], format[128];
  snprintf(format, sizeof(format), ENCODER "encoders.%%lld.%s.layer_norm", which);
  declare_norm(m, a->hidden, format, layer);
  snprintf(name, sizeof(name), ENCODER "encoders.%lld.%s.gate_up_proj", (long long)layer, which);
  vlm_nn_declare_linear(m, VLM_COMPONENT_AUDIO_TOWER, name, 2 * a->intermediate, a->hidden, true);
  snprintf(name, sizeof(name), ENCODER "encoders.%lld.%s.down_proj", (long long)layer, which);
  vlm_nn_declare_linear(m, VLM_COMPONENT_AUDIO_TOWER, name, a->hidden, a->intermediate, true);
}

static void declare_norm(vlm_tensor_manifest *m, int64_t width, const char *format, int64_t layer) {
  char name[128];
  snprintf(name, sizeof(name), format, (long long)layer);
  vlm_manifest_add(m, VLM_COMPONENT_AUDIO_TOWER, 1, VLM_SHAPE(width), "%s.weight", name);
  vlm_manifest_add(m, VLM_COMPONENT_AUDIO_TOWER, 1, VLM_SHAPE(width), "%s.bias", name);
}

static void declare_layer(vlm_tensor_manifest *m, const phi4_audio *a, int64_t l) {
  vlm_component c = VLM_COMPONENT_AUDIO_TOWER;
  int64_t h = a->hidden, k = a->kernel, dw = a->hidden * a->multiplier;
  declare_mlp(m, a, l, "feed_forward_in");
  declare_mlp(m, a, l, "feed_forward_out");
  static const char *const projections[] = {"q_proj", "k_proj", "v_proj", "o_proj"};
  char name[128];
  for (int i = 0; i < 4; i++) {
    snprintf(name, sizeof(name), ENCODER "encoders.%lld.self_attn.%s", (long long)l, projections[i]);
    vlm_nn_declare_linear(m, c, name, h, h, true);
  }
  declare_norm(m, h, ENCODER "encoders.%lld.conv.layer_norm", l);
  vlm_manifest_add(m, c, 3, VLM_SHAPE(2 * h, h, 1), ENCODER "encoders.%lld.conv.glu.ext_pw_conv_1d.weight", (long long)l);
  vlm_manifest_add(m, c, 1, VLM_SHAPE(2 * h), ENCODER "encoders.%lld.conv.glu.ext_pw_conv_1d.bias", (long long)l);
  vlm_manifest_add(m, c, 3, VLM_SHAPE(1, h, 1), ENCODER "encoders.%lld.conv.glu.b1", (long long)l);
  vlm_manifest_add(m, c, 3, VLM_SHAPE(1, h, 1), ENCODER "encoders.%lld.conv.glu.b2", (long long)l);
  vlm_manifest_add(m, c, 3, VLM_SHAPE(dw, 1, k), ENCODER "encoders.%lld.conv.dw_sep_conv_1d.dw_conv.weight", (long long)l);
  vlm_manifest_add(m, c, 1, VLM_SHAPE(dw), ENCODER "encoders.%lld.conv.dw_sep_conv_1d.dw_conv.bias", (long long)l);
  vlm_manifest_add(m, c, 3, VLM_SHAPE(h, dw, 1), ENCODER "encoders.%lld.conv.dw_sep_conv_1d.pw_conv.weight", (long long)l);
  vlm_manifest_add(m, c, 1, VLM_SHAPE(h), ENCODER "encoders.%lld.conv.dw_sep_conv_1d.pw_conv.bias", (long long)l);
  vlm_manifest_add(m, c, 3, VLM_SHAPE(h, h, 1), ENCODER "encoders.%lld.conv.ext_pw_conv_1d.weight", (long long)l);
  vlm_manifest_add(m, c, 1, VLM_SHAPE(h), ENCODER "encoders.%lld.conv.ext_pw_conv_1d.bias", (long long)l);
  declare_norm(m, h, ENCODER "encoders.%lld.layer_norm_att", l);
  declare_norm(m, h, ENCODER "encoders.%lld.layer_norm", l);
}

vlm_status vlm_phi4_declare_audio_tensors(const vlm_model_config *config, vlm_tensor_manifest *m) {
  phi4_audio a;
  VLM_RETURN_IF_ERROR(describe(config, &a));
  vlm_component c = VLM_COMPONENT_AUDIO_TOWER;
  vlm_manifest_add(m, c, 1, VLM_SHAPE(a.input_size), ENCODER "encoder_embedding.global_mean");
  vlm_manifest_add(m, c, 1, VLM_SHAPE(a.input_size), ENCODER "encoder_embedding.global_invstd");
  /* Sequential indices of NemoConvSubsampling.conv: conv, act, then (dw
   * conv, pw conv, act) per further factor of 2. */
  vlm_manifest_add(m, c, 4, VLM_SHAPE(a.channels, 1, 3, 3), ENCODER "embed.conv.0.weight");
  vlm_manifest_add(m, c, 1, VLM_SHAPE(a.channels), ENCODER "embed.conv.0.bias");
  for (int64_t i = 1; i < a.sampling; i++) {
    int64_t dw = 3 * i - 1, pw = 3 * i;
    vlm_manifest_add(m, c, 4, VLM_SHAPE(a.channels, 1, 3, 3), ENCODER "embed.conv.%lld.weight", (long long)dw);
    vlm_manifest_add(m, c, 1, VLM_SHAPE(a.channels), ENCODER "embed.conv.%lld.bias", (long long)dw);
    vlm_manifest_add(m, c, 4, VLM_SHAPE(a.channels, a.channels, 1, 1), ENCODER "embed.conv.%lld.weight", (long long)pw);
    vlm_manifest_add(m, c, 1, VLM_SHAPE(a.channels), ENCODER "embed.conv.%lld.bias", (long long)pw);
  }
  vlm_nn_declare_linear(m, c, ENCODER "embed.out", a.hidden, a.channels * a.final_size, true);
  vlm_manifest_add(m, c, 2, VLM_SHAPE(a.buckets, a.heads), ENCODER "relative_attention_bias_layer.bias_values.weight");
  for (int64_t l = 0; l < a.blocks; l++) declare_layer(m, &a, l);
  vlm_component projector = VLM_COMPONENT_PROJECTOR;
  vlm_nn_declare_linear(m, projector, PREFIX "up_proj_for_speech", a.text_hidden, a.hidden, true);
  vlm_nn_declare_linear(m, projector, PREFIX "down_proj_for_speech", a.text_hidden, a.text_hidden, true);
  vlm_nn_declare_linear(m, projector, PREFIX "up_proj_for_vision_speech", a.text_hidden, a.hidden, true);
  vlm_nn_declare_linear(m, projector, PREFIX "down_proj_for_vision_speech", a.text_hidden, a.text_hidden, true);
  return VLM_OK;
}

/* ---------------------------------------------------------------------- */
/* Rows                                                                    */
/* ---------------------------------------------------------------------- */

/* Rows after the subsampling: each stride-2 3x3 conv with padding 1 gives
 * floor((n - 1) / 2) + 1 = ceil(n / 2). */
static int64_t subsampled(const phi4_audio *a, int64_t frames) {
  for (int64_t i = 0; i < a->sampling; i++) frames = (frames - 1) / 2 + 1;
  return frames;
}

typedef struct audio_rows {
  int64_t frames, rows, block, blocks, padding; /* padding: zero rows of the last block */
} audio_rows;

static void plan_rows(const phi4_audio *a, int64_t frames, audio_rows *out) {
  out->frames = frames;
  out->rows = subsampled(a, frames);
  out->block = out->rows > MAX_BLOCK_ROWS ? MAX_BLOCK_ROWS : out->rows;
  out->blocks = (out->rows + out->block - 1) / out->block;
  out->padding = out->blocks * out->block - out->rows;
}

/* ---- Length buckets (the xla backend) ------------------------------------
 *
 * A bucket is a count of encoder rows (after the subsampling), the graph
 * built for bucket * time_reduction frames. Within one block (<= 500
 * rows): 16, 32, 64, 128, 256, then 500 itself (a bucket never crosses the
 * block limit: a clip of one block must stay one block, its attention over
 * its own rows); padding costs at most 2x on clips up to 40 s, and a
 * server sees at most six modules for them. Beyond one block: whole
 * blocks, ceil(rows / 500) * 500, which is exactly the rows Transformers'
 * unfold already runs the conformer over (its last block padded with zero
 * rows), so only the subsampling convs see extra frames: one module per
 * block count (40 s of audio each). */
#define MIN_BUCKET_ROWS 16

static int64_t bucket_of(int64_t rows) {
  if (rows > MAX_BLOCK_ROWS) return (rows + MAX_BLOCK_ROWS - 1) / MAX_BLOCK_ROWS * MAX_BLOCK_ROWS;
  for (int64_t bucket = MIN_BUCKET_ROWS; bucket < MAX_BLOCK_ROWS; bucket *= 2)
    if (rows <= bucket) return bucket;
  return MAX_BLOCK_ROWS;
}

/* Whether a graph of `frames` frames is a bucket's, i.e. may run a shorter
 * clip padded to it: then it takes the row masks below. A graph at any
 * other length runs its own clip only (the cpu backend's), without them. */
static bool is_bucket(const phi4_audio *a, int64_t frames) {
  return frames % a->time_reduction == 0 && bucket_of(frames / a->time_reduction) == frames / a->time_reduction;
}

static vlm_status encoder_bucket(const vlm_model_config *config, int64_t frames, int64_t *out_frames) {
  phi4_audio a;
  VLM_RETURN_IF_ERROR(describe(config, &a));
  if (frames < 1) return VLM_ERROR(INVALID_ARGUMENT, "an audio clip of %lld frames", (long long)frames);
  int64_t rows = bucket_of(subsampled(&a, frames));
  if (rows > INT64_MAX / a.time_reduction)
    return VLM_ERROR(OUT_OF_RANGE, "an audio clip of %lld frames is too long", (long long)frames);
  *out_frames = rows * a.time_reduction;
  return VLM_OK;
}

static vlm_status item_frames(const vlm_model_config *config, const vlm_media_item *item, const phi4_audio *a,
                              int64_t *out_frames) {
  (void)config;
  const vlm_named_tensor *features = vlm_media_item_tensor(item, "audio_input_features");
  if (!features || features->dtype != VLM_DTYPE_F32 || features->rank != 2 || features->shape[1] != a->input_size ||
      features->shape[0] < 1)
    return VLM_ERROR(INVALID_ARGUMENT, "the audio item has no f32 audio_input_features [frames, %lld]",
                     (long long)a->input_size);
  *out_frames = features->shape[0];
  return VLM_OK;
}

void vlm_phi4_audio_chunk_mask(int64_t length, int64_t chunk_size, int64_t left_chunk, float *out) {
  for (int64_t i = 0; i < length; i++)
    for (int64_t j = 0; j < length; j++) {
      bool inside = true;
      if (chunk_size > 0) {
        int64_t chunk = i / chunk_size, first = chunk - left_chunk < 0 ? 0 : chunk - left_chunk;
        int64_t end = (chunk + 1) * chunk_size < length ? (chunk + 1) * chunk_size : length;
        inside = j >= first * chunk_size && j < end;
      }
      out[i * length + j] = inside ? 1.0f : 0.0f;
    }
}

/* ---------------------------------------------------------------------- */
/* The audio path                                                          */
/* ---------------------------------------------------------------------- */

static int64_t placeholder_token(const vlm_model_config *config) { return config->audio_token_id; }

static vlm_status token_count(const vlm_model_config *config, const struct vlm_feature_extractor_config *extractor,
                              const vlm_media_item *item, int64_t *out_count) {
  (void)extractor;
  phi4_audio a;
  VLM_RETURN_IF_ERROR(describe(config, &a));
  int64_t frames = 0;
  VLM_RETURN_IF_ERROR(item_frames(config, item, &a, &frames));
  const vlm_named_tensor *sizes = vlm_media_item_tensor(item, "audio_embed_sizes");
  if (!sizes || sizes->dtype != VLM_DTYPE_I32 || sizes->rank != 1 || sizes->shape[0] != 1)
    return VLM_ERROR(INVALID_ARGUMENT, "the audio item has no i32 audio_embed_sizes [1]");
  int64_t count = ((const int32_t *)sizes->data)[0];
  /* audio_embeds[i, :audio_embed_sizes[i]] of the encoder's rows. */
  if (count < 1 || count > subsampled(&a, frames))
    return VLM_ERROR(INVALID_ARGUMENT, "audio_embed_sizes %lld does not fit the encoder's %lld rows for %lld frames",
                     (long long)count, (long long)subsampled(&a, frames), (long long)frames);
  *out_count = count;
  return VLM_OK;
}

static vlm_status encoder_rows(const vlm_model_config *config, const vlm_media_item *item, int64_t *out_rows) {
  phi4_audio a;
  VLM_RETURN_IF_ERROR(describe(config, &a));
  return item_frames(config, item, &a, out_rows);
}

/* Row masks of a bucket's graph, one per place where Transformers'
 * unpadded run sees zeros beyond the clip's rows: mask i < sampling before
 * subsampling conv i (the normalized features, then each activation the
 * next stride-2 conv reads: its padding row is a zero there, and a padded
 * frame must be one too), mask `sampling` on the subsampling's output rows
 * (the zero rows unfold pads the last block with). 1.0 on the clip's rows,
 * 0.0 on the bucket's padding. */
static vlm_status add_row_masks(const phi4_audio *a, int64_t frames, int64_t bucket_frames, vlm_tensor_list *out) {
  int64_t rows = frames, length = bucket_frames;
  for (int64_t i = 0; i <= a->sampling; i++) {
    char name[48];
    snprintf(name, sizeof(name), "audio_row_mask_%lld", (long long)i);
    float *mask = NULL;
    VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, name, VLM_DTYPE_F32, 1, VLM_SHAPE(length), (void **)&mask));
    for (int64_t r = 0; r < length; r++) mask[r] = r < rows ? 1.0f : 0.0f;
    rows = (rows - 1) / 2 + 1, length = (length - 1) / 2 + 1;
  }
  return VLM_OK;
}

/* `rows` graph frames: the clip's own, or (xla) a bucket's >= them, the
 * features padded with zero frames and masked as above, and the padded
 * rows kept out of the clip's attention: within one block by a -inf key
 * mask added to the bias with the 1/0 streaming mask (the clip's rows see
 * the quirk's values on their own keys and nothing on the padding, as
 * unpadded); beyond one block the clip's padded rows are Transformers'
 * own zero rows (attended, as there) and further blocks are their own
 * batch elements. */
static vlm_status encoder_inputs(const vlm_model_config *config, const vlm_media_item *item, int64_t rows,
                                 vlm_tensor_list *out) {
  phi4_audio a;
  int64_t frames = 0;
  VLM_RETURN_IF_ERROR(describe(config, &a));
  VLM_RETURN_IF_ERROR(item_frames(config, item, &a, &frames));
  audio_rows plan, clip;
  plan_rows(&a, rows, &plan);
  plan_rows(&a, frames, &clip);
  bool padded = rows != frames;
  if (padded && (rows < frames || !is_bucket(&a, rows) || (clip.blocks == 1) != (plan.blocks == 1)))
    return VLM_ERROR(INVALID_ARGUMENT, "the audio encoder runs a clip of %lld frames at its own length or padded to "
                     "its bucket (%lld frames), not at %lld", (long long)frames,
                     (long long)(bucket_of(clip.rows) * a.time_reduction), (long long)rows);
  const vlm_named_tensor *features = vlm_media_item_tensor(item, "audio_input_features");
  float *data = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "audio_input_features", VLM_DTYPE_F32, 2,
                                          VLM_SHAPE(rows, a.input_size), (void **)&data));
  memcpy(data, features->data, vlm_named_tensor_bytes(features));
  memset(data + frames * a.input_size, 0, (size_t)((rows - frames) * a.input_size) * sizeof(float));
  int64_t s = plan.block;
  int32_t *index = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "audio_bias_index", VLM_DTYPE_I32, 1, VLM_SHAPE(s * s), (void **)&index));
  /* Phi4MultimodalAudioRelativeAttentionBias: j - i clipped to
   * [-max_distance, max_distance - 1], then |.| or + buckets / 2. */
  for (int64_t i = 0; i < s; i++)
    for (int64_t j = 0; j < s; j++) {
      int64_t relative = j - i;
      if (relative < -a.max_distance) relative = -a.max_distance;
      if (relative > a.max_distance - 1) relative = a.max_distance - 1;
      index[i * s + j] = (int32_t)(a.symmetric ? (relative < 0 ? -relative : relative) : relative + a.buckets / 2);
    }
  float *mask = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "audio_chunk_mask", VLM_DTYPE_F32, 2, VLM_SHAPE(s, s), (void **)&mask));
  /* Over s rows the streaming mask of the clip's rows is theirs over
   * clip.rows (its chunks do not depend on the length). */
  vlm_phi4_audio_chunk_mask(s, a.chunk_size, a.left_chunk, mask);
  if (plan.blocks == 1)
    for (int64_t i = 0; i < s; i++)
      for (int64_t j = clip.rows; j < s; j++) mask[i * s + j] = -INFINITY;
  if (plan.padding > 0) {
    VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "audio_block_padding", VLM_DTYPE_F32, 2,
                                            VLM_SHAPE(plan.padding, a.hidden), (void **)&data));
    memset(data, 0, (size_t)(plan.padding * a.hidden) * sizeof(float));
  }
  if (is_bucket(&a, rows)) VLM_RETURN_IF_ERROR(add_row_masks(&a, frames, rows, out));
  int32_t *mode = NULL;
  VLM_RETURN_IF_ERROR(vlm_tensor_list_add(out, "audio_vision_mode", VLM_DTYPE_I32, 1, VLM_SHAPE(plan.rows),
                                          (void **)&mode));
  bool vision = (item->request_kinds & (1u << VLM_MEDIA_IMAGE)) != 0;
  for (int64_t r = 0; r < plan.rows; r++) mode[r] = vision ? 1 : 0;
  return VLM_OK;
}

/* ---- The graph ---------------------------------------------------------- */

typedef struct builder {
  vlm_graph *graph;
  const phi4_audio *a;
  bool masked; /* a bucket's graph: the row masks (add_row_masks) */
} builder;

/* A Linear, or a kernel-1 Conv1d / 1x1 Conv2d stored [out, in, 1(, 1)]; the
 * node named "audio.<module>" (the module's name without PREFIX). */
static int32_t linear(builder *b, int32_t x, const char *module, long long layer, int64_t out, int64_t in,
                      int stored_rank) {
  char name[VLM_GRAPH_NAME_LENGTH];
  snprintf(name, sizeof(name), module, layer);
  int64_t shape[4] = {out, in, 1, 1};
  int32_t w = vlm_nn_weight(b->graph, stored_rank, shape, "%s.weight", name);
  if (stored_rank != 2) w = vlm_graph_reshape(b->graph, w, 2, shape, "%s.weight.2d", name);
  int32_t bias = vlm_nn_weight(b->graph, 1, VLM_SHAPE(out), "%s.bias", name);
  return vlm_graph_linear(b->graph, x, w, bias, "audio.%s", name + strlen(PREFIX));
}

static int32_t layer_norm(builder *b, int32_t x, const char *module, long long layer) {
  char name[VLM_GRAPH_NAME_LENGTH];
  snprintf(name, sizeof(name), module, layer);
  int64_t width = b->a->hidden;
  int32_t w = vlm_nn_weight(b->graph, 1, VLM_SHAPE(width), "%s.weight", name);
  int32_t bias = vlm_nn_weight(b->graph, 1, VLM_SHAPE(width), "%s.bias", name);
  return vlm_graph_layer_norm(b->graph, x, w, bias, 1e-5, "audio.%s", name + strlen(PREFIX));
}

/* Phi4MultimodalAudioMLP: layer_norm, gate_up_proj, up * act(gate), down_proj. */
static int32_t mlp(builder *b, int32_t x, long long l, const char *which) {
  const phi4_audio *a = b->a;
  char module[96];
  snprintf(module, sizeof(module), ENCODER "encoders.%%lld.%s.layer_norm", which);
  int32_t h = layer_norm(b, x, module, l);
  snprintf(module, sizeof(module), ENCODER "encoders.%%lld.%s.gate_up_proj", which);
  int32_t up_gate = linear(b, h, module, l, 2 * a->intermediate, a->hidden, 2);
  int32_t up = vlm_graph_slice(b->graph, up_gate, 1, 0, a->intermediate, "audio.encoders.%lld.%s.up", l, which);
  int32_t gate = vlm_graph_slice(b->graph, up_gate, 1, a->intermediate, a->intermediate, "audio.encoders.%lld.%s.gate",
                                 l, which);
  int32_t gated = vlm_graph_gated(b->graph, gate, up, a->activation, "audio.encoders.%lld.%s.gated", l, which);
  snprintf(module, sizeof(module), ENCODER "encoders.%%lld.%s.down_proj", which);
  return linear(b, gated, module, l, a->hidden, a->intermediate, 2);
}

static int32_t attention(builder *b, int32_t x, int32_t bias, long long l, int64_t rows) {
  const phi4_audio *a = b->a;
  int64_t dim = a->hidden / a->heads;
  int32_t qkv[3];
  static const char *const names[] = {ENCODER "encoders.%lld.self_attn.q_proj", ENCODER "encoders.%lld.self_attn.k_proj",
                                      ENCODER "encoders.%lld.self_attn.v_proj"};
  for (int i = 0; i < 3; i++)
    qkv[i] = vlm_graph_reshape(b->graph, linear(b, x, names[i], l, a->hidden, a->hidden, 2), 3,
                               VLM_SHAPE(rows, a->heads, dim), "audio.encoders.%lld.self_attn.%c", l, "qkv"[i]);
  double scale = 1.0 / __builtin_sqrt((double)dim);
  int32_t attended = vlm_graph_biased_attention(b->graph, qkv[0], qkv[1], qkv[2], bias, scale,
                                                "audio.encoders.%lld.self_attn.attention", l);
  return linear(b, attended, ENCODER "encoders.%lld.self_attn.o_proj", l, a->hidden, a->hidden, 2);
}

/* Phi4MultimodalAudioConvModule over blocks of `block` rows. */
static int32_t conv_module(builder *b, int32_t x, long long l, int64_t rows, int64_t block) {
  const phi4_audio *a = b->a;
  vlm_graph *g = b->graph;
  int64_t h = a->hidden, dw = a->hidden * a->multiplier;
  int32_t normed = layer_norm(b, x, ENCODER "encoders.%lld.conv.layer_norm", l);
  int32_t glu = linear(b, normed, ENCODER "encoders.%lld.conv.glu.ext_pw_conv_1d", l, 2 * h, h, 3);
  int32_t b1 = vlm_graph_reshape(g, vlm_nn_weight(g, 3, VLM_SHAPE(1, h, 1), ENCODER "encoders.%lld.conv.glu.b1", l), 1,
                                 VLM_SHAPE(h), "audio.encoders.%lld.conv.glu.b1", l);
  int32_t b2 = vlm_graph_reshape(g, vlm_nn_weight(g, 3, VLM_SHAPE(1, h, 1), ENCODER "encoders.%lld.conv.glu.b2", l), 1,
                                 VLM_SHAPE(h), "audio.encoders.%lld.conv.glu.b2", l);
  int32_t first = vlm_graph_add(g, vlm_graph_slice(g, glu, 1, 0, h, "audio.encoders.%lld.conv.glu.first", l), b1,
                                "audio.encoders.%lld.conv.glu.first_b1", l);
  int32_t second = vlm_graph_add(g, vlm_graph_slice(g, glu, 1, h, h, "audio.encoders.%lld.conv.glu.second", l), b2,
                                 "audio.encoders.%lld.conv.glu.second_b2", l);
  int32_t gated = vlm_graph_gated(g, second, first, a->glu_activation, "audio.encoders.%lld.conv.glu", l);
  /* Conv1d(padding = kernel - 1) then the last kernel - 1 outputs dropped:
   * a causal depthwise conv over each block's rows. */
  int32_t blocks = vlm_graph_reshape(g, gated, 4, VLM_SHAPE(rows / block, block, 1, h),
                                     "audio.encoders.%lld.conv.blocks", l);
  int32_t kernel = vlm_graph_reshape(
      g, vlm_nn_weight(g, 3, VLM_SHAPE(dw, 1, a->kernel), ENCODER "encoders.%lld.conv.dw_sep_conv_1d.dw_conv.weight", l),
      4, VLM_SHAPE(dw, 1, a->kernel, 1), "audio.encoders.%lld.conv.dw_kernel", l);
  int32_t dw_bias = vlm_nn_weight(g, 1, VLM_SHAPE(dw), ENCODER "encoders.%lld.conv.dw_sep_conv_1d.dw_conv.bias", l);
  int32_t depthwise = vlm_graph_conv2d(g, blocks, kernel, dw_bias, VLM_SHAPE(1, 1), VLM_SHAPE(a->kernel - 1, 0, 0, 0),
                                       h, "audio.encoders.%lld.conv.dw_sep_conv_1d.dw_conv", l);
  int32_t flat = vlm_graph_reshape(g, depthwise, 2, VLM_SHAPE(rows, dw), "audio.encoders.%lld.conv.dw_rows", l);
  int32_t pointwise = linear(b, flat, ENCODER "encoders.%lld.conv.dw_sep_conv_1d.pw_conv", l, h, dw, 3);
  int32_t act = vlm_graph_activation(g, pointwise, a->conv_activation, "audio.encoders.%lld.conv.act", l);
  return linear(b, act, ENCODER "encoders.%lld.conv.ext_pw_conv_1d", l, h, h, 3);
}

static int32_t conformer_layer(builder *b, int32_t x, int32_t bias, long long l, int64_t rows, int64_t block) {
  vlm_graph *g = b->graph;
  int32_t residual = vlm_graph_add(g, x, vlm_graph_scale(g, mlp(b, x, l, "feed_forward_in"), 0.5,
                                                          "audio.encoders.%lld.feed_forward_in.half", l),
                                   "audio.encoders.%lld.ff_in_residual", l);
  int32_t normed = layer_norm(b, residual, ENCODER "encoders.%lld.layer_norm_att", l);
  int32_t h = vlm_graph_add(g, residual, attention(b, normed, bias, l, rows), "audio.encoders.%lld.attn_residual", l);
  h = vlm_graph_add(g, h, conv_module(b, h, l, rows, block), "audio.encoders.%lld.conv_residual", l);
  h = vlm_graph_add(g, h, vlm_graph_scale(g, mlp(b, h, l, "feed_forward_out"), 0.5,
                                          "audio.encoders.%lld.feed_forward_out.half", l),
                    "audio.encoders.%lld.ff_out_residual", l);
  return layer_norm(b, h, ENCODER "encoders.%lld.layer_norm", l);
}

/* x [rows, width] times row mask `stage` in a bucket's graph; x itself
 * otherwise. */
static int32_t clip_rows(builder *b, int32_t x, int64_t stage, int64_t rows) {
  if (!b->masked) return x;
  char name[48];
  snprintf(name, sizeof(name), "audio_row_mask_%lld", (long long)stage);
  int32_t mask = vlm_graph_input(b->graph, VLM_DTYPE_F32, 1, VLM_SHAPE(rows), name);
  return vlm_graph_scale_rows(b->graph, x, mask, "audio.clip_rows.%lld", (long long)stage);
}

/* The same on a [1, height, width, channels] grid, by its time rows. */
static int32_t clip_grid(builder *b, int32_t x, int64_t stage, int64_t height, int64_t width) {
  if (!b->masked) return x;
  int64_t c = b->a->channels;
  int32_t rows = vlm_graph_reshape(b->graph, x, 2, VLM_SHAPE(height, width * c), "audio.clip_grid.%lld.rows",
                                   (long long)stage);
  return vlm_graph_reshape(b->graph, clip_rows(b, rows, stage, height), 4, VLM_SHAPE(1, height, width, c),
                           "audio.clip_grid.%lld", (long long)stage);
}

/* NemoConvSubsampling on the normalized features [frames, input_size]
 * (in a bucket's graph the padded rows zeroed before each conv and after
 * the output linear). */
static int32_t subsampling(builder *b, int32_t x, int64_t frames) {
  const phi4_audio *a = b->a;
  vlm_graph *g = b->graph;
  int64_t height = frames, width = a->input_size, c = a->channels;
  int32_t h = vlm_graph_reshape(g, clip_rows(b, x, 0, frames), 4, VLM_SHAPE(1, height, width, 1),
                                "audio.embed.input");
  int32_t w = vlm_nn_weight(g, 4, VLM_SHAPE(c, 1, 3, 3), ENCODER "embed.conv.0.weight");
  h = vlm_graph_conv2d(g, h, w, vlm_nn_weight(g, 1, VLM_SHAPE(c), ENCODER "embed.conv.0.bias"), VLM_SHAPE(2, 2),
                       VLM_SHAPE(1, 1, 1, 1), 1, "audio.embed.conv.0");
  h = vlm_graph_activation(g, h, a->nemo_activation, "audio.embed.conv.1");
  height = (height - 1) / 2 + 1, width = (width - 1) / 2 + 1;
  for (int64_t i = 1; i < a->sampling; i++) {
    long long dw = 3 * i - 1, pw = 3 * i;
    h = clip_grid(b, h, i, height, width);
    w = vlm_nn_weight(g, 4, VLM_SHAPE(c, 1, 3, 3), ENCODER "embed.conv.%lld.weight", dw);
    h = vlm_graph_conv2d(g, h, w, vlm_nn_weight(g, 1, VLM_SHAPE(c), ENCODER "embed.conv.%lld.bias", dw), VLM_SHAPE(2, 2),
                         VLM_SHAPE(1, 1, 1, 1), c, "audio.embed.conv.%lld", dw);
    height = (height - 1) / 2 + 1, width = (width - 1) / 2 + 1;
    int32_t rows = vlm_graph_reshape(g, h, 2, VLM_SHAPE(height * width, c), "audio.embed.conv.%lld.rows", dw);
    rows = linear(b, rows, ENCODER "embed.conv.%lld", pw, c, c, 4);
    h = vlm_graph_reshape(g, vlm_graph_activation(g, rows, a->nemo_activation, "audio.embed.conv.%lld", pw + 1), 4,
                          VLM_SHAPE(1, height, width, c), "audio.embed.conv.%lld.grid", pw + 1);
  }
  /* hidden_states.transpose(1, 2).reshape(b, t, -1): channel-major. */
  int32_t channel_major = vlm_graph_permute(g, h, (const int32_t[]){0, 1, 3, 2}, "audio.embed.transposed");
  int32_t flat = vlm_graph_reshape(g, channel_major, 2, VLM_SHAPE(height, c * width), "audio.embed.flat");
  return clip_rows(b, linear(b, flat, ENCODER "embed.out", 0, a->hidden, c * width, 2), a->sampling, height);
}

static int32_t projection(builder *b, int32_t x, const char *mode) {
  const phi4_audio *a = b->a;
  char module[96];
  snprintf(module, sizeof(module), PREFIX "up_proj_for_%s", mode);
  int32_t up = linear(b, x, module, 0, a->text_hidden, a->hidden, 2);
  int32_t act = vlm_graph_activation(b->graph, up, VLM_ACTIVATION_GELU, "audio.gelu_for_%s", mode);
  snprintf(module, sizeof(module), PREFIX "down_proj_for_%s", mode);
  return linear(b, act, module, 0, a->text_hidden, a->text_hidden, 2);
}

static vlm_status build_encoder(const vlm_model_config *config, int64_t frames, vlm_graph *graph,
                                vlm_encoder_nodes *out_nodes) {
  memset(out_nodes, 0, sizeof(*out_nodes));
  phi4_audio a;
  VLM_RETURN_IF_ERROR(describe(config, &a));
  if (frames < 1) return VLM_ERROR(INVALID_ARGUMENT, "an audio clip of %lld frames", (long long)frames);
  audio_rows plan;
  plan_rows(&a, frames, &plan);
  builder b = {graph, &a, is_bucket(&a, frames)};
  vlm_graph *g = graph;
  int32_t x = vlm_graph_input(g, VLM_DTYPE_F32, 2, VLM_SHAPE(frames, a.input_size), "audio_input_features");
  int32_t mean = vlm_nn_weight(g, 1, VLM_SHAPE(a.input_size), ENCODER "encoder_embedding.global_mean");
  int32_t invstd = vlm_nn_weight(g, 1, VLM_SHAPE(a.input_size), ENCODER "encoder_embedding.global_invstd");
  /* (x - mean) * invstd; x + (-mean) is the same float as x - mean. */
  x = vlm_graph_add(g, x, vlm_graph_scale(g, mean, -1.0, "audio.encoder_embedding.negated_mean"),
                    "audio.encoder_embedding.centred");
  x = vlm_graph_mul(g, x, invstd, "audio.encoder_embedding");
  int32_t h = subsampling(&b, x, frames);
  int64_t total = plan.blocks * plan.block;
  if (plan.padding > 0) {
    int32_t zeros = vlm_graph_input(g, VLM_DTYPE_F32, 2, VLM_SHAPE(plan.padding, a.hidden), "audio_block_padding");
    h = vlm_graph_concat(g, (const int32_t[]){h, zeros}, 2, 0, "audio.unfolded");
  }
  int64_t s = plan.block;
  int32_t index = vlm_graph_input(g, VLM_DTYPE_I32, 1, VLM_SHAPE(s * s), "audio_bias_index");
  int32_t table =
      vlm_nn_weight(g, 2, VLM_SHAPE(a.buckets, a.heads), ENCODER "relative_attention_bias_layer.bias_values.weight");
  int32_t bias = vlm_graph_gather(g, table, index, "audio.relative_attention_bias_layer.rows");
  bias = vlm_graph_reshape(g, vlm_graph_transpose(g, bias, "audio.relative_attention_bias_layer.by_head"), 3,
                           VLM_SHAPE(a.heads, s, s), "audio.relative_attention_bias_layer");
  int32_t mask = vlm_graph_input(g, VLM_DTYPE_F32, 2, VLM_SHAPE(s, s), "audio_chunk_mask");
  bias = vlm_graph_add(g, bias, mask, "audio.attention_mask");
  for (int64_t l = 0; l < a.blocks; l++) h = conformer_layer(&b, h, bias, (long long)l, total, s);
  if (plan.padding > 0) h = vlm_graph_slice(g, h, 0, 0, plan.rows, "audio.folded");
  int32_t encoder = h;
  int32_t speech = projection(&b, h, "speech"), vision = projection(&b, h, "vision_speech");
  int32_t mode = vlm_graph_input(g, VLM_DTYPE_I32, 1, VLM_SHAPE(plan.rows), "audio_vision_mode");
  int32_t projected = vlm_graph_row_select(g, mode, vision, speech, "audio.projection");
  VLM_RETURN_IF_ERROR(vlm_graph_take_error(g));
  *out_nodes = (vlm_encoder_nodes){
      .output = projected, .stage_count = 2, .stages = {{"audio_encoder", encoder}, {"audio_projector", projected}}};
  return VLM_OK;
}

const vlm_family_audio vlm_phi4_audio_path = {
    .placeholder_token = placeholder_token,
    .token_count = token_count,
    .expand = vlm_expand_repeated, /* replace_audio_token: audio_embed_sizes copies */
    .encoder_rows = encoder_rows,
    .encoder_inputs = encoder_inputs,
    .build_encoder = build_encoder,
    .encoder_bucket = encoder_bucket,
};
