#!/usr/bin/env bash
# `vlm serve` with the tiny Phi-4-multimodal on cpu: tests/server/test_phi4_multimodal.py
# (and --backend xla) streams its base-model golden cases (LongRoPE past the switch in chunked
# prefill, and the cache reset of a generation crossing it) and 12 requests
# on 4 slots (each equal to the request alone), and its image cases (image_url
# parts, streamed and not), the encoder cache keeping the vision tower's causal and
# bidirectional modes apart, and image and text requests mixed on 4 slots, on both.
# Reports SKIP(no-venv-server)
# without .venv-server (tests/server/run_tests.sh). Arguments: VLM MAKE_TINY SOURCE_DIR.
exec bash "$3/tests/server/run_tests.sh" "$1" "$3" test_phi4_multimodal
