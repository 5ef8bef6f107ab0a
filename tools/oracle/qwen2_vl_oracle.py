"""The Qwen-VL runner of the oracle harness (kind "qwen2_vl"): Qwen2-VL,
Qwen2.5-VL and Qwen3-VL (dense), by the family's model_type: its processor
files and one golden case through the family's ForConditionalGeneration.

Stages beyond the shared tail (harness.add_tail_stages): both image
processors' patches and grids, the expanded ids and mm_token_type_ids, the
3-axis M-RoPE position ids get_rope_index computes and the decode delta it
keeps (rope_deltas), the tower's last hidden state (vision_encoder, patches in
the processor's merge-window order; Qwen2.5-VL: in window order) and the
merger's output (projector), and the merged input embeddings. Qwen2.5-VL
adds the window order (vision_window_index); Qwen3-VL the patch plus
resampled position embeddings (vision_embeddings) and the DeepStack
mergers' features (deepstack_features), which the decoder adds after its
first layers. A case with `refused` records the error Transformers raises
instead (vlm must refuse the same request).
"""
import os
import shutil
import tempfile

import torch
import transformers
from PIL import Image

import harness
from transformers.vision_utils import get_vision_window_index

# model_type -> (processor class, video processor class, model class).
CLASSES = {
    "qwen2_vl": ("Qwen2VLProcessor", "Qwen2VLVideoProcessor", "Qwen2VLForConditionalGeneration"),
    "qwen2_5_vl": ("Qwen2_5_VLProcessor", "Qwen2VLVideoProcessor", "Qwen2_5_VLForConditionalGeneration"),
    "qwen3_vl": ("Qwen3VLProcessor", "Qwen3VLVideoProcessor", "Qwen3VLForConditionalGeneration"),
    "qwen3_vl_moe": ("Qwen3VLProcessor", "Qwen3VLVideoProcessor", "Qwen3VLMoeForConditionalGeneration"),
}
# Families with Qwen3-VL's tower (patch + resampled position embedding, DeepStack).
QWEN3_VL_TOWERS = ("qwen3_vl", "qwen3_vl_moe")
# The smallest gap between the router logits of the k-th and the (k+1)-th
# expert a case may have (the softmax keeps their order): below it vlm's
# float32 (or Transformers' bfloat16) rounding could pick another expert.
# A bfloat16 case instead reruns the decoder with float32 activations on the
# same weights and merged embeddings (what vlm computes) and requires the
# same choices there, with the float32 gap.
MIN_ROUTER_GAP = 1e-3


def _classes(family):
    return tuple(getattr(transformers, name) for name in CLASSES[family.config["model_type"]])


def write_processor(family, model_dir):
    """The family's processor files as the pinned Transformers saves them."""
    settings = family.processor
    extra = {key: settings[key] for key in ("patch_size", "image_mean", "image_std") if key in settings}
    image_processor = transformers.Qwen2VLImageProcessor(
        size={"shortest_edge": settings["min_pixels"], "longest_edge": settings["max_pixels"]}, **extra)
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    processor_class, video_class, _ = _classes(family)
    processor = processor_class(image_processor=image_processor, tokenizer=tokenizer,
                                video_processor=video_class(**extra), chat_template=family.chat_template)
    with tempfile.TemporaryDirectory() as scratch:
        processor.save_pretrained(scratch)
        for name in sorted(os.listdir(scratch)):
            if name.startswith(("preprocessor_config", "processor_config", "chat_template")):
                shutil.copyfile(os.path.join(scratch, name), os.path.join(model_dir, name))


def _processor_stages(golden, case, processor, pil_processor, images, inputs, manifest):
    golden.tensor("processor.pixel_values", inputs["pixel_values"], "pixel_values", dtype="float32",
                  image_processor=manifest["auto_processor"]["image_processor"],
                  layout="[sum of t*h*w patches, channels*temporal_patch*patch*patch], merge windows in order")
    golden.tensor("processor.image_grid_thw", inputs["image_grid_thw"], "exact", dtype="float32")
    if not case.pil_stages:
        return
    slow = pil_processor(images, return_tensors="pt")
    if not torch.equal(slow["image_grid_thw"], inputs["image_grid_thw"]):
        raise SystemExit("the Pil processor gives other grids than the default one")
    golden.tensor("processor_pil.pixel_values", slow["pixel_values"], "pixel_values", dtype="float32",
                  image_processor=manifest["auto_processor"]["slow_image_processor"],
                  max_abs_vs_default=float((slow["pixel_values"] - inputs["pixel_values"]).abs().max()))


def _refusal(family, case, processor, images, text, manifest):
    """The request Transformers refuses: the error it raises, from the
    processor or from the model's placeholder check."""
    golden = harness.Golden(case.dtype)
    model = _classes(family)[2].from_pretrained(manifest["model_dir"], dtype=harness.TORCH_DTYPES[case.dtype]).eval()
    try:
        inputs = processor(images=images or None, text=text, return_tensors="pt")
        with torch.no_grad():
            model(**inputs)
    except (ValueError, IndexError) as error:
        # vlm builds the request's media items from a sibling case's
        # processor tensors for the same image files.
        golden.stages.append({"name": "refusal", "error": f"{type(error).__name__}: {error}"})
        return golden
    raise SystemExit(f"{case.name}: Transformers accepted the request the case says it refuses")


def run(family, case, model_dir, manifest):
    processor = transformers.AutoProcessor.from_pretrained(model_dir)
    pil_processor = transformers.Qwen2VLImageProcessorPil.from_pretrained(model_dir)
    manifest["auto_processor"] = {"processor": type(processor).__name__,
                                  "image_processor": type(processor.image_processor).__name__,
                                  "slow_image_processor": type(pil_processor).__name__}
    images = [Image.open(os.path.join(harness.MEDIA, name)) for name in case.images]
    text, _ = harness.prompt_text(processor, case)
    manifest.update(prompt=text, add_special_tokens=True, messages=case.messages, images=list(case.images))
    if case.refused:
        manifest["model_dir"] = model_dir
        golden = _refusal(family, case, processor, images, text, manifest)
        del manifest["model_dir"]
        return golden
    inputs = processor(images=images or None, text=text, return_tensors="pt")
    harness.check_processor_chat_flow(processor, case, images, inputs)
    model = _classes(family)[2].from_pretrained(model_dir, dtype=harness.TORCH_DTYPES[case.dtype]).eval()
    golden = harness.Golden(case.dtype)
    golden.stages.append(harness.checkpoint_stage(model, case.dtype))
    if case.pixel_values_from:
        manifest["pixel_values_from"] = [case.pixel_values_from]
    elif images and case.dtype == "float32":
        _processor_stages(golden, case, processor, pil_processor, images, inputs, manifest)
    golden.tensor("input_ids", inputs["input_ids"], "exact")
    golden.tensor("attention_mask", inputs["attention_mask"], "exact")
    golden.tensor("mm_token_type_ids", inputs["mm_token_type_ids"], "exact")
    language_model = model.model.language_model
    with torch.no_grad():
        if images:
            tower = _vision_stages(golden, model, inputs, case)
        captured, handles = harness.capture(language_model, language_model.rotary_emb)
        deepstack_seen = {}

        def on_language_model(_module, _args, kwargs):
            deepstack_seen.setdefault("visual_pos_masks", kwargs.get("visual_pos_masks"))

        handles.append(language_model.register_forward_pre_hook(on_language_model, with_kwargs=True))
        routers = _hook_routers(language_model, handles)
        outputs = model(**inputs, use_cache=True, past_key_values=transformers.DynamicCache())
        for handle in handles:
            handle.remove()
        if routers:
            manifest["router"] = _router_record(routers, model.config.text_config, case)
            if case.dtype != "float32":
                _check_float32_routing(family, model_dir, captured, tower if images else None,
                                       deepstack_seen.get("visual_pos_masks"), manifest["router"], case)
        # Text only: no M-RoPE to compute, consecutive positions, delta 0.
        deltas = model.model.rope_deltas if model.model.rope_deltas is not None else torch.zeros(1, dtype=torch.long)
        golden.tensor("rope_deltas", deltas.reshape(-1), "exact",
                      note="decode position = cache length + delta, on every axis")
        embeds = captured["input_embeddings"][0]
        if images:
            mask = inputs["input_ids"][0] == model.config.image_token_id
            if not torch.equal(embeds[mask], tower.pooler_output.to(embeds.dtype)):
                raise SystemExit(f"{case.name}: merger output differs from the merged embeddings")
            if getattr(tower, "deepstack_features", None) is not None and not torch.equal(
                    deepstack_seen["visual_pos_masks"][0], mask):
                raise SystemExit(f"{case.name}: DeepStack's visual positions are not the image tokens")
        golden.tensor("input_embeddings", embeds, "hidden")
        ids = inputs["input_ids"][0].tolist()
        extra = []
        if model.config.image_token_id in ids:
            extra = [ids.index(model.config.image_token_id),
                     len(ids) - 1 - ids[::-1].index(model.config.image_token_id)]
        harness.add_tail_stages(golden, model, inputs, outputs, captured, case, processor.tokenizer, extra)
    return golden


def _hook_routers(language_model, handles):
    """The prefill's router outputs per sparse layer (MoE decoders)."""
    routers = {}
    for index, layer in enumerate(language_model.layers):
        gate = getattr(layer.mlp, "gate", None)
        if gate is None or not hasattr(gate, "top_k"):
            continue

        def on_router(_module, _args, output, index=index):
            routers.setdefault(index, output)

        handles.append(gate.register_forward_hook(on_router))
    return routers


def _check_float32_routing(family, model_dir, captured, tower, visual_mask, record, case):
    """A low-precision case's routing against the decoder run with float32
    activations on the same weights, merged embeddings and DeepStack
    features (what vlm compare feeds vlm's decoder): every token must choose
    the same experts there, clear of ties by MIN_ROUTER_GAP."""
    model = _classes(family)[2].from_pretrained(model_dir, dtype=torch.float32).eval()
    language_model = model.model.language_model
    handles = []
    routers = _hook_routers(language_model, handles)
    extra = {}
    if tower is not None and getattr(tower, "deepstack_features", None) is not None:
        extra = {"visual_pos_masks": visual_mask,
                 "deepstack_visual_embeds": [feature.float() for feature in tower.deepstack_features]}
    with torch.no_grad():
        language_model(inputs_embeds=captured["input_embeddings"].float(), position_ids=captured["position_ids"],
                       use_cache=False, **extra)
    for handle in handles:
        handle.remove()
    smallest_gap = float("inf")
    k = record["top_k"]
    for index, (logits, _scores, chosen) in sorted(routers.items()):
        ordered = logits.float().sort(dim=-1, descending=True).values
        smallest_gap = min(smallest_gap, float((ordered[:, k - 1] - ordered[:, k]).min()))
        theirs = [sorted(row) for row in record["layers"][str(index)]["chosen"]]
        if [sorted(row) for row in chosen.tolist()] != theirs:
            raise SystemExit(f"{case.name}: with float32 activations layer {index} routes some token to other "
                             "experts; change the prompt or seed")
    if smallest_gap < MIN_ROUTER_GAP:
        raise SystemExit(f"{case.name}: with float32 activations a router's k-th and next logits are "
                         f"{smallest_gap:.3g} apart; change the prompt or seed")
    record["float32_activations_min_top_k_gap"] = smallest_gap
    record["float32_activations_same_choice"] = True


def _router_record(routers, text_config, case):
    """What the router chose for the prompt, and the assertions the case
    rests on: in every sparse layer tokens choose different expert sets
    (so vlm's routing is tested per token), and no token's k-th choice is
    within MIN_ROUTER_GAP (in router logits) of the next expert (bfloat16:
    _check_float32_routing)."""
    k = text_config.num_experts_per_tok
    record = {"top_k": k, "experts": text_config.num_experts, "normalized": True, "layers": {}}
    smallest_gap = float("inf")
    for index, (logits, _scores, chosen) in sorted(routers.items()):
        ordered = logits.float().sort(dim=-1, descending=True).values
        gap = float((ordered[:, k - 1] - ordered[:, k]).min())
        smallest_gap = min(smallest_gap, gap)
        sets = sorted({tuple(sorted(row)) for row in chosen.tolist()})
        if len(sets) < 2:
            raise SystemExit(f"{case.name}: every token routes to the same experts in layer {index}")
        record["layers"][str(index)] = {"distinct_expert_sets": len(sets), "min_top_k_gap": gap,
                                        "chosen": chosen.tolist()}
    if case.dtype == "float32" and smallest_gap < MIN_ROUTER_GAP:
        raise SystemExit(f"{case.name}: a router's k-th and next logits are {smallest_gap:.3g} apart "
                         f"(< {MIN_ROUTER_GAP}); change the prompt or seed")
    record["min_top_k_gap"] = smallest_gap
    return record


def _vision_stages(golden, model, inputs, case):
    """The tower's stages for every image of the case, in pipeline order."""
    visual = model.model.visual
    grids = inputs["image_grid_thw"]
    pixels = inputs["pixel_values"].to(harness.TORCH_DTYPES[case.dtype])
    model_type = model.config.model_type
    embedded = {}
    if model_type in QWEN3_VL_TOWERS:
        # What block 0 receives: patch embedding plus the position embedding
        # resampled to each image's grid.
        hook = visual.blocks[0].register_forward_pre_hook(
            lambda _m, args: embedded.setdefault("value", args[0].detach().clone()))
    tower = visual(pixels, grid_thw=grids)
    if model_type in QWEN3_VL_TOWERS:
        hook.remove()
        golden.tensor("vision_embeddings", embedded["value"], "hidden",
                      note="patch_embed + the resampled pos_embed (bilinear, align_corners), block 0's input")
    if model_type == "qwen2_5_vl":
        # Per image, as vlm encodes one image at a time: its merged tokens in
        # window order (get_vision_window_index), counted from 0.
        config = visual.config
        order = [get_vision_window_index(grid[None], config.spatial_merge_size, config.window_size,
                                         config.patch_size)[0] for grid in grids]
        golden.tensor("vision_window_index", torch.cat(order), "exact", encoder_input="window_index",
                      note="each image's merged tokens in window order (from 0 per image), concatenated")
        note = "the last block's output, patches in window order, before the merger"
    else:
        note = "the last block's output, patches in the processor's order, before the merger"
    golden.tensor("vision_encoder", tower.last_hidden_state, "hidden", note=note)
    golden.tensor("projector", tower.pooler_output, "hidden",
                  note="PatchMerger output, every image's rows" +
                       (", back in the processor's order" if model_type == "qwen2_5_vl" else ""))
    if model_type in QWEN3_VL_TOWERS:
        stacked = torch.stack(list(tower.deepstack_features), dim=1)
        golden.tensor("deepstack_features", stacked.reshape(stacked.shape[0], -1), "hidden",
                      layers=list(visual.config.deepstack_visual_indexes),
                      layout="[image tokens, deepstack layer, text hidden] flattened to [tokens, layers * hidden]",
                      note="deepstack_merger_list outputs on the blocks deepstack_visual_indexes names; feature "
                           "j is added to the decoder's hidden states at the image tokens after layer j")
    return tower
