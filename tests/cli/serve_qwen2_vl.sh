#!/usr/bin/env bash
# `vlm serve` with the tiny Qwen2-VL on cpu and xla: tests/server/test_qwen2_vl.py
# streams every golden case (Transformers' greedy text) and 16 mixed text and
# image requests on 4 slots (each equal to the request alone). Reports
# SKIP(no-venv-server) without .venv-server (tests/server/run_tests.sh).
# Arguments: VLM MAKE_TINY SOURCE_DIR.
exec bash "$3/tests/server/run_tests.sh" "$1" "$3" test_qwen2_vl
