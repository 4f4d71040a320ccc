#!/usr/bin/env bash
# Regenerates tests/golden/ — the launch files `--emit` writes for one training
# and one serving pick per target — from the built binary. Never edit them by
# hand; rerun this after a change that should change them, and read the diff.
#   scripts/regen_golden.sh      (after scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/build/gpuadvisor
export GPUADVISOR_TODAY=2026-12-01 XDG_CACHE_HOME=/nonexistent-gpuadvisor-cache
training="recommend --model llama-3-8b --task pretrain --tokens 100B --family p5 --max-instances 8"
serving="recommend --model llama-3-8b --task inference --requests-per-second 5 --family g6e"
rm -rf tests/golden && mkdir -p tests/golden
for target in skypilot slurm k8s; do
  for kind in training serving; do
    args=${!kind}
    dir=tests/golden/$target-$kind
    $bin $args --emit "$target" --emit-dir OUT >/dev/null 2>&1
    mv OUT "$dir"
  done
done
echo "regenerated: $(find tests/golden -type f | wc -l) files"
