"""Qwen2-VL image processor goldens (also Qwen2.5-VL's and Qwen3-VL's: the same
class) -> tests/goldens/media_qwen2_vl/{configs/,manifest.json,tensors.safetensors}.

  .venv-oracle/bin/python tools/oracle/media_goldens_qwen2_vl.py [--out DIR]

For every processor config in CONFIGS (written to configs/<name>/
preprocessor_config.json, which the C test loads too) and every image (each file
in ../shared/fixtures/media/images that Pillow opens, decoded as
tools/oracle/media_goldens.py does, plus the synthetic images of SYNTHETIC),
what Transformers 5.23.0 produces, as sha256 digests of the raw little-endian
bytes:
  resized           Qwen2VLImageProcessor (the default, torchvision) resize
                    step: uint8 [height, width, 3] (HWC)
  resized_pil       the same from Qwen2VLImageProcessorPil
  image_grid_thw    [t, h, w] in patches
  pixel_values      float32 [t*h*w, 3*temporal*patch*patch] from each processor;
                    sha256_frame0: of [t*h*w, 3, patch*patch], its first
                    temporal frame (every frame of an image is a copy)
  pil_vs_default_max_abs, resized_pil_vs_default_max_abs
or the exception both raise (aspect ratio above 200). Full tensors for a few
small cases (FULL_PIXEL_VALUES, and every resized image of at most 128x128).
`smart_resize` holds smart_resize's result or exception for edge cases and
seeded random sizes. Deterministic: rerunning gives byte-identical files.

Synthetic images (width x height) have value
  (x*3 + y*5 + c*80 + ((x*73856093) ^ (y*19349663) ^ (c*83492791)) % 61) % 256
at column x, row y, channel c (int64 arithmetic): tests/test_image_processor_qwen2_vl.c
builds the same pixels.
"""
import argparse
import hashlib
import json
import os
import random
import sys
import warnings

import numpy as np
import PIL
import PIL.Image
import PIL.ImageOps
import torch
import torchvision
import transformers
from safetensors.numpy import save_file
from transformers.image_transforms import convert_to_rgb
from transformers.models.qwen2_vl.image_processing_qwen2_vl import smart_resize

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
IMAGES = os.path.join(os.path.dirname(ROOT), "shared", "fixtures", "media", "images")

OPENAI_CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
OPENAI_CLIP_STD = [0.26862954, 0.26130258, 0.27577711]
CONFIGS = {
    # The class defaults (size {shortest_edge: 56*56, longest_edge: 28*28*1280}).
    "defaults": {"image_processor_type": "Qwen2VLImageProcessor"},
    # Qwen/Qwen2-VL-2B-Instruct's preprocessor_config.json (legacy top-level keys;
    # Qwen2.5-VL's hub configs carry the same values).
    "qwen2_vl_2b": {"min_pixels": 3136, "max_pixels": 12845056, "patch_size": 14,
                    "temporal_patch_size": 2, "merge_size": 2, "image_mean": OPENAI_CLIP_MEAN,
                    "image_std": OPENAI_CLIP_STD, "image_processor_type": "Qwen2VLImageProcessor",
                    "processor_class": "Qwen2VLProcessor"},
    # A small max_pixels that clamps most images; the top-level key overrides
    # size.longest_edge, as in configs saved by transformers 4.49-4.5x.
    "small_max": {"image_processor_type": "Qwen2VLImageProcessor",
                  "size": {"shortest_edge": 3136, "longest_edge": 1003520}, "max_pixels": 50176},
    # Qwen/Qwen3-VL-*'s values: patch 16, mean/std 0.5, bounds in size.
    "qwen3_vl": {"size": {"longest_edge": 16777216, "shortest_edge": 65536}, "patch_size": 16,
                 "temporal_patch_size": 2, "merge_size": 2, "image_mean": [0.5, 0.5, 0.5],
                 "image_std": [0.5, 0.5, 0.5], "processor_class": "Qwen3VLProcessor",
                 "image_processor_type": "Qwen2VLImageProcessorFast"},
}
# (width, height): the min_pixels floor, odd sizes, the bench's photo size and
# a wider one (both clamped by the class default's max_pixels, kept small so
# the sanitizer build checks them quickly), a thin one, and ratios of 200
# (allowed) and just above (refused).
SYNTHETIC = [(30, 40), (333, 177), (1280, 960), (1500, 700), (57, 3), (1, 200), (4001, 20),
             (3, 601)]
FULL_PIXEL_VALUES = {("synthetic_30x40", "defaults"), ("no_time_for_that_tiny.gif", "defaults")}
FULL_RESIZED_PIXELS = 128 * 128


def digest(array):
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def synthetic(width, height):
    y, x = np.mgrid[0:height, 0:width].astype(np.int64)
    x, y = x[..., None], y[..., None]
    c = np.arange(3, dtype=np.int64).reshape(1, 1, 3)
    noise = ((x * 73856093) ^ (y * 19349663) ^ (c * 83492791)) % 61
    return ((x * 3 + y * 5 + c * 80 + noise) % 256).astype(np.uint8)


def fixture_images():
    """(name, HWC uint8 array or None, error) for each fixture file."""
    for name in sorted(os.listdir(IMAGES)):
        try:
            opened = PIL.Image.open(os.path.join(IMAGES, name))
            yield name, convert_to_rgb(PIL.ImageOps.exif_transpose(opened), return_numpy=True), None
        except Exception as error:  # noqa: BLE001 - we record what HF raises
            yield name, None, {"type": type(error).__name__, "message": str(error)}


def load_processors(directory):
    default = transformers.AutoImageProcessor.from_pretrained(directory)
    pil = transformers.Qwen2VLImageProcessorPil.from_pretrained(directory)
    assert type(default).__name__ == "Qwen2VLImageProcessor", type(default)
    return default, pil


def patchify(resized_chw, processor):
    """The flattening order both processors use, in numpy (checked against their output)."""
    p, m, t = processor.patch_size, processor.merge_size, processor.temporal_patch_size
    c, h, w = resized_chw.shape
    patches = resized_chw.reshape(c, h // p // m, m, p, w // p // m, m, p).transpose(1, 4, 2, 5, 0, 3, 6)
    patches = np.broadcast_to(patches[:, :, :, :, :, None], (*patches.shape[:5], t, p, p))
    return patches.reshape((h // p) * (w // p), c * t * p * p)


def run(image, name, config_name, default, pil, tensors):
    entry = {"config": config_name, "image": name, "size": [int(image.shape[0]), int(image.shape[1])]}
    picture = PIL.Image.fromarray(image)
    errors = []
    for processor in (default, pil):
        try:
            processor(picture, return_tensors="np")
            errors.append(None)
        except Exception as error:  # noqa: BLE001
            errors.append({"type": type(error).__name__, "message": str(error)})
    if errors[0] or errors[1]:
        assert errors[0] == errors[1], errors
        entry["error"] = errors[0]
        return entry
    factor = default.patch_size * default.merge_size
    # The resize step alone, through the processors' own methods.
    chw = default.process_image(picture, do_convert_rgb=True)
    resized = default.resize(chw[None], size=default.size, resample=default.resample, factor=factor)[0]
    resized = resized.permute(1, 2, 0).contiguous().numpy()
    chw_pil = pil.process_image(picture, do_convert_rgb=True)
    resized_pil = pil.resize(chw_pil, size=pil.size, resample=pil.resample, factor=factor)
    resized_pil = np.ascontiguousarray(resized_pil.transpose(1, 2, 0))
    assert resized.dtype == np.uint8 and resized_pil.dtype == np.uint8
    # ... which is what the full pipeline patchifies.
    raw = default(picture, do_rescale=False, do_normalize=False, return_tensors="pt")["pixel_values"]
    assert raw.dtype == torch.uint8 and np.array_equal(raw.numpy(), patchify(resized.transpose(2, 0, 1), default))
    raw_pil = pil(picture, do_rescale=False, do_normalize=False, return_tensors="np")["pixel_values"]
    assert np.array_equal(raw_pil, patchify(resized_pil.transpose(2, 0, 1), pil).astype(np.float32))
    out = default(picture, return_tensors="pt")
    values = out["pixel_values"].numpy()
    grid = out["image_grid_thw"].tolist()[0]
    out_pil = pil(picture, return_tensors="np")
    values_pil = np.asarray(out_pil["pixel_values"])
    assert values.dtype == np.float32 and values_pil.dtype == np.float32
    assert out_pil["image_grid_thw"].tolist()[0] == grid
    entry["image_grid_thw"] = grid
    entry["resized"] = {"shape": list(resized.shape), "sha256": digest(resized)}
    entry["resized_pil"] = {"shape": list(resized_pil.shape), "sha256": digest(resized_pil)}
    entry["resized_pil_vs_default_max_abs"] = int(np.abs(resized.astype(int) - resized_pil.astype(int)).max())
    entry["pixel_values"] = pixel_values_field(values, default)
    entry["pixel_values_pil"] = pixel_values_field(values_pil, pil)
    entry["pil_vs_default_max_abs"] = float(np.abs(values - values_pil).max())
    key = f"{config_name}/{name}"
    if resized.shape[0] * resized.shape[1] <= FULL_RESIZED_PIXELS:
        for field, array in (("resized", resized), ("resized_pil", resized_pil)):
            tensors[f"{key}.{field}"] = np.ascontiguousarray(array)
            entry[field]["tensor"] = f"{key}.{field}"
    if (name, config_name) in FULL_PIXEL_VALUES:
        for field, array in (("pixel_values", values), ("pixel_values_pil", values_pil)):
            tensors[f"{key}.{field}"] = np.ascontiguousarray(array, dtype="<f4")
            entry[field]["tensor"] = f"{key}.{field}"
    return entry


def pixel_values_field(values, processor):
    """Shape and digests of pixel_values: of the whole, and of its first
    temporal frame after checking that every frame is a copy of it (what the
    C test hashes: half the bytes, and the copies are checked with memcmp)."""
    t, p = processor.temporal_patch_size, processor.patch_size
    frames = values.reshape(values.shape[0], 3, t, p * p)
    assert all(np.array_equal(frames[:, :, i], frames[:, :, 0]) for i in range(t))
    return {"shape": list(values.shape), "sha256": digest(values.astype("<f4")),
            "sha256_frame0": digest(np.ascontiguousarray(frames[:, :, 0]).astype("<f4"))}


def smart_resize_cases():
    """smart_resize(height, width, factor, min_pixels, max_pixels) edge cases, then seeded random ones."""
    cases = [
        (1, 1, 28, 3136, 1003520), (10, 10, 28, 3136, 1003520), (14, 14, 28, 784, 1003520),
        (42, 70, 28, 100, 10**7), (70, 98, 28, 100, 10**7), (20, 4000, 28, 3136, 1003520),
        (20, 4001, 28, 3136, 1003520), (1, 201, 28, 3136, 1003520), (601, 3, 28, 3136, 1003520),
        (1, 200, 28, 3136, 1003520), (960, 1280, 28, 3136, 1003520), (960, 1280, 28, 3136, 12845056),
        (100, 130, 28, 100000, 5000), (1080, 1920, 32, 65536, 16777216), (100000, 100000, 28, 3136, 12845056),
        (300, 451, 14, 1, 10**12), (7, 9, 1, 1, 1), (25, 14, 28, 3136, 1003520), (3000, 20, 32, 65536, 16777216),
        (4000, 3000, 28, 3136, 50176), (50000, 300, 28, 3136, 1003520), (1, 1, 32, 65536, 16777216),
    ]
    rng = random.Random(20240917)
    bounds = [(28, 3136, 1003520), (28, 3136, 12845056), (28, 3136, 50176), (32, 65536, 16777216)]
    for _ in range(64):
        factor, low, high = rng.choice(bounds)
        cases.append((rng.randint(1, 6000), rng.randint(1, 6000), factor, low, high))
    rows = []
    for height, width, factor, low, high in cases:
        row = {"height": height, "width": width, "factor": factor, "min_pixels": low, "max_pixels": high}
        try:
            row["result"] = list(smart_resize(height, width, factor=factor, min_pixels=low, max_pixels=high))
        except Exception as error:  # noqa: BLE001
            row["error"] = {"type": type(error).__name__, "message": str(error)}
        rows.append(row)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "goldens", "media_qwen2_vl"))
    arguments = parser.parse_args()
    if not os.path.isdir(IMAGES):
        sys.exit(f"fixture images not found at {IMAGES}")
    warnings.simplefilter("ignore", FutureWarning)
    torch.set_num_threads(1)
    images = list(fixture_images())
    images += [(f"synthetic_{w}x{h}", synthetic(w, h), None) for w, h in SYNTHETIC]
    tensors, entries, classes = {}, [], {}
    for config_name, config in CONFIGS.items():
        directory = os.path.join(arguments.out, "configs", config_name)
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "preprocessor_config.json"), "w") as f:
            json.dump(config, f, indent=2, sort_keys=True)
            f.write("\n")
        default, pil = load_processors(directory)
        classes = {"image_processor": type(default).__name__, "slow_image_processor": type(pil).__name__}
        for name, image, error in images:
            if error:
                entries.append({"config": config_name, "image": name, "open_error": error})
            else:
                entries.append(run(image, name, config_name, default, pil, tensors))
    manifest = {
        "format": "vlm-media-golden-qwen2-vl/1",
        "generator": {"transformers": transformers.__version__, "torch": torch.__version__.split("+")[0],
                      "torchvision": torchvision.__version__.split("+")[0], "pillow": PIL.__version__,
                      "numpy": np.__version__, "threads": 1},
        **classes,
        "digest": "sha256 of the array's raw bytes (uint8, or float32 little-endian), row-major",
        "layouts": {"resized": "[height, width, 3] uint8 (HWC)",
                    "pixel_values": "[t*h*w, 3*temporal_patch_size*patch_size*patch_size] float32"},
        "configs": sorted(CONFIGS),
        "synthetic": "(x*3 + y*5 + c*80 + ((x*73856093) ^ (y*19349663) ^ (c*83492791)) % 61) % 256",
        "entries": entries,
        "smart_resize": smart_resize_cases(),
    }
    with open(os.path.join(arguments.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    save_file(dict(sorted(tensors.items())), os.path.join(arguments.out, "tensors.safetensors"))
    print(f"{len(entries)} entries, {len(tensors)} tensors -> {arguments.out}")


if __name__ == "__main__":
    main()
