#!/usr/bin/env bash
# n > 1 (one prefill for every choice) and /v1/completions prompt lists
# through `vlm serve` with the official openai client:
# tests/server/test_choices.py (tiny Qwen2). Reports SKIP(no-venv-server)
# without .venv-server (tests/server/run_tests.sh). Arguments: VLM MAKE_TINY SOURCE_DIR.
exec bash "$3/tests/server/run_tests.sh" "$1" "$3" test_choices
