#!/usr/bin/env bash
# Runs test modules of tests/server against a vlm binary, for the ctest
# scripts tests/cli/serve*.sh. They need the pinned OpenAI client in
# .venv-server, which scripts/test.sh creates; without it this SKIPS
# (exit 0). Arguments: VLM SOURCE_DIR MODULE...
set -u
vlm=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
source_dir=$(cd "$2" && pwd)
shift 2
python=$source_dir/.venv-server/bin/python
if [ ! -x "$python" ]; then
  echo "SKIP: $python is missing; create it with"
  echo "  python3 -m venv .venv-server && .venv-server/bin/pip install -r tests/server/requirements.txt"
  exit 0
fi
# Under AddressSanitizer everything is several times slower: a smaller load.
if ldd "$vlm" 2>/dev/null | grep -q libasan; then
  export VLM_SERVER_TEST_REQUESTS=${VLM_SERVER_TEST_REQUESTS:-8}
  export VLM_SERVER_TEST_ASAN=1
  # `serve --backend xla` embeds CPython, which keeps interpreter-lifetime
  # allocations by design (see the file); vlm's own stay checked.
  export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$source_dir/tests/lsan_xla.supp:print_suppressions=0
fi
cd "$source_dir/tests/server" || exit 1
VLM_BINARY=$vlm VLM_SOURCE_DIR=$source_dir exec "$python" -m unittest -v "$@"
