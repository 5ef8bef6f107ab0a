"""Audio decode + feature extraction time per second of audio: vlm against
Transformers 5.23.0 in the same run, on the same files and config.

  .venv-oracle/bin/python bench/audio_bench.py --vlm-bench build/vlm-audio-bench \
      [--config tests/goldens/media_audio/configs/defaults] [--repeats 5] [FILE...]

Transformers: load_audio(path, sampling_rate=16000, backend="soundfile") then
Phi4MultimodalFeatureExtractor(waveform, sampling_rate=16000,
return_tensors="np"), torch on one thread. vlm: vlm-audio-bench (decode with
libsndfile + libsoxr, then the extractor), one thread. Each figure is the best
of --repeats runs. Default files: every clip of ../shared/fixtures/media/audio
that both decode, but the 15-minute silence (pass it explicitly to include it).
"""
import argparse
import glob
import json
import os
import subprocess
import time
import warnings

import torch
import transformers
from transformers.audio_utils import load_audio

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
AUDIO = os.path.join(os.path.dirname(ROOT), "shared", "fixtures", "media", "audio")
SKIP = {"bad_header.wav", "truncated.wav", "long_silence_15min_16k.flac"}


def best(function, repeats):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vlm-bench", default=os.path.join(ROOT, "build", "vlm-audio-bench"))
    parser.add_argument("--config", default=os.path.join(ROOT, "tests", "goldens", "media_audio", "configs", "defaults"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("files", nargs="*")
    arguments = parser.parse_args()
    files = arguments.files or [f for f in sorted(glob.glob(os.path.join(AUDIO, "*"))) if os.path.basename(f) not in SKIP]
    warnings.simplefilter("ignore", FutureWarning)
    transformers.logging.set_verbosity_error()
    torch.set_num_threads(1)
    extractor = transformers.AutoFeatureExtractor.from_pretrained(arguments.config)
    rows = []
    for path in files:
        decode, waveform = best(lambda: load_audio(path, sampling_rate=16000, backend="soundfile"), arguments.repeats)
        features, _ = best(lambda: extractor(waveform, sampling_rate=16000, return_tensors="np"), arguments.repeats)
        rows.append({"file": os.path.basename(path), "audio_seconds": len(waveform) / 16000,
                     "transformers": {"decode_seconds": decode, "features_seconds": features}})
    output = subprocess.run([arguments.vlm_bench, arguments.config, str(arguments.repeats), *files], check=True,
                            capture_output=True, text=True).stdout
    for row, line in zip(rows, output.splitlines()):
        measured = json.loads(line)
        row["vlm"] = {"decode_seconds": measured["decode_seconds"], "features_seconds": measured["features_seconds"]}
    total_audio = sum(row["audio_seconds"] for row in rows)
    print(f"{'file':34} {'audio s':>8} | {'HF decode':>9} {'HF feat':>8} | {'vlm dec':>8} {'vlm feat':>8}  (ms per audio second)")
    sums = {"transformers": [0.0, 0.0], "vlm": [0.0, 0.0]}
    for row in rows:
        cells = []
        for side in ("transformers", "vlm"):
            for index, key in enumerate(("decode_seconds", "features_seconds")):
                sums[side][index] += row[side][key]
                cells.append(1000 * row[side][key] / row["audio_seconds"])
        print(f"{row['file']:34} {row['audio_seconds']:8.3f} | {cells[0]:9.3f} {cells[1]:8.3f} | {cells[2]:8.3f} {cells[3]:8.3f}")
    hf = 1000 * sum(sums["transformers"]) / total_audio
    ours = 1000 * sum(sums["vlm"]) / total_audio
    print(f"all {len(rows)} clips, {total_audio:.1f} s of audio: decode + features {hf:.3f} ms per audio second "
          f"with Transformers, {ours:.3f} with vlm ({hf / ours:.1f}x)")
    print(json.dumps({"rows": rows, "ms_per_audio_second": {"transformers": hf, "vlm": ours}}))


if __name__ == "__main__":
    main()
