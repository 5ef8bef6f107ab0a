"""The prefix and encoder caches through `vlm serve` (cpu backend): a
two-turn image conversation re-encodes nothing and prefills only the new
turn, counted by /metrics and reported as usage.prompt_tokens_details.
cached_tokens (chat, streamed and not, and completions), on the tiny LLaVA,
the tiny Qwen2-VL (3-axis M-RoPE positions in the key) and the tiny Gemma 3
(bidirectional image blocks, prefill chunks stretched over them; a reused
prefix never ends inside an image's block); 32 mixed text
and image requests with shared prefixes on 4 slots give each exactly what a
server without caches gives; and small budgets are never exceeded while
evicting.

Run: .venv-server/bin/python tests/server/test_cache.py [-v]
Needs ../shared/fixtures (images; the Qwen3 tokenizer for Qwen2-VL, the Gemma 3 one for Gemma 3)."""
import concurrent.futures
import os
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import openai  # noqa: E402
import test_qwen2_vl  # noqa: E402

SOURCE = os.path.abspath(os.environ.get("VLM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
VLM = os.path.abspath(os.environ.get("VLM_BINARY", os.path.join(SOURCE, "build", "vlm")))
MODELS = os.path.join(SOURCE, "tests", "models")
IMAGES = os.path.join(os.environ.get("VLM_FIXTURES_DIR") or os.path.join(SOURCE, "..", "shared", "fixtures"),
                      "media", "images")
# Under ASan (tests/server/run_tests.sh) the load is smaller.
LOAD_REQUESTS = int(os.environ.get("VLM_SERVER_TEST_REQUESTS", "32"))
BLOCK = 16  # positions per prefix cache block


def fixture(name):
    path = os.path.join(IMAGES, name)
    if not os.path.exists(path):
        raise unittest.SkipTest(f"no-fixtures: {path} is absent (../shared/fixtures missing)")
    return path


def image_part(path):
    return {"type": "image_url", "image_url": {"url": harness.data_url(path)}}


def client_for(server):
    return openai.OpenAI(base_url=server.base_url(), api_key="unused", max_retries=0, timeout=600)


def chat(client, model, messages, max_tokens, stream=False):
    """(text, usage) of a greedy chat completion."""
    if not stream:
        response = client.chat.completions.create(model=model, messages=messages, max_tokens=max_tokens,
                                                  temperature=0)
        return response.choices[0].message.content, response.usage
    text, usage = "", None
    for chunk in client.chat.completions.create(model=model, messages=messages, max_tokens=max_tokens,
                                                temperature=0, stream=True,
                                                stream_options={"include_usage": True}):
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
        if chunk.usage:
            usage = chunk.usage
    return text, usage


def cached_tokens(usage):
    return usage.prompt_tokens_details.cached_tokens


class TwoTurnCase:
    """Mixed into a TestCase with `server`, `client`, `model_name`, `image`."""

    def metrics(self):
        return self.server.metrics()

    @staticmethod
    def encodes(metrics):
        """Items encoded or served by the encoder cache."""
        return metrics["vlm_media_items_encoded_total"] + metrics["vlm_encoder_cache_hits_total"]

    def test_second_turn_reencodes_nothing_and_prefills_only_the_new_turn(self):
        image = fixture(self.image)
        # A system prompt of its own: nothing of this conversation is cached
        # yet (the image's features may be, from another test).
        turn1 = [{"role": "system", "content": "You are the two-turn test."},
                 {"role": "user", "content": [image_part(image), {"type": "text", "text": "What is in it?"}]}]
        before = self.metrics()
        reply, usage1 = chat(self.client, self.model_name, turn1, 8)
        self.assertLess(cached_tokens(usage1), BLOCK * 2)
        middle = self.server.wait_idle()
        self.assertEqual(self.encodes(middle) - self.encodes(before), 1)
        turn2 = turn1 + [{"role": "assistant", "content": reply},
                         {"role": "user", "content": [{"type": "text", "text": "And what else?"}]}]
        text2, usage2 = chat(self.client, self.model_name, turn2, 8, stream=True)
        after = self.server.wait_idle()
        # The image is inside the reused prefix: not encoded again, not even
        # looked up in the encoder cache.
        self.assertEqual(after["vlm_media_items_encoded_total"], middle["vlm_media_items_encoded_total"])
        self.assertEqual(after["vlm_encoder_cache_hits_total"], middle["vlm_encoder_cache_hits_total"])
        cached = cached_tokens(usage2)
        self.assertEqual(after["vlm_prefix_cache_hits_total"] - middle["vlm_prefix_cache_hits_total"], cached)
        self.assertEqual(after["vlm_prefix_cache_queries_total"] - middle["vlm_prefix_cache_queries_total"],
                         usage2.prompt_tokens)
        hits = 'vlm_prefix_cache_requests_total{result="hit"}'
        self.assertEqual(after[hits] - middle[hits], 1)
        # All of turn 1's prompt but its last partial block is reused; what is
        # prefilled is the new turn (the reply, the new question) and that tail.
        self.assertGreaterEqual(cached, (usage1.prompt_tokens // BLOCK) * BLOCK - BLOCK)
        self.assertGreaterEqual(cached, usage1.prompt_tokens_details.image_tokens)
        self.assertLessEqual(usage2.prompt_tokens - cached, usage2.prompt_tokens - usage1.prompt_tokens + BLOCK)
        print(f"\n  {self.model_name}: turn 1 {usage1.prompt_tokens} positions; turn 2 {usage2.prompt_tokens}, "
              f"{cached} from the cache, {usage2.prompt_tokens - cached} prefilled", file=sys.stderr)
        # The same as a server without caches.
        self.assertEqual((reply, text2), (self.reference(turn1, 8), self.reference(turn2, 8, stream=True)))
        # Non-streamed, the same conversation again: all but the last
        # position of the prompt at most comes from the cache.
        text3, usage3 = chat(self.client, self.model_name, turn2, 8)
        self.assertEqual(text3, text2)
        self.assertGreaterEqual(cached_tokens(usage3), cached)
        self.assertLess(cached_tokens(usage3), usage3.prompt_tokens)

    def test_another_image_is_a_miss(self):
        first, second = fixture(self.image), fixture(self.other_image)
        system = {"role": "system", "content": "You are the miss test."}
        question = {"type": "text", "text": "Describe it."}
        chat(self.client, self.model_name, [system, {"role": "user", "content": [image_part(first), question]}], 6)
        middle = self.server.wait_idle()
        # The same text around another image: the text before the image
        # matches, the image's rows do not, so it is encoded (or found in the
        # encoder cache under its own content).
        messages = [system, {"role": "user", "content": [image_part(second), question]}]
        text_b, usage_b = chat(self.client, self.model_name, messages, 6)
        after = self.server.wait_idle()
        self.assertLess(cached_tokens(usage_b), usage_b.prompt_tokens - usage_b.prompt_tokens_details.image_tokens)
        self.assertEqual(self.encodes(after) - self.encodes(middle), 1)
        self.assertEqual(text_b, self.reference(messages, 6))

    def reference(self, messages, max_tokens, stream=False):
        return chat(self.plain_client, self.model_name, messages, max_tokens, stream)[0]


class LlavaCacheTests(TwoTurnCase, unittest.TestCase):
    model_name = "llava"
    image, other_image = "horse.png", "chelsea_q90.jpg"  # both 576 placeholders on LLaVA

    @classmethod
    def setUpClass(cls):
        fixture(cls.image)
        model = os.path.join(MODELS, "llava")
        cls.server = harness.Server(VLM, model, "--parallel", "4", "--ctx", "2048")
        cls.plain = harness.Server(VLM, model, "--parallel", "4", "--ctx", "2048", "--prefix-cache-mb", "0",
                                   "--encoder-cache-mb", "0")
        cls.client, cls.plain_client = client_for(cls.server), client_for(cls.plain)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.plain_client.close()
        statuses = (cls.server.stop(), cls.plain.stop())
        if statuses != (0, 0):
            raise AssertionError(f"vlm serve exited {statuses}:\n{cls.server.stderr()}\n{cls.plain.stderr()}")

    def test_the_plain_server_has_no_caches(self):
        metrics = self.plain.metrics()
        self.assertEqual(metrics["vlm_prefix_cache_budget_bytes"], 0)
        self.assertEqual(metrics["vlm_encoder_cache_budget_bytes"], 0)
        metrics = self.server.metrics()
        self.assertEqual(metrics["vlm_prefix_cache_budget_bytes"], 1024 << 20)
        # 1 KiB of KV a position on the tiny LLaVA, 16 a block, with keys and
        # a header: a little over 17 KiB a block.
        # The labels the Gateway API Inference Extension's endpoint picker
        # reads from vllm:cache_config_info: block_size and num_gpu_blocks.
        info = [key for key in metrics if key.startswith('vlm_cache_config_info{block_size="16",num_gpu_blocks="')]
        self.assertEqual(len(info), 1, metrics.keys())
        self.assertIn(int(info[0].split('num_gpu_blocks="')[1].rstrip('"}')) // 1000, range(58, 62))

    def test_completions_report_cached_tokens(self):
        prompt = "USER: " + "Tell me about the history of the bicycle in three parts. " * 4 + "ASSISTANT:"
        first = self.client.completions.create(model="llava", prompt=prompt, max_tokens=4, temperature=0)
        second = self.client.completions.create(model="llava", prompt=prompt, max_tokens=4, temperature=0)
        self.assertEqual(first.choices[0].text, second.choices[0].text)
        details = second.usage.prompt_tokens_details
        self.assertEqual(details.cached_tokens, ((second.usage.prompt_tokens - 1) // BLOCK) * BLOCK)
        self.assertGreater(details.cached_tokens, 0)

    def test_mixed_requests_equal_the_uncached_server(self):
        """LOAD_REQUESTS requests at once on 4 slots, sharing system prompts,
        images and earlier turns, twice (the second round mostly hits)."""
        images = [fixture("horse.png"), fixture("chelsea_q90.jpg"), fixture("coffee.jpg")]
        systems = ["You are terse.", "You answer in French, always, whatever the question."]
        questions = ["Describe this.", "What color is it?", "Count to five.", "Why?", "Hello there!"]
        cases = []
        for i in range(LOAD_REQUESTS):
            messages = [{"role": "system", "content": systems[i % 2]}]
            content = [{"type": "text", "text": questions[i % 5]}]
            if i % 3 != 2:
                content.insert(0, image_part(images[i % 3]))
            messages.append({"role": "user", "content": content})
            if i % 4 == 3:  # a second turn
                messages += [{"role": "assistant", "content": "It is a picture."},
                             {"role": "user", "content": "Say more."}]
            cases.append((messages, 4 + i % 5, i % 2 == 0))
        # A stream's deltas may hold a partial character back differently
        # from the whole-text decode: references in the same mode.
        distinct_keys = {}
        for case in cases:
            distinct_keys.setdefault(repr(case), case)
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            expected = dict(zip(distinct_keys, pool.map(lambda case: chat(self.plain_client, "llava", *case)[0],
                                                        distinct_keys.values())))
        for round_number in range(2):
            with concurrent.futures.ThreadPoolExecutor(len(cases)) as pool:
                results = list(pool.map(lambda case: chat(self.client, "llava", *case), cases))
            for (messages, max_tokens, stream), (text, usage) in zip(cases, results):
                self.assertEqual(text, expected[repr((messages, max_tokens, stream))], f"round {round_number}")
                self.assertLess(cached_tokens(usage), usage.prompt_tokens)
        metrics = self.server.wait_idle()
        self.assertGreater(metrics["vlm_prefix_cache_hits_total"], 0)
        self.assertGreater(metrics['vlm_prefix_cache_requests_total{result="hit"}'], 0)
        self.assertLessEqual(metrics["vlm_prefix_cache_bytes"], metrics["vlm_prefix_cache_budget_bytes"])
        self.assertLessEqual(metrics["vlm_encoder_cache_bytes"], metrics["vlm_encoder_cache_budget_bytes"])


class BudgetTests(unittest.TestCase):
    """1 MiB for each cache on the tiny LLaVA (1 KiB of KV a position, 64 KiB
    of features an image): a few conversations overflow it, so blocks are
    evicted, and the budget holds at every moment /metrics is read."""

    def test_small_budgets_are_never_exceeded(self):
        images = [fixture(name) for name in ("horse.png", "chelsea_q90.jpg", "coffee.jpg", "astronaut.png")]
        server = harness.Server(VLM, os.path.join(MODELS, "llava"), "--parallel", "4", "--ctx", "2048",
                                "--prefix-cache-mb", "1", "--encoder-cache-mb", "1")
        client = client_for(server)
        worst = {"prefix": 0.0, "encoder": 0.0}
        done = threading.Event()

        def watch():
            while not done.is_set():
                metrics = server.metrics()
                worst["prefix"] = max(worst["prefix"], metrics["vlm_prefix_cache_bytes"])
                worst["encoder"] = max(worst["encoder"], metrics["vlm_encoder_cache_bytes"])
                time.sleep(0.02)

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            cases = [[{"role": "user", "content": [image_part(images[i % 4]),
                                                   {"type": "text", "text": f"Question {i}?"}]}] for i in range(8)]
            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                list(pool.map(lambda messages: chat(client, "llava", messages, 3), cases))
            metrics = server.wait_idle()
        finally:
            done.set()
            watcher.join()
            client.close()
            status = server.stop()
        self.assertEqual(status, 0, server.stderr())
        self.assertEqual(metrics["vlm_prefix_cache_budget_bytes"], 1 << 20)
        self.assertGreater(metrics["vlm_prefix_cache_evictions_total"], 0)
        self.assertLessEqual(max(worst["prefix"], metrics["vlm_prefix_cache_bytes"]), 1 << 20)
        self.assertGreater(metrics["vlm_prefix_cache_bytes"], 0)
        self.assertLessEqual(max(worst["encoder"], metrics["vlm_encoder_cache_bytes"]), 1 << 20)
        self.assertGreater(metrics["vlm_encoder_cache_bytes"], 0)


class Qwen2VLCacheTests(TwoTurnCase, unittest.TestCase):
    """M-RoPE: the key holds every position's three axes."""
    model_name = "qwen2_vl"
    image, other_image = "horse.png", "chelsea_q90.jpg"

    @classmethod
    def setUpClass(cls):
        fixture(cls.image)
        import tempfile
        cls.scratch = tempfile.TemporaryDirectory()
        model = test_qwen2_vl.unpacked_model(cls.scratch.name, "qwen2_vl")
        cls.server = harness.Server(VLM, model, "--parallel", "4", "--ctx", "4096")
        cls.plain = harness.Server(VLM, model, "--parallel", "4", "--ctx", "4096", "--prefix-cache-mb", "0",
                                   "--encoder-cache-mb", "0")
        cls.client, cls.plain_client = client_for(cls.server), client_for(cls.plain)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.plain_client.close()
        statuses = (cls.server.stop(), cls.plain.stop())
        cls.scratch.cleanup()
        if statuses != (0, 0):
            raise AssertionError(f"vlm serve exited {statuses}:\n{cls.server.stderr()}\n{cls.plain.stderr()}")


class Gemma3CacheTests(Qwen2VLCacheTests):
    """Gemma 3: each image's soft tokens are a bidirectional attention block
    (16 rows on the tiny model, so a 16-position cache block boundary falls
    inside it) and prefill chunks of 8 rows are stretched over it; the
    reused prefix never ends inside a block (engine_cache.c), and the second
    turn equals the uncached server's."""
    model_name = "gemma3"

    @classmethod
    def setUpClass(cls):
        fixture(cls.image)
        import tempfile
        cls.scratch = tempfile.TemporaryDirectory()
        model = test_qwen2_vl.unpacked_model(cls.scratch.name, "gemma3")
        chunks = ("--prefill-chunk", "8", "--decoding-prefill-chunk", "8")
        cls.server = harness.Server(VLM, model, "--parallel", "4", "--ctx", "4096", *chunks)
        cls.plain = harness.Server(VLM, model, "--parallel", "4", "--ctx", "4096", *chunks, "--prefix-cache-mb", "0",
                                   "--encoder-cache-mb", "0")
        cls.client, cls.plain_client = client_for(cls.server), client_for(cls.plain)


class Gemma3BlockBoundaryTests(unittest.TestCase):
    """A cached prefix that would end inside an image's attention block is
    cut back to before the block. The budget (1 MiB: N blocks) keeps only
    turn 1's first N blocks, and the system prompt is sized so that the
    image's 16 soft tokens straddle position 16 N: turn 2 matches N blocks,
    of which it may reuse only those before the image."""
    SOFT_TOKENS = 16
    # After the soft tokens when the image ends the user turn:
    # <end_of_image> "\n\n" <end_of_turn> "\n" <start_of_turn> "model" "\n".
    TAIL = 7

    @classmethod
    def setUpClass(cls):
        fixture("horse.png")
        import tempfile
        cls.scratch = tempfile.TemporaryDirectory()
        model = test_qwen2_vl.unpacked_model(cls.scratch.name, "gemma3")
        chunks = ("--prefill-chunk", "8", "--decoding-prefill-chunk", "8")
        cls.server = harness.Server(VLM, model, "--parallel", "2", "--ctx", "4096", *chunks, "--prefix-cache-mb", "1")
        cls.plain = harness.Server(VLM, model, "--parallel", "2", "--ctx", "4096", *chunks, "--prefix-cache-mb", "0",
                                   "--encoder-cache-mb", "0")
        cls.client, cls.plain_client = client_for(cls.server), client_for(cls.plain)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.plain_client.close()
        statuses = (cls.server.stop(), cls.plain.stop())
        cls.scratch.cleanup()
        if statuses != (0, 0):
            raise AssertionError(f"vlm serve exited {statuses}:\n{cls.server.stderr()}\n{cls.plain.stderr()}")

    @staticmethod
    def turn1(words):
        return [{"role": "system", "content": "the " * words + "end."},
                {"role": "user", "content": [{"type": "text", "text": "Look:"}, image_part(fixture("horse.png"))]}]

    def image_start(self, words):
        """The first soft token's position (the plain server's prompt length)."""
        _, usage = chat(self.plain_client, "gemma3", self.turn1(words), 1)
        return usage.prompt_tokens - self.SOFT_TOKENS - self.TAIL

    def test_reuse_stops_before_an_image_block(self):
        info = [key for key in self.server.metrics() if key.startswith("vlm_cache_config_info{")]
        blocks = int(info[0].split('num_gpu_blocks="')[1].rstrip('"}'))
        boundary = blocks * BLOCK
        # The soft tokens start 8 rows before the boundary (each " the" one token).
        words = 900
        words += boundary - 8 - self.image_start(words)
        start = self.image_start(words)
        self.assertEqual(start, boundary - 8)
        messages = self.turn1(words)
        reply, usage1 = chat(self.client, "gemma3", messages, 4)
        self.assertEqual(reply, self.reference(messages, 4))
        self.server.wait_idle()
        self.assertEqual(self.server.metrics()["vlm_prefix_cache_blocks"], blocks)
        turn2 = messages + [{"role": "assistant", "content": reply}, {"role": "user", "content": "And then?"}]
        text2, usage2 = chat(self.client, "gemma3", turn2, 6)
        cached = cached_tokens(usage2)
        print(f"\n  gemma3: image rows {start}..{start + self.SOFT_TOKENS - 1}, {blocks} blocks kept; "
              f"turn 2 {usage2.prompt_tokens} positions, {cached} from the cache", file=sys.stderr)
        # The N blocks matched end inside the image block (the tail of the
        # first ends 8 rows into it): the reuse stops at the cache block
        # before the image, and the output is the uncached server's.
        self.assertGreater(cached, 0)
        self.assertLessEqual(cached, start)
        self.assertEqual(cached, (start // BLOCK) * BLOCK)
        self.assertEqual(text2, self.reference(turn2, 6))

    def reference(self, messages, max_tokens):
        return chat(self.plain_client, "gemma3", messages, max_tokens)[0]


class XlaCacheTests(unittest.TestCase):
    """--backend xla: the prefix cache is off, said on stderr and in
    /metrics (its KV is not handed out); the encoder cache works, and the
    outputs are the cpu backend's. Skips without .venv-xla or the runtime."""

    @classmethod
    def setUpClass(cls):
        if not os.path.exists(os.path.join(SOURCE, ".venv-xla", "bin", "iree-compile")):
            raise unittest.SkipTest("no-venv-xla: no .venv-xla (tools/xla/requirements.txt)")
        probe = subprocess.run([VLM, "run", "--backend", "xla", "--model", "/nonexistent", "--prompt", "x"],
                               capture_output=True, text=True)
        if "built without the xla runtime" in probe.stderr:
            raise unittest.SkipTest("no-xla-runtime: vlm was built without the xla runtime")
        fixture("horse.png")
        cls.cache = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"vlm-xla-cache-test-{os.getpid()}")
        env = dict(os.environ, VLM_XLA_CACHE=cls.cache)
        model = os.path.join(MODELS, "llava")
        cls.server = harness.Server(VLM, model, "--backend", "xla", "--parallel", "2", "--ctx", "1024",
                                    "--prefill-chunk", "128", env=env, start_timeout=600)
        cls.cpu = harness.Server(VLM, model, "--parallel", "1", "--prefix-cache-mb", "0", "--encoder-cache-mb", "0")
        cls.client, cls.cpu_client = client_for(cls.server), client_for(cls.cpu)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.cpu_client.close()
        statuses = (cls.server.stop(), cls.cpu.stop())
        subprocess.run(["rm", "-rf", cls.cache])
        if statuses != (0, 0):
            raise AssertionError(f"vlm serve exited {statuses}:\n{cls.server.stderr()}")

    def test_prefix_cache_off_encoder_cache_on(self):
        self.assertIn("prefix cache off: the xla text decoder does not hand its KV out", self.server.stderr())
        messages = [{"role": "user", "content": [image_part(fixture("horse.png")),
                                                 {"type": "text", "text": "What is it?"}]}]
        before = self.server.metrics()
        self.assertEqual(before["vlm_prefix_cache_budget_bytes"], 0)
        self.assertEqual(before["vlm_encoder_cache_budget_bytes"], 256 << 20)
        texts = [chat(self.client, "llava", messages, 6)[0] for _ in range(2)]
        after = self.server.wait_idle()
        self.assertEqual(after["vlm_media_items_encoded_total"] - before["vlm_media_items_encoded_total"], 1)
        self.assertEqual(after["vlm_encoder_cache_hits_total"] - before["vlm_encoder_cache_hits_total"], 1)
        self.assertEqual(after["vlm_prefix_cache_queries_total"], 0)
        expected = chat(self.cpu_client, "llava", messages, 6)[0]
        self.assertEqual(texts, [expected, expected])


if __name__ == "__main__":
    unittest.main()
