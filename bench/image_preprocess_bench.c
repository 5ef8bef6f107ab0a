/* Decode + CLIP preprocess time per image file, vlm side of
 * bench/image_preprocess_bench.sh. Prints "name milliseconds" per image: the
 * median of `repeats` runs of vlm_image_decode_file + vlm_clip_preprocess. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/config.h"
#include "media/image_processor_clip.h"
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

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s MODEL_DIR REPEATS torchvision|pil IMAGE...\n", argv[0]);
    return 2;
  }
  vlm_processor_config config;
  vlm_status status = vlm_processor_config_load(argv[1], NULL, &config);
  if (status) {
    fprintf(stderr, "%s\n", vlm_status_message(status));
    return 1;
  }
  int repeats = atoi(argv[2]);
  vlm_clip_variant variant = strcmp(argv[3], "pil") == 0 ? VLM_CLIP_PIL : VLM_CLIP_TORCHVISION;
  double *times = calloc((size_t)repeats, sizeof(double));
  for (int i = 4; i < argc; i++) {
    for (int r = 0; r < repeats; r++) {
      double start = now_ms();
      vlm_image image;
      vlm_tensor pixels;
      status = vlm_image_decode_file(argv[i], NULL, &image);
      if (!status) status = vlm_clip_preprocess(&config, &image, variant, NULL, &pixels);
      if (status) {
        fprintf(stderr, "%s\n", vlm_status_message(status));
        return 1;
      }
      times[r] = now_ms() - start;
      vlm_tensor_release(&pixels);
      vlm_image_release(&image);
    }
    qsort(times, (size_t)repeats, sizeof(double), compare_doubles);
    const char *slash = strrchr(argv[i], '/');
    printf("%s %.3f\n", slash ? slash + 1 : argv[i], times[repeats / 2]);
  }
  free(times);
  vlm_processor_config_release(&config);
  return 0;
}
