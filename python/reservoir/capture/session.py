"""`reservoir.capture(...)`: record the caching allocator's history and write the snapshot and
its sidecar at exit, on an exception and on a CUDA out-of-memory."""

import gc
import importlib
import os
import pickle
import sys
import time
import traceback
from typing import Any, Dict, List, Optional

from . import sidecar, trace_index
from .dcp_support import DcpSupport
from .errors import CaptureError
from .fake_group import FakeGroup, job_environment
from .fsdp_groups import FsdpRecorder
from .patching import Patches

STACKS = ("python", "all")
UNLIMITED = sys.maxsize  # torch's own default for max_entries: nothing is dropped

_active: Optional["Capture"] = None
_oom_observer_attached = False


def _stem(path: str) -> str:
    for ext in (".pickle", ".json"):
        if path.endswith(ext):
            return path[: -len(ext)]
    return path


def _on_oom(device, alloc, device_allocated, device_free):  # c10 calls it with the allocator unlocked
    if _active is not None:
        _active._out_of_memory(device, alloc, device_allocated, device_free)


class Capture:
    """Records from __enter__ on. With world_size (and rank) and fake_group=True the process plays
    that rank of a larger job through PyTorch's fake process group (what `python3 -m
    reservoir.capture` does); otherwise the program's own process group is left alone."""

    def __init__(self, path: str, *, max_entries: Optional[int] = None, stacks: str = "python",
                 params: Optional[Dict[str, Any]] = None, world_size: Optional[int] = None,
                 rank: Optional[int] = None, fake_group: bool = False, tag: Optional[str] = None,
                 command: Optional[List[str]] = None, environ=None, keep_steps: Optional[int] = None) -> None:
        if stacks not in STACKS:
            raise CaptureError(f"stacks must be one of {', '.join(STACKS)} (got {stacks!r})")
        if max_entries is not None and max_entries < 1:
            raise CaptureError(f"max_entries must be at least 1 (got {max_entries})")
        if keep_steps is not None and keep_steps < 1:
            raise CaptureError(f"keep_steps must be at least 1 (got {keep_steps})")
        if fake_group and world_size is None:
            raise CaptureError("fake_group needs world_size (and rank)")
        self.stem = _stem(path)
        self.max_entries, self.stacks = max_entries, stacks
        self.params = dict(params or {})
        self.world_size, self.rank = world_size, (rank or 0) if world_size is not None else rank
        self.fake_group, self.tag, self.command = fake_group, tag, command
        self.environ = os.environ if environ is None else environ
        self.requested_backend: Optional[str] = None
        self.notes: Dict[str, Dict[str, Any]] = {}
        self.resets: List[trace_index.Mark] = []
        self.ooms: List[Dict[str, Any]] = []
        self.fraction_set: Dict[int, float] = {}
        self.dumps: List[str] = []
        self.seconds = {"reset_marks": 0.0, "dumps": 0.0}  # what the kit's own work took
        self.keep_steps = keep_steps
        self.step_ends: List[int] = []  # wall-clock microseconds at each optimizer step's end
        self.oom_path: Optional[str] = None
        self._patches = Patches()
        self._fsdp = FsdpRecorder()
        self._torch: Any = None  # torch, once the capture starts
        self._record_history: Any = None
        self._oom_dumped = False

    # -- what the hooks report -------------------------------------------------------------
    def note(self, what: str, how: str) -> None:
        """Something the kit emulated (the sidecar's `emulated`)."""
        entry = self.notes.setdefault(what, {"how": how, "calls": 0})
        entry["calls"] += 1

    # -- lifetime ---------------------------------------------------------------------------
    def __enter__(self) -> "Capture":
        global _active
        if _active is not None:
            raise CaptureError("a capture is already recording in this process")
        try:
            self._torch = importlib.import_module("torch")
        except ImportError as e:
            raise CaptureError(f"the capture kit needs torch (import torch failed: {e})") from e
        if not self._torch.cuda.is_available():
            raise CaptureError("no CUDA device is visible: the capture records the CUDA caching allocator")
        try:
            if self.fake_group:
                assert self.world_size is not None and self.rank is not None  # __init__ checks fake_group's
                job_environment(self.world_size, self.rank, self.environ)
                FakeGroup(self.world_size, self.rank, self).install(self._patches)
                DcpSupport(self).install(self._patches)
            self._init_cuda()
            self._install_hooks()
            self._start_recording()
        except BaseException:
            self._patches.restore()
            raise
        _active = self
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        global _active
        try:
            self.dump(_reason(self._torch, exc_type), exc)
        finally:
            _active = None
            self._patches.restore()
            self._stop_recording()

    def stop(self) -> None:
        """Stops recording without writing anything more (what `with` does at its end, less the
        dump): for a caller that has dumped what it needs (reservoir's pytest plugin)."""
        global _active
        if _active is self:
            _active = None
        self._patches.restore()
        self._stop_recording()

    def _init_cuda(self) -> None:
        """The allocator exists per device only once CUDA is initialised: recording and the OOM
        observer attach to it. Under torchrun each rank starts on its own LOCAL_RANK device."""
        cuda = self._torch.cuda
        if self.fake_group:
            cuda.set_device(0)
        elif "LOCAL_RANK" in self.environ:
            cuda.set_device(int(self.environ["LOCAL_RANK"]))
        cuda.init()

    def _start_recording(self) -> None:
        self._record_history(enabled="all", context="all", stacks=self.stacks,
                             max_entries=self.max_entries or UNLIMITED)

    def _stop_recording(self) -> None:
        try:
            self._record_history(enabled=None)
        except Exception:
            pass

    # -- hooks --------------------------------------------------------------------------------
    def _install_hooks(self) -> None:
        global _oom_observer_attached
        torch = self._torch
        memory = torch.cuda.memory
        self._record_history = memory._record_memory_history
        self._patches.replace_everywhere([memory, torch.cuda], "_record_memory_history", self._script_record_history)
        reset = memory.reset_peak_memory_stats
        self._patches.replace_everywhere([memory, torch.cuda], "reset_peak_memory_stats", self._reset_hook(reset))
        fraction = torch.cuda.set_per_process_memory_fraction
        self._patches.replace_everywhere([memory, torch.cuda], "set_per_process_memory_fraction",
                                         self._fraction_hook(fraction))
        self._fsdp.install(self._patches)
        if self.keep_steps is not None:
            self._install_step_hook()
        if not _oom_observer_attached and hasattr(torch._C, "_cuda_attach_out_of_memory_observer"):
            torch._C._cuda_attach_out_of_memory_observer(_on_oom)  # cannot be detached: dispatches to _active
            _oom_observer_attached = True

    def _install_step_hook(self) -> None:
        """--keep-steps: the end of every optimizer step, as the wall-clock time torch's trace uses."""
        optimizer = importlib.import_module("torch.optim.optimizer")
        register = getattr(optimizer, "register_optimizer_step_post_hook", None)
        if register is None:
            raise CaptureError("keep_steps needs torch.optim's register_optimizer_step_post_hook (torch >= 2.0)")
        self._patches.hold(register(lambda opt, args, kwargs: self.step_ends.append(time.time_ns() // 1000)))

    def _script_record_history(self, *args, **kwargs) -> None:
        self.note("_record_memory_history", "the script's own call was ignored: the kit records")

    def _device_index(self, device) -> int:
        if isinstance(device, int):
            return device
        index = None if device is None else getattr(self._torch.device(device), "index", None)
        return self._torch.cuda.current_device() if index is None else index

    def _reset_hook(self, original):
        capture = self

        def reset_peak_memory_stats(device=None):
            t0 = time.perf_counter()
            dev = capture._device_index(device)
            traces = capture._torch.cuda.memory._snapshot()["device_traces"]
            capture.resets.append(trace_index.mark(dev, traces[dev] if dev < len(traces) else []))
            capture.seconds["reset_marks"] += time.perf_counter() - t0
            return original(device)

        return reset_peak_memory_stats

    def _fraction_hook(self, original):
        capture = self

        def set_per_process_memory_fraction(fraction, device=None):
            capture.fraction_set[capture._device_index(device)] = float(fraction)
            return original(fraction, device)

        return set_per_process_memory_fraction

    def _out_of_memory(self, device, alloc, device_allocated, device_free) -> None:
        self.ooms.append({"device": int(device), "alloc": int(alloc), "device_allocated": int(device_allocated),
                          "device_free": int(device_free)})
        if not self._oom_dumped:  # the first OOM's trace, at once: the process may not survive it
            self._oom_dumped = True
            self.oom_path = self.dump("oom", stem=self._oom_stem())

    def _oom_stem(self) -> str:
        """rank{R}_memory_snapshot beside the capture, as torchtitan names its dumps (one per rank)."""
        rank = self._world()[1]
        return os.path.join(os.path.dirname(self.stem), f"rank{rank}_memory_snapshot")

    # -- the snapshot and its sidecar --------------------------------------------------------------
    def dump(self, reason: str, exc: Optional[BaseException] = None, stem: Optional[str] = None) -> str:
        """Writes the history so far: STEM.pickle and its sidecar STEM.json (stem: the capture's)."""
        torch = self._torch
        stem = self.stem if stem is None else stem
        t0 = time.perf_counter()
        gc_enabled = gc.isenabled()
        gc.disable()  # no tensor freed by the collector between the snapshot and memory_stats()
        try:
            snapshot = torch.cuda.memory._snapshot()
            current = torch.cuda.current_device()
            dev = trace_index.busiest_device(snapshot.get("device_traces", []), current)
            stats = dict(torch.cuda.memory_stats(dev))
        finally:
            if gc_enabled:
                gc.enable()
        kept = self._keep_last_steps(snapshot)
        sidecar.write_atomically(stem + ".pickle", lambda f: pickle.dump(snapshot, f, protocol=4))
        data = self._sidecar(snapshot, dev, stats, reason, exc)
        if kept is not None:
            data["keep_steps"] = kept
        sidecar.write_json(stem + ".json", data)
        self.dumps.append(reason)
        self.seconds["dumps"] += time.perf_counter() - t0
        return stem + ".pickle"

    def _keep_last_steps(self, snapshot) -> Optional[Dict[str, Any]]:
        """--keep-steps K: every device's history cut to what follows the end of the (K+1)-th last
        optimizer step (as a ring buffer cuts it: the replay rebuilds the state at its first event)."""
        if self.keep_steps is None:
            return None
        kept: Dict[str, Any] = {"asked": self.keep_steps, "steps_seen": len(self.step_ends), "dropped_events": 0,
                                "cut_at_us": None}
        if len(self.step_ends) <= self.keep_steps:
            kept["note"] = "fewer steps than asked: the whole history is kept"
            return kept
        boundary = self.step_ends[-self.keep_steps - 1]
        traces = snapshot.get("device_traces", [])
        times = [e.get("time_us", 0) for t in traces for e in t]
        if not times or not min(times) <= boundary <= max(times):
            kept["note"] = "the step times fall outside the trace's clock: the whole history is kept"
            return kept
        for d, t in enumerate(traces):
            first = next((i for i, e in enumerate(t) if e.get("time_us", 0) > boundary), len(t))
            kept["dropped_events"] += first
            traces[d] = t[first:]
        kept["cut_at_us"] = boundary
        return kept

    def _sidecar(self, snapshot, dev: int, stats, reason: str, exc) -> Dict[str, Any]:
        torch = self._torch
        traces = snapshot.get("device_traces", [])
        trace = traces[dev] if dev < len(traces) else []
        free, total = torch.cuda.mem_get_info(dev)
        resets = [{"device": m.device, "after_event": trace_index.locate(m, traces[m.device])
                   if m.device < len(traces) else None} for m in self.resets]
        mine = [r["after_event"] for r, m in zip(resets, self.resets) if m.device == dev]
        world_size, rank = self._world()
        facts = {
            "tag": self.tag or os.path.basename(self.stem), "world_size": world_size, "rank": rank,
            "config": self.params, "torch": str(torch.__version__), "cuda": str(getattr(torch.version, "cuda", "")),
            "device_index": dev, "device_name": torch.cuda.get_device_name(dev),
            "device_total": int(total), "device_free": int(free), "fraction": self._fraction(dev),
            "alloc_conf": self.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        }
        extra = {
            "events": len(trace),
            "reset_peaks": resets,
            "ooms": self.ooms,
            "fsdp_groups": self._fsdp.report(),
            "dump_reason": reason,
            "exception": None if exc is None else "".join(traceback.format_exception_only(type(exc), exc)).strip(),
            "capture": {"max_entries": self.max_entries, "stacks": self.stacks, "fake_group": self.fake_group,
                        "requested_backend": self.requested_backend, "command": self.command,
                        "seconds": {k: round(v, 3) for k, v in self.seconds.items()}},
            "emulated": self.notes,
        }
        if mine and mine[-1] is None and self.resets:
            extra["reset_peaks_before_window"] = True
        return sidecar.build(facts=facts, memory_stats=stats, reset_index=mine[-1] if mine else None, extra=extra)

    def _world(self):
        if self.world_size is not None:
            return self.world_size, self.rank
        dist = sys.modules.get("torch.distributed")
        if dist is not None and dist.is_available() and dist.is_initialized():
            return dist.get_world_size(), dist.get_rank()
        return int(self.environ.get("WORLD_SIZE", 1)), int(self.environ.get("RANK", 0))

    def _fraction(self, dev: int) -> float:
        if dev in self.fraction_set:
            return self.fraction_set[dev]
        getter = getattr(self._torch.cuda, "get_per_process_memory_fraction", None)
        if getter is not None:
            value = float(getter(dev))
            return 0.0 if value >= 1.0 else value  # 0: not set, as the earlier captures write it
        return 0.0


def _reason(torch, exc_type) -> str:
    if exc_type is None:
        return "exit"
    if issubclass(exc_type, SystemExit):
        return "exit"
    oom = getattr(torch.cuda, "OutOfMemoryError", None) if torch is not None else None
    if oom is not None and issubclass(exc_type, oom):
        return "oom"
    return "exception"


def capture(path: str, **options) -> Capture:
    """with reservoir.capture("out/run", max_entries=..., stacks="python", keep_steps=None): ...
    writes out/run.pickle and out/run.json at exit and on an exception; on a CUDA out-of-memory,
    out/rank{R}_memory_snapshot.pickle (and .json) at once, as torchtitan names its dumps.
    keep_steps=K keeps only the history of the last K optimizer steps."""
    return Capture(path, **options)
