"""Reservoir: what PyTorch's CUDA caching allocator reserves, and where cleanup belongs.

    import reservoir
    trace = reservoir.load("run.pickle")      # or bytes, or torch.cuda.memory._snapshot()
    r = trace.whatif(cleanup=["after:state_dict_loader.py:load"])
    r["whatif"]["peak_reserved"]      # bytes

The same commands as the command line, with the same answers (each result is the dict of the
command's ``--json``, every key in docs/json.md): load, check, whatif, sweep, gate, scale, report,
and Trace's methods (info, check, whatif, sweep, gate, export, report). `python3 -m reservoir` is the command
line itself. `reservoir.capture` (the capture kit, docs/capture.md) records a snapshot and its
sidecar; `reservoir.pytest_plugin` gates a test's memory (docs/ci.md).

Importing this package needs neither torch nor the compiled part: the API (reservoir.api,
docs/python.md) loads reservoir._core on first use; the capture kit imports torch only when a
capture starts.
"""

from __future__ import annotations

import importlib

from ._errors import GateFailed, GateUndecided, NothingToReplay, TraceError, TraceFileNotFoundError

__version__ = "0.1.0"

__all__ = ["__version__", "load", "load_dir", "check", "whatif", "sweep", "gate", "scale", "report", "Trace",
           "TraceError", "TraceFileNotFoundError", "NothingToReplay", "GateFailed", "GateUndecided", "capture"]

_API = frozenset(["load", "load_dir", "check", "whatif", "sweep", "gate", "scale", "report", "Trace"])


def __getattr__(name):
    if name == "capture":  # the subpackage; it is callable: reservoir.capture("out/run")
        return importlib.import_module(__name__ + ".capture")
    if name in _API:
        return getattr(importlib.import_module(__name__ + ".api"), name)
    raise AttributeError(f"module 'reservoir' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
