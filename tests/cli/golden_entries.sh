#!/usr/bin/env bash
# The golden entries (goldens.sh and the goldens_<group>.sh that run it for
# some families) fail when they find no case, so a renamed or emptied golden
# folder cannot pass silently. Cheap: no case runs. Arguments: VLM MAKE_TINY
# SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"
goldens_sh="$(dirname "$0")/goldens.sh"

# entry_fails_naming NAME ENV...: goldens.sh under ENV exits 1 with "FAIL NAME".
entry_fails_naming() {
  local name=$1
  shift
  env "$@" bash "$goldens_sh" "$vlm" "$make_tiny" "$source_dir" >"$work/entry" 2>&1
  local status=$?
  [ "$status" -eq 1 ] && grep -q "^FAIL $name\$" "$work/entry" && grep -q "no golden case found" "$work/entry" \
    || { echo "  goldens.sh exited $status:"; cat "$work/entry"; return 1; }
}
check family_without_cases_fails entry_fails_naming goldens_found_no_such_family VLM_GOLDEN_FAMILIES=no_such_family
# One listed family with a case and one without: still a failure, per
# family. (qwen2_vl_v4's one case is found, then skipped without its
# fixture tokenizer, so nothing runs.)
check one_empty_family_fails entry_fails_naming goldens_found_llava_renamed \
  "VLM_GOLDEN_FAMILIES=qwen2_vl_v4 llava_renamed" VLM_FIXTURES_DIR="$work/no_fixtures"
check found_family_counts bash -c "grep -q '^ok   goldens_found_qwen2_vl_v4\$' '$work/entry' || { cat '$work/entry'; exit 1; }"

# The catch-all entry over a tree without goldens.
mkdir -p "$work/empty/tests/goldens/llama"
check catch_all_without_cases_fails bash -c "
  bash '$goldens_sh' '$vlm' '$make_tiny' '$work/empty' >'$work/entry' 2>&1
  [ \$? -eq 1 ] && grep -q '^FAIL goldens_found\$' '$work/entry' || { cat '$work/entry'; exit 1; }"

finish
