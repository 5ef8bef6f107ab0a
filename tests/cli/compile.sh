#!/usr/bin/env bash
# `vlm compile --backend xla`: StableHLO emission needs no compiler; with the
# pinned iree-compile (.venv-xla) the tiny LLaVA's text decoder and vision
# module compile for llvm-cpu and for cuda (no GPU needed to compile), each
# artifact next to a key.json naming its target; usage errors and a missing
# compiler are refused clearly. Arguments: VLM MAKE_TINY SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"
llava=$source_dir/tests/models/llava

check emit_needs_no_compiler bash -c "VLM_IREE_COMPILE=/nonexistent run 0 compile --model '$llava' --backend xla --emit-mlir - && out_has 'func.func @decode' && out_has 'vlm.compatibility_key'"
check missing_compiler_is_refused bash -c "VLM_IREE_COMPILE=/nonexistent run 1 compile --model '$llava' --backend xla --cache-dir '$work/none' && err_has 'VLM_IREE_COMPILE=/nonexistent is not an executable file'"
check compile_needs_a_backend refuses 2 "--backend xla is required" compile --model "$llava"
check cpu_has_nothing_to_compile refuses 2 "has nothing to compile" compile --model "$llava" --backend cpu

# compiles TARGET: both modules, artifacts and keys present, target recorded.
compiles() {
  run 0 compile --model "$llava" --backend xla --target "$1" --capacity 1024 --slots 2 --prefill-chunk 64 \
    --cache-dir "$work/cache-$1" || return 1
  local count=0 dir
  for dir in $(cat "$work/out"); do
    [ -s "$dir/module.vmfb" ] && [ -s "$dir/key.json" ] || { echo "  $dir lacks module.vmfb or key.json" >&2; return 1; }
    grep -q "\"$1\"" "$dir/key.json" || { echo "  $dir/key.json does not name target $1" >&2; return 1; }
    count=$((count + 1))
  done
  [ "$count" -eq 2 ] || { echo "  expected a text and a vision artifact, got $count" >&2; return 1; }
}
if [ -x "$source_dir/.venv-xla/bin/iree-compile" ]; then
  check compiles_for_llvm_cpu compiles llvm-cpu
  check compiles_for_cuda compiles cuda
else
  skip no-venv-xla compiling "$source_dir/.venv-xla/bin/iree-compile is missing (tools/xla/requirements.txt)"
fi
finish
