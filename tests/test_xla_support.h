/* Shared by the xla execution tests (text and vision modules): a clock, the
 * check that the pinned IREE compiler and runtime are there (each test
 * reports SKIP(no-venv-xla) when not), and the leak suppressions the embedded CPython needs. Include
 * once per test executable, in its VLM_HAVE_XLA_RUNTIME branch. */
#ifndef VLM_TESTS_TEST_XLA_SUPPORT_H
#define VLM_TESTS_TEST_XLA_SUPPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "backends/xla/iree_compiler.h"
#include "backends/xla/xla_runtime.h"

/* Embedded CPython keeps interpreter-lifetime allocations: see the file. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void) {
  return "suppressions=" VLM_SOURCE_DIR "/tests/lsan_xla.supp:print_suppressions=0";
}

static double seconds_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* False, after reporting the running test skipped (no-venv-xla), without
 * iree-compile or a .venv-xla with iree.runtime. Looked up once. */
static bool environment_ready(void) {
  static int ready = -1; /* unknown */
  static char missing[512];
  if (ready < 0) {
    vlm_iree_compiler compiler;
    vlm_status status = vlm_iree_compiler_find(&compiler);
    ready = !status && vlm_xla_runtime_available(NULL);
    if (!ready)
      snprintf(missing, sizeof(missing), "%s", status ? vlm_status_message(status) : "no .venv-xla with iree.runtime");
    vlm_status_free(status);
  }
  if (!ready) test_skip("no-venv-xla", "%s (tools/xla/requirements.txt; scripts/test.sh creates it)", missing);
  return ready;
}

#endif
