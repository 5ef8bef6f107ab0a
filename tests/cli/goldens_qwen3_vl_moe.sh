#!/usr/bin/env bash
# goldens.sh for Qwen3-VL-MoE (the moe op's routing per token through the
# sparse layers, a dense layer between them, DeepStack), in both expert
# layouts (qwen3_vl_moe: Transformers 5.23's; qwen3_vl_moe_hub: the hub's).
# Arguments: VLM MAKE_TINY SOURCE_DIR.
VLM_GOLDEN_FAMILIES="qwen3_vl_moe qwen3_vl_moe_hub" exec bash "$(dirname "$0")/goldens.sh" "$@"
