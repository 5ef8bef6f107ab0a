"""Qwen2.5-VL through `vlm serve`: the Qwen2-VL server tests
(test_qwen2_vl.py) on the tiny Qwen2.5-VL (tests/goldens/qwen2_5_vl:
windowed vision attention, images whose grids do and do not divide into
whole windows): every golden case streamed gives Transformers' greedy text,
and 16 mixed text and image requests on 4 slots each equal the request
alone; on cpu and on xla.

Run: .venv-server/bin/python tests/server/test_qwen2_5_vl.py [-v]"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_qwen2_vl as qwen2_vl  # noqa: E402


class Qwen2_5VLServerTests(qwen2_vl.Qwen2VLServerTests):
    family = "qwen2_5_vl"


class Qwen2_5VLXlaServerTests(qwen2_vl.Qwen2VLXlaServerTests):
    family = "qwen2_5_vl"


if __name__ == "__main__":
    unittest.main()
