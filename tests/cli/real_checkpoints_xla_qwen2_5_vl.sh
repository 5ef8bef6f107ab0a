#!/usr/bin/env bash
# real_checkpoints.sh on the xla backend for Qwen2.5-VL: the M-RoPE text
# decoder and the windowed vision tower compiled by IREE into a temporary
# cache. Arguments: VLM MAKE_TINY SOURCE_DIR.
VLM_TEST_BACKEND=xla VLM_TEST_FAMILIES="qwen2_5_vl" exec bash "$(dirname "$0")/real_checkpoints.sh" "$@"
