#!/usr/bin/env bash
# Image decode + CLIP preprocessing (LLaVA-1.5 settings), vlm vs Transformers,
# in the same run, one thread each.
#   bench/image_preprocess_bench.sh BUILD_DIR PYTHON [REPEATS]
# BUILD_DIR holds a built libvlm.a (e.g. build); PYTHON has transformers
# 5.23.0 + torchvision (e.g. .venv-oracle/bin/python). Images: every loadable
# file in ../shared/fixtures/media/images. Per image, the median of REPEATS
# (default 15) runs of: vlm_image_decode_file + vlm_clip_preprocess, and
# PIL.Image.open + exif_transpose + convert_to_rgb (as load_image) + the
# processor's __call__ (default torchvision CLIPImageProcessor, and
# CLIPImageProcessorPil).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1
python=$2
repeats=${3:-15}
images=../shared/fixtures/media/images
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -Iinclude -Isrc bench/image_preprocess_bench.c "$build/libvlm.a" \
  $(pkg-config --libs oniguruma libutf8proc libjpeg libpng libwebp libwebpdemux libgif) -lpthread -lm \
  -o "$work/bench"
files=()
for f in "$images"/*; do
  case $(basename "$f") in bomb_*|truncated.jpg|not_an_image.jpg) continue ;; esac
  files+=("$f")
done
"$work/bench" tests/models/llava "$repeats" torchvision "${files[@]}" > "$work/vlm.txt"
"$work/bench" tests/models/llava "$repeats" pil "${files[@]}" > "$work/vlm_pil.txt"
"$python" - "$repeats" "$work/vlm.txt" "$work/vlm_pil.txt" "${files[@]}" <<'PY'
import os, statistics, sys, time
import torch
torch.set_num_threads(1)
import PIL.Image, PIL.ImageOps
import transformers
from transformers.image_transforms import convert_to_rgb
repeats = int(sys.argv[1])
vlm = dict(line.split() for line in open(sys.argv[2]))
vlm_pil = dict(line.split() for line in open(sys.argv[3]))
model = "tests/models/llava"
default = transformers.AutoProcessor.from_pretrained(model).image_processor
pil = transformers.CLIPImageProcessorPil.from_pretrained(model)
def hf(processor, path):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        image = convert_to_rgb(PIL.ImageOps.exif_transpose(PIL.Image.open(path)), return_numpy=True)
        processor(PIL.Image.fromarray(image), return_tensors="pt")
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)
print(f"{'image':28} {'vlm ms':>8} {'HF ms':>8} {'speedup':>7}   {'vlm pil':>8} {'HF pil':>8} {'speedup':>7}")
totals = [0.0, 0.0, 0.0, 0.0]
for path in sys.argv[4:]:
    name = os.path.basename(path)
    a, b = float(vlm[name]), hf(default, path)
    c, d = float(vlm_pil[name]), hf(pil, path)
    for i, v in enumerate((a, b, c, d)): totals[i] += v
    print(f"{name:28} {a:8.2f} {b:8.2f} {b / a:6.1f}x   {c:8.2f} {d:8.2f} {d / c:6.1f}x")
a, b, c, d = totals
print(f"{'total':28} {a:8.2f} {b:8.2f} {b / a:6.1f}x   {c:8.2f} {d:8.2f} {d / c:6.1f}x")
PY
