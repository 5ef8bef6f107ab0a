#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

int test_failures = 0;
const char *test_current = "";
int test_failures_before_current = 0;
static int test_skips = 0; /* test_skip calls so far */
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

/* A reason tag is lower-case words joined by '-': what check-skips matches. */
static bool valid_reason(const char *reason) {
  if (!reason || !*reason || *reason == '-') return false;
  for (const char *c = reason; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-')) return false;
  return true;
}

void test_skip(const char *reason, const char *format, ...) {
  if (!valid_reason(reason)) {
    fprintf(stderr, "  %s: test_skip with an invalid reason tag \"%s\"\n", test_current,
            reason ? reason : "(null)");
    test_failures++;
    return;
  }
  char line[2048];
  int prefix = snprintf(line, sizeof(line), "SKIP(%s) %s: ", reason, test_current);
  if (prefix < 0 || (size_t)prefix >= sizeof(line)) prefix = 0;
  va_list arguments;
  va_start(arguments, format);
  vsnprintf(line + prefix, sizeof(line) - (size_t)prefix, format, arguments);
  va_end(arguments);
  /* The same skip again (a loop over cases or paths): counted, printed once. */
  static char last_line[sizeof(line)];
  if (strcmp(line, last_line) != 0) printf("%s\n", line);
  memcpy(last_line, line, sizeof(line));
  test_skips++;
}

const char *test_require_fixtures(void) {
  const char *fixtures = test_fixtures_dir();
  if (!fixtures) {
    const char *env = getenv("VLM_FIXTURES_DIR");
    test_skip("no-fixtures", "%s is absent (the shared fixtures; VLM_FIXTURES_DIR overrides the path)",
              env ? env : VLM_SOURCE_DIR "/../shared/fixtures");
  }
  return fixtures;
}

int test_run(const test_case *tests, size_t count, int argc, char **argv) {
  int passed = 0, failed = 0, skipped = 0;
  for (size_t i = 0; i < count; i++) {
    if (argc > 1) {
      bool selected = false;
      for (int a = 1; a < argc; a++)
        if (strcmp(argv[a], tests[i].name) == 0) selected = true;
      if (!selected) continue;
    }
    int before = test_failures, skips_before = test_skips;
    test_failures_before_current = before;
    test_current = tests[i].name;
    tests[i].function();
    if (test_failures != before) {
      failed++;
      printf("FAIL %s\n", tests[i].name);
    } else if (test_skips != skips_before) {
      skipped++;
      printf("skip %s\n", tests[i].name);
    } else {
      passed++;
      printf("ok   %s\n", tests[i].name);
    }
  }
  for (int a = 1; a < argc; a++) {
    bool known = false;
    for (size_t i = 0; i < count; i++)
      if (strcmp(argv[a], tests[i].name) == 0) known = true;
    if (!known) {
      failed++;
      printf("FAIL %s: no such test in this executable\n", argv[a]);
    }
  }
  printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  fflush(stdout);
  return failed ? 1 : skipped ? TEST_SKIP_EXIT_CODE : 0;
}
