"""Audio decode and Phi-4-multimodal feature extractor goldens
-> tests/goldens/media_audio/{configs/,manifest.json,tensors.safetensors}.

  .venv-oracle/bin/python tools/oracle/media_goldens_audio.py [--out DIR]

For every file in ../shared/fixtures/media/audio, what Transformers 5.23.0 does
with it, as sha256 digests of the raw little-endian bytes:
  info        soundfile.info(): samplerate, channels, frames, format, subtype
              (or the exception soundfile raises)
  load_audio  transformers.audio_utils.load_audio(path, sampling_rate=16000,
              backend="soundfile"): decode with soundfile, mean over channels,
              soxr_hq resampling (the path librosa.load takes), as float32 [n]
              (or the exception); full tensor `waveform/<file>` for the files in
              FULL_WAVEFORMS
  features    for each processor config in CONFIGS (configs/<name>/, which the C
              test loads too), AutoFeatureExtractor.from_pretrained(dir)(waveform,
              sampling_rate=16000, return_tensors="np"): audio_input_features[0]
              float32 [frames, feature_size] and audio_embed_sizes[0]; full
              tensor `features/<config>/<file>` for the files in FULL_FEATURES
Synthetic clips (seeded uniform noise in [-1, 1), stored whole as
`synthetic/<name>`) cover the frame-count edges. `filters/<config>` and
`window/<config>` are the extractor's mel_filters (float32 [bins, mels]) and
torch.hamming_window(win_length, periodic=False, dtype=float64). `batched`
records, for the later model, how far a padded batch's rows [:frames] are from
each clip's own features. Deterministic: rerunning gives byte-identical files.
"""
import argparse
import glob
import hashlib
import importlib.metadata
import inspect
import json
import os
import sys
import warnings

import numpy as np
import soundfile
import soxr
import torch
import transformers
from safetensors.numpy import save_file
from transformers.audio_utils import load_audio

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
AUDIO = os.path.join(os.path.dirname(ROOT), "shared", "fixtures", "media", "audio")
CLASS = "Phi4MultimodalFeatureExtractor"

# "defaults": what the class saves with save_pretrained (preprocessor_config.json).
# "custom": other values of every field, nested in processor_config.json as
# "audio_processor" (the v5 layout), with a window and n_fft that are not
# powers of two.
CUSTOM = {"feature_size": 64, "hop_length": 100, "n_fft": 400, "win_length": 320, "preemphasis": 0.9,
          "audio_compression_rate": 4, "audio_downsample_rate": 2, "audio_feat_stride": 1,
          "mel_min_frequency": 20.0, "mel_max_frequency": 8000.0}
CONFIGS = ["defaults", "custom"]
FULL_WAVEFORMS = {"speech_quick_fox.ogg", "speech_quick_fox.mp3", "speech_quick_fox_44k_stereo.wav"}
# Full features for every clip under the class defaults but the 15-minute
# silence (all zeros: its digest and range say it), and two under "custom".
FULL_FEATURES = {"defaults": {"*"}, "custom": {"speech_quick_fox_16k.flac", "Front_Center.wav"}}
NO_FULL_FEATURES = {"long_silence_15min_16k.flac"}
# name -> samples; 399 is one short of a window (torch's unfold refuses it).
SYNTHETIC = {"noise_399": 399, "noise_400": 400, "noise_559": 559, "noise_560": 560, "noise_1599": 1599,
             "noise_16000": 16000}
BATCH = ["speech_quick_fox_16k.flac", "speech_describe_16k.wav", "Front_Center.wav"]


def digest(array):
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def failure(error):
    return {"type": type(error).__name__, "message": str(error)}


def write_configs(out):
    directory = os.path.join(out, "configs", "defaults")
    os.makedirs(directory, exist_ok=True)
    transformers.Phi4MultimodalFeatureExtractor().save_pretrained(directory)
    directory = os.path.join(out, "configs", "custom")
    os.makedirs(directory, exist_ok=True)
    nested = transformers.Phi4MultimodalFeatureExtractor(**CUSTOM).to_dict()
    # to_dict() leaves the mel range out (the class keeps only the filters it
    # builds from it); from_pretrained passes the keys on when a file has them.
    nested.update(mel_min_frequency=CUSTOM["mel_min_frequency"], mel_max_frequency=CUSTOM["mel_max_frequency"])
    with open(os.path.join(directory, "processor_config.json"), "w") as f:
        json.dump({"audio_processor": nested, "processor_class": "Phi4MultimodalProcessor"}, f, indent=2,
                  sort_keys=True)
        f.write("\n")
    extractors = {}
    for name in CONFIGS:
        extractor = transformers.AutoFeatureExtractor.from_pretrained(os.path.join(out, "configs", name))
        assert type(extractor).__name__ == CLASS, type(extractor)
        extractors[name] = extractor
    reference = transformers.Phi4MultimodalFeatureExtractor(**CUSTOM)
    assert extractors["custom"].n_fft == CUSTOM["n_fft"]
    assert np.array_equal(extractors["custom"].mel_filters, reference.mel_filters)
    return extractors


def features(extractor, waveform):
    result = extractor(waveform, sampling_rate=16000, return_tensors="np")
    values = np.ascontiguousarray(result["audio_input_features"][0], dtype=np.float32)
    return values, int(result["audio_embed_sizes"][0])


def feature_entries(extractors, waveform, name, tensors):
    entries = {}
    for config, extractor in extractors.items():
        if name in NO_FULL_FEATURES and config != "defaults":
            continue  # 15 minutes of silence once is enough
        try:
            values, embed = features(extractor, waveform)
        except Exception as error:  # noqa: BLE001 - we record what HF raises
            entries[config] = {"error": failure(error)}
            continue
        entry = {"shape": list(values.shape), "sha256": digest(values), "audio_embed_sizes": embed,
                 "max": float(values.max()), "min": float(values.min())}
        wanted = FULL_FEATURES.get(config, ())
        if (name in wanted or "*" in wanted or name.startswith("noise_")) and name not in NO_FULL_FEATURES:
            entry["tensor"] = f"features/{config}/{name}"
            tensors[entry["tensor"]] = values
        entries[config] = entry
    return entries


def fixture_entry(path, extractors, tensors):
    name = os.path.basename(path)
    with open(path, "rb") as f:
        data = f.read()
    entry = {"file": name, "bytes": len(data), "file_sha256": hashlib.sha256(data).hexdigest()}
    try:
        info = soundfile.info(path)
        entry["info"] = {"samplerate": info.samplerate, "channels": info.channels, "frames": info.frames,
                         "format": info.format, "subtype": info.subtype}
    except Exception as error:  # noqa: BLE001
        entry["info"] = {"error": failure(error)}
    try:
        waveform = load_audio(path, sampling_rate=16000, backend="soundfile")
    except Exception as error:  # noqa: BLE001
        entry["load_audio"] = {"error": failure(error)}
        return entry, None
    assert waveform.dtype == np.float32 and waveform.ndim == 1
    entry["load_audio"] = {"length": int(waveform.shape[0]), "sha256": digest(waveform),
                           "max_abs": float(np.abs(waveform).max())}
    if name in FULL_WAVEFORMS:
        entry["load_audio"]["tensor"] = f"waveform/{name}"
        tensors[f"waveform/{name}"] = waveform
    entry["features"] = feature_entries(extractors, waveform, name, tensors)
    return entry, waveform


def batched(extractor, waveforms):
    """Rows [:frames] of one padded batch vs each clip alone (max abs diff)."""
    result = extractor([waveforms[name] for name in BATCH], sampling_rate=16000, return_tensors="np")
    report = []
    for index, name in enumerate(BATCH):
        alone, embed = features(extractor, waveforms[name])
        rows = result["audio_input_features"][index][: alone.shape[0]]
        report.append({"file": name, "frames": alone.shape[0], "audio_embed_sizes": embed,
                       "batch_audio_embed_sizes": int(result["audio_embed_sizes"][index]),
                       "max_abs_diff": float(np.abs(rows - alone).max())})
    return {"files": BATCH, "padded_frames": int(result["audio_input_features"].shape[1]), "clips": report}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "goldens", "media_audio"))
    arguments = parser.parse_args()
    if not os.path.isdir(AUDIO):
        sys.exit(f"fixture audio not found at {AUDIO}")
    warnings.simplefilter("ignore", FutureWarning)
    transformers.logging.set_verbosity_error()
    torch.set_num_threads(1)
    extractors = write_configs(arguments.out)
    tensors, files, waveforms = {}, [], {}
    for path in sorted(glob.glob(os.path.join(AUDIO, "*"))):
        entry, waveform = fixture_entry(path, extractors, tensors)
        files.append(entry)
        if waveform is not None:
            waveforms[entry["file"]] = waveform
    generator = np.random.default_rng(20240518)
    synthetic = []
    for name, length in SYNTHETIC.items():
        waveform = generator.uniform(-1.0, 1.0, length).astype(np.float32)
        tensors[f"synthetic/{name}"] = waveform
        synthetic.append({"name": name, "length": length, "tensor": f"synthetic/{name}",
                          "features": feature_entries(extractors, waveform, name, tensors)})
    for config, extractor in extractors.items():
        tensors[f"filters/{config}"] = np.ascontiguousarray(extractor.mel_filters, dtype=np.float32)
        tensors[f"window/{config}"] = torch.hamming_window(extractor.win_length, periodic=False,
                                                           dtype=torch.float64).numpy()
    signature = inspect.signature(transformers.Phi4MultimodalFeatureExtractor.__init__)
    defaults = {k: p.default for k, p in signature.parameters.items()
                if p.default is not inspect.Parameter.empty and p.kind == p.POSITIONAL_OR_KEYWORD}
    manifest = {
        "format": "vlm-media-golden-audio/1",
        "generator": {"transformers": transformers.__version__, "torch": torch.__version__.split("+")[0],
                      "numpy": np.__version__, "soundfile": soundfile.__version__,
                      "libsndfile": soundfile.__libsndfile_version__, "soxr": soxr.__version__,
                      "libsoxr": soxr.__libsoxr_version__,
                      "cffi": importlib.metadata.version("cffi"), "threads": 1},
        "load_audio": "transformers.audio_utils.load_audio(path, sampling_rate=16000, backend='soundfile')",
        "feature_extractor": CLASS,
        "init_defaults": defaults,
        "configs": {"defaults": "configs/defaults/preprocessor_config.json (save_pretrained)",
                    "custom": "configs/custom/processor_config.json (nested audio_processor)"},
        "digest": "sha256 of the array's raw bytes (float32 little-endian), row-major",
        "files": files,
        "synthetic": synthetic,
        "batched": batched(extractors["defaults"], waveforms),
    }
    with open(os.path.join(arguments.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    save_file(dict(sorted(tensors.items())), os.path.join(arguments.out, "tensors.safetensors"))
    print(f"{len(files)} files, {len(synthetic)} synthetic clips, {len(tensors)} tensors -> {arguments.out}")


if __name__ == "__main__":
    main()
