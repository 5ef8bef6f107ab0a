#!/usr/bin/env bash
# `vlm run` end to end against the oracle goldens: the chat template,
# tokenizer, decoder and greedy decoding together must give Transformers'
# exact tokens and text. Plus its refusals. Arguments: VLM MAKE_TINY SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"

# Extra `vlm run` arguments of the golden checks (the xla pass sets them).
backend_arguments=()

# matches_golden FAMILY CASE: run the golden's user message greedily.
matches_golden() {
  local golden="$source_dir/tests/goldens/$1/$2/manifest.json"
  local prompt count
  prompt=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["messages"][-1]["content"])' "$golden")
  count=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(len([s for s in m["stages"] if s["name"]=="greedy_tokens"][0]["tokens"]))' "$golden")
  "$vlm" run --model "$source_dir/tests/models/$1" --prompt "$prompt" --max-tokens "$count" \
    --temperature 0 --json "${backend_arguments[@]}" >"$work/out" 2>"$work/err" || { cat "$work/err"; return 1; }
  python3 - "$golden" "$work/out" <<'PY'
import json, sys
golden = json.load(open(sys.argv[1]))
result = json.load(open(sys.argv[2]))
stages = {s["name"]: s for s in golden["stages"]}
expected_tokens = stages["greedy_tokens"]["tokens"]
problems = []
if result["tokens"] != expected_tokens:
    problems.append(f"tokens {result['tokens']} != {expected_tokens}")
if result["text"] != stages["text"]["text"]:
    problems.append(f"text {result['text']!r} != {stages['text']['text']!r}")
prompt_tokens = [s for s in golden["stages"] if s["name"] == "input_ids"][0]["shape"][-1]
if result["usage"]["prompt_tokens"] != prompt_tokens:
    problems.append(f"prompt_tokens {result['usage']['prompt_tokens']} != {prompt_tokens}")
if result["finish_reason"] != "length":
    problems.append("finish_reason " + result["finish_reason"])
for problem in problems:
    print("  " + problem)
sys.exit(1 if problems else 0)
PY
}
check run_matches_golden_llama_chat matches_golden llama chat
check run_matches_golden_qwen2_chat matches_golden qwen2 chat
# The hub's int4 layouts (tools/oracle/quant_oracle.py): GPTQ as Qwen's
# -GPTQ-Int4 repositories, GPTQ with act-order and zero points, AWQ.
check run_matches_golden_qwen2_gptq_chat matches_golden qwen2_gptq chat
check run_matches_golden_qwen2_gptq_act_chat matches_golden qwen2_gptq_act chat
check run_matches_golden_qwen2_awq_chat matches_golden qwen2_awq chat
# --quantize: runs (its accuracy is measured, bench/quant_accuracy.sh), and
# refuses what it cannot do.
check run_quantizes_q8 run 0 run --model "$source_dir/tests/models/qwen2" --prompt "Hi" --max-tokens 4 --quantize q8
check run_quantizes_q4 run 0 run --model "$source_dir/tests/models/qwen2" --prompt "Hi" --max-tokens 4 --quantize q4
check run_refuses_unknown_quantization refuses 1 "quantize 'q3' is not one of q8, q4, none" \
  run --model "$source_dir/tests/models/qwen2" --prompt "Hi" --quantize q3
check run_refuses_quantizing_gptq_again refuses 1 "is quantized already" \
  run --model "$source_dir/tests/models/qwen2_gptq" --prompt "Hi" --quantize q4

streams_text() {
  "$vlm" run --model "$source_dir/tests/models/qwen2" --prompt "Hello" --max-tokens 5 >"$work/out" 2>"$work/err" \
    && [ -s "$work/out" ]
}
check run_streams_text streams_text

check run_refuses_images_for_text_models refuses 1 "model_type 'qwen2' takes no image input" \
  run --model "$source_dir/tests/models/qwen2" --prompt "What is this?" --image "$source_dir/README.md"
check run_refuses_text_as_image refuses 1 "not an image" \
  run --model "$source_dir/tests/models/llava" --prompt "What is this?" --image "$source_dir/README.md"
# A model without an audio path refuses --audio by name, before the file
# is read (a real clip, and a path that does not exist, alike).
check run_refuses_audio refuses 1 "speech.wav: model_type 'llava' takes no audio input" \
  run --model "$source_dir/tests/models/llava" --prompt "Listen" --audio "$work/speech.wav"
check run_refuses_audio_for_text_models refuses 1 "model_type 'qwen2' takes no audio input" \
  run --model "$source_dir/tests/models/qwen2" --prompt "Listen" --audio /dev/null
check run_audio_needs_a_path refuses 2 "unknown or incomplete option '--audio'" \
  run --model "$source_dir/tests/models/qwen2" --prompt "Listen" --audio
check run_refuses_bad_audio_limit refuses 2 "bad value for --max-audio-seconds" \
  run --model "$source_dir/tests/models/qwen2" --prompt "Listen" --max-audio-seconds 0
check run_needs_a_prompt refuses 2 "--prompt TEXT are required" run --model "$source_dir/tests/models/qwen2"
check run_refuses_over_capacity refuses 1 "context length exceeded" \
  run --model "$source_dir/tests/models/qwen2" --prompt "Describe a cat sitting on a warm windowsill." --context 16
# Images are counted from their headers before any is decoded: two images
# whose headers say 8000x8000 (and whose pixel data would not even decode)
# take 2 x 576 positions, over a 1024-position context.
python3 -c '
import struct, sys, zlib
ihdr = b"IHDR" + struct.pack(">IIBBBBB", 8000, 8000, 8, 2, 0, 0, 0)
png = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + ihdr + struct.pack(">I", zlib.crc32(ihdr))
open(sys.argv[1], "wb").write(png + b"\0\0\0\4IDAT\1\2\3\4\0\0\0\0")' "$work/huge.png"
check run_counts_images_before_decoding refuses 1 "the 2 media item(s) take 1152 positions, over the capacity of 1024" \
  run --model "$source_dir/tests/models/llava" --prompt "Hi" --max-tokens 8 --context 1024 \
  --image "$work/huge.png" --image "$work/huge.png"
check run_refuses_bad_sampling refuses 1 "top_p must be in (0, 1]" \
  run --model "$source_dir/tests/models/qwen2" --prompt "Hi" --top-p 0
check run_reports_missing_model refuses 1 "config.json: cannot open" run --model "$work/nothing" --prompt "Hi"

# An image request end to end: decode, CLIP processor, tower, projector,
# merge and greedy decoding must give the golden's tokens and text.
fixtures="$fixtures_root/media/images"
image_matches_golden() { # image_matches_golden CASE: the case's own images and prompt
  local golden="$source_dir/tests/goldens/llava/$1/manifest.json"
  local arguments=()
  for image in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["images"]))' "$golden"); do
    arguments+=(--image "$fixtures/$image")
  done
  local prompt
  prompt=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print([p["text"] for p in m["messages"][-1]["content"] if p["type"]=="text"][0])' "$golden")
  "$vlm" run --model "$source_dir/tests/models/llava" --prompt "$prompt" "${arguments[@]}" \
    --max-tokens 20 --temperature 0 --json "${backend_arguments[@]}" >"$work/out" 2>"$work/err" || { cat "$work/err"; return 1; }
  python3 - "$golden" "$work/out" <<'PY'
import json, sys
golden = json.load(open(sys.argv[1]))
result = json.load(open(sys.argv[2]))
stages = {s["name"]: s for s in golden["stages"]}
problems = []
if result["tokens"] != stages["greedy_tokens"]["tokens"]:
    problems.append(f"tokens {result['tokens']} != {stages['greedy_tokens']['tokens']}")
if result["text"] != stages["text"]["text"]:
    problems.append("text differs")
if result["usage"]["prompt_tokens"] != stages["input_ids"]["shape"][-1]:
    problems.append(f"prompt_tokens {result['usage']['prompt_tokens']}")
if not result["timings"]["encode_seconds"] > 0:
    problems.append("no encode time")
for problem in problems:
    print("  " + problem)
sys.exit(1 if problems else 0)
PY
}
if have_fixtures image_requests; then
  check run_one_image_matches_golden image_matches_golden one_image
  check run_two_images_match_golden image_matches_golden two_images
  check run_refuses_an_image_bomb refuses 1 "exceeds the limit" \
    run --model "$source_dir/tests/models/llava" --prompt "Hi" --image "$fixtures/bomb_100000x100000.png"
  check run_refuses_a_truncated_image refuses 1 "truncated.jpg: truncated JPEG data" \
    run --model "$source_dir/tests/models/llava" --prompt "Hi" --image "$fixtures/truncated.jpg"
fi

# The same goldens on the xla backend (text decoder and CLIP tower compiled
# by IREE on first use, into a temporary cache): Transformers' exact tokens.
if [ ! -x "$source_dir/.venv-xla/bin/iree-compile" ]; then
  skip no-venv-xla xla_backend "$source_dir/.venv-xla/bin/iree-compile is missing (tools/xla/requirements.txt)"
elif "$vlm" run --backend xla --model /nonexistent --prompt x 2>&1 | grep -q "built without the xla runtime"; then
  skip no-xla-runtime xla_backend "vlm was built without python-3.11-embed (libpython3.11-dev)"
else
  export VLM_XLA_CACHE="$work/xla-cache"
  # Under ASan: the embedded CPython keeps interpreter-lifetime allocations
  # by design (see the file); vlm's own stay checked.
  export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$source_dir/tests/lsan_xla.supp:print_suppressions=0
  backend_arguments=(--backend xla --context 2048)
  check run_xla_matches_golden_llama_chat matches_golden llama chat
  check run_xla_matches_golden_qwen2_chat matches_golden qwen2 chat
  check run_xla_refuses_quantized_weights refuses 1 "the xla backend does not run quantized weights" \
    run --model "$source_dir/tests/models/qwen2" --prompt "Hi" --backend xla --quantize q4
  check run_xla_refuses_gptq refuses 1 "the xla backend does not run quantized weights" \
    run --model "$source_dir/tests/models/qwen2_gptq" --prompt "Hi" --backend xla
  if have_fixtures xla_image_requests; then
    check run_xla_one_image_matches_golden image_matches_golden one_image
    check run_xla_two_images_match_golden image_matches_golden two_images
  fi
  backend_arguments=()
fi

finish
