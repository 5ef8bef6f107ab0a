"""Image decode and CLIP processor goldens for every fixture image
(../shared/fixtures/media/images) -> tests/goldens/media/{manifest.json,tensors.safetensors}.

  .venv-oracle/bin/python tools/oracle/media_goldens.py [--out DIR]

For each file, what Transformers 5.23.0 does to it, as digests (sha256 of the
raw little-endian bytes) so the goldens stay small, plus full tensors for a few:
  decoded          convert_to_rgb(exif_transpose(Image.open(f))): the uint8 RGB
                   array the processors start from (alpha composited on white)
  decoded_load_image  np.array(load_image(f)) (alpha dropped), where it differs
  resized          CLIPImageProcessor (default, torchvision) with do_rescale and
                   do_normalize off: the uint8 [336, 336, 3] crop
  resized_pil      the same from CLIPImageProcessorPil
  pixel_values     float32 [3, 336, 336] from each processor with LLaVA's config
Files HF cannot load record the exception it raises. Deterministic: rerunning
gives byte-identical files (sorted keys, fixed order).
"""
import argparse
import hashlib
import json
import os
import sys

import numpy as np
import PIL
import PIL.Image
import PIL.ImageOps
import torch
import torchvision
import transformers
from safetensors.numpy import save_file
from transformers.image_transforms import convert_to_rgb
from transformers.image_utils import load_image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
IMAGES = os.path.join(os.path.dirname(ROOT), "shared", "fixtures", "media", "images")
MODEL = os.path.join(ROOT, "tests", "models", "llava")
# Full tensors kept for these (the rest are digests): enough to show a
# difference when a digest stops matching, within the size budget.
FULL_TENSORS = {"chelsea.png", "palette_color.png", "tiny_1x1.png", "no_time_for_that_tiny.gif",
                "palette_lossless.webp", "horse_rgba.png"}


def digest(array):
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def processors():
    default = transformers.AutoProcessor.from_pretrained(MODEL).image_processor
    pil = transformers.CLIPImageProcessorPil.from_pretrained(MODEL)
    return default, pil


def run_image(path, default, pil, tensors):
    name = os.path.basename(path)
    entry = {"file": name}
    try:
        opened = PIL.Image.open(path)
        entry["pil_mode"] = opened.mode
        transposed = PIL.ImageOps.exif_transpose(opened)
        decoded = convert_to_rgb(transposed, return_numpy=True)
    except Exception as error:  # noqa: BLE001 - we record what HF raises
        entry["error"] = {"type": type(error).__name__, "message": str(error)}
        try:
            load_image(path)
        except Exception as load_error:  # noqa: BLE001
            entry["load_image_error"] = {"type": type(load_error).__name__, "message": str(load_error)}
        return entry
    entry["exif_orientation"] = int(opened.getexif().get(0x0112, 1))
    entry["decoded"] = {"shape": list(decoded.shape), "sha256": digest(decoded)}
    loaded = np.array(load_image(path))
    if not np.array_equal(loaded, decoded):
        entry["decoded_load_image"] = {"shape": list(loaded.shape), "sha256": digest(loaded)}
    image = PIL.Image.fromarray(decoded)
    raw = default(image, do_rescale=False, do_normalize=False, return_tensors="pt")["pixel_values"][0]
    assert raw.dtype == torch.uint8, raw.dtype
    resized = raw.permute(1, 2, 0).contiguous().numpy()
    raw_pil = pil(image, do_rescale=False, do_normalize=False, return_tensors="np")["pixel_values"][0]
    resized_pil = np.ascontiguousarray(np.asarray(raw_pil).transpose(1, 2, 0)).astype(np.uint8)
    assert np.array_equal(np.asarray(raw_pil).transpose(1, 2, 0), resized_pil)
    values = default(image, return_tensors="pt")["pixel_values"][0].numpy()
    values_pil = np.asarray(pil(image, return_tensors="np")["pixel_values"][0], dtype=np.float32)
    entry["resized"] = {"shape": list(resized.shape), "sha256": digest(resized)}
    entry["resized_pil"] = {"shape": list(resized_pil.shape), "sha256": digest(resized_pil)}
    entry["pixel_values"] = {"shape": list(values.shape), "sha256": digest(values.astype("<f4"))}
    entry["pixel_values_pil"] = {"shape": list(values_pil.shape), "sha256": digest(values_pil.astype("<f4"))}
    entry["pil_vs_default_max_abs"] = float(np.abs(values - values_pil).max())
    entry["resized_pil_vs_default_max_abs"] = int(np.abs(resized.astype(int) - resized_pil.astype(int)).max())
    if name in FULL_TENSORS:
        for key, array in (("decoded", decoded), ("resized", resized), ("resized_pil", resized_pil)):
            tensors[f"{name}.{key}"] = np.ascontiguousarray(array, dtype=np.uint8)
            entry[key]["tensor"] = f"{name}.{key}"
    return entry


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "goldens", "media"))
    arguments = parser.parse_args()
    if not os.path.isdir(IMAGES):
        sys.exit(f"fixture images not found at {IMAGES}")
    torch.set_num_threads(1)
    default, pil = processors()
    tensors = {}
    entries = [run_image(os.path.join(IMAGES, name), default, pil, tensors) for name in sorted(os.listdir(IMAGES))]
    manifest = {
        "format": "vlm-media-golden/1",
        "generator": {"transformers": transformers.__version__, "torch": torch.__version__.split("+")[0],
                      "torchvision": torchvision.__version__.split("+")[0], "pillow": PIL.__version__,
                      "numpy": np.__version__, "threads": 1},
        "processor_config": "../../models/llava/processor_config.json",
        "image_processor": type(default).__name__,
        "slow_image_processor": type(pil).__name__,
        "digest": "sha256 of the array's raw bytes (uint8, or float32 little-endian), row-major",
        "layouts": {"decoded": "[height, width, 3] uint8", "resized": "[336, 336, 3] uint8 (HWC)",
                    "pixel_values": "[3, 336, 336] float32"},
        "images": entries,
    }
    os.makedirs(arguments.out, exist_ok=True)
    with open(os.path.join(arguments.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    save_file(dict(sorted(tensors.items())), os.path.join(arguments.out, "tensors.safetensors"))
    print(f"{len(entries)} images -> {arguments.out}")


if __name__ == "__main__":
    main()
