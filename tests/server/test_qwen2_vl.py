"""Qwen2-VL through `vlm serve`: every oracle golden case of the tiny
Qwen2-VL (tests/goldens/qwen2_vl: real Qwen3 tokenizer, images of different
sizes) streamed with the official OpenAI client must give Transformers'
greedy text and prompt length, and 16 mixed text and image requests at once
on 4 slots (so slots hold different M-RoPE deltas side by side) must each
equal the same request alone; on the cpu backend and on xla (text decoder
and vision tower compiled by IREE).

Run: .venv-server/bin/python tests/server/test_qwen2_vl.py [-v]
Needs ../shared/fixtures (the packed Qwen3 tokenizer and the images); skips
without it, and the xla class without .venv-xla or the xla runtime."""
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import openai  # noqa: E402

SOURCE = os.path.abspath(os.environ.get("VLM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
VLM = os.path.abspath(os.environ.get("VLM_BINARY", os.path.join(SOURCE, "build", "vlm")))
FIXTURES = os.environ.get("VLM_FIXTURES_DIR") or os.path.join(SOURCE, "..", "shared", "fixtures")
XLA_VENV = os.path.join(SOURCE, ".venv-xla", "bin", "iree-compile")
sys.path.insert(0, os.path.join(SOURCE, "tools", "oracle"))
import tokenizer_files  # noqa: E402


def unpacked_model(scratch, family):
    """tests/models/<family> with its tokenizer unpacked against the fixtures."""
    out = os.path.join(scratch, family)
    status = tokenizer_files.unpack(os.path.join(SOURCE, "tests", "models", family), out,
                                    os.path.join(FIXTURES, "tokenizers"))
    if status == tokenizer_files.SKIP:
        raise unittest.SkipTest(f"no-fixtures: the Qwen3 tokenizer patch needs {FIXTURES}/tokenizers")
    if status:
        raise AssertionError(f"unpacking the {family} model failed ({status})")
    return out


def golden_cases(family):
    """(name, manifest) of every case of tests/goldens/<family> with greedy
    tokens, in name order."""
    goldens = os.path.join(SOURCE, "tests", "goldens", family)
    cases = []
    for name in sorted(os.listdir(goldens)):
        with open(os.path.join(goldens, name, "manifest.json"), encoding="utf-8") as handle:
            manifest = json.load(handle)
        if any(stage["name"] == "greedy_tokens" for stage in manifest["stages"]):
            cases.append((name, manifest))
    return cases


def stage(manifest, name):
    return next(s for s in manifest["stages"] if s["name"] == name)


def messages_of(manifest):
    """The case's chat messages with each image part carrying its file as a
    data URL, in order (as a client sends them)."""
    images = iter(manifest.get("images", []))
    messages = []
    for message in manifest["messages"]:
        content = message["content"]
        if isinstance(content, list):
            parts = []
            for part in content:
                if part["type"] == "image":
                    path = os.path.join(FIXTURES, "media", "images", next(images))
                    parts.append({"type": "image_url", "image_url": {"url": harness.data_url(path)}})
                else:
                    parts.append(part)
            content = parts
        messages.append(dict(message, content=content))
    return messages


class Qwen2VLServerTests(unittest.TestCase):
    """The cpu backend, 4 slots. Other Qwen-VL families reuse these tests
    with their own `family` (tests/server/test_qwen2_5_vl.py)."""
    family = "qwen2_vl"
    arguments = ("--parallel", "4", "--ctx", "1024")
    env = None
    start_timeout = 180

    @classmethod
    def setUpClass(cls):
        if not os.path.isdir(os.path.join(FIXTURES, "media", "images")):
            raise unittest.SkipTest(f"no-fixtures: {FIXTURES}/media/images is absent")
        cls.scratch = tempfile.TemporaryDirectory()
        cls.model = unpacked_model(cls.scratch.name, cls.family)
        cls.server = harness.Server(VLM, cls.model, *cls.arguments, env=cls.env, start_timeout=cls.start_timeout)
        cls.client = openai.OpenAI(base_url=cls.server.base_url(), api_key="unused", max_retries=0, timeout=600)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        status = cls.server.stop()
        cls.scratch.cleanup()
        if status != 0:
            raise AssertionError(f"vlm serve exited {status} on SIGTERM:\n{cls.server.stderr()}")

    @classmethod
    def cases(cls):
        """The golden cases these tests stream (a family may leave out those
        another server configuration serves)."""
        return golden_cases(cls.family)

    def stream(self, messages, max_tokens):
        text, finish, usage = "", None, None
        for chunk in self.client.chat.completions.create(model=self.family, messages=messages, max_tokens=max_tokens,
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

    def test_each_golden_case_streams_transformers_text(self):
        for name, manifest in self.cases():
            with self.subTest(case=name):
                greedy = stage(manifest, "greedy_tokens")["tokens"]
                text, finish, usage = self.stream(messages_of(manifest), len(greedy))
                self.assertEqual(text, stage(manifest, "text")["text"])
                self.assertEqual(usage.completion_tokens, len(greedy))
                self.assertEqual(usage.prompt_tokens, stage(manifest, "input_ids")["shape"][-1])
                image_tokens = usage.prompt_tokens_details.model_dump().get("image_tokens", 0)
                self.assertEqual(image_tokens > 0, bool(manifest.get("images")))

    def test_mixed_requests_on_four_slots_equal_each_alone(self):
        cases = self.cases()
        # 16 requests: every case at two lengths, text-only chats between
        # them, so image and text slots (different M-RoPE deltas) run together.
        requests = []
        for i in range(16):
            name, manifest = cases[i % len(cases)]
            requests.append((messages_of(manifest), 6 + 5 * (i % 3)))
        alone = {}
        for messages, max_tokens in requests:
            key = (json.dumps(messages), max_tokens)
            if key not in alone:
                alone[key] = self.stream(messages, max_tokens)[0]
        with concurrent.futures.ThreadPoolExecutor(len(requests)) as pool:
            results = list(pool.map(lambda request: self.stream(*request), requests))
        for (messages, max_tokens), (text, finish, usage) in zip(requests, results):
            self.assertEqual(text, alone[(json.dumps(messages), max_tokens)])
            self.assertEqual(usage.completion_tokens, max_tokens)


class Qwen2VLXlaServerTests(Qwen2VLServerTests):
    """--backend xla: the same on IREE-compiled modules (the vision tower's
    row buckets compile on first use)."""
    arguments = ("--backend", "xla", "--parallel", "4", "--ctx", "1024", "--prefill-chunk", "128")
    start_timeout = 600

    @classmethod
    def setUpClass(cls):
        if not os.path.exists(XLA_VENV):
            raise unittest.SkipTest("no-venv-xla: no .venv-xla (tools/xla/requirements.txt)")
        probe = subprocess.run([VLM, "run", "--backend", "xla", "--model", "/nonexistent", "--prompt", "x"],
                               capture_output=True, text=True)
        if "built without the xla runtime" in probe.stderr:
            raise unittest.SkipTest("no-xla-runtime: vlm was built without the xla runtime")
        cls.cache = tempfile.TemporaryDirectory()
        cls.env = dict(os.environ, VLM_XLA_CACHE=cls.cache.name)
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.cache.cleanup()

    def test_models_report_images(self):
        entry = self.client.models.list().data[0].model_dump()
        self.assertEqual(entry["capabilities"]["backend"], "xla")
        self.assertEqual(entry["capabilities"]["modalities"]["input"], ["text", "image"])


if __name__ == "__main__":
    unittest.main()
