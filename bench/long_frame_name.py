#!/usr/bin/env python3
"""Writes a snapshot whose one frame filename is very long (issue 32: "strings count once").

    bench/long_frame_name.py IN.pickle OUT.pickle [--mib 100]

Reads IN with Python's pickle (a snapshot is plain dicts, lists, strings and numbers), replaces
the user's own file (the filename of the innermost frame that is not under site-packages, the
one sweep's candidates name) by a name of MIB MiB in every frame that has it, and writes OUT with
pickle protocol 4. The long name is one str object, so the pickle stores it once and refers to it
from every frame (as torch's own snapshots do with repeated names): the file grows by MIB MiB.

Then measure, e.g.: /usr/bin/time -v build/replay/cli/reservoir sweep OUT.pickle
"""
import argparse
import collections
import pickle


def user_file(snapshot):
    counts = collections.Counter()
    for trace in snapshot.get("device_traces", []):
        for e in trace:
            for f in e.get("frames", []):
                if "site-packages" not in f["filename"] and "/lib/python" not in f["filename"]:
                    counts[f["filename"]] += 1
    if not counts:
        raise SystemExit("no user frame in the snapshot")
    return counts.most_common(1)[0][0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--mib", type=float, default=100.0)
    a = ap.parse_args()
    with open(a.inp, "rb") as f:
        snapshot = pickle.load(f)
    old = user_file(snapshot)
    n = int(a.mib * (1 << 20))
    long_name = ("/very/long/" + "d" * n)[:n - len(old)] + old  # still ends with the real name
    replaced = 0
    for trace in snapshot.get("device_traces", []):
        for e in trace:
            for key in ("frames", "forward_frames"):
                for f in e.get(key, []) or []:
                    if f["filename"] == old:
                        f["filename"] = long_name
                        replaced += 1
    for seg in snapshot.get("segments", []):
        for b in seg.get("blocks", []):
            for f in b.get("frames", []) or []:
                if f["filename"] == old:
                    f["filename"] = long_name
                    replaced += 1
    with open(a.out, "wb") as f:
        pickle.dump(snapshot, f, protocol=4)
    print(f"{a.out}: {old} -> a {len(long_name)}-character name in {replaced} frames")


if __name__ == "__main__":
    main()
