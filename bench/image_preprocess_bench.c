/* Decode + preprocess time per image file, vlm side of
 * bench/image_preprocess_bench.sh. Prints "name total_ms preprocess_ms" per
 * image: the medians over `repeats` runs of vlm_image_decode_file followed
 * by the processor (CLIP: vlm_clip_preprocess; Qwen2-VL:
 * vlm_qwen2_vl_preprocess), and of the processor alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/config.h"
#include "media/image_processor_clip.h"
#include "media/image_processor_qwen2_vl.h"
#include "vlm/media.h"

static double now_ms(void) {
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return time.tv_sec * 1e3 + time.tv_nsec / 1e6;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *values, int count) {
  qsort(values, (size_t)count, sizeof(double), compare_doubles);
  return values[count / 2];
}

int main(int argc, char **argv) {
  if (argc < 6 || (strcmp(argv[3], "clip") != 0 && strcmp(argv[3], "qwen2_vl") != 0)) {
    fprintf(stderr, "usage: %s MODEL_DIR REPEATS clip|qwen2_vl torchvision|pil IMAGE...\n", argv[0]);
    return 2;
  }
  vlm_processor_config config;
  vlm_status status = vlm_processor_config_load(argv[1], NULL, &config);
  if (status) {
    fprintf(stderr, "%s\n", vlm_status_message(status));
    return 1;
  }
  int repeats = atoi(argv[2]);
  bool qwen2_vl = strcmp(argv[3], "qwen2_vl") == 0, pil = strcmp(argv[4], "pil") == 0;
  double *totals = calloc((size_t)repeats, sizeof(double));
  double *processing = calloc((size_t)repeats, sizeof(double));
  for (int i = 5; i < argc; i++) {
    for (int r = 0; r < repeats; r++) {
      double start = now_ms();
      vlm_image image;
      vlm_tensor pixels;
      int64_t grid[3];
      status = vlm_image_decode_file(argv[i], NULL, &image);
      double decoded = now_ms();
      if (!status && qwen2_vl)
        status = vlm_qwen2_vl_preprocess(&config, &image, pil ? VLM_QWEN2_VL_PIL : VLM_QWEN2_VL_TORCHVISION,
                                         NULL, &pixels, grid);
      else if (!status)
        status = vlm_clip_preprocess(&config, &image, pil ? VLM_CLIP_PIL : VLM_CLIP_TORCHVISION, NULL, &pixels);
      if (status) {
        fprintf(stderr, "%s: %s\n", argv[i], vlm_status_message(status));
        return 1;
      }
      double end = now_ms();
      totals[r] = end - start, processing[r] = end - decoded;
      vlm_tensor_release(&pixels);
      vlm_image_release(&image);
    }
    const char *slash = strrchr(argv[i], '/');
    printf("%s %.3f %.3f\n", slash ? slash + 1 : argv[i], median(totals, repeats),
           median(processing, repeats));
  }
  free(totals);
  free(processing);
  vlm_processor_config_release(&config);
  return 0;
}
