#!/usr/bin/env python3
"""Checks vlm's help texts against its family registry and its parsers
(tests/cli/help.sh).

  help_check.py VLM options COMMAND   every --option COMMAND --help lists is
                                      one its parser accepts (with a value of
                                      the kind its metavar names)
  help_check.py VLM families          the families --help, run --help and
                                      serve --help name for images and audio
                                      are exactly the registry's
                                      (vlm families --json)

Prints one line per finding and exits 1 when there is one.
"""
import json
import re
import subprocess
import sys

# A value of the kind each metavar names, accepted by every parser.
SAMPLES = {"N": "16", "S": "1", "T": "0.5", "P": "0.5", "R": "1.1", "K": "4", "DIR": "/tmp", "PATH": "x",
           "TEXT": "x", "JSON": "{}", "HOST": "127.0.0.1", "KEY": "k", "LIST": "localhost", "NAME": "m",
           "IDS": "[1]", "F": "x", "FILE": "x", "B": "cpu", "CASE_DIR": "/tmp", "VLM": "/bin/true"}
OVERRIDES = {"--backend": "cpu"}


def vlm_output(vlm, *arguments):
    return subprocess.run([vlm, *arguments], capture_output=True, text=True, timeout=60)


def listed_options(text):
    """(flag, metavar or None) for every --flag the option lines name."""
    found = []
    for line in text.splitlines():
        if not line.startswith("  --"):
            continue
        # A metavar follows its flag after one space; the description after two.
        for flag, metavar in re.findall(r"(--[a-z0-9-]+)(?: ([^\s,]+)(?=,|  |$))?", line):
            found.append((flag, metavar or None))
    return found


def sample(flag, metavar):
    if metavar in SAMPLES:
        return OVERRIDES.get(flag, SAMPLES[metavar])
    return metavar.split("|")[0]  # a literal: "xla", "q8|q4"


def check_options(vlm, command):
    text = vlm_output(vlm, command, "--help").stdout
    options = listed_options(text)
    findings = []
    if not options:
        findings.append(f"{command} --help lists no --options")
    for flag, metavar in options:
        arguments = [flag] + ([sample(flag, metavar)] if metavar else [])
        result = vlm_output(vlm, command, *arguments, "--help")
        if result.returncode != 0:
            findings.append(f"{command} --help lists {flag} {metavar or ''}, which its parser refuses: "
                            f"{result.stderr.strip()}")
    print(f"{command}: {len(options)} options listed, {len(options) - len(findings)} parsed")
    return findings


def names_after(text, label):
    """The comma-separated names after `label` up to the next label line."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.strip().startswith(label):
            value = line.strip()[len(label):]
            for follow in lines[index + 1:]:
                if not follow.startswith("           "):
                    break
                value += " " + follow.strip()
            return [name.strip() for name in value.rstrip(".").split(",") if name.strip()]
    return None


def check_families(vlm):
    families = json.loads(vlm_output(vlm, "families", "--json").stdout)
    expected = {"images:": [f["family"] for f in families if f["image"]],
                "audio:": [f["family"] for f in families if f["audio"]] or ["none"]}
    findings = []
    for command in ("run", "serve"):
        text = vlm_output(vlm, command, "--help").stdout
        for label, names in expected.items():
            got = names_after(text, label)
            if got != names:
                findings.append(f"{command} --help: {label} {got}, the registry: {names}")
        if "cpu-only" in text or "on the cpu\nbackend" in text:
            findings.append(f"{command} --help still says the command is cpu-only")
    top = vlm_output(vlm, "--help").stdout
    match = re.search(r"images: (.*?); audio: (.*?); text only: (.*?)\.\n", top, re.S)
    if not match:
        findings.append("vlm --help names no families")
    else:
        images = [name.strip() for name in match.group(1).split(",")]
        if images != expected["images:"]:
            findings.append(f"vlm --help: images {images}, the registry: {expected['images:']}")
        text_only = [name.strip() for name in match.group(3).split(",")]
        registry_text = [f["family"] for f in families if not f["image"] and not f["audio"]]
        if text_only != registry_text:
            findings.append(f"vlm --help: text only {text_only}, the registry: {registry_text}")
    for name in ("LLaVA",):
        if re.search(rf"with images for {name}\b", top):
            findings.append(f"vlm --help says images are for {name} only")
    print(f"families: {len(families)} in the registry; help texts checked")
    return findings


def main():
    vlm, what = sys.argv[1], sys.argv[2]
    findings = check_options(vlm, sys.argv[3]) if what == "options" else check_families(vlm)
    for finding in findings:
        print(f"  {finding}")
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
