#!/usr/bin/env bash
# The Kubernetes manifests in deploy/kubernetes: deploy/check_manifests.py
# validates them against the Kubernetes JSON schemas kubernetes-validate
# bundles (strict, Kubernetes 1.30 and 1.37; nothing fetched), checks that
# they fit together, that vlm parses the container's arguments, and that a
# `vlm serve` started with them (on the tiny LLaVA, loopback) answers the
# probes and exports the HPA's metric and the endpoint picker's, that the
# init-container example's `vlm pull` fills a cache (from the stand-in hub,
# tests/hub/fake_hub.py) its server's --model ID opens offline; and the
# Dockerfile passes hadolint. Needs .venv-deploy
# (deploy/requirements.txt, created by scripts/test.sh); without it, reports
# SKIP(no-venv-deploy). Arguments: VLM MAKE_TINY SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"
python=$source_dir/.venv-deploy/bin/python
if [ -x "$python" ]; then
  check deploy_manifests "$python" "$source_dir/deploy/check_manifests.py" --vlm "$vlm" \
    --model "$source_dir/tests/models/llava"
else
  skip no-venv-deploy deploy_manifests "$python is missing; create it with python3 -m venv .venv-deploy &&" \
    ".venv-deploy/bin/pip install -r deploy/requirements.txt"
fi
# The container image's Dockerfile (docker cannot run here: it is linted
# instead; the .deb it installs is built, installed and run by
# scripts/check-package.sh).
hadolint=$source_dir/.venv-deploy/bin/hadolint
if [ -x "$hadolint" ]; then
  check dockerfile_passes_hadolint "$hadolint" --no-color "$source_dir/Dockerfile"
else
  skip no-venv-deploy dockerfile_passes_hadolint "$hadolint is missing; pip install -r deploy/requirements.txt into .venv-deploy"
fi
finish
