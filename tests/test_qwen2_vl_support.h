/* Shared by the Qwen2-VL image processor tests (synthetic images and
 * smart_resize in test_image_processor_qwen2_vl.c, fixture images in
 * test_image_processor_qwen2_vl_fixtures.c; two executables so each stays
 * well inside ctest's timeout under the sanitizers): reading
 * tests/goldens/media_qwen2_vl (tools/oracle/media_goldens_qwen2_vl.py),
 * the synthetic images, and checking one entry of the manifest against
 * both variants. The manifest holds, per processor config (configs/<name>,
 * loaded as a model directory) and image, sha256 digests of what
 * Transformers 5.23.0 produces: the resized uint8 image of both processors,
 * pixel_values of both (whole, and its first temporal frame), and
 * image_grid_thw, or the error both raise. A matching digest is a bit-exact
 * match; small cases also carry full tensors so a mismatch shows its size. */
#ifndef VLM_TESTS_TEST_QWEN2_VL_SUPPORT_H
#define VLM_TESTS_TEST_QWEN2_VL_SUPPORT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/config.h"
#include "io/file.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "media/image_processor_qwen2_vl.h"
#include "test.h"
#include "core/sha256.h"
#include "vlm/media.h"

#define GOLDENS VLM_SOURCE_DIR "/tests/goldens/media_qwen2_vl"

typedef struct golden_set {
  vlm_json_document manifest;
  vlm_safetensors_file tensors;
  const vlm_json_value *entries;
} golden_set;

static inline bool goldens_open(golden_set *out) {
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

static inline void goldens_close(golden_set *goldens) {
  vlm_safetensors_close(&goldens->tensors);
  vlm_json_document_release(&goldens->manifest);
}

static inline const char *string_of(const vlm_json_value *object, const char *key) {
  return vlm_json_get_string(vlm_json_object_get(object, key));
}

static inline int64_t int_at(const vlm_json_value *array, size_t index) {
  int64_t value = -1;
  vlm_json_get_int(vlm_json_array_get(array, index), &value);
  return value;
}

static inline void sha256_hex(const void *data, size_t length, char out[65]) {
  vlm_sha256 hash;
  vlm_sha256_init(&hash);
  vlm_sha256_update(&hash, data, length);
  vlm_sha256_finish_hex(&hash, out);
}

static inline const vlm_safetensors_entry *find_tensor(const golden_set *goldens, const char *name) {
  for (size_t i = 0; name && i < goldens->tensors.entry_count; i++)
    if (strcmp(goldens->tensors.entries[i].name, name) == 0) return &goldens->tensors.entries[i];
  return NULL;
}

/* Largest |actual - golden| against the full tensor, or -1 without one. */
static inline double max_difference(const golden_set *goldens, const vlm_json_value *field,
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

/* `actual` against the entry's field[digest_key]; on a mismatch, the
 * largest difference to the full tensor when the golden has one. */
static inline void check_hex(const golden_set *goldens, const vlm_json_value *entry, const char *key,
                      const char *digest_key, const char *actual, const void *data, size_t length,
                      bool is_f32) {
  const vlm_json_value *field = vlm_json_object_get(entry, key);
  const char *expected = string_of(field, digest_key);
  CHECK(expected != NULL);
  if (!expected) return;
  digests_checked++;
  if (strcmp(actual, expected) == 0) return;
  fprintf(stderr, "  %s / %s: %s differs from Transformers (%s %.12s, expected %.12s; max |diff| %g)\n",
          string_of(entry, "config"), string_of(entry, "image"), key, digest_key, actual, expected,
          max_difference(goldens, field, data, length, is_f32));
  test_failures++;
}

static inline void check_digest(const golden_set *goldens, const vlm_json_value *entry, const char *key,
                         const void *data, size_t length, bool is_f32) {
  char actual[65];
  sha256_hex(data, length, actual);
  check_hex(goldens, entry, key, "sha256", actual, data, length, is_f32);
}

/* pixel_values [rows, 3 * frames * area]: every frame must be a copy of
 * frame 0 (as the generator checked Transformers' are), and frame 0 must
 * hash to sha256_frame0: a bit-exact match at half the hashing (which is
 * most of this test's time under the sanitizers). Small tensors are also
 * hashed whole. */
static inline void check_pixel_values(const golden_set *goldens, const vlm_json_value *entry,
                               const char *key, const vlm_tensor *values, int64_t frames,
                               int64_t area) {
  const float *data = values->data;
  int64_t rows = values->shape[0], width = values->shape[1];
  int64_t copies_differing = 0;
  vlm_sha256 hash;
  vlm_sha256_init(&hash);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < 3; c++) {
      const float *frame0 = data + r * width + c * frames * area;
      vlm_sha256_update(&hash, frame0, (size_t)area * sizeof(float));
      for (int64_t t = 1; t < frames; t++)
        copies_differing += memcmp(frame0 + t * area, frame0, (size_t)area * sizeof(float)) != 0;
    }
  CHECK_INT_EQ(copies_differing, 0);
  char actual[65];
  vlm_sha256_finish_hex(&hash, actual);
  size_t bytes = vlm_tensor_byte_size(values);
  check_hex(goldens, entry, key, "sha256_frame0", actual, data, bytes, true);
  if (bytes <= (size_t)1 << 20) {
    digests_checked--; /* one check per tensor in the counts */
    check_digest(goldens, entry, key, data, bytes, true);
  }
}

/* The synthetic image the generator documents (its int64 formula). */
static inline vlm_image synthetic_image(int64_t width, int64_t height) {
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

static inline void load_config(const char *name, vlm_processor_config *config) {
  char directory[512];
  snprintf(directory, sizeof(directory), "%s/configs/%s", GOLDENS, name);
  CHECK_OK(vlm_processor_config_load(directory, NULL, config));
}

static inline void check_error_entry(const vlm_processor_config *config, const vlm_json_value *entry,
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

/* The resize digest, then pixel_values and the grid from patchify on that
 * resized image; preprocess (the two in one) must give the same, checked
 * on the small entries (resampling twice is a third of this test's time
 * under the sanitizers). */
static inline void check_variant(const golden_set *goldens, const vlm_processor_config *config,
                          const vlm_json_value *entry, const vlm_image *image,
                          vlm_qwen2_vl_variant variant) {
  bool pil = variant == VLM_QWEN2_VL_PIL;
  const char *key = pil ? "pixel_values_pil" : "pixel_values";
  vlm_image resized;
  vlm_status status = vlm_qwen2_vl_resize(config, image, variant, NULL, &resized);
  CHECK_OK(status);
  if (status) return;
  const vlm_json_value *shape = vlm_json_object_get(vlm_json_object_get(entry, "resized"), "shape");
  CHECK_INT_EQ(resized.height, int_at(shape, 0));
  CHECK_INT_EQ(resized.width, int_at(shape, 1));
  check_digest(goldens, entry, pil ? "resized_pil" : "resized", resized.pixels,
               (size_t)(resized.width * resized.height * 3), false);
  vlm_tensor values;
  int64_t grid[3];
  status = vlm_qwen2_vl_patchify(config, &resized, variant, NULL, &values, grid);
  vlm_image_release(&resized);
  CHECK_OK(status);
  if (status) return;
  const vlm_json_value *expected_grid = vlm_json_object_get(entry, "image_grid_thw");
  for (size_t i = 0; i < 3; i++) CHECK_INT_EQ(grid[i], int_at(expected_grid, i));
  shape = vlm_json_object_get(vlm_json_object_get(entry, key), "shape");
  CHECK_INT_EQ(values.rank, 2);
  CHECK_INT_EQ(values.shape[0], int_at(shape, 0));
  CHECK_INT_EQ(values.shape[1], int_at(shape, 1));
  check_pixel_values(goldens, entry, key, &values, config->temporal_patch_size,
                     config->patch_size * config->patch_size);
  if (vlm_tensor_byte_size(&values) <= (size_t)4 << 20) {
    vlm_tensor direct;
    int64_t direct_grid[3];
    CHECK_OK(vlm_qwen2_vl_preprocess(config, image, variant, NULL, &direct, direct_grid));
    CHECK(direct.data && vlm_tensor_byte_size(&direct) == vlm_tensor_byte_size(&values) &&
          memcmp(direct.data, values.data, vlm_tensor_byte_size(&values)) == 0);
    CHECK(memcmp(direct_grid, grid, sizeof(grid)) == 0);
    vlm_tensor_release(&direct);
  }
  vlm_tensor_release(&values);
}

static inline void check_entry(const golden_set *goldens, const vlm_processor_config *config,
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
static inline int run_entries(bool fixtures, const char *only_config) {
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

#endif
