# Shared by the CLI test scripts: `source "$(dirname "$0")/lib.sh" "$@"`.
# Each script is run by ctest as `bash SCRIPT VLM MAKE_TINY SOURCE_DIR`; this
# sets up those paths, a scratch directory removed at exit, the check
# counters, and helpers to run vlm and look at its output. A part that
# cannot run here says so with `skip`. A script ends with `finish`, which
# prints "N passed, N failed, N skipped" and exits 1 if a check failed, else
# 77 (ctest's SKIP_RETURN_CODE, tests/CMakeLists.txt) if a part skipped.
set -u
vlm=$1
make_tiny=$2
source_dir=$(cd "$3" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
skipped=0

check() { # check NAME COMMAND...: counts and prints one result line.
  local name=$1
  shift
  if "$@"; then passed=$((passed + 1)); echo "ok   $name"
  else failed=$((failed + 1)); echo "FAIL $name"; fi
}

# skip REASON PART MESSAGE: the checks of PART (a name for them) did not run
# here. REASON is a tag from README's "Skipped tests" list (no-fixtures,
# no-venv-xla, ...): scripts/check-skips.sh decides from it whether CI may
# skip this. Prints the same "SKIP(reason) part: message" line as tests/test.h.
skip() {
  local reason=$1 part=$2
  shift 2
  skipped=$((skipped + 1))
  echo "SKIP($reason) $part: $*"
}

# The shared fixtures (real tokenizers, images), as tests/test_main.c finds
# them. `if have_fixtures PART; then ...; fi` runs PART's checks only with
# them, reporting PART skipped (no-fixtures) otherwise; a fixtures tree that
# lacks a file they use fails those checks instead.
fixtures_root=${VLM_FIXTURES_DIR:-$source_dir/../shared/fixtures}
have_fixtures() {
  [ -d "$fixtures_root" ] && return 0
  skip no-fixtures "$1" "$fixtures_root is absent (the shared fixtures; VLM_FIXTURES_DIR overrides the path)"
  return 1
}

# golden_reads_fixtures CASE_DIR: whether `vlm compare` on the golden case
# decodes fixture images (it has processor stages).
golden_reads_fixtures() {
  python3 -c 'import json, sys
stages = json.load(open(sys.argv[1]))["stages"]
sys.exit(0 if any(s["name"].startswith("processor") for s in stages) else 1)' "$1/manifest.json"
}

# run EXPECTED_STATUS ARGS...: runs vlm, keeps stdout/stderr, checks the status.
run() {
  local expected=$1
  shift
  "$vlm" "$@" >"$work/out" 2>"$work/err"
  local status=$?
  if [ "$status" -ne "$expected" ]; then
    echo "  vlm $* exited $status, expected $expected; stdout and stderr:" >&2
    cat "$work/out" "$work/err" >&2
    return 1
  fi
}
out_has() { grep -qF -- "$1" "$work/out" || { echo "  stdout lacks: $1" >&2; cat "$work/out" >&2; return 1; }; }
err_has() { grep -qF -- "$1" "$work/err" || { echo "  stderr lacks: $1 (got: $(cat "$work/err"))" >&2; return 1; }; }
one_line_error() { [ "$(wc -l <"$work/err")" -eq 1 ]; }

# refuses STATUS FRAGMENT ARGS...: vlm exits STATUS with FRAGMENT on stderr.
refuses() {
  local expected=$1 fragment=$2
  shift 2
  run "$expected" "$@" && err_has "$fragment"
}

# Helpers used inside `check NAME bash -c "..."` need exporting.
export vlm make_tiny source_dir work
export -f run out_has err_has one_line_error refuses

# corrupt_golden_kv SRC DST: a copy of golden case SRC in DST with one KV
# value nudged well past any tolerance (the stage `vlm compare` must name).
corrupt_golden_kv() {
  cp -r "$1" "$2"
  python3 - "$2/tensors.safetensors" <<'PY'
import json, struct, sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
header_length = struct.unpack("<Q", data[:8])[0]
header = json.loads(data[8:8 + header_length])
begin = 8 + header_length + header["kv"]["data_offsets"][0] + 4 * 100
value = struct.unpack("<f", data[begin:begin + 4])[0]
data[begin:begin + 4] = struct.pack("<f", value + 0.5)
open(path, "wb").write(data)
PY
}

finish() {
  echo "$passed passed, $failed failed, $skipped skipped"
  if [ "$failed" -ne 0 ]; then exit 1; fi
  if [ "$skipped" -ne 0 ]; then exit 77; fi
  exit 0
}
