#!/usr/bin/env bash
# `vlm serve` against hostile HTTP, round two (tests/server/test_hostile_http.py,
# issue 27): strict headers (Content-Length with Transfer-Encoding, duplicate
# Host, bad names, Content-Encoding, charsets, control bytes in the key),
# ignored fields' types, nosniff/no-store, a 300-connection keep-alive flood
# from 24 addresses, and 16 unfinished 60 MB bodies within the body budget.
# Loopback only. SKIPS without .venv-server (see tests/server/run_tests.sh).
# Arguments: VLM MAKE_TINY SOURCE_DIR.
exec bash "$3/tests/server/run_tests.sh" "$1" "$3" test_hostile_http
