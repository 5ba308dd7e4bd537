"""A Python thread still inside a call when the interpreter exits does not abort the process (it
did: SIGABRT, "terminate called without an active exception", from the waiting thread taking the
GIL back during finalisation). Each case runs in a fresh interpreter that exits mid-call."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from api_support import run_cli

CALLS = {
    "sweep": "trace.sweep(jobs=1)",
    "whatif": "trace.whatif(cleanup=['event:5'])",
    "load": "reservoir.load(PATH)",
    "main": "__import__('reservoir.__main__').__main__.main(['sweep', PATH, '--jobs', '1'])",
}


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    path = tmp_path_factory.mktemp("exit") / "synth-1m.pickle"
    rc, _, err = run_cli("synth", path, "--events", 1_000_000)
    assert rc == 0, err
    return str(path)


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("how", ["sys.exit", "return"])
def test_exit_while_a_daemon_thread_is_inside_a_call(synthetic, call, how):
    code = textwrap.dedent(f"""
        import sys, threading, time
        import reservoir
        PATH = {synthetic!r}
        trace = reservoir.load(PATH)
        # Finalisation frees these after it has begun: the waiting thread wakes during it (without
        # them the process may end before it does; with them it aborted every time).
        BIG = [object() for _ in range(5_000_000)]
        started = threading.Event()
        def work():
            started.set()
            {CALLS[call]}
        threading.Thread(target=work, daemon=True).start()
        started.wait()
        time.sleep(0.3)
        print("exiting", flush=True)
        {"sys.exit(0)" if how == "sys.exit" else "pass"}
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ))
    assert p.returncode == 0, f"exit code {p.returncode} ({signal.Signals(-p.returncode).name if p.returncode < 0 else ''})\n{p.stderr}"
    assert "terminate called" not in p.stderr and "exiting" in p.stdout, p.stderr
