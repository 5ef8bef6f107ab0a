"""Qwen3-VL through `vlm serve`: the Qwen2-VL server tests
(test_qwen2_vl.py) on the tiny Qwen3-VL (tests/goldens/qwen3_vl: DeepStack
features added after the first decoder layers, interleaved M-RoPE, a Qwen3
decoder): every golden case streamed gives Transformers' greedy text, and
16 mixed text and image requests on 4 slots each equal the request alone
(the layer features are slot state like the KV); on cpu and on xla.

Run: .venv-server/bin/python tests/server/test_qwen3_vl.py [-v]"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_qwen2_vl as qwen2_vl  # noqa: E402


class Qwen3VLServerTests(qwen2_vl.Qwen2VLServerTests):
    family = "qwen3_vl"


class Qwen3VLXlaServerTests(qwen2_vl.Qwen2VLXlaServerTests):
    family = "qwen3_vl"


if __name__ == "__main__":
    unittest.main()
