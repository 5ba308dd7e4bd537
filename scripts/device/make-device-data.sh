#!/usr/bin/env bash
# Assembles .device-data/ (git-ignored), the folder a GPU run carries (`carry: [".device-data"]`,
# then `bash .device-data/gpu_validate.sh` or `bash .device-data/capture_all.sh`):
#   - the device scripts of this folder (validation batch, captures, config probe),
#   - ../shared/capture's resume.py and synth.py, and ../shared/traces as traces.tar.xz,
#   - deps.tar.xz: the GPU machine has no Debian -dev packages, so the headers and static
#     libraries the build finds (deps-files.txt, copied from this machine's /usr after
#     scripts/install-deps.sh) with small CMake package files (deps-overlay/, and those written
#     below from one template each); deps.cmake is
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
# The CMake package files that differ only by name and version are written from one template each:
# a version file per package, and the Config of each header-only library with one target.
config_version() {  # PACKAGE VERSION
  mkdir -p "$tmp/deps/cmake/$1"
  cat > "$tmp/deps/cmake/$1/$1ConfigVersion.cmake" <<EOF
set(PACKAGE_VERSION "$2")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
EOF
}
header_only_config() {  # PACKAGE TARGET (headers in deps/include)
  mkdir -p "$tmp/deps/cmake/$1"
  cat > "$tmp/deps/cmake/$1/$1Config.cmake" <<EOF
get_filename_component(_d "\${CMAKE_CURRENT_LIST_DIR}/../../include" ABSOLUTE)
if(NOT TARGET $2)
  add_library($2 INTERFACE IMPORTED)
  set_target_properties($2 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "\${_d}")
endif()
set($1_FOUND TRUE)
EOF
}
config_version Boost 1.74.0
config_version CLI11 2.1.2
config_version GTest 1.12.1
config_version fmt 9.1.0
config_version nlohmann_json 3.11.2
header_only_config CLI11 CLI11::CLI11
header_only_config nlohmann_json nlohmann_json::nlohmann_json
tar -C "$tmp" -cJf "$out/deps.tar.xz" deps
echo "wrote $out: $(ls "$out" | tr '\n' ' ')"
