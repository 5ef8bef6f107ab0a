#!/usr/bin/env bash
# The README's first command: install dependencies, build, and run the main
# job on tiny models: inspect a generated LLaVA-shaped checkpoint, answer a
# text request with the checked-in tiny Qwen2, then an image request with the
# checked-in tiny LLaVA-1.5 (random weights, so the replies are gibberish, but
# every stage is the real one: image decode and CLIP processor, vision tower,
# projector, chat template, tokenizer, decoder, sampling).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
build/vlm-make-tiny-model out/tiny-llava
build/vlm inspect --model out/tiny-llava
build/vlm run --model tests/models/qwen2 --prompt "Describe a cat sitting on a warm windowsill." --max-tokens 24
image=../shared/fixtures/media/images/chelsea.png
[ -f "$image" ] || image=fuzz/corpus/image_decode/progressive.jpg # a tiny JPEG shipped with the repo
build/vlm run --model tests/models/llava --image "$image" --prompt "What is in this picture?" --max-tokens 24 --json
