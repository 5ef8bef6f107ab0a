#!/usr/bin/env bash
# goldens.sh for Youtu-LLM (multi-head latent attention: the latent KV
# layout in the kv stage, the absorbed form's logits and greedy tokens).
# Arguments: VLM MAKE_TINY SOURCE_DIR.
VLM_GOLDEN_FAMILIES="youtu" exec bash "$(dirname "$0")/goldens.sh" "$@"
