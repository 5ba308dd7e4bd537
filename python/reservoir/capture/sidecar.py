"""The JSON written beside a snapshot (X.json beside X.pickle; `reservoir` reads it).

Keys shared with the project's earlier captures (../shared/traces/scale/*.json): world_size,
rank, config, device_total, device_free, fraction, alloc_conf, torch, memory_stats,
reset_peaks_after_event. The kit adds the device, the overhead outside the cache, every peak
reset and OOM, the FSDP parameter groups and what it emulated (docs/capture.md lists them).
"""

import json
import os
from typing import Any, Dict, Optional

RESERVED_KEY = "reserved_bytes.all.current"


def overhead_outside_cache(device_total: Optional[int], device_free: Optional[int],
                           memory_stats: Dict[str, Any]) -> Optional[int]:
    """Device memory in use that the caching allocator does not hold: CUDA context, libraries'
    own buffers, other processes (total - free - reserved)."""
    reserved = memory_stats.get(RESERVED_KEY)
    if reserved is None or device_total is None or device_free is None:
        return None
    return int(device_total) - int(device_free) - int(reserved)


def parse_value(text: str) -> Any:
    """A --param value as the config records it: an int, a float, true/false, else the text."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def parse_params(items) -> Dict[str, Any]:
    config: Dict[str, Any] = {}
    for item in items or ():
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ValueError(f"--param {item!r}: expected NAME=VALUE (e.g. --param seq=8192)")
        config[key] = parse_value(value)
    return config


def build(*, facts: Dict[str, Any], memory_stats: Dict[str, Any], reset_index: Optional[int],
          extra: Dict[str, Any]) -> Dict[str, Any]:
    """facts: world_size, rank, config, torch, device_*, fraction, alloc_conf, ...; extra: the
    kit's own keys (appended after the shared ones)."""
    out = dict(facts)
    out["memory_stats"] = {k: v for k, v in memory_stats.items()}
    out["overhead_outside_cache"] = overhead_outside_cache(facts.get("device_total"), facts.get("device_free"),
                                                           memory_stats)
    if reset_index is not None:
        out["reset_peaks_after_event"] = int(reset_index)
    out.update(extra)
    return out


def write_atomically(path: str, write) -> None:
    """write(file) into path + '.partial', then rename: a reader never sees half a file."""
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    partial = path + ".partial"
    with open(partial, "wb") as f:
        write(f)
    os.replace(partial, path)


def write_json(path: str, data: Dict[str, Any]) -> None:
    write_atomically(path, lambda f: f.write((json.dumps(data, indent=1, default=str) + "\n").encode()))
