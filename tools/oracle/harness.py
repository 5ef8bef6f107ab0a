"""Builds tiny checkpoints and runs golden cases through Hugging Face
Transformers, writing stage-by-stage goldens for `vlm compare`.

Everything here is deterministic: weights come from per-parameter seeded
generators, torch runs on one thread with deterministic algorithms, and files
are written in a fixed order, so regenerating reproduces the checked-in bytes
(on the same CPU architecture; see README.md).
"""
import copy
import hashlib
import json
import os
import shutil
import tempfile
import zlib

import re

import numpy as np
import torch
import transformers
from PIL import Image
from safetensors import safe_open
from safetensors.torch import save_file

import tokenizer_real

FORMAT = "vlm-golden/1"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MEDIA = os.path.join(os.path.dirname(ROOT), "shared", "fixtures", "media", "images")

# Tolerances per dtype Transformers ran in, per kind of stage: (max_abs, max_rel),
# an element matching when |vlm - golden| <= max_abs + max_rel * |golden|.
TOLERANCES = {
    "float32": {"pixel_values": (1e-5, 1e-5), "hidden": (1e-4, 1e-4), "logits": (1e-3, 1e-4),
                "kv": (1e-4, 1e-4), "exact": (0.0, 0.0)},
    "bfloat16": {"pixel_values": (1e-5, 1e-5), "hidden": (6e-2, 2e-2), "logits": (2.5e-1, 2e-2),
                 "kv": (6e-2, 2e-2), "exact": (0.0, 0.0)},
}
# A greedy step whose top-1/top-2 logit gap is below this could flip under
# float32 reordering (twice the float32 logits tolerance) or bf16 rounding
# (about three bf16 ulps at the tiny models' logit magnitudes); such cases are
# refused.
MIN_MARGIN = {"float32": 2e-3, "bfloat16": 0.1}

TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def versions():
    import PIL
    import tokenizers
    import torchvision
    return {"transformers": transformers.__version__, "torch": torch.__version__.split("+")[0],
            "torchvision": torchvision.__version__.split("+")[0], "tokenizers": tokenizers.__version__,
            "pillow": PIL.__version__, "numpy": np.__version__}


def set_deterministic():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(0)


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(value, indent=1, ensure_ascii=False) + "\n")


def merge(base, override):
    result = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merge(result[key], value)
        else:
            result[key] = value
    return result


# ---------------------------------------------------------------------------
# Tiny checkpoints

def fill_parameter(name, parameter, seed):
    """Seeded per name, so adding a tensor never changes the others. Scales
    keep activations O(1) and logits spread out (clear greedy margins)."""
    generator = torch.Generator().manual_seed(seed * 1000003 + zlib.crc32(name.encode()))
    values = torch.randn(parameter.shape, generator=generator, dtype=torch.float32)
    leaf = name.rsplit(".", 1)[-1]
    if "norm" in name and leaf == "weight":
        values = 1.0 + 0.1 * values
    elif leaf == "bias":
        values = 0.1 * values
    elif "embed_tokens" in name or "lm_head" in name:
        values = 0.5 * values
    elif "position_embedding" in name or "class_embedding" in name:
        values = 0.5 * values
    elif name.endswith(".mlp.gate.weight"):
        # MoE routers: logits spread out, so top-k choices are clear of ties.
        values = 4.0 * values / np.sqrt(parameter[0].numel())
    elif parameter.dim() >= 2:
        values = values / np.sqrt(parameter[0].numel())
    with torch.no_grad():
        parameter.copy_(values.to(parameter.dtype))


def model_class(family):
    if family.kind in ("llava", "gemma3", "qwen2_vl"):
        return transformers.AutoModelForImageTextToText
    return transformers.AutoModelForCausalLM


def make_config(family, midsize):
    values = merge(family.config, family.midsize_config) if midsize else copy.deepcopy(family.config)
    model_type = values.pop("model_type")
    values.pop("architectures", None)
    config = transformers.CONFIG_MAPPING[model_type](**values)
    config.architectures = family.config["architectures"]
    return config


def write_tokenizer(family, model_dir):
    tokenizer = family.tokenizer()
    tokenizer.save(os.path.join(model_dir, "tokenizer.json"))
    config = dict(family.tokenizer_config, chat_template=family.chat_template)
    write_json(os.path.join(model_dir, "tokenizer_config.json"), config)
    special = {key: config[key] for key in ("bos_token", "eos_token", "unk_token", "pad_token")
               if config.get(key)}
    write_json(os.path.join(model_dir, "special_tokens_map.json"), special)


def write_processor(family, model_dir):
    """LLaVA's processor files as the pinned Transformers saves them."""
    if family.kind == "gemma3":
        import gemma3_oracle
        return gemma3_oracle.write_processor(family, model_dir)
    if family.kind == "qwen2_vl":
        import qwen2_vl_oracle
        return qwen2_vl_oracle.write_processor(family, model_dir)
    if family.kind == "phi4":
        import phi4_oracle
        phi4_oracle.write_tokenizer_tokens(model_dir)
        phi4_oracle.write_processor_files(family, model_dir)
        return phi4_oracle.write_adapters(family, model_dir)
    settings = family.processor
    size = settings["image_size"]
    image_processor = transformers.CLIPImageProcessor(
        size={"shortest_edge": size}, crop_size={"height": size, "width": size})
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    processor = transformers.LlavaProcessor(
        image_processor=image_processor, tokenizer=tokenizer, patch_size=settings["patch_size"],
        vision_feature_select_strategy=settings["vision_feature_select_strategy"],
        num_additional_image_tokens=settings["num_additional_image_tokens"],
        image_token=settings["image_token"], chat_template=family.chat_template)
    with tempfile.TemporaryDirectory() as scratch:
        processor.save_pretrained(scratch)
        for name in sorted(os.listdir(scratch)):
            if name.startswith(("preprocessor_config", "processor_config", "chat_template")):
                shutil.copyfile(os.path.join(scratch, name), os.path.join(model_dir, name))


def rename_state_dict(family, model_dir):
    """Rewrites model.safetensors with the family's 4.x names (same bytes,
    same order of tensors by new name)."""
    path = os.path.join(model_dir, "model.safetensors")
    tensors = {}
    with safe_open(path, framework="pt") as handle:
        metadata = handle.metadata()
        for name in handle.keys():
            new = name
            for pattern, replacement in family.v4_renames:
                new = re.sub(pattern, replacement, new)
            tensors[new] = handle.get_tensor(name)
    save_file(tensors, path, metadata=metadata)


def transpose_experts(model_dir):
    """Rewrites model.safetensors with every fused MoE expert tensor's last
    two dimensions swapped: the hub's layout (same names and order)."""
    path = os.path.join(model_dir, "model.safetensors")
    tensors = {}
    with safe_open(path, framework="pt") as handle:
        metadata = handle.metadata()
        for name in handle.keys():
            tensor = handle.get_tensor(name)
            if name.endswith((".mlp.experts.gate_up_proj", ".mlp.experts.down_proj")):
                tensor = tensor.transpose(1, 2).contiguous()
            tensors[name] = tensor
    save_file(tensors, path, metadata=metadata)


def check_loads_cleanly(family, model_dir):
    """Transformers must map every saved tensor (a 4.x layout through its
    conversion mapping) with nothing missing or left over."""
    _, info = model_class(family).from_pretrained(model_dir, dtype=torch.float32, output_loading_info=True)
    problems = {key: value for key, value in info.items() if value and key != "error_msgs"}
    if problems or info.get("error_msgs"):
        raise SystemExit(f"{family.name}: Transformers does not load {model_dir} cleanly: {info}")


def build_model(family, model_dir, midsize=False):
    set_deterministic()
    if os.path.isdir(model_dir):
        shutil.rmtree(model_dir)
    os.makedirs(model_dir)
    if family.real_tokenizer:
        tokenizer_real.save(family, model_dir)
    else:
        write_tokenizer(family, model_dir)
    config = make_config(family, midsize)
    model = model_class(family).from_config(config, dtype=torch.float32)
    for name, parameter in sorted(model.named_parameters()):
        fill_parameter(name, parameter, family.seed)
    model.generation_config.do_sample = False
    if family.weights_dtype != "float32":
        model = model.to(TORCH_DTYPES[family.weights_dtype])
    model.save_pretrained(model_dir)
    if family.v4_renames:
        rename_state_dict(family, model_dir)
    if family.hub_expert_layout:
        transpose_experts(model_dir)
    check_loads_cleanly(family, model_dir)
    if family.quantization:
        import quant_oracle
        reference = quant_oracle.quantize_model(family, model_dir)
        check_loads_cleanly(family, reference)
    if family.processor:
        write_processor(family, model_dir)
    return model_dir


def pack_model(family, model_dir):
    """After the cases ran: a real tokenizer is checked in packed."""
    if family.real_tokenizer:
        tokenizer_real.pack(family, model_dir)


# ---------------------------------------------------------------------------
# Goldens

def checkpoint_stage(model, dtype):
    """Per-parameter digests of the state_dict Transformers built."""
    parameters = []
    for name, tensor in sorted(model.state_dict().items()):
        values = tensor.detach().to(torch.float32).contiguous().cpu()
        flat = values.reshape(-1)
        count = flat.numel()
        indexes = sorted({(i * (count - 1)) // 7 for i in range(8)}) if count else []
        parameters.append({
            "name": name, "dtype": str(tensor.dtype).replace("torch.", ""), "shape": list(tensor.shape),
            "sha256": hashlib.sha256(values.numpy().astype("<f4").tobytes()).hexdigest(),
            "sum": float(values.double().sum()), "abs_sum": float(values.double().abs().sum()),
            "samples": [[i, float(flat[i])] for i in indexes]})
    return {"name": "checkpoint", "dtype": dtype,
            "digest": "sha256 of the float32 little-endian values of each state_dict tensor",
            "parameters": parameters}


class Golden:
    """Collects stages and tensors of one case, then writes them."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.stages = []
        self.tensors = {}

    def tensor(self, name, value, kind, dtype=None, **extra):
        value = value.detach().cpu()
        value = value.to(torch.int64) if kind == "exact" and not value.is_floating_point() else value.float()
        self.tensors[name] = value.contiguous().clone()  # never a view sharing storage
        tolerance = TOLERANCES[dtype or self.dtype][kind]
        stage = {"name": name, "tensor": name, "shape": list(value.shape)}
        if dtype:
            stage["dtype"] = dtype
        stage["tolerance"] = {"max_abs": tolerance[0], "max_rel": tolerance[1]}
        stage.update(extra)
        self.stages.append(stage)

    def write(self, case_dir, manifest):
        if os.path.isdir(case_dir):
            shutil.rmtree(case_dir)
        os.makedirs(case_dir)
        if self.tensors:
            save_file(self.tensors, os.path.join(case_dir, "tensors.safetensors"), metadata={"format": "pt"})
            manifest["tensors"] = "tensors.safetensors"
        manifest["stages"] = self.stages
        write_json(os.path.join(case_dir, "manifest.json"), manifest)


def sample_positions(length, extra=()):
    return sorted({0, 1, length // 2, length - 1, *extra} & set(range(length)))


def kv_tensor(cache, positions):
    layers = []
    for layer in cache.layers:
        keys, values = layer.keys[0], layer.values[0]   # [kv_heads, seq, head_dim]
        if keys.shape[-1] != values.shape[-1]:
            # MLA (Youtu): the cache holds the normed latent as "keys" and the
            # rotated rope key as "values", one head each; vlm's latent layout
            # stores them as one vector per position, latent first.
            layers.append(torch.cat([keys[:, positions], values[:, positions]], dim=-1)[None])
        else:
            layers.append(torch.stack([keys[:, positions], values[:, positions]]))
    # [layer, 2, kv_heads, position, head_dim]; latent: [layer, 1, 1, position, rank + rope]
    return torch.stack(layers)


def greedy(model, inputs, case, dtype, tokenizer, prompt_length):
    output = model.generate(**inputs, do_sample=False, max_new_tokens=case.new_tokens, min_new_tokens=0,
                            output_logits=True, return_dict_in_generate=True)
    tokens = output.sequences[0, prompt_length:].tolist()
    margins = []
    for step in output.logits:
        top = torch.topk(step[0].float(), 2).values
        margins.append(float(top[0] - top[1]))
    if len(tokens) < 16:
        raise SystemExit(f"{case.name}: only {len(tokens)} new tokens (EOS); pick another prompt")
    smallest = min(margins)
    if smallest < MIN_MARGIN[dtype]:
        raise SystemExit(f"{case.name}: greedy margin {smallest:.3g} < {MIN_MARGIN[dtype]} at step "
                         f"{margins.index(smallest)}: float reordering could flip the token; "
                         "pick another prompt or seed")
    return tokens, margins, tokenizer.decode(tokens, skip_special_tokens=True)


# Above this many logits per position, prefill_logits keeps a sample of the
# vocabulary (real vocabularies: 32k-262k columns a row): each stored
# position's top 16 ids and every (vocab // 1024)-th id, listed in the stage's
# vocab_ids. Greedy decoding still checks the argmax over all of it.
FULL_LOGITS_VOCAB = 4096


def logits_stage(golden, logits, positions):
    rows = logits[0, positions]
    vocab = rows.shape[-1]
    if vocab <= FULL_LOGITS_VOCAB:
        golden.tensor("prefill_logits", rows, "logits", positions=positions)
        return
    ids = set(range(0, vocab, vocab // 1024))
    for row in rows:
        ids.update(torch.topk(row.float(), 16).indices.tolist())
    ids = sorted(ids)
    golden.tensor("prefill_logits", rows[:, ids], "logits", positions=positions, vocab_ids=ids,
                  vocab_size=vocab)


def add_tail_stages(golden, model, inputs, outputs, captured, case, tokenizer, extra_positions=()):
    """Stages every decoder shares: positions, logits, KV, greedy, text."""
    length = inputs["input_ids"].shape[1]
    positions = sample_positions(length, extra_positions)
    golden.tensor("position_ids", captured["position_ids"], "exact")
    logits_stage(golden, outputs.logits, positions)
    golden.tensor("kv", kv_tensor(outputs.past_key_values, positions), "kv", positions=positions,
                  layout="[layer, key|value, kv_head, position, head_dim]; keys after RoPE")
    tokens, margins, text = greedy(model, inputs, case, golden.dtype, tokenizer, length)
    golden.stages.append({"name": "greedy_tokens", "tokens": tokens, "margins": margins,
                          "min_margin": min(margins), "max_new_tokens": case.new_tokens})
    golden.stages.append({"name": "text", "text": text, "skip_special_tokens": True})


def capture(module_to_hook_embeds, rotary):
    """Hooks that record what the decoder really gets: its input embeddings
    and the position ids its rotary embedding sees."""
    captured = {}

    def on_embeds(_module, _args, kwargs):
        if kwargs.get("inputs_embeds") is not None and "input_embeddings" not in captured:
            captured["input_embeddings"] = kwargs["inputs_embeds"].detach().clone()

    def on_rotary(_module, args, kwargs):
        if "position_ids" not in captured:
            position_ids = args[1] if len(args) > 1 else kwargs["position_ids"]
            captured["position_ids"] = position_ids.detach().clone()

    handles = [module_to_hook_embeds.register_forward_pre_hook(on_embeds, with_kwargs=True),
               rotary.register_forward_pre_hook(on_rotary, with_kwargs=True)]
    return captured, handles


def prompt_text(tokenizer_or_processor, case):
    if case.messages is not None:
        return tokenizer_or_processor.apply_chat_template(case.messages, add_generation_prompt=True,
                                                          tokenize=False), False
    return case.prompt, True


def run_causal_lm(family, case, model_dir, manifest):
    from tokenizers import Tokenizer
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    text, add_special = prompt_text(tokenizer, case)
    inputs = tokenizer(text, add_special_tokens=add_special, return_tensors="pt")
    raw = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json")).encode(text, add_special_tokens=False)
    manifest["tokenizer_json_agrees"] = raw.ids == inputs["input_ids"][0].tolist()[int(add_special and bool(
        tokenizer.bos_token_id is not None and tokenizer.add_bos_token)):]
    manifest.update(prompt=text, add_special_tokens=add_special, messages=case.messages)
    weights_dir = model_dir
    if family.quantization:  # a GPTQ/AWQ checkpoint: Transformers runs the weights it stands for
        import quant_oracle
        weights_dir = quant_oracle.reference_dir(model_dir)
    model = transformers.AutoModelForCausalLM.from_pretrained(weights_dir, dtype=TORCH_DTYPES[case.dtype]).eval()
    golden = Golden(case.dtype)
    golden.stages.append(checkpoint_stage(model, case.dtype))
    golden.tensor("input_ids", inputs["input_ids"], "exact")
    golden.tensor("attention_mask", inputs["attention_mask"], "exact")
    captured, handles = capture(model.model, model.model.rotary_emb)
    embeddings = {}
    handles.append(model.model.embed_tokens.register_forward_hook(
        lambda _m, _a, out: embeddings.setdefault("value", out.detach().clone())))
    with torch.no_grad():
        # A plain DynamicCache keeps every position of every layer (the
        # model's own cache drops what a sliding window no longer sees).
        outputs = model(**inputs, use_cache=True, past_key_values=transformers.DynamicCache())
    for handle in handles:
        handle.remove()
    golden.tensor("input_embeddings", embeddings["value"][0], "exact")
    with torch.no_grad():
        add_tail_stages(golden, model, inputs, outputs, captured, case, tokenizer)
    return golden


def check_processor_chat_flow(processor, case, images, inputs):
    """processor(text=rendered) is what the goldens record; it must equal the
    processor's own chat flow, apply_chat_template(tokenize=True), which adds
    special tokens only when the prompt does not start with bos_token."""
    if case.messages is None:
        return
    remaining = list(images)
    messages = []
    for message in case.messages:
        content = message["content"]
        if isinstance(content, list):
            content = [dict(part, image=remaining.pop(0)) if part.get("type") == "image" else part
                       for part in content]
        messages.append(dict(message, content=content))
    via_chat = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                             return_dict=True, return_tensors="pt")
    if not torch.equal(via_chat["input_ids"], inputs["input_ids"]):
        raise SystemExit(f"{case.name}: apply_chat_template(tokenize=True) gives other ids than "
                         "processor(text=rendered)")


def run_llava(family, case, model_dir, manifest):
    processor = transformers.AutoProcessor.from_pretrained(model_dir)
    pil_processor = transformers.CLIPImageProcessorPil.from_pretrained(model_dir)
    manifest["auto_processor"] = {"processor": type(processor).__name__,
                                  "image_processor": type(processor.image_processor).__name__,
                                  "slow_image_processor": type(pil_processor).__name__}
    images = [Image.open(os.path.join(MEDIA, name)) for name in case.images]
    text, _ = prompt_text(processor, case)
    inputs = processor(images=images or None, text=text, return_tensors="pt")
    check_processor_chat_flow(processor, case, images, inputs)
    manifest.update(prompt=text, add_special_tokens=not text.startswith(processor.tokenizer.bos_token),
                    messages=case.messages, images=list(case.images))
    model = transformers.LlavaForConditionalGeneration.from_pretrained(
        model_dir, dtype=TORCH_DTYPES[case.dtype]).eval()
    golden = Golden(case.dtype)
    golden.stages.append(checkpoint_stage(model, case.dtype))
    if case.pixel_values_from:
        manifest["pixel_values_from"] = [case.pixel_values_from]
    elif images and case.dtype == "float32":
        # The processor runs in float32 whatever the model dtype; bf16 cases reuse these.
        golden.tensor("processor.pixel_values", inputs["pixel_values"], "pixel_values", dtype="float32",
                      image_processor=manifest["auto_processor"]["image_processor"])
        slow = pil_processor(images, return_tensors="pt")["pixel_values"]
        golden.tensor("processor_pil.pixel_values", slow, "pixel_values", dtype="float32",
                      image_processor=manifest["auto_processor"]["slow_image_processor"],
                      max_abs_vs_default=float((slow - inputs["pixel_values"]).abs().max()))
    golden.tensor("input_ids", inputs["input_ids"], "exact")
    golden.tensor("attention_mask", inputs["attention_mask"], "exact")
    language_model = model.model.language_model
    with torch.no_grad():
        if images:
            pixels = inputs["pixel_values"].to(TORCH_DTYPES[case.dtype])
            tower = model.model.vision_tower(pixels, output_hidden_states=True)
            layer = model.config.vision_feature_layer
            hidden = tower.hidden_states[layer]
            features = hidden[:, 1:]
            projected = model.model.multi_modal_projector(features)
            golden.tensor("vision_encoder", hidden, "hidden", layer=layer,
                          note="hidden_states[vision_feature_layer] of the CLIP tower, CLS first")
            golden.tensor("vision_features", features, "hidden", note="CLS dropped (strategy 'default')")
            golden.tensor("projector", projected, "hidden")
        captured, handles = capture(language_model, language_model.rotary_emb)
        outputs = model(**inputs, use_cache=True)
        for handle in handles:
            handle.remove()
        embeds = captured["input_embeddings"][0]
        if images:
            mask = inputs["input_ids"][0] == model.config.image_token_id
            if not torch.equal(embeds[mask], projected.reshape(-1, projected.shape[-1])):
                raise SystemExit(f"{case.name}: projector output differs from the merged embeddings")
        golden.tensor("input_embeddings", embeds, "hidden")
        ids = inputs["input_ids"][0].tolist()
        extra = []
        if model.config.image_token_id in ids:
            extra = [ids.index(model.config.image_token_id),
                     len(ids) - 1 - ids[::-1].index(model.config.image_token_id)]
        add_tail_stages(golden, model, inputs, outputs, captured, case, processor.tokenizer, extra)
    return golden


def run_gemma3(family, case, model_dir, manifest):
    import gemma3_oracle  # its own file: it imports this one
    return gemma3_oracle.run(family, case, model_dir, manifest)


def run_qwen2_vl(family, case, model_dir, manifest):
    import qwen2_vl_oracle  # its own file: it imports this one
    return qwen2_vl_oracle.run(family, case, model_dir, manifest)


def run_phi4(family, case, model_dir, manifest):
    import phi4_oracle  # its own file: it imports this one
    return phi4_oracle.run(family, case, model_dir, manifest)


RUNNERS = {"causal_lm": run_causal_lm, "llava": run_llava, "gemma3": run_gemma3, "qwen2_vl": run_qwen2_vl,
           "phi4": run_phi4}


def check_shared_pixel_values(case, model_dir, case_dir):
    """The case named in pixel_values_from must hold exactly the pixel values
    this case's processor gives (the one just generated beside this case, or
    the checked-in one)."""
    from safetensors.torch import load_file
    other = os.path.normpath(os.path.join(case_dir, case.pixel_values_from))
    if not os.path.isfile(os.path.join(other, "tensors.safetensors")):
        # the checked-in tree (a --check run of this family alone)
        other = os.path.normpath(os.path.join(ROOT, "tests", "goldens", "family", "case", case.pixel_values_from))
    their_tensors = load_file(os.path.join(other, "tensors.safetensors"))
    with open(os.path.join(other, "manifest.json"), encoding="utf-8") as handle:
        their_images = json.load(handle)["images"]
    processor = transformers.AutoProcessor.from_pretrained(model_dir)
    images = [Image.open(os.path.join(MEDIA, name)) for name in case.images]
    processed = processor.image_processor(images, return_tensors="pt")

    def per_image(pixel_values, grids):
        # [images, ...] or, with grids (Qwen2-VL), each image's patch rows.
        if grids is None:
            return list(pixel_values)
        sizes = [int(t * h * w) for t, h, w in grids.long().tolist()]
        return list(torch.split(pixel_values, sizes))

    ours = per_image(processed["pixel_values"], processed.get("image_grid_thw"))
    theirs = per_image(their_tensors["processor.pixel_values"], their_tensors.get("processor.image_grid_thw"))
    for index, name in enumerate(case.images):
        if name not in their_images or not torch.equal(ours[index], theirs[their_images.index(name)]):
            raise SystemExit(f"{case.name}: {other} does not hold this processor's pixel values for {name}")


def run_case(family, case, model_dir, case_dir):
    set_deterministic()
    manifest = {"format": FORMAT, "family": family.name, "case": case.name,
                "model": os.path.relpath(model_dir, case_dir), "dtype": case.dtype,
                "generator": dict(versions(), threads=1)}
    golden = RUNNERS[family.kind](family, case, model_dir, manifest)
    if case.pixel_values_from:
        check_shared_pixel_values(case, model_dir, case_dir)
    golden.write(case_dir, manifest)
    return case_dir
