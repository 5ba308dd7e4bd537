#!/usr/bin/env python3
"""What-if predictions against measured re-runs (docs/whatif.md, "Measured against re-runs").

Each case is a source recording, the edit as reservoir's flags, and the re-run made with that edit
for real (scripts/device/record_real_libs.sh). The prediction is `reservoir whatif SOURCE EDIT`;
the truth is the re-run's own recording replayed (its baseline, exact where `check` is). Both are
probed at the same point. Prints a Markdown table: the byte error of each figure under each address
model, and exits 1 when any default-model figure differs.

  scripts/whatif_evidence.py RESERVOIR FOLDER [--models anchored,recorded,driver]

The first model listed is the one scored (the default: anchored, reservoir's default).
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

POINT = "before:real_libs.py:second_phase"
# (source, re-run, edit): the fraction edits read F from the re-run's sidecar.
CASES = [
    ("llama-base", "llama-cleanup", ["--cleanup", POINT]),
    ("llama-base", "llama-roundup4", ["--set", "roundup_power2_divisions:4"]),
    ("llama-base", "llama-expandable", ["--set", "expandable_segments:True"]),
    ("llama-base", "llama-maxsplit", ["--set", "max_split_size_mb:64"]),
    ("llama-base", "llama-fraction", ["--fraction", "{fraction}"]),
    ("llama-base", "llama-gcthresh", ["--fraction", "{fraction}", "--set", "garbage_collection_threshold:0.6"]),
    ("llama-base-nb", "llama-cleanup-nb", ["--cleanup", POINT]),
    ("llama-base", "llama-cleanup-nb", ["--cleanup", POINT]),
    ("llama-base-nb", "llama-cleanup", ["--cleanup", POINT]),
    ("llama-base-nb", "llama-roundup4-nb", ["--set", "roundup_power2_divisions:4"]),
    ("lora-base", "lora-cleanup", ["--cleanup", POINT]),
    ("lora-base", "lora-roundup4", ["--set", "roundup_power2_divisions:4"]),
    ("trainer-base", "trainer-cleanup", ["--cleanup", POINT]),
    ("trainer-base", "trainer-roundup4", ["--set", "roundup_power2_divisions:4"]),
    ("lightning-base", "lightning-cleanup", ["--cleanup", POINT]),
    ("lightning-base", "lightning-roundup4", ["--set", "roundup_power2_divisions:4"]),
    ("vit-base", "vit-cleanup", ["--cleanup", POINT]),
    ("vit-base", "vit-roundup4", ["--set", "roundup_power2_divisions:4"]),
    ("resnet-base", "resnet-cleanup", ["--cleanup", POINT]),
    ("resnet-base", "resnet-roundup4", ["--set", "roundup_power2_divisions:4"]),
    ("compile-base", "compile-cleanup", ["--cleanup", POINT]),
    ("compile-base", "compile-roundup4", ["--set", "roundup_power2_divisions:4"]),
]
FIGURES = ("peak_reserved", "peak_allocated", "final_reserved", "reserved_at_point", "oom_event")


def whatif(reservoir, trace, edit, model, probe=True):
    cmd = [reservoir, "whatif", str(trace), *edit, *(["--probe", POINT] if probe else []), "--address-model", model,
           "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def figures(run, died_at_oom):
    """The compared figures. The OOM is compared by the allocation request that failed (the same
    request in the source and the re-run; their event numbers differ by the segment events the
    edit adds before it). A re-run that died of its OOM (dump_reason "oom") ended right after it,
    so its final reserved is compared with the prediction's reserved right after the OOM: the run's
    final figures go on past it, as if the program had caught the error."""
    at_point = run["probes"][POINT]["reserved"] if POINT in run.get("probes", {}) else None
    oom = run.get("oom") or {}
    final = oom["reserved_after"] if died_at_oom and oom else run["final_reserved"]
    return {"peak_reserved": run["peak_reserved"], "peak_allocated": run["peak_allocated"],
            "final_reserved": final, "reserved_at_point": at_point,
            "oom_event": (oom.get("request_index"), oom.get("event_index")) if oom else None}


def delta(figure, predicted, measured):
    p, m = predicted[figure], measured[figure]
    if p is None and m is None:
        return None
    if p is None or m is None:
        return f"{'no' if p is None else p} vs {'no' if m is None else m}"
    if figure == "oom_event":
        return 0 if p[0] == m[0] else f"OOM at request {p[0]} (event {p[1]}) vs {m[0]} (event {m[1]})"
    return p - m


def cell(d):
    if d is None:
        return "-"
    if isinstance(d, str):
        return d
    return "0" if d == 0 else f"{d / 2**20:+.0f} MiB"


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("reservoir")
    a.add_argument("folder", type=Path)
    a.add_argument("--models", default="anchored,recorded,driver")
    args = a.parse_args()
    models = args.models.split(",")
    print("| source | re-run (measured) | edit | " + " | ".join(f"{m}: peak res / peak alloc / final res / at point"
                                                                 for m in models) + " |")
    print("|---|---|---|" + "---|" * len(models))
    misses = 0
    for source, rerun, edit in CASES:
        src, dst = args.folder / f"{source}.w1.rank0.pickle", args.folder / f"{rerun}.w1.rank0.pickle"
        if not src.exists() or not dst.exists():
            continue
        side = json.loads(Path(str(dst)[: -len(".pickle")] + ".json").read_text())
        edit = [e.format(fraction=side.get("fraction", 1)) for e in edit]
        died = side.get("dump_reason") == "oom"
        probe = not died
        truth = whatif(args.reservoir, dst, [], "recorded", probe)  # the re-run replayed as recorded
        measured = figures(truth["baseline"], died)
        cells = []
        for model in models:
            predicted = figures(whatif(args.reservoir, src, edit, model, probe)["whatif"], died)
            deltas = [delta(f, predicted, measured) for f in FIGURES]
            if model == models[0] and any(d not in (None, 0) for d in deltas):
                misses += 1
            cells.append(" / ".join(cell(d) for d in deltas))
        exact = "" if truth.get("baseline_matches_recording", True) else " (its replay departs from its recording)"
        print(f"| {source} | {rerun}{exact} | `{' '.join(edit)}` | " + " | ".join(cells) + " |")
    print(f"\n{misses} case(s) where the {models[0]} model misses a measured figure")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
