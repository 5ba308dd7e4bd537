#!/usr/bin/env bash
# Installs what is missing, builds everything and runs every test that needs no GPU; then the
# wheel as a user installs it (this build's self-contained module for /usr/bin/python3, installed
# into a fresh venv without system site packages, the Python suites run against it); then builds
# the reader, model and CLI suites a second time with ASan + UBSan (build-asan) and runs them.
# RESERVOIR_SKIP_ASAN=1 skips the second build.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRESERVOIR_BUILD_TESTS=ON \
  -DRESERVOIR_WHEEL_PYTHONS=/usr/bin/python3
cmake --build "$root/build"
(cd "$root/build" && QT_QPA_PLATFORM=offscreen ctest --output-on-failure -LE gpu -j "$(nproc)")
"$root/scripts/test-wheel.sh" "$root/build"

if [ "${RESERVOIR_SKIP_ASAN:-0}" != 1 ]; then
  # -O1: what ASan recommends, and the build is shorter; -g1: line tables (file:line in the
  # reports) without the full debug info; the libraries as unity builds (their headers parsed
  # once per 8 files; the suites' own files stay one each). Only the targets the suites need.
  cmake -S "$root" -B "$root/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_UNITY_BUILD=ON -DRESERVOIR_SANITIZE=ON -DRESERVOIR_BUILD_TESTS=ON \
    -DRESERVOIR_BUILD_GUI=OFF -DRESERVOIR_BUILD_BENCHMARKS=OFF -DRESERVOIR_BUILD_CUDA_REPLAY=OFF \
    -DRESERVOIR_BUILD_TORCH_REPLAY=OFF
  cmake --build "$root/build-asan" --target traces_tests replay_cli_tests snapshot_reader_corpus_replay \
    whatif_corpus_replay
  cd "$root/build-asan"
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # The reader suites (bad inputs, hostile inputs, round trips, real traces), in as many shards
  # as there are cores, and the CLI's.
  "$root/scripts/run-sharded.sh" "$(nproc)" ./tests/traces/traces_tests --gtest_brief=1
  ./tests/replay/replay_cli_tests --gtest_brief=1 --gtest_filter='Cli*'
  # The fuzzers' committed corpora (every past finding is in them), replayed once each.
  ctest --output-on-failure -R '^fuzz[.]corpus[.]'
fi
