/* The Qwen2-VL image processor against Transformers, without fixtures:
 * the synthetic images of tests/goldens/media_qwen2_vl under its four
 * configs (both variants, bit for bit, on the SIMD and the portable
 * resampler), smart_resize's results and errors, and what the config alone
 * decides. The fixture images are in test_image_processor_qwen2_vl_fixtures.c;
 * the golden format is described in test_qwen2_vl_support.h. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "media/image_processor_qwen2_vl.h"
#include "test.h"
#include "test_qwen2_vl_support.h"

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
          TEST(test_portable_resampler_matches_transformers),
          TEST(test_smart_resize_matches_transformers), TEST(test_smart_resize_refuses_bad_arguments),
          TEST(test_config_cases))
