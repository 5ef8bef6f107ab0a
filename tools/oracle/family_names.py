"""Writes tests/goldens/families/state_dict_names.json: for tiny configs of
the families that have tensor manifests in vlm but no model goldens yet
(Gemma 3, Qwen2-VL), the state_dict names and shapes Transformers itself
builds, so tests/test_family_manifests.c can prove the manifests use the
canonical (Transformers 5) names.

    .venv-oracle/bin/python tools/oracle/family_names.py

Pinned versions: tools/oracle/requirements.txt (transformers 5.23.0,
torch 2.14.1). The output is deterministic (names and shapes only)."""
import json
import pathlib

from transformers import (Gemma3Config, Gemma3ForConditionalGeneration, Qwen2VLConfig,
                          Qwen2VLForConditionalGeneration)

ROOT = pathlib.Path(__file__).resolve().parents[2]


def describe(config, model_class):
    model = model_class(config)
    return {"config": json.loads(config.to_json_string()),
            "tensors": {name: list(value.shape) for name, value in model.state_dict().items()}}


def main():
    out = {
        "gemma3": describe(Gemma3Config(
            text_config=dict(vocab_size=300, hidden_size=64, intermediate_size=128,
                             num_hidden_layers=2, num_attention_heads=1, num_key_value_heads=1,
                             head_dim=64, sliding_window=8),
            vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                               num_attention_heads=1, image_size=28, patch_size=14,
                               vision_use_head=False),
            mm_tokens_per_image=1), Gemma3ForConditionalGeneration),
        "qwen2_vl": describe(Qwen2VLConfig(
            text_config=dict(vocab_size=300, hidden_size=64, intermediate_size=128,
                             num_hidden_layers=1, num_attention_heads=1, num_key_value_heads=1,
                             bos_token_id=1, eos_token_id=2),
            vision_config=dict(depth=1, embed_dim=32, num_heads=1, hidden_size=64)),
            Qwen2VLForConditionalGeneration),
    }
    path = ROOT / "tests/goldens/families/state_dict_names.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
