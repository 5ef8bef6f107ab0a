#!/usr/bin/env python3
"""Writes the chat-template goldens that tests/test_chat_template_goldens.c checks.

Versions: transformers 5.23.0, jinja2 3.1.6 (tools/oracle/requirements-ci.txt).
Regenerate (byte-identical output) from the repository root with:

    /tmp/tfvenv/bin/python tools/oracle/make_chat_template_goldens.py \
        --fixtures ../shared/fixtures/tokenizers

For each template it writes tests/goldens/chat_template/<name>.json:
    {"template": "fixture:<dir>" | "templates/<family>.jinja",
     "bos_token": ..., "eos_token": ...,
     "cases": [{"name", "messages", "add_generation_prompt", "tools",
                "extra", "expected" (str) or "error" (the exception text)}]}

How the expected prompts are made, so they are what Transformers renders:
  * real templates (tests fixtures with a tokenizer_config.json): the tokenizer
    from AutoTokenizer.from_pretrained(dir) and its own
    apply_chat_template(messages, tools=..., add_generation_prompt=...,
    tokenize=False, **extra) - special tokens, template choice and all;
  * family templates (stored under tests/goldens/chat_template/templates, see
    the README there for their sources): what a processor's
    apply_chat_template does - drop None-valued message keys, turn OpenAI
    image_url parts into image parts, then
    transformers.utils.chat_template_utils.render_jinja_template with the
    family's bos/eos tokens as the special-token map.
strftime_now is pinned by patching datetime in chat_template_utils to a fixed
instant (FIXED_TIME below, rendered in UTC: run with TZ=UTC, which main() sets).
"""
import argparse
import copy
import datetime
import json
import os
import sys
import time

os.environ["TZ"] = "UTC"
time.tzset()

import transformers  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402
from transformers.utils import chat_template_utils  # noqa: E402

FIXED_TIME = 1735689600 + 86400 * 45  # 2025-02-15T00:00:00Z


class _FixedDatetime(datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return datetime.datetime.fromtimestamp(FIXED_TIME, tz)


chat_template_utils.datetime = _FixedDatetime

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "goldens", "chat_template")

# ---- conversations ---------------------------------------------------------

SYSTEM = "You are a helpful assistant. Answer briefly."
USER1 = "Hello, how are you?"
ASSISTANT1 = "I'm fine, thanks! How can I help?"
USER2 = "Tell me a joke about \"quotes\" and 'apostrophes'.\nTwo lines, unicode: héllo 日本語 ✓"

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city, e.g. \"Paris\""},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    }
]


def text_part(text):
    return {"type": "text", "text": text}


CONVERSATIONS = {
    "single_user": [{"role": "user", "content": USER1}],
    "system_multi_turn": [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": USER1},
        {"role": "assistant", "content": ASSISTANT1},
        {"role": "user", "content": USER2},
    ],
    "multi_turn_no_system": [
        {"role": "user", "content": USER1},
        {"role": "assistant", "content": ASSISTANT1},
        {"role": "user", "content": USER2},
    ],
    "parts_text": [{"role": "user", "content": [text_part(USER1)]}],
    "parts_image_text": [
        {"role": "user", "content": [{"type": "image"}, text_part("Describe this image.")]},
    ],
    "parts_system_multi_turn_images": [
        {"role": "system", "content": [text_part(SYSTEM)]},
        {"role": "user", "content": [{"type": "image", "url": "https://example.com/cat.png"},
                                     text_part("What animal is this?")]},
        {"role": "assistant", "content": [text_part("A cat.")]},
        {"role": "user", "content": [text_part("And these two?"), {"type": "image"}, {"type": "image"}]},
    ],
    "parts_image_url_openai": [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
                                     text_part("What is shown?")]},
    ],
    "parts_audio_text": [
        {"role": "user", "content": [{"type": "audio"}, text_part("Transcribe this audio.")]},
    ],
    "parts_video_text": [
        {"role": "user", "content": [{"type": "video"}, text_part("What happens in this video?")]},
    ],
    "tools_call_and_response": [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": "",
         "tool_calls": [{"type": "function", "function": {"name": "get_weather",
                                                           "arguments": {"city": "Paris"}}}]},
        {"role": "tool", "content": "{\"temperature\": 21, \"unit\": \"celsius\"}"},
        {"role": "user", "content": "Thanks!"},
    ],
    "tools_string_arguments": [
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"type": "function", "function": {"name": "get_weather",
                                                           "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "content": "sunny"},
    ],
    "reasoning": [
        {"role": "user", "content": USER1},
        {"role": "assistant", "content": ASSISTANT1, "reasoning_content": "The user greets me.\n"},
        {"role": "user", "content": "Now think about 2+2."},
    ],
    "think_in_content": [
        {"role": "user", "content": USER1},
        {"role": "assistant", "content": "<think>\nSome thoughts.\n</think>\n\nThe answer."},
    ],
    "null_content_dropped": [
        {"role": "user", "content": USER1, "name": None},
    ],
    "broken_alternation": [
        {"role": "user", "content": USER1},
        {"role": "user", "content": USER2},
    ],
    "assistant_first": [
        {"role": "assistant", "content": ASSISTANT1},
        {"role": "user", "content": USER1},
    ],
    "assistant_prefill": [
        {"role": "user", "content": USER1},
        {"role": "assistant", "content": "The answer is"},
    ],
    "assistant_prefill_trailing_space": [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": USER1},
        {"role": "assistant", "content": "Let me see "},
    ],
    "assistant_prefill_parts": [
        {"role": "user", "content": [text_part(USER1)]},
        {"role": "assistant", "content": [text_part("First,"), text_part(" then")]},
    ],
    "whitespace_content": [
        {"role": "system", "content": "  padded system  \n"},
        {"role": "user", "content": "\n\n  padded user \t"},
    ],
}

# Cases every template gets: (conversation, add_generation_prompt, tools, extra).
BASE_CASES = [
    ("single_user", True, None, None),
    ("single_user", False, None, None),
    ("system_multi_turn", True, None, None),
    ("system_multi_turn", False, None, None),
    ("multi_turn_no_system", True, None, None),
    ("parts_text", True, None, None),
    ("parts_image_text", True, None, None),
    ("parts_system_multi_turn_images", True, None, None),
    ("parts_system_multi_turn_images", False, None, None),
    ("null_content_dropped", True, None, None),
    ("broken_alternation", True, None, None),
    ("assistant_first", True, None, None),
    ("whitespace_content", True, None, None),
]
MEDIA_CASES = [
    ("parts_image_url_openai", True, None, None),
    ("parts_audio_text", True, None, None),
    ("parts_video_text", True, None, None),
]
# Tokenizers (unlike processors) pass image_url parts through unconverted; vlm
# converts them as processors do, so tokenizer-rendered goldens leave them out.
TOKENIZER_MEDIA_CASES = [case for case in MEDIA_CASES if case[0] != "parts_image_url_openai"]
TOOL_CASES = [
    ("single_user", True, TOOLS, None),
    ("tools_call_and_response", True, TOOLS, None),
    ("tools_string_arguments", True, TOOLS, None),
]
REASONING_CASES = [
    ("reasoning", True, None, None),
    ("think_in_content", False, None, None),
    ("single_user", True, None, {"enable_thinking": False}),
    ("single_user", True, None, {"enable_thinking": True}),
]

# Transformers' continue_final_message (an apply_chat_template argument, not a
# template variable: make_cases takes it out of `extra` into the case's own
# "continue_final_message" key).
CONTINUE = {"continue_final_message": True}
CONTINUE_CASES = [
    ("assistant_prefill", False, None, CONTINUE),
    ("assistant_prefill_trailing_space", False, None, CONTINUE),
    ("single_user", False, None, CONTINUE),
]
CONTINUE_PARTS_CASES = [
    ("assistant_prefill_parts", False, None, CONTINUE),
]

# name -> (template, bos, eos, extra case lists). Real templates come from the
# test fixtures; family templates from templates/<name>.jinja.
TEMPLATES = {
    "qwen3": ("fixture:qwen3", None, None, [TOOL_CASES, REASONING_CASES, CONTINUE_CASES]),
    "gemma3": ("fixture:gemma3", None, None, [TOKENIZER_MEDIA_CASES]),
    "llama3": ("fixture:llama3", None, None, [CONTINUE_CASES]),
    "deepseek_v3": ("fixture:deepseek_v3", None, None, [TOOL_CASES]),
    "llama2": ("fixture:llama2", None, None, []),
}
FAMILY_TOKENS = {
    # family: (bos_token, eos_token, extra case lists)
    "llava": ("<s>", "</s>", [MEDIA_CASES, CONTINUE_PARTS_CASES]),
    "qwen2_vl": ("<|endoftext|>", "<|im_end|>", [MEDIA_CASES]),
    "qwen2_5_vl": ("<|endoftext|>", "<|im_end|>", [MEDIA_CASES]),
    "qwen3_vl_thinking": ("<|endoftext|>", "<|im_end|>",
                          [MEDIA_CASES, TOOL_CASES, REASONING_CASES, CONTINUE_CASES, CONTINUE_PARTS_CASES]),
    "gemma3n": ("<bos>", "<eos>", [MEDIA_CASES]),
    "phi4_multimodal": ("<|endoftext|>", "<|endoftext|>", [MEDIA_CASES, TOOL_CASES]),
}


def error_text(exception):
    return str(exception)


def render_with_tokenizer(tokenizer, messages, add_generation_prompt, tools, extra, continuing=False):
    return tokenizer.apply_chat_template(
        copy.deepcopy(messages), tools=copy.deepcopy(tools), add_generation_prompt=add_generation_prompt,
        tokenize=False, **({"continue_final_message": True} if continuing else {}), **(extra or {}))


def render_as_processor(template, bos, eos, messages, add_generation_prompt, tools, extra, continuing=False):
    messages = [{k: v for k, v in m.items() if v is not None} for m in copy.deepcopy(messages)]
    for message in messages:
        if isinstance(message.get("content"), list):
            converted = []
            for part in message["content"]:
                if isinstance(part, dict) and part.get("type") == "image_url" and "image_url" in part:
                    info = part["image_url"]
                    url = info.get("url", "") if isinstance(info, dict) else info
                    converted.append({"type": "image", "url": url})
                else:
                    converted.append(part)
            message["content"] = converted
    special = {k: v for k, v in (("bos_token", bos), ("eos_token", eos)) if v is not None}
    kwargs = {**special, **(extra or {})}
    rendered, _ = chat_template_utils.render_jinja_template(
        conversations=[messages], tools=copy.deepcopy(tools), chat_template=template,
        add_generation_prompt=add_generation_prompt,
        **({"continue_final_message": True} if continuing else {}), **kwargs)
    return rendered[0]


def make_cases(render, case_lists):
    cases = []
    seen = set()
    for conversation, generation, tools, extra in [c for group in case_lists for c in group]:
        name = conversation + ("_gen" if generation else "_nogen")
        if tools:
            name += "_tools"
        if extra:
            name += "_" + "_".join(f"{k}_{str(v).lower()}" for k, v in sorted(extra.items()))
        if name in seen:
            continue
        seen.add(name)
        messages = CONVERSATIONS[conversation]
        continuing = bool(extra and extra.get("continue_final_message"))
        if extra:
            extra = {k: v for k, v in extra.items() if k != "continue_final_message"} or None
        case = {"name": name, "messages": messages, "add_generation_prompt": generation,
                "tools": tools, "extra": extra}
        if continuing:
            case["continue_final_message"] = True
        try:
            case["expected"] = (render(messages, generation, tools, extra, continuing) if continuing
                                else render(messages, generation, tools, extra))
        except Exception as exception:  # the template raised: keep its message
            case["error"] = error_text(exception)
        cases.append(case)
    return cases


def write(name, document):
    path = os.path.join(OUT, name + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f, ensure_ascii=False, indent=1, sort_keys=False)
        f.write("\n")
    errors = sum("error" in c for c in document.get("cases", []))
    print(f"{path}: {len(document.get('cases', []))} cases ({errors} raise)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fixtures", default=os.path.join(ROOT, "..", "shared", "fixtures", "tokenizers"))
    args = parser.parse_args()
    assert transformers.__version__ == "5.23.0", transformers.__version__
    os.makedirs(OUT, exist_ok=True)
    for name, (source, _, _, extra_lists) in TEMPLATES.items():
        directory = os.path.join(args.fixtures, source.split(":", 1)[1])
        tokenizer = AutoTokenizer.from_pretrained(directory)
        document = {"template": source, "bos_token": tokenizer.bos_token, "eos_token": tokenizer.eos_token}
        if tokenizer.chat_template is None:
            document["cases"] = []
            document["load_error"] = "has no chat template"
        else:
            def render(messages, generation, tools, extra, continuing=False, tokenizer=tokenizer):
                return render_with_tokenizer(tokenizer, messages, generation, tools, extra, continuing)
            document["cases"] = make_cases(render, [BASE_CASES] + extra_lists)
        write(name, document)
    for family, (bos, eos, extra_lists) in FAMILY_TOKENS.items():
        path = os.path.join(OUT, "templates", family + ".jinja")
        if not os.path.exists(path):
            print(f"{path}: missing, skipped", file=sys.stderr)
            continue
        with open(path, encoding="utf-8") as f:
            template = f.read()

        def render(messages, generation, tools, extra, continuing=False, template=template, bos=bos, eos=eos):
            return render_as_processor(template, bos, eos, messages, generation, tools, extra, continuing)
        document = {"template": f"templates/{family}.jinja", "bos_token": bos, "eos_token": eos,
                    "cases": make_cases(render, [BASE_CASES] + extra_lists)}
        write(family, document)


if __name__ == "__main__":
    main()
