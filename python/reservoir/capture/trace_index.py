"""Where a moment of the program falls in the device's allocator trace.

`reservoir` names a point `event:N`: after event N (0-based) of the device's trace. A moment is
marked by the last event recorded before it; with a ring buffer (`max_entries`) the trace may
later drop its oldest events, so a mark also keeps that event's identity (time, action, address,
size, stream) and is found again in the final trace by it.
"""

from dataclasses import dataclass
from typing import Optional, Sequence


def fingerprint(event: dict) -> tuple:
    return (event.get("time_us"), event.get("action"), event.get("addr"), event.get("size"), event.get("stream"))


@dataclass
class Mark:
    device: int
    index: int  # last event before the moment, in the trace as it was then (-1: none yet)
    fingerprint: Optional[tuple]


def mark(device: int, trace: Sequence[dict]) -> Mark:
    if not trace:
        return Mark(device, -1, None)
    return Mark(device, len(trace) - 1, fingerprint(trace[-1]))


def locate(m: Mark, trace: Sequence[dict]) -> Optional[int]:
    """The mark's event index in the final `trace`, or None when the mark came before any event
    or its event has left a ring buffer."""
    if m.index < 0 or m.fingerprint is None:
        return None
    if m.index < len(trace) and fingerprint(trace[m.index]) == m.fingerprint:
        return m.index  # nothing was dropped before it (the common case: no ring buffer)
    for i in range(min(m.index, len(trace) - 1), -1, -1):  # events dropped since: it moved down
        if fingerprint(trace[i]) == m.fingerprint:
            return i
    return None


def busiest_device(device_traces: Sequence[Sequence[dict]], current: int) -> int:
    """The device whose trace has the most events (the one `reservoir` picks); ties go to `current`."""
    best = current if 0 <= current < len(device_traces) else 0
    for d, t in enumerate(device_traces):
        if len(t) > (len(device_traces[best]) if best < len(device_traces) else -1):
            best = d
    return best
