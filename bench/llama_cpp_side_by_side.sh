#!/usr/bin/env bash
# vlm and llama.cpp side by side on one random Qwen2-0.5B-shaped checkpoint,
# alternating, with the bounds `vlm bench` measures in the same run.
#
#   bench/llama_cpp_side_by_side.sh [--build-only] [--isa native|avx2]
#                                   [--threads N] [--rounds N] [--lock FILE]
#
# Everything of llama.cpp lives outside the repository, in $LLAMA_CPP_WORK
# (default ${XDG_CACHE_HOME:-/tmp}/vlm-llama-cpp-0.3.36); nothing of it is
# ever copied into the tree. Steps (each skipped when its output exists):
#  1. `pip download` the llama-cpp-python==0.3.36 sdist from PyPI (its
#     vendored llama.cpp is commit 0c1e57098) and unpack it;
#  2. build llama-bench and llama-quantize from the vendored tree with cmake
#     (nice'd; GGML_NATIVE, or with --isa avx2 a second build with AVX-512
#     off, in its own directory);
#  3. a throwaway venv for the sdist's convert_hf_to_gguf.py: the gguf
#     package from PyPI (0.19.0, the version the vendored gguf-py declares)
#     and sentencepiece (the converter imports it for Qwen2 even without a
#     tokenizer.model; its requirements allow >=0.1.98,<0.3.0) installed into it, torch/transformers/numpy seen through a .pth file
#     from $CONVERT_PYTHON's site-packages (default .venv-oracle/bin/python;
#     that environment is only read);
#  4. the checkpoint `vlm bench` uses: `vlm-make-tiny-model --config
#     bench/configs/qwen2-0.5b.json --dtype bf16`, plus a real Qwen tokenizer
#     (../shared/fixtures/tokenizers/qwen3: Qwen2's BPE and pre-tokenizer,
#     which the converter needs; the 151936-row vocabulary is padded by it);
#     converted to a bf16 GGUF, quantized to Q8_0 and Q4_0 (llama-quantize's
#     defaults for those types);
#  5. ROUNDS rounds (default 3) alternating the engines (the order flips
#     every round): `vlm bench` (prefill 512, decode batch 1; its JSON holds
#     the same-run FMA peak and read bandwidth) and llama-bench (pp512,
#     tg64) on bf16, Q8_0 and Q4_0; vlm runs its quantized formats only when
#     its bench has --quantize (another branch adds it). Prints one table of
#     medians with the bounds, and the load average before and after.
# --lock FILE takes `flock FILE` around step 5 only (the builds are not
# measurements). --build-only stops after step 4. Needs: cmake, a C/C++
# compiler, network access to PyPI, a built vlm in $VLM_BUILD (default
# build).
set -euo pipefail
cd "$(dirname "$0")/.."

isa=native threads=2 rounds=3 lock='' build_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --isa) isa=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --lock) lock=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    *) echo "usage: $0 [--build-only] [--isa native|avx2] [--threads N] [--rounds N] [--lock FILE]" >&2; exit 2 ;;
  esac
done
case $isa in native|avx2) ;; *) echo "--isa: native or avx2" >&2; exit 2 ;; esac

source bench/llama_cpp_env.sh
jobs=${JOBS:-2}
mkdir -p "$work"
log() { echo "[side-by-side] $*" >&2; }
log "work directory $work; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. The sdist.
src=$work/llama_cpp_python-$version
if [ ! -f "$src/vendor/llama.cpp/CMakeLists.txt" ]; then
  log "downloading llama-cpp-python==$version (sdist) from PyPI"
  python3 -m pip download --no-deps --no-binary :all: "llama-cpp-python==$version" -d "$work/sdist" >&2
  tar -xzf "$work/sdist/llama_cpp_python-$version.tar.gz" -C "$work"
fi
log "sdist sha256 $(sha256sum "$work/sdist/llama_cpp_python-$version.tar.gz" | cut -d' ' -f1)"
llama=$src/vendor/llama.cpp

# 2. llama.cpp's tools.
llama_build=$work/build-$isa
if [ ! -x "$llama_build/bin/llama-bench" ] || [ ! -x "$llama_build/bin/llama-quantize" ]; then
  flags=(-DGGML_NATIVE=ON)
  [ "$isa" = avx2 ] && flags=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
                              -DGGML_BMI2=ON -DGGML_AVX512=OFF)
  log "building llama-bench and llama-quantize ($isa) in $llama_build"
  nice -n 19 cmake -S "$llama" -B "$llama_build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_OPENSSL=OFF "${flags[@]}" >&2
  nice -n 19 cmake --build "$llama_build" -j "$jobs" --target llama-bench llama-quantize >&2
fi

# 3. The converter's environment.
venv=$work/venv
throwaway_venv "$venv" "import gguf, sentencepiece, torch, transformers" "gguf==0.19.0" "sentencepiece>=0.1.98,<0.3.0"

# 4. The checkpoint and its GGUF files.
model=$work/qwen2-0.5b-bf16
if [ ! -f "$model/model.safetensors" ]; then
  "$vlm_build/vlm-make-tiny-model" --config bench/configs/qwen2-0.5b.json --dtype bf16 "$model" >&2
  cp ../shared/fixtures/tokenizers/qwen3/tokenizer.json ../shared/fixtures/tokenizers/qwen3/tokenizer_config.json \
    "$model/"
fi
gguf_bf16=$work/qwen2-0.5b-bf16.gguf
if [ ! -f "$gguf_bf16" ]; then
  log "converting to $gguf_bf16"
  (cd "$llama" && nice -n 10 "$venv/bin/python" convert_hf_to_gguf.py "$model" --outtype bf16 \
     --outfile "$gguf_bf16.part" >&2) && mv "$gguf_bf16.part" "$gguf_bf16"
fi
for type in Q8_0 Q4_0; do
  out=$work/qwen2-0.5b-$type.gguf
  [ -f "$out" ] || nice -n 10 "$llama_build/bin/llama-quantize" "$gguf_bf16" "$out" "$type" "$threads" >&2
done
[ "$build_only" = 1 ] && { log "built; load average $(cut -d' ' -f1-3 /proc/loadavg)"; exit 0; }

# 5. Alternating measurements.
results=$work/results-$isa-$(date +%Y%m%d-%H%M%S)
mkdir -p "$results"
[ "$isa" = avx2 ] && export VLM_CPU_PATH=avx2
quantize_formats=()
"$vlm_build/vlm" bench --help 2>&1 | grep -q -- "--quantize" && quantize_formats=(q8 q4)
run_vlm() { # round
  "$vlm_build/vlm" --threads "$threads" bench --model "$model" --prefill 512 --decode-batch 1 --steps 64 \
    --repetitions 3 > "$results/vlm-bf16-$1.json" 2> "$results/vlm-bf16-$1.err"
  for q in "${quantize_formats[@]}"; do
    "$vlm_build/vlm" --threads "$threads" bench --model "$model" --quantize "$q" --prefill 512 --decode-batch 1 \
      --steps 64 --repetitions 3 > "$results/vlm-$q-$1.json" 2> "$results/vlm-$q-$1.err"
  done
}
run_llama() { # round
  for type in bf16 Q8_0 Q4_0; do
    "$llama_build/bin/llama-bench" -m "$work/qwen2-0.5b-$type.gguf" -t "$threads" -p 512 -n 64 -r 3 -o json \
      > "$results/llama-$type-$1.json" 2> "$results/llama-$type-$1.err"
  done
}
measure() {
  uptime > "$results/uptime-before"
  for round in $(seq 1 "$rounds"); do
    log "round $round of $rounds (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    if [ $((round % 2)) = 1 ]; then run_vlm "$round"; run_llama "$round"; else run_llama "$round"; run_vlm "$round"; fi
  done
  uptime > "$results/uptime-after"
}
if [ -n "$lock" ]; then
  exec 9> "$lock"
  log "waiting for $lock"
  flock 9
fi
measure
[ -n "$lock" ] && exec 9>&-

python3 - "$results" "$rounds" "$threads" "$isa" "$work" <<'PY'
import json, os, statistics, sys
results, rounds, threads, isa, work = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
def load(name):
    path = os.path.join(results, name)
    try:
        return json.load(open(path)) if os.path.exists(path) and os.path.getsize(path) else None
    except ValueError:  # a run cut short
        return None
def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None
def vlm(fmt, key):
    out = []
    for r in range(1, rounds + 1):
        report = load(f"vlm-{fmt}-{r}.json")
        if report:
            out.append(report)
    if not out:
        return None, None
    if key == "prefill":
        rate = med([o["prefill"][0]["tokens_per_second"] for o in out])
        bound = med([o["prefill"][0]["tokens_per_second"] / o["prefill"][0]["fraction_of_fma_peak"]
                     for o in out if o["prefill"][0]["fraction_of_fma_peak"] > 0])
    else:
        rate = med([o["decode"][0]["tokens_per_second"] for o in out])
        bound = med([o["decode"][0]["tokens_per_second"] / o["decode"][0]["fraction_of_roofline"]
                     for o in out if o["decode"][0]["fraction_of_roofline"] > 0])
    return rate, bound
def llama(fmt, key):
    rates = []
    for r in range(1, rounds + 1):
        for entry in load(f"llama-{fmt}-{r}.json") or []:
            if (key == "prefill" and entry["n_prompt"] == 512 and entry["n_gen"] == 0) or \
               (key == "decode" and entry["n_gen"] == 64 and entry["n_prompt"] == 0):
                rates.append(entry["avg_ts"])
    return med(rates)
bw = med([load(f"vlm-bf16-{r}.json")["read_bandwidth_gb_per_s"] for r in range(1, rounds + 1) if load(f"vlm-bf16-{r}.json")])
fma = med([load(f"vlm-bf16-{r}.json")["fma_peak_gflops"] for r in range(1, rounds + 1) if load(f"vlm-bf16-{r}.json")])
first = load("vlm-bf16-1.json") or {}
sizes = {t: os.path.getsize(os.path.join(work, f"qwen2-0.5b-{t}.gguf")) for t in ("bf16", "Q8_0", "Q4_0")}
def fmt(rate, bound):
    if rate is None:
        return "-"
    return f"{rate:.1f}" + (f" ({100 * rate / bound:.0f}%)" if bound else "")
print(f"\n{threads} threads, kernel path {first.get('kernel_path')} ({isa}), {first.get('cpu')}; "
      f"medians of {rounds} alternating rounds; same-run bounds (vlm bench): FMA {fma:.1f} GFLOP/s, "
      f"read {bw:.1f} GB/s")
print(f"load average before: {open(os.path.join(results, 'uptime-before')).read().strip()}")
print(f"load average after:  {open(os.path.join(results, 'uptime-after')).read().strip()}\n")
print("| tok/s | vlm | llama.cpp | bound |")
print("|---|---|---|---|")
for key, label in (("prefill", "prefill 512"), ("decode", "decode (tg64)")):
    for v_fmt, l_fmt in (("bf16", "bf16"), ("q8", "Q8_0"), ("q4", "Q4_0")):
        rate, bound = vlm(v_fmt, key)
        if l_fmt != "bf16" and key == "decode" and bw:
            bound = bw * 1e9 / sizes[l_fmt]  # the GGUF's bytes at the same-run read bandwidth
        elif l_fmt != "bf16" and key == "prefill":
            bound = vlm("bf16", "prefill")[1]  # the same multiply-adds at the FMA peak
        elif bound is None:
            bound = vlm("bf16", key)[1]
        print(f"| {label}, {l_fmt} | {fmt(rate, bound)} | {fmt(llama(l_fmt, key), bound)} | "
              f"{bound:.1f} |" if bound else f"| {label}, {l_fmt} | {fmt(rate, None)} | {fmt(llama(l_fmt, key), None)} | - |")
print(f"\nGGUF sizes: " + ", ".join(f"{t} {s / 1e6:.0f} MB" for t, s in sizes.items()) + f"; raw results in {results}")
PY
