#!/usr/bin/env bash
# The test command (README and .ci/run): installs what the build needs, builds,
# runs the Catch2 suite, then builds again with AddressSanitizer and
# UndefinedBehaviorSanitizer (./build-asan) and runs the whole suite there too.
#   scripts/test.sh            both
#   scripts/test.sh --quick    the normal build only
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The tools the launch-file tests run (not the main job's: only the tests need them).
scripts/install_packages.sh shellcheck python3-yaml python3-kubernetes slurmctld slurmd slurm-client munge
# The suite must leave the machine as it found it: run as root, a test that
# wrote over /dev/null once replaced the device with a regular file.
check_dev_null() { [ -c /dev/null ] || { echo "FAIL: /dev/null is no longer a character device after the tests" >&2; exit 1; }; }
ctest --test-dir build --output-on-failure -j"$(nproc)"
check_dev_null
if [ "${1:-}" != "--quick" ]; then
  # -O1 -g1 keeps the sanitized compile short (it is most of the CI time) and the reports readable.
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" -DGPUADVISOR_SANITIZE=ON \
    -DGPUADVISOR_BUILD_BENCH=OFF >/dev/null
  cmake --build build-asan -j"$(nproc)"
  # The accuracy guards (leave-one-source-out refits of every bundled case) and
  # the schema corpus run the same code paths hundreds of times: two thirds of
  # the sanitized run's time for no path the rest of the suite leaves out. They
  # run in the normal pass above; here every other test does.
  slow_repeats="out of sample|leave one source out|every prediction shows its error band|the cases bundled before|JSON outputs validate against docs/schema|schema refuses its document"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -E "$slow_repeats"
  check_dev_null
fi
