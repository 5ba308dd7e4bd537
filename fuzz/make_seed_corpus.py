#!/usr/bin/env python3
"""Writes the seed corpus of snapshot_reader_fuzzer.

Seeds are real snapshots made small: every *.pickle under traces/samples/ and (when present)
../shared/traces/ is loaded with Python's pickle, cut down to a few events, segments, blocks
and annotations, and dumped again with protocols 2, 3, 4 and 5, plus gzip and zstd copies of
the protocol-4 one. Small files (< 8 KiB, e.g. the LibTorch protocol-2 sample) are copied as is,
and so are the malformed inputs of tests/data/bad (each reaches a different error path).

usage: make_seed_corpus.py OUT_DIR [TRACE_DIR ...]
"""
import gzip
import hashlib
import os
import pickle
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_DIRS = [os.path.join(ROOT, "traces", "samples"), os.path.join(ROOT, "..", "shared", "traces")]
BAD_DIR = os.path.join(ROOT, "tests", "data", "bad")


def cut_down(snap, events=24, segments=3, blocks=4, annotations=4):
    small = dict(snap)
    small["segments"] = []
    for seg in snap["segments"][:segments]:
        seg = dict(seg)
        seg["blocks"] = seg["blocks"][:blocks]
        small["segments"].append(seg)
    small["device_traces"] = [trace[:events] for trace in snap["device_traces"]]
    small["external_annotations"] = snap.get("external_annotations", [])[:annotations]
    return small


def write(out_dir, data):
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(data)


def zstd(data):
    if not shutil.which("zstd"):
        return None
    return subprocess.run(["zstd", "-q", "-c", "-3"], input=data, capture_output=True, check=True).stdout


def seeds_of(path, out_dir):
    raw = open(path, "rb").read()
    if len(raw) < 8192:
        write(out_dir, raw)
    small = cut_down(pickle.loads(raw))
    for protocol in (2, 3, 4, 5):
        write(out_dir, pickle.dumps(small, protocol=protocol))
    p4 = pickle.dumps(small, protocol=4)
    write(out_dir, gzip.compress(p4, mtime=0))
    z = zstd(p4)
    if z:
        write(out_dir, z)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    dirs = sys.argv[2:] or DEFAULT_DIRS
    count = 0
    for top in dirs:
        for base, _, files in os.walk(top):
            for name in sorted(files):
                if name.endswith(".pickle"):
                    seeds_of(os.path.join(base, name), out_dir)
                    count += 1
    for name in sorted(os.listdir(BAD_DIR)):
        path = os.path.join(BAD_DIR, name)
        if name.endswith((".py", ".json")) or os.path.getsize(path) > 65536:
            continue
        write(out_dir, open(path, "rb").read())
    print(f"{count} snapshots (+ tests/data/bad) -> {len(os.listdir(out_dir))} seeds in {out_dir}")


if __name__ == "__main__":
    main()
