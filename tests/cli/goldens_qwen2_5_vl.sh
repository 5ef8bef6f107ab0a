#!/usr/bin/env bash
# goldens.sh for Qwen2.5-VL (windowed vision attention; its image cases
# are slow under ASan, so a ctest entry of their own).
# Arguments: VLM MAKE_TINY SOURCE_DIR.
VLM_GOLDEN_FAMILIES="qwen2_5_vl" exec bash "$(dirname "$0")/goldens.sh" "$@"
