/* The xla vision module executed by IREE (llvm-cpu, local-sync) against the
 * cpu backend on the tiny LLaVA: the golden image's pixel values -> the
 * selected vision features and the projected features, each within float32
 * tolerance of the cpu backend (vlm_vision_model_encode and its
 * "model.vision_features.0" node) and of the oracle's goldens; two images
 * with one call each and with two images per call; refusal of a mismatched
 * artifact and of a wrong image size.
 *
 * Tolerance: |xla - cpu| <= 1e-5 + 1e-4 |cpu| elementwise (the text
 * module's), max |xla - cpu| printed. Needs the pinned IREE venv (.venv-xla)
 * and a build with python-3.11-embed; without either its tests report
 * SKIP(no-venv-xla) or SKIP(no-xla-runtime) and ctest shows it skipped. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#ifndef VLM_HAVE_XLA_RUNTIME

static void xla_vision_execution_skips_without_python(void) {
  test_skip("no-xla-runtime", "built without python-3.11-embed (Debian's libpython3.11-dev, "
            "scripts/install-dependencies.sh); xla execution not tested");
}
TEST_MAIN(TEST(xla_vision_execution_skips_without_python))

#else

#include "backends/xla/iree_compiler.h"
#include "backends/xla/stablehlo_vision.h"
#include "backends/xla/xla_runtime.h"
#include "backends/xla/xla_vision_runtime.h"
#include "engine/vision_model.h"
#include "test_xla_support.h"
#include "validate/golden.h"


#define MODEL VLM_SOURCE_DIR "/tests/models/llava"
#define ONE_IMAGE VLM_SOURCE_DIR "/tests/goldens/llava/one_image"
#define TOKENS 576
#define TEXT_HIDDEN 128
#define VISION_HIDDEN 64


static void cache_dir(char *out, size_t size) { snprintf(out, size, "%s/cache", test_temp_dir()); }

typedef struct comparison {
  double worst; /* max |a - b| / (atol + rtol |b|); <= 1 passes */
  double max_abs;
} comparison;

static comparison compare(const float *actual, const float *expected, size_t count) {
  comparison c = {0, 0};
  for (size_t i = 0; i < count; i++) {
    double difference = fabs((double)actual[i] - (double)expected[i]);
    double ratio = difference / (1e-5 + 1e-4 * fabs((double)expected[i]));
    if (!(ratio <= c.worst)) c.worst = isnan(ratio) ? INFINITY : ratio;
    if (difference > c.max_abs) c.max_abs = difference;
  }
  return c;
}

/* The cpu backend's selected features, from its node observer. */
typedef struct feature_capture {
  float *values;
  size_t count;
  bool seen;
} feature_capture;

static void capture_features(void *context, const vlm_node *node, const float *values) {
  feature_capture *capture = context;
  if (strcmp(node->name, "model.vision_features.0") != 0) return;
  memcpy(capture->values, values, capture->count * sizeof(float));
  capture->seen = true;
}

static void cpu_encode(const vlm_pixel_values *image, float *projected, float *features) {
  vlm_vision_model *cpu = NULL;
  CHECK_OK(vlm_vision_model_open(MODEL, NULL, &cpu));
  if (!cpu) return;
  feature_capture capture = {features, (size_t)TOKENS * VISION_HIDDEN, false};
  vlm_vision_trace trace = {.node_observer = capture_features, .node_context = &capture};
  vlm_vision_model_set_trace(cpu, &trace);
  double started = seconds_now();
  CHECK_OK(vlm_vision_model_encode(cpu, image, 1, projected));
  printf("  cpu backend encode: %.1f ms\n", (seconds_now() - started) * 1e3);
  CHECK(capture.seen);
  vlm_vision_model_release(cpu);
}

static bool golden_image(vlm_golden_case *golden, vlm_pixel_values *image) {
  CHECK_OK(vlm_golden_case_open(ONE_IMAGE, NULL, golden));
  if (TEST_CURRENT_FAILED()) return false;
  vlm_tensor pixels;
  CHECK_OK(vlm_golden_case_tensor(golden, "processor.pixel_values", &pixels));
  if (TEST_CURRENT_FAILED()) return false;
  *image = (vlm_pixel_values){pixels.data, pixels.shape[1], pixels.shape[2], pixels.shape[3]};
  return true;
}

static vlm_status prepare(const vlm_xla_vision_encoder *model, int32_t images_per_call, char *artifact_dir,
                          size_t size) {
  char cache[600];
  cache_dir(cache, sizeof(cache));
  vlm_stablehlo_vision_options options = {.images_per_call = images_per_call};
  double started = seconds_now();
  vlm_status status = vlm_xla_vision_prepare_artifact(model, &options, VLM_XLA_TARGET_LLVM_CPU, cache, true, NULL,
                                                      artifact_dir, size);
  printf("  vision module, %d image(s) per call: compiled (llvm-cpu) in %.1f s\n", images_per_call,
         seconds_now() - started);
  return status;
}

static char one_per_call_artifact[VLM_XLA_PATH_LENGTH];

static void features_and_projection_match_the_cpu_backend(void) {
  if (!environment_ready()) return;
  vlm_golden_case golden;
  vlm_pixel_values image;
  if (!golden_image(&golden, &image)) return;
  float *cpu_projected = malloc((size_t)TOKENS * TEXT_HIDDEN * sizeof(float));
  float *cpu_features = malloc((size_t)TOKENS * VISION_HIDDEN * sizeof(float));
  float *projected = malloc((size_t)TOKENS * TEXT_HIDDEN * sizeof(float));
  float *features = malloc((size_t)TOKENS * VISION_HIDDEN * sizeof(float));
  cpu_encode(&image, cpu_projected, cpu_features);

  vlm_xla_vision_encoder model;
  CHECK_OK(vlm_xla_vision_encoder_open(MODEL, &model));
  CHECK_OK(prepare(&model, 1, one_per_call_artifact, sizeof(one_per_call_artifact)));
  vlm_xla_vision_runtime *runtime = NULL;
  vlm_xla_runtime_options options = {.target = VLM_XLA_TARGET_LLVM_CPU};
  char cache[600];
  cache_dir(cache, sizeof(cache));
  if (!TEST_CURRENT_FAILED()) CHECK_OK(vlm_xla_vision_runtime_open(&model, NULL, cache, NULL, &options, &runtime));
  if (runtime) {
    CHECK_OK(vlm_xla_vision_encode(runtime, &image, 1, projected, features));
    double started = seconds_now();
    const int repeats = 5;
    for (int i = 0; i < repeats; i++) CHECK_OK(vlm_xla_vision_encode(runtime, &image, 1, projected, features));
    printf("  xla encode (1 image, local-sync): %.1f ms\n", (seconds_now() - started) * 1e3 / repeats);
    comparison f = compare(features, cpu_features, (size_t)TOKENS * VISION_HIDDEN);
    comparison p = compare(projected, cpu_projected, (size_t)TOKENS * TEXT_HIDDEN);
    printf("  vision features  max |xla - cpu| = %.3g (worst/tolerance %.3f)\n", f.max_abs, f.worst);
    printf("  projected        max |xla - cpu| = %.3g (worst/tolerance %.3f)\n", p.max_abs, p.worst);
    CHECK(f.worst <= 1.0);
    CHECK(p.worst <= 1.0);
    /* And the oracle's goldens, at their own tolerance (1e-4). */
    vlm_tensor expected;
    CHECK_OK(vlm_golden_case_tensor(&golden, "vision_features", &expected));
    comparison gf = compare(features, expected.data, (size_t)TOKENS * VISION_HIDDEN);
    CHECK_OK(vlm_golden_case_tensor(&golden, "projector", &expected));
    comparison gp = compare(projected, expected.data, (size_t)TOKENS * TEXT_HIDDEN);
    printf("  vs goldens: features max abs %.3g, projected max abs %.3g\n", gf.max_abs, gp.max_abs);
    CHECK(gf.max_abs < 1e-4 && gp.max_abs < 1e-4);
    /* Wrong image sizes are refused by name, before any compute. */
    vlm_pixel_values small = {image.values, 3, 224, 224};
    CHECK_ERROR(vlm_xla_vision_encode(runtime, &small, 1, projected, NULL), VLM_STATUS_INVALID_ARGUMENT,
                "the vision tower takes [3, 336, 336]");
  }
  vlm_xla_vision_runtime_release(runtime);
  vlm_xla_vision_encoder_release(&model);
  free(cpu_projected);
  free(cpu_features);
  free(projected);
  free(features);
  vlm_golden_case_close(&golden);
}

/* Three images (the golden one, a copy scaled by -0.5, and the golden one
 * again) through a two-images-per-call module: the padded second call and
 * the image order must not change any image's rows, which must equal the
 * one-per-call module's for the same image. */
static void images_per_call_do_not_change_results(void) {
  if (!environment_ready()) return;
  if (!one_per_call_artifact[0]) { /* run alone, or the test before it failed */
    test_skip("needs-earlier-test", "features_and_projection_match_the_cpu_backend compiled no artifact to reuse");
    return;
  }
  vlm_golden_case golden;
  vlm_pixel_values image;
  if (!golden_image(&golden, &image)) return;
  size_t values = (size_t)(image.channels * image.height * image.width);
  float *other_values = malloc(values * sizeof(float));
  for (size_t i = 0; i < values; i++) other_values[i] = -0.5f * image.values[i];
  vlm_pixel_values images[3] = {image, {other_values, image.channels, image.height, image.width}, image};
  size_t rows = (size_t)TOKENS * TEXT_HIDDEN;
  float *single = malloc(3 * rows * sizeof(float)), *batched = malloc(3 * rows * sizeof(float));
  vlm_xla_vision_encoder model;
  CHECK_OK(vlm_xla_vision_encoder_open(MODEL, &model));
  vlm_xla_runtime_options options = {.target = VLM_XLA_TARGET_LLVM_CPU};
  vlm_xla_vision_runtime *one = NULL, *two = NULL;
  char two_artifact[VLM_XLA_PATH_LENGTH];
  CHECK_OK(prepare(&model, 2, two_artifact, sizeof(two_artifact)));
  vlm_stablehlo_vision_options two_per_call = {.images_per_call = 2};
  CHECK_OK(vlm_xla_vision_runtime_open(&model, NULL, NULL, one_per_call_artifact, &options, &one));
  CHECK_OK(vlm_xla_vision_runtime_open(&model, &two_per_call, NULL, two_artifact, &options, &two));
  if (one && two) {
    CHECK_OK(vlm_xla_vision_encode(one, images, 3, single, NULL));
    CHECK_OK(vlm_xla_vision_encode(two, images, 3, batched, NULL));
    comparison c = compare(batched, single, 3 * rows);
    printf("  2 per call vs 1 per call: max abs %.3g\n", c.max_abs);
    CHECK(c.worst <= 1.0);
    CHECK(memcmp(single, single + 2 * rows, rows * sizeof(float)) == 0); /* same image, same rows */
    CHECK(compare(single + rows, single, rows).max_abs > 1e-3);         /* a different image differs */
  }
  /* An artifact compiled for another geometry is refused before executing, naming the field. */
  vlm_xla_vision_runtime *wrong = NULL;
  CHECK_ERROR(vlm_xla_vision_runtime_open(&model, &two_per_call, NULL, one_per_call_artifact, &options, &wrong),
              VLM_STATUS_FAILED_PRECONDITION,
              "compiled for images_per_call='1', this model and configuration need images_per_call='2'");
  options.target = VLM_XLA_TARGET_CUDA;
  CHECK_ERROR(vlm_xla_vision_runtime_open(&model, NULL, NULL, one_per_call_artifact, &options, &wrong),
              VLM_STATUS_FAILED_PRECONDITION, "target='llvm-cpu'");
  CHECK(wrong == NULL);
  vlm_xla_vision_runtime_release(one);
  vlm_xla_vision_runtime_release(two);
  vlm_xla_vision_encoder_release(&model);
  free(single);
  free(batched);
  free(other_values);
  vlm_golden_case_close(&golden);
}

TEST_MAIN(TEST(features_and_projection_match_the_cpu_backend), TEST(images_per_call_do_not_change_results))

#endif
