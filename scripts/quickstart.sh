#!/usr/bin/env bash
# The README's first command: install dependencies, build, and run the main
# job on tiny models: inspect a generated LLaVA-shaped checkpoint, then answer
# a text request with the checked-in tiny Qwen2 (random weights, so the reply
# is gibberish, but every stage is the real one: chat template, tokenizer,
# decoder, sampling). Image requests join when the vision path lands.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
build/vlm-make-tiny-model out/tiny-llava
build/vlm inspect --model out/tiny-llava
build/vlm run --model tests/models/qwen2 --prompt "Describe a cat sitting on a warm windowsill." --max-tokens 24
