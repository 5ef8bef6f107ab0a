/* Decompression bombs: tiny files whose headers claim huge images, one per
 * container and header field (fuzz/corpus/image_decode/bomb_*, written by
 * fuzz/make_image_bombs.py). Each must be refused from its header
 * (OUT_OF_RANGE, naming the limit) before vlm or the codec library
 * allocates anything sized by it.
 *
 * Each decode runs in a child process, which measures its own peak RSS
 * (getrusage) before and after: the growth must stay under 16 MiB. The
 * 66-byte PNG claiming 2147483647 x 2147483647 used to cost 6 GB in
 * libpng's row buffers before the pixel limit was checked, and the
 * 67108864 x 1 16-bit RGBA one 512 MB. Time is printed, not asserted. */
#include <dirent.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io/file.h"
#include "test.h"
#include "vlm/media.h"

#define SEED_CORPUS VLM_SOURCE_DIR "/fuzz/corpus/image_decode"
#define MAX_RSS_GROWTH_KB (16 * 1024)

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

typedef struct counting_allocator {
  vlm_allocator base;
  size_t allocations;
} counting_allocator;

static void *counting_allocate(void *context, size_t size, size_t alignment) {
  ((counting_allocator *)context)->allocations++;
  return vlm_allocator_system()->allocate(NULL, size, alignment);
}

static void counting_release(void *context, void *pointer) {
  (void)context;
  vlm_allocator_system()->release(NULL, pointer);
}

/* What the child reports. */
typedef struct bomb_result {
  int code;
  char message[400];
  long rss_growth_kb;
  size_t allocations;
  double seconds;
} bomb_result;

static void decode_in_child(const char *path, int fd) {
#ifndef UNDER_ASAN
  /* Keeps a regression (a library allocating from the header again) from
   * taking the machine's memory: it then fails with an out-of-memory
   * error instead of OUT_OF_RANGE, which the parent reports. (ASan
   * reserves far more address space than this, so not under ASan.) */
  struct rlimit limit = {(rlim_t)4 << 30, (rlim_t)4 << 30};
  setrlimit(RLIMIT_AS, &limit);
#endif
  bomb_result result;
  memset(&result, 0, sizeof(result));
  counting_allocator counter = {.base = {&counter, counting_allocate, counting_release}};
  vlm_image_decode_options options = {.allocator = &counter.base};
  struct rusage before, after;
  struct timespec start, end;
  getrusage(RUSAGE_SELF, &before);
  clock_gettime(CLOCK_MONOTONIC, &start);
  vlm_image image;
  vlm_status status = vlm_image_decode_file(path, &options, &image);
  clock_gettime(CLOCK_MONOTONIC, &end);
  getrusage(RUSAGE_SELF, &after);
  result.code = (int)vlm_status_code_of(status);
  snprintf(result.message, sizeof(result.message), "%s", status ? vlm_status_message(status) : "decoded");
  result.rss_growth_kb = after.ru_maxrss - before.ru_maxrss;
  result.allocations = counter.allocations;
  result.seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9;
  if (!status) vlm_image_release(&image);
  vlm_status_free(status);
  ssize_t written = write(fd, &result, sizeof(result));
  _exit(written == (ssize_t)sizeof(result) ? 0 : 1);
}

static bool run_bomb(const char *name, bomb_result *out) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", SEED_CORPUS, name);
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return false;
  fflush(stdout);
  fflush(stderr);
  pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    decode_in_child(path, pipe_fds[1]);
  }
  close(pipe_fds[1]);
  ssize_t got = read(pipe_fds[0], out, sizeof(*out));
  close(pipe_fds[0]);
  int wait_status = 0;
  waitpid(child, &wait_status, 0);
  if (got != (ssize_t)sizeof(*out) || !WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
    fprintf(stderr, "  %s: the decoding child died (status %d)\n", name, wait_status);
    return false;
  }
  return true;
}

static void every_container_refuses_its_bombs_from_the_header(void) {
  static const struct {
    const char *file, *fragment;
  } bombs[] = {
      {"bomb_png_ihdr_2147483647.png",
       "2147483647x2147483647 = 4611686014132420609 pixels exceeds the limit of 67108864 pixels (PNG header)"},
      {"bomb_png_rows_67108864x1.png", "a 67108864x1 image needs"},
      {"bomb_jpeg_sof_65500.jpg", "65500x65500 = 4290250000 pixels exceeds the limit of 67108864 pixels (JPEG header)"},
      {"bomb_jpeg_progressive_sof_65500.jpg", "pixels exceeds the limit of 67108864 pixels (JPEG header)"},
      {"bomb_webp_vp8_16383.webp", "16383x16383 = 268402689 pixels exceeds the limit of 67108864 pixels (WebP header)"},
      {"bomb_webp_vp8l_16384.webp", "16384x16384 = 268435456 pixels exceeds the limit"},
      {"bomb_webp_vp8x_16383.webp", "16383x16383 = 268402689 pixels exceeds the limit"},
      {"bomb_webp_vp8x_animated_60000.webp", "60000x60000 = 3600000000 pixels exceeds the limit of 67108864 "
                                             "pixels (animated WebP header)"},
      {"bomb_gif_screen_65535.gif", "65535x65535 = 4294836225 pixels exceeds the limit of 67108864 pixels (GIF header)"},
      {"bomb_gif_frame_65535.gif", "131070x131070 = 17179344900 pixels exceeds the limit"},
  };
  for (size_t i = 0; i < sizeof(bombs) / sizeof(bombs[0]); i++) {
    bomb_result result;
    if (!run_bomb(bombs[i].file, &result)) {
      test_failures++;
      continue;
    }
    printf("  %-36s refused in %.6f s, peak RSS +%ld KiB: %s\n", bombs[i].file, result.seconds,
           result.rss_growth_kb, result.message);
    if (result.code != VLM_STATUS_OUT_OF_RANGE || !strstr(result.message, bombs[i].fragment)) {
      fprintf(stderr, "  %s: got [%s] \"%s\", expected [out_of_range] with \"%s\"\n", bombs[i].file,
              vlm_status_code_name((vlm_status_code)result.code), result.message, bombs[i].fragment);
      test_failures++;
    }
    CHECK_INT_EQ(result.allocations, 0);
    if (result.rss_growth_kb > MAX_RSS_GROWTH_KB) {
      fprintf(stderr, "  %s: peak RSS grew by %ld KiB (bound %d KiB)\n", bombs[i].file, result.rss_growth_kb,
              MAX_RSS_GROWTH_KB);
      test_failures++;
    }
  }
}

/* The byte limit is the caller's to set, and checked from the header too:
 * an image inside the pixel limit is refused when its raster and the
 * library's rows would not fit. */
static void the_byte_limit_applies_from_the_header(void) {
  static const uint8_t one_pixel_png[] = {
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00,
      0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xde, 0x00, 0x00, 0x00,
      0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0xc9,
      0xfe, 0x92, 0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
  vlm_image image;
  CHECK_OK(vlm_image_decode_memory(one_pixel_png, sizeof(one_pixel_png), "dot.png", NULL, &image));
  CHECK(image.width == 1 && image.height == 1);
  vlm_image_release(&image);
  vlm_image_decode_options options = {.limits.max_decoded_bytes = 100};
  CHECK_ERROR(vlm_image_decode_memory(one_pixel_png, sizeof(one_pixel_png), "dot.png", &options, &image),
              VLM_STATUS_OUT_OF_RANGE, "dot.png: a 1x1 image needs 150 bytes to decode, over the limit of 100 "
                                       "bytes (PNG header)");
  CHECK(image.pixels == NULL);
}

/* Every scan of a progressive JPEG is absorbed inside jpeg_start_decompress
 * and walks every block: scans are bounded (100), the cancel flag polled
 * between them. */
static void jpeg_scans_are_bounded(void) {
  char path[512];
  snprintf(path, sizeof(path), "%s/bomb_jpeg_many_scans.jpg", SEED_CORPUS);
  vlm_image image;
  CHECK_ERROR(vlm_image_decode_file(path, NULL, &image), VLM_STATUS_OUT_OF_RANGE,
              "bomb_jpeg_many_scans.jpg: JPEG has more than 100 scans");
  snprintf(path, sizeof(path), "%s/progressive.jpg", SEED_CORPUS);
  CHECK_OK(vlm_image_decode_file(path, NULL, &image));
  vlm_image_release(&image);
}

/* ---- a metadata bomb: a 1x1 PNG with hundreds of text chunks that each
 * inflate to 8 MB (built here: a fixed-Huffman deflate stream of zeros) --- */

typedef struct bit_writer {
  uint8_t *data;
  size_t length, capacity;
  uint32_t buffer;
  int bits;
} bit_writer;

static void put_byte(bit_writer *w, uint8_t byte) {
  if (w->length == w->capacity) {
    w->capacity = w->capacity ? w->capacity * 2 : 4096;
    w->data = realloc(w->data, w->capacity);
  }
  w->data[w->length++] = byte;
}

static void put_bits(bit_writer *w, uint32_t value, int count) { /* LSB first, as deflate packs */
  for (int i = 0; i < count; i++) {
    w->buffer |= ((value >> i) & 1u) << w->bits;
    if (++w->bits == 8) put_byte(w, (uint8_t)w->buffer), w->buffer = 0, w->bits = 0;
  }
}

static void put_code(bit_writer *w, uint32_t code, int count) { /* Huffman codes: MSB first */
  for (int i = count - 1; i >= 0; i--) put_bits(w, (code >> i) & 1u, 1);
}

/* zlib stream of 1 + 258 x matches zero bytes. */
static void zeros_zlib(bit_writer *w, uint32_t matches) {
  put_byte(w, 0x78), put_byte(w, 0x01);
  put_bits(w, 1, 1), put_bits(w, 1, 2); /* final block, fixed Huffman */
  put_code(w, 0x30, 8);                 /* literal 0 */
  for (uint32_t i = 0; i < matches; i++) put_code(w, 0xC5, 8), put_code(w, 0, 5); /* length 258, distance 1 */
  put_code(w, 0, 7);                    /* end of block */
  if (w->bits) put_byte(w, (uint8_t)w->buffer), w->buffer = 0, w->bits = 0;
  uint32_t size = 1 + 258 * matches, adler = ((size % 65521u) << 16) | 1u;
  for (int i = 3; i >= 0; i--) put_byte(w, (uint8_t)(adler >> (8 * i)));
}

static uint32_t crc32_update(uint32_t crc, const uint8_t *data, size_t length) {
  crc = ~crc;
  for (size_t i = 0; i < length; i++) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; bit++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
  }
  return ~crc;
}

static void put_chunk(bit_writer *out, const char *type, const uint8_t *data, size_t length) {
  for (int i = 3; i >= 0; i--) put_byte(out, (uint8_t)(length >> (8 * i)));
  size_t start = out->length;
  for (int i = 0; i < 4; i++) put_byte(out, (uint8_t)type[i]);
  for (size_t i = 0; i < length; i++) put_byte(out, data[i]);
  uint32_t crc = crc32_update(0, out->data + start, out->length - start);
  for (int i = 3; i >= 0; i--) put_byte(out, (uint8_t)(crc >> (8 * i)));
}

static uint8_t *text_chunk_bomb(size_t *out_size) {
  bit_writer png = {0}, stream = {0}, text = {0};
  static const uint8_t signature[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  for (size_t i = 0; i < sizeof(signature); i++) put_byte(&png, signature[i]);
  static const uint8_t ihdr[] = {0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0};
  put_chunk(&png, "IHDR", ihdr, sizeof(ihdr));
  zeros_zlib(&stream, (8u << 20) / 258); /* 8 MB */
  for (int kind = 0; kind < 2; kind++) {
    text.length = 0; /* zTXt: keyword, 0, method 0; iTXt: keyword, 0, compressed, method, "", "" */
    static const uint8_t ztxt[] = {'k', 0, 0}, itxt[] = {'k', 0, 1, 0, 0, 0};
    const uint8_t *head = kind ? itxt : ztxt;
    for (size_t i = 0; i < (kind ? sizeof(itxt) : sizeof(ztxt)); i++) put_byte(&text, head[i]);
    for (size_t i = 0; i < stream.length; i++) put_byte(&text, stream.data[i]);
    for (int copy = 0; copy < 150; copy++) put_chunk(&png, kind ? "iTXt" : "zTXt", text.data, text.length);
  }
  static const uint8_t idat[] = {0x78, 0x01, 0x63, 0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00};
  put_chunk(&png, "IDAT", idat, sizeof(idat));
  put_chunk(&png, "IEND", NULL, 0);
  free(stream.data);
  free(text.data);
  *out_size = png.length;
  return png.data;
}

/* Inflating every text chunk was work before the first pixel: this 16 MB
 * file of a 1x1 image took seconds of CPU per decode (a 20 MB one 27 s).
 * The child gets 3 CPU seconds; it now needs a small fraction of one. */
static void text_chunks_cost_no_work(void) {
  size_t size = 0;
  uint8_t *png = text_chunk_bomb(&size);
  CHECK(size < VLM_MEDIA_DEFAULT_MAX_ENCODED_BYTES);
  fflush(stdout);
  fflush(stderr);
  pid_t child = fork();
  if (child == 0) {
    struct rlimit limit = {3, 10};
    setrlimit(RLIMIT_CPU, &limit);
    vlm_image image;
    vlm_status status = vlm_image_decode_memory(png, size, "text.png", NULL, &image);
    bool ok = !status && image.width == 1 && image.height == 1;
    if (!ok) fprintf(stderr, "  text.png: %s\n", status ? vlm_status_message(status) : "wrong size");
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("  %zu-byte PNG with 300 text chunks inflating to 8 MB each decoded in %.3f CPU s\n", size,
           (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec * 1e-6);
    fflush(stdout);
    _exit(ok ? 0 : 1);
  }
  int wait_status = 0;
  waitpid(child, &wait_status, 0);
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
    fprintf(stderr, "  text.png: %s\n", WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGXCPU
                                             ? "decoding took more than 3 CPU seconds"
                                             : "decoding failed");
    test_failures++;
  }
  free(png);
}

/* libpng mallocs an ancillary chunk's declared length before reading it
 * (its length check is only a warning on read): a 64 KB file whose iTXt
 * claimed 1.29 GB cost a 1.29 GB allocation (fuzz_image_decode). A chunk
 * before the pixels that claims more than the file holds is refused first,
 * for the decoder and the header reader alike. */
static void chunk_lengths_past_the_file_are_refused_first(void) {
  bit_writer png = {0};
  static const uint8_t signature[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  for (size_t i = 0; i < sizeof(signature); i++) put_byte(&png, signature[i]);
  static const uint8_t ihdr[] = {0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0};
  put_chunk(&png, "IHDR", ihdr, sizeof(ihdr));
  static const uint8_t claim[] = {0x4d, 0x00, 0x00, 0x0d, 'i', 'T', 'X', 't', 'k', 0, 1, 0, 0, 0, 'x', 'y'};
  for (size_t i = 0; i < sizeof(claim); i++) put_byte(&png, claim[i]);
  vlm_image image;
  CHECK_ERROR(vlm_image_decode_memory(png.data, png.length, "claim.png", NULL, &image), VLM_STATUS_DATA_LOSS,
              "chunk iTXt claims 1291845645 bytes, past the end of the file");
  vlm_image_header header;
  CHECK_ERROR(vlm_image_read_header(png.data, png.length, "claim.png", NULL, &header), VLM_STATUS_DATA_LOSS,
              "past the end of the file");
  free(png.data);
}

/* vlm_image_read_header gives what decoding will find (dimensions as
 * stored), refuses what decoding refuses from the header, and allocates
 * nothing through the caller's allocator; on every seed of the corpus. */
static void headers_read_without_decoding(void) {
  DIR *directory = opendir(SEED_CORPUS);
  CHECK(directory != NULL);
  size_t compared = 0;
  for (struct dirent *item; directory && (item = readdir(directory));) {
    if (item->d_name[0] == '.') continue;
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", SEED_CORPUS, item->d_name);
    char *data = NULL;
    size_t size = 0;
    CHECK_OK(vlm_file_read_all(path, 64 << 20, &data, &size));
    counting_allocator counter = {.base = {&counter, counting_allocate, counting_release}};
    vlm_image_decode_options options = {.allocator = &counter.base, .ignore_exif_orientation = true};
    vlm_image_header header;
    vlm_status header_status = vlm_image_read_header((const uint8_t *)data, size, item->d_name, &options, &header);
    CHECK_INT_EQ(counter.allocations, 0);
    vlm_image image;
    vlm_status decode_status = vlm_image_decode_memory((const uint8_t *)data, size, item->d_name, &options, &image);
    if (!decode_status) {
      CHECK_OK(header_status);
      header_status = NULL;
      CHECK_INT_EQ(header.width, image.width);
      CHECK_INT_EQ(header.height, image.height);
      CHECK_INT_EQ(header.format, image.format);
      CHECK(header.decode_bytes >= (uint64_t)(image.width * image.height * 3));
      vlm_image_release(&image);
      compared++;
    } else if (header_status) {
      CHECK_INT_EQ(vlm_status_code_of(header_status), vlm_status_code_of(decode_status));
    }
    if (header_status && vlm_status_code_of(header_status) == VLM_STATUS_OUT_OF_RANGE)
      CHECK(decode_status && vlm_status_code_of(decode_status) == VLM_STATUS_OUT_OF_RANGE);
    vlm_status_free(header_status);
    vlm_status_free(decode_status);
    free(data);
  }
  if (directory) closedir(directory);
  CHECK(compared >= 10);
}

TEST_MAIN(TEST(every_container_refuses_its_bombs_from_the_header), TEST(the_byte_limit_applies_from_the_header),
          TEST(headers_read_without_decoding), TEST(text_chunks_cost_no_work),
          TEST(chunk_lengths_past_the_file_are_refused_first),
          TEST(jpeg_scans_are_bounded))
