#!/usr/bin/env python3
"""Writes careless (well-formed but odd) snapshots for tests/replay/cli_test.cpp (CliHostile.*).

Each file reads as a snapshot; what it exercises is what the commands say about it:
  oom_without_device_free.pickle  an oom entry with no 'device_free' (no capacity is derived from it)
  oom_with_addr.pickle            the same oom with an 'addr' of 9.62 GiB instead (torch writes no 'addr'
                                  for an oom: still no capacity)
  oom_same_peak.pickle            an oom of 1 MiB while 20 MiB are cached free: the model serves it from the
                                  cache, so the replay departs from the recording at the same peak
  reversed_time.pickle            time_us going backwards (an anomaly; info's time span is "unknown")
  free_never_allocated.pickle     a free of an address the trace never allocated (check blames event 4)
  double_free.pickle              the same block freed twice (check blames event 4)
  unknown_action.pickle           an allocation whose action torch does not write (check blames the free
                                  at event 2 and names the unknown action)
  oom_device_free_zero.pickle     an oom at event 0 with device_free 0 and nothing reserved, then 2 MiB
                                  reserved: the capacity the oom implies (0 bytes) is contradicted by the
                                  recording, so none is derived (it was a usage error about an --overhead
                                  nobody gave)
  sidecar_*.pickle + .json        a good five-event trace beside a capture JSON that cannot be used
                                  (device_total -1, fraction 2, reset_peaks_after_event 2^32 + 5 or past
                                  the trace's end, a statistic of 2^64 - 1, a JSON list): every command
                                  refuses the sidecar with its path (exit 3), never a wrapped value;
                                  sidecar_world_*: world_size 0, -4 or 2^63 - 1, which scale refuses (exit 2)
Run it from anywhere: python3 tests/data/careless/make_careless_inputs.py
"""
import os
import pickle

HERE = os.path.dirname(os.path.abspath(__file__))
A = 1 << 30  # a segment's address
MIB = 1 << 20


def entries(*rows):
    return [{"action": a, "addr": addr, "size": size, "stream": 0, "time_us": 1000 * (i + 1)}
            for i, (a, addr, size) in enumerate(rows)]


def write(name, traces):
    with open(os.path.join(HERE, name), "wb") as f:
        pickle.dump({"segments": [], "device_traces": [traces]}, f, protocol=4)


def write_sidecar(name, text):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(text + "\n")


def sidecars():
    good = entries(("segment_alloc", A, 2 * MIB), ("alloc", A, 512), ("free_requested", A, 512),
                   ("free_completed", A, 512), ("segment_free", A, 2 * MIB))
    for stem, text in [("sidecar_device_total_negative", '{"device_total": -1, "fraction": 0.0}'),
                       ("sidecar_fraction_2", '{"fraction": 2, "device_total": 150109880320}'),
                       ("sidecar_reset_2pow32_plus_5", '{"reset_peaks_after_event": 4294967301}'),
                       ("sidecar_reset_past_end", '{"reset_peaks_after_event": 1000}'),
                       ("sidecar_stat_2pow64", '{"memory_stats": {"reserved_bytes.all.peak": 18446744073709551615}}'),
                       ("sidecar_not_object", '[1, 2]')]:
        write(stem + ".pickle", good)
        write_sidecar(stem + ".json", text)
    # scale's parameters from a sidecar: a world size no job has (issue 31, item 5)
    for stem, world in [("sidecar_world_0", 0), ("sidecar_world_minus_4", -4), ("sidecar_world_2pow63_minus_1", 2**63 - 1)]:
        write(stem + ".pickle", good)
        write_sidecar(stem + ".json", '{"world_size": %d, "config": {"seq": 4096, "batch": 1}}' % world)


def main():
    oom = entries(("segment_alloc", A, 2 * MIB), ("alloc", A, 512), ("free_requested", A, 512),
                  ("free_completed", A, 512), ("segment_free", A, 2 * MIB))
    oom.insert(2, {"action": "oom", "size": 170 * MIB, "stream": 0, "time_us": 2500})
    write("oom_without_device_free.pickle", oom)
    oom[2] = dict(oom[2], addr=10332667904 - 2 * MIB)
    write("oom_with_addr.pickle", oom)
    same = entries(("segment_alloc", A, 20 * MIB), ("alloc", A, 20 * MIB), ("free_requested", A, 20 * MIB),
                   ("free_completed", A, 20 * MIB), ("segment_free", A, 20 * MIB))
    same.insert(4, {"action": "oom", "device_free": 0, "size": 1 * MIB, "stream": 0, "time_us": 4500})
    write("oom_same_peak.pickle", same)
    rev = entries(("segment_alloc", A, 2 * MIB), ("alloc", A, 512), ("free_requested", A, 512),
                  ("free_completed", A, 512))
    rev[0]["time_us"] = 5_000_000  # 3.581 s after the last entry
    rev[3]["time_us"] = 1_419_000
    write("reversed_time.pickle", rev)
    write("free_never_allocated.pickle",
          entries(("segment_alloc", A, 2 * MIB), ("alloc", A, 512), ("free_requested", A, 512),
                  ("free_completed", A, 512), ("free_requested", A + 4096, 512), ("free_completed", A + 4096, 512),
                  ("segment_free", A, 2 * MIB)))
    write("double_free.pickle",
          entries(("segment_alloc", A, 2 * MIB), ("alloc", A, 512), ("free_requested", A, 512),
                  ("free_completed", A, 512), ("free_requested", A, 512), ("free_completed", A, 512),
                  ("segment_free", A, 2 * MIB)))
    write("unknown_action.pickle",
          entries(("segment_alloc", A, 2 * MIB), ("frobnicate", A, 512), ("free_requested", A, 512),
                  ("free_completed", A, 512), ("segment_free", A, 2 * MIB)))
    zero = entries(("segment_alloc", A, 2 * MIB), ("alloc", A, 512), ("free_requested", A, 512),
                   ("free_completed", A, 512), ("segment_free", A, 2 * MIB))
    zero.insert(0, {"action": "oom", "device_free": 0, "size": 512, "stream": 0, "time_us": 500})
    write("oom_device_free_zero.pickle", zero)
    sidecars()


if __name__ == "__main__":
    main()
