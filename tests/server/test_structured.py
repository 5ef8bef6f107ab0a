"""Structured outputs and tools through the official OpenAI client against
`vlm serve` on the tiny random-weight checkpoints: constrained decoding is
what makes their output parse and validate.

- json_schema: random schemas drawn from the supported subset validate
  (jsonschema, with its format checker), streamed and not, for 4 families;
  VLM_STRUCTURED_SCHEMAS per family (default 8; the issue's full run is
  VLM_STRUCTURED_SCHEMAS=50, see docs/STRUCTURED_OUTPUTS.md);
- json_object parses to an object;
- a schema outside the subset is a 400 naming the keyword;
- tool_choice naming a function returns a parseable call with schema-valid
  arguments, streamed and not, for each tool-call format (hermes on Qwen3,
  detected from its template; llama3_json, mistral, phi4_mini_json;
  pythonic on Gemma 3);
- the reasoning split composes with tool calls (reasoning first);
- tool_calls and tool messages in the history render;
- greedy with a grammar that the unconstrained greedy output satisfies
  gives the same tokens (vlm run --grammar).
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import jsonschema  # noqa: E402
import openai  # noqa: E402

SOURCE = os.path.abspath(os.environ.get("VLM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
VLM = os.path.abspath(os.environ.get("VLM_BINARY", os.path.join(SOURCE, "build", "vlm")))
FIXTURES = os.environ.get("VLM_FIXTURES_DIR") or os.path.join(SOURCE, "..", "shared", "fixtures")
if not os.path.isdir(FIXTURES) and os.path.isdir("/work/shared/fixtures"):
    FIXTURES = "/work/shared/fixtures"
sys.path.insert(0, os.path.join(SOURCE, "tools", "oracle"))
import tokenizer_files  # noqa: E402

SCHEMAS = int(os.environ.get("VLM_STRUCTURED_SCHEMAS", "8"))
SCRATCH = tempfile.TemporaryDirectory(prefix="vlm-structured-")


def model_dir(family):
    """tests/models/<family>, its tokenizer unpacked when it ships a patch."""
    source = os.path.join(SOURCE, "tests", "models", family)
    if os.path.isfile(os.path.join(source, "tokenizer.json")):
        return source
    out = os.path.join(SCRATCH.name, family)
    if not os.path.isdir(out):
        status = tokenizer_files.unpack(source, out, os.path.join(FIXTURES, "tokenizers"))
        if status == tokenizer_files.SKIP:
            raise unittest.SkipTest(f"no-fixtures: {family}'s tokenizer patch needs {FIXTURES}/tokenizers")
        if status:
            raise AssertionError(f"unpacking {family} failed ({status})")
    return out


class Served:
    def __init__(self, family, *arguments):
        self.directory = model_dir(family)
        self.server = harness.Server(VLM, self.directory, *arguments)
        self.client = openai.OpenAI(base_url=self.server.base_url(), api_key="unused", max_retries=0)
        self.model = os.path.basename(self.directory.rstrip("/"))

    def chat(self, **kwargs):
        kwargs.setdefault("messages", [{"role": "user", "content": "Answer in JSON."}])
        kwargs.setdefault("temperature", 0)
        return self.client.chat.completions.create(model=self.model, **kwargs)

    def stream_text(self, **kwargs):
        """(content, tool calls {index: {id, name, arguments}}, finish_reason)."""
        content, calls, finish = "", {}, None
        for chunk in self.chat(stream=True, **kwargs):
            if not chunk.choices:
                continue
            choice = chunk.choices[0]
            if choice.delta.content:
                content += choice.delta.content
            for call in choice.delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"id": None, "name": "", "arguments": ""})
                if call.id:
                    entry["id"] = call.id
                if call.function and call.function.name:
                    entry["name"] += call.function.name
                if call.function and call.function.arguments:
                    entry["arguments"] += call.function.arguments
            finish = choice.finish_reason or finish
        return content, calls, finish

    def close(self):
        return self.server.stop()


# ---- random schemas from the supported subset ---------------------------------

def random_schema(rng, depth=0, defs=None):
    """Bounded so that random weights finish: strings have maxLength, an
    enum, a format or a pattern; arrays have maxItems."""
    kinds = ["string", "integer", "number", "boolean", "enum", "const", "null"]
    if depth < 2:
        kinds += ["object", "object", "array", "anyOf"]
    if defs is not None and depth < 2:
        kinds.append("ref")
    kind = rng.choice(kinds)
    if kind == "string":
        flavour = rng.randrange(4)
        if flavour == 0:
            return {"type": "string", "maxLength": rng.randrange(0, 10), "minLength": 0}
        if flavour == 1:
            return {"type": "string", "format": rng.choice(["date", "uuid", "email", "ipv4", "date-time", "time"])}
        if flavour == 2:
            return {"type": "string", "pattern": rng.choice(["^[a-z]{2,5}$", "^\\d{3}-\\d{2}$", "^(yes|no)$",
                                                             "^[A-Z][a-z]*\\.?$"])}
        return {"type": "string", "minLength": 1, "maxLength": 6}
    if kind == "integer":
        low = rng.randrange(-1000, 1000)
        schema = {"type": "integer"}
        if rng.random() < 0.7:
            schema["minimum"] = low
        if rng.random() < 0.7:
            schema["maximum"] = low + rng.randrange(0, 5000)
        return schema
    if kind == "number":
        low = rng.randrange(-50, 50)
        return {"type": "number", "minimum": low, "maximum": low + rng.randrange(1, 100)}
    if kind == "boolean":
        return {"type": "boolean"}
    if kind == "null":
        return {"type": "null"}
    if kind == "enum":
        return {"enum": rng.sample(["red", "green", "blue", 1, 2.5, None, True, "x y"], rng.randrange(1, 5))}
    if kind == "const":
        return {"const": rng.choice(["fixed", 42, {"a": [1, 2]}, False])}
    if kind == "array":
        low = rng.randrange(0, 3)
        return {"type": "array", "items": random_schema(rng, depth + 1, defs), "minItems": low,
                "maxItems": low + rng.randrange(0, 3)}
    if kind == "anyOf":
        return {"anyOf": [random_schema(rng, depth + 1, defs) for _ in range(rng.randrange(2, 4))]}
    if kind == "ref":
        name = "d%d" % len(defs)
        defs[name] = random_schema(rng, depth + 1, None)
        return {"$ref": "#/$defs/" + name}
    properties = {"p%d" % i: random_schema(rng, depth + 1, defs) for i in range(rng.randrange(1, 5))}
    required = [name for name in properties if rng.random() < 0.8]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def schema_document(seed):
    rng = random.Random(seed)
    defs = {}
    schema = random_schema(rng, 0, defs)
    if schema.get("type") != "object":
        schema = {"type": "object", "properties": {"value": schema}, "required": ["value"],
                  "additionalProperties": False}
    if defs:
        schema["$defs"] = defs
    return schema


def check_valid(test, text, schema, where):
    try:
        value = json.loads(text)
    except ValueError as error:
        test.fail(f"{where}: not JSON ({error}): {text!r}")
    try:
        # 2020-12's checker (FormatChecker() mixes in draft 3's "time");
        # rfc3339-validator (pinned) makes it check date-time and time
        validator = jsonschema.Draft202012Validator
        validator(schema, format_checker=validator.FORMAT_CHECKER).validate(value)
    except jsonschema.ValidationError as error:
        test.fail(f"{where}: {error.message}\nschema {json.dumps(schema)}\noutput {text!r}")
    return value


WEATHER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 16},
                                            "days": {"type": "integer", "minimum": 1, "maximum": 14},
                                            "unit": {"enum": ["celsius", "fahrenheit"]}},
           "required": ["city", "days", "unit"], "additionalProperties": False}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city",
                                           "parameters": WEATHER}},
         {"type": "function", "function": {"name": "get_time", "description": "Local time",
                                           "parameters": {"type": "object", "properties": {
                                               "zone": {"type": "string", "format": "uuid"}},
                                               "required": ["zone"], "additionalProperties": False}}}]


class JsonSchemaOutputs(unittest.TestCase):
    FAMILIES = ["qwen2", "llama", "qwen3", "gemma3_text"]

    def test_random_schemas_validate(self):
        for family_index, family in enumerate(self.FAMILIES):
            served = Served(family)
            try:
                for case in range(SCHEMAS):
                    schema = schema_document(1000 * family_index + case)
                    stream = case % 2 == 1
                    where = f"{family} schema {case} ({'streamed' if stream else 'whole'})"
                    arguments = dict(max_tokens=4000, response_format={
                        "type": "json_schema", "json_schema": {"name": "case", "schema": schema, "strict": True}})
                    if case % 3 == 2:  # sampled, not only greedy
                        arguments.update(temperature=1.0, seed=case)
                    if stream:
                        text, _, finish = served.stream_text(**arguments)
                    else:
                        response = served.chat(**arguments)
                        text, finish = response.choices[0].message.content, response.choices[0].finish_reason
                    self.assertEqual(finish, "stop", f"{where}: {text!r}")
                    check_valid(self, text, schema, where)
            finally:
                self.assertEqual(served.close(), 0)

    def test_json_object_and_refusals(self):
        served = Served("qwen2")
        try:
            for stream in (False, True):
                arguments = dict(max_tokens=2000, response_format={"type": "json_object"})
                if stream:
                    text, _, finish = served.stream_text(**arguments)
                else:
                    response = served.chat(**arguments)
                    text, finish = response.choices[0].message.content, response.choices[0].finish_reason
                if finish == "stop":
                    self.assertIsInstance(json.loads(text), dict)
                else:  # random weights may nest until max_tokens; what came is a JSON prefix
                    self.assertEqual(finish, "length")
                    self.assertTrue(text.lstrip().startswith("{"), text)
            cases = [({"oneOf": [{"type": "string"}]}, "'oneOf'"),
                     ({"type": "object", "properties": {"a": {"type": "string", "format": "hostname"}}}, "format"),
                     ({"type": "string", "pattern": "(?=x)"}, "pattern"),
                     ({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}, "without consuming input")]
            for schema, fragment in cases:
                with self.assertRaises(openai.BadRequestError) as caught:
                    served.chat(response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": schema}})
                self.assertIn(fragment, caught.exception.body["message"])
                self.assertEqual(caught.exception.body["param"], "response_format.json_schema.schema")
            deep = {}
            for _ in range(200):
                deep = {"type": "array", "items": deep}
            with self.assertRaises(openai.BadRequestError) as caught:
                served.chat(response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": deep}})
            self.assertIn("nest", caught.exception.body["message"])  # the body's depth bound comes first
            # a forced call on a model whose format is unknown (qwen2's template has none)
            with self.assertRaises(openai.BadRequestError) as caught:
                served.chat(tools=TOOLS, tool_choice="required")
            self.assertIn("--tool-call-parser", caught.exception.body["message"])
        finally:
            self.assertEqual(served.close(), 0)


class ToolCalls(unittest.TestCase):
    # (family, serve arguments, the format it should report)
    FORMATS = [("qwen3", (), "hermes"), ("llama", ("--tool-call-parser", "llama3_json"), "llama3_json"),
               ("mistral", ("--tool-call-parser", "mistral"), "mistral"),
               ("phi4_multimodal", (), "phi4_mini_json"),
               # Gemma 3's templates define no tool format; vLLM serves it with "pythonic"
               ("gemma3_text", ("--tool-call-parser", "pythonic"), "pythonic")]

    def check_call(self, call_id, name, arguments, where):
        self.assertTrue(call_id and call_id.startswith("call_"), where)
        self.assertEqual(name, "get_weather", where)
        check_valid(self, arguments, WEATHER, where)

    def test_named_function_per_format(self):
        for family, arguments, format_name in self.FORMATS:
            served = Served(family, *arguments)
            try:
                choice = {"type": "function", "function": {"name": "get_weather"}}
                response = served.chat(tools=TOOLS, tool_choice=choice, max_tokens=1000)
                message = response.choices[0].message
                self.assertEqual(response.choices[0].finish_reason, "tool_calls", f"{family}: {message}")
                self.assertEqual(len(message.tool_calls), 1)
                call = message.tool_calls[0]
                self.check_call(call.id, call.function.name, call.function.arguments, f"{family} whole")
                content, calls, finish = served.stream_text(tools=TOOLS, tool_choice=choice, max_tokens=1000,
                                                            temperature=0.8, seed=3)
                self.assertEqual(finish, "tool_calls", f"{family}: {content!r}")
                self.assertEqual(sorted(calls), [0])
                self.check_call(calls[0]["id"], calls[0]["name"], calls[0]["arguments"], f"{family} streamed")
                # required: some tool, its own arguments valid; one or more calls
                # (parallel_tool_calls, OpenAI's default), exactly one without
                response = served.chat(tools=TOOLS, tool_choice="required", max_tokens=1000)
                if response.choices[0].finish_reason == "tool_calls":  # random weights may write calls to the end
                    self.assertGreaterEqual(len(response.choices[0].message.tool_calls), 1)
                    for call in response.choices[0].message.tool_calls:
                        self.assertIn(call.function.name, ("get_weather", "get_time"))
                        json.loads(call.function.arguments)
                else:
                    self.assertEqual(response.choices[0].finish_reason, "length")
                response = served.chat(tools=TOOLS, tool_choice="required", max_tokens=1000, parallel_tool_calls=False)
                self.assertEqual(response.choices[0].finish_reason, "tool_calls", f"{family}")
                self.assertEqual(len(response.choices[0].message.tool_calls), 1)
                call = response.choices[0].message.tool_calls[0]
                self.assertIn(call.function.name, ("get_weather", "get_time"))
                with self.assertRaises(openai.BadRequestError) as caught:
                    served.chat(tools=TOOLS, parallel_tool_calls="yes")
                self.assertEqual(caught.exception.body["param"], "parallel_tool_calls")
                with self.assertRaises(openai.BadRequestError) as caught:
                    served.chat(tools=TOOLS, tool_choice={"type": "function", "function": {"name": "nope"}})
                self.assertIn("not in tools", caught.exception.body["message"])
                # none: no parsing, plain content
                response = served.chat(tools=TOOLS, tool_choice="none", max_tokens=5)
                self.assertIsNone(response.choices[0].message.tool_calls)
            finally:
                self.assertEqual(served.close(), 0)

    def test_history_with_tool_calls(self):
        served = Served("qwen3")
        try:
            history = [{"role": "user", "content": "Weather in Paris?"},
                       {"role": "assistant", "content": None, "tool_calls": [
                           {"id": "call_1", "type": "function",
                            "function": {"name": "get_weather",
                                         "arguments": "{\"city\": \"Paris\", \"days\": 1, \"unit\": \"celsius\"}"}}]},
                       {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"}]
            response = served.chat(messages=history, tools=TOOLS, max_tokens=4)
            self.assertGreater(response.usage.prompt_tokens, 0)
            # the template rendered the call and the result: the prompt holds them
            with self.assertRaises(openai.BadRequestError) as caught:
                served.chat(messages=[history[0], {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{not json"}}]}])
            self.assertIn("not valid JSON", caught.exception.body["message"])
        finally:
            self.assertEqual(served.close(), 0)

    def test_history_renders_as_transformers(self):
        """The server hands the template what Transformers' apply_chat_template
        gets (vLLM's conversion: each call's arguments string parsed to an
        object, the tools list as given): the prompt's ids equal `vlm
        tokenize --chat --ids` of that input."""
        served = Served("qwen3")
        try:
            arguments = {"city": "Paris", "days": 1, "unit": "celsius"}
            history = [{"role": "user", "content": "Weather in Paris?"},
                       {"role": "assistant", "content": None, "tool_calls": [
                           {"id": "call_1", "type": "function",
                            "function": {"name": "get_weather", "arguments": json.dumps(arguments)}}]},
                       {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp\": 21}"}]
            response = served.chat(messages=history, tools=TOOLS, max_tokens=1)
            transformers = [history[0],
                            {"role": "assistant", "content": "", "tool_calls": [
                                {"type": "function", "id": "call_1",
                                 "function": {"name": "get_weather", "arguments": arguments}}]},
                            history[2]]
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
                json.dump({"messages": transformers, "tools": TOOLS}, handle)
            try:
                result = subprocess.run([VLM, "tokenize", "--model", served.directory, "--chat", handle.name,
                                         "--add-generation-prompt", "--ids"],
                                        capture_output=True, text=True, timeout=60, check=True)
                rendered = subprocess.run([VLM, "tokenize", "--model", served.directory, "--chat", handle.name],
                                          capture_output=True, text=True, timeout=60, check=True).stdout
            finally:
                os.unlink(handle.name)
            self.assertIn("<tool_call>", rendered)
            self.assertIn("<tool_response>", rendered)
            self.assertEqual(response.usage.prompt_tokens, len(json.loads(result.stdout)))
        finally:
            self.assertEqual(served.close(), 0)


# Biases that make the tiny random Qwen3, given TOOLS, write both thinking
# tags greedily: "<think><think></think> hello hello<think></think>..."
# (as tests/server/test_fields.py's THINKING; the frequency penalty walks
# it from one biased token to the next).
THINKING = {"max_tokens": 10, "frequency_penalty": 2, "temperature": 0,
            "logit_bias": {"151667": 100, "23811": 95, "151668": 95}}


def reference_split(text):
    """vLLM's Qwen3 reasoning parser: (reasoning_content, content)."""
    stripped = text.lstrip()
    if not stripped.startswith("<think>"):
        return None, text
    reasoning, tag, content = stripped[len("<think>"):].partition("</think>")
    return reasoning, (content if tag else "") or None


class ReasoningWithTools(unittest.TestCase):
    """--reasoning-parser with tools: the reasoning split runs first and
    the tool parser reads the content part (vLLM's order), whole and
    streamed."""

    def streamed(self, served, **kwargs):
        reasoning = content = ""
        calls, finish = {}, None
        for chunk in served.chat(stream=True, **kwargs):
            if not chunk.choices:
                continue
            choice = chunk.choices[0]
            reasoning += getattr(choice.delta, "reasoning_content", None) or ""
            content += choice.delta.content or ""
            for call in choice.delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"name": "", "arguments": ""})
                entry["name"] += (call.function and call.function.name) or ""
                entry["arguments"] += (call.function and call.function.arguments) or ""
            finish = choice.finish_reason or finish
        return reasoning or None, content or None, calls, finish

    def test_thinking_is_split_from_content_with_tools(self):
        raw = Served("qwen3")
        try:
            text = raw.chat(tools=TOOLS, **THINKING).choices[0].message.content
        finally:
            self.assertEqual(raw.close(), 0)
        self.assertIn("<think>", text)
        self.assertIn("</think>", text)
        expected = reference_split(text)
        self.assertTrue(expected[0], text)
        served = Served("qwen3", "--reasoning-parser", "qwen3")
        try:
            message = served.chat(tools=TOOLS, **THINKING).choices[0].message
            self.assertEqual((getattr(message, "reasoning_content", None), message.content), expected)
            self.assertIsNone(message.tool_calls)
            reasoning, content, calls, finish = self.streamed(served, tools=TOOLS, **THINKING)
            self.assertEqual((reasoning, content), expected)
            self.assertEqual((calls, finish), ({}, "length"))
            # a forced call with the parser on: the call, no reasoning
            choice = {"type": "function", "function": {"name": "get_weather"}}
            for stream in (False, True):
                if stream:
                    reasoning, content, calls, finish = self.streamed(served, tools=TOOLS, tool_choice=choice,
                                                                      max_tokens=1000)
                    arguments = calls[0]["arguments"]
                else:
                    response = served.chat(tools=TOOLS, tool_choice=choice, max_tokens=1000)
                    message, finish = response.choices[0].message, response.choices[0].finish_reason
                    reasoning, content = getattr(message, "reasoning_content", None), message.content
                    self.assertEqual(len(message.tool_calls), 1)
                    arguments = message.tool_calls[0].function.arguments
                self.assertEqual((reasoning, content, finish), (None, None, "tool_calls"), f"stream={stream}")
                check_valid(self, arguments, WEATHER, f"stream={stream}")
        finally:
            self.assertEqual(served.close(), 0)


class StopControlsUnderGrammar(unittest.TestCase):
    """stop_token_ids and ignore_eos keep a constrained output whole: a stop
    token id is allowed only where the grammar is complete (even one whose
    text would continue it), ignore_eos masks the EOS ids (the output ends
    where the grammar admits nothing more)."""

    YES_NO = {"type": "json_schema", "json_schema": {"name": "a", "schema": {"enum": ["yes", "no"]}}}

    def test_stop_token_ids_and_ignore_eos(self):
        served = Served("qwen2")
        try:
            status, tokenized = served.server.post_json("/tokenize", {"model": served.model, "prompt": "yes"})
            self.assertEqual(status, 200, tokenized)
            yes = tokenized["tokens"][-1:]  # "es" here (or "yes"): a token the grammar would take mid-string
            with open(os.path.join(served.directory, "generation_config.json")) as handle:
                eos = json.load(handle)["eos_token_id"]
            eos = eos if isinstance(eos, list) else [eos]
            for stream in (False, True):
                # the biased stop token wins as soon as it is allowed: at the end only
                arguments = dict(response_format=self.YES_NO, max_tokens=40,
                                 extra_body={"stop_token_ids": yes}, logit_bias={str(yes[0]): 100})
                if stream:
                    text, _, finish = served.stream_text(**arguments)
                else:
                    response = served.chat(**arguments)
                    text, finish = response.choices[0].message.content, response.choices[0].finish_reason
                self.assertEqual(finish, "stop", text)
                self.assertIn(json.loads(text), ("yes", "no"), f"stream={stream}")
                # ignore_eos: the biased EOS is masked, never a token of the output
                arguments = dict(response_format=self.YES_NO, max_tokens=40, extra_body={"ignore_eos": True},
                                 logit_bias={str(token): 100 for token in eos})
                if stream:
                    text, _, finish = served.stream_text(**arguments)
                else:
                    response = served.chat(**arguments)
                    text, finish = response.choices[0].message.content, response.choices[0].finish_reason
                    self.assertLess(response.usage.completion_tokens, 40)
                self.assertEqual(finish, "stop", text)  # the grammar finished (bounded trailing whitespace)
                self.assertIn(json.loads(text), ("yes", "no"), f"stream={stream}")
        finally:
            self.assertEqual(served.close(), 0)


class GrammarKeepsAllowedTokens(unittest.TestCase):
    def test_greedy_unchanged_under_a_grammar_it_satisfies(self):
        directory = model_dir("qwen2")
        common = [VLM, "run", "--model", directory, "--prompt", "Hello there", "--max-tokens", "24",
                  "--temperature", "0", "--json"]
        plain = json.loads(subprocess.run(common, capture_output=True, text=True, check=True, timeout=120).stdout)
        literal = '"' + "".join(c if c.isprintable() and c not in '"\\' else "\\x%02X" % ord(c)
                                if ord(c) < 0x80 else c for c in plain["text"]) + '"'
        with tempfile.NamedTemporaryFile("w", suffix=".gbnf", delete=False) as handle:
            handle.write("root ::= " + literal + "\n")
        try:
            constrained = json.loads(subprocess.run(common + ["--grammar", handle.name], capture_output=True,
                                                    text=True, check=True, timeout=120).stdout)
        finally:
            os.unlink(handle.name)
        self.assertEqual(constrained["tokens"], plain["tokens"])
        # and a grammar that forbids the greedy first token changes it
        with tempfile.NamedTemporaryFile("w", suffix=".gbnf", delete=False) as handle:
            handle.write("root ::= \"7\"+\n")
        try:
            forced = json.loads(subprocess.run(common + ["--grammar", handle.name], capture_output=True,
                                               text=True, check=True, timeout=120).stdout)
        finally:
            os.unlink(handle.name)
        self.assertTrue(set(forced["text"]) <= {"7"} and forced["text"], forced["text"])


if __name__ == "__main__":
    unittest.main()
