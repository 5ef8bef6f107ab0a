#!/usr/bin/env bash
# Image decode + preprocessing, vlm vs Transformers, in the same run, one
# thread each: CLIP (LLaVA-1.5 settings) and Qwen2-VL.
#   bench/image_preprocess_bench.sh BUILD_DIR PYTHON [REPEATS]
# BUILD_DIR holds a built libvlm.a (e.g. build); PYTHON has transformers
# 5.23.0 + torchvision (e.g. .venv-oracle/bin/python). Images: every loadable
# file in ../shared/fixtures/media/images; Qwen2-VL also gets photo_1280x960.png
# (astronaut.png resized by Pillow bicubic, written to a scratch dir). Per
# image, the median of REPEATS (default 15) runs of: vlm_image_decode_file +
# the processor, and PIL.Image.open + exif_transpose + convert_to_rgb (as
# load_image) + the processor's __call__ (the default torchvision class, and
# the Pil one). For Qwen2-VL also the processor alone ("pre" columns: an
# already decoded image in, pixel_values out). Qwen2-VL runs with
# tests/goldens/media_qwen2_vl/configs/$QWEN2_VL_CONFIG (default qwen2_vl_2b,
# Qwen2-VL-2B-Instruct's preprocessor_config.json).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1
python=$2
repeats=${3:-15}
qwen_config=tests/goldens/media_qwen2_vl/configs/${QWEN2_VL_CONFIG:-qwen2_vl_2b}
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
"$python" -c "import PIL.Image as I; I.open('$images/astronaut.png').convert('RGB').resize((1280, 960), I.BICUBIC).save('$work/photo_1280x960.png')"
"$work/bench" tests/models/llava "$repeats" clip torchvision "${files[@]}" > "$work/vlm.txt"
"$work/bench" tests/models/llava "$repeats" clip pil "${files[@]}" > "$work/vlm_pil.txt"
"$work/bench" "$qwen_config" "$repeats" qwen2_vl torchvision "${files[@]}" "$work/photo_1280x960.png" > "$work/qwen.txt"
"$work/bench" "$qwen_config" "$repeats" qwen2_vl pil "${files[@]}" "$work/photo_1280x960.png" > "$work/qwen_pil.txt"
"$python" - "$repeats" "$work" "$qwen_config" "${files[@]}" <<'PY'
import os, statistics, sys, time, warnings
import torch
torch.set_num_threads(1)
warnings.simplefilter("ignore", FutureWarning)
import PIL.Image, PIL.ImageOps
import transformers
from transformers.image_transforms import convert_to_rgb
repeats, work, qwen_config, files = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
def read(name):
    return {parts[0]: (float(parts[1]), float(parts[2])) for parts in (line.split() for line in open(os.path.join(work, name)))}
def hf(processor, path):
    """Medians of (decode + processor, processor alone) in ms."""
    totals, alone = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        image = PIL.Image.fromarray(convert_to_rgb(PIL.ImageOps.exif_transpose(PIL.Image.open(path)), return_numpy=True))
        decoded = time.perf_counter()
        processor(image, return_tensors="pt")
        end = time.perf_counter()
        totals.append((end - start) * 1e3)
        alone.append((end - decoded) * 1e3)
    return statistics.median(totals), statistics.median(alone)
def table(title, default, pil, vlm, vlm_pil, paths, preprocess_columns):
    print(f"\n{title}: {type(default).__name__} / {type(pil).__name__}")
    header = f"{'image':28} {'vlm ms':>8} {'HF ms':>8} {'speedup':>7}"
    if preprocess_columns:
        header += f"   {'vlm pre':>8} {'HF pre':>8} {'speedup':>7}"
    print(header + f"   {'vlm pil':>8} {'HF pil':>8} {'speedup':>7}")
    totals = [0.0] * 6
    for path in paths:
        name = os.path.basename(path)
        (a, a_pre), (b, b_pre) = vlm[name], hf(default, path)
        c, d = vlm_pil[name][0], hf(pil, path)[0]
        for i, v in enumerate((a, b, a_pre, b_pre, c, d)): totals[i] += v
        line = f"{name:28} {a:8.2f} {b:8.2f} {b / a:6.1f}x"
        if preprocess_columns:
            line += f"   {a_pre:8.2f} {b_pre:8.2f} {b_pre / a_pre:6.1f}x"
        print(line + f"   {c:8.2f} {d:8.2f} {d / c:6.1f}x")
    a, b, a_pre, b_pre, c, d = totals
    line = f"{'total':28} {a:8.2f} {b:8.2f} {b / a:6.1f}x"
    if preprocess_columns:
        line += f"   {a_pre:8.2f} {b_pre:8.2f} {b_pre / a_pre:6.1f}x"
    print(line + f"   {c:8.2f} {d:8.2f} {d / c:6.1f}x")
model = "tests/models/llava"
table("CLIP (tests/models/llava)", transformers.AutoProcessor.from_pretrained(model).image_processor,
      transformers.CLIPImageProcessorPil.from_pretrained(model), read("vlm.txt"), read("vlm_pil.txt"), files, False)
table(f"Qwen2-VL ({qwen_config})", transformers.AutoImageProcessor.from_pretrained(qwen_config),
      transformers.Qwen2VLImageProcessorPil.from_pretrained(qwen_config), read("qwen.txt"), read("qwen_pil.txt"),
      files + [os.path.join(work, "photo_1280x960.png")], True)
PY
