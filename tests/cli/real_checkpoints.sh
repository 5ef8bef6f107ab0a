#!/usr/bin/env bash
# `vlm run` end to end on the oracle models that have a real tokenizer (saved
# by Transformers as published checkpoints are) and on the families that came
# with them (mistral, qwen3, gemma3_text, gemma3, and the 4.x layouts): the
# prompt length, greedy tokens and text must be Transformers' own. The
# llava_realtok cases are the LLaVA-1.5 checkpoint of issue 14: BOS from the
# post-processor through the processor's flow, and Metaspace "always" after
# <image>. Arguments: VLM MAKE_TINY SOURCE_DIR.
#
# VLM_TEST_BACKEND=xla runs the same cases on the xla backend, and
# VLM_TEST_FAMILIES picks the families (real_checkpoints_xla*.sh split them:
# compiling each model takes tens of seconds).
source "$(dirname "$0")/lib.sh" "$@"

backend=${VLM_TEST_BACKEND:-cpu}
backend_arguments=()
fixtures=$fixtures_root

if [ "$backend" = xla ]; then
  if [ ! -x "$source_dir/.venv-xla/bin/iree-compile" ]; then
    skip no-venv-xla every_case "$source_dir/.venv-xla has no iree-compile (tools/xla/requirements.txt)"
    finish
  fi
  if "$vlm" run --backend xla --model /nonexistent --prompt x 2>&1 | grep -q "built without the xla runtime"; then
    skip no-xla-runtime every_case "this vlm was built without the xla runtime (python3.11-embed)"
    finish
  fi
  export VLM_XLA_CACHE="$work/xla-cache"
  # Under ASan: the embedded CPython keeps interpreter-lifetime allocations
  # by design (see the file); vlm's own stay checked.
  export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$source_dir/tests/lsan_xla.supp:print_suppressions=0
  backend_arguments=(--backend xla)
fi

# model_dir NAME: an openable copy of tests/models/NAME (its packed tokenizer
# unpacked) in $work; status 77 when it needs ../shared/fixtures.
model_dir() {
  local out="$work/models/$1"
  if [ ! -f "$out/tokenizer.json" ]; then
    python3 "$source_dir/tools/oracle/tokenizer_files.py" unpack "$source_dir/tests/models/$1" "$out" \
      --fixtures "$fixtures/tokenizers" 2>"$work/unpack" || return $?
  fi
  echo "$out"
}

# matches_golden MODEL_DIR MANIFEST: the case's messages (or raw prompt) and
# images through `vlm run`, greedily, for as many tokens as the golden has.
matches_golden() {
  python3 - "$2" "$fixtures/media/images" "$backend" >"$work/arguments" <<'PY' || return 1
import json, sys
manifest = json.load(open(sys.argv[1]))
arguments = []
content = manifest["messages"][-1]["content"] if manifest.get("messages") else None
types = [p["type"] for p in content] if isinstance(content, list) else []
if isinstance(content, str):
    arguments += ["--prompt", content]
elif content is not None and types == sorted(types, key=lambda t: t != "image"):
    arguments += ["--prompt", " ".join(p["text"] for p in content if p["type"] == "text")]
else:
    # No chat `vlm run` spells (text before an image): the rendered prompt,
    # its placeholders expanded as in a chat; the raw flow adds the BOS the
    # template wrote (Gemma's <bos>) itself.
    prompt = manifest["prompt"]
    if content is not None and prompt.startswith("<bos>"):
        prompt = prompt[len("<bos>"):]
    arguments += ["--raw", "--prompt", prompt]
if manifest.get("processor_kwargs"):
    arguments += ["--processor-kwargs", json.dumps(manifest["processor_kwargs"])]
# A case prefilled in chunks smaller than an image block (Gemma 3): on cpu
# the engine stretches the chunk over the block; a compiled xla chunk must
# hold the block, so xla prefills it in its default chunk.
if manifest.get("vlm_prefill_chunk") and sys.argv[3] == "cpu":
    arguments += ["--prefill-chunk", str(manifest["vlm_prefill_chunk"])]
for image in manifest.get("images", []):
    arguments += ["--image", sys.argv[2] + "/" + image]
greedy = [s for s in manifest["stages"] if s["name"] == "greedy_tokens"][0]
arguments += ["--max-tokens", str(len(greedy["tokens"]))]
# The context sizes the compiled xla modules (and their compile time): 128
# for the text cases, 1024 for the image ones.
needed = [s for s in manifest["stages"] if s["name"] == "input_ids"][0]["shape"][-1] + len(greedy["tokens"])
arguments += ["--context", "128" if needed <= 128 else "1024"]
print("\0".join(arguments), end="")
PY
  local arguments=()
  while IFS= read -r -d '' argument; do arguments+=("$argument"); done < <(cat "$work/arguments"; printf '\0')
  "$vlm" run --model "$1" "${arguments[@]}" --temperature 0 --json "${backend_arguments[@]}" \
    >"$work/out" 2>"$work/err" || { cat "$work/err"; return 1; }
  # An encoder the xla backend can run must run there, not silently on the host.
  if grep -q "host fallback" "$work/err"; then cat "$work/err"; return 1; fi
  python3 - "$2" "$work/out" <<'PY'
import json, sys
golden = json.load(open(sys.argv[1]))
result = json.load(open(sys.argv[2]))
stages = {s["name"]: s for s in golden["stages"]}
problems = []
if result["usage"]["prompt_tokens"] != stages["input_ids"]["shape"][-1]:
    problems.append(f"prompt_tokens {result['usage']['prompt_tokens']} != {stages['input_ids']['shape'][-1]}")
if result["tokens"] != stages["greedy_tokens"]["tokens"]:
    problems.append(f"tokens {result['tokens']} != {stages['greedy_tokens']['tokens']}")
if result["text"] != stages["text"]["text"]:
    problems.append(f"text {result['text']!r} != {stages['text']['text']!r}")
for problem in problems:
    print("  " + problem)
sys.exit(1 if problems else 0)
PY
}

families=${VLM_TEST_FAMILIES:-llama_realtok qwen2_realtok llava_realtok llava_v4 mistral qwen3 gemma3_text gemma3 gemma3_v4 qwen2_vl qwen2_vl_v4 qwen2_5_vl qwen3_vl qwen3_vl_moe qwen3_vl_moe_hub}
for family in $families; do
  for manifest in "$source_dir/tests/goldens/$family"/*/manifest.json; do
    # A refusal case (vlm must refuse what Transformers refuses) is a
    # request `vlm run` cannot spell (placeholders in the text); vlm compare
    # proves it (goldens.sh).
    grep -q '"name": "refusal"' "$manifest" && continue
    name="${backend}_${family}_$(basename "$(dirname "$manifest")")"
    if python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])).get("images") else 1)' "$manifest"; then
      have_fixtures "$name" || continue
    fi
    model=$(model_dir "$family")
    status=$?
    if [ "$status" -eq 77 ]; then
      skip no-fixtures "$name" "$(cat "$work/unpack")"
      continue
    elif [ "$status" -ne 0 ]; then
      cat "$work/unpack"
      check "$name" false
      continue
    fi
    check "$name" matches_golden "$model" "$manifest"
  done
done

# vlm tokenize --chat --ids: the ids the model's flow gives the rendered
# prompt are the golden's input_ids (text-only chats; the processor flow adds
# LLaVA's BOS, Gemma 3's template writes its own).
chat_ids_match() { # chat_ids_match MODEL_DIR CASE_DIR
  python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["messages"]))' \
    "$2/manifest.json" >"$work/messages.json"
  "$vlm" tokenize --model "$1" --chat "$work/messages.json" --add-generation-prompt --ids >"$work/out" \
    2>"$work/err" || { cat "$work/err"; return 1; }
  python3 - "$2/tensors.safetensors" "$work/out" <<'PY'
import json, struct, sys
data = open(sys.argv[1], "rb").read()
size = struct.unpack("<Q", data[:8])[0]
entry = json.loads(data[8:8 + size])["input_ids"]
begin, end = entry["data_offsets"]
golden = list(struct.unpack(f"<{(end - begin) // 8}q", data[8 + size + begin:8 + size + end]))
ours = json.load(open(sys.argv[2]))
if ours != golden:
    print(f"  ids {ours} != golden {golden}")
    sys.exit(1)
PY
}
# xla: a compiled prefill chunk shorter than an image block (Gemma 3's 16
# soft tokens attend to each other) cannot run it; refused at admission,
# naming the chunk the request needs.
if [ "$backend" = xla ] && case " $families " in *" gemma3 "*) true ;; *) false ;; esac; then
  model=$(model_dir gemma3)
  status=$?
  if [ "$status" -eq 77 ]; then skip no-fixtures xla_gemma3_block_over_chunk_refused "$(cat "$work/unpack")"
  elif have_fixtures xla_gemma3_block_over_chunk_refused; then
    check xla_gemma3_block_over_chunk_refused refuses 1 "use a prefill chunk of at least 16" run --model "$model" \
      --backend xla --context 128 --prefill-chunk 8 --image "$fixtures/media/images/chelsea.png" \
      --prompt "What is in this picture?" --max-tokens 2
  fi
fi

if [ "$backend" = cpu ]; then
  for case in llava_realtok/text_only mistral/chat qwen3/chat gemma3_text/chat gemma3/text_only; do
    family=${case%/*}
    model=$(model_dir "$family")
    status=$?
    if [ "$status" -eq 77 ]; then skip no-fixtures "chat_ids_$family" "$(cat "$work/unpack")"; continue; fi
    check "chat_ids_${case/\//_}" chat_ids_match "$model" "$source_dir/tests/goldens/$case"
  done
  # Qwen2-VL: a prompt over the context (81 tokens with the image's 54) is
  # refused at admission, before the vision tower or decoder runs; the bounded
  # tokenizer stops once the text passes the 7 tokens the capacity leaves it.
  model=$(model_dir qwen2_vl)
  status=$?
  if [ "$status" -eq 77 ]; then skip no-fixtures qwen2_vl_over_context_refused "$(cat "$work/unpack")"
  elif have_fixtures qwen2_vl_over_context_refused; then
    check qwen2_vl_over_context_refused refuses 1 "the prompt has more than the 7 tokens the capacity of 64 leaves it" run --model "$model" --context 64 \
      --image "$fixtures/media/images/chelsea.png" --prompt "What is in this picture?" --max-tokens 4
  fi
  mkdir -p "$work/tokenizer_only"
  cp "$source_dir/tests/models/llama/tokenizer.json" "$source_dir/tests/models/llama/tokenizer_config.json" \
    "$work/tokenizer_only/"
  echo '[{"role": "user", "content": "Hi"}]' >"$work/hi.json"
  check chat_ids_need_config_json refuses 1 "config.json" \
    tokenize --model "$work/tokenizer_only" --chat "$work/hi.json" --ids
fi

finish
