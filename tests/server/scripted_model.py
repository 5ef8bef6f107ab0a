"""A tiny Qwen2 checkpoint whose greedy reply is a text chosen by the test.

The browser test needs the model itself to write markdown with a <script>
in it, which a random tiny model never does. This writes one (no torch,
no numpy: safetensors is a JSON header and raw little-endian floats) with
the tokenizer of tests/models/qwen2 and every layer's attention output
and MLP output projections zero, so the last hidden state is the current
token's embedding. Each token of the script gets its own one-hot
embedding direction, and lm_head maps that direction to the next token of
the script: the reply is the script, then <|im_end|>. The chain starts at
the last token of the generation prompt ("\\n" after "<|im_start|>assistant"),
so every token id in it must be distinct (a token can have one successor).

The MLP still runs (gate and up are zero but full size), so
`intermediate_size` makes a prefill as slow as a test needs it to be.
"""
import json
import os
import shutil
import struct

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "qwen2")
END_OF_TURN = 511     # <|im_end|>
PROMPT_END = 198      # "\n", the generation prompt's last token


def token_ids(pieces):
    """Ids of the byte-level vocabulary entries `pieces` (e.g. "Ġ" for a space)."""
    with open(os.path.join(SOURCE, "tokenizer.json")) as file:
        vocab = json.load(file)["model"]["vocab"]
    return [vocab[piece] for piece in pieces]


def write(directory, pieces, intermediate_size=256, layers=2):
    """Writes the checkpoint into `directory` (created) and returns it."""
    script = token_ids(pieces)
    chain = [PROMPT_END] + script
    if len(set(chain)) != len(chain):
        raise ValueError("every token of the script (and the prompt's last) must be distinct")
    os.makedirs(directory, exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "generation_config.json"):
        shutil.copy(os.path.join(SOURCE, name), directory)
    with open(os.path.join(SOURCE, "config.json")) as file:
        config = json.load(file)
    hidden, vocab = config["hidden_size"], config["vocab_size"]
    if len(chain) > hidden:
        raise ValueError(f"a script of at most {hidden - 1} tokens fits in hidden_size {hidden}")
    heads, kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
    head_dim = hidden // heads
    config.update(tie_word_embeddings=False, intermediate_size=intermediate_size, num_hidden_layers=layers,
                  max_window_layers=layers, layer_types=["full_attention"] * layers)
    with open(os.path.join(directory, "config.json"), "w") as file:
        json.dump(config, file, indent=2)

    def zeros(*shape):
        count = 1
        for size in shape:
            count *= size
        return list(shape), bytes(4 * count)

    def ones(size):
        return [size], struct.pack(f"<{size}f", *([1.0] * size))

    embed = bytearray(4 * vocab * hidden)
    head = bytearray(4 * vocab * hidden)
    for direction, (token, successor) in enumerate(zip(chain, chain[1:] + [END_OF_TURN])):
        struct.pack_into("<f", embed, 4 * (token * hidden + direction), 1.0)
        struct.pack_into("<f", head, 4 * (successor * hidden + direction), 1.0)
    tensors = {"model.embed_tokens.weight": ([vocab, hidden], bytes(embed)),
               "model.norm.weight": ones(hidden), "lm_head.weight": ([vocab, hidden], bytes(head))}
    for layer in range(layers):
        prefix = f"model.layers.{layer}."
        tensors.update({
            prefix + "input_layernorm.weight": ones(hidden),
            prefix + "post_attention_layernorm.weight": ones(hidden),
            prefix + "self_attn.q_proj.weight": zeros(heads * head_dim, hidden),
            prefix + "self_attn.q_proj.bias": zeros(heads * head_dim),
            prefix + "self_attn.k_proj.weight": zeros(kv_heads * head_dim, hidden),
            prefix + "self_attn.k_proj.bias": zeros(kv_heads * head_dim),
            prefix + "self_attn.v_proj.weight": zeros(kv_heads * head_dim, hidden),
            prefix + "self_attn.v_proj.bias": zeros(kv_heads * head_dim),
            prefix + "self_attn.o_proj.weight": zeros(hidden, heads * head_dim),
            prefix + "mlp.gate_proj.weight": zeros(intermediate_size, hidden),
            prefix + "mlp.up_proj.weight": zeros(intermediate_size, hidden),
            prefix + "mlp.down_proj.weight": zeros(hidden, intermediate_size),
        })
    header, offset = {}, 0
    for name, (shape, data) in tensors.items():
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)
    with open(os.path.join(directory, "model.safetensors"), "wb") as file:
        file.write(struct.pack("<Q", len(encoded)))
        file.write(encoded)
        for _, data in tensors.values():
            file.write(data)
    return directory
