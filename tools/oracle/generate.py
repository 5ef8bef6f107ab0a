"""Regenerates the tiny checkpoints (tests/models/<family>) and their goldens
(tests/goldens/<family>/<case>). Run through tools/oracle/regenerate.sh.

  python tools/oracle/generate.py [--out ROOT] [--family NAME ...]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import families  # noqa: E402
import harness  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=harness.ROOT, help="root holding tests/models and tests/goldens")
    parser.add_argument("--family", action="append", choices=sorted(families.FAMILIES))
    parser.add_argument("--case", action="append", help="only these cases (the model is rebuilt anyway)")
    arguments = parser.parse_args()
    for name in arguments.family or sorted(families.FAMILIES):
        family = families.FAMILIES[name]
        model_dir = os.path.join(arguments.out, "tests", "models", name)
        harness.build_model(family, model_dir)
        for case in family.cases:
            if arguments.case and case.name not in arguments.case:
                continue
            case_dir = os.path.join(arguments.out, "tests", "goldens", name, case.name)
            harness.run_case(family, case, model_dir, case_dir)
            print(f"{name}/{case.name}: written", flush=True)
        harness.pack_model(family, model_dir)


if __name__ == "__main__":
    main()
