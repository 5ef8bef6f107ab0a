#!/usr/bin/env bash
# Installs what vlm needs to build and test on Debian 12, from Debian's own
# packages. Idempotent: does nothing when everything is already installed.
set -euo pipefail
packages=(
  build-essential cmake pkg-config   # C11 toolchain and build
  clang libclang-rt-14-dev           # libFuzzer targets and sanitizer runtimes
  python3                            # test scripts (JSON checks)
  python3-venv                       # tools/oracle: venv for the config-defaults cross-check
  libonig-dev libutf8proc-dev        # tokenizer: regex engine, Unicode normalization
  libjpeg62-turbo-dev libpng-dev libwebp-dev libgif-dev  # media: image decoding
  libsndfile1-dev libsoxr-dev       # media: audio decoding (WAV, FLAC, Ogg Vorbis, MP3) and resampling
  libogg-dev libvorbis-dev          # media: Ogg Vorbis headers checked before libsndfile (audio_ogg.c)
  libmicrohttpd-dev libcurl4-openssl-dev  # server: HTTP/1.1, remote media fetches
  python3.11 python3.11-venv libpython3.11-dev  # xla backend: embedded CPython + IREE venv
  chromium chromium-driver           # the chat page's browser test (tests/server/test_browser.py)
)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
