"""Builds a mid-size checkpoint for one family (real geometry: e.g. a
Qwen2-0.5B-shaped decoder, LLaVA with a CLIP-L/14-336 tower), runs the
family's mid-size case through Transformers, and, given --vlm, runs
`vlm compare` on it. Nothing here is checked in (gigabytes of weights).

  .venv-oracle/bin/python tools/oracle/midsize.py --family qwen2 --out /tmp/midsize-qwen2 \\
      [--vlm build/vlm]

The tokenizer (and so the vocabulary) is the tiny model's: the transformer
geometry is what the mid-size case exercises.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import families  # noqa: E402
import harness  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--family", required=True, choices=sorted(families.FAMILIES))
    parser.add_argument("--out", required=True, help="directory for model/ and golden/")
    parser.add_argument("--vlm", help="path of the vlm binary: run `vlm compare` on the case")
    arguments = parser.parse_args()
    family = families.FAMILIES[arguments.family]
    model_dir = os.path.join(arguments.out, "model")
    harness.build_model(family, model_dir, midsize=True)
    case = next(case for case in family.cases if case.name == family.midsize_case)
    case_dir = os.path.join(arguments.out, "golden", case.name)
    harness.run_case(family, case, model_dir, case_dir)
    print(f"golden case: {case_dir}", flush=True)
    command = [arguments.vlm or "vlm", "compare", "--golden", case_dir]
    print("compare with: " + " ".join(command), flush=True)
    if arguments.vlm:
        sys.exit(subprocess.run(command).returncode)


if __name__ == "__main__":
    main()
