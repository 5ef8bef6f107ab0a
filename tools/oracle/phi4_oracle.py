"""The Phi-4-multimodal runner of the oracle harness (kind "phi4"): its
processor files, its LoRA adapters and golden cases through
Phi4MultimodalForCausalLM (AutoModelForCausalLM; the 5.23 auto classes
refuse it as image-text-to-text).

LoRA. Transformers 5.23's modeling code has no adapters: the published
checkpoint keeps PEFT adapters in `vision-lora/` and `speech-lora/`, which the
caller loads and selects (image present -> vision, audio only -> speech,
text only -> none, as the original phi4mm remote code chose). PEFT is not
in the oracle venv, so the runner applies an adapter exactly as PEFT's
unmerged LoRA Linear computes it: base(x) + lora_B(lora_A(x)) * (alpha / r),
on the targeted Linear modules, in the model's dtype. A case's `adapter`
names the subfolder (None: the base model), recorded in the manifest for
`vlm compare`.

LongRoPE. Phi-4's rotary embedding picks short or long factors per forward
call from max(position_ids) + 1 against original_max_position_embeddings;
prepare_inputs_for_generation drops the cache whenever the sequence has
reached the switch while the cache holds no more than the switch length,
which in 5.23 (next_sequence_length is kept, so only the new token is fed)
means: once a generation crosses the switch, every later step runs its one
token at its position with no past at all. The `crossing` case records
exactly that (its greedy tokens after the switch come from single-token
forwards); the `long_prompt` case prefills past the switch (long factors
for every row).
"""
import json
import math
import os
import shutil
import tempfile
import zlib

import torch
import transformers
from PIL import Image
from safetensors.torch import save_file

import harness

ADAPTER_TARGETS = ("self_attn.qkv_proj", "self_attn.o_proj", "mlp.gate_up_proj", "mlp.down_proj")


def write_tokenizer_tokens(model_dir):
    """The processor reads tokenizer.image_token / audio_token: the published
    tokenizer_config.json names them in extra_special_tokens."""
    path = os.path.join(model_dir, "tokenizer_config.json")
    with open(path, encoding="utf-8") as handle:
        settings = json.load(handle)
    settings["extra_special_tokens"] = {"image_token": "<|endoftext10|>", "audio_token": "<|endoftext11|>"}
    harness.write_json(path, settings)


def image_processor(family):
    """Phi4MultimodalImageProcessor with the family's image settings."""
    settings = family.processor.get("image", {})
    kwargs = {}
    if "size" in settings:
        kwargs["size"] = {"height": settings["size"], "width": settings["size"]}
    for key in ("patch_size", "dynamic_hd"):
        if key in settings:
            kwargs[key] = settings[key]
    return transformers.Phi4MultimodalImageProcessor(**kwargs)


AUDIO = os.path.join(os.path.dirname(harness.ROOT), "shared", "fixtures", "media", "audio")


def load_clip(entry):
    """One clip: a fixture file, or a tuple of them end to end, as
    transformers.audio_utils.load_audio(soundfile backend) gives each."""
    from transformers.audio_utils import load_audio
    names = entry if isinstance(entry, tuple) else (entry,)
    parts = [load_audio(os.path.join(AUDIO, name), sampling_rate=16000, backend="soundfile") for name in names]
    import numpy
    return numpy.concatenate(parts) if len(parts) > 1 else parts[0]


def make_processor(family, model_dir):
    """Phi4MultimodalProcessor over the model's tokenizer."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    return transformers.Phi4MultimodalProcessor(
        image_processor=image_processor(family),
        audio_processor=transformers.Phi4MultimodalFeatureExtractor(),
        tokenizer=tokenizer, chat_template=family.chat_template)


def write_processor_files(family, model_dir):
    """processor_config.json (image and audio processors nested) as the
    pinned Transformers saves it."""
    processor = make_processor(family, model_dir)
    with tempfile.TemporaryDirectory() as scratch:
        processor.save_pretrained(scratch)
        for name in sorted(os.listdir(scratch)):
            if name.startswith(("preprocessor_config", "processor_config")):
                shutil.copyfile(os.path.join(scratch, name), os.path.join(model_dir, name))


def _adapter_tensor(seed, name, shape, scale):
    generator = torch.Generator().manual_seed(seed * 1000003 + zlib.crc32(name.encode()))
    return (scale * torch.randn(shape, generator=generator, dtype=torch.float32)).contiguous()


def write_adapters(family, model_dir):
    """Each adapter as PEFT saves one: adapter_config.json and
    adapter_model.safetensors with base_model.model.<module>.lora_{A,B}.weight
    (the adapter name left out), in the checkpoint's dtype. lora_B is random
    (PEFT starts it at zero) so the adapters change the outputs."""
    config = transformers.AutoConfig.from_pretrained(model_dir)
    hidden, heads = config.hidden_size, config.num_attention_heads
    head_dim = hidden // heads
    outputs = {"self_attn.qkv_proj": (heads + 2 * config.num_key_value_heads) * head_dim,
               "self_attn.o_proj": hidden, "mlp.gate_up_proj": 2 * config.intermediate_size,
               "mlp.down_proj": hidden}
    inputs = {"self_attn.qkv_proj": hidden, "self_attn.o_proj": heads * head_dim,
              "mlp.gate_up_proj": hidden, "mlp.down_proj": config.intermediate_size}
    for index, (subfolder, rank, alpha) in enumerate(family.processor["adapters"]):
        directory = os.path.join(model_dir, subfolder)
        os.makedirs(directory, exist_ok=True)
        tensors = {}
        for layer in range(config.num_hidden_layers):
            for target in ADAPTER_TARGETS:
                module = f"model.layers.{layer}.{target}"
                a = f"base_model.model.{module}.lora_A.weight"
                b = f"base_model.model.{module}.lora_B.weight"
                tensors[a] = _adapter_tensor(family.seed + index, a, (rank, inputs[target]), inputs[target] ** -0.5)
                tensors[b] = _adapter_tensor(family.seed + index, b, (outputs[target], rank), 0.5 * rank ** -0.5)
        dtype = harness.TORCH_DTYPES[family.weights_dtype]
        save_file({name: tensors[name].to(dtype) for name in sorted(tensors)},
                  os.path.join(directory, "adapter_model.safetensors"), metadata={"format": "pt"})
        harness.write_json(os.path.join(directory, "adapter_config.json"), {
            "base_model_name_or_path": None, "bias": "none", "fan_in_fan_out": False,
            "inference_mode": True, "init_lora_weights": True, "lora_alpha": alpha, "lora_dropout": 0.0,
            "modules_to_save": None, "peft_type": "LORA", "r": rank, "revision": None,
            "target_modules": "model.layers.\\d+.((self_attn.(qkv|o)_proj)|(mlp.(gate_up|down)_proj))",
            "task_type": "CAUSAL_LM", "use_dora": False, "use_rslora": False})


def apply_adapter(model, model_dir, subfolder, dtype):
    """PEFT's unmerged LoRA on every module the adapter file holds."""
    from safetensors.torch import load_file
    with open(os.path.join(model_dir, subfolder, "adapter_config.json"), encoding="utf-8") as handle:
        settings = json.load(handle)
    scale = settings["lora_alpha"] / settings["r"]
    tensors = load_file(os.path.join(model_dir, subfolder, "adapter_model.safetensors"))
    modules = dict(model.named_modules())
    for name in sorted(tensors):
        if not name.endswith(".lora_A.weight"):
            continue
        module_name = name[len("base_model.model."):-len(".lora_A.weight")]
        module = modules[module_name]
        a = tensors[name].to(dtype)
        b = tensors[name.replace("lora_A", "lora_B")].to(dtype)

        def forward(x, base=module.forward, a=a, b=b):
            return base(x) + torch.nn.functional.linear(torch.nn.functional.linear(x, a), b) * scale
        module.forward = forward
    return scale


IMAGE_INPUTS = ("image_pixel_values", "image_sizes", "image_attention_mask")


def _image_stages(golden, model, inputs, num_img_tokens):
    """The image path's stages: the processor's tensors, the tower's
    NaViT position ids and hidden_states[feature_layer] of each image's
    global image and crops (a batch's padding crops left out), the 2x2
    average-pooled patch features, as Phi4MultimodalImageEmbedding computes
    them."""
    pixels, sizes, masks = (inputs[name] for name in IMAGE_INPUTS)
    golden.tensor("processor.image_pixel_values", pixels, "pixel_values", dtype="float32",
                  layout="[images, 1 + max crops, 3, S, S]: the global image, then the crops row by row; "
                         "images with fewer crops padded with zeros")
    golden.tensor("processor.image_attention_mask", masks, "exact", dtype="float32",
                  layout="[images, 1 + max crops, S / patch, S / patch]")
    golden.tensor("processor.image_sizes", sizes, "exact", dtype="float32", layout="[images, (height, width)]")
    golden.tensor("processor.num_img_tokens", torch.as_tensor(num_img_tokens), "exact", dtype="float32")
    embed = model.model.embed_tokens_extend.image_embed
    crop = embed.crop_size
    real = torch.cat([torch.arange(1 + (int(h) // crop) * (int(w) // crop)) + i * pixels.shape[1]
                      for i, (h, w) in enumerate(sizes.tolist())])
    # The padding crop slots' masks are ones, so leaving them out keeps the
    # tower's mode that the model's call has: causal under sdpa
    # (Phi4MultimodalVisionAttention.is_causal) unless a real patch is padded.
    flat = pixels.flatten(0, 1).to(embed.img_processor.embeddings.patch_embedding.weight.dtype)[real]
    flat_mask = masks.flatten(0, 1).to(torch.bool)[real]
    positions = {}
    handle = embed.img_processor.embeddings.position_embedding.register_forward_pre_hook(
        lambda _m, args: positions.setdefault("ids", args[0].detach().clone()))
    tower = embed.img_processor(flat, patch_attention_mask=flat_mask, output_hidden_states=embed.layer_idx)
    handle.remove()
    golden.tensor("vision_position_ids", positions["ids"], "exact", encoder_input="position_ids",
                  note="Phi4MultimodalVisionEmbeddings' bucketed (NaViT) position ids, [crops, patches]")
    golden.tensor("vision_encoder", tower.hidden_states[embed.layer_idx], "hidden",
                  note="hidden_states[feature_layer] of every global image and crop, [crops, patches, hidden]")
    golden.tensor("vision_features", embed.get_img_features(flat, attention_mask=flat_mask), "hidden",
                  note="image_token_compression (AvgPool2d 2x2) of the above, [crops, tokens, hidden]")


def run(family, case, model_dir, manifest):
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    processor = make_processor(family, model_dir)
    manifest["auto_processor"] = {"processor": type(processor).__name__,
                                  "image_processor": type(processor.image_processor).__name__,
                                  "audio_processor": type(processor.audio_processor).__name__}
    if case.messages is not None:
        text = tokenizer.apply_chat_template(case.messages, add_generation_prompt=True, tokenize=False)
    else:
        text = case.prompt
    images = [Image.open(os.path.join(harness.MEDIA, name)) for name in case.images]
    clips = [load_clip(entry) for entry in case.audio]
    inputs = processor(text=text, images=images or None, audio=clips or None, return_tensors="pt")
    num_img_tokens = None
    if images:  # the processor drops it (unused_input_names); its image processor's own call has it
        alone = processor.image_processor(images, return_tensors="pt")
        num_img_tokens = alone["num_img_tokens"]
        for name in IMAGE_INPUTS:
            if not torch.equal(alone[name], inputs[name]):
                raise SystemExit(f"{case.name}: the image processor alone gives another {name}")
    keys = (("input_ids", "attention_mask") + (IMAGE_INPUTS if images else ())
            + (("audio_input_features", "audio_embed_sizes") if clips else ()))
    inputs = {key: inputs[key] for key in keys}
    manifest.update(prompt=text, add_special_tokens=True, messages=case.messages, adapter=case.adapter)
    if images:
        manifest["images"] = list(case.images)
    if clips:
        manifest["audio"] = [list(entry) if isinstance(entry, tuple) else entry for entry in case.audio]
    dtype = harness.TORCH_DTYPES[case.dtype]
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype).eval()
    golden = harness.Golden(case.dtype)
    golden.stages.append(harness.checkpoint_stage(model, case.dtype))
    if case.adapter:
        manifest["adapter_scale"] = apply_adapter(model, model_dir, case.adapter, dtype)
    if images:
        with torch.no_grad():
            _image_stages(golden, model, inputs, num_img_tokens)
    if clips:
        audio_stages(golden, model, inputs, case)
    golden.tensor("input_ids", inputs["input_ids"], "exact")
    golden.tensor("attention_mask", inputs["attention_mask"], "exact")
    captured, handles = harness.capture(model.model, model.model.rotary_emb)
    embeddings = {}
    # What the decoder layers get: the token embeddings with the media
    # features merged (embed_tokens_extend), or the plain ones.
    merged = model.model.embed_tokens_extend if clips else model.model.embed_tokens
    handles.append(merged.register_forward_hook(
        lambda _m, _a, out: embeddings.setdefault("value", out.detach().clone())))
    handles.append(model.model.embed_tokens_extend.register_forward_hook(
        lambda _m, _a, out: embeddings.setdefault("merged", out.detach().clone())))
    with torch.no_grad():
        outputs = model(**inputs, use_cache=True, past_key_values=transformers.DynamicCache())
    for handle in handles:
        handle.remove()
    extra = []
    if images:
        # What the decoder received: the projected image features in the
        # image tokens' rows (inputs_embeds after the image embedding).
        merged = embeddings["merged"][0]
        image_rows = inputs["input_ids"][0] == model.config.vision_config.image_token_id
        golden.tensor("projector", merged[image_rows], "hidden",
                      note="img_projection_down(gelu(img_projection_up(x))) of the stitched features: each "
                           "image's crops (rows cut to the useful area, sub_GN after each), glb_GN, the global "
                           "image (sub_GN after each row)")
        golden.tensor("input_embeddings", merged, "hidden")
        ids = inputs["input_ids"][0].tolist()
        token = model.config.vision_config.image_token_id
        extra = [ids.index(token), len(ids) - 1 - ids[::-1].index(token)]
    else:
        golden.tensor("input_embeddings", embeddings["value"][0], "hidden" if clips else "exact")
    length = inputs["input_ids"].shape[1]
    switch = model.config.original_max_position_embeddings
    manifest["rope_switch"] = {"original_max_position_embeddings": switch, "prompt_length": length,
                               "factors": "long" if length > switch else "short"}
    with torch.no_grad():
        harness.add_tail_stages(golden, model, inputs, outputs, captured, case, tokenizer, extra)
    if case.dtype != "float32" and (images or clips):
        _media_tolerances_from_float32(golden, family, case, model_dir, inputs, num_img_tokens)
    return golden


# The towers' and projections' stages of a bfloat16 case.
MEDIA_STAGES = ("vision_encoder", "vision_features", "audio_encoder", "audio_projector",
                "audio_projector_vision_speech", "projector", "input_embeddings")


def _media_tolerances_from_float32(golden, family, case, model_dir, inputs, num_img_tokens):
    """vlm computes in float32 whatever the dtype (include/vlm/model.h), so a
    bfloat16 stage can be no closer to Transformers' bfloat16 run than
    Transformers' own float32 run is. The towers' activations (rms ~5, up
    to ~20 over 1024-patch attention) put that bfloat16 noise above the
    harness's fixed hidden tolerance (0.55 on vision_encoder against 0.06 +
    2%): each media stage's max_abs becomes the larger of the harness's and
    twice the largest |float32 - bfloat16| of Transformers on the same
    inputs, recorded as float32_vs_bfloat16. The float32 stages of the
    family's float32 cases keep the tight check of the same code."""
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    if case.adapter:
        apply_adapter(model, model_dir, case.adapter, torch.float32)
    reference = harness.Golden("float32")
    with torch.no_grad():
        if "image_pixel_values" in inputs:
            _image_stages(reference, model, inputs, num_img_tokens)
        if "audio_input_features" in inputs:
            audio_stages(reference, model, inputs, case)
        merged = {}
        handle = model.model.embed_tokens_extend.register_forward_hook(
            lambda _m, _a, out: merged.setdefault("value", out.detach().clone()))
        model(**inputs, use_cache=True, past_key_values=transformers.DynamicCache())
        handle.remove()
    merged = merged["value"][0]
    if "image_pixel_values" in inputs:
        reference.tensor("projector", merged[inputs["input_ids"][0] == model.config.vision_config.image_token_id],
                         "hidden")
    reference.tensor("input_embeddings", merged, "hidden")
    for stage in golden.stages:
        if stage["name"] not in MEDIA_STAGES:
            continue
        difference = float((reference.tensors[stage["name"]] - golden.tensors[stage["name"]]).abs().max())
        widened = math.ceil(2 * difference * 100) / 100  # two decimals, rounded up
        stage["float32_vs_bfloat16"] = difference
        stage["tolerance"]["max_abs"] = max(stage["tolerance"]["max_abs"], widened)


def audio_stages(golden, model, inputs, case):
    """The feature extractor's outputs (one clip: [frames, mels] and its
    embed size), Phi4MultimodalAudioModel's output (audio_encoder, [rows,
    audio hidden]) and the projection the request's media choose
    (audio_projector, [audio_embed_sizes, hidden]: "speech" without an
    image, as Phi4MultimodalFeatureEmbedding decides), and the other one
    (audio_projector_vision_speech: what the same clip becomes in a request
    with an image)."""
    if len(case.audio) != 1:
        raise SystemExit(f"{case.name}: the audio stages hold one clip")
    features = inputs["audio_input_features"]
    sizes = inputs["audio_embed_sizes"]
    golden.tensor("processor.audio_input_features", features[0], "pixel_values", dtype="float32",
                  audio_processor="Phi4MultimodalFeatureExtractor", layout="[frames, mels] of the one clip")
    golden.tensor("processor.audio_embed_sizes", sizes, "exact", dtype="float32")
    embed = model.model.embed_tokens_extend.audio_embed
    dtype = embed.up_proj_for_speech.bias.dtype
    with torch.no_grad():
        encoded = embed.encoder(features.to(dtype), None)
        up = embed.up_proj_for_speech(encoded)
        projected = embed.down_proj_for_speech(torch.nn.functional.gelu(up))
        vision_up = embed.up_proj_for_vision_speech(encoded)
        vision_projected = embed.down_proj_for_vision_speech(torch.nn.functional.gelu(vision_up))
    golden.tensor("audio_encoder", encoded[0], "hidden",
                  note="Phi4MultimodalAudioModel output (conv subsampling, conformer blocks), [rows, hidden]")
    golden.tensor("audio_projector", projected[0, :int(sizes[0])], "hidden", projection_mode="speech",
                  note="up_proj_for_speech, gelu, down_proj_for_speech: the rows that replace the audio tokens")
    golden.tensor("audio_projector_vision_speech", vision_projected[0, :int(sizes[0])], "hidden",
                  projection_mode="vision",
                  note="up/down_proj_for_vision_speech: the rows in a request that also has an image")
