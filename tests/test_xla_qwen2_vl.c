/* The Qwen-VL vision towers and mergers on the xla backend, through the
 * engine's encoder table (so nothing falls back to the host), against the
 * cpu backend and the oracle's goldens: two images of different sizes and
 * aspect ratios (tests/goldens/<family>/two_images: Qwen2-VL 256 and 388
 * encoder rows, so two row buckets, the second padded; Qwen2.5-VL 216 and
 * 388, both padded, with windowed attention and the window order undone
 * after the merger; Qwen3-VL 48 and 24, both padded to 256, with the
 * position table resampled per grid), each
 * image's merged rows within float32 tolerance of the cpu backend's and of
 * Transformers'. Qwen3-VL's rows also carry its DeepStack features (the
 * layer features of models/decoder.h), checked against the golden's
 * deepstack_features. Also that every image
 * smart_resize can produce fits a compiled bucket. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#include "backends/cpu/cpu_encoder.h"
#include "backends/cpu/cpu_modules.h"
#include "core/status.h"
#include "models/modules.h"
#include "media/image_processor_qwen2_vl.h"
#include "models/model.h"
#include "validate/compare.h"
#include "validate/golden.h"
#include "validate/golden_media.h"

/* The families whose tower these tests run, each with its two_images golden. */
static const char *const families[] = {"qwen2_vl", "qwen2_5_vl", "qwen3_vl"};
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
  vlm_tensor projector, deepstack = {0};
  CHECK_OK(vlm_golden_case_tensor(&golden, "projector", &projector));
  int64_t hidden = model->config.text.hidden_size, layers = vlm_model_feature_width(model) / hidden - 1;
  if (layers) CHECK_OK(vlm_golden_case_tensor(&golden, "deepstack_features", &deepstack));
  /* Transformers' rows as the encoder gives them: the feature, then the layer features. */
  int64_t golden_rows = projector.shape[0];
  float *expected = calloc((size_t)(golden_rows * hidden * (1 + layers)), sizeof(float));
  for (int64_t r = 0; expected && r < golden_rows; r++) {
    for (int64_t c = 0; c < hidden; c++)
      expected[r * hidden * (1 + layers) + c] = ((const float *)projector.data)[r * hidden + c];
    for (int64_t c = 0; layers && c < layers * hidden; c++)
      expected[r * hidden * (1 + layers) + hidden + c] = ((const float *)deepstack.data)[r * layers * hidden + c];
  }
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
    double vs_golden = worst(on_xla, expected + offset * width, values, &vs_golden_abs);
    printf("  image %d (grid %lldx%lldx%lld, %lld tokens): max |xla - cpu| %.3g, |xla - golden| %.3g\n", i,
           (long long)items[i].grid[0], (long long)items[i].grid[1], (long long)items[i].grid[2],
           (long long)items[i].token_count, vs_cpu_abs, vs_golden_abs);
    CHECK(vs_cpu <= 1.0);
    CHECK(vs_golden <= 1.0);
    offset += items[i].token_count;
    free(on_xla);
    free(on_cpu);
  }
  CHECK_INT_EQ(offset * width, golden_rows * hidden * (1 + layers));
  free(expected);
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

/* Qwen3-VL's DeepStack reaches the xla decoder: the one_image golden prompt
 * prefilled through embeddings_prefill with the cpu encoder's features and
 * layer features gives the cpu decoder's last logits on xla (the prompt
 * split over two prefill calls, so the side input is sliced per chunk),
 * and zeroing the layer features moves them (so xla does not ignore them).
 * Greedy tokens alone would not show it: the tiny model's greedy text is
 * the same without DeepStack. */
static vlm_status prefill_last_logits(vlm_text_decoder *decoder, const vlm_prefill_input *input, int64_t split,
                                      float *logits) {
  vlm_prefill_input first = *input, second = *input;
  first.row_count = split;
  second.row_count = input->row_count - split;
  second.tokens += split;
  second.features += split * input->side_inputs[0].shape[2];
  second.feature_mask += split;
  int64_t hidden = input->side_inputs[0].shape[2], layers = input->side_inputs[0].shape[0], rows = input->row_count;
  float *parts = malloc((size_t)(layers * rows * hidden) * sizeof(float));
  if (!parts) return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  for (int64_t j = 0; j < layers; j++)
    for (int64_t r = 0; r < rows; r++)
      memcpy(parts + (r < split ? j * split + r : layers * split + j * (rows - split) + r - split) * hidden,
             input->side_inputs[0].values + (j * rows + r) * hidden, (size_t)hidden * sizeof(float));
  vlm_side_input sides[2] = {{VLM_SIDE_INPUT_LAYER_FEATURES, parts, 3, {layers, split, hidden}},
                             {VLM_SIDE_INPUT_LAYER_FEATURES, parts + layers * split * hidden, 3,
                              {layers, rows - split, hidden}}};
  first.side_inputs = &sides[0];
  second.side_inputs = &sides[1];
  int64_t *positions = malloc((size_t)(3 * rows) * sizeof(int64_t));
  if (!positions) {
    free(parts);
    return VLM_ERROR(RESOURCE_EXHAUSTED, "out of memory");
  }
  for (int a = 0; a < 3; a++) {
    memcpy(positions + a * split, input->positions + a * rows, (size_t)split * sizeof(int64_t));
    memcpy(positions + 3 * split + a * (rows - split), input->positions + a * rows + split,
           (size_t)(rows - split) * sizeof(int64_t));
  }
  first.positions = positions;
  second.positions = positions + 3 * split;
  vlm_status status = decoder->operations->clear_slot(decoder->self, 0);
  if (!status) status = decoder->operations->embeddings_prefill(decoder->self, 0, &first, logits);
  if (!status) status = decoder->operations->embeddings_prefill(decoder->self, 0, &second, logits);
  free(parts);
  free(positions);
  return status;
}

static void deepstack_reaches_the_xla_decoder(void) {
  if (!environment_ready()) return;
  vlm_model *model = open_model("qwen3_vl");
  char directory[512], one_image[512];
  model_path("qwen3_vl", directory, sizeof(directory));
  snprintf(one_image, sizeof(one_image), "%s/tests/goldens/qwen3_vl/one_image", VLM_SOURCE_DIR);
  vlm_golden_case golden;
  CHECK_OK(vlm_golden_case_open(one_image, NULL, &golden));
  if (!model || TEST_CURRENT_FAILED()) {
    vlm_model_release(model);
    return;
  }
  CHECK_INT_EQ(model->config.text.hidden_size, 4);
  vlm_compare_context context = {.model_directory = directory, .model = model, .golden = &golden, .thread_count = 1};
  vlm_media_item *items = NULL;
  int item_count = 0;
  int32_t *ids = NULL;
  int64_t count = 0;
  vlm_tensor position_ids;
  CHECK_OK(vlm_golden_media_items(&context, &items, &item_count));
  CHECK_OK(vlm_golden_token_ids(&golden, &ids, &count));
  CHECK_OK(vlm_golden_case_tensor(&golden, "position_ids", &position_ids));
  vlm_cpu_encoder *cpu = NULL;
  CHECK_OK(vlm_cpu_encoder_open(model, VLM_MEDIA_IMAGE, NULL, &cpu));
  char cache[600];
  snprintf(cache, sizeof(cache), "%s/cache", test_temp_dir());
  vlm_xla_decoder_options options = {.slot_count = 1, .capacity = 64, .prefill_chunk = 32, .cache_dir = cache,
                                     .compile_if_missing = true};
  vlm_text_decoder *xla = NULL, *reference = NULL;
  CHECK_OK(vlm_xla_open_text_decoder(model, &options, &xla));
  vlm_text_model_options cpu_options = {.slot_count = 1, .capacity = 64, .prefill_chunk = 32};
  CHECK_OK(vlm_text_decoder_open_cpu(model, &cpu_options, &reference));
  if (TEST_CURRENT_FAILED() || item_count != 1) goto done;
  int64_t hidden = 4, width = vlm_cpu_encoder_output_width(cpu), layers = width / hidden - 1, vocab = model->config.text.vocab_size;
  CHECK_INT_EQ(layers, 2);
  float *encoded = malloc((size_t)(items[0].token_count * width) * sizeof(float));
  float *features = calloc((size_t)(count * hidden), sizeof(float));
  float *layer_features = calloc((size_t)(layers * count * hidden), sizeof(float));
  int32_t *mask = calloc((size_t)count, sizeof(int32_t));
  int64_t *positions = malloc((size_t)(3 * count) * sizeof(int64_t));
  float *on_xla = malloc((size_t)vocab * sizeof(float)), *on_cpu = malloc((size_t)vocab * sizeof(float));
  float *without = malloc((size_t)vocab * sizeof(float));
  CHECK_OK(vlm_cpu_encoder_encode(cpu, &items[0], encoded));
  int64_t next = 0;
  for (int64_t r = 0; r < count; r++) {
    double value = 0;
    for (int a = 0; a < 3; a++) {
      vlm_tensor_value_as_double(&position_ids, a * count + r, &value);
      positions[a * count + r] = (int64_t)value;
    }
    if (ids[r] != model->config.image_token_id || next >= items[0].token_count) continue;
    mask[r] = 1;
    memcpy(features + r * hidden, encoded + next * width, (size_t)hidden * sizeof(float));
    for (int64_t j = 0; j < layers; j++)
      memcpy(layer_features + (j * count + r) * hidden, encoded + next * width + (1 + j) * hidden,
             (size_t)hidden * sizeof(float));
    next++;
  }
  CHECK_INT_EQ(next, items[0].token_count);
  vlm_side_input side = {VLM_SIDE_INPUT_LAYER_FEATURES, layer_features, 3, {layers, count, hidden}};
  vlm_prefill_input input = {.row_count = count, .tokens = ids, .features = features, .feature_mask = mask,
                             .positions = positions, .position_axes = 3, .side_inputs = &side, .side_input_count = 1};
  int64_t split = count / 2; /* inside the image's rows: each part has feature rows */
  CHECK_OK(prefill_last_logits(xla, &input, split, on_xla));
  CHECK_OK(prefill_last_logits(reference, &input, split, on_cpu));
  double vs_cpu_abs = 0;
  double vs_cpu = worst(on_xla, on_cpu, vocab, &vs_cpu_abs);
  memset(layer_features, 0, (size_t)(layers * count * hidden) * sizeof(float));
  CHECK_OK(prefill_last_logits(xla, &input, split, without));
  double moved = 0;
  for (int64_t v = 0; v < vocab; v++) moved = fmax(moved, fabs((double)without[v] - on_xla[v]));
  printf("  %lld rows (split at %lld): max |xla - cpu| %.3g; without the layer features the logits move %.3g\n",
         (long long)count, (long long)split, vs_cpu_abs, moved);
  CHECK(vs_cpu <= 1.0);
  CHECK(moved > 1e-2);
  free(encoded);
  free(features);
  free(layer_features);
  free(mask);
  free(positions);
  free(on_xla);
  free(on_cpu);
  free(without);
done:
  vlm_text_decoder_release(xla);
  vlm_text_decoder_release(reference);
  vlm_cpu_encoder_release(cpu);
  free(ids);
  vlm_golden_media_items_release(items, item_count);
  vlm_golden_case_close(&golden);
  vlm_model_release(model);
}

TEST_MAIN(TEST(every_resized_image_fits_a_bucket), TEST(images_of_two_sizes_match_cpu_and_goldens),
          TEST(deepstack_reaches_the_xla_decoder))

#endif
