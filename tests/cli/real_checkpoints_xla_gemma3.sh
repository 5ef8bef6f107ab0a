#!/usr/bin/env bash
# real_checkpoints.sh on the xla backend for Gemma 3 in both checkpoint
# layouts: the SigLIP tower and pooled projector per image-count bucket and
# the decoder's masked prefill (each image a bidirectional block) compiled
# by IREE into a temporary cache. Arguments: VLM MAKE_TINY SOURCE_DIR.
VLM_TEST_BACKEND=xla VLM_TEST_FAMILIES="gemma3 gemma3_v4" \
  exec bash "$(dirname "$0")/real_checkpoints.sh" "$@"
