#!/usr/bin/env bash
# `vlm serve`'s prefix and encoder caches with the tiny LLaVA and Qwen2-VL:
# tests/server/test_cache.py (a two-turn image conversation re-encodes
# nothing and prefills only the new turn; mixed requests equal an uncached
# server's; small budgets hold). Reports SKIP(no-venv-server) without
# .venv-server (tests/server/run_tests.sh).
# Arguments: VLM MAKE_TINY SOURCE_DIR.
exec bash "$3/tests/server/run_tests.sh" "$1" "$3" test_cache
