#!/usr/bin/env bash
# `vlm serve` end to end: tests/server/test_server.py drives the server with
# the official OpenAI Python client and raw HTTP (streaming, images, errors,
# auth, disconnects, graceful shutdown, a mixed concurrent load). It needs
# the pinned client in .venv-server, which scripts/test.sh creates; without
# it this test reports SKIP(no-venv-server) and exits 77, which ctest shows
# as skipped; so do the tests test_server.py itself skips (unittest_main.py).
# Arguments: VLM MAKE_TINY SOURCE_DIR.
set -u
vlm=$1
source_dir=$(cd "$3" && pwd)
python=$source_dir/.venv-server/bin/python
if [ ! -x "$python" ]; then
  echo "SKIP(no-venv-server) serve: $python is missing; create it with" \
    "python3 -m venv .venv-server && .venv-server/bin/pip install -r tests/server/requirements.txt"
  exit 77
fi
# Under AddressSanitizer everything is several times slower: a smaller load.
if ldd "$vlm" 2>/dev/null | grep -q libasan; then
  export VLM_SERVER_TEST_REQUESTS=${VLM_SERVER_TEST_REQUESTS:-8}
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
VLM_BINARY=$vlm VLM_SOURCE_DIR=$source_dir exec "$python" "$source_dir/tests/cli/unittest_main.py" \
  "$source_dir/tests/server/test_server.py" -v
