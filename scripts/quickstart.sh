#!/usr/bin/env bash
# The README's first command: install dependencies, build, and run the main
# job on a tiny model generated on the spot. At this stage the main job is
# `vlm inspect`; it grows into a text and then an image request as the
# engine lands.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
build/vlm-make-tiny-model out/tiny-llava
build/vlm inspect --model out/tiny-llava
