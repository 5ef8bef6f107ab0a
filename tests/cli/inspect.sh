#!/usr/bin/env bash
# End-to-end tests of `vlm inspect` on checkpoints written by
# vlm-make-tiny-model, including broken ones. Arguments: VLM MAKE_TINY SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"

"$make_tiny" "$work/llava" >/dev/null
"$make_tiny" --sharded "$work/sharded" >/dev/null
"$make_tiny" --text-only "$work/llama" >/dev/null
"$make_tiny" --transformers4-names "$work/llava-v4" >/dev/null

# Every command `vlm --help` lists must answer its own --help: nothing is
# listed that does not exist.
help_lists_only_working_commands() {
  local commands
  commands=$("$vlm" --help | sed -n 's/^  \([a-z]\+\)  .*/\1/p')
  [ -n "$commands" ] || return 1
  for command in $commands; do
    "$vlm" "$command" --help >/dev/null 2>&1 || { echo "  '$command --help' failed" >&2; return 1; }
  done
  echo "$commands" | grep -qx inspect
}
check help_lists_only_working_commands help_lists_only_working_commands
check inspect_help run 0 inspect --help
check unknown_command_is_a_usage_error bash -c "run 2 frobnicate && err_has \"unknown command 'frobnicate'\""
check missing_model_flag bash -c "run 2 inspect && err_has '--model DIR is required'"
check bad_thread_count bash -c "run 2 --threads 0 inspect --model '$work/llava' && err_has '--threads needs'"

check tiny_llava_is_complete bash -c "run 0 inspect --model '$work/llava' && out_has 'family LLaVA-1.5' \
  && out_has 'modalities: text, image' && out_has 'vision_tower' && out_has 'projector' && out_has 'status: ok'"
check threads_flag_is_reported bash -c "run 0 --threads 3 inspect --model '$work/llava' && out_has 'runtime: 3 threads'"
check json_report_parses bash -c "run 0 inspect --model '$work/llava' --json && python3 -c '
import json,sys
r=json.load(open(sys.argv[1]))
assert r[\"can_load\"] and r[\"model_type\"]==\"llava\" and r[\"modalities\"]==[\"text\",\"image\"]
assert r[\"components\"][\"vision_tower\"][\"parameters\"]>0 and r[\"missing\"]==[] and r[\"unexpected\"]==[]
assert sum(c[\"bytes\"] for c in r[\"components\"].values())==r[\"total_bytes\"]
' '$work/out'"
# Bytes per cached token from the family's KV layout: Qwen2's 2 layers of
# 1 KV head of 64, K and V, f32.
check kv_bytes_per_token_are_reported bash -c "run 0 inspect --model '$source_dir/tests/models/qwen2' \
  && out_has 'kv cache: 1.0 KiB per cached token (f32, 256 values; 2 of 2 layers store their own)' \
  && run 0 inspect --model '$source_dir/tests/models/qwen2' --json && python3 -c '
import json,sys
r=json.load(open(sys.argv[1]))
assert r[\"kv_cache\"]=={\"bytes_per_token\":1024,\"values_per_token\":256,\"dtype\":\"f32\",\"layers\":2,\"storing_layers\":2}, r[\"kv_cache\"]
' '$work/out'"
# GPTQ/AWQ layers (X.qweight, qzeros, scales, g_idx) stand for the declared
# X.weight: complete, nothing unexpected, the layout named.
for layout in gptq gptq_act awq; do
  check "inspect_knows_${layout}_layers" bash -c "run 0 inspect --model '$source_dir/tests/models/qwen2_$layout' --json && python3 -c '
import json,sys
r=json.load(open(sys.argv[1]))
assert r[\"can_load\"] and r[\"missing\"]==[] and r[\"unexpected\"]==[], r
assert r[\"quantization\"]==sys.argv[2], r[\"quantization\"]
' '$work/out' '${layout%_act}'"
done
check sharded_checkpoint bash -c "run 0 inspect --model '$work/sharded' --json && out_has '\"file_count\":2' && out_has '\"can_load\":true'"
check transformers4_names_are_renamed bash -c "grep -q 'language_model.model.layers.0' '$work/llava-v4/model.safetensors' \
  && run 0 inspect --model '$work/llava-v4' && out_has 'status: ok' && ! grep -q unexpected '$work/out'"
check text_only_checkpoint bash -c "run 0 inspect --model '$work/llama' && out_has 'modalities: text' && out_has 'status: ok'"

# Broken checkpoints: each one a one-line error naming the file and problem.
cp -r "$work/llava" "$work/missing"
sed -i 's/"num_hidden_layers": 2, "num_attention_heads": 2/"num_hidden_layers": 3, "num_attention_heads": 2/' "$work/missing/config.json"
check missing_tensors_fail bash -c "run 1 inspect --model '$work/missing' && out_has 'missing tensors (9)' \
  && err_has 'checkpoint incomplete: 9 missing tensors' && err_has 'model.language_model.layers.2.' && one_line_error"

cp -r "$work/llava" "$work/extra"
sed -i 's/"num_hidden_layers": 2, "num_attention_heads": 2/"num_hidden_layers": 1, "num_attention_heads": 2/' "$work/extra/config.json"
check unexpected_tensors_are_reported_but_load bash -c "run 0 inspect --model '$work/extra' \
  && out_has 'unexpected tensors (ignored, as Transformers ignores them) (9)'"

cp -r "$work/llava" "$work/shape"
sed -i 's/"intermediate_size": 256/"intermediate_size": 512/' "$work/shape/config.json"
check wrong_shapes_fail bash -c "run 1 inspect --model '$work/shape' \
  && out_has 'model.language_model.layers.0.mlp.down_proj.weight [128, 256], expected [128, 512]' \
  && err_has 'with the wrong shape'"

cp -r "$work/llava" "$work/truncated"
truncate -s -100 "$work/truncated/model.safetensors"
check truncated_weights_fail bash -c "run 1 inspect --model '$work/truncated' && err_has 'model.safetensors: tensor' \
  && err_has 'run past the end' && one_line_error"

cp -r "$work/llava" "$work/garbage"
printf 'this is not a safetensors file' >"$work/garbage/model.safetensors"
check garbage_weights_fail bash -c "run 1 inspect --model '$work/garbage' && err_has 'garbage/model.safetensors: header length' && one_line_error"

cp -r "$work/llava" "$work/badjson"
printf '{"model_type": "llava",' >"$work/badjson/config.json"
check malformed_config_fails bash -c "run 1 inspect --model '$work/badjson' && err_has 'config.json: invalid JSON at line 1' && one_line_error"

cp -r "$work/llava" "$work/unknown"
sed -i 's/"model_type": "llava"/"model_type": "frobnitz"/' "$work/unknown/config.json"
check unknown_model_type_fails bash -c "run 1 inspect --model '$work/unknown' && err_has 'frobnitz' && one_line_error"

check missing_directory_fails bash -c "run 1 inspect --model '$work/nothing-here' && err_has 'nothing-here/config.json: cannot open'"

cp -r "$work/llava" "$work/noweights"
rm "$work/noweights/model.safetensors"
check missing_weights_fail bash -c "run 1 inspect --model '$work/noweights' && err_has 'no model.safetensors or model.safetensors.index.json'"

# A FIFO where a model file should be: refused at once (it used to block
# forever waiting for a writer), whichever file it is.
for name in model.safetensors config.json; do
  rm -rf "$work/fifo" && cp -r "$work/llava" "$work/fifo" && rm "$work/fifo/$name" && mkfifo "$work/fifo/$name"
  check "fifo_${name%%.*}_is_refused" bash -c "timeout 20 bash -c \"run 1 inspect --model '$work/fifo'\" \
    && err_has 'fifo/$name: not a regular file (a FIFO)' && one_line_error"
done

# The text side is loaded like vlm run loads it: a tokenizer.json or a chat
# template that does not load fails the inspection (it used to exit 0).
cp -r "$source_dir/tests/models/llava" "$work/text"
check tokenizer_and_template_are_reported bash -c "run 0 inspect --model '$work/text' && out_has 'tokenizer: ' \
  && out_has 'chat template: ' && out_has 'status: ok'"
cp -r "$work/text" "$work/badtokenizer"
printf '{"model": {"type": "BPE", "vocab": 7}}' >"$work/badtokenizer/tokenizer.json"
check garbage_tokenizer_fails bash -c "run 1 inspect --model '$work/badtokenizer' && err_has 'badtokenizer/tokenizer.json' \
  && one_line_error && out_has 'status: '"
# A tokenizer.json that is a symlink loop (ELOOP) or dangles is a tokenizer
# that does not load, not "no tokenizer" (issue 27: it exited 0).
cp -r "$work/text" "$work/looptokenizer"
rm "$work/looptokenizer/tokenizer.json"
ln -s loop_b "$work/looptokenizer/loop_a" && ln -s loop_a "$work/looptokenizer/loop_b"
ln -s loop_a "$work/looptokenizer/tokenizer.json"
check tokenizer_symlink_loop_fails bash -c "run 1 inspect --model '$work/looptokenizer' \
  && err_has 'looptokenizer/tokenizer.json: cannot open: Too many levels of symbolic links' && one_line_error"
cp -r "$work/text" "$work/danglingtokenizer"
rm "$work/danglingtokenizer/tokenizer.json" && ln -s nowhere.json "$work/danglingtokenizer/tokenizer.json"
check tokenizer_dangling_symlink_fails bash -c "run 1 inspect --model '$work/danglingtokenizer' \
  && err_has 'danglingtokenizer/tokenizer.json: cannot open' && one_line_error"
cp -r "$work/text" "$work/badtemplate"
printf '{%% for x in %%}' >"$work/badtemplate/chat_template.jinja"
check broken_chat_template_fails bash -c "run 1 inspect --model '$work/badtemplate' && err_has 'chat_template.jinja:1:' \
  && one_line_error"
check weights_only_checkpoint_still_loads bash -c "run 0 inspect --model '$work/llava' && out_has 'tokenizer: none'"

# Which backend runs each module (SPEC 1.4), by the predicate --backend xla uses.
check modules_table bash -c "run 0 inspect --model '$work/llava' && out_has 'token_prefill        yes   yes' && out_has 'image_encoder        yes   yes'"
# Phi-4-multimodal: the audio tower is declared (not "unexpected") and its
# encoder runs on both backends.
check phi4_audio_declared bash -c "run 0 inspect --model '$source_dir/tests/models/phi4_multimodal' && out_has 'audio_encoder        yes   yes' && ! grep -q 'audio_embed' '$work/out'"
check modules_json bash -c "run 0 inspect --model '$work/llava' --json && python3 -c 'import json,sys; m={e[\"module\"]: e for e in json.load(open(sys.argv[1]))[\"modules\"]}; assert m[\"decode\"][\"xla\"] and m[\"decode\"][\"cpu\"] and m[\"image_encoder\"][\"xla\"], m' '$work/out'"

# vlm inspect asks the gates --backend xla asks before it builds anything
# (vlm_xla_text_decoder_check): a quantized checkpoint (GPTQ, AWQ) and
# dynamic RoPE are "xla no" in inspect, with the very reason `vlm run
# --backend xla` exits with.
cp -r "$source_dir/tests/models/qwen2" "$work/dynamic"
python3 -c 'import json, sys
path = sys.argv[1] + "/config.json"
config = json.load(open(path))
config["rope_scaling"] = {"rope_type": "dynamic", "factor": 2.0}
json.dump(config, open(path, "w"))' "$work/dynamic"
inspect_gate() { # inspect_gate MODEL_DIR: inspect's decode row refuses xla with run's reason
  run 0 inspect --model "$1" --json || return 1
  local reason
  reason=$(python3 -c 'import json, sys
modules = {e["module"]: e for e in json.load(open(sys.argv[1]))["modules"]}
assert modules["decode"]["cpu"], modules
assert not any(modules[m]["xla"] for m in ("token_prefill", "embeddings_prefill", "decode")), modules
print(modules["decode"]["xla_reason"])' "$work/out") || return 1
  run 1 run --backend xla --model "$1" --prompt hi --max-tokens 1 || return 1
  grep -qF -- "vlm: error: $reason" "$work/err" || { echo "  inspect: $reason; run: $(cat "$work/err")" >&2; return 1; }
}
export -f inspect_gate
if "$vlm" run --backend xla --model "$source_dir/tests/models/qwen2_gptq" --prompt hi 2>&1 | grep -q "built without the xla runtime"; then
  skip no-xla-runtime inspect_gates "this vlm has no xla runtime, so run --backend xla cannot be compared"
else
  for model in "$source_dir/tests/models/qwen2_gptq" "$source_dir/tests/models/qwen2_gptq_act" \
               "$source_dir/tests/models/qwen2_awq" "$work/dynamic"; do
    check "inspect_gate_$(basename "$model")" inspect_gate "$model"
  done
fi

finish
