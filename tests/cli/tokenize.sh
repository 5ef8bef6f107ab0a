#!/usr/bin/env bash
# End-to-end tests of `vlm tokenize`: a hand-made tokenizer (always), broken
# tokenizer files, and the real tokenizers in ../shared/fixtures/tokenizers
# when they are present. Arguments: VLM MAKE_TINY SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"
out_is() { [ "$(cat "$work/out")" = "$1" ] || { echo "  stdout: $(cat "$work/out"), expected: $1" >&2; return 1; }; }
export -f out_is

tiny="$work/tiny"
mkdir -p "$tiny"
cp "$source_dir/fuzz/corpus/tokenizer/bpe_byte_level.json" "$tiny/tokenizer.json"
echo '{"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>"}' >"$tiny/tokenizer_config.json"

check help bash -c "run 0 tokenize --help && grep -qF -- '--no-special' '$work/out'"
check text_with_special bash -c "run 0 tokenize --model '$tiny' --text 'hello world' && out_is '[0, 12, 16]'"
check text_no_special bash -c "run 0 tokenize --model '$tiny' --text 'hello world' --no-special && out_is '[12, 16]'"
printf 'hello <tool> world' >"$work/input.txt"
check file_input bash -c "run 0 tokenize --model '$tiny' --file '$work/input.txt' && out_is '[0, 12, 18, 6, 14, 17]'"
check missing_file_is_named bash -c "run 1 tokenize --model '$tiny' --file '$work/absent.txt' && err_has 'absent.txt: No such file or directory' && one_line_error"
check decode bash -c "run 0 tokenize --model '$tiny' --decode '[0, 12, 18, 6, 14, 17]' && out_is '<s>hello<tool>world'"
check decode_skip_special bash -c "run 0 tokenize --model '$tiny' --decode '[0,12,16]' --skip-special && out_is 'hello world'"
check decode_bad_ids bash -c "run 2 tokenize --model '$tiny' --decode '[1, x]' && err_has 'JSON array'"
check needs_one_input bash -c "run 2 tokenize --model '$tiny' && err_has 'exactly one of'"
check needs_model bash -c "run 2 tokenize --text hi && err_has '--model DIR is required'"
check chat_is_delegated bash -c "\"\$vlm\" tokenize --model '$tiny' --chat '$work/none.json' >/dev/null 2>'$work/err'; ! grep -qF 'unknown option' '$work/err'"
check missing_tokenizer bash -c "run 1 tokenize --model '$work/nothing' --text x && err_has 'no tokenizer.json' && one_line_error"
mkdir -p "$work/broken"
printf '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}' >"$work/broken/tokenizer.json"
check malformed_merges bash -c "run 1 tokenize --model '$work/broken' --text x && err_has 'tokenizer.json: model.merges[0]' && one_line_error"
printf '{"model": ' >"$work/broken/tokenizer.json"
check malformed_json bash -c "run 1 tokenize --model '$work/broken' --text x && err_has 'tokenizer.json: invalid JSON' && one_line_error"

fixtures="$fixtures_root/tokenizers"
if have_fixtures fixture_checks; then
  check qwen3_text bash -c "run 0 tokenize --model '$fixtures/qwen3' --text 'Hello world' && out_is '[9707, 1879]'"
  check qwen3_special_in_text bash -c "run 0 tokenize --model '$fixtures/qwen3' --text '<|im_start|>user' && out_is '[151644, 872]'"
  check llama2_bos bash -c "run 0 tokenize --model '$fixtures/llama2' --text 'Hello world' && out_is '[1, 22557, 1526]'"
  check llama2_no_special bash -c "run 0 tokenize --model '$fixtures/llama2' --text 'Hello world' --no-special && out_is '[22557, 1526]'"
  check llama2_hf_tokenizers bash -c "run 0 tokenize --model '$fixtures/llama2' --text ' Hello' --hf-tokenizers && out_is '[1, 28705, 22557]'"
  printf 'abc\x80def' >"$work/invalid.txt"
  check invalid_utf8_file bash -c "run 0 tokenize --model '$fixtures/qwen3' --file '$work/invalid.txt' --no-special && out_is '[13683, 5691, 750]'"
  check qwen3_decode bash -c "run 0 tokenize --model '$fixtures/qwen3' --decode '[9707, 1879]' && out_is 'Hello world'"
fi

finish
