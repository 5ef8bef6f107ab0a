"""A soak of `vlm serve` (issue 27): mixed text, image and audio traffic
with cancelled streams and clients that disconnect, at several concurrency
levels, for a stated time; then checks that

- RSS stayed flat after the warm-up (a short pass through every level): the
  last sample is within max(32 MiB, 10%) of the first one after warm-up,
  not counting what the prefix and encoder caches grew by (they fill with
  the traffic's distinct prompts up to their budgets, by design);
- no slot, queue entry, request or body reservation leaked: once the load
  stops, /metrics reads vlm_active_slots 0, vlm_queue_depth 0,
  vlm_requests_in_flight 0, vlm_http_request_body_bytes 0;
- no answer was other than expected: 200 for the requests that must
  succeed, and only the intended refusals (400 context_length_exceeded for
  a max_tokens over the context, 400 for invalid JSON) for the others.

The model is the checked-in tiny Phi-4-multimodal (tests/models: the only
one with both an image and an audio path), its tokenizer unpacked against
../shared/fixtures, and fixture images and clips as the media.

Short variant (CI, tests/cli/serve_soak.sh; about 60 s):
    .venv-server/bin/python tests/server/soak.py --duration 45
Long variant (documented figures in docs/SECURITY.md):
    flock /work/notes/bench.lock .venv-server/bin/python tests/server/soak.py \
        --duration 600 --levels 1,4,8,16 --json soak.json
Exit status: 0 when every check held, 1 otherwise, 77 (skip) without the
fixtures. Standard library only (plus tools/oracle/tokenizer_files)."""
import argparse
import base64
import http.client
import json
import os
import random
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402

SOURCE = os.path.abspath(os.environ.get("VLM_SOURCE_DIR", os.path.join(HERE, "..", "..")))
VLM = os.path.abspath(os.environ.get("VLM_BINARY", os.path.join(SOURCE, "build", "vlm")))
FIXTURES = os.environ.get("VLM_FIXTURES_DIR") or os.path.join(SOURCE, "..", "shared", "fixtures")
sys.path.insert(0, os.path.join(SOURCE, "tools", "oracle"))
import tokenizer_files  # noqa: E402

FAMILY = "phi4_multimodal"
IMAGES = ["logo.png", "coffee_lossy.webp", "chelsea_q90.jpg"]
CLIPS = ["speech_quick_fox_16k.flac", "silence_2s_16k.wav", "speech_quick_fox.mp3"]
# (kind, weight): what each worker draws, seeded.
MIX = [("text", 4), ("text_stream", 3), ("completion", 2), ("image", 2), ("audio", 2), ("cancel_stream", 2),
       ("disconnect", 1), ("over_context", 1), ("bad_json", 1)]


def data_url(path, mime):
    with open(path, "rb") as handle:
        return f"data:{mime};base64," + base64.b64encode(handle.read()).decode()


class Traffic:
    def __init__(self, server, seed):
        self.server = server
        self.random = random.Random(seed)
        mimes = {"png": "image/png", "webp": "image/webp", "jpg": "image/jpeg"}
        self.images = [data_url(os.path.join(FIXTURES, "media", "images", name), mimes[name.rsplit(".", 1)[1]])
                       for name in IMAGES]
        self.clips = []
        for name in CLIPS:
            with open(os.path.join(FIXTURES, "media", "audio", name), "rb") as handle:
                self.clips.append({"data": base64.b64encode(handle.read()).decode(), "format": name.rsplit(".", 1)[1]})
        self.lock = threading.Lock()
        self.latencies = []          # seconds, requests that had to succeed
        self.counts = {}             # kind -> requests sent
        self.errors = []             # unexpected answers
        self.refusals = 0            # intended refusals seen

    def body(self, kind, rng):
        words = " ".join(rng.choice(["the", "cat", "sat", "on", "a", "mat", "why", "sky", "blue"])
                         for _ in range(rng.randint(1, 24)))
        if kind == "completion":
            return {"model": FAMILY, "prompt": words, "max_tokens": rng.randint(1, 12), "temperature": 0}
        content = words
        if kind == "image":
            content = [{"type": "image_url", "image_url": {"url": rng.choice(self.images)}},
                       {"type": "text", "text": words}]
        elif kind == "audio":
            content = [{"type": "input_audio", "input_audio": rng.choice(self.clips)}, {"type": "text", "text": words}]
        body = {"model": FAMILY, "messages": [{"role": "user", "content": content}],
                "max_tokens": rng.randint(1, 12), "temperature": rng.choice([0, 0.7]), "seed": rng.randint(0, 99)}
        if kind in ("text_stream", "cancel_stream"):
            body["stream"] = True
            body["max_tokens"] = 24 if kind == "cancel_stream" else body["max_tokens"]
        if kind == "over_context":
            body["max_tokens"] = 1 << 20
        return body

    def one(self, rng):
        kind = rng.choices([k for k, _ in MIX], [w for _, w in MIX])[0]
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1
        path = "/v1/completions" if kind == "completion" else "/v1/chat/completions"
        payload = b'{"model": "x", "messages": [' if kind == "bad_json" else json.dumps(self.body(kind, rng)).encode()
        connection = http.client.HTTPConnection(self.server.host, self.server.port, timeout=300)
        started = time.monotonic()
        try:
            connection.request("POST", path, body=payload, headers={"Content-Type": "application/json"})
            if kind == "disconnect":
                time.sleep(rng.random() * 0.05)
                return  # closed below, before (or while) the answer comes
            response = connection.getresponse()
            if kind == "cancel_stream":
                response.read1(256) if response.status == 200 else response.read()
                if response.status != 200:
                    self.error(kind, response.status, b"")
                return  # closed mid-stream: the engine must cancel it
            data = response.read()
            latency = time.monotonic() - started
            if kind in ("over_context", "bad_json"):
                expected_code = "context_length_exceeded" if kind == "over_context" else None
                ok = response.status == 400
                if ok and expected_code:
                    ok = json.loads(data)["error"]["code"] == expected_code
                if not ok:
                    self.error(kind, response.status, data)
                else:
                    with self.lock:
                        self.refusals += 1
                return
            if response.status != 200:
                self.error(kind, response.status, data)
                return
            if kind == "text_stream" and not data.rstrip().endswith(b"data: [DONE]"):
                self.error(kind, response.status, data[-200:])
                return
            with self.lock:
                self.latencies.append(latency)
        except (OSError, http.client.HTTPException) as error:
            if kind not in ("disconnect", "cancel_stream"):
                self.error(kind, type(error).__name__, str(error).encode())
        finally:
            connection.close()

    def error(self, kind, status, data):
        with self.lock:
            self.errors.append((kind, status, data[:300].decode(errors="replace")))

    def run_level(self, workers, seconds):
        stop = time.monotonic() + seconds

        def worker(seed):
            rng = random.Random(seed)
            while time.monotonic() < stop:
                self.one(rng)

        threads = [threading.Thread(target=worker, args=(self.random.random(),)) for _ in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


def cache_bytes(metrics):
    return metrics.get("vlm_prefix_cache_bytes", 0) + metrics.get("vlm_encoder_cache_bytes", 0)


def percentile(values, fraction):
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=45, help="seconds of load in all (default 45)")
    parser.add_argument("--levels", default="1,4,8", help="concurrency levels, each run in turn (default 1,4,8)")
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--json", help="write the figures here too")
    parser.add_argument("--rss-allowance-mib", type=float, default=32,
                        help="RSS growth after the warm-up allowed at least (default 32; 10%% if larger)")
    arguments = parser.parse_args()
    levels = [int(level) for level in arguments.levels.split(",")]
    for name in IMAGES:
        if not os.path.exists(os.path.join(FIXTURES, "media", "images", name)):
            print(f"SKIP(no-fixtures) soak: {FIXTURES}/media is absent")
            return 77
    scratch = tempfile.TemporaryDirectory()
    model = os.path.join(scratch.name, FAMILY)
    status = tokenizer_files.unpack(os.path.join(SOURCE, "tests", "models", FAMILY), model,
                                    os.path.join(FIXTURES, "tokenizers"))
    if status == tokenizer_files.SKIP:
        print(f"SKIP(no-fixtures) soak: the tokenizer patch needs {FIXTURES}/tokenizers")
        return 77
    if status:
        print(f"soak: unpacking the model failed ({status})")
        return 1
    server = harness.Server(VLM, model, "--parallel", "4", "--ctx", "4096", "--queue", "256")
    traffic = Traffic(server, arguments.seed)
    samples = []  # (seconds since start, RSS bytes)
    sampling = threading.Event()
    began = time.monotonic()

    def sample():
        while not sampling.wait(1.0):
            samples.append((time.monotonic() - began, server.rss_bytes()))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    failures = []
    try:
        per_level = arguments.duration / len(levels)
        # Warm-up: every level in turn for a fifth of its time (the caches,
        # malloc's arenas for as many connection threads as the highest
        # level runs, the first image and clip of each kind).
        warm_up = 0.0
        for level in levels:
            traffic.run_level(level, max(3.0, per_level / 5))
            warm_up += max(3.0, per_level / 5)
        rss_after_warm_up = server.rss_bytes()
        caches_after_warm_up = cache_bytes(server.metrics())
        for level in levels:
            traffic.run_level(level, per_level)
        rss_end = server.rss_bytes()
        metrics = server.wait_idle(timeout=60)
        caches_end = cache_bytes(metrics)
        for name in ("vlm_active_slots", "vlm_queue_depth", "vlm_requests_in_flight", "vlm_http_request_body_bytes"):
            if metrics.get(name, 0) != 0:
                failures.append(f"{name} is {metrics.get(name)} after the load")
    finally:
        sampling.set()
        exit_status = server.stop()
        scratch.cleanup()
    if exit_status != 0:
        failures.append(f"vlm serve exited {exit_status}:\n{server.stderr()[-3000:]}")
    # The prefix and encoder caches fill with the traffic's distinct
    # prompts by design (up to their budgets): their growth is not a leak.
    cache_growth = caches_end - caches_after_warm_up
    growth = rss_end - rss_after_warm_up - max(0, cache_growth)
    allowed = max(int(arguments.rss_allowance_mib * 2**20), rss_after_warm_up // 10)
    if growth > allowed:
        failures.append(f"RSS grew {growth / 2**20:.1f} MiB after the warm-up beyond the caches' growth "
                        f"(allowed {allowed / 2**20:.1f})")
    for kind, status, data in traffic.errors[:10]:
        failures.append(f"unexpected answer to {kind}: {status} {data}")
    if len(traffic.errors) > 10:
        failures.append(f"... {len(traffic.errors) - 10} more unexpected answers")
    requests = sum(traffic.counts.values())
    figures = {
        "duration_s": round(warm_up + arguments.duration, 1), "levels": levels, "requests": requests,
        "by_kind": traffic.counts, "succeeded": len(traffic.latencies), "intended_refusals": traffic.refusals,
        "unexpected": len(traffic.errors),
        "rss_after_warm_up_mib": round(rss_after_warm_up / 2**20, 1), "rss_end_mib": round(rss_end / 2**20, 1),
        "rss_peak_sampled_mib": round(max((rss for _, rss in samples), default=0) / 2**20, 1),
        "cache_growth_mib": round(cache_growth / 2**20, 1),
        "rss_growth_beyond_caches_mib": round(growth / 2**20, 1),
        "latency_p50_s": round(percentile(traffic.latencies, 0.50), 4),
        "latency_p99_s": round(percentile(traffic.latencies, 0.99), 4),
    }
    print(json.dumps(figures, indent=2))
    if arguments.json:
        with open(arguments.json, "w") as out:
            json.dump({**figures, "rss_samples": samples}, out)
    for failure in failures:
        print("FAIL soak: " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
