#!/usr/bin/env bash
# `vlm run` with the tiny Phi-4-multimodal (tests/models/phi4_multimodal,
# its Qwen3 tokenizer unpacked against the fixtures): the base-model golden
# cases' greedy tokens (a prompt past the LongRoPE switch, a generation
# crossing it) on cpu and on xla (--context 96: one small module compiles);
# the speech cases through `--audio FILE` (the speech adapter, the audio
# encoder; the prompt's placeholder as the string template gets it) on
# cpu and xla; the image cases through the chat template (`--image` and
# the case's message, whose text holds the placeholder as the oracle wrote
# it: the string template gets it as vLLM's string content format makes
# it) and as the rendered prompt (--raw), and two of them on xla (an image
# without padding, whose tower runs causally, and a padded one,
# bidirectional); the image + speech case (`--image`
# and `--audio` at once: the vision adapter, the clip's vision+speech
# projection) both ways, and its bfloat16 golden (Transformers in bf16,
# vlm in float32: the same greedy tokens) both ways on cpu and through
# the template on xla; a placeholder the text lacks goes
# on a line before it, and one too many is refused. Arguments: VLM
# MAKE_TINY SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"

model=$work/phi4_multimodal
goldens=$source_dir/tests/goldens/phi4_multimodal

greedy_matches() { # greedy_matches CASE [ARGS...]: vlm run --json gives the golden's tokens and text
  local manifest=$goldens/$1/manifest.json prompt count images=() name
  shift
  prompt=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["messages"][0]["content"])' "$manifest")
  count=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(len([s for s in m["stages"] if s["name"]=="greedy_tokens"][0]["tokens"]))' "$manifest")
  # A speech case's message is its placeholder line(s) (an image's, then
  # the clip's), then the text; the clip goes in with --audio (the
  # manifest's file) and vlm puts the placeholders back as those lines.
  if python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])).get("audio") else 1)' "$manifest"; then
    local clip
    clip=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["audio"][0])' "$manifest")
    while [[ $prompt == '<|endoftext10|>'$'\n'* || $prompt == '<|endoftext11|>'$'\n'* ]]; do
      prompt=${prompt#*$'\n'}
    done
    set -- --audio "$fixtures_root/media/audio/$clip" "$@"
  fi
  for name in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1])).get("images", [])))' "$manifest"); do
    images+=(--image "$fixtures_root/media/images/$name")
  done
  run 0 run --model "$model" --prompt "$prompt" "${images[@]}" --max-tokens "$count" --temperature 0 --json "$@" \
    || return 1
  tokens_match "$manifest"
}

same_as_raw() { # same_as_raw TEXT RAW [ARGS...]: --prompt TEXT through the template gives --raw --prompt RAW's output
  local text=$1 raw=$2
  shift 2
  run 0 run --model "$model" --raw --prompt "$raw" --max-tokens 6 --temperature 0 --json "$@" || return 1
  cp "$work/out" "$work/raw.json"
  run 0 run --model "$model" --prompt "$text" --max-tokens 6 --temperature 0 --json "$@" || return 1
  python3 - "$work/raw.json" "$work/out" <<'PY'
import json, sys
raw, chat = (json.load(open(path)) for path in sys.argv[1:3])
if raw["tokens"] != chat["tokens"] or raw["usage"]["prompt_tokens"] != chat["usage"]["prompt_tokens"]:
    sys.exit(f"  --raw: {raw['tokens']} ({raw['usage']['prompt_tokens']} prompt tokens)\n"
             f"  chat:  {chat['tokens']} ({chat['usage']['prompt_tokens']} prompt tokens)")
PY
}

image_greedy_matches() { # image_greedy_matches CASE [ARGS...]: the rendered prompt (--raw) and the case's images (and clip)
  local manifest=$goldens/$1/manifest.json prompt count images=() name
  shift
  prompt=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["prompt"], end="")' "$manifest")
  count=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(len([s for s in m["stages"] if s["name"]=="greedy_tokens"][0]["tokens"]))' "$manifest")
  for name in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["images"]))' "$manifest"); do
    images+=(--image "$fixtures_root/media/images/$name")
  done
  for name in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1])).get("audio", [])))' "$manifest"); do
    images+=(--audio "$fixtures_root/media/audio/$name")
  done
  run 0 run --model "$model" --raw --prompt "$prompt" "${images[@]}" --max-tokens "$count" --temperature 0 --json "$@" \
    || return 1
  tokens_match "$manifest"
}

tokens_match() { # tokens_match MANIFEST: $work/out (vlm run --json) has the golden's tokens, text and prompt length
  local manifest=$1
  python3 - "$manifest" "$work/out" <<'PY'
import json, sys
manifest = json.load(open(sys.argv[1]))
out = json.load(open(sys.argv[2]))
stages = {s["name"]: s for s in manifest["stages"]}
if out["tokens"] != stages["greedy_tokens"]["tokens"] or out["text"] != stages["text"]["text"]:
    sys.exit(f"  vlm: {out['tokens']}\n  golden: {stages['greedy_tokens']['tokens']}")
if out["usage"]["prompt_tokens"] != stages["input_ids"]["shape"][-1]:
    sys.exit(f"  prompt tokens {out['usage']['prompt_tokens']}")
PY
}

if have_fixtures "run_phi4_multimodal"; then
  python3 "$source_dir/tools/oracle/tokenizer_files.py" unpack "$source_dir/tests/models/phi4_multimodal" "$model" \
    --fixtures "$fixtures_root/tokenizers" >/dev/null
  for name in text_only long_prompt crossing speech speech_describe; do
    check "run_phi4_$name" greedy_matches "$name"
  done
  check "run_phi4_refuses_two_placeholders_for_one_clip" refuses 1 "Found more '<|endoftext11|>' placeholders" \
    run --model "$model" --prompt "<|endoftext11|><|endoftext11|>hi" \
    --audio "$fixtures_root/media/audio/speech_quick_fox_16k.flac"
  for name in one_image hd_crops two_images unpadded_image image_speech image_speech_bf16; do
    check "run_phi4_${name}_raw" image_greedy_matches "$name"
    check "run_phi4_$name" greedy_matches "$name"
  done
  # A placeholder the text lacks goes first, on its own line (vLLM); one
  # more in the text than images is refused, as vLLM refuses it.
  images=$fixtures_root/media/images
  check "run_phi4_image_placeholder_before_the_text" same_as_raw "What is in this picture?" \
    $'<|user|><|endoftext10|>\nWhat is in this picture?<|end|><|assistant|>' --image "$images/chelsea.png"
  check "run_phi4_missing_placeholders_first" same_as_raw "Compare <|endoftext10|> with the other." \
    $'<|user|><|endoftext10|>\nCompare <|endoftext10|> with the other.<|end|><|assistant|>' \
    --image "$images/palette_color.png" --image "$images/no_time_for_that_tiny.gif"
  check "run_phi4_refuses_more_placeholders_than_images" refuses 1 "Found more '<|endoftext10|>' placeholders" \
    run --model "$model" --prompt "<|endoftext10|><|endoftext10|>hi" --image "$images/chelsea.png"
  if [ ! -x "$source_dir/.venv-xla/bin/iree-compile" ]; then
    skip no-venv-xla run_phi4_xla "$source_dir/.venv-xla has no iree-compile (tools/xla/requirements.txt)"
  elif "$vlm" run --backend xla --model /nonexistent --prompt x 2>&1 | grep -q "built without the xla runtime"; then
    skip no-xla-runtime run_phi4_xla "this vlm was built without the xla runtime (python3.11-embed)"
  else
    export VLM_XLA_CACHE="$work/xla-cache"
    export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$source_dir/tests/lsan_xla.supp:print_suppressions=0
    for name in text_only long_prompt crossing speech; do
      check "run_phi4_xla_$name" greedy_matches "$name" --backend xla --context 96
    done
    check "run_phi4_xla_image_speech_bf16" greedy_matches image_speech_bf16 --backend xla --context 640
    # The tower causal (an image without padding) and bidirectional (a
    # padded one): one compiled encoder function (the 2-image bucket) and
    # one decoder serve both.
    for name in unpadded_image one_image; do
      check "run_phi4_xla_$name" greedy_matches "$name" --backend xla --context 640
    done
  fi
fi
finish
