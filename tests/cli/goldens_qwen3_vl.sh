#!/usr/bin/env bash
# goldens.sh for Qwen3-VL (DeepStack features into the first decoder
# layers, interleaved M-RoPE, a Qwen3 decoder; its image cases are slow
# under ASan, so a ctest entry of their own).
# Arguments: VLM MAKE_TINY SOURCE_DIR.
VLM_GOLDEN_FAMILIES="qwen3_vl" exec bash "$(dirname "$0")/goldens.sh" "$@"
