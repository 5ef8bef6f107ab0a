#!/usr/bin/env python3
"""Conformance goldens for vlm's tokenizer (src/text/tokenizer*.c).

Regenerate (byte-identical output for the same fixtures and versions):

    /tmp/tfvenv/bin/python tools/oracle/make_tokenizer_goldens.py \
        --fixtures ../shared/fixtures/tokenizers --out tests/goldens/tokenizer

Made with transformers 5.23.0 and tokenizers 0.23.3 (pinned in
tools/oracle/requirements*.txt); no torch needed.

For every tokenizer directory (tokenizer.json + tokenizer_config.json) and
every corpus case it records:

  ids / ids_plain          AutoTokenizer(text) with add_special_tokens True/False
                           (what Transformers feeds the model; vlm's default)
  hf_ids / hf_ids_plain    tokenizers.Tokenizer.from_file("tokenizer.json"),
                           only where they differ from the above (Transformers 5
                           rebuilds e.g. LlamaTokenizer's pipeline in code)
  decoded / decoded_skip   AutoTokenizer.decode(ids, skip_special_tokens=F/T)
  hf_decoded / hf_decoded_skip   the same with tokenizers.Tokenizer, if different

Invalid UTF-8: Python strings cannot hold it, so a case given as bytes
(input_hex) is tokenized as bytes.decode("utf-8", errors="replace") -- what a
server receiving raw bytes hands to Hugging Face -- and vlm must give the same
ids for the raw bytes.
"""
import argparse
import json
import os
import sys

import tokenizers
import transformers
from tokenizers import Tokenizer
from transformers import AutoTokenizer

CORPUS = [
    ("empty", ""),
    ("english", "Hello world! The quick brown fox jumps over the lazy dog."),
    ("contractions", "I'm sure they'll say it's what we'd've DONE, isn't IT'S?"),
    ("leading_spaces", "   leading and trailing spaces   "),
    ("single_space", " "),
    ("mixed_whitespace", "tabs\tand\t\tnewlines\n\nand\r\nwindows\n   \n\t indented\n"),
    ("newlines_only", "\n\n\n"),
    ("numbers", "1 12 123 1234 12345 3.14159 -42 1,000,000 2024-01-31 0x1F"),
    ("code", "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n\n"
             "int main(void) { printf(\"%d\\n\", x->y[3]); return 0; }\n"),
    ("json", '{"key": [1, 2.5, null], "nested": {"a": "b"}}'),
    ("cjk", "日本語のテキストです。中文文本，还有한국어 텍스트。"),
    ("emoji", "Emoji: 😀👍🏽 👨‍👩‍👧‍👦 🇫🇷 ✨ done"),
    ("accents", "café naïve résumé Ångström ﬁ ① ｆｕｌｌｗｉｄｔｈ e\u0301"),
    ("cyrillic_arabic", "Привет мир! مرحبا بالعالم שלום"),
    ("punctuation", "Wait... what?! (yes) [no] {maybe} <tag> a--b ~~~ ***"),
    ("url", "See https://example.com/path?q=1&r=two#frag or mail a.b@c.de"),
    ("long_word", "a" * 300 + " " + "xyz" * 50),
    ("mixed", "Mixed: English, 中文, русский, 1234, emoji 🎉, code `x = y + 1;`\n\tEnd."),
]

INVALID_UTF8 = [
    ("invalid_continuation", b"abc\x80def"),
    ("invalid_truncated", b"caf\xc3"),
    ("invalid_overlong", b"x\xc0\xafy"),
    ("invalid_surrogate", b"\xed\xa0\x80z"),
    ("invalid_mixed", b"ok \xf0\x9f\x98 \xff\xfe end \xe6\x97\xa5"),
]


def special_cases(fast):
    """Text containing the tokenizer's own special and added tokens."""
    specials = [t for t in (fast.bos_token, fast.eos_token) if t]
    added = sorted(fast.get_added_vocab().items(), key=lambda item: item[1])
    extra = [content for content, _ in added if content not in specials][:3]
    tokens = specials + extra
    if not tokens:
        return []
    joined = " ".join(tokens)
    return [
        ("special_tokens", f"{tokens[0]}Hello{tokens[-1]} and {joined}"),
        ("special_adjacent", "x" + "".join(tokens) + "y\n" + tokens[0] + " " + tokens[0]),
    ]


def record(fast, raw, name, text, input_hex=None):
    case = {"name": name}
    if input_hex is None:
        case["input"] = text
    else:
        case["input_hex"] = input_hex
    ids = fast(text)["input_ids"]
    ids_plain = fast(text, add_special_tokens=False)["input_ids"]
    case["ids"] = ids
    case["ids_plain"] = ids_plain
    hf_ids = raw.encode(text).ids
    hf_ids_plain = raw.encode(text, add_special_tokens=False).ids
    if hf_ids != ids:
        case["hf_ids"] = hf_ids
    if hf_ids_plain != ids_plain:
        case["hf_ids_plain"] = hf_ids_plain
    case["decoded"] = fast.decode(ids, skip_special_tokens=False)
    case["decoded_skip"] = fast.decode(ids, skip_special_tokens=True)
    hf_decoded = raw.decode(hf_ids, skip_special_tokens=False)
    hf_decoded_skip = raw.decode(hf_ids, skip_special_tokens=True)
    if hf_ids != ids or hf_decoded != case["decoded"]:
        case["hf_decoded"] = hf_decoded
    if hf_ids != ids or hf_decoded_skip != case["decoded_skip"]:
        case["hf_decoded_skip"] = hf_decoded_skip
    return case


def make(directory, name):
    fast = AutoTokenizer.from_pretrained(directory)
    raw = Tokenizer.from_file(os.path.join(directory, "tokenizer.json"))
    cases = []
    for case_name, text in CORPUS + special_cases(fast):
        cases.append(record(fast, raw, case_name, text))
    for case_name, data in INVALID_UTF8:
        cases.append(record(fast, raw, case_name, data.decode("utf-8", errors="replace"),
                            input_hex=data.hex()))
    return {
        "tokenizer": name,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "class": type(fast).__name__,
        "cases": cases,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in sorted(os.listdir(args.fixtures)):
        directory = os.path.join(args.fixtures, name)
        if not os.path.isfile(os.path.join(directory, "tokenizer.json")):
            continue
        golden = make(directory, name)
        path = os.path.join(args.out, name + ".json")
        with open(path, "w", encoding="utf-8") as out:
            json.dump(golden, out, ensure_ascii=False, indent=None, separators=(",", ":"))
            out.write("\n")
        print(f"{path}: {len(golden['cases'])} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
