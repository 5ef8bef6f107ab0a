/* Image decoding and the CLIP image processor against Transformers.
 *
 * tests/goldens/media (tools/oracle/media_goldens.py) holds, per fixture
 * image, sha256 digests of what Transformers 5.23.0 produces at each step:
 * the decoded RGB array, the resized+cropped uint8 image of both processors
 * and both pixel_values. A matching digest is a bit-exact match; a few
 * images also carry full tensors so a mismatch can show its size. Tests that
 * need ../shared/fixtures report SKIP(no-fixtures) without it; the rest use
 * the fuzz seed corpus and the llava goldens in the tree. */
#include <dirent.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/config.h"
#include "io/file.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "media/image_processor_clip.h"
#include "media/image_processors.h"
#include "test.h"
#include "validate/golden.h"
#include "core/sha256.h"
#include "core/status.h"
#include "vlm/media.h"

#define MEDIA_GOLDENS VLM_SOURCE_DIR "/tests/goldens/media"
#define LLAVA_MODEL VLM_SOURCE_DIR "/tests/models/llava"
#define SEED_CORPUS VLM_SOURCE_DIR "/fuzz/corpus/image_decode"

static void sha256_hex(const void *data, size_t length, char out[65]) {
  vlm_sha256 hash;
  vlm_sha256_init(&hash);
  vlm_sha256_update(&hash, data, length);
  vlm_sha256_finish_hex(&hash, out);
}

static int digests_checked;

static const char *expected_digest(const vlm_json_value *entry, const char *key) {
  return vlm_json_get_string(vlm_json_object_get(vlm_json_object_get(entry, key), "sha256"));
}

/* Largest |a - b| against a full golden tensor, when the golden has one. */
static int max_difference_u8(const vlm_safetensors_file *tensors, const vlm_json_value *entry,
                             const char *key, const uint8_t *actual, size_t length) {
  const char *name = vlm_json_get_string(vlm_json_object_get(vlm_json_object_get(entry, key), "tensor"));
  if (!name) return -1;
  for (size_t i = 0; i < tensors->entry_count; i++) {
    const vlm_safetensors_entry *tensor = &tensors->entries[i];
    if (strcmp(tensor->name, name) != 0) continue;
    if (tensor->data_end - tensor->data_begin != length) return 256;
    int largest = 0;
    for (size_t j = 0; j < length; j++) {
      int difference = abs((int)actual[j] - (int)tensor->data[j]);
      if (difference > largest) largest = difference;
    }
    return largest;
  }
  return -1;
}

static bool check_digest(const vlm_safetensors_file *tensors, const vlm_json_value *entry,
                         const char *file, const char *key, const void *data, size_t length,
                         bool is_u8) {
  const char *expected = expected_digest(entry, key);
  if (!expected) return true;
  char actual[65];
  sha256_hex(data, length, actual);
  digests_checked++;
  if (strcmp(actual, expected) == 0) return true;
  int difference = is_u8 ? max_difference_u8(tensors, entry, key, data, length) : -1;
  fprintf(stderr, "  %s: %s differs from Transformers (digest %.12s, expected %.12s; max |diff| %d)\n",
          file, key, actual, expected, difference);
  test_failures++;
  return false;
}

static void check_processor(const vlm_processor_config *config, const vlm_safetensors_file *tensors,
                            const vlm_json_value *entry, const char *file, const vlm_image *image,
                            vlm_clip_variant variant) {
  bool pil = variant == VLM_CLIP_PIL;
  vlm_image cropped;
  vlm_status status = vlm_clip_resize_and_crop(config, image, variant, NULL, &cropped);
  CHECK_OK(status);
  if (status) return;
  check_digest(tensors, entry, file, pil ? "resized_pil" : "resized", cropped.pixels,
               (size_t)(cropped.width * cropped.height * 3), true);
  vlm_tensor values;
  status = vlm_clip_rescale_and_normalize(config, &cropped, variant, NULL, &values);
  CHECK_OK(status);
  if (!status) {
    check_digest(tensors, entry, file, pil ? "pixel_values_pil" : "pixel_values", values.data,
                 vlm_tensor_byte_size(&values), false);
    vlm_tensor_release(&values);
  }
  vlm_image_release(&cropped);
}

static void check_fixture_image(const vlm_processor_config *config, const vlm_safetensors_file *tensors,
                                const char *images_dir, const vlm_json_value *entry) {
  const char *file = vlm_json_get_string(vlm_json_object_get(entry, "file"));
  if (!file || vlm_json_object_get(entry, "error")) return;
  char *path = vlm_path_join(images_dir, file);
  vlm_image image;
  vlm_status status = vlm_image_decode_file(path, NULL, &image);
  CHECK_OK(status);
  if (!status) {
    check_digest(tensors, entry, file, "decoded", image.pixels,
                 (size_t)(image.width * image.height * 3), true);
    check_processor(config, tensors, entry, file, &image, VLM_CLIP_TORCHVISION);
    check_processor(config, tensors, entry, file, &image, VLM_CLIP_PIL);
    vlm_image_release(&image);
  }
  if (vlm_json_object_get(entry, "decoded_load_image")) {
    vlm_image_decode_options options = {.alpha = VLM_ALPHA_DISCARD};
    status = vlm_image_decode_file(path, &options, &image);
    CHECK_OK(status);
    if (!status) {
      check_digest(tensors, entry, file, "decoded_load_image", image.pixels,
                   (size_t)(image.width * image.height * 3), true);
      vlm_image_release(&image);
    }
  }
  free(path);
}

/* Every fixture image HF can load: decode, both processors, bit for bit. */
static void test_fixture_images_match_transformers(void) {
  const char *fixtures = test_require_fixtures();
  if (!fixtures) return;
  char *images_dir = vlm_path_join(fixtures, "media/images");
  vlm_json_document manifest;
  vlm_safetensors_file tensors;
  vlm_processor_config config;
  CHECK_OK(vlm_json_parse_file(MEDIA_GOLDENS "/manifest.json", 1 << 22, NULL, &manifest));
  CHECK_OK(vlm_safetensors_open(MEDIA_GOLDENS "/tensors.safetensors", NULL, &tensors));
  CHECK_OK(vlm_processor_config_load(LLAVA_MODEL, NULL, &config));
  const vlm_json_value *images = vlm_json_object_get(manifest.root, "images");
  CHECK(images && images->as.array.count >= 20);
  for (size_t i = 0; images && i < images->as.array.count; i++)
    check_fixture_image(&config, &tensors, images_dir, vlm_json_array_get(images, i));
  /* 23 loadable images x (decoded + 2 x (resized, pixel_values)) + 2 load_image. */
  CHECK_INT_EQ(digests_checked, 23 * 5 + 2);
  vlm_processor_config_release(&config);
  vlm_safetensors_close(&tensors);
  vlm_json_document_release(&manifest);
  free(images_dir);
}

static vlm_status decode_fixture(const char *name, const vlm_image_decode_options *options,
                                 vlm_image *image) {
  char *images_dir = vlm_path_join(test_fixtures_dir(), "media/images");
  char *path = vlm_path_join(images_dir, name);
  vlm_status status = vlm_image_decode_file(path, options, image);
  free(path);
  free(images_dir);
  return status;
}

/* A counting allocator, to prove limits are checked before allocating. */
typedef struct counting_allocator {
  vlm_allocator base;
  size_t allocations;
  atomic_bool *cancel_on_allocate;
} counting_allocator;

static void *counting_allocate(void *context, size_t size, size_t alignment) {
  counting_allocator *counter = context;
  counter->allocations++;
  if (counter->cancel_on_allocate) atomic_store(counter->cancel_on_allocate, true);
  return vlm_allocator_system()->allocate(NULL, size, alignment);
}

static void counting_release(void *context, void *pointer) {
  (void)context;
  vlm_allocator_system()->release(NULL, pointer);
}

static void counting_init(counting_allocator *counter) {
  memset(counter, 0, sizeof(*counter));
  counter->base = (vlm_allocator){counter, counting_allocate, counting_release};
}

static void test_bad_inputs_give_clear_errors(void) {
  if (!test_require_fixtures()) return;
  vlm_image image;
  CHECK_ERROR(decode_fixture("truncated.jpg", NULL, &image), VLM_STATUS_DATA_LOSS,
              "truncated.jpg: truncated JPEG data");
  CHECK_ERROR(decode_fixture("not_an_image.jpg", NULL, &image), VLM_STATUS_INVALID_ARGUMENT,
              "not_an_image.jpg: not an image: the data is text");
  counting_allocator counter;
  counting_init(&counter);
  vlm_image_decode_options options = {.allocator = &counter.base};
  CHECK_ERROR(decode_fixture("bomb_100000x100000.png", &options, &image), VLM_STATUS_OUT_OF_RANGE,
              "bomb_100000x100000.png: 100000x100000 = 10000000000 pixels exceeds the limit of "
              "67108864 pixels");
  CHECK_INT_EQ(counter.allocations, 0);
  CHECK(image.pixels == NULL);
}

static void test_limits_are_checked_before_allocating(void) {
  if (!test_require_fixtures()) return;
  counting_allocator counter;
  counting_init(&counter);
  vlm_image image;
  vlm_image_decode_options options = {.allocator = &counter.base, .limits.max_decoded_pixels = 100};
  const char *files[] = {"chelsea.png", "coffee.jpg", "coffee_lossy.webp", "no_time_for_that_tiny.gif"};
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
    CHECK_ERROR(decode_fixture(files[i], &options, &image), VLM_STATUS_OUT_OF_RANGE,
                "pixels exceeds the limit of 100 pixels");
  CHECK_INT_EQ(counter.allocations, 0);
  options.limits.max_decoded_pixels = 0;
  options.limits.max_encoded_bytes = 1000;
  CHECK_ERROR(decode_fixture("chelsea.png", &options, &image), VLM_STATUS_OUT_OF_RANGE,
              "over the limit of 1000");
  CHECK_INT_EQ(counter.allocations, 0);
}

/* The flag is polled between scanlines: set it from the allocator (i.e. just
 * after the header was read) and the decode stops with CANCELLED, leaking
 * nothing (ASan checks). */
static void test_cancellation(void) {
  if (!test_require_fixtures()) return;
  const char *files[] = {"chelsea.png", "coffee_progressive.jpg", "chelsea_cmyk.jpg",
                         "coffee_lossy.webp", "no_time_for_that_tiny.gif"};
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    atomic_bool cancel = false;
    counting_allocator counter;
    counting_init(&counter);
    counter.cancel_on_allocate = &cancel;
    vlm_image_decode_options options = {.allocator = &counter.base, .cancel = &cancel};
    vlm_image image;
    CHECK_ERROR(decode_fixture(files[i], &options, &image), VLM_STATUS_CANCELLED, "cancelled");
    CHECK(counter.allocations >= 1);
    atomic_bool already = true;
    vlm_image_decode_options early = {.cancel = &already};
    CHECK_ERROR(decode_fixture(files[i], &early, &image), VLM_STATUS_CANCELLED, "decoding cancelled");
  }
}

/* chelsea_exif_rot90.jpg is chelsea_q90.jpg's pixels with Orientation=6:
 * decoded upright it is the stored image rotated 90 degrees clockwise. */
static void test_exif_orientation(void) {
  if (!test_require_fixtures()) return;
  vlm_image stored, rotated, raw;
  CHECK_OK(decode_fixture("chelsea_q90.jpg", NULL, &stored));
  CHECK_OK(decode_fixture("chelsea_exif_rot90.jpg", NULL, &rotated));
  vlm_image_decode_options ignore = {.ignore_exif_orientation = true};
  CHECK_OK(decode_fixture("chelsea_exif_rot90.jpg", &ignore, &raw));
  CHECK_INT_EQ(rotated.exif_orientation, 6);
  CHECK_INT_EQ(rotated.width, stored.height);
  CHECK_INT_EQ(rotated.height, stored.width);
  CHECK(raw.width == stored.width && memcmp(raw.pixels, stored.pixels, (size_t)(raw.width * raw.height * 3)) == 0);
  int64_t mismatches = 0;
  for (int64_t y = 0; y < rotated.height && rotated.pixels; y++)
    for (int64_t x = 0; x < rotated.width; x++)
      mismatches += memcmp(rotated.pixels + (y * rotated.width + x) * 3,
                           stored.pixels + ((stored.height - 1 - x) * stored.width + y) * 3, 3) != 0;
  CHECK_INT_EQ(mismatches, 0);
  vlm_image_release(&stored);
  vlm_image_release(&rotated);
  vlm_image_release(&raw);
}

/* Without fixtures: every seed of the fuzz corpus decodes (or is refused)
 * cleanly, formats are sniffed from bytes, and non-images are named. */
static void test_seed_corpus_and_sniffing(void) {
  DIR *directory = opendir(SEED_CORPUS);
  CHECK(directory != NULL);
  size_t decoded = 0;
  for (struct dirent *item; directory && (item = readdir(directory));) {
    if (item->d_name[0] == '.') continue;
    char *path = vlm_path_join(SEED_CORPUS, item->d_name);
    vlm_image image;
    vlm_status status = vlm_image_decode_file(path, NULL, &image);
    if (!status) {
      decoded++;
      CHECK(image.width > 0 && image.height > 0 && image.pixels);
      vlm_image_release(&image);
    }
    vlm_status_free(status);
    free(path);
  }
  if (directory) closedir(directory);
  CHECK(decoded >= 4);
  vlm_image image;
  static const uint8_t wav[] = "RIFF\x24\0\0\0WAVEfmt ";
  CHECK_ERROR(vlm_image_decode_memory(wav, sizeof(wav) - 1, "speech.wav", NULL, &image),
              VLM_STATUS_INVALID_ARGUMENT, "speech.wav: not an image: the data is WAV audio");
  static const uint8_t mp4[] = "\0\0\0\x20" "ftypisom\0\0\0\0";
  CHECK_ERROR(vlm_image_decode_memory(mp4, sizeof(mp4) - 1, "clip.mp4", NULL, &image),
              VLM_STATUS_INVALID_ARGUMENT, "MP4/QuickTime video");
  CHECK_ERROR(vlm_image_decode_memory(NULL, 0, NULL, NULL, &image), VLM_STATUS_INVALID_ARGUMENT,
              "image: not an image: the data is empty");
  static const uint8_t png_header_only[] = "\x89PNG\r\n\x1a\n";
  CHECK_ERROR(vlm_image_decode_memory(png_header_only, 8, "cut.png", NULL, &image),
              VLM_STATUS_DATA_LOSS, "cut.png: truncated PNG data");
  CHECK_INT_EQ(vlm_image_format_sniff((const uint8_t *)"GIF89a", 6), VLM_IMAGE_FORMAT_GIF);
}

/* Rescale+normalize alone, against the llava golden: the uint8 crop of
 * chelsea.png (media golden) normalizes to one_image's pixel_values bit for
 * bit. Needs no fixtures. */
static void test_normalize_matches_llava_golden(void) {
  vlm_safetensors_file tensors;
  vlm_golden_case golden;
  vlm_processor_config config;
  CHECK_OK(vlm_safetensors_open(MEDIA_GOLDENS "/tensors.safetensors", NULL, &tensors));
  CHECK_OK(vlm_golden_case_open(VLM_SOURCE_DIR "/tests/goldens/llava/one_image", NULL, &golden));
  CHECK_OK(vlm_processor_config_load(LLAVA_MODEL, NULL, &config));
  const char *names[] = {"chelsea.png.resized", "chelsea.png.resized_pil"};
  const char *stages[] = {"processor.pixel_values", "processor_pil.pixel_values"};
  for (int variant = 0; variant < 2; variant++) {
    const vlm_safetensors_entry *crop = NULL;
    for (size_t i = 0; i < tensors.entry_count; i++)
      if (strcmp(tensors.entries[i].name, names[variant]) == 0) crop = &tensors.entries[i];
    vlm_tensor expected;
    CHECK_OK(vlm_golden_case_tensor(&golden, stages[variant], &expected));
    CHECK(crop != NULL);
    if (!crop) continue;
    vlm_image image = {.pixels = (uint8_t *)crop->data, .width = 336, .height = 336};
    vlm_tensor values;
    CHECK_OK(vlm_clip_rescale_and_normalize(&config, &image, (vlm_clip_variant)variant, NULL, &values));
    CHECK(memcmp(values.data, expected.data, vlm_tensor_byte_size(&values)) == 0);
    vlm_tensor_release(&values);
  }
  vlm_processor_config_release(&config);
  vlm_golden_case_close(&golden);
  vlm_safetensors_close(&tensors);
}

/* A batch of processor outputs held in a tensor list (as the oracle's
 * goldens hold Transformers' batched outputs). */
static vlm_status list_get(void *context, const char *name, vlm_tensor *out) {
  const vlm_named_tensor *t = vlm_tensor_list_find((const vlm_tensor_list *)context, name);
  if (!t) return VLM_ERROR(NOT_FOUND, "no %s", name);
  return vlm_tensor_borrow(t->dtype, t->rank, t->shape, t->data, out);
}

static float *batch_add(vlm_tensor_list *batch, const char *name, vlm_dtype dtype, int rank, const int64_t *shape) {
  void *data = NULL;
  CHECK_OK(vlm_tensor_list_add(batch, name, dtype, rank, shape, &data));
  return data;
}

static const vlm_image_processor_class *processor_class(const char *type) {
  vlm_processor_config config = {.image_processor_type = type};
  const vlm_image_processor_class *processor = NULL;
  CHECK_OK(vlm_image_processor_find(&config, &processor));
  return processor;
}

/* Each class cuts image `index` out of its own batch layout, as its
 * preprocess would have made it alone, and refuses a batch laid out
 * otherwise. */
static void test_processors_split_their_batches(void) {
  vlm_tensor_list batch = {0};
  vlm_processor_outputs outputs = {&batch, list_get};
  vlm_media_item item = {0};
  /* Qwen2-VL: grids [1,2,2] then [1,2,4]: image 1 is rows 4..11. */
  const vlm_image_processor_class *qwen = processor_class("Qwen2VLImageProcessor");
  float *rows = batch_add(&batch, "pixel_values", VLM_DTYPE_F32, 2, (const int64_t[]){12, 3});
  for (int i = 0; i < 36; i++) rows[i] = (float)(i / 3);
  int32_t *grids = (int32_t *)batch_add(&batch, "image_grid_thw", VLM_DTYPE_I32, 2, (const int64_t[]){2, 3});
  memcpy(grids, (const int32_t[]){1, 2, 2, 1, 2, 4}, sizeof(int32_t[6]));
  CHECK_OK(qwen->item_from_batch(&outputs, 1, &item));
  const vlm_named_tensor *pixels = vlm_media_item_tensor(&item, "pixel_values");
  CHECK(pixels && pixels->shape[0] == 8 && ((float *)pixels->data)[0] == 4 && ((float *)pixels->data)[23] == 11);
  CHECK(item.grid[0] == 1 && item.grid[1] == 2 && item.grid[2] == 4);
  vlm_media_item_release(&item);
  grids[5] = 5; /* 4 + 10 rows > 12 */
  CHECK_ERROR(qwen->item_from_batch(&outputs, 1, &item), VLM_STATUS_DATA_LOSS, "more rows");
  vlm_media_item_release(&item);
  vlm_tensor_list_release(&batch);
  /* Gemma 3: num_crops [0, 2]: image 1 is the global image and 2 crops. */
  const vlm_image_processor_class *gemma = processor_class("Gemma3ImageProcessor");
  float *images = batch_add(&batch, "pixel_values", VLM_DTYPE_F32, 4, (const int64_t[]){4, 1, 2, 2});
  for (int i = 0; i < 16; i++) images[i] = (float)(i / 4);
  int32_t *crops = (int32_t *)batch_add(&batch, "num_crops", VLM_DTYPE_I32, 1, (const int64_t[]){2});
  crops[0] = 0, crops[1] = 2;
  CHECK_OK(gemma->item_from_batch(&outputs, 1, &item));
  pixels = vlm_media_item_tensor(&item, "pixel_values");
  const vlm_named_tensor *count = vlm_media_item_tensor(&item, "num_crops");
  CHECK(pixels && pixels->shape[0] == 3 && ((float *)pixels->data)[0] == 1 && count && *(int32_t *)count->data == 2);
  CHECK(item.grid[0] == 3);
  vlm_media_item_release(&item);
  /* CLIP stacks [C, H, W] per image: image 3 of the same pixels. */
  CHECK_OK(processor_class("CLIPImageProcessor")->item_from_batch(&outputs, 3, &item));
  pixels = vlm_media_item_tensor(&item, "pixel_values");
  CHECK(pixels && pixels->rank == 3 && ((float *)pixels->data)[0] == 3 && item.grid[1] == 2);
  vlm_media_item_release(&item);
  CHECK_ERROR(processor_class("Phi4MultimodalImageProcessor")->item_from_batch(&outputs, 0, &item),
              VLM_STATUS_NOT_FOUND, "image_pixel_values");
  vlm_media_item_release(&item);
  vlm_tensor_list_release(&batch);
}

TEST_MAIN(TEST(test_fixture_images_match_transformers), TEST(test_bad_inputs_give_clear_errors),
          TEST(test_limits_are_checked_before_allocating), TEST(test_cancellation),
          TEST(test_exif_orientation), TEST(test_seed_corpus_and_sniffing),
          TEST(test_normalize_matches_llava_golden), TEST(test_processors_split_their_batches))
