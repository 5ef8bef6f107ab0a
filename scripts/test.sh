#!/usr/bin/env bash
# The README's second command, and what CI runs (.ci/run): the whole suite,
# built normally and again under AddressSanitizer + UndefinedBehaviorSanitizer,
# then the fuzz targets replaying their corpora plus a short fresh run each.
# FUZZ_SECONDS=0 skips the fresh runs. A test that skips fails the run unless
# this machine cannot have what it needs (scripts/check-skips.sh: only a
# kernel path the CPU lacks); this script provides everything else.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh
jobs=$(nproc)
fuzz_seconds=${FUZZ_SECONDS:-20}

# The server tests (tests/cli/serve.sh) drive `vlm serve` with the pinned
# OpenAI Python client; without this venv they would SKIP (and fail the run).
[ -x .venv-server/bin/python ] || { python3 -m venv .venv-server && .venv-server/bin/pip install --quiet -r tests/server/requirements.txt; }
# The chat page's browser test (tests/cli/serve_browser.sh) drives Debian's
# chromium with the pinned selenium; the Kubernetes manifests under deploy/
# are checked against the schemas kubernetes-validate bundles (no network
# beyond PyPI).
[ -x .venv-browser/bin/python ] || { python3 -m venv .venv-browser && .venv-browser/bin/pip install --quiet -r tests/server/requirements-browser.txt; }
[ -x .venv-deploy/bin/kubernetes-validate ] && [ -x .venv-deploy/bin/hadolint ] || { python3 -m venv .venv-deploy && .venv-deploy/bin/pip install --quiet -r deploy/requirements.txt; }

# The oracle's CI venv (tools/oracle/requirements-ci.txt: transformers
# without torch, and huggingface_hub, with which tests/cli/hub.sh shares the
# model cache both ways).
[ -x .venv-ci/bin/python ] || { python3 -m venv .venv-ci && .venv-ci/bin/pip install --quiet -r tools/oracle/requirements-ci.txt; }

# xla backend: the pinned IREE compiler and runtime (tools/xla/requirements.txt,
# ~600 MB, paid once per machine). The venv must come from Debian's
# /usr/bin/python3.11, whose libpython the runtime embeds; without it the
# xla tests would SKIP (and fail the run).
[ -x .venv-xla/bin/iree-compile ] || { /usr/bin/python3.11 -m venv .venv-xla && .venv-xla/bin/pip install --quiet -r tools/xla/requirements.txt; }

echo "== build and test (release with debug info)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVLM_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
scripts/check-skips.sh build -j"$jobs"

# The README's first command on this build: the tiny runs, serve, and a
# model by id pulled from a stand-in hub and run from the cache.
echo "== quickstart (scripts/quickstart.sh): tiny runs, serve, vlm pull and run by id"
scripts/quickstart.sh >/dev/null

# Every build type a user may pick, with both compilers we support, builds
# warning-free (the tests included); a packager's first try is Release.
echo "== build types: Release and Debug with gcc, Release with clang (warnings are errors)"
for variant in gcc:Release gcc:Debug clang:Release; do
  compiler=${variant%%:*} type=${variant#*:}
  CC=$compiler cmake -S . -B "build-types/$compiler-$type" -DCMAKE_BUILD_TYPE="$type" -DVLM_WERROR=ON >/dev/null
  cmake --build "build-types/$compiler-$type" -j"$jobs" >/dev/null
  echo "$compiler $type: built"
done

# The .deb of the Release build, installed with dpkg -i and run from the
# installed paths (cpu and xla), then removed.
echo "== package: cpack's .deb installed and run (scripts/check-package.sh)"
scripts/check-package.sh build-types/gcc-Release

# Oracle harness (tools/oracle): vlm's tables of Transformers defaults against
# the pinned Transformers classes. Needs no torch; the venv is reused when present.
echo "== oracle: config defaults against transformers (tools/oracle/check_config_defaults.py)"
.venv-ci/bin/python tools/oracle/check_config_defaults.py build/vlm-dump-config-defaults

echo "== build and test under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DVLM_SANITIZE=ON -DVLM_WERROR=ON >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  scripts/check-skips.sh build-asan -j"$jobs"

echo "== fuzz targets: replay corpora, then ${fuzz_seconds}s of fresh inputs each"
CC=clang cmake -S . -B build-fuzz -DVLM_FUZZ=ON -DVLM_TESTS=OFF -DVLM_WERROR=ON >/dev/null
cmake --build build-fuzz -j"$jobs"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fuzz_passed=0
for corpus in fuzz/corpus/*/; do
  name=$(basename "$corpus")
  target=build-fuzz/fuzz/fuzz_$name
  # Any single allocation over 512 MB is a finding (scripts/fuzz-campaign.sh).
  "$target" -runs=0 -malloc_limit_mb=512 "$corpus" 2>"$scratch/$name.log" || { cat "$scratch/$name.log"; exit 1; }
  if [ "$fuzz_seconds" -gt 0 ]; then
    mkdir -p "$scratch/$name"
    "$target" -max_total_time="$fuzz_seconds" -malloc_limit_mb=512 -artifact_prefix="$scratch/" "$scratch/$name" "$corpus" \
      2>"$scratch/$name.fresh.log" || { tail -40 "$scratch/$name.fresh.log"; exit 1; }
  fi
  fuzz_passed=$((fuzz_passed + 1))
  echo "fuzz_$name: corpus replayed$([ "$fuzz_seconds" -gt 0 ] && echo ", ${fuzz_seconds}s fuzzed") without a finding"
done
echo "fuzz: $fuzz_passed passed, 0 failed"
