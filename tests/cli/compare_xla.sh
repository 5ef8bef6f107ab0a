#!/usr/bin/env bash
# `vlm compare --backend xla`: golden cases with every module-boundary stage
# computed by the xla backend's compiled modules (encoder outputs, prefill
# logits, KV, greedy tokens, text), each matching at the golden's own
# tolerance, the stages inside a compiled module listed as such (never as
# matches), and no encoder the xla backend can run left on the host. Then
# that a wrong value fails naming the first divergent stage: a golden KV
# value nudged, and a tolerance no xla encoder output meets.
#
# CI runs one case of each kind (IREE compiles each model's modules, tens
# of seconds each on a busy 2-core host): text (qwen2/chat) and speech
# (phi4_multimodal/speech) here, then the two failure checks;
# compare_xla_images.sh the image cases (image + MoE decoder + DeepStack:
# qwen3_vl_moe/one_image; attention blocks: gemma3/one_image). Every case
# of every family the xla backend runs:
#   VLM_XLA_COMPARE_CASES=all bash tests/cli/compare_xla.sh build/vlm build/vlm-make-tiny-model .
# (or a list of FAMILY/CASE: then only those, without the failure checks).
# Arguments: VLM MAKE_TINY SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"

if [ ! -x "$source_dir/.venv-xla/bin/iree-compile" ]; then
  skip no-venv-xla every_case "$source_dir/.venv-xla has no iree-compile (tools/xla/requirements.txt)"
  finish
fi
if "$vlm" compare --backend xla --golden "$source_dir/tests/goldens/qwen2/chat" --model /nonexistent 2>&1 |
    grep -q "built without the xla runtime"; then
  skip no-xla-runtime every_case "this vlm was built without the xla runtime (python3.11-embed)"
  finish
fi
export VLM_XLA_CACHE=${VLM_XLA_COMPARE_CACHE:-$work/xla-cache}
# Under ASan: the embedded CPython keeps interpreter-lifetime allocations
# by design (tests/lsan_xla.supp); vlm's own stay checked.
export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$source_dir/tests/lsan_xla.supp:print_suppressions=0

# The quantized families: the xla backend refuses quantized weights.
not_on_xla=" qwen2_awq qwen2_gptq qwen2_gptq_act "
# And the golden folders of families the xla backend refuses (`vlm families`
# lists them cpu only; each one's refusal has its own test).
not_on_xla="$not_on_xla$("$vlm" families --json | python3 -c 'import json, sys
print(" ".join(l["goldens"] for f in json.load(sys.stdin) if "xla" not in f["backends"] for l in f["layouts"]))') "
cases=${VLM_XLA_COMPARE_CASES:-qwen2/chat phi4_multimodal/speech}
if [ "$cases" = all ]; then
  cases=
  for manifest in "$source_dir"/tests/goldens/*/*/manifest.json; do
    grep -q '"format": "vlm-golden/1"' "$manifest" || continue
    family=$(basename "$(dirname "$(dirname "$manifest")")")
    case "$not_on_xla" in *" $family "*) continue ;; esac
    cases="$cases $family/$(basename "$(dirname "$manifest")")"
  done
fi

# model_for CASE_DIR: an openable copy of the case's model (its packed
# tokenizer unpacked) in $work; status 77 when that needs ../shared/fixtures.
model_for() {
  local model
  model=$(cd "$1" && cd "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["model"])' "$1/manifest.json")" && pwd)
  local out="$work/models/$(basename "$model")"
  if [ ! -f "$out/tokenizer.json" ]; then
    python3 "$source_dir/tools/oracle/tokenizer_files.py" unpack "$model" "$out" \
      --fixtures "$fixtures_root/tokenizers" 2>"$work/unpack" || return $?
  fi
  echo "$out"
}

# xla_case_matches CASE_DIR MODEL: exit 0, every stage a match or "not on
# this backend", the module-boundary stages the golden has all matched on
# xla, and no encoder on the host.
xla_case_matches() {
  "$vlm" compare --backend xla --require-all --golden "$1" --model "$2" >"$work/out" 2>"$work/err" ||
    { cat "$work/out" "$work/err"; return 1; }
  if grep -q "host fallback" "$work/err"; then cat "$work/err"; return 1; fi
  grep -q "^backend xla$" "$work/out" || { cat "$work/out"; return 1; }
  local stage
  for stage in $(python3 -c 'import json,sys; print(" ".join(s["name"] for s in json.load(open(sys.argv[1]))["stages"]))' "$1/manifest.json"); do
    case " projector deepstack_features audio_projector audio_projector_vision_speech prefill_logits kv greedy_tokens text " in
      *" $stage "*) grep -qE "^$stage +[a-z0-9]+ .* match \(.*(on xla|from xla)" "$work/out" ||
                      { echo "  $stage was not matched on xla:"; cat "$work/out"; return 1; } ;;
      *) grep -qE "^$stage +[a-z0-9]+ .* (match|not on this backend \(not computed on xla: inside a compiled module\))" "$work/out" ||
           { echo "  $stage neither matched nor is inside a compiled module:"; cat "$work/out"; return 1; } ;;
    esac
  done
  # Per-stage errors for the record (the sweep's report).
  awk '/ (match|not on this backend)/ && $1 ~ /^(projector|deepstack_features|audio_projector|audio_projector_vision_speech|prefill_logits|kv)$/ {printf "  %s %s", $1, $3} END {print ""}' "$work/out"
}

for name in $cases; do
  case_dir=$source_dir/tests/goldens/$name
  if golden_reads_fixtures "$case_dir" && ! have_fixtures "xla_golden_$name"; then continue; fi
  model=$(model_for "$case_dir")
  status=$?
  if [ "$status" -eq 77 ]; then skip no-fixtures "xla_golden_$name" "$(cat "$work/unpack")"; continue; fi
  [ "$status" -eq 0 ] || { cat "$work/unpack"; check "xla_golden_$name" false; continue; }
  started=$SECONDS
  check "xla_golden_$name" xla_case_matches "$case_dir" "$model"
  echo "     ($((SECONDS - started)) s)"
done

[ -n "${VLM_XLA_COMPARE_CASES:-}" ] && finish

# A wrong value fails naming the stage, on xla: one golden KV value nudged
# well past the tolerance (the decoder's artifact is cached from above)...
corrupt_kv_on_xla() {
  corrupt_golden_kv "$source_dir/tests/goldens/qwen2/chat" "$work/corrupt"
  "$vlm" compare --backend xla --model "$source_dir/tests/models/qwen2" --golden "$work/corrupt" >"$work/out" 2>&1
  [ $? -eq 1 ] && grep -q "first divergent stage: kv" "$work/out" && grep -qE "^kv .* diverged" "$work/out" ||
    { cat "$work/out"; return 1; }
}
check xla_corrupted_kv_is_caught corrupt_kv_on_xla

# ... and the speech projector's tolerance cut to 1e-9: the xla encoder's
# float32 output (off from Transformers' by ~1e-6) must then diverge there,
# first (the stages before it are host stages or inside the module).
tight_audio_tolerance() {
  local model
  model=$(model_for "$source_dir/tests/goldens/phi4_multimodal/speech") || return 1
  mkdir -p "$work/tight"
  cp -r "$source_dir/tests/goldens/phi4_multimodal/speech" "$work/tight/speech"
  python3 - "$work/tight/speech/manifest.json" <<'PY'
import json, sys
manifest = json.load(open(sys.argv[1]))
for stage in manifest["stages"]:
    if stage["name"] == "audio_projector":
        stage["tolerance"] = {"max_abs": 1e-9, "max_rel": 0}
json.dump(manifest, open(sys.argv[1], "w"))
PY
  VLM_FIXTURES_DIR=$fixtures_root "$vlm" compare --backend xla --model "$model" --golden "$work/tight/speech" \
    >"$work/out" 2>&1
  [ $? -eq 1 ] && grep -q "first divergent stage: audio_projector:" "$work/out" ||
    { cat "$work/out"; return 1; }
}
if have_fixtures xla_tight_audio_tolerance; then check xla_tight_audio_tolerance tight_audio_tolerance; fi

finish
