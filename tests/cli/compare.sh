#!/usr/bin/env bash
# End-to-end tests of `vlm compare` on the goldens the oracle harness wrote
# with Hugging Face Transformers (tests/goldens, tests/models), including
# deliberately corrupted copies that must fail naming the stage.
# Arguments: VLM MAKE_TINY SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"

goldens=$source_dir/tests/goldens
models=$source_dir/tests/models

check compare_help run 0 compare --help
check missing_golden_flag bash -c "run 2 compare && err_has '--golden CASE_DIR is required'"
check missing_case_directory bash -c "run 1 compare --golden '$work/nowhere' && err_has 'manifest.json'"
check unknown_backend_is_a_usage_error bash -c "run 2 compare --golden '$work/nowhere' --backend tpu && err_has \"unknown backend 'tpu' (cpu or xla)\""
check backend_needs_a_name bash -c "run 2 compare --golden '$work/nowhere' --backend && err_has '--backend needs cpu or xla'"
check help_names_the_backends bash -c "run 0 compare --help && out_has '--backend NAME' && out_has 'inside a compiled module'"

# Every checked-in case: the stages vlm implements match, the rest are listed.
case_count=0
for case_dir in "$goldens"/{llama,qwen2,llava}/*/; do
  [ -f "$case_dir/manifest.json" ] || continue
  case_count=$((case_count + 1))
  name=$(basename "$(dirname "$case_dir")")/$(basename "$case_dir")
  if golden_reads_fixtures "$case_dir" && ! have_fixtures "golden_$name"; then continue; fi
  check "golden_$name" bash -c "run 0 compare --golden '$case_dir' && out_has 'all ' \
    && grep -qE '^checkpoint +[a-z0-9]+ .* match \\([0-9]+ tensors\\)' '$work/out' \
    && out_has 'not implemented yet'"
done
check goldens_are_present test "$case_count" -ge 9
have_fixtures json_report && check json_report bash -c "run 0 compare --golden '$goldens/llava/one_image' --json && python3 -c '
import json,sys
r=json.load(open(sys.argv[1]))
assert r[\"first_divergent_stage\"] is None and r[\"matched\"]>=1
stages={s[\"name\"]:s for s in r[\"stages\"]}
assert stages[\"checkpoint\"][\"result\"]==\"match\" and stages[\"checkpoint\"][\"compared\"]>20
assert stages[\"projector\"][\"result\"]==\"match\" and stages[\"vision_encoder\"][\"result\"]==\"match\"
' '$work/out'"
# A golden naming a stage vlm does not have yet.
cp -r "$goldens/llama/chat" "$work/future"
python3 - "$work/future/manifest.json" <<'PY'
import json, sys
manifest = json.load(open(sys.argv[1]))
manifest["stages"].append({"name": "stage_from_the_future"})
json.dump(manifest, open(sys.argv[1], "w"))
PY
check require_all_fails_while_stages_are_missing bash -c \
  "run 1 compare --model '$goldens/../models/llama' --golden '$work/future' --require-all && err_has 'not implemented yet'"
check require_all_passes_when_every_stage_exists bash -c \
  "run 0 compare --golden '$goldens/llama/chat' --require-all && out_has 'all 9 stages match (0 not implemented yet)'"

# A corrupted golden: one digit of one parameter's digest flipped.
cp -r "$goldens/qwen2/chat" "$work/corrupt_golden"
python3 - "$work/corrupt_golden/manifest.json" <<'PY'
import json, sys
path = sys.argv[1]
manifest = json.load(open(path))
parameter = manifest["stages"][0]["parameters"][3]
parameter["sha256"] = ("1" if parameter["sha256"][0] == "0" else "0") + parameter["sha256"][1:]
json.dump(manifest, open(path, "w"))
PY
check corrupted_golden_names_the_stage bash -c "run 1 compare --golden '$work/corrupt_golden' \
  --model '$models/qwen2' && out_has 'first divergent stage: checkpoint' \
  && err_has 'first divergent stage: checkpoint'"

# A corrupted checkpoint: one weight changed by one bit in its last byte.
cp -r "$models/llama" "$work/corrupt_model"
python3 - "$work/corrupt_model/model.safetensors" <<'PY'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[-1] ^= 1
open(path, "wb").write(data)
PY
check corrupted_weights_name_the_stage bash -c "run 1 compare --golden '$goldens/llama/chat' \
  --model '$work/corrupt_model' && out_has 'first divergent stage: checkpoint' && out_has 'model.norm.weight'"

# The bf16 golden recorded the weights rounded to bfloat16: vlm rounds the same way.
check bf16_golden_checkpoint bash -c "run 0 compare --golden '$goldens/llava/one_image_bf16' && out_has 'bfloat16'"

finish
