# The vlm container image that deploy/kubernetes runs (docs/DEPLOY.md,
# "The container image"). Two stages on Debian 12: the first builds vlm's
# Release .deb (scripts/check-package.sh tests the same package in CI); the
# second installs only that .deb, whose Depends bring the runtime libraries,
# on debian:12-slim, and runs as a non-root user.
#
#   docker build -t registry.example.com/vlm:0.1.0 .
#   docker build --build-arg WITH_XLA=1 -t registry.example.com/vlm:0.1.0-xla .
#
# WITH_XLA=1 adds the xla backend's venv (the pinned IREE compiler and
# runtime, about 600 MB) at /usr/lib/vlm/xla-venv, where an installed vlm
# looks for it. Checked in CI with hadolint (tests/cli/deploy.sh).

FROM debian:12-slim AS build
# Debian 12's packages, not pinned versions: its security updates move them.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
       build-essential cmake pkg-config dpkg-dev file \
       libonig-dev libutf8proc-dev \
       libjpeg62-turbo-dev libpng-dev libwebp-dev libgif-dev \
       libsndfile1-dev libsoxr-dev libogg-dev libvorbis-dev \
       libmicrohttpd-dev libcurl4-openssl-dev \
       libpython3.11-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DVLM_TESTS=OFF \
    && cmake --build build -j"$(nproc)"
WORKDIR /src/build
RUN cpack -G DEB

FROM debian:12-slim
ARG WITH_XLA=0
COPY --from=build /src/build/vlm_*.deb /tmp/
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates /tmp/vlm_*.deb \
    && if [ "$WITH_XLA" = 1 ]; then \
         apt-get install -y --no-install-recommends python3.11-venv \
         && python3.11 -m venv /usr/lib/vlm/xla-venv \
         && /usr/lib/vlm/xla-venv/bin/pip install --no-cache-dir -r /usr/share/vlm/xla/requirements.txt; \
       fi \
    && rm -rf /var/lib/apt/lists/* /tmp/vlm_*.deb \
    && useradd --system --uid 10001 --user-group --no-create-home --home-dir /nonexistent vlm
# Models by id resolve through the Hugging Face cache under HF_HOME (a
# volume: deploy/kubernetes); compiled xla modules are cached under
# VLM_XLA_CACHE.
ENV HF_HOME=/models/huggingface \
    VLM_XLA_CACHE=/cache/xla
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["vlm"]
CMD ["--help"]
