#!/usr/bin/env bash
# vLLM's extension fields, logit_bias, echo and the unknown-field policy
# through `vlm serve` with the official openai client:
# tests/server/test_fields.py (tiny Qwen3 with the real tokenizer, tiny
# LLaVA). Reports SKIP(no-venv-server) without .venv-server
# (tests/server/run_tests.sh). Arguments: VLM MAKE_TINY SOURCE_DIR.
exec bash "$3/tests/server/run_tests.sh" "$1" "$3" test_fields
