#!/usr/bin/env bash
# Installs what is missing, builds everything and runs every test that needs no GPU.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRESERVOIR_BUILD_TESTS=ON
cmake --build "$root/build"
cd "$root/build"
QT_QPA_PLATFORM=offscreen ctest --output-on-failure -LE gpu -j "$(nproc)"
