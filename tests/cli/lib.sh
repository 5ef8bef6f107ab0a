# Shared by the CLI test scripts: `source "$(dirname "$0")/lib.sh" "$@"`.
# Each script is run by ctest as `bash SCRIPT VLM MAKE_TINY SOURCE_DIR`; this
# sets up those paths, a scratch directory removed at exit, the check
# counters, and helpers to run vlm and look at its output. A script ends
# with `finish`, which prints "N passed, N failed" and sets the exit status.
set -u
vlm=$1
make_tiny=$2
source_dir=$(cd "$3" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

check() { # check NAME COMMAND...: counts and prints one result line.
  local name=$1
  shift
  if "$@"; then passed=$((passed + 1)); echo "ok   $name"
  else failed=$((failed + 1)); echo "FAIL $name"; fi
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

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit $?
}
