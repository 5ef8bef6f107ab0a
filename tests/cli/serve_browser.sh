#!/usr/bin/env bash
# The chat page at / in a real browser: tests/server/test_browser.py drives
# Debian's chromium through chromium-driver with selenium (pinned in
# tests/server/requirements-browser.txt, installed into .venv-browser by
# scripts/test.sh) against a `vlm serve` of the tiny LLaVA on loopback: a
# text message, images picked and dropped, a bad image's API error, a long
# streamed reply cancelled with Stop, and --api-key; then (issue 29) a
# scripted tiny Qwen2 that writes markdown with a <script> (shown as text),
# conversations kept across reloads (rename, export, delete), regenerate and
# edit-last, the sampler settings, a long prefill's progress, and audio
# clips with the tiny Phi-4-multimodal. Screenshots land in
# BUILD_DIR/artifacts/ (next to the vlm binary; VLM_ARTIFACTS_DIR
# overrides). Reports SKIP(no-venv-browser) without the venv and
# SKIP(no-chromium) without the browser. Arguments: VLM MAKE_TINY SOURCE_DIR.
VLM_TEST_VENV=.venv-browser VLM_TEST_REQUIREMENTS=tests/server/requirements-browser.txt \
  exec bash "$3/tests/server/run_tests.sh" "$1" "$3" test_browser
