#!/usr/bin/env bash
# goldens.sh for Gemma 3 (SigLIP tower, bidirectional image blocks; its
# image cases are slow under ASan, so a ctest entry of their own).
# Arguments: VLM MAKE_TINY SOURCE_DIR.
VLM_GOLDEN_FAMILIES="gemma3 gemma3_v4" exec bash "$(dirname "$0")/goldens.sh" "$@"
