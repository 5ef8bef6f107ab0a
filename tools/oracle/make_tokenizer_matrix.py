#!/usr/bin/env python3
"""Conformance matrix for Metaspace and added tokens: tests/goldens/tokenizer/matrix.json.

    .venv-ci/bin/python tools/oracle/make_tokenizer_matrix.py [--out tests/goldens/tokenizer/matrix.json]

transformers 5.23.0 and tokenizers 0.23.3 (tools/oracle/requirements-ci.txt; no
torch). Deterministic: the same file on every run. Needs nothing outside the
checkout, and neither does its test (tests/test_tokenizer_conformance.c).

Every variant is the tiny Llama tokenizer's BPE model (tests/models/llama, byte
fallback) under another pipeline, crossing

  - Metaspace prepend_scheme always / first / never, split true / false,
    as the pre-tokenizer, or Llama-2's legacy normalizer (Prepend + Replace)
    with no pre-tokenizer;
  - added tokens around which the text is split: special and not, normalized
    true and false, lstrip, rstrip, single_word;
  - the tokenizer class tokenizer_config.json names: PreTrainedTokenizerFast
    (Transformers keeps tokenizer.json's pipeline), LlamaTokenizer with
    legacy / add_prefix_space (Transformers rebuilds a Metaspace of its own),
    Qwen2Tokenizer and GemmaTokenizer (which rebuild theirs too);

and records, for a set of texts placing those tokens at the start, the end,
between words, next to spaces and next to each other, the ids of
AutoTokenizer (Transformers; add_special_tokens False and True) and of
tokenizers.Tokenizer.from_str (the `tokenizers` library), plus each decode.
"""
import argparse
import json
import os
import sys
import tempfile

import tokenizers
import transformers
from tokenizers import Tokenizer
from transformers import AutoTokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BASE = os.path.join(ROOT, "tests", "models", "llama", "tokenizer.json")

LEADING = [(0, "<unk>"), (1, "<s>"), (2, "</s>")]


def token(token_id, content, special=True, normalized=False, lstrip=False, rstrip=False, single_word=False):
    return {"id": token_id, "content": content, "single_word": single_word, "lstrip": lstrip,
            "rstrip": rstrip, "normalized": normalized, "special": special}


# Added tokens after the 512 ids of the base vocabulary, one per behaviour.
ADDED = [
    token(512, "<img>"),                                      # special, as LLaVA's <image>
    token(513, "<sep>", special=False),                       # plain added token
    token(514, "[N]", special=True, normalized=True),         # matched in normalized text
    token(515, "[P]", special=False, normalized=True),
    token(516, "<L>", lstrip=True),                           # swallows spaces before it
    token(517, "<R>", rstrip=True),                           # and after
    token(518, "<LR>", special=False, lstrip=True, rstrip=True),
    token(519, "<W>", special=False, single_word=True),       # not inside a word
]

TEXTS = [
    "a<img>b", "a <img> b", "<img>b", "a<img>", "<img>", " <img> ", "<img><img>", "a  <img>  b",
    "\n<img>\nb", "<s>a<img>b</s>", "<s> hello", "hello<s>world", " hello", "hello world",
    "x<sep>y", "x <sep> y", "<sep>y", "x[N]y", "x [N] y", "[N]y", "x[P]y", " [P] y",
    "x<L>y", "x  <L>  y", "x<R>y", "x  <R>  y", "x <LR> y", "x<LR>y", "a<W>b", "a <W> b", "<W>",
    "hi <img> there <sep> and [N] then <L> x <R> y",
]


def metaspace(scheme, split):
    return {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": split}


LEGACY_NORMALIZER = {"type": "Sequence", "normalizers": [
    {"type": "Prepend", "prepend": "\u2581"}, {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}

DECODER = {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
    {"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}

BOS_TEMPLATE = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}


def variants():
    """(name, components, tokenizer_config) for every cell of the matrix."""
    generic = {"tokenizer_class": "PreTrainedTokenizerFast"}
    for scheme in ("always", "first", "never"):
        for split in (False, True):
            yield (f"metaspace_{scheme}_split_{str(split).lower()}",
                   {"normalizer": None, "pre_tokenizer": metaspace(scheme, split)}, generic)
    yield ("legacy_normalizer", {"normalizer": LEGACY_NORMALIZER, "pre_tokenizer": None}, generic)
    # LlamaTokenizer rebuilds its pipeline from these (tokenization_llama.py):
    # always (legacy), first, never (no prefix space), whatever the file says.
    for legacy, prefix in ((True, True), (False, True), (False, False)):
        config = {"tokenizer_class": "LlamaTokenizer", "legacy": legacy, "add_prefix_space": prefix}
        yield (f"llama_class_legacy_{str(legacy).lower()}_prefix_{str(prefix).lower()}",
               {"normalizer": None, "pre_tokenizer": metaspace("always", False)}, config)
    # Qwen2Tokenizer and GemmaTokenizer rebuild theirs as well (byte-level
    # with the Qwen2 regex; Replace + Split on spaces), over the same file.
    for prefix in (False, True):
        yield (f"qwen2_class_prefix_{str(prefix).lower()}",
               {"normalizer": None, "pre_tokenizer": metaspace("always", False)},
               {"tokenizer_class": "Qwen2Tokenizer", "add_prefix_space": prefix})
    yield ("gemma_class", {"normalizer": None, "pre_tokenizer": metaspace("always", False)},
           {"tokenizer_class": "GemmaTokenizer"})


def build(components, base):
    data = {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [token(i, c) for i, c in LEADING] + ADDED,
            "normalizer": components["normalizer"], "pre_tokenizer": components["pre_tokenizer"],
            "post_processor": BOS_TEMPLATE, "decoder": DECODER, "model": base["model"]}
    return data


def record(fast, raw, text):
    case = {"input": text}
    for key, special in (("ids", True), ("ids_plain", False)):
        case[key] = fast(text, add_special_tokens=special)["input_ids"]
        theirs = raw.encode(text, add_special_tokens=special).ids
        if theirs != case[key]:
            case["hf_" + key] = theirs
    case["decoded"] = fast.decode(case["ids"], skip_special_tokens=False)
    case["decoded_skip"] = fast.decode(case["ids"], skip_special_tokens=True)
    ids = case.get("hf_ids", case["ids"])
    for key, skip in (("decoded", False), ("decoded_skip", True)):
        theirs = raw.decode(ids, skip_special_tokens=skip)
        if "hf_ids" in case or theirs != case[key]:
            case["hf_" + key] = theirs
    return case


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "goldens", "tokenizer", "matrix.json"))
    arguments = parser.parse_args()
    with open(BASE, encoding="utf-8") as handle:
        base = json.load(handle)
    out = {"transformers": transformers.__version__, "tokenizers": tokenizers.__version__,
           "base": "tests/models/llama/tokenizer.json (its model)", "variants": []}
    for name, components, config in variants():
        data = build(components, base)
        with tempfile.TemporaryDirectory() as scratch:
            with open(os.path.join(scratch, "tokenizer.json"), "w", encoding="utf-8") as handle:
                json.dump(data, handle, ensure_ascii=False)
            tokenizer_config = dict(config, bos_token="<s>", eos_token="</s>", unk_token="<unk>")
            with open(os.path.join(scratch, "tokenizer_config.json"), "w", encoding="utf-8") as handle:
                json.dump(tokenizer_config, handle)
            fast = AutoTokenizer.from_pretrained(scratch)
            raw = Tokenizer.from_str(json.dumps(data, ensure_ascii=False))
            cases = [record(fast, raw, text) for text in TEXTS]
        out["variants"].append({"name": name, "class": type(fast).__name__,
                                "normalizer": components["normalizer"],
                                "pre_tokenizer": components["pre_tokenizer"],
                                "tokenizer_config": tokenizer_config, "cases": cases})
        print(f"{name}: {type(fast).__name__}", file=sys.stderr)
    out["added_tokens"] = [token(i, c) for i, c in LEADING] + ADDED
    out["post_processor"] = BOS_TEMPLATE
    out["decoder"] = DECODER
    with open(arguments.out, "w", encoding="utf-8") as handle:
        json.dump(out, handle, ensure_ascii=False, indent=None, separators=(",", ":"))
        handle.write("\n")


if __name__ == "__main__":
    main()
