"""Reservoir's Python package.

Importing it needs neither torch nor the compiled extension. `reservoir.capture` (the capture
kit, pure Python, docs/capture.md) is loaded on first use:

    import reservoir
    with reservoir.capture("out/run", max_entries=1_000_000):
        train()
"""

import importlib

__all__ = ["capture"]


def __getattr__(name):
    if name == "capture":  # the subpackage; it is callable: reservoir.capture("out/run")
        return importlib.import_module(__name__ + ".capture")
    raise AttributeError(f"module 'reservoir' has no attribute {name!r}")
