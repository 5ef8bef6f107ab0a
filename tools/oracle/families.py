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
    # Another case (relative to this case's directory) whose
    # processor.pixel_values stages cover this case's images with the same
    # processor: this case then leaves them out (1.4 MB an image each).
    pixel_values_from: str = None
    # Transformers refuses the request (e.g. placeholders and images do not
    # match): the golden records its error, and vlm must refuse it too.
    refused: bool = False
    # Phi-4-multimodal: the LoRA adapter subfolder the request selects
    # (phi4_oracle.py); None: the base model.
    adapter: str = None
    # Audio clips under ../shared/fixtures/media/audio, one per entry; an
    # entry that is a tuple of names is one clip of those files end to end
    # (a clip longer than any fixture).
    audio: tuple = ()
    # Whether the case also records the Pil processor's tensors (cases whose
    # images the default processor's stages alone cover keep the goldens
    # small; the Pil variant's full coverage is media_qwen2_vl's digests).
    pil_stages: bool = True
    # Keyword arguments of the processor call (Gemma 3: do_pan_and_scan).
    processor_kwargs: dict = None
    # vlm prefills the prompt in chunks of this many rows (Transformers ran
    # it whole): a bidirectional image block split across chunks.
    vlm_prefill_chunk: int = 0


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
    # A real tokenizer instead of a trained one (tokenizer_real.py): the
    # ../shared/fixtures/tokenizers folder, the tokens the family's processor
    # adds ((content, special) pairs, in order), and special-token attributes
    # (e.g. pad_token) set before saving. `tokenizer` is then unused.
    real_tokenizer: str = None
    added_tokens: tuple = ()
    tokenizer_attributes: dict = None
    # dtype of model.safetensors (Transformers still runs each case in the
    # case's dtype): bfloat16 halves real-vocabulary embeddings.
    weights_dtype: str = "float32"
    # (regex, replacement) renames applied to the saved state dict: the
    # layout published checkpoints from Transformers 4.x have.
    v4_renames: tuple = ()
    # MoE experts saved as the hub's checkpoints have them: gate_up_proj
    # [E, hidden, 2I] and down_proj [E, I, hidden] (Transformers 5.23 saves
    # [E, 2I, hidden] / [E, hidden, I] and transposes the hub's on load).
    hub_expert_layout: bool = False
    # The checkpoint is written in a hub int4 layout (quant_oracle.py):
    # {"method": "gptq" | "awq", "group_size": G, GPTQ's "sym" and
    # "desc_act"}; Transformers runs the dequantized float32 model.
    quantization: dict = None


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

# mistralai/Mistral-7B-Instruct-v0.1 tokenizer_config.json chat_template.
MISTRAL_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token + ' ' }}"
    "{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}")

# Real-vocabulary models: the embedding and LM head are vocab x hidden, so the
# hidden size is 8 (head_dim stays 64 and the MLP 64 wide, so attention, RoPE
# and the projections still run over real row lengths) and weights are stored
# in bfloat16. Their cases run in float32: with 32k-262k rows of 8 values,
# bfloat16 logits tie (or come within the 0.1 bf16 margin) within a few
# greedy steps for every prompt tried, so bfloat16 compute stays covered by
# the tiny-vocabulary families' *_bf16 cases. (The multimodal families on
# real vocabularies have image bf16 cases: the image's rows spread the
# logits; Phi-4-multimodal's needs an image + speech prompt, below.)
TINY_REAL_VOCAB = {"hidden_size": 8, "intermediate_size": 64, "num_hidden_layers": 2,
                   "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 64}

CAT_CHAT = [{"role": "user", "content": "Describe a cat sitting on a warm windowsill."}]
ROBOT_CHAT = [{"role": "user", "content": "Tell me a short story about a robot."}]

LLAMA_REALTOK = dataclasses.replace(
    LLAMA, name="llama_realtok", seed=1101,
    config=dict(LLAMA.config, vocab_size=32000, **TINY_REAL_VOCAB),
    real_tokenizer="llama2", weights_dtype="bfloat16", tokenizer=None, tokenizer_config=None,
    cases=[Case("chat", messages=CAT_CHAT), Case("plain", prompt="Once upon a time there was a small robot")],
    midsize_case=None)

QWEN2_REALTOK = dataclasses.replace(
    QWEN2, name="qwen2_realtok", seed=2102,
    # Qwen2.5's padded vocabulary: 151936 rows for 151669 tokens.
    config=dict(QWEN2.config, vocab_size=151936, bos_token_id=151643, eos_token_id=151645, **TINY_REAL_VOCAB),
    real_tokenizer="qwen3", weights_dtype="bfloat16", tokenizer=None, tokenizer_config=None,
    cases=[Case("chat", messages=ROBOT_CHAT)], midsize_case=None)

LLAVA_REALTOK = dataclasses.replace(
    LLAVA, name="llava_realtok", seed=3103,
    # llava-hf/llava-1.5-7b-hf: <image> 32000 and <pad> 32001 after Llama 2's 32000.
    config=dict(LLAVA.config, image_token_index=32000, pad_token_id=32001,
                text_config=dict(LLAVA.config["text_config"], vocab_size=32064, pad_token_id=32001,
                                 **TINY_REAL_VOCAB)),
    real_tokenizer="llama2", added_tokens=(("<image>", True),), tokenizer_attributes={"pad_token": "<pad>"},
    weights_dtype="bfloat16", tokenizer=None, tokenizer_config=None,
    cases=[Case("one_image", images=("chelsea.png",), pixel_values_from="../../llava/one_image",
                messages=[{"role": "user", "content": [{"type": "image"},
                                                       {"type": "text", "text": "What is in this picture?"}]}]),
           Case("text_only",
                messages=[{"role": "user", "content": [{"type": "text", "text": "Tell me a short story about a robot and a cat."}]}])],
    midsize_case=None)

# llava-hf checkpoints from Transformers 4.x: the CLIP tower keeps its
# vision_model level (Transformers 5.23 saves language_model.model.* and
# multi_modal_projector.* as 4.x did, but vision_tower.* without it).
LLAVA_V4 = dataclasses.replace(
    LLAVA, name="llava_v4", v4_renames=((r"^vision_tower\.", "vision_tower.vision_model."),),
    cases=[dataclasses.replace(LLAVA.cases[0], pixel_values_from="../../llava/one_image")], midsize_case=None)

MISTRAL = Family(
    name="mistral", kind="causal_lm", seed=4004,
    # Mistral-7B-v0.1: Llama layout, untied, GQA, a sliding window (16 here,
    # shorter than the prompts).
    config={"architectures": ["MistralForCausalLM"], "model_type": "mistral", "vocab_size": 32000,
            **TINY_REAL_VOCAB, "max_position_embeddings": 32768, "rms_norm_eps": 1e-05,
            "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2, "sliding_window": 16,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}},
    midsize_config={}, tokenizer=None, tokenizer_config=None,
    chat_template=MISTRAL_CHAT_TEMPLATE, real_tokenizer="llama2", weights_dtype="bfloat16",
    cases=[
        Case("chat", messages=[{"role": "user", "content": "Describe a cat sitting on a warm windowsill, "
                                                           "in the afternoon sun."}]),
        Case("plain", prompt="Once upon a time there was a little robot who lived by the sea and liked to read"),
    ])

QWEN3 = Family(
    name="qwen3", kind="causal_lm", seed=5005,
    # Qwen3-0.6B: tied, QK-norm, no biases, GQA, rope_theta 1e6, 151936 rows.
    config={"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "vocab_size": 151936,
            **TINY_REAL_VOCAB, "max_position_embeddings": 40960, "rms_norm_eps": 1e-06,
            "tie_word_embeddings": True, "bos_token_id": 151643, "eos_token_id": 151645,
            "attention_bias": False, "use_sliding_window": False,
            "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}},
    midsize_config={}, tokenizer=None, tokenizer_config=None,
    chat_template=None, real_tokenizer="qwen3", weights_dtype="bfloat16",
    cases=[
        Case("chat", messages=ROBOT_CHAT),
        Case("plain", prompt="The quick brown fox jumps over the lazy dog."),
    ])

GEMMA3_TEXT = Family(
    name="gemma3_text", kind="causal_lm", seed=6006,
    # Gemma 3 1B style: tied, scaled embeddings, sandwich norms, QK-norm, a
    # sliding layer (window 8, shorter than the prompts) then a full one with
    # its own RoPE (linear scaling, as gemma-3-4b), query_pre_attn_scalar
    # unlike head_dim; soft caps null, as the published configs have them.
    config={"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "vocab_size": 262144,
            **TINY_REAL_VOCAB, "max_position_embeddings": 32768, "rms_norm_eps": 1e-06,
            "tie_word_embeddings": True, "bos_token_id": 2, "eos_token_id": 1, "pad_token_id": 0,
            "hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": 48, "sliding_window": 8,
            "layer_types": ["sliding_attention", "full_attention"],
            "final_logit_softcapping": None, "attn_logit_softcapping": None,
            "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                                "full_attention": {"rope_type": "linear", "factor": 8.0,
                                                   "rope_theta": 1000000.0}}},
    midsize_config={}, tokenizer=None, tokenizer_config=None,
    chat_template=None, real_tokenizer="gemma3", weights_dtype="bfloat16",
    cases=[
        Case("chat", messages=[{"role": "user", "content": "Describe a cat sitting on a warm windowsill."}]),
        Case("plain", prompt="Once upon a time there was a small robot"),
    ])

def _gemma3_image_chat(text, images=1, text_first=None):
    content = ([{"type": "text", "text": text_first}] if text_first else []) + [{"type": "image"}] * images
    return [{"role": "user", "content": content + [{"type": "text", "text": text}]}]


GEMMA3 = Family(
    name="gemma3", kind="gemma3", seed=7007,
    # gemma-3-4b-it style Gemma3ForConditionalGeneration: the gemma3_text
    # decoder (hidden 4 here: two copies of a 262208-row table, one per
    # layout; a sliding layer with window 8 and a full one), a 2-layer
    # SigLIP tower without head at 64 px / patch 4 (16x16 patches), pooled
    # 4x4 to mm_tokens_per_image 16 as gemma-3-4b pools 64x64 to 256, so each
    # image is a bidirectional block of 16 soft tokens, longer than the
    # sliding window.
    config={"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
            "mm_tokens_per_image": 16, "boi_token_index": 255999, "eoi_token_index": 256000,
            "image_token_index": 262144, "tie_word_embeddings": True,
            "text_config": dict({k: v for k, v in GEMMA3_TEXT.config.items() if k != "architectures"},
                                vocab_size=262208, hidden_size=4),
            "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 32,
                              "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                              "image_size": 64, "patch_size": 4, "vision_use_head": False}},
    midsize_config={}, tokenizer=None, tokenizer_config=None,
    chat_template=None, real_tokenizer="gemma3", weights_dtype="bfloat16",
    processor={"image_size": 64, "image_seq_length": 16},
    cases=[
        Case("one_image", images=("chelsea.png",), messages=_gemma3_image_chat("What is in this picture?")),
        # Two images: two separate bidirectional blocks.
        Case("two_images", images=("astronaut.png", "coffee.png"),
             messages=_gemma3_image_chat("Compare the two images.", 2), pil_stages=False),
        # Far more text after the image than the sliding window (8) spans.
        Case("long_after_image", images=("motorcycle_left.png",), pil_stages=False,
             messages=_gemma3_image_chat("Describe this picture in detail: the colours, the shapes, what is in "
                                         "front and what is behind, and what the weather might be like there.")),
        # Text before the image and a prefill chunk of 5 rows: the image's
        # 16-row block is longer than a chunk and starts inside one.
        Case("image_split_across_chunks", images=("chelsea.png",), pixel_values_from="../one_image",
             vlm_prefill_chunk=5,
             messages=_gemma3_image_chat("What does it show?", text_first="Look at this photo.")),
        # A 600x400 image with pan-and-scan on (the call's kwargs): the
        # original and two 300x400 crops, each its own block, with the
        # processor's text around them.
        Case("pan_and_scan", images=("coffee.png",), processor_kwargs={"do_pan_and_scan": True},
             messages=_gemma3_image_chat("What is on the table?")),
        Case("text_only", messages=[{"role": "user", "content": [
            {"type": "text", "text": "Describe a cat sitting on a warm windowsill."}]}]),
        # Two placeholders, one image.
        Case("placeholder_mismatch", images=("chelsea.png",), messages=_gemma3_image_chat("Compare them.", 2),
             refused=True),
        Case("one_image_bf16", images=("chelsea.png",), dtype="bfloat16",
             messages=_gemma3_image_chat("Describe the picture in one sentence, please.")),
    ])

# google/gemma-3-*-it as published (Transformers 4.x): the SigLIP tower keeps
# its vision_model level, as for LLaVA.
GEMMA3_V4 = dataclasses.replace(
    GEMMA3, name="gemma3_v4", v4_renames=((r"^vision_tower\.", "vision_tower.vision_model."),),
    cases=[dataclasses.replace(GEMMA3.cases[0], pixel_values_from="../../gemma3/one_image", pil_stages=False)])

def _read_template(name):
    with open(f"{__file__.rsplit('/', 3)[0]}/tests/goldens/chat_template/templates/{name}", encoding="utf-8") as handle:
        return handle.read()


def _image_chat(text, images=1):
    return [{"role": "user", "content": [{"type": "image"}] * images + [{"type": "text", "text": text}]}]


QWEN2_VL = Family(
    name="qwen2_vl", kind="qwen2_vl", seed=8008,
    # Qwen2-VL-2B-Instruct's shape in miniature: the real Qwen3 vocabulary
    # (Qwen2-VL's own, with <|vision_start|> 151652, <|image_pad|> 151655),
    # tied embeddings, a text head_dim of 8 (Qwen2-VL's text attention
    # takes hidden / heads) with M-RoPE sections [1, 1, 2] (temporal,
    # height, width over head_dim / 2), GQA; a 2-block tower of width 32
    # with 2D RoPE, patch 14, temporal patch 2, 2x2 merger into the text
    # width. Processor bounds: the class's min_pixels (56*56) and a
    # max_pixels of 64 merged tokens, so photos are clamped and tiny images
    # floored while the goldens stay small.
    config={"architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl",
            "image_token_id": 151655, "video_token_id": 151656, "vision_start_token_id": 151652,
            "vision_end_token_id": 151653, "tie_word_embeddings": True,
            "text_config": {"model_type": "qwen2_vl_text", "vocab_size": 151936, "hidden_size": 16,
                            "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                            "num_key_value_heads": 1, "max_position_embeddings": 32768,
                            "rms_norm_eps": 1e-06, "tie_word_embeddings": True, "bos_token_id": 151643,
                            "eos_token_id": 151645,
                            "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0,
                                                "mrope_section": [1, 1, 2]}},
            "vision_config": {"model_type": "qwen2_vl_vision", "depth": 2, "embed_dim": 32, "hidden_size": 16,
                              "mlp_ratio": 2, "num_heads": 2, "in_channels": 3, "patch_size": 14,
                              "spatial_merge_size": 2, "temporal_patch_size": 2}},
    midsize_config={}, tokenizer=None, tokenizer_config=None,
    chat_template=_read_template("qwen2_vl.jinja"), real_tokenizer="qwen3", weights_dtype="bfloat16",
    processor={"min_pixels": 56 * 56, "max_pixels": 64 * 28 * 28},
    cases=[
        Case("one_image", images=("chelsea.png",), messages=_image_chat("What is in this picture?")),
        # Different sizes and aspect ratios: a photo clamped by max_pixels
        # and a 20x3000 strip (aspect 150, under smart_resize's 200).
        Case("two_images", images=("motorcycle_left.png", "tall_20x3000.png"),
             messages=_image_chat("Compare the two images.", 2), pil_stages=False),
        Case("text_only", messages=[{"role": "user", "content": [
            {"type": "text", "text": "Tell me a short story about a robot and a cat."}]}]),
        # 14x25: raised to the min_pixels floor.
        Case("min_pixels", images=("no_time_for_that_tiny.gif",), messages=_image_chat("What is this?")),
        # 1000x872: clamped to 64 merged tokens.
        Case("max_pixels", images=("hubble_deep_field.jpg",), messages=_image_chat("Describe the sky."),
             pil_stages=False),
        # Two placeholders, one image.
        Case("placeholder_mismatch", images=("chelsea.png",), messages=_image_chat("Compare them.", 2),
             refused=True),
        Case("one_image_bf16", images=("chelsea.png",), dtype="bfloat16",
             messages=_image_chat("Describe the picture in one sentence, please.")),
    ])

# Qwen/Qwen2-VL-* as published (Transformers 4.x): the decoder at model.*,
# the tower at visual.*. Half the width (one head of 8), so the second copy
# of the 151936-row table stays small.
QWEN2_VL_V4 = dataclasses.replace(
    QWEN2_VL, name="qwen2_vl_v4", seed=8108,
    config=dict(QWEN2_VL.config,
                text_config=dict(QWEN2_VL.config["text_config"], hidden_size=8, num_attention_heads=1),
                vision_config=dict(QWEN2_VL.config["vision_config"], hidden_size=8)),
    v4_renames=((r"^model\.language_model\.", "model."), (r"^model\.visual\.", "visual.")),
    cases=[dataclasses.replace(QWEN2_VL.cases[0], pixel_values_from="../../qwen2_vl/one_image",
                               pil_stages=False)])

# Qwen2.5-VL-3B-Instruct's shape in miniature: the Qwen2-VL decoder (M-RoPE
# [1, 1, 2] over a head_dim of 8, the real Qwen3 vocabulary, tied) at text
# hidden 8, and Qwen2.5-VL's tower: RMSNorm, SwiGLU MLP with biases, 3 blocks
# of width 32 with windowed attention in blocks 0 and 2 and full attention
# in block 1 (fullatt_block_indexes), an RMSNorm merger. window_size 84 px
# makes windows of 3x3 merged tokens, so the Qwen2-VL processor settings
# (min_pixels 56*56, max_pixels 64 merged tokens) give images whose 6x9
# grids divide into whole windows (chelsea, motorcycle) and images that do
# not (hubble 7x8, the 97x1 strip): the pixel values are Qwen2-VL's
# goldens' own (same processor class and settings), so no case stores them.
QWEN2_5_VL = Family(
    name="qwen2_5_vl", kind="qwen2_vl", seed=9009,
    config={"architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
            "image_token_id": 151655, "video_token_id": 151656, "vision_start_token_id": 151652,
            "vision_end_token_id": 151653, "tie_word_embeddings": True,
            "text_config": {"model_type": "qwen2_5_vl_text", "vocab_size": 151936, "hidden_size": 8,
                            "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 1,
                            "num_key_value_heads": 1, "max_position_embeddings": 32768,
                            "rms_norm_eps": 1e-06, "tie_word_embeddings": True, "bos_token_id": 151643,
                            "eos_token_id": 151645,
                            "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0,
                                                "mrope_section": [1, 1, 2]}},
            "vision_config": {"model_type": "qwen2_5_vl_vision", "depth": 3, "hidden_size": 32,
                              "intermediate_size": 64, "num_heads": 2, "in_channels": 3, "patch_size": 14,
                              "spatial_merge_size": 2, "temporal_patch_size": 2, "window_size": 84,
                              "fullatt_block_indexes": [1], "out_hidden_size": 8, "tokens_per_second": 2,
                              "hidden_act": "silu"}},
    midsize_config={}, tokenizer=None, tokenizer_config=None,
    chat_template=_read_template("qwen2_5_vl.jinja"), real_tokenizer="qwen3", weights_dtype="bfloat16",
    processor={"min_pixels": 56 * 56, "max_pixels": 64 * 28 * 28},
    cases=[
        # 6x9 merged tokens: six whole 3x3 windows.
        Case("one_image", images=("chelsea.png",), messages=_image_chat("What is in this picture?"),
             pixel_values_from="../../qwen2_vl/one_image", pil_stages=False),
        # A 6x9 photo (whole windows) and a 97x1 strip (32 windows, the last
        # one row): different sizes and aspect ratios.
        Case("two_images", images=("motorcycle_left.png", "tall_20x3000.png"),
             messages=_image_chat("Compare the two images.", 2),
             pixel_values_from="../../qwen2_vl/two_images", pil_stages=False),
        Case("text_only", messages=[{"role": "user", "content": [
            {"type": "text", "text": "Tell me a short story about a robot and a cat."}]}]),
        # 7x8 merged tokens: windows of 3, 3 and 1 rows by 3, 3 and 2 columns.
        Case("partial_windows", images=("hubble_deep_field.jpg",), messages=_image_chat("Describe the sky."),
             pixel_values_from="../../qwen2_vl/max_pixels", pil_stages=False),
        Case("one_image_bf16", images=("chelsea.png",), dtype="bfloat16",
             messages=_image_chat("Describe the picture in one sentence, please."),
             pixel_values_from="../../qwen2_vl/one_image", pil_stages=False),
    ])

# Qwen3-VL-2B-Instruct's shape in miniature (Qwen3VLForConditionalGeneration,
# dense): a Qwen3 decoder (per-head q/k norms, no biases, head_dim 32 over 2
# query and 1 KV heads, tied) at text hidden 4 with the real Qwen3 vocabulary
# and interleaved M-RoPE sections [6, 5, 5] over its 16 frequencies (the
# last ones temporal, as [24, 20, 20] leaves 60..63 to t); 3 decoder layers,
# so DeepStack's two features go in after layers 0 and 1 and layer 2 runs
# without. The tower: patch 16 with a bias, a learned 4x4 position table
# resampled (bilinear, align_corners) to each image's patch grid, 3
# LayerNorm blocks of width 32 with gelu_pytorch_tanh, DeepStack mergers on
# the outputs of blocks 0 and 1. Processor: Qwen3-VL's patch 16 and mean/std
# 0.5, the class's min_pixels and a max_pixels of 16 merged tokens (a 32 px
# factor), so pixel rows (1536 values) stay few. Its thinking chat template.
QWEN3_VL = Family(
    name="qwen3_vl", kind="qwen2_vl", seed=10015,
    config={"architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl",
            "image_token_id": 151655, "video_token_id": 151656, "vision_start_token_id": 151652,
            "vision_end_token_id": 151653, "tie_word_embeddings": True,
            "text_config": {"model_type": "qwen3_vl_text", "vocab_size": 151936, "hidden_size": 4,
                            "intermediate_size": 64, "num_hidden_layers": 3, "num_attention_heads": 2,
                            "num_key_value_heads": 1, "head_dim": 32, "max_position_embeddings": 32768,
                            "rms_norm_eps": 1e-06, "tie_word_embeddings": True, "bos_token_id": 151643,
                            "eos_token_id": 151645, "attention_bias": False,
                            "rope_parameters": {"rope_type": "default", "rope_theta": 5000000.0,
                                                "mrope_section": [6, 5, 5], "mrope_interleaved": True}},
            "vision_config": {"model_type": "qwen3_vl_vision", "depth": 3, "hidden_size": 32,
                              "intermediate_size": 64, "num_heads": 2, "in_channels": 3, "patch_size": 16,
                              "spatial_merge_size": 2, "temporal_patch_size": 2, "out_hidden_size": 4,
                              "num_position_embeddings": 16, "deepstack_visual_indexes": [0, 1],
                              "hidden_act": "gelu_pytorch_tanh"}},
    midsize_config={}, tokenizer=None, tokenizer_config=None,
    chat_template=_read_template("qwen3_vl_thinking.jinja"), real_tokenizer="qwen3", weights_dtype="bfloat16",
    processor={"min_pixels": 56 * 56, "max_pixels": 16 * 32 * 32, "patch_size": 16,
               "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]},
    cases=[
        # chelsea and a 14x25 GIF raised to 3x2 merged tokens: the only case
        # holding pixel values (first: the others take theirs) (the Pil variant is media_qwen2_vl's).
        Case("two_images", images=("chelsea.png", "no_time_for_that_tiny.gif"),
             messages=_image_chat("Compare the two images.", 2), pil_stages=False),
        # 3x4 merged tokens (6x8 patches from the 4x4 table).
        Case("one_image", images=("chelsea.png",), messages=_image_chat("What is in this picture?"),
             pixel_values_from="../two_images", pil_stages=False),
        Case("text_only", messages=[{"role": "user", "content": [
            {"type": "text", "text": "Tell me a short story about a robot and a cat."}]}]),
        # At hidden 4 bfloat16 logits sit a few ulps apart: seed and prompt
        # are ones whose greedy margins clear the 0.1 bar.
        Case("one_image_bf16", images=("chelsea.png",), dtype="bfloat16",
             messages=_image_chat("What is in this picture?"),
             pixel_values_from="../two_images", pil_stages=False),
    ])

# Qwen3-VL-30B-A3B-Instruct's shape in miniature
# (Qwen3VLMoeForConditionalGeneration): Qwen3-VL's tower and processor as
# above (out_hidden_size 8), and a Qwen3 decoder at text hidden 8 (2 query
# heads and 1 KV head of 32, interleaved M-RoPE [6, 5, 5], tied, the real
# Qwen3 vocabulary) whose layers 0 and 2 are sparse MoE blocks of 8 experts
# (moe_intermediate_size 16: neither hidden == 2I nor hidden == I, so the
# expert layouts cannot be confused, and torch's grouped_mm takes rows of a
# multiple of 16 bytes in bfloat16 too), top 2, and layer 1 a dense MLP of
# 16 (mlp_only_layers). DeepStack's two features go in after layers 0 and 1.
# Every case asserts that the prompt's tokens route to different expert
# sets in each sparse layer and that no k-th choice is near a tie
# (qwen2_vl_oracle._router_record; recorded as the manifest's "router").
QWEN3_VL_MOE = Family(
    name="qwen3_vl_moe", kind="qwen2_vl", seed=11018,
    config={"architectures": ["Qwen3VLMoeForConditionalGeneration"], "model_type": "qwen3_vl_moe",
            "image_token_id": 151655, "video_token_id": 151656, "vision_start_token_id": 151652,
            "vision_end_token_id": 151653, "tie_word_embeddings": True,
            "text_config": {"model_type": "qwen3_vl_moe_text", "vocab_size": 151936, "hidden_size": 8,
                            "intermediate_size": 16, "num_hidden_layers": 3, "num_attention_heads": 2,
                            "num_key_value_heads": 1, "head_dim": 32, "max_position_embeddings": 32768,
                            "rms_norm_eps": 1e-06, "tie_word_embeddings": True, "bos_token_id": 151643,
                            "eos_token_id": 151645, "attention_bias": False,
                            "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 16,
                            "decoder_sparse_step": 1, "mlp_only_layers": [1],
                            "rope_parameters": {"rope_type": "default", "rope_theta": 5000000.0,
                                                "mrope_section": [6, 5, 5], "mrope_interleaved": True}},
            "vision_config": {"model_type": "qwen3_vl_moe_vision", "depth": 3, "hidden_size": 32,
                              "intermediate_size": 64, "num_heads": 2, "in_channels": 3, "patch_size": 16,
                              "spatial_merge_size": 2, "temporal_patch_size": 2, "out_hidden_size": 8,
                              "num_position_embeddings": 16, "deepstack_visual_indexes": [0, 1],
                              "hidden_act": "gelu_pytorch_tanh"}},
    midsize_config={}, tokenizer=None, tokenizer_config=None,
    chat_template=_read_template("qwen3_vl_thinking.jinja"), real_tokenizer="qwen3", weights_dtype="bfloat16",
    processor=QWEN3_VL.processor,
    cases=[
        # 3x4 merged tokens; the processor's tensors are this case's own.
        Case("one_image", images=("chelsea.png",), messages=_image_chat("What is in this picture?"),
             pil_stages=False),
        Case("text_only", messages=[{"role": "user", "content": [
            {"type": "text", "text": "Tell me a short story about a robot and a cat."}]}]),
        Case("one_image_bf16", images=("chelsea.png",), dtype="bfloat16",
             messages=_image_chat("What is in this picture?"), pixel_values_from="../one_image",
             pil_stages=False),
    ])

# The same model with its experts in the hub's layout ([E, hidden, 2I],
# [E, I, hidden], as Qwen/Qwen3-VL-30B-A3B-Instruct publishes them), which
# Transformers 5.23 transposes on load: one image case.
QWEN3_VL_MOE_HUB = dataclasses.replace(
    QWEN3_VL_MOE, name="qwen3_vl_moe_hub", hub_expert_layout=True,
    cases=[dataclasses.replace(QWEN3_VL_MOE.cases[0], pixel_values_from="../../qwen3_vl_moe/one_image")])

# Phi-4-multimodal's decoder in miniature: fused qkv and gate_up, 2 heads of
# 8 over a hidden of 16 with one KV head, partial rotary 0.75 (6 of 8 dims, 3
# LongRoPE factors each), tied embeddings, the real Qwen3 vocabulary with the
# Phi-4 chat and media tokens added as its tokenizer has them, and eos the
# <|endoftext|> / <|end|> pair (Phi-4's 199999 / 200020). The LongRoPE switch
# (original_max_position_embeddings) is 40 tokens so cases cross it cheaply;
# max_position_embeddings 4096 makes the attention factor that of the real
# 131072 / 4096 ratio's formula. Two PEFT adapters (rank, alpha) of different
# scales. The vision and audio towers are the smallest the config allows.
PHI4_CHAT = [{"role": "user", "content": "Tell me a short story about a robot and a cat."}]
PHI4_LONG = [{"role": "user", "content": "Write a long poem about the sea, the wind, the stars above the "
                                         "harbour, the fishing boats coming home at night, the gulls, the nets "
                                         "drying on the quay and the old lighthouse keeper who watches them "
                                         "all from his tower."}]
PHI4_SPEECH = [{"role": "user", "content": "<|endoftext11|>\nTranscribe the audio clip into text."}]
PHI4_LONG_CLIP = ("speech_describe_16k.wav", "speech_quick_fox_16k.flac") * 6
PHI4_MULTIMODAL = Family(
    name="phi4_multimodal", kind="phi4", seed=4014,
    config={"architectures": ["Phi4MultimodalForCausalLM"], "model_type": "phi4_multimodal",
            "vocab_size": 151936, "hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 2,
            "num_attention_heads": 2, "num_key_value_heads": 1, "max_position_embeddings": 4096,
            "original_max_position_embeddings": 40, "rms_norm_eps": 1e-05, "tie_word_embeddings": True,
            "bos_token_id": 151643, "pad_token_id": 151643, "eos_token_id": [151643, 151669],
            "rope_parameters": {"rope_type": "longrope", "rope_theta": 10000.0, "partial_rotary_factor": 0.75,
                                "short_factor": [1.0, 1.25, 1.75], "long_factor": [2.0, 5.0, 11.0],
                                "original_max_position_embeddings": 40},
            "vision_config": {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 2,
                              "num_attention_heads": 2, "image_size": 64, "patch_size": 2, "crop_size": 64,
                              "image_token_id": 151674},
            # chunk_size 4 / left_chunk 2 (Phi-4's is -1: one chunk) so the
            # streaming mask the encoder adds to its bias is not all ones.
            "audio_config": {"hidden_size": 16, "intermediate_size": 32, "num_blocks": 1,
                             "num_attention_heads": 2, "depthwise_separable_out_channel": 16,
                             "ext_pw_out_channel": 16, "nemo_conv_channels": 16, "audio_token_id": 151675,
                             "chunk_size": 4, "left_chunk": 2}},
    midsize_config={}, tokenizer=None, tokenizer_config=None,
    chat_template=_read_template("phi4_multimodal.jinja"), real_tokenizer="qwen3", weights_dtype="bfloat16",
    # <|tool|> (the template's) before the media tokens puts them at the
    # config's ids: <|endoftext10|> 151674 (image), <|endoftext11|> 151675 (audio).
    added_tokens=(("<|end|>", True), ("<|user|>", True), ("<|assistant|>", True), ("<|system|>", True),
                  ("<|tool|>", True), ("<|endoftext10|>", True), ("<|endoftext11|>", True)),
    # The image processor at 64 px crops of 2 px patches: the tower sees 32x32
    # patches per crop, as Phi-4-MM's 448 / 14 (the processor counts 256 + 16
    # global tokens whatever the size), and HD crops start at 64 px.
    processor={"adapters": (("vision-lora", 4, 8), ("speech-lora", 3, 9)),
               "image": {"size": 64, "patch_size": 2, "dynamic_hd": 6}},
    cases=[
        Case("text_only", messages=PHI4_CHAT),
        Case("speech_adapter", messages=PHI4_CHAT, adapter="speech-lora"),
        # Past the switch: the long factors on every prompt row.
        Case("long_prompt", messages=PHI4_LONG),
        Case("vision_adapter_long_prompt", messages=PHI4_LONG, adapter="vision-lora"),
        # A prompt under the 40-token switch whose generation crosses it.
        Case("crossing", messages=[{"role": "user", "content": "Describe the rain falling on a quiet town "
                                                               "at night, the wet streets and the lamps."}],
             new_tokens=24),
        # One crop whose right side is padding (masked patches, NaViT ids).
        Case("one_image", messages=[{"role": "user", "content": "<|endoftext10|>What is in this picture?"}],
             images=("no_time_for_that_tiny.gif",), adapter="vision-lora"),
        # 42 crops wanted, dynamic_hd 6: the aspect-ratio search picks 2x2,
        # the bottom row padded.
        Case("hd_crops", messages=[{"role": "user", "content": "<|endoftext10|>Describe the animal."}],
             images=("horse.png",), adapter="vision-lora"),
        Case("two_images", messages=[{"role": "user", "content": "<|endoftext10|><|endoftext10|>Compare them."}],
             images=("palette_color.png", "no_time_for_that_tiny.gif"), adapter="vision-lora"),
        # No patch of the tower call is padding: create_bidirectional_mask
        # gives None and sdpa runs the tower causally within each crop
        # (Phi4MultimodalVisionAttention.is_causal); two_images has the same
        # palette beside a padded image, so its tower is bidirectional.
        Case("unpadded_image", messages=[{"role": "user", "content": "<|endoftext10|>What colours are these?"}],
             images=("palette_color.png",), adapter="vision-lora"),
        # Audio only: the speech adapter, the speech projection. The
        # placeholder leads the text as vLLM's string content format puts
        # it (what `vlm run --audio` and input_audio parts become).
        Case("speech", messages=PHI4_SPEECH, audio=("speech_quick_fox_16k.flac",), adapter="speech-lora"),
        Case("speech_describe", messages=PHI4_SPEECH, audio=("speech_describe_16k.wav",), adapter="speech-lora"),
        # 42 s: 525 encoder rows, unfolded into two blocks of 500 (the
        # second padded with zero rows, which the first 25 rows attend to).
        Case("long_speech", messages=PHI4_SPEECH, audio=(PHI4_LONG_CLIP,), adapter="speech-lora"),
        # An image and a clip: the vision adapter (an image is present) and
        # the clip through the vision+speech projection; the placeholders
        # lead the text images first, as vLLM's string content format and
        # `vlm run --image --audio` put them.
        Case("image_speech", messages=[{"role": "user", "content": "<|endoftext10|>\n<|endoftext11|>\n"
                                                                   "Describe the picture and the audio."}],
             images=("no_time_for_that_tiny.gif",), audio=("speech_quick_fox_16k.flac",), adapter="vision-lora"),
        # bfloat16: Transformers runs the vision and audio towers, both
        # projections, the vision adapter and the decoder in bf16. Text and
        # speech-only prompts (the speech adapter) tie within the 0.1 bar at
        # hidden 16 (42 tried: margins 0-0.094), and so do most image
        # prompts; this image + speech pair's smallest greedy margin is
        # 0.125. The image is the one_image gif: its crop has padded
        # patches (an image with none, e.g. palette_color.png or any square
        # photo, runs the tower with causal attention in Transformers 5.23,
        # see README.md).
        Case("image_speech_bf16", messages=[{"role": "user", "content": "<|endoftext10|>\n<|endoftext11|>\n"
                                                                        "Describe the animal."}],
             images=("no_time_for_that_tiny.gif",), audio=("speech_quick_fox_16k.flac",), adapter="vision-lora",
             dtype="bfloat16"),
    ])

# Youtu-LLM's MLA decoder (YoutuForCausalLM, native in 5.23) in miniature:
# q LoRA with its norm, the compressed KV latent with its norm, interleaved
# RoPE on the rope dims, nope and v head sizes unlike each other (so a
# mix-up of the two cannot pass), tied embeddings, rope_theta 5e5 as
# Youtu-VL's. Transformers caches the normed latent and the rotated rope key
# (the kv stage holds them side by side per position: the latent layout).
YOUTU = Family(
    name="youtu", kind="causal_lm", seed=7007,
    config={"architectures": ["YoutuForCausalLM"], "model_type": "youtu", "vocab_size": 151936,
            "hidden_size": 8, "intermediate_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 2, "num_key_value_heads": 2, "q_lora_rank": 12, "kv_lora_rank": 10,
            "qk_rope_head_dim": 4, "qk_nope_head_dim": 6, "v_head_dim": 5, "rope_interleave": True,
            "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "tie_word_embeddings": True,
            "bos_token_id": 151643, "eos_token_id": 151645, "attention_bias": False,
            "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}},
    midsize_config={}, tokenizer=None, tokenizer_config=None,
    chat_template=None, real_tokenizer="qwen3", weights_dtype="bfloat16",
    cases=[
        Case("chat", messages=ROBOT_CHAT),
        Case("plain", prompt="The quick brown fox jumps over the lazy dog."),
        Case("chat_bf16", messages=CAT_CHAT, dtype="bfloat16"),
    ])

# The hub's int4 layouts on the Qwen2 decoder: GPTQ as the official
# Qwen2-VL / Qwen2.5-VL -GPTQ-Int4 repositories write it (symmetric, no
# act-order, the original "gptq" format), GPTQ with act-order and zero
# points, and AWQ's GEMM layout (-AWQ). Groups of 32 so each layer has
# several.
_QUANT_CASES = [Case("chat", messages=[{"role": "user", "content": "Tell me a short story about a robot."}]),
                Case("plain", prompt="The quick brown fox jumps over the lazy dog.")]
QWEN2_GPTQ = dataclasses.replace(QWEN2, name="qwen2_gptq", cases=_QUANT_CASES, midsize_case="chat",
                                 quantization={"method": "gptq", "group_size": 32, "sym": True, "desc_act": False})
QWEN2_GPTQ_ACT = dataclasses.replace(QWEN2, name="qwen2_gptq_act", cases=_QUANT_CASES[:1], midsize_case="chat",
                                     quantization={"method": "gptq", "group_size": 32, "sym": False,
                                                   "desc_act": True})
QWEN2_AWQ = dataclasses.replace(QWEN2, name="qwen2_awq", cases=_QUANT_CASES, midsize_case="chat",
                                quantization={"method": "awq", "group_size": 32})

FAMILIES = {family.name: family for family in (LLAMA, QWEN2, LLAVA, LLAMA_REALTOK, QWEN2_REALTOK,
                                               LLAVA_REALTOK, LLAVA_V4, MISTRAL, QWEN3, GEMMA3_TEXT,
                                               GEMMA3, GEMMA3_V4, QWEN2_VL, QWEN2_VL_V4, QWEN2_5_VL,
                                               QWEN3_VL, QWEN3_VL_MOE, QWEN3_VL_MOE_HUB, PHI4_MULTIMODAL,
                                               QWEN2_GPTQ, QWEN2_GPTQ_ACT, QWEN2_AWQ, YOUTU)}
