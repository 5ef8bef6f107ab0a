"""Phi-4-multimodal through `vlm serve` (cpu): every base-model oracle
golden case of tests/goldens/phi4_multimodal streamed with the official
OpenAI client gives Transformers' greedy text and prompt length, with
prefill chunks of 16 rows so the 53-token prompt past the LongRoPE switch
is prefilled in chunks that each end below it, and the generation that
crosses the switch reproduces Transformers' cache reset; 12 such requests
at once on 4 slots each equal the request alone; the speech cases sent as
input_audio parts (base64, as the OpenAI client sends them; the speech
adapter, the audio encoder, the placeholder the string template gets)
stream Transformers' text, and text and audio requests mixed on 4 slots
each equal the request alone. The same on xla (the decoder compiled by IREE,
adapters and both LongRoPE factor sets in the module).

The image cases (Phi4MultimodalImageServerTests, cpu): sent as image_url
parts and the case's text, streamed and not, they give Transformers'
greedy text, prompt length and image tokens (the chat template prints
content as a string: the message reaches it as vLLM's string content
format makes it, and the oracle's text already holds the placeholders);
a placeholder the text lacks goes on a line before it (the same reply as
the text with it there), one too many is a 400; and image requests (the
vision adapter) interleaved with text-only ones (no adapter), 12 at once
on 4 slots, each equal the request alone. The image + speech case sent as
image_url and input_audio parts (the vision adapter, the clip through the
vision+speech projection) gives Transformers' text, streamed and not, and
its image and audio token counts; and all three adapter modes at once:
text-only, image, audio-only (the speech adapter) and image + speech
requests interleaved, 16 at once on 4 slots, each equal the request alone
and Transformers'. The image + speech cases include image_speech_bf16:
Transformers ran it in bfloat16 (towers, projections, adapter and decoder),
vlm computes in float32 and gives the same greedy text. The same on xla
(the vision encoder compiled per crop-count bucket).

Run: .venv-server/bin/python tests/server/test_phi4_multimodal.py [-v]
Needs ../shared/fixtures (the packed Qwen3 tokenizer); skips without it."""
import concurrent.futures
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import openai  # noqa: E402
import subprocess  # noqa: E402
from test_qwen2_vl import FIXTURES, VLM, XLA_VENV, golden_cases, stage, unpacked_model  # noqa: E402

FAMILY = "phi4_multimodal"


def base_cases():
    return [(name, manifest) for name, manifest in golden_cases(FAMILY) if not manifest.get("adapter")]


def speech_cases():
    """The audio-only cases of one fixture file (long_speech is a
    concatenation; image_speech has an image too)."""
    return [(name, manifest) for name, manifest in golden_cases(FAMILY)
            if len(manifest.get("audio", [])) == 1 and isinstance(manifest["audio"][0], str)
            and not manifest.get("images")]


def audio_part(name):
    """A clip as the OpenAI client sends it: an input_audio part, base64."""
    import base64
    with open(os.path.join(FIXTURES, "media", "audio", name), "rb") as handle:
        data = base64.b64encode(handle.read()).decode()
    return {"type": "input_audio", "input_audio": {"data": data, "format": name.rsplit(".", 1)[1]}}


def speech_messages(manifest):
    """The case's message as a client sends it: the clip as an input_audio
    part, then the text (the golden's content is what the template gets:
    the placeholder line, then the text)."""
    text = manifest["messages"][0]["content"].split("\n", 1)[1]
    return [{"role": "user", "content": [audio_part(manifest["audio"][0]), {"type": "text", "text": text}]}]


class Phi4MultimodalServerTests(unittest.TestCase):
    arguments = ("--parallel", "4", "--ctx", "128", "--prefill-chunk", "16")
    env = None
    start_timeout = 180

    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.TemporaryDirectory()
        cls.model = unpacked_model(cls.scratch.name, FAMILY)
        cls.server = harness.Server(VLM, cls.model, *cls.arguments, env=cls.env, start_timeout=cls.start_timeout)
        cls.client = openai.OpenAI(base_url=cls.server.base_url(), api_key="unused", max_retries=0, timeout=600)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        status = cls.server.stop()
        cls.scratch.cleanup()
        if status != 0:
            raise AssertionError(f"vlm serve exited {status} on SIGTERM:\n{cls.server.stderr()}")

    def stream(self, messages, max_tokens):
        text, usage = "", None
        for chunk in self.client.chat.completions.create(model=FAMILY, messages=messages, max_tokens=max_tokens,
                                                         temperature=0, stream=True,
                                                         stream_options={"include_usage": True}):
            if chunk.choices:
                text += chunk.choices[0].delta.content or ""
            if chunk.usage:
                usage = chunk.usage
        return text, usage

    def test_each_base_golden_case_streams_transformers_text(self):
        cases = base_cases()
        self.assertEqual(sorted(name for name, _ in cases), ["crossing", "long_prompt", "text_only"])
        for name, manifest in cases:
            with self.subTest(case=name):
                greedy = stage(manifest, "greedy_tokens")["tokens"]
                text, usage = self.stream(manifest["messages"], len(greedy))
                self.assertEqual(text, stage(manifest, "text")["text"])
                self.assertEqual(usage.completion_tokens, len(greedy))
                self.assertEqual(usage.prompt_tokens, stage(manifest, "input_ids")["shape"][-1])

    def test_requests_on_four_slots_equal_each_alone(self):
        cases = base_cases()
        requests = [(cases[i % len(cases)][1]["messages"], 8 + 9 * (i % 3)) for i in range(12)]
        alone = {}
        for messages, max_tokens in requests:
            key = (json.dumps(messages), max_tokens)
            if key not in alone:
                alone[key] = self.stream(messages, max_tokens)[0]
        with concurrent.futures.ThreadPoolExecutor(len(requests)) as pool:
            results = list(pool.map(lambda request: self.stream(*request), requests))
        for (messages, max_tokens), (text, usage) in zip(requests, results):
            self.assertEqual(text, alone[(json.dumps(messages), max_tokens)])
            self.assertEqual(usage.completion_tokens, max_tokens)

    def test_speech_cases_stream_transformers_text(self):
        cases = speech_cases()
        self.assertEqual(sorted(name for name, _ in cases), ["speech", "speech_describe"])
        for name, manifest in cases:
            with self.subTest(case=name):
                greedy = stage(manifest, "greedy_tokens")["tokens"]
                text, usage = self.stream(speech_messages(manifest), len(greedy))
                self.assertEqual(text, stage(manifest, "text")["text"])
                self.assertEqual(usage.prompt_tokens, stage(manifest, "input_ids")["shape"][-1])
                # audio_embed_sizes: the projector's rows
                self.assertEqual(usage.prompt_tokens_details.audio_tokens,
                                 stage(manifest, "audio_projector")["shape"][0])

    def test_text_and_audio_on_four_slots_equal_each_alone(self):
        text_cases, audio_cases = base_cases(), speech_cases()
        requests = []
        for i in range(8):
            messages = (audio_cases[i // 2 % len(audio_cases)][1] if i % 2 else text_cases[i // 2 % len(text_cases)][1])
            requests.append((speech_messages(messages) if i % 2 else messages["messages"], 6 + 5 * (i % 3)))
        alone = {}
        for messages, max_tokens in requests:
            key = (json.dumps(messages), max_tokens)
            if key not in alone:
                alone[key] = self.stream(messages, max_tokens)[0]
        with concurrent.futures.ThreadPoolExecutor(len(requests)) as pool:
            results = list(pool.map(lambda request: self.stream(*request), requests))
        for (messages, max_tokens), (text, usage) in zip(requests, results):
            self.assertEqual(text, alone[(json.dumps(messages), max_tokens)])
            self.assertEqual(usage.completion_tokens, max_tokens)


def image_cases():
    return [(name, manifest) for name, manifest in golden_cases(FAMILY)
            if manifest.get("images") and not manifest.get("audio")]


def image_speech_cases():
    return [(name, manifest) for name, manifest in golden_cases(FAMILY)
            if manifest.get("images") and manifest.get("audio")]


def image_parts(names):
    return [{"type": "image_url", "image_url": {"url": harness.data_url(os.path.join(FIXTURES, "media", "images",
                                                                                       name))}} for name in names]


def image_messages(manifest):
    """The case as a client sends it: its images as image_url parts, then
    its text, which holds the placeholders where the oracle wrote them (a
    string template gets the parts as vLLM's string content format makes
    them: the text as it is, no placeholder missing)."""
    message = manifest["messages"][0]
    return [{"role": "user", "content": image_parts(manifest["images"]) + [{"type": "text",
                                                                            "text": message["content"]}]}]


def image_speech_messages(manifest):
    """An image + speech case as a client sends it: image_url parts, the
    clip as an input_audio part, then the text without the placeholder
    lines the golden's content leads with (the string content format puts
    them back: the images', then the clip's, one a line)."""
    text = manifest["messages"][0]["content"]
    for _ in manifest["images"] + manifest["audio"]:
        placeholder, text = text.split("\n", 1)
        assert placeholder in ("<|endoftext10|>", "<|endoftext11|>"), placeholder
    return [{"role": "user", "content": image_parts(manifest["images"]) + [audio_part(name) for name in
                                                                           manifest["audio"]]
             + [{"type": "text", "text": text}]}]


class Phi4MultimodalImageServerTests(unittest.TestCase):
    # No caches: every request encodes its images and prefills its whole
    # prompt, batched or alone.
    arguments = ("--parallel", "4", "--ctx", "2048", "--prefill-chunk", "64", "--prefix-cache-mb", "0",
                 "--encoder-cache-mb", "0")
    env = None
    start_timeout = 180

    @classmethod
    def setUpClass(cls):
        if not os.path.isdir(os.path.join(FIXTURES, "media", "images")):
            raise unittest.SkipTest(f"no-fixtures: {FIXTURES}/media/images is absent")
        cls.scratch = tempfile.TemporaryDirectory()
        cls.model = unpacked_model(cls.scratch.name, FAMILY)
        cls.server = harness.Server(VLM, cls.model, *cls.arguments, env=cls.env, start_timeout=cls.start_timeout)
        cls.client = openai.OpenAI(base_url=cls.server.base_url(), api_key="unused", max_retries=0, timeout=600)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        status = cls.server.stop()
        cls.scratch.cleanup()
        if status != 0:
            raise AssertionError(f"vlm serve exited {status} on SIGTERM:\n{cls.server.stderr()}")

    stream = Phi4MultimodalServerTests.stream

    def complete(self, messages, max_tokens):
        response = self.client.chat.completions.create(model=FAMILY, messages=messages, max_tokens=max_tokens,
                                                       temperature=0)
        return response.choices[0].message.content, response.usage

    def check_case(self, manifest, text, usage):
        greedy = stage(manifest, "greedy_tokens")["tokens"]
        self.assertEqual(text, stage(manifest, "text")["text"])
        self.assertEqual(usage.completion_tokens, len(greedy))
        self.assertEqual(usage.prompt_tokens, stage(manifest, "input_ids")["shape"][-1])
        # the projector's rows: every image token takes a feature row
        self.assertEqual(usage.prompt_tokens_details.model_dump().get("image_tokens"),
                         stage(manifest, "projector")["shape"][0])

    def test_image_cases_give_transformers_text_streamed_and_not(self):
        cases = image_cases()
        self.assertEqual(sorted(name for name, _ in cases), ["hd_crops", "one_image", "two_images", "unpadded_image"])
        for name, manifest in cases:
            greedy = stage(manifest, "greedy_tokens")["tokens"]
            with self.subTest(case=name, stream=True):
                self.check_case(manifest, *self.stream(image_messages(manifest), len(greedy)))
            with self.subTest(case=name, stream=False):
                self.check_case(manifest, *self.complete(image_messages(manifest), len(greedy)))

    def test_encoder_cache_keeps_the_towers_modes_apart(self):
        # palette_color.png beside a padded gif (a bidirectional tower), then
        # alone (causal, as Transformers' sdpa runs it), then beside it again,
        # on a server whose encoder cache is on: the item's digest covers
        # the request's padding, so neither request gets the other's features.
        cases = dict(image_cases())
        arguments = list(self.arguments)
        at = arguments.index("--encoder-cache-mb")
        del arguments[at:at + 2]  # the default budget
        server = harness.Server(VLM, self.model, *arguments, env=self.env, start_timeout=self.start_timeout)
        try:
            client = openai.OpenAI(base_url=server.base_url(), api_key="unused", max_retries=0, timeout=600)
            for name in ("two_images", "unpadded_image", "two_images"):
                manifest = cases[name]
                greedy = stage(manifest, "greedy_tokens")["tokens"]
                with self.subTest(case=name):
                    response = client.chat.completions.create(model=FAMILY, messages=image_messages(manifest),
                                                              max_tokens=len(greedy), temperature=0)
                    self.check_case(manifest, response.choices[0].message.content, response.usage)
            client.close()
        finally:
            status = server.stop()
        self.assertEqual(status, 0, server.stderr())

    def test_image_speech_case_gives_transformers_text_streamed_and_not(self):
        # image_url and input_audio parts at once: the vision adapter, the
        # clip through the vision+speech projection; the bf16 golden too.
        cases = image_speech_cases()
        self.assertEqual(sorted(name for name, _ in cases), ["image_speech", "image_speech_bf16"])
        for name, manifest in cases:
            greedy = stage(manifest, "greedy_tokens")["tokens"]
            for streamed in (True, False):
                with self.subTest(case=name, stream=streamed):
                    text, usage = (self.stream if streamed else self.complete)(image_speech_messages(manifest),
                                                                               len(greedy))
                    self.check_case(manifest, text, usage)
                    self.assertEqual(usage.prompt_tokens_details.audio_tokens,
                                     stage(manifest, "audio_projector_vision_speech")["shape"][0])

    def test_three_adapter_modes_on_four_slots_equal_each_alone(self):
        # Text only (no adapter), image (vision adapter), audio only (speech
        # adapter) and image + speech (vision adapter, vision+speech
        # projection) interleaved, 16 at once on 4 slots: every slot holds
        # each mode at some point, next to each other mode.
        modes = [(base_cases(), lambda manifest: manifest["messages"]), (image_cases(), image_messages),
                 (speech_cases(), speech_messages), (image_speech_cases(), image_speech_messages)]
        cases, requests = [], []
        for i in range(16):
            mode_cases, messages = modes[i % 4]
            cases.append(mode_cases[i // 4 % len(mode_cases)][1])
            requests.append((messages(cases[-1]), 5 + 3 * (i % 3)))
        alone = {}
        for messages, max_tokens in requests:
            key = (json.dumps(messages), max_tokens)
            if key not in alone:
                alone[key] = self.stream(messages, max_tokens)[0]
        with concurrent.futures.ThreadPoolExecutor(len(requests)) as pool:
            results = list(pool.map(lambda request: self.stream(*request), requests))
        for (messages, max_tokens), (text, usage) in zip(requests, results):
            self.assertEqual(text, alone[(json.dumps(messages), max_tokens)])
            self.assertEqual(usage.completion_tokens, max_tokens)
        # and each is Transformers' (a prefix of its golden's text)
        for i, (manifest, (text, _)) in enumerate(zip(cases, results)):
            self.assertTrue(stage(manifest, "text")["text"].startswith(text), f"request {i}: {text!r}")

    def test_a_placeholder_the_text_lacks_goes_before_it(self):
        images = image_parts(["palette_color.png", "no_time_for_that_tiny.gif"])
        lacking = [{"role": "user", "content": images + [{"type": "text", "text": "Compare them."}]}]
        written = [{"role": "user", "content": images + [
            {"type": "text", "text": "<|endoftext10|>\n<|endoftext10|>\nCompare them."}]}]
        text, usage = self.complete(lacking, 8)
        written_text, written_usage = self.complete(written, 8)
        self.assertEqual(text, written_text)
        self.assertEqual(usage.prompt_tokens, written_usage.prompt_tokens)
        # The oracle's two_images text has no newlines: another prompt.
        two = dict(image_cases())["two_images"]
        self.assertEqual(usage.prompt_tokens, stage(two, "input_ids")["shape"][-1] + 2)
        with self.assertRaises(openai.BadRequestError) as caught:
            self.complete([{"role": "user", "content": images[:1] + [
                {"type": "text", "text": "<|endoftext10|><|endoftext10|>Compare them."}]}], 4)
        self.assertIn("Found more '<|endoftext10|>' placeholders", str(caught.exception))

    def test_image_and_text_requests_on_four_slots_equal_each_alone(self):
        # Image requests (the vision adapter) between text-only ones (no
        # adapter): every slot mix of adapters, prompts of 15 to 1138 rows.
        images, texts = image_cases(), base_cases()
        requests = []
        for i in range(12):
            if i % 2:
                requests.append((image_messages(images[i // 2 % len(images)][1]), 6 + 5 * (i % 3)))
            else:
                requests.append((texts[i // 2 % len(texts)][1]["messages"], 6 + 5 * (i % 3)))
        alone = {}
        for messages, max_tokens in requests:
            key = (json.dumps(messages), max_tokens)
            if key not in alone:
                alone[key] = self.stream(messages, max_tokens)[0]
        with concurrent.futures.ThreadPoolExecutor(len(requests)) as pool:
            results = list(pool.map(lambda request: self.stream(*request), requests))
        for (messages, max_tokens), (text, usage) in zip(requests, results):
            self.assertEqual(text, alone[(json.dumps(messages), max_tokens)])
            self.assertEqual(usage.completion_tokens, max_tokens)
        # and the image requests alone are Transformers' (a prefix of the golden text)
        for i in range(1, 12, 2):
            manifest = images[i // 2 % len(images)][1]
            self.assertTrue(stage(manifest, "text")["text"].startswith(results[i][0]))


class Phi4MultimodalPrefixCacheTests(unittest.TestCase):
    """The prefix cache keeps KV computed with one LongRoPE factor set away
    from a prompt that takes the other: a short prompt's KV (short
    factors) is no prefix of a longer prompt past the switch (long factors
    on every prompt row), though the tokens match; a repeat of the short
    prompt still hits. Outputs equal a server without the cache."""

    SHORT = [{"role": "user", "content": "Describe the rain falling on a quiet town at night, the wet streets "
                                         "and the lamps."}]
    LONG = [{"role": "user", "content": SHORT[0]["content"] + " Then write a long poem about the sea, the wind, "
                                        "the stars above the harbour and the fishing boats coming home at night."}]

    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.TemporaryDirectory()
        cls.model = unpacked_model(cls.scratch.name, FAMILY)
        arguments = ("--parallel", "1", "--ctx", "128", "--prefill-chunk", "16")
        cls.cached = harness.Server(VLM, cls.model, *arguments)
        cls.plain = harness.Server(VLM, cls.model, *arguments, "--prefix-cache-mb", "0")

    @classmethod
    def tearDownClass(cls):
        statuses = [cls.cached.stop(), cls.plain.stop()]
        cls.scratch.cleanup()
        if statuses != [0, 0]:
            raise AssertionError(f"vlm serve exited {statuses} on SIGTERM")

    @staticmethod
    def complete(server, messages, max_tokens):
        with openai.OpenAI(base_url=server.base_url(), api_key="unused", max_retries=0, timeout=600) as client:
            response = client.chat.completions.create(model=FAMILY, messages=messages, max_tokens=max_tokens,
                                                      temperature=0)
        return response.choices[0].message.content, response.usage

    def test_factor_sets_do_not_share_kv(self):
        text, usage = self.complete(self.cached, self.SHORT, 8)
        self.assertLessEqual(usage.prompt_tokens + 8, 40, "the short prompt and its reply stay below the switch")
        self.assertEqual(text, self.complete(self.plain, self.SHORT, 8)[0])
        again, usage = self.complete(self.cached, self.SHORT, 4)
        self.assertEqual(usage.prompt_tokens_details.cached_tokens, 16)
        self.assertEqual(again, self.complete(self.plain, self.SHORT, 4)[0])
        text, usage = self.complete(self.cached, self.LONG, 8)
        self.assertGreater(usage.prompt_tokens, 40)
        self.assertEqual(usage.prompt_tokens_details.cached_tokens, 0)
        self.assertEqual(text, self.complete(self.plain, self.LONG, 8)[0])


class XlaServer:
    """Runs a server class's tests with --backend xla, in a fresh artifact
    cache (skipped without .venv-xla or the xla runtime)."""
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


class Phi4MultimodalXlaServerTests(XlaServer, Phi4MultimodalServerTests):
    """--backend xla: the same on the IREE-compiled decoder."""
    arguments = ("--backend", "xla", "--parallel", "4", "--ctx", "128", "--prefill-chunk", "16")


class Phi4MultimodalImageXlaServerTests(XlaServer, Phi4MultimodalImageServerTests):
    """--backend xla: the image cases on the IREE-compiled vision encoder
    (a module per crop-count bucket) and decoder."""
    arguments = ("--backend", "xla", "--parallel", "4", "--ctx", "2048", "--prefill-chunk", "64",
                 "--encoder-cache-mb", "0")


if __name__ == "__main__":
    unittest.main()
