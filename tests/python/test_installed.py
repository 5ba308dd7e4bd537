"""The installed wheel, as a user has it (RESERVOIR_TEST_INSTALLED=1, scripts/test-wheel.sh): the
package comes from the venv's site-packages, never from the checkout; the console script and the
capture kit's help work there without torch. Skipped outside that run."""

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from api_support import SOURCE, TINY

pytestmark = pytest.mark.skipif(os.environ.get("RESERVOIR_TEST_INSTALLED") != "1",
                                reason="runs against an installed wheel (scripts/test-wheel.sh)")


def _fresh(*args):
    """A new process of this interpreter with nothing added to its path (as a user's shell has it)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=300)


def test_the_package_is_the_installed_one():
    import reservoir
    import reservoir._core

    site = Path(sysconfig.get_paths()["platlib"]).resolve()
    for module in (reservoir, reservoir._core):
        path = Path(module.__file__).resolve()
        assert site in path.parents, f"{module.__name__} comes from {path}, not from the venv's {site}"
        assert SOURCE.resolve() not in path.parents or site in path.parents


def test_the_console_script_runs_the_command_line():
    script = Path(sysconfig.get_paths()["scripts"]) / "reservoir"
    assert script.is_file(), f"the wheel installed no {script}"
    p = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("reservoir "), (p.returncode, p.stdout, p.stderr)
    p = subprocess.run([str(script), "info", str(TINY), "--json"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and '"peak_reserved"' in p.stdout, p.stderr


def test_a_whatif_in_a_fresh_process():
    code = ("import reservoir; r = reservoir.load(%r).whatif(cleanup=['after:state_dict_loader.py:load'], "
            "probe=['after:state_dict_loader.py:load']); print(r['whatif']['peak_reserved'] > 0)") % str(TINY)
    p = _fresh("-c", code)
    assert p.returncode == 0 and p.stdout.strip() == "True", p.stderr


def test_the_capture_kit_prints_help_without_torch():
    assert _fresh("-c", "import torch").returncode != 0, "this venv has torch: the test needs one without it"
    p = _fresh("-m", "reservoir.capture", "--help")
    assert p.returncode == 0 and "usage" in p.stdout.lower(), (p.returncode, p.stdout, p.stderr)
