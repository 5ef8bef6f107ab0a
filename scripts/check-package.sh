#!/usr/bin/env bash
# The .deb as a user gets it: builds it from BUILD_DIR (cpack), installs it
# with dpkg -i, and runs vlm from the installed paths only (from another
# directory, the tiny checkpoint given by its absolute path): --version,
# --help, families, a text run on the cpu backend, `vlm pull` from a stand-in
# hub (tests/hub/fake_hub.py) and a run by model id, and a run on the xla
# backend whose bridge must come from PREFIX/share/vlm/xla and whose venv is
# the documented default, /usr/lib/vlm/xla-venv (here a link to the source
# tree's .venv-xla, made and removed by this script). Then removes the
# package. Needs root or sudo (as scripts/install-dependencies.sh). Prints one line per
# check and "N passed, N failed"; exits 1 on a failure.
# Usage: scripts/check-package.sh BUILD_DIR
set -uo pipefail
build=$(cd "${1:?usage: scripts/check-package.sh BUILD_DIR}" && pwd)
source_dir=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
work=$(mktemp -d)
venv_link=/usr/lib/vlm/xla-venv
made_link=false
hub=
cleanup() {
  [ -n "$hub" ] && kill "$hub" 2>/dev/null
  $made_link && $sudo rm -f "$venv_link" && $sudo rmdir --ignore-fail-on-non-empty /usr/lib/vlm 2>/dev/null
  dpkg -s vlm >/dev/null 2>&1 && $sudo dpkg -r vlm >/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
passed=0
failed=0
check() { # check NAME COMMAND...
  local name=$1
  shift
  if "$@" >"$work/out" 2>"$work/err"; then passed=$((passed + 1)); echo "ok   $name"
  else failed=$((failed + 1)); echo "FAIL $name"; cat "$work/out" "$work/err" | tail -20; fi
}

(cd "$build" && rm -f vlm_*.deb && cpack -G DEB >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$build"/vlm_*.deb)
echo "package: $(basename "$deb"), $(du -h "$deb" | cut -f1)"
check deb_depends_on_its_libraries bash -c "dpkg-deb --field '$deb' Depends | grep -q libmicrohttpd12 \
  && dpkg-deb --field '$deb' Depends | grep -q libcurl4"
check deb_installs $sudo dpkg -i "$deb"
check installed_files bash -c 'for file in /usr/bin/vlm /usr/lib/libvlm.a /usr/include/vlm.h /usr/include/vlm/engine.h \
  /usr/share/vlm/xla/vlm_xla_bridge.py /usr/share/vlm/xla/requirements.txt; do [ -e "$file" ] || { echo "missing $file"; exit 1; }; done'
cd "$work" || exit 1
check vlm_version bash -c '/usr/bin/vlm --version | grep -q "^vlm "'
check vlm_help bash -c '/usr/bin/vlm --help | grep -q "families"'
check vlm_families bash -c '/usr/bin/vlm families --json | python3 -c "import json, sys; assert len(json.load(sys.stdin)) > 0"'
model=$source_dir/tests/models/qwen2
tokens_check='import json, sys; reply = json.load(sys.stdin); assert reply["usage"]["completion_tokens"] == 2, reply'
check vlm_run_cpu bash -c "/usr/bin/vlm run --model '$model' --prompt Hi --max-tokens 2 --json | python3 -c '$tokens_check'"
# A model by id: pulled from a stand-in hub on loopback into a scratch
# cache, then run from it offline.
mkdir -p "$work/hub"
python3 "$source_dir/tests/hub/fake_hub.py" --port-file "$work/hub/port" --repo tiny/qwen2="$model" 2>"$work/hub/log" &
hub=$!
for _ in $(seq 100); do [ -s "$work/hub/port" ] && break; sleep 0.1; done
check vlm_pull_and_run_by_id bash -c "HF_HOME='$work/hub/hf' HF_ENDPOINT=http://127.0.0.1:\$(cat '$work/hub/port') \
  /usr/bin/vlm pull --quiet tiny/qwen2 && HF_HOME='$work/hub/hf' HF_HUB_OFFLINE=1 /usr/bin/vlm run --model tiny/qwen2 \
  --prompt Hi --max-tokens 2 --json | python3 -c '$tokens_check'"
# --backend xla from the installed paths: the bridge beside the binary, the
# venv at its documented default.
if [ -x "$source_dir/.venv-xla/bin/python3" ] && [ ! -e "$venv_link" ]; then
  $sudo mkdir -p "$(dirname "$venv_link")" && $sudo ln -s "$source_dir/.venv-xla" "$venv_link" && made_link=true
fi
check vlm_run_xla bash -c "/usr/bin/vlm --log-level debug run --backend xla --model '$model' --prompt Hi --max-tokens 2 \
  --json 2>'$work/xla.err' | python3 -c '$tokens_check' \
  && grep -q 'xla runtime: Python from $venv_link, the bridge from /usr/share/vlm/xla' '$work/xla.err' \
  || { cat '$work/xla.err' | tail -5; exit 1; }"
check deb_removes bash -c "$sudo dpkg -r vlm && [ ! -e /usr/bin/vlm ]"
echo "package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
