/* A deliberately small test harness: CHECK macros that record failures with
 * file:line and keep going, test_skip for what cannot run here, and a runner
 * that prints one line per test and exits 1 if anything failed, else 77
 * (ctest's SKIP_RETURN_CODE, tests/CMakeLists.txt) if anything skipped, else
 * 0. Each tests/test_*.c is one ctest. */
#ifndef VLM_TEST_H
#define VLM_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vlm.h"

extern int test_failures;
extern const char *test_current;
/* Failures of the running test only (helpers that stop early must not see
 * an earlier test's failures, or every later test would silently pass). */
extern int test_failures_before_current;
#define TEST_CURRENT_FAILED() (test_failures > test_failures_before_current)

/* Reports the running test, or the part of it that follows, as skipped:
 * prints "SKIP(reason) test: message" and goes on (return after it to skip
 * the rest). `reason` is a tag from README's "Skipped tests" list, such as
 * "no-fixtures" or "cpu-lacks-avx512": scripts/check-skips.sh decides from
 * it whether CI may skip this here. A test that skipped and did not fail is
 * reported as skipped, and the executable then exits 77, so ctest shows it
 * as skipped even when its other tests passed; failures take precedence. */
#define TEST_SKIP_EXIT_CODE 77
void test_skip(const char *reason, const char *format, ...) __attribute__((format(printf, 2, 3)));

#define CHECK(condition)                                                     \
  do {                                                                       \
    if (!(condition)) {                                                      \
      fprintf(stderr, "  %s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__, \
              test_current, #condition);                                     \
      test_failures++;                                                       \
    }                                                                        \
  } while (0)

#define CHECK_INT_EQ(actual, expected)                                        \
  do {                                                                        \
    long long actual_ = (long long)(actual), expected_ = (long long)(expected); \
    if (actual_ != expected_) {                                               \
      fprintf(stderr, "  %s:%d: %s: %s == %lld, expected %lld\n", __FILE__,   \
              __LINE__, test_current, #actual, actual_, expected_);           \
      test_failures++;                                                        \
    }                                                                         \
  } while (0)

#define CHECK_NEAR(actual, expected, tolerance)                               \
  do {                                                                        \
    double actual_ = (double)(actual), expected_ = (double)(expected);        \
    if (!(fabs(actual_ - expected_) <= (tolerance))) {                        \
      fprintf(stderr, "  %s:%d: %s: %s == %.9g, expected %.9g\n", __FILE__,   \
              __LINE__, test_current, #actual, actual_, expected_);           \
      test_failures++;                                                        \
    }                                                                         \
  } while (0)

#define CHECK_STR_EQ(actual, expected)                                        \
  do {                                                                        \
    const char *actual_ = (actual), *expected_ = (expected);                  \
    if (!actual_ || strcmp(actual_, expected_) != 0) {                        \
      fprintf(stderr, "  %s:%d: %s: %s == \"%s\", expected \"%s\"\n",         \
              __FILE__, __LINE__, test_current, #actual,                      \
              actual_ ? actual_ : "(null)", expected_);                       \
      test_failures++;                                                        \
    }                                                                         \
  } while (0)

/* Asserts success; prints and frees the status otherwise. */
#define CHECK_OK(expression)                                                  \
  do {                                                                        \
    vlm_status status_ = (expression);                                        \
    if (status_ != VLM_OK) {                                                  \
      fprintf(stderr, "  %s:%d: %s: %s failed: %s\n", __FILE__, __LINE__,     \
              test_current, #expression, vlm_status_message(status_));        \
      vlm_status_free(status_);                                               \
      test_failures++;                                                        \
    }                                                                         \
  } while (0)

/* Asserts failure with `code` and a message containing `fragment`. */
#define CHECK_ERROR(expression, code, fragment)                               \
  do {                                                                        \
    vlm_status status_ = (expression);                                        \
    if (status_ == VLM_OK) {                                                  \
      fprintf(stderr, "  %s:%d: %s: %s succeeded, expected an error\n",       \
              __FILE__, __LINE__, test_current, #expression);                 \
      test_failures++;                                                        \
    } else {                                                                  \
      if (vlm_status_code_of(status_) != (code) ||                            \
          !strstr(vlm_status_message(status_), (fragment))) {                 \
        fprintf(stderr,                                                       \
                "  %s:%d: %s: %s gave [%s] \"%s\", expected [%s] with "       \
                "\"%s\"\n",                                                   \
                __FILE__, __LINE__, test_current, #expression,                \
                vlm_status_code_name(vlm_status_code_of(status_)),            \
                vlm_status_message(status_), vlm_status_code_name(code),      \
                (fragment));                                                  \
        test_failures++;                                                      \
      }                                                                       \
      vlm_status_free(status_);                                               \
    }                                                                         \
  } while (0)

typedef struct test_case {
  const char *name;
  void (*function)(void);
} test_case;

#define TEST(name) {#name, name}

/* Runs the tests named on the command line, or all of them; a name that is
 * no test here is a failure (a typo must not pass by running nothing). */
int test_run(const test_case *tests, size_t count, int argc, char **argv);

#define TEST_MAIN(...)                                                   \
  int main(int argc, char **argv) {                                      \
    static const test_case tests_[] = {__VA_ARGS__};                     \
    return test_run(tests_, sizeof(tests_) / sizeof(tests_[0]), argc, argv); \
  }

/* A fresh temporary directory for this test process (removed at exit). */
const char *test_temp_dir(void);
/* Writes bytes to dir/name; returns the malloc'd path. */
char *test_write_file(const char *dir, const char *name, const void *data,
                      size_t length);
/* Path of ../shared/fixtures relative to the source tree ($VLM_FIXTURES_DIR
 * when set), or NULL when it is absent. */
const char *test_fixtures_dir(void);
/* test_fixtures_dir(), or NULL after reporting the running test skipped
 * ("no-fixtures"): `if (!(fixtures = test_require_fixtures())) return;`. */
const char *test_require_fixtures(void);

#endif
