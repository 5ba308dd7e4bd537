"""Reservoir's Python API: the replay library (reservoir._core), the same calls as the command line.

Every result is a dict with the keys of the command line's ``--json`` (docs/json.md, docs/python.md).
Sizes are given as PyTorch prints them ("60GiB", "512MiB") or as ints (bytes); points as on the
command line ("after:state_dict_loader.py:load", "event:120", "annotation:step:end").
Long calls release the GIL, stop on Ctrl-C (KeyboardInterrupt) and take ``progress``: a callable
``progress(done, total)`` called on the calling thread (raise from it to stop the work).
"""

import json
import os
import pickle

from . import _core

__all__ = ["load", "whatif", "gate", "Trace", "TraceError", "GateFailed"]

#: Unreadable or invalid input: the message says what is wrong in plain words first, then names the
#: file, the byte offset and what was expected; .headline, .path and .offset hold those parts.
TraceError = _core.TraceError


class GateFailed(AssertionError):
    """A gate condition failed (or could not be judged: ``undecided``); ``str(e)`` is the one-line reason."""

    def __init__(self, reason, result, undecided=False):
        super().__init__(reason)
        self.reason = reason
        self.result = result  # the gate's dict (the command line's gate --json)
        self.undecided = undecided


def _size(value, name):
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"{name}: expected a size such as '60GiB' or an int of bytes, not {type(value).__name__}")
    if isinstance(value, int) and value < 0:
        raise ValueError(f"{name}: {value} is negative")
    return str(value)


def _texts(value, name):
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    texts = list(value)
    for t in texts:
        if not isinstance(t, str):
            raise TypeError(f"{name}: expected strings, got {type(t).__name__}")
    return texts


def _edited_run(set=None, capacity=None, overhead=None, fraction=None):
    d = _core.EditedRunText()
    d.set = set or ""
    d.capacity = _size(capacity, "capacity")
    d.overhead = _size(overhead, "overhead")
    d.fraction = None if fraction is None else float(fraction)
    return d


def _whatif_text(cleanup=None, release=None, probe=None, demand=None, reset_peaks=None, set=None, capacity=None,
                 overhead=None, fraction=None, address_model="recorded"):
    t = _core.WhatIfText()
    t.cleanup = _texts(cleanup, "cleanup")
    t.release = _texts(release, "release")
    t.probe = _texts(probe, "probe")
    t.demand = _texts(demand, "demand")
    t.reset_peaks = _texts(reset_peaks, "reset_peaks")
    t.device = _edited_run(set, capacity, overhead, fraction)
    t.address_model = address_model
    return t


class Trace:
    """One device of a loaded snapshot (``reservoir.load``); cheap to keep, immutable."""

    __slots__ = ("_t",)

    def __init__(self, core_trace):
        self._t = core_trace

    @property
    def path(self):
        """The file, or the name given to a snapshot loaded from memory."""
        return self._t.path

    @property
    def device(self):
        """The CUDA device number replayed (asked for at load, else the one with the most events)."""
        return self._t.device

    @property
    def events(self):
        """The number of trace events of that device."""
        return self._t.events

    def __repr__(self):
        return f"<reservoir.Trace {self.path!r} device {self.device}, {self.events} events>"

    def info(self, progress=None):
        """`reservoir info --json`: events, peaks, final state (of the device asked for at load, else of every one)."""
        return json.loads(self._t.info_json(progress))

    def check(self, reset_peaks=None, fraction=None, capacity=None, expensive=False, progress=None):
        """`reservoir check --json`: the model against the recording, event by event (``r["exact"]``).

        reset_peaks: points where the program called torch.cuda.reset_peak_memory_stats();
        fraction, capacity: the recorded device's, when the capture's facts are missing or wrong.
        """
        return json.loads(
            self._t.check_json(_texts(reset_peaks, "reset_peaks"), None if fraction is None else float(fraction),
                               _size(capacity, "capacity"), bool(expensive), progress))

    def whatif(self, cleanup=None, release=None, set=None, capacity=None, overhead=None, fraction=None, demand=None,
               probe=None, reset_peaks=None, address_model="recorded", progress=None):
        """`reservoir whatif --json`: the recorded run and the edited one (``r["baseline"]``, ``r["whatif"]``).

        cleanup: points for torch.cuda.empty_cache(); release: "SELECTOR@POINT" (free what was
        allocated under SELECTOR at POINT); probe: points to report memory at; demand:
        "BYTES@POINT" another process needs; reset_peaks: points; set: allocator settings
        (PYTORCH_CUDA_ALLOC_CONF syntax); capacity, overhead: sizes; fraction: 0..1.
        """
        return whatif([self], cleanup=cleanup, release=release, set=set, capacity=capacity, overhead=overhead,
                      fraction=fraction, demand=demand, probe=probe, reset_peaks=reset_peaks,
                      address_model=address_model, progress=progress)

    def sweep(self, minimize="peak", top=10, jobs=None, max_candidates=100, settings=True, set=None, capacity=None,
              overhead=None, fraction=None, max_calls=None, steps=None, progress=None):
        """`reservoir sweep --json`: candidate cleanups (and settings), best first (``r["candidates"]``).

        minimize: "peak", "reserved:POINT" (or a bare point) or "peak-in:ANNOTATION"; jobs: threads (None:
        every core); settings=False: only cleanup placements; max_calls: empty_cache calls allowed in the
        whole trace (None: one per training step where steps are known); steps: training steps in the trace.
        """
        if jobs is not None and int(jobs) < 1:
            raise ValueError(f"jobs: give at least 1 thread (or None for every core), not {jobs}")
        if max_calls is not None and int(max_calls) < 0:
            raise ValueError(f"max_calls: give 0 or more empty_cache calls, not {max_calls}")
        if steps is not None and int(steps) < 1:
            raise ValueError(f"steps: give at least 1 training step, not {steps}")
        return json.loads(
            self._t.sweep_json(minimize or "peak", int(top), int(max_candidates), int(jobs or 0), bool(settings),
                               _edited_run(set, capacity, overhead, fraction),
                               None if max_calls is None else int(max_calls), None if steps is None else int(steps),
                               progress))

    def export(self, path=None, csv=None, cleanup=None, release=None, set=None, capacity=None, overhead=None,
               fraction=None, demand=None, probe=None, reset_peaks=None, address_model="recorded", progress=None):
        """`reservoir export`: the modelled (edited) run as a snapshot at ``path`` (memory_viz opens it)
        and/or a CSV timeline at ``csv``. Returns {"out", "csv", "events", "segments", "rows"}."""
        text = _whatif_text(cleanup, release, probe, demand, reset_peaks, set, capacity, overhead, fraction,
                            address_model)
        out = "" if path is None else os.fspath(path)
        csv_path = "" if csv is None else os.fspath(csv)
        return json.loads(self._t.export_json(text, out, csv_path, progress))


def load(src, device=None, *, name=None, capture=None, capture_json=True, progress=None):
    """Loads a snapshot: a path (.pickle, .gz, .zst), its bytes, or the dict torch.cuda.memory._snapshot() returns.

    The dict is pickled here and read by the C++ reader (which never runs pickle code); no file
    is ever unpickled in Python. device: the CUDA device number (default: the one with the most
    events). name: how errors and results name a snapshot from memory. capture: a capture JSON
    (X.json) to use; capture_json=False: ignore the one beside a path. Raises TraceError.
    """
    if isinstance(src, Trace):
        if device is not None and device != src.device:
            raise ValueError(f"load: {src.path} is loaded for device {src.device}; load its source again for another")
        return src
    capture_path = None if capture is None else os.fspath(capture)
    if isinstance(src, (str, os.PathLike)):
        return Trace(_core.load_path(os.fspath(src), device, bool(capture_json), capture_path, progress))
    if isinstance(src, (bytes, bytearray, memoryview)):
        return Trace(_core.load_bytes(bytes(src), name or "<bytes>", device, capture_path, progress))
    if isinstance(src, dict):
        data = pickle.dumps(src, protocol=4)
        return Trace(_core.load_bytes(data, name or "<snapshot>", device, capture_path, progress))
    raise TypeError(f"load: expected a path, bytes or the dict torch.cuda.memory._snapshot() returns, "
                    f"not {type(src).__name__}")


def _traces(traces):
    if isinstance(traces, (Trace, str, os.PathLike, bytes, bytearray, memoryview, dict)):
        traces = [traces]
    return [load(t) for t in traces]


def whatif(traces, cleanup=None, release=None, set=None, capacity=None, overhead=None, fraction=None, demand=None,
           probe=None, reset_peaks=None, address_model="recorded", progress=None):
    """`reservoir whatif --json` over one or several traces (ranks): one trace gives its report;
    several give {"traces": [...], "max_over_traces": {...}}. See Trace.whatif for the edits."""
    core = [t._t for t in _traces(traces)]
    text = _whatif_text(cleanup, release, probe, demand, reset_peaks, set, capacity, overhead, fraction,
                        address_model)
    return json.loads(_core.whatif_json(core, text, progress))


def gate(traces, max_peak_reserved=None, demand=None, capacity=None, fraction=None, overhead=None, set=None,
         cleanup=None, release=None, address_model="recorded", progress=None):
    """`reservoir gate`: raises GateFailed (an AssertionError) with the one-line reason when a
    condition fails: the edited run's peak reserved over ``max_peak_reserved``, a ``demand``
    ("BYTES@POINT") that does not fit, an out-of-memory under ``capacity``/``fraction``.
    traces: Trace objects or anything load() accepts (one or several ranks: the worst decides).
    Returns the verdict's dict (gate --json) when every condition holds."""
    core = [t._t for t in _traces(traces)]
    text = _whatif_text(cleanup, release, None, demand, None, set, capacity, overhead, fraction, address_model)
    result, passed, undecided, reason, _summary = _core.gate(core, _size(max_peak_reserved, "max_peak_reserved"),
                                                             text, progress)
    result = json.loads(result)
    if not passed or undecided:
        raise GateFailed(reason, result, undecided)
    return result
