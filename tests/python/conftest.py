"""pytest set-up for the Python tests: the package from RESERVOIR_PYTHON_DIR (the build's copy,
set by CTest) or the source tree, or, with RESERVOIR_TEST_INSTALLED=1, the one installed in the
interpreter that runs pytest (a wheel in a venv: nothing is put on the path); and the stub torch
package beside this file."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent.parent
INSTALLED = os.environ.get("RESERVOIR_TEST_INSTALLED") == "1"
KIT_DIR = None if INSTALLED else Path(os.environ.get("RESERVOIR_PYTHON_DIR", SOURCE / "python"))
KIT_PATHS = [] if KIT_DIR is None else [str(KIT_DIR)]  # what a fresh process needs on PYTHONPATH
STUB_DIR = HERE / "stub_torch"

if KIT_DIR is not None:
    sys.path.insert(0, str(KIT_DIR))


def run_kit(args, cwd, stub=True, env_extra=None):
    """python3 -m reservoir.capture ARGS in a fresh process (the kit changes the environment and
    torch's modules of the process it runs in)."""
    env = dict(os.environ)
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(key, None)
    paths = [str(STUB_DIR)] if stub else []
    env["PYTHONPATH"] = os.pathsep.join(paths + KIT_PATHS)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "reservoir.capture", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def kit():
    return run_kit


@pytest.fixture
def stub_torch(monkeypatch):
    """The stub torch in this process, fresh for each test."""
    for name in list(sys.modules):
        if name == "torch" or name.startswith("torch."):
            del sys.modules[name]
    monkeypatch.syspath_prepend(str(STUB_DIR))
    import torch

    yield torch
    for name in list(sys.modules):
        if name == "torch" or name.startswith("torch."):
            del sys.modules[name]
