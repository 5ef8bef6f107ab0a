#!/usr/bin/env bash
# The tiny Youtu-LLM (tests/models/youtu: multi-head latent attention, its
# cache the latent) on cpu: both attention forms against Transformers'
# goldens (the absorbed form's kv stage is goldens_youtu.sh's), `vlm run`
# giving each golden's greedy tokens and text, the KV bytes per token
# `vlm inspect` reports for each form, and `--backend xla` refusing the
# family by name. Arguments: VLM MAKE_TINY SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"
goldens="$source_dir/tests/goldens/youtu"

# form_matches FORM CASE: compare in FORM (absorbed, expanded): logits,
# greedy tokens and text match; the kv stage matches in the absorbed form
# and, expanded (a cache of heads x K and V, not the latent), differs in
# size only.
form_matches() {
  local expanded=0
  [ "$1" = expanded ] && expanded=1
  VLM_MLA_EXPANDED=$expanded "$vlm" compare --golden "$goldens/$2" --model "$work/model" >"$work/out" 2>&1
  for stage in prefill_logits greedy_tokens text; do
    grep -qE "^$stage +[a-z0-9]+ .* match" "$work/out" || { echo "  $stage did not match:"; cat "$work/out"; return 1; }
  done
  if [ "$expanded" = 1 ]; then
    grep -qE "^kv .*vlm produced 320 values, the golden has 112" "$work/out" || { cat "$work/out"; return 1; }
  else
    grep -qE "^kv +[a-z0-9]+ .* match" "$work/out" || { cat "$work/out"; return 1; }
  fi
}

# run_matches CASE: `vlm run` of the case's prompt gives its greedy tokens and text.
run_matches() {
  local manifest="$goldens/$1/manifest.json" prompt_args=()
  python3 - "$manifest" >"$work/args" <<'PY' || return 1
import json, sys
m = json.load(open(sys.argv[1]))
tokens = [s for s in m["stages"] if s["name"] == "greedy_tokens"][0]["tokens"]
print(len(tokens))
if m.get("messages"):
    print("--prompt"); print(m["messages"][-1]["content"])
else:
    print("--raw"); print("--prompt"); print(m["prompt"])
PY
  mapfile -t prompt_args <"$work/args"
  local count=${prompt_args[0]}
  "$vlm" run --model "$work/model" "${prompt_args[@]:1}" --max-tokens "$count" --temperature 0 \
    --json >"$work/out" 2>"$work/err" || { cat "$work/err"; return 1; }
  python3 - "$manifest" "$work/out" <<'PY'
import json, sys
golden = json.load(open(sys.argv[1]))
result = json.load(open(sys.argv[2]))
stages = {s["name"]: s for s in golden["stages"]}
problems = []
if result["tokens"] != stages["greedy_tokens"]["tokens"]:
    problems.append(f"tokens {result['tokens']} != {stages['greedy_tokens']['tokens']}")
if result["text"] != stages["text"]["text"]:
    problems.append(f"text {result['text']!r} != {stages['text']['text']!r}")
if result["usage"]["prompt_tokens"] != stages["input_ids"]["shape"][-1]:
    problems.append(f"prompt_tokens {result['usage']['prompt_tokens']} != {stages['input_ids']['shape'][-1]}")
for problem in problems:
    print("  " + problem)
sys.exit(1 if problems else 0)
PY
}

# inspect_reports EXPANDED FRAGMENT
inspect_reports() {
  VLM_MLA_EXPANDED=$1 "$vlm" inspect --model "$work/model" >"$work/out" 2>"$work/err" || { cat "$work/err"; return 1; }
  out_has "$2"
}

if have_fixtures youtu; then
  python3 "$source_dir/tools/oracle/tokenizer_files.py" unpack "$source_dir/tests/models/youtu" "$work/model" \
    --fixtures "$fixtures_root/tokenizers" >/dev/null
  for case in chat plain chat_bf16; do
    check "absorbed_${case}_matches_transformers" form_matches absorbed "$case"
    check "expanded_${case}_matches_transformers" form_matches expanded "$case"
  done
  check run_chat_gives_golden run_matches chat
  check run_plain_gives_golden run_matches plain
  # The latent: (kv_lora_rank 10 + rope 4) a layer, 2 layers; expanded:
  # 2 heads x max(6 + 4, 5) for K and for V, 2 layers.
  check inspect_latent_bytes inspect_reports 0 "kv cache: 112 B per cached token (f32, 28 values"
  check inspect_expanded_bytes inspect_reports 1 "kv cache: 320 B per cached token (f32, 80 values"
  if "$vlm" run --backend xla --model /nonexistent --prompt x 2>&1 | grep -q "built without the xla runtime"; then
    skip no-xla-runtime xla_refuses_by_name "this vlm was built without the xla runtime (python3.11-embed)"
  else
    check xla_refuses_by_name refuses 1 "Youtu-LLM (model_type 'youtu'): the xla backend does not hold per-layer KV" \
      run --backend xla --model "$work/model" --prompt hi --max-tokens 1
    check xla_refusal_is_one_line one_line_error
  fi
fi
finish
