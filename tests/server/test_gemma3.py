"""Gemma 3 through `vlm serve`: the Qwen2-VL server tests (test_qwen2_vl.py)
on the tiny Gemma 3 (tests/goldens/gemma3: real Gemma 3 tokenizer, each
image a bidirectional block of soft tokens longer than the sliding window):
every golden case streamed gives Transformers' greedy text and prompt
length, and 16 mixed text and image requests on 4 slots each equal the
request alone; on cpu in prefill chunks of 8 rows, with pan-and-scan on (--processor-kwargs, its own
server: the setting is the server's), and on xla with a decoding prefill
chunk of 8 rows, so an image block that starts inside a chunk while others
stream is prefilled in a chunk stretched over it.

Run: .venv-server/bin/python tests/server/test_gemma3.py [-v]"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_qwen2_vl as qwen2_vl  # noqa: E402

PAN_AND_SCAN = {"do_pan_and_scan": True}


def cases_with_kwargs(family, kwargs):
    return [(name, manifest) for name, manifest in qwen2_vl.golden_cases(family)
            if (manifest.get("processor_kwargs") or None) == kwargs]


class Gemma3ServerTests(qwen2_vl.Qwen2VLServerTests):
    family = "gemma3"
    # Chunks of 8 rows: every image block (16 soft tokens) starts inside
    # one and is prefilled in a chunk stretched over it.
    arguments = qwen2_vl.Qwen2VLServerTests.arguments + ("--prefill-chunk", "8", "--decoding-prefill-chunk", "8")

    @classmethod
    def cases(cls):
        return cases_with_kwargs(cls.family, None)


class Gemma3PanAndScanServerTests(Gemma3ServerTests):
    arguments = qwen2_vl.Qwen2VLServerTests.arguments + ("--processor-kwargs", json.dumps(PAN_AND_SCAN))

    @classmethod
    def cases(cls):
        return cases_with_kwargs(cls.family, PAN_AND_SCAN)


class Gemma3XlaServerTests(qwen2_vl.Qwen2VLXlaServerTests):
    family = "gemma3"
    arguments = qwen2_vl.Qwen2VLXlaServerTests.arguments + ("--decoding-prefill-chunk", "8")

    @classmethod
    def cases(cls):
        return cases_with_kwargs(cls.family, None)


if __name__ == "__main__":
    unittest.main()
