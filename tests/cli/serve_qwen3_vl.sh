#!/usr/bin/env bash
# `vlm serve` with the tiny Qwen3-VL on cpu and xla
# (tests/server/test_qwen3_vl.py: streaming every golden case, 16 mixed
# requests on 4 slots each equal to the request alone: DeepStack's layer
# features are per slot). Reports SKIP(no-venv-server) without
# .venv-server. Arguments: VLM MAKE_TINY SOURCE_DIR.
exec bash "$3/tests/server/run_tests.sh" "$1" "$3" test_qwen3_vl
