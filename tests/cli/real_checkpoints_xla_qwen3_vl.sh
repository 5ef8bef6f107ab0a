#!/usr/bin/env bash
# real_checkpoints.sh on the xla backend for Qwen3-VL: the interleaved
# M-RoPE decoder with its DeepStack layer features and the tower (resampled
# position table, DeepStack mergers) compiled by IREE into a temporary
# cache. Arguments: VLM MAKE_TINY SOURCE_DIR.
VLM_TEST_BACKEND=xla VLM_TEST_FAMILIES="qwen3_vl" exec bash "$(dirname "$0")/real_checkpoints.sh" "$@"
