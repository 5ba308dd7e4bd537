#!/usr/bin/env bash
# scripts/test-wheel.sh BUILD: the wheel as a user installs it. Assembles the wheel from BUILD's
# self-contained module (configured with RESERVOIR_WHEEL_PYTHONS=/usr/bin/python3, as
# scripts/test.sh does), installs it with pip into a fresh venv WITHOUT system site packages, and
# runs the Python suites against that installed package: pytest comes from Debian's
# python3-pytest, put after the venv's site-packages, and the checkout's python/ is not on the path.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:?usage: $0 BUILD}" && pwd)"
python=/usr/bin/python3
dist="$build/dist"
venv="$build/wheel-venv"
rm -rf "$dist" "$venv"
PYTHONPATH="$root/packaging" "$python" -m reservoir_build --from-build "$build" --out "$dist" "$python"
wheel=$(ls "$dist"/reservoir-*.whl)
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --no-index --no-deps --disable-pip-version-check "$wheel"
# Debian's pytest, after the venv's own paths; the suites find their data in the checkout.
cd "$root/tests/python"
export RESERVOIR_TEST_INSTALLED=1 RESERVOIR_SOURCE_DIR="$root" MPLBACKEND=Agg
export RESERVOIR_SHARED_TRACES="${RESERVOIR_SHARED_TRACES:-$root/../shared/traces}"
unset PYTHONPATH RESERVOIR_BIN RESERVOIR_PYTHON_DIR
exec "$venv/bin/python" -c '
import sys
sys.path.append("/usr/lib/python3/dist-packages")
import pytest
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider"] + sys.argv[1:]))
' test_installed.py test_api.py test_api_errors.py test_api_threads.py test_api_shared.py test_docs.py \
  test_capture_cli.py test_capture_units.py test_committed_captures.py
