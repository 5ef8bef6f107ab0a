#!/usr/bin/env bash
# compare_xla.sh for its image cases (an image + MoE decoder + DeepStack
# case, and a Gemma 3 image case with attention blocks): a ctest entry of
# their own keeps each inside the timeout under ASan on a busy 2-core host.
# Arguments: VLM MAKE_TINY SOURCE_DIR.
VLM_XLA_COMPARE_CASES="qwen3_vl_moe/one_image gemma3/one_image" exec bash "$(dirname "$0")/compare_xla.sh" "$@"
