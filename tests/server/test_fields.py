"""The request fields vLLM and llama-server clients add, OpenAI's logit_bias
and echo, through `vlm serve` with the pinned official `openai` client (its
extra_body, as such clients send them), on the tiny Qwen3 (the real Qwen3
tokenizer, unpacked from the fixtures) and the tiny LLaVA (its own):

  * logit_bias of 100 on one token forces it, -100 bans one; ids are checked
    against the vocabulary;
  * chat_template_kwargs {"enable_thinking": false}, add_generation_prompt
    false and continue_final_message give the prompt Transformers renders
    (the oracle's goldens in tests/goldens/chat_template/qwen3.json,
    tokenized with `vlm tokenize`);
  * min_tokens, ignore_eos, stop_token_ids, skip_special_tokens, echo each
    change what they should;
  * reasoning: message.reasoning_content and delta.reasoning_content split
    from content as vLLM's Qwen3 parser does (the tiny model biased into
    writing the tags), none with enable_thinking false;
  * unknown fields: 400 by default, accepted and logged with
    --accept-unknown-fields.

Run: .venv-server/bin/python tests/server/test_fields.py [-v]
Needs ../shared/fixtures (the Qwen3 tokenizer)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import openai  # noqa: E402
import test_qwen2_vl  # noqa: E402

SOURCE = os.path.abspath(os.environ.get("VLM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
VLM = os.path.abspath(os.environ.get("VLM_BINARY", os.path.join(SOURCE, "build", "vlm")))
MODELS = os.path.join(SOURCE, "tests", "models")
GOLDENS = os.path.join(SOURCE, "tests", "goldens", "chat_template")
QWEN3_EOS = 151645  # <|im_end|>


def vlm_tokenize(model_dir, *arguments):
    output = subprocess.run([VLM, "tokenize", "--model", model_dir, *arguments], check=True,
                            capture_output=True, text=True).stdout
    return output if "--decode" in arguments else json.loads(output)


def golden_case(template, name):
    with open(os.path.join(GOLDENS, template + ".json"), encoding="utf-8") as handle:
        return next(case for case in json.load(handle)["cases"] if case["name"] == name)


def client_for(server):
    return openai.OpenAI(base_url=server.base_url(), api_key="unused", max_retries=0, timeout=600)


HELLO = [{"role": "user", "content": "Hello, how are you?"}]


class Qwen3Fields(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.TemporaryDirectory()
        cls.model_dir = test_qwen2_vl.unpacked_model(cls.scratch.name, "qwen3")
        cls.server = harness.Server(VLM, cls.model_dir, "--model-name", "qwen3")
        cls.client = client_for(cls.server)
        cls.hello = vlm_tokenize(cls.model_dir, "--text", " hello", "--no-special")[0]

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.scratch.cleanup()

    def chat(self, messages=HELLO, max_tokens=4, **extra):
        return self.client.chat.completions.create(model="qwen3", messages=messages, max_tokens=max_tokens,
                                                   temperature=0, extra_body=extra or None)

    def prompt_tokens_of_golden(self, name):
        """(messages, token count) of the oracle's rendering of a case: the
        text model's flow tokenizes the rendered prompt with no special
        tokens added."""
        case = golden_case("qwen3", name)
        ids = vlm_tokenize(self.model_dir, "--text", case["expected"], "--no-special")
        return case["messages"], len(ids)

    # --- logit_bias -------------------------------------------------------
    def test_logit_bias_100_forces_a_token(self):
        response = self.client.chat.completions.create(
            model="qwen3", messages=HELLO, max_tokens=5, temperature=0, logit_bias={str(self.hello): 100})
        self.assertEqual(response.choices[0].message.content, " hello" * 5)
        self.assertEqual(response.choices[0].finish_reason, "length")
        # Sampled too, and streamed.
        text = ""
        for chunk in self.client.chat.completions.create(
                model="qwen3", messages=HELLO, max_tokens=3, temperature=1.0, seed=3, stream=True,
                logit_bias={str(self.hello): 100}):
            if chunk.choices:
                text += chunk.choices[0].delta.content or ""
        self.assertEqual(text, " hello" * 3)

    def test_logit_bias_minus_100_bans_the_greedy_token(self):
        plain = self.client.completions.create(model="qwen3", prompt="Hello", max_tokens=1, temperature=0,
                                               logprobs=1)
        first = plain.choices[0].text
        banned = vlm_tokenize(self.model_dir, "--text", first, "--no-special")
        self.assertEqual(len(banned), 1, first)
        biased = self.client.completions.create(model="qwen3", prompt="Hello", max_tokens=1, temperature=0,
                                                logit_bias={str(banned[0]): -100}, logprobs=1)
        self.assertNotEqual(biased.choices[0].text, first)
        # logprobs stay the model's own distribution's.
        self.assertLess(biased.choices[0].logprobs.token_logprobs[0], plain.choices[0].logprobs.token_logprobs[0])

    def test_logit_bias_is_validated(self):
        for bias, param in (({"999999999": 1}, "logit_bias.999999999"), ({"5": 101}, "logit_bias.5"),
                            ({"x": 1}, "logit_bias.x")):
            with self.assertRaises(openai.BadRequestError) as caught:
                self.client.chat.completions.create(model="qwen3", messages=HELLO, max_tokens=1, logit_bias=bias)
            self.assertEqual(caught.exception.body["param"], param)

    # --- the template controls -------------------------------------------
    def test_enable_thinking_false_renders_transformers_prompt(self):
        messages, count = self.prompt_tokens_of_golden("single_user_gen_enable_thinking_false")
        response = self.chat(messages, max_tokens=1, chat_template_kwargs={"enable_thinking": False})
        self.assertEqual(response.usage.prompt_tokens, count)
        _, default_count = self.prompt_tokens_of_golden("single_user_gen")
        self.assertNotEqual(count, default_count)  # the kwarg changed the prompt
        self.assertEqual(self.chat(messages, max_tokens=1).usage.prompt_tokens, default_count)

    def test_add_generation_prompt_false(self):
        messages, count = self.prompt_tokens_of_golden("single_user_nogen")
        self.assertEqual(self.chat(messages, max_tokens=1, add_generation_prompt=False).usage.prompt_tokens, count)

    def test_continue_final_message(self):
        messages, count = self.prompt_tokens_of_golden("assistant_prefill_nogen_continue_final_message_true")
        response = self.chat(messages, max_tokens=2, add_generation_prompt=False, continue_final_message=True,
                             echo=True)
        self.assertEqual(response.usage.prompt_tokens, count)
        # echo: the reply starts with the message it continues.
        self.assertTrue(response.choices[0].message.content.startswith("The answer is"))
        with self.assertRaises(openai.BadRequestError) as caught:
            self.chat(messages, continue_final_message=True)  # add_generation_prompt defaults to true
        self.assertEqual(caught.exception.body["param"], "continue_final_message")

    # --- stopping and decoding -------------------------------------------
    def test_eos_controls(self):
        force_eos = {"logit_bias": {str(QWEN3_EOS): 100}}
        stopped = self.chat(max_tokens=6, **force_eos)
        self.assertEqual((stopped.choices[0].finish_reason, stopped.usage.completion_tokens), ("stop", 0))
        # min_tokens holds EOS back.
        held = self.chat(max_tokens=6, min_tokens=3, **force_eos)
        self.assertEqual((held.choices[0].finish_reason, held.usage.completion_tokens), ("stop", 3))
        # ignore_eos: EOS is generated as a token; skipped in the text unless asked for.
        ignored = self.chat(max_tokens=3, ignore_eos=True, **force_eos)
        self.assertEqual((ignored.choices[0].finish_reason, ignored.usage.completion_tokens), ("length", 3))
        self.assertEqual(ignored.choices[0].message.content, "")
        special = self.chat(max_tokens=2, ignore_eos=True, skip_special_tokens=False,
                            spaces_between_special_tokens=True, **force_eos)
        self.assertEqual(special.choices[0].message.content, "<|im_end|><|im_end|>")

    def test_stop_token_ids(self):
        response = self.chat(max_tokens=5, logit_bias={str(self.hello): 100}, stop_token_ids=[self.hello])
        self.assertEqual((response.choices[0].finish_reason, response.choices[0].message.content), ("stop", ""))
        # With min_tokens the id is held back, then stops.
        response = self.chat(max_tokens=5, logit_bias={str(self.hello): 100}, stop_token_ids=[self.hello],
                             min_tokens=2)
        self.assertEqual(response.choices[0].finish_reason, "stop")
        self.assertEqual(response.usage.completion_tokens, 2)
        with self.assertRaises(openai.BadRequestError) as caught:
            self.chat(stop_token_ids=[10 ** 9])
        self.assertEqual(caught.exception.body["param"], "stop_token_ids[0]")

    def test_completions_echo(self):
        response = self.client.completions.create(model="qwen3", prompt="Once upon", max_tokens=2, temperature=0,
                                                  echo=True)
        plain = self.client.completions.create(model="qwen3", prompt="Once upon", max_tokens=2, temperature=0)
        self.assertEqual(response.choices[0].text, "Once upon" + plain.choices[0].text)
        streamed = "".join(chunk.choices[0].text for chunk in self.client.completions.create(
            model="qwen3", prompt="Once upon", max_tokens=2, temperature=0, echo=True, stream=True)
            if chunk.choices)
        self.assertEqual(streamed, response.choices[0].text)

    def test_top_k_one_is_greedy(self):
        greedy = self.chat(max_tokens=6).choices[0].message.content
        sampled = self.chat(max_tokens=6, top_k=1, seed=5).choices[0].message.content
        self.assertEqual(sampled, greedy)


def reference_split(text):
    """vLLM's Qwen3 reasoning parser on a whole answer whose prompt ends
    outside a thinking block: (reasoning_content, content)."""
    stripped = text.lstrip()
    if not stripped.startswith("<think>"):
        return None, text
    rest = stripped[len("<think>"):]
    reasoning, tag, content = rest.partition("</think>")
    return reasoning, (content if tag else "") or None


# Biases that make the tiny random Qwen3 write both tags greedily:
# "<think><think> hello</think></think><think> hello hello</think><think>"
# (the frequency penalty walks it from one biased token to the next).
THINKING = {"max_tokens": 10, "frequency_penalty": 2, "temperature": 0,
            "logit_bias": {"151667": 100, "23811": 98, "151668": 96}}


class Qwen3Reasoning(unittest.TestCase):
    """--reasoning-parser auto picks qwen3 from the template; the default
    (none) keeps the raw text, which the split must account for exactly."""

    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.TemporaryDirectory()
        cls.model_dir = test_qwen2_vl.unpacked_model(cls.scratch.name, "qwen3")
        cls.split_server = harness.Server(VLM, cls.model_dir, "--model-name", "qwen3", "--reasoning-parser", "auto")
        cls.raw_server = harness.Server(VLM, cls.model_dir, "--model-name", "qwen3")  # none by default

    @classmethod
    def tearDownClass(cls):
        cls.split_server.stop()
        cls.raw_server.stop()
        cls.scratch.cleanup()

    def answer(self, server, **extra):
        body = {"messages": HELLO, **THINKING, **extra}
        status, response = server.post_json("/v1/chat/completions", body)
        self.assertEqual(status, 200, response)
        return response["choices"][0]["message"]

    def streamed(self, server, **extra):
        client = client_for(server)
        reasoning = content = ""
        for chunk in client.chat.completions.create(model="qwen3", messages=HELLO, stream=True,
                                                    **THINKING, extra_body=extra or None):
            if chunk.choices:
                delta = chunk.choices[0].delta
                reasoning += getattr(delta, "reasoning_content", None) or ""
                content += delta.content or ""
        return reasoning or None, content or None

    def test_reasoning_split_whole_and_streamed(self):
        raw = self.answer(self.raw_server)
        self.assertNotIn("reasoning_content", raw)
        text = raw["content"]
        self.assertIn("<think>", text)
        self.assertIn("</think>", text)
        expected = reference_split(text)
        self.assertTrue(expected[0] and expected[1], text)
        message = self.answer(self.split_server)
        self.assertEqual((message["reasoning_content"], message["content"]), expected)
        self.assertEqual(self.streamed(self.split_server), expected)
        # Nothing to split: content as it is, no reasoning.
        message = self.answer(self.split_server, logit_bias={"23811": 100})
        self.assertEqual((message["reasoning_content"], message["content"]), (None, " hello" * 10))

    def test_enable_thinking_false_has_no_reasoning(self):
        # The prompt closes the thinking block: every tag is content.
        text = self.answer(self.raw_server, chat_template_kwargs={"enable_thinking": False})["content"]
        message = self.answer(self.split_server, chat_template_kwargs={"enable_thinking": False})
        self.assertIn("<think>", text)
        self.assertEqual((message["reasoning_content"], message["content"]), (None, text))
        self.assertEqual(self.streamed(self.split_server, chat_template_kwargs={"enable_thinking": False}),
                         (None, text))

    def test_logprobs_follow_every_token(self):
        client = client_for(self.split_server)
        response = client.chat.completions.create(model="qwen3", messages=HELLO, logprobs=True, top_logprobs=2,
                                                  **THINKING)
        self.assertEqual(len(response.choices[0].logprobs.content), THINKING["max_tokens"])
        streamed = 0
        for chunk in client.chat.completions.create(model="qwen3", messages=HELLO, logprobs=True, stream=True,
                                                    **THINKING):
            if chunk.choices and chunk.choices[0].logprobs:
                streamed += len(chunk.choices[0].logprobs.content)
        self.assertEqual(streamed, THINKING["max_tokens"])


class UnknownFields(unittest.TestCase):
    def test_strict_by_default_and_logged_when_accepted(self):
        model = os.path.join(MODELS, "llava")
        strict = harness.Server(VLM, model, "--model-name", "llava")
        try:
            status, body = strict.post_json("/v1/chat/completions",
                                            {"messages": HELLO, "max_tokens": 1, "guided_regex": "a+"})
            self.assertEqual(status, 400)
            self.assertEqual(body["error"]["param"], "guided_regex")
        finally:
            strict.stop()
        lenient = harness.Server(VLM, model, "--model-name", "llava", "--accept-unknown-fields")
        try:
            status, body = lenient.post_json("/v1/chat/completions",
                                             {"messages": HELLO, "max_tokens": 1, "guided_regex": "a+"})
            self.assertEqual(status, 200, body)
            # Known fields we refuse stay refused.
            status, body = lenient.post_json("/v1/chat/completions",
                                             {"messages": HELLO, "max_tokens": 1, "suffix_x": 1,
                                              "audio": {"voice": "alloy", "format": "wav"}})
            self.assertEqual(status, 400)
            self.assertEqual(body["error"]["param"], "audio")
        finally:
            lenient.stop()
        self.assertIn("were present in the request but ignored: guided_regex", lenient.stderr())


if __name__ == "__main__":
    unittest.main()
