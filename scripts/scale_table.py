#!/usr/bin/env python3
"""The docs/scale.md table: `reservoir scale` on ../shared/traces/scale, every prediction
against the measured trace replayed alike (`reservoir whatif`, the model is exact on it).

and on ../shared/traces/scale-mixed (world, seq and batch changing together).

usage: scripts/scale_table.py BUILD_DIR [SCALE_DIR]   (prints a Markdown table)"""
import itertools, json, subprocess, sys, os

build = sys.argv[1]
scale = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "..", "shared", "traces", "scale")
exe = os.path.join(build, "replay", "cli", "reservoir")


mixed = os.path.join(os.path.dirname(os.path.abspath(scale)), "scale-mixed")


def path(tag):
    d = mixed if tag.count("-") == 2 else scale  # scale-mixed names carry the batch: w6-s16384-b1
    return next(os.path.join(d, f) for f in sorted(os.listdir(d)) if f.startswith(tag + ".rank") and f.endswith(".pickle"))


def run(args):
    r = subprocess.run([exe] + args, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return json.loads(r.stdout), None


import re


def short(where):
    # "fn (/long/path/file.py:12) <- caller (...)" -> "file.py:12 fn"
    m = re.match(r"(\S+) \((?:[^)]*/)?([^/)]+:\d+)\)", where)
    return f"{m.group(2)} {m.group(1)}" if m else where


def row(inputs, tag, target):
    j, err = run(["scale"] + sum([["--from", path(i)] for i in inputs], []) + ["--to", target, "--json",
                 "--measured", path(tag)])
    if j is None:
        return f"| {' + '.join(inputs)} | {tag} | error: {err} | | | | | |"
    c = j["check"]
    pr = j["predicted"]["peak_reserved"]
    mr = c["measured"]["peak_reserved"]
    laws = ", ".join(f"{k} {v}" for k, v in sorted(j["model"]["laws"].items()))
    misses = "; ".join(f"{m['count']}x {short(m['where'])} ({m['law']}, {m['bytes']:+d} B)" for m in c["misses"][:3])
    if len(c["misses"]) > 3:
        misses += f"; {len(c['misses']) - 3} more classes"
    unaligned = f"{c['only_predicted']}/{c['only_measured']}"
    return (f"| {' + '.join(inputs)} | {tag} | {pr} | {mr} | {c['error_peak_reserved']:+d} | {c['error_peak_allocated']:+d} "
            f"| {c['requests_equal']}/{c['requests_compared']} | {unaligned} | {laws} | {misses or '-'} |")


print("| inputs | target | predicted peak reserved | measured | error reserved (B) | error allocated (B) "
      "| requests equal | unaligned (pred/meas) | laws | request classes that miss |")
print("|---|---|---:|---:|---:|---:|---:|---:|---|---|")
worlds = ["w1-s4096", "w2-s4096", "w4-s4096", "w8-s4096", "w32-s4096"]
for a, b in itertools.combinations(worlds, 2):
    for t in worlds:
        if t in (a, b):
            continue
        print(row([a, b], t, "world=" + t[1:t.index("-")]))
seqs = ["w4-s2048", "w4-s4096"]
print(row(seqs, "w4-s8192", "seq=8192"))
print(row(seqs, "w4-s16384", "seq=16384,batch=1"))
print(row(["w4-s2048", "w4-s4096", "w4-s8192"], "w4-s16384", "seq=16384,batch=1"))
print(row(["w4-s4096", "w4-s16384"], "w4-s8192", "seq=8192,batch=2"))
print(row(["w2-s4096", "w4-s4096", "w4-s2048"], "w8-s4096", "world=8,seq=4096"))
four = ["w2-s4096-b2", "w4-s8192-b2", "w6-s16384-b1", "w8-s8192-b1"]
for t in ["w96-s32768-b1", "w128-s65536-b1"]:
    w, q, b = (int(x[1:]) for x in t.split("-"))
    print(row(four, t, f"world={w},seq={q},batch={b}"))
