"""The stub allocator: every allocation is its own segment; the trace is a ring of max_entries.
Event times are wall-clock microseconds, as torch's are. With STUB_TORCH_SNAPSHOT=PATH set,
_snapshot() returns that recorded snapshot instead (for tests of what a real recording gives)."""

import os
import pickle
import time

from .. import _C

TOTAL = 80 * 2**30
CONTEXT = 500 * 2**20  # memory outside the cache (the CUDA context)


class OutOfMemoryError(RuntimeError):
    pass


_state = {"recording": False, "max_entries": None, "stacks": None, "trace": [], "time": 1000,
          "allocated": 0, "reserved": 0, "peak_allocated": 0, "peak_reserved": 0, "fraction": 1.0,
          "next_addr": 1 << 32, "record_calls": []}


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=2**63 - 1, **kw):
    _state["record_calls"].append({"enabled": enabled, "stacks": stacks, "max_entries": max_entries})
    _state["recording"] = enabled is not None
    _state["max_entries"] = max_entries
    _state["stacks"] = stacks


def _event(action, addr, size):
    if not _state["recording"]:
        return
    _state["time"] = max(_state["time"] + 1, time.time_ns() // 1000)
    _state["trace"].append({"action": action, "addr": addr, "size": size, "stream": 0,
                            "time_us": _state["time"], "frames": []})
    del _state["trace"][: max(0, len(_state["trace"]) - _state["max_entries"])]


def _stub_alloc(size):
    addr = _state["next_addr"]
    _state["next_addr"] += size
    _event("segment_alloc", addr, size)
    _event("alloc", addr, size)
    _state["allocated"] += size
    _state["reserved"] += size
    _state["peak_allocated"] = max(_state["peak_allocated"], _state["allocated"])
    _state["peak_reserved"] = max(_state["peak_reserved"], _state["reserved"])
    return (addr, size)


def _stub_free(block):
    addr, size = block
    _event("free_requested", addr, size)
    _event("free_completed", addr, size)
    _state["allocated"] -= size


def _stub_oom(size):
    _event("oom", 0, size)
    for fn in list(_C._oom_observers):
        fn(0, size, _state["allocated"], 1024)
    raise OutOfMemoryError(f"CUDA out of memory. Tried to allocate {size} bytes")


def _snapshot(device=None):
    recorded = os.environ.get("STUB_TORCH_SNAPSHOT")
    if recorded:
        with open(recorded, "rb") as f:  # the test's own recording (trusted test data)
            return pickle.load(f)
    return {"segments": [], "device_traces": [list(_state["trace"])], "allocator_settings": {}}


def memory_stats(device=None):
    return {"allocated_bytes.all.current": _state["allocated"], "allocated_bytes.all.peak": _state["peak_allocated"],
            "reserved_bytes.all.current": _state["reserved"], "reserved_bytes.all.peak": _state["peak_reserved"]}


def reset_peak_memory_stats(device=None):
    _state["peak_allocated"] = _state["allocated"]
    _state["peak_reserved"] = _state["reserved"]


def mem_get_info(device=None):
    return TOTAL - CONTEXT - _state["reserved"], TOTAL


def set_per_process_memory_fraction(fraction, device=None):
    _state["fraction"] = fraction


def get_per_process_memory_fraction(device=None):
    return _state["fraction"]
