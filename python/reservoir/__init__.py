"""Reservoir: what PyTorch's CUDA caching allocator reserves, and where cleanup belongs.

    import reservoir
    trace = reservoir.load("run.pickle")      # or bytes, or torch.cuda.memory._snapshot()
    r = trace.whatif(cleanup=["after:state_dict_loader.py:load"])
    r["whatif"]["peak_reserved"]      # bytes

The API (reservoir.api, docs/python.md) loads the compiled part on first use; `reservoir.capture`
(the capture kit, pure Python, docs/capture.md) imports torch only when it is used. Importing
this package needs neither.
"""

import importlib

__all__ = ["load", "whatif", "gate", "Trace", "TraceError", "GateFailed", "capture"]

_API = frozenset(["load", "whatif", "gate", "Trace", "TraceError", "GateFailed"])


def __getattr__(name):
    if name == "capture":  # the subpackage; it is callable: reservoir.capture("out/run")
        return importlib.import_module(__name__ + ".capture")
    if name in _API:
        return getattr(importlib.import_module(__name__ + ".api"), name)
    raise AttributeError(f"module 'reservoir' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
