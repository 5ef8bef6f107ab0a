#!/usr/bin/env bash
# `vlm serve` with the tiny Qwen3-VL-MoE on cpu and xla
# (tests/server/test_qwen3_vl_moe.py: streaming every golden case, 16 mixed
# requests on 4 slots each equal to the request alone: a row's experts do
# not depend on the rows batched with it). Reports SKIP(no-venv-server)
# without .venv-server. Arguments: VLM MAKE_TINY SOURCE_DIR.
exec bash "$3/tests/server/run_tests.sh" "$1" "$3" test_qwen3_vl_moe
