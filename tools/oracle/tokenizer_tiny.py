"""Small tokenizers of the same kind as each family's real one.

A tiny model needs a tiny vocabulary (its embedding is most of its bytes), but
the tokenizer must exercise the same machinery as the real one, so each
builder trains a BPE model with the `tokenizers` library on corpus.txt and then
installs exactly the pipeline the pinned Transformers tokenizer class builds
(see transformers/models/*/tokenization_*.py):

- sentencepiece_bpe: Llama/Vicuna/Gemma style. Byte fallback (<0x00>..<0xFF>
  right after the specials, as in Llama 2), Metaspace pre-tokenizer with
  prepend_scheme "first" and split=False, decoder Replace/ByteFallback/Fuse/
  Strip (LlamaTokenizer in transformers 5).
- byte_level_bpe: Qwen style. NFC normalizer, the Qwen2 split regex followed by
  ByteLevel (no prefix space), ByteLevel decoder (Qwen2Tokenizer).

Training is deterministic for a fixed corpus and vocabulary size.
"""
import json
import os

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus.txt")

QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def _corpus_lines():
    with open(CORPUS, encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle if line.strip()]


def _byte_tokens():
    return ["<0x%02X>" % value for value in range(256)]


def sentencepiece_bpe(vocab_size, leading_specials, trailing_specials):
    """Llama-2 layout: leading specials (<unk>, <s>, </s>), 256 byte tokens,
    merges, then trailing added tokens (e.g. <image>, <pad>)."""
    base_size = vocab_size - len(trailing_specials)
    tokenizer = Tokenizer(models.BPE(unk_token=leading_specials[0], byte_fallback=True, fuse_unk=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=True)
    trainer = trainers.BpeTrainer(vocab_size=base_size, special_tokens=leading_specials + _byte_tokens(),
                                  show_progress=False, min_frequency=1)
    tokenizer.train_from_iterator(_corpus_lines(), trainer=trainer)
    data = json.loads(tokenizer.to_str())
    # Byte tokens are ordinary vocabulary entries in Llama, not added tokens.
    data["added_tokens"] = [t for t in data["added_tokens"] if t["content"] in leading_specials]
    data["normalizer"] = None
    data["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first",
                             "split": False}
    data["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    tokenizer = Tokenizer.from_str(json.dumps(data))
    _add_trailing(tokenizer, trailing_specials, vocab_size)
    return tokenizer


def byte_level_bpe(vocab_size, trailing_specials):
    """Qwen2 layout: byte-level merges first, special tokens at the end."""
    base_size = vocab_size - len(trailing_specials)
    tokenizer = Tokenizer(models.BPE(unk_token=None, byte_fallback=False, fuse_unk=False))
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trainer = trainers.BpeTrainer(vocab_size=base_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False, min_frequency=1)
    tokenizer.train_from_iterator(_corpus_lines(), trainer=trainer)
    tokenizer.decoder = decoders.ByteLevel()
    from tokenizers import processors
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    _add_trailing(tokenizer, trailing_specials, vocab_size)
    return tokenizer


def _add_trailing(tokenizer, specials, vocab_size):
    from tokenizers import AddedToken
    tokenizer.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    if size != vocab_size:
        raise SystemExit(f"tokenizer has {size} tokens, expected {vocab_size}: adjust corpus or size")
