#!/usr/bin/env python3
"""Fails when a ctest run skipped something this machine can run.

Reads the JUnit file `ctest --output-junit` wrote (scripts/check-skips.sh runs
ctest so). Every skip in the suite prints a line "SKIP(reason) name: message"
(tests/test.h, tests/cli/lib.sh, tests/cli/unittest_main.py) and its test
exits 77, which ctest reports as skipped. A skip is accepted only when its
reason is one CI cannot have, i.e. a kernel path this CPU lacks:
"cpu-lacks-<path>" where /proc/cpuinfo (VLM_CPUINFO overrides the path)
lacks one of the path's flags. Everything else CI has: the shared fixtures,
the venvs scripts/test.sh creates and what scripts/install-dependencies.sh
installs. Also refused: a skipped test with no SKIP line (an untagged
skip) and a passed test that printed SKIP lines (a runner that hid them).

Usage: check_skips.py JUNIT_XML. Exit status 0 when every skip is accepted.
"""
import os
import re
import sys
import xml.etree.ElementTree as ElementTree

SKIP_LINE = re.compile(r"^SKIP\(([^)]*)\) (.*?): (.*)$", re.M)
TRUNCATED = "This part of the test output was removed"

# The cpuinfo flags each kernel path needs (src/backends/cpu/cpu_features.c).
PATH_FLAGS = {
    "avx2": ("avx2", "fma", "f16c"),
    "avx512": ("avx512f", "avx512bw", "avx512vl", "avx512dq"),
}

# Why CI never accepts these reasons.
ALWAYS_PRESENT = {
    "no-fixtures": "CI has ../shared/fixtures",
    "no-venv-xla": "scripts/test.sh creates .venv-xla",
    "no-venv-server": "scripts/test.sh creates .venv-server",
    "no-venv-browser": "scripts/test.sh creates .venv-browser",
    "no-venv-deploy": "scripts/test.sh creates .venv-deploy",
    "no-chromium": "scripts/install-dependencies.sh installs chromium and chromium-driver",
    "no-xla-runtime": "scripts/install-dependencies.sh installs libpython3.11-dev (python-3.11-embed)",
    "needs-earlier-test": "the whole suite runs, so the test it needs ran first",
    "untagged": "a skip must name its reason",
}


def cpu_flags(path):
    try:
        with open(path) as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError as error:
        print(f"check-skips: cannot read {path}: {error}", file=sys.stderr)
    return set()


def verdict(reason, flags, cpuinfo_path):
    """(accepted, why)."""
    if reason.startswith("cpu-lacks-"):
        path = reason[len("cpu-lacks-"):]
        needed = PATH_FLAGS.get(path)
        if needed is None:
            return False, f"no kernel path named {path!r}"
        missing = [flag for flag in needed if flag not in flags]
        if missing:
            return True, f"{cpuinfo_path} lacks {' '.join(missing)}"
        return False, f"this CPU has {' '.join(needed)}: the {path} path must run here"
    if reason in ALWAYS_PRESENT:
        return False, ALWAYS_PRESENT[reason]
    return False, f"no rule accepts reason {reason!r}"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_skips.py JUNIT_XML")
    cpuinfo_path = os.environ.get("VLM_CPUINFO", "/proc/cpuinfo")
    flags = cpu_flags(cpuinfo_path)
    try:
        suite = ElementTree.parse(sys.argv[1]).getroot()
    except (OSError, ElementTree.ParseError) as error:
        sys.exit(f"check-skips: cannot read {sys.argv[1]}: {error}")
    accepted, unexpected = [], []
    cases = list(suite.iter("testcase"))
    for case in cases:
        name, status = case.get("name"), case.get("status")
        output = case.findtext("system-out") or ""
        skips = SKIP_LINE.findall(output)
        if status == "fail":
            continue  # ctest fails the run already: failures take precedence
        if status == "run":
            for reason, part, message in skips:
                unexpected.append(f"{name}: SKIP({reason}) {part}: {message}\n"
                                  f"    passed although it printed a SKIP line: its runner must exit 77")
            continue
        # Skipped (SKIP_RETURN_CODE), disabled or otherwise not run.
        if not skips:
            why = ("its output was truncated: run ctest with --test-output-size-passed"
                   if TRUNCATED in output else "it printed no SKIP(reason) line")
            unexpected.append(f"{name}: {status} without a reason: {why}")
        for reason, part, message in skips:
            ok, why = verdict(reason, flags, cpuinfo_path)
            (accepted if ok else unexpected).append(f"{name}: SKIP({reason}) {part}: {message}\n    {why}")
    for line in accepted:
        print(f"accepted skip: {line}")
    for line in unexpected:
        print(f"UNEXPECTED SKIP: {line}")
    print(f"check-skips: {len(cases)} tests, {len(accepted)} accepted skips, {len(unexpected)} unexpected")
    if not cases:
        print(f"check-skips: {sys.argv[1]} lists no tests", file=sys.stderr)
        return 1
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
