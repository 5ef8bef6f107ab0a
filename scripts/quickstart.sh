#!/usr/bin/env bash
# The README's first command: install dependencies, build, and run the main
# job on tiny models: inspect a generated LLaVA-shaped checkpoint, answer a
# text request with the checked-in tiny Qwen2, then an image request with the
# checked-in tiny LLaVA-1.5 (random weights, so the replies are gibberish, but
# every stage is the real one: image decode and CLIP processor, vision tower,
# projector, chat template, tokenizer, decoder, sampling); finally start
# `vlm serve` on the tiny Qwen2, stream one chat completion from it over
# HTTP, and stop it with SIGTERM; then a model by id: `vlm pull` of the tiny
# Qwen2 from a stand-in Hugging Face hub on loopback (tests/hub/fake_hub.py,
# HF_ENDPOINT) into a scratch cache (HF_HOME), and `vlm run --model ORG/NAME`
# from that cache, offline.
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

echo "== vlm serve: one streamed chat completion over HTTP"
log=$(mktemp)
build/vlm serve --model tests/models/qwen2 --port 0 --parallel 2 2>"$log" &
server=$!
hub=
hub_dir=$(mktemp -d)
trap 'kill $server $hub 2>/dev/null || true; rm -rf "$log" "$hub_dir"' EXIT
for _ in $(seq 100); do grep -q "listening on" "$log" && break; sleep 0.1; done
url=$(grep -o "http://[^ ]*" "$log" | head -1)
[ -n "$url" ] || { cat "$log"; exit 1; }
python3 - "$url" <<'PY'
import json, sys, urllib.request
body = {"model": "qwen2", "stream": True, "max_tokens": 16,
        "messages": [{"role": "user", "content": "Say hello."}]}
request = urllib.request.Request(sys.argv[1] + "/v1/chat/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
with urllib.request.urlopen(request) as response:
    for line in response:
        line = line.decode().strip()
        if line.startswith("data: ") and line != "data: [DONE]":
            delta = json.loads(line[6:])["choices"][0]["delta"].get("content") or ""
            print(delta, end="", flush=True)
print()
PY
kill -TERM $server
wait $server
echo "vlm serve stopped cleanly"

echo "== a model by id: vlm pull from a stand-in hub, then vlm run --model ORG/NAME from the cache"
python3 tests/hub/fake_hub.py --port-file "$hub_dir/port" --repo tiny/qwen2=tests/models/qwen2 2>"$hub_dir/log" &
hub=$!
for _ in $(seq 100); do [ -s "$hub_dir/port" ] && break; sleep 0.1; done
export HF_HOME=$hub_dir/hf HF_ENDPOINT=http://127.0.0.1:$(cat "$hub_dir/port")
build/vlm pull tiny/qwen2
HF_HUB_OFFLINE=1 build/vlm run --model tiny/qwen2 --prompt "Describe a cat sitting on a warm windowsill." --max-tokens 24
