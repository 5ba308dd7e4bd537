"""python3 -m reservoir ARGS...: the reservoir command line, in this process (same exit codes).

reservoir.__main__.main(argv) runs it from Python: its output goes through sys.stdout and
sys.stderr (so contextlib.redirect_stdout, pytest's capsys and Jupyter see it) and it returns the
exit code.
"""

from __future__ import annotations

import signal
import sys
from typing import List, Optional, Sequence


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs `reservoir ARGS` (argv: the arguments after the program name; None: sys.argv[1:]) and
    returns its exit code (0 ok, 1 no, 2 usage, 3 bad input). An error writing its output (a
    closed or full stream) is raised once the command has ended."""
    from . import _core

    args: List[str] = list(sys.argv[1:] if argv is None else argv)
    for a in args:
        if not isinstance(a, str):
            raise TypeError(f"main: expected a list of str arguments, not {type(a).__name__}")
    return _core.main(args, lambda text: sys.stdout.write(text), lambda text: sys.stderr.write(text))


def _run() -> int:
    # The command line's own Ctrl-C behaviour (and export's clean-up of partial files), not
    # Python's KeyboardInterrupt, which could only be raised once the command had finished.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    code = None
    try:
        code = main()
        sys.stdout.flush()
    except OSError as e:  # stdout is full or closed: the answer was lost (the command line's rule)
        print(f"reservoir: standard output: write failed: {e.strerror or e} (the command's output is lost)",
              file=sys.stderr)
        return 3 if code in (None, 0, 1) else code
    return code


if __name__ == "__main__":
    sys.exit(_run())
