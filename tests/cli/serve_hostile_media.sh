#!/usr/bin/env bash
# `vlm serve` under media and prompts built to cost (issue 27;
# tests/server/test_hostile_media.py): audio clips counted and refused from
# their headers, concurrent audio within --media-memory-mb, a 4 MiB prompt
# refused before it is tokenized. Loopback only, about 15 s. SKIPS without
# .venv-server (see tests/server/run_tests.sh) or ../shared/fixtures.
# Arguments: VLM MAKE_TINY SOURCE_DIR.
exec bash "$3/tests/server/run_tests.sh" "$1" "$3" test_hostile_media
