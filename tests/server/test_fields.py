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
  * POST /tokenize and /detokenize (vLLM's shapes) give exactly the ids the
    completions endpoints feed (the oracle's prompt tokenized, usage, and
    `vlm tokenize --chat --ids`, LLaVA's string content included);
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

    # --- /tokenize and /detokenize ---------------------------------------
    def test_tokenize_gives_the_ids_the_model_is_fed(self):
        case = golden_case("qwen3", "single_user_gen_enable_thinking_false")
        status, body = self.server.post_json("/tokenize", {"model": "qwen3", "messages": case["messages"],
                                                           "chat_template_kwargs": {"enable_thinking": False}})
        self.assertEqual(status, 200, body)
        # The oracle's rendering, tokenized: the ids, exactly.
        self.assertEqual(body["tokens"], vlm_tokenize(self.model_dir, "--text", case["expected"], "--no-special"))
        self.assertEqual(body["count"], len(body["tokens"]))
        self.assertIsNone(body["token_strs"])
        usage = self.chat(case["messages"], max_tokens=1, chat_template_kwargs={"enable_thinking": False}).usage
        self.assertEqual(usage.prompt_tokens, body["count"])
        # And the CLI's --ids, for the default rendering.
        with tempfile.NamedTemporaryFile("w", suffix=".json") as messages:
            json.dump(HELLO, messages)
            messages.flush()
            cli = vlm_tokenize(self.model_dir, "--chat", messages.name, "--add-generation-prompt", "--ids")
        status, body = self.server.post_json("/tokenize", {"messages": HELLO})
        self.assertEqual(body["tokens"], cli)
        # A prompt: as /v1/completions tokenizes it.
        status, body = self.server.post_json("/tokenize", {"prompt": "Once upon a time"})
        self.assertEqual(body["tokens"], vlm_tokenize(self.model_dir, "--text", "Once upon a time"))
        completion = self.client.completions.create(model="qwen3", prompt="Once upon a time", max_tokens=1)
        self.assertEqual(completion.usage.prompt_tokens, body["count"])
        status, back = self.server.post_json("/detokenize", {"model": "qwen3", "tokens": body["tokens"]})
        self.assertEqual((status, back), (200, {"prompt": "Once upon a time"}))

    def test_tokenize_refuses_what_it_cannot_do(self):
        for path, body, param in (
                ("/tokenize", {"prompt": "x", "add_special_tokens": False}, "add_special_tokens"),
                ("/tokenize", {"prompt": "x", "return_token_strs": True}, "return_token_strs"),
                ("/tokenize", {"prompt": "x", "max_tokens": 3}, "max_tokens"),
                ("/tokenize", {"messages": HELLO, "temperature": 1}, "temperature"),
                ("/tokenize", {"messages": [{"role": "user", "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}]},
                 "messages[0].content[0].image_url.url"),
                ("/detokenize", {"tokens": [1, 10 ** 9]}, "tokens[1]"),
                ("/detokenize", {"tokens": "1"}, "tokens")):
            status, answer = self.server.post_json(path, body)
            self.assertEqual(status, 400, (path, body, answer))
            self.assertEqual(answer["error"]["param"], param)
        status, answer = self.server.post_json("/tokenize", {"model": "other", "prompt": "x"})
        self.assertEqual(status, 404)

    def test_token_id_prompts(self):
        ids = vlm_tokenize(self.model_dir, "--text", "Once upon a time")
        text = self.client.completions.create(model="qwen3", prompt="Once upon a time", max_tokens=4, temperature=0)
        for prompt in (ids, [ids]):
            tokens = self.client.completions.create(model="qwen3", prompt=prompt, max_tokens=4, temperature=0)
            self.assertEqual(tokens.choices[0].text, text.choices[0].text)
            self.assertEqual(tokens.usage.prompt_tokens, len(ids))
        echoed = self.client.completions.create(model="qwen3", prompt=ids, max_tokens=2, temperature=0, echo=True)
        self.assertTrue(echoed.choices[0].text.startswith("Once upon a time"))
        # Lists of prompts are answered (tests/server/test_choices.py); an
        # empty one, one over 16 prompts, or ids outside the vocabulary are not.
        for prompt, param in (([1, 10 ** 9], "prompt[1]"), ([], "prompt"), (["a"] * 17, "prompt"),
                              ([ids, [1, 10 ** 9]], "prompt")):
            with self.assertRaises(openai.BadRequestError) as caught:
                self.client.completions.create(model="qwen3", prompt=prompt, max_tokens=1)
            self.assertEqual(caught.exception.body["param"], param)

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
    def test_llava_tokenize_keeps_string_content(self):
        """LLaVA's template reads content as parts: string content reaches it
        as a text part (vLLM's content format), in serve, /tokenize and the
        CLI alike."""
        model = os.path.join(MODELS, "llava")
        server = harness.Server(VLM, model, "--model-name", "llava")
        try:
            messages = [{"role": "user", "content": "Hi there"}]
            status, body = server.post_json("/tokenize", {"messages": messages})
            self.assertEqual(status, 200, body)
            with tempfile.NamedTemporaryFile("w", suffix=".json") as handle:
                json.dump(messages, handle)
                handle.flush()
                cli = vlm_tokenize(model, "--chat", handle.name, "--add-generation-prompt", "--ids")
            self.assertEqual(body["tokens"], cli)
            text = vlm_tokenize(model, "--text", "Hi there", "--no-special")
            joined = ",".join(map(str, cli))
            self.assertIn(",".join(map(str, text)), joined)  # the text is there
            status, usage = server.post_json("/v1/chat/completions", {"messages": messages, "max_tokens": 1})
            self.assertEqual(usage["usage"]["prompt_tokens"], body["count"])
        finally:
            server.stop()

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
