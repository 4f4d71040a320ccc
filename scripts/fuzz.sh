#!/usr/bin/env bash
# Bounded fuzzing of every parser with libFuzzer (clang from Debian's packages).
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET ...]   (default 60 s, every target)
# A nightly job gives hours per target (e.g. scripts/fuzz.sh 3600); the counts
# of the last run are in docs/reliability.md §Fuzzing.
# Builds ./build-fuzz with clang, ASan and UBSan, runs each target on a copy of
# its seed corpus in fuzz/corpus/<target>/, and stops at the first crash
# (the reproducer is written to build-fuzz/crash-*). Every crash found becomes
# a regression test (tests/data/ + a Catch2 case) before it is fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(quantity catalog hf_config price_import cases fetch)
pkgs=(clang libclang-rt-14-dev cmake libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev catch2 libcurl4-openssl-dev)
scripts/install_packages.sh "${pkgs[@]}"
CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUADVISOR_FUZZ=ON \
  -DGPUADVISOR_BUILD_TESTS=OFF -DGPUADVISOR_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]/#/fuzz_}"
for t in "${targets[@]}"; do
  work="build-fuzz/corpus-$t"
  mkdir -p "$work"
  cp -n fuzz/corpus/$t/* "$work"/ 2>/dev/null || true
  echo "fuzz_$t: ${seconds}s"
  (cd build-fuzz && ./fuzz_$t -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
     -print_final_stats=1 "corpus-$t" 2>&1 | tail -4)
done
