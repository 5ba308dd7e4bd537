"""Reservoir's Python API: the replay library (reservoir._core), the same commands as the command line.

Every result is a dict with the keys of the command line's ``--json`` (docs/json.md lists every key).
Sizes are ints (bytes) or texts: "60GiB" (2^30 bytes each) or "80GB" (10^9 bytes each), as PyTorch
and Hugging Face Accelerate write them. Points are the command line's: "after:FILE:NAME",
"before:NAME", "after:train.py:212", "...#k" (the k-th run), "annotation:NAME:start|end",
"event:N", "time:US". Edits are keyword-only. Long calls release the GIL, stop on Ctrl-C
(KeyboardInterrupt) and take ``progress``: a callable ``progress(done, total)`` called on the
calling thread (raise from it to stop the work).
"""

from __future__ import annotations

import inspect
import io
import json
import os
import pickle
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union, cast

from . import _args, _core
from ._errors import GateFailed, GateUndecided, NothingToReplay, TraceError, TraceFileNotFoundError
from ._snapshot_dict import plain_snapshot

if TYPE_CHECKING:
    from .results import (CheckReport, ExportResult, GateVerdict, InfoReport, ScaleTarget, SweepReport,
                          WhatIfReport)

__all__ = ["load", "check", "whatif", "sweep", "gate", "scale", "report", "Trace", "TraceError", "TraceFileNotFoundError",
           "NothingToReplay", "GateFailed", "GateUndecided"]

Progress = Optional[Callable[[int, int], Any]]
Device = Any  # int, "cuda:N", a torch.device (.type "cuda", .index), or None
Source = Union["Trace", str, "os.PathLike[str]", bytes, bytearray, memoryview, Dict[str, Any]]
Traces = Union[Source, Iterable[Source]]
Points = Union[str, Sequence[str], None]  # one point (or "SELECTOR@POINT", "BYTES@POINT") or several
SizeArg = Union[int, str, None]  # bytes, or "80GiB" (2^30 bytes each), "80GB" (10^9 bytes each)
PathArg = Union[str, "os.PathLike[str]"]

_EDIT_HELP = """
    Edits (keyword-only; each list keyword also takes one str):
        cleanup: points where torch.cuda.empty_cache() is inserted.
        release: "SELECTOR@POINT": free there the live tensors allocated under SELECTOR (a frame,
            "file.py:name").
        probe: points to report reserved / allocated / active memory at (r["whatif"]["probes"]).
        demand: "BYTES@POINT": another process needs BYTES there (does it fit?).
        reset_peaks: points where the program called torch.cuda.reset_peak_memory_stats().
        set: allocator settings for the edited run (PYTORCH_CUDA_ALLOC_CONF syntax), replacing the
            recorded ones as a whole, as the environment variable does: "" is torch's defaults;
            None (the default) keeps the recorded settings.
        capacity: the edited run's device memory ("80GiB", "80GB" or bytes; default: derived from
            recorded out-of-memory events, else unlimited).
        overhead: memory outside PyTorch's cache (CUDA context, NCCL), taken off the capacity.
        fraction: the memory fraction (set_per_process_memory_fraction), 0..1.
        address_model: "anchored" (default: the recorded addresses until the run departs from the
            recording's segments, the driver's from there), "recorded" or "driver".

    Points: "after:FILE:NAME" / "before:NAME" (a call of that function; FILE may be left out),
    "after:train.py:212" (a line), "NAME#k" (its k-th run), "annotation:NAME:start|end"
    (record_function ranges), "event:N" (after trace event N), "time:US".
"""


def _whatif_text(cleanup=None, release=None, probe=None, demand=None, reset_peaks=None, set=None, capacity=None,
                 overhead=None, fraction=None, address_model="anchored"):
    t = _core.WhatIfText()
    t.cleanup = _args.texts(cleanup, "cleanup")
    t.release = _args.texts(release, "release")
    t.probe = _args.texts(probe, "probe")
    t.demand = _args.texts(demand, "demand")
    t.reset_peaks = _args.texts(reset_peaks, "reset_peaks")
    t.device = _edited_run(set, capacity, overhead, fraction)
    t.address_model = _args.choice(address_model, "address_model", ("anchored", "recorded", "driver"))
    return t


def _edited_run(set=None, capacity=None, overhead=None, fraction=None):
    d = _core.EditedRunText()
    d.set = None if set is None else _args.text(set, "set")  # "": torch's defaults, as the whole ALLOC_CONF
    d.capacity = _args.size(capacity, "capacity")
    d.overhead = _args.size(overhead, "overhead")
    d.fraction = _args.fraction(fraction)
    return d


def _is_trace(obj: Any) -> bool:
    """A Trace, also one made before an importlib.reload of this module (its class is the old one)."""
    return isinstance(getattr(obj, "_t", None), _core.Trace) and hasattr(obj, "_source")


class Trace:
    """One device of a loaded snapshot (``reservoir.load``): immutable, cheap to keep, safe to use
    from several threads at once, and picklable (by its path and device, or by its bytes), so
    ``multiprocessing.Pool.map`` over ranks works."""

    __slots__ = ("_t", "_source")

    def __init__(self, core_trace, source: Tuple[Any, ...]) -> None:
        self._t = core_trace
        self._source = source

    @property
    def path(self) -> str:
        """The file, or the name given to a snapshot loaded from memory."""
        return self._t.path

    @property
    def device(self) -> Optional[int]:
        """The CUDA device number replayed (asked for at load, else the one with the most events)."""
        return self._t.device

    @property
    def events(self) -> int:
        """The number of trace events of that device."""
        return self._t.events

    @property
    def capture_json(self) -> Optional[str]:
        """The capture JSON (X.json) read with the snapshot, or None."""
        return self._t.capture_json

    @property
    def has_history(self) -> bool:
        """False for a snapshot recorded without allocation history (replays raise NothingToReplay)."""
        return self._t.nothing_to_replay is None

    def __repr__(self) -> str:
        return f"<reservoir.Trace {self.path!r} device {self.device}, {self.events} events>"

    def __reduce__(self):
        return (_restore_trace, (self._source,))

    def info(self, *, peak_allocated: bool = False, progress: Progress = None) -> "InfoReport":
        """`reservoir info --json`: events by action, time span, peaks (with event and stack), final
        state, settings, anomalies; of the device asked for at load, else of every device.

        peak_allocated=True also runs the conformance replay, which gives each device's
        "peak_allocated" and "peak_allocated_at" (None without it; "conformance_replay" says so).
        Keys: "trace", "file_bytes", "compression", "pickle_protocol", "devices" (each: "device",
        "events", "actions", "peak_reserved", "peak_allocated", ...), "anomalies" (docs/json.md).
        """
        return json.loads(self._t.info_json(progress, _args.flag(peak_allocated, "peak_allocated")))

    def check(self, *, reset_peaks: Points = None, fraction: Optional[float] = None, capacity: SizeArg = None,
              expensive: bool = False, progress: Progress = None) -> "CheckReport":
        """`reservoir check --json`: the model against the recording, event by event (``r["exact"]``).

        reset_peaks: points where the program called torch.cuda.reset_peak_memory_stats();
        fraction, capacity: the recorded device's, when the capture's facts are missing or wrong;
        expensive=True validates the whole allocator state after every operation (slow).
        Keys: "exact", "events_compared", "first_divergence", "layout_mismatches",
        "stats_mismatches", "notes", ... (docs/json.md). Raises NothingToReplay without history.
        """
        return cast("CheckReport", check(self, reset_peaks=reset_peaks, fraction=fraction, capacity=capacity,
                                         expensive=expensive, progress=progress))

    def whatif(self, *, cleanup: Points = None, release: Points = None, probe: Points = None, demand: Points = None,
               reset_peaks: Points = None, set: Optional[str] = None, capacity: SizeArg = None,
               overhead: SizeArg = None, fraction: Optional[float] = None, address_model: str = "anchored",
               progress: Progress = None) -> "WhatIfReport":
        """`reservoir whatif --json`: the recorded run and the edited one, replayed through the model.

        Returns a dict: "baseline" and "whatif" (each: "peak_reserved", "peak_allocated",
        "final_reserved", "probes" {POINT: {"reserved", "allocated", "active"}}, "demands", "oom",
        "at_peak" (what pins the cache), ...), "saving" (baseline minus edited peak reserved),
        "recorded_peak_reserved", "baseline_matches_recording", "capacity", "capacity_source",
        "settings", "edits", "notes" (docs/json.md lists every key).
        """
        return cast("WhatIfReport", whatif(self, cleanup=cleanup, release=release, probe=probe, demand=demand,
                                           reset_peaks=reset_peaks, set=set, capacity=capacity, overhead=overhead,
                                           fraction=fraction, address_model=address_model, progress=progress))

    def sweep(self, *, minimize: str = "peak", top: int = 10, jobs: Optional[int] = None, max_candidates: int = 100,
              settings: bool = True, set: Optional[str] = None, capacity: SizeArg = None, overhead: SizeArg = None,
              fraction: Optional[float] = None, max_calls: Optional[int] = None, steps: Optional[int] = None,
              progress: Progress = None) -> "SweepReport":
        """`reservoir sweep --json`: candidate cleanups (and settings), best first (``r["candidates"]``).
        See reservoir.sweep."""
        return sweep(self, minimize=minimize, top=top, jobs=jobs, max_candidates=max_candidates, settings=settings,
                     set=set, capacity=capacity, overhead=overhead, fraction=fraction, max_calls=max_calls,
                     steps=steps, progress=progress)

    def gate(self, max_peak_reserved: SizeArg = None, *, demand: Points = None, capacity: SizeArg = None,
             fraction: Optional[float] = None, overhead: SizeArg = None, set: Optional[str] = None,
             cleanup: Points = None, release: Points = None, probe: Points = None, reset_peaks: Points = None,
             address_model: str = "anchored", progress: Progress = None) -> "GateVerdict":
        """`reservoir gate` on this trace: see reservoir.gate."""
        __tracebackhide__ = True
        return gate(self, max_peak_reserved, demand=demand, capacity=capacity, fraction=fraction, overhead=overhead,
                    set=set, cleanup=cleanup, release=release, probe=probe, reset_peaks=reset_peaks,
                    address_model=address_model, progress=progress)

    def export(self, path: Optional[PathArg] = None, *, csv: Optional[PathArg] = None, cleanup: Points = None,
               release: Points = None, probe: Points = None, demand: Points = None, reset_peaks: Points = None,
               set: Optional[str] = None, capacity: SizeArg = None, overhead: SizeArg = None,
               fraction: Optional[float] = None, address_model: str = "anchored",
               progress: Progress = None) -> "ExportResult":
        """`reservoir export`: the modelled (edited) run as a snapshot at ``path`` (memory_viz opens
        it) and/or a CSV timeline at ``csv`` ("event,time_us,allocated,reserved,active,requested").

        Neither may be this trace's file or its capture JSON, nor both one file (ValueError, nothing
        written). Ctrl-C stops it and leaves no file. Returns {"trace", "out", "csv", "events",
        "segments", "rows"}.
        """
        text = _whatif_text(cleanup, release, probe, demand, reset_peaks, set, capacity, overhead, fraction,
                            address_model)
        out = "" if path is None else _args.path(path, "path")
        csv_path = "" if csv is None else _args.path(csv, "csv")
        return json.loads(self._t.export_json(text, out, csv_path, progress))

    def report(self, *, html: Optional[PathArg] = None, markdown: Optional[PathArg] = None,
               variants: Optional[Mapping[str, Mapping[str, Any]]] = None, sweep: bool = False,
               minimize: str = "peak", top: int = 10, max_candidates: int = 100, jobs: Optional[int] = None,
               progress: Progress = None, **edits: Any) -> Dict[str, Any]:
        """`reservoir report` on this trace: see reservoir.report."""
        return report(self, html=html, markdown=markdown, variants=variants, sweep=sweep, minimize=minimize, top=top,
                      max_candidates=max_candidates, jobs=jobs, progress=progress, **edits)


def _add_help(fn: Callable[..., Any], text: str) -> None:
    if fn.__doc__:  # None under python -OO
        fn.__doc__ += text


_add_help(Trace.whatif, _EDIT_HELP)
_add_help(Trace.export, _EDIT_HELP)


def _restore_trace(source: Tuple[Any, ...]) -> "Trace":
    """Unpickles a Trace: loads its source again (the file by path, or the bytes)."""
    kind = source[0]
    if kind == "path":
        _, path, device, capture_json, capture = source
        return load(path, device, capture=capture, capture_json=capture_json)
    _, data, name, device, capture = source
    return load(data, device, name=name, capture=capture)


def load(src: Source, device: Device = None, *, name: Optional[str] = None, capture: Optional[PathArg] = None,
         capture_json: bool = True, progress: Progress = None) -> Trace:
    """Loads a snapshot: a path (.pickle, .gz, .zst), its bytes, or the dict
    torch.cuda.memory._snapshot() returns.

    The dict is pickled here (OrderedDicts and int, float or str subclasses are taken as the plain
    types) and read by the C++ reader, which never runs pickle code; no file is ever unpickled in
    Python. device: the CUDA device (an int, "cuda:N", a torch.device; default: the one with the
    most events). name: how errors and results name a snapshot from memory. capture: a capture
    JSON (X.json) to use; capture_json=False: ignore the one beside a path.

    Raises TraceError (TraceFileNotFoundError, also a FileNotFoundError, for a missing file),
    TypeError / ValueError for wrong arguments.
    """
    dev = _args.device(device)
    name = _args.optional_text(name, "name")
    capture_path = _args.optional_path(capture, "capture")
    _args.flag(capture_json, "capture_json")
    if _is_trace(src):
        trace = cast(Trace, src)
        if dev is not None and dev != trace.device:
            raise ValueError(f"load: {trace.path} is loaded for device {trace.device}; load its source again "
                             "for another")
        return trace
    if isinstance(src, (str, os.PathLike)):
        path = _args.path(src, "src")
        core = _core.load_path(path, dev, capture_json, capture_path, progress)
        return Trace(core, ("path", path, dev, capture_json, capture_path))
    if isinstance(src, (bytes, bytearray, memoryview)):
        data = bytes(src)
        label = name or "<bytes>"
        return Trace(_core.load_bytes(data, label, dev, capture_path, progress), ("bytes", data, label, dev,
                                                                                  capture_path))
    if isinstance(src, dict):
        data = _pickle_snapshot(src)
        label = name or "<snapshot>"
        return Trace(_core.load_bytes(data, label, dev, capture_path, progress), ("bytes", data, label, dev,
                                                                                  capture_path))
    raise _args.type_error("src", "a path, bytes or the dict torch.cuda.memory._snapshot() returns", src)


def load_dir(path: PathArg, device: Device = None, *, iteration: Optional[int] = None, capture_json: bool = True,
             progress: Progress = None) -> List[Trace]:
    """Loads a dump folder as its ranks' snapshots, ordered by rank number: torchtitan's
    ``memory_snapshot/iteration_N[_exit]/rankR_memory_snapshot.pickle`` (given as the dump folder,
    ``memory_snapshot/`` or one ``iteration_N/``: the newest iteration, or ``iteration``),
    ``oom_rankN.pickle`` (verl, lmms-engine), Megatron's --memory-snapshot-path, plain ``*.pickle``.
    The same rule as the command line's (``reservoir check DIR``); the module-level calls (check,
    whatif, sweep, gate) take a folder too. Each result names its trace's path ("trace") and,
    where the file's name gives one, its "rank".

    Raises TraceError for a folder with no snapshots, ValueError for an iteration not there.
    """
    folder = _args.path(path, "path")
    it = _args.optional_count(iteration, "iteration", 0)
    return [load(p, device, capture_json=capture_json, progress=progress)
            for p, _rank in _core.snapshots_in_folder(folder, it)]


def _is_folder(src: Any) -> bool:
    return isinstance(src, (str, os.PathLike)) and _core.is_folder(_args.path(src, "traces"))


class _NotPlain(Exception):
    pass


class _PlainPickler(pickle.Pickler):
    """Pickles plain dicts, lists, tuples, strings, bytes and numbers only: anything else (an
    OrderedDict, an int subclass, an object) would be pickled as a call the reader refuses."""

    def reducer_override(self, obj: Any) -> Any:  # called only for objects of other types than those
        raise _NotPlain


def _pickle_snapshot(snapshot: Dict[str, Any]) -> bytes:
    """The dict as protocol-4 pickle bytes of plain dicts, lists, strings and numbers; a dict that
    holds other mappings or number and str subclasses is copied as the plain types first."""
    buffer = io.BytesIO()
    try:
        _PlainPickler(buffer, protocol=4).dump(snapshot)  # fast: what torch returns is plain already
        return buffer.getvalue()
    except _NotPlain:
        pass
    return pickle.dumps(plain_snapshot(snapshot), protocol=4)


def _traces(traces: Traces, device: Device = None) -> List[Trace]:
    if _is_folder(traces):
        return load_dir(cast(PathArg, traces), device)
    if _is_trace(traces) or isinstance(traces, (str, os.PathLike, bytes, bytearray, memoryview, dict)):
        return [load(cast(Source, traces), device)]
    if not isinstance(traces, Iterable):
        raise _args.type_error("traces", "a Trace, a path, a dump folder, bytes, a snapshot dict or a list of them",
                               traces)
    out: List[Trace] = []
    for t in cast(Iterable[Source], traces):
        out.extend(load_dir(cast(PathArg, t), device) if _is_folder(t) else [load(t, device)])
    return out


def _core_traces(traces: Traces, device: Device) -> list:
    loaded = _traces(traces, device)
    if not loaded:
        raise ValueError("traces: give at least one trace")
    return [t._t for t in loaded]


def check(traces: Traces, *, device: Device = None, reset_peaks: Points = None, fraction: Optional[float] = None,
          capacity: SizeArg = None, expensive: bool = False, progress: Progress = None) -> Dict[str, Any]:
    """`reservoir check --json` over one trace or several (ranks): one trace gives its report
    (``r["exact"]``), several {"traces": [...], "exact": N, "not_exact": N, "unreadable": []}.
    See Trace.check for the options. Raises NothingToReplay for a snapshot without history."""
    core = _core_traces(traces, device)
    return json.loads(_core.check_json(core, _args.texts(reset_peaks, "reset_peaks"), _args.fraction(fraction),
                                       _args.size(capacity, "capacity"), _args.flag(expensive, "expensive"),
                                       progress))


def whatif(traces: Traces, *, device: Device = None, jobs: Optional[int] = None, cleanup: Points = None,
           release: Points = None, probe: Points = None, demand: Points = None, reset_peaks: Points = None,
           set: Optional[str] = None, capacity: SizeArg = None, overhead: SizeArg = None,
           fraction: Optional[float] = None, address_model: str = "anchored",
           progress: Progress = None) -> Dict[str, Any]:
    """`reservoir whatif --json` over one trace or several (ranks): one trace gives its report
    (see Trace.whatif); several give {"traces": [report, ...], "max_over_traces":
    {"baseline_peak_reserved", "whatif_peak_reserved"}}. jobs: traces replayed at once (default:
    every core). Raises NothingToReplay when a trace has no history."""
    core = _core_traces(traces, device)
    text = _whatif_text(cleanup, release, probe, demand, reset_peaks, set, capacity, overhead, fraction,
                        address_model)
    return json.loads(_core.whatif_json(core, text, _args.count(jobs, "jobs", 1, 0, 2**32 - 1), progress))


_add_help(whatif, _EDIT_HELP)


def sweep(traces: Traces, *, device: Device = None, minimize: str = "peak", top: int = 10, jobs: Optional[int] = None,
          max_candidates: int = 100, settings: bool = True, set: Optional[str] = None, capacity: SizeArg = None,
          overhead: SizeArg = None, fraction: Optional[float] = None, max_calls: Optional[int] = None,
          steps: Optional[int] = None, progress: Progress = None) -> "SweepReport":
    """`reservoir sweep --json`: where empty_cache belongs (and which settings help), best first.

    minimize: "peak", "reserved:POINT" (or a bare point) or "peak-in:ANNOTATION"; top: candidates
    returned; jobs: threads (default: every core); max_candidates: candidates replayed;
    settings=False: only cleanup placements; max_calls: empty_cache calls allowed in the whole trace
    (default: one per training step where steps are known); steps: training steps in the trace;
    set, capacity, overhead, fraction: the device every candidate runs on. Several traces (ranks):
    each candidate is scored on its worst trace.

    Each candidate has "edits" (the command line's flags), "changes" (the structured form:
    {"kind": "cleanup", "point": P} or {"kind": "settings", "settings": S}), "kwargs" (the keywords
    that reproduce it: ``trace.whatif(**c["kwargs"])`` gives its "peak_reserved"), "saving",
    "peak_reserved", "empty_cache_calls", "price_seconds", "pareto", ... (docs/json.md).
    """
    core = _core_traces(traces, device)
    device_text = _edited_run(set, capacity, overhead, fraction)
    result = json.loads(_core.sweep_json(
        core, _args.text(minimize, "minimize") or "peak", _args.count(top, "top", 0), _args.count(max_candidates,
                                                                                               "max_candidates", 0),
        _args.count(jobs, "jobs", 1, 0, 2**32 - 1), _args.flag(settings, "settings"), device_text,
        _args.optional_count(max_calls, "max_calls", 0), _args.optional_count(steps, "steps", 1), progress))
    given = {k: v for k, v in (("set", set), ("capacity", capacity), ("overhead", overhead), ("fraction", fraction))
             if v is not None}
    for c in result.get("candidates", []) + result.get("pareto", []):
        c["kwargs"] = _candidate_kwargs(c, given, result.get("objective_point"))
    return result


def _candidate_kwargs(candidate: Dict[str, Any], given: Dict[str, Any], point: Optional[str]) -> Dict[str, Any]:
    """The whatif() keywords that reproduce a candidate: its changes on the sweep's own device."""
    kwargs = dict(given)
    for change in candidate.get("changes", []):
        if change["kind"] == "cleanup":
            kwargs.setdefault("cleanup", []).append(change["point"])
        elif change["kind"] == "settings":
            kwargs["set"] = change["settings"]
    if point is not None:
        kwargs["probe"] = [point]  # the figure a reserved:POINT objective compares
    return kwargs


def gate(traces: Traces, max_peak_reserved: SizeArg = None, *, device: Device = None, demand: Points = None,
         capacity: SizeArg = None, fraction: Optional[float] = None, overhead: SizeArg = None,
         set: Optional[str] = None, cleanup: Points = None, release: Points = None, probe: Points = None,
         reset_peaks: Points = None, address_model: str = "anchored", progress: Progress = None) -> "GateVerdict":
    """`reservoir gate`: for CI. Raises GateFailed (an AssertionError) with the one-line reason when
    a condition fails: the edited run's peak reserved over ``max_peak_reserved``, a ``demand``
    ("BYTES@POINT" another process needs) that does not fit, an out-of-memory under
    ``capacity``/``fraction``. Raises GateUndecided (a ValueError) when a condition cannot be judged
    (a demand without a known capacity: its message names ``capacity=``). traces: one or several
    (ranks: the worst decides). Returns the verdict's dict (gate --json) when every condition holds.
    """
    __tracebackhide__ = True
    core = _core_traces(traces, device)
    text = _whatif_text(cleanup, release, probe, demand, reset_peaks, set, capacity, overhead, fraction,
                        address_model)
    budget = _args.size(max_peak_reserved, "max_peak_reserved")
    answer, passed, undecided, reason, _summary = _core.gate(core, budget, text, progress)
    result = json.loads(answer)
    if undecided:
        raise GateUndecided(reason, result, result.get("missing"))
    if not passed:
        raise GateFailed(reason, result)
    return cast("GateVerdict", result)


def scale(inputs: Sequence[Any], to: Union[str, Mapping[str, Any], Sequence[Any], None] = None, *,
          out: Optional[PathArg] = None, measured: Optional[Source] = None, device: Device = None,
          capture_json: bool = True, max_unexplained: int = 20, cleanup: Points = None, release: Points = None,
          probe: Points = None, demand: Points = None, reset_peaks: Points = None, set: Optional[str] = None,
          capacity: SizeArg = None, overhead: SizeArg = None, fraction: Optional[float] = None,
          address_model: str = "anchored", progress: Progress = None) -> Dict[str, Any]:
    """`reservoir scale --json`: the trace of the job at another size, from captures at a few sizes.

    inputs: the captures, each a path (parameters from its capture sidecar X.json), a
    "world=2,seq=4096:PATH" string, or a (params, path-or-Trace) pair with params a dict
    ({"world": 2, "seq": 4096}). to: the target, a dict ({"world": 64, "seq": 16384}; a list of
    values makes a grid) or a "world=64,seq=16384" string (value lists: "world=8,16,32").
    out: write the predicted snapshot (one target); measured: a capture of the target to check
    the prediction against (its error in bytes, request by request: r["check"]). Edits as whatif's.

    One target gives its dict ("target", "predicted", "whatif" with edits, "capacity", "needs",
    "model_exact", "model", and "out" / "check" when asked); a grid {"targets": [...]}.
    """
    if isinstance(inputs, (str, os.PathLike)) or _is_trace(inputs) or not isinstance(inputs, Iterable):
        raise _args.type_error("inputs", "a list of captures (paths, 'NAME=V,...:PATH', or (params, trace) pairs)",
                               inputs)
    pairs = [_scale_input(item, i, device, capture_json) for i, item in enumerate(inputs)]
    if not pairs:
        raise ValueError("inputs: give at least one capture")
    targets = _scale_targets(to)
    text = _whatif_text(cleanup, release, probe, demand, reset_peaks, set, capacity, overhead, fraction,
                        address_model)
    out_path = "" if out is None else _args.path(out, "out")
    measured_trace = None if measured is None else load(measured, device, capture_json=capture_json)._t
    return json.loads(_core.scale_json(pairs, targets, text, out_path, measured_trace,
                                       _args.count(max_unexplained, "max_unexplained", 0), progress))


_EDIT_KEYWORDS = tuple(inspect.signature(_whatif_text).parameters)  # whatif()'s edit keywords


def _edits_text(edits: Mapping[str, Any], where: str):
    unknown = sorted(k for k in edits if k not in _EDIT_KEYWORDS)
    if unknown:
        raise TypeError(f"{where}: unexpected keyword {unknown[0]!r} (edits are whatif()'s: "
                        f"{', '.join(_EDIT_KEYWORDS)})")
    return _whatif_text(**edits)


def report(traces: Traces, *, html: Optional[PathArg] = None, markdown: Optional[PathArg] = None,
           variants: Optional[Mapping[str, Mapping[str, Any]]] = None, sweep: bool = False, minimize: str = "peak",
           top: int = 10, max_candidates: int = 100, jobs: Optional[int] = None, device: Device = None,
           progress: Progress = None, **edits: Any) -> Dict[str, Any]:
    """`reservoir report --json`: one run per variant over one trace or several (ranks), as a dict,
    and the page and the table written when asked.

    html: write the self-contained HTML page here (it opens offline); markdown: write the PR-ready
    Markdown table here. Neither may be a trace, a capture JSON a trace was read with, or the
    other (ValueError, nothing written). The runs: the recording, the edited run (``**edits``,
    whatif's keywords, when they edit anything) and each of ``variants``, a dict of name to
    whatif keywords, e.g. ``{"post-load": {"cleanup": ["after:state_dict_loader.py:load"]}}`` (a
    sweep candidate's ``c["kwargs"]`` is one). sweep=True adds where empty_cache belongs (minimize,
    top, max_candidates and jobs as reservoir.sweep's). Keys: "variants", "ranks", "table",
    "verdict", "sweep" (docs/json.md).
    """
    core = _core_traces(traces, device)
    text = _edits_text(edits, "report")
    if variants is None:
        variants = {}
    if not isinstance(variants, Mapping):
        raise _args.type_error("variants", "a dict of variant name to whatif keywords", variants)
    pairs = []
    for name, kwargs in variants.items():
        if not isinstance(name, str) or not name:
            raise _args.type_error("variants", "names that are non-empty str", name)
        if not isinstance(kwargs, Mapping):
            raise _args.type_error(f"variants[{name!r}]", "a dict of whatif keywords", kwargs)
        pairs.append((name, _edits_text(kwargs, f"variants[{name!r}]")))
    html_path = "" if html is None else _args.path(html, "html")
    markdown_path = "" if markdown is None else _args.path(markdown, "markdown")
    return json.loads(_core.report_json(
        core, text, pairs, _args.flag(sweep, "sweep"), _args.text(minimize, "minimize") or "peak",
        _args.count(top, "top", 0), _args.count(max_candidates, "max_candidates", 0),
        _args.count(jobs, "jobs", 1, 0, 2**32 - 1), html_path, markdown_path, progress))


_add_help(report, _EDIT_HELP)


def _params_text(params: Any, name: str, grid: bool) -> str:
    """{"world": 2, "seq": [4096, 8192]} as the library's "world=2,seq=4096,8192" (values checked here)."""
    if not isinstance(params, Mapping):
        raise _args.type_error(name, "a dict of parameter name to int", params)
    parts = []
    for key, value in params.items():
        if not isinstance(key, str) or not key or any(c in key for c in "=,:"):
            raise ValueError(f"{name}=: {_args.short(key)} is not a parameter name")
        values = list(value) if grid and isinstance(value, (list, tuple, range)) else [value]
        if not values:
            raise ValueError(f"{name}=: {key} has no value")
        for v in values:
            if not _args._is_int(v):
                raise _args.type_error(f"{name}[{key!r}]", "an int", v)
        parts.append(f"{key}=" + ",".join(str(int(v)) for v in values))
    return ",".join(parts)


def _scale_targets(to: Any) -> List[str]:
    if to is None:
        raise TypeError("scale() needs to=: the target's parameters, e.g. {'world': 64} or 'world=64'")
    if isinstance(to, str):
        return [to]
    if isinstance(to, Mapping):
        return [_params_text(to, "to", True)]
    if isinstance(to, (list, tuple)):
        return [t if isinstance(t, str) else _params_text(t, "to", True) for t in to]
    raise _args.type_error("to", "a dict or a 'world=64,seq=16384' string", to)


def _scale_input(item: Any, index: int, device: Device, capture_json: bool) -> Tuple[Any, Optional[str]]:
    name = f"inputs[{index}]"
    params_text: Optional[str]
    if isinstance(item, tuple) and len(item) == 2:
        params, source = item
        params_text = _params_text(params, name, False)
    elif isinstance(item, (str, os.PathLike)):
        params_text, source = _core.split_scale_input(_args.path(item, name))
    elif _is_trace(item):
        params_text, source = None, item
    else:
        raise _args.type_error(name, "a path, a 'NAME=V,...:PATH' string or a (params, trace) pair", item)
    return (load(source, device, capture_json=capture_json)._t, params_text)
