"""Feedback on long work (issue 29): what `vlm serve` and `vlm run` say
while they load and prefill, and what a client can ask for.

- return_progress streams llama-server's prompt_progress chunks (an empty
  assistant delta and {total, cache, processed, time_ms}) before the first
  token, on both endpoints and through the official OpenAI client; without
  a stream it is refused, not ignored;
- answers carry llama-server's timings (and vlm's queue, encode and
  first-token times);
- at --log-level info every line has a UTC time, the model's load says what
  it holds (tensors, mapped bytes, packing, slots, positions, KV bytes, a
  context below the model's length), every prefill chunk is a line with
  the request id, and every 4xx is logged with its reason;
- --log-format json (VLM_LOG_FORMAT) makes every stderr line an object.

Run: .venv-server/bin/python tests/server/test_feedback.py [-v]"""
import json
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_server as base  # noqa: E402

TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"
CHUNK = 16
# Lines the server prints whatever the level, as they always were.
PLAIN = re.compile(r"^(listening on http://|vlm: (SIGTERM|SIGINT): stopping|vlm: stopped)")


def long_prompt(words=60):
    return " ".join(f"word{i % 7}" for i in range(words))


class ProgressTests(base.ServerTestCase):
    arguments = ("--parallel", "2", "--prefill-chunk", str(CHUNK), "--decoding-prefill-chunk", str(CHUNK),
                 "--prefix-cache-mb", "0")

    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server(base.VLM, os.path.join(base.MODELS, cls.model), *cls.arguments,
                                    env=dict(os.environ, VLM_LOG="info"))
        cls.client = base.client_for(cls.server)

    def progress_of(self, events):
        """The prompt_progress payloads, checked for llama-server's shape,
        and the index of the first event with text."""
        progress, first_text = [], None
        for index, event in enumerate(events):
            if event == "[DONE]":
                continue
            if "prompt_progress" in event:
                self.assertIsNone(first_text, "progress after the first token")
                self.assertEqual(set(event["prompt_progress"]), {"total", "cache", "processed", "time_ms"})
                choice = event["choices"][0]
                self.assertIsNone(choice["finish_reason"])
                if event["object"] == "chat.completion.chunk":
                    self.assertEqual(choice["delta"], {"role": "assistant", "content": None})
                else:
                    self.assertEqual(choice["text"], "")
                progress.append(event["prompt_progress"])
            elif event.get("choices") and (event["choices"][0].get("delta", {}).get("content")
                                           or event["choices"][0].get("text")):
                first_text = index if first_text is None else first_text
        return progress

    def prefill_lines(self, request_id):
        return re.findall(rf"^{TIME} vlm: info: serve: request {re.escape(request_id)}: prefill (\d+)/(\d+) prompt tokens",
                          self.server.stderr(), re.M)

    def check_stream(self, path, body, request_id):
        status, _, data = self.server.request("POST", path, body, headers={"X-Request-ID": request_id})
        self.assertEqual(status, 200, data)
        events = harness.parse_sse(data)
        progress = self.progress_of(events)
        usage = next(event["usage"] for event in events if isinstance(event, dict) and event.get("usage"))
        total = usage["prompt_tokens"]
        self.assertGreater(total, 3 * CHUNK)
        self.assertTrue(progress)
        # A reader that falls behind gets the latest only; the last is the whole prompt.
        self.assertEqual(progress[-1]["processed"], total)
        self.assertEqual([p["total"] for p in progress], [total] * len(progress))
        processed = [p["processed"] for p in progress]
        self.assertEqual(processed, sorted(processed))
        self.assertEqual([p["cache"] for p in progress], [0] * len(progress))
        times = [p["time_ms"] for p in progress]
        self.assertEqual(times, sorted(times))
        # The log has every chunk: the slot's start, then one per 16 rows.
        lines = self.prefill_lines(request_id)
        self.assertEqual([int(done) for done, _ in lines],
                         [0] + [min(total, CHUNK * (i + 1)) for i in range(-(-total // CHUNK))])
        self.assertEqual({int(of) for _, of in lines}, {total})
        # The finish chunk's timings, llama-server's fields and vlm's own.
        finish = [event for event in events if isinstance(event, dict) and event.get("choices")
                  and event["choices"][0].get("finish_reason")]
        self.assertEqual(len(finish), 1)
        timings = finish[0]["timings"]
        self.assertEqual(timings["predicted_n"], usage["completion_tokens"])
        self.assertEqual(timings["prompt_n"] + timings["cache_n"], total)
        for key in ("prompt_ms", "prompt_per_token_ms", "prompt_per_second", "predicted_ms", "predicted_per_token_ms",
                    "predicted_per_second", "queue_ms", "encode_ms", "first_token_ms"):
            self.assertGreaterEqual(timings[key], 0, key)
        self.assertGreater(timings["first_token_ms"], 0)
        return events

    def test_chat_stream_with_return_progress(self):
        body = base.chat_body(long_prompt(), 4, stream=True, return_progress=True,
                              stream_options={"include_usage": True})
        self.check_stream("/v1/chat/completions", body, "progress-chat")

    def test_completions_stream_with_return_progress(self):
        body = {"prompt": long_prompt(), "max_tokens": 4, "temperature": 0, "stream": True, "return_progress": True,
                "stream_options": {"include_usage": True}}
        self.check_stream("/v1/completions", body, "progress-completions")

    def test_the_openai_client_reads_it_and_the_text_is_unchanged(self):
        messages = [{"role": "user", "content": long_prompt(80)}]
        plain = self.client.chat.completions.create(model="qwen2", messages=messages, max_tokens=8, temperature=0)
        stream = self.client.chat.completions.create(model="qwen2", messages=messages, max_tokens=8, temperature=0,
                                                     stream=True, extra_body={"return_progress": True})
        text, progress = "", []
        for chunk in stream:
            extra = chunk.model_extra or {}
            if "prompt_progress" in extra:
                progress.append(extra["prompt_progress"])
            if chunk.choices and chunk.choices[0].delta.content:
                text += chunk.choices[0].delta.content
        self.assertEqual(text, plain.choices[0].message.content)
        self.assertTrue(progress)
        self.assertEqual(progress[-1]["processed"], plain.usage.prompt_tokens)
        # Not asked for: no progress chunk.
        stream = self.client.chat.completions.create(model="qwen2", messages=messages, max_tokens=2, temperature=0,
                                                     stream=True)
        self.assertFalse(any("prompt_progress" in (chunk.model_extra or {}) for chunk in stream))

    def test_whole_answers_carry_timings(self):
        status, body = self.server.post_json("/v1/chat/completions", base.chat_body("Hello", 5))
        self.assertEqual(status, 200, body)
        self.assertEqual(body["timings"]["predicted_n"], body["usage"]["completion_tokens"])
        self.assertEqual(body["timings"]["prompt_n"] + body["timings"]["cache_n"], body["usage"]["prompt_tokens"])

    def test_return_progress_without_a_stream_is_refused_and_logged(self):
        status, _, data = self.server.request("POST", "/v1/chat/completions",
                                              base.chat_body("Hi", 2, return_progress=True),
                                              headers={"X-Request-ID": "no-stream-1"})
        body = json.loads(data)
        self.assert_error(status, body, 400, param="return_progress", fragment="only allowed when stream is true")
        line = (rf"^{TIME} vlm: info: serve: request no-stream-1: 400 invalid_request_error param=return_progress: "
                rf"Invalid value for 'return_progress': is only allowed when stream is true$")
        self.wait_for_line(line)

    def wait_for_line(self, pattern):
        import time
        deadline = time.monotonic() + 10
        while not re.search(pattern, self.server.stderr(), re.M):
            self.assertLess(time.monotonic(), deadline, f"{pattern} not in:\n{self.server.stderr()[-3000:]}")
            time.sleep(0.05)

    def test_every_4xx_is_logged_with_its_reason(self):
        cases = [
            ("unknown-field-1", base.chat_body("Hi", 2, frobnicate=1), 400,
             r"400 invalid_request_error param=frobnicate: Unrecognized request argument supplied: frobnicate"),
            ("wrong-model-1", dict(base.chat_body("Hi", 2), model="gpt-5"), 404,
             r"404 model_not_found param=model: The model 'gpt-5' does not exist; this server serves 'qwen2'\."),
            ("too-long-1", base.chat_body("Hi", 10 ** 6), 400, r"400 context_length_exceeded param=messages: "),
        ]
        for request_id, body, expected, reason in cases:
            status, _, _ = self.server.request("POST", "/v1/chat/completions", body, headers={"X-Request-ID": request_id})
            self.assertEqual(status, expected, request_id)
            self.wait_for_line(rf"^{TIME} vlm: info: serve: request {request_id}: {reason}")
        # A client's control characters cannot forge a line.
        status, _, _ = self.server.request("POST", "/v1/chat/completions",
                                           dict(base.chat_body("Hi", 2), model="a\nvlm: info: forged"),
                                           headers={"X-Request-ID": "forge-1"})
        self.assertEqual(status, 404)
        self.wait_for_line(r"request forge-1: 404 model_not_found param=model: The model 'a\\x0avlm: info: forged'")
        self.assertNotRegex(self.server.stderr(), r"(?m)^vlm: info: forged")

    def test_loading_said_what_it_holds(self):
        log = self.server.stderr()
        for pattern in (
                rf"^{TIME} vlm: info: model \S+qwen2: qwen2, 26 tensors in 1 file\(s\), 1\.4 MiB of weights mapped",
                rf"^{TIME} vlm: info: cpu backend: packing the text decoder's linear weights$",
                rf"^{TIME} vlm: info: cpu backend: packed 15 linear weights, 1\.4 MiB, in [0-9.]+ s$",
                rf"^{TIME} vlm: info: engine: 2 slot\(s\) x 4096 positions, KV cache 8\.0 MiB on cpu; prefill chunks "
                rf"of {CHUNK} rows \({CHUNK} while others stream\), queue 64$",
                rf"^{TIME} vlm: info: engine: the context is 4096 positions per slot, below the model's 32768 "
                rf"\(max_position_embeddings\): the default is at most 4096; vlm serve --ctx \(vlm run --context\) sets it$"):
            self.assertRegex(log, re.compile(pattern, re.M))
        for line in log.splitlines():
            if not PLAIN.match(line):
                self.assertRegex(line, rf"^{TIME} vlm: (debug|info|warning|error): ")


class JsonLogTests(base.ServerTestCase):
    arguments = ("--parallel", "1")

    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server(base.VLM, os.path.join(base.MODELS, cls.model), *cls.arguments,
                                    env=dict(os.environ, VLM_LOG="info", VLM_LOG_FORMAT="json"))
        cls.client = base.client_for(cls.server)

    def test_every_line_is_an_object(self):
        self.client.chat.completions.create(model="qwen2", messages=[{"role": "user", "content": "Hi"}],
                                            max_tokens=2, extra_headers={"X-Request-ID": "json-1"})
        status, _, _ = self.server.request("GET", "/nowhere", None, headers={"X-Request-ID": "json-404"})
        self.assertEqual(status, 404)
        status = self.server.stop()
        self.assertEqual(status, 0)
        records = [json.loads(line) for line in self.server.stderr().splitlines()]
        for record in records:
            self.assertEqual(set(record), {"time", "level", "message"}, record)
            self.assertRegex(record["time"], rf"^{TIME}$")
        messages = [record["message"] for record in records]
        self.assertTrue(any(m.startswith("listening on http://") for m in messages))
        self.assertTrue(any(m.startswith("serve: access request_id=json-1 ") for m in messages))
        self.assertTrue(any(m.startswith("serve: request json-1: prefill ") for m in messages))
        self.assertTrue(any(m.startswith("serve: request json-404: 404 unknown_url: Unknown request URL") for m in messages))
        self.assertEqual(messages[-1], "vlm: stopped")

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.server.stop()


class RunTests(unittest.TestCase):
    """`vlm run` at info level: the load and a line per prefill chunk."""

    def test_run_logs_the_load_and_each_chunk(self):
        model = os.path.join(base.MODELS, "qwen2")
        result = subprocess.run([base.VLM, "--log-level", "info", "run", "--model", model, "--prompt", long_prompt(),
                                 "--max-tokens", "2", "--prefill-chunk", str(CHUNK), "--context", "1024"],
                                capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = re.findall(rf"^{TIME} vlm: info: prefill: (\d+)/(\d+) prompt tokens \((\d+)%\), [0-9.]+ s",
                           result.stderr, re.M)
        total = int(lines[-1][1])
        self.assertEqual([int(done) for done, _, _ in lines],
                         [0] + [min(total, CHUNK * (i + 1)) for i in range(-(-total // CHUNK))])
        self.assertEqual(lines[-1][2], "100")
        self.assertRegex(result.stderr, rf"(?m)^{TIME} vlm: info: engine: 1 slot\(s\) x 1024 positions, KV cache 1\.0 MiB")
        self.assertRegex(result.stderr, r"below the model's 32768 \(max_position_embeddings\); vlm serve --ctx")
        # At the default level, nothing.
        quiet = subprocess.run([base.VLM, "run", "--model", model, "--prompt", "Hi", "--max-tokens", "2"],
                               capture_output=True, text=True, timeout=120)
        self.assertEqual((quiet.returncode, quiet.stderr), (0, ""))
        # The final error of the CLI, in JSON.
        failed = subprocess.run([base.VLM, "--log-format", "json", "run", "--model", "/nonexistent", "--prompt", "x"],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(failed.returncode, 1)
        record = json.loads(failed.stderr)
        self.assertEqual(record["level"], "error")
        self.assertTrue(record["message"].startswith("vlm: error: /nonexistent/config.json: cannot open"))


if __name__ == "__main__":
    unittest.main()
