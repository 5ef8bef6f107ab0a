"""n > 1 and prompt lists through `vlm serve` with the pinned official
`openai` client, on the tiny Qwen2 (random weights, its own tokenizer):

  * n=3 returns 3 choices (indices 0..2) from ONE prefill: /metrics'
    vlm_prefill_tokens_total grows by the prompt's uncached positions once,
    vlm_prompt_tokens_total by the prompt once; usage counts the prompt once
    and every choice's completion tokens;
  * greedy: every choice is the n=1 answer; seeded sampling: reproducible,
    choice 0 is the n=1 sample of that seed, and the choices differ;
  * streaming: chunks carry their choice's index, each choice gets its own
    finish_reason chunk, the texts equal the whole answer's, include_usage
    sums them;
  * /v1/completions with a list of prompts (strings, token ids): choice
    index = prompt * n + i, each prompt's greedy choices its own answer;
  * logprobs, logit_bias and stop apply to every choice;
  * response_format constrains every choice; refused up front with a 400
    naming n: n over --parallel, n over 16; echo with a
    prompt list;
  * a client that disconnects mid-stream frees every choice's slot.

Run: .venv-server/bin/python tests/server/test_choices.py [-v]"""
import os
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import openai  # noqa: E402

SOURCE = os.path.abspath(os.environ.get("VLM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
VLM = os.path.abspath(os.environ.get("VLM_BINARY", os.path.join(SOURCE, "build", "vlm")))
MODEL = os.path.join(SOURCE, "tests", "models", "qwen2")
SLOTS = 4


def messages(text):
    return [{"role": "user", "content": text}]


class Choices(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = harness.Server(VLM, MODEL, "--model-name", "qwen2", "--parallel", str(SLOTS), "--ctx", "512")
        cls.client = openai.OpenAI(base_url=cls.server.base_url(), api_key="unused", max_retries=0, timeout=600)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.server.stop()

    def chat(self, text, **fields):
        fields.setdefault("max_tokens", 8)
        return self.client.chat.completions.create(model="qwen2", messages=messages(text), **fields)

    def test_three_choices_one_prefill(self):
        before = self.server.wait_idle()
        answer = self.chat("Three answers from one prefill, please", n=3, temperature=1.0, seed=11, logprobs=True,
                           max_tokens=6)
        after = self.server.wait_idle()
        self.assertEqual([c.index for c in answer.choices], [0, 1, 2])
        usage = answer.usage
        cached = usage.prompt_tokens_details.cached_tokens
        self.assertEqual(after["vlm_prefill_tokens_total"] - before["vlm_prefill_tokens_total"],
                         usage.prompt_tokens - cached)
        self.assertEqual(after["vlm_prompt_tokens_total"] - before["vlm_prompt_tokens_total"], usage.prompt_tokens)
        tokens = [len(c.logprobs.content) for c in answer.choices]
        self.assertEqual(usage.completion_tokens, sum(tokens))
        self.assertEqual(after["vlm_completion_tokens_total"] - before["vlm_completion_tokens_total"], sum(tokens))
        self.assertEqual(after["vlm_active_slots"], 0)

    def test_greedy_choices_equal_one(self):
        one = self.chat("Greedy twice", temperature=0)
        two = self.chat("Greedy twice", temperature=0, n=2)
        self.assertEqual(len(two.choices), 2)
        for choice in two.choices:
            self.assertEqual(choice.message.content, one.choices[0].message.content)
            self.assertEqual(choice.finish_reason, one.choices[0].finish_reason)

    def test_seeded_choices_reproducible(self):
        fields = dict(temperature=1.5, seed=1234, max_tokens=12)
        first = self.chat("Tell me something random", n=3, **fields)
        again = self.chat("Tell me something random", n=3, **fields)
        single = self.chat("Tell me something random", **fields)
        texts = [c.message.content for c in first.choices]
        self.assertEqual(texts, [c.message.content for c in again.choices])
        self.assertEqual(texts[0], single.choices[0].message.content)
        self.assertGreater(len(set(texts)), 1, texts)

    def test_streaming_indices(self):
        fields = dict(temperature=1.0, seed=5, max_tokens=10)
        whole = self.chat("Stream three", n=3, **fields)
        stream = self.chat("Stream three", n=3, stream=True, stream_options={"include_usage": True}, **fields)
        texts, finishes, usage = {}, {}, None
        for chunk in stream:
            if chunk.usage:
                usage = chunk.usage
            for choice in chunk.choices:
                texts[choice.index] = texts.get(choice.index, "") + (choice.delta.content or "")
                if choice.finish_reason:
                    self.assertNotIn(choice.index, finishes)
                    finishes[choice.index] = choice.finish_reason
        self.assertEqual(sorted(finishes), [0, 1, 2])
        self.assertEqual([texts[i] for i in range(3)], [c.message.content for c in whole.choices])
        self.assertEqual([finishes[i] for i in range(3)], [c.finish_reason for c in whole.choices])
        self.assertEqual(usage.prompt_tokens, whole.usage.prompt_tokens)
        self.assertEqual(usage.completion_tokens, whole.usage.completion_tokens)

    def test_prompt_list(self):
        prompts = ["The first prompt", "A second, longer prompt than the first"]
        singles = [self.client.completions.create(model="qwen2", prompt=p, max_tokens=6, temperature=0)
                   for p in prompts]
        listed = self.client.completions.create(model="qwen2", prompt=prompts, max_tokens=6, temperature=0, n=2)
        self.assertEqual([c.index for c in listed.choices], [0, 1, 2, 3])
        for p in range(2):
            for i in range(2):
                self.assertEqual(listed.choices[p * 2 + i].text, singles[p].choices[0].text)
        self.assertEqual(listed.usage.prompt_tokens, sum(s.usage.prompt_tokens for s in singles))
        self.assertEqual(listed.usage.completion_tokens, 2 * sum(s.usage.completion_tokens for s in singles))
        # Token-id prompts, and a stream of them.
        ids = [[97, 107, 18], [40, 109, 264, 5]]
        whole = self.client.completions.create(model="qwen2", prompt=ids, max_tokens=5, temperature=0)
        self.assertEqual([c.index for c in whole.choices], [0, 1])
        alone = self.client.completions.create(model="qwen2", prompt=ids[1], max_tokens=5, temperature=0)
        self.assertEqual(whole.choices[1].text, alone.choices[0].text)
        texts = {}
        for chunk in self.client.completions.create(model="qwen2", prompt=ids, max_tokens=5, temperature=0,
                                                    stream=True):
            for choice in chunk.choices:
                texts[choice.index] = texts.get(choice.index, "") + choice.text
        self.assertEqual([texts[0], texts[1]], [c.text for c in whole.choices])

    def test_controls_apply_to_every_choice(self):
        forced = self.chat("Bias", n=2, temperature=1.0, max_tokens=3, logit_bias={"97": 100}, logprobs=True)
        for choice in forced.choices:
            self.assertEqual([t.token for t in choice.logprobs.content],
                             [choice.logprobs.content[0].token] * 3)
        free = self.chat("Stop", n=2, temperature=0, max_tokens=12)
        text = free.choices[0].message.content
        if len(text) > 2:
            stop = text[1:3]
            stopped = self.chat("Stop", n=2, temperature=0, max_tokens=12, stop=[stop])
            for choice in stopped.choices:
                self.assertNotIn(stop, choice.message.content)
                self.assertEqual(choice.finish_reason, "stop")

    def test_refusals(self):
        for n in (SLOTS + 1, 17):
            with self.assertRaises(openai.BadRequestError) as caught:
                self.chat("Too many", n=n)
            self.assertEqual(caught.exception.body.get("param"), "n")
        with self.assertRaises(openai.BadRequestError) as caught:
            self.client.completions.create(model="qwen2", prompt=["a", "b"], echo=True, max_tokens=2)
        self.assertEqual(caught.exception.body.get("param"), "echo")
        self.assertEqual(self.server.wait_idle()["vlm_active_slots"], 0)

    def test_structured_output_per_choice(self):
        import json
        answer = self.chat("JSON please", n=2, temperature=1.0, seed=3, max_tokens=40,
                           response_format={"type": "json_object"})
        for choice in answer.choices:
            self.assertTrue(choice.message.content.lstrip().startswith("{"), choice.message.content)
            if choice.finish_reason == "stop":
                json.loads(choice.message.content)

    def test_disconnect_frees_every_slot(self):
        body = ('{"model":"qwen2","messages":[{"role":"user","content":"Go on forever"}],"n":3,"stream":true,'
                '"max_tokens":400,"ignore_eos":true,"temperature":1}').encode()
        with socket.create_connection((self.server.host, self.server.port), timeout=60) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            received = b""
            while received.count(b"data: ") < 6:
                piece = sock.recv(65536)
                self.assertTrue(piece, received)
                received += piece
            self.assertIn(b" 200 OK", received.split(b"\r\n")[0])
            running = self.server.metrics()["vlm_active_slots"]
        self.assertGreaterEqual(running, 1)
        metrics = self.server.wait_idle()
        self.assertEqual(metrics["vlm_active_slots"], 0)
        self.assertEqual(metrics["vlm_kv_cache_positions_used"], 0)


if __name__ == "__main__":
    unittest.main()
