#!/usr/bin/env bash
# scripts/build-deb.sh OUTDIR: the Debian packages of this checkout (CPack's DEB generator,
# cmake/Packaging.cmake) into OUTDIR: reservoir_<version>_amd64.deb (the CLI, the GUI, the
# Python module for this machine's python3) and, when OpenMPI is found, reservoir-mpi_<version>_amd64.deb.
# Install with `apt-get install ./reservoir_<version>_amd64.deb` (it names what it depends on).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: $0 OUTDIR}"
build="${RESERVOIR_DEB_BUILD:-$root/build-deb}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DRESERVOIR_BUILD_TESTS=OFF -DRESERVOIR_BUILD_BENCHMARKS=OFF -DRESERVOIR_BUILD_CUDA_REPLAY=OFF \
  -DRESERVOIR_BUILD_TORCH_REPLAY=OFF -DRESERVOIR_PYTHON=/usr/bin/python3 ${CMAKE_ARGS:-} > "$build.configure.log"
cmake --build "$build"
mkdir -p "$out"
(cd "$build" && cpack -G DEB -B "$build/packages" > "$build/cpack.log")
cp "$build"/packages/*.deb "$out"/
ls -l "$out"/*.deb
