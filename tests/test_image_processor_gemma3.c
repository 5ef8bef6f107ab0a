/* The Gemma 3 image processor against Transformers 5.23.0
 * (tests/goldens/media_gemma3, tools/oracle/media_goldens_gemma3.py): for
 * four processor configs (google/gemma-3-4b-it's 896 px; a saved
 * do_pan_and_scan that Gemma3Processor's images_kwargs override; pan-and-scan
 * from the call with the processor's crop defaults; smaller crops) and every
 * fixture image plus synthetic strips, num_crops and pixel_values
 * [1 + crops, 3, H, W] of both Gemma3ImageProcessor (torchvision, bilinear
 * uint8) and Gemma3ImageProcessorPil, bit for bit; the registry's grid from
 * the image size alone. The synthetic images run without fixtures. Also the
 * pan-and-scan arithmetic on edge cases and the refusals of the kwargs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sha256.h"
#include "io/config.h"
#include "io/config_reader.h"
#include "io/file.h"
#include "io/json.h"
#include "media/image_processor_gemma3.h"
#include "media/image_processors.h"
#include "test.h"
#include "vlm/media.h"

#define GOLDENS VLM_SOURCE_DIR "/tests/goldens/media_gemma3"

static const char *string_of(const vlm_json_value *object, const char *key) {
  return vlm_json_get_string(vlm_json_object_get(object, key));
}

static int64_t int_of(const vlm_json_value *value) {
  int64_t out = -1;
  vlm_json_get_int(value, &out);
  return out;
}

static vlm_status load_config(const char *name, vlm_processor_config *config) {
  char directory[512], *kwargs = NULL, *path = NULL;
  size_t length = 0;
  snprintf(directory, sizeof(directory), "%s/configs/%s", GOLDENS, name);
  vlm_status status = vlm_config_read_file(directory, "processor_kwargs.json", false, &kwargs, &length, &path);
  if (!status) status = vlm_processor_config_load_with(directory, kwargs, NULL, config);
  free(kwargs);
  free(path);
  return status;
}

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

static int checked;

static void check_variant(const vlm_processor_config *config, const vlm_json_value *entry, const vlm_image *image,
                          vlm_gemma3_variant variant) {
  const char *key = variant == VLM_GEMMA3_PIL ? "pixel_values_pil" : "pixel_values";
  vlm_tensor values;
  int64_t crops = -1;
  vlm_status status = vlm_gemma3_preprocess(config, image, variant, NULL, &values, &crops);
  CHECK_OK(status);
  if (status) return;
  CHECK_INT_EQ(crops, int_of(vlm_json_object_get(entry, "num_crops")));
  const vlm_json_value *field = vlm_json_object_get(entry, key);
  const vlm_json_value *shape = vlm_json_object_get(field, "shape");
  CHECK_INT_EQ(values.rank, 4);
  for (int d = 0; d < 4; d++) CHECK_INT_EQ(values.shape[d], int_of(vlm_json_array_get(shape, (size_t)d)));
  char actual[65];
  vlm_sha256 hash;
  vlm_sha256_init(&hash);
  vlm_sha256_update(&hash, values.data, vlm_tensor_byte_size(&values));
  vlm_sha256_finish_hex(&hash, actual);
  const char *expected = string_of(field, "sha256");
  if (!expected || strcmp(actual, expected) != 0) {
    fprintf(stderr, "  %s / %s: %s differs from Transformers\n", string_of(entry, "config"),
            string_of(entry, "image"), key);
    test_failures++;
  }
  checked++;
  vlm_tensor_release(&values);
}

static void check_entry(const vlm_processor_config *config, const vlm_json_value *entry, const vlm_image *image) {
  const vlm_json_value *size = vlm_json_object_get(entry, "size");
  CHECK_INT_EQ(image->height, int_of(vlm_json_array_get(size, 0)));
  CHECK_INT_EQ(image->width, int_of(vlm_json_array_get(size, 1)));
  const vlm_image_processor_class *processor = NULL;
  CHECK_OK(vlm_image_processor_find(config, &processor));
  int64_t grid[3] = {0};
  if (processor) CHECK_OK(processor->grid(config, image->width, image->height, grid));
  CHECK_INT_EQ(grid[0], 1 + int_of(vlm_json_object_get(entry, "num_crops")));
  check_variant(config, entry, image, VLM_GEMMA3_TORCHVISION);
  check_variant(config, entry, image, VLM_GEMMA3_PIL);
}

/* Every entry of synthetic (fixtures false) or fixture images; how many ran. */
static int run_entries(bool fixtures) {
  vlm_json_document manifest;
  CHECK_OK(vlm_json_parse_file(GOLDENS "/manifest.json", 1 << 22, NULL, &manifest));
  const vlm_json_value *entries = vlm_json_object_get(manifest.root, "entries");
  CHECK(entries && entries->type == VLM_JSON_ARRAY);
  char *images_dir = fixtures ? vlm_path_join(test_fixtures_dir(), "media/images") : NULL;
  int ran = 0;
  for (size_t i = 0; entries && i < entries->as.array.count; i++) {
    const vlm_json_value *entry = vlm_json_array_get(entries, i);
    const char *name = string_of(entry, "image"), *config_name = string_of(entry, "config");
    long long width = 0, height = 0;
    bool synthetic = sscanf(name, "synthetic_%lldx%lld", &width, &height) == 2;
    if (synthetic == fixtures) continue;
    vlm_processor_config config;
    vlm_status status = load_config(config_name, &config);
    CHECK_OK(status);
    if (status) continue;
    vlm_image image;
    if (synthetic) {
      image = synthetic_image(width, height);
    } else {
      char *path = vlm_path_join(images_dir, name);
      status = vlm_image_decode_file(path, NULL, &image);
      free(path);
      CHECK_OK(status);
    }
    if (!status) {
      check_entry(&config, entry, &image);
      if (synthetic) free(image.pixels);
      else vlm_image_release(&image);
      ran++;
    }
    vlm_processor_config_release(&config);
  }
  free(images_dir);
  vlm_json_document_release(&manifest);
  return ran;
}

static void synthetic_images_match_transformers(void) {
  checked = 0;
  CHECK_INT_EQ(run_entries(false), 5 * 4);
  CHECK_INT_EQ(checked, 5 * 4 * 2);
}

static void fixture_images_match_transformers(void) {
  if (!test_require_fixtures()) return;
  checked = 0;
  CHECK_INT_EQ(run_entries(true), 23 * 4);
  CHECK_INT_EQ(checked, 23 * 4 * 2);
}

static vlm_processor_config pan_and_scan_config(int64_t min_crop, int64_t max_crops, double ratio) {
  vlm_processor_config config = {.do_pan_and_scan = true, .pan_and_scan_min_crop_size = min_crop,
                                 .pan_and_scan_max_num_crops = max_crops,
                                 .pan_and_scan_min_ratio_to_activate = ratio};
  return config;
}

/* The arithmetic of pan_and_scan, worked by hand from Transformers' code. */
static void pan_and_scan_crops_as_transformers_cuts_them(void) {
  vlm_crop_box boxes[VLM_GEMMA3_MAX_CROPS];
  vlm_processor_config config = pan_and_scan_config(256, 4, 1.2);
  /* 600x400: ratio 1.5 rounds to 2 crops of 300x400. */
  CHECK_INT_EQ(vlm_gemma3_pan_and_scan(&config, 600, 400, boxes), 2);
  CHECK_INT_EQ(boxes[1].x, 300);
  CHECK_INT_EQ(boxes[1].width, 300);
  CHECK_INT_EQ(boxes[1].height, 400);
  /* 451x300: 2 crops would be 226 wide, under 256: none. */
  CHECK_INT_EQ(vlm_gemma3_pan_and_scan(&config, 451, 300, boxes), 0);
  /* 1100x1000: ratio 1.1 < 1.2: none. */
  CHECK_INT_EQ(vlm_gemma3_pan_and_scan(&config, 1100, 1000, boxes), 0);
  /* 300x1000 portrait: round(3.33) = 3 crops of 300x334, the last 332 high. */
  CHECK_INT_EQ(vlm_gemma3_pan_and_scan(&config, 300, 1000, boxes), 3);
  CHECK_INT_EQ(boxes[2].y, 668);
  CHECK_INT_EQ(boxes[2].height, 332);
  /* 4000x1000: 4 by the ratio; the max of 4 holds; a max of 3 cuts it. */
  CHECK_INT_EQ(vlm_gemma3_pan_and_scan(&config, 4000, 1000, boxes), 4);
  config.pan_and_scan_max_num_crops = 3;
  CHECK_INT_EQ(vlm_gemma3_pan_and_scan(&config, 4000, 1000, boxes), 3);
  CHECK_INT_EQ(boxes[2].width, 1334 - 2); /* ceil(4000 / 3) = 1334, the last clipped */
  config.do_pan_and_scan = false;
  CHECK_INT_EQ(vlm_gemma3_pan_and_scan(&config, 4000, 1000, boxes), 0);
}

/* Processor kwargs: keys the image processor lacks, and a pan-and-scan
 * turned on without its crop settings, are refused. */
static void processor_kwargs_are_checked(void) {
  const char *processor = "{\"processor_class\": \"Gemma3Processor\", \"image_processor\": "
                          "{\"image_processor_type\": \"Gemma3ImageProcessor\"}}";
  const char *plain_processor = "{\"image_processor\": {\"image_processor_type\": \"Gemma3ImageProcessor\"}}";
  vlm_processor_config config;
  CHECK_ERROR(vlm_processor_config_parse_with(NULL, 0, processor, strlen(processor), "{\"do_pan_and_scam\": true}",
                                              NULL, &config),
              VLM_STATUS_INVALID_ARGUMENT, "'do_pan_and_scam' is not a setting of Gemma3ImageProcessor");
  CHECK_ERROR(vlm_processor_config_parse_with(NULL, 0, processor, strlen(processor), "[1]", NULL, &config),
              VLM_STATUS_INVALID_ARGUMENT, "processor kwargs: the top level must be a JSON object");
  /* Without Gemma3Processor's images_kwargs the crop settings stay None. */
  CHECK_ERROR(vlm_processor_config_parse_with(NULL, 0, plain_processor, strlen(plain_processor),
                                              "{\"do_pan_and_scan\": true}", NULL, &config),
              VLM_STATUS_INVALID_ARGUMENT, "needs pan_and_scan_min_crop_size");
  CHECK_OK(vlm_processor_config_parse_with(NULL, 0, processor, strlen(processor), "{\"do_pan_and_scan\": true}",
                                           NULL, &config));
  CHECK(config.do_pan_and_scan);
  CHECK_INT_EQ(config.pan_and_scan_min_crop_size, 256);
  CHECK_INT_EQ(config.pan_and_scan_max_num_crops, 4);
  vlm_processor_config_release(&config);
}

TEST_MAIN(TEST(synthetic_images_match_transformers), TEST(fixture_images_match_transformers),
          TEST(pan_and_scan_crops_as_transformers_cuts_them), TEST(processor_kwargs_are_checked))
