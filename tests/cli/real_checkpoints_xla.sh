#!/usr/bin/env bash
# real_checkpoints.sh on the xla backend for the families new with issue 14
# (the text decoders compiled by IREE into a temporary cache).
# Arguments: VLM MAKE_TINY SOURCE_DIR.
VLM_TEST_BACKEND=xla VLM_TEST_FAMILIES="mistral qwen3 gemma3_text" \
  exec bash "$(dirname "$0")/real_checkpoints.sh" "$@"
