"""The Qwen2-VL runner of the oracle harness (kind "qwen2_vl"): its processor
files and one golden case through Qwen2VLForConditionalGeneration.

Stages beyond the shared tail (harness.add_tail_stages): both image
processors' patches and grids, the expanded ids and mm_token_type_ids, the
3-axis M-RoPE position ids get_rope_index computes and the decode delta it
keeps (rope_deltas), the tower's last hidden state (vision_encoder, patches in
the processor's merge-window order) and the merger's output (projector),
and the merged input embeddings. A case with `refused` records the error
Transformers raises instead (vlm must refuse the same request).
"""
import os
import shutil
import tempfile

import torch
import transformers
from PIL import Image

import harness


def write_processor(family, model_dir):
    """Qwen2VLProcessor's files as the pinned Transformers saves them."""
    settings = family.processor
    image_processor = transformers.Qwen2VLImageProcessor(
        size={"shortest_edge": settings["min_pixels"], "longest_edge": settings["max_pixels"]})
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    processor = transformers.Qwen2VLProcessor(image_processor=image_processor, tokenizer=tokenizer,
                                              video_processor=transformers.Qwen2VLVideoProcessor(),
                                              chat_template=family.chat_template)
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
    model = transformers.Qwen2VLForConditionalGeneration.from_pretrained(
        manifest["model_dir"], dtype=harness.TORCH_DTYPES[case.dtype]).eval()
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
    model = transformers.Qwen2VLForConditionalGeneration.from_pretrained(
        model_dir, dtype=harness.TORCH_DTYPES[case.dtype]).eval()
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
            pixels = inputs["pixel_values"].to(harness.TORCH_DTYPES[case.dtype])
            tower = model.model.visual(pixels, grid_thw=inputs["image_grid_thw"])
            golden.tensor("vision_encoder", tower.last_hidden_state, "hidden",
                          note="the last block's output, patches in the processor's order, before the merger")
            golden.tensor("projector", tower.pooler_output, "hidden", note="PatchMerger output, every image's rows")
        captured, handles = harness.capture(language_model, language_model.rotary_emb)
        outputs = model(**inputs, use_cache=True, past_key_values=transformers.DynamicCache())
        for handle in handles:
            handle.remove()
        # Text only: no M-RoPE to compute, consecutive positions, delta 0.
        deltas = model.model.rope_deltas if model.model.rope_deltas is not None else torch.zeros(1, dtype=torch.long)
        golden.tensor("rope_deltas", deltas.reshape(-1), "exact",
                      note="decode position = cache length + delta, on every axis")
        embeds = captured["input_embeddings"][0]
        if images:
            mask = inputs["input_ids"][0] == model.config.image_token_id
            if not torch.equal(embeds[mask], tower.pooler_output.to(embeds.dtype)):
                raise SystemExit(f"{case.name}: merger output differs from the merged embeddings")
        golden.tensor("input_embeddings", embeds, "hidden")
        ids = inputs["input_ids"][0].tolist()
        extra = []
        if model.config.image_token_id in ids:
            extra = [ids.index(model.config.image_token_id),
                     len(ids) - 1 - ids[::-1].index(model.config.image_token_id)]
        harness.add_tail_stages(golden, model, inputs, outputs, captured, case, processor.tokenizer, extra)
    return golden
