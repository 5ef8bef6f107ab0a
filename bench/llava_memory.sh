#!/usr/bin/env bash
# Peak memory and timings of one LLaVA request on a mid-size checkpoint
# (bench/configs/llava-1.5-mid.json: the CLIP ViT-L/14-336 tower of
# LLaVA-1.5 and a 1.1B Llama decoder, f16, random weights; 2.8 GB), text
# only and with one image, as JSON. Shows that the vision side adds its own
# tower and projector to the process and never a second copy of the
# decoder (SPEC 2.4): image_extra_bytes stays far below decoder_bytes.
#
#   bench/llava_memory.sh [--threads N] [DIR] [IMAGE]
# DIR (default /tmp/vlm-llava-mid) is generated when absent (about 30 s);
# IMAGE defaults to ../shared/fixtures/media/images/chelsea_q90.jpg.
set -euo pipefail
cd "$(dirname "$0")/.."
threads=2
if [ "${1:-}" = "--threads" ]; then threads=$2; shift 2; fi
dir=${1:-/tmp/vlm-llava-mid}
image=${2:-../shared/fixtures/media/images/chelsea_q90.jpg}
vlm=${VLM:-build/vlm}
[ -f "$image" ] || { echo "llava_memory: no image at $image" >&2; exit 1; }
if [ ! -f "$dir/model.safetensors" ]; then
  build/vlm-make-tiny-model --config bench/configs/llava-1.5-mid.json --dtype f16 "$dir" >&2
  # The tiny LLaVA's tokenizer and chat template (its image token is 382,
  # as the config says); random weights make the text meaningless anyway.
  cp tests/models/llava/{tokenizer.json,tokenizer_config.json,special_tokens_map.json,chat_template.jinja} "$dir/"
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
measure() { # name, then vlm run arguments
  local name=$1; shift
  /usr/bin/time -f "%M" -o "$scratch/$name.rss" "$vlm" --threads "$threads" run --model "$dir" \
    --max-tokens 4 --context 1024 --json "$@" >"$scratch/$name.json"
}
measure text --prompt "What is in this picture?"
measure image --image "$image" --prompt "What is in this picture?"
"$vlm" inspect --model "$dir" --json >"$scratch/inspect.json"
python3 - "$scratch" <<'PY'
import json, sys
scratch = sys.argv[1]
load = lambda name: json.load(open(f"{scratch}/{name}.json"))
rss = lambda name: int(open(f"{scratch}/{name}.rss").read().split()[-1]) * 1024
components = load("inspect")["components"]
text, image = load("text"), load("image")
report = {
    "checkpoint_bytes": sum(c["bytes"] for c in components.values()),
    "decoder_bytes": components["text_decoder"]["bytes"] + components["embeddings"]["bytes"],
    "vision_bytes": components["vision_tower"]["bytes"] + components["projector"]["bytes"],
    "text_only": {"peak_rss_bytes": rss("text"), "prompt_tokens": text["usage"]["prompt_tokens"],
                  "timings": text["timings"]},
    "one_image": {"peak_rss_bytes": rss("image"), "prompt_tokens": image["usage"]["prompt_tokens"],
                  "timings": image["timings"]},
}
report["image_extra_bytes"] = report["one_image"]["peak_rss_bytes"] - report["text_only"]["peak_rss_bytes"]
print(json.dumps(report, indent=1))
PY
