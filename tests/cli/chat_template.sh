#!/usr/bin/env bash
# End-to-end tests of `vlm tokenize --chat` (chat-template rendering).
# Arguments: VLM MAKE_TINY SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"
out_is() { # exact bytes, no trailing newline added
  printf '%s' "$1" >"$work/want"
  cmp -s "$work/out" "$work/want" || { echo "  stdout: $(od -c "$work/out" | head -5)" >&2; return 1; }
}
export -f out_is

# A model directory whose tokenizer_config.json carries a small template.
mkdir -p "$work/model" "$work/none" "$work/broken" "$work/raises"
cat >"$work/model/tokenizer_config.json" <<'JSON'
{"bos_token": {"content": "<s>", "lstrip": false}, "eos_token": "</s>",
 "chat_template": "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content if m.content is string else m.content | map(attribute='type') | join(',') }}\n{% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}"}
JSON
echo '{"eos_token": "</s>"}' >"$work/none/tokenizer_config.json"
printf '{"chat_template": "line one\\n{%% for x in %%}"}' >"$work/broken/tokenizer_config.json"
printf '%s' "{{ raise_exception('Conversation roles must alternate') }}" >"$work/raises/chat_template.jinja"
echo '[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": [{"type": "image"}, {"type": "text", "text": "x"}]}]' >"$work/chat.json"

check renders_with_generation_prompt bash -c "run 0 tokenize --model '$work/model' --chat '$work/chat.json' --add-generation-prompt \
  && out_is \$'<s>[user] Hi\n[assistant] image,text\n[assistant]'"
check flags_in_any_order bash -c "run 0 tokenize --add-generation-prompt --chat '$work/chat.json' --model '$work/model' \
  && out_is \$'<s>[user] Hi\n[assistant] image,text\n[assistant]'"
check renders_without_generation_prompt bash -c "run 0 tokenize --chat '$work/chat.json' --model '$work/model' \
  && out_is \$'<s>[user] Hi\n[assistant] image,text\n'"
check missing_messages_file_is_named bash -c "run 1 tokenize --model '$work/model' --chat '$work/absent.json' && err_has 'absent.json: No such file or directory'"
check missing_tools_file_is_named bash -c "run 1 tokenize --model '$work/model' --chat '$work/chat.json' --tools '$work/no_tools.json' && err_has 'no_tools.json: No such file or directory'"
check chat_help bash -c "run 0 tokenize --chat x --help && grep -q 'add-generation-prompt' '$work/out'"
check missing_model_is_usage_error bash -c "run 2 tokenize --chat '$work/chat.json' && err_has '--model DIR is required'"
check no_template_is_clear_error bash -c "run 1 tokenize --model '$work/none' --chat '$work/chat.json' && err_has 'has no chat template'"
check malformed_template_names_position bash -c "run 1 tokenize --model '$work/broken' --chat '$work/chat.json' && err_has 'tokenizer_config.json:2:' && err_has 'unexpected'"
check raise_exception_message bash -c "run 1 tokenize --model '$work/raises' --chat '$work/chat.json' && err_has 'Conversation roles must alternate'"
check malformed_messages bash -c "echo '[{\"role\": ' >'$work/bad.json' && run 1 tokenize --model '$work/model' --chat '$work/bad.json' && err_has 'messages'"

# With the shared fixtures: a real template against its Transformers golden.
fixtures="$fixtures_root/tokenizers"
golden="$source_dir/tests/goldens/chat_template/qwen3.json"
if have_fixtures real_templates; then
  python3 - "$golden" "$work" <<'PY'
import json, sys
cases = {c["name"]: c for c in json.load(open(sys.argv[1]))["cases"]}
case = cases["system_multi_turn_gen"]
json.dump(case["messages"], open(sys.argv[2] + "/qwen3_chat.json", "w"), ensure_ascii=False)
open(sys.argv[2] + "/qwen3_want", "wb").write(case["expected"].encode())
PY
  check qwen3_matches_transformers bash -c "run 0 tokenize --model '$fixtures/qwen3' --chat '$work/qwen3_chat.json' --add-generation-prompt \
    && cmp -s '$work/out' '$work/qwen3_want'"
  check llama2_has_no_template bash -c "run 1 tokenize --model '$fixtures/llama2' --chat '$work/chat.json' && err_has 'has no chat template'"
fi

finish
