#!/usr/bin/env bash
# real_checkpoints.sh on the xla backend for Qwen3-VL-MoE: `vlm run` gives
# Transformers' greedy tokens and text with the moe op lowered (the chosen
# experts gathered in decode, every expert under a combine matrix in
# prefill), in both expert layouts. Arguments: VLM MAKE_TINY SOURCE_DIR.
VLM_TEST_BACKEND=xla VLM_TEST_FAMILIES="qwen3_vl_moe qwen3_vl_moe_hub" exec bash "$(dirname "$0")/real_checkpoints.sh" "$@"
