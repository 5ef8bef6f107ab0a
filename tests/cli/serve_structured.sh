#!/usr/bin/env bash
# `vlm serve` structured outputs and tools (tests/server/test_structured.py):
# random JSON schemas validate on 4 families, json_object, refusals naming
# the keyword, forced tool calls per tool-call format, history with
# tool_calls, greedy unchanged under a grammar it satisfies. CI runs 8
# schemas per family; the full run: VLM_STRUCTURED_SCHEMAS=50. Reports
# SKIP(no-venv-server) without .venv-server. Arguments: VLM MAKE_TINY SOURCE_DIR.
exec bash "$3/tests/server/run_tests.sh" "$1" "$3" test_structured
