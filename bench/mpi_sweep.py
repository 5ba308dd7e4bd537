#!/usr/bin/env python3
"""The MPI driver's figures (docs/performance.md, docs/cluster.md).

A sweep over every shared trace (the list repeated --repeat-list times, so that a job lasts long
enough to measure) without MPI, under `mpirun -n 1` and under `mpirun -n 2`, one thread per
process, each the best of --runs runs. The machine may be shared: the load average is printed
with each figure, and besides wall time each run's CPU time is given (the `mpi` object's
cpu_seconds per process; getrusage of the children without MPI), from which the speedup on idle
cores follows: all the CPU time of one process over the largest process's CPU time of two.
Then the cost model of docs/cluster.md: seconds per MB read and per million events replayed.

    bench/mpi_sweep.py [--build build] [--traces ../shared/traces] [--candidates 100]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def timed(cmd):
    """Wall seconds, children's CPU seconds and stdout of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.stdout


def best(cmd, runs):
    results = [timed(cmd) for _ in range(runs)]
    return min(results, key=lambda r: r[0])


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(root, "build"))
    ap.add_argument("--traces", default=os.path.join(root, "..", "shared", "traces"))
    ap.add_argument("--candidates", type=int, default=100)
    ap.add_argument("--repeat-list", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    bin_ = os.path.join(a.build, "replay", "cli", "reservoir")
    traces = sorted(os.path.join(r, f) for r, _, fs in os.walk(a.traces) for f in fs if f.endswith(".pickle"))
    manifest = json.load(open(os.path.join(a.traces, "MANIFEST.json")))
    mb = sum(os.path.getsize(t) for t in traces) / 1e6
    events = sum(max(manifest.get(os.path.relpath(t, a.traces), {}).get("events_per_device", [0])) for t in traces)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(traces * a.repeat_list) + "\n")
        listing = f.name
    mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
    sweep = [bin_, "sweep", "@" + listing, "--max-candidates", str(a.candidates), "--jobs", "1", "--json"]
    n = len(traces) * a.repeat_list
    print(f"{n} traces ({len(traces)} files x {a.repeat_list}), {mb * a.repeat_list:.1f} MB, "
          f"{events * a.repeat_list} events (busiest device), up to {a.candidates} candidates each; "
          f"{os.cpu_count()} cores; load {load()}")
    try:
        check = best([bin_, "check", "@" + listing, "--json"], a.runs)
        print(f"check (read + one replay each), no MPI: {check[0]:.2f} s wall, {check[1]:.2f} s CPU   load {load()}")
        plain = best(sweep, a.runs)
        print(f"sweep, no MPI:       {plain[0]:.2f} s wall, {plain[1]:.2f} s CPU   load {load()}")
        rows = {}
        for procs in (1, 2):
            wall, cpu, out = best(mpirun + ["-n", str(procs)] + sweep, a.runs)
            per = json.loads(out)["mpi"]["per_process"]
            rows[procs] = (wall, per)
            print(f"sweep, mpirun -n {procs}: {wall:.2f} s wall; per process: "
                  + ", ".join(f"{p['items']} items {p['seconds']:.2f} s wall {p['cpu_seconds']:.2f} s CPU" for p in per)
                  + f"   load {load()}")
    finally:
        os.unlink(listing)
    one_cpu = sum(p["cpu_seconds"] for p in rows[1][1])
    two_max_cpu = max(p["cpu_seconds"] for p in rows[2][1])
    print(f"mpirun -n 1 vs no MPI: {100 * (rows[1][0] / plain[0] - 1):+.1f}% wall "
          f"(items' CPU {one_cpu:.2f} s vs {plain[1]:.2f} s for the whole plain run)")
    print(f"2 processes vs 1: {rows[1][0] / rows[2][0]:.2f}x wall; on idle cores (CPU of one / largest CPU of two): "
          f"{one_cpu / two_max_cpu:.2f}x")
    per_replay = (plain[1] - check[1]) / a.candidates  # CPU seconds of one more replay of every trace
    per_mevent = per_replay / (events * a.repeat_list / 1e6)
    per_mb = max(check[1] - per_replay, 0.0) / (mb * a.repeat_list)
    print(f"cost model (CPU, one core): {per_mb:.4f} s per MB read, {per_mevent:.3f} s per million events replayed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
