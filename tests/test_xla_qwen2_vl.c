/* The Qwen-VL vision towers and mergers on the xla backend, through the
 * engine's encoder table (so nothing falls back to the host), against the
 * cpu backend and the oracle's goldens: two images of different sizes and
 * aspect ratios (tests/goldens/<family>/two_images: Qwen2-VL 256 and 388
 * encoder rows, so two row buckets, the second padded; Qwen2.5-VL 216 and
 * 388, both padded, with windowed attention and the window order undone
 * after the merger), each image's merged rows within float32 tolerance of
 * the cpu backend's and of Transformers'. Also that every image
 * smart_resize can produce fits a compiled bucket. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#include "backends/cpu/cpu_encoder.h"
#include "media/image_processor_qwen2_vl.h"
#include "models/model.h"
#include "validate/compare.h"
#include "validate/golden.h"
#include "validate/golden_media.h"

/* The families whose tower these tests run, each with its two_images golden. */
static const char *const families[] = {"qwen2_vl", "qwen2_5_vl"};
#define FAMILY_COUNT ((int)(sizeof(families) / sizeof(families[0])))

static void model_path(const char *family, char *out, size_t size) {
  snprintf(out, size, "%s/tests/models/%s", VLM_SOURCE_DIR, family);
}

static vlm_model *open_model(const char *family) {
  char path[512];
  model_path(family, path, sizeof(path));
  vlm_model *model = NULL;
  CHECK_OK(vlm_model_open(path, NULL, &model));
  return model;
}

/* Seeded sizes of every aspect ratio smart_resize accepts (up to 200:1),
 * tiny to huge: each grid's rows fit the largest bucket the family
 * declares (an image above it would be refused on xla). */
static void every_resized_image_fits_a_bucket_of(const char *family) {
  vlm_model *model = open_model(family);
  if (!model) return;
  int64_t buckets[16];
  int count = model->family->image->encoder_buckets(&model->config, &model->processor, buckets, 16);
  CHECK(count > 0);
  int64_t largest = count > 0 ? buckets[count - 1] : 0, most = 0;
  uint64_t state = 12345;
  for (int i = 0; i < 20000; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    double aspect = exp((double)(state >> 11) / 9007199254740992.0 * log(200.0));
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    double area = exp((double)(state >> 11) / 9007199254740992.0 * log(1e8));
    int64_t width = (int64_t)fmax(1.0, sqrt(area / aspect)), height = (int64_t)fmax(1.0, sqrt(area * aspect));
    if (i & 1) { int64_t t = width; width = height; height = t; }
    if ((double)(width > height ? width : height) / (double)(width < height ? width : height) > 200.0) continue;
    int64_t grid[3];
    vlm_status status = vlm_qwen2_vl_image_grid(&model->processor, width, height, grid);
    if (status) {
      vlm_status_free(status);
      continue;
    }
    int64_t rows = grid[0] * grid[1] * grid[2];
    if (rows > most) most = rows;
    if (rows > largest) {
      printf("  %lldx%lld gives %lld rows, over the largest bucket %lld\n", (long long)width, (long long)height,
             (long long)rows, (long long)largest);
      CHECK(rows <= largest);
      break;
    }
  }
  printf("  %s: most rows seen %lld, largest bucket %lld (%d buckets)\n", family, (long long)most,
         (long long)largest, count);
  vlm_model_release(model);
}

static void every_resized_image_fits_a_bucket(void) {
  for (int i = 0; i < FAMILY_COUNT; i++) every_resized_image_fits_a_bucket_of(families[i]);
}

#ifndef VLM_HAVE_XLA_RUNTIME

static void xla_skips_without_python(void) {
  test_skip("no-xla-runtime", "built without python-3.11-embed (Debian's libpython3.11-dev, "
            "scripts/install-dependencies.sh); xla execution not tested");
}
TEST_MAIN(TEST(every_resized_image_fits_a_bucket), TEST(xla_skips_without_python))

#else

#include "backends/xla/iree_compiler.h"
#include "backends/xla/xla_runtime.h"
#include "test_xla_support.h"
#include "vlm/xla.h"

/* max |a - b| / (1e-5 + 1e-4 |b|): at most 1 is within float32 tolerance. */
static double worst(const float *actual, const float *expected, int64_t count, double *max_abs) {
  double result = 0;
  *max_abs = 0;
  for (int64_t i = 0; i < count; i++) {
    double difference = fabs((double)actual[i] - (double)expected[i]);
    double ratio = difference / (1e-5 + 1e-4 * fabs((double)expected[i]));
    if (!(ratio <= result)) result = isnan(ratio) ? INFINITY : ratio;
    if (difference > *max_abs) *max_abs = difference;
  }
  return result;
}

static void images_of_two_sizes_match_cpu_and_goldens_of(const char *family) {
  vlm_model *model = open_model(family);
  char directory[512], two_images[512];
  model_path(family, directory, sizeof(directory));
  snprintf(two_images, sizeof(two_images), "%s/tests/goldens/%s/two_images", VLM_SOURCE_DIR, family);
  vlm_golden_case golden;
  CHECK_OK(vlm_golden_case_open(two_images, NULL, &golden));
  if (!model || TEST_CURRENT_FAILED()) {
    vlm_model_release(model);
    return;
  }
  printf("  %s:\n", family);
  vlm_compare_context context = {.model_directory = directory, .model = model, .golden = &golden,
                                 .thread_count = 1};
  vlm_media_item *items = NULL;
  int item_count = 0;
  CHECK_OK(vlm_golden_media_items(&context, &items, &item_count));
  CHECK_INT_EQ(item_count, 2);
  vlm_tensor expected;
  CHECK_OK(vlm_golden_case_tensor(&golden, "projector", &expected));
  char cache[600];
  snprintf(cache, sizeof(cache), "%s/cache", test_temp_dir());
  vlm_xla_decoder_options options = {.cache_dir = cache, .compile_if_missing = true};
  vlm_media_encoder *xla = NULL;
  vlm_cpu_encoder *cpu = NULL;
  CHECK_OK(vlm_xla_open_image_encoder(model, &options, &xla));
  CHECK_OK(vlm_cpu_encoder_open(model, VLM_MEDIA_IMAGE, NULL, &cpu));
  int64_t width = cpu ? vlm_cpu_encoder_output_width(cpu) : 0, offset = 0;
  for (int i = 0; xla && cpu && i < item_count && !TEST_CURRENT_FAILED(); i++) {
    CHECK_STR_EQ(xla->operations->backend, "xla");
    int64_t values = items[i].token_count * width;
    float *on_xla = malloc((size_t)values * sizeof(float)), *on_cpu = malloc((size_t)values * sizeof(float));
    double started = seconds_now(); /* the first image of a bucket compiles it */
    CHECK_OK(xla->operations->encode(xla->self, &items[i], on_xla));
    printf("  image %d: compiled (if needed) and encoded on xla in %.1f s\n", i, seconds_now() - started);
    CHECK_OK(vlm_cpu_encoder_encode(cpu, &items[i], on_cpu));
    double vs_cpu_abs = 0, vs_golden_abs = 0;
    double vs_cpu = worst(on_xla, on_cpu, values, &vs_cpu_abs);
    double vs_golden = worst(on_xla, (const float *)expected.data + offset * width, values, &vs_golden_abs);
    printf("  image %d (grid %lldx%lldx%lld, %lld tokens): max |xla - cpu| %.3g, |xla - golden| %.3g\n", i,
           (long long)items[i].grid[0], (long long)items[i].grid[1], (long long)items[i].grid[2],
           (long long)items[i].token_count, vs_cpu_abs, vs_golden_abs);
    CHECK(vs_cpu <= 1.0);
    CHECK(vs_golden <= 1.0);
    offset += items[i].token_count;
    free(on_xla);
    free(on_cpu);
  }
  CHECK_INT_EQ(offset * width, vlm_tensor_element_count(&expected));
  vlm_media_encoder_release(xla);
  vlm_cpu_encoder_release(cpu);
  vlm_golden_media_items_release(items, item_count);
  vlm_golden_case_close(&golden);
  vlm_model_release(model);
}

static void images_of_two_sizes_match_cpu_and_goldens(void) {
  if (!environment_ready()) return;
  for (int i = 0; i < FAMILY_COUNT && !TEST_CURRENT_FAILED(); i++) images_of_two_sizes_match_cpu_and_goldens_of(families[i]);
}

TEST_MAIN(TEST(every_resized_image_fits_a_bucket), TEST(images_of_two_sizes_match_cpu_and_goldens))

#endif
