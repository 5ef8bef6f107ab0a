/* Test cases for the harness itself (tests/test_main.c), run one by one by
 * tests/skips/skips.sh, which checks what each prints and its exit status.
 * Not a test of its own: most of these skip or fail on purpose. */
#include "test.h"

static void passes(void) { CHECK(1 + 1 == 2); }

static void skips(void) {
  test_skip("no-fixtures", "%s is absent", "/nowhere");
}

/* Skips one part and runs the rest: still reported as skipped. */
static void skips_a_part(void) {
  test_skip("cpu-lacks-avx512", "this CPU cannot run the avx512 kernel path");
  CHECK(2 * 2 == 4);
}

static void skips_then_fails(void) {
  test_skip("no-fixtures", "absent");
  CHECK(1 == 2);
}

static void skips_twice_the_same(void) {
  for (int i = 0; i < 3; i++) test_skip("cpu-lacks-avx2", "this CPU cannot run the avx2 kernel path");
}

static void skips_with_a_bad_reason(void) { test_skip("No Fixtures", "a tag must be lower-case words joined by '-'"); }

static void requires_missing_fixtures(void) {
  if (!test_require_fixtures()) return;
  CHECK(!"the fixtures were found: run with VLM_FIXTURES_DIR=/nonexistent");
}

TEST_MAIN(TEST(passes), TEST(skips), TEST(skips_a_part), TEST(skips_then_fails), TEST(skips_twice_the_same),
          TEST(skips_with_a_bad_reason), TEST(requires_missing_fixtures))
