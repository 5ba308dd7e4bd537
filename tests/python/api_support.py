"""Where the Python API's tests find their data and the command line (set by CTest; defaults for a
manual `PYTHONPATH=build/python python3 -m pytest tests/python`)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

SOURCE = Path(os.environ.get("RESERVOIR_SOURCE_DIR") or Path(__file__).resolve().parents[2])
SAMPLES = SOURCE / "traces" / "samples"
TINY = SAMPLES / "resume-tiny" / "resume-main.rank0.pickle"
EXPANDABLE = SAMPLES / "resume-expandable" / "resume-main.rank0.pickle"
LOAD_POINT = "after:state_dict_loader.py:load"


def shared_traces():
    """../shared/traces beside the checkout, or None when it is absent (tests that need it skip)."""
    folder = Path(os.environ.get("RESERVOIR_SHARED_TRACES") or SOURCE.parent / "shared" / "traces")
    return folder if folder.is_dir() else None


def cli_command():
    """The reservoir executable (CTest gives it), else the same command line through python3 -m reservoir."""
    binary = os.environ.get("RESERVOIR_BIN")
    return [binary] if binary else [sys.executable, "-m", "reservoir"]


def run_cli(*args):
    """Runs `reservoir ARGS`; returns (exit code, stdout, stderr)."""
    p = subprocess.run(cli_command() + [str(a) for a in args], capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    rc, out, err = run_cli(*args, "--json")
    assert rc in (0, 1), f"reservoir {' '.join(map(str, args))} exited {rc}: {err}"
    return json.loads(out)


# How the command line's messages name an input or a command, and how Python's name them (the
# library words each through the front end's Wording): a CLI answer read as Python words it.
CLI_TO_PYTHON = [
    (re.compile(r"--reset-peaks (event:\d+|POINT)"), lambda m: f"reset_peaks=['{m.group(1)}']"),
    (re.compile(r"give --capacity"), lambda m: "give capacity="),
    (re.compile(r"give --peak-allocated"), lambda m: "give peak_allocated="),
    (re.compile(r"give --fraction"), lambda m: "give fraction="),
    (re.compile(r"--fraction (\d[\d.]*)"), lambda m: f"fraction={m.group(1)}"),
    (re.compile(r"'reservoir check'"), lambda m: "trace.check()"),
    (re.compile(r"'reservoir info'"), lambda m: "trace.info()"),
]


def in_python_words(value):
    """A CLI --json answer with its messages worded as Python words them."""
    if isinstance(value, str):
        for pattern, replace in CLI_TO_PYTHON:
            value = pattern.sub(replace, value)
        return value
    if isinstance(value, list):
        return [in_python_words(v) for v in value]
    if isinstance(value, dict):
        return {k: in_python_words(v) for k, v in value.items()}
    return value


def cli_json_in_python_words(*args):
    return in_python_words(cli_json(*args))
