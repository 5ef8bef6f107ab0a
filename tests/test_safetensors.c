#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "test.h"

/* Builds a file image: 8-byte little-endian header length, header, data. */
static uint8_t *make_image(const char *header, size_t data_bytes, size_t *out_length) {
  size_t header_length = strlen(header);
  *out_length = 8 + header_length + data_bytes;
  uint8_t *image = calloc(1, *out_length);
  for (int i = 0; i < 8; i++) image[i] = (uint8_t)((uint64_t)header_length >> (8 * i));
  memcpy(image + 8, header, header_length);
  for (size_t i = 0; i < data_bytes; i++) image[8 + header_length + i] = (uint8_t)i;
  return image;
}

static vlm_status parse_image(const char *header, size_t data_bytes) {
  size_t length;
  uint8_t *image = make_image(header, data_bytes, &length);
  vlm_safetensors_file file;
  memset(&file, 0, sizeof(file));
  vlm_status status = vlm_safetensors_parse_buffer(image, length, NULL, "m.safetensors", &file);
  if (!status) vlm_safetensors_release_parsed(&file);
  free(image);
  return status;
}

static void accepts_a_valid_header(void) {
  CHECK_OK(parse_image("{\"__metadata__\":{\"format\":\"pt\"},"
                       "\"b\":{\"dtype\":\"BF16\",\"shape\":[2,3],\"data_offsets\":[16,28]},"
                       "\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                       "\"empty\":{\"dtype\":\"I64\",\"shape\":[0,5],\"data_offsets\":[28,28]},"
                       "\"scalar\":{\"dtype\":\"BOOL\",\"shape\":[],\"data_offsets\":[28,29]}}  ",
                       29));
}

static void rejects_each_malformed_header(void) {
  static const struct {
    const char *header;
    size_t data_bytes;
    const char *fragment;
  } cases[] = {
      {"[]", 0, "does not start with '{'"},
      {"{\"a\":", 0, "invalid JSON"},
      {"{\"a\":{\"dtype\":\"F17\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "unknown dtype \"F17\""},
      {"{\"a\":{\"dtype\":3,\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "\"dtype\" must be a string"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":1,\"data_offsets\":[0,4]}}", 4, "\"shape\" must be an array"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, "shape[0] is not a non-negative integer"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4, "shape[0] is not"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, "rank 9 exceeds"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4, "\"data_offsets\" must be two"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4, "end before begin"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, "needs 8 bytes but data_offsets [0, 4] span 4"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4],\"data_offsets\":[0,4]}}", 4, "overflows"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
       "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "overlaps"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
       "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 12, "leaving a gap"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8, "run past the end"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8, "trailing bytes"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
       "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "listed twice"},
      {"{\"__metadata__\":{\"format\":1}}", 0, "must be a string"},
      {"{\"__metadata__\":[]}", 0, "must be an object"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4, "unknown field \"x\""},
      {"{\"a\":[]}", 0, "entry must be an object"},
      {"{\"\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "name is empty"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    CHECK_ERROR(parse_image(cases[i].header, cases[i].data_bytes), VLM_STATUS_DATA_LOSS,
                cases[i].fragment);
}

static void rejects_bad_lengths(void) {
  vlm_safetensors_file file;
  uint8_t short_image[5] = {0};
  CHECK_ERROR(vlm_safetensors_parse_buffer(short_image, 5, NULL, "s", &file),
              VLM_STATUS_DATA_LOSS, "too short");
  uint8_t image[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
  CHECK_ERROR(vlm_safetensors_parse_buffer(image, sizeof(image), NULL, "huge", &file),
              VLM_STATUS_DATA_LOSS, "exceeds the limit");
  uint8_t past_end[16] = {100};
  CHECK_ERROR(vlm_safetensors_parse_buffer(past_end, sizeof(past_end), NULL, "p", &file),
              VLM_STATUS_DATA_LOSS, "runs past the end of the 16-byte file");
}

/* Writes a checkpoint with the library writer and reads it back. */
static void write_tensors(const char *path, const char *prefix, float base) {
  float a[6];
  uint16_t b[4];
  for (int i = 0; i < 6; i++) a[i] = base + (float)i;
  for (int i = 0; i < 4; i++) b[i] = vlm_f32_to_bf16(base * 2 + (float)i);
  int64_t shape_a[2] = {2, 3}, shape_b[1] = {4};
  char name_a[64], name_b[64];
  snprintf(name_a, sizeof(name_a), "%s.a", prefix);
  snprintf(name_b, sizeof(name_b), "%s.b", prefix);
  vlm_safetensors_write_entry entries[] = {{name_a, VLM_DTYPE_F32, 2, shape_a, a},
                                           {name_b, VLM_DTYPE_BF16, 1, shape_b, b}};
  CHECK_OK(vlm_safetensors_write(path, entries, 2, "pt"));
}

static char *make_model_dir(const char *name) {
  char *dir = malloc(512);
  snprintf(dir, 512, "%s/%s", test_temp_dir(), name);
  mkdir(dir, 0755);
  return dir;
}

static void reads_back_a_single_file_checkpoint(void) {
  char *dir = make_model_dir("single");
  char path[600];
  snprintf(path, sizeof(path), "%s/model.safetensors", dir);
  write_tensors(path, "layer", 1.0f);
  vlm_checkpoint *checkpoint = NULL;
  CHECK_OK(vlm_checkpoint_open(dir, NULL, &checkpoint));
  if (checkpoint) {
    CHECK_INT_EQ(vlm_checkpoint_tensor_count(checkpoint), 2);
    vlm_tensor view;
    int64_t shape[2] = {2, -1};
    CHECK_OK(vlm_checkpoint_get(checkpoint, "layer.a", VLM_DTYPE_F32, 2, shape, &view));
    CHECK_NEAR(((const float *)view.data)[5], 6.0, 0);
    CHECK_OK(vlm_checkpoint_get(checkpoint, "layer.b", VLM_DTYPE_INVALID, -1, NULL, &view));
    CHECK_NEAR(vlm_bf16_to_f32(((const uint16_t *)view.data)[3]), 5.0, 0);
    CHECK_ERROR(vlm_checkpoint_get(checkpoint, "layer.c", VLM_DTYPE_F32, -1, NULL, &view),
                VLM_STATUS_NOT_FOUND, "tensor 'layer.c' not found");
    CHECK_ERROR(vlm_checkpoint_get(checkpoint, "layer.b", VLM_DTYPE_F32, -1, NULL, &view),
                VLM_STATUS_INVALID_ARGUMENT, "tensor 'layer.b' has dtype bf16, expected f32");
    int64_t wrong[2] = {3, 2};
    CHECK_ERROR(vlm_checkpoint_get(checkpoint, "layer.a", VLM_DTYPE_F32, 2, wrong, &view),
                VLM_STATUS_INVALID_ARGUMENT, "has shape [2, 3], expected [3, 2]");
    vlm_checkpoint_release(checkpoint);
  }
  free(dir);
}

static void write_index(const char *dir, const char *weight_map) {
  char text[2048];
  snprintf(text, sizeof(text), "{\"metadata\":{\"total_size\":40},\"weight_map\":{%s}}", weight_map);
  free(test_write_file(dir, "model.safetensors.index.json", text, strlen(text)));
}

static char *make_sharded_dir(const char *name) {
  char *dir = make_model_dir(name);
  char path[600];
  snprintf(path, sizeof(path), "%s/model-00001-of-00002.safetensors", dir);
  write_tensors(path, "first", 1.0f);
  snprintf(path, sizeof(path), "%s/model-00002-of-00002.safetensors", dir);
  write_tensors(path, "second", 10.0f);
  return dir;
}

static void reads_back_a_sharded_checkpoint(void) {
  char *dir = make_sharded_dir("sharded");
  write_index(dir, "\"first.a\":\"model-00001-of-00002.safetensors\","
                   "\"first.b\":\"model-00001-of-00002.safetensors\","
                   "\"second.a\":\"model-00002-of-00002.safetensors\","
                   "\"second.b\":\"model-00002-of-00002.safetensors\"");
  vlm_checkpoint *checkpoint = NULL;
  CHECK_OK(vlm_checkpoint_open(dir, NULL, &checkpoint));
  if (checkpoint) {
    CHECK_INT_EQ(vlm_checkpoint_shard_count(checkpoint), 2);
    CHECK_INT_EQ(vlm_checkpoint_tensor_count(checkpoint), 4);
    CHECK_INT_EQ(vlm_checkpoint_total_bytes(checkpoint), 2 * (24 + 8));
    const vlm_tensor_info *info = vlm_checkpoint_find(checkpoint, "second.a");
    CHECK(info && info->shard == 1 && ((const float *)info->data)[0] == 10.0f);
    vlm_checkpoint_release(checkpoint);
  }
  free(dir);
}

static void rejects_an_inconsistent_index(void) {
  static const struct {
    const char *weight_map;
    vlm_status_code code;
    const char *fragment;
  } cases[] = {
      {"\"first.a\":\"model-00001-of-00002.safetensors\","
       "\"first.b\":\"model-00001-of-00002.safetensors\"", VLM_STATUS_DATA_LOSS, ""},
      {"\"first.a\":\"model-00001-of-00002.safetensors\","
       "\"first.b\":\"model-00001-of-00002.safetensors\","
       "\"first.c\":\"model-00001-of-00002.safetensors\"", VLM_STATUS_DATA_LOSS,
       "tensor 'first.c' is listed in model-00001-of-00002.safetensors but missing there"},
      {"\"first.a\":\"model-00002-of-00002.safetensors\","
       "\"first.b\":\"model-00001-of-00002.safetensors\","
       "\"second.a\":\"model-00002-of-00002.safetensors\","
       "\"second.b\":\"model-00002-of-00002.safetensors\"", VLM_STATUS_DATA_LOSS,
       "tensor 'first.a' is listed in model-00002-of-00002.safetensors but stored in "
       "model-00001-of-00002.safetensors"},
      {"\"first.a\":\"../model-00001-of-00002.safetensors\"", VLM_STATUS_DATA_LOSS,
       "invalid shard file name"},
      {"\"first.a\":\"missing.safetensors\"", VLM_STATUS_NOT_FOUND, "missing.safetensors: cannot open"},
      {"\"first.a\":7", VLM_STATUS_DATA_LOSS, "invalid shard file name"},
  };
  char *dir = make_sharded_dir("bad-index");
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    write_index(dir, cases[i].weight_map);
    vlm_checkpoint *checkpoint = NULL;
    if (i == 0) {
      /* Only shard 1 listed: shard 2 is never opened, so the checkpoint is
       * exactly what the index names. */
      CHECK_OK(vlm_checkpoint_open(dir, NULL, &checkpoint));
      if (checkpoint) CHECK_INT_EQ(vlm_checkpoint_tensor_count(checkpoint), 2);
      vlm_checkpoint_release(checkpoint);
      continue;
    }
    CHECK_ERROR(vlm_checkpoint_open(dir, NULL, &checkpoint), cases[i].code, cases[i].fragment);
    CHECK(checkpoint == NULL);
  }
  free(test_write_file(dir, "model.safetensors.index.json", "{\"weight_map\":[]}", 17));
  vlm_checkpoint *checkpoint = NULL;
  CHECK_ERROR(vlm_checkpoint_open(dir, NULL, &checkpoint), VLM_STATUS_DATA_LOSS,
              "\"weight_map\" must be an object");
  free(dir);
}

/* The index makes a cross-shard duplicate impossible, but a rename can fold
 * two stored names into one canonical name; that must be refused. */
static void detects_names_claimed_twice(void) {
  char *dir = make_sharded_dir("twice");
  write_index(dir, "\"first.a\":\"model-00001-of-00002.safetensors\","
                   "\"first.b\":\"model-00001-of-00002.safetensors\","
                   "\"second.a\":\"model-00002-of-00002.safetensors\","
                   "\"second.b\":\"model-00002-of-00002.safetensors\"");
  vlm_name_rename renames[] = {{"second.", "first."}};
  vlm_checkpoint_options options = {.renames = renames, .rename_count = 1};
  vlm_checkpoint *checkpoint = NULL;
  CHECK_ERROR(vlm_checkpoint_open(dir, &options, &checkpoint), VLM_STATUS_DATA_LOSS,
              "tensor 'first.a' appears twice");
  free(dir);
}

static void applies_renames(void) {
  char *dir = make_model_dir("renamed");
  char path[600];
  snprintf(path, sizeof(path), "%s/model.safetensors", dir);
  write_tensors(path, "language_model.model", 1.0f);
  vlm_name_rename renames[] = {{"language_model.model.", "model.language_model."}};
  vlm_checkpoint_options options = {.renames = renames, .rename_count = 1};
  vlm_checkpoint *checkpoint = NULL;
  CHECK_OK(vlm_checkpoint_open(dir, &options, &checkpoint));
  if (checkpoint) {
    const vlm_tensor_info *info = vlm_checkpoint_find(checkpoint, "model.language_model.a");
    CHECK(info != NULL);
    if (info) CHECK_STR_EQ(info->stored_name, "language_model.model.a");
    CHECK(vlm_checkpoint_find(checkpoint, "language_model.model.a") == NULL);
    vlm_checkpoint_release(checkpoint);
  }
  free(dir);
}

static void reports_a_directory_without_weights(void) {
  char *dir = make_model_dir("empty");
  vlm_checkpoint *checkpoint = NULL;
  CHECK_ERROR(vlm_checkpoint_open(dir, NULL, &checkpoint), VLM_STATUS_NOT_FOUND,
              "no model.safetensors or model.safetensors.index.json");
  free(dir);
}

static void truncated_file_is_refused_by_name(void) {
  char *dir = make_model_dir("truncated");
  char path[600];
  snprintf(path, sizeof(path), "%s/model.safetensors", dir);
  write_tensors(path, "t", 1.0f);
  struct stat info;
  stat(path, &info);
  CHECK(truncate(path, info.st_size - 3) == 0);
  vlm_checkpoint *checkpoint = NULL;
  CHECK_ERROR(vlm_checkpoint_open(dir, NULL, &checkpoint), VLM_STATUS_DATA_LOSS,
              "model.safetensors: tensor 't.b': data_offsets [24, 32] run past the end");
  free(dir);
}

static long resident_kilobytes(void) {
  FILE *status = fopen("/proc/self/status", "r");
  char line[256];
  long kilobytes = -1;
  while (status && fgets(line, sizeof(line), status))
    if (sscanf(line, "VmRSS: %ld kB", &kilobytes) == 1) break;
  if (status) fclose(status);
  return kilobytes;
}

/* A 1 GiB tensor in a sparse file: opening maps it without reading it, so
 * resident memory stays flat until tensor bytes are touched. The header is
 * padded with spaces to a multiple of 8 bytes as the reference writer pads
 * it (a file whose tensors are not aligned to their element size has them
 * copied to aligned memory instead: test_model_files.c). */
static void maps_large_files_without_copying(void) {
  char *dir = make_model_dir("large");
  const uint64_t bytes = 1ull << 30;
  char header[256];
  int length = snprintf(header, sizeof(header),
                        "{\"big\":{\"dtype\":\"F32\",\"shape\":[%llu],\"data_offsets\":[0,%llu]}}",
                        (unsigned long long)(bytes / 4), (unsigned long long)bytes);
  while (length % 8) header[length++] = ' ';
  header[length] = 0;
  size_t image_length;
  uint8_t *image = make_image(header, 0, &image_length);
  char *path = test_write_file(dir, "model.safetensors", image, image_length);
  CHECK(truncate(path, (off_t)(image_length + bytes)) == 0);
  long before = resident_kilobytes();
  vlm_checkpoint *checkpoint = NULL;
  CHECK_OK(vlm_checkpoint_open(dir, NULL, &checkpoint));
  long after_open = resident_kilobytes();
  CHECK(after_open - before < 16 * 1024);
  if (checkpoint) {
    const vlm_tensor_info *info = vlm_checkpoint_find(checkpoint, "big");
    CHECK(info && info->byte_size == bytes);
    volatile uint8_t sum = 0;
    for (uint64_t offset = 0; info && offset < 64ull << 20; offset += 4096) sum += info->data[offset];
    (void)sum;
    long after_touch = resident_kilobytes();
    CHECK(after_touch - after_open >= 60 * 1024); /* the pages we read */
    printf("  1 GiB checkpoint: RSS +%ld kB after open, +%ld kB after reading 64 MiB\n",
           after_open - before, after_touch - before);
    /* Evicting the bytes read gives the pages back (a backend that keeps a
     * repacked copy calls this); reading them again still works (a sparse
     * file reads as zeros). A range outside the maps is ignored. */
    vlm_checkpoint_evict(checkpoint, info->data, 64ull << 20);
    long after_evict = resident_kilobytes();
    CHECK(after_touch - after_evict >= 60 * 1024);
    CHECK(info->data[12345] == 0 && info->data[(64ull << 20) - 1] == 0);
    uint8_t outside[64] = {1};
    vlm_checkpoint_evict(checkpoint, outside, sizeof(outside));
    CHECK(outside[0] == 1);
    printf("  evicting the 64 MiB read: RSS -%ld kB\n", after_touch - after_evict);
    vlm_checkpoint_release(checkpoint);
  }
  free(image);
  free(path);
  free(dir);
}

TEST_MAIN(TEST(accepts_a_valid_header), TEST(rejects_each_malformed_header),
          TEST(rejects_bad_lengths), TEST(reads_back_a_single_file_checkpoint),
          TEST(reads_back_a_sharded_checkpoint), TEST(rejects_an_inconsistent_index),
          TEST(detects_names_claimed_twice), TEST(applies_renames),
          TEST(reports_a_directory_without_weights), TEST(truncated_file_is_refused_by_name),
          TEST(maps_large_files_without_copying))
