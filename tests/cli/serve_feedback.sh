#!/usr/bin/env bash
# Feedback on long work (issue 29): tests/server/test_feedback.py checks
# return_progress's prompt_progress chunks (both endpoints, the OpenAI
# client), the timings in answers, the info-level log (UTC times, what
# loading holds, a line per prefill chunk in serve and run, every 4xx with
# its reason) and --log-format json. Reports SKIP(no-venv-server) without
# .venv-server (see tests/server/run_tests.sh). Arguments: VLM MAKE_TINY SOURCE_DIR.
exec bash "$3/tests/server/run_tests.sh" "$1" "$3" test_feedback
