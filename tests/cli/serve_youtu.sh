#!/usr/bin/env bash
# `vlm serve` with the tiny Youtu-LLM on cpu (tests/server/test_youtu.py:
# streaming every golden case, 16 mixed requests on 4 slots each equal to
# the request alone). Reports SKIP(no-venv-server) without .venv-server.
# Arguments: VLM MAKE_TINY SOURCE_DIR.
exec bash "$3/tests/server/run_tests.sh" "$1" "$3" test_youtu
