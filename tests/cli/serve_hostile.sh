#!/usr/bin/env bash
# `vlm serve` under floods (tests/server/test_hostile.py): half-sent
# connections from one and from many addresses, trickled headers, bodies
# and keep-alive requests, while health checks and normal requests must
# keep being answered and the server must never exit. Loopback only, bounded
# in time and count. SKIPS without .venv-server (see
# tests/server/run_tests.sh). Arguments: VLM MAKE_TINY SOURCE_DIR.
exec bash "$3/tests/server/run_tests.sh" "$1" "$3" test_hostile
