"""python3 -m reservoir ARGS...: the reservoir command line, in this process (same exit codes)."""

import signal
import sys


def main(argv=None):
    from . import _core

    # The command line's own Ctrl-C behaviour (and export's clean-up of partial files), not
    # Python's KeyboardInterrupt, which could only be raised once the command had finished.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.stdout.flush()
    return _core.main(list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
