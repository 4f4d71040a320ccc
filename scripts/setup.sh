#!/usr/bin/env bash
# Installs the Debian 12 build dependencies (if missing) and builds gpuadvisor
# into ./build. Used by the README's two commands and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(build-essential cmake libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev catch2 libcurl4-openssl-dev libyaml-cpp-dev python3 python3-jsonschema chromium librsvg2-bin fonts-dejavu-core)
scripts/install_packages.sh "${pkgs[@]}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
