/* Phi-4-multimodal's speech encoder and projections on the xla backend,
 * through the engine's encoder table (vlm_xla_open_audio_encoder: an
 * encoder whose backend is "xla", so a host fallback fails), against the
 * cpu backend and the oracle's goldens: the clips of
 * tests/goldens/phi4_multimodal/speech (43 encoder rows, one block) and
 * long_speech (535 rows: two blocks of 500, the second padded), each in
 * the speech projection (the golden's audio_projector) and, as part of a
 * request with an image, the vision+speech one (against the cpu backend);
 * and image_speech's clip (the item of a golden request with an image, as
 * vlm_golden_media_items marks it) against that golden's
 * audio_projector_vision_speech: Transformers' vision+speech rows.
 *
 * Then clips cut from long_speech's features at lengths around the length
 * buckets, against the cpu backend, counting the modules opened.
 *
 * Needs the pinned IREE venv and a build with python-3.11-embed (else
 * SKIP(no-venv-xla) / SKIP(no-xla-runtime)); three modules compile. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#include "backends/cpu/cpu_encoder.h"
#include "models/model.h"
#include "validate/compare.h"
#include "validate/golden.h"
#include "validate/golden_media.h"

#ifndef VLM_HAVE_XLA_RUNTIME

static void xla_skips_without_python(void) {
  test_skip("no-xla-runtime", "built without python-3.11-embed (Debian's libpython3.11-dev, "
            "scripts/install-dependencies.sh); xla execution not tested");
}
TEST_MAIN(TEST(xla_skips_without_python))

#else

#include "backends/xla/xla_runtime.h"
#include "test_xla_support.h"
#include "vlm/xla.h"

/* max |a - b| / (1e-4 + 1e-4 |b|) (the goldens' hidden tolerance): <= 1 passes. */
static double worst(const float *actual, const float *expected, int64_t count) {
  double result = 0;
  for (int64_t i = 0; i < count; i++) {
    double ratio = fabs((double)actual[i] - (double)expected[i]) / (1e-4 + 1e-4 * fabs((double)expected[i]));
    if (!(ratio <= result)) result = isnan(ratio) ? INFINITY : ratio;
  }
  return result;
}

static void clip_matches_cpu_and_golden(const char *name, vlm_media_encoder *xla, vlm_cpu_encoder *cpu,
                                        vlm_model *model, const char *model_dir) {
  char case_dir[512];
  snprintf(case_dir, sizeof(case_dir), "%s/tests/goldens/phi4_multimodal/%s", VLM_SOURCE_DIR, name);
  vlm_golden_case golden;
  CHECK_OK(vlm_golden_case_open(case_dir, NULL, &golden));
  if (TEST_CURRENT_FAILED()) return;
  vlm_compare_context context = {.model_directory = model_dir, .model = model, .golden = &golden, .thread_count = 1};
  vlm_media_item *items = NULL;
  int item_count = 0;
  CHECK_OK(vlm_golden_media_items(&context, &items, &item_count));
  CHECK_INT_EQ(item_count, 1);
  vlm_tensor expected;
  CHECK_OK(vlm_golden_case_tensor(&golden, "audio_projector", &expected));
  if (!TEST_CURRENT_FAILED() && item_count == 1) {
    vlm_media_item *item = &items[0];
    CHECK_INT_EQ(item->kind, VLM_MEDIA_AUDIO);
    int64_t width = vlm_cpu_encoder_output_width(cpu), values = item->token_count * width;
    CHECK_INT_EQ(values, vlm_tensor_element_count(&expected));
    float *on_xla = malloc((size_t)values * sizeof(float)), *on_cpu = malloc((size_t)values * sizeof(float));
    float *vision_xla = malloc((size_t)values * sizeof(float)), *vision_cpu = malloc((size_t)values * sizeof(float));
    double started = seconds_now();
    CHECK_OK(xla->operations->encode(xla->self, item, on_xla));
    double seconds = seconds_now() - started;
    CHECK_OK(vlm_cpu_encoder_encode(cpu, item, on_cpu));
    double vs_golden = worst(on_xla, expected.data, values), vs_cpu = worst(on_xla, on_cpu, values);
    printf("  %s: %lld rows on xla in %.1f s (with compile), %.3g of the tolerance vs the golden, %.3g vs cpu\n",
           name, (long long)item->token_count, seconds, vs_golden, vs_cpu);
    CHECK(vs_golden <= 1.0);
    CHECK(vs_cpu <= 1.0);
    /* In a request with an image: the vision+speech projection, other
     * values, the same on both backends. */
    item->request_kinds |= 1u << VLM_MEDIA_IMAGE;
    CHECK_OK(xla->operations->encode(xla->self, item, vision_xla));
    CHECK_OK(vlm_cpu_encoder_encode(cpu, item, vision_cpu));
    double vision_vs_cpu = worst(vision_xla, vision_cpu, values), vision_vs_speech = worst(vision_cpu, on_cpu, values);
    printf("  %s vision+speech: %.3g of the tolerance vs cpu (%.3g from the speech projection)\n", name,
           vision_vs_cpu, vision_vs_speech);
    CHECK(vision_vs_cpu <= 1.0);
    CHECK(vision_vs_speech > 100.0);
    free(on_xla);
    free(on_cpu);
    free(vision_xla);
    free(vision_cpu);
  }
  vlm_golden_media_items_release(items, item_count);
  vlm_golden_case_close(&golden);
}

/* The clip of an image + speech golden (images first, then the clip, the
 * items marked as a request with an image) on xla: the vision+speech
 * projection Transformers computed. */
static void vision_speech_clip_matches_golden(const char *name, vlm_media_encoder *xla, vlm_model *model,
                                              const char *model_dir) {
  char case_dir[512];
  snprintf(case_dir, sizeof(case_dir), "%s/tests/goldens/phi4_multimodal/%s", VLM_SOURCE_DIR, name);
  vlm_golden_case golden;
  CHECK_OK(vlm_golden_case_open(case_dir, NULL, &golden));
  if (TEST_CURRENT_FAILED()) return;
  vlm_compare_context context = {.model_directory = model_dir, .model = model, .golden = &golden, .thread_count = 1};
  vlm_media_item *items = NULL;
  int item_count = 0;
  CHECK_OK(vlm_golden_media_items(&context, &items, &item_count));
  CHECK_INT_EQ(item_count, 2);
  vlm_tensor expected;
  CHECK_OK(vlm_golden_case_tensor(&golden, "audio_projector_vision_speech", &expected));
  if (!TEST_CURRENT_FAILED() && item_count == 2) {
    vlm_media_item *clip = &items[1];
    CHECK_INT_EQ(clip->kind, VLM_MEDIA_AUDIO);
    CHECK(clip->request_kinds & (1u << VLM_MEDIA_IMAGE));
    int64_t values = vlm_tensor_element_count(&expected);
    CHECK_INT_EQ(clip->token_count * expected.shape[expected.rank - 1], values);
    float *on_xla = malloc((size_t)values * sizeof(float));
    if (on_xla && !TEST_CURRENT_FAILED()) {
      CHECK_OK(xla->operations->encode(xla->self, clip, on_xla));
      double vs_golden = worst(on_xla, expected.data, values);
      printf("  %s: the clip's %lld vision+speech rows on xla, %.3g of the tolerance vs the golden\n", name,
             (long long)clip->token_count, vs_golden);
      CHECK(vs_golden <= 1.0);
    }
    free(on_xla);
  }
  vlm_golden_media_items_release(items, item_count);
  vlm_golden_case_close(&golden);
}

static void audio_encoder_matches_cpu_and_goldens(void) {
  if (!environment_ready()) return;
  char directory[512];
  snprintf(directory, sizeof(directory), "%s/tests/models/phi4_multimodal", VLM_SOURCE_DIR);
  vlm_model *model = NULL;
  CHECK_OK(vlm_model_open(directory, NULL, &model));
  if (!model) return;
  char cache[600];
  snprintf(cache, sizeof(cache), "%s/cache", test_temp_dir());
  vlm_xla_decoder_options options = {.cache_dir = cache, .compile_if_missing = true};
  vlm_media_encoder *xla = NULL;
  vlm_cpu_encoder *cpu = NULL;
  CHECK_OK(vlm_xla_open_audio_encoder(model, &options, &xla));
  CHECK_OK(vlm_cpu_encoder_open(model, VLM_MEDIA_AUDIO, NULL, &cpu));
  if (xla) {
    CHECK_STR_EQ(xla->operations->backend, "xla");
    CHECK_INT_EQ(xla->operations->kind, VLM_MEDIA_AUDIO);
  }
  if (xla && cpu && !TEST_CURRENT_FAILED()) {
    clip_matches_cpu_and_golden("speech", xla, cpu, model, directory);
    clip_matches_cpu_and_golden("long_speech", xla, cpu, model, directory);
    vision_speech_clip_matches_golden("image_speech", xla, model, directory);
  }
  vlm_media_encoder_release(xla);
  vlm_cpu_encoder_release(cpu);
  vlm_model_release(model);
}

/* The first `frames` frames of `source` as a clip of their own, every
 * encoder row (ceil(frames / 8)) a token. */
static void make_clip(const vlm_media_item *source, int64_t frames, vlm_media_item *out) {
  memset(out, 0, sizeof(*out));
  out->kind = VLM_MEDIA_AUDIO;
  out->processor = source->processor;
  const vlm_named_tensor *features = vlm_media_item_tensor(source, "audio_input_features");
  CHECK(features && features->shape[0] >= frames);
  if (!features || features->shape[0] < frames) return;
  float *data = NULL;
  int32_t *sizes = NULL;
  CHECK_OK(vlm_tensor_list_add(&out->tensors, "audio_input_features", VLM_DTYPE_F32, 2,
                               VLM_SHAPE(frames, features->shape[1]), (void **)&data));
  if (data) memcpy(data, features->data, (size_t)(frames * features->shape[1]) * sizeof(float));
  CHECK_OK(vlm_tensor_list_add(&out->tensors, "audio_embed_sizes", VLM_DTYPE_I32, 1, VLM_SHAPE(1), (void **)&sizes));
  out->token_count = (frames + 7) / 8;
  if (sizes) sizes[0] = (int32_t)out->token_count;
}

/* Encodes the clip on both backends; returns how many modules the xla
 * encoder has open afterwards, and checks the one it ran is `bucket`'s. */
static int clip_matches_cpu(const vlm_media_item *source, int64_t frames, int64_t bucket_frames,
                            vlm_media_encoder *xla, vlm_cpu_encoder *cpu) {
  vlm_media_item clip;
  make_clip(source, frames, &clip);
  int64_t values = clip.token_count * vlm_cpu_encoder_output_width(cpu);
  float *on_xla = malloc((size_t)values * sizeof(float)), *on_cpu = malloc((size_t)values * sizeof(float));
  CHECK(on_xla && on_cpu);
  if (on_xla && on_cpu && !TEST_CURRENT_FAILED()) {
    CHECK_OK(xla->operations->encode(xla->self, &clip, on_xla));
    CHECK_OK(vlm_cpu_encoder_encode(cpu, &clip, on_cpu));
    double vs_cpu = worst(on_xla, on_cpu, values);
    printf("  %lld frames (%lld rows) in the %lld-frame bucket: %.3g of the tolerance vs cpu\n", (long long)frames,
           (long long)clip.token_count, (long long)bucket_frames, vs_cpu);
    CHECK(vs_cpu <= 1.0);
  }
  free(on_xla);
  free(on_cpu);
  vlm_media_item_release(&clip);
  vlm_module_report reports[16];
  int count = xla->operations->module_reports(xla->self, reports, 16);
  char name[64];
  snprintf(name, sizeof(name), "media_encoder[rows=%lld]", (long long)bucket_frames);
  bool found = false;
  for (int i = 0; i < count && i < 16; i++) found = found || !strcmp(reports[i].name, name);
  CHECK(found);
  return count;
}

/* Clips of different lengths share a bucket's module (the graph padded
 * to 16, 32, .., 256, 500 encoder rows, then whole 500-row blocks) and each
 * gives the cpu backend's unpadded rows: padding within one block (the
 * padded keys masked out of the attention, the padded frames zeroed
 * before every subsampling conv), at a bucket's edge (64 rows, and 500: a
 * whole block, no padding), and a clip one row into a second block (its
 * padded rows Transformers' zero rows). The bucket of each length is
 * checked without IREE in test_phi4_audio.c. The speech golden (43 rows) and long_speech (535) run in the
 * 64- and 1000-row buckets in the test above. */
static void clips_share_length_buckets(void) {
  if (!environment_ready()) return;
  char directory[512], case_dir[600];
  snprintf(directory, sizeof(directory), "%s/tests/models/phi4_multimodal", VLM_SOURCE_DIR);
  snprintf(case_dir, sizeof(case_dir), "%s/tests/goldens/phi4_multimodal/long_speech", VLM_SOURCE_DIR);
  vlm_model *model = NULL;
  CHECK_OK(vlm_model_open(directory, NULL, &model));
  if (!model) return;
  vlm_golden_case golden;
  CHECK_OK(vlm_golden_case_open(case_dir, NULL, &golden));
  if (TEST_CURRENT_FAILED()) {
    vlm_model_release(model);
    return;
  }
  vlm_compare_context context = {.model_directory = directory, .model = model, .golden = &golden, .thread_count = 1};
  vlm_media_item *items = NULL;
  int item_count = 0;
  CHECK_OK(vlm_golden_media_items(&context, &items, &item_count));
  char cache[600];
  snprintf(cache, sizeof(cache), "%s/cache", test_temp_dir());
  vlm_xla_decoder_options options = {.cache_dir = cache, .compile_if_missing = true};
  vlm_media_encoder *xla = NULL;
  vlm_cpu_encoder *cpu = NULL;
  CHECK_OK(vlm_xla_open_audio_encoder(model, &options, &xla));
  CHECK_OK(vlm_cpu_encoder_open(model, VLM_MEDIA_AUDIO, NULL, &cpu));
  if (xla && cpu && item_count == 1 && !TEST_CURRENT_FAILED()) {
    const vlm_media_item *source = &items[0];
    /* Two lengths, one module: 33 and 43 rows in the 64-row bucket. */
    CHECK_INT_EQ(clip_matches_cpu(source, 261, 512, xla, cpu), 1);
    CHECK_INT_EQ(clip_matches_cpu(source, 339, 512, xla, cpu), 1);
    CHECK_INT_EQ(clip_matches_cpu(source, 512, 512, xla, cpu), 1); /* the edge: 64 rows */
    CHECK_INT_EQ(clip_matches_cpu(source, 3993, 4000, xla, cpu), 2); /* 500 rows: one whole block */
    CHECK_INT_EQ(clip_matches_cpu(source, 4001, 8000, xla, cpu), 3); /* 501 rows: two blocks */
    CHECK_INT_EQ(clip_matches_cpu(source, 4100, 8000, xla, cpu), 3);
  }
  vlm_media_encoder_release(xla);
  vlm_cpu_encoder_release(cpu);
  vlm_golden_media_items_release(items, item_count);
  vlm_golden_case_close(&golden);
  vlm_model_release(model);
}

/* A model without an audio path has no xla audio encoder, by name. */
static void refuses_a_model_without_audio(void) {
  char directory[512];
  snprintf(directory, sizeof(directory), "%s/tests/models/llava", VLM_SOURCE_DIR);
  vlm_model *model = NULL;
  CHECK_OK(vlm_model_open(directory, NULL, &model));
  vlm_media_encoder *xla = NULL;
  if (model) CHECK_ERROR(vlm_xla_open_audio_encoder(model, NULL, &xla), VLM_STATUS_UNIMPLEMENTED, "no audio path");
  CHECK(xla == NULL);
  vlm_model_release(model);
}

TEST_MAIN(TEST(audio_encoder_matches_cpu_and_goldens), TEST(clips_share_length_buckets),
          TEST(refuses_a_model_without_audio))

#endif
