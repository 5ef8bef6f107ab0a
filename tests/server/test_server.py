"""`vlm serve` end to end, with the official OpenAI Python client and with
raw HTTP: streaming and not, text and images, finish reasons, chunk order,
usage, errors, authentication, client disconnects, graceful shutdown, and a
mixed concurrent load whose outputs must equal each request run alone.

Run: .venv-server/bin/python tests/server/test_server.py [-v] [Class.test ...]
Environment: VLM_BINARY (default build/vlm), VLM_SERVER_TEST_REQUESTS
(concurrent requests in the load test, default 32). Image tests need
../shared/fixtures/media/images and skip without it."""
import base64
import concurrent.futures
import json
import os
import signal
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import openai  # noqa: E402

SOURCE = os.path.abspath(os.environ.get("VLM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
VLM = os.path.abspath(os.environ.get("VLM_BINARY", os.path.join(SOURCE, "build", "vlm")))
MODELS = os.path.join(SOURCE, "tests", "models")
FIXTURES = os.path.join(os.environ.get("VLM_FIXTURES_DIR") or os.path.join(SOURCE, "..", "shared", "fixtures"),
                        "media", "images")
LOAD_REQUESTS = int(os.environ.get("VLM_SERVER_TEST_REQUESTS", "32"))
# The load test's RSS check: after the load, once idle, the server's RSS
# must be within this of its idle RSS after warm-up (allocator caches and
# per-thread arenas may keep some; a leak per request would not fit).
RSS_TOLERANCE_BYTES = 24 << 20
RSS_TOLERANCE_RATIO = 0.10


def fixture(name):
    path = os.path.join(FIXTURES, name)
    if not os.path.exists(path):
        raise unittest.SkipTest(f"no-fixtures: {path} is absent (../shared/fixtures missing)")
    return path


def vlm_run(model, prompt, max_tokens, images=(), raw=False):
    """`vlm run --json`, greedy: the reference a served request must equal."""
    command = [VLM, "run", "--model", os.path.join(MODELS, model), "--prompt", prompt,
               "--max-tokens", str(max_tokens), "--temperature", "0", "--json"]
    for image in images:
        command += ["--image", image]
    if raw:
        command.append("--raw")
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise AssertionError(f"vlm run failed: {result.stderr}")
    return json.loads(result.stdout)


def client_for(server, api_key="unused"):
    return openai.OpenAI(base_url=server.base_url(), api_key=api_key, max_retries=0, timeout=300)


def image_message(prompt, image_path):
    return [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": harness.data_url(image_path)}},
        {"type": "text", "text": prompt}]}]


def chat_body(prompt, max_tokens, **fields):
    return {"model": "qwen2", "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens, "temperature": 0, **fields}


class ServerTestCase(unittest.TestCase):
    """Starts one server for the class; it must exit 0 on SIGTERM."""
    model = "qwen2"
    arguments = ("--parallel", "4")

    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server(VLM, os.path.join(MODELS, cls.model), *cls.arguments)
        cls.client = client_for(cls.server)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        status = cls.server.stop()
        if status != 0:
            raise AssertionError(f"vlm serve exited {status} on SIGTERM:\n{cls.server.stderr()}")

    def assert_error(self, status, body, expected_status, param=None, code=None, fragment=None):
        self.assertEqual(status, expected_status, body)
        self.assertEqual(set(body), {"error"}, body)
        error = body["error"]
        self.assertEqual(set(error), {"message", "type", "param", "code"}, error)
        self.assertTrue(error["message"], error)
        if param is not None:  # the part itself, or a field inside it
            self.assertTrue(error["param"] == param or error["param"].startswith(param + "."), error)
        if code is not None:
            self.assertEqual(error["code"], code, error)
        if fragment is not None:
            self.assertIn(fragment, error["message"])

    def stream_raw(self, path, body):
        """A streaming request over raw HTTP: (status, headers, SSE events)."""
        status, headers, data = self.server.request("POST", path, body)
        self.assertEqual(status, 200, data)
        return headers, harness.parse_sse(data)


class TextServerTests(ServerTestCase):
    """The tiny Qwen2 (text only) on 4 slots."""

    def test_health_and_models(self):
        status, _, data = self.server.request("GET", "/health")
        self.assertEqual((status, json.loads(data)), (200, {"status": "ok"}))
        models = self.client.models.list()
        self.assertEqual([model.id for model in models.data], ["qwen2"])
        status, _, data = self.server.request("GET", "/v1/models")
        entry = json.loads(data)["data"][0]
        self.assertEqual(json.loads(data)["object"], "list")
        capabilities = entry["capabilities"]
        self.assertEqual(capabilities["modalities"]["input"], ["text"])
        self.assertEqual(capabilities["slots"], 4)
        self.assertEqual(capabilities["backend"], "cpu")
        self.assertGreater(capabilities["capacity"], 0)

    def test_chat_equals_vlm_run(self):
        prompt = "Why is the sky blue?"
        reference = vlm_run("qwen2", prompt, 12)
        answer = self.client.chat.completions.create(
            model="qwen2", messages=[{"role": "user", "content": prompt}], max_tokens=12, temperature=0)
        self.assertEqual(answer.object, "chat.completion")
        self.assertEqual(answer.choices[0].message.role, "assistant")
        self.assertEqual(answer.choices[0].message.content, reference["text"])
        self.assertEqual(answer.choices[0].finish_reason, reference["finish_reason"])
        self.assertEqual(answer.choices[0].finish_reason, "length")
        self.assertEqual(answer.usage.prompt_tokens, reference["usage"]["prompt_tokens"])
        self.assertEqual(answer.usage.completion_tokens, 12)
        self.assertEqual(answer.usage.total_tokens, answer.usage.prompt_tokens + 12)
        details = answer.usage.prompt_tokens_details.model_dump()
        self.assertEqual(details["image_tokens"], 0)
        self.assertEqual(details["audio_tokens"], 0)
        self.assertEqual(details["text_tokens"], answer.usage.prompt_tokens)

    def test_chat_stream_chunk_order(self):
        prompt = "Tell me about cats."
        whole = self.client.chat.completions.create(
            model="qwen2", messages=[{"role": "user", "content": prompt}], max_tokens=10, temperature=0)
        chunks = list(self.client.chat.completions.create(
            model="qwen2", messages=[{"role": "user", "content": prompt}], max_tokens=10, temperature=0,
            stream=True, stream_options={"include_usage": True}))
        self.assertEqual(chunks[0].choices[0].delta.role, "assistant")
        self.assertTrue(all(chunk.object == "chat.completion.chunk" for chunk in chunks))
        self.assertEqual(len({chunk.id for chunk in chunks}), 1)
        content = [chunk for chunk in chunks[1:] if chunk.choices and chunk.choices[0].finish_reason is None]
        self.assertGreater(len(content), 0)
        self.assertEqual("".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices),
                         whole.choices[0].message.content)
        finish, usage = chunks[-2], chunks[-1]
        self.assertEqual(finish.choices[0].finish_reason, "length")
        self.assertEqual(usage.choices, [])
        self.assertEqual(usage.usage.model_dump()["prompt_tokens"], whole.usage.prompt_tokens)
        self.assertEqual(usage.usage.completion_tokens, 10)
        # Over raw HTTP: the content type, [DONE] last, no usage chunk unless asked.
        headers, events = self.stream_raw("/v1/chat/completions", chat_body(prompt, 10, stream=True))
        self.assertTrue(headers["Content-Type"].startswith("text/event-stream"))
        self.assertEqual(events[-1], "[DONE]")
        self.assertEqual(events[-2]["choices"][0]["finish_reason"], "length")
        self.assertTrue(all(event == "[DONE]" or event["choices"] for event in events))

    def test_stop_string_finishes_with_stop(self):
        prompt = "Count from one to ten."
        text = self.client.chat.completions.create(
            model="qwen2", messages=[{"role": "user", "content": prompt}], max_tokens=24,
            temperature=0).choices[0].message.content
        self.assertGreaterEqual(len(text), 8, text)
        stop = text[5:8]
        answer = self.client.chat.completions.create(
            model="qwen2", messages=[{"role": "user", "content": prompt}], max_tokens=24, temperature=0,
            stop=[stop])
        self.assertEqual(answer.choices[0].finish_reason, "stop")
        self.assertEqual(answer.choices[0].message.content, text[:text.find(stop)])

    def test_completions_equal_vlm_run(self):
        prompt = "The capital of France is"
        reference = vlm_run("qwen2", prompt, 9, raw=True)
        answer = self.client.completions.create(model="qwen2", prompt=prompt, max_tokens=9, temperature=0)
        self.assertEqual(answer.object, "text_completion")
        self.assertEqual(answer.choices[0].text, reference["text"])
        self.assertEqual(answer.choices[0].finish_reason, "length")
        self.assertEqual(answer.usage.prompt_tokens, reference["usage"]["prompt_tokens"])
        chunks = list(self.client.completions.create(model="qwen2", prompt=prompt, max_tokens=9,
                                                     temperature=0, stream=True,
                                                     stream_options={"include_usage": True}))
        self.assertEqual("".join(chunk.choices[0].text for chunk in chunks if chunk.choices), reference["text"])
        self.assertEqual(chunks[-2].choices[0].finish_reason, "length")
        self.assertEqual(chunks[-1].usage.completion_tokens, 9)

    def test_logprobs(self):
        answer = self.client.chat.completions.create(
            model="qwen2", messages=[{"role": "user", "content": "Hi"}], max_tokens=5, temperature=0,
            logprobs=True, top_logprobs=2)
        content = answer.choices[0].logprobs.content
        self.assertEqual(len(content), 5)
        for entry in content:
            self.assertLessEqual(entry.logprob, 0.0)
            self.assertEqual(len(entry.top_logprobs), 2)
            # Greedy: the sampled token is the most likely one.
            self.assertAlmostEqual(entry.top_logprobs[0].logprob, entry.logprob, places=4)

    def test_keep_alive(self):
        connection = self.server.connection()
        try:
            sockets = []
            for _ in range(2):
                connection.request("POST", "/v1/chat/completions", body=json.dumps(chat_body("Hi", 2)),
                                   headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                self.assertEqual(response.status, 200)
                response.read()
                sockets.append(connection.sock)
            self.assertIs(sockets[0], sockets[1])
        finally:
            connection.close()

    def test_request_errors(self):
        status, _, data = self.server.request("POST", "/v1/chat/completions", "{not json",
                                              {"Content-Type": "application/json"})
        self.assert_error(status, json.loads(data), 400)
        self.assertEqual(json.loads(data)["error"]["type"], "invalid_request_error")
        status, body = self.server.post_json("/v1/chat/completions", chat_body("Hi", 2, bogus_field=1))
        self.assert_error(status, body, 400, fragment="bogus_field")
        status, body = self.server.post_json("/v1/chat/completions", chat_body("Hi", 2, n=17))
        self.assert_error(status, body, 400, param="n")
        status, body = self.server.post_json("/v1/chat/completions", chat_body("Hi", 2, model="gpt-4o"))
        self.assert_error(status, body, 404, param="model", code="model_not_found")
        status, body = self.server.post_json("/v1/chat/completions", chat_body("Hi", 100000))
        self.assert_error(status, body, 400, code="context_length_exceeded")
        with self.assertRaises(openai.BadRequestError) as raised:
            self.client.chat.completions.create(model="qwen2", messages=[{"role": "user", "content": "Hi"}],
                                                max_tokens=100000)
        self.assertEqual(raised.exception.code, "context_length_exceeded")

    def test_route_errors(self):
        status, _, data = self.server.request("GET", "/v1/nothing")
        self.assert_error(status, json.loads(data), 404)
        status, headers, data = self.server.request("GET", "/v1/chat/completions")
        self.assert_error(status, json.loads(data), 405)
        self.assertEqual(headers["Allow"], "POST")
        status, headers, data = self.server.request("DELETE", "/health")
        self.assert_error(status, json.loads(data), 405)

    def test_media_a_text_model_lacks_is_refused_by_name(self):
        image = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
        messages = [{"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                                 {"type": "image_url", "image_url": {"url": image}}]}]
        status, body = self.server.post_json("/v1/chat/completions",
                                             {"model": "qwen2", "messages": messages, "max_tokens": 2})
        self.assert_error(status, body, 400, param="messages[0].content[1]")
        self.assertIn("image", body["error"]["message"])
        audio = [{"role": "user", "content": [
            {"type": "text", "text": "Listen"},
            {"type": "input_audio", "input_audio": {"data": base64.b64encode(b"RIFF").decode(), "format": "wav"}}]}]
        status, body = self.server.post_json("/v1/chat/completions",
                                             {"model": "qwen2", "messages": audio, "max_tokens": 2})
        self.assert_error(status, body, 400, param="messages[0].content[1]")
        self.assertIn("audio", body["error"]["message"])

    def wait_for_cancel(self, before, timeout=20):
        deadline = time.monotonic() + timeout
        while True:
            metrics = self.server.metrics()
            cancelled = metrics['vlm_requests_finished_total{reason="cancelled"}']
            if cancelled > before and metrics["vlm_active_slots"] == 0:
                return metrics
            if time.monotonic() > deadline:
                self.fail(f"the request was not cancelled: {metrics}")
            time.sleep(0.05)

    def test_disconnect_mid_stream_frees_the_slot(self):
        self.server.wait_idle()
        before = self.server.metrics()['vlm_requests_finished_total{reason="cancelled"}']
        sock = open_raw(self.server, chat_body("Write a long story.", 4000, stream=True))
        received = b""
        while received.count(b"data: ") < 3:
            data = sock.recv(65536)
            self.assertTrue(data, "the stream ended early")
            received += data
        sock.close()
        metrics = self.wait_for_cancel(before)
        self.assertGreaterEqual(metrics["vlm_client_disconnects_total"], 1)
        # The server goes on serving.
        self.assertEqual(self.server.post_json("/v1/chat/completions", chat_body("Hi", 2))[0], 200)

    def test_disconnect_while_waiting_cancels(self):
        self.server.wait_idle()
        before = self.server.metrics()['vlm_requests_finished_total{reason="cancelled"}']
        sock = open_raw(self.server, chat_body("Write a long story.", 4000))
        deadline = time.monotonic() + 30
        while self.server.metrics()["vlm_active_slots"] < 1:
            self.assertLess(time.monotonic(), deadline, "the request never started")
            time.sleep(0.01)
        sock.close()
        self.wait_for_cancel(before)

    def test_metrics_exposition(self):
        self.client.chat.completions.create(model="qwen2", messages=[{"role": "user", "content": "Hi"}],
                                            max_tokens=3, temperature=0)
        status, headers, data = self.server.request("GET", "/metrics")
        self.assertEqual(status, 200)
        self.assertTrue(headers["Content-Type"].startswith("text/plain"))
        metrics = harness.parse_metrics(data.decode())
        for name in ("vlm_queue_depth", "vlm_active_slots", "vlm_prompt_tokens_total",
                     "vlm_completion_tokens_total", "vlm_preprocess_seconds_total",
                     "vlm_encode_seconds_total", "vlm_kv_cache_usage_ratio",
                     'vlm_time_to_first_token_seconds_bucket{le="+Inf"}',
                     "vlm_inter_token_latency_seconds_count"):
            self.assertIn(name, metrics)
        self.assertGreaterEqual(metrics['vlm_http_responses_total{route="/v1/chat/completions",status="200"}'], 1)
        self.assertGreaterEqual(metrics["vlm_completion_tokens_total"], 3)
        self.assertGreaterEqual(metrics['vlm_time_to_first_token_seconds_bucket{le="+Inf"}'], 1)


def open_raw(server, body, headers=""):
    """Sends a POST /v1/chat/completions on a new socket, returns the socket."""
    payload = json.dumps(body).encode()
    sock = socket.create_connection((server.host, server.port), timeout=60)
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                 + headers.encode() + f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload)
    return sock


class AuthAndLimitsTests(ServerTestCase):
    """--api-key, --max-body-bytes, --timeout, --queue; graceful shutdown."""
    arguments = ("--api-key", "sekrit-key", "--max-body-bytes", "4096", "--timeout", "2",
                 "--parallel", "1", "--queue", "1")
    authorization = {"Authorization": "Bearer sekrit-key"}

    def test_api_key(self):
        with self.assertRaises(openai.AuthenticationError):
            client_for(self.server, "wrong-key").models.list()
        status, headers, data = self.server.request("GET", "/v1/models")
        self.assert_error(status, json.loads(data), 401, code="invalid_api_key")
        self.assertEqual(headers.get("WWW-Authenticate"), "Bearer")
        status, body = self.server.post_json("/v1/chat/completions", chat_body("Hi", 2),
                                             {"Authorization": "Bearer sekrit-kez"})
        self.assert_error(status, body, 401)
        self.assertEqual(self.server.request("GET", "/health")[0], 200)  # open for probes
        client = client_for(self.server, "sekrit-key")
        answer = client.chat.completions.create(model="qwen2", messages=[{"role": "user", "content": "Hi"}],
                                                max_tokens=2)
        self.assertEqual(answer.usage.completion_tokens, 2)
        client.close()

    def test_body_limit(self):
        body = chat_body("x" * 8000, 2)
        status, body = self.server.post_json("/v1/chat/completions", body, self.authorization)
        self.assert_error(status, body, 413)

    def test_idle_connection_times_out(self):
        sock = socket.create_connection((self.server.host, self.server.port), timeout=30)
        started = time.monotonic()
        try:  # a body that never completes
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n"
                         b"Authorization: Bearer sekrit-key\r\n\r\n{")
            self.assertEqual(sock.recv(4096), b"")  # closed by the server, not by our timeout
            self.assertLess(time.monotonic() - started, 20)
        finally:
            sock.close()

    def test_queue_full_is_429(self):
        headers = "Authorization: Bearer sekrit-key\r\n"
        sockets = []

        def wait_for(active, queued):
            deadline = time.monotonic() + 30
            while True:
                metrics = self.server.metrics(self.authorization)
                if metrics["vlm_active_slots"] == active and metrics["vlm_queue_depth"] == queued:
                    return
                self.assertLess(time.monotonic(), deadline, f"never {active} running, {queued} queued")
                time.sleep(0.005)

        try:  # one request in the only slot, one in the queue of 1, then one too many
            sockets.append(open_raw(self.server, chat_body("Write a long story.", 4000), headers))
            wait_for(1, 0)
            sockets.append(open_raw(self.server, chat_body("Write another story.", 4000), headers))
            wait_for(1, 1)
            status, body = self.server.post_json("/v1/chat/completions", chat_body("Hi", 2), self.authorization)
            self.assert_error(status, body, 429, code="rate_limit_exceeded")
        finally:
            for sock in sockets:
                sock.close()
        self.server.wait_idle(headers=self.authorization)

    def test_sigterm_lets_in_flight_requests_finish(self):
        server = harness.Server(VLM, os.path.join(MODELS, "qwen2"), "--parallel", "2")
        try:
            payload = json.dumps(chat_body("Write a long story.", 1500, stream=True)).encode()
            sock = socket.create_connection((server.host, server.port), timeout=120)
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                         + f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n".encode()
                         + payload)
            received = sock.recv(65536)
            server.process.send_signal(signal.SIGTERM)
            time.sleep(0.2)
            try:  # no new work once stopping: refused, or 503 on a connection still accepted
                status = server.request("GET", "/health", timeout=10)[0]
                self.assertEqual(status, 503)
            except (ConnectionError, OSError):
                pass
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                received += data
            sock.close()
            self.assertIn(b"data: [DONE]", received)
            self.assertIn(b'"finish_reason":"length"', received)
            self.assertEqual(server.process.wait(120), 0, server.stderr())
        finally:
            server.stop()


class ImageServerTests(ServerTestCase):
    """The tiny LLaVA-1.5 (text and images, with a chat template) on 4 slots."""
    model = "llava"

    def chat(self, prompt, max_tokens, image=None, stream=False):
        messages = image_message(prompt, image) if image else [{"role": "user", "content": prompt}]
        if not stream:
            answer = self.client.chat.completions.create(model="llava", messages=messages,
                                                         max_tokens=max_tokens, temperature=0)
            return answer.choices[0].message.content, answer.choices[0].finish_reason, answer.usage
        text, finish, usage = "", None, None
        for chunk in self.client.chat.completions.create(model="llava", messages=messages, max_tokens=max_tokens,
                                                         temperature=0, stream=True,
                                                         stream_options={"include_usage": True}):
            if chunk.choices:
                text += chunk.choices[0].delta.content or ""
                finish = chunk.choices[0].finish_reason or finish
            if chunk.usage:
                usage = chunk.usage
        return text, finish, usage

    def test_models_report_images(self):
        entry = self.client.models.list().data[0].model_dump()
        self.assertEqual(entry["capabilities"]["modalities"]["input"], ["text", "image"])

    def test_image_chat_equals_vlm_run(self):
        image = fixture("chelsea_q90.jpg")
        prompt = "What is in this picture?"
        reference = vlm_run("llava", prompt, 10, images=[image])
        for stream in (False, True):
            text, finish, usage = self.chat(prompt, 10, image, stream)
            self.assertEqual(text, reference["text"])
            self.assertEqual(finish, "length")
            self.assertEqual(usage.prompt_tokens, reference["usage"]["prompt_tokens"])
            details = usage.prompt_tokens_details.model_dump()
            self.assertEqual(details["image_tokens"], 576)  # image_seq_length of the tiny LLaVA
            self.assertEqual(details["audio_tokens"], 0)
            self.assertEqual(details["text_tokens"], usage.prompt_tokens - 576)

    def test_bad_image_bytes(self):
        url = "data:image/png;base64," + base64.b64encode(b"this is not an image at all").decode()
        messages = [{"role": "user", "content": [{"type": "text", "text": "What?"},
                                                 {"type": "image_url", "image_url": {"url": url}}]}]
        status, body = self.server.post_json("/v1/chat/completions",
                                             {"model": "llava", "messages": messages, "max_tokens": 2})
        self.assert_error(status, body, 400, param="messages[0].content[1]")

    def test_too_many_images_refused_before_fetching(self):
        url = "data:image/png;base64," + base64.b64encode(b"never decoded").decode()
        parts = [{"type": "image_url", "image_url": {"url": url}} for _ in range(17)]
        messages = [{"role": "user", "content": parts + [{"type": "text", "text": "Many"}]}]
        status, body = self.server.post_json("/v1/chat/completions",
                                             {"model": "llava", "messages": messages, "max_tokens": 2})
        self.assert_error(status, body, 400, param="messages")
        self.assertEqual(body["error"]["code"], "too_many_media_items")

    def test_audio_part_refused(self):
        messages = [{"role": "user", "content": [
            {"type": "input_audio", "input_audio": {"data": base64.b64encode(b"RIFF").decode(), "format": "wav"}},
            {"type": "text", "text": "Listen"}]}]
        status, body = self.server.post_json("/v1/chat/completions",
                                             {"model": "llava", "messages": messages, "max_tokens": 2})
        self.assert_error(status, body, 400, param="messages[0].content[0]")
        # A real clip, by input_audio and by audio_url: no family has an audio
        # path yet, so the part is refused by name, never dropped.
        with open(fixture(os.path.join("..", "audio", "speech_describe_16k.wav")), "rb") as f:
            clip = base64.b64encode(f.read()).decode()
        for part, param in [
                ({"type": "input_audio", "input_audio": {"data": clip, "format": "wav"}},
                 "messages[0].content[1].input_audio.data"),
                ({"type": "audio_url", "audio_url": {"url": "data:audio/wav;base64," + clip}},
                 "messages[0].content[1].audio_url.url")]:
            messages = [{"role": "user", "content": [{"type": "text", "text": "Listen"}, part]}]
            status, body = self.server.post_json("/v1/chat/completions",
                                                 {"model": "llava", "messages": messages, "max_tokens": 2})
            self.assert_error(status, body, 400, param=param, code="unsupported_content",
                              fragment="takes no audio input")
        # audio_url's shape is checked like image_url's.
        messages = [{"role": "user", "content": [{"type": "audio_url", "audio_url": {"url": ""}}]}]
        status, body = self.server.post_json("/v1/chat/completions",
                                             {"model": "llava", "messages": messages, "max_tokens": 2})
        self.assert_error(status, body, 400, param="messages[0].content[0].audio_url.url")

    def test_mixed_load(self):
        images = [fixture("horse.png"), fixture("chelsea_q90.jpg")]
        prompts = ["Describe this.", "What color is it?", "Tell me a story.", "Where is this?",
                   "Hello there!", "List three animals.", "Why?", "What happens next?"]
        distinct = [(prompts[i], 6 + 5 * (i % 4), images[i % 2] if i % 2 else None) for i in range(8)]
        # Each alone, streamed and not: a stream's deltas may hold back a
        # partial character differently from the whole-text decode.
        expected = {(case, stream): self.chat(*case, stream)[0] for case in distinct for stream in (False, True)}
        cases = [(distinct[i % len(distinct)], i % 3 == 0) for i in range(LOAD_REQUESTS)]

        def run_all(selected):
            with concurrent.futures.ThreadPoolExecutor(len(selected)) as pool:
                futures = [pool.submit(self.chat, *case, stream) for case, stream in selected]
                return [future.result() for future in futures]

        run_all(cases)  # warm-up at full load: threads, malloc arenas, slot buffers
        self.server.wait_idle()
        idle_rss = self.server.rss_bytes()
        started = time.monotonic()
        results = run_all(cases)
        elapsed = time.monotonic() - started
        for (case, stream), (text, finish, usage) in zip(cases, results):
            self.assertEqual(text, expected[(case, stream)], f"{case} stream={stream}")
            self.assertEqual(finish, "length")
            self.assertEqual(usage.completion_tokens, case[1])
        self.server.wait_idle()
        time.sleep(0.5)
        rss = self.server.rss_bytes()
        print(f"\n  load: {LOAD_REQUESTS} requests in {elapsed:.1f} s; RSS idle after warm-up "
              f"{idle_rss / 2**20:.1f} MiB, after load {rss / 2**20:.1f} MiB", file=sys.stderr)
        self.assertLessEqual(rss, idle_rss * (1 + RSS_TOLERANCE_RATIO) + RSS_TOLERANCE_BYTES)


XLA_VENV = os.path.join(SOURCE, ".venv-xla", "bin", "iree-compile")


class XlaServerTests(ServerTestCase):
    """--backend xla: the tiny LLaVA's text decoder and CLIP tower + projector
    compiled by IREE, on 2 slots: a streaming
    image request, a mixed text+image batch and a cancelled request whose
    slot is then reused, each equal to the cpu backend's answer. Skips
    without the IREE venv (.venv-xla) or a vlm built without the runtime."""
    model = "llava"
    arguments = ("--backend", "xla", "--parallel", "2", "--ctx", "1024", "--prefill-chunk", "128")

    @classmethod
    def setUpClass(cls):
        if not os.path.exists(XLA_VENV):
            raise unittest.SkipTest("no-venv-xla: no .venv-xla (tools/xla/requirements.txt)")
        probe = subprocess.run([VLM, "run", "--backend", "xla", "--model", "/nonexistent", "--prompt", "x"],
                               capture_output=True, text=True)
        if "built without the xla runtime" in probe.stderr:
            raise unittest.SkipTest("no-xla-runtime: vlm was built without the xla runtime")
        cls.cache = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"vlm-xla-test-cache-{os.getpid()}")
        env = dict(os.environ, VLM_XLA_CACHE=cls.cache)
        cls.server = harness.Server(VLM, os.path.join(MODELS, cls.model), *cls.arguments, env=env,
                                    start_timeout=600)
        cls.client = client_for(cls.server)
        # The reference: the same requests on the cpu backend, through the
        # same server code (chat content reaches LLaVA's template as parts).
        cls.cpu_server = harness.Server(VLM, os.path.join(MODELS, cls.model), "--parallel", "1")
        cls.cpu_client = client_for(cls.cpu_server)

    @classmethod
    def tearDownClass(cls):
        cls.cpu_client.close()
        cls.cpu_server.stop()
        super().tearDownClass()
        subprocess.run(["rm", "-rf", cls.cache])

    def cpu_chat(self, prompt, max_tokens, image=None, stream=False):
        """The cpu backend's answer to the same request."""
        client, self.client = self.client, self.cpu_client
        try:
            return ImageServerTests.chat(self, prompt, max_tokens, image, stream)[0]
        finally:
            self.client = client

    def chat(self, prompt, max_tokens, image=None, stream=False):
        return ImageServerTests.chat(self, prompt, max_tokens, image, stream)

    def test_models_report_backends(self):
        entry = self.client.models.list().data[0].model_dump()
        self.assertEqual(entry["capabilities"]["backend"], "xla")
        self.assertEqual(entry["capabilities"]["vision_backend"], "xla")
        self.assertNotIn("host fallback", self.server.stderr())

    def test_streaming_image_and_mixed_batch_equal_cpu(self):
        image = fixture("chelsea_q90.jpg")
        cases = [("What is in this picture?", 8, image), ("Tell me a story.", 12, None),
                 ("Describe it.", 6, image), ("Hello there!", 9, None)]
        expected = [self.cpu_chat(prompt, tokens, image, stream=image is None) for prompt, tokens, image in cases]
        self.assertEqual(expected[0], vlm_run("llava", *cases[0][:2], images=[image])["text"])
        text, finish, usage = self.chat(*cases[0], stream=True)
        self.assertEqual(text, self.cpu_chat(*cases[0], stream=True))
        self.assertEqual(usage.prompt_tokens_details.model_dump()["image_tokens"], 576)
        with concurrent.futures.ThreadPoolExecutor(len(cases)) as pool:
            results = list(pool.map(lambda case: self.chat(*case, stream=case[2] is None), cases))
        self.assertEqual([result[0] for result in results], expected)

    def test_cancelled_request_frees_its_slot_for_reuse(self):
        self.server.wait_idle()
        before = self.server.metrics()['vlm_requests_finished_total{reason="cancelled"}']
        # A prompt the tiny LLaVA does not end at once (its string content
        # reaches the template as a text part, as transformers serve passes it).
        body = {"model": "llava", "messages": [{"role": "user", "content": "Write a long story about a cat."}],
                "max_tokens": 400, "temperature": 0, "stream": True}
        sock = open_raw(self.server, body)
        received = b""
        while received.count(b"data: ") < 3:
            data = sock.recv(65536)
            self.assertTrue(data, "the stream ended early")
            received += data
        sock.close()
        deadline = time.monotonic() + 30
        while True:
            metrics = self.server.metrics()
            if metrics['vlm_requests_finished_total{reason="cancelled"}'] > before and metrics["vlm_active_slots"] == 0:
                break
            self.assertLess(time.monotonic(), deadline, f"not cancelled: {metrics}")
            time.sleep(0.05)
        # Both slots serve again, with nothing left over from the cancelled request.
        expected = self.cpu_chat("Hello there!", 9)
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda _: self.chat("Hello there!", 9)[0], range(2)))
        self.assertEqual(results, [expected, expected])


if __name__ == "__main__":
    unittest.main()
