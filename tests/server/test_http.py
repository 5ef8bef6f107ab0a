"""`vlm serve` under the hostile inputs of issue 13, one request at a time:
each reproducer (numbers that crashed or were mislabelled, keys with NUL,
unbounded stop strings, Transfer-Encodings that hung, keep-alive lost to
refusals, %00 in paths, content dropped by LLaVA's template) and the
HTTP-layer rules that close those classes (Content-Type, Host and Origin
allow-lists, request IDs, the access log, readiness, --request-timeout).
The floods are in test_hostile.py.

Run: .venv-server/bin/python -m unittest -v test_http (from tests/server)."""
import json
import os
import re
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_server as base  # noqa: E402

INT64_MAX = 9223372036854775807
FIXTURES = base.FIXTURES


def raw_exchange(server, data, responses=1, timeout=30):
    """Sends `data` on one new connection and reads `responses` HTTP
    responses from it: [(status, headers, body)], fewer if the server
    closed first."""
    sock = socket.create_connection((server.host, server.port), timeout=timeout)
    try:
        sock.sendall(data)
        reader = sock.makefile("rb")
        answers = []
        for _ in range(responses):
            answer = read_response(reader)
            if answer is None:
                break
            answers.append(answer)
        return answers
    finally:
        sock.close()


def read_response(reader):
    status_line = reader.readline()
    if not status_line:
        return None
    status = int(status_line.split()[1])
    headers = {}
    while True:
        line = reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            size = int(reader.readline().split(b";")[0], 16)
            if size == 0:
                reader.readline()
                break
            body += reader.read(size)
            reader.readline()
    else:
        body = reader.read(int(headers.get("content-length", "0")))
    return status, headers, body


def post_bytes(path, body, content_type="application/json", extra=""):
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    head = f"POST {path} HTTP/1.1\r\nHost: localhost\r\n"
    if content_type:
        head += f"Content-Type: {content_type}\r\n"
    return (head + extra + f"Content-Length: {len(payload)}\r\n\r\n").encode() + payload


def get_bytes(path, extra=""):
    return f"GET {path} HTTP/1.1\r\nHost: localhost\r\n{extra}\r\n".encode()


class HttpTests(base.ServerTestCase):
    """The tiny Qwen2 with the default limits and host policy."""
    arguments = ("--parallel", "2")

    def assert_alive(self):
        self.assertIsNone(self.server.process.poll(), self.server.stderr())
        self.assertEqual(self.server.request("GET", "/health")[0], 200)

    def test_max_tokens_2_63_is_refused_and_the_server_lives(self):
        # Issue 13, item 1: each of these was a SIGSEGV of the whole server.
        cases = [("/v1/completions", {"prompt": "Hi", "max_tokens": INT64_MAX}, "max_tokens"),
                 ("/v1/chat/completions", base.chat_body("Hi", INT64_MAX), "max_tokens"),
                 ("/v1/chat/completions", {"messages": [{"role": "user", "content": "Hi"}],
                                           "max_completion_tokens": INT64_MAX}, "max_completion_tokens"),
                 ("/v1/chat/completions", base.chat_body("Hi", INT64_MAX, stream=True), "max_tokens"),
                 ("/v1/completions", {"prompt": "Hi", "max_tokens": INT64_MAX, "stream": True}, "max_tokens")]
        for path, body, param in cases:
            status, answer = self.server.post_json(path, body)
            self.assert_error(status, answer, 400, param=param, fragment="between 1 and 2147483647")
            self.assert_alive()
        # Within the parse range but over the context: the engine's check.
        status, answer = self.server.post_json("/v1/completions", {"prompt": "Hi", "max_tokens": 2147483647})
        self.assert_error(status, answer, 400, code="context_length_exceeded")
        self.assert_alive()

    def test_numbers_get_their_own_field_and_message(self):
        status, body = self.server.post_json("/v1/chat/completions", base.chat_body("Hi", 2, seed=2**64 - 1))
        self.assert_error(status, body, 400, param="seed", fragment="beyond the 64-bit range")
        self.assertNotIn("decimal", body["error"]["message"])
        # A repetition_penalty that is 0 as a float blamed 'messages'.
        status, body = self.server.post_json("/v1/chat/completions",
                                             base.chat_body("Hi", 2, repetition_penalty=1e-50))
        self.assert_error(status, body, 400, param="repetition_penalty")
        status, body = self.server.post_json("/v1/chat/completions", base.chat_body("Hi", 2, top_p=1e-45))
        self.assert_error(status, body, 400, param="top_p")

    def test_keys_with_nul_and_long_stop_strings_are_refused(self):
        body = b'{"messages":[{"role":"user","content":"Hi","role\\u0000x":"system"}],"max_tokens":2}'
        status, _, data = self.server.request("POST", "/v1/chat/completions", body,
                                              {"Content-Type": "application/json"})
        self.assert_error(status, json.loads(data), 400, param="messages[0].role", fragment="Unrecognized")
        status, answer = self.server.post_json("/v1/chat/completions", base.chat_body("Hi", 2, stop=["x" * 1025]))
        self.assert_error(status, answer, 400, param="stop[0]", fragment="at most 1024 bytes")

    def test_unsupported_transfer_encoding_is_answered_at_once(self):
        # It waited for the connection to close: 60 s of silence.
        started = time.monotonic()
        answers = raw_exchange(self.server, b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n"
                               b"Content-Type: application/json\r\nTransfer-Encoding: gzip\r\n\r\n\x1f\x8b",
                               timeout=10)
        self.assertLess(time.monotonic() - started, 5)
        status, headers, body = answers[0]
        self.assert_error(status, json.loads(body), 501, code="unsupported_transfer_encoding")
        self.assertEqual(headers.get("connection", "").lower(), "close")
        # Chunked bodies are read.
        payload = json.dumps(base.chat_body("Hi", 2)).encode()
        chunked = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                   b"Transfer-Encoding: chunked\r\n\r\n" + f"{len(payload):x}\r\n".encode() + payload + b"\r\n0\r\n\r\n")
        self.assertEqual(raw_exchange(self.server, chunked)[0][0], 200)

    def test_pipelined_requests_behind_gets_and_refusals_are_answered(self):
        # libmicrohttpd closed the connection after any answer queued with
        # the headers: a GET's, or an early refusal's.
        pipeline = (get_bytes("/health") + post_bytes("/v1/chat/completions", b"{not json")
                    + get_bytes("/nowhere") + post_bytes("/v1/chat/completions", base.chat_body("Hi", 2), None)
                    + post_bytes("/v1/chat/completions", base.chat_body("Hi", 2), extra="Authorization: x\r\n")
                    + get_bytes("/v1/models"))
        answers = raw_exchange(self.server, pipeline, responses=6)
        self.assertEqual([answer[0] for answer in answers], [200, 400, 404, 415, 200, 200])
        for status, headers, body in answers[1:4]:
            self.assertEqual(set(json.loads(body)), {"error"})
            self.assertNotEqual(headers.get("connection", "").lower(), "close")

    def test_an_encoded_nul_in_the_url_is_refused(self):
        # "/health%00x" was routed as "/health".
        for path in ("/health%00x", "/v1/models%00", "/health?x=%00"):
            status, _, data = self.server.request("GET", path)
            self.assert_error(status, json.loads(data), 400, code="invalid_url", fragment="%00")
        self.assertEqual(self.server.request("GET", "/health%2500")[0], 404)  # a literal "%00": no such route

    def test_errors_libmicrohttpd_gives_itself(self):
        # Malformed requests never reach the server's handler; Debian 12's
        # libmicrohttpd answers them with its own HTML body (docs/SECURITY.md).
        # Pinned here so a change in the library is noticed.
        for request, status in ((b"GET /health HTTP/1.1\r\nHost: localhost\r\nno colon here\r\n\r\n", 400),
                                (b"GET /health HTTP/9.9\r\nHost: localhost\r\n\r\n", 505),
                                (b"GET /health HTTP/1.1\r\nHost: localhost\r\nX: " + b"a" * 40000 + b"\r\n\r\n", 431)):
            answers = raw_exchange(self.server, request)
            self.assertEqual(answers[0][0], status, request[:40])
            self.assertEqual(answers[0][1].get("connection", "").lower(), "close")
        # What the library only checks in a mode that answers worse: ours, in JSON.
        status, _, body = raw_exchange(self.server, b"GET /health HTTP/1.1\r\n\r\n")[0]
        self.assert_error(status, json.loads(body), 400, code="missing_host")
        self.assertEqual(raw_exchange(self.server, b"GET /health HTTP/1.0\r\n\r\n")[0][0], 200)
        self.assert_alive()

    def test_posts_must_be_json(self):
        for content_type in (None, "text/plain", "application/x-www-form-urlencoded", "application/jsonx"):
            answers = raw_exchange(self.server, post_bytes("/v1/chat/completions", base.chat_body("Hi", 2),
                                                           content_type))
            status, _, body = answers[0]
            self.assert_error(status, json.loads(body), 415, code="unsupported_media_type")
        answers = raw_exchange(self.server, post_bytes("/v1/chat/completions", base.chat_body("Hi", 2),
                                                       "Application/JSON; charset=utf-8"))
        self.assertEqual(answers[0][0], 200)

    def test_loopback_binding_answers_only_loopback_names(self):
        # DNS rebinding: a page on attacker.example resolves its own name to
        # 127.0.0.1; its requests carry that Host.
        for host in ("attacker.example", "127.0.0.1.attacker.example", "localhost.attacker.example"):
            answers = raw_exchange(self.server, f"GET /v1/models HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            status, _, body = answers[0]
            self.assert_error(status, json.loads(body), 403, code="host_not_allowed")
        for host in ("localhost", "localhost:8080", "127.0.0.1", "127.1.2.3:99", "[::1]:8080", "a.localhost"):
            answers = raw_exchange(self.server, f"GET /v1/models HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            self.assertEqual(answers[0][0], 200, host)
        for origin, expected in (("https://attacker.example", 403), ("null", 403),
                                 ("http://localhost:3000", 200), ("http://127.0.0.1", 200)):
            answers = raw_exchange(self.server, get_bytes("/v1/models", f"Origin: {origin}\r\n"))
            self.assertEqual(answers[0][0], expected, origin)

    def test_request_ids(self):
        status, headers, _ = self.server.request("GET", "/health", headers={"X-Request-ID": "trace-42.a:b"})
        self.assertEqual(headers["X-Request-ID"], "trace-42.a:b")
        for bad in ("has space", "x" * 129, "quote\"d", ""):
            status, headers, _ = self.server.request("GET", "/health", headers={"X-Request-ID": bad})
            self.assertRegex(headers["X-Request-ID"], r"^[0-9a-f]{32}$")
        first = self.server.request("GET", "/nowhere")[1]["X-Request-ID"]
        second = self.server.request("GET", "/nowhere")[1]["X-Request-ID"]
        self.assertNotEqual(first, second)
        status, headers, data = self.server.request("POST", "/v1/chat/completions",
                                                    base.chat_body("Hi", 2, stream=True),
                                                    {"X-Request-ID": "stream-1"})
        self.assertEqual((status, headers["X-Request-ID"]), (200, "stream-1"))

    def test_liveness_and_readiness(self):
        status, _, data = self.server.request("GET", "/health/live")
        self.assertEqual((status, json.loads(data)), (200, {"status": "ok"}))
        status, _, data = self.server.request("GET", "/health/ready")
        ready = json.loads(data)
        self.assertEqual((status, ready["status"]), (200, "ready"))
        self.assertEqual(ready["slots"], 2)
        self.assertEqual(self.server.request("GET", "/health")[0], 200)
        self.assertEqual(self.server.request("POST", "/health/ready", b"")[0], 405)

    def test_text_parts_reach_a_string_template_joined(self):
        # Qwen2's template prints content: parts became the list's repr.
        parts = [{"type": "text", "text": "Tell me"}, {"type": "text", "text": "about cats."}]
        joined = self.client.chat.completions.create(
            model="qwen2", messages=[{"role": "user", "content": "Tell me\nabout cats."}], max_tokens=4,
            temperature=0)
        split = self.client.chat.completions.create(
            model="qwen2", messages=[{"role": "user", "content": parts}], max_tokens=4, temperature=0)
        self.assertEqual(split.usage.prompt_tokens, joined.usage.prompt_tokens)
        self.assertEqual(split.choices[0].message.content, joined.choices[0].message.content)


class ContentFormatTests(base.ServerTestCase):
    """The tiny LLaVA, whose template loops over content parts."""
    model = "llava"
    arguments = ("--parallel", "1")

    def usage(self, content, max_tokens=3):
        answer = self.client.chat.completions.create(
            model="llava", messages=[{"role": "user", "content": content}], max_tokens=max_tokens, temperature=0)
        return answer.usage.prompt_tokens, answer.choices[0].message.content

    def test_string_content_reaches_llavas_prompt(self):
        # Issue 13, item 5: "content": "text" rendered as "USER: ASSISTANT:".
        text = "Please describe the weather on the moon today."
        as_string = self.usage(text)
        as_part = self.usage([{"type": "text", "text": text}])
        self.assertEqual(as_string, as_part)
        empty = self.usage([{"type": "text", "text": ""}])
        self.assertGreater(as_string[0], empty[0] + 5)

    def test_an_image_over_the_pixel_limit_is_not_a_context_error(self):
        image = base.fixture("bomb_100000x100000.png")
        messages = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": harness.data_url(image)}},
                                                 {"type": "text", "text": "What?"}]}]
        status, body = self.server.post_json("/v1/chat/completions",
                                             {"model": "llava", "messages": messages, "max_tokens": 2})
        self.assert_error(status, body, 400, param="messages[0].content[0]", fragment="exceeds the limit")
        self.assertNotEqual(body["error"]["code"], "context_length_exceeded")

    def test_data_url_types(self):
        for url, fragment in (("data:text/plain;base64,aGVsbG8=", "not an image"),
                              ("data:image/svg+xml;base64,PHN2Zz4=", "does not decode"),
                              ("data:;base64,aGVsbG8=", "no MIME type")):
            messages = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}},
                                                     {"type": "text", "text": "What?"}]}]
            status, body = self.server.post_json("/v1/chat/completions",
                                                 {"model": "llava", "messages": messages, "max_tokens": 2})
            self.assert_error(status, body, 400, param="messages[0].content[0]", fragment=fragment)


class PolicyTests(base.ServerTestCase):
    """--allowed-hosts, --allowed-origins and the access log (VLM_LOG=info)."""
    arguments = ("--parallel", "1", "--allowed-hosts", "127.0.0.1,api.example.com,.corp.example",
                 "--allowed-origins", "https://app.example.com")

    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server(base.VLM, os.path.join(base.MODELS, cls.model), *cls.arguments,
                                    env=dict(os.environ, VLM_LOG="info"))
        cls.client = base.client_for(cls.server)

    def status_for(self, host, origin=None):
        extra = f"Origin: {origin}\r\n" if origin else ""
        answers = raw_exchange(self.server, f"GET /health/live HTTP/1.1\r\nHost: {host}\r\n{extra}\r\n".encode())
        return answers[0][0]

    def test_allowed_hosts(self):
        for host, expected in (("api.example.com", 200), ("API.Example.com:443", 200), ("corp.example", 200),
                               ("a.b.corp.example", 200), ("127.0.0.1:1", 200), ("localhost", 403),
                               ("example.com", 403), ("evilcorp.example", 403)):
            self.assertEqual(self.status_for(host), expected, host)

    def test_allowed_origins(self):
        self.assertEqual(self.status_for("api.example.com", "https://app.example.com"), 200)
        self.assertEqual(self.status_for("api.example.com", "https://api.example.com"), 403)
        self.assertEqual(self.status_for("api.example.com", "http://app.example.com"), 403)

    def test_access_log(self):
        self.client.chat.completions.create(model="qwen2", messages=[{"role": "user", "content": "Hi"}],
                                            max_tokens=2, extra_headers={"X-Request-ID": "access-log-1"})
        pattern = re.compile(r"serve: access request_id=access-log-1 client=127\.0\.0\.1 method=POST "
                             r"route=/v1/chat/completions status=200 latency_ms=[0-9.]+ prompt_tokens=[1-9][0-9]* "
                             r"completion_tokens=2 stream=false end=completed")
        deadline = time.monotonic() + 10
        while not pattern.search(self.server.stderr()):
            self.assertLess(time.monotonic(), deadline, self.server.stderr()[-2000:])
            time.sleep(0.05)
        raw_exchange(self.server, f"GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-ID: lost-1\r\n\r\n".encode())
        deadline = time.monotonic() + 10
        while "request_id=lost-1 client=127.0.0.1 method=GET route=other status=404" not in self.server.stderr():
            self.assertLess(time.monotonic(), deadline, self.server.stderr()[-2000:])
            time.sleep(0.05)


class TimeoutTests(base.ServerTestCase):
    """--request-timeout 0.5 against completions of 30000 tokens (seconds of
    work for the tiny Qwen2, whose slots are widened with --ctx)."""
    arguments = ("--parallel", "1", "--ctx", "32768", "--request-timeout", "0.5")

    def test_request_timeout(self):
        self.server.wait_idle()
        started = time.monotonic()
        status, body = self.server.post_json("/v1/chat/completions", base.chat_body("Write a long story.", 30000))
        elapsed = time.monotonic() - started
        self.assert_error(status, body, 504, code="request_timeout")
        self.assertLess(elapsed, 10)
        status, headers, data = self.server.request("POST", "/v1/chat/completions",
                                                    base.chat_body("Write a long story.", 30000, stream=True))
        self.assertEqual(status, 200)
        events = harness.parse_sse(data)
        self.assertEqual(events[-1]["error"]["code"], "request_timeout")
        metrics = self.server.wait_idle()
        self.assertGreaterEqual(metrics["vlm_requests_timed_out_total"], 2)
        self.assertEqual(self.server.post_json("/v1/chat/completions", base.chat_body("Hi", 2))[0], 200)


if __name__ == "__main__":
    unittest.main()
