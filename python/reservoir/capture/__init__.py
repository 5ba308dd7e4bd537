"""The capture kit: record one rank of a W-rank job on one GPU (PyTorch's fake process group),
or a program's own run, with the sidecar every prediction needs (docs/capture.md).

    python3 -m reservoir.capture --world-size 64 --rank 0 --param seq=8192 -- train.py ARGS...

    import reservoir
    with reservoir.capture("out/run", max_entries=1_000_000, stacks="python"):
        train()

Pure Python; torch is imported when a capture starts, not before.
"""

import sys
import types

from .errors import CaptureError
from .session import Capture, capture

__all__ = ["Capture", "CaptureError", "capture", "main"]


def main(argv=None) -> int:
    from .cli import main as cli_main

    return cli_main(argv)


class _CallableModule(types.ModuleType):
    """`reservoir.capture` is this package once it is imported; calling it is calling capture()."""

    def __call__(self, path, **options):
        return capture(path, **options)


sys.modules[__name__].__class__ = _CallableModule
