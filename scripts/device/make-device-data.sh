#!/usr/bin/env bash
# Assembles .device-data/ (git-ignored), the folder a GPU run carries (`carry: [".device-data"]`,
# then `bash .device-data/gpu_validate.sh` or `bash .device-data/capture_all.sh`):
#   - the device scripts of this folder (validation batch, captures, config probe),
#   - ../shared/capture's resume.py and synth.py, and ../shared/traces as traces.tar.xz,
#   - deps.tar.xz: the GPU machine has no Debian -dev packages, so the headers and static
#     libraries the build finds (deps-files.txt, copied from this machine's /usr after
#     scripts/install-deps.sh) with small CMake package files (deps-overlay/); deps.cmake is
#     the initial cache that points find_package at them.
# Usage: scripts/device/make-device-data.sh [SHARED_DIR]   (default ../shared)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
shared="${1:-$root/../shared}"
out="$root/.device-data"
mkdir -p "$out"
cp "$here"/{capture_all.sh,capture_train180.sh,gpu_validate.sh,summarize.py,probe_config.py,deps.cmake} "$out/"
cp "$shared"/capture/{resume.py,synth.py} "$out/"
tar -C "$shared" -cJf "$out/traces.tar.xz" traces

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
while read -r f; do
  case "$f" in
    include/* | bin/*) src="/usr/$f" ;;
    lib/*) src="/usr/lib/x86_64-linux-gnu/${f#lib/}" ;;
    *) echo "deps-files.txt: unexpected entry $f" >&2; exit 1 ;;
  esac
  mkdir -p "$tmp/deps/$(dirname "$f")"
  cp -p "$src" "$tmp/deps/$f"
done < "$here/deps-files.txt"
cp -pr "$here/deps-overlay/." "$tmp/deps/"
tar -C "$tmp" -cJf "$out/deps.tar.xz" deps
echo "wrote $out: $(ls "$out" | tr '\n' ' ')"
