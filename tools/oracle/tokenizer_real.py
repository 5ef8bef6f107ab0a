"""Real tokenizers for golden cases, saved as a published checkpoint has them.

A family with `real_tokenizer` takes ../shared/fixtures/tokenizers/<name>
(the published tokenizer.json + tokenizer_config.json), loads it with the
pinned Transformers' AutoTokenizer, adds the tokens its processor adds (e.g.
LLaVA's <image> and <pad>), sets the family's chat template and writes it with
the tokenizer's own save_pretrained -- what `LlavaProcessor.save_pretrained`
or `AutoTokenizer.save_pretrained` leave in a checkpoint. Transformers 5
rebuilds several tokenizer classes in code (LlamaTokenizer, Qwen2Tokenizer,
GemmaTokenizer), so the saved tokenizer.json differs from the published one;
the goldens are made from the saved files.

Real vocabularies are large (tokenizer.json of 3.5 MB for Llama 2, 11 MB for
Qwen3, 33 MB for Gemma 3), so the model directory holds them packed (see
tokenizer_files.py): a small JSON patch against the fixture when the save
changed little, else the saved file gzipped.
"""
import os
import shutil

import transformers

import tokenizer_files

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(os.path.dirname(os.path.dirname(HERE)), "..", "shared", "fixtures", "tokenizers")
FIXTURES = os.path.normpath(FIXTURES)


def save(family, model_dir):
    """Writes tokenizer.json, tokenizer_config.json (and chat_template.jinja
    where Transformers writes one) into model_dir; returns the tokenizer."""
    source = os.path.join(FIXTURES, family.real_tokenizer)
    if not os.path.isfile(os.path.join(source, "tokenizer.json")):
        raise SystemExit(f"{family.name}: needs {source} (../shared/fixtures beside the checkout)")
    tokenizer = transformers.AutoTokenizer.from_pretrained(source)
    for content, special in family.added_tokens:
        tokenizer.add_tokens([content], special_tokens=special)
    if family.tokenizer_attributes:
        tokenizer.add_special_tokens(dict(family.tokenizer_attributes))
    if family.chat_template is not None:
        tokenizer.chat_template = family.chat_template
    tokenizer.save_pretrained(model_dir)
    return tokenizer


def pack(family, model_dir):
    """Replaces model_dir/tokenizer.json by its packed form, next to the
    fixture's licence (the packaging's MIT notice travels with the file)."""
    source = os.path.join(FIXTURES, family.real_tokenizer)
    tokenizer_files.pack(model_dir, source, family.real_tokenizer)
    shutil.copyfile(os.path.join(source, "PACKAGE_LICENSE"), os.path.join(model_dir, "TOKENIZER_LICENSE"))
