"""The families the oracle harness knows: how to build a tiny (and a mid-size)
checkpoint for each, its tokenizer and chat template, and its golden cases.

To add a family, add one Family entry to FAMILIES (see README.md): a config
builder, a tokenizer builder, the real chat template, the cases, and, for a
new architecture kind, a runner in harness.py.
"""
import dataclasses

import tokenizer_tiny

# meta-llama/Llama-2-7b-chat-hf tokenizer_config.json chat_template.
LLAMA2_CHAT_TEMPLATE = (
    "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
    "{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}"
    "{% set system_message = false %}{% endif %}{% for message in loop_messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if loop.index0 == 0 and system_message != false %}"
    "{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}"
    "{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}"
    "{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}"
    "{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}")

# Qwen/Qwen2-0.5B-Instruct tokenizer_config.json chat_template.
QWEN2_CHAT_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")

# llava-hf/llava-1.5-7b-hf chat_template.json.
LLAVA_CHAT_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] != 'system' %}{{ message['role'].upper() + ': '}}"
    "{% endif %}{# Render all images first #}{% for content in message['content'] | "
    "selectattr('type', 'equalto', 'image') %}{{ '<image>\\n' }}{% endfor %}{# Render all text next #}"
    "{% if message['role'] != 'assistant' %}{% for content in message['content'] | "
    "selectattr('type', 'equalto', 'text') %}{{ content['text'] + ' '}}{% endfor %}{% else %}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}{% generation %}"
    "{{ content['text'] + ' '}}{% endgeneration %}{% endfor %}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}")


@dataclasses.dataclass
class Case:
    name: str
    messages: list = None         # chat messages (chat template applied), or
    prompt: str = None            # raw text (tokenized with special tokens)
    images: tuple = ()            # file names under ../shared/fixtures/media/images
    dtype: str = "float32"
    new_tokens: int = 20


@dataclasses.dataclass
class Family:
    name: str                     # directory under tests/models and tests/goldens
    kind: str                     # runner in harness.py: "causal_lm" or "llava"
    seed: int
    config: dict                  # config.json of the tiny model (fields that differ from the class defaults)
    midsize_config: dict          # geometry of the on-demand mid-size model
    tokenizer: callable           # () -> tokenizers.Tokenizer
    tokenizer_config: dict        # tokenizer_config.json (without the chat template)
    chat_template: str
    cases: list
    processor: dict = None        # llava: preprocessor / processor settings
    midsize_case: str = None      # the case run for the mid-size model


def _llama_tokenizer_config(extra_added=()):
    added = {str(i): {"content": t, "lstrip": False, "normalized": False, "rstrip": False,
                      "single_word": False, "special": True}
             for i, t in enumerate(["<unk>", "<s>", "</s>"])}
    for token_id, token in extra_added:
        added[str(token_id)] = {"content": token, "lstrip": False, "normalized": False, "rstrip": False,
                                "single_word": False, "special": True}
    return {"add_bos_token": True, "add_eos_token": False, "added_tokens_decoder": added,
            "bos_token": "<s>", "clean_up_tokenization_spaces": False, "eos_token": "</s>",
            "legacy": False, "model_max_length": 4096, "pad_token": None, "unk_token": "<unk>",
            "tokenizer_class": "LlamaTokenizer", "use_default_system_prompt": False}


QWEN2_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

LLAMA = Family(
    name="llama", kind="causal_lm", seed=1001,
    # Llama-2 / Vicuna style: untied LM head, no biases, GQA, head_dim 64.
    config={"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 512,
            "hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2,
            "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 64,
            "max_position_embeddings": 4096, "rms_norm_eps": 1e-05, "tie_word_embeddings": False,
            "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": None,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}},
    midsize_config={"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 22,
                    "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 64},
    tokenizer=lambda: tokenizer_tiny.sentencepiece_bpe(512, ["<unk>", "<s>", "</s>"], []),
    tokenizer_config=_llama_tokenizer_config(),
    chat_template=LLAMA2_CHAT_TEMPLATE,
    cases=[
        Case("chat", messages=[{"role": "user", "content": "Describe a cat sitting on a warm windowsill."}]),
        Case("plain", prompt="Once upon a time there was a small robot"),
        Case("chat_bf16", messages=[{"role": "user", "content": "Describe a cat sitting on a warm windowsill."}],
             dtype="bfloat16"),
    ],
    midsize_case="chat",
)

QWEN2 = Family(
    name="qwen2", kind="causal_lm", seed=2002,
    # Qwen2-0.5B style: tied embeddings, q/k/v biases, GQA, head_dim 64.
    config={"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "vocab_size": 512,
            "hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2,
            "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 32768,
            "rms_norm_eps": 1e-06, "tie_word_embeddings": True, "bos_token_id": 509,
            "eos_token_id": 511, "use_sliding_window": False, "max_window_layers": 2,
            "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}},
    midsize_config={"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
                    "num_attention_heads": 14, "num_key_value_heads": 2},
    tokenizer=lambda: tokenizer_tiny.byte_level_bpe(512, QWEN2_SPECIALS),
    tokenizer_config={
        "add_bos_token": False, "add_prefix_space": False,
        "added_tokens_decoder": {str(509 + i): {"content": t, "lstrip": False, "normalized": False,
                                                "rstrip": False, "single_word": False, "special": True}
                                 for i, t in enumerate(QWEN2_SPECIALS)},
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"], "bos_token": None,
        "clean_up_tokenization_spaces": False, "eos_token": "<|im_end|>", "errors": "replace",
        "model_max_length": 32768, "pad_token": "<|endoftext|>", "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer", "unk_token": None},
    chat_template=QWEN2_CHAT_TEMPLATE,
    cases=[
        Case("chat", messages=[{"role": "user", "content": "Tell me a short story about a robot."}]),
        Case("plain", prompt="The quick brown fox jumps over the lazy dog."),
        Case("chat_bf16", messages=[{"role": "user", "content": "Tell me a short story about a robot."}],
             dtype="bfloat16"),
    ],
    midsize_case="chat",
)

LLAVA = Family(
    name="llava", kind="llava", seed=3003,
    # LLaVA-1.5: CLIP ViT at 336 px / patch 14 (576 image tokens), select layer
    # -2, drop CLS, 2-layer GELU projector with biases, untied Llama decoder.
    config={"architectures": ["LlavaForConditionalGeneration"], "model_type": "llava",
            "image_token_index": 382, "image_seq_length": 576, "projector_hidden_act": "gelu",
            "vision_feature_layer": -2, "vision_feature_select_strategy": "default",
            "multimodal_projector_bias": True, "tie_word_embeddings": False, "pad_token_id": 383,
            "text_config": {"model_type": "llama", "vocab_size": 384, "hidden_size": 128,
                            "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
                            "num_key_value_heads": 1, "head_dim": 64, "max_position_embeddings": 4096,
                            "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "bos_token_id": 1,
                            "eos_token_id": 2, "pad_token_id": 383,
                            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}},
            "vision_config": {"model_type": "clip_vision_model", "hidden_size": 64,
                              "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 1,
                              "image_size": 336, "patch_size": 14, "projection_dim": 64,
                              "hidden_act": "quick_gelu", "layer_norm_eps": 1e-05}},
    midsize_config={"vision_config": {"hidden_size": 1024, "intermediate_size": 4096,
                                      "num_hidden_layers": 24, "num_attention_heads": 16,
                                      "projection_dim": 768},
                    "text_config": {"hidden_size": 1024, "intermediate_size": 2816,
                                    "num_hidden_layers": 4, "num_attention_heads": 16,
                                    "num_key_value_heads": 16, "head_dim": 64}},
    tokenizer=lambda: tokenizer_tiny.sentencepiece_bpe(384, ["<unk>", "<s>", "</s>"], ["<image>", "<pad>"]),
    tokenizer_config=dict(_llama_tokenizer_config([(382, "<image>"), (383, "<pad>")]), pad_token="<pad>",
                          padding_side="left"),
    chat_template=LLAVA_CHAT_TEMPLATE,
    processor={"image_size": 336, "patch_size": 14, "vision_feature_select_strategy": "default",
               "num_additional_image_tokens": 1, "image_token": "<image>"},
    cases=[
        Case("one_image", images=("chelsea.png",),
             messages=[{"role": "user", "content": [{"type": "image"},
                                                    {"type": "text", "text": "What is in this picture?"}]}]),
        Case("two_images", images=("astronaut.png", "coffee.png"),
             messages=[{"role": "user", "content": [{"type": "image"}, {"type": "image"},
                                                    {"type": "text", "text": "Compare the two images."}]}]),
        Case("text_only",
             messages=[{"role": "user", "content": [{"type": "text", "text": "Tell me a short story about a robot and a cat."}]}]),
        # coffee.png: its float32 pixel values are in two_images. (chelsea.png
        # ties two logits exactly in bf16 at step 9, which the margin check refuses.)
        Case("one_image_bf16", images=("coffee.png",), dtype="bfloat16",
             messages=[{"role": "user", "content": [
                 {"type": "image"}, {"type": "text", "text": "Describe the picture in one sentence, please."}]}]),
    ],
    midsize_case="one_image",
)

FAMILIES = {family.name: family for family in (LLAMA, QWEN2, LLAVA)}
