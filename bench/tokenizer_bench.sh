#!/usr/bin/env bash
# Tokenizer speed, vlm vs Hugging Face tokenizers, in the same run.
#   bench/tokenizer_bench.sh BUILD_DIR PYTHON [TOKENIZER_DIR...]
# BUILD_DIR holds a built libvlm.a (e.g. build); PYTHON has `tokenizers`
# (e.g. /tmp/tfvenv/bin/python). Default tokenizers: ../shared/fixtures/tokenizers/*.
# Encodes ~1 MB of mixed text (English, code, CJK, emoji, numbers, whitespace)
# with add_special_tokens; HF is timed single-threaded (encode of one string).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1
python=$2
shift 2
dirs=("$@")
[ "${#dirs[@]}" -gt 0 ] || dirs=(../shared/fixtures/tokenizers/*/)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -Iinclude bench/tokenizer_bench.c "$build/libvlm.a" $(pkg-config --libs oniguruma libutf8proc) \
  -lpthread -lm -o "$work/bench"
"$python" - "$work/text.txt" <<'PY'
import sys
parts = [
    "The quick brown fox jumps over the lazy dog. It's 2024; numbers like 3.14159 and 1,000,000 appear.\n",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n\n",
    "日本語のテキストです。中文文本，还有한국어 텍스트。\n",
    "Emoji 😀👍🏽 🎉 and accents café naïve résumé.\n\t  indented   spaces\n\n",
]
text = "".join(parts)
data = (text * (1_000_000 // len(text.encode()) + 1)).encode()[:1_000_000]
data = data.decode("utf-8", errors="ignore").encode()
open(sys.argv[1], "wb").write(data)
PY
for dir in "${dirs[@]}"; do
  name=$(basename "$dir")
  vlm_line=$("$work/bench" "$dir" "$work/text.txt" 3)
  hf_line=$(RAYON_NUM_THREADS=1 "$python" - "$dir" "$work/text.txt" <<'PY'
import json, sys, time
from tokenizers import Tokenizer
start = time.perf_counter()
tokenizer = Tokenizer.from_file(sys.argv[1] + "/tokenizer.json")
load = time.perf_counter() - start
text = open(sys.argv[2], encoding="utf-8").read()
size = len(text.encode())
best = 1e30
for _ in range(3):
    start = time.perf_counter()
    ids = tokenizer.encode(text).ids
    best = min(best, time.perf_counter() - start)
print(json.dumps({"engine": "hf tokenizers", "load_ms": round(load * 1000), "tokens": len(ids),
                  "mb_per_s": round(size / best / 1e6, 2)}))
PY
)
  echo "$name: $vlm_line"
  echo "$name: $hf_line"
done
