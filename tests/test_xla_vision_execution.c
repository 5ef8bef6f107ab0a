/* The xla image-encoder module executed by IREE (llvm-cpu, local-sync)
 * against the cpu backend on the tiny LLaVA: the golden image's pixel
 * values -> the selected vision features and the projected features, each
 * within float32 tolerance of the cpu backend (vlm_cpu_encoder_encode and
 * its "vision_features" stage) and of the oracle's goldens; the engine's
 * table (vlm_xla_open_image_encoder) giving the same rows; refusal of a
 * mismatched artifact and of a wrong image size.
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

#include "backends/cpu/cpu_encoder.h"
#include "backends/xla/iree_compiler.h"
#include "backends/xla/stablehlo_encoder.h"
#include "backends/xla/xla_graph_runtime.h"
#include "backends/xla/xla_runtime.h"
#include "models/model.h"
#include "test_xla_support.h"
#include "validate/golden.h"
#include "vlm/xla.h"

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
  const vlm_cpu_encoder *encoder;
  float *values;
  size_t count;
  bool seen;
} feature_capture;

static void capture_features(void *context, const vlm_node *node, const float *values) {
  feature_capture *capture = context;
  const vlm_encoder_nodes *nodes = vlm_cpu_encoder_last_nodes(capture->encoder);
  for (int i = 0; i < nodes->stage_count; i++)
    if (strcmp(nodes->stages[i].stage, "vision_features") == 0 &&
        strcmp(node->name, vlm_cpu_encoder_node_name(capture->encoder, nodes->stages[i].node)) == 0) {
      memcpy(capture->values, values, capture->count * sizeof(float));
      capture->seen = true;
    }
}

static vlm_model *open_model(void) {
  vlm_model *model = NULL;
  CHECK_OK(vlm_model_open(MODEL, NULL, &model));
  return model;
}

/* The golden image as a media item (LLaVA: pixel_values [3, H, W]). */
static bool golden_item(vlm_golden_case *golden, vlm_media_item *item, int64_t height, int64_t width) {
  memset(item, 0, sizeof(*item));
  CHECK_OK(vlm_golden_case_open(ONE_IMAGE, NULL, golden));
  if (TEST_CURRENT_FAILED()) return false;
  vlm_tensor pixels;
  CHECK_OK(vlm_golden_case_tensor(golden, "processor.pixel_values", &pixels));
  if (TEST_CURRENT_FAILED()) return false;
  int64_t shape[3] = {pixels.shape[1], height ? height : pixels.shape[2], width ? width : pixels.shape[3]};
  void *data = NULL;
  CHECK_OK(vlm_tensor_list_add(&item->tensors, "pixel_values", VLM_DTYPE_F32, 3, shape, &data));
  if (data && !height) memcpy(data, pixels.data, (size_t)(shape[0] * shape[1] * shape[2]) * sizeof(float));
  item->kind = VLM_MEDIA_IMAGE;
  item->grid[0] = 1, item->grid[1] = shape[1], item->grid[2] = shape[2];
  item->token_count = TOKENS;
  return !TEST_CURRENT_FAILED();
}

static void cpu_encode(vlm_model *model, const vlm_media_item *item, float *projected, float *features) {
  vlm_cpu_encoder *cpu = NULL;
  CHECK_OK(vlm_cpu_encoder_open(model, VLM_MEDIA_IMAGE, NULL, &cpu));
  if (!cpu) return;
  feature_capture capture = {cpu, features, (size_t)TOKENS * VISION_HIDDEN, false};
  vlm_encoder_trace trace = {.node_observer = capture_features, .node_context = &capture};
  vlm_cpu_encoder_set_trace(cpu, &trace);
  double started = seconds_now();
  CHECK_OK(vlm_cpu_encoder_encode(cpu, item, projected));
  printf("  cpu backend encode: %.1f ms\n", (seconds_now() - started) * 1e3);
  CHECK(capture.seen);
  vlm_cpu_encoder_release(cpu);
}

static char artifact[VLM_XLA_PATH_LENGTH];

static void features_and_projection_match_the_cpu_backend(void) {
  if (!environment_ready()) return;
  vlm_golden_case golden;
  vlm_media_item item;
  vlm_model *model = open_model();
  if (!model || !golden_item(&golden, &item, 0, 0)) {
    vlm_model_release(model);
    return;
  }
  float *cpu_projected = malloc((size_t)TOKENS * TEXT_HIDDEN * sizeof(float));
  float *cpu_features = malloc((size_t)TOKENS * VISION_HIDDEN * sizeof(float));
  float *projected = malloc((size_t)TOKENS * TEXT_HIDDEN * sizeof(float));
  float *hidden = malloc((size_t)(TOKENS + 1) * VISION_HIDDEN * sizeof(float));
  float *features = malloc((size_t)TOKENS * VISION_HIDDEN * sizeof(float));
  cpu_encode(model, &item, cpu_projected, cpu_features);

  vlm_xla_encoder_function function;
  CHECK_OK(vlm_xla_encoder_function_build(model, TOKENS, &function));
  char cache[600];
  cache_dir(cache, sizeof(cache));
  vlm_xla_key key;
  double started = seconds_now();
  CHECK_OK(vlm_xla_encoder_prepare_artifact(model, &function, VLM_XLA_TARGET_LLVM_CPU, cache, true, NULL, artifact,
                                            sizeof(artifact), &key, NULL));
  printf("  image encoder module compiled (llvm-cpu) in %.1f s\n", seconds_now() - started);
  vlm_xla_graph_runtime *runtime = NULL;
  vlm_xla_runtime_options options = {.target = VLM_XLA_TARGET_LLVM_CPU};
  if (!TEST_CURRENT_FAILED())
    CHECK_OK(vlm_xla_graph_runtime_open(&function.function, 1, model->weights, &key, artifact, &options, &runtime));
  if (runtime) {
    vlm_tensor_list inputs = {0};
    CHECK_OK(model->family->image->encoder_inputs(&model->config, &item, TOKENS, &inputs));
    float *const outputs[3] = {projected, hidden, features};
    CHECK_OK(vlm_xla_graph_call(runtime, 0, &inputs, outputs));
    started = seconds_now();
    const int repeats = 5;
    for (int i = 0; i < repeats; i++) CHECK_OK(vlm_xla_graph_call(runtime, 0, &inputs, outputs));
    printf("  xla encode (1 image, local-sync): %.1f ms\n", (seconds_now() - started) * 1e3 / repeats);
    vlm_tensor_list_release(&inputs);
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
  }
  /* An artifact for another target is refused before executing, naming the field. */
  vlm_xla_graph_runtime *wrong = NULL;
  options.target = VLM_XLA_TARGET_CUDA;
  CHECK_ERROR(vlm_xla_graph_runtime_open(&function.function, 1, model->weights, &key, artifact, &options, &wrong),
              VLM_STATUS_FAILED_PRECONDITION, "target='llvm-cpu'");
  CHECK(wrong == NULL);
  vlm_xla_graph_runtime_release(runtime);
  vlm_xla_encoder_function_release(&function);
  vlm_media_item_release(&item);
  free(cpu_projected);
  free(cpu_features);
  free(projected);
  free(hidden);
  free(features);
  vlm_golden_case_close(&golden);
  vlm_model_release(model);
}

/* The engine's table over the same artifact gives the same rows, and
 * refuses an image of the wrong size by name before any compute. */
static void the_engine_table_encodes_items(void) {
  if (!environment_ready()) return;
  if (!artifact[0]) { /* run alone, or the test before it failed */
    test_skip("needs-earlier-test", "features_and_projection_match_the_cpu_backend compiled no artifact to reuse");
    return;
  }
  vlm_golden_case golden;
  vlm_media_item item, small;
  vlm_model *model = open_model();
  if (!model || !golden_item(&golden, &item, 0, 0)) {
    vlm_model_release(model);
    return;
  }
  vlm_golden_case_close(&golden);
  golden_item(&golden, &small, 224, 224);
  char cache[600];
  cache_dir(cache, sizeof(cache));
  vlm_xla_decoder_options options = {.cache_dir = cache, .compile_if_missing = false};
  vlm_media_encoder *encoder = NULL;
  CHECK_OK(vlm_xla_open_image_encoder(model, &options, &encoder));
  float *projected = malloc((size_t)TOKENS * TEXT_HIDDEN * sizeof(float));
  float *cpu_projected = malloc((size_t)TOKENS * TEXT_HIDDEN * sizeof(float));
  float *cpu_features = malloc((size_t)TOKENS * VISION_HIDDEN * sizeof(float));
  if (encoder) {
    CHECK_STR_EQ(encoder->operations->backend, "xla");
    CHECK_OK(encoder->operations->encode(encoder->self, &item, projected));
    cpu_encode(model, &item, cpu_projected, cpu_features);
    comparison p = compare(projected, cpu_projected, (size_t)TOKENS * TEXT_HIDDEN);
    printf("  engine table: projected max |xla - cpu| = %.3g\n", p.max_abs);
    CHECK(p.worst <= 1.0);
    CHECK_ERROR(encoder->operations->encode(encoder->self, &small, projected), VLM_STATUS_INVALID_ARGUMENT,
                "the vision tower takes [3, 336, 336]");
  }
  vlm_media_encoder_release(encoder);
  vlm_media_item_release(&item);
  vlm_media_item_release(&small);
  free(projected);
  free(cpu_projected);
  free(cpu_features);
  vlm_golden_case_close(&golden);
  vlm_model_release(model);
}

TEST_MAIN(TEST(features_and_projection_match_the_cpu_backend), TEST(the_engine_table_encodes_items))

#endif
