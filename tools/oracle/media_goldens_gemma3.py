"""Gemma 3 image processor goldens -> tests/goldens/media_gemma3/{configs/,manifest.json}.

  .venv-oracle/bin/python tools/oracle/media_goldens_gemma3.py [--out DIR]

For every config in CONFIGS (configs/<name>/processor_config.json, a
Gemma3Processor's file with its nested image_processor, which the C test loads
too, plus the call kwargs the processor is given) and every image (each file
in ../shared/fixtures/media/images that Pillow opens, decoded as
tools/oracle/media_goldens.py does, plus the synthetic images of SYNTHETIC),
what Transformers 5.23.0 gives the model: pixel_values [1 + crops, 3, H, W]
and num_crops from both Gemma3ImageProcessor (torchvision, the default) and
Gemma3ImageProcessorPil, called with what Gemma3Processor passes them
(ProcessorMixin._merge_kwargs: the processor's images_kwargs class attribute,
then the call's kwargs, over the image processor's own settings), as sha256
digests of the float32 little-endian bytes, and the Pil-vs-default largest
difference. Deterministic: rerunning gives a byte-identical manifest.

Generated on an AVX-512 machine: torchvision's bilinear uint8 resize is
torch's native kernel there (and on AVX2 and arm64), the float path
elsewhere (../shared/FAMILIES.md section 3); vlm reproduces the native one.

Synthetic images use the formula of media_goldens_qwen2_vl.py.
"""
import argparse
import hashlib
import json
import os
import sys
import warnings

import numpy as np
import PIL
import PIL.Image
import torch
import torchvision
import transformers

from media_goldens_qwen2_vl import IMAGES, ROOT, fixture_images, synthetic

# name: (the processor_config.json image_processor section, the call kwargs)
CONFIGS = {
    # google/gemma-3-4b-it's preprocessor_config.json values: 896 px,
    # bilinear, mean/std 0.5, pan-and-scan settings null (so the
    # processor's defaults: off).
    "gemma3_4b": ({"image_processor_type": "Gemma3ImageProcessor", "size": {"height": 896, "width": 896},
                   "resample": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
                   "do_pan_and_scan": None, "pan_and_scan_min_crop_size": None,
                   "pan_and_scan_max_num_crops": None, "pan_and_scan_min_ratio_to_activate": None}, {}),
    # A saved do_pan_and_scan: true is overridden by Gemma3Processor's
    # images_kwargs (no crops); 64 px keeps it quick.
    "saved_pan_and_scan": ({"image_processor_type": "Gemma3ImageProcessor", "size": {"height": 64, "width": 64},
                            "do_pan_and_scan": True}, {}),
    # Pan-and-scan from the call with the processor's crop defaults (256 px
    # crops, at most 4, ratio 1.2), 64 px.
    "pan_and_scan": ({"image_processor_type": "Gemma3ImageProcessor", "size": {"height": 64, "width": 64}},
                     {"do_pan_and_scan": True}),
    # Smaller crops, more of them, a lower ratio, 48 px: portrait and
    # landscape crops, clipped last crops.
    "pan_and_scan_small": ({"image_processor_type": "Gemma3ImageProcessor", "size": {"height": 48, "width": 48}},
                           {"do_pan_and_scan": True, "pan_and_scan_min_crop_size": 24,
                            "pan_and_scan_max_num_crops": 5, "pan_and_scan_min_ratio_to_activate": 1.1}),
}
# (width, height): portrait and landscape strips, a near square, an odd size.
SYNTHETIC = [(300, 1000), (1001, 301), (700, 690), (97, 31), (20, 200)]


def digest(array):
    return hashlib.sha256(np.ascontiguousarray(array, dtype="<f4").tobytes()).hexdigest()


def run(image, name, config_name, default, pil, kwargs):
    entry = {"config": config_name, "image": name, "size": [int(image.shape[0]), int(image.shape[1])]}
    picture = PIL.Image.fromarray(image)
    call = dict(transformers.Gemma3Processor.images_kwargs, **kwargs)
    out = default(picture, return_tensors="pt", **call)
    out_pil = pil(picture, return_tensors="np", **call)
    values = out["pixel_values"].numpy()
    values_pil = np.asarray(out_pil["pixel_values"])
    assert values.dtype == np.float32 and values_pil.dtype == np.float32
    crops = int(out["num_crops"][0])
    assert crops == int(out_pil["num_crops"][0]) and values.shape == values_pil.shape
    entry["num_crops"] = crops
    entry["pixel_values"] = {"shape": list(values.shape), "sha256": digest(values)}
    entry["pixel_values_pil"] = {"shape": list(values_pil.shape), "sha256": digest(values_pil)}
    entry["pil_vs_default_max_abs"] = float(np.abs(values - values_pil).max())
    return entry


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "goldens", "media_gemma3"))
    arguments = parser.parse_args()
    if not os.path.isdir(IMAGES):
        sys.exit(f"fixture images not found at {IMAGES}")
    warnings.simplefilter("ignore", FutureWarning)
    torch.set_num_threads(1)
    if torch.backends.cpu.get_cpu_capability() not in ("AVX2", "AVX512"):
        sys.exit("torchvision resizes uint8 bilinear in float on this CPU; generate on an AVX2/AVX-512 machine")
    images = [entry for entry in fixture_images() if not entry[2]]
    images += [(f"synthetic_{w}x{h}", synthetic(w, h), None) for w, h in SYNTHETIC]
    entries = []
    for config_name, (section, kwargs) in CONFIGS.items():
        directory = os.path.join(arguments.out, "configs", config_name)
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "processor_config.json"), "w") as f:
            json.dump({"image_processor": section, "image_seq_length": 256, "processor_class": "Gemma3Processor"},
                      f, indent=2, sort_keys=True)
            f.write("\n")
        with open(os.path.join(directory, "processor_kwargs.json"), "w") as f:
            json.dump(kwargs, f, sort_keys=True)
            f.write("\n")
        default = transformers.AutoImageProcessor.from_pretrained(directory)
        pil = transformers.Gemma3ImageProcessorPil.from_pretrained(directory)
        assert type(default).__name__ == "Gemma3ImageProcessor", type(default)
        for name, image, _ in images:
            entries.append(run(image, name, config_name, default, pil, kwargs))
    manifest = {
        "format": "vlm-media-golden-gemma3/1",
        "generator": {"transformers": transformers.__version__, "torch": torch.__version__.split("+")[0],
                      "torchvision": torchvision.__version__.split("+")[0], "pillow": PIL.__version__,
                      "numpy": np.__version__, "threads": 1,
                      "cpu_capability": torch.backends.cpu.get_cpu_capability()},
        "image_processor": "Gemma3ImageProcessor", "slow_image_processor": "Gemma3ImageProcessorPil",
        "digest": "sha256 of the float32 little-endian pixel_values [1 + crops, 3, H, W], row-major",
        "configs": sorted(CONFIGS),
        "synthetic": "(x*3 + y*5 + c*80 + ((x*73856093) ^ (y*19349663) ^ (c*83492791)) % 61) % 256",
        "entries": entries,
    }
    with open(os.path.join(arguments.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{len(entries)} entries -> {arguments.out}")


if __name__ == "__main__":
    main()
