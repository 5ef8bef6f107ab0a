#!/usr/bin/env bash
# Runs test modules of tests/server against a vlm binary, for the ctest
# scripts tests/cli/serve*.sh, each through tests/cli/unittest_main.py so
# skipped tests show as skipped. They need the pinned OpenAI client in
# .venv-server (or the venv VLM_TEST_VENV names), which scripts/test.sh
# creates; without it this reports SKIP(no-venv-server) (SKIP(no-venv-browser)
# ...) and exits 77 (ctest's skip). Exit status: 1 when a
# module failed, else 77 when one skipped something, else 0.
# Arguments: VLM SOURCE_DIR MODULE...
set -u
vlm=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
source_dir=$(cd "$2" && pwd)
shift 2
# The venv and its requirements: .venv-server by default; the browser test
# (tests/cli/serve_browser.sh) names .venv-browser and its own file.
venv=${VLM_TEST_VENV:-.venv-server}
requirements=${VLM_TEST_REQUIREMENTS:-tests/server/requirements.txt}
python=$source_dir/$venv/bin/python
if [ ! -x "$python" ]; then
  echo "SKIP(no-${venv#.}) serve: $python is missing; create it with" \
    "python3 -m venv $venv && $venv/bin/pip install -r $requirements"
  exit 77
fi
# Under AddressSanitizer everything is several times slower: a smaller load.
if ldd "$vlm" 2>/dev/null | grep -q libasan; then
  export VLM_SERVER_TEST_REQUESTS=${VLM_SERVER_TEST_REQUESTS:-8}
  export VLM_SERVER_TEST_ASAN=1
  # ASan keeps freed memory in a quarantine (256 MiB by default) that the
  # load test's second round would still be filling, so its RSS check would
  # measure the quarantine; at 64 MiB the warm-up round fills it and the
  # check measures vlm again (RSS within ~4 MiB, as without ASan).
  # Use-after-free of the last 64 MiB freed is still caught.
  export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=64
  # `serve --backend xla` embeds CPython, which keeps interpreter-lifetime
  # allocations by design (see the file); vlm's own stay checked.
  export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$source_dir/tests/lsan_xla.supp:print_suppressions=0
fi
cd "$source_dir/tests/server" || exit 1
outcome=0
for module in "$@"; do
  VLM_BINARY=$vlm VLM_SOURCE_DIR=$source_dir "$python" "$source_dir/tests/cli/unittest_main.py" "$module.py" -v
  status=$?
  if [ "$status" -ne 0 ] && [ "$status" -ne 77 ]; then outcome=1
  elif [ "$status" -eq 77 ] && [ "$outcome" -eq 0 ]; then outcome=77
  fi
done
exit "$outcome"
