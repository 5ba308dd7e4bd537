"""`python3 -m reservoir` with nowhere to write its report (issue 31, item 4): stdout on /dev/full
exited 0 and the report was lost. The command line's own rule (runCli flushes and checks stdout)
applies in this process too: "write failed: No space left on device" on stderr, exit 3.
Runs under pytest, or alone: PYTHONPATH=build/python python3 tests/python/test_cli_output.py"""

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_support import TINY  # noqa: E402


def run_module(args, stdout):
    return subprocess.run([sys.executable, "-m", "reservoir", *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=600, env=dict(os.environ))


def test_a_full_stdout_is_an_error():
    for args in (["info", str(TINY)], ["gate", str(TINY), "--max-peak-reserved", "100GiB"], ["info", "--help"]):
        with open("/dev/full", "w") as full:
            p = run_module(args, full)
        assert p.returncode == 3, (args, p.returncode, p.stderr)
        assert "standard output: write failed: No space left on device" in p.stderr, p.stderr
        ok = run_module(args, subprocess.PIPE)
        assert ok.returncode == 0 and ok.stdout, (args, ok.stderr)


if __name__ == "__main__":
    test_a_full_stdout_is_an_error()
    print("ok")
