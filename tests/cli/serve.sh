#!/usr/bin/env bash
# `vlm serve` end to end: tests/server/test_server.py drives the server with
# the official OpenAI Python client and raw HTTP (streaming, images, errors,
# auth, disconnects, graceful shutdown, a mixed concurrent load whose outputs
# must equal each request run alone); tests/server/test_http.py replays issue
# 13's hostile requests one by one and checks the HTTP-layer rules (content
# type, Host/Origin allow-lists, request IDs, access log, readiness,
# --request-timeout). The floods are serve_hostile.sh's. Reports
# SKIP(no-venv-server) without .venv-server (see tests/server/run_tests.sh). Arguments: VLM MAKE_TINY SOURCE_DIR.
exec bash "$3/tests/server/run_tests.sh" "$1" "$3" test_server test_http
