#!/usr/bin/env bash
# real_checkpoints.sh on the xla backend for the real-tokenizer variants of
# llama, qwen2 and llava and the 4.x layouts (the text decoders compiled by
# IREE into a temporary cache, the CLIP tower too).
# Arguments: VLM MAKE_TINY SOURCE_DIR.
VLM_TEST_BACKEND=xla VLM_TEST_FAMILIES="llama_realtok qwen2_realtok llava_realtok llava_v4" \
  exec bash "$(dirname "$0")/real_checkpoints.sh" "$@"
