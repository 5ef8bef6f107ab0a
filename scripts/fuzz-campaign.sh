#!/usr/bin/env bash
# A long local fuzz campaign: every target (or the ones named) runs until it
# has used CPU_MINUTES of CPU time — CPU time, not wall time, so a loaded
# machine does not shorten the campaign — and the report gives each target's
# executions, CPU seconds, corpus growth and any finding.
#
#   scripts/fuzz-campaign.sh [--cpu-minutes N | --cpu-seconds S] [--jobs J] [--pause-lock FILE]
#                            [--out DIR] [--build-dir DIR] [--malloc-limit-mb M] [target ...]
#
# --jobs J runs J targets at once (one per core).  --pause-lock FILE stops
# the fuzzers (SIGSTOP) whenever someone else holds FILE with flock(1), so
# measurements taken under that lock are not disturbed, and resumes them
# after.  Fuzzers run under `nice -n 19`.  New inputs go to DIR/<target>/new,
# never into fuzz/corpus (minimise and commit interesting ones by hand).
# --build-dir (default build-fuzz) lets a campaign run while another
# rebuilds the default one.  --malloc-limit-mb M (default 512) makes any
# single allocation over M a finding with its stack: libFuzzer's default
# (its 2048 MB RSS limit) caught libpng's 1.29 GB chunk buffer only as an
# out-of-memory blamed on whatever input ran next.
# Exit status: 0 when no target found anything, 1 otherwise.
#
# CI does not run this (scripts/test.sh replays the corpora and fuzzes 20 s
# per target); docs/SECURITY.md records the last campaign.
set -euo pipefail
cd "$(dirname "$0")/.."

cpu_minutes=30
cpu_seconds_limit=
jobs=2
pause_lock=
out=
build=build-fuzz
malloc_limit=512
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu-minutes) cpu_minutes=$2; shift 2 ;;
    --cpu-seconds) cpu_seconds_limit=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --pause-lock) pause_lock=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --malloc-limit-mb) malloc_limit=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz-campaign: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || for d in fuzz/corpus/*/; do targets+=("$(basename "$d")"); done
out=${out:-$(mktemp -d /tmp/vlm-fuzz-campaign.XXXXXX)}
mkdir -p "$out"
cpu_limit=${cpu_seconds_limit:-$((cpu_minutes * 60))}
ticks=$(getconf CLK_TCK)

CC=clang cmake -S . -B "$build" -DVLM_FUZZ=ON -DVLM_TESTS=OFF >/dev/null
cmake --build "$build" -j"$jobs" >/dev/null
echo "fuzz-campaign: commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src fuzz || echo '+dirty'), ${cpu_limit} CPU-seconds per target, $jobs at once, output in $out"

# CPU seconds (user + system) a process has used so far.
cpu_seconds() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo -1; return; }
  stat=${stat##*) }  # the fields after the command name, which may hold spaces
  set -- $stat
  echo $(( (${12} + ${13}) / ticks ))
}

# A shared lock to test with: two monitors testing at once must not see
# each other's test as someone holding the lock (an exclusive test did,
# stopping a fuzzer for 5 s).
lock_held() {
  [ -n "$pause_lock" ] && ! flock -n -s "$pause_lock" true 2>/dev/null
}

# Runs one target to its CPU budget; writes DIR/<target>/result.
run_target() {
  local name=$1 dir="$out/$1" target=$build/fuzz/fuzz_$1
  mkdir -p "$dir/new"
  local before
  before=$(ls "fuzz/corpus/$name" | wc -l)
  nice -n 19 "$target" -print_final_stats=1 -max_total_time=$((cpu_limit * 100)) -malloc_limit_mb="$malloc_limit" \
    -artifact_prefix="$dir/" "$dir/new" "fuzz/corpus/$name" >"$dir/log" 2>&1 &
  local pid=$! used=0 stopped=0
  while kill -0 "$pid" 2>/dev/null; do
    used=$(cpu_seconds "$pid")
    if [ "$used" -ge "$cpu_limit" ]; then
      [ $stopped -eq 1 ] && kill -CONT "$pid"
      kill -INT "$pid"
      break
    fi
    if lock_held; then
      [ $stopped -eq 0 ] && { kill -STOP "$pid"; stopped=1; }
    elif [ $stopped -eq 1 ]; then
      kill -CONT "$pid"; stopped=0
    fi
    sleep 5
  done
  local rc=0
  wait "$pid" || rc=$?
  # libFuzzer exits 72 when interrupted (our stop), 0 after max_total_time.
  local verdict="no finding"
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 72 ]; then verdict="FINDING (exit $rc, see $dir/log)"; fi
  if ls "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-* >/dev/null 2>&1; then
    verdict="FINDING (artifacts in $dir)"
  fi
  local execs
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "${execs:-?}" "$used" "$before" \
    "$(ls "$dir/new" | wc -l)" "$verdict" >"$dir/result"
}

running=()
for name in "${targets[@]}"; do
  [ -x "$build/fuzz/fuzz_$name" ] || { echo "fuzz-campaign: no target fuzz_$name" >&2; exit 2; }
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  echo "fuzz-campaign: $(date -u +%H:%M:%S) start fuzz_$name"
  run_target "$name" &
  running+=($!)
done
wait

status=0
printf '\n%-16s %14s %8s %8s %8s  %s\n' target executions cpu_s corpus new_inputs verdict
for name in "${targets[@]}"; do
  IFS=$'\t' read -r n execs used before new verdict <"$out/$name/result"
  printf '%-16s %14s %8s %8s %8s  %s\n' "$n" "$execs" "$used" "$before" "$new" "$verdict"
  case "$verdict" in FINDING*) status=1 ;; esac
done
exit $status
