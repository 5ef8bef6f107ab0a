#!/usr/bin/env python3
"""Packs and unpacks the real tokenizers of the golden models (standard
library only: the tests run it, with no venv).

A model directory under tests/models whose tokenizer is a real one
(tools/oracle/tokenizer_real.py) holds, instead of tokenizer.json, either

  tokenizer.json.gz     the saved file, gzipped (no name or time in the
                        header, so packing twice gives the same bytes), or
  tokenizer.json.patch  {"fixture": NAME, "fixture_sha256": ..., "replace":
                        {key: value}, "model": {key: value}, "added_tokens":
                        {index: token}}: the saved file as the published one
                        in ../shared/fixtures/tokenizers/NAME with those
                        top-level keys, model keys and added-token entries
                        replaced. Chosen when it is small (Qwen3 and Gemma 3:
                        a few keys against 11 and 33 MB files).

    tokenizer_files.py unpack MODEL_DIR OUT_DIR [--fixtures DIR]

makes OUT_DIR a model directory vlm can open: a symbolic link to each file of
MODEL_DIR and the unpacked tokenizer.json. Exit status 77 when a patch needs
the fixtures and they are absent (the caller reports a skip), 1 when the
fixture is not the one the patch was made against.
"""
import argparse
import gzip
import hashlib
import json
import os
import sys

PATCH_LIMIT = 256 * 1024  # bytes; a larger patch is not worth the fixture dependency
SKIP = 77


def _sha256(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def _load(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def make_patch(saved, published):
    patch = {"replace": {}, "model": {}, "added_tokens": {}}
    for key in sorted(set(saved) | set(published)):
        if saved.get(key) == published.get(key):
            continue
        if key == "model" and isinstance(saved.get(key), dict) and isinstance(published.get(key), dict):
            for sub in sorted(set(saved[key]) | set(published[key])):
                if saved[key].get(sub) != published[key].get(sub):
                    patch["model"][sub] = saved[key].get(sub)
        elif key == "added_tokens" and len(saved.get(key) or []) == len(published.get(key) or []):
            for index, (ours, theirs) in enumerate(zip(saved[key], published[key])):
                if ours != theirs:
                    patch["added_tokens"][str(index)] = ours
        else:
            patch["replace"][key] = saved.get(key)
    return patch


def apply_patch(published, patch):
    result = dict(published)
    for key, value in patch["replace"].items():
        result[key] = value
    if patch["model"]:
        result["model"] = dict(result["model"], **patch["model"])
    if patch["added_tokens"]:
        tokens = list(result["added_tokens"])
        for index, token in patch["added_tokens"].items():
            tokens[int(index)] = token
        result["added_tokens"] = tokens
    return result


def pack(model_dir, fixture_dir, fixture_name):
    """model_dir/tokenizer.json -> tokenizer.json.patch or tokenizer.json.gz."""
    saved_path = os.path.join(model_dir, "tokenizer.json")
    published_path = os.path.join(fixture_dir, "tokenizer.json")
    saved = _load(saved_path)
    patch = make_patch(saved, _load(published_path))
    patch = {"fixture": fixture_name, "fixture_sha256": _sha256(published_path), **patch}
    text = json.dumps(patch, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    if len(text.encode()) <= PATCH_LIMIT and apply_patch(_load(published_path), patch) == saved:
        with open(saved_path + ".patch", "w", encoding="utf-8") as out:
            out.write(text)
    else:
        with open(saved_path, "rb") as handle:
            data = handle.read()
        with open(saved_path + ".gz", "wb") as out:
            # mtime 0 and no file name: the same bytes on every run.
            with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as packed:
                packed.write(data)
    os.remove(saved_path)


def unpack(model_dir, out_dir, fixtures):
    os.makedirs(out_dir, exist_ok=True)
    for name in sorted(os.listdir(model_dir)):
        if name in ("tokenizer.json.gz", "tokenizer.json.patch", "tokenizer.json"):
            continue
        link = os.path.join(out_dir, name)
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.abspath(os.path.join(model_dir, name)), link)
    target = os.path.join(out_dir, "tokenizer.json")
    packed = os.path.join(model_dir, "tokenizer.json.gz")
    patch_path = os.path.join(model_dir, "tokenizer.json.patch")
    if os.path.isfile(os.path.join(model_dir, "tokenizer.json")):
        data = open(os.path.join(model_dir, "tokenizer.json"), "rb").read()
    elif os.path.isfile(packed):
        with gzip.open(packed, "rb") as handle:
            data = handle.read()
    elif os.path.isfile(patch_path):
        patch = _load(patch_path)
        published = os.path.join(fixtures, patch["fixture"], "tokenizer.json")
        if not os.path.isfile(published):
            print(f"skipped: {model_dir} needs {published} (../shared/fixtures)", file=sys.stderr)
            return SKIP
        if _sha256(published) != patch["fixture_sha256"]:
            print(f"{published}: not the file {patch_path} was made against", file=sys.stderr)
            return 1
        data = json.dumps(apply_patch(_load(published), patch), ensure_ascii=False).encode()
    else:
        print(f"{model_dir}: no tokenizer.json, tokenizer.json.gz or tokenizer.json.patch", file=sys.stderr)
        return 1
    with open(target, "wb") as out:
        out.write(data)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    un = sub.add_parser("unpack")
    un.add_argument("model_dir")
    un.add_argument("out_dir")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    un.add_argument("--fixtures", default=os.path.join(os.path.dirname(root), "shared", "fixtures", "tokenizers"))
    arguments = parser.parse_args()
    return unpack(arguments.model_dir, arguments.out_dir, arguments.fixtures)


if __name__ == "__main__":
    sys.exit(main())
