#!/usr/bin/env bash
# goldens.sh for the llava families (their image cases are the slow ones;
# a ctest entry of their own keeps each inside the timeout under ASan).
# Arguments: VLM MAKE_TINY SOURCE_DIR.
VLM_GOLDEN_FAMILIES="llava llava_realtok llava_v4" exec bash "$(dirname "$0")/goldens.sh" "$@"
