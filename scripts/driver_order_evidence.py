#!/usr/bin/env python3
"""How often a placement rule puts a recording's next segment where the driver did, relative to
the segments alive then (docs/whatif.md, "Where the driver puts a segment").

Best-fit ties are broken by address, so what a placement rule must get right is a new segment's
rank among the live ones, not its exact address. For every cudaMalloc of each recording (its
`segment_alloc`), with the live segments as the recording had them, this counts how often each
rule gives the new segment the rank the driver gave it:
  top-down  below everything handed out (the driver model before the chunks);
  chunks    the lowest free room at the end of a 32 MiB chunk that fits, else a new chunk top down.

  scripts/driver_order_evidence.py TRACE.pickle[.zst] ...

Reads the recordings with Python's pickle: only for your own trusted recordings.
"""
import bisect
import os
import pickle
import subprocess
import sys

MIB = 1 << 20
GRANULE, PAGE = 32 * MIB, 2 * MIB


def up(x, a):
    return (x + a - 1) // a * a


def load(path):
    if path.endswith(".zst"):
        return pickle.loads(subprocess.run(["zstd", "-dc", path], capture_output=True, check=True).stdout)
    with open(path, "rb") as f:
        return pickle.load(f)


def segment_events(snap):
    for dev in snap["device_traces"]:
        for e in dev:
            if e["action"] in ("segment_alloc", "segment_free"):
                yield e["action"] == "segment_alloc", e["addr"], e["size"]


class Layout:
    def __init__(self):
        self.live, self.room = {}, []

    def overlaps(self, a, n):
        return any(b < a + n and a < b + m for b, m in self.live.items())

    def top_down(self, n):
        a = (min(self.live) - up(n, GRANULE)) // GRANULE * GRANULE
        while self.overlaps(a, up(n, GRANULE)):
            a -= GRANULE
        return a

    def chunks(self, n):
        for start, end in sorted(self.room):
            a = start
            while a + n <= end:
                if not self.overlaps(a, n):
                    return a
                a += PAGE
        return self.top_down(n)

    def take(self, a, n):
        self.live[a] = n
        if a % GRANULE == 0 and up(n, GRANULE) > up(n, PAGE):
            self.room.append((a + up(n, PAGE), a + up(n, GRANULE)))


def score(path):
    layout, hits, total = Layout(), {"top-down": 0, "chunks": 0}, 0
    for alloc, a, n in segment_events(load(path)):
        if not alloc:
            layout.live.pop(a, None)
            continue
        if layout.live:
            order = sorted(layout.live)
            rank = bisect.bisect(order, a)
            total += 1
            hits["top-down"] += bisect.bisect(order, layout.top_down(n)) == rank
            hits["chunks"] += bisect.bisect(order, layout.chunks(n)) == rank
        layout.take(a, n)
    return hits, total


def main():
    sums, n = {"top-down": 0, "chunks": 0}, 0
    for path in sys.argv[1:]:
        hits, total = score(path)
        n += total
        for k in sums:
            sums[k] += hits[k]
        print(f"{os.path.basename(path)}: {total} cudaMallocs, top-down {hits['top-down']}, chunks {hits['chunks']}")
    if n:
        print(f"all: {n} cudaMallocs, top-down {sums['top-down']} ({100 * sums['top-down'] / n:.0f}%), "
              f"chunks {sums['chunks']} ({100 * sums['chunks'] / n:.0f}%)")


if __name__ == "__main__":
    main()
