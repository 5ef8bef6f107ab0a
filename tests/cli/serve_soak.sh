#!/usr/bin/env bash
# The short variant of the `vlm serve` soak (tests/server/soak.py, issue 27):
# about 60 s of mixed text, image and audio traffic on the tiny
# Phi-4-multimodal with cancelled streams and disconnects at 1, 4 and 8
# concurrent clients; fails when RSS grows after the warm-up, a slot or body
# reservation leaks, or an answer is not the expected one. The long variant
# and its figures: docs/SECURITY.md. SKIPS without .venv-server or the
# fixtures. Arguments: VLM MAKE_TINY SOURCE_DIR.
set -u
vlm=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
source_dir=$(cd "$3" && pwd)
python=$source_dir/.venv-server/bin/python
if [ ! -x "$python" ]; then
  echo "SKIP(no-venv-server) soak: $python is missing; create it with" \
    "python3 -m venv .venv-server && .venv-server/bin/pip install -r tests/server/requirements.txt"
  exit 77
fi
duration=40
allowance=32
if ldd "$vlm" 2>/dev/null | grep -q libasan; then
  # Several times slower, and ASan's quarantine (64 MiB here, as in
  # run_tests.sh) and shadow memory grow with the traffic: a shorter run,
  # a larger allowance; leaks are LeakSanitizer's to find at exit.
  duration=30
  allowance=160
  export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=64
fi
VLM_BINARY=$vlm VLM_SOURCE_DIR=$source_dir exec "$python" "$source_dir/tests/server/soak.py" \
  --duration "$duration" --rss-allowance-mib "$allowance"
