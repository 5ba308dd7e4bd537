#!/usr/bin/env python3
"""Time and memory of the CLI on the hostile inputs of issues 16 and 31 (the figures in docs/reader.md).

Writes each input into OUT_DIR, runs the command under /usr/bin/time -v and prints one line per
input: exit code, wall seconds, peak RSS. Inputs (all small files):
  memo_flood_padded.pickle.zst  None, MEMOIZE, POP, None, POP repeated 2^28 times  (info: refused at the cap)
  endless_marks.pickle.zst      MARK, None, POP_MARK repeated 2^31 times, 6 GB     (info: refused at 2x the cap)
  memo_overwrites.pickle        one list memoized in 200,000 slots, each stored again (info: linear)
  annotations_40k.pickle        40,000 distinct record_function ranges             (sweep: one pass)
Issue 31 (careless more than hostile; expected exit codes in brackets):
  no-history gate / sweep       a snapshot without allocation history              [3, never "OK"]
  scale --out onto --measured   the prediction written over the capture it checks  [2, nothing written]
  info > /dev/full              a report with nowhere to go                        [3, "write failed"]
  gate --fraction, no total     a fraction of an assumed H200                      [2]
  sidecar_dir / _130mb / _-1    X.json a directory, 130 MB, device_total -1        [3, bounded, no internal error]
  export --out -                '-' names no file                                  [2]
  scale --to seq=2^62           seq x batch past int64, sizes past any GPU         [2, no small peak]
  scale --from world=0: / sidecar world_size 2^63-1   parameters no job has         [2]
  scale --to 4 lists of 100     a grid of 10^8 targets                             [2, at once, bounded]

  python3 bench/hostile_inputs.py build/replay/cli/reservoir /tmp/hostile [--issue31]
"""
import os
import pickle
import re
import shutil
import struct
import subprocess
import sys

MIB = 1 << 20
HEAD = b"\x80\x04}(\x8c\x08segments]\x8c\x0ddevice_traces]]a\x8c\x04junk"


def zstd_stream(path, head, unit, count, tail):
    """`head` + `unit` x `count` + `tail`, compressed by the zstd command as it is made."""
    with open(path, "wb") as out:
        z = subprocess.Popen(["zstd", "-q", "-c", "-3"], stdin=subprocess.PIPE, stdout=out)
        z.stdin.write(head)
        block = unit * 65536
        for _ in range(count // 65536):
            z.stdin.write(block)
        z.stdin.write(unit * (count % 65536))
        z.stdin.write(tail)
        z.stdin.close()
        z.wait()


def memo_overwrites(path, n=200_000):
    with open(path, "wb") as f:
        f.write(HEAD + b"]" + b"\x94" * n)
        f.write(b"".join(b"r" + struct.pack("<I", i) for i in range(n)))
        f.write(b"u.")


def annotations(path, n=40_000):
    a = 1 << 34
    evs, ann, t = [{"action": "segment_alloc", "addr": a, "size": 2 * MIB, "stream": 0, "time_us": 0,
                    "frames": []}], [], 1
    for i in range(n):
        ann.append({"version": 1, "stage": "START", "name": "r%d" % i, "device": 0, "time_us": t})
        for action in ("alloc", "free_requested", "free_completed"):
            evs.append({"action": action, "addr": a, "size": 512, "stream": 0, "time_us": t, "frames": []})
            t += 1
        ann.append({"version": 1, "stage": "END", "name": "r%d" % i, "device": 0, "time_us": t})
    seg = {"device": 0, "address": a, "total_size": 2 * MIB, "allocated_size": 0, "active_size": 0,
           "requested_size": 0, "stream": 0, "segment_type": "small", "segment_pool_id": (0, 0),
           "is_expandable": False, "frames": [],
           "blocks": [{"address": a, "size": 2 * MIB, "requested_size": 0, "state": "inactive", "frames": []}]}
    with open(path, "wb") as f:
        pickle.dump({"segments": [seg], "device_traces": [evs], "external_annotations": ann}, f, protocol=4)


def measure(cli, command, path, extra=(), label=None, stdout=subprocess.PIPE):
    r = subprocess.run(["/usr/bin/time", "-v", cli, command, path, *extra], stdout=stdout, stderr=subprocess.PIPE,
                       text=True)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", r.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    seconds = int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))
    first = next((l for l in r.stderr.splitlines() if l.startswith("reservoir:")), "")
    print(f"{label or os.path.basename(path):32} {command:6} exit {r.returncode}  {seconds:6.2f} s  "
          f"{int(rss.group(1)) / 1024:7.0f} MiB  {first[:90]}")


def careless_round4(cli, out):
    """Issue 31's cases, from the repository's own files (tests/data, traces/samples)."""
    here = os.path.dirname(os.path.abspath(__file__))
    data, samples = os.path.join(here, "..", "tests", "data"), os.path.join(here, "..", "traces", "samples")
    p = os.path.join
    none = p(data, "no-history", "no-traces.pickle")
    measure(cli, "gate", none, ["--max-peak-reserved", "1"], "no-history --max-peak-reserved 1")
    measure(cli, "sweep", none, [], "no-history")
    tiny = p(samples, "resume-tiny")
    scale = p(here, "..", "..", "shared", "traces", "scale")  # the shared captures, when beside the checkout
    if os.path.isdir(scale):
        for stem in ("w1-s4096.rank0", "w2-s4096.rank0", "w32-s4096.rank0"):
            for ext in (".pickle", ".json"):
                shutil.copyfile(p(scale, stem + ext), p(out, stem + ext))
        measured = p(out, "w32-s4096.rank0.pickle")
        measure(cli, "scale", "--from", [p(out, "w1-s4096.rank0.pickle"), "--from", p(out, "w2-s4096.rank0.pickle"),
                                         "--to", "world=32", "--measured", measured, "--out", measured],
                "scale --out onto --measured")
        measure(cli, "scale", "--from", [p(scale, "w4-s2048.rank0.pickle"), "--from", p(scale, "w4-s4096.rank0.pickle"),
                                         "--to", "seq=%d" % 2**62], "scale --to seq=2^62")
    good = p(data, "careless", "double_free.pickle")
    measure(cli, "scale", "--from", ["world=0:" + good, "--from", "world=4:" + good, "--to", "world=8"],
            "scale --from world=0:")
    measure(cli, "scale", "--from", [p(data, "careless", "sidecar_world_2pow63_minus_1.pickle"), "--to", "world=8"],
            "sidecar world_size 2^63-1")
    hundred = ",".join(str(i) for i in range(1, 101))
    measure(cli, "scale", "--from", ["world=2:" + good, "--from", "world=4:" + good, "--to",
                                     ",".join(f"{n}={hundred}" for n in ("world", "seq", "batch", "dim"))],
            "scale grid 100^4")
    trace = p(out, "t.pickle")
    shutil.copyfile(p(tiny, "resume-main.rank0.pickle"), trace)
    with open("/dev/full", "w") as full:
        measure(cli, "info", trace, [], "info > /dev/full", stdout=full)
    measure(cli, "gate", trace, ["--fraction", "0.9"], "gate --fraction 0.9, no total")
    measure(cli, "export", trace, ["--out", "-"], "export --out -")
    sidecar = p(out, "t.json")
    os.makedirs(sidecar, exist_ok=True)
    measure(cli, "info", trace, [], "sidecar_dir (t.json a directory)")
    os.rmdir(sidecar)
    with open(sidecar, "w") as f:  # 130 MB of real JSON (what took info to 2.1 GB)
        f.write('{"pad": [')
        f.write("0," * 65_000_000)
        f.write("0]}")
    measure(cli, "info", trace, [], "sidecar_130mb")
    with open(sidecar, "w") as f:
        f.write('{"device_total": -1}')
    measure(cli, "info", trace, [], "sidecar_device_total_-1")
    os.remove(sidecar)
    measure(cli, "gate", trace, ["--max-peak-reserved", "100GiB"], "ordinary gate (no sidecar)")


def main():
    cli, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    if sys.argv[3:] == ["--issue31"]:  # only issue 31's cases (seconds, not minutes)
        careless_round4(cli, out)
        return
    p = os.path.join
    zstd_stream(p(out, "memo_flood_padded.pickle.zst"), HEAD, b"N\x940N0", 1 << 28, b"u.")
    zstd_stream(p(out, "endless_marks.pickle.zst"), HEAD, b"(N1", 1 << 31, b"Nu.")
    memo_overwrites(p(out, "memo_overwrites.pickle"))
    annotations(p(out, "annotations_40k.pickle"))
    for name, command in [("memo_flood_padded.pickle.zst", "info"), ("endless_marks.pickle.zst", "info"),
                          ("memo_overwrites.pickle", "info"), ("annotations_40k.pickle", "sweep")]:
        measure(cli, command, p(out, name))
    careless_round4(cli, out)


if __name__ == "__main__":
    main()
