"""Replace attributes of torch's modules for the capture's lifetime, and put them back."""

import importlib
from typing import Any, Callable, List, Optional, Tuple


def try_import(name: str):
    try:
        return importlib.import_module(name)
    except Exception:  # an optional torch module that this version lacks or cannot import
        return None


class Patches:
    def __init__(self) -> None:
        self._saved: List[Tuple[Any, str, Any]] = []
        self._handles: List[Any] = []

    def hold(self, handle: Any) -> None:
        """A hook's removable handle (torch's RemovableHandle): removed by restore()."""
        self._handles.append(handle)

    def replace(self, owner: Any, name: str, make: Callable[[Any], Any]) -> Optional[Any]:
        """owner.name = make(original); returns the original (None when owner lacks it)."""
        if owner is None or not hasattr(owner, name):
            return None
        original = getattr(owner, name)
        self._saved.append((owner, name, original))
        setattr(owner, name, make(original))
        return original

    def replace_everywhere(self, owners, name: str, replacement: Any) -> None:
        """The same function object under every module that exports it (a script may import it
        from any of them)."""
        for owner in owners:
            self.replace(owner, name, lambda _original: replacement)

    def restore(self) -> None:
        while self._handles:
            self._handles.pop().remove()
        while self._saved:
            owner, name, original = self._saved.pop()
            setattr(owner, name, original)
