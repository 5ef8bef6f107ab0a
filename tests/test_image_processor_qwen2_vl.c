/* The Qwen2-VL image processor against Transformers.
 *
 * tests/goldens/media_qwen2_vl (tools/oracle/media_goldens_qwen2_vl.py) holds,
 * per processor config (configs/<name>, loaded here as a model directory)
 * and image, sha256 digests of what Transformers 5.23.0 produces: the
 * resized uint8 image of both processors, pixel_values of both, and
 * image_grid_thw, or the error both raise; plus smart_resize's result or
 * error on edge cases and seeded random sizes. A matching digest is a
 * bit-exact match; small cases also carry full tensors so a mismatch can
 * show its size. Fixture images need ../shared/fixtures (skipped when it is
 * absent); the synthetic images and smart_resize need nothing else. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "io/config.h"
#include "io/file.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "media/image_processor_qwen2_vl.h"
#include "test.h"
#include "validate/sha256.h"
#include "vlm/media.h"

#define GOLDENS VLM_SOURCE_DIR "/tests/goldens/media_qwen2_vl"

typedef struct golden_set {
  vlm_json_document manifest;
  vlm_safetensors_file tensors;
  const vlm_json_value *entries;
} golden_set;

static bool goldens_open(golden_set *out) {
  memset(out, 0, sizeof(*out));
  vlm_status status = vlm_json_parse_file(GOLDENS "/manifest.json", 1 << 22, NULL, &out->manifest);
  CHECK_OK(status);
  if (status) return false;
  status = vlm_safetensors_open(GOLDENS "/tensors.safetensors", NULL, &out->tensors);
  CHECK_OK(status);
  if (status) {
    vlm_json_document_release(&out->manifest);
    return false;
  }
  out->entries = vlm_json_object_get(out->manifest.root, "entries");
  CHECK(out->entries && out->entries->type == VLM_JSON_ARRAY);
  return out->entries != NULL;
}

static void goldens_close(golden_set *goldens) {
  vlm_safetensors_close(&goldens->tensors);
  vlm_json_document_release(&goldens->manifest);
}

static const char *string_of(const vlm_json_value *object, const char *key) {
  return vlm_json_get_string(vlm_json_object_get(object, key));
}

static int64_t int_at(const vlm_json_value *array, size_t index) {
  int64_t value = -1;
  vlm_json_get_int(vlm_json_array_get(array, index), &value);
  return value;
}

static void sha256_hex(const void *data, size_t length, char out[65]) {
  vlm_sha256 hash;
  vlm_sha256_init(&hash);
  vlm_sha256_update(&hash, data, length);
  vlm_sha256_finish_hex(&hash, out);
}

static const vlm_safetensors_entry *find_tensor(const golden_set *goldens, const char *name) {
  for (size_t i = 0; name && i < goldens->tensors.entry_count; i++)
    if (strcmp(goldens->tensors.entries[i].name, name) == 0) return &goldens->tensors.entries[i];
  return NULL;
}

/* Largest |actual - golden| against the full tensor, or -1 without one. */
static double max_difference(const golden_set *goldens, const vlm_json_value *field,
                             const void *actual, size_t length, bool is_f32) {
  const vlm_safetensors_entry *tensor = find_tensor(goldens, string_of(field, "tensor"));
  if (!tensor) return -1;
  if (tensor->data_end - tensor->data_begin != length) return 1e30;
  double largest = 0;
  size_t count = is_f32 ? length / 4 : length;
  for (size_t i = 0; i < count; i++) {
    double a, b;
    if (is_f32) {
      float x, y;
      memcpy(&x, (const uint8_t *)actual + i * 4, 4);
      memcpy(&y, tensor->data + i * 4, 4);
      a = x, b = y;
    } else {
      a = ((const uint8_t *)actual)[i], b = tensor->data[i];
    }
    if (fabs(a - b) > largest) largest = fabs(a - b);
  }
  return largest;
}

static int digests_checked;

static void check_digest(const golden_set *goldens, const vlm_json_value *entry, const char *key,
                         const void *data, size_t length, bool is_f32) {
  const vlm_json_value *field = vlm_json_object_get(entry, key);
  const char *expected = string_of(field, "sha256");
  CHECK(expected != NULL);
  if (!expected) return;
  char actual[65];
  sha256_hex(data, length, actual);
  digests_checked++;
  if (strcmp(actual, expected) == 0) return;
  fprintf(stderr, "  %s / %s: %s differs from Transformers (digest %.12s, expected %.12s; max |diff| %g)\n",
          string_of(entry, "config"), string_of(entry, "image"), key, actual, expected,
          max_difference(goldens, field, data, length, is_f32));
  test_failures++;
}

/* The synthetic image the generator documents (its int64 formula). */
static vlm_image synthetic_image(int64_t width, int64_t height) {
  vlm_image image = {.width = width, .height = height, .exif_orientation = 1};
  image.pixels = malloc((size_t)(width * height * 3));
  for (int64_t y = 0; y < height; y++)
    for (int64_t x = 0; x < width; x++)
      for (int64_t c = 0; c < 3; c++) {
        int64_t noise = ((x * 73856093) ^ (y * 19349663) ^ (c * 83492791)) % 61;
        image.pixels[(y * width + x) * 3 + c] = (uint8_t)((x * 3 + y * 5 + c * 80 + noise) % 256);
      }
  return image;
}

static void load_config(const char *name, vlm_processor_config *config) {
  char directory[512];
  snprintf(directory, sizeof(directory), "%s/configs/%s", GOLDENS, name);
  CHECK_OK(vlm_processor_config_load(directory, NULL, config));
}

static void check_error_entry(const vlm_processor_config *config, const vlm_json_value *entry,
                              const vlm_image *image) {
  const char *message = string_of(vlm_json_object_get(entry, "error"), "message");
  CHECK(message != NULL);
  if (!message) return;
  int64_t grid[3];
  CHECK_ERROR(vlm_qwen2_vl_image_grid(config, image->width, image->height, grid),
              VLM_STATUS_INVALID_ARGUMENT, message);
  for (int variant = 0; variant < 2; variant++) {
    vlm_tensor values;
    CHECK_ERROR(vlm_qwen2_vl_preprocess(config, image, (vlm_qwen2_vl_variant)variant, NULL, &values, grid),
                VLM_STATUS_INVALID_ARGUMENT, message);
    CHECK(values.data == NULL);
  }
  digests_checked++;
}

static void check_variant(const golden_set *goldens, const vlm_processor_config *config,
                          const vlm_json_value *entry, const vlm_image *image,
                          vlm_qwen2_vl_variant variant) {
  bool pil = variant == VLM_QWEN2_VL_PIL;
  vlm_image resized;
  vlm_status status = vlm_qwen2_vl_resize(config, image, variant, NULL, &resized);
  CHECK_OK(status);
  if (status) return;
  const vlm_json_value *shape = vlm_json_object_get(vlm_json_object_get(entry, "resized"), "shape");
  CHECK_INT_EQ(resized.height, int_at(shape, 0));
  CHECK_INT_EQ(resized.width, int_at(shape, 1));
  check_digest(goldens, entry, pil ? "resized_pil" : "resized", resized.pixels,
               (size_t)(resized.width * resized.height * 3), false);
  vlm_image_release(&resized);
  vlm_tensor values;
  int64_t grid[3];
  status = vlm_qwen2_vl_preprocess(config, image, variant, NULL, &values, grid);
  CHECK_OK(status);
  if (status) return;
  const vlm_json_value *expected_grid = vlm_json_object_get(entry, "image_grid_thw");
  for (size_t i = 0; i < 3; i++) CHECK_INT_EQ(grid[i], int_at(expected_grid, i));
  shape = vlm_json_object_get(vlm_json_object_get(entry, pil ? "pixel_values_pil" : "pixel_values"), "shape");
  CHECK_INT_EQ(values.rank, 2);
  CHECK_INT_EQ(values.shape[0], int_at(shape, 0));
  CHECK_INT_EQ(values.shape[1], int_at(shape, 1));
  check_digest(goldens, entry, pil ? "pixel_values_pil" : "pixel_values", values.data,
               vlm_tensor_byte_size(&values), true);
  vlm_tensor_release(&values);
}

static void check_entry(const golden_set *goldens, const vlm_processor_config *config,
                        const vlm_json_value *entry, const vlm_image *image) {
  const vlm_json_value *size = vlm_json_object_get(entry, "size");
  CHECK_INT_EQ(image->height, int_at(size, 0));
  CHECK_INT_EQ(image->width, int_at(size, 1));
  if (vlm_json_object_get(entry, "error")) {
    check_error_entry(config, entry, image);
    return;
  }
  /* The grid from the dimensions alone is the one preprocess returns. */
  int64_t grid[3];
  CHECK_OK(vlm_qwen2_vl_image_grid(config, image->width, image->height, grid));
  const vlm_json_value *expected_grid = vlm_json_object_get(entry, "image_grid_thw");
  for (size_t i = 0; i < 3; i++) CHECK_INT_EQ(grid[i], int_at(expected_grid, i));
  check_variant(goldens, config, entry, image, VLM_QWEN2_VL_TORCHVISION);
  check_variant(goldens, config, entry, image, VLM_QWEN2_VL_PIL);
}

/* Runs every entry whose image is synthetic (fixtures == false) or a
 * fixture file (true), of one config or (only_config NULL) all; returns
 * how many ran. */
static int run_entries(bool fixtures, const char *only_config) {
  golden_set goldens;
  if (!goldens_open(&goldens)) return 0;
  char *images_dir = fixtures ? vlm_path_join(test_fixtures_dir(), "media/images") : NULL;
  int ran = 0;
  const char *loaded = NULL;
  vlm_processor_config config = {0};
  for (size_t i = 0; i < goldens.entries->as.array.count; i++) {
    const vlm_json_value *entry = vlm_json_array_get(goldens.entries, i);
    const char *name = string_of(entry, "image"), *config_name = string_of(entry, "config");
    CHECK(name && config_name);
    if (!name || !config_name || vlm_json_object_get(entry, "open_error")) continue;
    long long width = 0, height = 0;
    bool synthetic = sscanf(name, "synthetic_%lldx%lld", &width, &height) == 2;
    if (synthetic == fixtures || (only_config && strcmp(only_config, config_name) != 0)) continue;
    if (!loaded || strcmp(loaded, config_name) != 0) {
      vlm_processor_config_release(&config);
      load_config(config_name, &config);
      loaded = config_name;
    }
    vlm_image image;
    if (synthetic) {
      image = synthetic_image(width, height);
    } else {
      char *path = vlm_path_join(images_dir, name);
      vlm_status status = vlm_image_decode_file(path, NULL, &image);
      free(path);
      CHECK_OK(status);
      if (status) continue;
    }
    check_entry(&goldens, &config, entry, &image);
    if (synthetic) free(image.pixels);
    else vlm_image_release(&image);
    ran++;
  }
  vlm_processor_config_release(&config);
  free(images_dir);
  goldens_close(&goldens);
  return ran;
}

/* Synthetic images (min_pixels floor, odd sizes, clamps, ratio 200 and just
 * above) under four configs: both variants bit for bit. No fixtures needed. */
static void test_synthetic_images_match_transformers(void) {
  digests_checked = 0;
  int ran = run_entries(false, NULL);
  /* 8 images x 4 configs; the 2 over the ratio limit are one check each. */
  CHECK_INT_EQ(ran, 32);
  CHECK_INT_EQ(digests_checked, 24 * 4 + 8);
}

/* The resampler's baseline loops (VLM_CPU_PATH=portable) give the same
 * bytes as the AVX2 ones the other tests run on such machines (the class
 * defaults' entries: upscales, downscales, clamps and thin images, both
 * resize kernels). */
static void test_portable_resampler_matches_transformers(void) {
  const char *previous = getenv("VLM_CPU_PATH");
  char *saved = previous ? strdup(previous) : NULL;
  setenv("VLM_CPU_PATH", "portable", 1);
  digests_checked = 0;
  CHECK_INT_EQ(run_entries(false, "defaults"), 8);
  CHECK_INT_EQ(digests_checked, 6 * 4 + 2);
  if (saved) setenv("VLM_CPU_PATH", saved, 1);
  else unsetenv("VLM_CPU_PATH");
  free(saved);
}

/* Every fixture image Transformers opens, under four configs. */
static void test_fixture_images_match_transformers(void) {
  if (!test_fixtures_dir()) {
    printf("  skipped: ../shared/fixtures not found\n");
    return;
  }
  digests_checked = 0;
  int ran = run_entries(true, NULL);
  CHECK_INT_EQ(ran, 23 * 4);
  CHECK_INT_EQ(digests_checked, 23 * 4 * 4);
}

/* smart_resize on edge cases (round half to even, the floor, the clamp, the
 * ratio limit, min_pixels above max_pixels, factor 1) and seeded random
 * sizes: Transformers' result, or its error message. */
static void test_smart_resize_matches_transformers(void) {
  golden_set goldens;
  if (!goldens_open(&goldens)) return;
  const vlm_json_value *rows = vlm_json_object_get(goldens.manifest.root, "smart_resize");
  CHECK(rows && rows->as.array.count >= 80);
  int errors = 0;
  for (size_t i = 0; rows && i < rows->as.array.count; i++) {
    const vlm_json_value *row = vlm_json_array_get(rows, i);
    int64_t values[5] = {0};
    const char *keys[5] = {"height", "width", "factor", "min_pixels", "max_pixels"};
    for (int k = 0; k < 5; k++) vlm_json_get_int(vlm_json_object_get(row, keys[k]), &values[k]);
    int64_t height = -1, width = -1;
    vlm_status status = vlm_qwen2_vl_smart_resize(values[0], values[1], values[2], values[3],
                                                  values[4], &height, &width);
    const char *message = string_of(vlm_json_object_get(row, "error"), "message");
    if (message) {
      errors++;
      CHECK_ERROR(status, VLM_STATUS_INVALID_ARGUMENT, message);
      continue;
    }
    CHECK_OK(status);
    const vlm_json_value *result = vlm_json_object_get(row, "result");
    if (height != int_at(result, 0) || width != int_at(result, 1)) {
      fprintf(stderr, "  smart_resize(%lld, %lld, %lld, %lld, %lld) = (%lld, %lld), expected (%lld, %lld)\n",
              (long long)values[0], (long long)values[1], (long long)values[2], (long long)values[3],
              (long long)values[4], (long long)height, (long long)width,
              (long long)int_at(result, 0), (long long)int_at(result, 1));
      test_failures++;
    }
  }
  CHECK(errors >= 3);
  goldens_close(&goldens);
}

static void test_smart_resize_refuses_bad_arguments(void) {
  int64_t height, width;
  CHECK_ERROR(vlm_qwen2_vl_smart_resize(0, 10, 28, 3136, 1003520, &height, &width),
              VLM_STATUS_INVALID_ARGUMENT, "must all be positive");
  CHECK_ERROR(vlm_qwen2_vl_smart_resize(10, 10, 0, 3136, 1003520, &height, &width),
              VLM_STATUS_INVALID_ARGUMENT, "must all be positive");
  CHECK_ERROR(vlm_qwen2_vl_smart_resize(10, 10, 28, 0, 1003520, &height, &width),
              VLM_STATUS_INVALID_ARGUMENT, "must all be positive");
  CHECK_ERROR(vlm_qwen2_vl_smart_resize(INT64_C(1) << 40, INT64_C(1) << 40, 28, 3136, 1003520,
                                        &height, &width),
              VLM_STATUS_OUT_OF_RANGE, "too large");
  CHECK_INT_EQ(height, 0);
  CHECK_OK(vlm_qwen2_vl_smart_resize(1, 1, 28, 3136, 1003520, &height, &width));
  CHECK_INT_EQ(height, 56);
  CHECK_INT_EQ(width, 56);
}

static vlm_status parse_config(const char *text, vlm_processor_config *config) {
  return vlm_processor_config_parse(text, strlen(text), NULL, 0, NULL, config);
}

/* What the config alone decides: Transformers' errors at the first image,
 * do_resize off, the class check, the grid and the token count. */
static void test_config_cases(void) {
  vlm_image image = synthetic_image(56, 84);
  vlm_processor_config config;
  vlm_tensor values;
  int64_t grid[3];
  /* Loads (as in Transformers) but refuses the image as resize() does. */
  CHECK_OK(parse_config("{\"image_processor_type\": \"Qwen2VLImageProcessor\","
                        " \"size\": {\"min_pixels\": 3136, \"max_pixels\": 12845056}}", &config));
  CHECK_ERROR(vlm_qwen2_vl_preprocess(&config, &image, VLM_QWEN2_VL_TORCHVISION, NULL, &values, grid),
              VLM_STATUS_INVALID_ARGUMENT,
              "`size` dict must contain 'shortest_edge' and 'longest_edge' keys (or the config "
              "min_pixels and max_pixels) but got {min_pixels, max_pixels}");
  CHECK_ERROR(vlm_qwen2_vl_image_grid(&config, 56, 84, grid), VLM_STATUS_INVALID_ARGUMENT,
              "'shortest_edge' and 'longest_edge'");
  vlm_processor_config_release(&config);
  /* do_resize off: the image itself, which must divide into 28x28 blocks. */
  CHECK_OK(parse_config("{\"image_processor_type\": \"Qwen2VLImageProcessor\", \"do_resize\": false}",
                        &config));
  CHECK_OK(vlm_qwen2_vl_preprocess(&config, &image, VLM_QWEN2_VL_TORCHVISION, NULL, &values, grid));
  CHECK_INT_EQ(grid[1], 6);
  CHECK_INT_EQ(grid[2], 4);
  CHECK_INT_EQ(values.shape[0], 24);
  CHECK_INT_EQ(values.shape[1], 1176);
  /* Rows in (grid_h / 2, grid_w / 2, 2, 2) order, each (channel, frame,
   * y, x); frame 1 repeats frame 0. */
  const float *data = values.data;
  CHECK(memcmp(data, data + 196, 196 * sizeof(float)) == 0);
  static const struct { int64_t row, column, y, x; int channel; } places[] = {
      {0, 0, 0, 0, 0}, {0, 15, 1, 1, 0}, {0, 2 * 196, 0, 0, 1}, {0, 4 * 196 + 13, 0, 13, 2},
      {1, 2 * 196, 0, 14, 1}, {2, 2 * 196, 14, 0, 1}, {1, 4 * 196 + 15, 1, 15, 2}, {3, 0, 14, 14, 0}, {4, 0, 0, 28, 0}, {8, 0, 28, 0, 0},
      {23, 1175, 83, 55, 2}};
  for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
    int channel = places[i].channel;
    float mean = (float)config.image_mean[channel] * 255.0f, std = (float)config.image_std[channel] * 255.0f;
    float expected = ((float)image.pixels[(places[i].y * 56 + places[i].x) * 3 + channel] - mean) / std;
    CHECK(data[places[i].row * 1176 + places[i].column] == expected);
  }
  vlm_tensor_release(&values);
  vlm_image odd = synthetic_image(57, 84);
  CHECK_ERROR(vlm_qwen2_vl_preprocess(&config, &odd, VLM_QWEN2_VL_PIL, NULL, &values, grid),
              VLM_STATUS_INVALID_ARGUMENT, "do_resize is off and a 57x84 image does not divide into 28x28");
  free(odd.pixels);
  vlm_processor_config_release(&config);
  /* A config whose floor resizes a 1x1 image to 2^20 x 2^20: refused. */
  CHECK_OK(parse_config("{\"image_processor_type\": \"Qwen2VLImageProcessor\","
                        " \"min_pixels\": 1099511627776, \"max_pixels\": 1099511627776}", &config));
  CHECK_ERROR(vlm_qwen2_vl_image_grid(&config, 1, 1, grid), VLM_STATUS_OUT_OF_RANGE,
              "the image resizes to 1048600x1048600");
  vlm_processor_config_release(&config);
  /* Only bicubic is implemented. */
  CHECK_OK(parse_config("{\"image_processor_type\": \"Qwen2VLImageProcessor\", \"resample\": 2}", &config));
  CHECK_ERROR(vlm_qwen2_vl_image_grid(&config, 56, 84, grid), VLM_STATUS_UNIMPLEMENTED, "resample 2");
  vlm_processor_config_release(&config);
  /* Another class's config. */
  CHECK_OK(parse_config("{\"image_processor_type\": \"CLIPImageProcessor\"}", &config));
  CHECK_ERROR(vlm_qwen2_vl_image_grid(&config, 56, 84, grid), VLM_STATUS_INVALID_ARGUMENT,
              "the processor config is for CLIPImageProcessor");
  vlm_processor_config_release(&config);
  /* The ratio error names the image; the grid gives the token count. */
  CHECK_OK(parse_config("{\"image_processor_type\": \"Qwen2VLImageProcessor\"}", &config));
  CHECK_ERROR(vlm_qwen2_vl_image_grid(&config, 201, 1, grid), VLM_STATUS_INVALID_ARGUMENT,
              "Qwen2-VL image processor: a 201x1 image: absolute aspect ratio must be smaller than "
              "200, got 201.0");
  CHECK_OK(vlm_qwen2_vl_image_grid(&config, 1280, 960, grid));
  CHECK_INT_EQ(grid[0] * grid[1] * grid[2] / (config.merge_size * config.merge_size), 60 * 82 / 4);
  CHECK_STR_EQ(vlm_qwen2_vl_processor_class_name(VLM_QWEN2_VL_PIL), "Qwen2VLImageProcessorPil");
  CHECK_STR_EQ(vlm_qwen2_vl_processor_class_name(VLM_QWEN2_VL_TORCHVISION), "Qwen2VLImageProcessor");
  vlm_processor_config_release(&config);
  vlm_image empty = {0};
  CHECK_OK(parse_config("{\"image_processor_type\": \"Qwen2VLImageProcessor\"}", &config));
  CHECK_ERROR(vlm_qwen2_vl_preprocess(&config, &empty, VLM_QWEN2_VL_PIL, NULL, &values, grid),
              VLM_STATUS_INVALID_ARGUMENT, "empty image");
  vlm_processor_config_release(&config);
  free(image.pixels);
}

TEST_MAIN(TEST(test_synthetic_images_match_transformers),
          TEST(test_portable_resampler_matches_transformers), TEST(test_fixture_images_match_transformers),
          TEST(test_smart_resize_matches_transformers), TEST(test_smart_resize_refuses_bad_arguments),
          TEST(test_config_cases))
