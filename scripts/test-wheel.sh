#!/usr/bin/env bash
# The wheel as a user installs it: installed with pip into a fresh venv WITHOUT system site
# packages, then the Python suites run against that installed package (pytest from Debian's
# python3-pytest, put after the venv's own paths; the checkout's python/ is not on the path).
#   scripts/test-wheel.sh BUILD                 the wheel assembled from BUILD's self-contained module
#                                               for /usr/bin/python3 (RESERVOIR_WHEEL_PYTHONS; what
#                                               scripts/test.sh runs in CI)
#   scripts/test-wheel.sh --wheel WHEEL PYTHON  a given wheel in a venv of another interpreter
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "${1:-}" = --wheel ]; then
  wheel="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
  python="${3:?usage: $0 --wheel WHEEL PYTHON}"
  venv="$(mktemp -d)/venv"
else
  build="$(cd "${1:?usage: $0 BUILD | --wheel WHEEL PYTHON}" && pwd)"
  python=/usr/bin/python3
  rm -rf "$build/dist" "$build/wheel-venv"
  PYTHONPATH="$root/packaging" "$python" -m reservoir_build --from-build "$build" --out "$build/dist" "$python"
  wheel=$(ls "$build"/dist/reservoir-*.whl)
  venv="$build/wheel-venv"
fi
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --no-index --no-deps --disable-pip-version-check "$wheel"
# Debian's pytest (pure Python), after the venv's own paths; the suites find their data in the checkout.
cd "$root/tests/python"
export RESERVOIR_TEST_INSTALLED=1 RESERVOIR_SOURCE_DIR="$root" MPLBACKEND=Agg
export RESERVOIR_SHARED_TRACES="${RESERVOIR_SHARED_TRACES:-$root/../shared/traces}"
unset PYTHONPATH RESERVOIR_BIN RESERVOIR_PYTHON_DIR
echo "$(basename "$wheel") in a venv of $("$venv/bin/python" --version)"
exec "$venv/bin/python" -c '
import sys
sys.path.append("/usr/lib/python3/dist-packages")
import pytest
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider"] + sys.argv[1:]))
' test_installed.py test_api.py test_api_errors.py test_api_threads.py test_api_shared.py test_api_report.py test_api_cache.py test_docs.py \
  test_capture_cli.py test_capture_units.py test_committed_captures.py
