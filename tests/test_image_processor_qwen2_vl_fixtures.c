/* The Qwen2-VL image processor against Transformers on every fixture image
 * it opens (../shared/fixtures/media/images; skipped when absent), under the
 * four configs of tests/goldens/media_qwen2_vl: resize, pixel_values and
 * grid of both variants, bit for bit (format: test_qwen2_vl_support.h). */
#include "test.h"
#include "test_qwen2_vl_support.h"

static void test_fixture_images_match_transformers(void) {
  if (!test_require_fixtures()) return;
  digests_checked = 0;
  int ran = run_entries(true, NULL);
  CHECK_INT_EQ(ran, 23 * 4);
  CHECK_INT_EQ(digests_checked, 23 * 4 * 4);
}

TEST_MAIN(TEST(test_fixture_images_match_transformers))
