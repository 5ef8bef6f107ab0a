#!/usr/bin/env bash
# Models by Hugging Face id (src/io/hub.c, src/cli/hub_download.c): the
# refusals of what vlm cannot run, `vlm pull` against a stand-in hub on
# loopback (tests/hub/fake_hub.py: the hub's headers, an LFS redirect to
# another host name, an interrupted transfer resumed, a bad checksum, 401 and
# 403), and the cache shared for real with huggingface_hub (.venv-ci, pinned
# in tools/oracle/requirements-ci.txt). Arguments: VLM MAKE_TINY SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"
vlm=$(realpath "$vlm") # checks run from other directories too
export vlm
unset HF_TOKEN HF_HUB_OFFLINE HF_HUB_CACHE HUGGINGFACE_HUB_CACHE HF_ENDPOINT HF_TOKEN_PATH
export HF_HOME=$work/hf
model=$source_dir/tests/models/qwen2

# ---- refusals: each names the problem and what to do --------------------
printf 'GGUF\3\0\0\0' >"$work/model.Q4_K_M.gguf"
check refuses_gguf_file refuses 1 "is a GGUF file" run --model "$work/model.Q4_K_M.gguf" --prompt hi
check gguf_says_what_to_do refuses 1 "vlm pull ORG/NAME" run --model "$work/model.Q4_K_M.gguf" --prompt hi
mkdir -p "$work/bin-only" && cp "$model"/*.json "$work/bin-only/" && printf 'x' >"$work/bin-only/pytorch_model.bin"
check refuses_pytorch_bin_only refuses 1 "only pytorch_model*.bin weights" inspect --model "$work/bin-only"
check pytorch_bin_says_convert refuses 1 "safe_serialization=True" run --model "$work/bin-only" --prompt hi
mkdir -p "$work/spm" && cp "$model"/config.json "$model"/model.safetensors "$work/spm/" && printf 'x' >"$work/spm/tokenizer.model"
check refuses_sentencepiece_only refuses 1 "tokenizer.model but no tokenizer.json" run --model "$work/spm" --prompt hi
check sentencepiece_says_convert refuses 1 "save_pretrained" tokenize --model "$work/spm" --text hi
check refuses_packed_test_model refuses 1 "tools/oracle/tokenizer_files.py unpack" \
  run --model "$source_dir/tests/models/qwen3_vl" --prompt hi
check refuses_a_file refuses 1 "is a file, not a directory" run --model "$model/config.json" --prompt hi
check refuses_a_file_in_serve refuses 1 "is a file, not a directory" serve --model "$model/model.safetensors"
check uncached_id_says_pull refuses 1 'vlm pull nobody/nothing` or add --download' run --model nobody/nothing --prompt hi
check uncached_id_in_inspect refuses 1 "is not in the Hugging Face cache" inspect --model nobody/nothing@v2
check uncached_id_in_tokenize refuses 1 "vlm pull nobody/nothing" tokenize --model nobody/nothing --text hi
check offline_pull_refused bash -c "HF_HUB_OFFLINE=1 run 1 pull nobody/nothing && err_has 'HF_HUB_OFFLINE is set'"
check offline_download_refused bash -c "HF_HUB_OFFLINE=1 run 1 run --model nobody/nothing --download --prompt hi \
  && err_has 'HF_HUB_OFFLINE is set'"
check pull_needs_an_id refuses 2 "is not a model id" pull "$model"
check pull_help_lists_environment bash -c "run 0 pull --help && out_has HF_ENDPOINT && out_has HF_TOKEN && out_has HF_HUB_OFFLINE"
check help_lists_pull bash -c "run 0 --help && out_has '  pull '"
# A local directory still wins over an id of the same spelling.
mkdir -p "$work/local/tiny" && cp -r "$model" "$work/local/tiny/qwen2"
check local_directory_wins bash -c "cd '$work/local' && run 0 run --model tiny/qwen2 --prompt hi --max-tokens 2"

# ---- the stand-in hub ----------------------------------------------------
repos=$work/repos
mkdir -p "$repos"
for name in qwen2 resume norange oversize badsum private gated; do cp -r "$model" "$repos/$name"; done
mkdir -p "$repos/binonly" && cp "$model"/*.json "$repos/binonly/" && printf 'x' >"$repos/binonly/pytorch_model.bin"
mkdir -p "$repos/adapters" && cp "$model"/* "$repos/adapters/" && mkdir -p "$repos/adapters/vision-lora" \
  && printf '{"r": 8}' >"$repos/adapters/vision-lora/adapter_config.json" \
  && cp "$model/model.safetensors" "$repos/adapters/vision-lora/adapter_model.safetensors" \
  && printf 'x' >"$repos/adapters/README.md" && printf 'x' >"$repos/adapters/pytorch_model.bin"
python3 "$source_dir/tests/hub/fake_hub.py" --port-file "$work/port" \
  --repo tiny/qwen2="$repos/qwen2" --repo tiny/resume="$repos/resume" --repo tiny/badsum="$repos/badsum" \
  --repo tiny/private="$repos/private" --repo tiny/gated="$repos/gated" --repo tiny/binonly="$repos/binonly" \
  --repo tiny/adapters="$repos/adapters" \
  --repo tiny/norange="$repos/norange" --repo tiny/oversize="$repos/oversize" \
  --mode tiny/norange=interrupt-norange --mode tiny/oversize=oversize \
  --alias tiny/old-name=tiny/qwen2 --mode tiny/resume=interrupt --mode tiny/badsum=badsum --mode tiny/private=private --mode tiny/gated=gated \
  2>"$work/hub.log" &
hub_pid=$!
trap 'kill $hub_pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
export HF_ENDPOINT=http://127.0.0.1:$(cat "$work/port")
cache=$HF_HOME/hub

check pull_prints_the_snapshot bash -c "run 0 pull tiny/qwen2 && out_has '$cache/models--tiny--qwen2/snapshots/'"
commit=$(basename "$(cat "$work/out")")
check pull_writes_the_ref bash -c "[ \"\$(cat '$cache/models--tiny--qwen2/refs/main')\" = '$commit' ]"
check snapshot_links_are_relative bash -c "[ \"\$(readlink '$cache/models--tiny--qwen2/snapshots/$commit/config.json')\" \
  = ../../blobs/\$(python3 -c 'import hashlib, sys; d = open(sys.argv[1], \"rb\").read(); print(hashlib.sha1(b\"blob %d\\0\" % len(d) + d).hexdigest())' '$model/config.json') ]"
check lfs_blob_is_named_by_sha256 bash -c "[ -f '$cache/models--tiny--qwen2/blobs/$(sha256sum "$model/model.safetensors" | cut -c1-64)' ]"
check blob_locked_where_huggingface_hub_locks bash -c "[ -e '$cache/.locks/models--tiny--qwen2/$(sha256sum "$model/model.safetensors" | cut -c1-64).lock' ]"
check pulled_files_match bash -c "cmp '$model/model.safetensors' '$cache/models--tiny--qwen2/snapshots/$commit/model.safetensors' \
  && cmp '$model/tokenizer.json' '$cache/models--tiny--qwen2/snapshots/$commit/tokenizer.json'"
check pull_followed_the_lfs_redirect grep -q "GET /cdn/tiny%2Fqwen2/" "$work/hub.log"
check pull_plain_lines_off_a_terminal bash -c "run 0 pull tiny/qwen2 && err_has 'vlm: pulling tiny/qwen2 at main' && err_has 'vlm: have model.safetensors'"
check pull_progress_bar bash -c "rm -rf '$work/hf-bar'; HF_HOME='$work/hf-bar' run 0 pull --progress tiny/qwen2 && err_has 'MiB/s' && err_has '[====='"
check run_by_id_from_the_cache bash -c "HF_HUB_OFFLINE=1 run 0 run --model tiny/qwen2 --prompt hi --max-tokens 3 --temperature 0"
expected=$("$vlm" run --model "$model" --prompt hi --max-tokens 3 --temperature 0 2>/dev/null)
check run_by_id_matches_the_directory bash -c "HF_HUB_OFFLINE=1 run 0 run --model tiny/qwen2 --prompt hi --max-tokens 3 --temperature 0 \
  && [ \"\$(cat '$work/out')\" = \"$expected\" ]"
check run_by_commit bash -c "HF_HUB_OFFLINE=1 run 0 run --model tiny/qwen2@$commit --prompt hi --max-tokens 2"
check inspect_by_id bash -c "run 0 inspect --model tiny/qwen2 && out_has 'status: ok'"
check tokenize_by_id bash -c "run 0 tokenize --model tiny/qwen2 --text hi && out_has '['"
check unknown_revision_is_404 bash -c "run 1 pull tiny/qwen2@nope && err_has 'not found on the hub (404' && err_has 'revision (nope)'"
# serve by id: the API names the model by its id (not the snapshot's commit).
serve_by_id() {
  HF_HUB_OFFLINE=1 "$vlm" serve --model tiny/qwen2 --port 0 2>"$work/serve.err" &
  local server=$!
  for _ in $(seq 200); do grep -qs "listening on" "$work/serve.err" && break; sleep 0.1; done
  local url
  url=$(grep -o "http://[^ ]*" "$work/serve.err" | head -1)
  local models
  models=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1] + "/v1/models").read().decode())' "$url")
  kill -TERM $server
  wait $server
  echo "$models" | python3 -c 'import json, sys; ids = [m["id"] for m in json.load(sys.stdin)["data"]]; assert ids == ["tiny/qwen2"], ids'
}
check serve_by_id_names_the_id serve_by_id
check pull_a_renamed_repo bash -c "run 0 pull tiny/old-name && HF_HUB_OFFLINE=1 run 0 run --model tiny/old-name --prompt hi --max-tokens 2"
check pull_a_tag bash -c "run 0 pull tiny/qwen2@v1.0 && [ \"\$(cat '$cache/models--tiny--qwen2/refs/v1.0')\" = '$commit' ] \
  && HF_HUB_OFFLINE=1 run 0 run --model tiny/qwen2@v1.0 --prompt hi --max-tokens 2"
check run_download_pulls_first bash -c "rm -rf '$work/hf-dl'; HF_HOME='$work/hf-dl' run 0 run --model tiny/qwen2 --download --prompt hi \
  --max-tokens 2 && [ -d '$work/hf-dl/hub/models--tiny--qwen2/snapshots/$commit' ]"
check pull_only_what_vlm_needs bash -c "run 0 pull tiny/adapters && d=\$(cat '$work/out') && [ -f \"\$d/vision-lora/adapter_config.json\" ] \
  && [ \"\$(readlink \"\$d/vision-lora/adapter_model.safetensors\" | cut -c1-15)\" = ../../../blobs/ ] \
  && [ ! -e \"\$d/README.md\" ] && [ ! -e \"\$d/pytorch_model.bin\" ]"
check pull_refuses_pytorch_bin_only bash -c "run 1 pull tiny/binonly && err_has 'only pytorch_model*.bin' \
  && [ ! -d '$cache/models--tiny--binonly/blobs' ]"

# An interrupted transfer leaves blobs/<sha256>.incomplete; the next pull resumes it.
sha=$(sha256sum "$model/model.safetensors" | cut -c1-64)
check interrupted_pull_fails bash -c "run 1 pull tiny/resume && err_has 'run vlm pull again to resume' \
  && [ -s '$cache/models--tiny--resume/blobs/$sha.incomplete' ] && [ ! -e '$cache/models--tiny--resume/blobs/$sha' ]"
check interrupted_pull_resumes bash -c "run 0 pull tiny/resume && err_has 'resuming model.safetensors at' \
  && [ ! -e '$cache/models--tiny--resume/blobs/$sha.incomplete' ] && cmp '$model/model.safetensors' '$cache/models--tiny--resume/blobs/$sha'"
check resume_sent_a_range grep -q "GET /cdn/tiny%2Fresume/$sha Range=bytes=[1-9]" "$work/hub.log"
check resume_ignored_starts_over bash -c "run 1 pull tiny/norange && run 0 pull tiny/norange \
  && cmp '$model/model.safetensors' '$cache/models--tiny--norange/blobs/$sha'"
size=$(stat -c %s "$model/model.safetensors")
check oversize_refused bash -c "run 1 pull tiny/oversize && err_has 'more than the $size bytes it announced' \
  && [ ! -e '$cache/models--tiny--oversize/blobs/$sha' ] && [ ! -e '$cache/models--tiny--oversize/blobs/$sha.incomplete' ]"
check bad_checksum_refused bash -c "run 1 pull tiny/badsum && err_has 'differs from the hub' && err_has 'was removed' \
  && [ ! -e '$cache/models--tiny--badsum/blobs/$sha' ] && [ ! -e '$cache/models--tiny--badsum/blobs/$sha.incomplete' ] \
  && ! ls '$cache'/models--tiny--badsum/snapshots/*/model.safetensors 2>/dev/null"
check bad_checksum_not_found_by_run refuses 1 "is not in the Hugging Face cache" run --model tiny/badsum --prompt hi

check private_401_says_set_token bash -c "run 1 pull tiny/private && err_has '401 Unauthorized' && err_has 'set HF_TOKEN'"
check private_with_token bash -c "HF_TOKEN=good-token run 0 pull tiny/private"
check private_token_from_file bash -c "rm -rf '$work/hf-tok'; mkdir -p '$work/hf-tok' && echo good-token >'$work/hf-tok/token' \
  && HF_HOME='$work/hf-tok' run 0 pull tiny/private"
check gated_says_accept_before_fetching bash -c "run 1 pull tiny/gated && err_has 'is a gated model' \
  && err_has 'accept its license at $HF_ENDPOINT/tiny/gated' && err_has 'set HF_TOKEN' && [ ! -d '$cache/models--tiny--gated/blobs' ]"
check gated_403_says_accept bash -c "HF_TOKEN=wrong run 1 pull tiny/gated && err_has '403 Forbidden' && err_has 'accept its license at'"
check gated_with_access bash -c "HF_TOKEN=gated-ok run 0 pull tiny/gated"
# The token goes to the hub, never to the host an LFS redirect names.
check token_sent_to_the_hub grep -q "resolve/.*/config.json authorized" "$work/hub.log"
check token_not_sent_to_the_cdn_host bash -c "! grep -q 'GET /cdn/.* authorized' '$work/hub.log'"

# ---- the cache shared with huggingface_hub --------------------------------
python=$source_dir/.venv-ci/bin/python
if [ -x "$python" ] && "$python" -c 'import huggingface_hub' 2>/dev/null; then
  export hf_cache=$work/hf-shared
  check huggingface_hub_download_found_by_vlm bash -c "HF_HOME='$hf_cache' '$python' -c '
import huggingface_hub
print(huggingface_hub.snapshot_download(\"tiny/qwen2\"))' >/dev/null 2>&1 \
    && HF_HOME='$hf_cache' HF_HUB_OFFLINE=1 run 0 run --model tiny/qwen2 --prompt hi --max-tokens 3 --temperature 0 \
    && [ \"\$(cat '$work/out')\" = \"$expected\" ]"
  check vlm_pull_found_by_huggingface_hub bash -c "rm -rf '$work/hf-vlm'; HF_HOME='$work/hf-vlm' run 0 pull tiny/adapters \
    && HF_HOME='$work/hf-vlm' HF_HUB_OFFLINE=1 '$python' -c '
import huggingface_hub, os, sys
path = huggingface_hub.snapshot_download(\"tiny/adapters\", local_files_only=True)
assert path == sys.argv[1], (path, sys.argv[1])
file = huggingface_hub.hf_hub_download(\"tiny/adapters\", \"vision-lora/adapter_model.safetensors\", local_files_only=True)
assert open(file, \"rb\").read() == open(sys.argv[2], \"rb\").read()
assert huggingface_hub.try_to_load_from_cache(\"tiny/adapters\", \"config.json\").startswith(sys.argv[1])
' \"\$(cat '$work/out')\" '$model/model.safetensors'"
  check vlm_pull_scanned_by_huggingface_hub bash -c "HF_HOME='$work/hf-vlm' '$python' -c '
import huggingface_hub
info = huggingface_hub.scan_cache_dir()
repos = {r.repo_id: r for r in info.repos}
assert \"tiny/adapters\" in repos and not info.warnings, info.warnings
assert repos[\"tiny/adapters\"].refs[\"main\"].commit_hash
'"
else
  skip no-venv-ci shared_cache "$python with huggingface_hub (tools/oracle/requirements-ci.txt) is absent"
fi
finish
