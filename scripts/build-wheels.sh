#!/usr/bin/env bash
# scripts/build-wheels.sh OUTDIR PYTHON...: one self-contained wheel per interpreter into OUTDIR,
# named as the wheel spec says (reservoir-<version>-cp3XY-cp3XY-manylinux_2_NN_x86_64.whl, NN the
# newest glibc its module needs, measured). The libraries are built once (build-wheels/), the
# module once per interpreter; offline, from Debian's packages (docs/install.md). Exits 1 when any
# wheel fails. E.g.: scripts/build-wheels.sh dist $(pyenv root)/versions/3.{9,12}*/bin/python3
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -lt 2 ]; then
  echo "usage: $0 OUTDIR PYTHON..." >&2
  exit 2
fi
out="$1"
shift
# The builder needs only the standard library: python3 on PATH runs it (else the first PYTHON).
runner="$(command -v python3 || echo "$1")"
PYTHONPATH="$root/packaging" exec "$runner" -m reservoir_build --out "$out" "$@"
