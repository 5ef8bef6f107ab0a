"""Qwen3-VL-MoE through `vlm serve`: the Qwen2-VL server tests
(test_qwen2_vl.py) on the tiny Qwen3-VL-MoE (tests/goldens/qwen3_vl_moe:
sparse MoE layers of 8 experts, top 2, whose tokens route to different
experts, DeepStack, interleaved M-RoPE): every golden case streamed gives
Transformers' greedy text, and 16 mixed text and image requests on 4 slots
each equal the request alone (a row's experts and their sum do not depend
on the rows beside it); on cpu and on xla.

Run: .venv-server/bin/python tests/server/test_qwen3_vl_moe.py [-v]"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_qwen2_vl as qwen2_vl  # noqa: E402


class Qwen3VLMoeServerTests(qwen2_vl.Qwen2VLServerTests):
    family = "qwen3_vl_moe"


class Qwen3VLMoeXlaServerTests(qwen2_vl.Qwen2VLXlaServerTests):
    family = "qwen3_vl_moe"


if __name__ == "__main__":
    unittest.main()
