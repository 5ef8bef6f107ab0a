#!/usr/bin/env bash
# CLIP ViT-L/14-336 image encode (LLaVA-1.5's tower and projector, f16),
# vlm against llama.cpp's mtmd, alternating, with the FMA bound `vlm bench`
# measures in the same run (issue 19's "CLIP-L/14-336 encode" row).
#
#   bench/llama_cpp_clip_side_by_side.sh [--isa native|avx2] [--threads N]
#                                        [--rounds N] [--image FILE] [--lock FILE]
#
# Builds on bench/llama_cpp_side_by_side.sh --build-only (the sdist's
# llama.cpp outside the repository, its converter venv); then, each step
# skipped when its output exists, in $LLAMA_CPP_WORK/clip:
#  1. a random LLaVA-1.5-shaped checkpoint (bench/configs/llava-1.5-mid.json,
#     f16) and a one-layer Llama of the same width with the Llama-2
#     tokenizer fixture (mtmd needs a language model; only the encode is
#     timed);
#  2. the tower and projector written as a CLIPVisionModel directory and a
#     projector file, converted with the sdist's legacy
#     convert_image_encoder_to_gguf.py (LLaVA-1.5's route in llama.cpp) in a
#     throwaway venv with the transformers its requirements pin (4.57.6;
#     torch seen from $CONVERT_PYTHON's site-packages);
#  3. llama-mtmd-cli built next to llama-bench.
# Each round runs `vlm bench --image` (its first encode, then the best of 3)
# and llama-mtmd-cli three times (one encode a process, after its warmup
# reserved the graph: "mtmd batch encoding done in N ms"), the order
# flipping every round. The LLaVA tower drops its last layer in both.
set -euo pipefail
cd "$(dirname "$0")/.."

isa=native threads=2 rounds=3 lock='' image=../shared/fixtures/media/images/coffee.jpg
while [ $# -gt 0 ]; do
  case $1 in
    --isa) isa=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --image) image=$2; shift 2 ;;
    --lock) lock=$2; shift 2 ;;
    *) echo "usage: $0 [--isa native|avx2] [--threads N] [--rounds N] [--image FILE] [--lock FILE]" >&2; exit 2 ;;
  esac
done
source bench/llama_cpp_env.sh
log() { echo "[clip-side-by-side] $*" >&2; }
bench/llama_cpp_side_by_side.sh --build-only --isa "$isa" >&2
llama=$work/llama_cpp_python-$version/vendor/llama.cpp
llama_build=$work/build-$isa
clip=$work/clip
mkdir -p "$clip"

# 1. The checkpoints.
llava=$clip/llava-mid
[ -f "$llava/model.safetensors" ] ||
  "$vlm_build/vlm-make-tiny-model" --config bench/configs/llava-1.5-mid.json --dtype f16 "$llava" >&2
if [ ! -f "$clip/lm/model.safetensors" ]; then
  python3 - "$llava/config.json" "$clip/lm-config.json" <<'PY'
import json, sys
text = json.load(open(sys.argv[1]))["text_config"]
json.dump({**text, "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 32000,
           "num_hidden_layers": 1, "tie_word_embeddings": False}, open(sys.argv[2], "w"))
PY
  "$vlm_build/vlm-make-tiny-model" --config "$clip/lm-config.json" --dtype f16 "$clip/lm" >&2
  cp ../shared/fixtures/tokenizers/llama2/tokenizer.json ../shared/fixtures/tokenizers/llama2/tokenizer_config.json \
    "$clip/lm/"
fi
[ -f "$clip/lm-f16.gguf" ] || (cd "$llama" && nice -n 10 "$work/venv/bin/python" convert_hf_to_gguf.py "$clip/lm" \
  --outtype f16 --outfile "$clip/lm-f16.gguf" >&2)

# 2. The tower and projector, llama.cpp's legacy LLaVA route.
venv=$work/venv-legacy
throwaway_venv "$venv" "import transformers, gguf, torch; assert transformers.__version__ == '4.57.6'" \
  "transformers==4.57.6" "gguf==0.19.0"
mmproj=$clip/mmproj/mmproj-model-f16.gguf
if [ ! -f "$mmproj" ]; then
  # The oracle's Transformers (5.x) reads the checkpoint; the tower is saved
  # under 4.x's CLIPVisionModel names (vision_model.*), which the legacy
  # converter and the transformers it pins expect.
  (cd "$clip" && "$convert_python" - <<'PY'
import torch, transformers
from safetensors.torch import save_file
model = transformers.LlavaForConditionalGeneration.from_pretrained("llava-mid", dtype=torch.float16)
tower = model.model.vision_tower
tower.config.save_pretrained("vision")
save_file({f"vision_model.{k}": v.contiguous() for k, v in tower.state_dict().items()},
          "vision/model.safetensors", metadata={"format": "pt"})
torch.save({f"multi_modal_projector.{k}": v.float() for k, v in model.model.multi_modal_projector.state_dict().items()},
           "llava.projector")
PY
  ) >&2
  python3 -c "import json; c = json.load(open('$llava/preprocessor_config.json'));
print(*c['image_mean']); print(*c['image_std'])" > "$clip/norm.txt"
  nice -n 10 "$venv/bin/python" "$llama/tools/mtmd/legacy-models/convert_image_encoder_to_gguf.py" -m "$clip/vision" \
    --llava-projector "$clip/llava.projector" --output-dir "$clip/mmproj" --clip-model-is-vision --projector-type mlp \
    --image-mean $(sed -n 1p "$clip/norm.txt") --image-std $(sed -n 2p "$clip/norm.txt") >&2
fi

# 3. mtmd.
[ -x "$llama_build/bin/llama-mtmd-cli" ] ||
  nice -n 19 cmake --build "$llama_build" -j "${JOBS:-2}" --target llama-mtmd-cli >&2

# Alternating rounds.
results=$work/results-clip-$isa-$(date +%Y%m%d-%H%M%S)
mkdir -p "$results"
[ "$isa" = avx2 ] && export VLM_CPU_PATH=avx2
run_vlm() {
  "$vlm_build/vlm" --threads "$threads" bench --model "$llava" --prefill 16 --decode-batch 1 --steps 1 \
    --repetitions 3 --image "$image" > "$results/vlm-$1.json" 2> "$results/vlm-$1.err"
}
run_llama() {
  for i in 1 2 3; do
    "$llama_build/bin/llama-mtmd-cli" -m "$clip/lm-f16.gguf" --mmproj "$mmproj" --image "$image" -p Describe \
      -n 1 -t "$threads" --temp 0 --chat-template vicuna > "$results/llama-$1-$i.log" 2>&1
  done
}
[ -n "$lock" ] && { exec 9> "$lock"; log "waiting for $lock"; flock 9; }
uptime > "$results/uptime-before"
for round in $(seq 1 "$rounds"); do
  log "round $round of $rounds (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  if [ $((round % 2)) = 1 ]; then run_vlm "$round"; run_llama "$round"; else run_llama "$round"; run_vlm "$round"; fi
done
uptime > "$results/uptime-after"
[ -n "$lock" ] && exec 9>&-

python3 - "$results" "$rounds" "$threads" "$isa" <<'PY'
import glob, json, os, re, statistics, sys
results, rounds, threads, isa = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
vlm = [json.load(open(os.path.join(results, f"vlm-{r}.json"))) for r in range(1, rounds + 1)]
images = [v["images"][0] if "images" in v else v["image"] for v in vlm]
gflop = images[0]["encode_gflop"]
peak = statistics.median(v["fma_peak_gflops"] for v in vlm)
llama = []
for path in sorted(glob.glob(os.path.join(results, "llama-*.log"))):
    match = re.search(r"mtmd batch encoding done in (\d+) ms", open(path).read())
    if match:
        llama.append(int(match.group(1)) / 1000)
def row(name, seconds):
    best, med = min(seconds), statistics.median(seconds)
    return f"| {name} | {best:.2f} | {med:.2f} | {100 * gflop / best / peak:.0f}% |"
print(f"\n{threads} threads, kernel path {vlm[0].get('kernel_path')} ({isa}); {rounds} alternating rounds; "
      f"{gflop:.0f} GFLOP an encode (vlm's count); same-run FMA bound {peak:.1f} GFLOP/s "
      f"({gflop / peak:.2f} s)")
print(open(os.path.join(results, "uptime-before")).read().strip())
print(open(os.path.join(results, "uptime-after")).read().strip())
print("\n| encode, s | best | median | best vs FMA bound |\n|---|---|---|---|")
print(row("vlm (best of 3 a process)", [i["encode_seconds"] for i in images]))
print(row("vlm first encode (packs weights)", [i["first_encode_seconds"] for i in images]))
print(row("llama.cpp mtmd (one a process)", llama))
print(f"\nraw results in {results}")
PY
