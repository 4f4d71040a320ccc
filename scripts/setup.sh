#!/usr/bin/env bash
# Installs the Debian 12 build dependencies (if missing) and builds gpuadvisor
# into ./build. Used by the README's two commands and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(build-essential cmake libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev catch2)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
