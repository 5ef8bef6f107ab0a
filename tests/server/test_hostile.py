"""`vlm serve` under floods (issue 13, item 4): half-sent connections from
one address and from many, headers, bodies and keep-alive requests
trickled a byte at a time, connections that send nothing. Throughout,
health checks and normal requests from another address must keep being
answered, every flood connection must be closed by its deadline (measured
from accept, whatever it trickles), and the server must never exit.

And under requests built to cost (items 2 and 3, MediaBombTests): a
decompression bomb in every image container is refused from its header in
under a second with the server's peak RSS within 100 MiB of idle, and
prompts or images that cannot fit the context are refused before anything
is tokenized or decoded.

Loopback only: the flood comes from other 127.0.0.0/8 source addresses
(Linux routes all of them to lo), the well-behaved client from 127.0.0.1.
Bounded: a few hundred sockets, about 40 s in all.

Run: .venv-server/bin/python -m unittest -v test_hostile (from tests/server)."""
import json
import os
import socket
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_server as base  # noqa: E402

HEADER_TIMEOUT = 2
BODY_TIMEOUT = 4
KEEP_ALIVE_TIMEOUT = 3
PER_CLIENT = 16
MAX_CONNECTIONS = 96
# Slack for a closing to be seen: the guard's 0.1 s tick, scheduling on a
# loaded machine, and AddressSanitizer.
SLACK = 3.0 if os.environ.get("VLM_SERVER_TEST_ASAN") else 2.0
PEAK_RSS_TOLERANCE_BYTES = 100 << 20


class Flood:
    """Sockets from one source address, each trickling its request one
    byte per `interval` seconds; remembers when the server closed each."""

    def __init__(self, server, source, count, prefix, trickle=b"a", interval=0.3, complete_first=None):
        self.source = source
        self.sockets = []
        self.opened = {}
        self.closed = {}
        self.trickle = trickle
        self.interval = interval
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((source, 0))
            sock.settimeout(5)
            try:
                sock.connect((server.host, server.port))
                if complete_first:  # one whole request first (keep-alive floods)
                    sock.sendall(complete_first)
                    read_one_response(sock)
                sock.sendall(prefix)
            except OSError:
                self.opened[sock] = self.closed[sock] = time.monotonic()
                self.sockets.append(sock)
                continue
            sock.setblocking(False)
            self.opened[sock] = time.monotonic()
            self.sockets.append(sock)

    def poll(self):
        """Trickles one byte on every open socket; notes the closed ones."""
        now = time.monotonic()
        for sock in self.sockets:
            if sock in self.closed:
                continue
            try:
                data = sock.recv(4096)
                if not data:
                    self.closed[sock] = now
                    continue
            except BlockingIOError:
                pass
            except OSError:
                self.closed[sock] = now
                continue
            try:
                sock.send(self.trickle)
            except BlockingIOError:
                pass
            except OSError:
                self.closed[sock] = now

    def run_until(self, deadline, condition=lambda: False):
        while time.monotonic() < deadline and not condition():
            self.poll()
            time.sleep(self.interval)

    def all_closed(self):
        return len(self.closed) == len(self.sockets)

    def lifetimes(self):
        return [self.closed[sock] - self.opened[sock] for sock in self.sockets if sock in self.closed]

    def close(self):
        for sock in self.sockets:
            sock.close()


def read_one_response(sock):
    """Reads one Content-Length response from a blocking socket."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        body += sock.recv(4096)
    return int(head.split()[1])


class Prober(threading.Thread):
    """A well-behaved client on 127.0.0.1: GET /health every `interval`
    seconds, each on a new connection, with the latency of each answer."""

    def __init__(self, server, interval=0.25, timeout=15):
        super().__init__(daemon=True)
        self.server, self.interval, self.timeout = server, interval, timeout
        self.results = []  # (latency, status or exception text)
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            started = time.monotonic()
            try:
                status = self.server.request("GET", "/health", timeout=self.timeout)[0]
            except OSError as error:
                status = f"{type(error).__name__}: {error}"
            self.results.append((time.monotonic() - started, status))
            self.stopping.wait(self.interval)

    def stop(self):
        self.stopping.set()
        self.join(self.timeout + 5)
        return self.results


def peak_rss_bytes(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


class HostileLoadTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server(
            base.VLM, os.path.join(base.MODELS, "qwen2"), "--parallel", "2",
            "--header-timeout", str(HEADER_TIMEOUT), "--body-timeout", str(BODY_TIMEOUT),
            "--timeout", str(KEEP_ALIVE_TIMEOUT), "--max-connections-per-client", str(PER_CLIENT),
            "--max-connections", str(MAX_CONNECTIONS))
        cls.client = base.client_for(cls.server)
        cls.client.chat.completions.create(model="qwen2", messages=[{"role": "user", "content": "Hi"}],
                                           max_tokens=2)  # warm-up
        cls.idle_rss = cls.server.rss_bytes()

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        alive = cls.server.process.poll() is None
        peak = peak_rss_bytes(cls.server.pid) if alive else 0
        status = cls.server.stop()
        if not alive or status != 0:
            raise AssertionError(f"vlm serve exited ({status}):\n{cls.server.stderr()[-4000:]}")
        print(f"\n  hostile load: idle RSS {cls.idle_rss / 2**20:.1f} MiB, peak {peak / 2**20:.1f} MiB",
              file=sys.stderr)
        if not cls.server_uses_asan and peak > cls.idle_rss + PEAK_RSS_TOLERANCE_BYTES:
            raise AssertionError(f"peak RSS {peak} is over idle {cls.idle_rss} + 100 MiB")

    server_uses_asan = bool(os.environ.get("VLM_SERVER_TEST_ASAN"))

    def setUp(self):
        self.assertIsNone(self.server.process.poll(), "the server exited")

    def tearDown(self):
        self.assertIsNone(self.server.process.poll(), f"the server exited:\n{self.server.stderr()[-4000:]}")

    def metrics(self):
        return self.server.metrics()

    def reserve_actions(self):
        metrics = self.metrics()
        return (metrics['vlm_http_connections_refused_total{reason="reserve"}'] +
                metrics['vlm_http_connections_idle_closed_total{reason="accept"}'])

    def closed_count(self, deadline):
        return self.metrics()[f'vlm_http_connections_closed_total{{deadline="{deadline}"}}']

    def assert_answered(self, results, limit, what):
        self.assertTrue(results, f"{what}: no health check ran")
        for latency, status in results:
            self.assertEqual(status, 200, f"{what}: a health check got {status}")
            self.assertLess(latency, limit, f"{what}: a health check took {latency:.2f} s")

    def chat(self):
        answer = self.client.chat.completions.create(
            model="qwen2", messages=[{"role": "user", "content": "Hello"}], max_tokens=4, temperature=0)
        self.assertEqual(answer.usage.completion_tokens, 4)

    def test_one_address_cannot_take_the_server(self):
        # Issue 13: 260 half-sent requests from one client took all 256
        # connections and /health was reset.
        before = self.closed_count("header")
        prober = Prober(self.server)
        prober.start()
        started = time.monotonic()
        flood = Flood(self.server, "127.0.0.2", 300, b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        try:
            flood.run_until(started + 0.8)
            refused = sum(1 for lifetime in flood.lifetimes() if lifetime < 0.8)
            self.assertGreaterEqual(refused, 300 - PER_CLIENT, "connections over the per-client limit stay open")
            self.chat()  # a normal request from another address, during the flood
            # Trickling a byte every 0.3 s must not keep a connection past
            # its header deadline (an idle timeout would be reset by each).
            flood.run_until(started + HEADER_TIMEOUT + SLACK + 2, flood.all_closed)
            self.assertTrue(flood.all_closed(), f"{300 - len(flood.closed)} flood connections still open")
            self.assertLessEqual(max(flood.lifetimes()), HEADER_TIMEOUT + SLACK)
        finally:
            flood.close()
            results = prober.stop()
        self.assert_answered(results, 2.0, "one-address flood")
        self.assertGreaterEqual(self.closed_count("header") - before, PER_CLIENT)

    def test_trickled_bodies_and_silent_connections_meet_their_deadlines(self):
        headers = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                   b"Content-Length: 100000\r\n\r\n{")
        before_body, before_header = self.closed_count("body"), self.closed_count("header")
        prober = Prober(self.server)
        prober.start()
        started = time.monotonic()
        bodies = Flood(self.server, "127.0.0.3", PER_CLIENT, headers, trickle=b" ")
        silent = Flood(self.server, "127.0.0.4", PER_CLIENT, b"", trickle=b"")
        try:
            while time.monotonic() < started + BODY_TIMEOUT + SLACK + 2 and not (bodies.all_closed() and silent.all_closed()):
                bodies.poll()
                silent.poll()
                time.sleep(0.3)
            self.chat()
            self.assertTrue(bodies.all_closed() and silent.all_closed())
            self.assertGreaterEqual(min(bodies.lifetimes()), BODY_TIMEOUT - 0.5)
            self.assertLessEqual(max(bodies.lifetimes()), BODY_TIMEOUT + SLACK)
            self.assertLessEqual(max(silent.lifetimes()), HEADER_TIMEOUT + SLACK)
        finally:
            bodies.close()
            silent.close()
            results = prober.stop()
        self.assert_answered(results, 2.0, "body flood")
        self.assertGreaterEqual(self.closed_count("body") - before_body, PER_CLIENT)
        self.assertGreaterEqual(self.closed_count("header") - before_header, PER_CLIENT)

    def test_a_trickled_keep_alive_request_meets_its_deadline(self):
        before = self.closed_count("keep_alive")
        first = b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"
        flood = Flood(self.server, "127.0.0.5", 8, b"GET /health HTTP/1.1\r\nHost: loc", complete_first=first)
        try:
            flood.run_until(time.monotonic() + KEEP_ALIVE_TIMEOUT + SLACK + 2, flood.all_closed)
            self.assertTrue(flood.all_closed())
            self.assertLessEqual(max(flood.lifetimes()), KEEP_ALIVE_TIMEOUT + SLACK)
        finally:
            flood.close()
        self.assertGreaterEqual(self.closed_count("keep_alive") - before, 8)

    def test_a_flood_from_many_addresses_delays_but_never_stops_the_server(self):
        # Eight addresses, each at its limit and reconnecting at once: more
        # than --max-connections. New connections wait in the listen queue
        # until a flood connection reaches its header deadline, so a health
        # check is answered within about one deadline.
        sources = [f"127.0.0.{10 + i}" for i in range(8)]
        prefix = b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: "
        reserve_refusals = self.reserve_actions()
        prober = Prober(self.server, interval=0.5)
        prober.start()
        floods = []
        finish = time.monotonic() + 3 * HEADER_TIMEOUT
        try:
            while time.monotonic() < finish:
                for flood in floods:
                    flood.poll()
                # Keep every address at its limit: replace what was closed.
                for source in sources:
                    open_now = sum(len(f.sockets) - len(f.closed) for f in floods if f.source == source)
                    if open_now < PER_CLIENT:
                        floods.append(Flood(self.server, source, PER_CLIENT - open_now, prefix))
                time.sleep(0.3)
        finally:
            for flood in floods:
                flood.close()
            results = prober.stop()
        self.assert_answered(results, HEADER_TIMEOUT + SLACK + 1, "many-address flood")
        self.assertGreaterEqual(len(results), 3)
        # The flood did reach the reserve, which kept the health checks in:
        # refusing flood addresses there, or (issue 27) closing the
        # connection waiting longest for a request to make room.
        self.assertGreater(self.reserve_actions(), reserve_refusals)
        self.chat()
        status, _, data = self.server.request("GET", "/health/ready")
        self.assertEqual((status, json.loads(data)["status"]), (200, "ready"))

    def test_unsupported_transfer_encodings_in_bulk(self):
        started = time.monotonic()
        for _ in range(50):
            sock = socket.create_connection((self.server.host, self.server.port), timeout=5)
            try:
                sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                             b"Transfer-Encoding: gzip, chunked\r\n\r\n")
                self.assertEqual(read_one_response(sock), 501)
            finally:
                sock.close()
        self.assertLess(time.monotonic() - started, 10)


BOMBS = os.path.join(base.SOURCE, "fuzz", "corpus", "image_decode")
# fuzz/make_image_bombs.py: a few hundred bytes each that declare gigapixels
# (or, for the text-chunk and scan bombs, unbounded work), one of each kind
# per container.
BOMB_FILES = {
    "png": ["bomb_png_ihdr_2147483647.png", "bomb_png_rows_67108864x1.png", "bomb_png_text_chunks.png"],
    "jpeg": ["bomb_jpeg_sof_65500.jpg", "bomb_jpeg_progressive_sof_65500.jpg", "bomb_jpeg_many_scans.jpg"],
    "gif": ["bomb_gif_screen_65535.gif", "bomb_gif_frame_65535.gif"],
    "webp": ["bomb_webp_vp8x_16383.webp", "bomb_webp_vp8_16383.webp", "bomb_webp_vp8l_16384.webp",
             "bomb_webp_vp8x_animated_60000.webp"],
}
# Bombs of work rather than size: a 1x1 PNG whose text chunks would each
# inflate to 8 MiB (27 s before libpng skipped them). It is a valid image.
WORK_BOMBS = {"bomb_png_text_chunks.png"}
MIME = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}
CONTEXT = 1024  # the tiny LLaVA's image takes 576 of them
REFUSAL_SECONDS = 1.0


def crc_chunk(kind, data):
    import zlib
    return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")


def header_only_png(width, height):
    """A PNG whose IHDR is valid and whose pixels are not: decoding it fails,
    so a refusal that names the context (not the data) came before decoding."""
    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])
    return b"\x89PNG\r\n\x1a\n" + crc_chunk(b"IHDR", ihdr) + crc_chunk(b"IDAT", b"\x01\x02\x03\x04")


def png_url(data):
    import base64
    return "data:image/png;base64," + base64.b64encode(data).decode()


class MediaBombTests(unittest.TestCase):
    """The tiny LLaVA with a 1024-position context; every refusal is timed and
    the server's peak RSS (VmHWM) compared with its RSS once warm."""

    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server(base.VLM, os.path.join(base.MODELS, "llava"), "--parallel", "1",
                                    "--ctx", str(CONTEXT))
        # Warm-up: one real image end to end (encoder built, buffers sized).
        status, body = cls.server.post_json("/v1/chat/completions", cls.body(
            [{"type": "image_url", "image_url": {"url": harness.data_url(os.path.join(BOMBS, "baseline.jpg"))}}]))
        if status != 200:
            raise AssertionError(f"warm-up answered {status}: {body}")
        cls.idle_rss = cls.server.rss_bytes()

    @classmethod
    def tearDownClass(cls):
        alive = cls.server.process.poll() is None
        peak = peak_rss_bytes(cls.server.pid) if alive else 0
        status = cls.server.stop()
        if not alive or status != 0:
            raise AssertionError(f"vlm serve exited ({status}):\n{cls.server.stderr()[-4000:]}")
        print(f"\n  media bombs: idle RSS {cls.idle_rss / 2**20:.1f} MiB, peak {peak / 2**20:.1f} MiB",
              file=sys.stderr)

    @staticmethod
    def body(parts, text="What is this?", max_tokens=2):
        return {"model": "llava", "max_tokens": max_tokens, "temperature": 0,
                "messages": [{"role": "user", "content": parts + [{"type": "text", "text": text}]}]}

    def setUp(self):
        self.assertIsNone(self.server.process.poll(), "the server exited")

    def tearDown(self):
        self.assertIsNone(self.server.process.poll(), f"the server exited:\n{self.server.stderr()[-4000:]}")
        status, _, _ = self.server.request("GET", "/health")
        self.assertEqual(status, 200)

    def timed_post(self, path, body):
        started = time.monotonic()
        status, answer = self.server.post_json(path, body)
        return status, answer, time.monotonic() - started

    def assert_peak_near_idle(self, what):
        peak = peak_rss_bytes(self.server.pid)
        self.assertLess(peak, self.idle_rss + PEAK_RSS_TOLERANCE_BYTES,
                        f"{what}: peak RSS {peak / 2**20:.1f} MiB, idle {self.idle_rss / 2**20:.1f} MiB")

    def test_a_bomb_in_every_container_is_refused_from_its_header(self):
        # Issue 13: a 66-byte PNG cost 6 GB and 25 s before its 400. A work
        # bomb is a valid image, so its answer is timed against a plain one's
        # (generation included; two seconds and more under ASan).
        plain = {"type": "image_url", "image_url": {"url": harness.data_url(os.path.join(BOMBS, "tiny_1x1.png"))}}
        status, answer, self.plain_seconds = self.timed_post("/v1/chat/completions", self.body([plain]))
        self.assertEqual(status, 200, answer)
        for container, names in BOMB_FILES.items():
            for name in names:
                with self.subTest(bomb=name):
                    import base64
                    with open(os.path.join(BOMBS, name), "rb") as bomb:
                        url = f"data:{MIME[container]};base64," + base64.b64encode(bomb.read()).decode()
                    status, answer, seconds = self.timed_post(
                        "/v1/chat/completions", self.body([{"type": "image_url", "image_url": {"url": url}}]))
                    if name in WORK_BOMBS:  # a valid 1x1 image: answered, its text never inflated
                        self.assertEqual(status, 200, answer)
                        # Twice the plain answer plus a second: a loaded machine (under
                        # ASan) varies that much; the bomb used to take 27 s.
                        self.assertLess(seconds, 2 * self.plain_seconds + REFUSAL_SECONDS,
                                        f"{name}: answered after {seconds:.2f} s, a plain 1x1 PNG after "
                                        f"{self.plain_seconds:.2f} s")
                        continue
                    self.assertEqual(status, 400, answer)
                    self.assertEqual(answer["error"]["param"], "messages[0].content[0].image_url.url")
                    self.assertNotEqual(answer["error"]["code"], "context_length_exceeded")
                    self.assertLess(seconds, REFUSAL_SECONDS, f"{name}: refused after {seconds:.2f} s")
        self.assert_peak_near_idle("image bombs")

    def test_images_over_the_context_are_refused_before_decoding(self):
        # Issue 13: 16 images of 8000x8000 decoded for 40 s when their token
        # count alone exceeded the context. These headers are valid and their
        # pixels are not: had anything been decoded, the answer would name
        # the broken data instead.
        for count, size in [(2, 64), (16, 4000)]:
            with self.subTest(images=count):
                part = {"type": "image_url", "image_url": {"url": png_url(header_only_png(size, size))}}
                status, answer, seconds = self.timed_post("/v1/chat/completions", self.body([part] * count))
                self.assertEqual(status, 400, answer)
                self.assertEqual(answer["error"]["code"], "context_length_exceeded", answer)
                self.assertIn(f"the {count} media item(s) take {576 * count} positions", answer["error"]["message"])
                self.assertLess(seconds, REFUSAL_SECONDS)
        # One fits: then it is decoded, and its broken pixels are named.
        part = {"type": "image_url", "image_url": {"url": png_url(header_only_png(64, 64))}}
        status, answer, _ = self.timed_post("/v1/chat/completions", self.body([part]))
        self.assertEqual(status, 400, answer)
        self.assertEqual(answer["error"]["param"], "messages[0].content[0].image_url.url")
        self.assert_peak_near_idle("images over the context")

    def test_a_prompt_over_the_context_is_refused_by_its_bytes(self):
        # Issue 13: a 60 MB text part was rendered and tokenized (1.8 GB,
        # 36 s) before context_length_exceeded. 8 MiB here: refused by the
        # tokenizer's bytes-per-token bound, nothing tokenized, on both
        # endpoints and alongside an image.
        text = "a" * (8 << 20)
        image = {"type": "image_url", "image_url": {"url": png_url(header_only_png(64, 64))}}
        for path, body in [("/v1/completions", {"model": "llava", "prompt": text, "max_tokens": 2}),
                           ("/v1/chat/completions", self.body([], text=text)),
                           ("/v1/chat/completions", self.body([image], text=text))]:
            with self.subTest(path=path, images=len(body.get("messages", [{"content": [0]}])[0]["content"]) - 1):
                status, answer, seconds = self.timed_post(path, body)
                self.assertEqual(status, 400, answer)
                self.assertEqual(answer["error"]["code"], "context_length_exceeded", answer)
                self.assertIn("the prompt is over", answer["error"]["message"])
                self.assertLess(seconds, 2 * REFUSAL_SECONDS)  # 8 MiB of JSON to parse first
        self.assert_peak_near_idle("long prompts")


class LimitFlagTests(unittest.TestCase):
    """vlm serve's own limits: --max-prompt-bytes refuses a prompt by its
    bytes before it is tokenized; --media-memory-mb and --media-wait are
    accepted and an image over the whole budget still decodes (alone).
    The budget's waiting and busy answers are tested in the engine
    (test_engine_admission.c), where concurrency can be arranged."""

    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server(base.VLM, os.path.join(base.MODELS, "llava"), "--parallel", "1",
                                    "--ctx", str(CONTEXT), "--max-prompt-bytes", "3000",
                                    "--media-memory-mb", "1", "--media-wait", "0.5")

    @classmethod
    def tearDownClass(cls):
        status = cls.server.stop()
        if status != 0:
            raise AssertionError(f"vlm serve exited ({status}):\n{cls.server.stderr()[-4000:]}")

    def test_a_prompt_over_max_prompt_bytes_is_refused(self):
        for path, body in [("/v1/completions", {"model": "llava", "prompt": "a " * 2000, "max_tokens": 2}),
                           ("/v1/chat/completions", MediaBombTests.body([], text="a " * 2000))]:
            with self.subTest(path=path):
                status, answer = self.server.post_json(path, body)
                self.assertEqual(status, 400, answer)
                self.assertEqual(answer["error"]["code"], "context_length_exceeded", answer)
                self.assertIn("over the limit of 3000 bytes", answer["error"]["message"])
        status, answer = self.server.post_json("/v1/completions",
                                               {"model": "llava", "prompt": "a " * 100, "max_tokens": 2})
        self.assertEqual(status, 200, answer)

    def test_an_image_over_the_whole_media_budget_decodes_alone(self):
        # astronaut.png (512x512) needs more than 1 MiB to decode.
        part = {"type": "image_url", "image_url": {"url": harness.data_url(base.fixture("astronaut.png"))}}
        status, answer = self.server.post_json("/v1/chat/completions", MediaBombTests.body([part]))
        self.assertEqual(status, 200, answer)

    def test_bad_limit_values_are_usage_errors(self):
        import subprocess
        for flag, value in [("--max-prompt-bytes", "0"), ("--media-memory-mb", "-1"), ("--media-wait", "x")]:
            with self.subTest(flag=flag):
                run = subprocess.run([base.VLM, "serve", "--model", os.path.join(base.MODELS, "llava"), flag, value],
                                     capture_output=True, text=True, timeout=60)
                self.assertEqual(run.returncode, 2, run.stderr)
                self.assertIn(f"bad value for {flag}", run.stderr)


if __name__ == "__main__":
    unittest.main()
