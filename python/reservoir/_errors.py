"""The package's exceptions (reservoir.TraceError, reservoir.GateFailed, ...): pure Python, so that
they import without the compiled part, pickle (a failing gate in a multiprocessing.Pool worker
reaches the parent) and read `reservoir.X` in tracebacks and pytest's summary."""

from __future__ import annotations

import errno
from typing import Any, Dict, Optional

__all__ = ["TraceError", "TraceFileNotFoundError", "NothingToReplay", "GateFailed", "GateUndecided"]


def _rebuild(cls, args, attributes):
    """Unpickles one of these exceptions: the class, its constructor's arguments, its attributes."""
    error = cls(*args)
    error.__dict__.update(attributes)
    return error


class TraceError(Exception):
    """Unreadable or invalid input (a damaged, truncated or hostile snapshot, or one the replay
    cannot use). ``str(e)`` says what is wrong in plain words first, then names the file, the byte
    offset and what was expected.

    Attributes:
        headline: the plain-words part ("the file ends early: was the dump interrupted?"), or None
            when the reader did not make the message.
        path: the file (or the name given to a snapshot loaded from memory), or None.
        offset: the byte in the pickle stream where the reader stopped, or None.
    """

    def __init__(self, message: str, *, headline: Optional[str] = None, path: Optional[str] = None,
                 offset: Optional[int] = None) -> None:
        super().__init__(message)
        self._keep(message, headline, path, offset)

    def _keep(self, message: str, headline: Optional[str], path: Optional[str], offset: Optional[int]) -> None:
        self.message = message
        self.headline = headline
        self.path = path
        self.offset = offset

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):
        return (_rebuild, (type(self), (self.message,), dict(self.__dict__)))


class TraceFileNotFoundError(TraceError, FileNotFoundError):
    """The snapshot's file does not exist: a TraceError that is also a FileNotFoundError (errno
    ENOENT, ``filename`` the path), so ``except FileNotFoundError`` catches it."""

    def __init__(self, message: str, *, headline: Optional[str] = None, path: Optional[str] = None,
                 offset: Optional[int] = None) -> None:
        FileNotFoundError.__init__(self, errno.ENOENT, message, path)
        self._keep(message, headline, path, offset)

    def __str__(self) -> str:
        return self.message


class NothingToReplay(TraceError):
    """The snapshot has no allocation history (recorded with ``_record_memory_history`` off, or
    ``enabled="state"``): it loads and ``info()`` works, but check, whatif, sweep, gate, export and
    scale have nothing to replay. ``str(e)`` is the library's sentence, naming the file."""


class GateFailed(AssertionError):
    """A gate condition failed. ``str(e)`` is the one-line reason (the command line's ``FAIL:`` line);
    ``e.result`` is the verdict's dict (``gate --json``: every condition on every trace)."""

    def __init__(self, reason: str, result: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.result = result if result is not None else {}

    def __str__(self) -> str:
        return self.reason

    def __reduce__(self):
        return (_rebuild, (type(self), (self.reason, self.result), {}))


class GateUndecided(ValueError):
    """A gate condition could not be judged (the command line exits 2): e.g. a ``demand=`` where no
    capacity is known. ``str(e)`` is the reason and names what to give (``capacity=``); ``e.missing``
    is that keyword's name ("capacity"), ``e.result`` the verdict's dict."""

    def __init__(self, reason: str, result: Optional[Dict[str, Any]] = None, missing: Optional[str] = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.result = result if result is not None else {}
        self.missing = missing

    def __str__(self) -> str:
        return self.reason

    def __reduce__(self):
        return (_rebuild, (type(self), (self.reason, self.result, self.missing), {}))


for _cls in (TraceError, TraceFileNotFoundError, NothingToReplay, GateFailed, GateUndecided):
    _cls.__module__ = "reservoir"  # as tracebacks and pytest's summary show them
del _cls
