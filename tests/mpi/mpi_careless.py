#!/usr/bin/env python3
"""Issue 31 under `mpirun -n 3 reservoir ...`: a snapshot without allocation history is never a
pass (gate, sweep: exit 3 with the library's sentence), rank 0's report lost to a full stdout of
its own is an error ("write failed", exit != 0), and an ordinary failure of rank 0 is not followed by
"interrupted" (mpirun ends the other processes as soon as one exits non-zero; a process that has
finished its command must not take that for an interruption). The ordinary case still passes.
Exits 77 (skipped) without mpirun."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reservoir", required=True)
    ap.add_argument("--mpirun", default="")
    ap.add_argument("--data", required=True, help="tests/data")
    ap.add_argument("--samples", required=True, help="traces/samples")
    args = ap.parse_args()
    mpirun = args.mpirun or shutil.which("mpirun")
    if not mpirun or not os.path.exists(mpirun):
        print("SKIP: mpirun not found (install openmpi-bin)")
        return SKIP
    env = dict(os.environ)
    env.pop("OMPI_COMM_WORLD_SIZE", None)
    launcher = [mpirun, "--allow-run-as-root", "--oversubscribe", "-n", "3", args.reservoir]
    none = os.path.join(args.data, "no-history", "no-traces.pickle")
    good = os.path.join(args.samples, "resume-tiny", "resume-main.rank0.pickle")
    missing = os.path.join(tempfile.gettempdir(), "reservoir-mpi-careless-no-such-file.pickle")
    failures = []

    def run(cmd, stdout=subprocess.PIPE):
        p = subprocess.run(launcher + cmd, stdout=stdout, stderr=subprocess.PIPE, text=True, env=env, timeout=600)
        return p.returncode, p.stdout or "", p.stderr

    for cmd in (["gate", none, "--max-peak-reserved", "1"], ["gate", none, none, "--capacity", "1MiB"],
                ["sweep", none]):
        code, out, err = run(cmd)
        if code == 0 or "OK" in out or "nothing to replay" not in err:
            failures.append(f"{' '.join(cmd)}: exit {code}, stdout {out!r}, stderr {err[-600:]!r}")
    # Each process's own stdout on /dev/full (rank 0's report is what is lost). mpirun's stdout on
    # /dev/full cannot be seen by the job: mpirun relays rank 0's output through a pipe and does not
    # report its own write errors (docs/cluster.md).
    full = [mpirun, "--allow-run-as-root", "--oversubscribe", "-n", "3", "sh", "-c", 'exec "$0" "$@" > /dev/full',
            args.reservoir, "gate", good, "--max-peak-reserved", "100GiB"]
    p = subprocess.run(full, capture_output=True, text=True, env=env, timeout=600)
    if p.returncode == 0 or "write failed: No space left on device" not in p.stderr:
        failures.append(f"gate with rank 0's stdout on /dev/full: exit {p.returncode}, stderr {p.stderr[-600:]!r}")
    for attempt in range(6):  # the race is timing's: several tries
        for cmd in (["info", missing], ["check", missing], ["gate", missing, "--max-peak-reserved", "1GiB"]):
            code, _, err = run(cmd)
            if code == 0 or "interrupted" in err:
                failures.append(f"{' '.join(cmd)} (try {attempt + 1}): exit {code}, stderr {err[-600:]!r}")
    code, out, err = run(["gate", good, "--max-peak-reserved", "100GiB"])
    if code != 0 or not out.startswith("OK: "):
        failures.append(f"the ordinary gate: exit {code}, stdout {out!r}, stderr {err[-600:]!r}")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
