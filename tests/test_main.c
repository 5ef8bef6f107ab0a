#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

int test_failures = 0;
const char *test_current = "";
int test_failures_before_current = 0;
static char temp_dir[256];

static int remove_entry(const char *path, const struct stat *info, int flag,
                        struct FTW *walk) {
  (void)info; (void)flag; (void)walk;
  return remove(path);
}

static void remove_temp_dir(void) {
  if (temp_dir[0] && !getenv("VLM_TEST_KEEP_TEMP"))
    nftw(temp_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *test_temp_dir(void) {
  if (!temp_dir[0]) {
    const char *base = getenv("TMPDIR");
    snprintf(temp_dir, sizeof(temp_dir), "%s/vlm-test-XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(temp_dir)) {
      perror("mkdtemp");
      exit(2);
    }
    atexit(remove_temp_dir);
  }
  return temp_dir;
}

char *test_write_file(const char *dir, const char *name, const void *data,
                      size_t length) {
  size_t path_length = strlen(dir) + strlen(name) + 2;
  char *path = malloc(path_length);
  snprintf(path, path_length, "%s/%s", dir, name);
  FILE *file = fopen(path, "wb");
  if (!file || fwrite(data, 1, length, file) != length) {
    perror(path);
    exit(2);
  }
  fclose(file);
  return path;
}

const char *test_fixtures_dir(void) {
  static char path[1024];
  const char *env = getenv("VLM_FIXTURES_DIR");
  snprintf(path, sizeof(path), "%s", env ? env : VLM_SOURCE_DIR "/../shared/fixtures");
  struct stat info;
  return stat(path, &info) == 0 && S_ISDIR(info.st_mode) ? path : NULL;
}

int test_run(const test_case *tests, size_t count, int argc, char **argv) {
  int passed = 0, failed = 0;
  for (size_t i = 0; i < count; i++) {
    if (argc > 1) {
      bool selected = false;
      for (int a = 1; a < argc; a++)
        if (strcmp(argv[a], tests[i].name) == 0) selected = true;
      if (!selected) continue;
    }
    int before = test_failures;
    test_failures_before_current = before;
    test_current = tests[i].name;
    tests[i].function();
    if (test_failures == before) {
      passed++;
      printf("ok   %s\n", tests[i].name);
    } else {
      failed++;
      printf("FAIL %s\n", tests[i].name);
    }
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
