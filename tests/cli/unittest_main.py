"""Runs a unittest file the way unittest.main does, but reports skips the way
the rest of the suite does (tests/test.h, tests/cli/lib.sh): one line
"SKIP(reason) Class.test: message" per skipped test, and exit status 1 if
anything failed, else 77 (ctest's SKIP_RETURN_CODE) if anything skipped,
else 0. unittest.main alone exits 0 when tests skip, so ctest would count
them as passes.

A skip's message starts with its reason tag, from README's "Skipped tests"
list: raise unittest.SkipTest("no-fixtures: ... is absent"). A message
without one is reported as SKIP(untagged), which scripts/check-skips.sh never
accepts.

Usage: python unittest_main.py TEST_FILE.py [unittest arguments: -v, Class.test ...]
"""
import importlib.util
import os
import re
import sys
import unittest

SKIP_EXIT_CODE = 77
TAGGED = re.compile(r"^([a-z0-9]+(?:-[a-z0-9]+)*): (.*)$", re.S)


def load(path):
    directory = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, directory)
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def skip_line(test, reason, module_name):
    match = TAGGED.match(str(reason))
    tag, message = (match.group(1), match.group(2)) if match else ("untagged", str(reason))
    # "Class.test", or "setUpClass (Class)" for a class skipped as a whole.
    name = test.id().replace(module_name + ".", "")
    return f"SKIP({tag}) {name}: {' '.join(message.split())}"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    module = load(sys.argv[1])
    program = unittest.main(module=module, argv=[sys.argv[1]] + sys.argv[2:], exit=False)
    result = program.result
    sys.stdout.flush()
    for test, reason in result.skipped:
        print(skip_line(test, reason, module.__name__))
    if not result.wasSuccessful() or (result.testsRun == 0 and not result.skipped):
        sys.exit(1)  # a failure, or nothing ran (a filter that names no test)
    sys.exit(SKIP_EXIT_CODE if result.skipped else 0)


if __name__ == "__main__":
    main()
