#!/usr/bin/env python3
"""One case of the MPI tests: `reservoir CMD` over a list of traces run by one process and by
`mpirun -n N`, whose outputs must be equal byte for byte apart from timings (text: "in X.XX s";
JSON: every "seconds" key) and the `mpi` object, which is checked on its own: N processes, each
with at least one item, the items adding up to the total. Exits 77 (skipped) when mpirun or the
traces are absent; 1 with the difference otherwise."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

COMMANDS = {
    "check": [],
    "whatif": ["--set", "expandable_segments:True"],
    "gate": ["--max-peak-reserved", "100GiB"],
    "sweep": ["--max-candidates", "6", "--top", "4"],
    # a grid of 6 targets from two captures (w2 and w4 of the same program); items are targets
    "scale": ["--to", "world=8,16,32,64,128,256"],
}
SCALE_INPUTS = ("w2-s4096.rank0.pickle", "w4-s4096.rank0.pickle")


def traces_in(folder):
    found = []
    for root, _, files in os.walk(folder):
        for f in files:
            if f.endswith(".pickle") or f.endswith(".pickle.gz") or f.endswith(".pickle.zst"):
                found.append(os.path.abspath(os.path.join(root, f)))
    return sorted(found)


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    return p.returncode, p.stdout, p.stderr


def strip_timing(value):
    if isinstance(value, dict):
        return {k: strip_timing(v) for k, v in value.items() if k not in ("seconds", "mpi")}
    if isinstance(value, list):
        return [strip_timing(v) for v in value]
    return value


def text_without_timing(text):
    return re.sub(r" in \d+\.\d\d s\b", " in _ s", text)


def expected_items(command, n_traces, processes):
    if command == "scale":
        return len(COMMANDS["scale"][1].split("=")[1].split(","))
    if command != "sweep" or processes <= 1:
        return n_traces
    slices = min(8, max(1, -(-2 * processes // n_traces)))
    return n_traces * slices


def check_mpi_object(report, processes, total):
    mpi = report.get("mpi")
    if mpi is None:
        return "no `mpi` object in the JSON of the MPI run"
    if mpi["processes"] != processes or len(mpi["per_process"]) != processes:
        return f"mpi.processes {mpi['processes']} / {len(mpi['per_process'])} entries, expected {processes}"
    items = [p["items"] for p in mpi["per_process"]]
    if min(items) < 1:
        return f"a process got no item: {items}"
    if sum(items) != total:
        return f"items {items} add up to {sum(items)}, expected {total}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reservoir", required=True)
    ap.add_argument("--mpirun", default="")
    ap.add_argument("--np", type=int, default=3)
    ap.add_argument("--traces", required=True, help="a folder; every pickle under it is one item")
    ap.add_argument("--command", required=True, choices=sorted(COMMANDS))
    ap.add_argument("--missing", action="store_true", help="add a file that does not exist to the list")
    args = ap.parse_args()
    mpirun = args.mpirun or shutil.which("mpirun")
    if not mpirun or not os.path.exists(mpirun):
        print("SKIP: mpirun not found (install openmpi-bin)")
        return SKIP
    if not os.path.isdir(args.traces):
        print(f"SKIP: no traces at {args.traces}")
        return SKIP
    traces = traces_in(args.traces)
    scale_inputs = [t for t in traces if os.path.basename(t) in SCALE_INPUTS]
    if args.command == "scale" and len(scale_inputs) != len(SCALE_INPUTS):
        print(f"SKIP: the scale captures {SCALE_INPUTS} are not in {args.traces}")
        return SKIP
    missing = os.path.join(tempfile.gettempdir(), "reservoir-mpi-test-no-such-file.pickle")
    if args.missing:
        traces.insert(len(traces) // 2, missing)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("# traces of one job\n" + "\n".join(traces) + "\n")
        listing = f.name
    env = dict(os.environ)
    env.pop("OMPI_COMM_WORLD_SIZE", None)
    launcher = [mpirun, "--allow-run-as-root", "--oversubscribe", "-n", str(args.np)]
    failures = []
    try:
        for json_mode in (False, True):
            if args.command == "scale":
                cmd = [args.reservoir, "scale"] + [a for t in scale_inputs for a in ("--from", t)]
                cmd += COMMANDS["scale"]
            else:
                cmd = [args.reservoir, args.command, "@" + listing] + COMMANDS[args.command]
            if json_mode:
                cmd.append("--json")
            one = run(cmd, env)
            many = run(launcher + cmd, env)
            what = f"{args.command} {'--json' if json_mode else '(text)'} over {len(traces)} traces"
            if one[0] != many[0]:
                failures.append(f"{what}: exit code {one[0]} alone, {many[0]} under mpirun\n{many[2]}")
            if json_mode and one[1] and many[1]:
                a, b = json.loads(one[1]), json.loads(many[1])
                if "mpi" in a:
                    failures.append(f"{what}: the one-process run has an `mpi` object")
                problem = check_mpi_object(b, args.np, expected_items(args.command, len(traces), args.np))
                if problem:
                    failures.append(f"{what}: {problem}")
                if strip_timing(a) != strip_timing(b):
                    failures.append(f"{what}: JSON differs\n--- one process\n{one[1][:3000]}\n--- mpirun\n{many[1][:3000]}")
                b.pop("mpi", None)
                if json.dumps(strip_timing(a), indent=2) != json.dumps(strip_timing(b), indent=2):
                    failures.append(f"{what}: JSON text differs")
            elif not json_mode and text_without_timing(one[1]) != text_without_timing(many[1]):
                failures.append(f"{what}: output differs\n--- one process\n{one[1][:3000]}\n--- mpirun\n{many[1][:3000]}")
            if not one[1].strip():
                failures.append(f"{what}: no output\n{one[2]}")
            if args.missing:
                for name, r in (("alone", one), ("under mpirun", many)):
                    if missing not in r[2]:
                        failures.append(f"{what} {name}: the missing file is not named on stderr:\n{r[2]}")
                    if r[0] != 3:
                        failures.append(f"{what} {name}: exit code {r[0]}, expected 3 (unreadable input)")
            print(f"{what}: exit {one[0]} alone and under mpirun -n {args.np}; "
                  f"{len(one[1])} bytes of output{'' if failures else ', equal'}")
    finally:
        os.unlink(listing)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
