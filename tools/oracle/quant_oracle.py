"""GPTQ and AWQ int4 checkpoints in the layouts the hub publishes (the
official Qwen2-VL / Qwen2.5-VL `-GPTQ-Int4` and `-AWQ` repositories), written
from a tiny float32 model, and the dequantized float32 model Transformers
runs for the goldens (no GPTQ or AWQ library is involved: Transformers cannot
run these layouts on a CPU without one, so the goldens come from the weights
they stand for).

The layouts, for a linear layer X with `out` outputs, `inp` inputs and groups
of G inputs (docs/KERNELS.md; checked against AutoGPTQ's QuantLinear.pack and
AutoAWQ's pack order, reference only):

  GPTQ  X.qweight int32 [inp/8, out]: input k of output o in bits 4(k%8).. of
        qweight[k//8, o]; X.qzeros int32 [groups, out/8]: output o's zero - 1
        (the original "gptq" format) in bits 4(o%8).. of qzeros[g, o//8];
        X.scales f16 [groups, out]; X.g_idx int32 [inp] (input k's group;
        with desc_act a permutation of the groups). w = scale * (q - zero).
  AWQ   X.qweight int32 [inp, out/8]: output o of input k in nibble
        [0, 4, 1, 5, 2, 6, 3, 7][o%8] of qweight[k, o//8] (AutoAWQ packs
        columns in the order 0 2 4 6 1 3 5 7); X.qzeros int32 [groups, out/8]
        the same way (the zero itself); X.scales f16 [groups, out]; group k//G.

Every tensor that is not a quantized layer is stored in float16, as the hub's
checkpoints are (torch_dtype float16); the reference model holds those values
widened to float32 and each quantized layer's dequantized weight, which is
exact in float32.
"""
import atexit
import json
import os
import shutil
import tempfile

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import save_file

LAYERS = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
          "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")
AWQ_NIBBLE_OF_COLUMN = [0, 4, 1, 5, 2, 6, 3, 7]

# model_dir -> the reference model directory of this process (generate.py
# builds a family's model, then runs its cases, in one process).
_REFERENCES = {}


def reference_dir(model_dir):
    return _REFERENCES[os.path.abspath(model_dir)]


def _is_quantized(name):
    return name.endswith(".weight") and ".layers." in name and name[:-len(".weight")].endswith(LAYERS)


def _f16(values):
    return values.astype(np.float16).astype(np.float64)


def _quantize(weight, groups_of_input, group_count, symmetric):
    """Per (group, output): a float16 scale, an integer zero in 1..15 (the
    original GPTQ format stores zero - 1, so 0 is avoided) and values
    0..15. Returns q [out, inp], scales [groups, out], zeros [groups, out]."""
    out, inp = weight.shape
    scales = np.zeros((group_count, out))
    zeros = np.zeros((group_count, out), dtype=np.int64)
    q = np.zeros((out, inp), dtype=np.int64)
    for g in range(group_count):
        members = np.nonzero(groups_of_input == g)[0]
        block = weight[:, members].astype(np.float64)
        if symmetric:
            scale = _f16(np.maximum(np.abs(block).max(axis=1), 1e-6) / 7.0)
            zero = np.full(out, 8)
        else:
            low = np.minimum(block.min(axis=1), 0.0)
            high = np.maximum(block.max(axis=1), 0.0)
            scale = _f16(np.maximum(high - low, 1e-6) / 15.0)
            zero = np.clip(np.rint(-low / scale), 1, 15).astype(np.int64)
        scales[g] = scale
        zeros[g] = zero
        q[:, members] = np.clip(np.rint(block / scale[:, None]) + zero[:, None], 0, 15).astype(np.int64)
    return q, scales, zeros


def _dequantize(q, scales, zeros, groups_of_input):
    return ((q - zeros[groups_of_input].T) * scales[groups_of_input].T).astype(np.float32)


def _pack_gptq(q, zeros):
    out, inp = q.shape
    qweight = np.zeros((inp // 8, out), dtype=np.uint32)
    for k in range(inp):
        qweight[k // 8] |= q[:, k].astype(np.uint32) << np.uint32(4 * (k % 8))
    qzeros = np.zeros((zeros.shape[0], out // 8), dtype=np.uint32)
    for o in range(out):
        qzeros[:, o // 8] |= ((zeros[:, o] - 1) & 15).astype(np.uint32) << np.uint32(4 * (o % 8))
    return qweight.view(np.int32), qzeros.view(np.int32)


def _pack_awq(q, zeros):
    out, inp = q.shape
    qweight = np.zeros((inp, out // 8), dtype=np.uint32)
    qzeros = np.zeros((zeros.shape[0], out // 8), dtype=np.uint32)
    for o in range(out):
        shift = np.uint32(4 * AWQ_NIBBLE_OF_COLUMN[o % 8])
        qweight[:, o // 8] |= q[o, :].astype(np.uint32) << shift
        qzeros[:, o // 8] |= zeros[:, o].astype(np.uint32) << shift
    return qweight.view(np.int32), qzeros.view(np.int32)


def quantization_config(settings):
    if settings["method"] == "gptq":
        return {"bits": 4, "checkpoint_format": "gptq", "damp_percent": 0.01, "desc_act": settings["desc_act"],
                "group_size": settings["group_size"], "quant_method": "gptq", "static_groups": False,
                "sym": settings["sym"], "true_sequential": True}
    return {"bits": 4, "group_size": settings["group_size"], "modules_to_not_convert": None, "quant_method": "awq",
            "version": "gemm", "zero_point": True}


def quantize_model(family, model_dir):
    """Rewrites model_dir (a float32 model) as a GPTQ/AWQ checkpoint and keeps
    the float32 model it stands for in a scratch directory (reference_dir)."""
    settings = family.quantization
    group = settings["group_size"]
    path = os.path.join(model_dir, "model.safetensors")
    stored, reference = {}, {}
    rng = np.random.default_rng(family.seed)
    with safe_open(path, framework="pt") as handle:
        metadata = handle.metadata()
        names = sorted(handle.keys())
        tensors = {name: handle.get_tensor(name).numpy() for name in names}
    for name in names:
        value = tensors[name]
        if not _is_quantized(name):
            stored[name] = torch.from_numpy(value.astype(np.float16))
            reference[name] = torch.from_numpy(value.astype(np.float16).astype(np.float32))
            continue
        prefix = name[:-len("weight")]
        out, inp = value.shape
        group_count = inp // group
        if settings.get("desc_act"):
            groups_of_input = np.empty(inp, dtype=np.int64)
            groups_of_input[rng.permutation(inp)] = np.arange(inp) // group
        else:
            groups_of_input = np.arange(inp) // group
        q, scales, zeros = _quantize(value, groups_of_input, group_count, settings.get("sym", False))
        reference[name] = torch.from_numpy(_dequantize(q, scales, zeros, groups_of_input))
        if settings["method"] == "gptq":
            qweight, qzeros = _pack_gptq(q, zeros)
            stored[prefix + "g_idx"] = torch.from_numpy(groups_of_input.astype(np.int32))
        else:
            qweight, qzeros = _pack_awq(q, zeros)
        stored[prefix + "qweight"] = torch.from_numpy(qweight)
        stored[prefix + "qzeros"] = torch.from_numpy(qzeros)
        stored[prefix + "scales"] = torch.from_numpy(scales.astype(np.float16))
    scratch = tempfile.mkdtemp(prefix=f"vlm-oracle-{family.name}-reference-")
    atexit.register(shutil.rmtree, scratch, True)
    for entry in sorted(os.listdir(model_dir)):
        if entry != "model.safetensors":
            shutil.copyfile(os.path.join(model_dir, entry), os.path.join(scratch, entry))
    save_file(reference, os.path.join(scratch, "model.safetensors"), metadata=metadata)
    save_file(stored, path, metadata=metadata)
    config_path = os.path.join(model_dir, "config.json")
    with open(config_path, encoding="utf-8") as handle:
        config = json.load(handle)
    config["quantization_config"] = quantization_config(settings)
    config["dtype"] = "float16"
    with open(config_path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(config, indent=2, sort_keys=True) + "\n")
    _REFERENCES[os.path.abspath(model_dir)] = scratch
    return scratch
