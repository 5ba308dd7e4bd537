"""Python's side of the arguments: types checked here (a wrong type is a TypeError naming the
keyword, in a few words, never echoing the value's whole text), values parsed by the library (a
wrong value is a ValueError from the same parser the command line uses)."""

from __future__ import annotations

import numbers
import os
from typing import Any, List, Optional, Sequence, Union

Size = Union[int, str]

_SHORT = 60  # characters of a value quoted in a message
_MOST = 2**63 - 1  # what the library takes as a count


def short(value: Any) -> str:
    """repr(value), cut to a few dozen characters (a snapshot's bytes are never echoed)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{type(value).__name__} of {len(value)} bytes>"
    if isinstance(value, dict):
        return f"<dict of {len(value)} keys>"
    try:
        text = repr(value)
    except Exception:  # a repr that fails says nothing useful either
        text = object.__repr__(value)
    return text if len(text) <= _SHORT else text[: _SHORT - 3] + "..."


def type_error(name: str, expected: str, value: Any) -> TypeError:
    return TypeError(f"{name}=: expected {expected}, not {type(value).__name__} {short(value)}")


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def device(value: Any, name: str = "device") -> Optional[int]:
    """A CUDA device as torch names it: None, an int, "cuda:N" (or "cuda": the default), or a
    torch.device (anything with .type "cuda" and .index)."""
    if value is None:
        return None
    if _is_int(value):
        index = int(value)
        if not 0 <= index < 2**31:
            raise ValueError(f"{name}=: {short(index)} is not a CUDA device number (0 or more)")
        return index
    if isinstance(value, str):
        kind, colon, number = value.partition(":")
        if kind == "cuda" and not colon:
            return None
        if kind == "cuda" and number.isdigit() and number.isascii():
            return device(int(number), name)
        hint = f" (give {value} or 'cuda:{value}')" if value.isdigit() else ""
        raise ValueError(f"{name}=: {short(value)} is not a CUDA device: expected an int, 'cuda:N' or a "
                         f"torch.device{hint}")
    if not isinstance(value, bool) and hasattr(value, "type") and hasattr(value, "index"):
        kind, index = getattr(value, "type"), getattr(value, "index")
        if kind != "cuda":
            raise ValueError(f"{name}=: {short(value)} is a {short(kind)} device, not a CUDA one")
        return device(index, name)
    raise type_error(name, "an int, 'cuda:N' or a torch.device", value)


def _utf8(value: str, name: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{name}=: {short(value)} is not valid UTF-8 text") from None
    return str(value)


def text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise type_error(name, "a str", value)
    return _utf8(value, name)


def optional_text(value: Any, name: str) -> Optional[str]:
    return None if value is None else text(value, name)


def path(value: Any, name: str) -> str:
    """A file name (str or os.PathLike); a NUL byte is refused (the system would cut the name there)."""
    if isinstance(value, bytes) or not isinstance(value, (str, os.PathLike)):
        raise type_error(name, "a path (str or os.PathLike)", value)
    result = os.fspath(value)
    if not isinstance(result, str):
        raise type_error(name, "a path (str or os.PathLike)", value)
    if "\0" in result:
        raise ValueError(f"{name}=: the path contains a NUL byte, which no file name can hold")
    return _utf8(result, name)


def optional_path(value: Any, name: str) -> Optional[str]:
    return None if value is None else path(value, name)


def size(value: Any, name: str) -> str:
    """A size for the library's parser: "" (not given), an int of bytes, or a text ("80GiB", "80GB")."""
    if value is None:
        return ""
    if _is_int(value):
        if value < 0:
            raise ValueError(f"{name}=: {value} is negative")
        return str(int(value))
    if isinstance(value, str):
        return _utf8(value, name)
    raise type_error(name, "a size such as '60GiB' or an int of bytes", value)


def texts(value: Any, name: str) -> List[str]:
    """One text or a sequence of them (points, "SELECTOR@POINT", "BYTES@POINT")."""
    if value is None:
        return []
    if isinstance(value, str):
        return [str(value)]
    if isinstance(value, (bytes, bytearray, dict)) or not isinstance(value, (list, tuple, Sequence, set, frozenset)):
        raise type_error(name, "a str or a list of str", value)
    out = []
    for item in value:
        if not isinstance(item, str):
            raise type_error(name, "a str or a list of str", item)
        out.append(_utf8(item, name))
    return out


def fraction(value: Any, name: str = "fraction") -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise type_error(name, "a number in [0, 1]", value)
    return float(value)


def count(value: Any, name: str, least: int, default: int = 0, most: int = _MOST) -> int:
    """A whole number from `least` to `most` (jobs, top, ...); None gives `default`."""
    result = optional_count(value, name, least, most)
    return default if result is None else result


def optional_count(value: Any, name: str, least: int, most: int = _MOST) -> Optional[int]:
    """A whole number from `least` to `most` (max_calls, steps), or None."""
    if value is None:
        return None
    if not _is_int(value):
        raise type_error(name, "an int", value)
    if value < least:
        raise ValueError(f"{name}=: give at least {least}, not {short(value)}")
    if value > most:
        raise ValueError(f"{name}=: give at most {most}, not {short(value)}")
    return int(value)


def flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise type_error(name, "True or False", value)
    return value


def choice(value: Any, name: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str):
        raise type_error(name, "one of " + ", ".join(repr(c) for c in choices), value)
    return _utf8(value, name)
