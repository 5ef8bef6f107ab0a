#!/usr/bin/env bash
# Skips that show: the C harness (tests/test_main.c, through probe.c), the
# CLI scripts' helpers (tests/cli/lib.sh), the unittest runner
# (tests/cli/unittest_main.py) and scripts/check-skips.sh on real ctest runs
# of small suites: a skip exits 77 with a SKIP(reason) line, ctest shows it
# as skipped, failures take precedence, and check-skips accepts only a kernel
# path the CPU lacks. Arguments: PROBE SOURCE_DIR.
probe=$1
source "$2/tests/cli/lib.sh" "$probe" unused "$2"
export VLM_FIXTURES_DIR=/nonexistent

# The C harness: `run STATUS TEST...` runs the probe.
check c_pass_exits_0 bash -c "run 0 passes && out_has 'ok   passes' && out_has '1 passed, 0 failed, 0 skipped'"
check c_skip_exits_77 bash -c "run 77 skips && out_has 'SKIP(no-fixtures) skips: /nowhere is absent' && out_has 'skip skips'"
check c_partial_skip_shows bash -c "run 77 passes skips_a_part && out_has 'SKIP(cpu-lacks-avx512) skips_a_part:' \
  && out_has '1 passed, 0 failed, 1 skipped'"
check c_failure_beats_skip bash -c "run 1 skips skips_then_fails && out_has 'FAIL skips_then_fails' \
  && out_has '0 passed, 1 failed, 1 skipped'"
check c_same_skip_printed_once bash -c "run 77 skips_twice_the_same && [ \$(grep -c '^SKIP(' '$work/out') -eq 1 ]"
check c_bad_reason_fails bash -c "run 1 skips_with_a_bad_reason && err_has 'invalid reason tag'"
check c_require_fixtures_skips bash -c "run 77 requires_missing_fixtures \
  && out_has 'SKIP(no-fixtures) requires_missing_fixtures: /nonexistent is absent'"
check c_unknown_test_fails bash -c "run 1 passes no_such_test && out_has 'FAIL no_such_test: no such test'"

# lib.sh: skip, then finish's exit status.
script_exits() { # script_exits STATUS BODY: a CLI script with BODY exits STATUS
  printf 'source "%s/tests/cli/lib.sh" x y "%s"\n%s\nfinish\n' "$source_dir" "$source_dir" "$2" >"$work/script.sh"
  bash "$work/script.sh" >"$work/out" 2>&1
  local status=$?
  [ "$status" -eq "$1" ] || { echo "  exited $status, expected $1:" >&2; cat "$work/out" >&2; return 1; }
}
check sh_pass_exits_0 script_exits 0 "check one true"
check sh_skip_exits_77 bash -c "$(declare -f script_exits); script_exits 77 'check one true; skip no-venv-xla part why' \
  && out_has 'SKIP(no-venv-xla) part: why' && out_has '1 passed, 0 failed, 1 skipped'"
check sh_failure_beats_skip script_exits 1 "check one false; skip no-venv-xla part why"
check sh_have_fixtures_skips bash -c "$(declare -f script_exits); script_exits 77 'have_fixtures images || true' \
  && out_has 'SKIP(no-fixtures) images: /nonexistent is absent'"

# unittest_main.py: tagged and untagged skips, failures first.
unittest_exits() { # unittest_exits STATUS BODY: a unittest file with test methods BODY exits STATUS
  printf 'import unittest\nclass T(unittest.TestCase):\n%s\n' "$2" >"$work/test_probe.py"
  python3 "$source_dir/tests/cli/unittest_main.py" "$work/test_probe.py" >"$work/out" 2>&1
  local status=$?
  [ "$status" -eq "$1" ] || { echo "  exited $status, expected $1:" >&2; cat "$work/out" >&2; return 1; }
}
export -f unittest_exits
ok='    def test_ok(self): pass'
tagged='    def test_skip(self): raise unittest.SkipTest("no-fixtures: images are absent")'
untagged='    def test_bare(self): self.skipTest("no reason tag")'
fails='    def test_fails(self): self.fail("no")'
check py_pass_exits_0 unittest_exits 0 "$ok"
check py_skip_exits_77 bash -c "unittest_exits 77 \$'$ok\n$tagged' && out_has 'SKIP(no-fixtures) T.test_skip: images are absent'"
check py_untagged_skip bash -c "unittest_exits 77 '$untagged' && out_has 'SKIP(untagged) T.test_bare: no reason tag'"
check py_failure_beats_skip unittest_exits 1 "$tagged
$fails"

# check-skips.sh on a ctest suite written by hand (CTestTestfile.cmake).
printf 'processor\t: 0\nflags\t\t: fpu sse2 avx2 fma f16c avx512f avx512dq\n' >"$work/cpuinfo_avx2" # no avx512bw/vl
printf 'processor\t: 0\nflags\t\t: fpu sse2 avx2 fma f16c avx512f avx512dq avx512bw avx512vl\n' >"$work/cpuinfo_avx512"
suite_checks() { # suite_checks STATUS CPUINFO TEST_LINES...: check-skips.sh on those tests exits STATUS
  local expected=$1 cpuinfo=$2
  shift 2
  rm -rf "$work/suite" && mkdir -p "$work/suite"
  local line
  for line in "$@"; do printf '%s\n' "$line"; done >"$work/suite/CTestTestfile.cmake"
  VLM_CPUINFO=$cpuinfo "$source_dir/scripts/check-skips.sh" "$work/suite" >"$work/out" 2>&1
  local status=$?
  [ "$status" -eq "$expected" ] || { echo "  check-skips exited $status, expected $expected:" >&2; cat "$work/out" >&2; return 1; }
}
export -f suite_checks
test_line() { # test_line NAME COMMAND...: a ctest entry that exits 77 to skip
  local name=$1
  shift
  printf 'add_test(%s' "$name"
  printf ' "%s"' "$@"
  printf ')\nset_tests_properties(%s PROPERTIES SKIP_RETURN_CODE 77)' "$name"
}
pass=$(test_line p_pass "$probe" passes)
part=$(test_line p_part "$probe" passes skips_a_part)
fixtures=$(test_line p_fixtures "$probe" skips)
failing=$(test_line p_fails "$probe" skips_then_fails)
bare=$(test_line p_bare bash -c "exit 77")
hidden=$(test_line p_hidden bash -c "echo 'SKIP(no-fixtures) x: absent'")
long=$(test_line p_long bash -c "seq 20000 && echo 'SKIP(no-fixtures) x: late in a long output'")
export pass part fixtures failing bare hidden long
lacks=$work/cpuinfo_avx2 has=$work/cpuinfo_avx512
export lacks has
check suite_all_pass suite_checks 0 "$has" "$pass"
check suite_lacking_cpu_may_skip bash -c 'suite_checks 0 "$lacks" "$pass" "$part" && out_has "p_part (Skipped)" \
  && out_has "accepted skip: p_part: SKIP(cpu-lacks-avx512) skips_a_part" && out_has "lacks avx512bw avx512vl"'
check suite_capable_cpu_must_not_skip bash -c 'suite_checks 1 "$has" "$pass" "$part" \
  && out_has "UNEXPECTED SKIP: p_part: SKIP(cpu-lacks-avx512) skips_a_part" && out_has "the avx512 path must run here"'
check suite_missing_fixtures_fail bash -c 'suite_checks 1 "$lacks" "$pass" "$fixtures" && out_has "p_fixtures (Skipped)" \
  && out_has "UNEXPECTED SKIP: p_fixtures: SKIP(no-fixtures) skips"'
check suite_failure_keeps_ctest_status bash -c 'suite_checks 8 "$lacks" "$pass" "$failing" && out_has "p_fails (Failed)"'
check suite_untagged_skip_fails bash -c 'suite_checks 1 "$lacks" "$bare" && out_has "p_bare: notrun without a reason"'
check suite_hidden_skip_fails bash -c 'suite_checks 1 "$lacks" "$hidden" && out_has "passed although it printed a SKIP line"'
# ctest keeps 1 KiB of a passed test's output unless told otherwise.
check suite_long_output_is_read_whole bash -c 'suite_checks 1 "$lacks" "$long" && out_has "late in a long output"'
finish
