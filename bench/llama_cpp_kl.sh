#!/usr/bin/env bash
# The KL divergence of vlm's q8/q4 and llama.cpp's Q8_0/Q4_0 on one model,
# the same tokens and the same positions, against each engine's bf16 and
# against each other's (issue 19: "q4 ... at equal or better KL").
#
#   bench/llama_cpp_kl.sh [--text FILE] [--ctx N] [--chunks N] [--threads N]
#
# Uses what bench/llama_cpp_side_by_side.sh --build-only builds outside the
# repository (the sdist's llama.cpp, the random Qwen2-0.5B-shaped bf16
# checkpoint and its bf16/Q8_0/Q4_0 GGUFs; run first if missing), plus
# llama-perplexity from the same tree. Steps:
#  1. llama-perplexity --kl-divergence-base on the bf16 GGUF: llama.cpp's
#     reference distributions for TEXT (default ../shared/SPEC.md) in
#     CHUNKS chunks of CTX tokens; llama.cpp scores the second half of each;
#  2. vlm-quant-accuracy --llama-base on that file for vlm's bf16 (as
#     stored), q8 and q4: KL against vlm's bf16 and against llama.cpp's, on
#     those tokens and positions; the first also writes vlm's bf16
#     distributions in llama.cpp's format;
#  3. llama-perplexity --kl-divergence for llama.cpp's bf16, Q8_0 and Q4_0
#     against both reference files.
# Prints one table. Not a timing: no lock needed.
set -euo pipefail
cd "$(dirname "$0")/.."
text=../shared/SPEC.md ctx=512 chunks=4 threads=2
while [ $# -gt 0 ]; do
  case $1 in
    --text) text=$2; shift 2 ;;
    --ctx) ctx=$2; shift 2 ;;
    --chunks) chunks=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    *) echo "usage: $0 [--text FILE] [--ctx N] [--chunks N] [--threads N]" >&2; exit 2 ;;
  esac
done
source bench/llama_cpp_env.sh
log() { echo "[llama-cpp-kl] $*" >&2; }
bench/llama_cpp_side_by_side.sh --build-only >&2
llama_build=$work/build-native
[ -x "$llama_build/bin/llama-perplexity" ] ||
  nice -n 19 cmake --build "$llama_build" -j "${JOBS:-2}" --target llama-perplexity >&2
model=$work/qwen2-0.5b-bf16
out=$work/kl-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
perplexity() { # gguf-type base-file log
  "$llama_build/bin/llama-perplexity" -m "$work/qwen2-0.5b-$1.gguf" -c "$ctx" -t "$threads" \
    --kl-divergence-base "$2" "${@:4}" >"$3" 2>&1 || { tail -20 "$3" >&2; exit 1; }
}
log "llama.cpp bf16 reference on $text ($chunks chunks of $ctx tokens), in $out"
perplexity bf16 "$out/base-llama.bin" "$out/llama-bf16-base.log" -f "$text" --chunks "$chunks"
for q in none q8 q4; do
  write=()
  [ "$q" = none ] && write=(--write-llama-base "$out/base-vlm.bin")
  "$vlm_build/vlm-quant-accuracy" --threads "$threads" --model "$model" --quantize "$q" \
    --llama-base "$out/base-llama.bin" "${write[@]}" >"$out/vlm-$q.json"
done
for base in llama vlm; do
  for type in bf16 Q8_0 Q4_0; do
    perplexity "$type" "$out/base-$base.bin" "$out/llama-$type-vs-$base.log" --kl-divergence
  done
done
python3 - "$out" "$work" <<'PY'
import json, os, re, sys
out, work = sys.argv[1:]
def llama(type_, base):
    text = open(os.path.join(out, f"llama-{type_}-vs-{base}.log")).read()
    kl = float(re.search(r"Mean +KLD: +([-0-9.e]+)", text).group(1))
    top = float(re.search(r"Same top p: +([0-9.]+)", text).group(1)) / 100
    ppl = float(re.search(r"Mean PPL\(Q\) +: +([0-9.]+)", text).group(1))
    return kl, top, ppl
rows = []
for q in ("none", "q8", "q4"):
    r = json.load(open(os.path.join(out, f"vlm-{q}.json")))
    b = r["llama_base"]
    rows.append((f"vlm {'bf16' if q == 'none' else q}", r["mean_kl"], r["top1_agreement"], b["kl_base_candidate"],
                 b["top1_base_candidate"], b["ppl_candidate"], None))
    positions = r["positions"]
for type_ in ("bf16", "Q8_0", "Q4_0"):
    kl_v, top_v, ppl = llama(type_, "vlm")
    kl_l, top_l, _ = llama(type_, "llama")
    rows.append((f"llama.cpp {type_}", kl_v, top_v, kl_l, top_l, ppl,
                 os.path.getsize(os.path.join(work, f"qwen2-0.5b-{type_}.gguf"))))
print(f"\n{positions} positions (second half of each chunk), random Qwen2-0.5B-shaped weights")
print("| weights | KL vs vlm bf16 | same top-1 | KL vs llama.cpp bf16 | same top-1 | perplexity | GGUF bytes |")
print("|---|---|---|---|---|---|---|")
for name, kv, tv, kl, tl, ppl, size in rows:
    print(f"| {name} | {kv:.6f} | {100 * tv:.1f}% | {kl:.6f} | {100 * tl:.1f}% | {ppl:.0f} | {size or '-'} |")
PY
