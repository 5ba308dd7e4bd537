"""The dict torch.cuda.memory._snapshot() returns, as plain Python types: what reservoir.load pickles
when the dict holds other mappings (an OrderedDict) or subclasses of int, float or str (an IntEnum,
a numpy integer), which pickle as calls the reader never runs."""

from __future__ import annotations

import numbers
from typing import Any, Dict, List, Tuple

_ATOMS = (str, bytes, bool, int, float, type(None))


def _where(path: List[Any]) -> str:
    return "".join(f"[{p!r}]" for p in path) or "the top level"


def _atom(value: Any, path: List[Any]) -> Any:
    if type(value) in _ATOMS:
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"load: the snapshot holds {type(value).__module__}.{type(value).__qualname__} at "
                    f"{_where(path)}; a snapshot is made of dicts, lists, strings and numbers only")


def plain_snapshot(snapshot: Dict[str, Any]) -> Dict[str, Any]:
    """A copy made of dict, list, str, bytes, bool, int, float and None only (iteratively, so a deep
    structure does not reach Python's recursion limit; an object met twice is copied once)."""
    copies: Dict[int, Any] = {}
    root: Dict[str, Any] = {}
    stack: List[Tuple[Any, Any, List[Any]]] = [(snapshot, root, [])]
    copies[id(snapshot)] = root
    while stack:
        source, target, path = stack.pop()
        items = source.items() if isinstance(target, dict) else enumerate(source)
        for key, value in items:
            if isinstance(target, dict):
                key = _atom(key, path)
            if isinstance(value, (dict, list, tuple)) or (hasattr(value, "items") and hasattr(value, "keys")):
                copy = copies.get(id(value))
                if copy is None:
                    copy = {} if hasattr(value, "items") else []
                    copies[id(value)] = copy
                    stack.append((value, copy, path + [key]))
            else:
                copy = _atom(value, path + [key])
            if isinstance(target, dict):
                target[key] = copy
            else:
                target.append(copy)
    return root
