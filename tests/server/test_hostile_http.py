"""`vlm serve` against hostile HTTP, round two (issue 27, the server half):

- HttpStrictnessTests: Content-Length together with Transfer-Encoding
  closes the connection after a 400 (RFC 9112 6.1) and whatever follows is
  never served as a second request; a duplicate Host, a header name with a
  space, a Content-Encoding the server does not decode, a non-UTF-8
  charset, control bytes and a NUL in the API key are refused; the fields
  the server accepts and ignores (user, metadata, store, ...) are accepted
  only with their OpenAI types; API answers carry
  `X-Content-Type-Options: nosniff` and `Cache-Control: no-store`.
- KeepAliveFloodTests: 300 idle keep-alive connections from 24 source
  addresses (each under the per-client and "light client" thresholds) must
  not keep a fresh client or /health out: it is answered within 1 s.
- BodyBudgetTests: 16 unfinished 60 MB uploads from 16 addresses are held
  within the request-body budget (--max-body-memory-mb, 256 MiB by
  default): the server's RSS and its vlm_http_request_body_bytes gauge stay
  within it, the others get 503 server_busy at once; one address gets its
  share (128 MiB) and no more.

Loopback only: the other source addresses are 127.0.0.x aliases (Linux
routes all of 127.0.0.0/8 to lo). Every test was seen to fail against the
server before these fixes.

Run: .venv-server/bin/python -m unittest -v test_hostile_http (from tests/server)."""
import json
import os
import select
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_server as base  # noqa: E402

ASAN = bool(os.environ.get("VLM_SERVER_TEST_ASAN"))
API_KEY = "s3cret-key"
CHAT = json.dumps({"model": "qwen2", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}).encode()


def exchange(server, data, wait=3.0, source=None, until_responses=None):
    """Sends raw bytes on a new connection and reads until the server
    closes it, `wait` seconds pass, or (with until_responses) that many
    whole responses are in: (all bytes received, closed?)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if source:
        sock.bind((source, 0))
    sock.settimeout(wait)
    sock.connect((server.host, server.port))
    try:
        sock.sendall(data)
        received, closed = b"", False
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            received += chunk
            if until_responses and len(responses_in(received)) >= until_responses:
                break
        return received, closed
    finally:
        sock.close()


def responses_in(data):
    """Splits raw HTTP/1.1 responses (Content-Length framed): [(status, headers, body)]."""
    found = []
    while data:
        head, separator, rest = data.partition(b"\r\n\r\n")
        if not separator:
            break
        lines = head.split(b"\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower().decode()] = value.strip().decode(errors="replace")
        length = int(headers.get("content-length", "0"))
        if len(rest) < length:
            break
        found.append((status, headers, rest[:length]))
        data = rest[length:]
    return found


def request_bytes(method, path, headers=(), body=b""):
    lines = [f"{method} {path} HTTP/1.1".encode()]
    lines += [h if isinstance(h, bytes) else h.encode() for h in headers]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


class HttpStrictnessTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server(base.VLM, os.path.join(base.MODELS, "qwen2"), "--api-key", API_KEY)

    @classmethod
    def tearDownClass(cls):
        status = cls.server.stop()
        if status != 0:
            raise AssertionError(f"vlm serve exited {status}:\n{cls.server.stderr()[-3000:]}")

    def one_response(self, data, expected_status, code=None, closed=None):
        received, was_closed = exchange(self.server, data, wait=10 if closed is None else 3,
                                        until_responses=1 if closed is None else None)
        answers = responses_in(received)
        self.assertEqual(len(answers), 1, f"expected one response, got {received[:600]!r}")
        status, headers, body = answers[0]
        self.assertEqual(status, expected_status, body)
        if code:
            error = json.loads(body)["error"]
            self.assertEqual(error["code"], code, error)
            self.assertIsInstance(error["message"], str)
        if closed is not None:
            self.assertEqual(was_closed, closed, "connection closed" if was_closed else "connection left open")
        return headers, body

    def auth(self):
        return f"Authorization: Bearer {API_KEY}"

    def test_content_length_and_transfer_encoding_close_the_connection(self):
        # The chunked body is 3 bytes, Content-Length says 5: whichever a
        # proxy believes, the bytes after it must never become a request.
        smuggled = request_bytes("GET", "/v1/models", ["Host: localhost", self.auth()])
        data = request_bytes("POST", "/v1/chat/completions",
                             ["Host: localhost", self.auth(), "Content-Type: application/json",
                              "Content-Length: 5", "Transfer-Encoding: chunked"],
                             b"3\r\nabc\r\n0\r\n\r\n") + smuggled
        headers, _ = self.one_response(data, 400, "invalid_header", closed=True)
        self.assertEqual(headers.get("connection", "").lower(), "close")

    def test_duplicate_host_is_refused(self):
        self.one_response(request_bytes("GET", "/health", ["Host: localhost", "Host: evil.example"]),
                          400, "invalid_header")
        self.one_response(request_bytes("GET", "/health", ["Host: localhost", "Content-Length: 0",
                                                           "Content-Length: 0"]), 400, "invalid_header")

    def test_header_names_must_be_tokens(self):
        for name in (b"Bad Name", b"Bad\x01Name", b"Bad(Name)"):
            with self.subTest(name=name):
                self.one_response(request_bytes("GET", "/health", [b"Host: localhost", name + b": x"]),
                                  400, "invalid_header")

    def test_content_encoding_must_be_identity(self):
        for coding in ("gzip", "deflate", "br", "x-whatever"):
            with self.subTest(coding=coding):
                self.one_response(request_bytes("POST", "/v1/chat/completions",
                                                ["Host: localhost", self.auth(), "Content-Type: application/json",
                                                 f"Content-Encoding: {coding}", f"Content-Length: {len(CHAT)}"],
                                                CHAT), 415, "unsupported_content_encoding")
        self.one_response(request_bytes("POST", "/v1/chat/completions",
                                        ["Host: localhost", self.auth(), "Content-Type: application/json",
                                         "Content-Encoding: identity", f"Content-Length: {len(CHAT)}"], CHAT), 200)

    def test_charset_must_be_utf8(self):
        for content_type in ("application/json; charset=utf-16", "application/json;charset=latin1",
                             'application/json; charset="UTF-32"', "application/json; charset"):
            with self.subTest(content_type=content_type):
                self.one_response(request_bytes("POST", "/v1/chat/completions",
                                                ["Host: localhost", self.auth(), f"Content-Type: {content_type}",
                                                 f"Content-Length: {len(CHAT)}"], CHAT), 415, "unsupported_charset")
        for content_type in ("application/json; charset=utf-8", 'application/json; charset="UTF-8"',
                             "application/json;charset=utf8", "application/json"):
            with self.subTest(content_type=content_type):
                self.one_response(request_bytes("POST", "/v1/chat/completions",
                                                ["Host: localhost", self.auth(), f"Content-Type: {content_type}",
                                                 f"Content-Length: {len(CHAT)}"], CHAT), 200)

    def test_control_bytes_in_the_api_key_are_refused(self):
        key = API_KEY.encode()
        # Each of these reached libmicrohttpd's callbacks as the right key
        # (a value is a C string there: cut at the NUL).
        for value in (key + b"\x00", key + b"\x00junk", key + b"\x01", key + b"\x7f", key[:3] + b"\x1b" + key[3:]):
            with self.subTest(value=value):
                received, _ = exchange(self.server, request_bytes(
                    "GET", "/v1/models", [b"Host: localhost", b"Authorization: Bearer " + value]),
                    wait=10, until_responses=1)
                answers = responses_in(received)
                self.assertEqual(len(answers), 1, received[:300])
                self.assertIn(answers[0][0], (400, 401), answers[0][2])
        self.one_response(request_bytes("GET", "/v1/models", ["Host: localhost", self.auth()]), 200)

    def test_ignored_fields_have_their_openai_types(self):
        wrong = [("user", 5), ("user", ["a"]), ("metadata", "tag"), ("metadata", {"k": 1}),
                 ("metadata", {f"k{i}": "v" for i in range(17)}), ("metadata", {"k" * 65: "v"}),
                 ("metadata", {"k": "v" * 513}), ("store", "yes"), ("store", 1),
                 ("service_tier", "gold"), ("service_tier", 3), ("parallel_tool_calls", "true"),
                 ("prompt_cache_key", {}), ("prompt_cache_retention", "forever"), ("safety_identifier", 7)]
        for field, value in wrong:
            with self.subTest(field=field, value=value):
                body = {"model": "qwen2", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1,
                        field: value}
                status, answer = self.server.post_json("/v1/chat/completions", body,
                                                       {"Authorization": f"Bearer {API_KEY}"})
                self.assertEqual(status, 400, answer)
                self.assertIn(field.split(".")[0], answer["error"]["message"] + str(answer["error"]["param"]))
        status, answer = self.server.post_json("/v1/completions", {"model": "qwen2", "prompt": "Hi", "max_tokens": 1,
                                                                   "user": 5}, {"Authorization": f"Bearer {API_KEY}"})
        self.assertEqual(status, 400, answer)
        right = {"user": "u-1", "metadata": {"k": "v"}, "store": False, "service_tier": "auto",
                 "parallel_tool_calls": True, "prompt_cache_key": "x", "prompt_cache_retention": "24h",
                 "safety_identifier": "s", "max_tokens": 1}
        status, answer = self.server.post_json(
            "/v1/chat/completions", {"model": "qwen2", "messages": [{"role": "user", "content": "Hi"}], **right},
            {"Authorization": f"Bearer {API_KEY}"})
        self.assertEqual(status, 200, answer)
        status, answer = self.server.post_json(
            "/v1/chat/completions", {"model": "qwen2", "messages": [{"role": "user", "content": "Hi"}],
                                     "max_tokens": 1, "user": None, "metadata": None, "store": None},
            {"Authorization": f"Bearer {API_KEY}"})
        self.assertEqual(status, 200, answer)

    def test_api_answers_are_not_sniffed_or_stored(self):
        auth = {"Authorization": f"Bearer {API_KEY}"}
        checks = [("GET", "/health", None, {}), ("GET", "/v1/models", None, auth), ("GET", "/v1/nothing", None, {}),
                  ("GET", "/v1/models", None, {}), ("GET", "/metrics", None, auth),
                  ("POST", "/v1/chat/completions", {"model": "qwen2", "messages": [{"role": "user", "content": "Hi"}],
                                                    "max_tokens": 1}, auth)]
        for method, path, body, headers in checks:
            with self.subTest(path=path, headers=bool(headers)):
                status, response_headers, _ = self.server.request(method, path, body, headers)
                lowered = {k.lower(): v for k, v in response_headers.items()}
                self.assertEqual(lowered.get("x-content-type-options"), "nosniff", (status, response_headers))
                self.assertEqual(lowered.get("cache-control"), "no-store", (status, response_headers))


FLOOD_CONNECTIONS = 300
FLOOD_ADDRESSES = 24


class KeepAliveFloodTests(unittest.TestCase):
    """Issue 27: 256 idle keep-alive connections from 20 addresses (14 each,
    under every per-client threshold) kept every new client out for the
    whole --timeout. Here: the defaults (256 connections, 64 per client),
    300 connections from 24 addresses, each idle after one request."""

    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server(base.VLM, os.path.join(base.MODELS, "qwen2"), "--timeout", "60")

    @classmethod
    def tearDownClass(cls):
        status = cls.server.stop()
        if status != 0:
            raise AssertionError(f"vlm serve exited {status}:\n{cls.server.stderr()[-3000:]}")

    def test_fresh_client_is_answered_within_a_second(self):
        sockets = []
        request = request_bytes("GET", "/health", ["Host: localhost"])
        try:
            for i in range(FLOOD_CONNECTIONS):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.bind((f"127.0.0.{2 + i % FLOOD_ADDRESSES}", 0))
                sock.settimeout(5)
                sockets.append(sock)
                try:
                    sock.connect((self.server.host, self.server.port))
                    sock.sendall(request)
                    sock.recv(4096)  # its answer; the connection then idles
                except OSError:
                    pass  # refused: the flood keeps what it got
            # Renewal does not help either: one more request on every
            # connection that is still open.
            for sock in sockets:
                try:
                    sock.sendall(request)
                    sock.recv(4096)
                except OSError:
                    pass
            worst = 0.0
            for attempt in range(3):
                started = time.monotonic()
                status, _, body = self.server.request("GET", "/health", timeout=5)
                latency = time.monotonic() - started
                worst = max(worst, latency)
                self.assertEqual(status, 200, body)
                self.assertLess(latency, 1.0, f"/health took {latency:.2f} s during the flood")
                started = time.monotonic()
                status, _, body = self.server.request(
                    "POST", "/v1/chat/completions",
                    {"model": "qwen2", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}, timeout=5)
                self.assertEqual(status, 200, body)
                self.assertLess(time.monotonic() - started, 1.0 if not ASAN else 3.0)
            metrics = self.server.metrics()
            print(f"\n  keep-alive flood: {FLOOD_CONNECTIONS} connections from {FLOOD_ADDRESSES} addresses, "
                  f"{metrics['vlm_http_connections_open']:.0f} open, {metrics['vlm_http_connections_idle']:.0f} idle, "
                  f"/health in {worst * 1000:.1f} ms at worst", file=sys.stderr)
            self.assertLessEqual(metrics["vlm_http_connections_idle"], 128 + 1)
            self.assertGreater(metrics['vlm_http_connections_idle_closed_total{reason="cap"}'], 0)
        finally:
            for sock in sockets:
                sock.close()


BODY_BYTES = 60_000_000
BUDGET = 256 << 20
SHARE = 128 << 20


class BodyBudgetTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server(base.VLM, os.path.join(base.MODELS, "qwen2"), "--body-timeout", "120")
        cls.idle_rss = cls.server.rss_bytes()

    @classmethod
    def tearDownClass(cls):
        status = cls.server.stop()
        if status != 0:
            raise AssertionError(f"vlm serve exited {status}:\n{cls.server.stderr()[-3000:]}")

    def start_uploads(self, sources):
        """Sends the headers of a 60 MB chat body from each source and all
        of the body but its last byte, unless the server answers at once:
        (open sockets, statuses of the immediate answers)."""
        held, statuses = [], []
        head = request_bytes("POST", "/v1/chat/completions",
                             ["Host: localhost", "Content-Type: application/json", f"Content-Length: {BODY_BYTES}"])
        chunk = b" " * (1 << 20)
        for source in sources:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((source, 0))
            sock.settimeout(30)
            sock.connect((self.server.host, self.server.port))
            sock.sendall(head)
            readable, _, _ = select.select([sock], [], [], 0.5)
            if readable:
                answers = responses_in(sock.recv(65536))
                statuses.append(answers[0][0] if answers else None)
                if answers:
                    self.assertEqual(json.loads(answers[0][2])["error"]["code"], "server_busy")
                sock.close()
                continue
            remaining = BODY_BYTES - 1
            while remaining:
                sent = sock.send(chunk[:min(len(chunk), remaining)])
                remaining -= sent
            held.append(sock)
        return held, statuses

    def wait_received(self, expected_rss_growth):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self.server.rss_bytes() - self.idle_rss < expected_rss_growth:
            time.sleep(0.1)

    def test_unfinished_bodies_stay_within_the_budget(self):
        held, statuses = self.start_uploads([f"127.0.0.{100 + i}" for i in range(16)])
        try:
            admitted = BUDGET // BODY_BYTES
            self.assertEqual(len(held), admitted, statuses)
            self.assertEqual(statuses, [503] * (16 - admitted))
            self.wait_received(admitted * BODY_BYTES * 0.9)
            metrics = self.server.metrics()
            self.assertLessEqual(metrics["vlm_http_request_body_bytes"], BUDGET)
            self.assertEqual(metrics["vlm_http_request_body_bytes"], admitted * BODY_BYTES)
            self.assertGreaterEqual(metrics['vlm_http_request_body_refused_total{limit="total"}'], 16 - admitted)
            growth = self.server.rss_bytes() - self.idle_rss
            print(f"\n  16 x 60 MB unfinished: {admitted} held, RSS +{growth / 2**20:.0f} MiB", file=sys.stderr)
            if not ASAN:
                self.assertLess(growth, BUDGET + (48 << 20))
        finally:
            for sock in held:
                sock.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.server.metrics()["vlm_http_request_body_bytes"]:
            time.sleep(0.1)
        self.assertEqual(self.server.metrics()["vlm_http_request_body_bytes"], 0, "bodies not released")

    def test_one_address_gets_its_share(self):
        held, statuses = self.start_uploads(["127.0.0.90"] * 3)
        try:
            self.assertEqual(len(held), SHARE // BODY_BYTES)
            self.assertEqual(statuses, [503])
            self.assertGreaterEqual(self.server.metrics()['vlm_http_request_body_refused_total{limit="per_client"}'], 1)
            # Another address still gets in.
            other, other_statuses = self.start_uploads(["127.0.0.91"])
            self.assertEqual((len(other), other_statuses), (1, []))
            other[0].close()
            # A chunked body (no size declared) is charged as it grows:
            # past the share it is dropped and answered 503 once it ends.
            chunk = b" " * (1 << 20)
            chunked = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(12)) + b"0\r\n\r\n"
            received, _ = exchange(self.server, request_bytes(
                "POST", "/v1/chat/completions", ["Host: localhost", "Content-Type: application/json",
                                                 "Transfer-Encoding: chunked"], chunked),
                source="127.0.0.90", wait=30, until_responses=1)
            answers = responses_in(received)
            self.assertEqual([a[0] for a in answers], [503], received[:300])
            self.assertEqual(json.loads(answers[0][2])["error"]["code"], "server_busy")
        finally:
            for sock in held:
                sock.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.server.metrics()["vlm_http_request_body_bytes"]:
            time.sleep(0.1)
        self.assertEqual(self.server.metrics()["vlm_http_request_body_bytes"], 0, "bodies not released")


if __name__ == "__main__":
    unittest.main()
