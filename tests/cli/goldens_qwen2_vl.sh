#!/usr/bin/env bash
# goldens.sh for the qwen2_vl families (their image cases are the slow ones;
# a ctest entry of their own keeps each inside the timeout under ASan).
# Arguments: VLM MAKE_TINY SOURCE_DIR.
VLM_GOLDEN_FAMILIES="qwen2_vl qwen2_vl_v4" exec bash "$(dirname "$0")/goldens.sh" "$@"
