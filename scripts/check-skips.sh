#!/usr/bin/env bash
# Runs one build's ctest suite, then fails if a test skipped that this
# machine has the prerequisites for (scripts/check_skips.py: only a kernel
# path the CPU lacks may skip). scripts/test.sh runs it for the release and
# the sanitizer builds; run it alone to check a build:
#   scripts/check-skips.sh BUILD_DIR [CTEST_ARGUMENTS...]
# Test failures take precedence: the exit status is ctest's when ctest
# failed, else 1 when a skip was unexpected, else 0.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/check-skips.sh BUILD_DIR [CTEST_ARGUMENTS...]" >&2; exit 2; }
build=$(cd "$1" && pwd)
shift
junit=$build/ctest-junit.xml
rm -f "$junit"
# Whole outputs in the JUnit file: ctest keeps only 1 KiB of a passed test's
# output by default, and a SKIP line in a passed test must not go unseen.
status=0
ctest --test-dir "$build" --output-on-failure --output-junit "$junit" \
  --test-output-size-passed 8388608 --test-output-size-failed 8388608 "$@" || status=$?
python3 scripts/check_skips.py "$junit" || { [ "$status" -ne 0 ] || status=1; }
exit "$status"
