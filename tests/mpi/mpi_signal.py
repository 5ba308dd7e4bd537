#!/usr/bin/env python3
"""SIGTERM (what mpirun passes on for Ctrl-C, scancel or a time limit) ends every process of an
`mpirun -n 3 reservoir sweep` job promptly: mpirun returns with a non-zero code and none of the
job's reservoir processes is left. Exits 77 (skipped) without mpirun."""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77


def children(pid):
    try:
        out = subprocess.run(["ps", "--ppid", str(pid), "-o", "pid="], capture_output=True, text=True).stdout
    except OSError:
        return []
    return [int(p) for p in out.split()]


def alive_reservoir(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    # "pid (comm) state ...": a zombie (Z) or dead (X) process is gone for our purpose
    comm = stat[stat.index("(") + 1:stat.rindex(")")]
    state = stat[stat.rindex(")") + 2]
    return comm == "reservoir" and state not in "ZX"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reservoir", required=True)
    ap.add_argument("--mpirun", default="")
    ap.add_argument("--traces", required=True)
    args = ap.parse_args()
    mpirun = args.mpirun or shutil.which("mpirun")
    if not mpirun or not os.path.exists(mpirun):
        print("SKIP: mpirun not found (install openmpi-bin)")
        return SKIP
    traces = sorted(os.path.abspath(os.path.join(r, f)) for r, _, fs in os.walk(args.traces) for f in fs
                    if f.endswith(".pickle"))
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(traces * 200) + "\n")  # long enough to be interrupted
        listing = f.name
    err = tempfile.TemporaryFile("w+")
    job = subprocess.Popen([mpirun, "--allow-run-as-root", "--oversubscribe", "-n", "3", args.reservoir, "sweep",
                            "@" + listing], stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.time() + 120
        ranks = []
        while time.time() < deadline and job.poll() is None:
            err.seek(0)
            if "items done" in err.read():
                break
            ranks = children(job.pid) or ranks
            time.sleep(0.2)
        ranks = children(job.pid) or ranks
        if job.poll() is not None:
            print(f"FAIL: the job ended (exit {job.returncode}) before it could be interrupted")
            return 1
        t0 = time.time()
        job.send_signal(signal.SIGTERM)
        try:
            code = job.wait(timeout=30)
        except subprocess.TimeoutExpired:
            job.kill()
            print("FAIL: mpirun still runs 30 s after SIGTERM")
            return 1
        took = time.time() - t0
        left = ranks
        for _ in range(50):  # up to 5 s for the ranks to be gone
            left = [p for p in ranks if alive_reservoir(p)]
            if not left:
                break
            time.sleep(0.1)
        err.seek(0)
        messages = err.read()
        print(f"SIGTERM to mpirun (ranks {ranks}): it ended in {took:.2f} s with exit {code}; left: {left}")
        failures = []
        if code == 0:
            failures.append("exit code 0 after an interruption")
        if left:
            failures.append(f"processes left: {left}")
        # Rank 0's "interrupted" line is not required: mpirun may stop relaying output first.
        print("rank 0 said:", "interrupted" if "interrupted" in messages else "(its line was not relayed)")
        for f in failures:
            print("FAIL:", f)
        return 1 if failures else 0
    finally:
        if job.poll() is None:
            job.kill()
        os.unlink(listing)


if __name__ == "__main__":
    sys.exit(main())
