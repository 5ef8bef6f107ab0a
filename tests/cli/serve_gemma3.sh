#!/usr/bin/env bash
# `vlm serve` with the tiny Gemma 3 on cpu (pan-and-scan too) and xla
# (tests/server/test_gemma3.py: streaming every golden case, 16 mixed
# requests on 4 slots each equal to the request alone). Reports
# SKIP(no-venv-server) without .venv-server. Arguments: VLM MAKE_TINY SOURCE_DIR.
exec bash "$3/tests/server/run_tests.sh" "$1" "$3" test_gemma3
