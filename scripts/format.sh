#!/usr/bin/env bash
# Formats every tracked C++ file with the project's .clang-format (clang-format 14, Debian 12).
#   scripts/format.sh          rewrite the files
#   scripts/format.sh --check  list the files that are not formatted; exit 1 if any
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.h' | grep -v '^scripts/device/deps-overlay/')
if [[ "${1:-}" == "--check" ]]; then
  bad=0
  for f in "${files[@]}"; do
    if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then echo "$f"; bad=1; fi
  done
  exit "$bad"
fi
clang-format -i "${files[@]}"
