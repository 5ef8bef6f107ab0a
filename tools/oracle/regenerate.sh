#!/usr/bin/env bash
# Regenerates the oracle goldens with the pinned Transformers:
#   tools/oracle/regenerate.sh            rewrite tests/models/{llama,qwen2,llava}
#                                         and tests/goldens/* in place
#   tools/oracle/regenerate.sh --check    regenerate into a scratch directory and
#                                         fail unless every byte equals the
#                                         checked-in files
# Extra arguments go to generate.py (e.g. --family llava). The venv
# (.venv-oracle, from requirements.txt) is created on first use; torch is the
# CUDA build from PyPI, several GB.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=${VLM_ORACLE_VENV:-.venv-oracle}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet -r tools/oracle/requirements.txt
fi
check=false
if [ "${1:-}" = "--check" ]; then check=true; shift; fi
if ! $check; then
  exec "$venv/bin/python" tools/oracle/generate.py "$@"
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$venv/bin/python" tools/oracle/generate.py --out "$scratch" "$@"
status=0
for tree in tests/models tests/goldens; do
  for generated in "$scratch/$tree"/*; do
    name=$(basename "$generated")
    diff -r "$generated" "$tree/$name" >/dev/null || { echo "differs: $tree/$name" >&2; diff -rq "$generated" "$tree/$name" >&2 || true; status=1; }
  done
done
[ "$status" -eq 0 ] && echo "regenerated goldens are byte-identical to the checked-in ones"
exit "$status"
