#!/usr/bin/env python3
"""Throughput and latency of a running `vlm serve` under concurrent streams.

For each concurrency level (default 1, 2, 4, 8) it sends `--rounds` rounds
of that many concurrent streaming requests (greedy, the same long prompt,
`--max-tokens` each) and reports, as JSON on stdout:
  aggregate_tokens_per_second  completion tokens / wall time of the level
  decode_tokens_per_second     tokens after each stream's first / the time
                               from the first first-token to the last token
  ttft_p50_seconds, ttft_p99_seconds  time to first token (request sent ->
                               first non-empty content chunk)
  itl_p50_seconds, itl_p99_seconds, itl_max_seconds  gaps between a stream's
                               content chunks after its first (how long
                               other requests' prefill holds it up)
  server_cpu_seconds, tokens_per_server_cpu_second  with --serve: the
                               server process's CPU time over the level and
                               completion tokens per CPU-second (on a shared
                               machine the wall-clock rates count waiting)
With --stagger S the streams of a level start S seconds apart, so later
prompts are prefilled while earlier streams decode; --prompt-repeat K makes
the prompt K times longer.

With --conversation it measures the prefix and encoder caches instead: for
each of --rounds rounds a fresh two-turn conversation (the first turn: an
--image when given, and the prompt --prompt-repeat times; the second turn:
the first's reply and a short question) is sent one turn after the other,
and it reports each turn's time to first token and cached_tokens (with
--max-tokens 1 a reply without visible text, as random weights give, still
times its first token: the reply ends with it). Run it
against a server with the caches and one without (--serve-args
"--prefix-cache-mb 0 --encoder-cache-mb 0"); with --compare it starts both
itself. The load average is reported too (the host may be shared).

Usage:
  bench/serve_bench.py --url http://127.0.0.1:8080 [--api-key K]
  bench/serve_bench.py --serve DIR [--vlm build/vlm] [--parallel 8]   # starts one itself
  bench/serve_bench.py --serve DIR --conversation --compare [--image FILE] [--prompt-repeat K]
Standard library only."""
import argparse
import base64
import http.client
import json
import os
import sys
import threading
import time
import urllib.parse

PROMPT = ("Write a long, detailed story about a lighthouse keeper who finds a message in a bottle, "
          "and describe every day of the following month.")


def percentile(values, fraction):
    ordered = sorted(values)
    if not ordered:
        return None
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


class Target:
    def __init__(self, url, api_key):
        parsed = urllib.parse.urlparse(url)
        self.host, self.port = parsed.hostname, parsed.port or 80
        self.headers = {"Content-Type": "application/json"}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        models = self.get("/v1/models")["data"][0]
        self.model = models["id"]
        self.chat = models.get("capabilities", {}).get("chat_template", True)

    def get(self, path):
        connection = http.client.HTTPConnection(self.host, self.port, timeout=600)
        connection.request("GET", path, headers=self.headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        if response.status != 200:
            raise RuntimeError(f"GET {path}: {response.status} {data[:300]!r}")
        return json.loads(data)

    def stream(self, max_tokens, prompt=PROMPT, messages=None, out=None):
        """One streaming request: (ttft, first token time, last token time, tokens, gaps).
        `messages` replaces the one-message chat; `out` (a dict) receives the
        text and the final usage."""
        body = {"model": self.model, "max_tokens": max_tokens, "temperature": 0, "stream": True,
                "stream_options": {"include_usage": True}}
        if messages is not None:
            path, body["messages"] = "/v1/chat/completions", messages
        elif self.chat:
            path, body["messages"] = "/v1/chat/completions", [{"role": "user", "content": prompt}]
        else:
            path, body["prompt"] = "/v1/completions", prompt
        connection = http.client.HTTPConnection(self.host, self.port, timeout=600)
        started = time.monotonic()
        connection.request("POST", path, body=json.dumps(body), headers=self.headers)
        response = connection.getresponse()
        if response.status != 200:
            raise RuntimeError(f"POST {path}: {response.status} {response.read()[:300]!r}")
        first = last = None
        tokens = 0
        gaps = []
        while True:
            line = response.readline()
            if not line:
                break
            line = line.strip()
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            event = json.loads(line[6:])
            if "error" in event:
                raise RuntimeError(f"stream error: {event['error']}")
            if event.get("usage"):
                tokens = event["usage"]["completion_tokens"]
                if out is not None:
                    out["usage"] = event["usage"]
            for choice in event.get("choices", []):
                text = choice.get("delta", {}).get("content") if self.chat else choice.get("text")
                if text and out is not None:
                    out["text"] = out.get("text", "") + text
                if out is not None and choice.get("finish_reason") and "finished" not in out:
                    out["finished"] = time.monotonic() - started
                if text:
                    now = time.monotonic()
                    if last is not None:
                        gaps.append(now - last)
                    first = first or now
                    last = now
        connection.close()
        return (first - started if first else None), first, last, tokens, gaps


def process_cpu_seconds(pid):
    """User + system CPU time of a local process (its threads together), or None."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def run_level(target, concurrency, rounds, max_tokens, stagger=0.0, prompt=PROMPT, server_pid=None):
    ttfts, tokens, decode_windows, decode_tokens, gaps = [], 0, 0.0, 0, []
    cpu_before = process_cpu_seconds(server_pid) if server_pid else None
    started = time.monotonic()
    for _ in range(rounds):
        results = [None] * concurrency
        errors = []

        def worker(index):
            try:
                time.sleep(index * stagger)
                results[index] = target.stream(max_tokens, prompt)
            except Exception as error:  # reported below, with the level
                errors.append(error)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(concurrency)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise RuntimeError(f"concurrency {concurrency}: {errors[0]}")
        firsts = [r[1] for r in results if r[1]]
        lasts = [r[2] for r in results if r[2]]
        ttfts += [r[0] for r in results if r[0] is not None]
        tokens += sum(r[3] for r in results)
        gaps += [gap for r in results for gap in r[4]]
        if firsts and lasts:
            decode_windows += max(lasts) - min(firsts)
            decode_tokens += sum(max(0, r[3] - 1) for r in results)
    wall = time.monotonic() - started
    cpu_after = process_cpu_seconds(server_pid) if server_pid else None
    cpu = cpu_after - cpu_before if cpu_before is not None and cpu_after is not None else None
    return {
        "concurrency": concurrency,
        "requests": concurrency * rounds,
        "completion_tokens": tokens,
        "wall_seconds": round(wall, 4),
        "aggregate_tokens_per_second": round(tokens / wall, 2) if wall else None,
        "decode_tokens_per_second": round(decode_tokens / decode_windows, 2) if decode_windows else None,
        "ttft_p50_seconds": round(percentile(ttfts, 0.50), 4) if ttfts else None,
        "ttft_p99_seconds": round(percentile(ttfts, 0.99), 4) if ttfts else None,
        "itl_p50_seconds": round(percentile(gaps, 0.50), 4) if gaps else None,
        "itl_p99_seconds": round(percentile(gaps, 0.99), 4) if gaps else None,
        "itl_max_seconds": round(max(gaps), 4) if gaps else None,
        # --serve only: the server's CPU time over the level (every thread),
        # and tokens per CPU-second, which time spent waiting for the cores
        # on a shared machine does not dilute.
        "server_cpu_seconds": round(cpu, 3) if cpu is not None else None,
        "tokens_per_server_cpu_second": round(tokens / cpu, 2) if cpu else None,
    }


def data_url(path):
    mime = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp",
            ".gif": "image/gif"}[os.path.splitext(path)[1].lower()]
    with open(path, "rb") as handle:
        return f"data:{mime};base64," + base64.b64encode(handle.read()).decode()


def run_conversations(target, rounds, max_tokens, prompt, image):
    """Fresh two-turn conversations, one turn after the other: each turn's
    TTFT (median over rounds) and cached_tokens."""
    turns = [[], []]
    for round_number in range(rounds):
        # A round of its own from the first position on: nothing of it is
        # cached before its first turn (the image's features may be).
        content = [{"type": "text", "text": prompt}]
        if image:
            content.insert(0, {"type": "image_url", "image_url": {"url": data_url(image)}})
        messages = [{"role": "system", "content": f"Conversation {round_number} of {time.time()}."},
                    {"role": "user", "content": content}]
        for turn in range(2):
            out = {}
            ttft = target.stream(max_tokens, messages=messages, out=out)[0]
            if ttft is None:  # no visible text (random weights): the end of a 1-token reply is its first token
                ttft = out.get("finished") if max_tokens == 1 else None
            usage = out.get("usage", {})
            turns[turn].append({"ttft_seconds": round(ttft, 4) if ttft is not None else None,
                                "prompt_tokens": usage.get("prompt_tokens"),
                                "cached_tokens": usage.get("prompt_tokens_details", {}).get("cached_tokens")})
            messages = messages + [{"role": "assistant", "content": out.get("text", "")},
                                   {"role": "user", "content": "Thank you. And what happens after that?"}]
    summary = {}
    for turn, runs in enumerate(turns, 1):
        ttfts = [run["ttft_seconds"] for run in runs if run["ttft_seconds"] is not None]
        summary[f"turn{turn}_ttft_p50_seconds"] = percentile(ttfts, 0.5)
        summary[f"turn{turn}"] = runs
    return summary


def conversation_report(arguments):
    """--conversation: with --compare one server with the caches and one
    without (both started here), else the one given."""
    settings = [("cached", []), ("uncached", ["--prefix-cache-mb", "0", "--encoder-cache-mb", "0"])] \
        if arguments.compare else [("as_given", [])]
    prompt = " ".join([PROMPT] * arguments.prompt_repeat)
    report = {"load_average_before": os.getloadavg(), "image": arguments.image, "rounds": arguments.rounds,
              "max_tokens": arguments.max_tokens, "prompt_repeat": arguments.prompt_repeat}
    for name, extra in settings:
        server = None
        url = arguments.url
        if arguments.serve:
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "server"))
            import harness
            server = harness.Server(arguments.vlm, arguments.serve, "--parallel", str(arguments.parallel),
                                    *arguments.serve_args.split(), *extra)
            url = f"http://{server.host}:{server.port}"
        try:
            target = Target(url, arguments.api_key)
            report["model"] = target.model
            report[name] = run_conversations(target, arguments.rounds, arguments.max_tokens, prompt, arguments.image)
        finally:
            if server:
                server.stop()
    report["load_average_after"] = os.getloadavg()
    print(json.dumps(report, indent=2))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="http://127.0.0.1:8080", help="a running server")
    parser.add_argument("--api-key", default=os.environ.get("VLM_API_KEY"))
    parser.add_argument("--serve", metavar="DIR", help="start `vlm serve --model DIR --port 0` for the run")
    parser.add_argument("--vlm", default="build/vlm", help="the vlm binary for --serve")
    parser.add_argument("--parallel", type=int, default=8, help="--parallel for --serve")
    parser.add_argument("--serve-args", default="", help="more arguments for --serve (one string, split on spaces)")
    parser.add_argument("--levels", default="1,2,4,8", help="concurrency levels")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per level")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--stagger", type=float, default=0.0, help="seconds between the starts of a level's streams")
    parser.add_argument("--prompt-repeat", type=int, default=1, help="repeat the prompt this many times")
    parser.add_argument("--conversation", action="store_true",
                        help="two-turn conversations: each turn's TTFT, with and without the caches")
    parser.add_argument("--compare", action="store_true",
                        help="with --conversation and --serve: a server with the caches, then one without")
    parser.add_argument("--image", help="with --conversation: an image for the first turn")
    arguments = parser.parse_args()
    if arguments.conversation:
        conversation_report(arguments)
        return

    server = None
    if arguments.serve:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "server"))
        import harness
        server = harness.Server(arguments.vlm, arguments.serve, "--parallel", str(arguments.parallel),
                                *arguments.serve_args.split())
        arguments.url = f"http://{server.host}:{server.port}"
    try:
        target = Target(arguments.url, arguments.api_key)
        target.stream(4)  # warm-up
        prompt = " ".join([PROMPT] * arguments.prompt_repeat)
        levels = [run_level(target, int(level), arguments.rounds, arguments.max_tokens, arguments.stagger, prompt,
                            server.pid if server else None)
                  for level in arguments.levels.split(",")]
    finally:
        if server:
            server.stop()
    print(json.dumps({"url": arguments.url, "model": target.model, "max_tokens": arguments.max_tokens,
                      "rounds": arguments.rounds, "stagger_seconds": arguments.stagger,
                      "prompt_repeat": arguments.prompt_repeat, "levels": levels}, indent=2))


if __name__ == "__main__":
    main()
