# Sourced by the bench/llama_cpp_*.sh scripts (from the repository root):
# where llama.cpp's side of a comparison lives and how its Python tools
# get an environment, in one place. Never run on its own.
#   LLAMA_CPP_WORK  the work directory, outside the repository
#                   (default ${XDG_CACHE_HOME:-/tmp}/vlm-llama-cpp-VERSION)
#   VLM_BUILD       vlm's build directory (default build)
#   CONVERT_PYTHON  the Python whose torch/transformers the converters'
#                   venvs see, only read (default .venv-oracle/bin/python)
version=0.3.36
repo=$(pwd)
work=${LLAMA_CPP_WORK:-${XDG_CACHE_HOME:-/tmp}/vlm-llama-cpp-$version}
vlm_build=${VLM_BUILD:-build}
convert_python=${CONVERT_PYTHON:-$repo/.venv-oracle/bin/python}
case $work in "$repo"|"$repo"/*) echo "LLAMA_CPP_WORK must be outside the repository" >&2; exit 2 ;; esac

# throwaway_venv DIR CHECK PACKAGE...: a venv in DIR where the Python
# statement CHECK succeeds, made when it does not: PACKAGEs from PyPI
# installed into it, $convert_python's site-packages seen through a .pth
# file (after the venv's own, so a pinned package there wins).
throwaway_venv() {
  local venv=$1 check=$2
  shift 2
  [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" 2>/dev/null && return 0
  echo "[llama-cpp] throwaway venv in $venv: $*" >&2
  "$convert_python" -m venv --clear "$venv"
  "$convert_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' > \
    "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/convert-deps.pth"
  "$venv/bin/python" -m pip install --quiet "$@" >&2
}
