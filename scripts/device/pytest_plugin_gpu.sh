#!/bin/bash
# reservoir's pytest plugin on a real GPU: one test whose recorded allocator history fits its
# budget and one that does not, run by pytest with the plugin; prints pytest's output (that is
# what docs/python.md shows). Run on the GPU machine (Python 3.12, torch, CUDA), from a checkout:
#
#   PYTHONPATH=build/python scripts/device/pytest_plugin_gpu.sh      # the build tree's package
#   scripts/device/pytest_plugin_gpu.sh                              # an installed wheel
#
# Exit status: 0 when the fitting test passed and the other failed with reservoir.GateFailed.
set -u
PYTHON=${PYTHON:-python3}
WORK=$(mktemp -d /tmp/reservoir-plugin.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

"$PYTHON" - <<'PY' || exit 2
import sys
import torch, reservoir, pytest
print(f"python {sys.version.split()[0]}, torch {torch.__version__}, pytest {pytest.__version__}, "
      f"reservoir {reservoir.__version__} from {reservoir.__file__}")
print("cuda:", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
PY

cat > "$WORK/test_memory_budget.py" <<'PY'
import pytest
import torch

GiB = 2**30


def work(gib):
    """A few steps of a toy model whose largest activation is `gib` GiB."""
    x = torch.empty(int(gib * GiB) // 4, device="cuda")  # float32
    for _ in range(3):
        y = x * 2
        del y
    torch.cuda.synchronize()


@pytest.mark.limit_reserved("4GiB")
def test_fits_in_4_gib():
    work(1)


@pytest.mark.limit_reserved("4GiB")
def test_does_not_fit_in_4_gib():
    work(3)  # 3 GiB, and 3 GiB more for x * 2: 6 GiB reserved


@pytest.mark.limit_reserved("8GiB", cleanup=["after:test_memory_budget.py:work"])
def test_snapshot_fixture(reservoir_snapshot):
    work(1)
    trace = reservoir_snapshot()
    print(trace, trace.whatif()["whatif"]["peak_reserved"])
PY

# The wheel registers the plugin (entry point pytest11 "reservoir"); the build tree needs -p.
PLUGIN=$("$PYTHON" -c 'import importlib.metadata as m
eps = m.entry_points()
eps = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
print("" if any(e.value == "reservoir.pytest_plugin" for e in eps) else "-p reservoir.pytest_plugin")')

cd "$WORK"
echo "+ $PYTHON -m pytest $PLUGIN -rA -v --junitxml=report.xml test_memory_budget.py"
# shellcheck disable=SC2086
"$PYTHON" -m pytest $PLUGIN -p no:cacheprovider -rA -v --junitxml=report.xml test_memory_budget.py
code=$?
echo "pytest exit code: $code"
echo "--- junit properties (the snapshots' paths)"
grep -o '<property name="reservoir_snapshot"[^>]*>' report.xml
"$PYTHON" - <<'PY'
import xml.etree.ElementTree as ET
cases = {c.get("name"): c for c in ET.parse("report.xml").getroot().iter("testcase")}
fits = cases["test_fits_in_4_gib"].find("failure") is None
fails = cases["test_does_not_fit_in_4_gib"].find("failure")
ok = fits and fails is not None and "reservoir.GateFailed" in (fails.get("message") or "")
print("as expected" if ok else "NOT as expected")
raise SystemExit(0 if ok else 1)
PY
