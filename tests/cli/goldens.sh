#!/usr/bin/env bash
# Every checked-in golden case, through `vlm compare`: each stage vlm
# implements must match (greedy tokens exactly), and a golden with one KV
# value changed must fail naming the "kv" stage. Arguments: VLM MAKE_TINY SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"

case_matches() { # case_matches DIR MODEL: every stage of the golden is implemented and matches
  "$vlm" compare --golden "$1" --model "$2" >"$work/out" 2>&1 || { cat "$work/out"; return 1; }
  local stages
  stages=$(python3 -c 'import json,sys; print(" ".join(s["name"] for s in json.load(open(sys.argv[1]))["stages"]))' "$1/manifest.json")
  # A decoder case proves at least these; an image case also the tower and
  # projector (a refusal case only that vlm refuses what Transformers does).
  case " $stages " in
    *" refusal "*) ;;
    *) for stage in checkpoint input_ids position_ids input_embeddings prefill_logits kv greedy_tokens text; do
         case " $stages " in *" $stage "*) ;; *) echo "  the golden has no $stage stage"; return 1;; esac
       done ;;
  esac
  for stage in $stages; do
    grep -qE "^$stage +[a-z0-9]+ .* match" "$work/out" || { echo "  $stage did not match:"; cat "$work/out"; return 1; }
  done
}

# Every oracle case of every family, split over ctest entries so each stays
# inside ctest's timeout under the sanitizers: goldens_<group>.sh run the
# families of VLM_GOLDEN_FAMILIES; this script runs every other family (so a
# new one is never left out) and the corruption check. Which families the
# goldens_<group>.sh entries run is read from them, so the two cannot drift.
# Models with a real tokenizer keep it packed (tools/oracle/tokenizer_files.py):
# unpacked here into a scratch model directory; one packed as a patch against
# ../shared/fixtures is skipped (and reported) on a checkout without them.
elsewhere=" $(sed -n 's/^VLM_GOLDEN_FAMILIES="\([^"]*\)".*/\1/p' "$(dirname "$0")"/goldens_*.sh | tr '\n' ' ') "
declare -A found # golden cases found per family (run or skipped)
found_total=0
for manifest in "$source_dir"/tests/goldens/*/*/manifest.json; do
  grep -q '"format": "vlm-golden/1"' "$manifest" || continue
  case_dir=$(dirname "$manifest")
  family=$(basename "$(dirname "$case_dir")")
  if [ -n "${VLM_GOLDEN_FAMILIES:-}" ]; then
    case " $VLM_GOLDEN_FAMILIES " in *" $family "*) ;; *) continue ;; esac
  else
    case "$elsewhere" in *" $family "*) continue ;; esac
  fi
  name=$family/$(basename "$case_dir")
  found[$family]=$((${found[$family]:-0} + 1))
  found_total=$((found_total + 1))
  model=$(cd "$case_dir" && cd "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["model"])' "$manifest")" && pwd)
  unpacked="$work/models/$(basename "$model")"
  if [ ! -d "$unpacked" ]; then
    python3 "$source_dir/tools/oracle/tokenizer_files.py" unpack "$model" "$unpacked" --fixtures "$fixtures_root/tokenizers" 2>"$work/unpack"
    status=$?
    if [ "$status" -eq 77 ]; then
      rm -rf "$unpacked"
      skip no-fixtures "golden_$name" "$(cat "$work/unpack")"
      continue
    elif [ "$status" -ne 0 ]; then
      cat "$work/unpack"
    fi
  elif [ ! -f "$unpacked/tokenizer.json" ]; then
    skip no-fixtures "golden_$name" "its model's tokenizer did not unpack (see above)"
    continue
  fi
  if golden_reads_fixtures "$case_dir" && ! have_fixtures "golden_$name"; then continue; fi
  check "golden_$name" case_matches "$case_dir" "$unpacked"
done

# An entry that runs no case proves nothing: a renamed or emptied golden
# folder fails here instead of passing with "0 passed" (as compare.sh
# counts its cases).
has_cases() { # has_cases COUNT WHAT
  [ "$1" -gt 0 ] || { echo "  no golden case found for $2 under $source_dir/tests/goldens"; return 1; }
}
if [ -n "${VLM_GOLDEN_FAMILIES:-}" ]; then
  for family in $VLM_GOLDEN_FAMILIES; do
    check "goldens_found_$family" has_cases "${found[$family]:-0}" "$family"
  done
  finish
fi
check goldens_found has_cases "$found_total" "the families no goldens_<group>.sh runs"

# A corrupted golden: one KV value nudged well past the tolerance.
corrupt_kv() {
  corrupt_golden_kv "$source_dir/tests/goldens/qwen2/chat" "$work/corrupt"
  "$vlm" compare --model "$source_dir/tests/models/qwen2" --golden "$work/corrupt" >"$work/out" 2>&1
  [ $? -eq 1 ] && grep -q "first divergent stage: kv" "$work/out" || { cat "$work/out"; return 1; }
}
check corrupted_kv_golden_is_caught corrupt_kv

finish
